// A stamp counts only where Deed reviews every write. In a namespace that has not opted in,
// no webhook runs, so a tenant with RBAC there can write any stamps, including ones that
// verify under the cluster's key (the webhook port signed them for anyone who asked, or an
// old object carried them). Tried as beta's janitor: planted objects are listed as outside
// the review scope by `deed keys usage` and never counted, so the old key stays retirable.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import type { KeyUsage } from '../../../src/keys/usage.js';
import { registerKeys } from '../../../src/cli/keys.js';
import { runInProcess } from '../../cli-process.js';
import { stamped } from '../../reaper-helpers.js';
import { annotation, KEYS, PATHS, secret } from '../objects.js';
import { DEED_NAMESPACE, readKey, type Suite } from '../suite.js';

const OUTSIDE = 'beta-unreviewed';

export function reviewScopeCases(suite: () => Suite): void {
  describe('stamps outside the review scope', () => {
    before(async () => {
      const s = suite();
      const created = await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OUTSIDE } });
      assert.equal(created.status, 201, created.text);
      await s.bindSandboxRole(OUTSIDE, [['sandbox-b', 'janitor']]); // beta's janitor may write there: the tenant's own namespace
    });

    test("stamps beta's janitor planted outside the review scope, verifying under the cluster's key, are listed as outside it by deed keys usage and never counted", async () => {
      const s = suite();
      const real = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), secret('scope-counted'));
      assert.equal(real.status, 201, real.text);
      // Alpha's stamps, signed for this namespace with the key Deed signs with.
      const forged = { apiVersion: 'v1', kind: 'Secret', ...stamped({ kind: 'Secret', name: 'planted', namespace: OUTSIDE, signingKey: readKey(s) }) };
      delete (forged.metadata as { uid?: string }).uid;
      delete (forged.metadata as { resourceVersion?: string }).resourceVersion;
      const planted = await s.api(s.janitorB, 'POST', PATHS.Secret(OUTSIDE), forged);
      assert.equal(planted.status, 201, `no webhook runs outside the scope: ${planted.text}`);
      assert.ok(annotation(planted.body as KubeObject, KEYS.attestation)?.startsWith('v1:'), 'the planted stamps are stored as written');

      const run = await runInProcess(registerKeys, ['keys', 'usage', '--kubeconfig', s.admin.kubeconfig!, '--config', s.policyFile, '--namespace', 'sandbox-a', '--namespace', OUTSIDE, '--deed-namespace', DEED_NAMESPACE, '-o', 'json', '--show-objects']);
      assert.equal(run.error, undefined, run.stderr);
      const usage = JSON.parse(run.stdout) as KeyUsage;
      assert.deepEqual(usage.errors, []);
      const of = (ns: string) => usage.objects.filter((o) => o.namespace === ns);
      assert.deepEqual(
        of(OUTSIDE).map((o) => [o.name, o.status]),
        [['planted', 'outside-scope']],
      );
      assert.ok(of('sandbox-a').some((o) => o.name === 'scope-counted' && o.status === 'verified'));
      const counted = usage.keys.reduce((n, k) => n + k.objects, 0);
      assert.equal(counted, of('sandbox-a').filter((o) => o.status === 'verified').length, 'only objects in the scope are counted under a key');
      assert.equal(usage.outsideScope, 1);
    });
  });
}
