// Lookups answered from the watch-backed cache where that cannot let through what a fresh
// read would refuse, and read from the API server otherwise (docs/performance.md,
// "Lookups"):
// - Outside the review scope nothing is read at all: the answer is unknown, and the
//   policy has refused the review already (request.out-of-scope).
// - The cache answers only "found". A miss is read, since the object may be newer than
//   the watch has delivered; "absent" always comes from the API server.
// - A kind whose store is not current (not listed yet, or its watch is down) is read.
// - An object the cache saw marked for deletion is read: it may be gone, or replaced.
// - An object the request gives a uid (a Scale, a Binding, a token's bound pod) or an owner
//   reference names by uid, whose record has another uid, is read: it was deleted and made
//   again under its name since the watch last told (and the reference is judged by what
//   stands there now, not refused on the cache's word). What a request names by name alone
//   and acts on at once (an eviction, a CONNECT, a token of an account) is read fresh by
//   its door, and so is what a binding, a pod made on its node or an ephemeral container
//   hands the pod.
// - A pod whose reads the cache did not keep (past KEPT_READS_BYTES, lookup-facts.ts, it
//   keeps their hashes, which answer "does it read this name" but cannot give the names) is
//   read: a binding is judged on what it reads, which the cache cannot say.
// - The pods (and claims not yet provisioned) that read an object by name come from the
//   index kept beside their store while it is current and holds all of the namespace's;
//   otherwise the namespace's pods (and claims) are listed (object-reader.ts);
//   what names a Service or a workload and is followed there (an EndpointSlice, an HPA:
//   policy/referrers.ts) is listed always, the cache keeping none of those kinds.
// - At most MAX_LIVE_READS_PER_REVIEW GETs per call (a review makes one, or two when a
//   snapshot's source claim follows). The claims, Secrets, ConfigMaps and ResourceClaims a
//   pod names past them are read by one list per kind and namespace (object-reader.ts,
//   readListed, with its own bounds); they take the GETs last, so a review's other reads (a
//   pod's account, its run lease) are not crowded out by what it names. Anything else past
//   the GETs is unknown (refused).
// What remains is a found object deleted, or deleted and recreated, within the watch's
// delay; see the docs for who can open that window and what it allows.
import type { LookupKey } from '../policy/lookup.js';
import { gatheredLookup, lookupKey } from '../policy/lookup.js';
import type { Lookup, Reader, Readers } from '../policy/policy.js';
import type { Metrics } from '../observability/metrics.js';
import type { LookupCache } from './lookup-cache.js';
import { factsOf, foundLookup } from './lookup-facts.js';
import { LISTED_RESOURCES, type ObjectReader } from './object-reader.js';
import { isReferredTarget } from '../policy/referrers.js';

/**
 * Reads from the API server per review: the claims a pod names are bounded at 32 when
 * planned, and Secret references add more; past this many misses a review is refused
 * rather than spend Deed's share of the API server (Priority and Fairness) on one request.
 */
export const MAX_LIVE_READS_PER_REVIEW = 32;

