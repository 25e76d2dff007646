// One kind listed, then watched from the list's resourceVersion, into a store of the facts
// a lookup needs (lookup-facts.ts), as client-go's reflector does for an informer. Only
// the namespaces `keeps` accepts are stored (the review scope); a namespace that enters
// it is listed on its own (a backfill), one that leaves it is dropped. `current` is true
// only while the list is done and a watch is open: otherwise the store may be behind by
// more than the watch's delay, and readers go to the API server instead.
import { CoreV1Api, CustomObjectsApi, Watch, type ConfigurationOptions, type KubeConfig } from '@kubernetes/client-node';
import { kindRows, apiVersionOf, type CachedLookupResource } from '../policy/kinds.js';
import { METADATA_LIST, METADATA_ONE, withRetries, type RetryNotice } from './client.js';
import { factsOf, type ObjectFacts } from './lookup-facts.js';

/** The namespaces (the review scope), and the kinds the webhook looks up from the cache (the kind table's `lookup`). */
export type CachedResource = 'namespaces' | CachedLookupResource;

type Item = { metadata?: { name?: string; namespace?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: unknown; resourceVersion?: string }; spec?: unknown };
type Page = { metadata?: { resourceVersion?: string; _continue?: string }; items: Item[] | null };
type ListParams = { limit: number; _continue?: string; labelSelector?: string };

export interface ReflectorOptions {
  kc: KubeConfig;
  resource: CachedResource;
  /** Ask for PartialObjectMetadata (everything but pods, whose service account is in the spec). */
  metadataOnly: boolean;
  labelSelector?: string;
  /** Deed's label prefix: the labels and annotations kept. */
  prefix: string;
  /** Whether objects of this namespace are stored. */
  keeps(namespace: string): boolean;
  /** After the store changed for a name. */
  onChange?(namespace: string, name: string): void;
  /** After each full list is in the store. */
  onListed?(): void;
  onCurrent?(current: boolean): void;
  onError(err: unknown, what: string): void;
  /** A list page answered 429, sent again after its Retry-After. */
  onRetry?(retry: RetryNotice): void;
  /** Deadline of one list page. */
  listTimeoutMs?: number;
  pageSize?: number;
  /** The API server ends each watch after about this long (client-go: 5 to 10 minutes); a watch silent for longer plus 30 s is presumed dead. */
  watchSeconds?: number;
}

/** `items: null` is an empty list of metadata (kube-apiserver's PartialObjectMetadataList). */
const itemsOf = (page: Page): Item[] => page.items ?? [];

export class Reflector {
  private store = new Map<string, Map<string, ObjectFacts>>();
  private count = 0;
  private rv: string | undefined;
  private listed = false;
  private watching = false;
  private stopped = true;
  private abort: (() => void) | undefined;
  /** Bumped by every full list: a backfill begun before one is dropped. */
  private generation = 0;
  /** Namespaces being backfilled, and the names the watch touched meanwhile (the watch wins). */
  private touched = new Map<string, Set<string>>();
  private readonly list: (namespace: string | undefined, p: ListParams) => Promise<Page>;
  private readonly path: string;

  constructor(private readonly o: ReflectorOptions) {
    const core = o.kc.makeApiClient(CoreV1Api);
    const accept = o.metadataOnly ? METADATA_LIST : undefined;
    const timeout = o.listTimeoutMs ?? 30_000;
    const call = (what: string, fn: (c: ConfigurationOptions) => Promise<unknown>) => withRetries(timeout, what, accept, fn, { onRetry: o.onRetry }) as Promise<Page>;
    const core_: Partial<Record<CachedResource, (p: ListParams, c: ConfigurationOptions) => Promise<unknown>>> = {
      pods: (p, c) => core.listPodForAllNamespaces(p, c),
      persistentvolumeclaims: (p, c) => core.listPersistentVolumeClaimForAllNamespaces(p, c),
      secrets: (p, c) => core.listSecretForAllNamespaces(p, c),
      replicationcontrollers: (p, c) => core.listReplicationControllerForAllNamespaces(p, c),
      configmaps: (p, c) => core.listConfigMapForAllNamespaces(p, c),
      serviceaccounts: (p, c) => core.listServiceAccountForAllNamespaces(p, c),
      namespaces: (p, c) => core.listNamespace(p, c),
    };
    const coreOne: Partial<Record<CachedResource, (namespace: string, p: ListParams, c: ConfigurationOptions) => Promise<unknown>>> = {
      pods: (namespace, p, c) => core.listNamespacedPod({ namespace, ...p }, c),
      persistentvolumeclaims: (namespace, p, c) => core.listNamespacedPersistentVolumeClaim({ namespace, ...p }, c),
      secrets: (namespace, p, c) => core.listNamespacedSecret({ namespace, ...p }, c),
      replicationcontrollers: (namespace, p, c) => core.listNamespacedReplicationController({ namespace, ...p }, c),
      configmaps: (namespace, p, c) => core.listNamespacedConfigMap({ namespace, ...p }, c),
      serviceaccounts: (namespace, p, c) => core.listNamespacedServiceAccount({ namespace, ...p }, c),
    };
    // The other kinds (apps, batch) by their group's path: the generic client lists any of them.
    const row = kindRows().find((r) => r.resource === o.resource);
    if (row === undefined) throw new Error(`Deed does not cache ${o.resource}`);
    const custom = o.kc.makeApiClient(CustomObjectsApi);
    const gv = { group: row.group, version: row.version, plural: row.resource };
    const all = core_[o.resource] ?? ((p: ListParams, c: ConfigurationOptions) => custom.listClusterCustomObject({ ...gv, ...p }, c));
    const one = coreOne[o.resource] ?? ((namespace: string, p: ListParams, c: ConfigurationOptions) => custom.listNamespacedCustomObject({ ...gv, namespace, ...p }, c));
    this.list = (namespace, p) =>
      namespace === undefined || o.resource === 'namespaces'
        ? call(`list ${o.resource}`, (c) => all(p, c))
        : call(`list ${o.resource} in ${namespace}`, (c) => one(namespace, p, c));
    this.path = row.group === '' ? `/api/v1/${o.resource}` : `/apis/${apiVersionOf(row)}/${o.resource}`;
  }

