// The lookup cache's memory budget (src/server/cache-budget.ts): --cache-memory when given,
// else a quarter of the container's memory limit, else of the machine's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cacheBudget } from '../src/server/cache-budget.js';

const MiB = 1024 * 1024;

test('--cache-memory wins; 0 is a budget of nothing', () => {
  assert.deepEqual(cacheBudget(48, 256 * MiB, 16384 * MiB), { bytes: 48 * MiB, source: '--cache-memory' });
  assert.equal(cacheBudget(0, 256 * MiB, 16384 * MiB).bytes, 0);
});

test("a quarter of the container's memory limit, as its cgroup says", () => {
  const b = cacheBudget(undefined, 256 * MiB, 16384 * MiB);
  assert.equal(b.bytes, 64 * MiB);
  assert.match(b.source, /container's memory limit \(256 MiB\)/);
});

test("without a container limit (0, or the kernel's 'max' read as a huge number), a quarter of the machine's memory", () => {
  for (const none of [0, 2 ** 64]) {
    const b = cacheBudget(undefined, none, 8192 * MiB);
    assert.equal(b.bytes, 2048 * MiB);
    assert.match(b.source, /no container limit/);
  }
});
