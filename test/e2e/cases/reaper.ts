// `deed reap` against the real API server: a dry run, --apply with the UID as a delete
// precondition (read back from the API server's audit log), kinds with no objects (the
// API server answers "items": null), an owner replaced under the same name, and an
// owner read that fails.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:https';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { generateCertificates } from '../../../src/server/certificates.js';
import { run } from '../client.js';
import { writeKubeconfig } from '../control-plane.js';
import { PATHS, secret } from '../objects.js';
import type { Runner, Suite } from '../suite.js';
import { ROOT } from '../../serve-process.js';

interface ReapLine {
  type: 'decision' | 'summary';
  action?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  code?: string;
  outcome?: string;
  reason?: string;
  errors?: number;
  reaped?: number;
}

async function reap(s: Suite, kubeconfig: string, args: string[]): Promise<{ code: number; lines: ReapLine[]; stderr: string }> {
  const result = await run(process.execPath, [
    '--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'reap',
    '--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', s.policyFile, '-o', 'json', '--timeout', '5', ...args,
  ]);
  return { code: result.code, stderr: result.stderr, lines: result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ReapLine) };
}

const about = (lines: ReapLine[], name: string) => lines.find((l) => l.type === 'decision' && l.name === name);

export function reaperCases(suite: () => Suite): void {
  describe('deed reap in a real API server', () => {
    let leaker: Runner;
    let leakUid: string;

    before(async () => {
      const s = suite();
      // A runner of alpha that writes into sandbox-b: no owner reference there (owners
      // cascade only inside a namespace), so only the reaper can clean up after it.
      await s.bindSandboxRole('sandbox-b', [['sandbox-a', 'runner']]);
      leaker = await s.newRunner('sandbox-a', 'runner-leaky');
      const leak = await s.api(leaker.identity, 'POST', PATHS.Secret('sandbox-b'), secret('leaked-creds'));
      assert.equal(leak.status, 201, leak.text);
      assert.equal(leak.body.metadata.ownerReferences, undefined);
      leakUid = leak.body.metadata.uid as string;
      const live = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-b'), secret('live-creds'));
      assert.equal(live.status, 201, live.text);
    });

    test('a sweep over kinds with no managed objects completes cleanly and exits 0', async () => {
      const s = suite();
      const result = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'plain']);
      assert.equal(result.code, 0, result.stderr + JSON.stringify(result.lines));
      const summary = result.lines.find((l) => l.type === 'summary')!;
      assert.equal(summary.errors, 0);
      assert.equal(result.lines.filter((l) => l.action === 'error').length, 0);
    });

    test('while the owner lives both Secrets are kept; once it is gone the dry run names the leak and deletes nothing', async () => {
      const s = suite();
      const alive = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b']);
      assert.equal(alive.code, 0, alive.stderr);
      assert.equal(about(alive.lines, 'leaked-creds')?.action, 'keep');
      assert.equal(about(alive.lines, 'live-creds')?.action, 'keep');

      assert.equal((await s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-leaky`, { gracePeriodSeconds: 0 })).status, 200);
      const gone = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b']);
      assert.equal(gone.code, 0, gone.stderr);
      assert.equal(about(gone.lines, 'leaked-creds')?.action, 'reap');
      assert.equal(about(gone.lines, 'leaked-creds')?.outcome, 'would-delete');
      assert.equal(about(gone.lines, 'live-creds')?.action, 'keep');
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/leaked-creds`)).status, 200);
    });

    test('an owner read that fails keeps the object and says why', async () => {
      const s = suite();
      const proxy = await failingOwnerReads(s);
      try {
        const result = await reap(s, proxy.kubeconfig, ['--namespace', 'sandbox-b']);
        assert.equal(result.code, 0, result.stderr);
        const leak = about(result.lines, 'leaked-creds')!;
        assert.equal(leak.action, 'keep');
        assert.equal(leak.code, 'owner-unreadable');
        assert.ok(proxy.failed() > 0, 'the proxy failed an owner read');
      } finally {
        await proxy.close();
      }
    });

    test('with the owner replaced under the same name, --apply deletes the leak with its UID as a precondition', async () => {
      const s = suite();
      const replacement = await s.newRunner('sandbox-a', 'runner-leaky');
      assert.notEqual(replacement.uid, leaker.uid);
      const applied = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b', '--apply']);
      assert.equal(applied.code, 0, applied.stderr);
      assert.equal(about(applied.lines, 'leaked-creds')?.outcome, 'deleted');
      assert.equal(about(applied.lines, 'live-creds')?.action, 'keep');
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/leaked-creds`)).status, 404);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/live-creds`)).status, 200);
      const deletes = s.cp.audit().filter((e) => e.verb === 'delete' && e.objectRef?.name === 'leaked-creds' && e.stage === 'ResponseComplete');
      assert.equal(deletes.length, 1);
      assert.equal(deletes[0]!.user.username, 'system:serviceaccount:deed-system:deed-reaper-alpha');
      assert.equal(deletes[0]!.requestObject?.preconditions?.uid, leakUid);
    });
  });
}

/** An HTTPS proxy to the API server that answers 503 to every read of a single pod. */
async function failingOwnerReads(s: Suite): Promise<{ kubeconfig: string; failed: () => number; close: () => Promise<void> }> {
  const dir = join(s.cp.dir, 'proxy');
  const certs = await generateCertificates(dir, ['127.0.0.1']);
  const upstream = new URL(s.cp.server);
  let failed = 0;
  const server: Server = createServer({ cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) }, (req, res) => {
    if (req.method === 'GET' && /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/?]+(\?|$)/.test(req.url ?? '')) {
      failed++;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'ServiceUnavailable', code: 503, message: 'injected by the test' }));
      return;
    }
    const forward = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, ca: s.cp.ca },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, `https://127.0.0.1:${port}`, readFileSync(certs.caFile, 'utf8'), s.reaperA.token);
  return {
    kubeconfig,
    failed: () => failed,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