  get resource(): CachedResource {
    return this.o.resource;
  }

  /** Listed, and a watch is open. */
  get current(): boolean {
    return this.listed && this.watching;
  }

  get hasListed(): boolean {
    return this.listed;
  }

  get size(): number {
    return this.count;
  }

  get(namespace: string, name: string): ObjectFacts | undefined {
    return this.store.get(namespace)?.get(name);
  }

  names(namespace: string): IterableIterator<string> {
    return (this.store.get(namespace) ?? new Map<string, ObjectFacts>()).keys();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.();
    this.setWatching(false);
  }

  /** A namespace entered the scope: list its objects, unless a full list is still to come. */
  async backfill(namespace: string): Promise<void> {
    if (!this.listed || this.o.resource === 'namespaces') return;
    const generation = this.generation;
    const touched = new Set<string>();
    this.touched.set(namespace, touched);
    try {
      const { items } = await this.listPaged(namespace);
      if (generation !== this.generation || !this.o.keeps(namespace) || this.stopped) return;
      for (const item of items) {
        const name = item.metadata?.name;
        if (name !== undefined && !touched.has(name)) this.put(namespace, name, factsOf(item, this.o.prefix));
      }
    } catch (err) {
      // Not a safety matter: a name not in the store is read from the API server.
      this.o.onError(err, `backfill ${this.o.resource} in ${namespace}`);
    } finally {
      if (this.touched.get(namespace) === touched) this.touched.delete(namespace);
    }
  }

  /** A namespace left the scope: forget its objects. */
  drop(namespace: string): void {
    const names = this.store.get(namespace);
    if (names === undefined) return;
    this.count -= names.size;
    this.store.delete(namespace);
  }

  private async run(): Promise<void> {
    let backoffMs = 500;
    while (!this.stopped) {
      try {
        if (this.rv === undefined) await this.relist();
        if (this.stopped) return;
        const opened = Date.now();
        await this.watchOnce();
        // A watch the server ends at once (it did, asked for the wrong form) must not become a loop of requests.
        if (Date.now() - opened < 1000) throw new Error(`watch ${this.o.resource}: ended within a second of opening`);
        backoffMs = 500;
      } catch (err) {
        this.setWatching(false);
        if (this.stopped) return;
        if (isGone(err)) {
          this.rv = undefined; // too old for the watch cache: list again
          continue;
        }
        this.o.onError(err, `${this.rv === undefined ? 'list' : 'watch'} ${this.o.resource}`);
        // A watch answered 429 (Priority and Fairness): client-node's Watch keeps no headers, so
        // its Retry-After is taken as API Priority and Fairness sends it, a second.
        const floorMs = isThrottled(err) ? 1000 : 0;
        await new Promise((r) => setTimeout(r, Math.max(floorMs, backoffMs * (0.5 + Math.random()))));
        backoffMs = Math.min(backoffMs * 2, 30_000);
      }
    }
  }

  private async relist(): Promise<void> {
    const { items, rv } = await this.listPaged(undefined);
    const before = this.store;
    const next = new Map<string, Map<string, ObjectFacts>>();
    let count = 0;
    for (const item of items) {
      const namespace = item.metadata?.namespace ?? '';
      const name = item.metadata?.name;
      if (name === undefined || !this.o.keeps(namespace)) continue;
      let names = next.get(namespace);
      if (names === undefined) next.set(namespace, (names = new Map()));
      names.set(name, factsOf(item, this.o.prefix));
      count++;
    }
    this.generation++;
    this.touched.clear();
    this.store = next;
    this.count = count;
    this.rv = rv;
    this.listed = true;
    if (this.o.onChange) {
      for (const [namespace, names] of before) for (const name of names.keys()) if (!next.get(namespace)?.has(name)) this.o.onChange(namespace, name);
      for (const [namespace, names] of next) for (const name of names.keys()) this.o.onChange(namespace, name);
    }
    this.o.onListed?.();
  }

