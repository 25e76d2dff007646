// Prometheus metrics (prom-client) on a registry of Deed's own, so two servers in one
// process (the tests) never share counters. Every metric is an object created here and
// referenced directly by the code that records it: a misspelt name is a type error, not
// a series that silently never appears.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Verdict } from '../admission/verdict.js';
import type { AdmissionRequest } from '../admission/types.js';
import type { KeyRing, Verification } from '../policy/stamps/key-ring.js';
import { RULES } from '../policy/rules/catalog.js';
import { STAMPED_KINDS } from '../policy/kinds.js';
import { VERSION } from '../version.js';

/** From 0.5 ms (a plain decision) to 5 s (half the API server's default webhook timeout). */
export const REVIEW_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** How a review ended; the same word goes into the log line. */
export type ReviewOutcome = 'allowed' | 'patched' | 'denied' | 'errored' | 'bad-request';

// Label values come from request bodies: only known values are kept, so a hostile body
// cannot mint new series (unbounded cardinality would exhaust Prometheus, then Deed).
const KINDS = new Set<string>(STAMPED_KINDS);
const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);
const RULE_IDS = new Set(Object.values(RULES).map((r) => r.id));

export interface Metrics {
  registry: Registry;
  reviews: Counter<'webhook' | 'kind' | 'operation' | 'decision'>;
  denials: Counter<'webhook' | 'rule'>;
  duration: Histogram<'webhook'>;
  requestDuration: Histogram<'webhook' | 'code'>;
  breakGlass: Counter<'webhook' | 'rule'>;
  buildInfo: Gauge<'version' | 'node'>;
  errors: Counter;
  certificateExpiry: Gauge;
  verifications: Counter<'key' | 'format' | 'result'>;
  connectionsRefused: Counter<'reason'>;
  connectionsTimedOut: Counter<'phase'>;
  bodiesRefused: Counter<'reason'>;
  bodyBytesHeld: Gauge;
  lookups: Counter<'resource' | 'source'>;
  reviewLookups: Histogram;
  liveReads: Counter<'resource' | 'result'>;
  cacheCurrent: Gauge<'resource'>;
  cacheObjects: Gauge<'resource'>;
  cacheBytes: Gauge<'resource'>;
  cacheBudget: Gauge;
  cacheShed: Gauge<'resource'>;
  cacheReadsNotKept: Gauge;
}

