// Graceful shutdown of open connections. `server.close()` only stops accepting: on
// Node 20 an open HTTP/2 session (kube-apiserver keeps one per webhook) holds the
// process until fastify's 72 s session timeout, well past the pod's grace period.
// fastify's `forceCloseConnections` is no answer: its default ('idle') does not exist
// for an HTTP/2 server, so fastify turns it off, and `true` destroys HTTP/1.1
// keep-alive sockets whether or not a review is in flight on them.
//
// Draining instead: each HTTP/2 session gets a GOAWAY (its open streams finish, the
// client opens no new one); an HTTP/1.1 socket between two requests is closed (as
// Node's closeIdleConnections would); one serving a request closes right after its
// response. A socket that has not sent its first request yet is left alone: its
// request is on the way and gets an answer. HTTP/1.1 responses to requests that arrive
// once draining has begun say `connection: close` (review answers already do once
// readiness is off, in app.ts).
//
// Requests are counted through fastify's onRequest and onResponse hooks (request-hooks.ts),
// which ride on listeners fastify sets up for every request anyway: a 'request' listener adding a
// 'close' listener per response cost 2 to 8% of a review's CPU (bench/MEASUREMENTS.md).
import type { FastifyInstance } from 'fastify';
import type { Http2SecureServer, ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { RequestHooks } from './request-hooks.js';

export interface ConnectionDrain extends RequestHooks {
  /** Starts draining; idempotent. New sessions and requests from now on are closed after their answer. */
  drain(): void;
  /** Connections still open (for the shutdown log line). */
  open(): { sessions: number; sockets: number };
}

export function trackConnections(app: FastifyInstance): ConnectionDrain {
  const server = app.server as unknown as Http2SecureServer;
  const sessions = new Set<ServerHttp2Session>();
  // HTTP/1.1 sockets that have sent a request, each with the requests being answered on it.
  const inFlight = new Map<Socket, number>();
  let draining = false;

  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    if (draining) session.close();
  });

  const onRequest: RequestHooks['onRequest'] = (req, reply) => {
    if (req.raw.httpVersionMajor === 1) {
      // HTTP/2 streams are the session's business.
      const socket = req.raw.socket;
      const count = inFlight.get(socket);
      if (count === undefined) socket.once('close', () => inFlight.delete(socket));
      inFlight.set(socket, (count ?? 0) + 1);
      // Whatever the route (probes, metrics, a refused review), the client must not reuse
      // a connection that is closed after this answer.
      if (draining) void reply.header('connection', 'close');
    }
  };

  // fastify runs onResponse when the response finishes or fails; a socket that closes
  // first is forgotten by its 'close' listener above.
  const onResponse: RequestHooks['onResponse'] = (req) => {
    const socket = req.raw.httpVersionMajor === 1 ? req.raw.socket : undefined;
    const count = socket === undefined ? undefined : inFlight.get(socket);
    if (socket !== undefined && count !== undefined) {
      inFlight.set(socket, Math.max(0, count - 1));
      if (draining && count <= 1 && !socket.destroyed) socket.end();
    }
  };

  return {
    onRequest,
    onResponse,
    drain() {
      if (draining) return;
      draining = true;
      for (const session of sessions) session.close();
      // Like Node's closeIdleConnections: a request racing this close is retried by the
      // client (the connection closed before it wrote anything back).
      for (const [socket, count] of inFlight) if (count === 0) socket.destroy();
    },
    open: () => ({ sessions: sessions.size, sockets: inFlight.size }),
  };
}
