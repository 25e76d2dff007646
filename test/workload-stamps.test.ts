// Workloads are stamped kinds, decided without a cluster: the stamps an environment's
// Deployment, Job, ... get at CREATE, which kinds get an owner reference to the runner,
// forged stamps refused, and every door guarded (UPDATE, DELETE, /status, /scale). The
// same in a real API server, with the workload controllers running: test/e2e/cases/workloads.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import { verifyObject } from '../src/policy/stamps/key-ring.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { gatheredLookup, planLookups } from '../src/policy/lookup.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { decodePatch, fixture, FIXTURE_KEYS, testContext, TEST_RING, type Review } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- workload bodies reach deep into specs
type Spec = Record<string, any>;

const KEYS = stampKeys('deed.dev');
/** sandbox-a:runner, token bound to pod runner-0 of sandbox-a: environment alpha. */
const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;
const RUNNER_A_UID = '144baa57-4863-4fb3-a622-a0c0ecb4a7ff';
/** sandbox-b:runner: environment beta. */
const RUNNER_B = fixture('mutate-create-pod-by-other-namespace-runner.json').request.userInfo as UserInfo;
const JANITOR_B: UserInfo = { username: 'system:serviceaccount:sandbox-b:janitor', groups: ['system:serviceaccounts', 'system:serviceaccounts:sandbox-b', 'system:authenticated'], extra: {} };
/** Acts for no environment (the fixture policy names no break-glass). */
const NOBODY = fixture('mutate-create-pod-by-admin.json').request.userInfo as UserInfo;
const GC: UserInfo = { username: 'system:serviceaccount:kube-system:generic-garbage-collector', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} };

const KINDS: Record<string, { group: string; resource: string; apiVersion: string }> = {
  Deployment: { group: 'apps', resource: 'deployments', apiVersion: 'apps/v1' },
  ReplicaSet: { group: 'apps', resource: 'replicasets', apiVersion: 'apps/v1' },
  StatefulSet: { group: 'apps', resource: 'statefulsets', apiVersion: 'apps/v1' },
  DaemonSet: { group: 'apps', resource: 'daemonsets', apiVersion: 'apps/v1' },
  Job: { group: 'batch', resource: 'jobs', apiVersion: 'batch/v1' },
  CronJob: { group: 'batch', resource: 'cronjobs', apiVersion: 'batch/v1' },
  ReplicationController: { group: '', resource: 'replicationcontrollers', apiVersion: 'v1' },
};

function workload(kind: string, meta: Spec = {}, selector: Spec = { matchLabels: { app: 'lab' } }): KubeObject {
  const spec = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] };
  const template = { metadata: { labels: { app: 'lab' } }, spec: kind === 'Job' || kind === 'CronJob' ? { ...spec, restartPolicy: 'Never' } : spec };
  const base = { apiVersion: KINDS[kind]!.apiVersion, kind, metadata: { name: 'lab', namespace: 'sandbox-a', ...meta } };
  if (kind === 'CronJob') return { ...base, spec: { schedule: '0 0 1 1 *', jobTemplate: { spec: { template } } } } as KubeObject;
  return { ...base, spec: { replicas: 1, selector, template } } as KubeObject;
}

function review(kind: string, userInfo: UserInfo, more: Spec): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  const r = KINDS[kind]!;
  body.request = {
    ...body.request,
    kind: { group: r.group, version: 'v1', kind },
    resource: { group: r.group, version: 'v1', resource: r.resource },
    requestKind: undefined,
    requestResource: undefined,
    name: 'lab',
    namespace: 'sandbox-a',
    userInfo,
    subResource: undefined,
    ...more,
  };
  return body;
}

function answer(webhook: 'mutate' | 'validate', body: Review, lookup?: ObjectLookup): AdmissionResponse {
  const d = decide(webhook, body, testContext(undefined, undefined, undefined, lookup));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** What the API server stores for a CREATE by `userInfo`: mutated, then validated. */
function created(kind: string, userInfo: UserInfo, meta: Spec = {}, selector?: Spec): KubeObject {
  const body = review(kind, userInfo, { operation: 'CREATE', object: workload(kind, meta, selector), oldObject: null });
  const m = decide('mutate', body, testContext());
  assert.ok(m.kind === 'review' && m.response.response.allowed, m.kind === 'review' ? m.response.response.status?.message : m.message);
  const stored = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch(m.response)).newDocument as KubeObject;
  const v = answer('validate', { ...body, request: { ...body.request, object: stored } });
  assert.equal(v.allowed, true, v.status?.message);
  return stored;
}

