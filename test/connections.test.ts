// Hostile connections against a spawned `deed serve`, over real sockets: every phase of a
// connection has a deadline, and the number of open connections a bound. Deadlines are
// set short by flags; lower bounds are exact (a timer never fires early), upper bounds
// generous for a loaded 2-core machine.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect as http2Connect, constants, type ClientHttp2Session } from 'node:http2';
import { globalAgent as httpsAgent } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { FIXTURES } from './helpers.js';
import { get, post, startServe, type ServeProcess } from './serve-process.js';

const REVIEW = readFileSync(join(FIXTURES, 'mutate-create-pod-by-runner.json'), 'utf8');
const SLACK_MS = 8_000;

/** Milliseconds from now until the socket closes (or the limit passes: Infinity). */
/** `start`: when the clock began; for a raw TCP socket, before connecting, since the server's
 * handshake deadline runs from its accept, which a loaded client sees as 'connect' only later. */
function closedAfter(socket: Socket, limitMs = 20_000, start = performance.now()): Promise<number> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(Infinity);
    }, limitMs);
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(performance.now() - start);
    });
  });
}

function tls(server: ServeProcess, alpn: string[] = ['http/1.1']): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', servername: 'localhost', port: server.port, ca: server.ca, ALPNProtocols: alpn }, () => resolve(socket));
    socket.once('error', reject);
  });
}

function h2(server: ServeProcess): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`https://localhost:${server.port}`, { ca: server.ca });
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

/** Whether one review on `session` gets response headers within `ms`. */
function answeredWithin(session: ClientHttp2Session, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (session.destroyed || session.closed) return resolve(false);
    const timer = setTimeout(() => resolve(false), ms);
    const stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=5s', 'content-type': 'application/json' });
    stream.on('error', () => {});
    stream.on('response', () => {
      clearTimeout(timer);
      resolve(true);
    });
    stream.end(REVIEW);
  });
}

function sessionClosedAfter(session: ClientHttp2Session, limitMs = 20_000): Promise<{ ms: number; goaway: boolean }> {
  const start = performance.now();
  let goaway = false;
  session.on('goaway', () => (goaway = true));
  session.on('error', () => {});
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      session.destroy();
      resolve({ ms: Infinity, goaway });
    }, limitMs);
    session.once('close', () => {
      clearTimeout(timer);
      resolve({ ms: performance.now() - start, goaway });
    });
  });
}

/** deed_connections_timed_out_total by phase, and deed_connections_refused_total. */
async function counters(server: ServeProcess, path = '/metrics'): Promise<Record<string, number>> {
  const text = (await get(server, path)).body;
  const out: Record<string, number> = {};
  for (const [, phase, n] of text.matchAll(/^deed_connections_timed_out_total\{phase="(\w+)"\} (\d+)$/gm)) out[phase!] = Number(n);
  for (const [, reason, n] of text.matchAll(/^deed_connections_refused_total\{reason="(\w+)"\} (\d+)$/gm)) out[`refused-${reason}`] = Number(n);
  out.refused = (out['refused-total'] ?? 0) + (out['refused-peer'] ?? 0);
  return out;
}

function assertWithin(ms: number, deadlineMs: number, what: string): void {
  assert.ok(ms >= deadlineMs * 0.9, `${what}: closed after ${Math.round(ms)} ms, before its ${deadlineMs} ms deadline`);
  assert.ok(ms <= deadlineMs + SLACK_MS, `${what}: still open ${Math.round(ms)} ms later (deadline ${deadlineMs} ms)`);
}

