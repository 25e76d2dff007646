// What a request holds, counted by the body budget: its fixed cost, and a review once parsed (reviewer 83's first attack,
// adapted): a body is held as its bytes, its decoded text and its parsed strings until it is
// answered, and a character past U+00FF makes the text and every parsed string two bytes a
// character. Past what one request may hold (a connection's share, 16 MiB at the default
// budget) a body is answered 413 before it is parsed; the largest reviews the API server
// sends (an UPDATE of a 1.5 MiB object: object and oldObject) still fit.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { DestinationStream } from 'pino';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import { REQUEST_COST_BYTES } from '../src/server/body-budget.js';
import { DEFAULT_LIMITS } from '../src/server/connections.js';
import { fixture, testContext } from './helpers.js';

const MiB = 1024 * 1024;
const logger = createLogger({ write: () => {} } as unknown as DestinationStream);

/** Posts `payload`; reports the status, the answer, and the body bytes held while the review waited for its namespace (the scope wait: up to 1 s). */
async function post(payload: string, url = '/admit?timeout=10s'): Promise<{ status: number; message: string; heldWhileWaiting: number; heldAfter: number }> {
  let heldWhileWaiting = -1;
  const deed = buildApp({
    ctx: testContext(),
    logger,
    awaitScope: async () => {
      heldWhileWaiting = (await deed.metrics.bodyBytesHeld.get()).values[0]!.value;
    },
  });
  try {
    const res = await deed.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });
    const heldAfter = (await deed.metrics.bodyBytesHeld.get()).values[0]?.value ?? 0;
    return { status: res.statusCode, message: (res.json() as { message?: string }).message ?? '', heldWhileWaiting, heldAfter };
  } finally {
    await deed.app.close();
  }
}

/** A pod review whose annotation holds `blob`, for a namespace not opted in (it waits for the scope). */
function podWith(blob: string): string {
  const body = fixture('mutate-create-pod-by-runner.json');
  body.request.namespace = 'not-opted-in';
  body.request.object.metadata.annotations['example.com/blob'] = blob;
  return JSON.stringify(body);
}

/** An UPDATE whose object and oldObject are each about `objectBytes` of JSON, most of it `blob(chars)`. */
function largeUpdate(objectBytes: number, blob: (bytes: number) => string): string {
  const body = fixture('validate-update-pod-label-by-runner.json');
  const req = body.request as unknown as { object: { metadata: { annotations?: Record<string, string> } }; oldObject: { metadata: { annotations?: Record<string, string> } } };
  for (const o of [req.object, req.oldObject]) {
    const rest = Buffer.byteLength(JSON.stringify(o));
    o.metadata.annotations = { ...o.metadata.annotations, 'example.com/blob': blob(objectBytes - rest - 30) };
  }
  return JSON.stringify(body);
}

