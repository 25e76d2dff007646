import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest } from 'node:https';
import { connect, type ClientHttp2Session } from 'node:http2';
import { connect as tlsConnect } from 'node:tls';
import type { AdmissionReviewResponse } from '../src/admission/types.js';
import { fixture } from './helpers.js';
import { get, startServe, type ServeProcess } from './serve-process.js';

interface Answer {
  uid: string;
  status: number;
  body: string;
}

function body(uid: string): string {
  const review = fixture('mutate-create-pod-by-runner.json');
  review.request.uid = uid;
  return JSON.stringify(review);
}

/** A review over HTTP/2 whose body is held back until `finish()`: in flight for as long as the test likes. */
function heldH2(session: ClientHttp2Session, uid: string): { finish(): void; answer: Promise<Answer> } {
  const payload = Buffer.from(body(uid));
  const stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=5s', 'content-type': 'application/json', 'content-length': payload.length });
  stream.write(payload.subarray(0, payload.length >> 1));
  const answer = new Promise<Answer>((resolve, reject) => {
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve({ uid, status, body: Buffer.concat(chunks).toString('utf8') }));
    stream.on('error', reject);
  });
  return { finish: () => stream.end(payload.subarray(payload.length >> 1)), answer };
}

/** The same over HTTP/1.1, on a connection of its own. */
function heldH1(server: ServeProcess, uid: string, agent?: Agent): { finish(): void; answer: Promise<Answer> } {
  const payload = Buffer.from(body(uid));
  let finish = () => {};
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', servername: 'localhost', port: server.port, path: '/mutate?timeout=5s', method: 'POST', ca: server.ca, agent: agent ?? false, headers: { 'content-type': 'application/json', 'content-length': payload.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ uid, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.write(payload.subarray(0, payload.length >> 1));
    finish = () => req.end(payload.subarray(payload.length >> 1));
  });
  return { finish, answer };
}

function sendH2(session: ClientHttp2Session, uid: string): Promise<Answer> {
  const held = heldH2(session, uid);
  held.finish();
  return held.answer;
}

function sendH1(server: ServeProcess, uid: string, agent: Agent): Promise<Answer> {
  const held = heldH1(server, uid, agent);
  held.finish();
  return held.answer;
}

function assertReviewed(a: Answer): void {
  assert.equal(a.status, 200, `${a.uid}: HTTP ${a.status} ${a.body}`);
  const review = JSON.parse(a.body) as AdmissionReviewResponse;
  assert.equal(review.kind, 'AdmissionReview');
  assert.equal(review.response.uid, a.uid, 'the answer is for this request');
  assert.equal(review.response.allowed, true);
  assert.equal(review.response.patchType, 'JSONPatch', 'a complete review: the pod is stamped');
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => (socket.destroy(), resolve(false)));
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('graceful shutdown of deed serve', () => {
  test('on SIGTERM readiness turns false, every review sent gets its answer, idle connections do not hold the process, and it exits 0', async () => {
    // Bodies are held back past the shutdown delay: longer than the default body deadline (2 s).
    const server = await startServe(['--shutdown-delay', '2', '--grace-period', '30', '--body-timeout', '30']);
    const sessions = [0, 1, 2].map(() => connect(`https://localhost:${server.port}`, { ca: server.ca }));
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    try {
      // Idle connections left open on purpose: an HTTP/2 session and HTTP/1.1 keep-alive sockets.
      assertReviewed(await sendH2(sessions[2]!, 'idle-h2'));
      assertReviewed(await sendH1(server, 'idle-h1', agent));

      // Reviews whose bodies are held back until the listener is closing.
      const held = [
        ...[0, 1, 2, 3].map((i) => heldH2(sessions[i % 2]!, `held-h2-${i}`)),
        ...[0, 1, 2, 3].map((i) => heldH1(server, `held-h1-${i}`)),
      ];
      // Each session answers a review sent after its held streams: those streams' headers have reached the server.
      await Promise.all([sendH2(sessions[0]!, 'order-0'), sendH2(sessions[1]!, 'order-1')]).then((as) => as.forEach(assertReviewed));

      // A burst in flight when SIGTERM lands, and more sent during the shutdown delay.
      const burst = Array.from({ length: 60 }, (_, i) => (i % 3 === 2 ? sendH1(server, `burst-${i}`, agent) : sendH2(sessions[i % 2]!, `burst-${i}`)));
      server.child.kill('SIGTERM');
      const late = Array.from({ length: 20 }, (_, i) => sendH2(sessions[i % 2]!, `during-delay-${i}`));

      await until('readyz to answer 503', async () => (await get(server, '/readyz')).status === 503);
      assert.equal((await get(server, '/healthz')).status, 200, 'still alive while draining');
      await until('the drain to begin', async () => server.logs().some((l) => l.msg === 'closing the listener and draining connections'));
      const drain = server.logs().find((l) => l.msg === 'closing the listener and draining connections')!;
      assert.ok(Number(drain.sessions) >= 3, `the three HTTP/2 sessions are tracked: ${JSON.stringify(drain)}`);
      assert.ok(Number(drain.sockets) >= 1 + 4, `the idle keep-alive socket and the held HTTP/1.1 requests are tracked: ${JSON.stringify(drain)}`);
      await until('the listener to close', () => refused(server.port));

      for (const h of held) h.finish();
      const answers = await Promise.all([...burst, ...late, ...held.map((h) => h.answer)]);
      assert.equal(answers.length, 60 + 20 + 8);
      answers.forEach(assertReviewed);

      const code = await new Promise<number | null>((resolve) =>
        server.child.exitCode !== null ? resolve(server.child.exitCode) : server.child.once('exit', (c) => resolve(c)),
      );
      assert.equal(code, 0, `exited cleanly within the grace period (a forced exit is 1):\n${server.lines.slice(-5).join('\n')}`);
      // Written just before the exit; its last output can reach the pipe after the 'exit' event.
      await until("the 'stopped' line", async () => server.logs().some((l) => l.msg === 'stopped'), 5_000);
    } finally {
      for (const s of sessions) s.destroy();
      agent.destroy();
      if (server.child.exitCode === null) await server.stop('SIGKILL');
    }
  });
});
