// Every door to an environment's object: subresources that write metadata, evictions,
// bindings, runner pods, objects whose stamps do not verify, bound namespaces, and the
// principals that must still get through (system controllers, break-glass, managers).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { gatheredLookup, lookupKey, lookupsNeeded } from '../src/policy/lookup.js';
import type { Lookup } from '../src/policy/policy.js';
import { decide } from '../src/admission/decide.js';
import { fixture, FIXTURE_KEYS, FIXTURE_POLICY, testContext, type Review } from './helpers.js';
import { ADMIN, allows, denies, GC, RUNNER_A, RUNNER_B, stamped, validate as validateWith } from './validate-helpers.js';

const JANITOR_B: UserInfo = { username: 'system:serviceaccount:sandbox-b:janitor', groups: ['system:serviceaccounts', 'system:serviceaccounts:sandbox-b', 'system:authenticated'], extra: {} };
const SCHEDULER: UserInfo = { username: 'system:kube-scheduler', groups: ['system:authenticated'], extra: {} };
const KCM: UserInfo = { username: 'system:kube-controller-manager', groups: ['system:authenticated'], extra: {} };
const RUNNER_CONTROLLER: UserInfo = { username: 'system:serviceaccount:platform:runner-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:platform', 'system:authenticated'], extra: {} };

const POLICY: ConfigInput = {
  ...FIXTURE_POLICY,
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], groups: ['alpha-devs'], managers: { users: [RUNNER_CONTROLLER.username] } },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  breakGlass: { groups: ['platform-oncall'] },
};

/** sbx-1 as Deed stamped it for alpha (runner-0 of sandbox-a). */
function alphaPod(): KubeObject {
  const body = fixture('validate-create-pod-by-runner.json');
  return stamped(body, body.request.object, RUNNER_A, POLICY);
}

function alphaClaim(): KubeObject {
  const body = fixture('validate-create-pvc-by-runner.json');
  return stamped(body, body.request.object, RUNNER_A, POLICY);
}

/** An UPDATE (through `subResource` when given) of `old` into `change(copy)`. */
function update(old: KubeObject, change: (o: KubeObject) => void, userInfo: UserInfo, subResource?: string, resource = 'pods'): Review {
  const body = fixture('validate-update-pod-label-by-runner.json');
  const next = structuredClone(old);
  change(next);
  const kind = resource === 'pods' ? 'Pod' : 'PersistentVolumeClaim';
  body.request = { ...body.request, kind: { group: '', version: 'v1', kind }, resource: { group: '', version: 'v1', resource }, requestKind: undefined, requestResource: undefined, name: old.metadata.name, subResource, userInfo, oldObject: old, object: next };
  return body;
}

function remove(old: KubeObject, userInfo: UserInfo): Review {
  const body = fixture('validate-delete-pod-by-runner.json');
  body.request = { ...body.request, name: old.metadata.name, userInfo, oldObject: old };
  return body;
}

/** What the API server sends for `kubectl evict` / POST pods/NAME/eviction, or a binding. */
function named(action: 'eviction' | 'binding', pod: string, userInfo: UserInfo, annotations: Record<string, string> = {}, legacy = false): Review {
  const object =
    action === 'eviction'
      ? { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: 'sandbox-a' } }
      : { apiVersion: 'v1', kind: 'Binding', metadata: { name: pod, namespace: 'sandbox-a', annotations }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '5d6e7f80-0000-4000-8000-000000000001',
      kind: action === 'eviction' ? { group: 'policy', version: 'v1', kind: 'Eviction' } : { group: '', version: 'v1', kind: 'Binding' },
      resource: { group: '', version: 'v1', resource: legacy ? 'bindings' : 'pods' },
      ...(legacy ? {} : { subResource: action }),
      name: pod,
      namespace: 'sandbox-a',
      operation: 'CREATE',
      userInfo,
      object,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}

function found(obj: KubeObject, serviceAccountName?: string): Lookup {
  return { state: 'found', metadata: obj.metadata, ...(serviceAccountName ? { serviceAccountName } : {}) };
}

