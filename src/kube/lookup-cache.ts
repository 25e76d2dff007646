// The webhook's view of the cluster, kept by watches instead of read per review (as
// controller-runtime's metadata-only informers do): the opted-in namespaces, which make
// the review scope, and in those namespaces the kinds a decision may look up (the kind
// table's `cache` rows, and its `cache-optional` Secrets unless turned off). What the cache
// answers, and when it goes to the API server instead, is the reader's (cached-reader.ts);
// this file only keeps the stores.
import { groupMayBeUnserved, type ApiSource } from './api-connection.js';
import type { LookupResource } from '../policy/lookup.js';
import { excludedNamespaces, OPTED_IN_SELECTOR, SANDBOX_LABEL, scopeAnswer, type ReviewScope } from '../policy/review-scope.js';
import { kindRows } from '../policy/kinds.js';
import type { ObjectFacts, StoredFacts } from './lookup-facts.js';
import { NameReaders } from './name-readers.js';
import { readingKinds, type ReaderKind } from '../policy/pod/pod-reads.js';
import { onePageAtATime, Reflector, type CachedResource } from './reflector.js';
import type { RetryNotice } from './retry-notice.js';

export interface LookupCacheOptions {
  kc: ApiSource;
  /** Deed's own namespace: excluded from the scope, as the webhooks' selector excludes it. */
  deedNamespace: string;
  prefix: string;
  /** Keep Secrets too (list and watch on Secrets; see docs/operations.md for the trade-off). */
  secrets: boolean;
  onError(err: unknown, what: string): void;
  /** A list answered 429, sent again after its Retry-After. */
  onRetry?(retry: RetryNotice): void;
  onCurrent?(resource: CachedResource, current: boolean): void;
  /** Watch duration override, for tests. */
  watchSeconds?: number;
  /** The first wait before a failed backfill is tried again (reflector.ts), for tests. */
  backfillRetryMs?: number;
  /** How often a kind served at no version is listed again (reflector.ts, 10 s), for tests. */
  unservedRecheckMs?: number;
  /**
   * The memory the stores may hold (estimated, lookup-facts.ts and reflector.ts). Past it the
   * largest kind is shed: no longer cached, its lookups read from the API server. Unbounded
   * when undefined.
   */
  memoryBudgetBytes?: number;
  /** Whether an object's stamps verify with Deed's key ring, as `kind` in `namespace`: verified ones are kept without attestation and nonce. */
  verifyStamps?(kind: string, namespace: string, facts: ObjectFacts): boolean;
  /** ConfigMaps every pod names (`template.wellKnownConfigMaps`): left out of the index of readers, as no rule asks for theirs. */
  wellKnownConfigMaps?: readonly string[];
  /**
   * A namespace now holds an object (a pod, an Ingress, a Gateway: a reading kind) whose reads
   * are past what the cache keeps of one object (KEPT_READS_BYTES, lookup-facts.ts): the cache
   * keeps hashes of its names instead, and it is read live when looked up. Heard once per
   * namespace each time it comes to hold one.
   */
  onReadsNotKept?(namespace: string, name: string, resource: CachedResource): void;
  /** A kind was shed: it held `bytes` and the stores `total` with it, over `budget`. */
  onShed?(resource: CachedResource, weight: { bytes: number; total: number; budget: number }): void;
}

export interface LookupCache {
  /** The review scope, from the watch of opted-in namespaces; unknown until they are listed. */
  scope: ReviewScope;
  /** The facts of an object, when its kind is cached and current; undefined otherwise (a miss). */
  get(resource: LookupResource, namespace: string, name: string): ObjectFacts | undefined;
  /**
   * The cached objects of `namespace` that read `resource` `name` (name-readers.ts: pods, and
   * for a claim's name the claims not yet provisioned that clone it; Ingresses, Gateways and
   * ListenerSets), with their facts, of the reading kinds the cache can answer; and those it
   * cannot (`unread`), to be read live: a store not current or still listing the namespace,
   * and a kind served at no version as of its last list (it may be served since: the Gateway
   * API installed a moment ago, and a Gateway made). A pod past KEPT_READS_BYTES
   * (lookup-facts.ts) is answered for every name whose hash its record keeps: a collision
   * makes it one reader more, never one less.
   */
  readersIn(resource: LookupResource, namespace: string, name: string): { readers: Array<{ kind: ReaderKind; name: string; facts: ObjectFacts }>; unread: LookupResource[] };
  /** Cached pods whose reads are past what the cache keeps of one pod: their names kept as hashes, the pod read live when looked up. */
  readsNotKept(): number;
  /** Whether this kind is kept and its store is current. */
  current(resource: LookupResource): boolean;
  /** Objects stored, per kind. */
  sizes(): Record<CachedResource, number>;
  /** The memory each kind's store holds, estimated. */
  bytes(): Record<CachedResource, number>;
  /** The kinds shed past the memory budget (read live until Deed restarts). */
  shed(): CachedResource[];
  /** Resolves once the namespaces are listed (the scope is known). */
  scopeKnown(): Promise<void>;
  /** Resolves when `namespace` is in scope, or after `ms`: a review races the watch that brings its namespace's opt-in. */
  awaitScope(namespace: string, ms: number): Promise<void>;
  start(): void;
  stop(): void;
}

