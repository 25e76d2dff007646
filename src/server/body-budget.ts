// A memory budget for request bodies. Without one, one HTTP/2 connection with 100 streams,
// each sending 7.9 MiB of a body that never ends, took `deed serve` from 123 MiB to 1 GiB
// in 8 s (the 8 MiB body limit times 100 streams, and no total): an OOM kill under the
// chart's 256 MiB limit, and with failurePolicy Fail every sandbox write failing.
//
// A body holds the bytes it has sent, for at most the body deadline. Each chunk is read
// only into bytes granted for it, taken from three pools at once: the process, the peer
// address and the connection. While a stream waits for a grant, nothing reads it: Node
// then stops consuming its data, so HTTP/2 flow control keeps the stream's window closed
// and the client cannot send more than that window (64 KiB by default). A stream that
// cannot get a grant within the wait is answered 429 with Retry-After; one whose body is
// not complete by the deadline (`--body-timeout`) is answered 408; either is reset once
// answered (the rest of its body is not wanted) and counted.
//
// Why by arrival and with a deadline: a declared length granted whole at once let two
// addresses hold the whole budget with uploads they never sent (a forged review needs no
// credential without --client-ca), and every review of the API server waited, then failed.
// Now holding the budget costs uploading it again every deadline (48 MiB per 2 s), and the
// API server, which sends each body at once, is never the one holding a stalled grant.
//
// What is counted is what a request holds, not only its bytes: each request a fixed cost
// (perRequestBytes) from before its first chunk until it is answered, and a body, once
// whole, what decoding and parsing it will add (the text, the parsed strings, the structure:
// readBody). Counting bytes alone let 10,000 small HTTP/2 requests from one address take
// 442 MiB, and a parsed 8 MiB body with one character past U+00FF hold five times its size.
import { isAscii, isUtf8 } from 'node:buffer';
import { constants, type Http2Stream } from 'node:http2';
import type { Readable } from 'node:stream';

export interface BodyBudgetLimits {
  /** Request body bytes held in memory by the whole process. */
  totalBytes: number;
  /** Of which one peer address may hold. */
  perPeerBytes: number;
  /** Of which one connection may hold (an HTTP/2 session's streams together). */
  perConnectionBytes: number;
  /** One request's body (the body limit: larger is answered 413). */
  perStreamBytes: number;
  /** What each request holds besides its body, from before its first chunk until it is answered (REQUEST_COST_BYTES). */
  perRequestBytes: number;
  /** How long a request may wait for a grant before it is answered 429. */
  waitMs: number;
}

/** Why a body was refused, as the metric's `reason`: no memory within the wait, or not complete by its deadline. */
export type BodyRefusal = 'budget' | 'timeout';

// The chart gives Deed 256 MiB; idle it holds about 100 MiB, and a body read is held as
// bytes, then as text and a parsed object for the length of its review: three times its
// size and its structure, five times with one character past U+00FF (readBody grants all
// of it, and each request's cost). 48 MiB keeps the peak well under the limit, and is still
// several of the largest reviews (an UPDATE of a 1.5 MiB object, 3.1 MiB: 9.5 MiB held, 16
// MiB with one emoji) or hundreds of ordinary ones (a few KiB each, and 32 KiB a request).
export const DEFAULT_BODY_BUDGET_BYTES = 48 * 1024 * 1024;
/** Long enough for a review ahead to finish; far shorter than the API server's timeout, which then retries or fails by policy. */
export const DEFAULT_BODY_WAIT_MS = 1_000;
/**
 * Requests of one connection that may wait for a grant at once; beyond, they are refused
 * at once. A waiting stream still holds what flow control let in (up to its window, in
 * views that keep the session's read buffers alive): a hostile session's 100 streams all
 * waiting would hold more than their grants.
 */
