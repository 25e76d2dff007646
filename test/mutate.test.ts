import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/admission/decide.js';
import type { AdmissionReviewResponse, KubeObject } from '../src/admission/types.js';
import { signStamps, verifyObject, verifyStamps } from '../src/policy/stamps/key-ring.js';
import { decodePatch, fixture, kubectlPatch, NOW, testContext, TEST_RING, withObject, FIXTURE_POLICY, type Review } from './helpers.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { createKeyRing, singleKeyRing } from '../src/policy/stamps/key-ring.js';
import type { ConfigInput } from '../src/config/schema.js';

const RUNNER_UID = '144baa57-4863-4fb3-a622-a0c0ecb4a7ff';
const RUNNER_B_UID = 'd33085f3-2ede-4348-92f9-44817b50c45d';
const CLIENT_NONCE = '3f8a2c9e1b7d4f6a0c5e8b2d9f1a3c7e6b4d8f0a2c5e9b1d7f3a6c8e0b2d4f6a';

function review(body: Review, config?: ConfigInput, now = NOW) {
  const decision = decide('mutate', body, testContext(config, now));
  assert.equal(decision.kind, 'review');
  return decision.response;
}

/** Runs the review, applies its patch with kubectl, and checks a second pass is empty. */
function stamp(body: Review, config?: ConfigInput): { out: KubeObject; response: AdmissionReviewResponse } {
  const response = review(body, config);
  assert.equal(response.response.uid, body.request.uid, 'the uid is echoed');
  assert.equal(response.response.allowed, true, response.response.status?.message);
  const ops = decodePatch(response);
  if (ops.length > 0) assert.equal(response.response.patchType, 'JSONPatch');
  const out = kubectlPatch(body.request.object, ops);
  const again = review(withObject(body, out), config);
  assert.equal(again.response.allowed, true);
  assert.equal(again.response.patch, undefined, `a second pass gives no patch, got ${JSON.stringify(decodePatch(again))}`);
  return { out, response };
}

function denial(body: Review, config?: ConfigInput, now = NOW): string {
  const response = review(body, config, now);
  assert.equal(response.response.allowed, false, 'denied');
  assert.equal(response.response.uid, body.request.uid);
  assert.equal(response.response.patch, undefined, 'a denial carries no patch');
  return response.response.status?.message ?? '';
}

function iso(offsetSeconds: number): string {
  return new Date(NOW + offsetSeconds * 1000).toISOString().replace('.000Z', 'Z');
}

function attest(stamps: { kind: string; environment: string; ownerUid?: string; owner?: string; nonce: string; expiresAt?: string }) {
  return signStamps(TEST_RING, { namespace: 'sandbox-a', ...stamps });
}

function pod(mutateMeta: (o: KubeObject) => void = () => {}, base = 'mutate-create-pod-by-runner.json'): Review {
  const body = fixture(base);
  mutateMeta(body.request.object);
  return body;
}