function refused(r: AdmissionResponse, pattern: RegExp): void {
  assert.equal(r.allowed, false, 'expected a denial');
  assert.match(r.status?.message ?? '', pattern);
}

describe('workloads are stamped at CREATE', () => {
  for (const kind of Object.keys(KINDS))
    test(`alpha's runner's ${kind} carries alpha's stamps, and its attestation verifies as a ${kind} of sandbox-a`, () => {
      const stored = created(kind, RUNNER_A);
      assert.equal(stored.metadata.labels?.[KEYS.environment], 'alpha');
      assert.equal(stored.metadata.labels?.[KEYS.managed], 'true');
      assert.equal(stored.metadata.labels?.[KEYS.ownerUid], RUNNER_A_UID);
      assert.equal(stored.metadata.annotations?.[KEYS.owner], 'sandbox-a/runner-0');
      assert.match(stored.metadata.annotations?.[KEYS.createNonce] ?? '', /^[0-9a-f]{64}$/);
      assert.equal(stored.metadata.annotations?.[KEYS.expiresAt], undefined, 'no deadline on a workload');
      assert.ok(verifyObject(TEST_RING, stored, KEYS, kind, 'sandbox-a').ok);
      assert.equal(verifyObject(TEST_RING, stored, KEYS, 'Pod', 'sandbox-a').ok, false, 'not as a pod: the kind is signed');
    });

  test('only a Job gets an owner reference to its runner: a per-run Job is collected with it, a lab outlives it', () => {
    assert.deepEqual(created('Job', RUNNER_A).metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: RUNNER_A_UID }]);
    for (const kind of Object.keys(KINDS).filter((k) => k !== 'Job')) assert.equal(created(kind, RUNNER_A).metadata.ownerReferences, undefined, kind);
  });

  test("a Job in another namespace than its runner's gets no owner reference (it could not resolve)", () => {
    // beta's runner lives in sandbox-b; the review is in sandbox-a, which beta may write (unbound).
    const stored = created('Job', RUNNER_B);
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'beta');
    assert.equal(stored.metadata.ownerReferences, undefined);
  });

  test('a principal of no environment gets no stamps', () => {
    // Its selector excludes every environment's pods itself (selector-scope.ts).
    const selector = { matchLabels: { app: 'lab' }, matchExpressions: [{ key: KEYS.environment, operator: 'DoesNotExist' }] };
    const stored = created('Deployment', NOBODY, {}, selector);
    assert.equal(stored.metadata.labels, undefined);
    assert.deepEqual((stored.spec as Spec).selector, selector, 'nor a selector term');
  });

  const forgedMeta = { labels: { [KEYS.environment]: 'beta' }, annotations: { [KEYS.owner]: 'sandbox-b/runner-0', [KEYS.attestation]: `v1:${'A'.repeat(43)}` } };

  test("forged stamps on a Deployment are refused from alpha's runner, on both webhooks", () => {
    const body = review('Deployment', RUNNER_A, { operation: 'CREATE', object: workload('Deployment', forgedMeta), oldObject: null });
    refused(answer('mutate', body), /\[stamp\.conflict\] metadata\.labels\["deed\.dev\/environment"\].*\[attestation\.forged\]|\[attestation\.forged\]/);
    refused(answer('validate', body), /\[stamp\.missing\] metadata\.labels\["deed\.dev\/environment"\]: is "beta", expected "alpha"/);
  });

  test('forged stamps on a Deployment are refused from a principal of no environment by the validating webhook, to which the mutating one leaves them as they are', () => {
    const body = review('Deployment', NOBODY, { operation: 'CREATE', object: workload('Deployment', forgedMeta), oldObject: null });
    const m = answer('mutate', body);
    assert.equal(m.allowed, true);
    // Only the mark of no environment, in the selector and the template it must match (selector-scope.ts).
    assert.deepEqual(decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: m }).map((op) => op.path), ['/spec/selector/matchLabels/deed.dev~1no-environment', '/spec/template/metadata/labels/deed.dev~1no-environment']);
    refused(answer('validate', body), /\[stamp\.forged\] metadata\.annotations\["deed\.dev\/attestation"\]/);
  });
});