export function createLookupCache(o: LookupCacheOptions): LookupCache {
  /** The namespaces in scope as the kinds last heard: a change in or out backfills or drops them. */
  const scoped = new Set<string>();
  const waiters = new Set<{ namespace: string; done: () => void }>();
  let known: () => void = () => {};
  const scopeKnown = new Promise<void>((r) => (known = r));
  const inScope = (namespace: string) => namespaces.hasListed && scopeAnswer(namespaceFacts(namespace), o.deedNamespace).state === 'in';

  const namespaces: Reflector = new Reflector({
    kc: o.kc,
    resource: 'namespaces',
    metadataOnly: true,
    // A label-selected watch sends DELETED when a namespace stops matching: its label was removed.
    labelSelector: OPTED_IN_SELECTOR,
    prefix: SANDBOX_LABEL.split('/')[0]!,
    keeps: () => true,
    onChange: (_cluster, name) => {
      const now = inScope(name);
      if (now === scoped.has(name)) return;
      if (now) scoped.add(name);
      else scoped.delete(name);
      for (const kind of kinds) {
        if (now) void kind.backfill(name);
        else kind.drop(name);
      }
      for (const w of waiters) if (w.namespace === name && now) w.done();
    },
    onListed: () => known(),
    onGrow: () => weigh(),
    onCurrent: (current) => o.onCurrent?.('namespaces', current),
    onError: o.onError,
    onRetry: o.onRetry,
    ...(o.watchSeconds ? { watchSeconds: o.watchSeconds } : {}),
  });
  // The namespace watch keeps only the opt-in label; the name is the object's own.
  const namespaceFacts = (name: string) => {
    const facts = namespaces.get('', name);
    return facts === undefined ? undefined : { name, labels: facts.labels };
  };

  // The kind table's cached rows; `cache-optional` (Secrets) only when the install caches them.
  const kept = kindRows().filter((r) => r.lookup === 'cache' || (o.secrets && r.lookup === 'cache-optional'));
  // The kinds' list pages are read one at a time, across kinds: a page's objects are garbage
  // before the next page is parsed (none waits, alive, behind another kind's), and the API
  // server sees one list request of Deed's at a time. The namespaces list on their own.
  const pageGate = onePageAtATime();
  // What reads a name: the pods, and the claims not yet provisioned (the claim each clones), an index beside each store.
  const readerIndexes = new Map<CachedResource, NameReaders>(kept.filter((k) => k.readsByName !== undefined).map((k) => [k.resource as CachedResource, new NameReaders(new Set(o.wellKnownConfigMaps ?? []))]));
  const kinds = kept.map(
    ({ resource, kind, group }) =>
      new Reflector({
        kc: o.kc,
        resource: resource as Exclude<CachedResource, 'namespaces'>,
        // Served at another version, or at none (the Gateway API's, where not installed).
        mayBeUnserved: groupMayBeUnserved(group),
        ...(o.unservedRecheckMs ? { unservedRecheckMs: o.unservedRecheckMs } : {}),
        // A pod's service account decides whose an unstamped runner pod is, and it is in the spec; so
        // are what a pod reads and the claim a claim not yet provisioned clones (lookup-facts.ts).
        metadataOnly: !readerIndexes.has(resource as CachedResource),
        prefix: o.prefix,
        ...(o.verifyStamps ? { verify: (namespace: string, facts: ObjectFacts) => o.verifyStamps!(kind, namespace, facts) } : {}),
        keeps: inScope,
        pageGate,
        ...(readerIndexes.has(resource as CachedResource)
          ? {
              onStored: (namespace: string, name: string, before: StoredFacts | undefined, after: StoredFacts | undefined) => {
                if (readerIndexes.get(resource as CachedResource)!.update(namespace, name, before, after)) o.onReadsNotKept?.(namespace, name, resource as CachedResource);
              },
            }
          : {}),
        onGrow: () => weigh(),
        onCurrent: (current) => o.onCurrent?.(resource as CachedResource, current),
        onError: o.onError,
        onRetry: o.onRetry,
        ...(o.backfillRetryMs ? { backfillRetryMs: o.backfillRetryMs } : {}),
        ...(o.watchSeconds ? { watchSeconds: o.watchSeconds } : {}),
      }),
  );
  const byResource = new Map<string, Reflector>(kinds.map((k) => [k.resource, k]));

  // Past the budget, the kind that holds the most is shed, until the rest fit: a full cache
  // makes Deed read live (slower, never wrong), never run out of memory. The namespaces,
  // which make the review scope, are never shed.
  const shed = new Set<CachedResource>();
  // An index of readers is its kind's too: it is weighed, counted and shed with it.
  const held = (k: Reflector) => k.bytes + (readerIndexes.get(k.resource)?.bytes ?? 0);
  const weigh = () => {
    const budget = o.memoryBudgetBytes;
    if (budget === undefined) return;
    let total = namespaces.bytes + kinds.reduce((sum, k) => sum + held(k), 0);
    while (total > budget) {
      const largest = kinds.filter((k) => !shed.has(k.resource)).reduce<Reflector | undefined>((a, k) => (a === undefined || held(k) > held(a) ? k : a), undefined);
      if (largest === undefined || held(largest) === 0) return;
      const bytes = held(largest);
      largest.shed();
      readerIndexes.get(largest.resource)?.clear();
      shed.add(largest.resource);
      total -= bytes;
      o.onShed?.(largest.resource, { bytes, total, budget });
    }
  };

  const readersIn: LookupCache['readersIn'] = (resource, namespace, name) => {
    const found: Array<{ kind: ReaderKind; name: string; facts: ObjectFacts }> = [];
    const unread: LookupResource[] = [];
    for (const [kind, by] of readingKinds(resource)) {
      const store = byResource.get(by);
      const index = readerIndexes.get(by as CachedResource);
      // Not while the namespace's objects are still being listed (it entered the scope a moment ago), or failed to be:
      // an absent reader cannot be told from one not listed yet. Nor a kind served nowhere when last listed: it may be now.
      if (store === undefined || index === undefined || !store.current || !store.listedIn(namespace) || store.notServed) {
        unread.push(by);
        continue;
      }
      for (const reader of index.readers(resource, namespace, name)) {
        const facts = store.get(namespace, reader);
        if (facts !== undefined) found.push({ kind, name: reader, facts });
      }
    }
    return { readers: found, unread };
  };

  const scope: ReviewScope = {
    of(namespace) {
      if (!namespaces.hasListed) return { state: 'unknown', reason: 'the opted-in namespaces have not been listed yet' };
      return scopeAnswer(namespaceFacts(namespace), o.deedNamespace);
    },
  };

  return {
    scope,
    get(resource, namespace, name) {
      const kind = byResource.get(resource);
      return kind?.current ? kind.get(namespace, name) : undefined;
    },
    readersIn,
    readsNotKept: () => readerIndexes.get('pods')?.readsNotKept ?? 0,
    current: (resource) => byResource.get(resource)?.current ?? false,
    sizes: () => Object.fromEntries([namespaces, ...kinds].map((k) => [k.resource, k.size])) as Record<CachedResource, number>,
    bytes: () => Object.fromEntries([namespaces, ...kinds].map((k) => [k.resource, held(k)])) as Record<CachedResource, number>,
    shed: () => [...shed],
    scopeKnown: () => scopeKnown,
    awaitScope(namespace, ms) {
      // Never in scope whatever its labels (kube-system, Deed's own): nothing to wait for, as a forged review would hold it open.
      if (scope.of(namespace).state === 'in' || ms <= 0 || excludedNamespaces(o.deedNamespace).includes(namespace)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const waiter = {
          namespace,
          done: () => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve();
          },
        };
        const timer = setTimeout(waiter.done, ms);
        waiters.add(waiter);
      });
    },
    start() {
      namespaces.start();
      // The kinds start once the scope is known, so their first list keeps the right namespaces.
      void scopeKnown.then(() => {
        for (const kind of kinds) if (!shed.has(kind.resource)) kind.start();
      });
    },
    stop() {
      namespaces.stop();
      for (const kind of kinds) kind.stop();
      for (const w of waiters) w.done();
    },
  };
}
