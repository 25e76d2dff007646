// A thin client for the calls the reaper makes: list the sandbox kinds (the kind table's
// reaped rows) by label selector, get a Pod, delete with preconditions; and, for `deed keys
// usage`, discovery of every listable namespaced kind and its lists. Lists are read over
// api-connection.ts, each page bounded in bytes as it arrives; the rest through
// @kubernetes/client-node. Every call has a deadline, and every failure comes out as a
// classified KubeError. Only metadata leaves this module: a Secret's data is dropped as soon
// as a list page is decoded.
import {
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  Observable,
  type ConfigurationOptions,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
  type V1DeleteOptions,
  type V1ObjectMeta,
} from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { KubeObject } from '../admission/types.js';
import { apiVersionOf, REAPED_KINDS, stampedRow, type ReapedKindName } from '../policy/kinds.js';
import type { NamespaceFacts } from '../policy/review-scope.js';
import type { LeaseRecord } from '../reaper/verdict.js';
import { factsOf } from './lookup-facts.js';
import { cannotRead, parseProblem } from '../errors/file-errors.js';
import { classify, KubeError } from './errors.js';
import type { RetryNotice } from './retry-notice.js';
import { boundedPage, collectionPath, connectionOf, getJsonOnce, KeptAlive, METADATA_LIST, METADATA_ONE, type KubeConfigSource } from './api-connection.js';

export type { KubeConfigSource };
import { gaveUp, retriedWithin, retryWait, serverWords, type RetryClock } from './retries.js';

export type { RetryNotice } from './retry-notice.js';

export type ReapKind = ReapedKindName;

/** The kinds the reaper, the audit and key usage list: the kind table's reaped rows. */
export const REAP_KINDS: readonly ReapKind[] = REAPED_KINDS;

/** What the reaper reads of a pod whose attested deadline passed (reaper/verdict.ts, podClock). */
export interface PodClock {
  uid: string | undefined;
  phase?: string;
  /** status.startTime, RFC 3339. */
  startTime?: string;
  activeDeadlineSeconds?: number;
}

export interface Preconditions {
  uid: string;
  resourceVersion?: string;
}

export interface KubeClient {
  /**
   * The objects of `kind` matching `labelSelector`, in `namespace` or (undefined) in all
   * namespaces, one page (`limit`) at a time as the API server answers them: a reader that
   * judges each page before asking for the next holds one page, never the whole list.
   */
  listPages(kind: ReapKind, namespace: string | undefined, labelSelector: string): AsyncIterable<KubeObject[]>;
  /** The namespaces matching `labelSelector`, page by page: names and labels only. */
  listNamespaces(labelSelector: string): AsyncIterable<NamespaceFacts[]>;
  /** Every page of listPages() in one array: for small lists only. */
  list(kind: ReapKind, namespace: string | undefined, labelSelector: string): Promise<KubeObject[]>;
  getPod(namespace: string, name: string): Promise<KubeObject>;
  /** A pod's own clock, as the kubelet keeps it: its uid, phase, start and `activeDeadlineSeconds` (nothing else of it is kept). */
  getPodClock(namespace: string, name: string): Promise<PodClock>;
  /**
   * The pods of `namespace` with their specs (metadata and spec only; status is dropped), a
   * page at a time: for the rules that read a pod's template. Never for Secrets, whose data
   * is never read.
   */
  listPodSpecPages(namespace: string): AsyncIterable<KubeObject[]>;
  /**
   * The objects of a namespaced resource with their specs (metadata and spec; status is
   * dropped), a page at a time: for the audit's reading of operator configurations (stores,
   * TriggerAuthentications), which hold names of credentials, not credentials. A resource the
   * API server does not serve (its CRD is not installed) is a KubeError with status 404.
   */
  /** Every namespace's where `namespace` is not given. */
  listSpecPages(resource: ServedResource, namespace?: string): AsyncIterable<KubeObject[]>;
  delete(kind: ReapKind, namespace: string, name: string, preconditions: Preconditions): Promise<void>;
  /**
   * One Lease by name: Deed's stamps and the times that say whether it is renewed (nothing
   * else of it is kept). Its absence is a KubeError with reason NotFound.
   */
  getLease(namespace: string, name: string): Promise<LeaseRecord>;
  /** Whether RBAC lets this client's identity delete objects of `kind` in `namespace` (a SelfSubjectAccessReview). */
  canDelete(kind: ReapKind, namespace: string): Promise<{ allowed: boolean; reason?: string }>;
}