describe('mutating webhook over the captured fixtures', () => {
  test('a runner pod in its own namespace gets env alpha, the owner reference, the kept nonce and a 5400 s deadline', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    const { out } = stamp(body);
    const expected = structuredClone(body.request.object) as KubeObject;
    expected.metadata.labels = {
      'deed.dev/run-id': 'run-42',
      'deed.dev/managed': 'true',
      'deed.dev/environment': 'alpha',
      'deed.dev/owner-uid': RUNNER_UID,
    };
    expected.metadata.annotations = {
      ...expected.metadata.annotations,
      'deed.dev/owner': 'sandbox-a/runner-0',
      'deed.dev/expires-at': iso(5400),
      'deed.dev/attestation': attest({ kind: 'Pod', environment: 'alpha', ownerUid: RUNNER_UID, owner: 'sandbox-a/runner-0', nonce: CLIENT_NONCE, expiresAt: iso(5400) }),
    };
    expected.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: RUNNER_UID }];
    expected.spec!.activeDeadlineSeconds = 5400;
    delete expected.metadata.managedFields; // kubectl patch --local drops managed fields
    assert.deepEqual(out, expected);
  });

  test('the dry-run request gets the same decision as the real one', () => {
    const real = review(fixture('mutate-create-pod-by-runner.json'));
    const dry = review(fixture('mutate-create-pod-by-runner-dryrun.json'));
    assert.deepEqual(decodePatch(dry), decodePatch(real));
    assert.equal(dry.response.allowed, real.response.allowed);
  });

  test('a pod created with generateName is stamped without a name and gets a minted nonce', () => {
    const { out } = stamp(fixture('mutate-create-pod-generatename.json'));
    assert.equal(out.metadata.name, undefined);
    assert.match(out.metadata.annotations!['deed.dev/create-nonce']!, /^[0-9a-f]{64}$/);
    assert.equal(out.metadata.labels!['deed.dev/environment'], 'alpha');
    assert.deepEqual(out.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: RUNNER_UID }]);
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], undefined, 'no budget and no cap: no deadline');
    assert.equal(out.spec!.activeDeadlineSeconds, undefined);
  });

  test('a Secret gets the owner reference and stamps, and no expires-at without a budget or cap', () => {
    const { out } = stamp(fixture('mutate-create-secret-by-runner.json'));
    assert.deepEqual(out.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: RUNNER_UID }]);
    assert.equal(out.metadata.labels!['deed.dev/owner-uid'], RUNNER_UID);
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], undefined);
    assert.deepEqual(out.data, fixture('mutate-create-secret-by-runner.json').request.object.data, 'data untouched');
  });

  test('a Secret gets expires-at when the policy caps deadlines', () => {
    const { out } = stamp(fixture('mutate-create-secret-by-runner.json'), { ...FIXTURE_POLICY, deadline: { capSeconds: 600 } });
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], iso(600));
  });

  test('a NetworkPolicy gets the owner reference and stamps but never a deadline', () => {
    const { out } = stamp(fixture('mutate-create-networkpolicy-by-runner.json'), { ...FIXTURE_POLICY, deadline: { capSeconds: 600 } });
    assert.equal(out.metadata.ownerReferences?.length, 1);
    assert.equal(out.metadata.labels!['deed.dev/environment'], 'alpha');
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], undefined);
  });

  test('a PVC is stamped but never owned by a pod and never gets a deadline', () => {
    const body = fixture('mutate-create-pvc-by-runner.json');
    body.request.object.metadata.annotations['deed.dev/max-duration-seconds'] = '60';
    const { out } = stamp(body, { ...FIXTURE_POLICY, deadline: { capSeconds: 600 } });
    assert.equal(out.metadata.ownerReferences, undefined);
    assert.equal(out.metadata.labels!['deed.dev/owner-uid'], RUNNER_UID, 'owner stamps still say who made it');
    assert.equal(out.metadata.annotations!['deed.dev/owner'], 'sandbox-a/runner-0');
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], undefined);
  });

  test('a runner from another namespace gets env beta and owner stamps but no owner reference', () => {
    const { out } = stamp(fixture('mutate-create-pod-by-other-namespace-runner.json'));
    assert.equal(out.metadata.labels!['deed.dev/environment'], 'beta');
    assert.equal(out.metadata.labels!['deed.dev/owner-uid'], RUNNER_B_UID);
    assert.equal(out.metadata.annotations!['deed.dev/owner'], 'sandbox-b/runner-0');
    assert.equal(out.metadata.ownerReferences, undefined, 'a cross-namespace owner would get the object collected');
  });

  test('a token not bound to a pod gets every stamp but the owner ones', () => {
    const { out } = stamp(fixture('mutate-create-pod-by-unbound-token.json'));
    assert.equal(out.metadata.labels!['deed.dev/environment'], 'alpha');
    assert.equal(out.metadata.labels!['deed.dev/owner-uid'], undefined);
    assert.equal(out.metadata.annotations!['deed.dev/owner'], undefined);
    assert.equal(out.metadata.ownerReferences, undefined);
    assert.match(out.metadata.annotations!['deed.dev/attestation']!, /^v1:/);
  });

  test('the admin, who acts for no environment, passes with no stamp: only the mark of pods of no environment', () => {
    const response = review(fixture('mutate-create-pod-by-admin.json'));
    assert.equal(response.response.allowed, true);
    assert.deepEqual(decodePatch(response), [{ op: 'add', path: '/metadata/labels/deed.dev~1no-environment', value: 'true' }]);
  });
});

