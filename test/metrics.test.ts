import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import jsonpatch from 'fast-json-patch';
import { join } from 'node:path';
import { buildApp, type DeedApp } from '../src/server/app.js';
import { createLogger } from '../src/observability/logger.js';
import { createMetrics, recordVerification, REVIEW_DURATION_BUCKETS } from '../src/observability/metrics.js';
import { signV1, signV2 } from '../src/policy/stamps/attestation.js';
import { createKeyRing, signStamps, verifyStamps, withObserver } from '../src/policy/stamps/key-ring.js';
import { fixture, FIXTURE_POLICY, testContext } from './helpers.js';
import { get, post, startServe } from './serve-process.js';

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
    const marked = fixture('mutate-create-pod-by-admin.json');
    marked.request.object.metadata.labels = { ...marked.request.object.metadata.labels, 'deed.dev/no-environment': 'true' };
    await post(marked); // allowed, unchanged: a pod of no environment, already marked
    const forged = fixture('mutate-create-pod-by-admin.json');
    forged.request.object.metadata.labels = { 'deed.dev/environment': 'alpha', 'deed.dev/managed': 'true' };
    await post(forged); // denied: stamp.forged, twice in one review
    const conflict = fixture('mutate-create-pod-by-runner.json');
    conflict.request.object.metadata.labels['deed.dev/environment'] = 'beta';
    conflict.request.object.metadata.annotations['deed.dev/create-nonce'] = 'short';
    await post(conflict); // denied: stamp.conflict and nonce.malformed
    const odd = fixture('mutate-create-pod-by-admin.json');
    odd.request.kind.kind = 'Evil"Kind';
    odd.request.resource.resource = 'events';
    await post(odd); // allowed (an exception of the default row), counted under kind "other"
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

describe('verifications by key id', () => {
  const OLD = Buffer.from('old-attestation-key-0123456789abcdef-old');
  const NEW = Buffer.from('new-attestation-key-0123456789abcdef-new');
  const STAMPS = { kind: 'Pod', namespace: 'sandbox-a', environment: 'alpha', nonce: 'b'.repeat(64) };

  test('each verification is counted under the ring key that verified it, or the ring key a failed one named; other ids are "unknown"', async () => {
    const metrics = createMetrics();
    const base = createKeyRing([{ id: 'old', key: OLD }, { id: 'new', key: NEW }], 'new', 'v2');
    const ring = withObserver(base, (v) => recordVerification(metrics, base, v));
    verifyStamps(ring, STAMPS, signStamps(ring, STAMPS));
    verifyStamps(ring, STAMPS, signStamps(ring, STAMPS));
    verifyStamps(ring, STAMPS, signV1(OLD, STAMPS));
    verifyStamps(ring, STAMPS, signV2(OLD, 'new', STAMPS)); // names a ring key, does not verify
    verifyStamps(ring, STAMPS, signV2(OLD, 'attacker-chosen-1', STAMPS));
    verifyStamps(ring, STAMPS, signV2(OLD, 'attacker-chosen-2', STAMPS));
    verifyStamps(ring, STAMPS, undefined);
    const samples = parseExposition(await metrics.registry.metrics());
    const count = (key: string, format: string, result: string) => value(samples, 'deed_attestation_verifications_total', { key, format, result });
    assert.equal(count('new', 'v2', 'verified'), 2);
    assert.equal(count('old', 'v1', 'verified'), 1);
    assert.equal(count('new', 'v2', 'failed'), 1);
    assert.equal(count('unknown', 'v2', 'failed'), 2);
    assert.equal(count('none', 'none', 'failed'), 1);
    const keys = new Set(samples.filter((s) => s.name === 'deed_attestation_verifications_total').map((s) => s.labels.key));
    assert.deepEqual([...keys].sort(), ['new', 'none', 'old', 'unknown']);
  });

  test('deed serve signs with the ring the policy names, logs the key ids, and counts the verifications by key id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-metrics-ring-'));
    writeFileSync(join(dir, 'old'), OLD);
    writeFileSync(join(dir, 'new'), NEW);
    const attestation = { keys: [{ id: 'old', file: join(dir, 'old') }, { id: 'new', file: join(dir, 'new') }], signingKey: 'new' };
    const server = await startServe([], { ...FIXTURE_POLICY, attestation });
    try {
      const create = fixture('mutate-create-pod-by-runner.json');
      const mutated = JSON.parse((await post(server, '/mutate', JSON.stringify(create))).body) as { response: { patch: string } };
      const stored = jsonpatch.applyPatch(structuredClone(create.request.object), JSON.parse(Buffer.from(mutated.response.patch, 'base64').toString('utf8'))).newDocument;
      assert.match(stored.metadata.annotations['deed.dev/attestation'], /^v2:new:/);
      const update = fixture('validate-update-pod-label-by-runner.json');
      update.request.oldObject = stored;
      update.request.object = { ...stored, metadata: { ...stored.metadata, labels: { ...stored.metadata.labels, phase: 'done' } } };
      const answer = JSON.parse((await post(server, '/validate', JSON.stringify(update))).body) as { response: { allowed: boolean } };
      assert.equal(answer.response.allowed, true);
      const samples = parseExposition((await get(server, '/metrics')).body);
      assert.equal(value(samples, 'deed_attestation_verifications_total', { key: 'new', format: 'v2', result: 'verified' }), 1);
      const started = server.logs().find((l) => l.msg === 'deed is serving')!;
      assert.deepEqual([started.attestationKeys, started.signingKey, started.signingFormat], [['old', 'new'], 'new', 'v2']);
      assert.ok(!server.lines.some((l) => l.includes(OLD.toString('latin1')) || l.includes(NEW.toString('latin1'))), 'no key material in the log');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});

