import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type SecureVersion } from 'node:tls';
import type { AdmissionReviewResponse } from '../src/admission/types.js';
import { generateCertificates } from '../src/server/certificates.js';
import { clientPki, type Pem } from './client-pki.js';
import { FIXTURES } from './helpers.js';
import { getPlain, startServe, type ServeProcess } from './serve-process.js';

const REVIEW = readFileSync(join(FIXTURES, 'mutate-create-pod-by-runner.json'), 'utf8');
const UID = '3f697299-374d-4b34-a6a3-76107eae9203';

type Outcome = { served: true; status: number; body: string } | { served: false; error: string };

/** One review on a fresh connection (no agent, so no TLS session is reused). */
function review(port: number, ca: string, client?: Pem): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path: '/mutate?timeout=5s',
        method: 'POST',
        ca,
        agent: false,
        ...(client ?? {}),
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ served: true, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ served: false, error: err.code ?? err.message }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ served: false, error: err.code ?? err.message }));
    req.end(REVIEW);
  });
}

/** Completes a TLS handshake pinned to one protocol version, or reports the error. */
function handshake(port: number, ca: string, version: SecureVersion): Promise<string> {
  return new Promise((resolve) => {
    // SECLEVEL=0 lets this client offer TLS 1.0/1.1 at all: the refusal must come from the server.
    const socket = connect({ host: '127.0.0.1', servername: 'localhost', port, ca, minVersion: version, maxVersion: version, ciphers: 'DEFAULT@SECLEVEL=0' });
    socket.on('secureConnect', () => {
      resolve(`connected ${socket.getProtocol()}`);
      socket.end();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

function assertServed(outcome: Outcome): void {
  assert.ok(outcome.served, `expected an answer, got ${JSON.stringify(outcome)}`);
  assert.equal(outcome.status, 200);
  assert.equal((JSON.parse(outcome.body) as AdmissionReviewResponse).response.uid, UID);
}

/**
 * Refused in the TLS handshake: the server's alert (certificate required, unknown CA) or
 * its reset arrives before any HTTP answer, so no review is decided or answered.
 */
function assertRefusedInHandshake(outcome: Outcome): void {
  assert.ok(!outcome.served, `expected the handshake to be refused, got an answer: ${JSON.stringify(outcome)}`);
  assert.match(outcome.error, /ALERT|ECONNRESET|EPIPE/, outcome.error);
}

describe('TLS facts of deed serve', () => {
  let server: ServeProcess;
  before(async () => {
    server = await startServe();
  });
  after(async () => {
    await server.stop();
  });

  const versions: Array<[SecureVersion, boolean]> = [
    ['TLSv1', false],
    ['TLSv1.1', false],
    ['TLSv1.2', true],
    ['TLSv1.3', true],
  ];
  for (const [version, accepted] of versions)
    test(`a ${version} client is ${accepted ? 'accepted' : 'refused by the server with a protocol-version alert'}`, async () => {
      const result = await handshake(server.port, server.ca, version);
      if (accepted) assert.equal(result, `connected ${version}`);
      else assert.equal(result, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    });

  test('plain HTTP to the review port gets no review answered', async () => {
    const outcome = await new Promise<Outcome>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port: server.port, path: '/mutate', method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ served: true, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ served: false, error: err.code ?? err.message }));
      req.end(REVIEW);
    });
    if (outcome.served) assert.ok(!outcome.body.includes(UID), 'no AdmissionReview came back');
    else assert.equal(outcome.error, 'ECONNRESET');
  });
});

describe('strict client certificates with --client-ca', () => {
  let server: ServeProcess;
  let dir: string;
  let serving: { caFile: string; certFile: string; keyFile: string };
  let apiServer: { ca: Pem; client: Pem };
  let stranger: { ca: Pem; client: Pem };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'deed-tls-'));
    serving = await generateCertificates(join(dir, 'serving'), ['localhost', '127.0.0.1']);
    apiServer = await clientPki('kube-apiserver');
    stranger = await clientPki('stranger');
    const clientCaFile = join(dir, 'client-ca.crt');
    writeFileSync(clientCaFile, apiServer.ca.cert);
    server = await startServe(['--tls-cert', serving.certFile, '--tls-key', serving.keyFile, '--client-ca', clientCaFile, '--metrics-port', '0']);
  });
  after(async () => {
    await server.stop();
  });

  const ca = () => readFileSync(serving.caFile, 'utf8');

  test('a client with a certificate from the client CA is served', async () => {
    assertServed(await review(server.port, ca(), apiServer.client));
  });

  for (const version of ['TLSv1.2', 'TLSv1.3'] as const)
    test(`a ${version} client without a certificate never completes a handshake`, async () => {
      const result = await new Promise<string>((resolve) => {
        const socket = connect({ host: '127.0.0.1', servername: 'localhost', port: server.port, ca: ca(), minVersion: version, maxVersion: version });
        socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
        // TLS 1.3 clients finish their side before the server has checked their certificate:
        // what counts is that the server answers nothing but an alert.
        socket.on('secureConnect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n'));
        socket.on('data', (c: Buffer) => resolve(`answered: ${c.toString('utf8').slice(0, 40)}`));
        socket.on('close', () => resolve('closed without an answer'));
      });
      assert.match(result, /CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE|ECONNRESET|closed without an answer/, result);
    });

  test('a client without a certificate gets no review: the handshake is refused', async () => {
    assertRefusedInHandshake(await review(server.port, ca()));
  });

  test('a client with a certificate from another CA gets no review: the handshake is refused', async () => {
    assertRefusedInHandshake(await review(server.port, ca(), stranger.client));
  });

  test('the kubelet and Prometheus, presenting no certificate, reach the probes and metrics on the plain-HTTP metrics port', async () => {
    assert.ok(server.metricsPort, 'deed serve logged its metrics URL');
    assert.equal((await getPlain(server.metricsPort, '/healthz')).status, 200);
    assert.equal((await getPlain(server.metricsPort, '/readyz')).status, 200);
    const metrics = await getPlain(server.metricsPort, '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /^deed_connections_refused_total\{reason="total"\} 0$/m);
  });

  test('the metrics port serves no reviews, and the webhook port no probes', async () => {
    const review = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: server.metricsPort, path: '/mutate', method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });
    assert.equal(review, 404);
    const probe = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', servername: 'localhost', port: server.port, path: '/readyz', ca: ca(), agent: false, ...apiServer.client }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(probe, 404);
  });

  test('a client without a certificate gets no review over HTTP/2 either', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const session = http2Connect(`https://localhost:${server.port}`, { ca: ca() });
      session.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      const stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=5s', 'content-type': 'application/json' });
      stream.on('response', (h) => resolve(`status ${h[':status']}`));
      stream.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      stream.end(REVIEW);
    });
    assert.doesNotMatch(outcome, /^status/, outcome);
  });

  test('--client-ca without --metrics-port is refused at start: the probes would have nowhere to go', async () => {
    await assert.rejects(
      startServe(['--tls-cert', serving.certFile, '--tls-key', serving.keyFile, '--client-ca', join(dir, 'client-ca.crt')]),
      /--client-ca needs --metrics-port/,
    );
  });

  test('after the serving certificate is rotated on disk, the client CA and TLS minimum still apply', async () => {
    const next = await generateCertificates(join(dir, 'next'), ['localhost', '127.0.0.1']);
    // Replace as an operator's tooling would: write beside, then rename over (atomic per file).
    copyFileSync(next.keyFile, `${serving.keyFile}.new`);
    copyFileSync(next.certFile, `${serving.certFile}.new`);
    renameSync(`${serving.keyFile}.new`, serving.keyFile);
    renameSync(`${serving.certFile}.new`, serving.certFile);
    const nextCa = readFileSync(next.caFile, 'utf8');
    const deadline = Date.now() + 15_000;
    let outcome = await review(server.port, nextCa, apiServer.client);
    while (!outcome.served && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      outcome = await review(server.port, nextCa, apiServer.client);
    }
    assertServed(outcome); // the new certificate is served, and the client certificate accepted
    assertRefusedInHandshake(await review(server.port, nextCa));
    assertRefusedInHandshake(await review(server.port, nextCa, stranger.client));
    assert.equal(await handshake(server.port, nextCa, 'TLSv1.1'), 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    assert.ok(server.logs().some((l) => l.msg === 'serving certificate reloaded'));
  });
});