function lookupOf(pod: string, answer: Lookup) {
  return gatheredLookup(new Map([[lookupKey({ resource: 'pods', namespace: 'sandbox-a', name: pod }), answer]]), 'not gathered');
}

describe('subresources that write metadata', () => {
  test('beta relabelling alpha\'s pod through pods/status is refused, as on the pod itself', () => {
    const message = denies(update(alphaPod(), (o) => (o.metadata.labels!['deed.dev/environment'] = 'beta'), JANITOR_B, 'status'), 'guard.cross-environment', POLICY);
    assert.match(message, /\[frozen\.stamps\]/);
  });

  test('beta marking alpha\'s claim terminal through persistentvolumeclaims/status is refused', () => {
    denies(update(alphaClaim(), (o) => (o.metadata.annotations!['deed.dev/terminal'] = 'true'), JANITOR_B, 'status', 'persistentvolumeclaims'), 'guard.cross-environment', POLICY);
  });

  test('beta adding an owner reference to alpha\'s claim through its status is refused', () => {
    const change = (o: KubeObject) => (o.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'ghost', uid: '00000000-0000-4000-8000-000000000000' }]);
    denies(update(alphaClaim(), change, JANITOR_B, 'status', 'persistentvolumeclaims'), 'guard.cross-environment', POLICY);
  });

  test('a status-only write by another environment is refused too: a terminal phase cannot be taken back', () => {
    denies(update(alphaPod(), (o) => (o.status = { phase: 'Failed' }), JANITOR_B, 'status'), 'guard.cross-environment', POLICY);
  });

  test('a status writer outside kube-system (a CSI resizer) passes once listed as a system principal; the kubelet always does', () => {
    const resizer: UserInfo = { username: 'system:serviceaccount:csi:csi-resizer', groups: ['system:serviceaccounts'], extra: {} };
    const grow = (o: KubeObject) => (o.status = { capacity: { storage: '2Gi' } });
    denies(update(alphaClaim(), grow, resizer, 'status', 'persistentvolumeclaims'), 'guard.unmapped', POLICY);
    const listed: ConfigInput = { ...POLICY, systemPrincipals: { users: [resizer.username], groups: ['system:nodes'] } };
    allows(update(alphaClaim(), grow, resizer, 'status', 'persistentvolumeclaims'), listed);
    const kubelet: UserInfo = { username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'], extra: {} };
    allows(update(alphaPod(), (o) => (o.status = { phase: 'Running' }), kubelet, 'status'), POLICY);
  });

  test('pods/resize of alpha\'s pod by beta is refused', () => {
    denies(update(alphaPod(), (o) => ((o.spec!.containers as Array<{ resources?: unknown }>)[0]!.resources = { limits: { cpu: '8' } }), JANITOR_B, 'resize'), 'guard.cross-environment', POLICY);
  });

  test('alpha changing its own pod\'s status labels is allowed', () => {
    allows(update(alphaPod(), (o) => (o.metadata.labels!.phase = 'done'), RUNNER_A, 'status'), POLICY);
  });
});

