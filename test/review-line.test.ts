// The review line is written once the answer is sent, off the path the API server waits
// on; a review whose caller went away before its answer (an API server's webhook timeout
// closing the connection while a lookup was read) still gets its one line.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { DestinationStream } from 'pino';
import { createLogger, MAX_LOGGED_VALUE } from '../src/observability/logger.js';
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

// What it copies from the request is bounded, so a forged review (no credential needed without
// --client-ca) cannot write megabytes, and a review of thousands of findings names each rule once.
async function reviewLine(url: string, body: unknown, uid: string): Promise<{ line: string; fields: Record<string, unknown> }> {
  const lines: string[] = [];
  const deed = buildApp({ ctx: testContext(), logger: createLogger({ write: (l: string) => void lines.push(l) } as unknown as DestinationStream) });
  try {
    const res = await deed.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    assert.equal(res.statusCode, 200);
    await new Promise((r) => setImmediate(r));
    const line = lines.find((l) => l.includes(uid));
    assert.ok(line !== undefined, 'the review has its line');
    return { line, fields: JSON.parse(line) as Record<string, unknown> };
  } finally {
    await deed.app.close();
  }
}

describe('the review log line, bounded', () => {
  test("copies at most MAX_LOGGED_VALUE characters of each value the request gives, and says how long it was", async () => {
    const big = 'n'.repeat(1024 * 1024);
    const body = fixture('mutate-create-pod-by-runner.json');
    Object.assign(body.request, { uid: 'forged-long-fields', name: big, namespace: big, subResource: big });
    body.request.userInfo.username = big;
    body.request.kind.kind = big;
    const { line, fields } = await reviewLine('/validate?timeout=10s', body, 'forged-long-fields');
    // A container runtime splits a line past 16 KiB; a forged one was 5 MB.
    assert.ok(line.length < 16 * 1024, `the review line is ${line.length} bytes`);
    for (const key of ['name', 'namespace', 'subResource', 'requester', 'kind'])
      assert.equal(fields[key], `${'n'.repeat(MAX_LOGGED_VALUE)}... (${big.length} characters)`, key);
    assert.equal(fields.uid, 'forged-long-fields');
  });

  test('names each rule once, however many findings it made', async () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    body.request.uid = 'many-findings';
    // Sidecars taking sources without a prefix: one template.reserved-env finding each.
    body.request.object.spec.containers.push(...Array.from({ length: 20 }, (_, i) => ({ name: `side-${i}`, image: 'registry.example/x:1', envFrom: [{ configMapRef: { name: 'settings' } }] })));
    const { fields } = await reviewLine('/admit?timeout=10s', body, 'many-findings');
    assert.equal(fields.decision, 'denied');
    const rules = fields.rules as string[];
    assert.ok(rules.includes('template.reserved-env'), JSON.stringify(rules));
    assert.equal(rules.length, new Set(rules).size, JSON.stringify(rules));
  });
});
