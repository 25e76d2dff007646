// One kind listed, then watched from the list's resourceVersion, into a store of the facts
// a lookup needs (lookup-facts.ts), as client-go's reflector does for an informer. Only
// the namespaces `keeps` accepts are stored (the review scope); a namespace that enters
// it is listed on its own (a backfill), one that leaves it is dropped. `current` is true
// only while the list is done and a watch is open: otherwise the store may be behind by
// more than the watch's delay, and readers go to the API server instead.
import { kindRows, type CachedLookupResource } from '../policy/kinds.js';
import { boundedPage, collectionPath, getJson, groupVersions, METADATA_LIST, METADATA_ONE, toConnection, watch, type ApiConnection, type ApiSource } from './api-connection.js';
import type { RetryNotice } from './retry-notice.js';
import { factsFromStored, storedFactsOf, type ObjectFacts, type StoredFacts } from './lookup-facts.js';

/** The namespaces (the review scope), and the kinds the webhook looks up from the cache (the kind table's `lookup`). */
export type CachedResource = 'namespaces' | CachedLookupResource;

type Item = { metadata?: { name?: string; namespace?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: unknown; resourceVersion?: string }; spec?: unknown };
type Page = { metadata?: { resourceVersion?: string; continue?: string }; items?: Item[] | null };

export interface ReflectorOptions {
  /** The API server: a connection, or a client-node KubeConfig a caller already loaded. */
  kc: ApiSource;
  resource: CachedResource;
  /** Ask for PartialObjectMetadata (everything but pods, whose service account and reads are in the spec, and claims, whose clone source is). */
  metadataOnly: boolean;
  labelSelector?: string;
  /** Deed's label prefix: the labels and annotations kept. */
  prefix: string;
  /** Whether an object's stamps verify (lookup-facts.ts, storedFactsOf): verified ones are kept without attestation and nonce. */
  verify?: (namespace: string, facts: ObjectFacts) => boolean;
  /** Whether objects of this namespace are stored. */
  keeps(namespace: string): boolean;
  /** After the store changed for a name. */
  onChange?(namespace: string, name: string): void;
  /** As a record is put, replaced or removed (`before`, `after` undefined where there is none): an index kept beside the store follows it (not at `shed`, which forgets all). */
  onStored?(namespace: string, name: string, before: StoredFacts | undefined, after: StoredFacts | undefined): void;
  /** After each full list is in the store. */
  onListed?(): void;
  /** After the store grew (a list page, a watch event): the cache weighs its memory budget. */
  onGrow?(): void;
  onCurrent?(current: boolean): void;
  onError(err: unknown, what: string): void;
  /** A list page answered 429, sent again after its Retry-After. */
  onRetry?(retry: RetryNotice): void;
  /** Runs each list page (its request and `take`): the cache passes one gate to all its kinds, so one page is in flight at a time. */
  pageGate?: <T>(page: () => Promise<T>) => Promise<T>;
  /** How long after a failed backfill it is tried again, at first (5 s; tests shorten it). */
  backfillRetryMs?: number;
  /** Deadline of one list page. */
  listTimeoutMs?: number;
  /** Objects per list page, fixed (tests); otherwise each page is sized from the last (nextPageSize). */
  pageSize?: number;
  /** The most bytes of one page (MAX_PAGE_BYTES); tests set less. */
  maxPageBytes?: number;
  /** The API server ends each watch after about this long (client-go: 5 to 10 minutes); a watch silent for longer plus 30 s is presumed dead. */
  watchSeconds?: number;
  /** How long past `watchSeconds` a silent watch is kept before it is presumed dead (30 s; tests shorten it). */
  stallGraceSeconds?: number;
  /**
   * A custom resource, installed or not (the Gateway API's Gateways): a list answered 404 at
   * the row's version is listed at another version its group serves; served at none, the store
   * is empty and current (no object of the kind exists to read anything), and the kind is
   * listed again every `unservedRecheckMs` (10 s), so one installed later is cached within it.
   * Meanwhile the cache never answers its readers from the empty store (lookup-cache.ts,
   * `readersIn`): one installed a moment ago may hold a name already.
   */
  mayBeUnserved?: boolean;
  unservedRecheckMs?: number;
}