/** A namespaced resource the API server serves, at its group's preferred version, as discovery names it. */
export interface ServedResource {
  group: string;
  version: string;
  /** The plural, as in the path (`leases`). */
  resource: string;
  kind: string;
}

/** What discovery found: the resources, and the group versions it could not read (their resources are unknown). */
export interface ServedResources {
  resources: ServedResource[];
  errors: Array<{ groupVersion: string; message: string }>;
}

/**
 * Lists of any kind the API server serves, not only the kind table's reaped rows: for
 * `deed keys usage`, which must see every object Deed stamped (run Leases, workloads, the
 * default row's kinds, custom resources included) before it calls a key unused.
 */
export interface ServedKindLister {
  /**
   * Every namespaced resource the API server serves with the `list` verb, from discovery
   * (/api/v1 and each group's preferred version under /apis), subresources left out. A group
   * version whose discovery fails (an aggregated API that is down) is in `errors`.
   */
  listableResources(): Promise<ServedResources>;
  /** The objects of `resource` matching `labelSelector` (metadata only), page by page, as listPages() reads a reaped kind. */
  listMetadataPages(resource: ServedResource, namespace: string | undefined, labelSelector: string): AsyncIterable<KubeObject[]>;
}

export interface KubeClientOptions {
  /** Deadline of each API call, connection to decoded body. */
  timeoutMs: number;
  /** Items per list page (`limit`); the client follows `continue`. */
  pageSize?: number;
  /** How often a call answered 429 is tried again, after its Retry-After (default 5). */
  maxRetries?: number;
  /** Told of each retry after a 429 (the CLI logs it). */
  onRetry?: (retry: RetryNotice) => void;
  /** Ends throttle waits early (a stopping sweep sends nothing more). */
  signal?: AbortSignal;
  /** The policy's label prefix: of a Lease, only the labels and annotations under it are kept (required: a default would drop a custom prefix's stamps, and the run's Lease would read as replaced). */
  labelPrefix: string;
  /** `--as USER`: every call impersonates this user (the kubeconfig's identity needs `impersonate` rights), as kubectl's `--as` does. */
  impersonate?: string | undefined;
}

/** What each call carries besides its own parameters. */
export interface CallExtras {
  /** One kept-alive agent per TLS configuration. */
  agents?: KeptAlive;
  /** `Impersonate-User` when set. */
  impersonate?: string | undefined;
  /** Told of each retry after a 429. */
  onRetry?: ((retry: RetryNotice) => void) | undefined;
}

// Retries of one call of a sweep: with Priority and Fairness's Retry-After of a second or two,
// a level saturated for several seconds is waited out; each attempt has its own deadline.
const DEFAULT_MAX_RETRIES = 5;

// A server that keeps answering `continue` would otherwise hold a sweep forever.
const MAX_PAGES = 10_000;

/**
 * List pages are sized in characters, not objects: a page of 500 objects that each carry
 * 250 KB of annotations (anyone may write them where Deed does not review, and a list across
 * all namespaces reads them) is 125 MB of text, more than the reaper's and the audit's heaps
 * hold. So the first page asks for FIRST_PAGE_ITEMS, and each next page for as many objects
 * as fill PAGE_BUDGET_CHARS at the size the last page's objects had, up to MAX_PAGE_ITEMS and
 * twice the last page's limit (small objects listed first open it only gradually):
 * ordinary objects still come 500 to a page, large ones cost more requests, never more memory.
 */
const PAGE_BUDGET_CHARS = 4 * 1024 * 1024;
const FIRST_PAGE_ITEMS = 50;
const MAX_PAGE_ITEMS = 500;
/**
 * The most bytes one list page may hold, counted as it is read: sizing from the last page
 * cannot know the next page's objects (50 objects of 750 KB of metadata each are a first page
 * of 38 MB, and 169 padded ones after small ones one of 40 MB: the CronJob's 96 MB heap died on
 * each). Past it the read stops and the same page is asked again for an eighth as many objects,
 * as the lookup cache's reflector does. Twice the budget, so objects somewhat larger than the
 * last page's cost no second request; a page's peak is then its bytes, its text and its parsed
 * objects, about 30 MB at most, under the 96 MB heap beside what a sweep holds.
 */