describe("a StatefulSet's claims are its environment's", () => {
  const withClaims = (meta: Spec = {}) => {
    const sts = workload('StatefulSet');
    (sts.spec as Spec).volumeClaimTemplates = [{ metadata: { name: 'data', ...meta }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
    return sts;
  };

  test("alpha's StatefulSet's claim templates get alpha's stamps, with no runner: the claims its controller copies from them verify as alpha's", () => {
    const body = review('StatefulSet', RUNNER_A, { operation: 'CREATE', object: withClaims(), oldObject: null });
    const m = decide('mutate', body, testContext());
    assert.ok(m.kind === 'review' && m.response.response.allowed);
    const stored = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch(m.response)).newDocument as KubeObject;
    assert.equal(answer('validate', { ...body, request: { ...body.request, object: stored } }).allowed, true);
    const template = (stored.spec as Spec).volumeClaimTemplates[0].metadata;
    assert.equal(template.labels[KEYS.environment], 'alpha');
    assert.equal(template.labels[KEYS.ownerUid], undefined, 'no runner: a lab\'s claims outlive it');
    // The controller's claim: the template's metadata, a name of its own, the selector's labels.
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { ...template, name: 'data-lab-0', namespace: 'sandbox-a' } } as KubeObject;
    assert.ok(verifyObject(TEST_RING, claim, KEYS, 'PersistentVolumeClaim', 'sandbox-a').ok);
  });

  test("alpha's claim template stamps copied into beta's StatefulSet are refused", () => {
    const body = review('StatefulSet', RUNNER_A, { operation: 'CREATE', object: withClaims(), oldObject: null });
    const m = decide('mutate', body, testContext());
    assert.ok(m.kind === 'review');
    const stored = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch(m.response)).newDocument as KubeObject;
    const copied = (stored.spec as Spec).volumeClaimTemplates[0].metadata;
    const beta = review('StatefulSet', RUNNER_B, { operation: 'CREATE', object: withClaims({ labels: copied.labels, annotations: copied.annotations }), oldObject: null });
    refused(answer('validate', beta), /\[stamp\.template\] spec\.volumeClaimTemplates\[name=data\]\.metadata/);
  });

  test('a claim template carries no owner references: the statefulset controller copies them onto its claims unreviewed (a blocking one holds its owner Terminating); finalizers are the claims\' own', () => {
    const holds = [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'lab7', uid: 'alpha-deploy-uid', blockOwnerDeletion: true },
      { apiVersion: 'v1', kind: 'Secret', name: 'alpha-cred', uid: 'alpha-secret-uid', blockOwnerDeletion: true },
    ];
    const judged = (userInfo: UserInfo, meta: Spec) => {
      const body = review('StatefulSet', userInfo, { operation: 'CREATE', object: withClaims(meta), oldObject: null });
      const m = decide('mutate', body, testContext());
      assert.ok(m.kind === 'review' && m.response.response.allowed);
      const stored = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch(m.response)).newDocument as KubeObject;
      return answer('validate', { ...body, request: { ...body.request, object: stored } });
    };
    for (const who of [RUNNER_A, JANITOR_B])
      refused(judged(who, { ownerReferences: holds, finalizers: ['hold.example.com/forever'] }), /\[reference\.unknown\] spec\.volumeClaimTemplates\[name=data\]\.metadata\.ownerReferences: the statefulset controller copies these owner references/);
    // Not blocking, nor a controller: still none (the controller writes the claims' own).
    refused(judged(RUNNER_A, { ownerReferences: [{ ...holds[1], blockOwnerDeletion: false }] }), /\[reference\.unknown\] spec\.volumeClaimTemplates\[name=data\]\.metadata\.ownerReferences/);
    const own = judged(RUNNER_A, { finalizers: ['example.com/keep'] });
    assert.equal(own.allowed, true, own.status?.message);
    // The platform's (system:masters by default) and a system principal's are not judged.
    assert.equal(judged(NOBODY, { ownerReferences: holds }).allowed, true);
    assert.equal(answer('validate', review('StatefulSet', GC, { operation: 'CREATE', object: withClaims({ ownerReferences: holds }), oldObject: null })).allowed, true);
  });
});