const MAX_WAITING_PER_CONNECTION = 4;
/**
 * The API server sends a review's body at once, in milliseconds; 2 s leaves room for a slow
 * link (8 MiB, the largest body, at 32 Mbit/s) and keeps a stalled upload's hold short.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 2_000;
/**
 * What one request holds besides its body: its HTTP/2 stream or HTTP/1.1 request state, the
 * fastify request and reply, their listeners and closures. Measured 16 to 36 KiB each
 * (scripts/rev83/h2-streams.ts: 10,000 small requests in flight from one address took
 * `deed serve` from 82 to 442 MiB RSS, 36 KiB a request, the bodies a few KiB of it). 32 KiB
 * a request: the budget's 48 MiB is then at most 1,536 requests in flight, a peer's half 768
 * (the API server's own address keeps the other half: hundreds of reviews at once, each
 * with its body), a connection's third 512 (an HTTP/2 session carries at most 100 streams).
 */
export const REQUEST_COST_BYTES = 32 * 1024;

/**
 * Shares derived from the total: one peer half of it (so a second peer, the API server,
 * always has the other half), one connection a third; never less than one whole body and
 * its request's cost (nor more than the total).
 */
export function bodyBudgetLimits(totalBytes: number, perStreamBytes: number, waitMs = DEFAULT_BODY_WAIT_MS, perRequestBytes = REQUEST_COST_BYTES): BodyBudgetLimits {
  if (totalBytes < perStreamBytes) throw new Error(`the body budget (--body-budget, ${totalBytes} bytes) cannot be smaller than the largest body (${perStreamBytes} bytes)`);
  const least = Math.min(totalBytes, perStreamBytes + perRequestBytes);
  return {
    totalBytes,
    perPeerBytes: Math.max(least, Math.floor(totalBytes / 2)),
    perConnectionBytes: Math.max(least, Math.floor(totalBytes / 3)),
    perStreamBytes,
    perRequestBytes,
    waitMs,
  };
}

/** Who holds a grant: the connection (a socket or an HTTP/2 session) and its peer address. */
export interface Holder {
  connection: object;
  peer: string;
}

interface Waiter {
  holder: Holder;
  bytes: number;
  grant: () => void;
}

/** An error the transport answers with its status (and headers). */
export class BodyError extends Error {
  constructor(
    message: string,
    readonly statusCode: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export class BodyBudget {
  private used = 0;
  private readonly byPeer = new Map<string, number>();
  private readonly byConnection = new Map<object, number>();
  private readonly waiting: Waiter[] = [];

  /** `onChange` hears the bytes held after every grant and release (a gauge). */
  constructor(
    readonly limits: BodyBudgetLimits,
    private readonly onChange: (held: number) => void = () => {},
  ) {}

  /** Bytes held now, by the process. */
  get held(): number {
    return this.used;
  }

  /** Takes `bytes` at once when every pool has them; false otherwise (nothing taken). */
  tryTake(holder: Holder, bytes: number): boolean {
    const peer = this.byPeer.get(holder.peer) ?? 0;
    const conn = this.byConnection.get(holder.connection) ?? 0;
    const l = this.limits;
    if (this.used + bytes > l.totalBytes || peer + bytes > l.perPeerBytes || conn + bytes > l.perConnectionBytes) return false;
    this.used += bytes;
    this.byPeer.set(holder.peer, peer + bytes);
    this.byConnection.set(holder.connection, conn + bytes);
    this.onChange(this.used);
    return true;
  }

  /** Takes `bytes`, waiting up to `waitMs` for them; false when they did not come in time, or the request went away. */
  take(holder: Holder, bytes: number, gone?: AbortSignal): Promise<boolean> {
    if (this.tryTake(holder, bytes)) return Promise.resolve(true);
    if (gone?.aborted || this.waitingOf(holder.connection) >= MAX_WAITING_PER_CONNECTION) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (granted: boolean) => {
        clearTimeout(timer);
        gone?.removeEventListener('abort', giveUp);
        resolve(granted);
      };
      const waiter: Waiter = { holder, bytes, grant: () => done(true) };
      const giveUp = () => {
        const i = this.waiting.indexOf(waiter);
        if (i < 0) return; // granted meanwhile
        this.waiting.splice(i, 1);
        done(false);
      };
      const timer = setTimeout(giveUp, this.limits.waitMs);
      gone?.addEventListener('abort', giveUp, { once: true });
      this.waiting.push(waiter);
    });
  }

  private waitingOf(connection: object): number {
    let n = 0;
    for (const w of this.waiting) if (w.holder.connection === connection) n++;
    return n;
  }

