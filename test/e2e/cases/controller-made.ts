// What a workload controller creates is reviewed when it is created (issue 26), in a real
// API server with the workload controllers running under their own service accounts
// (--use-service-account-credentials). In a namespace alpha and beta share (shared-made,
// opted in, bound to no environment, each holding edit-level rights there), the template
// is judged when it is written, but the controllers act later, on state nobody judged then:
// - a pod made for alpha's Deployment is stamped as alpha's (its ReplicaSet's pod), so beta
//   may not delete it, exec into, attach to, port-forward to or evict it, and alpha may exec;
// - a template is judged once: beta's ReplicaSet names beta's own Secret, beta deletes it,
//   alpha creates one under that name, beta scales up: the pod is refused when it is made;
// - credentials added after the template was judged: beta's ServiceAccount lists alpha's
//   registry Secret in imagePullSecrets; the ServiceAccount plugin copies it into the pod
//   the replicaset controller makes, which is refused;
// - adoption by selector: beta's ReplicaSet selecting alpha's live pods by a shared label
//   does not adopt them, so its controller does not delete them; alpha's runner may not hand
//   its pod to beta's ReplicaSet by writing the reference itself.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { attested, claim, collectionPaths, eventually, KEYS, label, PATHS, sandboxPod, secret } from '../objects.js';
import type { KubeObject } from '../../../src/admission/types.js';
import type { Identity } from '../client.js';
import type { Suite } from '../suite.js';
import type { Tools } from './admission.js';
import { metric } from './scope.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects as the API server stores them
type Spec = Record<string, any>;

const NS = 'shared-made';
const PATH = collectionPaths(['Deployment', 'ReplicaSet', 'StatefulSet', 'ServiceAccount', 'Service', 'PersistentVolumeClaim'] as const);
const REVISIONS = (ns: string) => `/apis/apps/v1/namespaces/${ns}/controllerrevisions`;
const MERGE = 'application/merge-patch+json';

/** A lab pod's spec as every workload here templates it. */
const LAB_POD = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/lab:1' }] };

function replicaSet(name: string, replicas: number, labels: Record<string, string>, spec: Spec = {}): Spec {
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name }, spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { ...LAB_POD, ...spec } } } };
}

/** A StatefulSet of one lab pod; `spec` adds to (or overrides) its spec. */
function statefulSet(name: string, labels: Record<string, string>, spec: Spec = {}): Spec {
  return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name }, spec: { replicas: 1, serviceName: name, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: LAB_POD }, ...spec } };
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]));
}

