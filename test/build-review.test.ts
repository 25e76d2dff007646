import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../src/admission/types.js';
import { admitted, buildReview, forCreate, forUpdate, InputError, placeInNamespace, requesterFor, stored, type ReviewOperation } from '../src/review/build-review.js';
import { readObjects } from '../src/review/read-objects.js';
import { reviewObject } from '../src/review/run.js';
import { fixture, FIXTURE_POLICY, NOW, testContext } from './helpers.js';

const RUNNER_A = { as: 'system:serviceaccount:sandbox-a:runner', groups: [], podName: 'runner-0', podUid: '144baa57-4863-4fb3-a622-a0c0ecb4a7ff' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The parts of a captured request that do not depend on the moment or the client tool. */
function comparable(request: Record<string, unknown>) {
  const { uid: _uid, options, userInfo, ...rest } = structuredClone(request) as { uid: string; options: Record<string, unknown>; userInfo: { uid?: string; extra: Record<string, string[]> } } & Record<string, unknown>;
  delete userInfo.uid; // the token's own uid, not something the policy reads
  delete userInfo.extra['authentication.kubernetes.io/credential-id'];
  return { ...rest, userInfo, options: { kind: options.kind, apiVersion: options.apiVersion, ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}) } };
}

describe('the AdmissionReview deed review builds is the one the API server sent', () => {
  const cases: Array<[string, ReviewOperation]> = [
    ['mutate-create-pod-by-runner.json', 'CREATE'],
    ['mutate-create-pod-generatename.json', 'CREATE'],
    ['mutate-create-networkpolicy-by-runner.json', 'CREATE'],
    ['mutate-create-pvc-by-runner.json', 'CREATE'],
    ['mutate-create-secret-by-runner.json', 'CREATE'],
    ['validate-update-pod-label-by-runner.json', 'UPDATE'],
    ['validate-delete-pod-by-runner.json', 'DELETE'],
  ];
  for (const [name, operation] of cases)
    test(`${name} rebuilt from its object and runner-0's identity`, () => {
      const captured = fixture(name).request as Record<string, unknown> & { object: KubeObject | null; oldObject: KubeObject | null };
      const now = NOW;
      const ctx = testContext();
      const old = captured.oldObject ? stored(placeInNamespace(captured.oldObject, undefined, name), name, now, ctx.randomBytes) : null;
      const object = captured.object
        ? operation === 'CREATE'
          ? forCreate(placeInNamespace(captured.object, undefined, name), name)
          : forUpdate(placeInNamespace(captured.object, undefined, name), old!, name)
        : null;
      const subject = (object ?? old)!;
      const built = buildReview({ uid: 'u', operation, object, oldObject: old, userInfo: requesterFor(RUNNER_A, subject.metadata.namespace) });
      assert.equal(built.apiVersion, 'admission.k8s.io/v1');
      assert.equal(built.kind, 'AdmissionReview');
      assert.deepEqual(comparable(built.request as unknown as Record<string, unknown>), comparable(captured));
    });

  test('the validating side sees a uid, a creation time and generateName resolved with the API server alphabet', () => {
    const ctx = testContext();
    const obj = fixture('mutate-create-pod-generatename.json').request.object as KubeObject;
    const out = admitted(obj, NOW, ctx.randomBytes);
    assert.match(out.metadata.name!, /^probe-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.match(fixture('validate-create-pod-generatename.json').request.object.metadata.name as string, /^probe-[bcdfghjklmnpqrstvwxz2456789]{5}$/, 'as the captured one');
    assert.match(out.metadata.uid!, UUID);
    assert.equal(out.metadata.creationTimestamp, '2026-11-29T15:24:34Z');
    assert.equal(obj.metadata.uid, undefined, 'the input is not changed');
  });
});

describe('requesters', () => {
  test('without --as: the default service account of the object namespace, with the groups the API server adds', () => {
    assert.deepEqual(requesterFor({ groups: [] }, 'team-x'), {
      username: 'system:serviceaccount:team-x:default',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team-x', 'system:authenticated'],
      extra: {},
    });
  });

  test('a user that is not a service account gets its --as-group values and system:authenticated only', () => {
    assert.deepEqual(requesterFor({ as: 'kube-lab-admin', groups: ['system:masters'] }, 'x'), { username: 'kube-lab-admin', groups: ['system:masters', 'system:authenticated'], extra: {} });
  });

  const refused: Array<[string, Parameters<typeof requesterFor>[0], RegExp]> = [
    ['a pod name without its uid', { as: 'system:serviceaccount:a:b', groups: [], podName: 'p' }, /go together/],
    ['pod extras on a user that is not a service account', { as: 'alice', groups: [], podName: 'p', podUid: 'u' }, /need a service-account requester/],
  ];
  for (const [name, flags, message] of refused)
    test(`${name} is an input error`, () => assert.throws(() => requesterFor(flags, 'a'), (err: unknown) => err instanceof InputError && message.test(err.message)));
});

describe('placing and preparing objects', () => {
  const pod = (meta: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: meta });

  test('an object without a namespace goes to --namespace, else default; a Namespace has none', () => {
    assert.equal(placeInNamespace(pod({ name: 'p' }), 'team-x', 'f').metadata.namespace, 'team-x');
    assert.equal(placeInNamespace(pod({ name: 'p' }), undefined, 'f').metadata.namespace, 'default');
    assert.equal(placeInNamespace({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', namespace: 'x' } }, 'team-x', 'f').metadata.namespace, undefined);
  });

  test('a namespace contradicting --namespace is an input error, as with kubectl', () => {
    assert.throws(() => placeInNamespace(pod({ name: 'p', namespace: 'a' }), 'b', 'f#1'), /f#1: the object's namespace a does not match --namespace b/);
  });

  test('a create drops the fields only the API server sets (kubectl get -o yaml output)', () => {
    const out = forCreate(pod({ name: 'p', uid: 'x', resourceVersion: '1', creationTimestamp: 't', generation: 2, labels: { a: 'b' } }), 'f');
    assert.deepEqual(out.metadata, { name: 'p', labels: { a: 'b' } });
  });

  test('a create needs a name or a generateName', () => {
    assert.throws(() => forCreate(pod({}), 'f#2'), /f#2: metadata\.name or metadata\.generateName is required/);
  });

  test('an update keeps the stored uid and refuses a different object on the two sides', () => {
    const old = pod({ name: 'p', namespace: 'a', uid: 'u-1', creationTimestamp: 't' });
    assert.equal(forUpdate(pod({ name: 'p', namespace: 'a' }), old, 'f').metadata.uid, 'u-1');
    assert.throws(() => forUpdate(pod({ name: 'q', namespace: 'a' }), old, 'f'), /the same object on both sides/);
  });
});

describe('reading objects', () => {
  test('documents, a List and a PodList are read in order; empty documents are skipped', () => {
    const text = [
      'apiVersion: v1\nkind: Pod\nmetadata: {name: a}',
      '',
      'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n- {apiVersion: v1, kind: Pod, metadata: {name: c}}',
      '{"apiVersion": "v1", "kind": "PodList", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d"}}]}',
    ].join('\n---\n');
    assert.deepEqual(
      readObjects(text, 'in.yaml').map((s) => `${s.where} ${s.object.kind}/${s.object.metadata.name}`),
      ['in.yaml#1 Pod/a', 'in.yaml#3.items[0] Secret/b', 'in.yaml#3.items[1] Pod/c', 'in.yaml#4.items[0] Pod/d'],
    );
  });

  const bad: Array<[string, string, RegExp]> = [
    ['nothing at all', '---\n', /no objects found/],
    ['a scalar', 'hello', /expected a Kubernetes object, got string/],
    ['a list item without apiVersion', 'kind: List\napiVersion: v1\nitems:\n- {kind: Pod}', /#1\.items\[0\]: apiVersion is required/],
    ['an alias bomb', `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 12 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`).join('\n')}\n`, /alias/i],
  ];
  for (const [name, text, message] of bad)
    test(`${name} is an input error`, () => assert.throws(() => readObjects(text, 'in.yaml'), (err: unknown) => err instanceof InputError && message.test(err.message)));
});

describe('the review runner', () => {
  test('a CREATE goes through mutate, then validate on the final object, each call with a uid of its own', () => {
    const obj = forCreate(fixture('mutate-create-pod-generatename.json').request.object as KubeObject, 'f');
    const r = reviewObject({ operation: 'CREATE', object: obj, oldObject: null, userInfo: requesterFor(RUNNER_A, 'sandbox-a') }, testContext());
    assert.deepEqual(r.steps.map((s) => [s.webhook, s.verdict.allowed]), [['mutate', true], ['validate', true]]);
    assert.ok(r.steps.every((s) => UUID.test(s.uid) && s.response.response.uid === s.uid));
    assert.notEqual(r.steps[0]!.uid, r.steps[1]!.uid);
    assert.equal(r.allowed, true);
    assert.ok(r.patch.length > 0);
    assert.equal(r.result!.metadata.labels!['deed.dev/environment'], 'alpha');
    assert.equal(r.result!.metadata.name, undefined, 'the printed object leaves generateName to the API server');
    assert.equal(obj.metadata.labels, undefined, 'the input object is not changed');
  });

  test('a CREATE denied by the mutating side never reaches the validating side', () => {
    const obj = forCreate(fixture('mutate-create-pod-by-runner.json').request.object as KubeObject, 'f');
    obj.metadata.annotations!['deed.dev/create-nonce'] = 'short';
    const r = reviewObject({ operation: 'CREATE', object: obj, oldObject: null, userInfo: requesterFor(RUNNER_A, 'sandbox-a') }, testContext());
    assert.deepEqual(r.steps.map((s) => s.webhook), ['mutate']);
    assert.equal(r.allowed, false);
    assert.equal(r.result, null);
    assert.deepEqual(r.steps[0]!.verdict.findings.map((f) => f.rule), ['nonce.malformed']);
  });

  test('an UPDATE goes to the mutating webhook, then the validating one (a label change comes out as written); a DELETE to the validating webhook only', () => {
    const body = fixture('validate-update-pod-label-by-runner.json').request;
    // The captured pod carries no attestation: in sandbox-a bound to alpha it is alpha's (in a shared namespace, the platform's).
    const ctx = testContext({ ...FIXTURE_POLICY, environments: FIXTURE_POLICY.environments!.map((e) => (e.id === 'alpha' ? { ...e, namespaces: ['sandbox-a'] } : e)) });
    const update = reviewObject({ operation: 'UPDATE', object: body.object, oldObject: body.oldObject, userInfo: requesterFor(RUNNER_A, 'sandbox-a') }, ctx);
    assert.deepEqual(update.steps.map((s) => s.webhook), ['mutate', 'validate']);
    assert.deepEqual(update.patch, []);
    assert.deepEqual(update.result, body.object);
    const del = reviewObject({ operation: 'DELETE', object: null, oldObject: body.oldObject, userInfo: requesterFor(RUNNER_A, 'sandbox-a') }, ctx);
    assert.deepEqual(del.steps.map((s) => s.webhook), ['validate']);
    assert.equal(del.result, null);
  });

  test('a fault inside Deed is a denial, as in a cluster, with the detail the server would only log', () => {
    const obj = forCreate(fixture('mutate-create-pod-by-runner.json').request.object as KubeObject, 'f');
    const ctx = { ...testContext(), now: () => { throw new Error('clock failure'); } };
    const r = reviewObject({ operation: 'CREATE', object: obj, oldObject: null, userInfo: requesterFor(RUNNER_A, 'sandbox-a') }, ctx);
    assert.equal(r.allowed, false);
    assert.equal(r.steps[0]!.error, 'clock failure');
    assert.deepEqual(r.steps[0]!.verdict.findings.map((f) => f.rule), ['internal.error']);
  });
});