  /** Requests waiting for a grant now. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Gives `bytes` back and grants waiters, oldest first, that now fit. */
  release(holder: Holder, bytes: number): void {
    if (bytes <= 0) return;
    this.used -= bytes;
    const peer = (this.byPeer.get(holder.peer) ?? 0) - bytes;
    if (peer > 0) this.byPeer.set(holder.peer, peer);
    else this.byPeer.delete(holder.peer);
    const conn = (this.byConnection.get(holder.connection) ?? 0) - bytes;
    if (conn > 0) this.byConnection.set(holder.connection, conn);
    else this.byConnection.delete(holder.connection);
    this.onChange(this.used);
    for (let i = 0; i < this.waiting.length; ) {
      const w = this.waiting[i]!;
      if (this.tryTake(w.holder, w.bytes)) {
        this.waiting.splice(i, 1);
        w.grant();
      } else i++;
    }
  }
}

/**
 * One request's share: what it holds, taken and given back through the budget. Released
 * once, whichever comes first: the caller's release, or the end of its connection (a
 * request whose answer never comes cannot keep its bytes past its socket).
 */
export class Account {
  held = 0;
  /** Set once the account is closed: a grant that arrives later is given back at once, never kept. */
  private closed = false;
  constructor(
    private readonly budget: BodyBudget,
    readonly holder: Holder,
  ) {}

  /** Takes `bytes` when the budget has them now; false otherwise (nothing taken, nothing waited for). */
  tryTake(bytes: number): boolean {
    if (!this.budget.tryTake(this.holder, bytes)) return false;
    this.held += bytes;
    return true;
  }

  async take(bytes: number, gone?: AbortSignal): Promise<boolean> {
    if (!(await this.budget.take(this.holder, bytes, gone))) return false;
    if (this.closed) {
      // Granted in the same turn as the request was refused or went away: the bytes were
      // taken from the pools, and nobody would give them back.
      this.budget.release(this.holder, bytes);
      return false;
    }
    this.held += bytes;
    return true;
  }

  release(): void {
    this.budget.release(this.holder, this.held);
    this.held = 0;
  }

  /** Releases what it holds, and whatever a grant still in flight would add. */
  close(): void {
    this.closed = true;
    this.release();
  }
}

/** Accounts by connection, so a closed connection gives back whatever its requests still hold. */
export class Accounts {
  private readonly byConnection = new Map<object, Set<Account>>();
  constructor(readonly budget: BodyBudget) {}

  /** A new account; `onClose` is asked, once per connection, to call back when the connection ends. */
  open(holder: Holder, onClose: (f: () => void) => void): Account {
    let set = this.byConnection.get(holder.connection);
    if (set === undefined) {
      this.byConnection.set(holder.connection, (set = new Set()));
      onClose(() => {
        for (const a of set!) a.close();
        this.byConnection.delete(holder.connection);
      });
    }
    const account = new Account(this.budget, holder);
    set.add(account);
    return account;
  }

  /** Releases an account and forgets it. */
  close(account: Account): void {
    account.close();
    this.byConnection.get(account.holder.connection)?.delete(account);
  }
}

/** What the transport needs to read one body. */
export interface BodyRequest {
  /** The request stream; it is read only as far as grants allow. */
  payload: Readable;
  contentLength: string | undefined;
  /** Holds what is granted; released by the caller once the request is answered (the parsed review lives until then). */
  account: Account;
  /** How long the whole body may take to arrive, from the call. */
  timeoutMs: number;
  /** Counts a request refused for want of memory (429) or of its body in time (408). */
  onRefused: (reason: BodyRefusal) => void;
  /**
   * The most one request may hold: its cost, its bytes, its text and what parsing adds
   * (heldOnceParsed); past it the body is refused (413) before it is parsed. Unbounded when
   * undefined.
   */
  maxParsedBytes?: number;
  /** What the request holds besides its body, taken before its first chunk (0 when undefined). */
  requestBytes?: number;
}

/** A body read whole, decoded: the text JSON.parse is handed (it is not decoded again). */
export interface ReadBody {
  /** The body's bytes (held until the review is answered, as far as the budget knows). */
  bytes: Buffer;
  text: string;
}