export const MAX_LIST_PAGE_BYTES = 2 * PAGE_BUDGET_CHARS;

/** The next page's limit, from the last page's text (`chars`) and object count; unchanged by an empty page. */
export function listPageLimit(chars: number, items: number, last: number): number {
  if (items === 0 || chars <= 0) return last;
  // At most twice the last: small objects listed first must not open the next page to 500 large ones.
  return Math.max(1, Math.min(MAX_PAGE_ITEMS, last * 2, Math.floor((PAGE_BUDGET_CHARS * items) / chars)));
}

export { METADATA_LIST, METADATA_ONE };

// A list's raw JSON has the time as a string; client-node's get decodes it into a Date.
type Meta = Omit<V1ObjectMeta, 'deletionTimestamp'> & { deletionTimestamp?: Date | string };
/** A list answer as the API server writes it (read through api-connection.ts, not decoded by client-node). */
type Page = { metadata?: { continue?: string }; items?: Array<{ metadata?: Meta; spec?: Record<string, unknown> }> | null };

/** Discovery's answers, as far as they are read: /apis, and a group version's resources. */
type ApiGroupList = { groups?: Array<{ name?: string; preferredVersion?: { version?: string }; versions?: Array<{ version?: string }> }> };
type ApiResourceList = { resources?: Array<{ name: string; kind?: string; namespaced?: boolean; verbs?: string[] }> };

/** The API client binding of a reaped kind's delete: the one place besides its row a new kind is added (lists follow the row's path). */
interface KindApi {
  delete(namespace: string, name: string, body: V1DeleteOptions, o: ConfigurationOptions): Promise<unknown>;
}

/** The list path of a reaped kind, in `namespace` or (undefined) across all namespaces. */
function listPath(kind: ReapKind, namespace: string | undefined): string {
  return collectionPath(stampedRow(kind), namespace);
}

