// References written through a /status subresource (rules/reference-scope.ts, isStatusWrite):
// the API server's status strategies of Services, Jobs and Ingresses reset the spec but keep
// metadata changes (owner references, annotations), so a status write is judged on what it
// changes there as an UPDATE of the object is: a blocking owner reference, a controller
// reference carrying a CronJob's name, a cert-manager issuer annotation are refused through
// /status as through the object itself. Beta is a namespace-admin (`*` on `*`, so `*/status`)
// in a namespace it shares with alpha, as the threat model allows (found by review 82).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Identity } from '../client.js';
import { collectionPath, createdOrThere as ok, createStamped, eventually, namespaceAdmins, PATHS, refusedBy as refused, standInCrd } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'status-refs';
const MERGE = 'application/merge-patch+json';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

const LAB = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/lab:1' }] };
const deployment = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: 0, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: LAB } } });
const service = (name: string, metadata: Any = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, ...metadata }, spec: { ports: [{ port: 80 }] } });
const job = (name: string, metadata: Any = {}) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, ...metadata }, spec: { suspend: true, template: { spec: { ...LAB, restartPolicy: 'Never' } } } });
const CERT_GROUP = 'cert-manager.io';
const ISSUERS = (ns: string) => `/apis/${CERT_GROUP}/v1/namespaces/${ns}/issuers`;
const issuer = (name: string) => ({ apiVersion: `${CERT_GROUP}/v1`, kind: 'Issuer', metadata: { name }, spec: { ca: { secretName: `${name}-key` } } });

