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
// request is on the way and gets an answer.
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Http2SecureServer, Http2ServerRequest, Http2ServerResponse, ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';

export interface ConnectionDrain {
  /** Starts draining; idempotent. New sessions and requests from now on are closed after their answer. */
  drain(): void;
  /** Connections still open (for the shutdown log line). */
  open(): { sessions: number; sockets: number };
}

export function trackConnections(server: Http2SecureServer | HttpServer): ConnectionDrain {
  const sessions = new Set<ServerHttp2Session>();
  const inFlight = new Map<Socket, number>(); // HTTP/1.1 sockets with a request being answered
  const idle = new Set<Socket>(); // HTTP/1.1 sockets between two requests
  const pending = new Set<ServerResponse>(); // HTTP/1.1 responses not finished yet
  let draining = false;

  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    if (draining) session.close();
  });

  server.on('request', (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    if (req.httpVersionMajor !== 1) return; // HTTP/2 streams are the session's business
    const socket = req.socket as Socket;
    if (!inFlight.has(socket) && !idle.has(socket)) socket.once('close', () => (inFlight.delete(socket), idle.delete(socket)));
    idle.delete(socket);
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    const response = res as ServerResponse;
    pending.add(response);
    if (draining) response.setHeader('connection', 'close');
    res.once('close', () => {
      pending.delete(response);
      const left = (inFlight.get(socket) ?? 1) - 1;
      if (left > 0) return void inFlight.set(socket, left);
      inFlight.delete(socket);
      if (socket.destroyed) return;
      if (draining) socket.end();
      else idle.add(socket);
    });
  });

  return {
    drain() {
      if (draining) return;
      draining = true;
      for (const session of sessions) session.close();
      for (const res of pending) if (!res.headersSent) res.setHeader('connection', 'close');
      // Like Node's closeIdleConnections: a request racing this close is retried by the
      // client (the connection closed before it wrote anything back).
      for (const socket of idle) socket.destroy();
      idle.clear();
    },
    open: () => ({ sessions: sessions.size, sockets: inFlight.size + idle.size }),
  };
}