/** What parsing makes of each `{` or `[` (an object or array, V8: 8 MiB of `{},` took 288 MiB) and of each `,` (a slot). */
const BYTES_PER_CONTAINER = 96;
const BYTES_PER_VALUE = 16;
/** Each byte's weight in units of BYTES_PER_VALUE: `{` and `[` 6, `,` 1, any other 0. */
const UNITS = new Uint8Array(256);
UNITS[0x7b] = UNITS[0x5b] = BYTES_PER_CONTAINER / BYTES_PER_VALUE;
UNITS[0x2c] = 1;
/** Two bytes' weight at once: UNITS of a 16-bit word's two bytes added (either byte order). */
const PAIR_UNITS = new Uint8Array(65536);
for (let word = 0; word < PAIR_UNITS.length; word++) PAIR_UNITS[word] = UNITS[word & 0xff]! + UNITS[word >>> 8]!;
/** Bytes counted between two checks against `max`. */
const COUNT_STRIDE = 4096;

/**
 * What parsing a body takes beyond its bytes, estimated from its structure: about 96 bytes an
 * object or array, 16 a further value. A review of empty objects (`[{},{},...]`) is 24 times
 * its size parsed; an ordinary one about twice (the captured pod review: 11 KB more for
 * 9,316 bytes). A brace or comma in a string counts too: an overestimate, never an under.
 * Stops counting past `max`, a stride at a time. One pass, two bytes a lookup (a 64 KiB
 * table of byte pairs), eight bytes a step: half the time of a byte table (20 against 10 µs
 * on the 18 KB label UPDATE, hot in a loop); a Buffer.indexOf per brace and comma cost
 * twice as much again, as much as a label UPDATE's decision inside the server (bench/stages.ts).
 */
export function parseOverhead(body: Uint8Array, max = Infinity): number {
  if (body.length === 0) return 0;
  let units = 0;
  const limit = max / BYTES_PER_VALUE;
  let first = 0;
  // Words are read at even addresses: a body that starts at an odd one counts its first byte alone.
  if ((body.byteOffset & 1) === 1) units += UNITS[body[first++]!]!;
  const words = new Uint16Array(body.buffer, body.byteOffset + first, (body.length - first) >>> 1);
  const stride = COUNT_STRIDE / 2;
  for (let start = 0; start < words.length && units <= limit; start += stride) {
    const end = Math.min(start + stride, words.length);
    let i = start;
    for (; i + 3 < end; i += 4) units += PAIR_UNITS[words[i]!]! + PAIR_UNITS[words[i + 1]!]! + PAIR_UNITS[words[i + 2]!]! + PAIR_UNITS[words[i + 3]!]!;
    for (; i < end; i++) units += PAIR_UNITS[words[i]!]!;
  }
  if (((body.length - first) & 1) === 1) units += UNITS[body[body.length - 1]!]!; // the last byte, alone
  return units * BYTES_PER_VALUE;
}

/** `\u`: where a JSON escape may start. */
const BACKSLASH_U = Buffer.from('\\u');

/** What a body's text and its parsed strings will take (V8: one byte a character, or two), known from its bytes before it is decoded. */
export interface BodySize {
  /** Every byte below 0x80: decoded as Latin-1 (the same characters, no UTF-8 decoding). */
  ascii: boolean;
  /** A character past U+00FF (or bytes that are not UTF-8, decoded to U+FFFD): the text is two bytes a character. */
  wide: boolean;
  /** The text: its length if every character fits a byte (Latin-1), twice its length otherwise. */
  textBytes: number;
  /**
   * The parsed strings at most: as the text (V8 makes every string parsed from a two-byte
   * text two-byte, an ASCII one included: 4 MiB of `a` then parse to 8 MiB), and twice the
   * text's length when a one-byte text escapes a character past U+00FF (`\u4e2d` makes its
   * string two-byte). Go's encoder escapes <, > and & (`\u003c`): those stay one byte.
   */
  stringBytes: number;
}