describe('what a parsed review holds, counted (reviewer 83)', () => {
  test('a 4 MiB body with one character past U+00FF would hold five times its size: answered 413 before it is parsed, saying why', async () => {
    const chars = 4 * MiB;
    const payload = podWith('x'.repeat(chars - 1) + '\u4e2d');
    const res = await post(payload);
    assert.equal(res.status, 413, res.message);
    assert.match(res.message, /too large to parse: its \d+ bytes would take more than 16777216 bytes of memory once decoded and parsed/);
    assert.match(res.message, /it holds a character past U\+00FF \(or bytes that are not UTF-8\), so its text and its parsed strings take two bytes a character/);
    assert.equal(res.heldWhileWaiting, -1, 'never parsed, never decided');
    assert.equal(res.heldAfter, 0, 'what it was granted is given back');
  });

  test('a 2 MiB body with one character past U+00FF is answered, its bytes, text and parsed strings held (two bytes a character) while it waits', async () => {
    const chars = 2 * MiB;
    const payload = podWith('x'.repeat(chars - 1) + '\u4e2d');
    const bytes = Buffer.byteLength(payload);
    const res = await post(payload);
    assert.equal(res.status, 200, res.message);
    assert.ok(res.heldWhileWaiting >= REQUEST_COST_BYTES + bytes + 2 * 2 * payload.length, `the body budget counted ${res.heldWhileWaiting} bytes for a review of ${bytes} bytes holding at least ${bytes + 4 * payload.length}`);
    assert.equal(res.heldAfter, 0, 'given back once answered');
  });

  test('an ASCII body with a \\u escape past U+00FF holds its parsed strings two bytes a character', async () => {
    const chars = 2 * MiB;
    const payload = podWith('x'.repeat(chars)).replace(`"${'x'.repeat(chars)}"`, `"${'x'.repeat(chars)}\\u4e2d"`);
    const bytes = Buffer.byteLength(payload);
    assert.equal(bytes, payload.length, 'ASCII');
    const res = await post(payload);
    assert.equal(res.status, 200, res.message);
    assert.ok(res.heldWhileWaiting >= REQUEST_COST_BYTES + 2 * bytes + 2 * payload.length, `counted ${res.heldWhileWaiting} for ${bytes} bytes`);
  });

  for (const [shape, blob] of [
    ['ASCII', (bytes: number) => 'x'.repeat(bytes)],
    ['all CJK text', (bytes: number) => '\u4e2d'.repeat(Math.floor(bytes / 3))],
    ['ASCII with one emoji', (bytes: number) => 'x'.repeat(bytes - 4) + '\u{1f600}'],
  ] as const)
    test(`the largest review the API server sends, an UPDATE of a 1.5 MiB object (object and oldObject, ${shape}), fits what one request may hold at the default budget`, async (t) => {
      const payload = largeUpdate(1.5 * MiB, blob);
      const bytes = Buffer.byteLength(payload);
      assert.ok(bytes > 3 * MiB && bytes < 3.1 * MiB, `${bytes} bytes`);
      const res = await post(payload, '/validate?timeout=10s');
      assert.equal(res.status, 200, res.message);
      const most = Math.floor(DEFAULT_LIMITS.bodyBudgetBytes / 3);
      assert.ok(res.heldWhileWaiting > bytes && res.heldWhileWaiting <= most, `${res.heldWhileWaiting} held for ${bytes} bytes (at most ${most})`);
      t.diagnostic(`${shape}: ${bytes} bytes held ${res.heldWhileWaiting} (${(res.heldWhileWaiting / bytes).toFixed(2)}x), room ${most - res.heldWhileWaiting}`);
    });
});

describe('what each request holds besides its body, counted', () => {
  test('500 ordinary reviews from one address at once, all held until the last arrives, are all answered: the cost is taken for each and given back', async () => {
    const review = JSON.stringify(fixture('validate-create-secret-by-runner.json'));
    const COUNT = 500;
    let waiting = 0;
    let most = 0;
    let least = Infinity; // the least held for each review waiting at once
    // Every review waits until all are waiting (a barrier, not a sleep: on a loaded machine a
    // fixed wait let the first answer before the last arrived); 5 s at most, should one never come.
    let release!: () => void;
    const allWaiting = new Promise<void>((resolve) => (release = resolve));
    const fallback = setTimeout(release, 5000);
    const deed = buildApp({
      ctx: testContext(),
      logger,
      awaitScope: async () => {
        waiting++;
        const held = (await deed.metrics.bodyBytesHeld.get()).values[0]!.value;
        most = Math.max(most, waiting);
        least = Math.min(least, held / waiting);
        if (waiting === COUNT) release();
        await allWaiting;
        waiting--;
      },
    });
    try {
      const answers = await Promise.all(Array.from({ length: COUNT }, () => deed.app.inject({ method: 'POST', url: '/validate?timeout=10s', headers: { 'content-type': 'application/json' }, payload: review })));
      const codes = new Map<number, number>();
      for (const a of answers) codes.set(a.statusCode, (codes.get(a.statusCode) ?? 0) + 1);
      assert.deepEqual(Object.fromEntries(codes), { 200: COUNT });
      assert.equal(most, COUNT, 'every review held at once');
      assert.ok(least >= REQUEST_COST_BYTES + 3 * Buffer.byteLength(review), `${least.toFixed(0)} bytes held for each review waiting: its cost and its body (${Buffer.byteLength(review)} bytes) thrice`);
      assert.equal((await deed.metrics.bodyBytesHeld.get()).values[0]!.value, 0, 'all given back once answered');
    } finally {
      clearTimeout(fallback);
      await deed.app.close();
    }
  });
});
