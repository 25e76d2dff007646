import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildApp, type DeedApp } from '../src/server/app.js';
import { createLogger } from '../src/observability/logger.js';
import { REVIEW_DURATION_BUCKETS } from '../src/observability/metrics.js';
import { fixture, testContext } from './helpers.js';
import { get, startServe } from './serve-process.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Reads the Prometheus text format: one sample per line, `name{k="v",...} value`. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `a well-formed sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.length === 0 ? undefined : found.reduce((sum, s) => sum + s.value, 0);
}

describe('GET /metrics after a few reviews', () => {
  let deed: DeedApp;
  let samples: Sample[];
  let contentType: string;

  const silent = createLogger({ write: () => {} });
  before(async () => {
    deed = buildApp({ ctx: testContext(), logger: silent });
    const post = (body: unknown) => deed.app.inject({ method: 'POST', url: '/mutate?timeout=5s', payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

    await post(fixture('mutate-create-pod-by-runner.json')); // patched
    await post(fixture('mutate-create-pod-by-other-namespace-runner.json')); // patched
    await post(fixture('mutate-create-secret-by-runner.json')); // patched Secret
    await post(fixture('mutate-create-pod-by-admin.json')); // allowed, unchanged
    const forged = fixture('mutate-create-pod-by-admin.json');
    forged.request.object.metadata.labels = { 'deed.dev/environment': 'alpha', 'deed.dev/managed': 'true' };
    await post(forged); // denied: stamp.forged, twice in one review
    const conflict = fixture('mutate-create-pod-by-runner.json');
    conflict.request.object.metadata.labels['deed.dev/environment'] = 'beta';
    conflict.request.object.metadata.annotations['deed.dev/create-nonce'] = 'short';
    await post(conflict); // denied: stamp.conflict and nonce.malformed
    const odd = fixture('mutate-create-pod-by-admin.json');
    odd.request.kind.kind = 'Evil"Kind';
    odd.request.resource.resource = 'evils';
    await post(odd); // allowed (not a sandbox resource), counted under kind "other"
    await post({ hello: 'world' }); // bad request: no uid

    // A fault inside the policy code: denied (fail closed) and counted as an internal error.
    const broken = buildApp({ ctx: { ...testContext(), now: () => { throw new Error('clock failure'); } }, logger: silent, metrics: deed.metrics });
    await broken.app.inject({ method: 'POST', url: '/mutate', payload: JSON.stringify(fixture('mutate-create-pod-by-runner.json')), headers: { 'content-type': 'application/json' } });

    const res = await deed.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    contentType = String(res.headers['content-type']);
    samples = parseExposition(res.body);
  });
  after(() => deed.app.close());

  test('the body is the Prometheus text format', () => {
    assert.match(contentType, /^text\/plain; version=0\.0\.4/);
  });

  test('reviews are counted by webhook, kind, operation and decision', () => {
    const cases: Array<[Record<string, string>, number]> = [
      [{ kind: 'Pod', operation: 'CREATE', decision: 'patched' }, 2],
      [{ kind: 'Secret', operation: 'CREATE', decision: 'patched' }, 1],
      [{ kind: 'Pod', operation: 'CREATE', decision: 'allowed' }, 1],
      [{ kind: 'Pod', operation: 'CREATE', decision: 'denied' }, 2],
      [{ kind: 'Pod', operation: 'CREATE', decision: 'errored' }, 1],
      [{ kind: 'other', operation: 'CREATE', decision: 'allowed' }, 1],
      [{ kind: 'unknown', operation: 'unknown', decision: 'bad-request' }, 1],
    ];
    for (const [labels, expected] of cases) assert.equal(value(samples, 'deed_reviews_total', { webhook: 'mutate', ...labels }), expected, JSON.stringify(labels));
    assert.equal(value(samples, 'deed_reviews_total'), 9, 'every review counted once');
  });

  test('a kind label never carries a value from the request body that Deed does not know', () => {
    assert.ok(samples.every((s) => !Object.values(s.labels).some((v) => v.includes('Evil'))));
  });

  test('denials are counted once per rule per review, by rule id', () => {
    assert.equal(value(samples, 'deed_denials_total', { webhook: 'mutate', rule: 'stamp.forged' }), 1);
    assert.equal(value(samples, 'deed_denials_total', { webhook: 'mutate', rule: 'stamp.conflict' }), 1);
    assert.equal(value(samples, 'deed_denials_total', { webhook: 'mutate', rule: 'nonce.malformed' }), 1);
    assert.equal(value(samples, 'deed_denials_total', { webhook: 'mutate', rule: 'internal.error' }), 1);
  });

  test('the latency histogram has every bucket from 0.5 ms to 5 s and counts every review', () => {
    const les = samples.filter((s) => s.name === 'deed_review_duration_seconds_bucket' && s.labels.webhook === 'mutate').map((s) => s.labels.le);
    assert.deepEqual(les, [...REVIEW_DURATION_BUCKETS.map(String), '+Inf']);
    assert.equal(REVIEW_DURATION_BUCKETS[0], 0.0005);
    assert.equal(REVIEW_DURATION_BUCKETS.at(-1), 5);
    assert.equal(value(samples, 'deed_review_duration_seconds_count', { webhook: 'mutate' }), 9);
    assert.equal(value(samples, 'deed_review_duration_seconds_bucket', { webhook: 'mutate', le: '+Inf' }), 9);
    const sum = value(samples, 'deed_review_duration_seconds_sum', { webhook: 'mutate' })!;
    assert.ok(sum > 0 && sum < 60, `a plausible total duration: ${sum}`);
  });

  test('internal errors are counted', () => {
    assert.equal(value(samples, 'deed_review_errors_total'), 1);
  });

  test('default process metrics are exported', () => {
    for (const name of ['process_cpu_user_seconds_total', 'process_start_time_seconds', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes'])
      assert.ok(value(samples, name) !== undefined, name);
  });

  test('two apps in one process keep separate registries', async () => {
    const other = buildApp({ ctx: testContext(), logger: silent });
    const res = await other.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(value(parseExposition(res.body), 'deed_reviews_total'), undefined, 'no review counted on the fresh app');
    await other.app.close();
  });
});

describe('deed serve exports the serving certificate expiry', () => {
  test('the gauge holds the generated certificate notAfter from the start', async () => {
    const server = await startServe();
    try {
      const notAfter = Date.parse(new X509Certificate(readFileSync(join(server.dir, 'certs', 'tls.crt'))).validTo) / 1000;
      const res = await get(server, '/metrics');
      assert.equal(res.status, 200);
      assert.equal(value(parseExposition(res.body), 'deed_certificate_expiry_timestamp_seconds'), notAfter);
      assert.ok(notAfter > Date.now() / 1000 + 300 * 86_400, 'a year-long certificate');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});
