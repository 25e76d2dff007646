// The runner mark (src/policy/pod/runner-mark.ts): a runner pod is of no environment, so it
// carries the mark of no environment's pods; Deed writes `deed.dev/runner: <env>` on it, and
// a tenant's NetworkPolicy and PodDisruptionBudget exclude it (selector-scope.ts). The same
// in a real API server: test/e2e/cases/selectors.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { lookupKey, gatheredLookup } from '../src/policy/lookup.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { decodePatch, fixture, kubeSystem, testContext, type Review, NO_READERS } from './helpers.js';
import { reviewObject } from '../src/review/run.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects as the API server sends them
type Spec = Record<string, any>;

const NS = 'shared';
const RUNNER = 'deed.dev/runner';
const MARK = 'deed.dev/no-environment';
const NO_RUNNERS = { key: RUNNER, operator: 'DoesNotExist' };
const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['shared:alpha-runner'], managers: { users: ['alpha-manager'] } },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'], managers: { users: ['beta-manager'] } },
  ],
  platform: { users: ['platform-deployer'], groups: [] },
  breakGlass: { users: ['admin'], groups: [] },
};
const user = (username: string): UserInfo => ({ username, groups: ['system:authenticated'], extra: {} });
const TENANT = user('tenant');
const MANAGER = user('alpha-manager');
const BETA_MANAGER = user('beta-manager');
const PLATFORM = user('platform-deployer');
const BREAK_GLASS = user('admin');
const RS_CONTROLLER = kubeSystem('replicaset-controller');
const kubeSystemManager: UserInfo = { username: 'system:kube-controller-manager', groups: ['system:authenticated'], extra: {} };
/** beta's runner (sandbox-b:*), creating beta's pods. */
const BETA = fixture('mutate-create-pod-by-other-namespace-runner.json').request.userInfo;

const RESOURCES: Record<string, { group: string; resource: string }> = {
  Pod: { group: '', resource: 'pods' },
  NetworkPolicy: { group: 'networking.k8s.io', resource: 'networkpolicies' },
  PodDisruptionBudget: { group: 'policy', resource: 'poddisruptionbudgets' },
  Deployment: { group: 'apps', resource: 'deployments' },
};

function pod(serviceAccountName: string | undefined, labels: Record<string, string> = { app: 'lab' }, meta: Spec = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'runner-0', namespace: NS, labels, ...meta },
    spec: { ...(serviceAccountName ? { serviceAccountName } : {}), automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] },
  } as KubeObject;
}

function networkPolicy(podSelector: unknown): KubeObject {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'lab', namespace: NS }, spec: { podSelector, policyTypes: ['Ingress'], ingress: [{ from: [{ podSelector: {} }] }] } } as KubeObject;
}

function review(obj: KubeObject, userInfo: UserInfo, old?: KubeObject, operation?: 'DELETE'): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  const kind = obj.kind!;
  const { group, resource } = RESOURCES[kind]!;
  body.request = {
    ...body.request,
    kind: { group, version: 'v1', kind },
    resource: { group, version: 'v1', resource },
    requestKind: undefined,
    requestResource: undefined,
    name: obj.metadata.name,
    namespace: obj.metadata.namespace ?? NS,
    userInfo,
    subResource: undefined,
    operation: operation ?? (old === undefined ? 'CREATE' : 'UPDATE'),
    object: operation === 'DELETE' ? null : obj,
    oldObject: old ?? null,
  };
  return body;
}

/** The cluster as the cache would answer: the service accounts exist, unstamped; anything else the table lists, or absent. */
function cluster(table: ReadonlyMap<string, Lookup> = new Map()): ObjectLookup {
  const gathered = gatheredLookup(table, 'unlisted');
  const account: Lookup = { state: 'found', metadata: { uid: 'sa' } as Extract<Lookup, { state: 'found' }>['metadata'] };
  return {
    readers: NO_READERS,
    get: (resource, namespace, name) =>
      table.has(lookupKey({ resource, namespace, name })) ? gathered.get(resource, namespace, name) : resource === 'serviceaccounts' ? account : { state: 'absent' },
  };
}

