// `deed reap` as an operator (or the CronJob) runs it, against the fake API server through a
// kubeconfig file: as a child process where the process matters (the default dry run, exit
// codes, SIGTERM), in-process through the same command registration otherwise.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess, type InProcessResult } from './cli-process.js';
import { stringify } from 'yaml';
import { registerReap } from '../src/cli/reap.js';
import { TEST_KEY } from './helpers.js';
import { FakeApiServer } from './fake-apiserver.js';
import { iso, stamped } from './reaper-helpers.js';
import { ROOT } from './serve-process.js';

let server: FakeApiServer;
const dir = mkdtempSync(join(tmpdir(), 'deed-reap-'));
const kubeconfig = join(dir, 'kubeconfig');
const keyFile = join(dir, 'attestation-key');
const policyFile = join(dir, 'policy.yaml');
const keylessPolicy = join(dir, 'keyless.yaml');

before(async () => {
  server = await new FakeApiServer().start();
  server.writeKubeConfig(kubeconfig);
  writeFileSync(keyFile, `${TEST_KEY.toString('latin1')}\n`);
  writeFileSync(policyFile, stringify({ labelPrefix: 'deed.dev', environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }], attestation: { keyFile } }));
  writeFileSync(keylessPolicy, stringify({ environments: [{ id: 'default', groups: ['system:serviceaccounts'] }] }));
});

after(async () => {
  await server.close();
});

interface Run {
  code: number | null;
  stdout: string[];
  stderr: string;
}

function reap(args: string[], onLine?: (line: string, stop: () => void) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'reap', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBERNETES_SERVICE_HOST: '', DEED_CONFIG: '' },
    });
    const stdout: string[] = [];
    let stderr = '';
    let buffered = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`deed reap did not finish:\n${stdout.join('\n')}\n${stderr}`));
    }, 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        stdout.push(line);
        onLine?.(line, () => child.kill('SIGTERM'));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function reset() {
  server.requests.length = 0;
  server.faults.length = 0;
  server.remove('pods', 'sandbox-a', 'sbx-1');
  server.remove('secrets', 'sandbox-a', 'sbx-1-token');
  server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-60, Date.now()) }));
  server.put('secrets', stamped({ kind: 'Secret', name: 'sbx-1-token', expiresAt: iso(3600, Date.now()) }));
}


/** Runs `deed reap` in-process through the same registration main.ts uses (spawning costs seconds each). */
async function reapInProcess(args: string[]): Promise<Omit<InProcessResult, 'stdout'> & { stdout: string[] }> {
  const run = await runInProcess(registerReap, ['reap', ...args]);
  return { ...run, stdout: run.stdout.split('\n').filter((l) => l !== '') };
}

