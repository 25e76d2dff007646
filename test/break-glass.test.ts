// Break-glass by default: cluster administrators (system:masters) are not locked out of
// sandbox objects, and every review allowed only because of break-glass is named to the
// client, in the API server's audit log, in Deed's log and in a counter.
import assert from 'node:assert/strict';
import { connect as http2Connect, constants as http2Constants } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { decide } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import { parseConfig } from '../src/config/load.js';
import type { ConfigInput } from '../src/config/schema.js';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import { generateCertificates } from '../src/server/certificates.js';
import { clientPki, type Pem } from './client-pki.js';
import { fixture, FIXTURE_POLICY, testContext, type Review } from './helpers.js';
import { ADMIN, RUNNER_A, stamped } from './validate-helpers.js';

// FIXTURE_POLICY names no break-glass; the default is what a policy without the field gets.
const { breakGlass: _none, ...WITH_DEFAULTS } = FIXTURE_POLICY;
const DEFAULT_POLICY: ConfigInput = WITH_DEFAULTS;
const NO_BREAK_GLASS: ConfigInput = { ...WITH_DEFAULTS, breakGlass: { groups: [] } };

function alphaPod(config: ConfigInput): KubeObject {
  const body = fixture('validate-create-pod-by-runner.json');
  return stamped(body, body.request.object, RUNNER_A, config);
}

function deletion(old: KubeObject, userInfo: UserInfo): Review {
  const body = fixture('validate-delete-pod-by-runner.json');
  body.request = { ...body.request, name: old.metadata.name, userInfo, oldObject: old };
  return body;
}

function answer(body: Review, config: ConfigInput) {
  const d = decide('validate', body, testContext(config));
  assert.equal(d.kind, 'review');
  if (d.kind !== 'review') throw new Error('unreachable');
  return d;
}