describe('evictions and bindings name the pod: whose it is comes from a lookup', () => {
  test('an eviction and a binding need the pod they name; nothing else needs a lookup', () => {
    // Read from the API server: the request acts at once on whatever pod stands under the name,
    // and the cache may still hold one deleted since (a binding without the pod's uid likewise).
    const evict = named('eviction', 'sbx-1', JANITOR_B);
    assert.deepEqual(lookupsNeeded(evict.request, 'validate', FIXTURE_KEYS), [{ resource: 'pods', namespace: 'sandbox-a', name: 'sbx-1', fresh: true }]);
    assert.deepEqual(lookupsNeeded(named('binding', 'sbx-1', SCHEDULER, {}, true).request, 'validate', FIXTURE_KEYS), [{ resource: 'pods', namespace: 'sandbox-a', name: 'sbx-1', withReads: true, fresh: true }]);
    assert.deepEqual(lookupsNeeded(fixture('validate-delete-pod-by-runner.json').request, 'validate', FIXTURE_KEYS), []);
  });

  test('beta evicting alpha\'s pod is refused; alpha evicting it is allowed', () => {
    const lookup = lookupOf('sbx-1', found(alphaPod()));
    const message = denies(named('eviction', 'sbx-1', JANITOR_B), 'guard.cross-environment', POLICY, lookup);
    assert.match(message, /acts for "beta"; pod sandbox-a\/sbx-1 is not known to be one of "beta"'s \(or does not exist\), so it may not evict it/);
    assert.doesNotMatch(message, /alpha/);
    allows(named('eviction', 'sbx-1', RUNNER_A), POLICY, lookup);
  });

  test('an eviction Deed cannot judge is refused and says why; a system controller needs no lookup', () => {
    const lookup = lookupOf('sbx-1', { state: 'unknown', reason: 'get pods: timed out after 2000 ms' });
    const message = denies(named('eviction', 'sbx-1', RUNNER_A), 'guard.owner-unknown', POLICY, lookup);
    assert.match(message, /cannot read pod sandbox-a\/sbx-1 to tell whose it is \(get pods: timed out after 2000 ms\); refusing to evict it/);
    allows(named('eviction', 'sbx-1', KCM), POLICY, lookup);
  });

  test('evicting a pod Deed cannot find is refused: one created under that name before the API server reads it would go unjudged', () => {
    denies(named('eviction', 'gone', JANITOR_B), 'guard.cross-environment', POLICY, lookupOf('gone', { state: 'absent' }));
    denies(named('eviction', 'gone', RUNNER_A), 'guard.cross-environment', POLICY, lookupOf('gone', { state: 'absent' }));
    allows(named('eviction', 'gone', KCM), POLICY, lookupOf('gone', { state: 'absent' }));
  });

  test('the refusal reads the same whether the pod is absent, another environment\'s, a runner of it, or carries stamps that do not verify', () => {
    const tampered = alphaPod();
    tampered.metadata.annotations!['deed.dev/expires-at'] = '2099-01-01T00:00:00Z';
    const runner: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'sandbox-a' } };
    for (const who of [JANITOR_B, ADMIN]) {
      const answers = [{ state: 'absent' } as const, found(alphaPod()), found(runner, 'runner'), found(tampered)].map((a) => {
        const r = validateWith(named('eviction', 'p', who), POLICY, lookupOf('p', a));
        return JSON.stringify({ allowed: r.allowed, code: r.status?.code, message: r.status?.message });
      });
      assert.equal(new Set(answers).size, 1, answers.join('\n'));
      assert.doesNotMatch(answers[0]!, /alpha|sandbox-a:runner|runner-0/);
    }
  });

  test('a binding that carries an annotation under Deed\'s prefix is refused, by the scheduler too', () => {
    for (const legacy of [false, true]) {
      const message = denies(named('binding', 'sbx-1', SCHEDULER, { 'deed.dev/attestation': 'v1:forged' }, legacy), 'frozen.stamps', POLICY, lookupOf('sbx-1', found(alphaPod())));
      assert.match(message, /metadata\.annotations\["deed\.dev\/attestation"\]/);
    }
  });

  test('the scheduler binds alpha\'s pod; beta may not', () => {
    const lookup = lookupOf('sbx-1', found(alphaPod()));
    allows(named('binding', 'sbx-1', SCHEDULER), POLICY, lookup);
    denies(named('binding', 'sbx-1', JANITOR_B, {}, true), 'guard.cross-environment', POLICY, lookup);
  });

  test('a runner pod (unstamped, its service account acting for alpha) cannot be evicted by beta', () => {
    const runner: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'runner-0', namespace: 'sandbox-a', labels: { app: 'runner' } } };
    const message = denies(named('eviction', 'runner-0', JANITOR_B), 'guard.cross-environment', POLICY, lookupOf('runner-0', found(runner, 'runner')));
    assert.doesNotMatch(message, /sandbox-a:runner|alpha/);
  });
});

