// The memory budget for request bodies: the pools on their own, then a spawned `deed serve`
// over real HTTP/2 sessions from two loopback addresses (two peers).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { connect as http2Connect, constants, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { PassThrough } from 'node:stream';
import { Accounts, BodyBudget, bodyBudgetLimits, parseOverhead, readBody, REQUEST_COST_BYTES, type BodyError } from '../src/server/body-budget.js';
import { eventually, FIXTURES } from './helpers.js';
import { get, startServe, type ServeProcess } from './serve-process.js';

const MiB = 1024 * 1024;
/** What each request holds besides its body, from before its first chunk. */
const COST = REQUEST_COST_BYTES;
const REVIEW = readFileSync(join(FIXTURES, 'mutate-create-pod-by-runner.json'), 'utf8');

describe('the body budget', () => {
  const limits = { totalBytes: 100, perPeerBytes: 60, perConnectionBytes: 40, perStreamBytes: 40, perRequestBytes: 0, waitMs: 60_000 };
  const a1 = { connection: {}, peer: 'a' };
  const a2 = { connection: {}, peer: 'a' };
  const b1 = { connection: {}, peer: 'b' };

  test('a grant needs room in the process, the peer and the connection at once', () => {
    const budget = new BodyBudget(limits);
    assert.equal(budget.tryTake(a1, 40), true);
    assert.equal(budget.tryTake(a1, 1), false, 'the connection holds its share');
    assert.equal(budget.tryTake(a2, 20), true);
    assert.equal(budget.tryTake(a2, 1), false, 'the peer holds its share');
    assert.equal(budget.tryTake(b1, 40), true, 'another peer has room of its own');
    assert.equal(budget.tryTake({ connection: {}, peer: 'c' }, 1), false, 'the process holds all it may');
    assert.equal(budget.held, 100);
  });

  test('a release grants waiting requests, oldest first, as far as they fit', async () => {
    const budget = new BodyBudget(limits);
    budget.tryTake(a1, 40);
    budget.tryTake(a2, 20);
    const order: string[] = [];
    const first = budget.take({ connection: {}, peer: 'a' }, 15).then((ok) => order.push(`first ${ok}`));
    const second = budget.take({ connection: {}, peer: 'a' }, 15).then((ok) => order.push(`second ${ok}`));
    assert.equal(budget.queued, 2, 'the peer holds its share');
    budget.release(a1, 30);
    await Promise.all([first, second]);
    assert.deepEqual(order, ['first true', 'second true']);
    assert.equal(budget.held, 60);
  });

  test('a request that goes away stops waiting and takes nothing', async () => {
    const budget = new BodyBudget(limits);
    budget.tryTake(a1, 40);
    const gone = new AbortController();
    const waiting = budget.take(a1, 10, gone.signal);
    gone.abort();
    assert.equal(await waiting, false);
    budget.release(a1, 40);
    assert.equal(budget.held, 0);
    assert.equal(budget.queued, 0);
  });

  test('a request waits no longer than the wait, then gets nothing', async () => {
    const budget = new BodyBudget({ ...limits, waitMs: 10 });
    budget.tryTake(a1, 40);
    assert.equal(await budget.take(a1, 10), false);
    assert.equal(budget.held, 40);
  });

  test('a grant that arrives after its request was closed is given back, not kept', async () => {
    const budget = new BodyBudget(limits);
    const accounts = new Accounts(budget);
    const holder = accounts.open(a1, () => {});
    const late = accounts.open(a1, () => {});
    assert.equal(holder.tryTake(40), true);
    const waiting = late.take(10); // the connection holds its share: waits
    accounts.close(late); // refused or gone meanwhile (the body deadline passed)
    accounts.close(holder); // its release grants the waiter in the same turn
    assert.equal(await waiting, false);
    assert.equal(budget.held, 0, 'nothing held by a closed account');
  });

  test('a body refused by its deadline, whose stream then errors (its socket reset), does not take the process down', async () => {
    const accounts = new Accounts(new BodyBudget(limits));
    const payload = new PassThrough();
    payload.write('{"a":');
    const read = readBody({ payload, contentLength: '30', account: accounts.open(a1, () => {}), timeoutMs: 10, onRefused: () => {} }, 40);
    await assert.rejects(read, (err: BodyError) => err.statusCode === 408);
    assert.doesNotThrow(() => payload.emit('error', Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
  });

  test('a body holds what it will take once parsed: an ordinary review about twice its bytes, one of empty objects refused before it is parsed', async () => {
    const ordinary = readFileSync(join(FIXTURES, 'mutate-create-pod-by-runner.json'));
    const overhead = parseOverhead(ordinary);
    assert.ok(overhead > 0 && overhead < ordinary.length * 2, `${overhead} for ${ordinary.length} bytes`);
    const dense = Buffer.from(`[${'{},'.repeat(10_000)}{}]`);
    assert.ok(parseOverhead(dense) > dense.length * 20, 'empty objects parse to more than 20 times their bytes');
    const bounded = parseOverhead(dense, 1000);
    assert.ok(bounded > 1000 && bounded < parseOverhead(dense) / 4, `counting stops soon past the bound: ${bounded}`);
    // The table's count is the plain one: 96 bytes for each brace or bracket, 16 for each comma, at every length (the unrolled loop's tail).
    const plain = (b: Buffer) => [...b].reduce((sum, byte) => sum + (byte === 0x7b || byte === 0x5b ? 96 : byte === 0x2c ? 16 : 0), 0);
    for (const name of readdirSync(FIXTURES).filter((f) => f.endsWith('.json')))
      for (const cut of [0, 1, 2, 3, 4097]) {
        const body = readFileSync(join(FIXTURES, name)).subarray(cut);
        assert.equal(parseOverhead(body), plain(body), `${name} from byte ${cut}`);
      }

    const budget = new BodyBudget({ totalBytes: 10_000, perPeerBytes: 10_000, perConnectionBytes: 10_000, perStreamBytes: 400, perRequestBytes: 0, waitMs: 60_000 });
    const accounts = new Accounts(budget);
    const readOf = (body: Buffer, account = accounts.open(a1, () => {})) => {
      const payload = new PassThrough();
      payload.end(body);
      return { account, read: readBody({ payload, contentLength: String(body.length), account, timeoutMs: 1000, onRefused: () => {}, maxParsedBytes: 400 }, 400) };
    };
    const small = readOf(Buffer.from('{"a":[1,2]}'));
    assert.equal((await small.read).text, '{"a":[1,2]}');
    assert.equal(small.account.held, 3 * 11 + 2 * 96 + 16, 'its bytes, its text, its parsed strings (as much again), its two containers and one further value');
    accounts.close(small.account);
    const refused = readOf(Buffer.from('[{},{},{}]'));
    await assert.rejects(refused.read, (err: BodyError) => err.statusCode === 413 && /too large to parse: its 10 bytes would take more than 400 bytes of memory once decoded and parsed \(it is made of many small objects/.test(err.message));
    assert.equal(budget.held, 0, 'a refused body gives its memory back');
  });

  test('a body holds its bytes, its text and its parsed strings: one byte a character, two once a character is past U+00FF or escapes one', async () => {
    const budget = new BodyBudget({ totalBytes: 1_000_000, perPeerBytes: 1_000_000, perConnectionBytes: 1_000_000, perStreamBytes: 100_000, perRequestBytes: 0, waitMs: 60_000 });
    const accounts = new Accounts(budget);
    const granted = async (json: string) => {
      const payload = new PassThrough();
      payload.end(Buffer.from(json));
      const account = accounts.open(a1, () => {});
      const { bytes, text } = await readBody({ payload, contentLength: undefined, account, timeoutMs: 1000, onRefused: () => {}, maxParsedBytes: 1_000_000 }, 100_000);
      assert.equal(text, json, 'decoded once, as UTF-8');
      const held = account.held - parseOverhead(bytes);
      accounts.close(account);
      return { bytes: bytes.length, chars: text.length, held };
    };
    const body = (s: string) => `{"apiVersion":"admission.k8s.io/v1","request":{"object":{"data":{"a":${s}}}}}`;
    const ascii = await granted(body(JSON.stringify('x'.repeat(1000))));
    assert.equal(ascii.held, 3 * ascii.bytes, 'ASCII: bytes, text and parsed strings, one byte each');
    const latin1 = await granted(body(JSON.stringify('é'.repeat(1000))));
    assert.equal(latin1.held, latin1.bytes + 2 * latin1.chars, 'Latin-1: its text and strings stay one byte a character');
    const oneWide = await granted(body(JSON.stringify('x'.repeat(999) + '\u4e2d')));
    assert.equal(oneWide.held, oneWide.bytes + 2 * 2 * oneWide.chars, 'one character past U+00FF: the whole text two bytes a character, and every string parsed from it');
    const emoji = await granted(body(JSON.stringify('x'.repeat(999) + '\u{1f600}')));
    assert.equal(emoji.held, emoji.bytes + 4 * emoji.chars, 'an emoji (a surrogate pair) the same');
    const wideEscape = await granted(body(`"${'x'.repeat(999)}\\u4e2d"`));
    assert.equal(wideEscape.chars, wideEscape.bytes, 'an ASCII body');
    assert.equal(wideEscape.held, wideEscape.bytes + wideEscape.chars + 2 * wideEscape.chars, 'a \\u escape past U+00FF: its text one byte a character, its parsed string two');
    const goEscapes = await granted(body(`"${'x'.repeat(999)}\\u003c\\u003e\\u0026\\u00e9"`));
    assert.equal(goEscapes.held, 3 * goEscapes.bytes, "Go's escapes of <, > and & (and Latin-1 ones) stay one byte");
    const cjk = await granted(body(JSON.stringify('\u4e2d\u6587'.repeat(500))));
    assert.ok(cjk.bytes > 3 * 1000, 'three bytes a character in UTF-8');
    assert.equal(cjk.held, cjk.bytes + 2 * 2 * cjk.chars, 'all CJK: its text and its strings two bytes a character, fewer than its bytes');
    const payload = new PassThrough();
    payload.end(Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]));
    const account = accounts.open(a1, () => {});
    const notUtf8 = await readBody({ payload, contentLength: undefined, account, timeoutMs: 1000, onRefused: () => {}, maxParsedBytes: 1_000_000 }, 100_000);
    assert.equal(notUtf8.text, '{"a":"\ufffd(\ufffd"}', 'decoded with U+FFFD, past U+00FF');
    assert.equal(account.held - parseOverhead(notUtf8.bytes), 11 + 2 * 2 * 11, 'bytes that are not UTF-8: at most one character a byte, two bytes each');
    accounts.close(account);
    assert.equal(budget.held, 0);
  });

  test('each request holds its cost from before its first chunk until its account is closed; one that cannot get it waits, then is refused', async () => {
    const budget = new BodyBudget({ totalBytes: 10_000, perPeerBytes: 10_000, perConnectionBytes: 10_000, perStreamBytes: 1000, perRequestBytes: 0, waitMs: 50 });
    const accounts = new Accounts(budget);
    const payload = new PassThrough();
    const account = accounts.open(a1, () => {});
    const read = readBody({ payload, contentLength: '2', account, timeoutMs: 1000, onRefused: () => {}, maxParsedBytes: 10_000, requestBytes: 4000 }, 1000);
    await new Promise((r) => setImmediate(r));
    assert.equal(account.held, 4000, 'taken before any byte arrived');
    assert.equal(budget.held, 4000);
    payload.end('{}');
    await read;
    assert.equal(account.held, 4000 + 3 * 2 + 96, 'its cost, then its body');
    const refusals: string[] = [];
    const third = accounts.open(a2, () => {});
    assert.equal(third.tryTake(4000), true);
    const starved = new PassThrough();
    const waited = readBody({ payload: starved, contentLength: '2', account: accounts.open(a2, () => {}), timeoutMs: 1000, onRefused: (r) => refusals.push(r), requestBytes: 4000 }, 1000);
    await assert.rejects(waited, (err: BodyError) => err.statusCode === 429);
    assert.deepEqual(refusals, ['budget'], 'no memory for its cost: 429, counted');
    assert.equal(starved.readableFlowing, null, 'never read: flow control holds its body back');
    accounts.close(third);
    accounts.close(account);
    assert.equal(budget.held, 0, 'given back when the request is answered');
  });

  test('the shares derive from the total, never below one whole body, and the total cannot be smaller than one', () => {
    assert.deepEqual(bodyBudgetLimits(48 * MiB, 8 * MiB), { totalBytes: 48 * MiB, perPeerBytes: 24 * MiB, perConnectionBytes: 16 * MiB, perStreamBytes: 8 * MiB, perRequestBytes: COST, waitMs: 1000 });
    assert.deepEqual(bodyBudgetLimits(16 * MiB, 8 * MiB), { totalBytes: 16 * MiB, perPeerBytes: 8 * MiB + COST, perConnectionBytes: 8 * MiB + COST, perStreamBytes: 8 * MiB, perRequestBytes: COST, waitMs: 1000 }, 'a whole body and its request cost');
    assert.deepEqual(bodyBudgetLimits(8 * MiB, 8 * MiB), { totalBytes: 8 * MiB, perPeerBytes: 8 * MiB, perConnectionBytes: 8 * MiB, perStreamBytes: 8 * MiB, perRequestBytes: COST, waitMs: 1000 });
    assert.throws(() => bodyBudgetLimits(4 * MiB, 8 * MiB), /cannot be smaller than the largest body/);
  });
});

/** An HTTP/2 session from `localAddress`, another peer than 127.0.0.1. */
function session(server: ServeProcess, localAddress = '127.0.0.1'): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = http2Connect(`https://localhost:${server.port}`, {
      createConnection: () => tlsConnect({ socket: netConnect({ host: '127.0.0.1', port: server.port, localAddress }), servername: 'localhost', ca: server.ca, ALPNProtocols: ['h2'] }),
    });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

interface Outcome {
  status: number;
  retryAfter?: string;
  body: string;
  rstCode?: number;
}

/** A POST whose body is `bytes` long (declared when `declare`), of which only `send` are sent: the rest never comes. */
function post(s: ClientHttp2Session, bytes: number, send: number, declare = true): { stream: ClientHttp2Stream; outcome: Promise<Outcome> } {
  const stream = s.request({ ':method': 'POST', ':path': '/mutate?timeout=10s', 'content-type': 'application/json', ...(declare ? { 'content-length': bytes } : {}) });
  const outcome = new Promise<Outcome>((resolve) => {
    let status = 0;
    let retryAfter: string | undefined;
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => ((status = Number(h[':status'])), (retryAfter = h['retry-after'] as string | undefined)));
    stream.on('data', (c: string) => (body += c));
    stream.on('error', () => {});
    stream.on('close', () => resolve({ status, body, rstCode: stream.rstCode, ...(retryAfter !== undefined ? { retryAfter } : {}) }));
  });
  stream.write(Buffer.alloc(send, 0x20));
  if (send === bytes) stream.end();
  return { stream, outcome };
}