describe('connection deadlines', () => {
  const HANDSHAKE = 600;
  const HEADERS = 800;
  const REQUEST = 1500;
  const IDLE = 1200;
  let server: ServeProcess;
  before(async () => {
    server = await startServe([
      '--tls-handshake-timeout', String(HANDSHAKE / 1000),
      '--headers-timeout', String(HEADERS / 1000),
      '--request-timeout', String(REQUEST / 1000),
      '--idle-timeout', String(IDLE / 1000),
    ]);
  });
  after(async () => {
    await server.stop();
  });

  test('a TCP connection that never starts TLS is closed at the handshake deadline', async () => {
    const start = performance.now();
    const socket = netConnect({ host: '127.0.0.1', port: server.port });
    await new Promise((resolve) => socket.once('connect', resolve));
    assertWithin(await closedAfter(socket, undefined, start), HANDSHAKE, 'no ClientHello');
  });

  test('a TLS handshake left half done is closed at the handshake deadline', async () => {
    const start = performance.now();
    const socket = netConnect({ host: '127.0.0.1', port: server.port });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])); // the start of a ClientHello record
    assertWithin(await closedAfter(socket, undefined, start), HANDSHAKE, 'partial ClientHello');
  });

  test('an HTTP/1.1 connection that sends part of its request headers, then nothing, is closed at the headers deadline', async () => {
    const socket = await tls(server);
    socket.write('POST /mutate?timeout=5s HTTP/1.1\r\nHost: localhost\r\nContent-Type: appl');
    assertWithin(await closedAfter(socket), HEADERS, 'partial headers');
  });

  test('a slow HTTP/1.1 client sending a header byte at a time is still closed at the headers deadline', async () => {
    const socket = await tls(server);
    const drip = setInterval(() => socket.writable && socket.write('X'), 100);
    socket.write('POST /mutate HTTP/1.1\r\nX-Drip: ');
    const ms = await closedAfter(socket);
    clearInterval(drip);
    assertWithin(ms, HEADERS, 'header drip');
  });

  test('an HTTP/1.1 request whose body stalls is closed at the request deadline', async () => {
    const socket = await tls(server);
    socket.write(`POST /mutate?timeout=5s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${REVIEW.length}\r\n\r\n`);
    socket.write(REVIEW.slice(0, 100));
    let answered = '';
    socket.on('data', (c: Buffer) => (answered += c.toString('utf8')));
    assertWithin(await closedAfter(socket), REQUEST, 'stalled body');
    assert.equal(answered, '', 'no answer to a request whose body never came');
  });

  test('an HTTP/1.1 keep-alive connection is served, then closed at the idle deadline', async () => {
    const socket = await tls(server);
    let answered = '';
    const gotAnswer = new Promise<void>((resolve) =>
      socket.on('data', (c: Buffer) => {
        answered += c.toString('utf8');
        if (answered.includes('"uid"')) resolve();
      }),
    );
    socket.write(`POST /mutate?timeout=5s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(REVIEW)}\r\n\r\n${REVIEW}`);
    await gotAnswer;
    assert.match(answered, /^HTTP\/1\.1 200/);
    assertWithin(await closedAfter(socket), IDLE, 'idle keep-alive');
  });

  test('an HTTP/2 session that opens no stream gets a GOAWAY at the headers deadline', async () => {
    const session = await h2(server);
    const { ms, goaway } = await sessionClosedAfter(session);
    assertWithin(ms, HEADERS, 'HTTP/2 without a stream');
    assert.ok(goaway, 'closed with a GOAWAY');
  });

  test('an HTTP/2 stream whose body stalls is reset at the request deadline, and its session closed', async () => {
    const session = await h2(server);
    const closed = sessionClosedAfter(session);
    const stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=5s', 'content-type': 'application/json' });
    const start = performance.now();
    stream.write(REVIEW.slice(0, 100)); // and never ends
    const reset = await new Promise<{ ms: number; code: number | undefined }>((resolve) => {
      stream.on('error', () => {});
      stream.once('close', () => resolve({ ms: performance.now() - start, code: stream.rstCode }));
    });
    assertWithin(reset.ms, REQUEST, 'stalled HTTP/2 stream');
    assert.equal(reset.code, constants.NGHTTP2_CANCEL);
    const { ms, goaway } = await closed;
    assert.ok(goaway, 'the session got a GOAWAY');
    assert.ok(ms <= REQUEST + SLACK_MS, `the session closed ${Math.round(ms)} ms after the stream opened`);
  });

  test('an HTTP/2 session is served, then closed with a GOAWAY once it has had no stream for the idle deadline', async () => {
    const session = await h2(server);
    const answer = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=5s', 'content-type': 'application/json' });
      stream.on('response', (h) => resolve(Number(h[':status'])));
      stream.on('error', reject);
      stream.resume();
      stream.end(REVIEW);
    });
    assert.equal(answer, 200);
    const { ms, goaway } = await sessionClosedAfter(session); // counted from the answer: an upper bound on the idle time
    assert.ok(goaway);
    assert.ok(ms <= IDLE + SLACK_MS, `still open ${Math.round(ms)} ms after the answer`);
    assert.ok(ms >= IDLE * 0.5, `closed ${Math.round(ms)} ms after the answer, well before the idle deadline`);
  });

  test('HTTP/2 pings do not keep a session without streams alive', async () => {
    const session = await h2(server);
    const closed = sessionClosedAfter(session);
    const pinger = setInterval(() => !session.closed && !session.destroyed && session.ping(() => {}), 100);
    const { ms } = await closed;
    clearInterval(pinger);
    assertWithin(ms, HEADERS, 'pinging session');
  });

  test('each deadline that closed a connection is counted by phase in /metrics', async () => {
    const c = await counters(server);
    for (const phase of ['handshake', 'headers', 'request', 'idle']) assert.ok((c[phase] ?? 0) >= 1, `${phase}: ${JSON.stringify(c)}`);
  });

  test('real reviews are still answered', async () => {
    const answer = await post(server, '/mutate?timeout=5s', REVIEW);
    assert.equal(answer.status, 200);
  });
});

