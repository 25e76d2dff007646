// Workloads are stamped kinds, in a real API server with the workload controllers running.
// The incident Deed exists to prevent: in a namespace alpha and beta share (shared-labs,
// opted in, bound to no environment, beta's janitor holding edit-level rights there),
// beta's janitor scales alpha's live lab Deployment to zero and deletes it, and the garbage
// collector removes its ReplicaSet and pods. Each door is tried as beta and as a principal
// of no environment; alpha's own Deployments, StatefulSets, DaemonSets, Jobs and CronJobs
// keep working through create, scale, rollout, rollback and deletion, and the garbage
// collector still cascades.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { annotation, attested, collectionPaths, eventually, KEYS, label, PATHS } from '../objects.js';
import type { Identity } from '../client.js';
import type { Suite } from '../suite.js';
import type { Tools } from './admission.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- workloads as the API server stores them
type Spec = Record<string, any>;

const NS = 'shared-labs';
const PATH = collectionPaths(['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'ReplicationController'] as const);
type Kind = keyof typeof PATH;
const MERGE = 'application/merge-patch+json';

function lab(kind: Kind, name: string, image = 'registry.example/lab:1', meta: Spec = {}): Spec {
  const labels = { app: name };
  const spec = { automountServiceAccountToken: false, containers: [{ name: 'main', image }] };
  const template = { metadata: { labels }, spec };
  const job = { metadata: { labels }, spec: { ...spec, restartPolicy: 'Never' } };
  const apiVersion = kind === 'ReplicationController' ? 'v1' : kind === 'Job' || kind === 'CronJob' ? 'batch/v1' : 'apps/v1';
  const body: Spec = { apiVersion, kind, metadata: { name, labels, ...meta } };
  if (kind === 'Job') return { ...body, spec: { template: job } };
  if (kind === 'CronJob') return { ...body, spec: { schedule: '0 0 1 1 *', jobTemplate: { spec: { template: job } } } };
  if (kind === 'ReplicationController') return { ...body, spec: { replicas: 1, selector: labels, template } };
  if (kind === 'StatefulSet') return { ...body, spec: { replicas: 1, serviceName: name, selector: { matchLabels: labels }, template } };
  if (kind === 'DaemonSet') return { ...body, spec: { selector: { matchLabels: labels }, template } };
  return { ...body, spec: { replicas: 1, selector: { matchLabels: labels }, template } };
}

export function workloadCases(suite: () => Suite, tools: Tools): void {
  const needsControllers = tools.controllers ? false : 'needs kube-controller-manager in KUBEBUILDER_ASSETS (setup-envtest does not ship it)';

  describe('workloads are stamped kinds', () => {
    /** platform:lab-intruder: acts for no environment, with the same rights as beta's janitor in shared-labs. */
    let intruder: Identity;
    let alpha: Identity;

    const ok = (what: string, a: { status: number; text: string }) => {
      if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
    };
    const pods = async (s: Suite, ns: string, app: string): Promise<Spec[]> => (await s.api(s.admin, 'GET', `${PATHS.Pod(ns)}?labelSelector=app%3D${app}`)).body.items ?? [];
    const get = async (s: Suite, kind: Kind, ns: string, name: string) => s.api(s.admin, 'GET', `${PATH[kind](ns)}/${name}`);
    const create = async (s: Suite, who: Identity, kind: Kind, ns: string, body: Spec): Promise<KubeObject> => {
      const answer = await s.api(who, 'POST', PATH[kind](ns), body);
      assert.equal(answer.status, 201, answer.text);
      return answer.body as KubeObject;
    };

    before(async () => {
      const s = suite();
      alpha = s.runnerA.identity;
      intruder = await s.newIdentity('platform', 'lab-intruder');
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      ok('lab role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        metadata: { name: 'e2e-labs' },
        rules: [
          { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets', 'deployments/scale', 'replicasets/scale', 'statefulsets/scale', 'deployments/status', 'statefulsets/status', 'controllerrevisions'], verbs: ['*'] },
          { apiGroups: ['batch'], resources: ['jobs', 'cronjobs', 'jobs/status', 'cronjobs/status'], verbs: ['*'] },
          { apiGroups: [''], resources: ['replicationcontrollers', 'replicationcontrollers/scale', 'pods'], verbs: ['*'] },
        ],
      }));
      const subjects: Array<[string, string]> = [['sandbox-a', 'runner'], ['sandbox-b', 'janitor'], ['platform', 'lab-intruder']];
      for (const ns of [NS, 'sandbox-a'])
        ok(`lab rights in ${ns}`, await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
          metadata: { name: 'e2e-labs' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-labs' },
          subjects: subjects.map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
        }));
      for (const [ns, user] of [[NS, 'system:serviceaccount:sandbox-b:janitor'], [NS, 'system:serviceaccount:platform:lab-intruder'], [NS, 'system:serviceaccount:sandbox-a:runner'], ['sandbox-a', 'system:serviceaccount:sandbox-a:runner']] as const) {
        const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['system:serviceaccounts', 'system:authenticated'], resourceAttributes: { namespace: ns, verb: 'delete', group: 'apps', resource: 'deployments' } } };
        await eventually(`RBAC lets ${user} delete deployments in ${ns}`, async () => (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true);
      }
      await eventually(`Deed reviews ${NS}`, async () => (await s.api(alpha, 'POST', `${PATH.Deployment(NS)}?dryRun=All`, lab('Deployment', 'probe'))).body?.metadata?.labels?.[KEYS.environment] === 'alpha');
    });

    test("alpha's runner's workloads of every kind are stored with alpha's stamps, whose attestation verifies", async () => {
      const s = suite();
      for (const kind of Object.keys(PATH) as Kind[]) {
        const stored = await create(s, alpha, kind, NS, lab(kind, `stamped-${kind.toLowerCase()}`));
        assert.equal(label(stored, KEYS.environment), 'alpha', kind);
        assert.equal(label(stored, KEYS.ownerUid), s.runnerA.uid, kind);
        assert.equal(annotation(stored, KEYS.owner), `sandbox-a/${s.runnerA.pod}`, kind);
        assert.ok(attested(s, stored), `${kind}: the attestation verifies`);
        assert.equal(stored.metadata.ownerReferences, undefined, `${kind}: its runner is in another namespace`);
      }
    });

    describe("the incident Deed exists to prevent (one environment's janitor runs deployments.delete on another's live lab): beta's janitor cannot scale to zero or delete alpha's live lab Deployment", { skip: needsControllers }, () => {
      before(async () => {
        const s = suite();
        await create(s, alpha, 'Deployment', NS, lab('Deployment', 'live-lab'));
        await eventually("alpha's lab runs a pod", async () => (await pods(s, NS, 'live-lab')).length === 1, 60_000);
      });

      test("beta's janitor's scale to zero is refused, through /scale and through the Deployment", async () => {
        const s = suite();
        const scale = await s.api(s.janitorB, 'PATCH', `${PATH.Deployment(NS)}/live-lab/scale`, { spec: { replicas: 0 } }, MERGE);
        assert.equal(scale.status, 403, scale.text);
        assert.match(scale.body.message, /\[guard\.cross-environment\] system:serviceaccount:sandbox-b:janitor acts for "beta", and this object belongs to another environment/);
        const kubectlScale = await s.kubectl(s.janitorB, ['scale', 'deployment/live-lab', '-n', NS, '--replicas=0']);
        assert.notEqual(kubectlScale.code, 0, kubectlScale.stdout);
        assert.match(kubectlScale.stderr, /guard\.cross-environment/);
        const patch = await s.api(s.janitorB, 'PATCH', `${PATH.Deployment(NS)}/live-lab`, { spec: { replicas: 0 } }, MERGE);
        assert.equal(patch.status, 403, patch.text);
        assert.equal((await get(s, 'Deployment', NS, 'live-lab')).body.spec.replicas, 1);
      });

      test("beta's janitor's delete is refused, one by one and as a collection, and the lab keeps running", async () => {
        const s = suite();
        const del = await s.api(s.janitorB, 'DELETE', `${PATH.Deployment(NS)}/live-lab`);
        assert.equal(del.status, 403, del.text);
        assert.match(del.body.message, /\[guard\.cross-environment\]/);
        const all = await s.api(s.janitorB, 'DELETE', `${PATH.Deployment(NS)}?labelSelector=app%3Dlive-lab`);
        assert.equal(all.status, 403, all.text);
        const rs = (await s.api(s.admin, 'GET', `${PATH.ReplicaSet(NS)}?labelSelector=app%3Dlive-lab`)).body.items ?? [];
        assert.equal(rs.length, 1, 'its ReplicaSet stays');
        assert.equal((await get(s, 'Deployment', NS, 'live-lab')).status, 200);
        assert.equal((await pods(s, NS, 'live-lab')).length, 1, 'its pod stays');
      });

      test("beta's janitor may not rewrite the Deployment's status, relabel it, or roll it out", async () => {
        const s = suite();
        const status = await s.api(s.janitorB, 'PATCH', `${PATH.Deployment(NS)}/live-lab/status`, { status: { observedGeneration: 99 } }, MERGE);
        assert.equal(status.status, 403, status.text);
        const relabel = await s.api(s.janitorB, 'PATCH', `${PATH.Deployment(NS)}/live-lab`, { metadata: { labels: { [KEYS.environment]: 'beta' } } }, MERGE);
        assert.equal(relabel.status, 403, relabel.text);
        const restart = await s.kubectl(s.janitorB, ['rollout', 'restart', 'deployment/live-lab', '-n', NS]);
        assert.notEqual(restart.code, 0, restart.stdout);
        assert.match(restart.stderr, /guard\.cross-environment/);
      });

      test('a principal of no environment may neither scale it nor delete it', async () => {
        const s = suite();
        const scale = await s.api(intruder, 'PATCH', `${PATH.Deployment(NS)}/live-lab/scale`, { spec: { replicas: 0 } }, MERGE);
        assert.equal(scale.status, 403, scale.text);
        assert.match(scale.body.message, /\[guard\.unmapped\]/);
        const del = await s.api(intruder, 'DELETE', `${PATH.Deployment(NS)}/live-lab`);
        assert.equal(del.status, 403, del.text);
      });
    });

    describe('forged stamps on a workload', () => {
      const forged = (): Spec => ({ labels: { app: 'forged', [KEYS.environment]: 'beta', [KEYS.managed]: 'true' }, annotations: { [KEYS.owner]: 'sandbox-b/runner-0', [KEYS.attestation]: `v1:${'A'.repeat(43)}` } });

      test("a Deployment carrying beta's stamps and a fake attestation is refused from alpha's runner", async () => {
        const s = suite();
        const answer = await s.api(alpha, 'POST', PATH.Deployment(NS), lab('Deployment', 'forged-a', undefined, forged()));
        assert.equal(answer.status, 403, answer.text);
        assert.match(answer.body.message, /\[stamp\.conflict\] metadata\.labels\["deed\.dev\/environment"\]: deed\.dev\/environment is admission-owned: given "beta", expected "alpha"/);
        assert.match(answer.body.message, /\[attestation\.forged\]/);
      });

      test('and from a principal of no environment', async () => {
        const s = suite();
        const answer = await s.api(intruder, 'POST', PATH.Deployment(NS), lab('Deployment', 'forged-n', undefined, forged()));
        assert.equal(answer.status, 403, answer.text);
        assert.match(answer.body.message, /\[stamp\.forged\] metadata\.labels\["deed\.dev\/environment"\]: system:serviceaccount:platform:lab-intruder acts for no environment/);
        assert.equal((await get(s, 'Deployment', NS, 'forged-n')).status, 404);
      });

      test("a pod template carrying the terminal mark is refused from alpha's runner: each pod would be born finished, and alpha's reaper would delete it as it is made", async () => {
        const s = suite();
        const body = lab('Deployment', 'born-done');
        body.spec.template.metadata.annotations = { [KEYS.terminal]: 'true' };
        const answer = await s.api(alpha, 'POST', PATH.Deployment(NS), body);
        assert.equal(answer.status, 403, answer.text);
        assert.match(answer.body.message, /\[stamp\.template\] spec\.template\.metadata\.annotations\["deed\.dev\/terminal"\]: deed\.dev\/terminal marks one finished object/);
        assert.equal((await get(s, 'Deployment', NS, 'born-done')).status, 404);
      });
    });

    describe("alpha's own workloads keep working", { skip: needsControllers }, () => {
      test('a Deployment: create, scale, rollout, rollout restart, rollback, delete; the garbage collector removes its ReplicaSets and pods', async () => {
        const s = suite();
        await create(s, alpha, 'Deployment', NS, lab('Deployment', 'own-deploy'));
        await eventually('a pod', async () => (await pods(s, NS, 'own-deploy')).length === 1, 60_000);
        const scale = await s.api(alpha, 'PATCH', `${PATH.Deployment(NS)}/own-deploy/scale`, { spec: { replicas: 2 } }, MERGE);
        assert.equal(scale.status, 200, scale.text);
        await eventually('two pods', async () => (await pods(s, NS, 'own-deploy')).length === 2, 60_000);
        const scaled = await s.kubectl(alpha, ['scale', 'deployment/own-deploy', '-n', NS, '--replicas=1']);
        assert.equal(scaled.code, 0, scaled.stderr);
        const rollout = await s.kubectl(alpha, ['set', 'image', 'deployment/own-deploy', '-n', NS, 'main=registry.example/lab:2']);
        assert.equal(rollout.code, 0, rollout.stderr);
        // The controller must have made the second revision before the restart changes the
        // template again: two quick changes are one sync, and one new ReplicaSet.
        await eventually('two revisions', async () => ((await s.api(s.admin, 'GET', `${PATH.ReplicaSet(NS)}?labelSelector=app%3Down-deploy`)).body.items ?? []).length === 2, 60_000);
        const restart = await s.kubectl(alpha, ['rollout', 'restart', 'deployment/own-deploy', '-n', NS]);
        assert.equal(restart.code, 0, restart.stderr);
        await eventually('three revisions', async () => ((await s.api(s.admin, 'GET', `${PATH.ReplicaSet(NS)}?labelSelector=app%3Down-deploy`)).body.items ?? []).length === 3, 60_000).catch(async (err: Error) => {
          // What the deployment controller was told, for the failure message.
          const d = (await get(s, 'Deployment', NS, 'own-deploy')).body as Spec;
          const rs = ((await s.api(s.admin, 'GET', `${PATH.ReplicaSet(NS)}?labelSelector=app%3Down-deploy`)).body.items ?? []).map((r: Spec) => [r.metadata.name, r.spec.replicas, r.status?.conditions]);
          throw new Error(`${err.message}; ${JSON.stringify({ generation: d.metadata?.generation, status: d.status, rs })}`);
        });
        const undo = await s.kubectl(alpha, ['rollout', 'undo', 'deployment/own-deploy', '-n', NS, '--to-revision=1']);
        assert.equal(undo.code, 0, undo.stderr);
        const back = (await get(s, 'Deployment', NS, 'own-deploy')).body as Spec;
        assert.equal(back.spec.template.spec.containers[0].image, 'registry.example/lab:1', 'rolled back');
        assert.equal(label(back as KubeObject, KEYS.environment), 'alpha', 'the stamps stay through the rollback');
        assert.ok(attested(s, back as KubeObject));
        const del = await s.api(alpha, 'DELETE', `${PATH.Deployment(NS)}/own-deploy`);
        assert.equal(del.status, 200, del.text);
        await eventually('the garbage collector removes its ReplicaSets', async () => ((await s.api(s.admin, 'GET', `${PATH.ReplicaSet(NS)}?labelSelector=app%3Down-deploy`)).body.items ?? []).length === 0, 60_000);
        await eventually('and its pods', async () => (await pods(s, NS, 'own-deploy')).length === 0, 60_000);
      });

      test('a StatefulSet: create, scale, template change, delete', async () => {
        const s = suite();
        await create(s, alpha, 'StatefulSet', NS, lab('StatefulSet', 'own-sts'));
        await eventually('a pod', async () => (await pods(s, NS, 'own-sts')).length === 1, 60_000);
        const scale = await s.api(alpha, 'PATCH', `${PATH.StatefulSet(NS)}/own-sts/scale`, { spec: { replicas: 0 } }, MERGE);
        assert.equal(scale.status, 200, scale.text);
        const image = await s.kubectl(alpha, ['set', 'image', 'statefulset/own-sts', '-n', NS, 'main=registry.example/lab:2']);
        assert.equal(image.code, 0, image.stderr);
        const del = await s.api(alpha, 'DELETE', `${PATH.StatefulSet(NS)}/own-sts`);
        assert.equal(del.status, 200, del.text);
        await eventually('its pods are gone', async () => (await pods(s, NS, 'own-sts')).length === 0, 60_000);
      });

      test('a DaemonSet, a ReplicationController and a CronJob: create, change, delete', async () => {
        const s = suite();
        for (const kind of ['DaemonSet', 'ReplicationController', 'CronJob'] as const) {
          const name = `own-${kind.toLowerCase()}`;
          await create(s, alpha, kind, NS, lab(kind, name));
          const change = kind === 'CronJob' ? { spec: { schedule: '0 0 2 1 *' } } : { spec: { template: { metadata: { annotations: { restarted: '1' } } } } };
          const patched = await s.api(alpha, 'PATCH', `${PATH[kind](NS)}/${name}`, change, MERGE);
          assert.equal(patched.status, 200, `${kind}: ${patched.text}`);
          if (kind === 'ReplicationController') {
            const scale = await s.api(alpha, 'PATCH', `${PATH[kind](NS)}/${name}/scale`, { spec: { replicas: 2 } }, MERGE);
            assert.equal(scale.status, 200, scale.text);
          }
          const del = await s.api(alpha, 'DELETE', `${PATH[kind](NS)}/${name}`);
          assert.equal(del.status, 200, `${kind}: ${del.text}`);
        }
        const ds = await create(s, s.janitorB, 'DaemonSet', NS, lab('DaemonSet', 'beta-ds'));
        assert.equal(label(ds, KEYS.environment), 'beta');
        const del = await s.api(alpha, 'DELETE', `${PATH.DaemonSet(NS)}/beta-ds`);
        assert.equal(del.status, 403, "and alpha may not delete beta's");
      });

      test("a Job: its pods run, alpha deletes it and the garbage collector removes them; beta may not", async () => {
        const s = suite();
        await create(s, alpha, 'Job', NS, lab('Job', 'own-job'));
        await eventually('a pod', async () => (await pods(s, NS, 'own-job')).length === 1, 60_000);
        const byBeta = await s.api(s.janitorB, 'DELETE', `${PATH.Job(NS)}/own-job`, { propagationPolicy: 'Background' });
        assert.equal(byBeta.status, 403, byBeta.text);
        const del = await s.api(alpha, 'DELETE', `${PATH.Job(NS)}/own-job`, { propagationPolicy: 'Background' });
        assert.equal(del.status, 200, del.text);
        await eventually('its pods are gone', async () => (await pods(s, NS, 'own-job')).length === 0, 60_000);
      });

      test("a Job cascades from its runner pod; a Deployment of the same runner outlives it", async () => {
        const s = suite();
        const runner = await s.newRunner('sandbox-a', 'runner-labs');
        const job = await create(s, runner.identity, 'Job', 'sandbox-a', lab('Job', 'per-run'));
        assert.deepEqual(job.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-labs', uid: runner.uid }]);
        const deploy = await create(s, runner.identity, 'Deployment', 'sandbox-a', lab('Deployment', 'long-lab'));
        assert.equal(deploy.metadata.ownerReferences, undefined);
        const gone = await s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-labs`, { gracePeriodSeconds: 0 });
        assert.equal(gone.status, 200, gone.text);
        await eventually('the garbage collector removes the Job', async () => (await get(s, 'Job', 'sandbox-a', 'per-run')).status === 404, 60_000);
        assert.equal((await get(s, 'Deployment', 'sandbox-a', 'long-lab')).status, 200, 'the lab stays');
        const del = await s.api(s.runnerA.identity, 'DELETE', `${PATH.Deployment('sandbox-a')}/long-lab`);
        assert.equal(del.status, 200, `alpha's other runner deletes it: ${del.text}`);
      });
    });
  });
}