/** `items: null` is an empty list of metadata (kube-apiserver's PartialObjectMetadataList). */
const itemsOf = (page: Page): Item[] => page.items ?? [];

export class Reflector {
  private store = new Map<string, Map<string, StoredFacts>>();
  private count = 0;
  /** What the store holds, estimated (entryBytes). */
  private held = 0;
  private rv: string | undefined;
  private listed = false;
  private watching = false;
  private stopped = true;
  private abort: (() => void) | undefined;
  /** Bumped by every full list: a backfill begun before one is dropped. */
  private generation = 0;
  /** While a full list runs: the names it (or a backfill meanwhile) put, per namespace; the rest are swept at its end. */
  private confirmed: Map<string, Set<string>> | undefined;
  /**
   * Namespaces that entered the scope and whose objects are not all in the store yet: the
   * backfill is running, or failed. Each with the generation it entered in: a full list begun
   * after it covers it. A miss there is read from the API server anyway; but an absence (no
   * pod reads this name) cannot be told from the store until the namespace is listed.
   */
  private unlisted = new Map<string, number>();
  /** Namespaces that entered the scope before the first full list was done: backfilled once it is. */
  private listAfter = new Set<string>();
  /** Namespaces being backfilled, and the names the watch touched meanwhile (the watch wins). */
  private touched = new Map<string, Set<string>>();
  /** The kind is served at no version (mayBeUnserved): the store is empty and current until a list answers. */
  private unserved = false;
  private readonly conn: ApiConnection;
  /** The kind's group, resource and the version it is listed and watched at. */
  private readonly kind: { group: string; version: string; resource: string };

  constructor(private readonly o: ReflectorOptions) {
    const row = o.resource === 'namespaces' ? undefined : kindRows().find((r) => r.resource === o.resource);
    if (row === undefined && o.resource !== 'namespaces') throw new Error(`Deed does not cache ${o.resource}`);
    this.conn = toConnection(o.kc);
    this.kind = { group: row?.group ?? '', version: row?.version ?? 'v1', resource: o.resource };
  }

  /** The kind's path across namespaces, and in one. */
  private get path(): string {
    return collectionPath(this.kind);
  }

  private pathIn(namespace: string): string {
    return collectionPath(this.kind, namespace);
  }

  /** Served at no version of its group (mayBeUnserved): the store is empty, and current. */
  get notServed(): boolean {
    return this.unserved;
  }

  get resource(): CachedResource {
    return this.o.resource;
  }

  /** Listed, and a watch is open; or the kind is served at no version, so none exists. */
  get current(): boolean {
    return this.listed && (this.watching || this.unserved);
  }

  get hasListed(): boolean {
    return this.listed;
  }

  get size(): number {
    return this.count;
  }

  /** The memory the store holds, estimated: its strings and map entries. */
  get bytes(): number {
    return this.held;
  }

  /**
   * Past the cache's memory budget: stop, forget every object, and stay stopped. Lookups of
   * this kind are read from the API server from now on (a kind not current is always read).
   */
  shed(): void {
    this.stop();
    this.generation++;
    this.confirmed = undefined;
    this.unlisted.clear();
    this.listAfter.clear();
    this.store = new Map();
    this.count = 0;
    this.held = 0;
    this.listed = false;
  }

  get(namespace: string, name: string): ObjectFacts | undefined {
    const stored = this.store.get(namespace)?.get(name);
    return stored === undefined ? undefined : factsFromStored(stored, this.o.prefix);
  }

  /** Whether every object of `namespace` has been listed into the store (false while its backfill runs, or after it failed). */
  listedIn(namespace: string): boolean {
    return !this.unlisted.has(namespace);
  }

