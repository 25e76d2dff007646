// Deadlines for every phase of a connection, and a bound on how many are open. Anything
// that can reach the Service can open connections to Deed; Go's net/http gives a webhook
// ReadHeaderTimeout, IdleTimeout and a handshake deadline, Node's HTTP/2 server with
// HTTP/1.1 fallback gives none that fit (its own HTTP/1.1 checks run every 30 s against
// 60 s and 5 min; an HTTP/2 session with a stalled stream is never closed). Measured
// without them: 2,400 connections that never finish held for 90 s and more, RSS 160 MiB
// (docs/reliability.md, "Hostile connections").
//
//   phase                                              deadline   then
//   TCP accept to the end of the TLS handshake         handshake  socket destroyed (Node's handshakeTimeout)
//   handshake to the first request's headers (HTTP/1.1)
//     or to the first stream (HTTP/2)                  headers    socket destroyed / GOAWAY
//   a request's headers to the end of its answer
//     (body, decision, write)                          request    HTTP/1.1 socket destroyed; HTTP/2 stream
//                                                                 reset (CANCEL) and the session sent GOAWAY
//   an answer to the next request's headers (HTTP/1.1),
//     or an HTTP/2 session with no open stream         idle       socket destroyed / GOAWAY
//
// Timers run on whole requests, not on socket inactivity: a client that sends one byte
// every few seconds keeps a socket active forever. Pings and SETTINGS do not keep an
// HTTP/2 session alive; only streams do.
import type { FastifyInstance } from 'fastify';
import { constants, type Http2SecureServer, type Http2Stream, type ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { DEFAULT_BODY_BUDGET_BYTES, DEFAULT_BODY_TIMEOUT_MS } from './body-budget.js';
import { ConnectionSlots, type Refusal, type Slot } from './connection-slots.js';
import type { RequestHooks } from './request-hooks.js';

export interface ConnectionLimits {
  /** TCP accept to the end of the TLS handshake. */
  handshakeTimeoutMs: number;
  /** Handshake to the first request's headers (HTTP/1.1) or first stream (HTTP/2). */
  headersTimeoutMs: number;
  /** A request's headers to the end of its answer: its body, the decision, the write. */
  requestTimeoutMs: number;
  /** Between two HTTP/1.1 requests; an HTTP/2 session with no open stream. */
  idleTimeoutMs: number;
  /** Open connections per process, in every phase; beyond it new ones are closed at once. */
  maxConnections: number;
  /** Open connections per peer address, so one source cannot take every slot. */
  maxConnectionsPerPeer: number;
  /** Request body bytes held in memory by the process (body-budget.ts). */
  bodyBudgetBytes: number;
  /** A request's headers to the end of its body: later, it is answered 408 and its memory given back. */
  bodyTimeoutMs: number;
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS. */
  maxConcurrentStreams: number;
  /** Request header bytes: HTTP/1.1 header block, HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE. */
  maxHeaderBytes: number;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  // Go's client side (the API server's) gives a handshake 10 s.
  handshakeTimeoutMs: 10_000,
  // The API server sends its headers as soon as the connection is up.
  headersTimeoutMs: 10_000,
  // The API server waits at most 30 s for a webhook call (timeoutSeconds caps at 30).
  requestTimeoutMs: 30_000,
  // Longer than Go's default idle-connection timeout (90 s, net/http DefaultTransport),
  // so a client keeping its connection between reviews is normally the one to close it.
  idleTimeoutMs: 120_000,
  // `npm run fault` (docs/reliability.md, section 5): 5,000 hostile connections against
  // this bound peaked at 162 MiB RSS (97 MiB idle); held without a bound, 224 MiB, close
  // to the chart's 256 MiB limit. Legitimate callers are a few API servers (HTTP/2, one
  // connection each, many streams); probes and scrapes go to --metrics-port.
  maxConnections: 1_000,
  // An API server opens one HTTP/2 connection per Deed address and another for each 100
  // concurrent reviews; a tenant pod has its own address. One source then holds a tenth
  // of the slots at most.
  maxConnectionsPerPeer: 100,
  bodyBudgetBytes: DEFAULT_BODY_BUDGET_BYTES,
  bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS,
  // RFC 9113 recommends no fewer than 100; Go's own server allows 250.
  maxConcurrentStreams: 100,
  // The API server's headers are a few hundred bytes.
  maxHeaderBytes: 16 * 1024,
};

/** A socket's peer address, IPv4-mapped IPv6 written as IPv4 (one peer, whichever family it came in on). */
export function peerOf(socket: { remoteAddress?: string | undefined } | undefined): string {
  const address = socket?.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** Phases whose deadline can close a connection, as metric label values. */
export type DeadlinePhase = 'handshake' | 'headers' | 'request' | 'idle';

/** Options for http2.createSecureServer: the deadline and limits fixed at construction. */
export function serverOptions(limits: ConnectionLimits) {
  return {
    handshakeTimeout: limits.handshakeTimeoutMs,
    // Without ALPN h2 or http/1.1 the connection is closed after this long.
    unknownProtocolTimeout: limits.handshakeTimeoutMs,
    maxHeaderListPairs: 128,
    settings: { maxConcurrentStreams: limits.maxConcurrentStreams, maxHeaderListSize: limits.maxHeaderBytes },
  };
}

interface SocketState {
  /** The headers or idle deadline, whichever phase the socket is in between requests. */
  timer?: NodeJS.Timeout;
  /** One request deadline per request being answered (more than one only when pipelined). */
  requests: Map<object, NodeJS.Timeout>;
}

/** Arms the deadlines and the bound on a listening-to-be HTTP/2 secure server with HTTP/1.1 fallback. */
export function guardConnections(app: FastifyInstance, limits: ConnectionLimits, metrics: Metrics, logger: Logger): RequestHooks {
  const server = app.server as unknown as Http2SecureServer & { maxHeaderSize?: number };
  server.maxHeaderSize = limits.maxHeaderBytes; // read by the HTTP/1.1 parser of the fallback
  let lastRefusalLog = 0;
  const refused = (reason: Refusal, peer: string) => {
    metrics.connectionsRefused.inc({ reason });
    const now = Date.now();
    if (now - lastRefusalLog > 10_000) {
      lastRefusalLog = now;
      logger.warn({ reason, peer, maxConnections: limits.maxConnections, maxConnectionsPerPeer: limits.maxConnectionsPerPeer }, 'connection refused: at the bound on open connections (counted in deed_connections_refused_total)');
    }
  };
  // The slots are taken at TCP accept, before the TLS server sees the socket (hence
  // prepended); the TLS socket is found again by its address and port.
  const slots = new ConnectionSlots(limits.maxConnections, limits.maxConnectionsPerPeer);
  const bySocket = new Map<string, Slot>();
  server.prependListener('connection', (socket: Socket) => {
    const peer = peerOf(socket);
    const key = `${socket.remoteAddress}:${socket.remotePort}`;
    const slot: Slot = { peer, state: 'handshake', close: () => socket.destroy() };
    const admission = slots.admit(slot);
    if (!admission.admitted) {
      refused(admission.reason, peer);
      socket.destroy();
      return;
    }
    if (admission.evicted) refused(admission.evicted.reason, admission.evicted.slot.peer);
    bySocket.set(key, slot);
    socket.once('close', () => {
      slots.remove(slot);
      if (bySocket.get(key) === slot) bySocket.delete(key);
    });
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    const slot = bySocket.get(`${socket.remoteAddress}:${socket.remotePort}`);
    if (slot !== undefined) slots.established(slot);
  });
  server.on('tlsClientError', (err: NodeJS.ErrnoException) => {
    if (err.code === 'ERR_TLS_HANDSHAKE_TIMEOUT') metrics.connectionsTimedOut.inc({ phase: 'handshake' });
  });

  const close = (phase: DeadlinePhase, act: () => void) => () => {
    metrics.connectionsTimedOut.inc({ phase });
    act();
  };

  // HTTP/1.1: one timer per socket, for whichever phase it is in.
  const sockets = new WeakMap<Socket, SocketState>();
  const destroy = (socket: Socket) => () => socket.destroy();
  const arm = (socket: Socket, state: SocketState, ms: number, phase: DeadlinePhase) => {
    clearTimeout(state.timer);
    state.timer = setTimeout(close(phase, destroy(socket)), ms).unref();
  };
  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol === 'h2') return; // the session below takes it
    const state: SocketState = { requests: new Map() };
    sockets.set(socket, state);
    arm(socket, state, limits.headersTimeoutMs, 'headers');
    socket.once('close', () => {
      clearTimeout(state.timer);
      for (const timer of state.requests.values()) clearTimeout(timer);
    });
  });

  // HTTP/2: the session waits for streams; each stream has the request deadline.
  server.on('session', (session: ServerHttp2Session) => {
    let open = 0;
    let timer: NodeJS.Timeout | undefined;
    const goaway = () => {
      session.close();
      // A client that does not read the GOAWAY cannot hold the socket: its streams have
      // their own deadlines, and the session goes when the last one does or this fires.
      setTimeout(() => session.destroy(), limits.requestTimeoutMs).unref();
    };
    const wait = (ms: number, phase: DeadlinePhase) => {
      clearTimeout(timer);
      timer = setTimeout(close(phase, goaway), ms).unref();
    };
    wait(limits.headersTimeoutMs, 'headers');
    session.on('stream', (stream: Http2Stream) => {
      open++;
      clearTimeout(timer);
      const deadline = setTimeout(
        close('request', () => {
          stream.close(constants.NGHTTP2_CANCEL);
          goaway(); // a client whose stream stalls is broken or hostile: no new streams
        }),
        limits.requestTimeoutMs,
      ).unref();
      stream.once('close', () => {
        clearTimeout(deadline);
        if (--open === 0 && !session.closed && !session.destroyed) wait(limits.idleTimeoutMs, 'idle');
      });
    });
    session.once('close', () => clearTimeout(timer));
  });

  // HTTP/1.1 requests: fastify's hooks (request-hooks.ts) run after the headers are parsed
  // and once the answer is written (or failed); they ride on listeners fastify sets up anyway.
  return {
    onRequest(req) {
      if (req.raw.httpVersionMajor !== 1) return;
      const socket = req.raw.socket;
      const state = sockets.get(socket);
      if (state !== undefined) {
        clearTimeout(state.timer);
        state.requests.set(req.raw, setTimeout(close('request', destroy(socket)), limits.requestTimeoutMs).unref());
      }
    },
    onResponse(req) {
      if (req.raw.httpVersionMajor !== 1) return;
      const socket = req.raw.socket;
      const state = sockets.get(socket);
      if (state !== undefined) {
        clearTimeout(state.requests.get(req.raw));
        state.requests.delete(req.raw);
        if (state.requests.size === 0 && !socket.destroyed) arm(socket, state, limits.idleTimeoutMs, 'idle');
      }
    },
  };
}