describe('deed reap', () => {
  test('by default it is a dry run: prints what it would reap, deletes nothing, exits 0', async () => {
    reset();
    const run = await reap(['--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', policyFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(server.deletes().length, 0);
    assert.match(run.stdout.find((l) => l.startsWith('reap '))!, /^reap Pod sandbox-a\/sbx-1 uid=\S+: owner sandbox-a\/runner-0 .* is gone \(NotFound\).* \[would-delete\]$/);
    assert.match(run.stdout.find((l) => l.startsWith('keep '))!, /^keep Secret sandbox-a\/sbx-1-token .*deadline .* has not passed$/);
    assert.match(run.stdout.at(-1)!, /^summary: environment alpha, dry run .*, complete: judged 2 in [\d.]+ s: reaped 1, kept 1, skipped 0, conflicts 0, stopped 0, errors 0; by reason: reap \(owner-gone 1\); keep \(deadline-pending 1\)/);
  });

  test('--apply -o json deletes with preconditions and prints one JSON line per decision, then the summary', async () => {
    reset();
    const run = await reapInProcess(['--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', policyFile, '--attestation-key', keyFile, '--namespace', 'sandbox-a', '--apply', '--once', '-o', 'json']);
    assert.equal(run.error, undefined);
    assert.equal(run.exitCode, undefined, 'exit 0');
    const lines = run.stdout.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.filter((l) => l.type === 'decision').map((l) => [l.action, l.kind, l.name, l.outcome]),
      [
        ['reap', 'Pod', 'sbx-1', 'deleted'],
        ['keep', 'Secret', 'sbx-1-token', undefined],
      ],
    );
    const { durationMs, ownerReads, leaseReads, leaseReadsFailed, leasesBounded, ...summary } = lines.at(-1)!;
    assert.deepEqual([leaseReads, leaseReadsFailed, leasesBounded], [0, 0, 0], 'no object names a run lease: no Lease is read');
    assert.deepEqual(summary, {
      type: 'summary',
      environment: 'alpha',
      dryRun: false,
      complete: true,
      judged: 2,
      reaped: 1,
      kept: 1,
      skipped: 0,
      conflicts: 0,
      stopped: 0,
      errors: 0,
      reasons: { reap: { 'owner-gone': 1 }, keep: { 'deadline-pending': 1 } },
    });
    assert.equal(typeof durationMs, 'number');
    assert.equal(ownerReads, 3, 'the Pod judged and confirmed before its delete, the Secret judged');
    assert.equal(server.get('pods', 'sandbox-a', 'sbx-1'), undefined);
    assert.deepEqual(
      server.requests.filter((r) => r.method === 'GET' && r.query.has('labelSelector')).map((r) => r.path),
      [
        '/api/v1/namespaces',
        '/api/v1/namespaces/sandbox-a/pods',
        '/api/v1/namespaces/sandbox-a/secrets',
        '/api/v1/namespaces/sandbox-a/configmaps',
        '/apis/networking.k8s.io/v1/namespaces/sandbox-a/networkpolicies',
        '/api/v1/namespaces/sandbox-a/persistentvolumeclaims',
      ],
    );
  });

  test("objects labelled for alpha in a namespace outside the review scope (anyone may make them) are one line a kind and namespace, and all counted (rev-87)", async () => {
    reset();
    for (let i = 0; i < 30; i++) server.put('configmaps', stamped({ kind: 'ConfigMap', name: `planted-${i}`, namespace: 'plain' }));
    try {
      const run = await reapInProcess(['--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', policyFile, '--attestation-key', keyFile, '--once', '-o', 'json']);
      assert.equal(run.error, undefined);
      const lines = run.stdout.map((l) => JSON.parse(l) as Record<string, unknown>);
      const outside = lines.filter((l) => l.type === 'decision' && l.code === 'outside-review-scope');
      assert.equal(outside.length, 1, 'one line for namespace plain');
      assert.match(String(outside[0]!.reason), /namespace plain is outside the review scope.*the rest of this environment's ConfigMaps there are counted in the summary, not listed/);
      const summary = lines.at(-1)! as { skipped: number; reasons: Record<string, Record<string, number>> };
      assert.equal(summary.skipped, 30);
      assert.equal(summary.reasons.skip!['outside-review-scope'], 30);
      assert.equal(server.get('configmaps', 'plain', 'planted-0')?.metadata.name, 'planted-0', 'never deleted');
    } finally {
      for (let i = 0; i < 30; i++) server.remove('configmaps', 'plain', `planted-${i}`);
    }
  });

  test('a sweep that could not list exits 1', async () => {
    reset();
    server.faults.push({ method: 'GET', path: /\/secrets$/, answer: { status: 403, reason: 'Forbidden', message: 'secrets is forbidden' } });
    const run = await reapInProcess(['--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', policyFile]);
    assert.equal(run.exitCode, 1);
    assert.ok(run.stdout.some((l) => /^error Secret \*: could not list \(list secrets in all namespaces: HTTP 403: secrets is forbidden\)/.test(l)), run.stdout.join('\n'));
  });

  test('--interval sweeps at start and again, and SIGTERM stops it with exit 0', async () => {
    reset();
    let summaries = 0;
    const run = await reap(['--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', policyFile, '--interval', '0.2'], (line, stop) => {
      if (line.startsWith('summary:') && ++summaries === 2) stop();
    });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(summaries >= 2);
  });

  test('SIGTERM mid-sweep with --once: deletes in flight finish, no new one starts, the summary says incomplete and the exit status is 3', async () => {
    reset();
    server.remove('pods', 'sandbox-a', 'sbx-1');
    for (let i = 0; i < 30; i++) server.put('secrets', stamped({ kind: 'Secret', name: `orphan-${i}` }));
    server.faults.push({ method: 'DELETE', path: /\/secrets\/orphan-/, answer: { delayMs: 300 } });
    let signalled = false;
    const run = await reap(['--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', policyFile, '--apply', '--concurrency', '2', '-o', 'json'], (line, stop) => {
      if (!signalled && line.includes('"outcome":"deleted"')) {
        signalled = true;
        stop();
      }
    });
    try {
      assert.equal(run.code, 3, run.stderr);
      const lines = run.stdout.map((l) => JSON.parse(l) as { type: string; outcome?: string; complete?: boolean; stopped?: number });
      const summary = lines.at(-1)!;
      assert.equal(summary.type, 'summary');
      assert.equal(summary.complete, false);
      const deleted = lines.filter((l) => l.outcome === 'deleted').length;
      assert.ok(deleted < 30, `${deleted} deleted`);
      // Every delete sent was answered and reported: none cut off, none started after the signal beyond those in flight.
      assert.equal(server.deletes().length, deleted);
      assert.ok(summary.stopped! > 0);
    } finally {
      server.faults.length = 0;
      for (let i = 0; i < 30; i++) server.remove('secrets', 'sandbox-a', `orphan-${i}`);
    }
  });

  test('on a terminal, a progress line on stderr counts what was judged, deleted and kept', async () => {
    reset();
    let progress = '';
    const tty = { write: (text: string) => ((progress += text), true) } as unknown as NodeJS.WriteStream;
    const run = await runInProcess((program, write) => registerReap(program, write, tty), ['reap', '--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', policyFile]);
    assert.equal(run.error, undefined);
    assert.match(progress, /reap: judged 2, would delete 1, kept 1, errors 0, \d+\/s, \d+ s\n$/);
  });

  const refusals: Array<[string, string[], RegExp]> = [
    ['without --environment', ['--kubeconfig', kubeconfig], /required option '--environment <id>'/],
    ['with an environment id that would add selector terms', ['--environment', 'alpha,app!=x', '--kubeconfig', kubeconfig], /must be an environment id/],
    ['with both --once and --interval', ['--environment', 'alpha', '--once', '--interval', '5'], /cannot be used with/],
    ['with a namespace that is not a name', ['--environment', 'alpha', '--namespace', 'a/b'], /must be a namespace name/],
    ['with an environment the policy does not define', ['--environment', 'alpah', '--kubeconfig', kubeconfig, '--config', policyFile], /environment "alpah" is not in the policy \(alpha\)/],
    ['with a policy file that names no attestation key', ['--environment', 'default', '--kubeconfig', kubeconfig, '--config', keylessPolicy], /needs the attestation key/],
    ['outside a cluster without --kubeconfig', ['--environment', 'default', '--attestation-key', keyFile], /pass --kubeconfig FILE/],
    ['with a --context the kubeconfig lacks', ['--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', policyFile, '--context', 'prod'], /no context "prod" in/],
    ['with --concurrency 0', ['--environment', 'alpha', '--concurrency', '0'], /must be a whole number, at least 1/],
  ];
  for (const [name, args, message] of refusals) {
    test(`it refuses to start ${name}, before any API call`, async () => {
      const before = server.requests.length;
      const run = await reapInProcess(args);
      assert.ok(run.error, 'refused (main.ts exits 2)');
      assert.match(`${run.error.message}\n${run.stderr}`, message);
      assert.equal(server.requests.length, before, 'no API call was made');
    });
  }
});