function answer(webhook: 'mutate' | 'validate', body: Review, lookup: ObjectLookup = cluster()): AdmissionResponse {
  const d = decide(webhook, body, testContext(POLICY, undefined, undefined, lookup));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** The object as the mutating webhook leaves it, with its warnings. */
function mutated(body: Review, lookup?: ObjectLookup): { object: KubeObject; warnings: string[] } {
  const m = answer('mutate', body, lookup);
  assert.equal(m.allowed, true, m.status?.message);
  const object = m.patch ? (jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ response: m } as never)).newDocument as KubeObject) : body.request.object!;
  return { object, warnings: m.warnings ?? [] };
}

/** What the API server stores: mutated, then validated (which must admit it). */
function stored(obj: KubeObject, userInfo: UserInfo, old?: KubeObject, lookup?: ObjectLookup): KubeObject {
  const { object } = mutated(review(obj, userInfo, old), lookup);
  const v = answer('validate', review(object, userInfo, old), lookup);
  assert.equal(v.allowed, true, v.status?.message);
  return object;
}

function refused(r: AdmissionResponse, pattern: RegExp): void {
  assert.equal(r.allowed, false, 'expected a refusal');
  assert.match(r.status?.message ?? '', pattern);
}

/** Whether a LabelSelector selects a pod's labels (matchLabels, In, NotIn, Exists, DoesNotExist). */
function selects(selector: Spec, labels: Record<string, string>): boolean {
  const equal = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return (
    equal &&
    (selector.matchExpressions ?? []).every((e: Spec) =>
      e.operator === 'DoesNotExist' ? !(e.key in labels) : e.operator === 'Exists' ? e.key in labels : e.operator === 'In' ? e.values.includes(labels[e.key]) : !e.values.includes(labels[e.key]),
    )
  );
}

