import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdmissionReviewResponse } from '../src/admission/types.js';
import { decodePatch, eventually, FIXTURES, fixture } from './helpers.js';
import { get, post, postAnnounced, postH2, startServe, type ServeProcess } from './serve-process.js';

const raw = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

describe('deed serve over real HTTPS', () => {
  let server: ServeProcess;
  before(async () => {
    server = await startServe(['--dns', 'deed.deed-system.svc']);
  });
  after(async () => {
    const code = await server.stop();
    assert.equal(code, 0, 'SIGTERM ends deed serve cleanly');
  });

  test('health and readiness answer over TLS with the generated CA', async () => {
    assert.equal((await get(server, '/healthz')).status, 200);
    const ready = await get(server, '/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.json(), { status: 'ready' });
  });

  test('the generated certificate names the extra --dns SAN', async () => {
    const answer = await post(server, '/mutate', raw('mutate-create-pod-by-admin.json'), 'application/json', 'deed.deed-system.svc');
    assert.equal(answer.status, 200);
  });

  test('a runner pod is stamped through /mutate?timeout=5s over HTTP/1.1', async () => {
    const answer = await post(server, '/mutate?timeout=5s', raw('mutate-create-pod-by-runner.json'));
    assert.equal(answer.status, 200);
    const review = answer.json<AdmissionReviewResponse>();
    assert.equal(review.apiVersion, 'admission.k8s.io/v1');
    assert.equal(review.kind, 'AdmissionReview');
    assert.equal(review.response.uid, '3f697299-374d-4b34-a6a3-76107eae9203');
    assert.equal(review.response.patchType, 'JSONPatch');
    const ops = decodePatch(review);
    assert.ok(ops.some((op) => op.path === '/metadata/labels/deed.dev~1environment' && 'value' in op && op.value === 'alpha'));
  });

  test('the server offers HTTP/2 over ALPN and answers the same way on it', async () => {
    const answer = await postH2(server, '/mutate?timeout=5s', raw('mutate-create-pod-by-runner.json'));
    assert.equal(answer.alpn, 'h2');
    assert.equal(answer.status, 200);
    assert.equal(answer.json<AdmissionReviewResponse>().response.patchType, 'JSONPatch');
  });

  test('malformed JSON is an HTTP 400 with a message', async () => {
    const answer = await post(server, '/mutate', '{"apiVersion": ');
    assert.equal(answer.status, 400);
    assert.match(answer.json<{ message: string }>().message, /not valid JSON/);
  });

  test('a body that is not an AdmissionReview is an HTTP 400 with a message', async () => {
    const answer = await post(server, '/mutate', '{"hello":"world"}');
    assert.equal(answer.status, 400);
    assert.match(answer.json<{ message: string }>().message, /admission\.k8s\.io\/v1/);
  });

  test('a content type other than JSON is refused with 415', async () => {
    const answer = await post(server, '/mutate', raw('mutate-create-pod-by-runner.json'), 'text/plain');
    assert.equal(answer.status, 415);
  });

  test('a __proto__ key is denied with the uid kept', async () => {
    const body = raw('mutate-create-pod-by-runner.json').replace('"labels": {', '"labels": {"__proto__": {"x": "y"},');
    const answer = await post(server, '/mutate', body);
    assert.equal(answer.status, 200);
    const review = answer.json<AdmissionReviewResponse>();
    assert.equal(review.response.uid, '3f697299-374d-4b34-a6a3-76107eae9203');
    assert.equal(review.response.allowed, false);
  });

  test('a 3 MiB object, the API server cap, is still reviewed and stamped', async () => {
    const body = fixture('mutate-create-secret-by-runner.json');
    body.request.object.data = { big: Buffer.alloc(3 * 1024 * 1024 - 4096, 1).toString('base64').slice(0, 3 * 1024 * 1024 - 4096) };
    const answer = await post(server, '/mutate', JSON.stringify(body));
    assert.equal(answer.status, 200);
    const review = answer.json<AdmissionReviewResponse>();
    assert.equal(review.response.allowed, true);
    assert.ok(decodePatch(review).length > 0, 'stamped');
  });

  test('a body over the 8 MiB limit is refused with 413, and the server keeps answering', async () => {
    const answer = await postAnnounced(server, '/mutate', 9 * 1024 * 1024);
    assert.equal(answer.status, 413);
    assert.match(answer.body, /too large/i);
    assert.equal((await get(server, '/healthz')).status, 200);
  });

  test('one structured log line per review carries the uid and never the Secret data', async () => {
    const body = fixture('mutate-create-secret-by-runner.json');
    body.request.uid = 'log-check-uid';
    const secretValues = Object.values(body.request.object.data as Record<string, string>);
    assert.ok(secretValues.length > 0);
    const answer = await post(server, '/mutate', JSON.stringify(body));
    assert.equal(answer.status, 200);
    // The line is written once the answer is sent: wait for it, then a moment more for a second one that must not come.
    await eventually('the review line', async () => server.logs().some((l) => l.uid === 'log-check-uid'), 5_000);
    await new Promise((r) => setTimeout(r, 100));
    const lines = server.logs().filter((l) => l.uid === 'log-check-uid');
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    for (const field of ['kind', 'namespace', 'name', 'operation', 'requester', 'dryRun', 'decision', 'patchBytes', 'durationMs'])
      assert.ok(field in line, `log line has ${field}`);
    assert.equal(line.decision, 'patched');
    const everything = server.lines.join('\n');
    for (const value of secretValues) {
      assert.ok(!everything.includes(value), 'the base64 Secret data never appears in a log');
      assert.ok(!everything.includes(Buffer.from(value, 'base64').toString('utf8')), 'nor its decoded form');
    }
  });
});
