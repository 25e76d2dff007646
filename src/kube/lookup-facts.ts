// What Deed keeps of another object it may look up: its uid, the labels and annotations
// under Deed's prefix, a pod's service account, its controlling owner reference, and
// whether it is being deleted. The same projection serves cached and live answers, so a
// decision cannot depend on which one it got. Nothing else is kept: another annotation
// may be large (kubectl's last-applied-configuration holds a Secret's data in full).
import type { ControllerRef, Lookup } from '../policy/policy.js';
import { controllerRefOf } from '../policy/controller-made.js';

export interface ObjectFacts {
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Pods only: spec.serviceAccountName (immutable for the pod's life). */
  serviceAccountName?: string;
  /** The owner reference with `controller: true`: whose an object a controller made is follows it. */
  controller?: ControllerRef;
  /** metadata.deletionTimestamp is set: the object may be gone at any moment. */
  deleting: boolean;
}

interface Meta {
  uid?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
  deletionTimestamp?: unknown;
  ownerReferences?: unknown;
}

/** The facts of one object as the API server sent it (a list item, a watch event's object, a GET). */
export function factsOf(obj: { metadata?: Meta | undefined; spec?: unknown }, prefix: string): ObjectFacts {
  const m = obj.metadata ?? {};
  const labels = ours(m.labels, prefix);
  const annotations = ours(m.annotations, prefix);
  const spec = obj.spec as { serviceAccountName?: unknown } | undefined;
  const sa = typeof spec?.serviceAccountName === 'string' && spec.serviceAccountName !== '' ? spec.serviceAccountName : undefined;
  const controller = controllerRefOf(m.ownerReferences);
  return {
    ...(typeof m.uid === 'string' ? { uid: m.uid } : {}),
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
    ...(sa ? { serviceAccountName: sa } : {}),
    ...(controller ? { controller } : {}),
    deleting: m.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
  };
}

/** A found object as the policy reads it. */
export function foundLookup(f: ObjectFacts): Extract<Lookup, { state: 'found' }> {
  return {
    state: 'found',
    metadata: { ...(f.uid ? { uid: f.uid } : {}), ...(f.labels ? { labels: f.labels } : {}), ...(f.annotations ? { annotations: f.annotations } : {}) },
    ...(f.serviceAccountName ? { serviceAccountName: f.serviceAccountName } : {}),
    ...(f.controller ? { controller: f.controller } : {}),
  };
}


function ours(map: Record<string, string> | undefined, prefix: string): Record<string, string> | undefined {
  if (map === undefined || map === null) return undefined;
  let out: Record<string, string> | undefined;
  for (const [key, value] of Object.entries(map)) {
    if (!key.startsWith(`${prefix}/`)) continue;
    (out ??= {})[key] = value;
  }
  return out;
}

/**
 * How the lookup cache holds an object's facts, for hundreds of thousands of objects: one
 * fixed-shape record, Deed's labels and annotations as one flat array of key and value
 * (labels first), values that repeat across objects (an environment, "true", a service
 * account, an owner's kind) shared through a bounded table, and a value equal to another of
 * the same object (the owner-uid stamp and the controller reference's uid) kept once.
 * `factsFromStored` gives the ObjectFacts a lookup reads.
 */
export class StoredFacts {
  constructor(
    readonly uid: string | undefined,
    /** [key, value, key, value, ...]: the labels' pairs, then the annotations'. */
    readonly ours: readonly string[] | undefined,
    /** How many pairs of `ours` are labels. */
    readonly labelPairs: number,
    readonly serviceAccountName: string | undefined,
    readonly controller: ControllerRef | undefined,
    readonly deleting: boolean,
    /** The list (its generation) that last put this record: a relist sweeps the ones it did not. */
    public listed: number,
  ) {}
}

/**
 * Strings shared across records. Bounded: past `max` distinct values it stops adding (a
 * value then is kept as it came), so a stream of unique values cannot grow it without end.
 */
export class Interner {
  private readonly table = new Map<string, string>();
  constructor(private readonly max = 4096) {}
  of(value: string): string {
    const known = this.table.get(value);
    if (known !== undefined) return known;
    if (this.table.size < this.max) this.table.set(value, value);
    return value;
  }
}

/** Values short enough to be a vocabulary (an environment id, "true", a name); a uid, nonce or attestation is not shared. */
const SHAREABLE_CHARS = 32;

export function storedFactsOf(obj: { metadata?: Meta | undefined; spec?: unknown }, prefix: string, interner: Interner, listed: number): StoredFacts {
  const m = obj.metadata ?? {};
  const spec = obj.spec as { serviceAccountName?: unknown } | undefined;
  const sa = typeof spec?.serviceAccountName === 'string' && spec.serviceAccountName !== '' ? interner.of(spec.serviceAccountName) : undefined;
  const ref = controllerRefOf(m.ownerReferences);
  const controller = ref ? { apiVersion: interner.of(ref.apiVersion), kind: interner.of(ref.kind), name: ref.name, uid: ref.uid } : undefined;
  // The stamps repeat the controller's name and uid (owner, owner-uid): one string for both.
  const same = (value: string) => (value === controller?.uid ? controller.uid : value === controller?.name ? controller.name : value.length <= SHAREABLE_CHARS ? interner.of(value) : value);
  const flat: string[] = [];
  const push = (map: Record<string, string> | undefined) => {
    if (map === undefined || map === null) return;
    for (const key in map) if (key.startsWith(`${prefix}/`) && typeof map[key] === 'string') flat.push(interner.of(key), same(map[key]));
  };
  push(m.labels);
  const labelPairs = flat.length / 2;
  push(m.annotations);
  return new StoredFacts(typeof m.uid === 'string' ? m.uid : undefined, flat.length > 0 ? flat : undefined, labelPairs, sa, controller, m.deletionTimestamp !== undefined && m.deletionTimestamp !== null, listed);
}

export function factsFromStored(s: StoredFacts): ObjectFacts {
  let labels: Record<string, string> | undefined;
  let annotations: Record<string, string> | undefined;
  const ours = s.ours ?? [];
  for (let i = 0; i < ours.length; i += 2) {
    if (i / 2 < s.labelPairs) (labels ??= {})[ours[i]!] = ours[i + 1]!;
    else (annotations ??= {})[ours[i]!] = ours[i + 1]!;
  }
  return {
    ...(s.uid !== undefined ? { uid: s.uid } : {}),
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
    ...(s.serviceAccountName !== undefined ? { serviceAccountName: s.serviceAccountName } : {}),
    ...(s.controller ? { controller: { ...s.controller } } : {}),
    deleting: s.deleting,
  };
}