export function controllerMadeCases(suite: () => Suite, tools: Tools): void {
  const needsControllers = tools.controllers ? false : 'needs kube-controller-manager in KUBEBUILDER_ASSETS (setup-envtest does not ship it)';

  describe('what a controller creates is judged when it is created, as its owner\'s environment\'s', { skip: needsControllers }, () => {
    let alpha: Identity;
    let beta: Identity;

    const ok = (what: string, a: { status: number; text: string }) => {
      if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
    };
    const pods = async (s: Suite, selector: string): Promise<Spec[]> => (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}?labelSelector=${encodeURIComponent(selector)}`)).body.items ?? [];
    /** The ReplicaFailure condition's message: the API server's answer to the controller's create. */
    const failure = async (s: Suite, name: string): Promise<string | undefined> => {
      const rs = (await s.api(s.admin, 'GET', `${PATH.ReplicaSet(NS)}/${name}`)).body as Spec;
      return (rs.status?.conditions ?? []).find((c: Spec) => c.type === 'ReplicaFailure')?.message;
    };

    before(async () => {
      const s = suite();
      alpha = s.runnerA.identity;
      beta = s.janitorB;
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      ok('role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        metadata: { name: 'e2e-made' },
        rules: [
          { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'replicasets/scale', 'replicasets/status', 'deployments/scale', 'statefulsets', 'statefulsets/scale', 'statefulsets/status', 'controllerrevisions'], verbs: ['*'] },
          { apiGroups: [''], resources: ['pods', 'secrets', 'serviceaccounts', 'persistentvolumeclaims', 'services'], verbs: ['*'] },
          // Status writes, which `edit` does not grant: an operator's or a custom role's.
          { apiGroups: [''], resources: ['services/status', 'persistentvolumeclaims/status'], verbs: ['*'] },
          // The ways into a running pod, as `edit` grants them.
          { apiGroups: [''], resources: ['pods/exec', 'pods/attach', 'pods/portforward', 'pods/eviction'], verbs: ['*'] },
        ],
      }));
      ok('rights', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'e2e-made' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-made' },
        subjects: [['sandbox-a', 'runner'], ['sandbox-b', 'janitor']].map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      for (const account of ['sandbox-a:runner', 'sandbox-b:janitor']) await s.awaitAccess(account, { namespace: NS, verb: 'create', group: 'apps', resource: 'replicasets' });
      await eventually(`Deed reviews ${NS}`, async () => (await s.api(alpha, 'POST', `${PATHS.Secret(NS)}?dryRun=All`, secret('probe'))).body?.metadata?.labels?.[KEYS.environment] === 'alpha');
    });

    // The refused ReplicaSets and StatefulSet would retry for the rest of the run, each retry
    // a review with its lookups, which other cases count: the namespace goes with its cases.
    after(async () => {
      const s = suite();
      await s.api(s.admin, 'DELETE', `/api/v1/namespaces/${NS}`);
    });

    test("a pod the replicaset controller makes for alpha's Deployment is stamped as alpha's, its ReplicaSet too; beta may not delete the pod", async () => {
      const s = suite();
      const created = await s.api(alpha, 'POST', PATH.Deployment(NS), {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'made-lab' },
        spec: { replicas: 1, selector: { matchLabels: { app: 'made-lab' } }, template: { metadata: { labels: { app: 'made-lab' } }, spec: LAB_POD } },
      });
      assert.equal(created.status, 201, created.text);
      await eventually('its pod', async () => (await pods(s, 'app=made-lab')).length === 1, 60_000).catch(async (err: Error) => {
        // What the controllers were told, for the failure message.
        const conditions = async (path: string) => ((await s.api(s.admin, 'GET', path)).body.items ?? []).map((o: Spec) => [o.metadata.name, o.status?.conditions]);
        throw new Error(`${err.message}; ${JSON.stringify([await conditions(PATH.Deployment(NS)), await conditions(PATH.ReplicaSet(NS))])}`);
      });
      const pod = (await pods(s, 'app=made-lab'))[0] as KubeObject & Spec;
      assert.equal(label(pod, KEYS.environment), 'alpha');
      assert.ok(attested(s, { ...pod, kind: 'Pod' }), "the pod's attestation verifies as a Pod of shared-made (a list's items carry no kind)");
      assert.deepEqual(pod.metadata.ownerReferences?.map((r) => r.kind), ['ReplicaSet'], 'its ReplicaSet stays its only owner');
      const rs = ((await s.api(s.admin, 'GET', `${PATH.ReplicaSet(NS)}?labelSelector=app%3Dmade-lab`)).body.items ?? [])[0] as KubeObject;
      assert.equal(label(rs, KEYS.environment), 'alpha', 'the deployment controller\'s ReplicaSet is alpha\'s');
      const del = await s.api(beta, 'DELETE', `${PATHS.Pod(NS)}/${pod.metadata.name}`);
      assert.equal(del.status, 403, del.text);
      assert.match(del.body.message, /\[guard\.cross-environment\]/);
      assert.equal((await pods(s, 'app=made-lab')).length, 1);
      // A scale-up's pod: its owner, long in the cache by now, is read from it by the mutating webhook, which judges the CREATE whole (one call per create), not from the API server.
      // The counter is the whole server's: a kind is read live while its watch reopens (every 60 to 120 s), and
      // another case's ReplicaSet being deleted is read live. A scale-up that saw a live read (once in six
      // full runs, in CI) is tried once more, and that one must read none.
      const reads = async (source: string) => metric(s, 'deed_lookups_total', { resource: 'replicasets', source });
      const scaleTo = async (replicas: number): Promise<number> => {
        const [cached, live] = [await reads('cache'), await reads('live')];
        const scale = await s.api(alpha, 'PATCH', `${PATH.Deployment(NS)}/made-lab/scale`, { spec: { replicas } }, MERGE);
        assert.equal(scale.status, 200, scale.text);
        await eventually(`pod ${replicas}`, async () => (await pods(s, 'app=made-lab')).length === replicas, 60_000);
        assert.ok((await reads('cache')) >= cached + 1, 'the owner of the new pod is read from the cache');
        return (await reads('live')) - live;
      };
      const first = await scaleTo(2);
      if (first > 0) assert.equal(await scaleTo(3), 0, `and never from the API server (the first scale-up read ${first} live too)`);
    });

    test("beta may not exec into, attach to, port-forward to or evict the pod the replicaset controller made for alpha; alpha's exec passes admission", async () => {
      const s = suite();
      const pod = ((await pods(s, 'app=made-lab'))[0] as KubeObject).metadata.name!;
      const at = `${PATHS.Pod(NS)}/${pod}`;
      for (const [door, path, body] of [
        ['exec', `${at}/exec?command=true&stdout=true&container=main`, undefined],
        ['attach', `${at}/attach?stdout=true&container=main`, undefined],
        ['portforward', `${at}/portforward?ports=8080`, undefined],
        ['eviction', `${at}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: NS } }],
      ] as const) {
        const answer = await s.api(beta, 'POST', path, body);
        assert.equal(answer.status, 403, `${door}: ${answer.text}`);
        assert.match(answer.body.message, /validate\.deed\.dev.*\[guard\.(connect|cross-environment)\] system:serviceaccount:sandbox-b:janitor acts for "beta"/, door);
      }
      assert.equal((await s.api(s.admin, 'GET', at)).status, 200, 'the pod is still there');
      // No kubelet runs here: a CONNECT that passes admission ends at the node step.
      const own = await s.api(alpha, 'POST', `${at}/exec?command=true&stdout=true&container=main`);
      assert.doesNotMatch(own.text, /validate\.deed\.dev/);
      assert.match(own.text, /does not have a host assigned|address not allowed/);
    });

    test("the claims alpha's StatefulSet's controller makes are alpha's (Deed stamped its claim templates); beta may not delete them", async () => {
      const s = suite();
      const labels = { app: 'made-sts' };
      const sts = await s.api(
        alpha,
        'POST',
        PATH.StatefulSet(NS),
        statefulSet('made-sts', labels, { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] }),
      );
      assert.equal(sts.status, 201, sts.text);
      const path = `${PATHS.PersistentVolumeClaim(NS)}/data-made-sts-0`;
      await eventually('its claim', async () => (await s.api(s.admin, 'GET', path)).status === 200, 60_000);
      const claim = (await s.api(s.admin, 'GET', path)).body as KubeObject;
      assert.equal(label(claim, KEYS.environment), 'alpha');
      assert.equal(label(claim, KEYS.ownerUid), undefined, 'no runner: the claims outlive the runner that created the StatefulSet');
      assert.ok(attested(s, claim), "the claim's attestation verifies as a claim of shared-made");
      const del = await s.api(beta, 'DELETE', path);
      assert.equal(del.status, 403, del.text);
      assert.match(del.body.message, /\[guard\.cross-environment\]/);
    });

    test("a template is judged once no more: beta's ReplicaSet scaled up after alpha took over the name of the Secret it mounts makes no pod", async () => {
      const s = suite();
      ok('beta secret', await s.api(beta, 'POST', PATHS.Secret(NS), secret('swap-creds')));
      const rs = await s.api(beta, 'POST', PATH.ReplicaSet(NS), replicaSet('swap', 0, { app: 'swap' }, { volumes: [{ name: 'creds', secret: { secretName: 'swap-creds' } }] }));
      assert.equal(rs.status, 201, `admitted: it names beta's own Secret (${rs.text})`);
      const gone = await s.api(beta, 'DELETE', `${PATHS.Secret(NS)}/swap-creds`);
      assert.equal(gone.status, 200, gone.text);
      const taken = await s.api(alpha, 'POST', PATHS.Secret(NS), secret('swap-creds'));
      assert.equal(taken.status, 201, taken.text);
      assert.equal(label(taken.body, KEYS.environment), 'alpha');
      const scale = await s.api(beta, 'PATCH', `${PATH.ReplicaSet(NS)}/swap/scale`, { spec: { replicas: 1 } }, MERGE);
      assert.equal(scale.status, 200, scale.text);
      await eventually('the controller is refused the pod', async () => /secret-ref\.cross-environment/.test((await failure(s, 'swap')) ?? ''), 60_000);
      assert.equal((await pods(s, 'app=swap')).length, 0, "no pod mounts alpha's Secret");
    });

    test("a pull secret the ServiceAccount plugin adds is judged: beta's ReplicaSet running as an account that lists alpha's registry Secret makes no pod", async () => {
      const s = suite();
      ok('alpha registry secret', await s.api(alpha, 'POST', PATHS.Secret(NS), secret('alpha-registry')));
      const sa = await s.api(beta, 'POST', PATH.ServiceAccount(NS), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'puller' }, imagePullSecrets: [{ name: 'alpha-registry' }] });
      assert.equal(sa.status, 201, sa.text);
      const rs = await s.api(beta, 'POST', PATH.ReplicaSet(NS), replicaSet('pull', 1, { app: 'pull' }, { serviceAccountName: 'puller' }));
      assert.equal(rs.status, 201, `the template names no Secret (${rs.text})`);
      await eventually('the controller is refused the pod', async () => /secret-ref\.cross-environment/.test((await failure(s, 'pull')) ?? ''), 60_000);
      assert.equal((await pods(s, 'app=pull')).length, 0);
      const direct = await s.api(beta, 'POST', PATHS.Pod(NS), sandboxPod('pull-direct', { spec: { serviceAccountName: 'puller' } }));
      assert.equal(direct.status, 403, 'the same pod created directly is refused too');
    });

    test("a template Deed never reviewed: beta's own ControllerRevision, named in its StatefulSet's status, mounting alpha's Secret and carrying alpha's copied stamps, makes no pod", async () => {
      const s = suite();
      ok('alpha secret', await s.api(alpha, 'POST', PATHS.Secret(NS), secret('alpha-db')));
      const alphaPod = await s.api(alpha, 'POST', PATHS.Pod(NS), sandboxPod('stamp-source'));
      assert.equal(alphaPod.status, 201, alphaPod.text);
      const copied = (alphaPod.body as KubeObject).metadata;
      const labels = { app: 'rev' };
      // Partition 2: pods 0 and 1 are made from the current revision, the one the status names;
      // pod 0 (never ready: no kubelet) keeps the controller from completing the rollout,
      // which would reset the status to its own revision.
      const sts = await s.api(beta, 'POST', PATH.StatefulSet(NS), statefulSet('rev', labels, { podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }));
      assert.equal(sts.status, 201, sts.text);
      const stolen = {
        metadata: { labels: { ...labels, ...copied.labels }, annotations: copied.annotations },
        spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/beta:evil' }], volumes: [{ name: 'db', secret: { secretName: 'alpha-db' } }] },
      };
      // Keys sorted, as the API server re-encodes them: a revision's data is immutable, and the
      // controller's adoption patch would otherwise change its bytes.
      const data = sortedKeys({ spec: { template: { $patch: 'replace', ...stolen } } });
      const revision = await s.api(beta, 'POST', REVISIONS(NS), { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'rev-evil', labels }, revision: 1, data });
      assert.equal(revision.status, 201, revision.text);
      await eventually('pod 0, and the status that counts it', async () => ((await s.api(s.admin, 'GET', `${PATH.StatefulSet(NS)}/rev`)).body as Spec).status?.replicas === 1, 60_000);
      const status = await s.api(beta, 'PATCH', `${PATH.StatefulSet(NS)}/rev/status`, { status: { currentRevision: 'rev-evil' } }, MERGE);
      assert.equal(status.status, 200, status.text);
      const scale = await s.api(beta, 'PATCH', `${PATH.StatefulSet(NS)}/rev/scale`, { spec: { replicas: 2 } }, MERGE);
      assert.equal(scale.status, 200, scale.text);
      // The controller tries pod rev-0 again and again; each is refused at its creation.
      await eventually('the controller is refused the pod', async () => {
        const events = (await s.api(s.admin, 'GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3Drev`)).body.items ?? [];
        return events.some((e: Spec) => e.reason === 'FailedCreate' && /secret-ref\.cross-environment/.test(e.message));
      }, 60_000).catch(async (err: Error) => {
        const events = (await s.api(s.admin, 'GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3Drev`)).body.items ?? [];
        const st = ((await s.api(s.admin, 'GET', `${PATH.StatefulSet(NS)}/rev`)).body as Spec).status;
        const revs = ((await s.api(s.admin, 'GET', REVISIONS(NS))).body.items ?? []).map((r: Spec) => [r.metadata.name, r.metadata.ownerReferences]);
        const pod0 = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/rev-1`)).body as Spec;
        throw new Error(`${err.message}; ${JSON.stringify({ events: events.map((e: Spec) => [e.reason, e.message]), st, revs, pod0: pod0.spec ? [pod0.metadata.labels, pod0.spec.containers[0].image] : pod0.code })}`);
      });
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/rev-1`)).status, 404, "no pod runs beta's image with alpha's Secret");
      const first = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/rev-0`)).body as KubeObject;
      assert.equal(label(first, KEYS.environment), 'beta', "the pod made from beta's own template is beta's");
    });

    test("alpha's StatefulSet deleted with its dependents orphaned and created again (how volumeClaimTemplates are changed) adopts its ControllerRevision and its pod; alpha may hand its Secret to it, not to beta's; beta may not hand it a ControllerRevision", async () => {
      const s = suite();
      const labels = { app: 'orphaned' };
      const revisions = async (): Promise<Spec[]> => (await s.api(s.admin, 'GET', `${REVISIONS(NS)}?labelSelector=app%3Dorphaned`)).body.items ?? [];
      const controllerUid = (o: Spec): string | undefined => (o.metadata.ownerReferences ?? []).find((r: Spec) => r.controller === true)?.uid;
      const first = await s.api(alpha, 'POST', PATH.StatefulSet(NS), statefulSet('orphaned', labels));
      assert.equal(first.status, 201, first.text);
      const firstUid = (first.body as Spec).metadata.uid as string;
      await eventually('its ControllerRevision and its pod', async () => (await revisions()).some((r) => controllerUid(r) === firstUid) && (await pods(s, 'app=orphaned')).length === 1, 60_000);
      const gone = await s.api(alpha, 'DELETE', `${PATH.StatefulSet(NS)}/orphaned`, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Orphan' });
      assert.ok(gone.status === 200 || gone.status === 202, gone.text);
      // The garbage collector takes the owner reference off each dependent, then the StatefulSet goes.
      await eventually('the StatefulSet gone, its revision and pod orphaned', async () => {
        if ((await s.api(s.admin, 'GET', `${PATH.StatefulSet(NS)}/orphaned`)).status !== 404) return false;
        return (await revisions()).every((r) => controllerUid(r) === undefined) && (await pods(s, 'app=orphaned')).every((p) => controllerUid(p) === undefined);
      }, 60_000);
      const again = await s.api(alpha, 'POST', PATH.StatefulSet(NS), statefulSet('orphaned', labels));
      assert.equal(again.status, 201, again.text);
      const againUid = (again.body as Spec).metadata.uid as string;
      // The controller adopts the orphaned revision before anything else in its sync: a refused
      // adoption would leave the StatefulSet unreconciled for good.
      await eventually('the new StatefulSet adopts the revision and the pod', async () => {
        const revs = await revisions();
        const made = await pods(s, 'app=orphaned');
        return revs.length > 0 && revs.every((r) => controllerUid(r) === againUid) && made.length === 1 && controllerUid(made[0]!) === againUid;
      }, 60_000).catch(async (err: Error) => {
        const events = (await s.api(s.admin, 'GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3Dorphaned`)).body.items ?? [];
        throw new Error(`${err.message}; ${JSON.stringify(events.map((e: Spec) => [e.reason, e.message]))}`);
      });
      await eventually('the StatefulSet reconciled', async () => ((await s.api(s.admin, 'GET', `${PATH.StatefulSet(NS)}/orphaned`)).body as Spec).status?.observedGeneration === 1, 60_000);
      // A client handing its own Secret to a controller is judged on whose that controller is,
      // read like any other (the read plan is the door's: an UPDATE of a Secret was once
      // planned no read and refused as "cannot tell whose").
      ok('settings', await s.api(alpha, 'POST', PATHS.Secret(NS), secret('orphaned-settings')));
      const others = await s.api(beta, 'POST', PATH.StatefulSet(NS), statefulSet('beta-owner', { app: 'beta-owner' }, { replicas: 0 }));
      assert.equal(others.status, 201, others.text);
      const handTo = (name: string, uid: string) => s.api(alpha, 'PATCH', `${PATHS.Secret(NS)}/orphaned-settings`, { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name, uid, controller: true }] } }, MERGE);
      const toBeta = await handTo('beta-owner', (others.body as Spec).metadata.uid as string);
      assert.equal(toBeta.status, 403, toBeta.text);
      assert.match(toBeta.body.message, /\[guard\.adoption\] metadata\.ownerReferences: Secret shared-made\/orphaned-settings is not of the environment of StatefulSet shared-made\/beta-owner/);
      const toOwn = await handTo('orphaned', againUid);
      assert.equal(toOwn.status, 200, toOwn.text);
      // Nor may beta hand its own ControllerRevision (a kind of the default row) to alpha's
      // StatefulSet, whose controller would take it into its history: refused at CREATE, and on UPDATE.
      const planted = await s.api(beta, 'POST', REVISIONS(NS), { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'planted' }, revision: 9, data: {} });
      assert.equal(planted.status, 201, planted.text);
      const handOver = await s.api(beta, 'PATCH', `${REVISIONS(NS)}/planted`, { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'orphaned', uid: againUid, controller: true }] } }, MERGE);
      assert.equal(handOver.status, 403, handOver.text);
      assert.match(handOver.body.message, /\[guard\.adoption\] metadata\.ownerReferences: ControllerRevision shared-made\/planted is not of the environment of StatefulSet shared-made\/orphaned/);
      // The same through server-side apply.
      const applied = await s.api(beta, 'PATCH', `${REVISIONS(NS)}/planted?fieldManager=beta&force=true`, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'planted', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'orphaned', uid: againUid, controller: true }] }, revision: 9 }, 'application/apply-patch+yaml');
      assert.equal(applied.status, 403, applied.text);
      assert.match(applied.body.message, /\[guard\.adoption\]/);
    });

    test("beta may not hand its Service, claim or ReplicaSet to alpha's StatefulSet through their status subresource, whose strategy keeps owner references; to its own it may", async () => {
      const s = suite();
      const owner = async (who: Identity, name: string) => {
        const made = await s.api(who, 'POST', PATH.StatefulSet(NS), statefulSet(name, { app: name }, { replicas: 0 }));
        assert.equal(made.status, 201, made.text);
        return (made.body as Spec).metadata.uid as string;
      };
      const [alphaUid, betaUid] = [await owner(alpha, 'status-alpha'), await owner(beta, 'status-beta')];
      const objects = [
        ['Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'status-svc' }, spec: { ports: [{ port: 80 }] } }],
        ['PersistentVolumeClaim', claim('status-claim')],
        ['ReplicaSet', replicaSet('status-rs', 0, { app: 'status-rs' })],
      ] as const;
      for (const [kind, body] of objects) {
        const created = await s.api(beta, 'POST', PATH[kind](NS), body);
        assert.equal(created.status, 201, `${kind}: ${created.text}`);
        const handTo = (name: string, uid: string) =>
          s.api(beta, 'PATCH', `${PATH[kind](NS)}/${body.metadata.name}/status`, { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name, uid, controller: true }] } }, MERGE);
        const toAlpha = await handTo('status-alpha', alphaUid);
        assert.equal(toAlpha.status, 403, `${kind}: ${toAlpha.text}`);
        assert.match(toAlpha.body.message, new RegExp(`\\[guard\\.adoption\\] metadata\\.ownerReferences: ${kind} shared-made/${body.metadata.name} is not of the environment of StatefulSet shared-made/status-alpha`));
        // The same through server-side apply of the status.
        const applied = await s.api(beta, 'PATCH', `${PATH[kind](NS)}/${body.metadata.name}/status?fieldManager=beta&force=true`, { apiVersion: body.apiVersion, kind: body.kind, metadata: { name: body.metadata.name, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'status-alpha', uid: alphaUid, controller: true }] } }, 'application/apply-patch+yaml');
        assert.equal(applied.status, 403, `${kind}, applied: ${applied.text}`);
        assert.match(applied.body.message, /\[guard\.adoption\]/);
        const toOwn = await handTo('status-beta', betaUid);
        assert.equal(toOwn.status, 200, `${kind}: ${toOwn.text}`);
        // The API server stored the reference: this door is real, not one its strategy closes.
        const stored = (await s.api(s.admin, 'GET', `${PATH[kind](NS)}/${body.metadata.name}`)).body as Spec;
        assert.deepEqual(stored.metadata.ownerReferences?.map((r: Spec) => r.uid), [betaUid], kind);
      }
    });

    test("beta's ReplicaSet selecting alpha's live pods by a shared label neither adopts nor deletes them; alpha's runner may not hand its pod over by writing the reference", async () => {
      const s = suite();
      const pod = { ...sandboxPod('adoptable'), metadata: { name: 'adoptable', labels: { app: 'adoptable' } } };
      const created = await s.api(alpha, 'POST', PATHS.Pod(NS), pod);
      assert.equal(created.status, 201, created.text);
      const sweep = await s.api(beta, 'POST', PATH.ReplicaSet(NS), replicaSet('sweep', 0, { app: 'adoptable' }));
      assert.equal(sweep.status, 201, sweep.text);
      // The replicaset controller syncs a new ReplicaSet at once, adopting what its selector
      // matches; a refused adoption fails the sync, so there is no status to wait for.
      await new Promise((r) => setTimeout(r, 5000));
      const after = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/adoptable`)).body as Spec;
      assert.equal(after.metadata?.name, 'adoptable', 'the pod is not deleted');
      assert.equal((after.metadata.ownerReferences ?? []).filter((r: Spec) => r.controller === true).length, 0, 'nor adopted');
      const uid = (sweep.body as Spec).metadata.uid as string;
      const handOver = await s.api(alpha, 'PATCH', `${PATHS.Pod(NS)}/adoptable`, { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'sweep', uid, controller: true, blockOwnerDeletion: true }] } }, MERGE);
      assert.equal(handOver.status, 403, handOver.text);
      assert.match(handOver.body.message, /\[guard\.adoption\] metadata\.ownerReferences: Pod shared-made\/adoptable is not of the environment of ReplicaSet shared-made\/sweep/);
      assert.doesNotMatch(handOver.body.message, /beta/, 'the refusal names no other environment');
    });
  });

  // A StatefulSet's claim `<template>-<pod>` is made by its controller only when no claim of
  // that name exists: one made first under the name is mounted in its place (claim.statefulset-template).
  describe("a StatefulSet's pod mounts under its claim templates' names only its environment's claims", { skip: needsControllers }, () => {
    const SQ = 'shared-squat';
    let alpha: Identity;
    let beta: Identity;
    let stranger: Identity; // an app's service account in the shared namespace: acts for no environment
    const ok = (what: string, a: { status: number; text: string }) => {
      if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
    };
    const template = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
    const withData = (name: string) => statefulSet(name, { app: name }, { template: { metadata: { labels: { app: name } }, spec: { ...LAB_POD, containers: [{ ...LAB_POD.containers[0], volumeMounts: [{ name: 'data', mountPath: '/data' }] }] } }, volumeClaimTemplates: template });
    const get = async (s: Suite, path: string) => s.api(s.admin, 'GET', path);
    /** The statefulset controller's FailedCreate events for `set`: the API server's answer to its pod CREATE. */
    const failures = async (s: Suite, set: string): Promise<string> =>
      (((await get(s, `/api/v1/namespaces/${SQ}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${set}`)}`)).body.items ?? []) as Spec[]).map((e) => `${e.reason}: ${e.message}`).join('\n');

    before(async () => {
      const s = suite();
      alpha = s.runnerA.identity;
      beta = s.janitorB;
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SQ, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      stranger = await s.newIdentity(SQ, 'app');
      ok('role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        metadata: { name: 'e2e-squat' },
        rules: [
          { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['*'] },
          { apiGroups: [''], resources: ['pods', 'persistentvolumeclaims'], verbs: ['*'] },
        ],
      }));
      ok('rights', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${SQ}/rolebindings`, {
        metadata: { name: 'e2e-squat' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-squat' },
        subjects: [['sandbox-a', 'runner'], ['sandbox-b', 'janitor'], [SQ, 'app']].map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      for (const account of ['sandbox-a:runner', 'sandbox-b:janitor', `${SQ}:app`]) await s.awaitAccess(account, { namespace: SQ, verb: 'create', group: 'apps', resource: 'statefulsets' });
      await eventually(`Deed reviews ${SQ}`, async () => (await s.api(alpha, 'POST', `${PATHS.PersistentVolumeClaim(SQ)}?dryRun=All`, claim('probe'))).body?.metadata?.labels?.[KEYS.environment] === 'alpha');
    });

    // The refused StatefulSets would retry for the rest of the run.
    after(async () => {
      const s = suite();
      await s.api(s.admin, 'DELETE', `/api/v1/namespaces/${SQ}`);
    });

    test("a stranger's unstamped claim under the name of alpha's StatefulSet's claim is not mounted by its pod; once the platform deletes it, the controller makes alpha's claim and pod", async () => {
      const s = suite();
      const squat = await s.api(stranger, 'POST', PATHS.PersistentVolumeClaim(SQ), claim('data-db-0'));
      assert.equal(squat.status, 201, squat.text);
      assert.equal(label(squat.body as KubeObject, KEYS.environment), undefined, 'unstamped: a principal of no environment made it');
      ok("alpha's StatefulSet", await s.api(alpha, 'POST', PATH.StatefulSet(SQ), withData('db')));
      await eventually('the controller is refused pod db-0', async () => /\[claim\.statefulset-template\].*claim data-db-0 already exists and carries no stamps.*must delete claim data-db-0/.test(await failures(s, 'db')), 60_000);
      assert.equal((await get(s, `${PATHS.Pod(SQ)}/db-0`)).status, 404, "no pod of alpha's mounts the stranger's claim");
      // alpha may not delete it (an unstamped claim is the platform's, guard.shared-input): the platform does.
      const byAlpha = await s.api(alpha, 'DELETE', `${PATHS.PersistentVolumeClaim(SQ)}/data-db-0`);
      assert.equal(byAlpha.status, 403, byAlpha.text);
      ok('the platform deletes the squat', await s.api(s.admin, 'DELETE', `${PATHS.PersistentVolumeClaim(SQ)}/data-db-0`));
      // Gone, or already made again by the controller's own retry (then alpha's).
      await eventually('the squat is gone', async () => {
        const now = await get(s, `${PATHS.PersistentVolumeClaim(SQ)}/data-db-0`);
        return now.status === 404 || label(now.body as KubeObject, KEYS.environment) === 'alpha';
      }, 60_000);
      // A write to the StatefulSet wakes its controller now rather than after its backoff.
      ok('nudge', await s.api(alpha, 'PATCH', `${PATH.StatefulSet(SQ)}/db`, { metadata: { annotations: { 'example.com/nudge': '1' } } }, MERGE));
      await eventually('pod db-0', async () => (await get(s, `${PATHS.Pod(SQ)}/db-0`)).status === 200, 60_000);
      const pod = (await get(s, `${PATHS.Pod(SQ)}/db-0`)).body as KubeObject;
      const made = (await get(s, `${PATHS.PersistentVolumeClaim(SQ)}/data-db-0`)).body as KubeObject;
      assert.equal(label(pod, KEYS.environment), 'alpha');
      assert.equal(label(made, KEYS.environment), 'alpha', "the claim the pod mounts is the controller's, from alpha's template");
      assert.ok(attested(s, made));
    });

    test("beta's claim under the name of alpha's StatefulSet's claim is refused to its pod by the same rule, naming no other environment", async () => {
      const s = suite();
      const squat = await s.api(beta, 'POST', PATHS.PersistentVolumeClaim(SQ), claim('data-cache-0'));
      assert.equal(squat.status, 201, squat.text);
      assert.equal(label(squat.body as KubeObject, KEYS.environment), 'beta');
      ok("alpha's StatefulSet", await s.api(alpha, 'POST', PATH.StatefulSet(SQ), withData('cache')));
      let seen = '';
      await eventually('the controller is refused pod cache-0', async () => /\[claim\.statefulset-template\].*claim data-cache-0 already exists and belongs to another environment/.test((seen = await failures(s, 'cache'))), 60_000);
      assert.doesNotMatch(seen, /beta/, 'the refusal, in alpha\'s events, names no other environment');
      assert.equal((await get(s, `${PATHS.Pod(SQ)}/cache-0`)).status, 404);
    });

    // The retention policy (whenDeleted: Delete) has the controller write its StatefulSet as an
    // owner onto whatever claim stands under a template's name, alpha's too, even when the pod is
    // refused; the garbage collector then deletes the claim with the StatefulSet (reviewer-104 F1).
    const retained = (name: string, replicas: number) => ({ ...withData(name), spec: { ...withData(name).spec, replicas, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } } });

    test("beta's StatefulSet that deletes its claims with it, named over alpha's claim: the statefulset controller's owner reference onto it is refused (guard.adoption), and deleting the StatefulSet leaves alpha's claim", async () => {
      const s = suite();
      const path = `${PATHS.PersistentVolumeClaim(SQ)}/data-grab-0`;
      const made = await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim(SQ), claim('data-grab-0'));
      assert.equal(made.status, 201, made.text);
      const set = await s.api(beta, 'POST', PATH.StatefulSet(SQ), retained('grab', 1));
      assert.equal(set.status, 201, set.text);
      await eventually("the controller's claim update is refused", async () => /could not update claim data-grab-0[\s\S]*guard\.adoption/.test(await failures(s, 'grab')) || /guard\.adoption/.test(await failures(s, 'data-grab-0')), 60_000);
      const stored = (await get(s, path)).body as Spec;
      assert.equal((stored.metadata.ownerReferences ?? []).some((r: Spec) => r.uid === (set.body as KubeObject).metadata.uid), false, "beta's StatefulSet is no owner of alpha's claim");
      ok("beta deletes its StatefulSet", await s.api(beta, 'DELETE', `${PATH.StatefulSet(SQ)}/grab`));
      await new Promise((r) => setTimeout(r, 3000));
      const still = await get(s, path);
      assert.equal(still.status, 200, 'alpha\'s claim stands');
      assert.equal((still.body as Spec).metadata.deletionTimestamp, undefined);
    });

    test("the statefulset controller of Kubernetes 1.28 to 1.30, which writes its StatefulSet as a plain owner: onto alpha's claim for beta's StatefulSet refused (guard.adoption), onto alpha's claim for alpha's passes", async () => {
      const s = suite();
      const token = await s.api(s.admin, 'POST', '/api/v1/namespaces/kube-system/serviceaccounts/statefulset-controller/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } });
      assert.equal(token.status, 201, token.text);
      const controller: Identity = { name: 'system:serviceaccount:kube-system:statefulset-controller', token: token.body.status.token };
      // That controller's setOwnerRef: apiVersion, kind, name and uid; neither controller nor blockOwnerDeletion. Replicas 0: this
      // (1.36) controller leaves the claims alone, and the write below is the older one's.
      const ownedBy = async (claimName: string, setName: string, writer: Identity) => {
        const set = (await get(s, `${PATH.StatefulSet(SQ)}/${setName}`)).body as KubeObject;
        const stored = (await get(s, `${PATHS.PersistentVolumeClaim(SQ)}/${claimName}`)).body as Spec;
        stored.metadata.ownerReferences = [...(stored.metadata.ownerReferences ?? []), { apiVersion: 'apps/v1', kind: 'StatefulSet', name: setName, uid: set.metadata.uid }];
        return s.api(writer, 'PUT', `${PATHS.PersistentVolumeClaim(SQ)}/${claimName}`, stored);
      };
      ok("alpha's claim", await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim(SQ), claim('data-grab2-0')));
      ok("beta's StatefulSet", await s.api(beta, 'POST', PATH.StatefulSet(SQ), retained('grab2', 0)));
      const taken = await ownedBy('data-grab2-0', 'grab2', controller);
      assert.equal(taken.status, 403, taken.text);
      assert.match(taken.body.message, /\[guard\.adoption\] metadata\.ownerReferences\[0\]: PersistentVolumeClaim shared-squat\/data-grab2-0 is not of the environment of StatefulSet shared-squat\/grab2; it may not become an owner of it \(the garbage collector would delete it once its owners are gone\)/);
      // Alpha's own StatefulSet over alpha's claim: the retention policy works as it did.
      ok("alpha's claim for its own set", await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim(SQ), claim('data-keep-0')));
      ok("alpha's StatefulSet", await s.api(alpha, 'POST', PATH.StatefulSet(SQ), retained('keep', 0)));
      const own = await ownedBy('data-keep-0', 'keep', controller);
      assert.equal(own.status, 200, own.text);
    });

    test("alpha's StatefulSet that deletes its claims as it scales down: the controller's owner reference to the condemned pod passes, and the claim goes with the pod", async () => {
      const s = suite();
      const shrink = { ...retained('shrink', 1), spec: { ...retained('shrink', 1).spec, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' } } };
      ok("alpha's StatefulSet", await s.api(alpha, 'POST', PATH.StatefulSet(SQ), shrink));
      await eventually('pod shrink-0 and its claim', async () => (await get(s, `${PATHS.Pod(SQ)}/shrink-0`)).status === 200 && (await get(s, `${PATHS.PersistentVolumeClaim(SQ)}/data-shrink-0`)).status === 200, 60_000);
      ok('scale to 0', await s.api(alpha, 'PATCH', `${PATH.StatefulSet(SQ)}/shrink`, { spec: { replicas: 0 } }, MERGE));
      await eventually('the claim is owned by the condemned pod, or gone with it', async () => {
        const now = await get(s, `${PATHS.PersistentVolumeClaim(SQ)}/data-shrink-0`);
        return now.status === 404 || ((now.body as Spec).metadata.ownerReferences ?? []).some((r: Spec) => r.kind === 'Pod' && r.name === 'shrink-0');
      }, 60_000);
      assert.doesNotMatch(await failures(s, 'shrink'), /guard\.adoption/);
    });

    test('a StatefulSet of no environment (a Helm chart\'s) still gets its pod, on a claim made before it, and one of alpha its pod and claims', async () => {
      const s = suite();
      ok('a pre-made claim', await s.api(stranger, 'POST', PATHS.PersistentVolumeClaim(SQ), claim('data-web-0')));
      ok('the StatefulSet of no environment', await s.api(stranger, 'POST', PATH.StatefulSet(SQ), withData('web')));
      ok("alpha's ordinary StatefulSet", await s.api(alpha, 'POST', PATH.StatefulSet(SQ), withData('plain')));
      await eventually('pods web-0 and plain-0', async () => (await get(s, `${PATHS.Pod(SQ)}/web-0`)).status === 200 && (await get(s, `${PATHS.Pod(SQ)}/plain-0`)).status === 200, 60_000);
      assert.equal(label((await get(s, `${PATHS.Pod(SQ)}/web-0`)).body as KubeObject, KEYS.environment), undefined);
      assert.equal(label((await get(s, `${PATHS.Pod(SQ)}/plain-0`)).body as KubeObject, KEYS.environment), 'alpha');
      assert.equal(label((await get(s, `${PATHS.PersistentVolumeClaim(SQ)}/data-plain-0`)).body as KubeObject, KEYS.environment), 'alpha');
    });
  });
}