  names(namespace: string): IterableIterator<string> {
    return (this.store.get(namespace) ?? new Map<string, StoredFacts>()).keys();
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

  /**
   * A namespace entered the scope: list its objects, unless a full list is still to come. A
   * backfill that fails is tried again (`retryMs`, doubling to a minute) while the namespace
   * stays in scope and no full list has covered it: meanwhile what it cannot tell is read live.
   */
  async backfill(namespace: string, retryMs = this.o.backfillRetryMs ?? 5_000): Promise<void> {
    if (this.o.resource === 'namespaces' || this.unserved) return;
    if (!this.listed) {
      // The first full list, once under way, may have passed this namespace's objects by before it entered: listed on
      // its own after. One not begun yet lists it whole.
      if (this.confirmed !== undefined) {
        this.unlisted.set(namespace, this.generation);
        this.listAfter.add(namespace);
      }
      return;
    }
    const generation = this.generation;
    const touched = new Set<string>();
    this.touched.set(namespace, touched);
    this.unlisted.set(namespace, generation);
    try {
      // Page by page into the store: a page's objects are facts before the next is asked for.
      await this.listPages(namespace, (items) => {
        if (generation !== this.generation || !this.o.keeps(namespace) || this.stopped) return false;
        for (const item of items) {
          const name = item.metadata?.name;
          if (name !== undefined && !touched.has(name)) this.put(namespace, name, this.facts(namespace, item));
        }
        this.o.onGrow?.();
        return generation === this.generation && !this.stopped;
      });
      if (generation === this.generation && this.o.keeps(namespace) && !this.stopped && this.unlisted.get(namespace) === generation) this.unlisted.delete(namespace);
    } catch (err) {
      // A name not in the store is read from the API server; the namespace stays unlisted (listedIn) until listed.
      this.o.onError(err, `backfill ${this.o.resource} in ${namespace}`);
      const again = setTimeout(() => {
        if (!this.stopped && this.o.keeps(namespace) && this.unlisted.get(namespace) === generation && generation === this.generation) void this.backfill(namespace, Math.min(retryMs * 2, 60_000));
      }, retryMs * (0.5 + Math.random()));
      again.unref();
    } finally {
      if (this.touched.get(namespace) === touched) this.touched.delete(namespace);
    }
  }

  /** A namespace left the scope: forget its objects. */
  drop(namespace: string): void {
    this.unlisted.delete(namespace);
    this.listAfter.delete(namespace);
    const names = this.store.get(namespace);
    if (names === undefined) return;
    this.count -= names.size;
    for (const [name, stored] of names) {
      this.held -= entryBytes(name, stored);
      this.o.onStored?.(namespace, name, stored, undefined);
    }
    this.store.delete(namespace);
  }

  private async run(): Promise<void> {
    let backoffMs = 500;
    // Versions discovery named whose lists answered 404 since the last list that answered (discovery behind the handlers).
    let hops = 0;
    while (!this.stopped) {
      try {
        if (this.rv === undefined) {
          await this.relist();
          hops = 0;
        }
        if (this.stopped) return;
        const opened = Date.now();
        await this.watchOnce();
        // A watch the server ends at once (it did, asked for the wrong form) must not become a loop of requests.
        if (Date.now() - opened < 1000) throw new Error(`watch ${this.o.resource}: ended within a second of opening`);
        backoffMs = 500;
      } catch (caught) {
        let err = caught;
        this.setWatching(false);
        if (this.stopped) return;
        if (isGone(err)) {
          this.rv = undefined; // too old for the watch cache: list again
          continue;
        }
        // A custom resource's list not served at this version (its definition not installed, deleted, or at another
        // version). A watch's 404 is listed again (after the pause below), which tells.
        if (this.o.mayBeUnserved === true && isNotFound(err) && this.rv !== undefined) this.rv = undefined;
        else if (this.o.mayBeUnserved === true && isNotFound(err)) {
          try {
            const version = await this.servedVersion();
            if (this.stopped) return;
            this.rv = undefined;
            if (version !== undefined && hops < 2) {
              hops++;
              this.kind.version = version;
              continue;
            }
            // Past two hops, an error with the usual pause: no loop of requests between versions (reviewer-99 F3).
            if (version !== undefined) throw new Error(`list ${this.o.resource}: ${this.kind.group} serves it at ${version} by its discovery, but its lists answer 404`);
            this.noneServed();
            await new Promise((r) => setTimeout(r, this.o.unservedRecheckMs ?? 10_000).unref());
            continue;
          } catch (discoveryErr) {
            err = discoveryErr;
          }
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

  /**
   * The version other than the one listed at which the kind's group serves it (its group's
   * discovery, then each version's resources); undefined where it serves it at none.
   */
  private async servedVersion(): Promise<string | undefined> {
    const options = { timeoutMs: this.o.listTimeoutMs ?? 30_000, onRetry: this.o.onRetry };
    const group = encodeURIComponent(this.kind.group);
    for (const version of (await groupVersions(this.conn, this.kind.group, options)).filter((v) => v !== this.kind.version)) {
      try {
        const list = await getJson<{ resources?: Array<{ name?: unknown }> }>(this.conn, `/apis/${group}/${encodeURIComponent(version)}`, { ...options, what: `get the resources of ${this.kind.group}/${version}` });
        if ((list.resources ?? []).some((r) => r.name === this.kind.resource)) return version;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return undefined;
  }

  /** Served at no version: every object forgotten (its definition deleted takes them all), the store current and empty. */
  private noneServed(): void {
    this.generation++;
    this.confirmed = undefined;
    for (const namespace of [...this.store.keys()]) for (const name of [...this.store.get(namespace)!.keys()]) this.remove(namespace, name);
    this.unlisted.clear();
    this.listAfter.clear();
    const was = this.current;
    this.unserved = true;
    this.listed = true;
    if (!was) this.o.onCurrent?.(true);
    this.o.onListed?.();
  }

  /**
   * A full list, into the store in place: each page's objects replace their records as the
   * page arrives (an unchanged one keeps its record: no garbage), and what the list did not
   * put is swept at its end. The store is never built twice (a relist of 200,000 objects must
   * not double the memory), and while it runs the kind is not current, so no lookup reads the
   * half-moved store.
   */
  private async relist(): Promise<void> {
    const generation = ++this.generation;
    this.touched.clear();
    const confirmed = new Map<string, Set<string>>();
    this.confirmed = confirmed;
    let rv: string;
    try {
      rv = await this.listPages(undefined, (items) => {
        // Shed or stopped while this page was on its way: it belongs to a list that no longer is.
        if (generation !== this.generation || this.stopped) return false;
        for (const item of items) {
          const namespace = item.metadata?.namespace ?? '';
          const name = item.metadata?.name;
          if (name === undefined || !this.o.keeps(namespace)) continue;
          this.put(namespace, name, this.facts(namespace, item));
        }
        this.o.onGrow?.();
        return generation === this.generation && !this.stopped;
      });
    } finally {
      if (this.confirmed === confirmed) this.confirmed = undefined;
    }
    if (generation !== this.generation || this.stopped) return; // shed, or stopped, part-way
    const gone: Array<[string, string]> = [];
    for (const [namespace, names] of this.store) {
      const put = confirmed.get(namespace);
      for (const name of names.keys()) if (put?.has(name) !== true) gone.push([namespace, name]);
    }
    confirmed.clear();
    for (const [namespace, name] of gone) this.remove(namespace, name);
    // A namespace that entered the scope before this list began was listed by it.
    for (const [namespace, since] of this.unlisted) if (since < generation) this.unlisted.delete(namespace);
    this.rv = rv;
    this.listed = true;
    // Served now: current again only once a watch is open.
    if (this.unserved) {
      this.unserved = false;
      this.o.onCurrent?.(this.current);
    }
    for (const namespace of this.listAfter) if (this.o.keeps(namespace)) void this.backfill(namespace);
    this.listAfter.clear();
    if (this.o.onChange) {
      for (const [namespace, name] of gone) this.o.onChange(namespace, name);
      for (const [namespace, names] of this.store) for (const name of names.keys()) this.o.onChange(namespace, name);
    }
    this.o.onListed?.();
  }

  /**
   * Lists `namespace` (all, undefined) a page at a time, handing each page to `take` before
   * the next is read; `take` answers false to stop. Returns the list's resourceVersion.
   */
  private async listPages(namespace: string | undefined, take: (items: Item[]) => boolean): Promise<string> {
    const path = namespace === undefined || this.o.resource === 'namespaces' ? this.path : this.pathIn(namespace);
    const what = namespace === undefined ? `list ${this.o.resource}` : `list ${this.o.resource} in ${namespace}`;
    let next: string | undefined;
    let rv = '';
    let limit = this.o.pageSize ?? FIRST_PAGE_SIZE;
    let chars = 0;
    const gate = this.o.pageGate ?? (<T>(page: () => Promise<T>) => page());
    for (let page = 0; page < 1_000_000; page++) {
      const more = await gate(async () => {
        const read = await boundedPage(limit, (asked) =>
          getJson<Page>(this.conn, path, {
            what,
            accept: this.o.metadataOnly ? METADATA_LIST : undefined,
            query: { limit: asked, continue: next, labelSelector: this.o.labelSelector },
            timeoutMs: this.o.listTimeoutMs ?? 30_000,
            onRetry: this.o.onRetry,
            onText: (n) => (chars = n),
            maxBytes: this.o.maxPageBytes ?? MAX_PAGE_BYTES,
          }),
        );
        const answer = read.page;
        limit = read.limit;
        rv = answer.metadata?.resourceVersion ?? rv;
        const items = itemsOf(answer);
        if (this.o.pageSize === undefined) limit = nextPageSize(chars, items.length, limit);
        if (!take(items)) return false;
        next = answer.metadata?.continue || undefined;
        return next !== undefined;
      });
      if (!more) return rv;
    }
    throw new Error(`${what}: too many pages`);
  }

  private watchOnce(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const watchSeconds = this.o.watchSeconds ?? 60 + Math.floor(Math.random() * 60);
      let ended = false;
      let stall: NodeJS.Timeout | undefined;
      const end = (err: unknown) => {
        if (ended) return;
        ended = true;
        clearTimeout(stall);
        this.abort = undefined;
        if (err) reject(err instanceof Error || typeof err === 'object' ? err : new Error(String(err)));
        else resolve();
      };
      const armStall = () => {
        clearTimeout(stall);
        const silentSeconds = watchSeconds + (this.o.stallGraceSeconds ?? 30);
        stall = setTimeout(() => end(new Error(`watch ${this.o.resource}: no event for ${silentSeconds} s`)), silentSeconds * 1000);
        stall.unref();
      };
      // Armed before the request: a watch that never answers, or answers and stays silent past
      // its own timeout, is presumed dead like one that goes silent later.
      armStall();
      // A watch's events each carry one object: as=PartialObjectMetadata. The List form is a
      // list's; asked of a watch, kube-apiserver ends it at once, and the store would never move.
      const handle = watch(
        this.conn,
        this.path,
        {
          what: `watch ${this.o.resource}`,
          accept: this.o.metadataOnly ? METADATA_ONE : undefined,
          query: { resourceVersion: this.rv ?? '', allowWatchBookmarks: true, timeoutSeconds: watchSeconds, labelSelector: this.o.labelSelector },
        },
        (type, obj) => {
          if (ended) return;
          armStall();
          if (type === 'ERROR') {
            end(Object.assign(new Error(`watch ${this.o.resource}: ${JSON.stringify(obj).slice(0, 200)}`), { statusCode: (obj as { code?: unknown }).code }));
            return;
          }
          this.event(type, obj as Item);
        },
        (err) => end(err ?? undefined),
        () => {
          if (!ended) this.setWatching(true);
        },
      );
      this.abort = () => {
        handle.abort();
        end(undefined);
      };
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
    else if (type === 'ADDED' || type === 'MODIFIED') {
      this.put(namespace, name, this.facts(namespace, obj));
      this.o.onGrow?.();
    } else return;
    this.o.onChange?.(namespace, name);
  }

  private facts(namespace: string, item: Item): StoredFacts {
    const verify = this.o.verify;
    return storedFactsOf(item, this.o.prefix, verify && ((f) => verify(namespace, f)), this.o.resource);
  }

  private put(namespace: string, name: string, facts: StoredFacts): void {
    if (this.confirmed !== undefined) {
      let put = this.confirmed.get(namespace);
      if (put === undefined) this.confirmed.set(namespace, (put = new Set()));
      put.add(name);
    }
    let names = this.store.get(namespace);
    if (names === undefined) this.store.set(namespace, (names = new Map()));
    const before = names.get(name);
    // The record held already, when equal: the new string dies young, the old one stays put.
    if (before === facts) return;
    if (before === undefined) this.count++;
    else this.held -= entryBytes(name, before);
    this.held += entryBytes(name, facts);
    names.set(name, facts);
    this.o.onStored?.(namespace, name, before, facts);
  }

  private remove(namespace: string, name: string): void {
    const names = this.store.get(namespace);
    const before = names?.get(name);
    if (names !== undefined && before !== undefined) {
      names.delete(name);
      this.count--;
      this.held -= entryBytes(name, before);
      if (names.size === 0) this.store.delete(namespace);
      this.o.onStored?.(namespace, name, before, undefined);
    }
  }

  private setWatching(watching: boolean): void {
    if (this.watching === watching) return;
    this.watching = watching;
    this.o.onCurrent?.(this.current);
  }
}

/**
 * A gate for `pageGate`: the pages of every reflector that shares it run one after another,
 * in the order asked. A page still unanswered after `patienceMs` (an API server under load)
 * lets the next one go: a slow kind delays the others by at most that, never by its timeout.
 */
export function onePageAtATime(patienceMs = 1000): <T>(page: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(page: () => Promise<T>) => {
    const turn = tail.then(() => {
      const result = page();
      const settled = result.then(
        () => {},
        () => {},
      );
      const patience = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, patienceMs);
        timer.unref();
        void settled.then(() => clearTimeout(timer));
      });
      return { result, next: Promise.race([settled, patience]) };
    });
    tail = turn.then((t) => t.next);
    return turn.then((t) => t.result);
  };
}

/**
 * A list page's text, and the objects parsed from it, are garbage once its facts are stored.
 * Kept under V8's large-object size (128 KiB: a longer string is allocated in the old
 * generation) and the 2 MiB young generation the image sets, they die young; pages of 500
 * objects' metadata (100 whole pods) were promoted and collected late, and raised the peak RSS
 * of a 227,000-object fill by about 30 MiB (bench/MEASUREMENTS.md, "List pages sized in
 * bytes"). So each page asks
 * for as many objects as fill PAGE_CHARS at the size the last page's objects had: a cluster of
 * large objects costs more requests, never more memory.
 */
export const PAGE_CHARS = 96 * 1024;
/**
 * The most one list page may hold, whatever the last page's objects weighed: past it the page
 * is asked again for an eighth as many objects (one object is far under it: etcd keeps at most
 * 1.5 MiB of one). Without it, 500 objects each padded to the 256 KiB annotations allow after
 * 500 small ones made one page of 128 MB, more than the heap Deed runs in.
 */
export const MAX_PAGE_BYTES = 8 * 1024 * 1024;
const FIRST_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 500;

/** The next page's limit, from the last page's text (`chars`) and object count; unchanged by an empty page. */
export function nextPageSize(chars: number, items: number, last: number): number {
  if (items === 0 || chars <= 0) return last;
  return Math.max(1, Math.min(MAX_PAGE_SIZE, Math.floor((PAGE_CHARS * items) / chars)));
}

/**
 * One entry's memory, estimated: its two strings (one byte a character, with their headers)
 * and its map entry. bench/scale.ts measures how the estimate compares to the heap.
 */
const ENTRY_OVERHEAD_BYTES = 80;
function entryBytes(name: string, stored: StoredFacts): number {
  return name.length + stored.length + ENTRY_OVERHEAD_BYTES;
}

function isThrottled(err: unknown): boolean {
  const e = err as { statusCode?: unknown; code?: unknown };
  return e?.statusCode === 429 || e?.code === 429;
}

function isNotFound(err: unknown): boolean {
  const e = err as { statusCode?: unknown; code?: unknown; status?: unknown };
  return e?.statusCode === 404 || e?.code === 404 || e?.status === 404;
}

function isGone(err: unknown): boolean {
  const e = err as { statusCode?: unknown; code?: unknown; status?: unknown };
  return e?.statusCode === 410 || e?.code === 410 || e?.status === 410;
}
