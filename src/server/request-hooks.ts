// The transport's per-request work, in one place and one order: fastify runs one onRequest
// and one onResponse hook, and they call each concern's in the order buildApp lists them
// (app.ts: the review's clock and log line, then the drain's count, then the connection
// deadlines). Every hook fastify runs is a turn through its hook runner; one pair for all
// keeps that cost fixed however many concerns there are.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** What one concern of the transport does at a request's two ends; both run synchronously. */
export interface RequestHooks {
  /** The headers are parsed; the body is not read yet. */
  onRequest?(req: FastifyRequest, reply: FastifyReply): void;
  /** The answer is written, or failed (fastify's onResponse). */
  onResponse?(req: FastifyRequest, reply: FastifyReply): void;
}

export function registerRequestHooks(app: FastifyInstance, concerns: readonly RequestHooks[]): void {
  const arriving = concerns.flatMap((c) => (c.onRequest ? [c.onRequest] : []));
  const answered = concerns.flatMap((c) => (c.onResponse ? [c.onResponse] : []));
  app.addHook('onRequest', (req, reply, done) => {
    for (const hook of arriving) hook(req, reply);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    for (const hook of answered) hook(req, reply);
    done();
  });
}