/** Where a lookup was answered: the watch-backed cache, a read from the API server, or nowhere (outside the scope, or past the per-review bound). */
export type LookupSource = 'cache' | 'live' | 'skipped';

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const metrics: Metrics = {
    registry,
    reviews: new Counter({
      name: 'deed_reviews_total',
      help: 'Admission reviews answered, by webhook, object kind, operation and decision (allowed, patched, denied, errored, bad-request).',
      labelNames: ['webhook', 'kind', 'operation', 'decision'] as const,
      registers,
    }),
    denials: new Counter({
      name: 'deed_denials_total',
      help: 'Denied reviews by the rule id that denied them (a review denied by two rules counts once for each).',
      labelNames: ['webhook', 'rule'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'deed_review_duration_seconds',
      help: 'Time spent deciding one review, from parsed body to response.',
      labelNames: ['webhook'] as const,
      buckets: REVIEW_DURATION_BUCKETS,
      registers,
    }),
    requestDuration: new Histogram({
      name: 'deed_request_duration_seconds',
      help: 'Whole webhook requests, by webhook and HTTP status: from the request headers to the last byte of the answer (body read, lookups, decision, serialisation), as the API server waits for it.',
      labelNames: ['webhook', 'code'] as const,
      buckets: [...REVIEW_DURATION_BUCKETS, 10],
      registers,
    }),
    breakGlass: new Counter({
      name: 'deed_break_glass_reviews_total',
      help: 'Reviews allowed only because the requester is a break-glass principal (policy breakGlass), by webhook and the rule it was allowed past (a review past two rules counts once for each).',
      labelNames: ['webhook', 'rule'] as const,
      registers,
    }),
    buildInfo: new Gauge({
      name: 'deed_build_info',
      help: 'Always 1: the Deed version and the Node.js version that run this process.',
      labelNames: ['version', 'node'] as const,
      registers,
    }),
    errors: new Counter({
      name: 'deed_review_errors_total',
      help: 'Internal errors while reviewing (each answered with a denial: fail closed).',
      registers,
    }),
    certificateExpiry: new Gauge({
      name: 'deed_certificate_expiry_timestamp_seconds',
      help: 'Expiry (notAfter) of the serving certificate in use, in seconds since the epoch.',
      registers,
    }),
    verifications: new Counter({
      name: 'deed_attestation_verifications_total',
      help: 'Attestations verified, by the ring key id that verified them (or that a failed one named: "unknown" when not in the ring, "none" when no key could be tried), format (v1, v2, none) and result (verified, failed).',
      labelNames: ['key', 'format', 'result'] as const,
      registers,
    }),
    connectionsRefused: new Counter({
      name: 'deed_connections_refused_total',
      help: 'Connections closed as soon as accepted, or in their TLS handshake to make room, by reason: total (the bound on open connections, --max-connections), peer (the bound per peer address, --max-connections-per-peer).',
      labelNames: ['reason'] as const,
      registers,
    }),
    connectionsTimedOut: new Counter({
      name: 'deed_connections_timed_out_total',
      help: 'Connections closed by a deadline, by phase: handshake, headers (first request), request (body and answer), idle (between requests).',
      labelNames: ['phase'] as const,
      registers,
    }),
    bodiesRefused: new Counter({
      name: 'deed_request_bodies_refused_total',
      help: 'Requests refused while their body was read, by reason: budget (429: no memory within the wait; --body-budget and its per-peer and per-connection shares), timeout (408: not complete by --body-timeout).',
      labelNames: ['reason'] as const,
      registers,
    }),
    bodyBytesHeld: new Gauge({
      name: 'deed_request_body_bytes',
      help: 'Memory granted to requests now, out of --body-budget: a fixed cost a request, and each body\'s bytes, text, parsed strings and structure.',
      registers,
    }),
    lookups: new Counter({
      name: 'deed_lookups_total',
      help: 'Objects a review looked up, by resource (pods, persistentvolumeclaims, secrets) and source: cache (the watch-backed cache), live (a read from the API server: a miss, a cached object being deleted, or a kind not current), listed (what a pod names past the per-review reads, read by one list of its kind in its namespace), skipped (outside the review scope, or past the per-review bound: answered unknown without a read).',
      labelNames: ['resource', 'source'] as const,
      registers,
    }),
    reviewLookups: new Histogram({
      name: 'deed_review_lookups',
      help: 'Objects looked up per review that looked up any.',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers,
    }),
    liveReads: new Counter({
      name: 'deed_lookup_live_reads_total',
      help: 'Reads from the API server for lookups, by resource and result (found, absent, failed).',
      labelNames: ['resource', 'result'] as const,
      registers,
    }),
    cacheCurrent: new Gauge({
      name: 'deed_lookup_cache_current',
      help: 'Whether the lookup cache of a resource (namespaces, pods, persistentvolumeclaims, configmaps, secrets) is listed and watching (1); while 0 its lookups are read from the API server, and until namespaces is 1 the review scope is unknown.',
      labelNames: ['resource'] as const,
      registers,
    }),
    cacheObjects: new Gauge({
      name: 'deed_lookup_cache_objects',
      help: 'Objects held in the lookup cache, by resource.',
      labelNames: ['resource'] as const,
      registers,
    }),
    cacheBytes: new Gauge({
      name: 'deed_lookup_cache_bytes',
      help: "Memory the lookup cache's store of a resource holds, estimated (its strings and map entries; the process's RSS grows by about 1.6 times it).",
      labelNames: ['resource'] as const,
      registers,
    }),
    cacheBudget: new Gauge({
      name: 'deed_lookup_cache_budget_bytes',
      help: "The lookup cache's memory budget (--cache-memory, else a quarter of the container's memory limit): past it, the resource holding most is shed.",
      registers,
    }),
    cacheShed: new Gauge({
      name: 'deed_lookup_cache_shed',
      help: 'Whether a resource was shed from the lookup cache past its memory budget (1): its lookups are read from the API server until Deed restarts.',
      labelNames: ['resource'] as const,
      registers,
    }),
    cacheReadsNotKept: new Gauge({
      name: 'deed_lookup_cache_pods_reads_not_kept',
      help: "Cached pods naming more than the lookup cache keeps of one pod's reads: their names are kept as 32-bit hashes, and each is read from the API server when looked up.",
      registers,
    }),
  };
  metrics.buildInfo.set({ version: VERSION, node: process.version }, 1);
  // Both reasons show from the start, at 0: an alert can then watch the rate of either.
  for (const reason of ['total', 'peer']) metrics.connectionsRefused.inc({ reason }, 0);
  return metrics;
}

export function outcomeOf(verdict: Verdict): ReviewOutcome {
  if (!verdict.allowed) return verdict.code >= 500 ? 'errored' : 'denied';
  return verdict.patch ? 'patched' : 'allowed';
}

/** Records one answered review. */
export function recordReview(
  m: Metrics,
  webhook: string,
  request: AdmissionRequest | undefined,
  outcome: ReviewOutcome,
  verdict: Verdict | undefined,
  seconds: number,
): void {
  const kind = request === undefined ? 'unknown' : KINDS.has(request.kind.kind) ? request.kind.kind : 'other';
  const operation = request !== undefined && OPERATIONS.has(request.operation) ? request.operation : 'unknown';
  m.reviews.inc({ webhook, kind, operation, decision: outcome });
  m.duration.observe({ webhook }, seconds);
  if (outcome === 'errored') m.errors.inc();
  if (verdict !== undefined && !verdict.allowed)
    for (const rule of new Set(verdict.findings.map((f) => f.rule))) m.denials.inc({ webhook, rule: RULE_IDS.has(rule) ? rule : 'other' });
}

/** Counts one break-glass use, per rule it was allowed past (rule ids come from Deed's own catalogue). */
export function recordBreakGlass(m: Metrics, webhook: string, rules: string[]): void {
  for (const rule of rules) m.breakGlass.inc({ webhook, rule: RULE_IDS.has(rule) ? rule : 'other' });
}

/** Counts one whole webhook request, whatever its answer (413, 415 and 429 included). */
export function recordRequest(m: Metrics, webhook: string, statusCode: number, seconds: number): void {
  m.requestDuration.observe({ webhook, code: String(statusCode) }, seconds);
}

export function setCertificateExpiry(m: Metrics, notAfter: Date): void {
  m.certificateExpiry.set(notAfter.getTime() / 1000);
}

/**
 * Counts one verification. The key id of a v2 attestation comes from the object: only ids
 * of the ring become label values, so a hostile attestation cannot mint series.
 */
export function recordVerification(m: Metrics, ring: KeyRing, v: Verification): void {
  const key = v.ok ? v.keyId : v.keyId === undefined ? 'none' : ring.keys.has(v.keyId) ? v.keyId : 'unknown';
  m.verifications.inc({ key, format: v.format, result: v.ok ? 'verified' : 'failed' });
}
