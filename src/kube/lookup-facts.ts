// What Deed keeps of another object it may look up: its uid, the labels and annotations
// under Deed's prefix, a pod's service account, its controlling owner reference, and
// whether it is being deleted. The same projection serves cached and live answers, so a
// decision cannot depend on which one it got. Nothing else is kept: another annotation
// may be large (kubectl's last-applied-configuration holds a Secret's data in full), and
// under the prefix only Deed's own keys, of bounded size (`ours`).
import type { ControllerRef, Lookup } from '../policy/policy.js';
import type { LookupResource } from '../policy/kinds.js';
import { controllerRefOf } from '../policy/controller-made.js';
import { stampKeys } from '../policy/stamps/keys.js';
import { SANDBOX_LABEL } from '../policy/review-scope.js';
import { claimReadsOf, POD_READS, podReadsOf, referencedReadsOf, type PodReads } from '../policy/pod/pod-reads.js';

export interface ObjectFacts {
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Pods only: spec.serviceAccountName (immutable for the pod's life). */
  serviceAccountName?: string;
  /** Pods: what the pod reads by name (its binding and the CREATE of what it names are judged on them); claims not yet provisioned: the claim they clone. */
  reads?: PodReads;
  /**
   * Pods only, from the lookup cache: the pod reads more than it keeps (KEPT_READS_BYTES; its
   * record keeps hashes of the names instead), so `reads` is absent but not empty: read the
   * pod from the API server for what it reads.
   */
  readsNotKept?: true;
  /** The owner reference with `controller: true`: whose an object a controller made is follows it. */
  controller?: ControllerRef;
  /** metadata.deletionTimestamp is set: the object may be gone at any moment. */
  deleting: boolean;
  /** The lookup cache verified its stamps when it arrived and dropped the attestation and nonce (Lookup's `stampsVerified`). */
  stampsVerified?: true;
}

interface Meta {
  uid?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
  deletionTimestamp?: unknown;
  ownerReferences?: unknown;
}

/** The facts of one object as the API server sent it (a list item, a watch event's object, a GET). */
export function factsOf(obj: { metadata?: Meta | undefined; spec?: unknown; status?: unknown }, prefix: string, resource?: string): ObjectFacts {
  const m = obj.metadata ?? {};
  const labels = ours(m.labels, prefix);
  const annotations = ours(m.annotations, prefix);
  return {
    ...(typeof m.uid === 'string' ? { uid: m.uid } : {}),
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
    ...beyondMetadata(obj, resource),
    deleting: m.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
  };
}

/**
 * What a lookup keeps of an object besides its uid, labels and annotations: a pod's service
 * account and what it reads, the claim a claim not yet provisioned clones, or what another
 * kind that reads by name names (`resource`'s: an Ingress's TLS Secrets); its controlling owner.
 */
export function beyondMetadata(obj: { metadata?: { ownerReferences?: unknown } | undefined; spec?: unknown; status?: unknown }, resource?: string): Pick<ObjectFacts, 'serviceAccountName' | 'reads' | 'controller'> {
  const spec = obj.spec as { serviceAccountName?: unknown } | undefined;
  const sa = typeof spec?.serviceAccountName === 'string' && spec.serviceAccountName !== '' ? spec.serviceAccountName : undefined;
  const reads = podReadsOf(obj.spec, obj.status) ?? claimReadsOf(obj.spec) ?? (resource === undefined ? undefined : referencedReadsOf(resource, obj));
  const controller = controllerRefOf(obj.metadata?.ownerReferences);
  return { ...(sa ? { serviceAccountName: sa } : {}), ...(reads ? { reads } : {}), ...(controller ? { controller } : {}) };
}

/** A found object as the policy reads it; never a pod whose reads were not kept (`readsNotKept`: its `reads` would read as none), which the cached reader reads live. */
export function foundLookup(f: ObjectFacts): Extract<Lookup, { state: 'found' }> {
  return {
    state: 'found',
    metadata: { ...(f.uid ? { uid: f.uid } : {}), ...(f.labels ? { labels: f.labels } : {}), ...(f.annotations ? { annotations: f.annotations } : {}) },
    ...(f.serviceAccountName ? { serviceAccountName: f.serviceAccountName } : {}),
    ...(f.reads ? { reads: f.reads } : {}),
    ...(f.controller ? { controller: f.controller } : {}),
    ...(f.stampsVerified ? { stampsVerified: true as const } : {}),
  };
}


/**
 * The labels or annotations of Deed's vocabulary (stamps/keys.ts, and the namespaces' opt-in
 * label the scope reads), nothing else under the prefix: anyone who may write an object may add `<prefix>/anything` of any size, and the
 * cache holds these facts for every object of a kind. A value past MAX_STAMP_VALUE (legitimate
 * ones are a few hundred characters) is kept as OVERSIZED, which no stamp parses or verifies:
 * the object's stamps then count as not Deed's, as any it could not read.
 */
function ours(map: Record<string, string> | undefined, prefix: string): Record<string, string> | undefined {
  if (map === undefined || map === null) return undefined;
  let out: Record<string, string> | undefined;
  for (const key in map) {
    if (!key.startsWith(prefix) || key.charCodeAt(prefix.length) !== SLASH) continue;
    const suffix = key.slice(prefix.length + 1);
    if (!SUFFIX_CODE.has(suffix) && suffix !== SCOPE_SUFFIX) continue;
    const value = map[key]!;
    (out ??= {})[key] = typeof value === 'string' && value.length <= MAX_STAMP_VALUE ? value : OVERSIZED;
  }
  return out;
}

const SLASH = '/'.charCodeAt(0);
/** `sandbox` of the opt-in label `deed.dev/sandbox` (review-scope.ts), which the namespaces' reflector keeps under the prefix `deed.dev`. */
const SCOPE_SUFFIX = SANDBOX_LABEL.slice(SANDBOX_LABEL.indexOf('/') + 1);
/** The longest stamp value kept (an attestation is about 100 characters, workspace grants a few hundred). */
export const MAX_STAMP_VALUE = 2048;
/** What an over-long value is kept as: not a value any stamp accepts. */
export const OVERSIZED = '(oversized)';

/**
 * How the lookup cache holds an object's facts, for hundreds of thousands of objects: one
 * flat string per object, the JSON of an array of the facts (JSON, so that no value can pass
 * for another field: an annotation may hold any character), Deed's stamp keys written as
 * their number in STAMP_SUFFIXES. One string costs less than half of the objects, maps and
 * strings the same facts make as records; a lookup decodes the one it reads (a microsecond
 * or two). The same object always makes the same string, so a relist keeps the record it
 * already holds for an object that did not change (reflector.ts).
 * `factsFromStored` gives the ObjectFacts a lookup reads, exactly as `factsOf` would have, but
 * for a pod that reads more than KEPT_READS_BYTES: `readsNotKept` instead of its `reads`.
 */
export type StoredFacts = string;

/** Deed's stamp vocabulary (stamps/keys.ts) under no prefix: each key's part after `<prefix>/`. */
const SUFFIXES = stampKeys('');
/** The keys under the prefix Deed writes on nearly every object, stored as their index. */
const STAMP_SUFFIXES = Object.entries(SUFFIXES).flatMap(([field, key]) => (field === 'prefix' ? [] : [key.slice(1)]));
const SUFFIX_CODE = new Map(STAMP_SUFFIXES.map((suffix, i) => [suffix, i]));

/**
 * [uid, serviceAccountName, deleting, controller [apiVersion, kind, name, uid] or 0, labels [key, value, ...], annotations [...], stamps verified,
 * a pod's reads [claims, Secrets, ConfigMaps, ResourceClaims, ResourceClaimTemplates], or 0 for none, or past KEPT_READS_BYTES [READS_NOT_KEPT, base64 of the sorted
 * Uint32Array of their hashes (readHash)], or READS_NOT_KEPT alone past MAX_HASHED_READS]; a key is a suffix's code or the suffix.
 */
type Packed = [string | 0, string | 0, 0 | 1, [string, string, string, string] | 0, Array<string | number>, Array<string | number>, 0 | 1, [string[], string[], string[], string[], string[]] | [typeof READS_NOT_KEPT, string] | 0 | typeof READS_NOT_KEPT];

/**
 * The most a pod's reads may weigh in the cache and still be kept: its names' characters and,
 * per name, ENTRY_BYTES_PER_READ (each name is an entry of the index of readers too,
 * name-readers.ts, whose own cost outweighs a short name's). A pod may name 256 of each kind
 * (read-bounds.ts), each up to 253 characters: some 260 KB twice over (record and index), so a
 * few hundred such pods of one tenant would fill the cache's budget and shed every
 * namespace's pods. Ordinary pods name a handful (the fixtures and the real workloads at most
 * 3 names, 35 characters: a weight of 179); 4 KiB keeps some 50 names of 30 characters.
 * Past it the record keeps a 32-bit hash of each name instead (readHash; at most
 * MAX_HASHED_READS, 5 KiB, some 7 KB as base64): the index of readers answers the pod as a
 * reader of every name whose hash it holds (a collision only makes it one more reader: the
 * CREATE is judged against it, never passed), and the pod itself, whose names a hash cannot
 * give, is read live when looked up (cached-reader.ts).
 */
export const KEPT_READS_BYTES = 4096;
/** What one name a pod reads weighs besides its characters (name-readers.ts estimates an index entry at this). */
export const ENTRY_BYTES_PER_READ = 48;
/** A pod's reads past KEPT_READS_BYTES, in its record: neither 0 (reads nothing) nor the names. */
const READS_NOT_KEPT = 1;
/**
 * The most names whose hashes a record keeps: what the read plan judges of one pod (256 of
 * each kind, read-bounds.ts), so what admission lets in. A pod naming more (break-glass, or
 * made before its namespace opted in) keeps no hash: it may read any name of its namespace.
 */
export const MAX_HASHED_READS = POD_READS.reduce((sum, r) => sum + r.max, 0);
/** What readsOfStored answers for a pod past MAX_HASHED_READS: any name of its namespace may be one it reads. */
export const READS_ANY_NAME = 'any name';

/**
 * The hash a pod's record keeps of one name it reads past KEPT_READS_BYTES: FNV-1a, 32 bits,
 * over `<resource>/<name>`'s UTF-16 code units. Not a cryptographic hash, and it need not be:
 * a collision only makes the pod one more reader of a name, and a tenant who wants to hold a
 * name can name it (rules/live-readers.ts), so crafting one gains nothing. It allocates
 * nothing: 0.1 µs for a name of 14 characters, 0.5 µs for one of 253 (sha256 through
 * node:crypto, 1.4 µs either way).
 */
export function readHash(resource: LookupResource, name: string): number {
  return fnv1a(name, Math.imul(fnv1a(resource, 0x811c9dc5) ^ SLASH, 0x01000193)) >>> 0;
}

/** FNV-1a's 32-bit step over `s`'s code units, from `h`. */
function fnv1a(s: string, h: number): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/** A pod's names as the record keeps them past KEPT_READS_BYTES: their hashes sorted, without repeats, as base64; READS_NOT_KEPT past MAX_HASHED_READS. */
function hashedReads(p: PodReads): [typeof READS_NOT_KEPT, string] | typeof READS_NOT_KEPT {
  if (POD_READS.reduce((n, r) => n + p[r.field].length, 0) > MAX_HASHED_READS) return READS_NOT_KEPT;
  const hashes = Uint32Array.from(POD_READS.flatMap((r) => p[r.field].map((name) => readHash(r.resource, name)))).sort();
  let n = 0;
  for (let i = 0; i < hashes.length; i++) if (i === 0 || hashes[i] !== hashes[i - 1]) hashes[n++] = hashes[i]!;
  return [READS_NOT_KEPT, Buffer.from(hashes.buffer, 0, n * 4).toString('base64')];
}

/** The hashes of a record's [READS_NOT_KEPT, base64] (copied: a Buffer's bytes need not be aligned for a Uint32Array). */
function hashesOf(base64: string): Uint32Array {
  const bytes = Buffer.from(base64, 'base64');
  const hashes = new Uint32Array(bytes.length >>> 2);
  new Uint8Array(hashes.buffer).set(bytes.subarray(0, hashes.length * 4));
  return hashes;
}

/** Whether a pod's reads weigh past KEPT_READS_BYTES. */
function readsPastBound(p: PodReads): boolean {
  let weight = 0;
  for (const r of POD_READS) for (const name of p[r.field]) if ((weight += name.length + ENTRY_BYTES_PER_READ) > KEPT_READS_BYTES) return true;
  return false;
}

/**
 * `verify`: whether the object's stamps verify with Deed's key ring (as its kind, in its
 * namespace). When they do, the attestation and the nonce, a third of what is kept, are
 * dropped and the record says they verified: the policy takes the cache's word for it
 * (ownership.ts). Stamps that do not verify are kept whole, for the policy to say why.
 */
export function storedFactsOf(obj: { metadata?: Meta | undefined; spec?: unknown; status?: unknown }, prefix: string, verify?: (f: ObjectFacts) => boolean, resource?: string): StoredFacts {
  const f = factsOf(obj, prefix, resource);
  const c = f.controller;
  const p = f.reads;
  const skip = prefix.length + 1;
  const attestation = `${prefix}${SUFFIXES.attestation}`;
  const verified = verify !== undefined && f.annotations?.[attestation] !== undefined && verify(f);
  const dropped = verified ? new Set([attestation, `${prefix}${SUFFIXES.createNonce}`]) : undefined;
  const pairs = (map: Record<string, string> | undefined) =>
    Object.entries(map ?? {}).flatMap(([key, value]) => (dropped?.has(key) ? [] : [SUFFIX_CODE.get(key.slice(skip)) ?? key.slice(skip), value]));
  const packed: Packed = [f.uid ?? 0, f.serviceAccountName ?? 0, f.deleting ? 1 : 0, c ? [c.apiVersion, c.kind, c.name, c.uid] : 0, pairs(f.labels), pairs(f.annotations), verified ? 1 : 0, p === undefined ? 0 : readsPastBound(p) ? hashedReads(p) : [p.claims, p.secrets, p.configMaps, p.resourceClaims, p.resourceClaimTemplates]];
  const stored = JSON.stringify(packed);
  // V8 builds a long JSON.stringify result as a tree of pieces (a cons string) that costs half
  // as much again as the text; reading a character flattens it into one string.
  stored.charCodeAt(0);
  return stored;
}

/**
 * The facts of the records read lately, decoded: a review reads the same few (its
 * namespace, its runner pod, its workspace claim) as the reviews before it, and decoding
 * costs more than the rest of a cached lookup. Keyed by the record itself (V8 keeps a
 * string's hash), bounded by count, oldest out first; frozen, since reviews share them.
 */
const decoded = new Map<StoredFacts, { prefix: string; facts: ObjectFacts }>();
export const DECODED_FACTS_KEPT = 512;

export function factsFromStored(stored: StoredFacts, prefix: string): ObjectFacts {
  const hit = decoded.get(stored);
  if (hit !== undefined && hit.prefix === prefix) return hit.facts;
  const facts = decodeStored(stored, prefix);
  if (decoded.size >= DECODED_FACTS_KEPT) decoded.delete(decoded.keys().next().value!);
  decoded.set(stored, { prefix, facts });
  return facts;
}

/**
 * Only what a pod's record says it reads (the index of readers, name-readers.ts): no LRU entry,
 * nothing else decoded into objects. Past KEPT_READS_BYTES the sorted hashes of its names
 * (readHash); past MAX_HASHED_READS too, READS_ANY_NAME.
 */
export function readsOfStored(stored: StoredFacts): PodReads | Uint32Array | typeof READS_ANY_NAME | undefined {
  const p = (JSON.parse(stored) as Packed)[7];
  if (p === 0) return undefined;
  if (p === READS_NOT_KEPT) return READS_ANY_NAME;
  if (p[0] === READS_NOT_KEPT) return hashesOf(p[1]);
  return unpackedReads(p);
}

/** A record's names, as packed. */
function unpackedReads(p: [string[], string[], string[], string[], string[]]): PodReads {
  return { claims: p[0], secrets: p[1], configMaps: p[2], resourceClaims: p[3], resourceClaimTemplates: p[4] };
}

function decodeStored(stored: StoredFacts, prefix: string): ObjectFacts {
  const [uid, sa, deleting, c, labels, annotations, verified, p] = JSON.parse(stored) as Packed;
  const map = (pairs: Array<string | number>) => {
    const out: Record<string, string> = {};
    for (let i = 0; i < pairs.length; i += 2) {
      const key = pairs[i]!;
      out[`${prefix}/${typeof key === 'number' ? STAMP_SUFFIXES[key]! : key}`] = String(pairs[i + 1]);
    }
    return out;
  };
  return Object.freeze({
    ...(uid !== 0 ? { uid } : {}),
    ...(labels.length > 0 ? { labels: Object.freeze(map(labels)) } : {}),
    ...(annotations.length > 0 ? { annotations: Object.freeze(map(annotations)) } : {}),
    ...(sa !== 0 ? { serviceAccountName: sa } : {}),
    ...(p === READS_NOT_KEPT || (p !== 0 && p[0] === READS_NOT_KEPT) ? { readsNotKept: true as const } : p !== 0 ? { reads: Object.freeze(unpackedReads(p)) } : {}),
    ...(c !== 0 ? { controller: Object.freeze({ apiVersion: c[0], kind: c[1], name: c[2], uid: c[3] }) } : {}),
    deleting: deleting === 1,
    ...(verified === 1 ? { stampsVerified: true as const } : {}),
  });
}
