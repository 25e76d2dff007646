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
 * fixed-shape record whose fields are the stamps Deed writes on nearly every object (any
 * other label or annotation under the prefix goes to `extra`), values that repeat across
 * objects (an environment, "true", a service account, an owner's kind) shared through a
 * bounded table, and a value equal to another of the same object (the owner stamps and the
 * controller reference's name and uid) kept once. `factsFromStored` gives the ObjectFacts a
 * lookup reads, exactly as `factsOf` would have.
 */
export class StoredFacts {
  constructor(
    readonly uid: string | undefined,
    readonly serviceAccountName: string | undefined,
    readonly controllerApiVersion: string | undefined,
    readonly controllerKind: string | undefined,
    readonly controllerName: string | undefined,
    readonly controllerUid: string | undefined,
    readonly deleting: boolean,
    /** The list (its generation) that last put this record: a relist sweeps the ones it did not. */
    public listed: number,
    // Labels.
    readonly managed: string | undefined,
    readonly environment: string | undefined,
    readonly ownerUid: string | undefined,
    // Annotations.
    readonly owner: string | undefined,
    readonly nonce: string | undefined,
    readonly expiresAt: string | undefined,
    readonly attestation: string | undefined,
    readonly runLease: string | undefined,
    /** Any other of Deed's labels and annotations: ["l" or "a" + key, value, ...]. */
    readonly extra: readonly string[] | undefined,
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

/** The record's fields, by where the stamp is written and its key under the prefix. */
const LABEL_FIELDS = { managed: 'managed', environment: 'environment', 'owner-uid': 'ownerUid' } as const;
const ANNOTATION_FIELDS = { owner: 'owner', 'create-nonce': 'nonce', 'expires-at': 'expiresAt', attestation: 'attestation', 'run-lease': 'runLease' } as const;
type Field = (typeof LABEL_FIELDS)[keyof typeof LABEL_FIELDS] | (typeof ANNOTATION_FIELDS)[keyof typeof ANNOTATION_FIELDS];

export function storedFactsOf(obj: { metadata?: Meta | undefined; spec?: unknown }, prefix: string, interner: Interner, listed: number): StoredFacts {
  const m = obj.metadata ?? {};
  const spec = obj.spec as { serviceAccountName?: unknown } | undefined;
  const sa = typeof spec?.serviceAccountName === 'string' && spec.serviceAccountName !== '' ? interner.of(spec.serviceAccountName) : undefined;
  const ref = controllerRefOf(m.ownerReferences);
  // The stamps repeat the controller's name and uid (owner, owner-uid): one string for both.
  const same = (value: string) => (value === ref?.uid ? ref.uid : value === ref?.name ? ref.name : value.length <= SHAREABLE_CHARS ? interner.of(value) : value);
  const fields: Partial<Record<Field, string>> = {};
  let extra: string[] | undefined;
  const take = (map: Record<string, string> | undefined, where: 'l' | 'a', known: Record<string, Field>) => {
    if (map === undefined || map === null) return;
    for (const key in map) {
      const value = map[key];
      if (!key.startsWith(`${prefix}/`) || typeof value !== 'string') continue;
      const field = Object.hasOwn(known, key.slice(prefix.length + 1)) ? known[key.slice(prefix.length + 1)] : undefined;
      if (field !== undefined) fields[field] = same(value);
      else (extra ??= []).push(interner.of(`${where}${key}`), same(value));
    }
  };
  take(m.labels, 'l', LABEL_FIELDS);
  take(m.annotations, 'a', ANNOTATION_FIELDS);
  return new StoredFacts(
    typeof m.uid === 'string' ? m.uid : undefined,
    sa,
    ref ? interner.of(ref.apiVersion) : undefined,
    ref ? interner.of(ref.kind) : undefined,
    ref?.name,
    ref?.uid,
    m.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
    listed,
    fields.managed,
    fields.environment,
    fields.ownerUid,
    fields.owner,
    fields.nonce,
    fields.expiresAt,
    fields.attestation,
    fields.runLease,
    extra,
  );
}

export function factsFromStored(s: StoredFacts, prefix: string): ObjectFacts {
  let labels: Record<string, string> | undefined;
  let annotations: Record<string, string> | undefined;
  for (const [key, field] of Object.entries(LABEL_FIELDS)) if (s[field] !== undefined) (labels ??= {})[`${prefix}/${key}`] = s[field];
  for (const [key, field] of Object.entries(ANNOTATION_FIELDS)) if (s[field] !== undefined) (annotations ??= {})[`${prefix}/${key}`] = s[field];
  const extra = s.extra ?? [];
  for (let i = 0; i < extra.length; i += 2) {
    const key = extra[i]!.slice(1);
    if (extra[i]!.startsWith('l')) (labels ??= {})[key] = extra[i + 1]!;
    else (annotations ??= {})[key] = extra[i + 1]!;
  }
  const controller = s.controllerUid !== undefined ? { apiVersion: s.controllerApiVersion!, kind: s.controllerKind!, name: s.controllerName!, uid: s.controllerUid } : undefined;
  return {
    ...(s.uid !== undefined ? { uid: s.uid } : {}),
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
    ...(s.serviceAccountName !== undefined ? { serviceAccountName: s.serviceAccountName } : {}),
    ...(controller ? { controller } : {}),
    deleting: s.deleting,
  };
}