describe('unmapped requesters', () => {
  for (const [where, key] of [
    ['labels', 'deed.dev/environment'],
    ['labels', 'deed.dev/managed'],
    ['labels', 'deed.dev/owner-uid'],
    ['annotations', 'deed.dev/owner'],
    ['annotations', 'deed.dev/attestation'],
    ['annotations', 'deed.dev/create-nonce'],
    ['annotations', 'deed.dev/expires-at'],
  ] as const) {
    test(`an unmapped requester setting ${key} is denied as forged`, () => {
      const body = pod((o) => {
        o.metadata[where] = { ...(o.metadata[where] as object), [key]: 'x' };
      }, 'mutate-create-pod-by-admin.json');
      const message = denial(body);
      assert.match(message, /\[stamp\.forged\]/);
      assert.ok(message.includes(key), message);
    });
  }

  test('an unmapped requester may use app.kubernetes.io/managed-by for another tool, with any value', () => {
    for (const value of ['helm', 'deed']) {
      const body = pod((o) => (o.metadata.labels = { 'app.kubernetes.io/managed-by': value }), 'mutate-create-pod-by-admin.json');
      assert.equal(review(body).response.allowed, true, value);
    }
  });

  test('client-declared keys such as run-id do not make an unmapped object forged', () => {
    const body = pod((o) => (o.metadata.labels = { 'deed.dev/run-id': 'r1' }), 'mutate-create-pod-by-admin.json');
    const response = review(body);
    assert.equal(response.response.allowed, true);
    assert.deepEqual(decodePatch(response), [{ op: 'add', path: '/metadata/labels/deed.dev~1no-environment', value: 'true' }]);
  });
});

describe("app.kubernetes.io/managed-by is the applying tool's, not Deed's", () => {
  test("a runner's object labelled managed-by Helm is stamped under Deed's prefix and keeps Helm's label", () => {
    const body = pod((o) => (o.metadata.labels = { ...o.metadata.labels, 'app.kubernetes.io/managed-by': 'Helm' }));
    const { out } = stamp(body);
    assert.equal(out.metadata.labels?.['app.kubernetes.io/managed-by'], 'Helm');
    assert.equal(out.metadata.labels?.['deed.dev/managed'], 'true');
    assert.equal(out.metadata.labels?.['deed.dev/environment'], 'alpha');
  });

  test('Deed does not add app.kubernetes.io/managed-by to an object that has none', () => {
    const { out } = stamp(fixture('mutate-create-pod-by-runner.json'));
    assert.equal(out.metadata.labels?.['app.kubernetes.io/managed-by'], undefined);
  });
});

