// A CronJob's status.active is the cronjob controller's (rev-93): with concurrencyPolicy
// Replace the controller deletes every Job that list names at the next run, by namespace and
// name alone, as kube-system. Beta, namespace admin (`*` on `*`, so cronjobs/status) in a
// shared namespace and in a namespace of its own that Deed does not review, wrote alpha's Jobs
// into it and the controller deleted them. The ValidatingAdmissionPolicy deed-cronjob-active
// (src/install/cronjob-active-policy.ts) refuses any change of the list but the controller's,
// in every namespace; the controller's own writes still pass.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import type { Identity } from '../client.js';
import { collectionPath, createdOrThere as ok, eventually, namespaceAdmins } from '../objects.js';
import type { Suite } from '../suite.js';

const SHARED = 'shared-cron';
const OWN = 'beta-own-cron';
const MERGE = 'application/merge-patch+json';
const LAB = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/lab:1' }], restartPolicy: 'Never' };
const job = (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { suspend: true, template: { spec: LAB } } });
const cronJob = (name: string) => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name },
  spec: { schedule: '* * * * *', concurrencyPolicy: 'Replace', jobTemplate: { spec: { suspend: true, template: { spec: LAB } } } },
});
const ref = (o: KubeObject) => ({ apiVersion: 'batch/v1', kind: 'Job', namespace: o.metadata.namespace, name: o.metadata.name, uid: o.metadata.uid });

export function cronJobStatusCases(suite: () => Suite, tools: { controllers: boolean }): void {
  describe("a CronJob's status.active is the cronjob controller's, in every namespace", () => {
    let beta: Identity;
    before(async () => {
      const s = suite();
      ok('shared namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SHARED, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      // Beta's own namespace, outside the review scope: no webhook of Deed's is sent what is written there.
      ok('own namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OWN } }));
      beta = await s.newIdentity('sandbox-b', 'cron-admin');
      await namespaceAdmins(s, SHARED, 'cron-admins', [['sandbox-a', 'runner'], ['sandbox-b', 'cron-admin']]);
      await namespaceAdmins(s, OWN, 'cron-admins', [['sandbox-b', 'cron-admin']]);
      for (const ns of [SHARED, OWN]) await eventually(`RBAC lets beta create CronJobs in ${ns}`, async () => !/cannot create resource/.test((await s.api(beta, 'POST', `${collectionPath('CronJob', ns)}?dryRun=All`, cronJob('rbac-probe'))).text));
    });

    test("beta may not list alpha's Jobs in its CronJob's status.active, from the shared namespace or from its own; a status write that leaves the list passes", async () => {
      const s = suite();
      const shared = await s.api(s.runnerA.identity, 'POST', collectionPath('Job', SHARED), job('alpha-run'));
      assert.equal(shared.status, 201, shared.text);
      const bound = await s.api(s.admin, 'POST', collectionPath('Job', 'sandbox-a'), job('alpha-own-run'));
      assert.equal(bound.status, 201, bound.text);
      for (const [ns, name] of [[SHARED, 'beta-tick'], [OWN, 'beta-tock']] as const) {
        ok(`beta's CronJob in ${ns}`, await s.api(beta, 'POST', collectionPath('CronJob', ns), cronJob(name)));
        const status = await s.api(beta, 'PATCH', `${collectionPath('CronJob', ns)}/${name}/status`, { status: { active: [ref(shared.body as KubeObject), ref(bound.body as KubeObject)] } }, MERGE);
        assert.equal(status.status, 403, status.text);
        assert.match(status.body.message, new RegExp(`cronjob ${ns}/${name}: status\\.active names the Jobs its controller deletes at the next run \\(concurrencyPolicy Replace\\), in any namespace and by name alone: only the cronjob controller \\(kube-system\\) and break-glass may change it`));
        const other = await s.api(beta, 'PATCH', `${collectionPath('CronJob', ns)}/${name}/status`, { status: { lastScheduleTime: '2026-12-07T03:00:00Z' } }, MERGE);
        assert.equal(other.status, 200, other.text);
      }
    });

    test("beta's CronJob named as the controller reference of alpha's Job (alpha's ConfigMap's) or of the platform's (an operator's JobSet) is refused: the cronjob controller would delete them once finished (rev-93)", async () => {
      const s = suite();
      const alpha = s.runnerA.identity;
      const settings = await s.api(alpha, 'POST', collectionPath('ConfigMap', SHARED), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'train' }, data: { k: 'v' } });
      assert.equal(settings.status, 201, settings.text);
      const controlled = (name: string, owner: Record<string, unknown>) => ({ ...job(name), metadata: { name, ownerReferences: [{ ...owner, controller: true }] } });
      ok("alpha's Job controlled by its ConfigMap", await s.api(alpha, 'POST', collectionPath('Job', SHARED), controlled('train-step', { apiVersion: 'v1', kind: 'ConfigMap', name: 'train', uid: (settings.body as KubeObject).metadata.uid })));
      ok("the platform's Job controlled by an operator's JobSet", await s.api(s.admin, 'POST', collectionPath('Job', SHARED), controlled('sweep-worker', { apiVersion: 'jobset.x-k8s.io/v1alpha2', kind: 'JobSet', name: 'sweep', uid: '3d6f0a4e-0000-4000-8000-000000000093' })));
      for (const [name, job] of [['train', 'train-step'], ['sweep', 'sweep-worker']] as const) {
        const made = await s.api(beta, 'POST', collectionPath('CronJob', SHARED), cronJob(name));
        assert.equal(made.status, 403, made.text);
        assert.match(made.body.message, new RegExp(`\\[reference\\.live-reader\\] metadata\\.name: Job ${SHARED}/${job} of another environment \\(or of none\\) names CronJob ${name} \\(metadata\\.ownerReferences\\[0\\]\\.name\\), and once this one stands the cronjob controller of a CronJob of that name counts the Job as its own`));
      }
      // Alpha's own CronJob of that name is alpha's to make.
      ok("alpha's CronJob train", await s.api(alpha, 'POST', collectionPath('CronJob', SHARED), cronJob('train')));
    });

    test('the cronjob controller still records the Jobs it makes', { skip: tools.controllers ? false : 'needs kube-controller-manager' }, async () => {
      const s = suite();
      ok("alpha's CronJob", await s.api(s.runnerA.identity, 'POST', collectionPath('CronJob', SHARED), cronJob('alpha-tick')));
      await eventually('the controller lists the Job it made in status.active', async () => {
        const got = await s.api(s.admin, 'GET', `${collectionPath('CronJob', SHARED)}/alpha-tick`);
        return ((got.body as { status?: { active?: unknown[] } }).status?.active ?? []).length > 0;
      }, 130_000);
    });
  });
}
