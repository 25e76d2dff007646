// The HTTPS transport: parse, size, content type, decide(), serialise. Every decision is
// made by decide(); this file only moves bytes and writes the one log line per review.
import { fastify, LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { SecureContextOptions } from 'node:tls';
import type { Http2Stream } from 'node:http2';
import type { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { HANDLERS, type Webhook } from '../admission/decide.js';
import type { DecisionContext } from '../policy/policy.js';
import { clipped, type Logger } from '../observability/logger.js';
import { createMetrics, outcomeOf, recordBreakGlass, recordRequest, recordReview, type Metrics } from '../observability/metrics.js';
import { decideWithin, elapsedMs, reviewDeadline } from './deadline.js';
import { DEFAULT_LIMITS, peerOf, serverOptions, type ConnectionLimits } from './connections.js';
import { Accounts, BodyBudget, bodyBudgetLimits, endUnreadStream, readBody } from './body-budget.js';
import { gatherLookups, planLookups, type LookupKey } from '../policy/lookup.js';
import type { ObjectReader } from '../kube/object-reader.js';
import { registerRequestHooks, type RequestHooks } from './request-hooks.js';
import { clientError } from './client-errors.js';
import { jsonProblem } from '../errors/file-errors.js';

// The API server accepts request bodies up to 3 MiB (its maxRequestBodyBytes), and etcd
// stores objects up to 1.5 MiB. An UPDATE review carries object and oldObject, plus
// userInfo and options: 2 x 3 MiB and headroom. Fastify's 1 MiB default would refuse
// legitimate large objects, which with failurePolicy Fail blocks the write.
export const BODY_LIMIT_BYTES = 8 * 1024 * 1024;

export interface AppOptions {
  ctx: DecisionContext;
  logger: Logger;
  /** TLS material; without it the app serves plain HTTP and is meant for inject() only. */
  tls?: SecureContextOptions;
  /**
   * With a client CA: the TLS handshake requires a client certificate it signed (the API
   * server's); nothing else completes one. Probes and metrics then need their own port
   * (opsRoutes false, src/server/ops.ts), since the kubelet presents no certificate.
   */
  clientCa?: string;
  /** Handshake deadline and HTTP/2 limits, fixed when the server is made. */
  limits?: ConnectionLimits;
  /** /healthz, /readyz and /metrics on this app too (true unless they have their own port). */
  opsRoutes?: boolean;
  bodyLimit?: number;
  /** Where reviews are counted; a fresh registry when not given. */
  metrics?: Metrics;
  /** Monotonic milliseconds for the internal deadline; tests inject one. */
  clock?: () => number;
  /** Reads the objects a decision names (an eviction's pod); without it those are unknown and refused. */
  reader?: ObjectReader;
  /** Waits (at most `ms`) for a namespace Deed does not yet see in its review scope: its opt-in may be on its way. */
  awaitScope?: (namespace: string, ms: number) => Promise<void>;
  /**
   * The transport's other per-request concerns (drain.ts, connections.ts), made from the
   * app (they listen on its server), run after the review's own, in this order.
   */
  transport?: (app: FastifyInstance) => RequestHooks[];
}

/**
 * How long a review for a namespace not (yet) in scope waits for the namespace watch: the
 * API server may see a namespace's opt-in before Deed does. No read is made meanwhile.
 */
export const SCOPE_WAIT_MS = 1000;

/** The longest one lookup may take; the review's own deadline may cut it shorter. */
export const LOOKUP_TIMEOUT_MS = 2000;

export interface DeedApp {
  app: FastifyInstance;
  metrics: Metrics;
  /** Readiness: false until listening, and again once shutdown begins. */
  setReady(ready: boolean): void;
  isReady(): boolean;
}

export function buildApp(opts: AppOptions): DeedApp {
  const bodyLimit = opts.bodyLimit ?? BODY_LIMIT_BYTES;
  const metrics = opts.metrics ?? createMetrics();
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const accounts = new Accounts(new BodyBudget(bodyBudgetLimits(limits.bodyBudgetBytes, bodyLimit), (held) => metrics.bodyBytesHeld.set(held)));
  const base = {
    loggerInstance: opts.logger,
    logController: new LogController({ disableRequestLogging: true }), // one line per review, written below
    bodyLimit,
    // A request that reaches Deed while it closes still gets a real answer: a 503 would
    // fail the write (failurePolicy Fail). Connections are drained by drain.ts instead.
    return503OnClosing: false,
    clientErrorHandler: clientError,
  } satisfies FastifyServerOptions;
  const app = (
    opts.tls
      ? fastify({
          ...base,
          http2: true,
          https: {
            allowHTTP1: true,
            minVersion: 'TLSv1.2',
            ...serverOptions(limits),
            ...opts.tls,
            ...(opts.clientCa ? { ca: opts.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
          },
        })
      : fastify(base)
  ) as unknown as FastifyInstance;

  let ready = false;
  // The review line holds only values Deed picked (strings, numbers, booleans, a list of
  // rule ids), never an object, so the logger's wildcard redaction cannot match in it; it
  // cost about 20 µs a line, the largest single item in a profile after JSON.parse.
  // Lines that carry an `err` still go through the redacting logger.
  const reviewLog = opts.logger.child({}, { redact: [] });
  const clock = opts.clock ?? (() => performance.now());
  // What a request carries from its headers to its answer, on the request itself and dropped
  // once it is answered (settle). Not in a WeakMap keyed by the request: the young-generation
  // collector keeps an old table's entries alive, so every review's request, answer and
  // parsed body went to the old generation and came back only in full collections (measured:
  // 140 KB promoted per scavenge at 1,000 reviews/s, a full collection every 2 s, each a pause
  // the tail shows), and each delete from the table allocated in the old generation.
  /** What the transport uses of a response (HTTP/1.1's ServerResponse, HTTP/2's compatibility response and its stream). */
  interface Answer {
    once(event: 'close' | 'finish', f: () => void): unknown;
    destroyed?: boolean;
    closed?: boolean;
    stream?: { destroyed?: boolean; closed?: boolean };
  }
  interface InFlight {
    /** The deadline's start: headers parsed, body not yet read. */
    arrivedAt: number;
    answer: Answer;
    /** The review's log line, written once its answer is sent or its stream closes unfinished. */
    line?: () => void;
  }
  const IN_FLIGHT = Symbol('deed.in-flight');
  /** Where a request came from, taken as it arrives and kept past its settling: an HTTP/2 stream reset or answered later no longer knows its session. */
  const CONNECTION = Symbol('deed.connection');
  type Carrier = { [IN_FLIGHT]?: InFlight; [CONNECTION]?: { peer: string; clientVerified: boolean } };
  const inFlight = (raw: object) => (raw as Carrier)[IN_FLIGHT];
  /** The connection a request came over, as taken in onRequest (every request passes it first). */
  const arrivedOver = (raw: object) => (raw as Carrier)[CONNECTION]!;
  // The review's line is written once its answer is sent (onResponse), or when the answer's
  // stream closes unfinished (a client gone): building and writing it is off the path the
  // API server waits on, and every review still gets exactly one line.
  const settle = (raw: object) => {
    const line = inFlight(raw)?.line;
    (raw as Carrier)[IN_FLIGHT] = undefined;
    line?.();
  };
  /** The socket a request came over: an HTTP/2 stream's session's, or HTTP/1.1's own. */
  const socketOf = (raw: { socket?: unknown; stream?: Http2Stream }) => (raw.stream?.session?.socket ?? raw.socket) as { remoteAddress?: string; authorized?: boolean } | undefined;
  /** The connection a request came over: its peer address, and whether its TLS client certificate verified. */
  const connectionOf = (raw: { socket?: unknown; stream?: Http2Stream }) => {
    const socket = socketOf(raw);
    return { peer: peerOf(socket), clientVerified: socket?.authorized === true };
  };
  /** Whether an answer's stream is already closed (its 'close' has passed). */
  const answerGone = (answer: Omit<Answer, 'once'>) =>
    answer.destroyed === true || answer.closed === true || answer.stream?.destroyed === true || answer.stream?.closed === true;
  /** Holds a review's line until its answer is sent; written now when the answer's stream is already gone (its 'close' has passed). */
  const lineAfterAnswer = (raw: object, answer: Omit<Answer, 'once'>, write: () => void) => {
    const request = inFlight(raw);
    if (request === undefined || answerGone(answer)) write();
    else request.line = write;
  };
  const review: RequestHooks = {
    onRequest(req, reply) {
      const carrier = req.raw as Carrier;
      carrier[IN_FLIGHT] = { arrivedAt: clock(), answer: reply.raw };
      carrier[CONNECTION] = connectionOf(req.raw);
    },
    // The whole request as the API server waits for it, refusals before a route included.
    onResponse(req, reply) {
      const webhook = req.url.split('?')[0]!.slice(1);
      const started = inFlight(req.raw)?.arrivedAt;
      if (started !== undefined && Object.hasOwn(HANDLERS, webhook)) recordRequest(metrics, webhook, reply.statusCode, (clock() - started) / 1000);
      settle(req.raw);
    },
  };
  registerRequestHooks(app, [review, ...(opts.transport?.(app) ?? [])]);

  // The body is read within the memory budget (body-budget.ts), then plain JSON.parse:
  // keys such as __proto__ become own properties, which decode refuses with the request
  // uid in hand (a generic parser would refuse them without it).
  app.removeAllContentTypeParsers(); // JSON only: anything else is a 415
  app.addContentTypeParser('application/json', (req, payload, done) => {
    const raw = req.raw as typeof req.raw & { stream?: Http2Stream };
    const answer = inFlight(req.raw)!.answer;
    const session = raw.stream?.session;
    const connection: EventEmitter = session ?? raw.socket;
    const account = accounts.open({ connection, peer: arrivedOver(req.raw).peer }, (f) => connection.once('close', f));
    // The request's cost is held until it is answered; a body is held as bytes, text and
    // parsed review until then (readBody). The most one request may hold is a connection's
    // share (it could never be granted more): at the default budget 16 MiB, so a body of
    // about 5.3 MiB of ASCII (three times its size, and its structure), 3.2 MiB with one
    // character past U+00FF (five times: its text and its parsed strings two bytes a
    // character) or 6.8 MiB of CJK text (three bytes a character in UTF-8, two once decoded).
    // The largest the API server sends, an UPDATE of a 1.5 MiB object (3.1 MiB), fits in each.
    const budget = accounts.budget.limits;
    readBody({ payload, contentLength: req.headers['content-length'], account, timeoutMs: limits.bodyTimeoutMs, onRefused: (reason) => metrics.bodiesRefused.inc({ reason }), maxParsedBytes: budget.perConnectionBytes, requestBytes: budget.perRequestBytes }, bodyLimit).then(
      ({ text }) => {
        const release = () => {
          accounts.close(account); // the parsed review is held until it is answered
          settle(req.raw);
        };
        // A stream cancelled as its last bytes arrived (an HTTP/2 RST_STREAM in the same write)
        // has closed by now, and its 'close' has passed: a listener added now would never run,
        // and the memory would stay taken until the whole connection closed.
        if (answerGone(answer)) release();
        else answer.once('close', release);
        try {
          done(null, JSON.parse(text));
        } catch (err) {
          done(Object.assign(new Error(`the body is not valid JSON: ${jsonProblem(err)}`), { statusCode: 400 }), undefined);
        }
      },
      (err: Error) => {
        accounts.close(account);
        endUnreadStream(raw.stream);
        done(err, undefined);
      },
    );
  });

  app.setErrorHandler((err: Error & { statusCode?: number; headers?: Record<string, string> }, _req, reply) => {
    const statusCode = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (statusCode === 500) {
      opts.logger.error({ err }, 'unhandled error in transport');
      metrics.errors.inc();
    }
    if (err.headers !== undefined && statusCode !== 500) void reply.headers(err.headers);
    void reply.code(statusCode).send({ code: statusCode, message: statusCode === 500 ? 'internal error' : err.message });
  });

  /** Reads what a review needs, then what those answers make necessary (a snapshot's source claim, a claim's pod), within half the review's budget. */
  const gather = async (reader: ObjectReader, needed: LookupKey[], deadline: ReturnType<typeof reviewDeadline>) => {
    const budget = () => Math.max(0, Math.min(LOOKUP_TIMEOUT_MS, deadline.budgetMs / 2 - elapsedMs(deadline, clock())));
    return gatherLookups(needed, (keys) => reader.read(keys, budget()), opts.ctx.policy);
  };

  for (const webhook of Object.keys(HANDLERS) as Webhook[]) {
    app.post(`/${webhook}`, async (req, reply) => {
      const started = process.hrtime.bigint();
      // Readiness off (the shutdown delay): close this HTTP/1.1 connection after the answer,
      // so no keep-alive connection is idle when drain.ts closes idle sockets at the end,
      // where a review racing that close would be reset. `npm run fault` counted 8 such
      // resets (one per connection) without this, 0 to 2 with it. HTTP/2 forbids the
      // header; drain.ts ends its sessions with GOAWAY.
      if (!ready && req.raw.httpVersionMajor === 1) void reply.header('connection', 'close');
      const deadline = reviewDeadline((req.query as Record<string, unknown>).timeout, inFlight(req.raw)?.arrivedAt ?? clock());
      const namespace = (req.body as { request?: { namespace?: unknown } } | null)?.request?.namespace;
      if (opts.awaitScope && typeof namespace === 'string') await opts.awaitScope(namespace, Math.min(SCOPE_WAIT_MS, deadline.budgetMs / 4));
      const plan = opts.reader ? planLookups(req.body, webhook, opts.ctx.policy.keys, opts.ctx.policy) : { lookups: [] };
      const needed = plan.lookups;
      const ctx = needed.length > 0 && opts.reader ? { ...opts.ctx, lookup: await gather(opts.reader, needed, deadline) } : opts.ctx;
      const decision = decideWithin(webhook, req.body, ctx, deadline, clock, plan.decoded);
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (decision.kind === 'bad-request') {
        recordReview(metrics, webhook, undefined, 'bad-request', undefined, durationMs / 1000);
        lineAfterAnswer(req.raw, reply.raw, () => reviewLog.warn({ webhook, decision: 'bad-request', reason: decision.message, durationMs }, 'review'));
        return reply.code(400).send({ code: 400, message: decision.message });
      }
      const { request, verdict, response } = decision;
      const outcome = outcomeOf(verdict);
      recordReview(metrics, webhook, request, outcome, verdict, durationMs / 1000);
      if (plan.fault !== undefined && outcome !== 'errored') metrics.errors.inc(); // a fault of the plan alone: decided without reads
      if (decision.breakGlass !== undefined) recordBreakGlass(metrics, webhook, decision.breakGlass);
      // As it arrived: once its answer is sent (or the client resets it) an HTTP/2 stream no
      // longer knows its session, and the line would say 'unknown' for every review the API
      // server sends that way.
      const connection = decision.breakGlass !== undefined ? arrivedOver(req.raw) : undefined;
      lineAfterAnswer(req.raw, reply.raw, () => {
        const line = {
          webhook,
          uid: clipped(decision.uid),
          // What the request gives is clipped (logger.ts): a forged review needs no credential.
          kind: clipped(request?.kind.kind),
          namespace: clipped(request?.namespace),
          name: clipped(request?.name ?? request?.object?.metadata.generateName),
          operation: request?.operation,
          subResource: clipped(request?.subResource),
          requester: clipped(request?.userInfo.username),
          dryRun: request?.dryRun,
          // The API server speaks HTTP/2 when offered; this shows which one a review came over.
          httpVersion: req.raw.httpVersion,
          decision: outcome,
          // Each rule once: a pod naming thousands of objects makes a finding of each.
          rules: verdict.findings.length > 0 ? [...new Set(verdict.findings.map((f) => f.rule))] : undefined,
          reason: verdict.allowed ? undefined : verdict.message,
          warnings: verdict.warnings.length > 0 ? verdict.warnings.length : undefined,
          breakGlass: decision.breakGlass,
          lookups: needed.length > 0 ? needed.length : undefined,
          patchBytes: response.response.patch?.length ?? 0,
          durationMs: Math.round(durationMs * 1000) / 1000,
        };
        const err = decision.error ?? plan.fault;
        if (err !== undefined) opts.logger.error({ ...line, err }, 'review');
        // Break-glass use: an operator looks at each one, and must tell the API server's from a
        // review forged by whatever reaches the port: where it came from, and whether its
        // client certificate verified (only with --client-ca does every connection's).
        else if (connection !== undefined) reviewLog.warn({ ...line, ...connection }, 'review');
        else reviewLog.info(line, 'review');
      });
      return reply.send(response);
    });
  }

  if (opts.opsRoutes ?? true) registerOpsRoutes(app, metrics, () => ready);

  return { app, metrics, setReady: (r) => (ready = r), isReady: () => ready };
}

/** Liveness, readiness and Prometheus metrics. */
export function registerOpsRoutes(app: FastifyInstance, metrics: Metrics, isReady: () => boolean): void {
  app.get('/metrics', async (_req, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => (isReady() ? { status: 'ready' } : reply.code(503).send({ status: 'not ready' })));
}