describe('break-glass by default', () => {
  test('a policy that says nothing about breakGlass makes the group system:masters break-glass, and no user', () => {
    const config = parseConfig(DEFAULT_POLICY);
    assert.deepEqual(config.breakGlass, { users: [], groups: ['system:masters'] });
  });

  test('a cluster admin deleting alpha\'s sandbox pod is allowed, with a warning and an audit annotation naming the rule it was allowed past', () => {
    const d = answer(deletion(alphaPod(DEFAULT_POLICY), ADMIN), DEFAULT_POLICY);
    assert.equal(d.response.response.allowed, true, d.response.response.status?.message);
    assert.deepEqual(d.breakGlass, ['guard.unmapped']);
    assert.deepEqual(d.response.response.auditAnnotations, { 'break-glass': 'guard.unmapped' });
    assert.deepEqual(d.response.response.warnings, ['Deed: break-glass use by kube-lab-admin: allowed past guard.unmapped; this is logged and counted']);
  });

  test('breakGlass.groups: [] locks the admin out again, as before 0.2.0', () => {
    const d = answer(deletion(alphaPod(NO_BREAK_GLASS), ADMIN), NO_BREAK_GLASS);
    assert.equal(d.response.response.allowed, false);
    assert.match(d.response.response.status?.message ?? '', /\[guard\.unmapped\] kube-lab-admin acts for no environment/);
    assert.equal(d.breakGlass, undefined);
  });

  test('what the admin may do anyway is no break-glass use: nothing is added to the answer', () => {
    const body = fixture('mutate-create-pod-by-admin.json');
    const d = decide('mutate', body, testContext(DEFAULT_POLICY));
    assert.ok(d.kind === 'review' && d.response.response.allowed);
    assert.equal(d.breakGlass, undefined);
    assert.equal(d.response.response.warnings, undefined);
    assert.equal(d.response.response.auditAnnotations, undefined);
  });

  test('a principal of no environment outside system:masters is still refused, and nothing says break-glass', () => {
    const d = answer(deletion(alphaPod(DEFAULT_POLICY), { ...ADMIN, username: 'kube-lab-operator', groups: ['system:authenticated'] }), DEFAULT_POLICY);
    assert.equal(d.response.response.allowed, false);
    assert.equal(d.breakGlass, undefined);
  });

  test('a break-glass user still cannot forge stamps: integrity rules are no guard it could be allowed past', () => {
    const body = fixture('mutate-create-pod-by-admin.json');
    body.request.object.metadata.labels = { 'deed.dev/environment': 'alpha' };
    const d = decide('mutate', body, testContext(DEFAULT_POLICY));
    assert.ok(d.kind === 'review');
    assert.equal(d.response.response.allowed, false);
    assert.match(d.response.response.status?.message ?? '', /\[stamp\.forged\]/);
  });

  test("the server logs each use at warn level, with the connection it came over, and counts it in deed_break_glass_reviews_total by rule: a review a pod forged can be told from the API server's (rev-89)", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const deed = buildApp({ ctx: testContext(DEFAULT_POLICY), logger });
    try {
      // Without --client-ca any client that reaches the port may send one: here from 10.0.0.66, with no certificate.
      const res = await deed.app.inject({ method: 'POST', url: '/validate?timeout=5s', remoteAddress: '10.0.0.66', payload: JSON.stringify(deletion(alphaPod(DEFAULT_POLICY), ADMIN)), headers: { 'content-type': 'application/json' } });
      assert.equal(res.statusCode, 200);
      assert.equal((JSON.parse(res.body) as { response: { allowed: boolean } }).response.allowed, true);
      const review = lines.find((l) => l.msg === 'review');
      assert.ok(review, 'one review line');
      assert.equal(review.level, 40, 'warn');
      assert.deepEqual(review.breakGlass, ['guard.unmapped']);
      assert.equal(review.requester, 'kube-lab-admin');
      assert.equal(review.peer, '10.0.0.66');
      assert.equal(review.clientVerified, false);
      const metrics = await deed.metrics.registry.metrics();
      assert.match(metrics, /^deed_break_glass_reviews_total\{webhook="validate",rule="guard\.unmapped"\} 1$/m);
    } finally {
      await deed.app.close();
    }
  });
  test('over a connection whose client certificate the client CA verified (--client-ca), the line says so: clientVerified true, over HTTP/1.1 and HTTP/2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-break-glass-'));
    const serving = await generateCertificates(dir, ['localhost', '127.0.0.1']);
    const apiServer = await clientPki('kube-apiserver');
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const deed = buildApp({ ctx: testContext(DEFAULT_POLICY), logger, tls: { cert: readFileSync(serving.certFile), key: readFileSync(serving.keyFile) }, clientCa: apiServer.ca.cert });
    await deed.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = deed.app.server.address() as { port: number };
      const ca = readFileSync(serving.caFile, 'utf8');
      const body = JSON.stringify(deletion(alphaPod(DEFAULT_POLICY), ADMIN));
      const answers = [await postHttp1(port, ca, apiServer.client, body), await postHttp2(port, ca, apiServer.client, body)];
      for (const answer of answers) assert.equal((JSON.parse(answer) as { response: { allowed: boolean } }).response.allowed, true);
      const reviews = lines.filter((l) => l.msg === 'review');
      assert.deepEqual(
        reviews.map((l) => [l.httpVersion, l.breakGlass, l.peer, l.clientVerified]),
        [
          ['1.1', ['guard.unmapped'], '127.0.0.1', true],
          ['2.0', ['guard.unmapped'], '127.0.0.1', true],
        ],
      );
    } finally {
      await deed.app.close();
    }
  });
  test('a review whose HTTP/2 stream the client resets once its body is sent still names its peer (a forged one must not hide where it came from: rev-96 F3)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-break-glass-'));
    const serving = await generateCertificates(dir, ['localhost', '127.0.0.1']);
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const deed = buildApp({ ctx: testContext(DEFAULT_POLICY), logger, tls: { cert: readFileSync(serving.certFile), key: readFileSync(serving.keyFile) } });
    await deed.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = deed.app.server.address() as { port: number };
      const ca = readFileSync(serving.caFile, 'utf8');
      const body = JSON.stringify(deletion(alphaPod(DEFAULT_POLICY), ADMIN));
      for (let i = 0; i < 10; i++)
        await new Promise<void>((resolve) => {
          const session = http2Connect(`https://localhost:${port}`, { ca });
          session.on('error', () => resolve());
          const stream = session.request({ ':method': 'POST', ':path': '/validate?timeout=5s', 'content-type': 'application/json' });
          stream.on('error', () => undefined);
          stream.end(body);
          const reset = () => stream.close(http2Constants.NGHTTP2_CANCEL);
          if (i % 2 === 0) reset();
          else setImmediate(reset);
          stream.on('close', () => setTimeout(() => (session.close(), resolve()), 20));
        });
      await new Promise((r) => setTimeout(r, 200));
      const reviews = lines.filter((l) => l.msg === 'review');
      assert.ok(reviews.length > 0, 'review lines');
      assert.deepEqual([...new Set(reviews.map((l) => `${String(l.peer)} ${JSON.stringify(l.breakGlass)}`))], ['127.0.0.1 ["guard.unmapped"]']);
    } finally {
      await deed.app.close();
    }
  });
});

/** One POST to /validate over HTTP/1.1, presenting `client`; the answer's body. */
function postHttp1(port: number, ca: string, client: Pem, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', servername: 'localhost', port, path: '/validate?timeout=5s', method: 'POST', ca, agent: false, ...client, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The same over HTTP/2. */
function postHttp2(port: number, ca: string, client: Pem, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`https://localhost:${port}`, { ca, ...client });
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': '/validate?timeout=5s', 'content-type': 'application/json' });
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      session.close();
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    stream.on('error', reject);
    stream.end(body);
  });
}
