// `deed serve`: run the webhook until SIGTERM or SIGINT (or, run by npm, until npm exits).
import { Option, type Command } from 'commander';
import { loadConfig } from '../config/load.js';
import { collect, CONTEXT_HELP, deedNamespaceOption, deprecatedNamespaceOption, parseCount, parseMebibytes, parsePort, parsePositiveSeconds, parseSeconds } from './options.js';
import { DEFAULT_LIMITS } from '../server/connections.js';
import { stopCause, stopEvents, type StopEvent } from './stop-events.js';

const s = (ms: number) => ms / 1000;
const MiB = 1024 * 1024;

export function registerServe(program: Command): void {
  const serve = program.command('serve');
  deprecatedNamespaceOption(serve);
  serve
    .description('Run the admission webhook over HTTPS')
    .option('--host <host>', 'address to listen on', process.env.DEED_HOST ?? '127.0.0.1')
    .addOption(new Option('--log-format <format>', 'json: epoch-millisecond time and numeric levels (pino); iso: ISO-8601 time and level names').choices(['json', 'iso']).default('json'))
    .option('--port <port>', 'port to listen on', parsePort, 8443)
    .option('--config <file>', 'policy file (YAML); the embedded default otherwise', process.env.DEED_CONFIG)
    .option('--cert-dir <dir>', 'where generated certificates and the local attestation key live', 'certs')
    .option('--dns <name>', 'extra subject alternative name for a generated certificate (repeatable)', collect, [])
    .option('--tls-cert <file>', 'serving certificate (PEM); reloaded when the file changes')
    .option('--tls-key <file>', 'serving key (PEM)')
    .option('--metrics-port <port>', 'serve /healthz, /readyz and /metrics over plain HTTP on this port (and not on the webhook port)', parsePort)
    .option('--kubeconfig <file>', 'API-server credentials for lookups (the pod an eviction names, the claims a new pod mounts); in a cluster, its service account')
    .option('--context <name>', `${CONTEXT_HELP} (with it, the kubeconfig is read as kubectl finds it, also without --kubeconfig)`)
    .addOption(deedNamespaceOption("Deed's own namespace, which the webhooks exclude from the review scope (required with a cluster; POD_NAMESPACE in one)", process.env.POD_NAMESPACE))
    .option('--no-cache-secrets', 'read each Secret a review looks up from the API server instead of keeping Secret metadata in the lookup cache (which needs list and watch on Secrets)')
    .option('--cache-memory <MiB>', "memory the lookup cache may hold (estimated); past it the resource holding most is no longer cached and is read from the API server. Default: a quarter of the container's memory limit", parseMebibytes)
    .option('--client-ca <file>', 'the TLS handshake requires a client certificate signed by this CA (the API server\'s); needs --metrics-port')
    .option('--tls-handshake-timeout <seconds>', 'deadline from accepting a connection to the end of its TLS handshake', parsePositiveSeconds, s(DEFAULT_LIMITS.handshakeTimeoutMs))
    .option('--headers-timeout <seconds>', 'deadline from the handshake to the first request\'s headers (HTTP/1.1) or first stream (HTTP/2)', parsePositiveSeconds, s(DEFAULT_LIMITS.headersTimeoutMs))
    .option('--request-timeout <seconds>', 'deadline from a request\'s headers to the end of its answer (body, decision, write)', parsePositiveSeconds, s(DEFAULT_LIMITS.requestTimeoutMs))
    .option('--idle-timeout <seconds>', 'close an HTTP/1.1 connection idle between requests, or an HTTP/2 session with no open stream, after this long', parsePositiveSeconds, s(DEFAULT_LIMITS.idleTimeoutMs))
    .option('--max-connections <n>', 'open connections per process; beyond it new ones are closed at once', parseCount, DEFAULT_LIMITS.maxConnections)
    .option('--max-connections-per-peer <n>', 'open connections per peer address; at either bound a connection still in its TLS handshake is closed to make room', parseCount, DEFAULT_LIMITS.maxConnectionsPerPeer)
    .option('--body-budget <MiB>', 'request body bytes held in memory by the process (a peer may hold half, a connection a third); a request that cannot get memory within 1 s is answered 429', parseCount, DEFAULT_LIMITS.bodyBudgetBytes / MiB)
    .option('--body-timeout <seconds>', "deadline from a request's headers to the end of its body; later, it is answered 408 and its memory given back", parsePositiveSeconds, s(DEFAULT_LIMITS.bodyTimeoutMs))
    .option('--max-concurrent-streams <n>', 'HTTP/2 streams open at once per session', parseCount, DEFAULT_LIMITS.maxConcurrentStreams)
    .option('--max-header-bytes <n>', 'size of a request\'s headers (HTTP/1.1 header block, HTTP/2 header list)', parseCount, DEFAULT_LIMITS.maxHeaderBytes)
    .option('--cert-poll-seconds <seconds>', 'also check the certificate files for replacement this often', parseSeconds, 10)
    .option('--shutdown-delay <seconds>', 'after SIGTERM, keep serving while readiness is false so endpoints drain', parseSeconds, 0)
    .option('--grace-period <seconds>', 'exit forcibly (status 1) this long after SIGTERM, shutdown delay included', parseSeconds, 25)
    .action(async (o: ServeFlags) => {
      // Loaded here, not at the top: the other commands start without fastify and pino.
      const [{ createLogger }, { startServer }] = await Promise.all([import('../observability/logger.js'), import('../server/serve.js')]);
      const logger = createLogger(undefined, undefined, o.logFormat);
      const config = loadConfig(o.config);
      const server = await startServer({
        config,
        logger,
        host: o.host,
        port: o.port,
        certDir: o.certDir,
        dns: o.dns,
        ...(o.tlsCert ? { tlsCert: o.tlsCert } : {}),
        ...(o.tlsKey ? { tlsKey: o.tlsKey } : {}),
        ...(o.clientCa ? { clientCa: o.clientCa } : {}),
        ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
        ...(o.context !== undefined ? { context: o.context } : {}),
        ...(o.deedNamespace ? { namespace: o.deedNamespace } : {}),
        cacheSecrets: o.cacheSecrets,
        ...(o.cacheMemory !== undefined ? { cacheMemoryMiB: o.cacheMemory } : {}),
        ...(o.metricsPort !== undefined ? { metricsPort: o.metricsPort } : {}),
        limits: {
          handshakeTimeoutMs: o.tlsHandshakeTimeout * 1000,
          headersTimeoutMs: o.headersTimeout * 1000,
          requestTimeoutMs: o.requestTimeout * 1000,
          idleTimeoutMs: o.idleTimeout * 1000,
          maxConnections: o.maxConnections,
          maxConnectionsPerPeer: o.maxConnectionsPerPeer,
          bodyBudgetBytes: o.bodyBudget * MiB,
          bodyTimeoutMs: o.bodyTimeout * 1000,
          maxConcurrentStreams: o.maxConcurrentStreams,
          maxHeaderBytes: o.maxHeaderBytes,
        },
        certPollMs: Math.max(o.certPollSeconds * 1000, 100),
      });
      if (server.caFile) process.stderr.write(`deed: serving ${server.url}; CA bundle: ${server.caFile}\n`);
      let stopping = false;
      const stop = (event: StopEvent) => {
        // A second request changes nothing (a wrapper may relay Ctrl-C once more): the grace period bounds the stop.
        if (stopping) return void logger.info({ signal: event, cause: stopCause(event) }, 'already shutting down');
        stopping = true;
        logger.info({ signal: event, cause: stopCause(event) }, 'shutting down: readiness off, finishing in-flight reviews');
        server.setReady(false);
        setTimeout(() => {
          logger.error({ gracePeriod: o.gracePeriod }, 'shutdown exceeded the grace period; exiting');
          process.exit(1);
        }, o.gracePeriod * 1000).unref();
        setTimeout(() => {
          server.shutdown().then(
            () => {
              logger.info('stopped');
              process.exit(0);
            },
            (err: unknown) => {
              logger.error({ err }, 'shutdown failed');
              process.exit(1);
            },
          );
        }, o.shutdownDelay * 1000);
      };
      const events = stopEvents(['SIGTERM', 'SIGINT']);
      for (const event of ['SIGTERM', 'SIGINT', 'parent-exit'] as const) events.on(event, () => stop(event));
    });
}

interface ServeFlags {
  host: string;
  logFormat: 'json' | 'iso';
  port: number;
  config?: string;
  certDir: string;
  dns: string[];
  tlsCert?: string;
  tlsKey?: string;
  clientCa?: string;
  kubeconfig?: string;
  context?: string;
  deedNamespace?: string;
  cacheSecrets: boolean;
  cacheMemory?: number;
  metricsPort?: number;
  tlsHandshakeTimeout: number;
  headersTimeout: number;
  requestTimeout: number;
  idleTimeout: number;
  maxConnections: number;
  maxConnectionsPerPeer: number;
  bodyBudget: number;
  bodyTimeout: number;
  maxConcurrentStreams: number;
  maxHeaderBytes: number;
  certPollSeconds: number;
  shutdownDelay: number;
  gracePeriod: number;
}
