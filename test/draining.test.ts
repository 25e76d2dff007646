import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { DestinationStream } from 'pino';
import type { AdmissionReviewResponse } from '../src/admission/types.js';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import { trackConnections, type ConnectionDrain } from '../src/server/drain.js';
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

describe('connections once draining has begun', () => {
  test('every HTTP/1.1 answer says connection: close, whatever the route, so no client reuses a socket that is about to close', async () => {
    const quiet = () => createLogger({ write: () => {} } as unknown as DestinationStream);
    const serving = buildApp({ ctx: testContext(), logger: quiet(), transport: (app) => [trackConnections(app)] }).app;
    assert.equal((await serving.inject({ method: 'GET', url: '/healthz' })).headers.connection, 'keep-alive', 'before draining');
    await serving.close();

    let connections: ConnectionDrain | undefined;
    const { app } = buildApp({ ctx: testContext(), logger: quiet(), transport: (made) => [(connections = trackConnections(made))] });
    connections!.drain();
    for (const [method, url] of [['GET', '/healthz'], ['GET', '/metrics'], ['GET', '/nowhere'], ['POST', '/mutate']] as const) {
      const res = await app.inject({ method, url, ...(method === 'POST' ? { payload: 'not json', headers: { 'content-type': 'application/json' } } : {}) });
      assert.equal(res.headers.connection, 'close', `${method} ${url} (HTTP ${res.statusCode})`);
    }
    await app.close();
  });
});
