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
import type { LookupResource } from '../policy/kinds.js';
import { POD_READS } from '../policy/pod/pod-reads.js';
import { readsOfStored, type StoredFacts } from './lookup-facts.js';

/** A map entry's own cost beside its key's characters, estimated as reflector.ts estimates the store's. */
const ENTRY_BYTES = 48;
/** A Set's own cost, and its entries'. */
const SET_BYTES = 96;
const SET_ENTRY_BYTES = 24;

type Readers = string | Set<string>;

export class PodReaders {
  /** namespace → resource → name → the pod, or the pods, that read it. */
  private readonly byNamespace = new Map<string, Map<LookupResource, Map<string, Readers>>>();
  private held = 0;

  constructor(private readonly unindexedConfigMaps: ReadonlySet<string> = new Set()) {}

  /** The memory held, estimated. */
  get bytes(): number {
    return this.held;
  }

  /** A pod's record was put, replaced or removed. */
  update(namespace: string, pod: string, before: StoredFacts | undefined, after: StoredFacts | undefined): void {
    const was = before === undefined ? [] : this.readsOf(before);
    const now = after === undefined ? [] : this.readsOf(after);
    if (was.length === 0 && now.length === 0) return;
    const kept = new Set(now.map(([resource, name]) => `${resource}/${name}`));
    for (const [resource, name] of was) if (!kept.has(`${resource}/${name}`)) this.remove(namespace, resource, name, pod);
    for (const [resource, name] of now) this.add(namespace, resource, name, pod);
  }

  /** Forget everything (the pods' store was shed). */
  clear(): void {
    this.byNamespace.clear();
    this.held = 0;
  }

  /** The pods of `namespace` that read `resource` `name`. */
  readers(resource: LookupResource, namespace: string, name: string): string[] {
    const readers = this.byNamespace.get(namespace)?.get(resource)?.get(name);
    return readers === undefined ? [] : typeof readers === 'string' ? [readers] : [...readers];
  }

  private readsOf(stored: StoredFacts): Array<[LookupResource, string]> {
    const reads = readsOfStored(stored);
    if (reads === undefined) return [];
    return POD_READS.flatMap((r) => reads[r.field].filter((name) => r.field !== 'configMaps' || !this.unindexedConfigMaps.has(name)).map((name): [LookupResource, string] => [r.resource, name]));
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
