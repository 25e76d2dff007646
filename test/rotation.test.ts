// The rotation procedure of the README, walked through decide() and the reaper's verdict:
// at every step, and between steps while old and new replicas serve side by side, the
// owner's writes (label changes, finalizer removal), the garbage collector's orphaning
// and the reaper keep working; once the old key is retired, what it signed is unverifiable.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { KubeObject } from '../src/admission/types.js';
import { createKeyRing, singleKeyRing, type KeyRing } from '../src/policy/stamps/key-ring.js';
import { verdict } from '../src/reaper/verdict.js';
import { decodePatch, fixture, FIXTURE_POLICY, NOW, testContext, type Review } from './helpers.js';
import { KEYS } from './reaper-helpers.js';

const OLD = Buffer.from('the-key-before-rotation-0123456789abcdef');
const NEW = Buffer.from('the-key-after-rotation-0123456789abcdef!');

/** The rings of the procedure: before (the pre-ring keyFile), then steps 1 to 3. */
const RINGS: Array<[string, KeyRing]> = [
  ['before: keyFile (key)', singleKeyRing(OLD)],
  ['step 1: key signs, next verifies', createKeyRing([{ id: 'key', key: OLD }, { id: 'next', key: NEW }], 'key', 'v2')],
  ['step 2: next signs, key verifies', createKeyRing([{ id: 'key', key: OLD }, { id: 'next', key: NEW }], 'next', 'v2')],
  ['step 3: key retired', createKeyRing([{ id: 'next', key: NEW }], 'next', 'v2')],
];

const GC = fixture('validate-delete-secret-by-garbage-collector.json').request.userInfo;

/** A pod created through the mutating webhook under `signer` and validated under `validator` (they may be different replicas). */
function create(signer: KeyRing, validator: KeyRing, name: string): KubeObject {
  const body = fixture('mutate-create-pod-by-runner.json');
  body.request.object.metadata.name = name;
  const m = decide('mutate', body, testContext(FIXTURE_POLICY, NOW, signer));
  assert.ok(m.kind === 'review' && m.response.response.allowed, m.kind === 'review' ? m.response.response.status?.message : m.message);
  const obj = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch(m.response)).newDocument as KubeObject;
  const stored = { ...obj, metadata: { ...obj.metadata, uid: `uid-${name}`, finalizers: ['example.com/keep'] } };
  const v = decide('validate', { ...body, request: { ...body.request, object: stored } }, testContext(FIXTURE_POLICY, NOW + 200, validator));
  assert.ok(v.kind === 'review' && v.response.response.allowed, v.kind === 'review' ? v.response.response.status?.message : v.message);
  return stored;
}

function update(ring: KeyRing, oldObject: KubeObject, change: (o: KubeObject) => void, userInfo?: Review['request']['userInfo']) {
  const body = fixture('validate-update-pod-label-by-runner.json');
  const object = structuredClone(oldObject);
  change(object);
  const request = { ...body.request, name: oldObject.metadata.name, oldObject, object, ...(userInfo ? { userInfo } : {}) };
  const d = decide('validate', { ...body, request }, testContext(FIXTURE_POLICY, NOW + 60_000, ring));
  assert.equal(d.kind, 'review');
  return d.kind === 'review' ? d.response.response : assert.fail('unreachable');
}

const removeFinalizer = (o: KubeObject) => delete o.metadata.finalizers;
const relabel = (o: KubeObject) => (o.metadata.labels = { ...o.metadata.labels, 'example.com/phase': 'done' });
const orphan = (o: KubeObject) => delete o.metadata.ownerReferences;

function reaperSays(ring: KeyRing, obj: KubeObject) {
  return verdict(obj, 'Pod', { environment: 'alpha', keys: KEYS, keyRing: ring, inReviewScope: () => true, now: NOW + 3 * 3_600_000, deadlineGraceSeconds: 900, leaseGraceSeconds: 300, runLeases: false }, { state: 'absent' });
}

describe('rotating the attestation key, step by step', () => {
  // Each step is rolled out while the previous step's replicas still serve: the object may be
  // created under either, and written under either.
  for (let step = 1; step < RINGS.length; step++) {
    const [prevName, prev] = RINGS[step - 1]!;
    const [name, ring] = RINGS[step]!;
    const pairs: Array<[KeyRing, KeyRing]> = [
      [prev, prev],
      [prev, ring],
      [ring, prev],
      [ring, ring],
    ];
    test(`rolling out ${name} over ${prevName}: an object made by either replica can be relabelled, orphaned and have its finalizer removed at either`, () => {
      for (const [signer, validator] of pairs) {
        const obj = create(signer, validator, `sbx-${step}`);
        for (const writer of [prev, ring]) {
          for (const [what, change, who] of [
            ['relabel', relabel, undefined],
            ['finalizer removal', removeFinalizer, undefined],
            ['orphaning by the garbage collector', orphan, GC],
          ] as const) {
            const r = update(writer, obj, change, who);
            assert.equal(r.allowed, true, `${what} under ${writer.signingKeyId}: ${r.status?.message}`);
          }
        }
      }
    });
  }

  test('objects signed before rotation (v1) and in step 1 (v2:key) keep verifying through step 2, and the reaper still reaps them', () => {
    const [, before] = RINGS[0]!;
    const [, step1] = RINGS[1]!;
    const [, step2] = RINGS[2]!;
    for (const obj of [create(before, before, 'v1-pod'), create(step1, step1, 'v2-key-pod')]) {
      assert.equal(update(step2, obj, removeFinalizer).allowed, true);
      assert.equal(reaperSays(step2, obj).action, 'reap');
    }
  });

  test('after step 3, what the retired key signed no longer verifies: UPDATE is denied as attestation.invalid, naming the key, and the reaper skips it', () => {
    const [, step1] = RINGS[1]!;
    const [, step3] = RINGS[3]!;
    const leftover = create(step1, step1, 'leftover');
    const r = update(step3, leftover, removeFinalizer);
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /\[attestation\.invalid\].*names key "key", which is not in the key ring/);
    const v = reaperSays(step3, leftover);
    assert.equal(v.action, 'skip');
    assert.equal(v.code, 'attestation-invalid');
    assert.match(v.reason, /names key "key"/);
  });

  test('a v1 object left over after step 3 is unverifiable too', () => {
    const [, before] = RINGS[0]!;
    const [, step3] = RINGS[3]!;
    const r = update(step3, create(before, before, 'v1-leftover'), relabel);
    assert.match(r.status?.message ?? '', /\[attestation\.invalid\].*under any key of the ring/);
  });
});
