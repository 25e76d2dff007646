import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { DestinationStream } from 'pino';
import type { AdmissionReviewResponse } from '../src/admission/types.js';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import { fixture, testContext } from './helpers.js';

describe('HTTP/1.1 review connections during the shutdown delay', () => {
  const cases: Array<[string, boolean, string]> = [
    ['a ready server keeps the connection open after a review', true, 'keep-alive'],
    ['a server whose readiness is off still reviews, and closes the connection after the answer', false, 'close'],
  ];
  for (const [name, ready, connection] of cases)
    test(name, async () => {
      const { app, setReady } = buildApp({ ctx: testContext(), logger: createLogger({ write: () => {} } as unknown as DestinationStream) });
      setReady(ready);
      const res = await app.inject({ method: 'POST', url: '/mutate?timeout=5s', payload: fixture('mutate-create-pod-by-runner.json') });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json<AdmissionReviewResponse>().response.allowed, true);
      assert.equal(res.headers.connection, connection);
      await app.close();
    });
});
