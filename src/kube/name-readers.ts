// Which cached objects read an object by name, per namespace: the pods (pod/pod-reads.ts),
// the claims not yet provisioned that clone one, and the Ingresses, Gateways, ListenerSets and
// BackendTLSPolicies that name a Secret or ConfigMap they read (the kind table's `readsLive`
// references). The CREATE of a Secret, ConfigMap,
// claim or ResourceClaim is judged against what reads its name (rules/live-readers.ts), and
// scanning a namespace's pods or claims per CREATE would cost what the namespace holds. One
// index is kept beside each kind's store, following each record as it is put, replaced or
// removed (reflector.ts, onStored); it holds names only, and the readers' facts stay in the
// store. Well-known ConfigMaps (every pod's `kube-root-ca.crt`) are left out: no rule asks
// for their readers.
//
// Sized for hundreds of thousands of pods: most names are read by one pod (its claim, its
// run's Secret), so an entry holds that pod's name itself (the store's own string, shared),
// and a Set only once a second pod reads the name.
//
// A pod whose names its record does not keep (past KEPT_READS_BYTES, lookup-facts.ts) is not
// indexed by name: it is kept beside the index with the sorted 32-bit hashes of its names
// (readHash, at most 4 KiB), and `readers` answers it for every name whose hash it holds
// (a binary search per such pod of the namespace). So one tenant's pods naming hundreds of
// long names cost the cache a few KB each, and every namespace's readers are still told
// without listing its pods. A collision makes the pod one more reader: the CREATE is judged
// against it (fails closed). A pod naming more than the hashes keep (MAX_HASHED_READS) is
// answered as a reader of every name of its namespace.
import type { LookupResource } from '../policy/kinds.js';
import { POD_READS } from '../policy/pod/pod-reads.js';
import { ENTRY_BYTES_PER_READ, readHash, READS_ANY_NAME, readsOfStored, type StoredFacts } from './lookup-facts.js';

/** A map entry's own cost beside its key's characters, estimated as reflector.ts estimates the store's. */
const ENTRY_BYTES = ENTRY_BYTES_PER_READ;
/** A Set's own cost, and its entries'. */
const SET_BYTES = 96;
const SET_ENTRY_BYTES = 24;
/** A Map's own cost, and a typed array's beside its bytes. */
const MAP_BYTES = 96;
const TYPED_ARRAY_BYTES = 96;

type Readers = string | Set<string>;
/** What is kept of a pod whose names are not: their hashes, or that it may read any name. */
type Hashed = Uint32Array | typeof READS_ANY_NAME;

export class NameReaders {
  /** namespace → resource → name → the reader, or the readers, of it (a pod's or a claim's name: one index per kind). */
  private readonly byNamespace = new Map<string, Map<LookupResource, Map<string, Readers>>>();
  /** namespace → the pods whose names their records do not keep → the hashes of their names. */
  private readonly hashed = new Map<string, Map<string, Hashed>>();
  private hashedCount = 0;
  private held = 0;

  constructor(private readonly unindexedConfigMaps: ReadonlySet<string> = new Set()) {}

  /** The memory held, estimated. */
  get bytes(): number {
    return this.held;
  }

  /** Pods whose names are kept as hashes (or not at all), in every namespace. */
  get readsNotKept(): number {
    return this.hashedCount;
  }

  /**
   * A reader's record (a pod's, a claim's) was put, replaced or removed. Answers whether this
   * made the first pod of its namespace whose names are kept as hashes (for the operator to
   * hear of it once; a claim reads one name, always kept).
   */
  update(namespace: string, pod: string, before: StoredFacts | undefined, after: StoredFacts | undefined): boolean {
    const was = before === undefined ? [] : this.readsOf(before);
    const now = after === undefined ? [] : this.readsOf(after);
    if (!Array.isArray(was) || !Array.isArray(now)) {
      // Its names were indexed before, or are now, or neither: whichever side had them.
      if (Array.isArray(was)) for (const [resource, name] of was) this.remove(namespace, resource, name, pod);
      // Hashes replace hashes: not its namespace's first such pod.
      if (!Array.isArray(now)) return this.hash(namespace, pod, now);
      this.unhash(namespace, pod);
      for (const [resource, name] of now) this.add(namespace, resource, name, pod);
      return false;
    }
    if (was.length === 0 && now.length === 0) return false;
    const kept = new Set(now.map(([resource, name]) => `${resource}/${name}`));
    for (const [resource, name] of was) if (!kept.has(`${resource}/${name}`)) this.remove(namespace, resource, name, pod);
    for (const [resource, name] of now) this.add(namespace, resource, name, pod);
    return false;
  }