export function createKubeClient(kc: KubeConfig, options: KubeClientOptions): KubeClient & ServedKindLister {
  const prefix = options.labelPrefix;
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const coordination = kc.makeApiClient(CoordinationV1Api);
  const authorization = kc.makeApiClient(AuthorizationV1Api);
  // A fixed page size when one is given (tests); otherwise pages sized in characters (listPageLimit).
  const fixedPageSize = options.pageSize;

  const apis: Record<ReapKind, KindApi> = {
    Pod: { delete: (namespace, name, body, o) => core.deleteNamespacedPod({ namespace, name, body }, o) },
    Secret: { delete: (namespace, name, body, o) => core.deleteNamespacedSecret({ namespace, name, body }, o) },
    ConfigMap: { delete: (namespace, name, body, o) => core.deleteNamespacedConfigMap({ namespace, name, body }, o) },
    NetworkPolicy: { delete: (namespace, name, body, o) => net.deleteNamespacedNetworkPolicy({ namespace, name, body }, o) },
    PersistentVolumeClaim: { delete: (namespace, name, body, o) => core.deleteNamespacedPersistentVolumeClaim({ namespace, name, body }, o) },
  };
  // Lists are read over node's http with the same credentials: client-node reads a whole
  // answer before it parses it, and a list page must be cut as it arrives (MAX_LIST_PAGE_BYTES).
  const conn = connectionOf(kc);

  const throttle = new Throttle(options.maxRetries ?? DEFAULT_MAX_RETRIES, options.signal, options.onRetry);
  const extras: CallExtras = { agents: new KeptAlive(), impersonate: options.impersonate };
  const call = <T>(what: string, accept: string | undefined, fn: (o: ConfigurationOptions) => Promise<T>) =>
    throttle.run(what, () => withDeadline(options.timeoutMs, what, accept, fn, extras));

  /**
   * Follows `continue` from page to page, each page under its own deadline and throttled as
   * every other call; a page past MAX_LIST_PAGE_BYTES is asked again, from the same place, for
   * an eighth as many objects, down to one (one object past the bound fails the list).
   */
  async function* pages(what: string, path: string, accept: string | undefined, labelSelector: string | undefined): AsyncIterable<NonNullable<Page['items']>> {
    let next: string | undefined;
    let limit = fixedPageSize ?? FIRST_PAGE_ITEMS;
    for (let page = 0; page < MAX_PAGES; page++) {
      let result: Page;
      let chars = 0;
      try {
        const read = await boundedPage(limit, (asked) => {
          const query = { limit: asked, continue: next, labelSelector: labelSelector || undefined };
          return throttle.run(what, () => getJsonOnce<Page>(conn, path, { what, accept, query, timeoutMs: options.timeoutMs, impersonate: options.impersonate, maxBytes: MAX_LIST_PAGE_BYTES, onText: (n) => (chars = n) }));
        });
        result = read.page;
        limit = read.limit;
      } catch (err) {
        // A list longer than etcd's compaction interval (5 minutes) loses its snapshot: go on
        // with the token the API server offers. Each page is still a list of objects that
        // existed when it was read, which is all a reader judging page by page relies on.
        if (next !== undefined && err instanceof KubeError && err.continueToken !== undefined) {
          next = err.continueToken;
          continue;
        }
        throw err;
      }
      // An empty list of metadata comes back from kube-apiserver as "items": null: a list
      // (it has list metadata) with nothing in it. Anything else without items is not a list.
      const items = result.items ?? (result.metadata !== undefined ? [] : undefined);
      if (!Array.isArray(items)) throw new KubeError('Other', `${what}: the answer carries no items`);
      if (fixedPageSize === undefined) limit = listPageLimit(chars, items.length, limit);
      yield items;
      next = result.metadata?.continue || undefined;
      if (next === undefined) return;
    }
    throw new KubeError('Other', `${what}: more than ${MAX_PAGES} pages`);
  }

  return {
    async *listPages(kind, namespace, labelSelector) {
      const what = `list ${stampedRow(kind).resource} in ${namespace ?? 'all namespaces'}`;
      for await (const items of pages(what, listPath(kind, namespace), METADATA_LIST, labelSelector)) yield items.map((item) => metadataOnly(kind, item.metadata));
    },

    async *listPodSpecPages(namespace) {
      for await (const items of pages(`list pods in ${namespace}`, listPath('Pod', namespace), undefined, undefined))
        yield items.map((item) => ({ ...metadataOnly('Pod', item.metadata), apiVersion: 'v1', spec: item.spec ?? {} }));
    },

    async *listSpecPages(resource, namespace) {
      const apiVersion = apiVersionOf(resource);
      for await (const items of pages(`list ${resourceName(resource)} in ${namespace ?? 'every namespace'}`, collectionPath(resource, namespace), undefined, undefined))
        yield items.map((item) => ({ ...metadataOnly(resource.kind, item.metadata), apiVersion, spec: item.spec ?? {} }));
    },

    async *listNamespaces(labelSelector) {
      for await (const items of pages('list namespaces', '/api/v1/namespaces', METADATA_LIST, labelSelector))
        yield items.flatMap((item) => (item.metadata?.name ? [{ name: item.metadata.name, labels: item.metadata.labels }] : []));
    },

    async list(kind, namespace, labelSelector) {
      const out: KubeObject[] = [];
      for await (const page of this.listPages(kind, namespace, labelSelector)) out.push(...page);
      return out;
    },

    async listableResources() {
      const discover = <T>(path: string) =>
        throttle.run(`discover ${path}`, () => getJsonOnce<T>(conn, path, { what: `discover ${path}`, timeoutMs: options.timeoutMs, impersonate: options.impersonate }));
      const out: ServedResources = { resources: [], errors: [] };
      const groupVersions: Array<{ group: string; version: string; path: string }> = [{ group: '', version: 'v1', path: '/api/v1' }];
      try {
        const groups = await discover<ApiGroupList>('/apis');
        for (const g of groups.groups ?? []) {
          const version = g.preferredVersion?.version ?? g.versions?.[0]?.version;
          if (g.name && version) groupVersions.push({ group: g.name, version, path: `/apis/${g.name}/${version}` });
        }
      } catch (err) {
        out.errors.push({ groupVersion: 'the API groups (/apis)', message: (err as Error).message });
      }
      for (const gv of groupVersions) {
        try {
          const list = await discover<ApiResourceList>(gv.path);
          for (const r of list.resources ?? [])
            if (r.namespaced === true && !r.name.includes('/') && r.verbs?.includes('list') && r.kind)
              out.resources.push({ group: gv.group, version: gv.version, resource: r.name, kind: r.kind });
        } catch (err) {
          out.errors.push({ groupVersion: gv.group === '' ? gv.version : `${gv.group}/${gv.version}`, message: (err as Error).message });
        }
      }
      return out;
    },

    async *listMetadataPages(resource, namespace, labelSelector) {
      const what = `list ${resourceName(resource)} in ${namespace ?? 'all namespaces'}`;
      for await (const items of pages(what, collectionPath(resource, namespace), METADATA_LIST, labelSelector)) yield items.map((item) => metadataOnly(resource.kind, item.metadata));
    },

    async getLease(namespace, name) {
      // The whole object, not its metadata: the renewal times are in its spec.
      const lease = await call(`get lease ${namespace}/${name}`, undefined, (o) => coordination.readNamespacedLease({ namespace, name }, o));
      return leaseRecord(lease, prefix);
    },

    async canDelete(kind, namespace) {
      const { resource, group } = stampedRow(kind);
      const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace, verb: 'delete', group, resource } } };
      const review = await call(`review access to delete ${resource} in ${namespace}`, undefined, (o) => authorization.createSelfSubjectAccessReview({ body }, o));
      const status = review.status;
      return { allowed: status?.allowed === true, ...(status?.reason ? { reason: status.reason } : {}) };
    },

    async getPod(namespace, name) {
      const pod = await call(`get pod ${namespace}/${name}`, METADATA_ONE, (o) => core.readNamespacedPod({ namespace, name }, o));
      return metadataOnly('Pod', pod.metadata);
    },

    async getPodClock(namespace, name) {
      const pod = await call(`get pod ${namespace}/${name}`, undefined, (o) => core.readNamespacedPod({ namespace, name }, o));
      const started = pod.status?.startTime;
      return {
        uid: pod.metadata?.uid,
        ...(pod.status?.phase !== undefined ? { phase: pod.status.phase } : {}),
        ...(started !== undefined ? { startTime: new Date(started).toISOString() } : {}),
        ...(pod.spec?.activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds: pod.spec.activeDeadlineSeconds } : {}),
      };
    },

    async delete(kind, namespace, name, preconditions) {
      const api = apis[kind];
      const body: V1DeleteOptions = { preconditions: { ...preconditions } };
      await call(`delete ${stampedRow(kind).resource} ${namespace}/${name}`, undefined, (o) => api.delete(namespace, name, body, o));
    },
  };
}

