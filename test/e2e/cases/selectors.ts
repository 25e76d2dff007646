// Every pod selector is scoped (docs/security-model.md, "Selectors"), in a real API server
// with the workload and disruption controllers running, in a namespace alpha and beta share
// (shared-selectors: opted in, bound to no environment, beta holding edit-level rights).
// As the incident would be tried: beta's PodDisruptionBudget aimed at alpha's pods, which
// would stall alpha's evictions (a node drain); beta's ReplicaSet of zero replicas selecting
// every pod with an `app` label, which would adopt alpha's live sandbox pods and delete
// them; beta's Service, which would route traffic to alpha's pods. Each is refused, or
// scoped to beta's pods. A principal of no environment's selectors are marked to select pods
// of no environment only; alpha's own selectors keep working.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { KubeObject, OwnerReference } from '../../../src/admission/types.js';
import { collectionPaths, eventually, KEYS, label, PATHS, sandboxPod } from '../objects.js';
import type { Identity } from '../client.js';
import type { Suite } from '../suite.js';
import type { Tools } from './admission.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects as the API server stores them
type Spec = Record<string, any>;

const NS = 'shared-selectors';
const PATH = { ...collectionPaths(['Deployment', 'ReplicaSet', 'ReplicationController', 'Job', 'Service', 'PodDisruptionBudget'] as const), Pod: PATHS.Pod };
const MERGE = 'application/merge-patch+json';
const ENV = KEYS.environment;
const MARK = KEYS.noEnvironment;
const RUNNER = KEYS.runner;
/** What a tenant's NetworkPolicy and PodDisruptionBudget of no environment get beside the mark: no runner pod. */
const NO_RUNNERS = { key: RUNNER, operator: 'DoesNotExist' };
const POD = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/lab:1' }] };

// minAvailable as a count: the disruption controller then needs no controller of the pods (pods made directly have none).
function pdb(name: string, selector: unknown, budget: Spec = { minAvailable: 1 }): Spec {
  return { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { selector, ...budget } };
}

function service(name: string, selector: Record<string, string> | undefined): Spec {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ...(selector ? { selector } : {}), ports: [{ port: 80 }] } };
}

function deployment(name: string, selector: unknown, replicas = 1, labels: Record<string, string> = { app: name }): Spec {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas, selector, template: { metadata: { labels }, spec: POD } } };
}

function eviction(name: string): Spec {
  return { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } };
}

