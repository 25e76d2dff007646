// The lookup cache's packed record of an object (lookup-facts.ts, StoredFacts) answers
// exactly what the plain projection (factsOf) does: a lookup cannot depend on which one it got.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DECODED_FACTS_KEPT, ENTRY_BYTES_PER_READ, factsFromStored, factsOf, KEPT_READS_BYTES, MAX_HASHED_READS, MAX_STAMP_VALUE, OVERSIZED, readHash, READS_ANY_NAME, readsOfStored, storedFactsOf } from '../src/kube/lookup-facts.js';

const owner = { apiVersion: 'v1', kind: 'Pod', name: 'runner-7', uid: '5f1c8a52-58c5-4e71-9f4c-1d5d8f7f6a10', controller: true };
const stamped = {
  uid: 'a7e2c1d0-0000-4000-8000-000000000001',
  labels: { 'deed.dev/managed': 'true', 'deed.dev/environment': 'alpha', 'deed.dev/owner-uid': owner.uid, app: 'web' },
  annotations: {
    'deed.dev/owner': 'runner-7',
    'deed.dev/create-nonce': 'q3Jm9yS0b7tZ3mQ1cD2e8w',
    'deed.dev/expires-at': '2026-12-03T15:00:00Z',
    'deed.dev/attestation': 'v1:k1:3bq7yT0pC9m2d1oV5xLkZr8N4sW6aE0uJ7hG2fB9cQk',
    'deed.dev/run-lease': 'run-7',
    'deed.dev/terminal': 'true',
    'kubectl.kubernetes.io/last-applied-configuration': '{"big":"'.padEnd(400, 'x'),
  },
  ownerReferences: [owner],
};

const cases: Record<string, { metadata?: Record<string, unknown>; spec?: unknown }> = {
  'a stamped object owned by its runner': { metadata: stamped },
  'a pod with a service account and a deletion under way': { metadata: { ...stamped, deletionTimestamp: '2026-12-03T14:00:00Z' }, spec: { serviceAccountName: 'runner' } },
  'no labels, no annotations, no uid': { metadata: {} },
  'no metadata at all': {},
  // A stamp key written where Deed does not write it is kept where it was written.
  'an annotation key among the labels and a label key among the annotations': {
    metadata: { labels: { 'deed.dev/attestation': 'x', 'deed.dev/workspace': 'true' }, annotations: { 'deed.dev/environment': 'beta', 'deed.dev/max-duration-seconds': '600' } },
  },
  'an owner reference that is not the controller': { metadata: { ...stamped, ownerReferences: [{ ...owner, controller: false }] } },
  'keys of another prefix only': { metadata: { labels: { 'deed.devx/environment': 'alpha', 'other.dev/environment': 'beta' } } },
};