function review(s: ClientHttp2Session): Promise<Outcome> {
  const stream = s.request({ ':method': 'POST', ':path': '/mutate?timeout=10s', 'content-type': 'application/json', 'content-length': Buffer.byteLength(REVIEW) });
  return new Promise((resolve) => {
    let status = 0;
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (c: string) => (body += c));
    stream.on('close', () => resolve({ status, body }));
    stream.end(REVIEW);
  });
}

async function metric(server: ServeProcess, name: string): Promise<number> {
  const text = (await get(server, '/metrics')).body;
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

describe('deed serve with a body budget of 16 MiB (a peer and a connection 8 MiB and a request cost) and a body deadline of 4 s', () => {
  let server: ServeProcess;
  before(async () => {
    server = await startServe(['--body-budget', '16', '--body-timeout', '4']);
  });
  after(async () => {
    await server.stop();
  });

  test("a body that cannot get memory is answered 429 with Retry-After, its stream reset, and counted; a second peer's review is answered meanwhile", async () => {
    const attacker = await session(server, '127.0.0.2');
    const other = await session(server, '127.0.0.2');
    const held = post(attacker, 8 * MiB - 1, 8 * MiB - 2); // all but its last byte, then stalls
    // The server grants and releases memory in its own time: wait for the gauge, then read it.
    await eventually('the grant', async () => (await metric(server, 'deed_request_body_bytes')) === 8 * MiB - 2 + COST, 3_000);
    const refused = await post(other, 1024, 1024).outcome; // the peer's share is taken, on another connection too
    assert.equal(refused.status, 429);
    assert.equal(refused.retryAfter, '1');
    assert.match(refused.body, /memory budget/);
    assert.equal(await metric(server, 'deed_request_bodies_refused_total{reason="budget"}'), 1);

    const api = await session(server);
    const answered = await review(api);
    assert.equal(answered.status, 200, answered.body);

    held.stream.close(constants.NGHTTP2_CANCEL);
    await held.outcome;
    await eventually('the release', async () => (await metric(server, 'deed_request_body_bytes')) === 0, 5_000);
    assert.equal(await metric(server, 'deed_request_body_bytes'), 0, 'a stream that goes away gives its memory back');
    const after = await post(other, 1024, 1024).outcome;
    assert.equal(after.status, 400, 'granted and read: the body is just not a review');
    for (const s of [attacker, other, api]) s.destroy();
  });

  test('a declared length holds nothing until its bytes arrive: an upload that never comes takes no memory', async () => {
    const attacker = await session(server, '127.0.0.2');
    const stalled = [post(attacker, 8 * MiB - 1, 64 * 1024), post(attacker, 8 * MiB - 1, 0)];
    await eventually('the first grant', async () => (await metric(server, 'deed_request_body_bytes')) === 64 * 1024 + 2 * COST, 3_000);
    const other = await session(server, '127.0.0.2');
    const answered = await post(other, 1024, 1024).outcome;
    assert.equal(answered.status, 400, `the peer still has room: granted and read, just not a review (${answered.status} ${answered.body})`);
    for (const h of stalled) h.stream.close(constants.NGHTTP2_CANCEL);
    await Promise.all(stalled.map((h) => h.outcome));
    for (const s of [attacker, other]) s.destroy();
  });

  test('a body not complete by --body-timeout is answered 408, its stream reset, its memory given back, and counted', async () => {
    const attacker = await session(server, '127.0.0.2');
    const before = await metric(server, 'deed_request_bodies_refused_total{reason="timeout"}');
    const started = Date.now();
    const stalled = post(attacker, 2 * MiB, MiB);
    await eventually('the grant', async () => (await metric(server, 'deed_request_body_bytes')) === MiB + COST, 3_000);
    const outcome = await stalled.outcome;
    assert.equal(outcome.status, 408, outcome.body);
    assert.match(outcome.body, /did not arrive within 4 s/);
    assert.equal(outcome.rstCode, constants.NGHTTP2_CANCEL);
    assert.ok(Date.now() - started >= 3_900, 'not before the deadline');
    await eventually('the release', async () => (await metric(server, 'deed_request_body_bytes')) === 0, 3_000);
    assert.equal(await metric(server, 'deed_request_bodies_refused_total{reason="timeout"}'), (Number.isNaN(before) ? 0 : before) + 1);
    attacker.destroy();
  });

  test("a refused stream is reset once answered, so the client's never-ending body stops", async () => {
    const attacker = await session(server, '127.0.0.2');
    const held = post(attacker, 8 * MiB - 1, 8 * MiB - 2);
    await eventually('the grant', async () => (await metric(server, 'deed_request_body_bytes')) === 8 * MiB - 2 + COST, 3_000);
    const refused = post(attacker, 7 * MiB, 64 * 1024, false); // no declared length, never ends
    const outcome = await refused.outcome;
    assert.equal(outcome.status, 429);
    assert.equal(outcome.rstCode, constants.NGHTTP2_CANCEL);
    held.stream.close(constants.NGHTTP2_CANCEL);
    attacker.destroy();
  });

  test('a stream waiting for memory is not read: flow control lets through no more than its window', async () => {
    const attacker = await session(server, '127.0.0.2');
    const held = post(attacker, 8 * MiB - 1, 8 * MiB - 2);
    await eventually('the grant', async () => (await metric(server, 'deed_request_body_bytes')) === 8 * MiB - 2 + COST, 3_000);
    const stream = attacker.request({ ':method': 'POST', ':path': '/mutate?timeout=10s', 'content-type': 'application/json' });
    stream.on('error', () => {});
    stream.resume();
    let accepted = 0; // written to the socket: the client's stream buffer drained past it
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    let writes = 0;
    const pump = () => {
      while (writes < 64) {
        writes++;
        if (!stream.write(chunk, () => (accepted += chunk.length))) return void stream.once('drain', pump);
      }
    };
    pump();
    await new Promise((r) => setTimeout(r, 500)); // within the 1 s wait: not yet refused
    // The stream's window (64 KiB), what its paused readable side buffers before Node stops
    // reading from nghttp2 (its highWaterMark: 16 KiB on Node 20, 64 KiB from Node 22) and a
    // frame in flight: never the megabyte the client tried to send.
    assert.ok(accepted <= 160 * 1024, `${accepted} bytes went out while the stream waited`);
    held.stream.close(constants.NGHTTP2_CANCEL);
    attacker.destroy();
  });

  test('a declared length over the body limit is answered 413 without reading it', async () => {
    const s = await session(server);
    const outcome = await post(s, 9 * MiB, 1024).outcome;
    assert.equal(outcome.status, 413);
    assert.match(outcome.body, /too large/);
    s.destroy();
  });
});