/** What the API server sends for `kubectl exec`, `attach`, `port-forward` and a proxy: a CONNECT that names the pod (or Service) and carries its options. */
function connect(resource: 'pods' | 'services', sub: string, name: string, userInfo: UserInfo): Review {
  const options: Record<string, string> = { exec: 'PodExecOptions', attach: 'PodAttachOptions', portforward: 'PodPortForwardOptions', proxy: resource === 'pods' ? 'PodProxyOptions' : 'ServiceProxyOptions' };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '5d6e7f80-0000-4000-8000-000000000002',
      kind: { group: '', version: 'v1', kind: options[sub] ?? 'PodLogOptions' },
      resource: { group: '', version: 'v1', resource },
      subResource: sub,
      name,
      namespace: 'sandbox-a',
      operation: 'CONNECT',
      userInfo,
      // The options carry no metadata.
      object: { kind: options[sub], apiVersion: 'v1', stdin: true, tty: true, container: 'main', command: ['sh'] },
      oldObject: null,
      dryRun: false,
      options: null,
    },
  } as unknown as Review;
}

describe('CONNECTs into a pod (exec, attach, port-forward, proxy) pass only for the pod\'s environment', () => {
  const SUBS = ['exec', 'attach', 'portforward', 'proxy'] as const;

  test('each needs the pod it names, a proxy\'s name with its port and scheme taken off', () => {
    for (const sub of SUBS) assert.deepEqual(lookupsNeeded(connect('pods', sub, 'sbx-1', JANITOR_B).request, 'validate', FIXTURE_KEYS), [{ resource: 'pods', namespace: 'sandbox-a', name: 'sbx-1', fresh: true }], sub);
    for (const name of ['sbx-1:8080', 'https:sbx-1:8443']) assert.deepEqual(lookupsNeeded(connect('pods', 'proxy', name, JANITOR_B).request, 'validate', FIXTURE_KEYS), [{ resource: 'pods', namespace: 'sandbox-a', name: 'sbx-1', fresh: true }], name);
  });

  test('beta is refused on alpha\'s pod and on alpha\'s runner, naming neither; alpha, its manager and break-glass pass', () => {
    const runner: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'runner-0', namespace: 'sandbox-a' } };
    for (const sub of SUBS) {
      const lookup = lookupOf('sbx-1', found(alphaPod()));
      const message = denies(connect('pods', sub, 'sbx-1', JANITOR_B), 'guard.connect', POLICY, lookup);
      assert.doesNotMatch(message, /alpha/);
      denies(connect('pods', sub, 'runner-0', JANITOR_B), 'guard.connect', POLICY, lookupOf('runner-0', found(runner, 'runner')));
      denies(connect('pods', sub, 'sbx-1', ADMIN), 'guard.connect', POLICY, lookup);
      allows(connect('pods', sub, 'sbx-1', RUNNER_A), POLICY, lookup);
      allows(connect('pods', sub, 'sbx-1', RUNNER_CONTROLLER), POLICY, lookup);
      allows(connect('pods', sub, 'sbx-1', { ...ADMIN, groups: ['platform-oncall'] }), POLICY, lookup);
    }
    assert.match(denies(connect('pods', 'exec', 'sbx-1', JANITOR_B), 'guard.connect', POLICY, lookupOf('sbx-1', found(alphaPod()))), /may not exec into it/);
  });

  test('a pod Deed cannot read is refused with the reason; an absent one like another environment\'s', () => {
    const slow = lookupOf('sbx-1', { state: 'unknown', reason: 'get pods: timed out after 2000 ms' });
    assert.match(denies(connect('pods', 'exec', 'sbx-1', RUNNER_A), 'guard.owner-unknown', POLICY, slow), /timed out after 2000 ms/);
    const absent = validateWith(connect('pods', 'exec', 'sbx-1', JANITOR_B), POLICY, lookupOf('sbx-1', { state: 'absent' }));
    const foreign = validateWith(connect('pods', 'exec', 'sbx-1', JANITOR_B), POLICY, lookupOf('sbx-1', found(alphaPod())));
    assert.equal(absent.allowed, false);
    assert.deepEqual(absent.status, foreign.status);
  });

  test("the platform's unstamped pod in a namespace bound to no environment: no environment gets into it or evicts it (guard.shared-input); a principal of no environment may", () => {
    // It serves every environment: whoever execs into it reads what alpha's sandboxes send it.
    const plain: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'tools', namespace: 'sandbox-a' } };
    const lookup = lookupOf('tools', found(plain, 'builder'));
    for (const sub of SUBS) {
      const verb = { exec: 'exec into', attach: 'attach to', portforward: 'port-forward to', proxy: 'proxy to' }[sub];
      assert.match(denies(connect('pods', sub, 'tools', JANITOR_B), 'guard.shared-input', POLICY, lookup), new RegExp(`Pod sandbox-a/tools carries no stamps: it is the platform's, .*acts for "beta" and may not ${verb} it`));
      allows(connect('pods', sub, 'tools', ADMIN), POLICY, lookup);
    }
    assert.match(denies(named('eviction', 'tools', JANITOR_B), 'guard.shared-input', POLICY, lookup), /may not evict it/);
    allows(named('eviction', 'tools', ADMIN), POLICY, lookup);
    // In a namespace bound to alpha, an unstamped pod is alpha's: beta is refused as on any of alpha's, alpha passes.
    const bound: ConfigInput = { ...POLICY, environments: [{ ...POLICY.environments![0]!, namespaces: ['sandbox-a'] }, POLICY.environments![1]!] };
    denies(connect('pods', 'exec', 'tools', JANITOR_B), 'guard.connect', bound, lookup);
    allows(connect('pods', 'exec', 'tools', RUNNER_A), bound, lookup);
  });

  test('in an opted-in namespace, a Service\'s proxy passes only for break-glass and system principals', () => {
    const message = denies(connect('services', 'proxy', 'https:web:8443', RUNNER_A), 'guard.service-proxy', POLICY);
    assert.match(message, /Service sandbox-a\/web/);
    allows(connect('services', 'proxy', 'web', { ...ADMIN, groups: ['platform-oncall'] }), POLICY);
  });

  test('a CONNECT to a subresource Deed does not know, or to another kind, passes unjudged', () => {
    allows(connect('pods', 'log', 'sbx-1', JANITOR_B), POLICY);
    const node = connect('pods', 'exec', 'sbx-1', JANITOR_B);
    node.request.resource = { group: '', version: 'v1', resource: 'nodes' };
    node.request.subResource = 'proxy';
    allows(node, POLICY);
  });
});

