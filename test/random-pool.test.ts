// The pooled CSPRNG behind the create nonce (src/admission/random-pool.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomPool } from '../src/admission/random-pool.js';

test('the pool hands out bytes of the size asked, each draw its own, across refills and beyond the pool size', () => {
  const draw = randomPool(100);
  const seen = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const b = draw(32); // 3 draws per fill of 100 bytes: refills every fourth draw
    assert.equal(b.length, 32);
    seen.add(b.toString('hex'));
  }
  assert.equal(seen.size, 50, 'no draw repeats another');
  assert.equal(draw(500).length, 500, 'a draw larger than the pool is filled on its own');
  const kept = draw(32);
  const copy = Buffer.from(kept);
  draw(32);
  draw(32);
  draw(32); // the pool has been refilled since
  assert.deepEqual(kept, copy, 'a drawn buffer is the caller\'s: later draws do not change it');
  assert.notEqual(kept.toString('hex'), '0'.repeat(64));
});
