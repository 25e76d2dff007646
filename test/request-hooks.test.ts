// The transport's per-request concerns run from one pair of fastify hooks, in the order
// buildApp is given them, after the review's own (request-hooks.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DestinationStream } from 'pino';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import { fixture, testContext } from './helpers.js';

test("each concern's hooks run once per request, in the order given, beside the review's own (which records the request)", async () => {
  const seen: string[] = [];
  const { app, metrics } = buildApp({
    ctx: testContext(),
    logger: createLogger({ write: () => {} } as unknown as DestinationStream),
    transport: () => [
      { onRequest: (req) => void seen.push(`first arrives ${req.url}`), onResponse: (_req, reply) => void seen.push(`first answered ${reply.statusCode}`) },
      { onResponse: () => void seen.push('second answered') },
      { onRequest: () => void seen.push('third arrives') },
    ],
  });
  const counted = async () => (await metrics.registry.getSingleMetricAsString('deed_request_duration_seconds')).split('\n').filter((l) => l.startsWith('deed_request_duration_seconds_count{')).length;
  const res = await app.inject({ method: 'POST', url: '/mutate?timeout=5s', payload: fixture('mutate-create-pod-by-runner.json') });
  assert.equal(res.statusCode, 200);
  assert.equal(await counted(), 1, 'the review hook recorded the request');
  assert.deepEqual(seen, ['first arrives /mutate?timeout=5s', 'third arrives', 'first answered 200', 'second answered']);
  await app.close();
});
