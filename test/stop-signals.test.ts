// Stopping the long-running commands as people start them: `npm start`, `npx deed serve`
// (npm exec), `deed dev` on its own and under npm. npm passes SIGTERM and SIGINT only to the
// shell it runs the command with, which does not pass them on: the server must stop all the
// same, and `deed dev` must remove the webhook configurations it registered (with
// failurePolicy Fail, a leftover refuses every write in the opted-in namespaces). The real
// processes, with test/fake-apiserver.ts standing in for the API server.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { stopEvents } from '../src/cli/stop-events.js';
import { FakeApiServer } from './fake-apiserver.js';
import { FIXTURE_POLICY } from './helpers.js';
import { ROOT } from './cli-process.js';

const DEV_POLICY = `labelPrefix: deed.dev
environments:
  - id: dev
    serviceAccounts: ["dev-loop:*"]
`;

interface Running {
  child: ChildProcess;
  lines: string[];
  /** Resolves once every process holding its output (npm, the shell, node) has exited. */
  closed: Promise<void>;
  /** The node process's exit status, when it is the child itself. */
  exited: Promise<number | null>;
}

/** Starts a command in a process group of its own (so a leftover can be killed) and collects its output lines. */
function start(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Running {
  const clean: NodeJS.ProcessEnv = { ...process.env, DEED_LOG_LEVEL: 'info', ...env };
  for (const k of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'DEED_CONFIG', 'POD_NAMESPACE']) delete clean[k];
  const child = spawn(command, args, { cwd: ROOT, env: clean, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const lines: string[] = [];
  const collect = (stream: NodeJS.ReadableStream, prefix: string) => {
    let buffered = '';
    stream.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines.push(...parts.map((l) => `${prefix}${l}`));
    });
  };
  collect(child.stdout!, '');
  collect(child.stderr!, 'stderr: ');
  const closed = Promise.all([new Promise((r) => child.stdout!.once('close', r)), new Promise((r) => child.stderr!.once('close', r))]).then(() => undefined);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, closed, exited };
}

