import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expiresAt, isFreshExpiry } from '../src/policy/stamps/deadline.js';

// expiresAt keeps the text of the last few instants it formatted (stamps/deadline.ts): whatever
// the order and however many instants are asked for, each answer is the instant's own.
const formatted = (nowMs: number, seconds: number) => `${new Date(Math.floor(nowMs / 1000) * 1000 + seconds * 1000).toISOString().slice(0, -5)}Z`;

test('expiresAt answers each instant with its own text, past the memo and back', () => {
  const base = Date.UTC(2026, 11, 6, 15, 0, 0);
  const asks: Array<[number, number]> = [];
  for (let i = 0; i < 40; i++) asks.push([base + ((i * 7919) % 23) * 1000 + (i % 1000), [60, 3600, 5400, 0][i % 4]!]);
  for (const [now, seconds] of [...asks, ...asks.reverse(), ...asks]) assert.equal(expiresAt(now, seconds), formatted(now, seconds));
});

test('expiresAt: the same instant from other (now, seconds) pairs, fractions of a second and non-integral seconds', () => {
  const base = Date.UTC(2026, 0, 1, 0, 0, 0);
  assert.equal(expiresAt(base + 999, 60), '2026-01-01T00:01:00Z');
  assert.equal(expiresAt(base + 60_000, 0), '2026-01-01T00:01:00Z');
  assert.equal(expiresAt(base, 0.5), formatted(base, 0.5));
  assert.equal(expiresAt(base, 1.5), formatted(base, 1.5));
});

test('expiresAt: an invalid instant still throws, and is never remembered', () => {
  assert.throws(() => expiresAt(Number.NaN, 60), RangeError);
  assert.throws(() => expiresAt(0, Number.NaN), RangeError);
  assert.throws(() => expiresAt(8.64e15, 60), RangeError);
  assert.throws(() => expiresAt(Number.NaN, 60), RangeError);
});

test('isFreshExpiry reads the memo the same as a fresh formatting', () => {
  const now = Date.UTC(2026, 11, 6, 15, 30, 0, 250);
  assert.equal(isFreshExpiry(formatted(now, 5400), now, 5400), true);
  assert.equal(isFreshExpiry(formatted(now - 61_000, 5400), now, 5400), false);
  assert.equal(isFreshExpiry(formatted(now + 6_000, 5400), now, 5400), false);
  assert.equal(isFreshExpiry(formatted(now + 5_000, 5400), now, 5400), true);
});
