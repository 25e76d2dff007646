// The review line is written once the answer is sent, off the path the API server waits
// on; a review whose caller went away before its answer (an API server's webhook timeout
// closing the connection while a lookup was read) still gets its one line.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { DestinationStream } from 'pino';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import { noLookup, type LookupKey } from '../src/policy/lookup.js';
import { fixture, testContext } from './helpers.js';

const reviewLines = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'review');

describe('the review log line', () => {
  test('a review answered normally is logged once, with its uid, after its answer', async () => {
    const lines: string[] = [];
    const { app } = buildApp({ ctx: testContext(), logger: createLogger({ write: (l: string) => void lines.push(l) } as DestinationStream) });
    const body = fixture('mutate-create-pod-by-runner.json');
    const res = await app.inject({ method: 'POST', url: '/mutate?timeout=5s', payload: body });
    assert.equal(res.statusCode, 200);
    await new Promise((r) => setImmediate(r));
    const logged = reviewLines(lines);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.uid, body.request.uid);
    assert.equal(logged[0]!.decision, 'patched');
    await app.close();
  });

  test('a review whose client closed the connection while its lookup was read is still logged once, with its uid', async () => {
    const lines: string[] = [];
    let read: () => void = () => {};
    const reading = new Promise<void>((r) => (read = r));
    const slowReader = {
      async read(_keys: LookupKey[]) {
        read();
        await new Promise((r) => setTimeout(r, 300));
        return noLookup('the test reader answers nothing');
      },
    };
    const { app } = buildApp({ ctx: testContext(), reader: slowReader, logger: createLogger({ write: (l: string) => void lines.push(l) } as DestinationStream) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    // The validating review of a pod that mounts a claim reads the claim first.
    const body = JSON.stringify(fixture('validate-create-pod-by-runner.json'));
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(`POST /validate?timeout=5s HTTP/1.1\r\nhost: deed\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await reading;
    socket.destroy(); // gone before the answer
    await new Promise((r) => setTimeout(r, 600));
    const logged = reviewLines(lines);
    assert.equal(logged.length, 1, JSON.stringify(logged));
    assert.equal(logged[0]!.uid, fixture('validate-create-pod-by-runner.json').request.uid);
    await app.close();
  });
});