  /** Forget everything (its kind's store was shed). */
  clear(): void {
    this.byNamespace.clear();
    this.hashed.clear();
    this.hashedCount = 0;
    this.held = 0;
  }

  /**
   * The readers in `namespace` of `resource` `name`: those indexed by it, and the pods whose
   * names are kept as hashes and hold its hash (or may read any name).
   */
  readers(resource: LookupResource, namespace: string, name: string): string[] {
    const readers = this.byNamespace.get(namespace)?.get(resource)?.get(name);
    const indexed = readers === undefined ? [] : typeof readers === 'string' ? [readers] : [...readers];
    const hashed = this.hashed.get(namespace);
    if (hashed === undefined) return indexed;
    const hash = readHash(resource, name);
    for (const [pod, hashes] of hashed) if (hashes === READS_ANY_NAME || holds(hashes, hash)) indexed.push(pod);
    return indexed;
  }

  private readsOf(stored: StoredFacts): Array<[LookupResource, string]> | Hashed {
    const reads = readsOfStored(stored);
    if (reads === undefined) return [];
    if (reads === READS_ANY_NAME || reads instanceof Uint32Array) return reads;
    return POD_READS.flatMap((r) => reads[r.field].filter((name) => r.field !== 'configMaps' || !this.unindexedConfigMaps.has(name)).map((name): [LookupResource, string] => [r.resource, name]));
  }

  /** Keeps `pod`'s hashes (replacing any it had); whether it is its namespace's first such pod. */
  private hash(namespace: string, pod: string, hashes: Hashed): boolean {
    let pods = this.hashed.get(namespace);
    const first = pods === undefined;
    if (pods === undefined) {
      this.hashed.set(namespace, (pods = new Map()));
      this.held += namespace.length + ENTRY_BYTES + MAP_BYTES;
    }
    const had = pods.get(pod);
    if (had === undefined) this.hashedCount++;
    else this.held -= weight(had);
    pods.set(pod, hashes);
    this.held += weight(hashes);
    return first;
  }

  private unhash(namespace: string, pod: string): void {
    const pods = this.hashed.get(namespace);
    const had = pods?.get(pod);
    if (pods === undefined || had === undefined) return;
    pods.delete(pod);
    this.hashedCount--;
    this.held -= weight(had);
    if (pods.size > 0) return;
    this.hashed.delete(namespace);
    this.held -= namespace.length + ENTRY_BYTES + MAP_BYTES;
  }

  private add(namespace: string, resource: LookupResource, name: string, pod: string): void {
    let kinds = this.byNamespace.get(namespace);
    if (kinds === undefined) this.byNamespace.set(namespace, (kinds = new Map()));
    let names = kinds.get(resource);
    if (names === undefined) kinds.set(resource, (names = new Map()));
    const readers = names.get(name);
    if (readers === undefined) {
      names.set(name, pod);
      this.held += name.length + ENTRY_BYTES;
    } else if (typeof readers === 'string') {
      if (readers === pod) return;
      names.set(name, new Set([readers, pod]));
      this.held += SET_BYTES + 2 * SET_ENTRY_BYTES;
    } else if (!readers.has(pod)) {
      readers.add(pod);
      this.held += SET_ENTRY_BYTES;
    }
  }

  private remove(namespace: string, resource: LookupResource, name: string, pod: string): void {
    const kinds = this.byNamespace.get(namespace);
    const names = kinds?.get(resource);
    const readers = names?.get(name);
    if (kinds === undefined || names === undefined || readers === undefined) return;
    if (typeof readers === 'string') {
      if (readers !== pod) return;
      names.delete(name);
      this.held -= name.length + ENTRY_BYTES;
    } else {
      if (!readers.delete(pod)) return;
      this.held -= SET_ENTRY_BYTES;
      if (readers.size > 1) return;
      // One reader left: back to its name alone.
      names.set(name, readers.values().next().value!);
      this.held -= SET_BYTES + SET_ENTRY_BYTES;
    }
    if (names.size === 0) kinds.delete(resource);
    if (kinds.size === 0) this.byNamespace.delete(namespace);
  }
}

/** What one pod's hashes weigh in the index (its name is the store's own string, shared). */
function weight(hashes: Hashed): number {
  return ENTRY_BYTES + (hashes === READS_ANY_NAME ? 0 : TYPED_ARRAY_BYTES + hashes.byteLength);
}

/** Whether sorted `hashes` holds `hash` (binary search). */
function holds(hashes: Uint32Array, hash: number): boolean {
  let lo = 0;
  let hi = hashes.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = hashes[mid]!;
    if (at === hash) return true;
    if (at < hash) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
