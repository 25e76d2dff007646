import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/admission/decide.js';
import { denied } from '../src/admission/verdict.js';
import { fixture, testContext } from './helpers.js';

const ctx = testContext();

function answer(body: unknown) {
  return decide('mutate', body, ctx);
}

describe('bad input gets a clear answer and never a stamp skipped', () => {
  const badWithoutUid: Array<[string, unknown, RegExp]> = [
    ['a JSON array', [], /must be a JSON AdmissionReview object/],
    ['a string', 'hello', /must be a JSON AdmissionReview object/],
    ['null', null, /must be a JSON AdmissionReview object/],
    ['a review without a request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, /request must be an object/],
  ];
  for (const [name, body, pattern] of badWithoutUid) {
    test(`${name} is a bad request (HTTP 400) with a message`, () => {
      const d = answer(body);
      assert.equal(d.kind, 'bad-request');
      assert.match(d.kind === 'bad-request' ? d.message : '', pattern);
    });
  }

  test('a request without a uid is a bad request', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    delete body.request.uid;
    const d = answer(body);
    assert.equal(d.kind, 'bad-request');
    assert.match(d.kind === 'bad-request' ? d.message : '', /request\.uid must be a non-empty string/);
  });

  const badWithUid: Array<[string, (b: ReturnType<typeof fixture>) => void, RegExp]> = [
    ['a v1beta1 review', (b) => (b.apiVersion = 'admission.k8s.io/v1beta1'), /expected apiVersion admission\.k8s\.io\/v1 and kind AdmissionReview/],
    ['a CREATE without an object', (b) => (b.request.object = null), /request\.object is required for CREATE/],
    ['a DELETE without an oldObject', (b) => ((b.request.operation = 'DELETE'), (b.request.object = null)), /request\.oldObject is required for DELETE/],
    ['an object without metadata', (b) => delete b.request.object.metadata, /request\.object\.metadata must be an object/],
    ['a label value that is a number', (b) => (b.request.object.metadata.labels['deed.dev/run-id'] = 42), /labels\["deed\.dev\/run-id"\] must be a string/],
    ['annotations that are a list', (b) => (b.request.object.metadata.annotations = ['x']), /annotations must be an object of strings/],
    ['an unknown operation', (b) => (b.request.operation = 'PATCH'), /request\.operation must be one of/],
    ['groups that are not strings', (b) => (b.request.userInfo.groups = [1]), /groups must be a list of strings/],
    ['extra values that are not lists', (b) => (b.request.userInfo.extra['authentication.kubernetes.io/pod-uid'] = 'x'), /extra\["authentication\.kubernetes\.io\/pod-uid"\] must be a list of strings/],
    ['a dryRun that is a string', (b) => (b.request.dryRun = 'true'), /request\.dryRun must be a boolean/],
    ['an owner reference without a uid', (b) => (b.request.object.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'x' }]), /ownerReferences\[0\]\.uid must be a string/],
  ];
  for (const [name, change, pattern] of badWithUid) {
    test(`${name} is denied with the uid and a reason`, () => {
      const body = fixture('mutate-create-pod-by-runner.json');
      change(body);
      const d = answer(body);
      assert.equal(d.kind, 'review');
      if (d.kind !== 'review') return;
      assert.equal(d.response.response.uid, body.request.uid);
      assert.equal(d.response.response.allowed, false);
      assert.equal(d.response.response.status?.code, 400);
      assert.match(d.response.response.status?.message ?? '', pattern);
    });
  }

  for (const [where, key] of [
    ['labels', '__proto__'],
    ['annotations', '__proto__'],
    ['spec', '__proto__'],
  ] as const) {
    test(`a ${key} key in ${where} is refused with the uid, never merged`, () => {
      const raw = JSON.stringify(fixture('mutate-create-pod-by-runner.json')).replace(`"${where}":{`, `"${where}":{"${key}":{"polluted":"yes"},`);
      const body: unknown = JSON.parse(raw);
      const d = answer(body);
      assert.equal(d.kind, 'review');
      if (d.kind !== 'review') return;
      assert.equal(d.response.response.allowed, false);
      assert.match(d.response.response.status?.message ?? '', /prototype-pollution guard/);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });
  }

  test('a __proto__ key holding a string is ordinary data (a valid ConfigMap key): admitted, created and deleted, never merged', () => {
    const withData = (name: string, where: 'object' | 'oldObject', data: string) => {
      const body = fixture(name);
      // JSON.parse, as on the wire: `__proto__` an own key.
      body.request[where].data = JSON.parse(data) as object;
      return answer(body);
    };
    for (const [name, where] of [['mutate-create-secret-by-runner.json', 'object'], ['validate-delete-secret-by-garbage-collector.json', 'oldObject']] as const) {
      const d = withData(name, where, '{"__proto__":"eA=="}');
      assert.ok(d.kind === 'review' && d.response.response.allowed, `${name}: ${d.kind === 'review' ? d.response.response.status?.message : d.kind}`);
    }
    for (const value of ['null', '[]', '{"x":"y"}']) {
      const d = withData('mutate-create-secret-by-runner.json', 'object', `{"__proto__":${value}}`);
      assert.ok(d.kind === 'review' && /prototype-pollution guard/.test(d.response.response.status?.message ?? ''), `__proto__ holding ${value} is refused`);
    }
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  test('a constructor key holding an object is refused', () => {
    const body = fixture('mutate-create-secret-by-runner.json');
    body.request.object.data.constructor = { prototype: { polluted: 'yes' } };
    const d = answer(body);
    assert.equal(d.kind === 'review' && d.response.response.allowed, false);
  });

  test('a Secret data key named constructor with a string value is an ordinary key', () => {
    const body = fixture('mutate-create-secret-by-runner.json');
    body.request.object.data.constructor = 'c2VjcmV0';
    const d = answer(body);
    assert.equal(d.kind === 'review' && d.response.response.allowed, true);
  });

  test('a label key "constructor" does not read Object.prototype', () => {
    const body = fixture('mutate-create-pod-by-admin.json');
    body.request.object.metadata.annotations = { 'deed.dev/owner': undefined };
    body.request.object.metadata.labels = { run: 'x' };
    const d = answer(JSON.parse(JSON.stringify(body)));
    assert.equal(d.kind === 'review' && d.response.response.allowed, true);
  });

  test('deep nesting is walked without exhausting the stack', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 100_000; i++) deep = (deep.n = {}) as Record<string, unknown>;
    body.request.object.spec.extra = root;
    const d = answer(body);
    assert.equal(d.kind, 'review');
  });

  test('an internal fault denies with the uid instead of throwing', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    const broken = { ...ctx, now: () => { throw new Error('clock broke'); } };
    const d = decide('mutate', body, broken);
    assert.equal(d.kind, 'review');
    if (d.kind !== 'review') return;
    assert.equal(d.response.response.allowed, false);
    assert.equal(d.response.response.status?.code, 500);
    assert.match(d.response.response.status?.message ?? '', /internal error.*3f697299-374d-4b34-a6a3-76107eae9203/);
  });
  describe('a client value is quoted, never copied whole, into the answer and the log line', () => {
    const admit = (annotations: Record<string, string>) => {
      const body = fixture('mutate-create-pod-by-runner.json');
      body.request.object.metadata.annotations = { ...body.request.object.metadata.annotations, ...annotations };
      const d = decide('admit', body, ctx);
      assert.equal(d.kind, 'review');
      return d.kind === 'review' ? d.response.response : undefined;
    };

    test('workspace grants nested thousands deep are a refusal that names the fix, not an internal error', () => {
      const deep = `{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`;
      const r = admit({ 'deed.dev/workspace-grants': deep })!;
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 403, r.status?.message);
      assert.match(r.status?.message ?? '', /grant for "x" must be "ro" or "rw", got a list/);
    });

    test('a duration budget of a megabyte is refused with a short message', () => {
      const r = admit({ 'deed.dev/max-duration-seconds': '9'.repeat(1024 * 1024) })!;
      assert.equal(r.allowed, false);
      assert.match(r.status?.message ?? '', /got "9{77}\.\.\."/);
      assert.ok((r.status?.message ?? '').length < 2_000, `${(r.status?.message ?? '').length} characters`);
    });

    test('a denial of very many findings, or of long ones, stays bounded', () => {
      const many = denied(Array.from({ length: 10_000 }, (_, i) => ({ rule: 'stamp.conflict', path: `metadata.labels[${i}]`, message: 'is admission-owned' })));
      assert.ok(many.message!.length <= 16 * 1024 + 100, `${many.message!.length}`);
      assert.match(many.message!, /; and \d+ more$/);
      const long = denied([{ rule: 'stamp.conflict', message: 'x'.repeat(1024 * 1024) }]);
      assert.ok(long.message!.length < 1_100);
    });
  });
});
