// Which cached pods read an object by name (pod/pod-reads.ts), per namespace: the CREATE of
// a Secret, ConfigMap, claim or ResourceClaim is judged against the live pods that read its
// name (rules/live-readers.ts), and scanning a namespace's pods per CREATE would cost what
// the namespace holds. Kept beside the pods' store, following each record as it is put,
// replaced or removed (reflector.ts, onStored); it holds names only, and the pods' facts
// stay in the store. Well-known ConfigMaps (every pod's `kube-root-ca.crt`) are left out:
// no rule asks for their readers.
import type { LookupResource } from '../policy/kinds.js';
import { POD_READS } from '../policy/pod/pod-reads.js';
import { readsOfStored, type StoredFacts } from './lookup-facts.js';

/** A map entry's own cost beside its key, estimated as reflector.ts estimates the store's. */
const ENTRY_BYTES = 64;

export class PodReaders {
  /** namespace → `resource/name` → the pods that read it. */
  private readonly byNamespace = new Map<string, Map<string, Set<string>>>();
  private held = 0;

  constructor(private readonly unindexedConfigMaps: ReadonlySet<string> = new Set()) {}

  /** The memory held, estimated. */
  get bytes(): number {
    return this.held;
  }

  /** A pod's record was put, replaced or removed. */
  update(namespace: string, pod: string, before: StoredFacts | undefined, after: StoredFacts | undefined): void {
    const was = before === undefined ? [] : this.keysOf(before);
    const now = after === undefined ? [] : this.keysOf(after);
    if (was.length === 0 && now.length === 0) return;
    const kept = new Set(now);
    for (const key of was) if (!kept.has(key)) this.remove(namespace, key, pod);
    for (const key of now) this.add(namespace, key, pod);
  }

  /** Forget everything (the pods' store was shed). */
  clear(): void {
    this.byNamespace.clear();
    this.held = 0;
  }

  /** The pods of `namespace` that read `resource` `name`. */
  readers(resource: LookupResource, namespace: string, name: string): string[] {
    return [...(this.byNamespace.get(namespace)?.get(`${resource}/${name}`) ?? [])];
  }

  private keysOf(stored: StoredFacts): string[] {
    const reads = readsOfStored(stored);
    if (reads === undefined) return [];
    return POD_READS.flatMap((r) => reads[r.field].filter((name) => r.field !== 'configMaps' || !this.unindexedConfigMaps.has(name)).map((name) => `${r.resource}/${name}`));
  }

  private add(namespace: string, key: string, pod: string): void {
    let keys = this.byNamespace.get(namespace);
    if (keys === undefined) this.byNamespace.set(namespace, (keys = new Map()));
    let pods = keys.get(key);
    if (pods === undefined) {
      keys.set(key, (pods = new Set()));
      this.held += key.length + ENTRY_BYTES;
    }
    if (pods.has(pod)) return;
    pods.add(pod);
    this.held += pod.length + ENTRY_BYTES;
  }

  private remove(namespace: string, key: string, pod: string): void {
    const keys = this.byNamespace.get(namespace);
    const pods = keys?.get(key);
    if (keys === undefined || pods === undefined || !pods.delete(pod)) return;
    this.held -= pod.length + ENTRY_BYTES;
    if (pods.size > 0) return;
    keys.delete(key);
    this.held -= key.length + ENTRY_BYTES;
    if (keys.size === 0) this.byNamespace.delete(namespace);
  }
}
