import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { DestinationStream } from 'pino';
import type { AdmissionReviewResponse } from '../src/admission/types.js';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import { fixture, testContext } from './helpers.js';

function app() {
  return buildApp({ ctx: testContext(), logger: createLogger({ write: () => {} } as unknown as DestinationStream) });
}

describe('draining HTTP/1.1 keep-alive connections once readiness is off', () => {
  const cases: Array<[string, boolean, string]> = [
    ['a ready server keeps the connection open', true, 'keep-alive'],
    ['a draining server still reviews, and asks the client to close the connection', false, 'close'],
  ];
  for (const [name, ready, connection] of cases)
    test(name, async () => {
      const { app: server, setReady } = app();
      setReady(ready);
      const res = await server.inject({ method: 'POST', url: '/mutate?timeout=5s', payload: fixture('mutate-create-pod-by-runner.json') });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json<AdmissionReviewResponse>().response.allowed, true);
      assert.equal(res.headers.connection, connection);
      await server.close();
    });
});
