// Whose a found object is when the lookup cache verified its stamps on arrival and dropped
// the attestation and nonce (Lookup's stampsVerified): the cache's word stands for the
// verification, and nothing else stands for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ownershipOfFound } from '../src/policy/ownership.js';
import { factsFromStored, factsOf, foundLookup, storedFactsOf } from '../src/kube/lookup-facts.js';
import { verifyObject } from '../src/policy/stamps/key-ring.js';
import { FIXTURE_KEYS, stampedMetadata, testContext, TEST_RING } from './helpers.js';

const ctx = testContext();

test('a Secret of alpha the cache verified is alpha\'s, without its attestation', () => {
  const secret = stampedMetadata('Secret', 'alpha', 'sandbox-a');
  const stored = storedFactsOf(secret as never, 'deed.dev', (f) => verifyObject(TEST_RING, { kind: 'Secret', metadata: { labels: f.labels, annotations: f.annotations } } as never, FIXTURE_KEYS, 'Secret', 'sandbox-a').ok);
  const found = foundLookup(factsFromStored(stored, 'deed.dev'));
  assert.equal(found.stampsVerified, true);
  assert.equal(found.metadata.annotations?.['deed.dev/attestation'], undefined);
  assert.deepEqual(ownershipOfFound(found, 'Secret', 'sandbox-a', ctx.policy, ctx.keyRing), { kind: 'stamped', environment: 'alpha' });
});

test('the same stamps without the attestation and without the cache\'s word are unverifiable (fail closed)', () => {
  const secret = stampedMetadata('Secret', 'alpha', 'sandbox-a');
  const found = foundLookup(factsFromStored(storedFactsOf(secret as never, 'deed.dev', () => true), 'deed.dev'));
  const { stampsVerified: _, ...unvouched } = found;
  assert.equal(ownershipOfFound(unvouched, 'Secret', 'sandbox-a', ctx.policy, ctx.keyRing).kind, 'unverifiable');
});

test('stamps the cache could not verify are kept whole and judged as before', () => {
  const secret = stampedMetadata('Secret', 'alpha', 'sandbox-a');
  secret.metadata.labels!['deed.dev/environment'] = 'beta'; // relabelled through a door Deed did not see
  const found = foundLookup(factsFromStored(storedFactsOf(secret as never, 'deed.dev', () => false), 'deed.dev'));
  assert.equal(found.stampsVerified, undefined);
  assert.deepEqual(found, foundLookup(factsOf(secret as never, 'deed.dev')));
  assert.equal(ownershipOfFound(found, 'Secret', 'sandbox-a', ctx.policy, ctx.keyRing).kind, 'unverifiable');
});