describe('conflicts with admission-owned keys', () => {
  const cases: Array<[string, (o: KubeObject) => void, RegExp]> = [
    ['an environment label for another environment', (o) => (o.metadata.labels!['deed.dev/environment'] = 'beta'), /deed\.dev\/environment is admission-owned: given "beta", expected "alpha"/],
    ['managed set to false', (o) => (o.metadata.labels!['deed.dev/managed'] = 'false'), /deed\.dev\/managed is admission-owned: given "false", expected "true"/],
    ['an owner-uid of another pod', (o) => (o.metadata.labels!['deed.dev/owner-uid'] = RUNNER_B_UID), new RegExp(`given "${RUNNER_B_UID}", expected "${RUNNER_UID}"`)],
    ['an owner annotation naming another pod', (o) => (o.metadata.annotations!['deed.dev/owner'] = 'sandbox-a/runner-1'), /given "sandbox-a\/runner-1", expected "sandbox-a\/runner-0"/],
    ['an expires-at of its own', (o) => (o.metadata.annotations!['deed.dev/expires-at'] = '2099-01-01T00:00:00Z'), /deed\.dev\/expires-at is admission-owned: given "2099-01-01T00:00:00Z", expected "2026-11-29T16:54:34Z"/],
    ['an attestation of its own', (o) => (o.metadata.annotations!['deed.dev/attestation'] = 'v1:AAAA'), /\[attestation\.forged\]/],
    [
      'an owner reference with the runner uid but another name',
      (o) => (o.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'impostor', uid: RUNNER_UID }]),
      /\[stamp\.conflict\] metadata\.ownerReferences/,
    ],
  ];
  for (const [name, change, pattern] of cases) {
    test(`a runner pod with ${name} is denied, naming the key and both values`, () => {
      const message = denial(pod((o) => change(o)));
      assert.match(message, pattern);
    });
  }

  test('an owner-uid on a request without a pod-bound token is denied: expected absent', () => {
    const body = pod((o) => (o.metadata.labels = { 'deed.dev/owner-uid': RUNNER_UID }), 'mutate-create-pod-by-unbound-token.json');
    assert.match(denial(body), /given "144baa57-4863-4fb3-a622-a0c0ecb4a7ff", expected \(absent\)/);
  });

  test('every conflict is named at once', () => {
    const message = denial(
      pod((o) => {
        o.metadata.labels!['deed.dev/environment'] = 'beta';
        o.metadata.annotations!['deed.dev/owner'] = 'x/y';
        o.metadata.annotations!['deed.dev/create-nonce'] = 'short';
      }),
    );
    assert.match(message, /deed\.dev\/environment/);
    assert.match(message, /deed\.dev\/owner/);
    assert.match(message, /\[nonce\.malformed\]/);
  });

  test('client values equal to what Deed computes are fine', () => {
    const body = pod((o) => {
      o.metadata.labels = { ...o.metadata.labels, 'deed.dev/environment': 'alpha', 'deed.dev/managed': 'true' };
      o.metadata.annotations!['deed.dev/owner'] = 'sandbox-a/runner-0';
      o.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: RUNNER_UID }];
    });
    const { out } = stamp(body);
    assert.equal(out.metadata.ownerReferences?.length, 1, 'the equal owner reference is not duplicated');
  });

  test('an owner reference to another object is kept beside the runner reference', () => {
    const other = { apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: '11111111-2222-3333-4444-555555555555' };
    const { out } = stamp(pod((o) => (o.metadata.ownerReferences = [other])));
    assert.deepEqual(out.metadata.ownerReferences, [other, { apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: RUNNER_UID }]);
  });
});

describe('the create nonce', () => {
  test('a well-formed client nonce is kept', () => {
    const { out } = stamp(fixture('mutate-create-pod-by-runner.json'));
    assert.equal(out.metadata.annotations!['deed.dev/create-nonce'], CLIENT_NONCE);
  });

  test('a missing nonce is minted from the random source, 64 hex characters', () => {
    const body = pod((o) => delete o.metadata.annotations!['deed.dev/create-nonce']);
    const ctx = testContext();
    const expected = ctx.randomBytes(32).toString('hex');
    const { out } = stamp(body);
    assert.equal(out.metadata.annotations!['deed.dev/create-nonce'], expected);
  });

  test('two creates mint two different nonces', () => {
    const ctx = testContext();
    const body = fixture('mutate-create-pod-generatename.json');
    const nonce = () => {
      const ops = decodePatch((decide('mutate', body, ctx) as { response: AdmissionReviewResponse }).response);
      return kubectlPatch(body.request.object, ops).metadata.annotations!['deed.dev/create-nonce'];
    };
    const [a, b] = [nonce(), nonce()];
    assert.match(a!, /^[0-9a-f]{64}$/);
    assert.notEqual(a, b);
  });

  for (const bad of ['', 'ABCDEF'.repeat(10) + 'abcd', 'f'.repeat(63), 'f'.repeat(65), 'g'.repeat(64), ' '.repeat(64)]) {
    test(`a malformed client nonce ${JSON.stringify(bad.slice(0, 12))}… (${bad.length} chars) is denied`, () => {
      assert.match(denial(pod((o) => (o.metadata.annotations!['deed.dev/create-nonce'] = bad))), /\[nonce\.malformed\]/);
    });
  }
});