  private async listPaged(namespace: string | undefined): Promise<{ items: Item[]; rv: string }> {
    const items: Item[] = [];
    let next: string | undefined;
    let rv = '';
    for (let page = 0; page < 100_000; page++) {
      const p: ListParams = { limit: this.o.pageSize ?? 500, ...(next ? { _continue: next } : {}), ...(this.o.labelSelector ? { labelSelector: this.o.labelSelector } : {}) };
      const answer = await this.list(namespace, p);
      items.push(...itemsOf(answer));
      rv = answer.metadata?.resourceVersion ?? rv;
      next = answer.metadata?._continue || undefined;
      if (next === undefined) return { items, rv };
    }
    throw new Error(`list ${this.o.resource}: too many pages`);
  }

  private watchOnce(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const watchSeconds = this.o.watchSeconds ?? 60 + Math.floor(Math.random() * 60);
      let ended = false;
      let stall: NodeJS.Timeout | undefined;
      let controller: AbortController | undefined;
      const end = (err: unknown) => {
        if (ended) return;
        ended = true;
        clearTimeout(stall);
        this.abort = undefined;
        controller?.abort();
        if (err) reject(err instanceof Error || typeof err === 'object' ? err : new Error(String(err)));
        else resolve();
      };
      const armStall = () => {
        clearTimeout(stall);
        stall = setTimeout(() => end(new Error(`watch ${this.o.resource}: no event for ${watchSeconds + 30} s`)), (watchSeconds + 30) * 1000);
        stall.unref();
      };
      this.abort = () => end(undefined);
      const params: Record<string, string | number | boolean> = { resourceVersion: this.rv ?? '', allowWatchBookmarks: true, timeoutSeconds: watchSeconds };
      if (this.o.labelSelector) params.labelSelector = this.o.labelSelector;
      armStall();
      // A watch's events each carry one object: as=PartialObjectMetadata. The List form is a
      // list's; asked of a watch, kube-apiserver ends it at once, and the store would never move.
      const watch = new Watch(this.o.metadataOnly ? withAccept(this.o.kc, METADATA_ONE) : this.o.kc);
      watch
        .watch(
          this.path,
          params,
          (type: string, obj: Item & { code?: number }) => {
            if (ended) return;
            armStall();
            if (type === 'ERROR') {
              end(Object.assign(new Error(`watch ${this.o.resource}: ${JSON.stringify(obj).slice(0, 200)}`), { statusCode: obj.code }));
              return;
            }
            this.event(type, obj);
          },
          (err: unknown) => end(err ?? undefined),
        )
        .then(
          (c: AbortController) => {
            controller = c;
            if (ended) c.abort();
            else this.setWatching(true);
          },
          (err: unknown) => end(err),
        );
    });
  }

  private event(type: string, obj: Item): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.rv = rv;
    if (type === 'BOOKMARK') return;
    const namespace = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name;
    if (name === undefined || !this.o.keeps(namespace)) return;
    this.touched.get(namespace)?.add(name);
    if (type === 'DELETED') this.remove(namespace, name);
    else if (type === 'ADDED' || type === 'MODIFIED') this.put(namespace, name, factsOf(obj, this.o.prefix));
    else return;
    this.o.onChange?.(namespace, name);
  }

  private put(namespace: string, name: string, facts: ObjectFacts): void {
    let names = this.store.get(namespace);
    if (names === undefined) this.store.set(namespace, (names = new Map()));
    if (!names.has(name)) this.count++;
    names.set(name, facts);
  }

  private remove(namespace: string, name: string): void {
    const names = this.store.get(namespace);
    if (names?.delete(name)) {
      this.count--;
      if (names.size === 0) this.store.delete(namespace);
    }
  }

  private setWatching(watching: boolean): void {
    if (this.watching === watching) return;
    this.watching = watching;
    this.o.onCurrent?.(this.current);
  }
}

function isThrottled(err: unknown): boolean {
  const e = err as { statusCode?: unknown; code?: unknown };
  return e?.statusCode === 429 || e?.code === 429;
}

function isGone(err: unknown): boolean {
  const e = err as { statusCode?: unknown; code?: unknown; status?: unknown };
  return e?.statusCode === 410 || e?.code === 410 || e?.status === 410;
}

/** The watch asks for PartialObjectMetadata: client-node's Watch sends the headers the config gives it. */
function withAccept(kc: KubeConfig, accept: string): KubeConfig {
  return {
    getCurrentCluster: () => kc.getCurrentCluster(),
    applyToFetchOptions: (opts: { headers?: Record<string, string> }) => kc.applyToFetchOptions({ ...opts, headers: { ...opts.headers, Accept: accept } }),
  } as unknown as KubeConfig;
}