describe('runner pods belong to the environment their service account acts for', () => {
  const runner = (): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'runner-0', namespace: 'sandbox-a', uid: '144baa57-4863-4fb3-a622-a0c0ecb4a7ff' }, spec: { serviceAccountName: 'runner', containers: [{ name: 'runner', image: 'r' }] } });

  test('beta deleting alpha\'s runner is refused: the garbage collector would delete what Deed stamped with its owner reference', () => {
    denies(remove(runner(), JANITOR_B), 'guard.cross-environment', POLICY);
  });

  test('the administrator, acting for no environment, is refused; alpha\'s runner controller (a manager) and break-glass are not', () => {
    denies(remove(runner(), ADMIN), 'guard.unmapped', POLICY);
    allows(remove(runner(), RUNNER_CONTROLLER), POLICY);
    allows(remove(runner(), { ...ADMIN, groups: [...ADMIN.groups, 'platform-oncall'] }), POLICY);
  });

  test("a pod of a service account no environment maps is no environment's: the platform's, which no environment's principal deletes; a principal of no environment may", () => {
    const pod = runner();
    pod.spec!.serviceAccountName = 'builder';
    denies(remove(pod, JANITOR_B), 'guard.shared-input', POLICY);
    allows(remove(pod, ADMIN), POLICY);
  });
});