describe('deadlines', () => {
  test('budget plus margin: 3600 + 1800 = 5400', () => {
    const { out } = stamp(fixture('mutate-create-pod-by-runner.json'));
    assert.equal(out.spec!.activeDeadlineSeconds, 5400);
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], iso(5400));
  });

  test('the margin comes from the policy', () => {
    const { out } = stamp(fixture('mutate-create-pod-by-runner.json'), { ...FIXTURE_POLICY, deadline: { marginSeconds: 60 } });
    assert.equal(out.spec!.activeDeadlineSeconds, 3660);
  });

  test('budget plus margin above the cap is lowered to the cap', () => {
    const { out } = stamp(fixture('mutate-create-pod-by-runner.json'), { ...FIXTURE_POLICY, deadline: { capSeconds: 4000 } });
    assert.equal(out.spec!.activeDeadlineSeconds, 4000);
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], iso(4000));
  });

  test('no budget but a cap: the cap is the deadline', () => {
    const { out } = stamp(fixture('mutate-create-pod-generatename.json'), { ...FIXTURE_POLICY, deadline: { capSeconds: 900 } });
    assert.equal(out.spec!.activeDeadlineSeconds, 900);
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], iso(900));
  });

  test('no budget and no cap: no deadline at all', () => {
    const { out } = stamp(fixture('mutate-create-pod-generatename.json'));
    assert.equal(out.spec!.activeDeadlineSeconds, undefined);
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], undefined);
  });

  test('a lower client activeDeadlineSeconds stands, and expires-at follows it', () => {
    const { out, response } = stamp(pod((o) => (o.spec!.activeDeadlineSeconds = 120)));
    assert.equal(out.spec!.activeDeadlineSeconds, 120);
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], iso(120));
    assert.equal(response.response.warnings, undefined);
  });

  test('a higher client activeDeadlineSeconds is lowered, with a warning', () => {
    const { out, response } = stamp(pod((o) => (o.spec!.activeDeadlineSeconds = 99999)));
    assert.equal(out.spec!.activeDeadlineSeconds, 5400);
    assert.equal(response.response.warnings?.length, 1);
    assert.match(response.response.warnings![0]!, /lowered spec\.activeDeadlineSeconds from 99999 to 5400/);
    assert.ok(response.response.warnings![0]!.length < 120);
  });

  test('a budget given as a label is refused with where it belongs, not silently left at the cap', () => {
    const message = denial(
      pod((o) => {
        delete o.metadata.annotations!['deed.dev/max-duration-seconds'];
        o.metadata.labels = { ...o.metadata.labels, 'deed.dev/max-duration-seconds': '600' };
      }),
      { ...FIXTURE_POLICY, deadline: { capSeconds: 86400 } },
    );
    assert.match(message, /\[budget\.invalid\] metadata\.labels\["deed\.dev\/max-duration-seconds"\]: a duration budget is read from the annotation deed\.dev\/max-duration-seconds, not a label/);
  });

  for (const bad of ['0', '-5', '1h', '01', '3.5', '', ' 60', '99999999999']) {
    test(`a budget of ${JSON.stringify(bad)} is denied`, () => {
      assert.match(denial(pod((o) => (o.metadata.annotations!['deed.dev/max-duration-seconds'] = bad))), /\[budget\.invalid\]/);
    });
  }
});