/** Runs one API call under a deadline: the request is aborted and the call fails with a Timeout. */
export async function withDeadline<T>(timeoutMs: number, what: string, accept: string | undefined, fn: (o: ConfigurationOptions) => Promise<T>, extras: CallExtras = {}): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new KubeError('Timeout', `${what}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    // The race also covers what the signal cannot: credential plugins and body decoding.
    const middleware = [perCall(controller.signal, accept, extras)];
    return await Promise.race([fn({ middleware, middlewareMergeStrategy: 'append' }), deadline]);
  } catch (err) {
    throw classify(err, what);
  } finally {
    clearTimeout(timer);
  }
}

/** One API call under an overall deadline, its 429s sent again after their Retry-After (retries.ts, retriedWithin). */
export function withRetries<T>(
  deadlineMs: number,
  what: string,
  accept: string | undefined,
  fn: (o: ConfigurationOptions) => Promise<T>,
  extras: CallExtras = {},
  clock?: RetryClock,
): Promise<T> {
  return retriedWithin(deadlineMs, what, (remainingMs) => withDeadline(remainingMs, what, accept, fn, extras), extras.onRetry, clock);
}

/**
 * Honours 429 as API Priority and Fairness means it: the call was not served, so it is sent
 * again after Retry-After, and no other call of this client starts before then either
 * (the server asked this client, not one request, to hold off). Calls in flight are also
 * halved on each 429 and grow back by one per success or so, as TCP does: releasing every
 * waiting call at once would only meet the same limit again. Each attempt has the call's
 * deadline; a call is retried `maxRetries` times at most, and the waits end early when the
 * sweep is stopped (a CronJob's deadline sends SIGTERM). Past its retries the 429 reaches the
 * caller as a TooManyRequests KubeError that says so.
 */
class Throttle {
  private until = 0;
  private gate: Promise<void> | undefined;
  private inFlight = 0;
  private limit = Number.POSITIVE_INFINITY;
  private readonly queued: Array<() => void> = [];
  constructor(
    private readonly maxRetries: number,
    private readonly signal: AbortSignal | undefined,
    private readonly onRetry: ((retry: RetryNotice) => void) | undefined,
  ) {}

  async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    let started: number | undefined;
    for (let attempt = 0; ; attempt++) {
      await this.wait(what);
      await this.acquire();
      started ??= Date.now();
      try {
        const result = await fn();
        if (Number.isFinite(this.limit)) this.limit += 1 / this.limit;
        return result;
      } catch (err) {
        if (!(err instanceof KubeError) || err.reason !== 'TooManyRequests') throw err;
        if (attempt >= this.maxRetries) throw gaveUp(err, what, attempt + 1, Date.now() - started, `after ${this.maxRetries} ${this.maxRetries === 1 ? 'retry' : 'retries'}, the most it makes`);
        const seconds = retryWait(err);
        this.limit = Math.max(1, Math.floor(Math.min(this.limit, this.inFlight) / 2));
        this.until = Math.max(this.until, Date.now() + seconds * 1000);
        this.onRetry?.({ what, retryAfterSeconds: seconds, attempt: attempt + 1, message: serverWords(err) });
      } finally {
        this.release();
      }
    }
  }

  private async acquire(): Promise<void> {
    while (this.inFlight >= this.limit) await new Promise<void>((resolve) => this.queued.push(resolve));
    this.inFlight++;
  }

  private release(): void {
    this.inFlight--;
    if (this.queued.length > 0 && this.inFlight < this.limit) this.queued.shift()!();
  }

  /** One timer and one abort listener for every call held back, however many. */
  private async wait(what: string): Promise<void> {
    while (this.until > Date.now()) {
      if (this.signal?.aborted) throw new KubeError('Other', `${what}: stopped while throttled`);
      this.gate ??= new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.signal?.removeEventListener('abort', done);
          this.gate = undefined;
          resolve();
        };
        const timer = setTimeout(done, this.until - Date.now());
        this.signal?.addEventListener('abort', done, { once: true });
      });
      await this.gate;
    }
    if (this.signal?.aborted && this.until > Date.now()) throw new KubeError('Other', `${what}: stopped while throttled`);
  }
}

/** Per call: the deadline's abort signal, the Accept header when one is wanted, impersonation, a kept-alive agent. */
function perCall(signal: AbortSignal, accept: string | undefined, extras: CallExtras): ObservableMiddleware {
  return {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(signal);
      if (accept !== undefined) ctx.setHeaderParam('Accept', accept);
      if (extras.impersonate !== undefined) ctx.setHeaderParam('Impersonate-User', extras.impersonate);
      const agent = extras.agents?.reuse(ctx.getAgent());
      if (agent !== undefined) ctx.setAgent(agent);
      return new Observable(Promise.resolve(ctx));
    },
    post: (ctx: ResponseContext) => new Observable(Promise.resolve(ctx)),
  };
}

/** A Lease as the reaper judges it: Deed's stamps, the last renewal (or acquisition) and the duration. */
function leaseRecord(item: { metadata?: V1ObjectMeta; spec?: { renewTime?: Date | string; acquireTime?: Date | string; leaseDurationSeconds?: number } }, prefix: string): LeaseRecord {
  const facts = factsOf({ metadata: item.metadata as never }, prefix);
  const time = item.spec?.renewTime ?? item.spec?.acquireTime;
  // client-node decodes MicroTime into a Date; an unparseable one stays a string and fails Date.parse.
  const renewedAt = time instanceof Date ? (Number.isNaN(time.getTime()) ? 'invalid' : time.toISOString()) : typeof time === 'string' ? time : undefined;
  const duration = item.spec?.leaseDurationSeconds;
  return {
    ...(facts.labels ? { labels: facts.labels } : {}),
    ...(facts.annotations ? { annotations: facts.annotations } : {}),
    ...(renewedAt !== undefined ? { renewedAt } : {}),
    ...(typeof duration === 'number' ? { leaseDurationSeconds: duration } : {}),
  };
}

/** A resource as kubectl names it: `leases.coordination.k8s.io`, `pods` in the core group. */
function resourceName(r: Pick<ServedResource, 'group' | 'resource'>): string {
  return r.group === '' ? r.resource : `${r.resource}.${r.group}`;
}

function metadataOnly(kind: string, m: Meta | undefined): KubeObject {
  return {
    kind,
    metadata: {
      name: m?.name,
      namespace: m?.namespace,
      uid: m?.uid,
      resourceVersion: m?.resourceVersion,
      labels: m?.labels,
      annotations: m?.annotations,
      // Whose object it is by reference (a PVC must have no pod owner); names and uids only.
      ownerReferences: m?.ownerReferences?.map((r) => ({ apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid })),
      deletionTimestamp: m?.deletionTimestamp ? new Date(m.deletionTimestamp).toISOString() : undefined,
      // What holds an object being deleted (the reaper's deletion-stuck).
      ...(m?.finalizers !== undefined && m.finalizers.length > 0 ? { finalizers: m.finalizers } : {}),
    },
  };
}


/**
 * The API server and credentials, found as kubectl finds them: `--kubeconfig FILE`; else
 * the files in $KUBECONFIG (merged, the first to set a name or the current context wins,
 * missing files skipped); else ~/.kube/config; else the in-cluster service account. Never a
 * guessed default such as localhost:8080. `--context` picks a context of what was loaded.
 */
export function loadKubeConfig(source: KubeConfigSource | string = {}, env: NodeJS.ProcessEnv = process.env, home: string = homedir()): KubeConfig {
  const { kubeconfig, context } = typeof source === 'string' ? { kubeconfig: source, context: undefined } : source;
  const kc = new KubeConfig();
  let from: string;
  const fromFiles = (files: string[]) => {
    const [first, ...rest] = files.map((file) => {
      const one = new KubeConfig();
      try {
        one.loadFromFile(file);
      } catch (err) {
        throw new Error((err as NodeJS.ErrnoException).code !== undefined ? cannotRead('kubeconfig', file, err) : `cannot load kubeconfig ${file}: ${parseProblem(err)}`);
      }
      return one;
    });
    kc.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: '' });
    for (const one of [first!, ...rest]) {
      if (!kc.currentContext && one.currentContext) kc.setCurrentContext(one.currentContext);
      for (const c of one.clusters) if (!kc.getCluster(c.name)) kc.addCluster(c);
      for (const u of one.users) if (!kc.getUser(u.name)) kc.addUser(u);
      for (const c of one.contexts) if (!kc.getContextObject(c.name)) kc.addContext(c);
    }
  };
  const envFiles = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
  const homeFile = join(home, '.kube', 'config');
  if (kubeconfig !== undefined && kubeconfig !== '') {
    fromFiles([kubeconfig]);
    from = kubeconfig;
  } else if (envFiles.length > 0) {
    const present = envFiles.filter((f) => existsSync(f));
    if (present.length === 0) throw new Error(`none of the files in $KUBECONFIG exists (${envFiles.join(delimiter)})`);
    fromFiles(present);
    from = `$KUBECONFIG (${present.join(delimiter)})`;
  } else if (existsSync(homeFile)) {
    fromFiles([homeFile]);
    from = homeFile;
  } else {
    if (!env.KUBERNETES_SERVICE_HOST) throw new Error('no kubeconfig found (--kubeconfig, $KUBECONFIG, ~/.kube/config) and not running in a cluster (KUBERNETES_SERVICE_HOST is unset); pass --kubeconfig FILE');
    kc.loadFromCluster();
    from = 'the in-cluster configuration';
  }
  if (context !== undefined && context !== '') {
    if (!kc.getContextObject(context)) throw new Error(`no context "${context}" in ${from}`);
    kc.setCurrentContext(context);
  }
  if (!kc.getCurrentCluster()) throw new Error(`no current cluster in ${from}`);
  return kc;
}
