// Lookups of other objects a decision depends on (a pod's claims). The server answers
// from its metadata cache; `deed review` from the objects it was given; with neither,
// every answer is "unknown" and the rules that need one fail closed, saying why.
import type { KubeObject } from '../admission/types.js';
import type { Lookup, ObjectLookup } from './policy.js';

export type LookupResource = Parameters<ObjectLookup['get']>[0];

/** No cluster to ask: every lookup is unknown. */
export const noLookup: ObjectLookup = {
  get: (resource, namespace, name) => ({ state: 'unknown', reason: `no cluster is available to look up ${resource} ${namespace}/${name}` }),
};

function key(resource: LookupResource, namespace: string, name: string): string {
  return JSON.stringify([resource, namespace, name]);
}

/**
 * A lookup over a known set of objects: those found are answered from their metadata;
 * any other is `miss(...)` (unknown by default: a list of objects is not the cluster).
 */
export class ObjectTable implements ObjectLookup {
  readonly #entries = new Map<string, Lookup>();

  constructor(private readonly miss: (resource: LookupResource, namespace: string, name: string) => Lookup = noLookup.get) {}

  /** Records an object as found (its metadata only), or as absent when `object` is null. */
  set(resource: LookupResource, namespace: string, name: string, object: Pick<KubeObject, 'metadata'> | null): this {
    if (object === null) {
      this.#entries.set(key(resource, namespace, name), { state: 'absent' });
      return this;
    }
    const { uid, labels, annotations } = object.metadata;
    const metadata: Extract<Lookup, { state: 'found' }>['metadata'] = {};
    if (uid !== undefined) metadata.uid = uid;
    if (labels !== undefined) metadata.labels = { ...labels };
    if (annotations !== undefined) metadata.annotations = { ...annotations };
    this.#entries.set(key(resource, namespace, name), { state: 'found', metadata });
    return this;
  }

  get(resource: LookupResource, namespace: string, name: string): Lookup {
    return this.#entries.get(key(resource, namespace, name)) ?? this.miss(resource, namespace, name);
  }
}
