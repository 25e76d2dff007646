// Which cached pods read an object by name (pod/pod-reads.ts), per namespace: the CREATE of
// a Secret, ConfigMap, claim or ResourceClaim is judged against the live pods that read its
// name (rules/live-readers.ts), and scanning a namespace's pods per CREATE would cost what
// the namespace holds. Kept beside the pods' store, following each record as it is put,
// replaced or removed (reflector.ts, onStored); it holds names only, and the pods' facts
// stay in the store. Well-known ConfigMaps (every pod's `kube-root-ca.crt`) are left out:
// no rule asks for their readers.
//
// Sized for hundreds of thousands of pods: most names are read by one pod (its claim, its
// run's Secret), so an entry holds that pod's name itself (the store's own string, shared),
// and a Set only once a second pod reads the name.
//
// A pod whose reads its record does not keep (past KEPT_READS_BYTES, lookup-facts.ts) is not
// indexed by name: its namespace is marked instead, and no pod of it is told from the index
// (`readers` answers undefined there, and the namespace's pods are listed live). So one
// tenant's pods naming hundreds of long names cost the cache a few bytes each, and slow the
// CREATEs of its own namespace only.
import type { LookupResource } from '../policy/kinds.js';
import { POD_READS } from '../policy/pod/pod-reads.js';
import { ENTRY_BYTES_PER_READ, NOT_KEPT, readsOfStored, type StoredFacts } from './lookup-facts.js';

/** A map entry's own cost beside its key's characters, estimated as reflector.ts estimates the store's. */
const ENTRY_BYTES = ENTRY_BYTES_PER_READ;
/** A Set's own cost, and its entries'. */
const SET_BYTES = 96;
const SET_ENTRY_BYTES = 24;

type Readers = string | Set<string>;

export class PodReaders {
  /** namespace → resource → name → the pod, or the pods, that read it. */
  private readonly byNamespace = new Map<string, Map<LookupResource, Map<string, Readers>>>();
  /** namespace → the pods whose reads their records do not keep. */
  private readonly notKept = new Map<string, Set<string>>();
  private notKeptCount = 0;
  private held = 0;

  constructor(private readonly unindexedConfigMaps: ReadonlySet<string> = new Set()) {}

  /** The memory held, estimated. */
  get bytes(): number {
    return this.held;
  }

  /** Pods whose reads are not kept, in every namespace. */
  get readsNotKept(): number {
    return this.notKeptCount;
  }

  /**
   * A pod's record was put, replaced or removed. Answers whether this made the first pod of
   * its namespace whose reads are not kept (for the operator to hear of it once).
   */
  update(namespace: string, pod: string, before: StoredFacts | undefined, after: StoredFacts | undefined): boolean {
    const was = before === undefined ? [] : this.readsOf(before);
    const now = after === undefined ? [] : this.readsOf(after);
    if (was === NOT_KEPT && now !== NOT_KEPT) this.unmark(namespace, pod);
    const first = now === NOT_KEPT && was !== NOT_KEPT && this.mark(namespace, pod);
    if (was === NOT_KEPT || now === NOT_KEPT) {
      // Its names were indexed before, or are now: whichever side had them.
      if (was !== NOT_KEPT) for (const [resource, name] of was) this.remove(namespace, resource, name, pod);
      if (now !== NOT_KEPT) for (const [resource, name] of now) this.add(namespace, resource, name, pod);
      return first;
    }
    if (was.length === 0 && now.length === 0) return false;
    const kept = new Set(now.map(([resource, name]) => `${resource}/${name}`));
    for (const [resource, name] of was) if (!kept.has(`${resource}/${name}`)) this.remove(namespace, resource, name, pod);
    for (const [resource, name] of now) this.add(namespace, resource, name, pod);
    return false;
  }

  /** Forget everything (the pods' store was shed). */
  clear(): void {
    this.byNamespace.clear();
    this.notKept.clear();
    this.notKeptCount = 0;
    this.held = 0;
  }

  /**
   * The pods of `namespace` that read `resource` `name`; undefined when a pod of the namespace
   * reads more than its record keeps: which names it reads is not known here.
   */
  readers(resource: LookupResource, namespace: string, name: string): string[] | undefined {
    if (this.notKept.has(namespace)) return undefined;
    const readers = this.byNamespace.get(namespace)?.get(resource)?.get(name);
    return readers === undefined ? [] : typeof readers === 'string' ? [readers] : [...readers];
  }

  private readsOf(stored: StoredFacts): Array<[LookupResource, string]> | typeof NOT_KEPT {
    const reads = readsOfStored(stored);
    if (reads === undefined) return [];
    if (reads === NOT_KEPT) return NOT_KEPT;
    return POD_READS.flatMap((r) => reads[r.field].filter((name) => r.field !== 'configMaps' || !this.unindexedConfigMaps.has(name)).map((name): [LookupResource, string] => [r.resource, name]));
  }

  /** Marks `pod` as read past the bound; whether it is its namespace's first. */
  private mark(namespace: string, pod: string): boolean {
    let pods = this.notKept.get(namespace);
    const first = pods === undefined;
    if (pods === undefined) {
      this.notKept.set(namespace, (pods = new Set()));
      this.held += namespace.length + ENTRY_BYTES + SET_BYTES;
    }
    if (pods.has(pod)) return false;
    pods.add(pod);
    this.notKeptCount++;
    this.held += SET_ENTRY_BYTES;
    return first;
  }

  private unmark(namespace: string, pod: string): void {
    const pods = this.notKept.get(namespace);
    if (pods === undefined || !pods.delete(pod)) return;
    this.notKeptCount--;
    this.held -= SET_ENTRY_BYTES;
    if (pods.size > 0) return;
    this.notKept.delete(namespace);
    this.held -= namespace.length + ENTRY_BYTES + SET_BYTES;
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