describe('a runner pod carries the runner mark, and only a runner', () => {
  test("a manager's runner pod in a shared namespace is stored with deed.dev/runner: alpha beside the mark of no environment", () => {
    const runner = stored(pod('alpha-runner'), MANAGER);
    assert.equal(runner.metadata.labels?.[RUNNER], 'alpha');
    assert.equal(runner.metadata.labels?.[MARK], 'true');
  });

  test('a pod without labels gets both marks; a break-glass runner pod gets the runner mark too', () => {
    const bare = pod('alpha-runner');
    delete bare.metadata.labels;
    assert.deepEqual(stored(bare, MANAGER).metadata.labels, { [MARK]: 'true', [RUNNER]: 'alpha' });
    assert.equal(stored(pod('alpha-runner'), BREAK_GLASS).metadata.labels?.[RUNNER], 'alpha');
  });

  test('a pod whose service account no environment is mapped to carries none, and may not claim one', () => {
    assert.equal(stored(pod('builder'), TENANT).metadata.labels?.[RUNNER], undefined);
    assert.equal(stored(pod(undefined), TENANT).metadata.labels?.[RUNNER], undefined, 'the default account is no runner');
    const claimed = pod('builder', { app: 'lab', [RUNNER]: 'alpha' });
    refused(answer('validate', review(claimed, TENANT)), /\[stamp\.conflict\] metadata\.labels\["deed\.dev\/runner"\]: is admission-owned and marks a runner pod; a pod whose service account no environment is mapped to never carries it \(got "alpha"\)/);
  });

  test("break-glass's pod too carries the runner mark Deed writes, and no other", () => {
    refused(answer('validate', review(pod('alpha-runner', { app: 'lab', [MARK]: 'true', [RUNNER]: 'beta' }), BREAK_GLASS)), /\[stamp\.conflict\] metadata\.labels\["deed\.dev\/runner"\]: is admission-owned: given "beta", expected "alpha"/);
    refused(answer('validate', review(pod('builder', { app: 'lab', [MARK]: 'true', [RUNNER]: 'alpha' }), BREAK_GLASS)), /\[stamp\.conflict\]/);
  });

  test("a runner pod labelled another environment's runner is refused, not rewritten; one the mutating webhook did not mark is refused", () => {
    const wrong = pod('alpha-runner', { app: 'lab', [RUNNER]: 'beta' });
    assert.equal(mutated(review(wrong, MANAGER)).object.metadata.labels?.[RUNNER], 'beta', 'the mutating webhook leaves it');
    refused(answer('validate', review(wrong, MANAGER)), /\[stamp\.conflict\] metadata\.labels\["deed\.dev\/runner"\]: is admission-owned: given "beta", expected "alpha"/);
    refused(answer('validate', review(pod('alpha-runner'), MANAGER)), /deed\.dev\/runner.*carries "alpha" \(the mutating webhook adds it; was it bypassed\?\)/);
  });

  test("an environment's pod never carries the runner mark", () => {
    const body = fixture('mutate-create-pod-by-other-namespace-runner.json');
    body.request.object!.metadata.labels = { ...body.request.object!.metadata.labels, [RUNNER]: 'beta' };
    refused(answer('mutate', body), /deed\.dev\/runner.*marks a runner pod, which is of no environment/);
  });

  test('the runner mark is frozen: no UPDATE removes or changes it, nor adds it to a pod stored without it but the mark Deed would write on a runner', () => {
    const runner = stored(pod('alpha-runner'), MANAGER);
    const dropped = structuredClone(runner);
    delete dropped.metadata.labels![RUNNER];
    refused(answer('validate', review(dropped, MANAGER, runner)), /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/runner"\]: is frozen at "alpha" and cannot be removed/);
    // Nor does the runner's own environment take the mark of no environment off it: the platform's runner policies may select by it.
    const alphaItself: UserInfo = { username: 'system:serviceaccount:shared:alpha-runner', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
    const unmarked = structuredClone(runner);
    delete unmarked.metadata.labels![MARK];
    refused(answer('validate', review(unmarked, alphaItself, runner)), /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/no-environment"\]: is frozen at "true" and cannot be removed/);
    const relabelled = structuredClone(runner);
    relabelled.metadata.labels!.tier = 'web';
    assert.equal(answer('validate', review(relabelled, alphaItself, runner)).allowed, true, 'its other labels are its own');
    const before = pod('builder');
    refused(answer('validate', review(pod('builder', { app: 'lab', [RUNNER]: 'alpha' }), TENANT, before)), /\[frozen\.stamps\] .*deed\.dev\/runner.*cannot be added/);
    // A runner mark a pod would not be given (set before Deed reserved the key) may be taken off; a runner's may not.
    const unearned = pod('builder', { app: 'lab', [MARK]: 'true', [RUNNER]: 'alpha' });
    assert.equal(answer('validate', review(pod('builder', { app: 'lab', [MARK]: 'true' }), TENANT, unearned)).allowed, true);
    // A runner stored before the mark may be given the mark Deed would write, and no other.
    const legacy = pod('alpha-runner', { app: 'lab', [MARK]: 'true' });
    assert.equal(answer('validate', review(pod('alpha-runner', { app: 'lab', [MARK]: 'true', [RUNNER]: 'alpha' }), MANAGER, legacy)).allowed, true);
    refused(answer('validate', review(pod('alpha-runner', { app: 'lab', [MARK]: 'true', [RUNNER]: 'beta' }), MANAGER, legacy)), /\[frozen\.stamps\] .*deed\.dev\/runner.*cannot be added/);
    refused(answer('validate', review(pod('alpha-runner', { app: 'lab', [MARK]: 'true', [RUNNER]: 'alpha' }), TENANT, legacy)), /\[guard\.unmapped\]/);
  });

  test("a controller manager without per-controller credentials (a system principal) makes runner pods with the runner mark; the replicaset controller refuses a template's runner mark on a pod that is no runner", () => {
    const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'runners-7d9', uid: 'rs-m', controller: true, blockOwnerDeletion: true };
    const found: Lookup = { state: 'found', metadata: { uid: 'rs-m', labels: { [MARK]: 'true' } } as Extract<Lookup, { state: 'found' }>['metadata'] };
    const lookup = cluster(new Map([[lookupKey({ resource: 'replicasets', namespace: NS, name: 'runners-7d9' }), found]]));
    const made = pod('alpha-runner', { app: 'runner', [MARK]: 'true' }, { ownerReferences: [rs] });
    assert.equal(stored(made, kubeSystemManager, undefined, lookup).metadata.labels?.[RUNNER], 'alpha');
    const forged = pod('builder', { app: 'runner', [MARK]: 'true', [RUNNER]: 'alpha' }, { ownerReferences: [rs] });
    refused(answer('mutate', review(forged, RS_CONTROLLER), lookup), /\[stamp\.conflict\] .*deed\.dev\/runner.*never carries it/);
  });
});

describe("a tenant's NetworkPolicy and PodDisruptionBudget never select a runner", () => {
  const runnerLabels = { app: 'lab', [MARK]: 'true', [RUNNER]: 'alpha' };
  const tenantLabels = { app: 'lab', [MARK]: 'true' };

  test("a tenant's NetworkPolicy of no environment is stored excluding runners: it selects the tenant's pods, not alpha's runner", () => {
    for (const written of [{}, { matchLabels: { app: 'lab' } }, { matchExpressions: [{ key: 'deed.dev/environment', operator: 'DoesNotExist' }] }]) {
      const selector = stored(networkPolicy(written), TENANT).spec!.podSelector as Spec;
      assert.ok(selector.matchExpressions.some((e: Spec) => e.key === RUNNER && e.operator === 'DoesNotExist'), JSON.stringify(selector));
      assert.equal(selects(selector, runnerLabels), false, `${JSON.stringify(written)} selects no runner`);
      if (!('matchExpressions' in written)) assert.equal(selects(selector, tenantLabels), true, `${JSON.stringify(written)} still selects the tenant's pods`);
    }
  });

  test("a tenant's PodDisruptionBudget is stored excluding runners", () => {
    const pdb = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'lab', namespace: NS }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'lab' } } } } as KubeObject;
    assert.deepEqual(stored(pdb, TENANT).spec!.selector, { matchLabels: { app: 'lab', [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] });
  });

  test("the platform's and break-glass's selectors are not changed for runners: a platform's runner policy still covers them", () => {
    for (const who of [PLATFORM, BREAK_GLASS]) {
      const selector = stored(networkPolicy({ matchLabels: { app: 'lab' } }), who).spec!.podSelector as Spec;
      assert.equal(selector.matchExpressions, undefined, who.username);
      assert.equal(selects(selector, runnerLabels), true, `${who.username}'s selects the runner`);
    }
  });

  test("a manager's selector excludes runners too, unless it names the runners of environments it manages; another environment's manager cannot name alpha's", () => {
    const open = stored(networkPolicy({}), MANAGER).spec!.podSelector as Spec;
    assert.deepEqual(open, { matchLabels: { [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] });
    const own = stored(networkPolicy({ matchLabels: { [RUNNER]: 'alpha' } }), MANAGER).spec!.podSelector as Spec;
    assert.deepEqual(own, { matchLabels: { [RUNNER]: 'alpha' } }, 'as written: only runners carry the runner mark, so it needs no mark of no environment');
    assert.equal(selects(own, runnerLabels), true, "alpha's manager reaches alpha's runners");
    const listed = stored(networkPolicy({ matchExpressions: [{ key: RUNNER, operator: 'In', values: ['alpha'] }] }), MANAGER).spec!.podSelector as Spec;
    assert.equal(listed.matchExpressions.length, 1, 'In an environment it manages: no exclusion added');
    for (const selector of [{ matchLabels: { [RUNNER]: 'alpha' } }, { matchExpressions: [{ key: RUNNER, operator: 'In', values: ['alpha', 'beta'] }] }])
      for (const who of [BETA_MANAGER, TENANT]) {
          const m = mutated(review(networkPolicy(selector), who)).object;
          refused(answer('validate', review(m, who)), /\[selector\.scope\] spec\.podSelector\.matchExpressions: selects runner pods of environments it does not manage; .* acts for no environment here: add \{key: deed\.dev\/runner, operator: DoesNotExist\}.*or require deed\.dev\/runner: an environment it manages/);
        }
    const every = networkPolicy({ matchExpressions: [{ key: RUNNER, operator: 'Exists' }] });
    const asWritten = mutated(review(every, MANAGER)).object;
    assert.deepEqual((asWritten.spec as Spec).podSelector, { matchExpressions: [{ key: RUNNER, operator: 'Exists' }] }, 'not silently turned into a selector of nothing');
    refused(answer('validate', review(asWritten, MANAGER)), /selects runner pods too; alpha-manager acts for no environment here/);
    const alphaPods = stored(networkPolicy({ matchLabels: { 'deed.dev/environment': 'alpha' } }), MANAGER).spec!.podSelector as Spec;
    assert.deepEqual(alphaPods, { matchLabels: { 'deed.dev/environment': 'alpha' } }, "alpha's pods only: no runner carries an environment's label, so no exclusion");
    const beta = stored(networkPolicy({}), BETA_MANAGER).spec!.podSelector as Spec;
    assert.equal(selects(beta, runnerLabels), false, "beta's manager's policy of no environment reaches no runner of alpha's");
  });

  test("a tenant's pod template that carries a runner mark its pods would not earn is refused when it is written", () => {
    const deployment = (serviceAccountName: string) =>
      ({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'lab', namespace: NS },
        spec: { selector: { matchLabels: { app: 'lab' } }, template: { metadata: { labels: { app: 'lab', [RUNNER]: 'alpha' } }, spec: { serviceAccountName, automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] } } },
      }) as KubeObject;
    refused(answer('validate', review(mutated(review(deployment('builder'), TENANT)).object, TENANT)), /\[stamp\.template\] spec\.template\.metadata\.labels\["deed\.dev\/runner"\]: is admission-owned and marks a runner pod/);
    assert.equal((stored(deployment('alpha-runner'), MANAGER).spec as Spec).template.metadata.labels[RUNNER], 'alpha', "alpha's manager's runner template may carry alpha's mark");
  });

  test("a tenant's workload selector is not changed: adopting a runner is refused apart (guard.adoption)", () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'lab', namespace: NS },
      spec: { selector: { matchLabels: { app: 'lab' } }, template: { metadata: { labels: { app: 'lab' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] } } },
    } as KubeObject;
    assert.deepEqual(stored(deployment, TENANT).spec!.selector, { matchLabels: { app: 'lab', [MARK]: 'true' } });
  });

  test("a tenant's NetworkPolicy that arrives without the exclusion (the mutating webhook bypassed) is refused, naming the fix", () => {
    refused(
      answer('validate', review(networkPolicy({ matchLabels: { app: 'lab', [MARK]: 'true' } }), TENANT)),
      /\[selector\.scope\] spec\.podSelector\.matchExpressions: selects runner pods too; tenant acts for no environment here: add \{key: deed\.dev\/runner, operator: DoesNotExist\}/,
    );
    refused(answer('validate', review(networkPolicy({ matchExpressions: [{ key: 'deed.dev/environment', operator: 'DoesNotExist' }] }), TENANT)), /selects runner pods too/);
  });

  test('an UPDATE that drops the exclusion gets it back; a selector stored before the exclusion, which reaches runners, is the platform\'s to change', () => {
    const before = stored(networkPolicy({ matchLabels: { app: 'lab' } }), TENANT);
    const applied = structuredClone(before);
    (applied.spec as Spec).podSelector = { matchLabels: { app: 'lab', [MARK]: 'true' } };
    const { object, warnings } = mutated(review(applied, TENANT, before));
    assert.deepEqual((object.spec as Spec).podSelector, (before.spec as Spec).podSelector);
    assert.match(warnings.join('\n'), /Deed kept deed\.dev\/runner DoesNotExist in spec\.podSelector/);

    // Stored before: whose it was is not recorded, and narrowing the platform's would open the runners it covers.
    const old = networkPolicy({ matchLabels: { app: 'lab', [MARK]: 'true' } });
    const changed = networkPolicy({ matchLabels: { app: 'web', [MARK]: 'true' } });
    const narrowed = mutated(review(changed, TENANT, old)).object;
    assert.deepEqual((narrowed.spec as Spec).podSelector, { matchLabels: { app: 'web', [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] }, 'the mutating webhook adds the exclusion');
    refused(answer('validate', review(narrowed, TENANT, old)), /\[guard\.pod-policy\] .*reaches every environment's pods or runners/);
    refused(answer('validate', review(changed, TENANT, old)), /selects runner pods too/);
    assert.equal(answer('validate', review(narrowed, PLATFORM, old)).allowed, true);
  });

  test('deed review judges an UPDATE as the cluster does: mutated, then validated (an apply that drops the exclusion passes, with it put back)', () => {
    const before = stored(networkPolicy({ matchLabels: { app: 'lab' } }), TENANT);
    const applied = networkPolicy({ matchLabels: { app: 'lab' } });
    const r = reviewObject({ operation: 'UPDATE', object: applied, oldObject: before, userInfo: TENANT }, testContext(POLICY, undefined, undefined, cluster()));
    assert.equal(r.allowed, true, JSON.stringify(r.steps.map((st) => st.verdict.message)));
    assert.deepEqual(r.steps.map((st) => st.webhook), ['mutate', 'validate']);
    assert.deepEqual((r.stored!.spec as Spec).podSelector, (before.spec as Spec).podSelector);
  });

  test("beta's NetworkPolicy is scoped to beta, which no runner carries", () => {
    const body = review(networkPolicy({}), BETA);
    body.request.namespace = 'sandbox-b';
    body.request.object!.metadata.namespace = 'sandbox-b';
    const selector = mutated(body).object.spec!.podSelector as Spec;
    assert.deepEqual(selector, { matchLabels: { 'deed.dev/environment': 'beta' } });
  });
});