/**
 * Sizes a body's text and parsed strings from its bytes, so they are granted before they
 * exist (decoding 8 MiB with one wide character first made 16 MiB of text, ungranted, for
 * every body then refused). An ASCII body (every ordinary review) costs one `isAscii` pass
 * (SIMD) and a search for `\u`. Any other is counted byte by byte (about 1 ns a byte): its
 * UTF-16 length (a byte that does not continue a character, and a second unit for one past
 * U+FFFF) and whether a character is past U+00FF (a lead byte from 0xC4); invalid UTF-8
 * decodes to U+FFFD, past U+00FF, at most one a byte.
 */
export function sizeOfBody(body: Buffer): BodySize {
  const n = body.length;
  if (isAscii(body)) return { ascii: true, wide: false, textBytes: n, stringBytes: escapesWide(body) ? 2 * n : n };
  if (!isUtf8(body)) return { ascii: false, wide: true, textBytes: 2 * n, stringBytes: 2 * n };
  let continuations = 0;
  let astral = 0;
  let wide = false;
  for (let i = 0; i < n; i++) {
    const b = body[i]!;
    if (b < 0x80) continue;
    if (b < 0xc0) continuations++;
    else {
      if (b >= 0xc4) wide = true;
      if (b >= 0xf0) astral++;
    }
  }
  const units = n - continuations + astral;
  if (wide) return { ascii: false, wide, textBytes: 2 * units, stringBytes: 2 * units };
  return { ascii: false, wide, textBytes: units, stringBytes: escapesWide(body) ? 2 * units : units };
}

/** Whether a body escapes a character past U+00FF (`\u` not followed by `00`; an escaped backslash before a `u` counts too: an overestimate, never an under). */
function escapesWide(body: Buffer): boolean {
  for (let i = body.indexOf(BACKSLASH_U); i >= 0; i = body.indexOf(BACKSLASH_U, i + 2)) if (body[i + 2] !== 0x30 || body[i + 3] !== 0x30) return true;
  return false;
}

/**
 * Reads a body within the budget, into bytes `account` holds: the request's cost first,
 * then each chunk is granted as it arrives, then what the body will hold once decoded and
 * parsed (its text, its parsed strings, its structure) before it is handed back to parse. Rejects with a BodyError: 413 too large, 400 longer or shorter than declared,
 * 429 no memory in time, 408 not complete by the deadline; what the account took is then
 * given back.
 */
