// A lookup cache and an API server as tables, for the cached reader (src/kube/cached-reader.ts)
// and for decisions made on what it answers.
import type { LookupCache } from '../src/kube/lookup-cache.js';
import type { ObjectFacts } from '../src/kube/lookup-facts.js';
import type { ObjectReader } from '../src/kube/object-reader.js';
import { gatheredLookup, lookupKey, type LookupKey, type LookupResource } from '../src/policy/lookup.js';
import type { Lookup, Readers } from '../src/policy/policy.js';
import { scopeAnswer } from '../src/policy/review-scope.js';
import { readingKinds } from '../src/policy/pod/pod-reads.js';

/** What a fake cache answers for the readers of a name: every reading kind's, or undefined for none (all read live). */
type CachedReaders = (resource: LookupResource, namespace: string, name: string) => ReturnType<LookupCache['readersIn']>['readers'] | undefined;

/** A cache holding `objects` (by lookupKey), current for `current` kinds, reviewing the namespaces `inScope`. */
export function fakeCache(objects: Record<string, ObjectFacts>, opts: { inScope?: string[]; current?: LookupResource[]; readers?: CachedReaders } = {}): LookupCache {
  const inScope = new Set(opts.inScope ?? ['sandbox-a']);
  const current = new Set(opts.current ?? ['pods', 'persistentvolumeclaims', 'secrets']);
  const none = { pods: 0, persistentvolumeclaims: 0, secrets: 0, configmaps: 0, namespaces: 0, deployments: 0, replicasets: 0, statefulsets: 0, daemonsets: 0, jobs: 0, cronjobs: 0, replicationcontrollers: 0, serviceaccounts: 0, ingresses: 0, gateways: 0, listenersets: 0, xlistenersets: 0, backendtlspolicies: 0 };
  return {
    scope: { of: (ns) => scopeAnswer(inScope.has(ns) ? { name: ns, labels: { 'deed.dev/sandbox': 'enabled' } } : undefined, 'deed-system') },
    get: (resource, namespace, name) => (current.has(resource) ? objects[lookupKey({ resource, namespace, name })] : undefined),
    // All or nothing, as `readers` gives: every reading kind unread where it answers nothing.
    readersIn: (resource, namespace, name) => {
      const found = (opts.readers ?? (() => undefined))(resource, namespace, name);
      return found === undefined ? { readers: [], unread: readingKinds(resource).map(([, by]) => by) } : { readers: found, unread: [] };
    },
    readsNotKept: () => 0,
    current: (resource) => current.has(resource),
    sizes: () => none,
    bytes: () => none,
    shed: () => [],
    scopeKnown: async () => {},
    awaitScope: async () => {},
    start: () => {},
    stop: () => {},
  };
}

/**
 * An API server as a table; every read is recorded (`reads`; what is listed in `listed`, by
 * key). Readers asked for are those of `readers`, with their stamps whole.
 */
export function fakeLive(answers: Record<string, Lookup>, readers: Readers = { state: 'known', readers: [] }): ObjectReader & { reads: string[]; listed: string[] } {
  const reads: string[] = [];
  const listed: string[] = [];
  const answer = (k: LookupKey) => [lookupKey(k), answers[lookupKey(k)] ?? { state: 'absent' }] as const;
  return {
    reads,
    listed,
    async read(keys: LookupKey[]) {
      for (const k of keys) reads.push(lookupKey(k));
      const asked = keys.filter((k) => k.readers === true);
      return gatheredLookup(new Map(keys.filter((k) => k.readers !== true).map(answer)), 'not read', new Map(asked.map((k) => [lookupKey(k), readers])));
    },
    async readListed(keys: LookupKey[]) {
      for (const k of keys) listed.push(lookupKey(k));
      return gatheredLookup(new Map(keys.map(answer)), 'not read', new Map());
    },
  };
}
