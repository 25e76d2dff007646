// What a platform team meets first (issue: "adopts Deed in an afternoon"): the cluster
// administrator is break-glass by default, visibly; `deed reap --as` runs the reaper's
// identity from an administrator's kubeconfig.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { run } from '../client.js';
import { PATHS, sandboxPod, secret } from '../objects.js';
import type { Suite } from '../suite.js';
import { ROOT } from '../../serve-process.js';

export function adoptionCases(suite: () => Suite): void {
  describe('a platform team on its first day', () => {
    test("the cluster administrator deletes alpha's sandbox pod: allowed as break-glass, kubectl prints Deed's warning, the API server's audit log keeps the annotation", async () => {
      const s = suite();
      const made = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), sandboxPod('admin-cleans-up'));
      assert.equal(made.status, 201, made.text);
      const removed = await s.kubectl(s.admin, ['delete', 'pod', 'admin-cleans-up', '-n', 'sandbox-a', '--grace-period=0', '--force']);
      assert.equal(removed.code, 0, removed.stderr);
      assert.match(removed.stderr, /Warning: Deed: break-glass use by e2e-admin: allowed past guard\.unmapped/);
      const event = s.cp.audit().find((e) => e.verb === 'delete' && e.objectRef?.name === 'admin-cleans-up' && e.stage === 'ResponseComplete');
      assert.ok(event, 'the delete is in the audit log');
      const annotation = Object.entries(event.annotations ?? {}).find(([k]) => k.endsWith('/break-glass'));
      assert.deepEqual(annotation?.[1], 'guard.unmapped', JSON.stringify(event.annotations));
    });

    test("what the administrator may do anyway carries no break-glass warning", async () => {
      const s = suite();
      const made = await s.kubectl(s.admin, ['create', 'secret', 'generic', 'admin-own', '-n', 'plain', '--from-literal=a=b']);
      assert.equal(made.code, 0, made.stderr);
      assert.doesNotMatch(made.stderr, /break-glass/);
    });

    test("deed reap --as the reaper's service account, from the administrator's kubeconfig, deletes as the reaper would", async () => {
      const s = suite();
      // A leak of alpha's in sandbox-b: no owner reference there, so only the reaper cleans up.
      await s.bindSandboxRole('sandbox-b', [['sandbox-a', 'runner']]);
      const leaker = await s.newRunner('sandbox-a', 'runner-as-test');
      const leak = await s.api(leaker.identity, 'POST', PATHS.Secret('sandbox-b'), secret('as-leak'));
      assert.equal(leak.status, 201, leak.text);
      const gone = await s.kubectl(s.admin, ['delete', 'pod', 'runner-as-test', '-n', 'sandbox-a', '--grace-period=0', '--force']);
      assert.equal(gone.code, 0, gone.stderr);
      const result = await run(process.execPath, [
        '--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'reap', '--environment', 'alpha', '--kubeconfig', s.admin.kubeconfig!, '--config', s.policyFile,
        '--namespace', 'sandbox-b', '--apply', '-o', 'json', '--as', 'system:serviceaccount:deed-system:deed-reaper-alpha',
      ]);
      assert.equal(result.code, 0, result.stderr + result.stdout);
      const line = result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { name?: string; outcome?: string }).find((l) => l.name === 'as-leak');
      assert.equal(line?.outcome, 'deleted', result.stdout);
      const event = s.cp.audit().find((e) => e.verb === 'delete' && e.objectRef?.name === 'as-leak' && e.stage === 'ResponseComplete');
      assert.equal(event?.user.username, 'e2e-admin', 'authenticated as the administrator');
      assert.equal((event as { impersonatedUser?: { username?: string } } | undefined)?.impersonatedUser?.username, 'system:serviceaccount:deed-system:deed-reaper-alpha');
    });
  });
}
