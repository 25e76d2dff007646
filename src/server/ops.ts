// The probe and metrics port (--metrics-port): /healthz, /readyz and /metrics over plain
// HTTP on the pod network, as controller-runtime's metrics and health-probe addresses are.
// The kubelet and Prometheus present no client certificate, so with --client-ca (the
// webhook port's handshake requires one) they could not reach the webhook port at all.
// Nothing here is secret: the NetworkPolicy in the chart limits who may scrape.
import { fastify, LogController, type FastifyInstance } from 'fastify';
import type { Server } from 'node:http';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { registerOpsRoutes } from './app.js';
import type { ConnectionLimits } from './connections.js';

/** Probes every few seconds and a scrape every 15 to 60: a few dozen connections is plenty. */
export const OPS_MAX_CONNECTIONS = 64;

export function buildOpsApp(metrics: Metrics, isReady: () => boolean, logger: Logger, limits: ConnectionLimits): FastifyInstance {
  const app = fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024,
    // Node's own HTTP/1.1 deadlines suffice here: plain HTTP has no handshake or HTTP/2.
    // Checked every second (Node's default is every 30 s); a silent socket goes after the
    // request deadline of inactivity.
    http: { headersTimeout: limits.headersTimeoutMs, maxHeaderSize: limits.maxHeaderBytes, connectionsCheckingInterval: 1000 },
    connectionTimeout: limits.requestTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.idleTimeoutMs,
    return503OnClosing: false,
    forceCloseConnections: true,
  }) as unknown as FastifyInstance;
  const server = app.server as Server;
  server.maxConnections = OPS_MAX_CONNECTIONS;
  server.on('drop', () => metrics.connectionsRefused.inc());
  registerOpsRoutes(app, metrics, isReady);
  return app;
}