describe('deed_build_info and the whole-request histogram', () => {
  test('deed_build_info is 1 with the package version and the Node.js version', async () => {
    const deed = buildApp({ ctx: testContext(), logger: createLogger({ write: () => {} }) });
    try {
      const samples = parseExposition(await deed.metrics.registry.metrics());
      const { VERSION } = await import('../src/version.js');
      assert.equal(value(samples, 'deed_build_info', { version: VERSION, node: process.version }), 1);
    } finally {
      await deed.app.close();
    }
  });

  test('deed_request_duration_seconds counts every webhook request by status, a refused content type included, and no probe', async () => {
    let now = 1000;
    const deed = buildApp({ ctx: testContext(), logger: createLogger({ write: () => {} }), clock: () => (now += 7) });
    try {
      const json = { 'content-type': 'application/json' };
      await deed.app.inject({ method: 'POST', url: '/mutate?timeout=5s', payload: JSON.stringify(fixture('mutate-create-pod-by-runner.json')), headers: json });
      await deed.app.inject({ method: 'POST', url: '/validate?timeout=5s', payload: JSON.stringify(fixture('validate-create-pod-by-runner.json')), headers: json });
      await deed.app.inject({ method: 'POST', url: '/validate', payload: 'x', headers: { 'content-type': 'text/plain' } });
      await deed.app.inject({ method: 'GET', url: '/healthz' });
      const samples = parseExposition(await deed.metrics.registry.metrics());
      assert.equal(value(samples, 'deed_request_duration_seconds_count', { webhook: 'mutate', code: '200' }), 1);
      assert.equal(value(samples, 'deed_request_duration_seconds_count', { webhook: 'validate', code: '200' }), 1);
      assert.equal(value(samples, 'deed_request_duration_seconds_count', { webhook: 'validate', code: '415' }), 1);
      assert.equal(value(samples, 'deed_request_duration_seconds_count'), 3, 'the probe is no webhook request');
      // The clock moves 7 ms per reading: a request spans at least the arrival and the answer.
      assert.ok((value(samples, 'deed_request_duration_seconds_sum', { webhook: 'mutate' }) ?? 0) >= 0.007);
    } finally {
      await deed.app.close();
    }
  });
});
