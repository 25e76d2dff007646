// `deed serve`: policy, attestation key ring and certificates from disk, then the HTTPS
// listener, with certificate reload and graceful shutdown. The ring is read once, at
// start: every ring change is a policy change, and a changed policy rolls the pods.
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { readTextFile } from '../errors/file-errors.js';
import type { Config } from '../config/schema.js';
import { productionContext } from '../admission/production-context.js';
import type { Logger } from '../observability/logger.js';
import { buildApp, type DeedApp } from './app.js';
import { loadKeyRing } from './attestation-key.js';
import { certificateCovers, certificateNotAfter, defaultSans, generateCertificates, readPair, watchPair } from './certificates.js';
import { trackConnections, type ConnectionDrain } from './drain.js';
import { DEFAULT_LIMITS, guardConnections, type ConnectionLimits } from './connections.js';
import { buildOpsApp } from './ops.js';
import { createMetrics, recordVerification, setCertificateExpiry, type Metrics } from '../observability/metrics.js';
import { withObserver, type KeyRing } from '../policy/stamps/key-ring.js';
import { verifyStoredStamps } from '../policy/ownership.js';
import { stampKeys } from '../policy/stamps/keys.js';
import type { ObjectReader } from '../kube/object-reader.js';
import type { LookupCache } from '../kube/lookup-cache.js';
import type { ApiSource } from '../kube/api-connection.js';
import { cacheBudget } from './cache-budget.js';
import { warnRetries } from '../kube/retry-notice.js';

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
  /** `--context NAME`: this context of the kubeconfig, found as kubectl finds it (also without `kubeconfig`). */
  context?: string;
  /** Credentials already loaded (`deed dev`: --kubeconfig and --context); in place of `kubeconfig`. */
  kubeConfig?: ApiSource;
  /** Deed's own namespace (excluded from the review scope); required with a cluster. */
  namespace?: string;
  /** Keep Secrets in the lookup cache (list and watch on Secrets); true unless turned off. */
  cacheSecrets?: boolean;
  /** `--cache-memory MiB`: the lookup cache's memory budget; a share of the memory limit otherwise (cache-budget.ts). */
  cacheMemoryMiB?: number;
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
  limits.bodyTimeoutMs = Math.min(limits.bodyTimeoutMs, limits.requestTimeoutMs); // the request's deadline ends its body too
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
  const clientCa = opts.clientCa ? readTextFile('the client CA (--client-ca)', opts.clientCa) : undefined;
  const metrics = createMetrics();
  setCertificateExpiry(metrics, certificateNotAfter(pair.cert));
  const lookups = await clusterLookups(opts, metrics, ring);
  let connections: ConnectionDrain | undefined;
  const deed = buildApp({
    ctx: productionContext(opts.config, withObserver(ring, (v) => recordVerification(metrics, ring, v)), lookups?.cache.scope),
    ...(lookups ? { reader: lookups.reader, awaitScope: lookups.cache.awaitScope } : {}),
    logger,
    metrics,
    tls: pair,
    ...(clientCa ? { clientCa } : {}),
    limits,
    opsRoutes: opts.metricsPort === undefined,
    transport: (app) => [(connections = trackConnections(app)), guardConnections(app, limits, metrics, logger)],
  });
  const { app } = deed;
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
    lookups?.stop();
    await app.close();
    throw err;
  }
  const base = (server: FastifyInstance, scheme: string) => {
    const address = server.server.address() as AddressInfo;
    return `${scheme}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  };
  const url = base(app, 'https');
  const metricsUrl = ops ? base(ops, 'http') : undefined;

  let closing: Promise<void> | undefined;
  // Ready once the review scope is known: before that every review would be refused.
  if (lookups) void lookups.cache.scopeKnown().then(() => closing === undefined && deed.setReady(true));
  else deed.setReady(true);
  // Ids only, never key material: which keys verify and which one signs, for the rotation's record.
  logger.info({ url, metricsUrl, caFile, clientCertificates: clientCa !== undefined, limits, attestationKeys: [...ring.keys.keys()], signingKey: ring.signingKeyId, signingFormat: ring.signingFormat }, 'deed is serving');

  return {
    ...deed,
    url,
    ...(metricsUrl ? { metricsUrl } : {}),
    ...(caFile ? { caFile } : {}),
    shutdown: () =>
      (closing ??= (async () => {
        deed.setReady(false);
        stopWatching();
        lookups?.stop();
        logger.info(connections!.open(), 'closing the listener and draining connections');
        connections!.drain();
        await app.close();
        await ops?.close();
      })()),
  };
}

/**
 * The read path for lookups and the review scope: `--kubeconfig`, else the in-cluster
 * service account, else none (a local run): then every namespace is in scope (there is no
 * cluster to say which are opted in, and Deed signs with a local key), and what needs a
 * lookup (an eviction or binding of a pod, the claims of a new pod) is refused with that
 * reason. The client is loaded only when there is a cluster to talk to.
 */
async function clusterLookups(opts: ServeOptions, metrics: Metrics, ring: KeyRing): Promise<{ cache: LookupCache; reader: ObjectReader; stop(): void } | undefined> {
  const { logger } = opts;
  if (opts.kubeConfig === undefined && opts.kubeconfig === undefined && opts.context === undefined && !process.env.KUBERNETES_SERVICE_HOST) {
    logger.warn('no API-server credentials (--kubeconfig, or in-cluster): every namespace is taken as in the review scope; evictions and bindings of pods, new pods that mount claims, and what an environment creates that a pod may read by name (Secrets, ConfigMaps, claims, ResourceClaims, ResourceClaimTemplates), are refused, since Deed cannot tell whose the pod or claim is, nor which pods read the name');
    return undefined;
  }
  // Not client-node: api-connection.ts reads the kubeconfig forms a webhook meets without it.
  const [{ loadConnection, toConnection }, { createObjectReader }, { createLookupCache }, { createCachedReader }] = await Promise.all([
    import('../kube/api-connection.js'),
    import('../kube/object-reader.js'),
    import('../kube/lookup-cache.js'),
    import('../kube/cached-reader.js'),
  ]);
  const kc = opts.kubeConfig !== undefined ? toConnection(opts.kubeConfig) : await loadConnection({ kubeconfig: opts.kubeconfig, context: opts.context });
  if (!opts.namespace) throw new Error("deed serve needs its own namespace to know its review scope (the webhooks exclude it): --deed-namespace, or POD_NAMESPACE");
  const onRetry = warnRetries(logger);
  const budget = cacheBudget(opts.cacheMemoryMiB);
  metrics.cacheBudget.set(budget.bytes);
  const keys = stampKeys(opts.config.labelPrefix);
  const cache = createLookupCache({
    memoryBudgetBytes: budget.bytes,
    wellKnownConfigMaps: opts.config.template.wellKnownConfigMaps,
    // Verified once, when an object arrives, with the ring the reviews use (read once at start:
    // a ring change is a policy change, which restarts the pods).
    verifyStamps: (kind, namespace, facts) => verifyStoredStamps(kind, namespace, { ...(facts.labels ? { labels: facts.labels } : {}), ...(facts.annotations ? { annotations: facts.annotations } : {}) }, keys, ring).ok,
    onShed: (resource, weight) => {
      metrics.cacheShed.set({ resource }, 1);
      metrics.cacheCurrent.set({ resource }, 0);
      logger.warn(
        { resource, heldBytes: weight.bytes, cacheBytes: weight.total, budgetBytes: weight.budget, budgetFrom: budget.source },
        'lookup cache over its memory budget: this resource is no longer cached and its lookups are read from the API server until Deed restarts (raise --cache-memory or the memory limit; docs/operations.md, "Sizing")',
      );
    },
    onReadsNotKept: (namespace, name, resource) =>
      logger.warn(
        { namespace, name, resource },
        "an object (a pod, an Ingress, a Gateway) names more than the lookup cache keeps of one object's reads: its names are kept as hashes, and it is read from the API server when looked up (deed_lookup_cache_pods_reads_not_kept; docs/operations.md, \"Sizing\")",
      ),
    kc,
    deedNamespace: opts.namespace,
    prefix: opts.config.labelPrefix,
    secrets: opts.cacheSecrets ?? true,
    onError: (err, what) => logger.warn({ err, what }, 'lookup cache: retrying; lookups of this kind are read from the API server meanwhile'),
    onRetry,
    onCurrent: (resource, current) => {
      metrics.cacheCurrent.set({ resource }, current ? 1 : 0);
      logger.info({ resource, current }, current ? 'lookup cache current' : 'lookup cache not current; reading from the API server');
    },
  });
  const sizes = setInterval(() => {
    for (const [resource, n] of Object.entries(cache.sizes())) metrics.cacheObjects.set({ resource }, n);
    for (const [resource, n] of Object.entries(cache.bytes())) metrics.cacheBytes.set({ resource }, n);
    metrics.cacheReadsNotKept.set(cache.readsNotKept());
  }, 5000).unref();
  cache.start();
  void cache.scopeKnown().then(() => logger.info({ namespace: opts.namespace }, 'review scope known (opted-in namespaces listed)'));
  logger.info({ server: kc.server, cacheSecrets: opts.cacheSecrets ?? true, cacheBudgetBytes: budget.bytes, cacheBudgetFrom: budget.source }, 'lookups from a watch-backed cache, misses read from the API server');
  return {
    cache,
    reader: createCachedReader(cache, createObjectReader(kc, { onRetry, listSecrets: opts.cacheSecrets ?? true }), opts.config.labelPrefix, metrics),
    stop: () => {
      clearInterval(sizes);
      cache.stop();
    },
  };
}
