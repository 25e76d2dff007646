// A whole object written back as its author wrote it (`kubectl replace -f`) carries none of
// Deed's stamps: the mutating webhook keeps them as stored (src/policy/stamps/kept-stamps.ts),
// and the install sends it exactly those UPDATEs (keepStampsCondition, evaluated here as the
// API server would).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { run as runCel } from '@bufbuild/cel';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { AdmissionReviewResponse, KubeObject } from '../src/admission/types.js';
import { keepStampsCondition } from '../src/install/kind-rules.js';
import { dropsEveryStamp, KEPT_STAMPS_WARNING } from '../src/policy/stamps/kept-stamps.js';
import { verifyObject } from '../src/policy/stamps/key-ring.js';
import { decodePatch, fixture, FIXTURE_KEYS, kubectlPatch, testContext, toCel, TEST_RING, type Review } from './helpers.js';

function answer(webhook: Webhook, body: Review): AdmissionReviewResponse {
  const decision = decide(webhook, body, testContext());
  assert.equal(decision.kind, 'review');
  return decision.response;
}

/** The Secret as the runner wrote it, and as Deed stored it (stamped, with the owner reference to runner-0). */
function written(): { manifest: KubeObject; stored: KubeObject; create: Review } {
  const create = fixture('mutate-create-secret-by-runner.json');
  const manifest = structuredClone(create.request.object) as KubeObject;
  const admitted = answer('admit', create);
  assert.equal(admitted.response.allowed, true, admitted.response.status?.message);
  const stored = kubectlPatch(manifest, decodePatch(admitted));
  stored.metadata.uid = '69cb16a8-c0fb-4bf7-80b7-0923932c67a7';
  return { manifest, stored, create };
}