describe('the bound on open connections', () => {
  let server: ServeProcess;
  before(async () => {
    server = await startServe(['--max-connections', '4']);
  });
  after(async () => {
    await server.stop();
  });

  test('beyond --max-connections a new connection is closed at once and counted; below it, connections are served again', async () => {
    const held = await Promise.all([tls(server), tls(server), tls(server), tls(server)]);
    // Answered, so past their handshake on the server's side too: a connection still in its
    // handshake would be closed to make room for the newcomer (the next suite).
    await Promise.all(held.map((socket) => new Promise((resolve) => (socket.once('data', resolve), socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n')))));
    const before = performance.now();
    const refused = await new Promise<string>((resolve) => {
      const socket = tlsConnect({ host: '127.0.0.1', servername: 'localhost', port: server.port, ca: server.ca });
      socket.once('secureConnect', () => resolve('handshake completed'));
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      socket.once('close', () => resolve('closed'));
    });
    assert.notEqual(refused, 'handshake completed');
    assert.ok(performance.now() - before < 5_000, 'refused at once, not at a deadline');
    for (const socket of held) socket.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const c = await counters(server); // a connection of its own: served again
    assert.ok(c.refused! >= 1, JSON.stringify(c));
    assert.equal((await post(server, '/mutate?timeout=5s', REVIEW)).status, 200);
  });
});

/** A TLS connection from `localAddress`, answered once (so past its handshake on the server's side too). */
async function servedFrom(server: ServeProcess, localAddress: string): Promise<TLSSocket> {
  const socket = await new Promise<TLSSocket>((resolve, reject) => {
    const s = tlsConnect({ socket: netConnect({ host: '127.0.0.1', port: server.port, localAddress }), servername: 'localhost', ca: server.ca, ALPNProtocols: ['http/1.1'] }, () => resolve(s));
    s.once('error', reject);
  });
  await new Promise((resolve) => (socket.once('data', resolve), socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n')));
  return socket;
}

/** What a new TLS connection from `localAddress` comes to: a completed handshake, or how it ended. */
function handshakeFrom(server: ServeProcess, localAddress: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ socket: netConnect({ host: '127.0.0.1', port: server.port, localAddress }), servername: 'localhost', ca: server.ca });
    socket.once('secureConnect', () => (resolve('handshake completed'), socket.destroy()));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.once('close', () => resolve('closed'));
  });
}

/** Every slot free again: the keep-alive connection /metrics and reviews went over, and the last test's connections, closed on the server's side too. */
async function settle(): Promise<void> {
  httpsAgent.destroy();
  await new Promise((r) => setTimeout(r, 300));
}

describe('the share of connections per peer', () => {
  let server: ServeProcess;
  before(async () => {
    server = await startServe(['--max-connections', '6', '--max-connections-per-peer', '3']);
  });
  after(async () => {
    await server.stop();
  });

  test('a peer at --max-connections-per-peer gets no more connections, counted as "peer"; another peer is served', async () => {
    const held = [await servedFrom(server, '127.0.0.2'), await servedFrom(server, '127.0.0.2'), await servedFrom(server, '127.0.0.2')];
    assert.notEqual(await handshakeFrom(server, '127.0.0.2'), 'handshake completed');
    assert.equal(await handshakeFrom(server, '127.0.0.1'), 'handshake completed');
    assert.equal((await post(server, '/mutate?timeout=5s', REVIEW)).status, 200);
    const c = await counters(server);
    assert.ok(c['refused-peer']! >= 1, JSON.stringify(c));
    for (const socket of held) socket.destroy();
  });

  test('at either bound, a newcomer closes the oldest connection still in its handshake instead of being refused', async () => {
    await settle();
    // Three peers' worth of TCP connections that never start TLS: every slot taken.
    const hanging = [];
    for (const address of ['127.0.0.2', '127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3', '127.0.0.3']) {
      const socket = netConnect({ host: '127.0.0.1', port: server.port, localAddress: address });
      await new Promise((resolve) => socket.once('connect', resolve));
      hanging.push({ socket, closed: closedAfter(socket) });
    }
    const before = (await counters(server))['refused-total'] ?? 0;
    assert.equal(await handshakeFrom(server, '127.0.0.1'), 'handshake completed', 'at the total bound');
    assert.ok((await hanging[0]!.closed) < 5_000, "the oldest hanging connection was closed to make room, not at its deadline");
    assert.equal(((await counters(server))['refused-total'] ?? 0) - before, 1);
    const peerFull = netConnect({ host: '127.0.0.1', port: server.port, localAddress: '127.0.0.3' });
    peerFull.on('error', () => {});
    assert.ok((await hanging[3]!.closed) < 5_000, "at its peer's bound, the peer's oldest connection in its handshake gave way");
    peerFull.destroy();
    for (const { socket } of hanging) socket.destroy();
  });

  test('a connection that completed its handshake is never closed for a newcomer', async () => {
    await settle();
    const held = [];
    for (const address of ['127.0.0.2', '127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3', '127.0.0.3']) held.push(await servedFrom(server, address));
    const closed = held.map((socket) => closedAfter(socket, 1_500));
    assert.notEqual(await handshakeFrom(server, '127.0.0.1'), 'handshake completed', 'refused: every slot is held past its handshake');
    for (const ms of await Promise.all(closed)) assert.equal(ms, Infinity, 'every held connection is still open');
  });
});

describe('HTTP/2 limits', () => {
  let server: ServeProcess;
  before(async () => {
    server = await startServe(['--max-concurrent-streams', '20', '--max-header-bytes', '4096']);
  });
  after(async () => {
    await server.stop();
  });

  test('the server announces its stream and header-list limits in SETTINGS', async () => {
    const session = await h2(server);
    if (session.remoteSettings.maxConcurrentStreams !== 20) await new Promise((resolve) => session.once('remoteSettings', resolve));
    assert.equal(session.remoteSettings.maxConcurrentStreams, 20);
    assert.equal(session.remoteSettings.maxHeaderListSize, 4096);
    session.destroy();
  });

  test('a request whose headers exceed --max-header-bytes gets no answer from a handler, over HTTP/1.1 (431) and HTTP/2', async () => {
    const socket = await tls(server);
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
    socket.write(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(8000)}\r\n\r\n`);
    await closedAfter(socket, 10_000);
    assert.match(text, /^HTTP\/1\.1 431/);

    const session = await h2(server);
    session.on('error', () => {});
    // The limit holds once the client has acknowledged the server's SETTINGS (RFC 9113
    // 6.5.3); a ping's answer comes after the acknowledgement has reached the server.
    if (session.remoteSettings.maxHeaderListSize !== 4096) await new Promise((resolve) => session.once('remoteSettings', resolve));
    await new Promise((resolve) => session.ping(resolve));
    const outcome = await new Promise<string>((resolve) => {
      const stream = session.request({ ':path': '/healthz', 'x-big': 'a'.repeat(8000) });
      stream.on('response', (h) => resolve(`status ${h[':status']}`));
      stream.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      stream.on('close', () => resolve(`closed, RST ${stream.rstCode}`));
      stream.end();
    });
    assert.doesNotMatch(outcome, /status 200/);
    session.destroy();
  });
});

describe('HTTP/2 stream floods', () => {
  let server: ServeProcess;
  before(async () => {
    server = await startServe();
  });
  after(async () => {
    await server.stop();
  });

  test('rapid reset (CVE-2023-44487): a session that opens and cancels streams in a flood is ended by the server', async () => {
    const session = await h2(server);
    const closed = sessionClosedAfter(session, 30_000);
    let goaway: { code: number; last: number } | undefined;
    let ended: string | undefined;
    session.on('goaway', (code: number, last: number) => (goaway = { code, last }));
    // Node 26's client can see the server's end as a session error before (or instead of) the GOAWAY event.
    session.on('error', (err: NodeJS.ErrnoException) => (ended ??= err.code ?? err.message));
    session.on('close', () => (ended ??= 'closed'));
    let sent = 0;
    // HEADERS then RST_STREAM, as fast as the client can write them, in batches.
    while (goaway === undefined && !session.destroyed && sent < 20_000) {
      for (let i = 0; i < 200 && !session.destroyed; i++, sent++) {
        const stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=5s', 'content-type': 'application/json' });
        stream.on('error', () => {});
        stream.close(constants.NGHTTP2_CANCEL);
      }
      await new Promise((r) => setImmediate(r));
    }
    // The server reads the flood behind the client's writes: give it time to answer.
    const start = performance.now();
    while (goaway === undefined && !session.destroyed && performance.now() - start < 10_000) await new Promise((r) => setTimeout(r, 50));
    // Node 22's client may see neither the GOAWAY nor the close of a session the server has
    // ended (the server's socket is closed; the client is still flushing the flood). Then
    // what shows the end is that the session gets no answer at all, while a new one does.
    const endedByServer = goaway !== undefined || ended !== undefined || !(await answeredWithin(session, 3_000));
    session.destroy();
    await closed;
    assert.ok(endedByServer, `the server did not end the session after ${sent} opened and reset streams`);
    // nghttp2 (in Node since 20.8.1) allows a burst of 1,000 resets, then ends the session
    // with INTERNAL_ERROR; ENHANCE_YOUR_CALM is what other servers send.
    if (goaway !== undefined) {
      assert.ok([constants.NGHTTP2_INTERNAL_ERROR, constants.NGHTTP2_ENHANCE_YOUR_CALM].includes(goaway.code), `GOAWAY code ${goaway.code}`);
      assert.ok(goaway.last < 2 * 5_000, `the server processed streams up to id ${goaway.last} before ending the session`);
    }
    assert.equal((await post(server, '/mutate?timeout=5s', REVIEW)).status, 200, 'and the server still answers reviews');
  });
});