describe('the lookup cache\'s compact record', () => {
  for (const [name, obj] of Object.entries(cases)) {
    test(`${name}: the same facts as factsOf`, () => {
      const stored = storedFactsOf(obj as never, 'deed.dev');
      assert.deepEqual(factsFromStored(stored, 'deed.dev'), factsOf(obj as never, 'deed.dev'));
      // A relist keeps the record it holds when the new one is equal: the same object, the same string.
      assert.equal(storedFactsOf(structuredClone(obj) as never, 'deed.dev'), stored);
    });
  }

  test('under the prefix only Deed\'s own keys are kept, each value bounded: a tenant\'s padding costs the cache nothing', () => {
    const pad = 'x'.repeat(240_000);
    const obj = {
      metadata: {
        uid: 'u',
        labels: { 'deed.dev/environment': 'alpha', 'deed.dev/sandbox': 'enabled', 'deed.dev/pad': 'y' },
        annotations: { 'deed.dev/pad': pad, 'deed.dev/attestation': pad, 'deed.dev/owner': 'runner-7', 'deed.devpad/x': pad },
      },
    };
    const facts = factsOf(obj as never, 'deed.dev');
    assert.deepEqual(facts.labels, { 'deed.dev/environment': 'alpha', 'deed.dev/sandbox': 'enabled' }, 'the opt-in label the scope reads is kept');
    assert.deepEqual(facts.annotations, { 'deed.dev/attestation': OVERSIZED, 'deed.dev/owner': 'runner-7' }, 'an over-long stamp is kept as a value no stamp accepts');
    const stored = storedFactsOf(obj as never, 'deed.dev');
    assert.ok(stored.length < 200, `the record is ${stored.length} characters`);
    assert.deepEqual(factsFromStored(stored, 'deed.dev'), facts);
    const longest = { metadata: { annotations: { 'deed.dev/workspace-grants': 'g'.repeat(MAX_STAMP_VALUE) } } };
    assert.equal(factsOf(longest as never, 'deed.dev').annotations?.['deed.dev/workspace-grants'], 'g'.repeat(MAX_STAMP_VALUE), 'a value at the bound is kept as it is');
  });

  test('an annotation cannot pass for another field: values with quotes, brackets and newlines come back as they were', () => {
    const obj = { metadata: { uid: 'u', annotations: { 'deed.dev/owner': '"],[1,"x"]\n\u2028', 'deed.dev/run-lease': '[' } } };
    assert.deepEqual(factsFromStored(storedFactsOf(obj as never, 'deed.dev'), 'deed.dev'), factsOf(obj as never, 'deed.dev'));
  });

  test('stamps that verify when the object arrives are kept without attestation and nonce, and say so; others are kept whole', () => {
    const seen: unknown[] = [];
    const verified = factsFromStored(storedFactsOf({ metadata: stamped } as never, 'deed.dev', (f) => (seen.push(f), true)), 'deed.dev');
    assert.equal(seen.length, 1);
    assert.equal(verified.stampsVerified, true);
    assert.equal(verified.annotations?.['deed.dev/attestation'], undefined);
    assert.equal(verified.annotations?.['deed.dev/create-nonce'], undefined);
    assert.equal(verified.labels?.['deed.dev/environment'], 'alpha');
    assert.equal(verified.annotations?.['deed.dev/run-lease'], 'run-7');
    const failed = factsFromStored(storedFactsOf({ metadata: stamped } as never, 'deed.dev', () => false), 'deed.dev');
    assert.deepEqual(failed, factsOf({ metadata: stamped } as never, 'deed.dev'), 'kept whole, for the policy to say why');
    const unstamped = { metadata: { uid: 'u', labels: { 'deed.dev/environment': 'alpha' } } };
    assert.deepEqual(factsFromStored(storedFactsOf(unstamped as never, 'deed.dev', () => assert.fail('nothing to verify')), 'deed.dev'), factsOf(unstamped as never, 'deed.dev'));
  });

  test('a record read again is decoded once, frozen, under its own prefix; the decoded ones kept are bounded', () => {
    const stored = storedFactsOf({ metadata: stamped } as never, 'deed.dev');
    const first = factsFromStored(stored, 'deed.dev');
    assert.equal(factsFromStored(stored, 'deed.dev'), first, 'the same decoded facts');
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.labels) && Object.isFrozen(first.annotations) && Object.isFrozen(first.controller));
    assert.throws(() => ((first.labels as Record<string, string>)['deed.dev/environment'] = 'beta'), TypeError, 'a review cannot change what the next one reads');
    const other = factsFromStored(stored, 'other.dev');
    assert.notEqual(other, first);
    assert.equal(other.labels?.['other.dev/environment'], 'alpha', 'decoded under the prefix it was asked with');
    // Past the bound the oldest go first: the first record is decoded anew, equal to before.
    for (let i = 0; i <= DECODED_FACTS_KEPT; i++) factsFromStored(storedFactsOf({ metadata: { uid: `u-${i}` } } as never, 'deed.dev'), 'deed.dev');
    const again = factsFromStored(stored, 'deed.dev');
    assert.notEqual(again, first);
    assert.deepEqual(again, first);
  });

  test("a pod's reads are kept up to KEPT_READS_BYTES; past it the record keeps their hashes, neither names nor 'reads nothing'", () => {
    /** A pod naming `n` Secrets of `length` characters, and one ConfigMap. */
    const pod = (n: number, length: number) => ({
      metadata: { uid: 'p' },
      spec: { serviceAccountName: 'runner', containers: [{ name: 'c', image: 'i', envFrom: [{ configMapRef: { name: 'settings' } }, ...Array.from({ length: n }, (_, i) => ({ secretRef: { name: `${i}-`.padEnd(length, 's') } }))] }] },
    });
    const weight = (n: number, length: number) => n * (length + ENTRY_BYTES_PER_READ) + 'settings'.length + ENTRY_BYTES_PER_READ;
    // At the bound: every name is kept, as factsOf has it.
    const fits = pod(36, 64);
    assert.ok(weight(36, 64) <= KEPT_READS_BYTES, String(weight(36, 64)));
    const kept = storedFactsOf(fits as never, 'deed.dev');
    assert.deepEqual(factsFromStored(kept, 'deed.dev'), factsOf(fits as never, 'deed.dev'));
    assert.equal((readsOfStored(kept) as { secrets: string[] }).secrets.length, 36);
    // One name more is past it.
    const past = pod(37, 64);
    assert.ok(weight(37, 64) > KEPT_READS_BYTES);
    const notKept = factsFromStored(storedFactsOf(past as never, 'deed.dev'), 'deed.dev');
    assert.equal(notKept.reads, undefined);
    assert.equal(notKept.readsNotKept, true);
    assert.equal(notKept.serviceAccountName, 'runner', 'the rest is kept');
    assert.equal(factsOf(past as never, 'deed.dev').reads?.secrets.length, 37, 'a live answer has them all');
    // Past it, the hashes of its names, sorted and one each: the ConfigMap's and the Secrets'.
    const hashes = readsOfStored(storedFactsOf(past as never, 'deed.dev'));
    assert.ok(hashes instanceof Uint32Array);
    const expected = [readHash('configmaps', 'settings'), ...Array.from({ length: 37 }, (_, i) => readHash('secrets', `${i}-`.padEnd(64, 's')))].sort((a, b) => a - b);
    assert.deepEqual([...hashes], expected);
    assert.ok(!hashes.includes(readHash('configmaps', `0-`.padEnd(64, 's'))), 'a name is hashed with its kind');
    // The most a pod may name (256 Secrets of 253 characters, some 65 KB) costs its record some 1.4 KB: 4 bytes a name, as base64.
    const hostile = storedFactsOf(pod(256, 253) as never, 'deed.dev');
    assert.ok(hostile.length < 1_500, `the record is ${hostile.length} characters`);
    assert.equal((readsOfStored(hostile) as Uint32Array).length, 257);
    assert.equal(factsFromStored(hostile, 'deed.dev').readsNotKept, true);
    // 5 x 256 names is what the read plan judges of one pod: at most 5 KiB of hashes. Past it (break-glass), any name may be one it reads.
    assert.equal(MAX_HASHED_READS, 1280);
    const most = storedFactsOf(pod(MAX_HASHED_READS - 1, 8) as never, 'deed.dev');
    assert.equal((readsOfStored(most) as Uint32Array).length, MAX_HASHED_READS);
    assert.ok(most.length < 7_000, `the record is ${most.length} characters`);
    const more = storedFactsOf(pod(MAX_HASHED_READS, 8) as never, 'deed.dev');
    assert.equal(readsOfStored(more), READS_ANY_NAME);
    assert.equal(factsFromStored(more, 'deed.dev').readsNotKept, true);
    // A pod that reads nothing is still told from one whose reads were not kept.
    assert.equal(readsOfStored(storedFactsOf({ metadata: { uid: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as never, 'deed.dev')), undefined);
  });
});