describe('no template carries the terminal mark', () => {
  test("a Deployment whose pod template carries it is refused, from alpha too: each pod would be born finished, and alpha's reaper would delete it as it is made", () => {
    for (const kind of ['Deployment', 'Job', 'ReplicaSet']) {
      const object = workload(kind);
      const template = kind === 'CronJob' ? (object.spec as Spec).jobTemplate.spec.template : (object.spec as Spec).template;
      template.metadata.annotations = { [KEYS.terminal]: 'true' };
      const body = review(kind, RUNNER_A, { operation: 'CREATE', object, oldObject: null });
      refused(answer('validate', body), new RegExp(`\\[stamp\\.template\\] spec\\.template\\.metadata\\.annotations\\["deed\\.dev/terminal"\\]: deed\\.dev/terminal marks one finished object`));
    }
    created('Deployment', RUNNER_A);
  });

  /** The object as the API server stores it after Deed's mutating webhook, then judged by its validating one. */
  const storedThenValidated = (kind: string, object: KubeObject) => {
    const body = review(kind, RUNNER_A, { operation: 'CREATE', object, oldObject: null });
    const m = decide('mutate', body, testContext());
    assert.ok(m.kind === 'review' && m.response.response.allowed, m.kind === 'review' ? m.response.response.status?.message : m.message);
    const stored = jsonpatch.applyPatch(structuredClone(object), decodePatch(m.response)).newDocument as KubeObject;
    return answer('validate', { ...body, request: { ...body.request, object: stored } });
  };
  const done = { annotations: { [KEYS.terminal]: 'true' } };
  const ephemeral = { name: 'scratch', ephemeral: { volumeClaimTemplate: { metadata: done, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } };

  test("nor a claim template or an ephemeral volume's, once Deed has stamped them for alpha: each claim would be born finished and reaped with its data", () => {
    const sts = workload('StatefulSet');
    (sts.spec as Spec).volumeClaimTemplates = [{ metadata: { name: 'data', ...done }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
    refused(storedThenValidated('StatefulSet', sts), /\[stamp\.template\] spec\.volumeClaimTemplates\[name=data\]\.metadata\.annotations\["deed\.dev\/terminal"\]/);
    const deployment = workload('Deployment');
    (deployment.spec as Spec).template.spec.volumes = [ephemeral];
    refused(storedThenValidated('Deployment', deployment), /\[stamp\.template\] spec\.template\.spec\.volumes\[name=scratch\]\.ephemeral\.volumeClaimTemplate\.metadata\.annotations\["deed\.dev\/terminal"\]/);
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lab', namespace: 'sandbox-a' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }], volumes: [ephemeral] } } as unknown as KubeObject;
    const body = review('Deployment', RUNNER_A, { operation: 'CREATE', object: pod, oldObject: null });
    body.request.kind = { group: '', version: 'v1', kind: 'Pod' };
    body.request.resource = { group: '', version: 'v1', resource: 'pods' };
    const m = decide('mutate', body, testContext());
    assert.ok(m.kind === 'review' && m.response.response.allowed, m.kind === 'review' ? m.response.response.status?.message : m.message);
    const stored = jsonpatch.applyPatch(structuredClone(pod), decodePatch(m.response)).newDocument as KubeObject;
    refused(answer('validate', { ...body, request: { ...body.request, object: stored } }), /\[stamp\.template\] spec\.volumes\[name=scratch\]\.ephemeral\.volumeClaimTemplate\.metadata\.annotations\["deed\.dev\/terminal"\]/);
  });
});

describe("every door of a stamped workload is guarded", () => {
  const alphas = (kind = 'Deployment') => created(kind, RUNNER_A);

  test("beta's janitor may neither delete alpha's Deployment nor change it, and alpha's runner may do both", () => {
    const old = alphas();
    refused(answer('validate', review('Deployment', JANITOR_B, { operation: 'DELETE', object: null, oldObject: old })), /\[guard\.cross-environment\] system:serviceaccount:sandbox-b:janitor acts for "beta", and this object belongs to another environment/);
    const scaled = structuredClone(old) as Spec;
    scaled.spec.replicas = 0;
    refused(answer('validate', review('Deployment', JANITOR_B, { operation: 'UPDATE', object: scaled, oldObject: old })), /\[guard\.cross-environment\]/);
    assert.equal(answer('validate', review('Deployment', RUNNER_A, { operation: 'UPDATE', object: scaled, oldObject: old })).allowed, true);
    assert.equal(answer('validate', review('Deployment', RUNNER_A, { operation: 'DELETE', object: null, oldObject: old })).allowed, true);
  });

  test('a principal of no environment may not delete it; the garbage collector may', () => {
    const old = alphas('ReplicaSet');
    refused(answer('validate', review('ReplicaSet', NOBODY, { operation: 'DELETE', object: null, oldObject: old })), /\[guard\.unmapped\]/);
    assert.equal(answer('validate', review('ReplicaSet', GC, { operation: 'DELETE', object: null, oldObject: old })).allowed, true);
  });

  test("beta's status write on alpha's StatefulSet is refused", () => {
    const old = alphas('StatefulSet');
    const status = { ...structuredClone(old), status: { currentRevision: 'beta-rev' } } as KubeObject;
    refused(answer('validate', review('StatefulSet', JANITOR_B, { operation: 'UPDATE', subResource: 'status', object: status, oldObject: old })), /\[guard\.cross-environment\]/);
  });

  test("a scale names the workload, whose stamps are looked up: beta's is refused, alpha's admitted, an unknown owner refused", () => {
    const stored = alphas();
    // The API server gives the Scale the workload's uid: the cache answers only for that workload.
    const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'lab', namespace: 'sandbox-a', uid: 'lab-uid' }, spec: { replicas: 0 } };
    const body = (who: UserInfo) => review('Deployment', who, { operation: 'UPDATE', subResource: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, object: scale, oldObject: scale });
    assert.deepEqual(planLookups(body(JANITOR_B), 'validate', FIXTURE_KEYS).lookups, [{ resource: 'deployments', namespace: 'sandbox-a', name: 'lab', uid: 'lab-uid' }]);
    const noUid = { ...scale, metadata: { name: 'lab', namespace: 'sandbox-a' } };
    assert.deepEqual(planLookups(review('Deployment', JANITOR_B, { operation: 'UPDATE', subResource: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, object: noUid, oldObject: noUid }), 'validate', FIXTURE_KEYS).lookups, [{ resource: 'deployments', namespace: 'sandbox-a', name: 'lab', fresh: true }]);
    const found = gatheredLookup(new Map([['deployments/sandbox-a/lab', { state: 'found', metadata: stored.metadata } as Lookup]]), 'not read');
    refused(answer('validate', body(JANITOR_B), found), /\[guard\.cross-environment\] system:serviceaccount:sandbox-b:janitor acts for "beta", and this object belongs to another environment/);
    assert.equal(answer('validate', body(RUNNER_A), found).allowed, true);
    refused(answer('validate', body(RUNNER_A), gatheredLookup(new Map(), 'the API server did not answer')), /\[guard\.owner-unknown\] cannot tell whose Deployment sandbox-a\/lab is \(the API server did not answer\); refusing the scale/);
  });

  test("beta may not scale the platform's unstamped Deployment in a namespace bound to no environment (guard.shared-input), as it may not change its replicas by UPDATE; a principal of no environment may", () => {
    // Scaled to zero, the platform's Deployment serves no environment; scaled up, it takes the namespace's quota.
    const platform = workload('Deployment');
    const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: platform.metadata.name, namespace: 'sandbox-a', uid: 'web-uid' }, spec: { replicas: 0 } };
    const body = (who: UserInfo) => review('Deployment', who, { operation: 'UPDATE', subResource: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, object: scale, oldObject: scale });
    const found = gatheredLookup(new Map([[`deployments/sandbox-a/${platform.metadata.name}`, { state: 'found', metadata: platform.metadata } as Lookup]]), 'not read');
    refused(answer('validate', body(JANITOR_B), found), /\[guard\.shared-input\] Deployment sandbox-a\/.* carries no stamps: it is the platform's, .*acts for "beta" and may not scale it/);
    assert.equal(answer('validate', body(NOBODY), found).allowed, true);
  });

  test('the stamps are frozen on UPDATE, from alpha too; a Job may raise its own activeDeadlineSeconds', () => {
    const old = alphas();
    const relabelled = structuredClone(old);
    relabelled.metadata.labels![KEYS.environment] = 'beta';
    refused(answer('validate', review('Deployment', RUNNER_A, { operation: 'UPDATE', object: relabelled, oldObject: old })), /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/environment"\]: is frozen at "alpha", got "beta"/);
    const job = alphas('Job') as Spec;
    job.spec.activeDeadlineSeconds = 60;
    const longer = structuredClone(job);
    longer.spec.activeDeadlineSeconds = 600;
    assert.equal(answer('validate', review('Job', RUNNER_A, { operation: 'UPDATE', object: longer, oldObject: job })).allowed, true);
    const orphaned = structuredClone(job);
    delete orphaned.metadata.ownerReferences;
    refused(answer('validate', review('Job', RUNNER_A, { operation: 'UPDATE', object: orphaned, oldObject: job })), /\[frozen\.owner-reference\]/);
  });

  test("a workload created before the upgrade (no stamps) is the platform's in an unbound namespace (no environment deletes it), and its bound environment's in a bound one", () => {
    const old = workload('Deployment');
    const body = review('Deployment', JANITOR_B, { operation: 'DELETE', object: null, oldObject: old });
    refused(answer('validate', body), /\[guard\.shared-input\] Deployment sandbox-a\/.* carries no stamps: it is the platform's/);
    const bound = decide('validate', body, testContext({ environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'] }] }));
    assert.ok(bound.kind === 'review');
    refused(bound.response.response, /\[guard\.cross-environment\] .* acts for "beta", and this object belongs to another environment/);
  });
});