describe('reinvocation and attestation', () => {
  test('a reinvocation within the same request (seconds later) yields no patch', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    const { out } = stamp(body);
    for (const later of [NOW + 1_000, NOW + 59_000]) {
      const again = decide('mutate', withObject(body, out), testContext(FIXTURE_POLICY, later));
      assert.equal(again.kind === 'review' && again.response.response.allowed, true);
      assert.equal(again.kind === 'review' && again.response.response.patch, undefined);
    }
  });

  test('a replica whose clock runs a few seconds behind still takes the reinvocation as Deed\'s own', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    const { out } = stamp(body);
    const again = decide('mutate', withObject(body, out), testContext(FIXTURE_POLICY, NOW - 4_000));
    assert.equal(again.kind === 'review' && again.response.response.patch, undefined);
  });

  test('a CREATE carrying a copy of an older object\'s stamps and attestation (same runner) is not a reinvocation: its expiry is stale', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    const { out } = stamp(body);
    // An hour later the same runner creates a new pod with the first one's stamps pasted in.
    const message = denial(withObject(body, out), undefined, NOW + 3_600_000);
    assert.match(message, /\[attestation\.forged\]/);
    assert.match(message, /\[stamp\.conflict\] metadata\.annotations\["deed\.dev\/expires-at"\]: deed\.dev\/expires-at is admission-owned: given "2026-11-29T16:54:34Z", expected "2026-11-29T17:54:34Z"/);
  });

  test('a copy made after the reinvocation window is refused even though the copied expiry has not passed yet', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    const { out } = stamp(body);
    assert.match(denial(withObject(body, out), undefined, NOW + 61_000), /\[attestation\.forged\]/);
  });

  test('a copy of a network policy\'s stamps (no expiry) is exactly what this admission writes, and passes unchanged', () => {
    const body = fixture('mutate-create-networkpolicy-by-runner.json');
    const { out } = stamp(body);
    const later = decide('mutate', withObject(body, out), testContext(FIXTURE_POLICY, NOW + 3_600_000));
    assert.equal(later.kind === 'review' && later.response.response.allowed, true);
    assert.equal(later.kind === 'review' && later.response.response.patch, undefined);
  });

  test('a reinvocation signed by the previous key of the ring (a replica not yet rolled) is accepted without a patch', () => {
    const previous = createKeyRing([{ id: 'old', key: Buffer.from('old-key-old-key-old-key-old-key-old-key!') }, { id: 'new', key: Buffer.from('new-key-new-key-new-key-new-key-new-key!') }], 'old', 'v2');
    const current = { ...previous, signingKeyId: 'new' };
    const body = fixture('mutate-create-pod-by-runner.json');
    const first = decide('mutate', body, testContext(FIXTURE_POLICY, NOW, previous));
    assert.ok(first.kind === 'review' && first.response.response.allowed);
    const out = kubectlPatch(body.request.object, decodePatch(first.kind === 'review' ? first.response : (undefined as never)));
    assert.match(out.metadata.annotations!['deed.dev/attestation']!, /^v2:old:/);
    const again = decide('mutate', withObject(body, out), testContext(FIXTURE_POLICY, NOW + 500, current));
    assert.equal(again.kind === 'review' && again.response.response.allowed, true);
    assert.equal(again.kind === 'review' && again.response.response.patch, undefined);
  });

  test('stamps copied from another requester do not verify for this one', () => {
    const { out } = stamp(fixture('mutate-create-pod-by-other-namespace-runner.json'));
    const copied = withObject(fixture('mutate-create-pod-by-runner.json'), out);
    const message = denial(copied);
    assert.match(message, /\[attestation\.forged\]/);
    assert.match(message, /expected "alpha"/);
  });

  test('an edited expires-at breaks the attestation', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    const { out } = stamp(body);
    out.metadata.annotations!['deed.dev/expires-at'] = '2099-01-01T00:00:00Z';
    assert.match(denial(withObject(body, out)), /\[attestation\.forged\]/);
  });

  test('the attestation verifies over the stamps and not over changed ones', () => {
    const stamps = { kind: 'Pod', namespace: 'sandbox-a', environment: 'alpha', nonce: CLIENT_NONCE };
    const value = signStamps(TEST_RING, stamps);
    assert.ok(verifyStamps(TEST_RING, stamps, value).ok);
    assert.ok(!verifyStamps(TEST_RING, { ...stamps, environment: 'beta' }, value).ok);
    assert.ok(!verifyStamps(singleKeyRing(Buffer.from('another-key-another-key-another-key!')), stamps, value).ok);
  });
});