export function statusReferenceCases(suite: () => Suite, tools: { controllers: boolean }): void {
  let beta: Identity; // sandbox-b:status-admin: acts for beta, namespace-admin in NS
  let alpha: Identity; // alpha's runner, namespace-admin in NS
  const uids: Record<string, string> = {};
  const betaUids: Record<string, string> = {};

  describe('references written through /status', () => {
    before(async () => {
      const s = suite();
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      ok('CRD issuers', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: CERT_GROUP, version: 'v1', plural: 'issuers', kind: 'Issuer' })));
      beta = await s.newIdentity('sandbox-b', 'status-admin');
      alpha = s.runnerA.identity;
      await namespaceAdmins(s, NS, 'status-admins', [['sandbox-a', 'runner'], ['sandbox-b', 'status-admin']]);
      await eventually('the Issuer kind is served', async () => (await s.api(s.admin, 'GET', ISSUERS(NS))).status === 200);
      for (const who of [alpha, beta]) await eventually(`RBAC lets ${who.name} create Issuers in ${NS}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${ISSUERS(NS)}?dryRun=All`, issuer('rbac-probe'))).text));
      await createStamped(s, alpha, 'alpha', [
        ['deployment', collectionPath('Deployment', NS), deployment('alpha-lab')],
        ['secret', PATHS.Secret(NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-cred' }, stringData: { k: 'v' } }],
        ['CA key', PATHS.Secret(NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-ca-key' }, type: 'Opaque', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }],
        ['CA Issuer', ISSUERS(NS), issuer('alpha-ca')],
        ['CronJob', collectionPath('CronJob', NS), { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly' }, spec: { schedule: '0 0 1 1 *', suspend: true, successfulJobsHistoryLimit: 1, jobTemplate: { spec: { template: { spec: { ...LAB, restartPolicy: 'Never' } } } } } }],
      ], uids);
      await createStamped(s, beta, 'beta', [
        ['service', collectionPath('Service', NS), service('beta-svc', { finalizers: ['hold.example.com/forever'] })],
        ['service', collectionPath('Service', NS), service('beta-svc2')],
        ['job', collectionPath('Job', NS), job('beta-job')],
      ], uids);
      await createStamped(s, beta, 'beta', [['ConfigMap named as alpha\'s CronJob', collectionPath('ConfigMap', NS), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nightly' }, data: { k: 'v' } }]], betaUids);
    });

    test("beta's blocking owner reference to alpha's Deployment is refused through services/status, as on the Service", async () => {
      const s = suite();
      const blocking = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-lab', uid: uids['alpha-lab'], blockOwnerDeletion: true };
      const svc = `${collectionPath('Service', NS)}/beta-svc`;
      // Control: the same change through the Service itself is refused.
      refused(await s.api(beta, 'PATCH', svc, { metadata: { ownerReferences: [blocking] } }, MERGE), 'reference.cross-environment', /blocks the deletion of Deployment status-refs\/alpha-lab/);
      // The same through services/status, whose strategy keeps metadata changes.
      refused(await s.api(beta, 'PATCH', `${svc}/status`, { metadata: { ownerReferences: [blocking] } }, MERGE), 'reference.cross-environment', /blocks the deletion of Deployment status-refs\/alpha-lab/);
    });

    test("beta's blocking owner reference to alpha's Secret's uid under a kind the collector cannot resolve is refused through services/status", async () => {
      const s = suite();
      const hold = { apiVersion: 'hold.example.com/v1', kind: 'Hold', name: 'anything', uid: uids['alpha-cred'], blockOwnerDeletion: true };
      const svc = `${collectionPath('Service', NS)}/beta-svc2`;
      refused(await s.api(beta, 'PATCH', svc, { metadata: { ownerReferences: [hold] } }, MERGE), 'reference.unknown', /a kind Deed does not read/);
      refused(await s.api(beta, 'PATCH', `${svc}/status`, { metadata: { ownerReferences: [hold] } }, MERGE), 'reference.unknown', /a kind Deed does not read/);
    });

    test("nothing beta wrote holds alpha's foreground deletes: the Deployment and the Secret are gone", { skip: !tools.controllers }, async () => {
      const s = suite();
      const dep = `${collectionPath('Deployment', NS)}/alpha-lab`;
      const sec = `${PATHS.Secret(NS)}/alpha-cred`;
      const fg = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' };
      ok('foreground delete of the Deployment', await s.api(alpha, 'DELETE', dep, fg));
      ok('foreground delete of the Secret', await s.api(alpha, 'DELETE', sec, fg));
      for (const [what, path] of [['Deployment', dep], ['Secret', sec]] as Array<[string, string]>)
        await eventually(`alpha's ${what} is deleted`, async () => (await s.api(s.admin, 'GET', path)).status === 404, 30_000);
    });

    test("beta's Job may not carry alpha's CronJob's name in its controller reference through jobs/status, as on the Job", async () => {
      const s = suite();
      // Beta's own ConfigMap, named as alpha's CronJob: the cronjob controller matches a Job's controller reference by name alone.
      const namesake = { apiVersion: 'v1', kind: 'ConfigMap', name: 'nightly', uid: betaUids['nightly'], controller: true };
      const path = `${collectionPath('Job', NS)}/beta-job`;
      refused(await s.api(beta, 'PATCH', path, { metadata: { ownerReferences: [namesake] } }, MERGE), 'reference.cross-environment', /metadata\.ownerReferences\[0\]\.name: names CronJob nightly, which belongs to another environment \(the cronjob controller of a CronJob of that name counts the Job as its own/);
      refused(await s.api(beta, 'PATCH', `${path}/status`, { metadata: { ownerReferences: [namesake] } }, MERGE), 'reference.cross-environment', /metadata\.ownerReferences\[0\]\.name: names CronJob nightly, which belongs to another environment \(the cronjob controller of a CronJob of that name counts the Job as its own/);
    });

    test("alpha's CronJob keeps its own finished Job: beta's finished Job is not counted as its history", { skip: !tools.controllers }, async () => {
      const s = suite();
      const jobs = collectionPath('Job', NS);
      const claimed = ((await s.api(s.admin, 'GET', `${jobs}/beta-job`)).body as Any).metadata?.ownerReferences ?? [];
      assert.ok(!JSON.stringify(claimed).includes('"nightly"'), `beta's Job carries alpha's CronJob's name: ${JSON.stringify(claimed)}`);
      const iso = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().replace(/\.\d+Z$/, 'Z');
      const finished = (started: number) => ({
        status: {
          startTime: iso(started),
          completionTime: iso(started - 60_000),
          succeeded: 1,
          conditions: [
            { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: iso(started - 60_000), reason: 'CompletionsReached', message: 'done' },
            { type: 'Complete', status: 'True', lastTransitionTime: iso(started - 60_000), reason: 'CompletionsReached', message: 'done' },
          ],
        },
      });
      // Beta finishes its own Job (its status is beta's to write), an hour ago.
      const b = await s.api(beta, 'PATCH', `${jobs}/beta-job/status`, finished(3_600_000), MERGE);
      assert.equal(b.status, 200, `beta's Job finished: ${b.text}`);
      // Alpha's CronJob's own earlier run: a Job it controls, finished two hours ago (written here as the job controller would).
      const cronUid = uids['nightly']!;
      const own = await s.api(alpha, 'POST', jobs, job('nightly-earlier', { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: cronUid, controller: true, blockOwnerDeletion: true }] }));
      assert.equal(own.status, 201, `alpha's run: ${own.text}`);
      const a = await s.api(s.admin, 'PATCH', `${jobs}/nightly-earlier/status`, finished(7_200_000), MERGE);
      assert.equal(a.status, 200, `alpha's run finished: ${a.text}`);
      // With successfulJobsHistoryLimit 1 the controller keeps the newest finished Job it counts: had it counted beta's, alpha's would go.
      let gone = false;
      try {
        await eventually("alpha's finished Job is deleted by alpha's own CronJob", async () => (await s.api(s.admin, 'GET', `${jobs}/nightly-earlier`)).status === 404, 30_000);
        gone = true;
      } catch {
        gone = false;
      }
      const betaJob = (await s.api(s.admin, 'GET', `${jobs}/beta-job`)).status;
      assert.equal(gone, false, `alpha's CronJob deleted alpha's own finished Job nightly-earlier as history surplus, counting beta's Job (beta-job GET ${betaJob})`);
    });

    test("beta's Ingress may not name alpha's Issuer in cert-manager's annotation through ingresses/status, as on the Ingress", async () => {
      const s = suite();
      const ing = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'beta-web' }, spec: { rules: [{ host: 'beta-web.example.com' }] } };
      const made = await s.api(beta, 'POST', collectionPath('Ingress', NS), ing);
      assert.ok(made.status === 201 || made.status === 409, made.text);
      const path = `${collectionPath('Ingress', NS)}/beta-web`;
      const annotate = { metadata: { annotations: { 'cert-manager.io/issuer': 'alpha-ca' } } };
      refused(await s.api(beta, 'PATCH', path, annotate, MERGE), 'reference.cross-environment', /cert-manager\.io\/issuer.*alpha-ca/);
      refused(await s.api(beta, 'PATCH', `${path}/status`, annotate, MERGE), 'reference.cross-environment', /cert-manager\.io\/issuer.*alpha-ca/);
      // A status write that adds no reference passes: beta's load balancer status of its own Ingress.
      const lb = await s.api(beta, 'PATCH', `${path}/status`, { status: { loadBalancer: { ingress: [{ ip: '10.0.0.7' }] } } }, MERGE);
      assert.equal(lb.status, 200, lb.text);
    });

    test("beta may not change the ingress-shim's annotations beside the platform's unstamped Ingress's kept issuer (alpha's) through ingresses/status", async () => {
      const s = suite();
      const ing = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'platform-web', annotations: { 'cert-manager.io/issuer': 'alpha-ca' } }, spec: { rules: [{ host: 'web.example.com' }] } };
      const made = await s.api(s.admin, 'POST', collectionPath('Ingress', NS), ing);
      assert.ok(made.status === 201 || made.status === 409, made.text);
      const path = `${collectionPath('Ingress', NS)}/platform-web`;
      const shim = { metadata: { annotations: { 'cert-manager.io/common-name': 'alpha-db.internal' } } };
      refused(await s.api(beta, 'PATCH', path, shim, MERGE), 'reference.cross-environment', /cert-manager\.io\/issuer.*alpha-ca.*carries no stamps/);
      refused(await s.api(beta, 'PATCH', `${path}/status`, shim, MERGE), 'reference.cross-environment', /cert-manager\.io\/issuer.*alpha-ca.*carries no stamps/);
    });
  });
}