export async function readBody(r: BodyRequest, perStreamBytes: number): Promise<ReadBody> {
  const declared = r.contentLength === undefined ? undefined : Number(r.contentLength);
  if (declared !== undefined && !(Number.isSafeInteger(declared) && declared >= 0)) throw new BodyError('the content-length header is not a length', 400);
  if (declared !== undefined && declared > perStreamBytes) throw new BodyError(`the body is too large: ${declared} bytes, the limit is ${perStreamBytes}`, 413);
  const limit = declared ?? perStreamBytes;

  const { account } = r;
  // The signal a wait for memory gives up on, made only when a grant must be waited for:
  // an HTTP/1.1 request's stream closes (a nextTick after its 'end') on every request, and
  // aborting a controller builds a DOMException with its stack, ~5% of a review's CPU in
  // a profile under load. The 'close' listener goes once the body is read.
  let gone: AbortController | undefined;
  let closed = false;
  let expired = false;
  const abort = () => {
    closed = true;
    gone?.abort();
  };
  r.payload.once('close', abort);
  const late = () => {
    r.onRefused('timeout');
    return new BodyError(`the body did not arrive within ${r.timeoutMs / 1000} s (--body-timeout); the API server sends a review at once`, 408);
  };
  const grow = async (bytes: number) => {
    if (account.tryTake(bytes)) return;
    gone ??= new AbortController();
    if (closed || expired) gone.abort();
    const granted = await account.take(bytes, gone.signal);
    if (expired) throw late();
    if (!granted) {
      if (gone.signal.aborted) throw new BodyError('the request went away while its body waited for memory', 400);
      r.onRefused('budget');
      throw new BodyError('Deed is holding as many request bodies as its memory budget allows; retry', 429, { 'retry-after': '1' });
    }
  };

  let timer: NodeJS.Timeout | undefined;
  try {
    // The request's own cost, before any chunk: a request that sends next to nothing still holds it.
    if (r.requestBytes !== undefined && r.requestBytes > 0) await grow(r.requestBytes);
    // Chunks are copied into buffers of Deed's own: one an HTTP/2 stream hands over is a
    // view into the session's larger read buffer, which keeping it would keep alive.
    const chunks: Buffer[] = [];
    let length = 0;
    const take = async (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      const needed = length + bytes.length;
      if (needed > limit) {
        if (declared !== undefined) throw new BodyError(`the body is longer than its content-length (${declared} bytes)`, 400);
        throw new BodyError(`the body is too large: the limit is ${perStreamBytes} bytes`, 413);
      }
      await grow(bytes.length);
      chunks.push(Buffer.copyBytesFrom(bytes));
      length = needed;
    };
    let waiting = false; // a chunk's grant is awaited: the deadline lets that wait end first, so a late grant is given back
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        r.payload.off('data', onData).off('end', onEnd).off('error', done).off('close', abort);
        // Refused before its end (the deadline, the budget): the socket may still be reset
        // under it, and an 'error' no one listens for would take the process down.
        if (err) {
          r.payload.on('error', ignore).once('close', () => r.payload.off('error', ignore));
          reject(err);
        } else resolve();
      };
      const onEnd = () => done();
      // Paused while a grant is awaited: no chunk is taken from the stream meanwhile. The
      // stream is never destroyed here, so a refusal can still be answered on it.
      const onData = (chunk: Buffer | string) => {
        r.payload.pause();
        waiting = true;
        take(chunk).then(() => {
          waiting = false;
          if (expired) done(late());
          else r.payload.resume();
        }, done);
      };
      timer = setTimeout(() => {
        expired = true;
        if (waiting) gone?.abort();
        else done(late());
      }, r.timeoutMs);
      r.payload.on('data', onData).once('end', onEnd).once('error', done);
      r.payload.resume();
    });
    if (declared !== undefined && length !== declared) throw new BodyError(`the body is shorter than its content-length (${declared} bytes)`, 400);
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
    // What it will take once decoded and parsed is held too: the budget bounds memory, not
    // bytes received. Sized from the bytes, granted, then decoded (once: the text is parsed).
    const most = r.maxParsedBytes ?? Infinity;
    const { ascii, wide, textBytes, stringBytes } = sizeOfBody(body);
    const before = account.held + textBytes + stringBytes;
    const overhead = parseOverhead(body, most - before + 1);
    if (before + overhead > most) {
      const twoBytes = wide ? 'it holds a character past U+00FF (or bytes that are not UTF-8), so its text and its parsed strings take two bytes a character' : textBytes < stringBytes ? 'it escapes a character past U+00FF, so its parsed strings take two bytes a character' : undefined;
      const why = before <= most ? 'it is made of many small objects, arrays or values, which an admission review is not' : `its bytes, its text (${textBytes} bytes) and its parsed strings (${stringBytes}) are held together${twoBytes === undefined ? '' : `; ${twoBytes}`}`;
      throw new BodyError(`the body is too large to parse: its ${length} bytes would take more than ${most} bytes of memory once decoded and parsed (${why})`, 413);
    }
    await grow(textBytes + stringBytes + overhead);
    const text = body.toString(ascii ? 'latin1' : 'utf8');
    return { bytes: body, text };
  } catch (err) {
    account.release();
    throw err;
  } finally {
    r.payload.off('close', abort);
  }
}

function ignore(): void {}

/**
 * After a refusal over HTTP/2, the rest of the body is not wanted: once the answer is
 * written (the stream's writable side finished), the stream is reset, so the client
 * stops sending and the stream's slot is free again. RFC 9113 (8.1) suggests NO_ERROR,
 * but Node sends that reset only once the client has ended its side, which a hostile one
 * never does: CANCEL goes at once, after the answer's frames.
 * HTTP/1.1 closes the connection instead (fastify answers a body error with
 * `connection: close`).
 */
export function endUnreadStream(stream: Http2Stream | undefined): void {
  stream?.once('finish', () => {
    if (!stream.destroyed && !stream.closed) stream.close(constants.NGHTTP2_CANCEL);
  });
}