describe('requests the mutating side leaves alone or refuses', () => {
  test('an UPDATE passes the mutating side unchanged', () => {
    const response = review(fixture('validate-update-pod-label-by-runner.json'));
    assert.equal(response.response.allowed, true);
    assert.equal(response.response.patch, undefined);
  });

  test('a kind the default row leaves alone (an Event) passes unchanged', () => {
    const body = fixture('mutate-create-secret-by-runner.json');
    body.request.kind = { group: '', version: 'v1', kind: 'Event' };
    body.request.resource = { group: '', version: 'v1', resource: 'events' };
    body.request.object.kind = 'Event';
    const response = review(body);
    assert.equal(response.response.allowed, true);
    assert.equal(response.response.patch, undefined);
  });

  test('a kind with no row of its own (a Service) gets the default row: the stamps, no owner reference', () => {
    const body = fixture('mutate-create-secret-by-runner.json');
    body.request.kind = { group: '', version: 'v1', kind: 'Service' };
    body.request.resource = { group: '', version: 'v1', resource: 'services' };
    body.request.object.kind = 'Service';
    const response = review(body);
    assert.equal(response.response.allowed, true);
    const stored = kubectlPatch(body.request.object, decodePatch(response));
    assert.equal(stored.metadata.labels?.['deed.dev/environment'], 'alpha');
    assert.ok(verifyObject(TEST_RING, stored, stampKeys('deed.dev'), 'Service', 'sandbox-a').ok);
    assert.equal(stored.metadata.ownerReferences, undefined);
  });

  test("a ConfigMap has a row of its own, stamped as a Secret is: the owner reference to the runner pod, and expires-at from its budget", () => {
    const body = fixture('mutate-create-secret-by-runner.json');
    body.request.kind = { group: '', version: 'v1', kind: 'ConfigMap' };
    body.request.resource = { group: '', version: 'v1', resource: 'configmaps' };
    const metadata = { ...body.request.object.metadata, annotations: { ...body.request.object.metadata.annotations, 'deed.dev/max-duration-seconds': '600' } };
    body.request.object = { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { 'run.sh': 'echo hi' } };
    const { out } = stamp(body);
    assert.deepEqual(out.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: RUNNER_UID }]);
    assert.equal(out.metadata.labels!['deed.dev/environment'], 'alpha');
    assert.equal(out.metadata.annotations!['deed.dev/expires-at'], iso(600 + 1800));
    assert.ok(verifyObject(TEST_RING, out, stampKeys('deed.dev'), 'ConfigMap', 'sandbox-a').ok);
    assert.deepEqual(out.data, { 'run.sh': 'echo hi' }, 'data untouched');
  });

  test('a body whose kind disagrees with its resource is denied', () => {
    const body = fixture('mutate-create-secret-by-runner.json');
    body.request.object.kind = 'ConfigMap';
    assert.match(denial(body), /\[request\.malformed\] resource secrets must carry a Secret/);
  });

  test('a requester mapped to two environments is denied as ambiguous', () => {
    const config: ConfigInput = {
      environments: [
        { id: 'alpha', serviceAccounts: ['sandbox-a:runner'] },
        { id: 'gamma', groups: ['team-gamma'] },
      ],
    };
    const body = fixture('mutate-create-pod-by-runner.json');
    body.request.userInfo.groups.push('team-gamma'); // as an authenticating proxy or webhook token authenticator may add
    assert.match(denial(body, config), /\[identity\.ambiguous\].*alpha, gamma/);
  });

  test('malformed pod-bound token extras are denied, not ignored', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    body.request.userInfo.extra['authentication.kubernetes.io/pod-uid'] = ['not-a-uid'];
    assert.match(denial(body), /\[identity\.malformed\]/);
  });

  test('a label prefix from the policy renames every key', () => {
    const body = fixture('mutate-create-pod-generatename.json');
    const { out } = stamp(body, { ...FIXTURE_POLICY, labelPrefix: 'sandbox.example.com' });
    assert.equal(out.metadata.labels!['sandbox.example.com/environment'], 'alpha');
    assert.equal(out.metadata.labels!['deed.dev/environment'], undefined);
  });
});