export function selectorCases(suite: () => Suite, tools: Tools): void {
  const needsControllers = tools.controllers ? false : 'needs kube-controller-manager in KUBEBUILDER_ASSETS (setup-envtest does not ship it)';

  describe('every pod selector is scoped to its writer\'s environment', { skip: needsControllers }, () => {
    let alpha: Identity;
    let beta: Identity;
    /** platform:selector-intruder: acts for no environment, with beta's rights here. */
    let intruder: Identity;

    const ok = (what: string, a: { status: number; text: string }) => {
      if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
    };
    const create = async (s: Suite, who: Identity, path: string, body: Spec): Promise<Spec> => {
      const answer = await s.api(who, 'POST', path, body);
      assert.equal(answer.status, 201, answer.text);
      return answer.body as Spec;
    };
    const refused = async (s: Suite, who: Identity, path: string, body: Spec, message: RegExp): Promise<void> => {
      const answer = await s.api(who, 'POST', path, body);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, message);
      assert.equal((await s.api(s.admin, 'GET', `${path}/${body.metadata.name}`)).status, 404, 'nothing is stored');
    };
    const alphaPod = async (s: Suite, name: string, app: string, who: Identity = alpha): Promise<Spec> => {
      const pod = sandboxPod(name) as Spec;
      pod.metadata.labels = { app };
      return create(s, who, PATHS.Pod(NS), pod);
    };
    const getPod = async (s: Suite, name: string) => s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/${name}`);
    /** What a kubelet would report (there is none here): an eviction ignores budgets for a Pending pod. */
    const running = async (s: Suite, name: string): Promise<void> => {
      const status = { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } };
      ok(`${name} running`, await s.api(s.admin, 'PATCH', `${PATHS.Pod(NS)}/${name}/status`, status, MERGE));
    };

    before(async () => {
      const s = suite();
      alpha = s.runnerA.identity;
      beta = s.janitorB;
      intruder = await s.newIdentity('platform', 'selector-intruder');
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      ok('selector role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        metadata: { name: 'e2e-selectors' },
        rules: [
          { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'deployments/scale', 'replicasets/scale'], verbs: ['*'] },
          { apiGroups: ['batch'], resources: ['jobs'], verbs: ['*'] },
          { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['*'] },
          { apiGroups: [''], resources: ['pods', 'pods/eviction', 'services', 'replicationcontrollers'], verbs: ['*'] },
        ],
      }));
      const subjects: Array<[string, string]> = [['sandbox-a', 'runner'], ['sandbox-b', 'janitor'], ['platform', 'selector-intruder']];
      ok('selector rights', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'e2e-selectors' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-selectors' },
        subjects: subjects.map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      for (const [namespace, name] of subjects) {
        const user = `system:serviceaccount:${namespace}:${name}`;
        const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['system:serviceaccounts', 'system:authenticated'], resourceAttributes: { namespace: NS, verb: 'create', group: 'policy', resource: 'poddisruptionbudgets' } } };
        await eventually(`RBAC lets ${user} create PodDisruptionBudgets in ${NS}`, async () => (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true);
      }
      await eventually(`Deed reviews ${NS}`, async () => (await s.api(beta, 'POST', `${PATH.PodDisruptionBudget(NS)}?dryRun=All`, pdb('probe', { matchLabels: { app: 'x' } }))).body?.spec?.selector?.matchLabels?.[ENV] === 'beta');
    });

    test("beta's PodDisruptionBudget selecting alpha's pods is refused; its own cannot match them, and alpha's eviction of its pod answers 201, not 429", async () => {
      const s = suite();
      await alphaPod(s, 'alpha-drained', 'drained');
      await running(s, 'alpha-drained');
      await refused(s, beta, PATH.PodDisruptionBudget(NS), pdb('aimed', { matchLabels: { [ENV]: 'alpha' } }), /\[selector\.scope\] spec\.selector\.matchLabels\["deed\.dev\/environment"\]: selects pods of environment "alpha"; environment "beta" selects only its own pods/);
      // The same budget without the label: stored scoped to beta's pods.
      const own = await create(s, beta, PATH.PodDisruptionBudget(NS), pdb('beta-budget', { matchLabels: { app: 'drained' } }));
      assert.deepEqual(own.spec.selector, { matchLabels: { app: 'drained', [ENV]: 'beta' } });
      // Beta's own pod of the same app is held by it: the disruption controller and the budget work here.
      await alphaPod(s, 'beta-drained', 'drained', beta);
      await running(s, 'beta-drained');
      await eventually('the disruption controller counts beta\'s pod, and only it', async () => {
        const b = (await s.api(s.admin, 'GET', `${PATH.PodDisruptionBudget(NS)}/beta-budget`)).body;
        return b.status?.observedGeneration === b.metadata.generation && b.status?.expectedPods === 1 && b.status?.currentHealthy === 1;
      }, 60_000);
      const held = await s.api(beta, 'POST', `${PATHS.Pod(NS)}/beta-drained/eviction`, eviction('beta-drained'));
      assert.equal(held.status, 429, `beta's own pod is held by beta's budget: ${held.text}`);
      const evicted = await s.api(alpha, 'POST', `${PATHS.Pod(NS)}/alpha-drained/eviction`, eviction('alpha-drained'));
      assert.equal(evicted.status, 201, evicted.text);
      await eventually("alpha's pod is gone", async () => (await getPod(s, 'alpha-drained')).status === 404);
      // Nor can beta widen its budget to alpha's pods afterwards: a write that drops its
      // environment gets it back (as a server-side apply would drop it); one that names another is refused.
      const widened = await s.api(beta, 'PATCH', `${PATH.PodDisruptionBudget(NS)}/beta-budget`, { spec: { selector: { matchLabels: { [ENV]: null } } } }, MERGE);
      assert.equal(widened.status, 200, widened.text);
      assert.equal(widened.body.spec.selector.matchLabels[ENV], 'beta', 'the environment is kept');
      const aimed = await s.api(beta, 'PATCH', `${PATH.PodDisruptionBudget(NS)}/beta-budget`, { spec: { selector: { matchLabels: { [ENV]: 'alpha' } } } }, MERGE);
      assert.equal(aimed.status, 403, aimed.text);
      assert.match(aimed.body.message, /\[selector\.scope\] spec\.selector\.matchLabels\["deed\.dev\/environment"\]: a PodDisruptionBudget of environment "beta" selects only its pods: deed\.dev\/environment must be "beta" \(it is frozen after CREATE\)/);
    });

    test("beta's ReplicaSet of zero replicas selecting every pod with an app label adopts none of alpha's live sandbox pods, and they stay", async () => {
      const s = suite();
      const live = [await alphaPod(s, 'alpha-live-1', 'lab-1'), await alphaPod(s, 'alpha-live-2', 'lab-2')];
      const owners = (p: Spec): OwnerReference[] | undefined => p.metadata.ownerReferences;
      const before = live.map(owners);
      const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'adopter' }, spec: { replicas: 0, selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, template: { metadata: { labels: { app: 'adopter' } }, spec: POD } } };
      await refused(s, beta, PATH.ReplicaSet(NS), { ...rs, metadata: { name: 'aimed-rs' }, spec: { ...rs.spec, selector: { ...rs.spec.selector, matchLabels: { [ENV]: 'alpha' } } } }, /\[selector\.scope\]/);
      const stored = await create(s, beta, PATH.ReplicaSet(NS), rs);
      assert.deepEqual(stored.spec.selector, { matchLabels: { [ENV]: 'beta' }, matchExpressions: [{ key: 'app', operator: 'Exists' }] });
      assert.equal(stored.spec.template.metadata.labels[ENV], 'beta', 'its template matches its selector');
      // A pod of beta's own that it selects: the controller adopts it and, at zero replicas, deletes it.
      await alphaPod(s, 'beta-orphan', 'orphan', beta);
      await eventually('the replicaset controller acts on the pod of beta it selects', async () => {
        const p = await getPod(s, 'beta-orphan');
        return p.status === 404 || p.body.metadata?.deletionTimestamp !== undefined || (p.body.metadata?.ownerReferences ?? []).some((r: OwnerReference) => r.name === 'adopter');
      }, 60_000);
      // A selector that can change (a ReplicationController's) cannot drop beta's label afterwards.
      const rc = await create(s, beta, PATH.ReplicationController(NS), { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'beta-rc' }, spec: { replicas: 0, selector: { app: 'rc' }, template: { metadata: { labels: { app: 'rc' } }, spec: POD } } });
      assert.deepEqual(rc.spec.selector, { app: 'rc', [ENV]: 'beta' });
      const dropped = await s.api(beta, 'PATCH', `${PATH.ReplicationController(NS)}/beta-rc`, { spec: { selector: { [ENV]: null } } }, MERGE);
      assert.equal(dropped.status, 200, dropped.text);
      assert.deepEqual(dropped.body.spec.selector, { app: 'rc', [ENV]: 'beta' }, 'beta\'s label is kept');
      // Aimed at alpha's pods, selector and template alike (the API server refuses a selector its template does not match).
      const aimed = await s.api(beta, 'PATCH', `${PATH.ReplicationController(NS)}/beta-rc`, { spec: { selector: { [ENV]: 'alpha' }, template: { metadata: { labels: { [ENV]: 'alpha' } } } } }, MERGE);
      assert.equal(aimed.status, 403, aimed.text);
      assert.match(aimed.body.message, /\[selector\.scope\] spec\.selector\["deed\.dev\/environment"\]: a ReplicationController of environment "beta" selects only its pods: deed\.dev\/environment must be "beta" \(it is frozen after CREATE\)/);
      // And for a while after: alpha's pods keep their owner references and are not deleted.
      const until = Date.now() + 5_000;
      while (Date.now() < until) {
        for (const [i, p] of live.entries()) {
          const now = await getPod(s, p.metadata.name);
          assert.equal(now.status, 200, `${p.metadata.name} stays`);
          assert.equal(now.body.metadata.deletionTimestamp, undefined);
          assert.deepEqual(owners(now.body), before[i], `${p.metadata.name}'s owner references are unchanged`);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    });

    test("a Service of beta's is stored selecting beta's pods only; one selecting alpha's is refused (read only: no kube-proxy here)", async () => {
      const s = suite();
      const svc = await create(s, beta, PATH.Service(NS), service('beta-svc', { app: 'lab-1' }));
      assert.deepEqual(svc.spec.selector, { app: 'lab-1', [ENV]: 'beta' });
      assert.equal(label(svc as KubeObject, ENV), 'beta');
      await refused(s, beta, PATH.Service(NS), service('aimed-svc', { [ENV]: 'alpha' }), /\[selector\.scope\] spec\.selector\["deed\.dev\/environment"\]: selects pods of environment "alpha"/);
      const widened = await s.api(beta, 'PATCH', `${PATH.Service(NS)}/beta-svc`, { spec: { selector: { [ENV]: 'alpha' } } }, MERGE);
      assert.equal(widened.status, 403, widened.text);
      assert.deepEqual((await s.api(s.admin, 'GET', `${PATH.Service(NS)}/beta-svc`)).body.spec.selector, { app: 'lab-1', [ENV]: 'beta' });
    });

    test('a principal of no environment writing an unscoped PodDisruptionBudget, Deployment or Service gets it marked: it selects pods of no environment only, never alpha\'s; what it writes scoped is stored as written', async () => {
      const s = suite();
      const budget = await create(s, intruder, PATH.PodDisruptionBudget(NS), pdb('wide-budget', { matchLabels: { app: 'lab-1' } }));
      assert.deepEqual(budget.spec.selector, { matchLabels: { app: 'lab-1', [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] }, 'a runner is of no environment too: a budget excludes it');
      const deploy = await create(s, intruder, PATH.Deployment(NS), deployment('wide-deploy', { matchLabels: { app: 'wide-deploy' } }, 0));
      assert.deepEqual(deploy.spec.selector, { matchLabels: { app: 'wide-deploy', [MARK]: 'true' } });
      assert.equal(deploy.spec.template.metadata.labels[MARK], 'true');
      const svc = await create(s, intruder, PATH.Service(NS), service('wide-svc', { app: 'lab-1' }));
      assert.deepEqual(svc.spec.selector, { app: 'lab-1', [MARK]: 'true' });
      // What the Service and the budget select, as the API server selects: not alpha's lab-1.
      const picked = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}?labelSelector=${encodeURIComponent(`app=lab-1,${MARK}=true`)}`)).body.items as Spec[];
      assert.deepEqual(picked.map((p) => p.metadata.name), []);
      const labelled = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}?labelSelector=app%3Dlab-1`)).body.items as Spec[];
      assert.ok(labelled.some((p) => p.metadata.labels[ENV] === 'alpha'), 'though alpha\'s pods carry app: lab-1');
      await eventually('the disruption controller counts no pod for the budget', async () => (await s.api(s.admin, 'GET', `${PATH.PodDisruptionBudget(NS)}/wide-budget`)).body.status?.expectedPods === 0, 30_000);
      const unmarked = await s.api(intruder, 'PATCH', `${PATH.Service(NS)}/wide-svc`, { spec: { selector: { app: 'lab-1', [MARK]: null } } }, MERGE);
      assert.equal(unmarked.status, 200, unmarked.text);
      assert.deepEqual(unmarked.body.spec.selector, { app: 'lab-1', [MARK]: 'true' }, 'the mark is kept');
      const excluding = { matchLabels: { app: 'platform-tool' }, matchExpressions: [{ key: ENV, operator: 'DoesNotExist' }] };
      assert.deepEqual((await create(s, intruder, PATH.PodDisruptionBudget(NS), pdb('tool-budget', excluding))).spec.selector, { ...excluding, matchExpressions: [...excluding.matchExpressions, NO_RUNNERS] });
      assert.deepEqual((await create(s, intruder, PATH.Deployment(NS), deployment('tool-deploy', excluding, 0, { app: 'platform-tool' }))).spec.selector, excluding);
      assert.equal((await create(s, intruder, PATH.Service(NS), service('tool-svc', undefined))).spec.selector, undefined, 'a Service without a selector');
    });

    test("the default-deny NetworkPolicy (podSelector: {}) of the platform's GitOps deployer and of the break-glass administrator is stored as written, so it isolates every environment's sandbox too; a tenant's of no environment is scoped to pods of no environment (rev-89)", async () => {
      const s = suite();
      const gitops = await s.newIdentity('platform', 'gitops');
      const NP = `/apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`;
      ok('policy role', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'e2e-default-deny' }, rules: [{ apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['*'] }] }));
      const writers: Array<[string, string]> = [['platform', 'gitops'], ['platform', 'selector-intruder']];
      ok('policy rights', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'e2e-default-deny' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'e2e-default-deny' },
        subjects: writers.map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      for (const [namespace, name] of writers) {
        const user = `system:serviceaccount:${namespace}:${name}`;
        const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['system:serviceaccounts', 'system:authenticated'], resourceAttributes: { namespace: NS, verb: 'create', group: 'networking.k8s.io', resource: 'networkpolicies' } } };
        await eventually(`RBAC lets ${user} create NetworkPolicies in ${NS}`, async () => (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true);
      }
      const denyAll = (name: string) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } });
      assert.deepEqual((await create(s, gitops, NP, denyAll('platform-deny'))).spec.podSelector, {}, "the platform's: every pod");
      assert.deepEqual((await create(s, s.admin, NP, denyAll('admin-deny'))).spec.podSelector, {}, "break-glass: every pod");
      assert.deepEqual((await create(s, intruder, NP, denyAll('tenant-deny'))).spec.podSelector, { matchLabels: { [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] }, "a tenant's: no environment's pod, no runner");
      // The next sync of the platform's keeps it as written.
      const synced = await s.api(gitops, 'PATCH', `${NP}/platform-deny`, { metadata: { labels: { synced: 'true' } }, spec: { podSelector: {} } }, MERGE);
      assert.equal(synced.status, 200, synced.text);
      assert.deepEqual(synced.body.spec.podSelector, {});
    });

    test("a tenant's NetworkPolicy under the name the platform applies: server-side apply and kubectl replace take it over as written, and then it is not the tenant's to delete; kubectl apply leaves the tenant's scope and says so (rev-91)", async () => {
      const s = suite();
      const gitops = await s.newIdentity('platform', 'gitops');
      const NP = `/apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`;
      const denyAll = (name: string) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } });
      const selectorOf = async (name: string) => (await s.api(s.admin, 'GET', `${NP}/${name}`)).body.spec.podSelector as unknown;
      // Rights from the default-deny case above.
      for (const name of ['squat-ssa', 'squat-apply']) assert.deepEqual((await create(s, intruder, NP, denyAll(name))).spec.podSelector, { matchLabels: { [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] });
      const applied = await s.api(gitops, 'PATCH', `${NP}/squat-ssa?fieldManager=argocd-controller&force=true`, denyAll('squat-ssa'), 'application/apply-patch+yaml');
      assert.equal(applied.status, 200, applied.text);
      assert.deepEqual(applied.body.spec.podSelector, {}, 'server-side apply: as written, runner exclusion included');
      assert.equal((await s.api(intruder, 'DELETE', `${NP}/squat-ssa`)).status, 403, "the platform's now");
      const patched = await s.kubectl(gitops, ['apply', '-n', NS, '-f', '-'], JSON.stringify(denyAll('squat-apply')));
      assert.match(patched.stderr, /spec\.podSelector keeps a tenant's scope: it selects no environment's pod; kubectl replace it \(or delete and apply\)/, JSON.stringify(patched));
      assert.deepEqual(await selectorOf('squat-apply'), { matchLabels: { [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] }, 'kubectl apply sends no selector');
      const replaced = await s.kubectl(gitops, ['replace', '-n', NS, '-f', '-'], JSON.stringify(denyAll('squat-apply')));
      assert.equal(replaced.code, 0, JSON.stringify(replaced));
      assert.deepEqual(await selectorOf('squat-apply'), {});
      assert.equal((await s.api(intruder, 'DELETE', `${NP}/squat-apply`)).status, 403);
    });

    test("a runner pod carries deed.dev/runner; a tenant's NetworkPolicy of no environment, written to reach it, is stored excluding it, and keeps the exclusion; the platform's policy for the runner is not the tenant's to open or delete", async () => {
      const s = suite();
      const RUNNERS = 'sandbox-b';
      const NP = `/apis/networking.k8s.io/v1/namespaces/${RUNNERS}/networkpolicies`;
      ok('runner policy role', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${RUNNERS}/roles`, {
        metadata: { name: 'e2e-runner-selectors' },
        rules: [{ apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['*'] }],
      }));
      ok('runner policy rights', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${RUNNERS}/rolebindings`, {
        metadata: { name: 'e2e-runner-selectors' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'e2e-runner-selectors' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'platform', name: 'selector-intruder' }],
      }));
      const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'system:serviceaccount:platform:selector-intruder', groups: ['system:serviceaccounts', 'system:authenticated'], resourceAttributes: { namespace: RUNNERS, verb: 'create', group: 'networking.k8s.io', resource: 'networkpolicies' } } };
      await eventually(`RBAC lets the intruder create NetworkPolicies in ${RUNNERS}`, async () => (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true);

      // beta's runner-0, made by the platform (the admin here) before this case: of no environment, and beta's runner.
      const runner = (await s.api(s.admin, 'GET', `${PATHS.Pod(RUNNERS)}/${s.runnerB.pod}`)).body as Spec;
      assert.equal(runner.metadata.labels[RUNNER], 'beta', JSON.stringify(runner.metadata.labels));
      assert.equal(runner.metadata.labels[MARK], 'true', 'a runner is of no environment: without the exclusion the mark alone would reach it');
      const names = async (selector: string) => (((await s.api(s.admin, 'GET', `${PATHS.Pod(RUNNERS)}?labelSelector=${encodeURIComponent(selector)}`)).body.items ?? []) as Spec[]).map((p) => p.metadata.name as string);
      assert.ok((await names(`${MARK}=true`)).includes(s.runnerB.pod));

      // An ingress policy that would open beta's runner to the intruder's pods.
      const policy = (name: string, podSelector: unknown): Spec => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name }, spec: { podSelector, policyTypes: ['Ingress'], ingress: [{ from: [{ namespaceSelector: {} }] }] } });
      const all = await create(s, intruder, NP, policy('open-all', {}));
      assert.deepEqual(all.spec.podSelector, { matchLabels: { [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] });
      assert.deepEqual(await names(`${MARK}=true,!${RUNNER}`), (await names(`${MARK}=true`)).filter((n) => n !== s.runnerB.pod), 'it selects every pod of no environment but the runner');
      const unlabelled = await create(s, intruder, NP, policy('open-unlabelled', { matchExpressions: [{ key: ENV, operator: 'DoesNotExist' }] }));
      assert.deepEqual(unlabelled.spec.podSelector, { matchExpressions: [{ key: ENV, operator: 'DoesNotExist' }, NO_RUNNERS] }, '"no environment label" would select the runner too');

      // A merge patch that writes the selector without the exclusion: the exclusion is kept.
      const widened = await s.api(intruder, 'PATCH', `${NP}/open-all`, { spec: { podSelector: { matchLabels: { [MARK]: 'true' }, matchExpressions: null } } }, MERGE);
      assert.equal(widened.status, 200, widened.text);
      assert.deepEqual(widened.body.spec.podSelector, { matchLabels: { [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] });
      // The runner mark is Deed's: no one takes it off the runner.
      const unmarked = await s.api(s.admin, 'PATCH', `${PATHS.Pod(RUNNERS)}/${s.runnerB.pod}?dryRun=All`, { metadata: { labels: { [RUNNER]: null } } }, MERGE);
      assert.equal(unmarked.status, 403, unmarked.text);
      assert.match(unmarked.body.message, /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/runner"\]: is frozen at "beta" and cannot be removed/);
      for (const name of ['open-all', 'open-unlabelled']) ok(`delete ${name}`, await s.api(intruder, 'DELETE', `${NP}/${name}`));

      // The platform's policy for beta's runners (the admin is a platform principal here) is the platform's: the intruder can neither open nor delete it.
      const egress = await create(s, s.admin, NP, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'runner-egress' }, spec: { podSelector: { matchLabels: { [RUNNER]: 'beta' } }, policyTypes: ['Ingress', 'Egress'] } });
      assert.deepEqual(egress.spec.podSelector, { matchLabels: { [RUNNER]: 'beta' } }, "the platform's selector names the runners, as written");
      assert.ok((await names(`${RUNNER}=beta`)).includes(s.runnerB.pod), 'it covers the runner');
      // Nor can beta's runner itself (its pod-bound token) take the mark of no environment off to leave the platform's policies that select by it.
      const unmarking = await s.api(s.runnerB.identity, 'PATCH', `${PATHS.Pod(RUNNERS)}/${s.runnerB.pod}?dryRun=All`, { metadata: { labels: { [MARK]: null } } }, MERGE);
      assert.equal(unmarking.status, 403, unmarking.text);
      assert.match(unmarking.body.message, /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/no-environment"\]: is frozen at "true" and cannot be removed/);
      const opening = await s.api(intruder, 'PATCH', `${NP}/runner-egress`, { spec: { ingress: [{ from: [{ namespaceSelector: {} }] }] } }, MERGE);
      assert.equal(opening.status, 403, opening.text);
      assert.match(opening.body.message, /\[guard\.pod-policy\] NetworkPolicy sandbox-b\/runner-egress carries no stamps and its selector reaches the pods or runners of environments "beta"/);
      const deleting = await s.api(intruder, 'DELETE', `${NP}/runner-egress`);
      assert.equal(deleting.status, 403, deleting.text);
      assert.match(deleting.body.message, /\[guard\.pod-policy\]/);
      ok('the platform deletes its own', await s.api(s.admin, 'DELETE', `${NP}/runner-egress`));
    });

    test("alpha's own Deployment, Job with a manual selector, PodDisruptionBudget and Service keep working: create, scale, rollout, budgets counting its pods", async () => {
      const s = suite();
      const deploy = await create(s, alpha, PATH.Deployment(NS), deployment('alpha-web', { matchLabels: { app: 'alpha-web' } }, 2));
      assert.deepEqual(deploy.spec.selector, { matchLabels: { app: 'alpha-web', [ENV]: 'alpha' } });
      const webPods = async () => ((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}?labelSelector=app%3Dalpha-web`)).body.items ?? []) as Spec[];
      await eventually('two pods, labelled alpha\'s', async () => {
        const pods = await webPods();
        return pods.length === 2 && pods.every((p) => p.metadata.labels[ENV] === 'alpha');
      }, 60_000);
      const budget = await create(s, alpha, PATH.PodDisruptionBudget(NS), pdb('alpha-web', { matchLabels: { app: 'alpha-web' } }, { minAvailable: 1 }));
      assert.deepEqual(budget.spec.selector, { matchLabels: { app: 'alpha-web', [ENV]: 'alpha' } });
      await eventually("alpha's budget counts alpha's two pods", async () => (await s.api(s.admin, 'GET', `${PATH.PodDisruptionBudget(NS)}/alpha-web`)).body.status?.expectedPods === 2, 60_000);
      const relaxed = await s.api(alpha, 'PATCH', `${PATH.PodDisruptionBudget(NS)}/alpha-web`, { spec: { minAvailable: 0 } }, MERGE);
      assert.equal(relaxed.status, 200, relaxed.text);
      const svc = await create(s, alpha, PATH.Service(NS), service('alpha-web', { app: 'alpha-web' }));
      assert.deepEqual(svc.spec.selector, { app: 'alpha-web', [ENV]: 'alpha' });
      const renamed = await s.api(alpha, 'PATCH', `${PATH.Service(NS)}/alpha-web`, { spec: { selector: { tier: 'web' } } }, MERGE);
      assert.equal(renamed.status, 200, `a change that keeps alpha's label: ${renamed.text}`);
      const scaled = await s.kubectl(alpha, ['scale', 'deployment/alpha-web', '-n', NS, '--replicas=1']);
      assert.equal(scaled.code, 0, scaled.stderr);
      const rollout = await s.kubectl(alpha, ['set', 'image', 'deployment/alpha-web', '-n', NS, 'main=registry.example/lab:2']);
      assert.equal(rollout.code, 0, rollout.stderr);
      await eventually('a second ReplicaSet, scoped as the Deployment', async () => {
        const sets = ((await s.api(s.admin, 'GET', `${PATH.ReplicaSet(NS)}?labelSelector=app%3Dalpha-web`)).body.items ?? []) as Spec[];
        return sets.length === 2 && sets.every((r) => r.spec.selector.matchLabels[ENV] === 'alpha');
      }, 60_000);
      const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'alpha-manual' }, spec: { manualSelector: true, selector: { matchLabels: { app: 'alpha-manual' } }, template: { metadata: { labels: { app: 'alpha-manual' } }, spec: { ...POD, restartPolicy: 'Never' } } } };
      const storedJob = await create(s, alpha, PATH.Job(NS), job);
      assert.deepEqual(storedJob.spec.selector, { matchLabels: { app: 'alpha-manual', [ENV]: 'alpha' } });
      await eventually("the Job's pod", async () => ((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}?labelSelector=app%3Dalpha-manual`)).body.items ?? []).length === 1, 60_000);
      const plainJob = await create(s, alpha, PATH.Job(NS), { ...job, metadata: { name: 'alpha-generated' }, spec: { template: job.spec.template } });
      assert.equal(plainJob.spec.selector.matchLabels[ENV], undefined, 'a generated selector is the API server\'s (the Job\'s own uid)');
      for (const [path, name] of [[PATH.Deployment(NS), 'alpha-web'], [PATH.Job(NS), 'alpha-manual'], [PATH.Job(NS), 'alpha-generated']] as const) {
        const del = await s.api(alpha, 'DELETE', `${path}/${name}`, { propagationPolicy: 'Background' });
        assert.equal(del.status, 200, del.text);
      }
    });
  });
}