describe('objects whose stamps do not verify belong to no environment', () => {
  const tampered = () => {
    const pod = alphaPod();
    pod.metadata.annotations!['deed.dev/expires-at'] = '2099-01-01T00:00:00Z';
    return pod;
  };

  test('even its label\'s environment may not delete it, and the denial says why', () => {
    const message = denies(remove(tampered(), RUNNER_A), 'attestation.invalid', POLICY);
    assert.match(message, /belongs to no environment whatever its label says \("alpha"\)/);
  });

  test('the garbage collector, the controller manager\'s own identity and break-glass may', () => {
    allows(remove(tampered(), GC), POLICY);
    allows(remove(tampered(), KCM), POLICY);
    allows(remove(tampered(), { ...ADMIN, groups: ['platform-oncall'] }), POLICY);
  });
});

describe('principals', () => {
  test('a break-glass user who is also in an environment\'s group keeps break-glass', () => {
    const both: UserInfo = { username: 'alice', groups: ['alpha-devs', 'platform-oncall', 'system:authenticated'], extra: {} };
    const body = fixture('validate-create-pod-by-runner.json');
    const betaPod = stamped(body, body.request.object, RUNNER_B, POLICY);
    allows(remove(betaPod, both), POLICY);
  });
});

describe('app.kubernetes.io/managed-by is never a stamp', () => {
  const unstamped = (): KubeObject => {
    const pod = structuredClone(fixture('validate-update-pod-label-by-runner.json').request.oldObject) as KubeObject;
    pod.metadata.labels = { ...pod.metadata.labels, 'app.kubernetes.io/managed-by': 'Helm' };
    return pod;
  };

  test('Helm handing an unstamped object to Argo CD is allowed, and so is Helm adopting one', () => {
    allows(update(unstamped(), (o) => (o.metadata.labels!['app.kubernetes.io/managed-by'] = 'argocd'), ADMIN), POLICY);
    const bare = unstamped();
    delete bare.metadata.labels!['app.kubernetes.io/managed-by'];
    allows(update(bare, (o) => (o.metadata.labels!['app.kubernetes.io/managed-by'] = 'Helm'), ADMIN), POLICY);
  });

  test('the value "deed" claims nothing, and a stamped object may hand the label to Helm: its stamps are under the prefix', () => {
    allows(update(unstamped(), (o) => (o.metadata.labels!['app.kubernetes.io/managed-by'] = 'deed'), ADMIN), POLICY);
    allows(update(alphaPod(), (o) => (o.metadata.labels!['app.kubernetes.io/managed-by'] = 'Helm'), RUNNER_A), POLICY);
  });

  test("an object stamped before 0.2.0 (managed-by: deed) still verifies, and its owner may drop the old label", () => {
    const old = alphaPod();
    old.metadata.labels = { ...old.metadata.labels, 'app.kubernetes.io/managed-by': 'deed' };
    allows(update(old, (o) => delete o.metadata.labels!['app.kubernetes.io/managed-by'], RUNNER_A), POLICY);
    denies(update(old, (o) => (o.metadata.labels!['deed.dev/environment'] = 'beta'), RUNNER_A), 'frozen.stamps', POLICY);
  });
});

