// `deed serve`: policy, attestation key ring and certificates from disk, then the HTTPS
// listener, with certificate reload and graceful shutdown. The ring is read once, at
// start: every ring change is a policy change, and a changed policy rolls the pods.
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { productionContext } from '../policy/context.js';
import type { Logger } from '../observability/logger.js';
import { buildApp, type DeedApp } from './app.js';
import { loadKeyRing } from './attestation-key.js';
import { certificateCovers, certificateNotAfter, defaultSans, generateCertificates, readPair, watchPair } from './certificates.js';
import { trackConnections } from './drain.js';
import { DEFAULT_LIMITS, guardConnections, type ConnectionLimits } from './connections.js';
import { buildOpsApp } from './ops.js';
import { createMetrics, recordVerification, setCertificateExpiry } from '../observability/metrics.js';
import { withObserver } from '../policy/stamps/key-ring.js';
import type { ObjectReader } from '../kube/object-reader.js';

export interface ServeOptions {
  config: Config;
  logger: Logger;
  host: string;
  port: number;
  /** Where generated certificates and the local attestation key live. */
  certDir: string;
  dns: string[];
  tlsCert?: string;
  tlsKey?: string;
  clientCa?: string;
  certPollMs?: number;
  /** API-server credentials for lookups; the in-cluster service account when unset and in a cluster. */
  kubeconfig?: string;
  /** Connection deadlines and bounds; DEFAULT_LIMITS for what is not given. */
  limits?: Partial<ConnectionLimits>;
  /** A plain-HTTP port for /healthz, /readyz and /metrics, which then leave the webhook port. */
  metricsPort?: number;
}

export interface RunningServer extends DeedApp {
  url: string;
  /** The probe and metrics port's base URL, with --metrics-port. */
  metricsUrl?: string;
  caFile?: string;
  /** Readiness off, in-flight reviews finished, listener closed. */
  shutdown(): Promise<void>;
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { logger } = opts;
  const limits: ConnectionLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) throw new Error('--headers-timeout cannot be longer than --request-timeout');
  if (opts.clientCa !== undefined && opts.metricsPort === undefined) {
    // The kubelet presents no client certificate: its probes would fail and take every replica out of service.
    throw new Error('--client-ca needs --metrics-port: with it the webhook port refuses handshakes without a client certificate, so probes and metrics need their own port');
  }
  const ring = loadKeyRing(opts.config, opts.certDir);

  let certFile = opts.tlsCert;
  let keyFile = opts.tlsKey;
  let caFile: string | undefined;
  if ((certFile === undefined) !== (keyFile === undefined)) throw new Error('--tls-cert and --tls-key go together');
  if (certFile === undefined || keyFile === undefined) {
    const sans = defaultSans(opts.dns);
    certFile = join(opts.certDir, 'tls.crt');
    keyFile = join(opts.certDir, 'tls.key');
    caFile = join(opts.certDir, 'ca.crt');
    if (!certificateCovers(certFile, sans)) {
      await generateCertificates(opts.certDir, sans);
      logger.info({ certDir: opts.certDir, sans }, 'generated a CA and a serving certificate');
    }
  }

  const pair = readPair(certFile, keyFile);
  const clientCa = opts.clientCa ? readFileSync(opts.clientCa, 'utf8') : undefined;
  const metrics = createMetrics();
  setCertificateExpiry(metrics, certificateNotAfter(pair.cert));
  const reader = await objectReader(opts.kubeconfig, logger);
  const deed = buildApp({
    ctx: productionContext(opts.config, withObserver(ring, (v) => recordVerification(metrics, ring, v))),
    ...(reader ? { reader } : {}),
    logger,
    metrics,
    tls: pair,
    ...(clientCa ? { clientCa } : {}),
    limits,
    opsRoutes: opts.metricsPort === undefined,
  });
  const { app } = deed;
  const connections = trackConnections(app);
  guardConnections(app, limits, metrics, logger);
  const ops = opts.metricsPort === undefined ? undefined : buildOpsApp(metrics, deed.isReady, logger, limits);
  // Watching starts before the (asynchronous) listen, so a replacement made meanwhile is not missed.
  const stopWatching = watchPair(
    certFile,
    keyFile,
    (next) => {
      (app.server as unknown as import('node:tls').Server).setSecureContext({ ...next, minVersion: 'TLSv1.2', ...(clientCa ? { ca: clientCa } : {}) });
      const notAfter = certificateNotAfter(next.cert);
      setCertificateExpiry(metrics, notAfter);
      logger.info({ certFile, notAfter }, 'serving certificate reloaded');
    },
    (err) => logger.warn({ err, certFile }, 'certificate reload failed; still serving the previous certificate'),
    opts.certPollMs,
  );
  try {
    await app.listen({ host: opts.host, port: opts.port });
    if (ops) await ops.listen({ host: opts.host, port: opts.metricsPort! });
  } catch (err) {
    stopWatching();
    await app.close();
    throw err;
  }
  const base = (server: FastifyInstance, scheme: string) => {
    const address = server.server.address() as AddressInfo;
    return `${scheme}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  };
  const url = base(app, 'https');
  const metricsUrl = ops ? base(ops, 'http') : undefined;

  deed.setReady(true);
  // Ids only, never key material: which keys verify and which one signs, for the rotation's record.
  logger.info({ url, metricsUrl, caFile, clientCertificates: clientCa !== undefined, limits, attestationKeys: [...ring.keys.keys()], signingKey: ring.signingKeyId, signingFormat: ring.signingFormat }, 'deed is serving');

  let closing: Promise<void> | undefined;
  return {
    ...deed,
    url,
    ...(metricsUrl ? { metricsUrl } : {}),
    ...(caFile ? { caFile } : {}),
    shutdown: () =>
      (closing ??= (async () => {
        deed.setReady(false);
        stopWatching();
        logger.info(connections.open(), 'closing the listener and draining connections');
        connections.drain();
        await app.close();
        await ops?.close();
      })()),
  };
}

/**
 * The read path for lookups: `--kubeconfig`, else the in-cluster service account, else
 * none (a local run): then what needs a lookup (an eviction or binding of a pod, the
 * claims of a new pod) is refused with that reason. The client is loaded only when there is a cluster to talk to.
 */
async function objectReader(kubeconfig: string | undefined, logger: Logger): Promise<ObjectReader | undefined> {
  if (kubeconfig === undefined && !process.env.KUBERNETES_SERVICE_HOST) {
    logger.warn('no API-server credentials (--kubeconfig, or in-cluster): evictions and bindings of pods, and new pods that mount claims, are refused, since Deed cannot tell whose the pod or claim is');
    return undefined;
  }
  const [{ loadKubeConfig }, { createObjectReader }] = await Promise.all([import('../kube/client.js'), import('../kube/object-reader.js')]);
  const kc = loadKubeConfig(kubeconfig);
  logger.info({ server: kc.getCurrentCluster()?.server }, 'lookups read from the API server');
  return createObjectReader(kc);
}