async function until(what: string, probe: () => boolean | Promise<boolean>, r: Running, timeoutMs = 40_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${r.lines.slice(-15).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const logs = (r: Running) => r.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => (socket.destroy(), resolve(false)));
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** Whatever is left of the group after a test: killed, so no server outlives the run. */
function killGroup(r: Running): void {
  try {
    process.kill(-r.child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

function within<T>(ms: number, what: string, p: Promise<T>, r: Running): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s:\n${r.lines.slice(-15).join('\n')}`)), ms).unref())]);
}

describe('deed serve stops on SIGTERM and SIGINT, however it was started', () => {
  const dir = mkdtempSync(join(tmpdir(), 'deed-stop-'));
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, stringify(FIXTURE_POLICY));

  const ways: Array<{ name: string; command: string; args: (certs: string) => string[] }> = [
    { name: 'npm start', command: 'npm', args: (certs) => ['start', '--', '--port', '0', '--cert-dir', certs, '--config', policy] },
    { name: 'npx deed serve (npm exec)', command: 'npm', args: (certs) => ['exec', '--offline', '--yes', '--', 'deed', 'serve', '--port', '0', '--cert-dir', certs, '--config', policy] },
  ];
  for (const way of ways) {
    // SIGINT to npm alone stops nothing: npm passes it to its shell, which waits for the command (dash does).
    for (const [signal, to] of [['SIGTERM', 'npm'], ['SIGINT', 'the process group (Ctrl-C)']] as const) {
      test(`${way.name}: ${signal} to ${to} stops the server, which closes its port and exits`, async () => {
        const r = start(way.command, way.args(mkdtempSync(join(dir, 'certs-'))));
        try {
          await until('deed is serving', () => logs(r).some((l) => l.msg === 'deed is serving'), r);
          const port = Number(new URL(String(logs(r).find((l) => l.msg === 'deed is serving')!.url)).port);
          assert.equal(await refused(port), false, 'serving');
          process.kill(to === 'npm' ? r.child.pid! : -r.child.pid!, signal);
          await within(20_000, 'every process of the command exits', r.closed, r);
          assert.ok(await refused(port), 'the port is closed');
          const stopping = logs(r).find((l) => l.msg === 'shutting down: readiness off, finishing in-flight reviews');
          assert.ok(stopping, r.lines.join('\n'));
          // npm passes the signal to its shell only: the server learns it from npm's exit; Ctrl-C reaches it directly.
          assert.equal(stopping.signal, to === 'npm' ? 'parent-exit' : signal);
          assert.ok(logs(r).some((l) => l.msg === 'stopped'), 'a clean stop, not a kill');
        } finally {
          killGroup(r);
        }
      });
    }
  }

  test('deed serve on its own: a second SIGINT during the stop changes nothing, the stop finishes cleanly', async () => {
    const r = start(process.execPath, [join(ROOT, 'bin/deed.js'), 'serve', '--port', '0', '--cert-dir', mkdtempSync(join(dir, 'certs-')), '--config', policy, '--shutdown-delay', '1']);
    try {
      await until('deed is serving', () => logs(r).some((l) => l.msg === 'deed is serving'), r);
      r.child.kill('SIGINT');
      await until('the stop to begin', () => logs(r).some((l) => l.msg === 'shutting down: readiness off, finishing in-flight reviews'), r);
      r.child.kill('SIGINT');
      assert.equal(await within(20_000, 'exit', r.exited, r), 0);
      await r.closed;
      assert.ok(logs(r).some((l) => l.msg === 'already shutting down' && l.signal === 'SIGINT'), r.lines.join('\n'));
      assert.ok(logs(r).some((l) => l.msg === 'stopped'));
    } finally {
      killGroup(r);
    }
  });
});

describe('deed dev removes the webhook configurations it registered when stopped', () => {
  const api = new FakeApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'deed-dev-stop-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, DEV_POLICY);
  before(async () => {
    await api.start();
    api.writeKubeConfig(kubeconfig);
  });
  after(() => api.close());

  const devArgs = () => ['dev', '--kubeconfig', kubeconfig, '--config', policy, '--port', '0', '--cert-dir', mkdtempSync(join(dir, 'certs-')), '--failure-policy', 'Fail'];
  const registered = () => [...api.webhookConfigurations.keys()].sort();
  const BOTH = ['mutatingwebhookconfigurations/deed-dev', 'validatingwebhookconfigurations/deed-dev'];

  const ways: Array<{ name: string; command: string; args: string[]; signal: NodeJS.Signals; to: 'child' | 'npm'; said: string }> = [
    { name: 'SIGINT (Ctrl-C)', command: process.execPath, args: [join(ROOT, 'bin/deed.js'), ...devArgs()], signal: 'SIGINT', to: 'child', said: 'interrupted' },
    { name: 'SIGTERM', command: process.execPath, args: [join(ROOT, 'bin/deed.js'), ...devArgs()], signal: 'SIGTERM', to: 'child', said: 'terminated' },
    { name: 'SIGHUP (the terminal closed)', command: process.execPath, args: [join(ROOT, 'bin/deed.js'), ...devArgs()], signal: 'SIGHUP', to: 'child', said: 'hung up' },
    { name: 'SIGTERM to the npm of npx deed dev', command: 'npm', args: ['exec', '--offline', '--yes', '--', 'deed', ...devArgs()], signal: 'SIGTERM', to: 'npm', said: 'the npm that started it exited' },
  ];
  for (const way of ways) {
    test(`${way.name}: both configurations are deleted, then the process exits 0`, async () => {
      api.webhookConfigurations.clear();
      const r = start(way.command, way.args);
      try {
        await until('the ready line', () => r.lines.some((l) => l.startsWith('stderr: deed dev: ready: registered')), r);
        assert.deepEqual(registered(), BOTH);
        for (const c of api.webhookConfigurations.values()) for (const w of (c as unknown as { webhooks: Array<{ failurePolicy: string }> }).webhooks) assert.equal(w.failurePolicy, 'Fail');
        process.kill(r.child.pid!, way.signal);
        if (way.to === 'child') assert.equal(await within(30_000, 'exit', r.exited, r), 0, r.lines.join('\n'));
        await within(30_000, 'every process of the command exits', r.closed, r);
        assert.deepEqual(registered(), [], r.lines.join('\n'));
        assert.ok(r.lines.includes(`stderr: deed dev: ${way.said}: removed mutatingwebhookconfiguration/deed-dev and validatingwebhookconfiguration/deed-dev`), r.lines.join('\n'));
      } finally {
        killGroup(r);
      }
    });
  }
});

describe('stopEvents', () => {
  test("under npm, a change of parent process is emitted once as parent-exit; otherwise the parent is not watched", async () => {
    let parent = 100;
    const watched = stopEvents([], { watchParent: true, pollMs: 5, startedUnder: 100, ppid: () => parent });
    const seen: string[] = [];
    watched.on('parent-exit', () => seen.push('parent-exit'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(seen.length, 0, 'the parent it started under is there');
    parent = 1;
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.deepEqual(seen, ['parent-exit']);
    watched.close();

    const unwatched = stopEvents([], { watchParent: false, pollMs: 5, startedUnder: 100, ppid: () => 1 });
    unwatched.on('parent-exit', () => seen.push('unwatched'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.deepEqual(seen, ['parent-exit']);
    unwatched.close();
  });

  test('relays each signal under its name, and stops relaying when closed', () => {
    // SIGURG, not SIGUSR2: Node 26 listens to SIGUSR2 for its diagnostic report, which an emit would write into the working folder. Count only our own listener.
    const before = process.listenerCount('SIGURG');
    const events = stopEvents(['SIGURG'], { watchParent: false });
    assert.equal(process.listenerCount('SIGURG'), before + 1);
    const seen: string[] = [];
    events.on('SIGURG', () => seen.push('SIGURG'));
    process.emit('SIGURG', 'SIGURG');
    process.emit('SIGURG', 'SIGURG');
    events.close();
    assert.equal(process.listenerCount('SIGURG'), before);
    assert.deepEqual(seen, ['SIGURG', 'SIGURG']);
  });
});