/** An UPDATE of `stored` to `object`, by the create's requester or `userInfo`. */
function update(create: Review, stored: KubeObject, object: KubeObject, userInfo = create.request.userInfo): Review {
  return { ...create, request: { ...create.request, uid: 'u-replace', operation: 'UPDATE', oldObject: stored, object, userInfo, options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' } } };
}

/** The two calls the API server makes: the mutating webhook, its patch applied, then the validating webhook on the result. */
function replaced(body: Review): { mutated: AdmissionReviewResponse; result: KubeObject; validated: AdmissionReviewResponse } {
  const mutated = answer('admit', body);
  assert.equal(mutated.response.allowed, true, mutated.response.status?.message);
  const result = kubectlPatch(body.request.object, decodePatch(mutated));
  return { mutated, result, validated: answer('validate', { ...body, request: { ...body.request, object: result } }) };
}

const OTHER_JANITOR = { username: 'system:serviceaccount:sandbox-b:janitor', groups: ['system:serviceaccounts', 'system:serviceaccounts:sandbox-b', 'system:authenticated'], extra: {} };

/** Whether the install's matchCondition sends this UPDATE to the mutating webhook. */
const sent = (old: KubeObject, obj: KubeObject) => runCel(keepStampsCondition('deed.dev'), { oldObject: toCel(old), object: toCel(obj) } as never);

describe('stamps kept where a write drops every one', () => {
  test("the runner's own manifest written back whole keeps the stamps and the owner reference as stored, with a warning, and passes", () => {
    const { manifest, stored, create } = written();
    const body = update(create, stored, { ...structuredClone(manifest), data: { token: 'bmV3' } });
    // Without the mutating webhook's patch the write is refused: the stamps are frozen.
    const bare = answer('validate', body);
    assert.equal(bare.response.allowed, false);
    assert.match(bare.response.status?.message ?? '', /\[frozen\.stamps\]/);
    assert.match(bare.response.status?.message ?? '', /\[frozen\.owner-reference\]/);

    const { mutated, result, validated } = replaced(body);
    assert.equal(validated.response.allowed, true, validated.response.status?.message);
    assert.deepEqual(result.metadata.labels, stored.metadata.labels);
    assert.deepEqual(result.metadata.annotations, stored.metadata.annotations);
    assert.deepEqual(result.metadata.ownerReferences, stored.metadata.ownerReferences);
    assert.equal((result as { data?: Record<string, string> }).data?.token, 'bmV3', "the write's own change stands");
    assert.equal(verifyObject(TEST_RING, result, FIXTURE_KEYS, 'Secret', 'sandbox-a').ok, true);
    assert.deepEqual(mutated.response.warnings, [KEPT_STAMPS_WARNING]);
    assert.equal(sent(stored, body.request.object), true);
  });

  test("the write's own labels, annotations and other owner references stay beside the kept stamps, and the terminal mark is kept", () => {
    const { manifest, stored, create } = written();
    stored.metadata.annotations = { ...stored.metadata.annotations, 'deed.dev/terminal': 'true' };
    const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: '11111111-1111-4111-8111-111111111111' };
    const object: KubeObject = { ...structuredClone(manifest), metadata: { ...manifest.metadata, labels: { tier: 'lab' }, annotations: { note: 'x' }, ownerReferences: [other] } };
    const { result, validated } = replaced(update(create, stored, object));
    assert.equal(validated.response.allowed, true, validated.response.status?.message);
    assert.deepEqual(result.metadata.labels, { tier: 'lab', ...stored.metadata.labels });
    assert.deepEqual(result.metadata.annotations, { note: 'x', ...stored.metadata.annotations });
    assert.deepEqual(result.metadata.ownerReferences, [other, ...stored.metadata.ownerReferences!]);
  });

  test('a write that keeps some stamps and drops others is not one: nothing is kept, and the validating webhook refuses it', () => {
    const { stored, create } = written();
    const object = structuredClone(stored);
    delete object.metadata.labels!['deed.dev/environment'];
    delete object.metadata.annotations!['deed.dev/attestation'];
    assert.equal(dropsEveryStamp(stored, object, FIXTURE_KEYS), false);
    assert.equal(sent(stored, object), false);
    const mutated = answer('admit', update(create, stored, object));
    assert.deepEqual(decodePatch(mutated), []);
    const validated = answer('validate', update(create, stored, object));
    assert.equal(validated.response.allowed, false);
    assert.match(validated.response.status?.message ?? '', /deed\.dev\/environment"\]: is frozen at "alpha" and cannot be removed/);
  });

  test("another environment's write of the manifest gets the stamps kept too, and is refused as a write of another environment's object", () => {
    const { manifest, stored, create } = written();
    const { result, validated } = replaced(update(create, stored, structuredClone(manifest), OTHER_JANITOR));
    assert.deepEqual(result.metadata.labels, stored.metadata.labels);
    assert.equal(validated.response.allowed, false);
    assert.match(validated.response.status?.message ?? '', /\[guard\.cross-environment\]/);
    assert.doesNotMatch(validated.response.status?.message ?? '', /frozen/);
  });

  test('an object of no environment, and an ordinary write that keeps the stamps, are not sent and get nothing', () => {
    const { manifest, stored, create } = written();
    const plain = { ...structuredClone(manifest), metadata: { ...manifest.metadata, labels: { app: 'x' } } };
    assert.equal(sent(plain, manifest), false);
    assert.equal(dropsEveryStamp(plain, manifest, FIXTURE_KEYS), false);
    const relabelled = structuredClone(stored);
    relabelled.metadata.labels = { ...relabelled.metadata.labels, tier: 'lab' };
    assert.equal(sent(stored, relabelled), false);
    assert.deepEqual(decodePatch(answer('admit', update(create, stored, relabelled))), []);
    // A write with no metadata maps at all: the condition and the policy agree it drops every stamp.
    const bare: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sbx-1-creds', namespace: 'sandbox-a' } };
    assert.equal(sent(stored, bare), true);
    assert.equal(dropsEveryStamp(stored, bare, FIXTURE_KEYS), true);
  });
});