export function createCachedReader(cache: LookupCache, live: ObjectReader, prefix: string, metrics: Metrics): ObjectReader {
  return {
    async read(keys, timeoutMs) {
      const facts = new Map<string, Lookup>();
      const readers = new Map<string, Readers>();
      const toRead: LookupKey[] = [];
      const listed: LookupKey[] = [];
      /** Readers the cache answered for some reading kinds, the rest (`readerKinds`) read live: joined once read. */
      const partly = new Map<string, Reader[]>();
      const unique = distinctKeys(keys);
      // What a pod names last: past the GETs it is listed, what else the review reads is not.
      const ordered = [...unique.filter((k) => !LISTED_RESOURCES.has(k.resource)), ...unique.filter((k) => LISTED_RESOURCES.has(k.resource))];
      for (const key of ordered) {
        const id = lookupKey(key);
        const scope = cache.scope.of(key.namespace);
        if (scope.state !== 'in') {
          const reason = `namespace ${key.namespace} is outside the review scope; Deed reads nothing there`;
          if (key.readers === true) readers.set(id, { state: 'unknown', reason });
          else facts.set(id, { state: 'unknown', reason });
          metrics.lookups.inc({ resource: key.resource, source: 'skipped' });
          continue;
        }
        if (key.readers === true) {
          // What names a Service or a workload (an EndpointSlice, an HPA) is no kind the cache keeps: listed live, always.
          const cached = isReferredTarget(key.resource) ? undefined : cache.readersIn(key.resource, key.namespace, key.name);
          if (cached === undefined) {
            toRead.push(key); // a list of the referrers: one read, whatever the bound below
            continue;
          }
          const fromCache = cached.readers.map((r): Reader => ({ kind: r.kind, name: r.name, found: foundLookup(r.facts) }));
          if (cached.unread.length === 0) {
            readers.set(id, { state: 'known', readers: fromCache });
            metrics.lookups.inc({ resource: 'pods', source: 'cache' });
          } else {
            // The kinds the cache cannot answer (a store not current, a kind served nowhere when last listed) are listed live
            // (the namespace's pods, when theirs), the others answered from it: a Gateway store not current does not make every
            // Secret CREATE list the namespace's pods.
            partly.set(id, fromCache);
            toRead.push({ ...key, readerKinds: cached.unread });
          }
          continue;
        }
        const cached = key.fresh === true ? undefined : cache.get(key.resource, key.namespace, key.name);
        // Not a pod whose reads were not kept: its absent `reads` would pass for "reads nothing".
        // Not a record of another uid than the request names: that object is gone, the watch behind.
        if (cached !== undefined && !cached.deleting && cached.readsNotKept !== true && (key.uid === undefined || cached.uid === key.uid)) {
          facts.set(id, foundLookup(cached));
          metrics.lookups.inc({ resource: key.resource, source: 'cache' });
          continue;
        }
        if (toRead.length >= MAX_LIVE_READS_PER_REVIEW) {
          if (live.readListed !== undefined && LISTED_RESOURCES.has(key.resource)) {
            listed.push(key);
            continue;
          }
          facts.set(id, { state: 'unknown', reason: `Deed reads at most ${MAX_LIVE_READS_PER_REVIEW} objects from the API server for one review` });
          metrics.lookups.inc({ resource: key.resource, source: 'skipped' });
          continue;
        }
        toRead.push(key);
      }
      /** A live answer, cut to the same facts as a cached one so no decision depends on where one came from. */
      const record = (key: LookupKey, answer: Lookup, source: 'live' | 'listed') => {
        metrics.lookups.inc({ resource: key.resource, source });
        metrics.liveReads.inc({ resource: key.resource, result: answer.state === 'unknown' ? 'failed' : answer.state });
        facts.set(lookupKey(key), answer.state === 'found' ? sameFacts(answer, prefix) : answer);
      };
      const [answers, listedAnswers] = await Promise.all([
        toRead.length > 0 ? live.read(toRead, timeoutMs) : undefined,
        listed.length > 0 ? live.readListed?.(listed, timeoutMs) : undefined,
      ]);
      if (answers !== undefined) {
        for (const key of toRead) {
          if (key.readers === true) {
            const read = sameReaders(answers.readers(key.resource, key.namespace, key.name), prefix);
            const cached = partly.get(lookupKey(key));
            readers.set(lookupKey(key), cached === undefined || read.state !== 'known' ? read : { state: 'known', readers: [...cached, ...read.readers] });
            metrics.lookups.inc({ resource: isReferredTarget(key.resource) ? key.resource : 'pods', source: 'live' });
            continue;
          }
          record(key, answers.get(key.resource, key.namespace, key.name), 'live');
        }
      }
      if (listedAnswers !== undefined) for (const key of listed) record(key, listedAnswers.get(key.resource, key.namespace, key.name), 'listed');
      if (unique.length > 0) metrics.reviewLookups.observe(unique.length);
      return gatheredLookup(facts, 'not read before the decision', readers);
    },
  };
}

/**
 * One key per object a review reads: two asks for the same object (a pod a binding names and
 * the pod a token is bound to) are one read, fresh if either asks for it fresh, of a uid if
 * either names one (two different uids cannot both be the cached record: read it live).
 */
function distinctKeys(keys: LookupKey[]): LookupKey[] {
  const byId = new Map<string, LookupKey>();
  for (const k of keys) {
    const id = lookupKey(k);
    const seen = byId.get(id);
    if (seen === undefined) {
      byId.set(id, k);
      continue;
    }
    const fresh = seen.fresh === true || k.fresh === true || (seen.uid !== undefined && k.uid !== undefined && seen.uid !== k.uid);
    const uid = seen.uid ?? k.uid;
    byId.set(id, { ...seen, ...k, ...(fresh ? { fresh: true as const } : {}), ...(uid !== undefined ? { uid } : {}) });
  }
  return [...byId.values()];
}

/** Readers listed live, cut to what the cache keeps of each, as sameFacts does for one object. */
function sameReaders(answer: Readers, prefix: string): Readers {
  if (answer.state === 'unknown') return answer;
  return { state: 'known', readers: answer.readers.map(({ kind, name, found, reference, namespace }) => ({ kind, name, found: sameFacts(found, prefix) as Extract<Lookup, { state: 'found' }>, ...(reference !== undefined ? { reference } : {}), ...(namespace !== undefined ? { namespace } : {}) })) };
}

/**
 * A live answer cut to what a cached one holds. A snapshot (never cached) keeps its source
 * claim: without it a restore from another environment's snapshot reads as pre-provisioned content.
 * What is only ever read live (a snapshot, a key read `fresh`) keeps its creation time. A
 * pending pod keeps what it reads once bound, as the cache keeps it.
 */
function sameFacts(answer: Extract<Lookup, { state: 'found' }>, prefix: string): Lookup {
  const found = foundLookup(factsOf({ metadata: answer.metadata, spec: { serviceAccountName: answer.serviceAccountName } }, prefix));
  return {
    ...found,
    ...(answer.reads !== undefined ? { reads: answer.reads } : {}),
    ...(answer.controller !== undefined ? { controller: answer.controller } : {}),
    ...(answer.sourceClaim !== undefined ? { sourceClaim: answer.sourceClaim } : {}),
    ...(answer.created !== undefined ? { created: answer.created } : {}),
  };
}