describe('CREATE', () => {
  test('a client\'s own owner reference to its runner in another namespace is refused', () => {
    const body = fixture('validate-create-pod-by-runner.json');
    body.request.userInfo = RUNNER_B;
    const obj = stamped(body, body.request.object, RUNNER_B, POLICY);
    obj.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: RUNNER_B.extra['authentication.kubernetes.io/pod-uid']![0]! }];
    body.request.object = obj;
    const message = denies(body, 'owner.cross-namespace', POLICY);
    assert.match(message, /cannot resolve in namespace sandbox-a/);
  });

  test('in a namespace bound to alpha, beta may not create; alpha and alpha\'s runner controller may', () => {
    const bound: ConfigInput = { ...POLICY, environments: POLICY.environments!.map((e) => (e.id === 'alpha' ? { ...e, namespaces: ['sandbox-a'] } : e)) };
    for (const webhook of ['mutate', 'validate'] as const) {
      const body = fixture(webhook === 'mutate' ? 'mutate-create-pod-by-other-namespace-runner.json' : 'validate-create-pod-by-runner.json');
      body.request.userInfo = RUNNER_B;
      const d = decide(webhook, body, testContext(bound));
      assert.ok(d.kind === 'review' && !d.response.response.allowed, `${webhook} refuses`);
      if (d.kind === 'review') assert.match(d.response.response.status?.message ?? '', /\[guard\.namespace-binding\] namespace sandbox-a is bound to environment "alpha"/);
    }
    const own = fixture('mutate-create-pod-by-runner.json');
    const mine = decide('mutate', own, testContext(bound));
    assert.ok(mine.kind === 'review' && mine.response.response.allowed);
    const manager = fixture('mutate-create-pod-by-admin.json');
    manager.request.userInfo = RUNNER_CONTROLLER;
    const theirs = decide('mutate', manager, testContext(bound));
    assert.ok(theirs.kind === 'review' && theirs.response.response.allowed && theirs.response.response.patch === undefined, 'a manager creates unstamped, and unmarked: a bound namespace\'s pods are its environment\'s');
  });

  test('a namespace bound to two environments is a policy error', () => {
    const two: ConfigInput = { environments: [{ id: 'alpha', namespaces: ['shared'] }, { id: 'beta', namespaces: ['shared'] }] };
    assert.throws(() => testContext(two), /namespace "shared" is already bound to environment "alpha"/);
  });
});

describe('what a new pod reaches, whoever creates it', () => {
  const ALICE: UserInfo = { username: 'alice', groups: ['system:authenticated'], extra: {} };
  const podBy = (userInfo: UserInfo, change: (spec: Record<string, unknown>) => void) => {
    const body = fixture('validate-create-pod-by-runner.json');
    const obj = structuredClone(body.request.object) as KubeObject;
    delete obj.metadata.labels?.['deed.dev/environment'];
    obj.metadata.annotations = {};
    change(obj.spec!);
    body.request = { ...body.request, namespace: 'sandbox-b', userInfo, object: { ...obj, metadata: { ...obj.metadata, namespace: 'sandbox-b' } } };
    return body;
  };

  test("a requester of no environment may not create a pod that runs as a runner's service account", () => {
    const message = denies(podBy(ALICE, (spec) => (spec.serviceAccountName = 'runner')), 'guard.service-account', POLICY);
    assert.match(message, /service account sandbox-b:runner acts for environment "beta"; alice does not/);
  });

  test("nor may another environment's runner; the environment's own principals and break-glass may", () => {
    const asBeta = podBy(RUNNER_A, (spec) => (spec.serviceAccountName = 'runner'));
    asBeta.request.object = stamped(asBeta, asBeta.request.object, RUNNER_A, POLICY);
    denies(asBeta, 'guard.service-account', POLICY);
    const glass = podBy({ ...ALICE, groups: ['platform-oncall'] }, (spec) => (spec.serviceAccountName = 'runner'));
    glass.request.object!.metadata.labels = { ...glass.request.object!.metadata.labels, 'deed.dev/runner': 'beta' }; // as the mutating webhook marks beta's runner
    allows(glass, POLICY);
  });

  test("a requester of no environment may not mount another environment's claim", () => {
    const lookup = gatheredLookup(new Map([[lookupKey({ resource: 'persistentvolumeclaims', namespace: 'sandbox-b', name: 'sbx-1-workspace' }), found(alphaClaimIn('sandbox-b'))]]), 'not gathered');
    const message = denies(podBy(ALICE, () => {}), 'claim.cross-environment', POLICY, lookup);
    assert.match(message, /a requester acting for no environment may not/);
  });
});

function alphaClaimIn(namespace: string): KubeObject {
  const body = fixture('validate-create-pvc-by-runner.json');
  body.request.namespace = namespace;
  const obj = structuredClone(body.request.object) as KubeObject;
  obj.metadata.namespace = namespace;
  return stamped(body, obj, RUNNER_A, POLICY);
}