describe('guard.pod-policy: what isolates or protects environments\' pods and runners is the platform\'s', () => {
  const JANITOR = fixture('validate-create-pod-by-runner.json').request.userInfo; // alpha's runner
  const runnerEgress = () => stored(networkPolicy({ matchLabels: { [RUNNER]: 'alpha' } }), PLATFORM);
  const opened = (np: KubeObject) => {
    const o = structuredClone(np);
    (o.spec as Spec).ingress = [{ from: [{ podSelector: { matchLabels: { app: 'attacker' } } }] }];
    return o;
  };
  const write = (np: KubeObject, who: UserInfo, del = false) => answer('validate', del ? review(np, who, np, 'DELETE') : review(opened(np), who, np));

  test("the platform's NetworkPolicy on alpha's runners: a tenant may neither open nor delete it, nor beta, nor beta's manager; alpha's manager, the platform and break-glass may", () => {
    const np = runnerEgress();
    for (const del of [false, true]) {
      refused(write(np, TENANT, del), /\[guard\.pod-policy\] NetworkPolicy shared\/lab carries no stamps and its selector reaches the pods or runners of environments "alpha": it is the platform's/);
      refused(write(np, BETA_MANAGER, del), /\[guard\.pod-policy\]/);
      const beta = write(np, BETA, del);
      refused(beta, /\[guard\.pod-policy\] .*reaches an environment's pods or runners/);
      assert.doesNotMatch(beta.status?.message ?? '', /alpha/, 'a refusal names no other environment');
      for (const who of [MANAGER, PLATFORM, BREAK_GLASS]) assert.equal(write(np, who, del).allowed, true, `${who.username} ${del ? 'deletes' : 'changes'} it`);
    }
  });

  test("the platform's default-deny for every environment's pods, and one stored before the runner exclusion, reach every environment: only the platform changes them", () => {
    const denyAll = stored(networkPolicy({ matchExpressions: [{ key: 'deed.dev/environment', operator: 'Exists' }] }), PLATFORM);
    const unexcluded = networkPolicy({ matchLabels: { [MARK]: 'true' } });
    for (const np of [denyAll, unexcluded]) {
      refused(write(np, MANAGER), /reaches every environment's pods or runners/);
      refused(write(np, JANITOR, true), /\[guard\.pod-policy\]/);
      assert.equal(write(np, PLATFORM).allowed, true);
    }
  });

  test("a tenant's own NetworkPolicy and budget reach no environment: the tenant changes and deletes them; an environment may not (guard.shared-input: unstamped, the platform's)", () => {
    const np = stored(networkPolicy({ matchLabels: { app: 'lab' } }), TENANT);
    const pdb = stored({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'lab', namespace: NS }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'lab' } } } } as KubeObject, TENANT);
    assert.equal(write(np, TENANT).allowed, true);
    assert.equal(write(np, TENANT, true).allowed, true);
    assert.equal(answer('validate', review(pdb, TENANT, pdb, 'DELETE')).allowed, true);
    assert.match(write(np, BETA).status?.message ?? '', /\[guard\.shared-input\]/);
    assert.match(answer('validate', review(pdb, BETA, pdb, 'DELETE')).status?.message ?? '', /\[guard\.shared-input\]/);
  });

  test("its labels, annotations and finalizers stay anyone's that RBAC lets: a tool's tracking label, a finalizer taken off in deletion; an owner reference is guarded", () => {
    const np = runnerEgress();
    const tracked = structuredClone(np);
    tracked.metadata.labels = { ...tracked.metadata.labels, 'helm.sh/chart': 'lab-2' };
    tracked.metadata.annotations = { 'argocd.argoproj.io/tracking-id': 'lab:networking.k8s.io/NetworkPolicy:shared/lab' };
    assert.equal(answer('validate', review(tracked, TENANT, np)).allowed, true);
    const finalizing = { ...structuredClone(np), metadata: { ...np.metadata, finalizers: ['example.com/cleanup'], deletionTimestamp: '2026-12-04T15:00:00Z' } } as KubeObject;
    const released = { ...structuredClone(finalizing), metadata: { ...finalizing.metadata, finalizers: [] } } as KubeObject;
    assert.equal(answer('validate', review(released, TENANT, finalizing)).allowed, true);
    const owned = { ...structuredClone(np), metadata: { ...np.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'doomed', uid: 'cm-1' }] } } as KubeObject;
    refused(answer('validate', review(owned, TENANT, np)), /\[guard\.pod-policy\]/);
  });

  test("a budget on alpha's runners is the platform's too: a tenant cannot raise it to stall alpha's evictions", () => {
    const pdb = stored({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'runners', namespace: NS }, spec: { maxUnavailable: 1, selector: { matchLabels: { [RUNNER]: 'alpha' } } } } as KubeObject, PLATFORM);
    const stalled = structuredClone(pdb);
    (stalled.spec as Spec) = { minAvailable: '100%', selector: (pdb.spec as Spec).selector };
    refused(answer('validate', review(stalled, TENANT, pdb)), /\[guard\.pod-policy\] PodDisruptionBudget shared\/runners/);
    assert.equal(answer('validate', review(stalled, MANAGER, pdb)).allowed, true);
  });
});
