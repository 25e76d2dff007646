// What an object points at: the other objects its fields name, read from the kind table's
// `references` (kinds.ts), with the field path each stands at. Pure: object in, references
// out. The read plan (lookup.ts) reads the objects named, the reference-scope rule
// (rules/reference-scope.ts) judges them; both take them from here, so a reference the rule
// judges is always one the plan read.
import type { KubeObject } from '../admission/types.js';
import { quoted } from '../admission/verdict.js';
import { CERT_MANAGER, groupOf, kindRow, kindRowNamed, type KindRow, type LookupResource, type ReferenceFacts } from './kinds.js';
import { entryOf, field, isRec, stringMap, text, valuesAt, type Rec } from './unstructured.js';

/** One object a field names. */
export interface ObjectReference {
  /** The kind named, by API group and kind name. */
  group: string;
  kind: string;
  name: string;
  /** The namespace it is named in, where the reference gives one other than the object's own (a Gateway API reference's `namespace`). */
  namespace?: string;
  /** The field that names it, with list indexes (`spec.rules[0].http.paths[1].backend.service.name`). */
  path: string;
  /** Who acts on the object named. */
  follower: string;
  /** The follower writes into it, creating it when absent (a Certificate's Secret): kinds.ts `ReferenceFacts.writes`. */
  writes?: true;
  /** With `writes`: the follower merges into it and creates none (kinds.ts `ReferenceFacts.mergesWhen`), so it must exist. */
  merges?: true;
  /** With `writes`: the follower creates it with no owner reference (kinds.ts `ReferenceFacts.createsUnowned`): for an environment it must exist. */
  createsUnowned?: true;
  /** The follower changes the object named (kinds.ts `ReferenceFacts.changes`): the platform's is no environment's to have changed. */
  changes?: true;
  /** A label selector chooses the objects (kinds.ts `ReferenceFacts.selects`): `name` is the selector as written (so an UPDATE that changes it is judged again), not a name. */
  selects?: true;
  /** Keys whose fields the table does not list (kinds.ts `unlisted-keys`): `name` is what they hold as written (so an UPDATE that changes it is judged again), not a name. */
  unlisted?: true;
  /** The follower reads it for as long as the object lives (kinds.ts `ReferenceFacts.readsLive`): a CREATE under the name is judged against the object. */
  readsLive?: true;
  /** It may name one that does not exist: a later CREATE under the name is judged against the referrer (kinds.ts `ReferenceFacts.mayNameAbsent`). */
  mayNameAbsent?: true;
}

/**
 * At most this many distinct objects are read for the references of one object: an Ingress
 * that names more is refused for the rest (unknown) rather than fanning out without bound.
 */
export const MAX_REFERENCE_READS = 32;

/** The references of an object of the resource's row (none for a kind without `references`). */
export function objectReferences(resource: { group: string; resource: string }, obj: KubeObject | null | undefined): ObjectReference[] {
  return referencesOf(obj, kindRow(resource)?.references ?? []);
}

function referencesOf(obj: KubeObject | null | undefined, facts: readonly ReferenceFacts[]): ObjectReference[] {
  if (!obj || !isRec(obj)) return [];
  return facts.flatMap((f) => referencesAt(obj as unknown as Rec, f));
}

/**
 * The references an UPDATE adds or changes: those of the new object that the old one did not
 * make, in the fields an UPDATE can change (the API server refuses a change of the others).
 */
export function changedReferences(resource: { group: string; resource: string }, oldObj: KubeObject | null | undefined, newObj: KubeObject | null | undefined): ObjectReference[] {
  const facts = kindRow(resource)?.references?.filter((f) => f.immutable !== true);
  if (facts === undefined || facts.length === 0) return [];
  const before = new Set(referencesOf(oldObj, facts).map(referenceKey));
  return referencesOf(newObj, facts).filter((r) => !before.has(referenceKey(r)));
}

/** A reference's identity: where it stands and what it names. */
export const referenceKey = (r: ObjectReference) => `${r.path}\u0000${r.group}\u0000${r.kind}\u0000${r.namespace ?? ''}\u0000${r.name}\u0000${r.merges === true ? 'merges' : ''}`;

/** The row Deed reads a referenced kind by, if it reads it at all (a namespaced row with a lookup). */
export function readableRow(group: string, kind: string): (KindRow & { lookup: string }) | undefined {
  const row = kindRowNamed(group, kind);
  return row?.lookup !== undefined && row.namespaced ? (row as KindRow & { lookup: string }) : undefined;
}

/** The distinct objects to read for a list of references, each in the namespace it is named in, bounded; kinds Deed does not read are left out. */
export function referenceReads(refs: ObjectReference[], namespace: string): Array<{ resource: LookupResource; namespace: string; name: string }> {
  const seen = new Set<string>();
  const out: Array<{ resource: LookupResource; namespace: string; name: string }> = [];
  for (const r of refs) {
    const row = r.selects === true || r.unlisted === true ? undefined : readableRow(r.group, r.kind); // a selector, or an unlisted key, names nothing to read
    if (row === undefined) continue;
    const at = r.namespace ?? namespace;
    const key = `${row.resource}/${at}/${r.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ resource: row.resource as LookupResource, namespace: at, name: r.name });
  }
  return out.slice(0, MAX_REFERENCE_READS);
}

/** The name the object's controlling owner reference carries, as a reference to `facts.kind`, unless that reference is to `facts.kind` itself (the parent). */
function controllerName(obj: Rec, facts: ReferenceFacts): ObjectReference[] {
  const owners = field(isRec(obj.metadata) ? obj.metadata : {}, 'ownerReferences');
  if (!Array.isArray(owners) || facts.kind === undefined) return [];
  const at = owners.findIndex((o) => isRec(o) && field(o, 'controller') === true);
  const ref = owners[at] as Rec | undefined;
  const name = ref === undefined ? undefined : text(ref, 'name');
  if (ref === undefined || name === undefined || name === '') return [];
  if (text(ref, 'kind') === facts.kind.kind && groupOf(text(ref, 'apiVersion') ?? '') === facts.kind.group) return [];
  return [{ ...facts.kind, name, path: `${facts.path}[${at}].name`, follower: facts.follower, ...(facts.mayNameAbsent === true ? { mayNameAbsent: true as const } : {}) }];
}

function referencesAt(obj: Rec, facts: ReferenceFacts): ObjectReference[] {
  if (facts.by === 'label') {
    const value = facts.label === undefined ? undefined : entryOf(stringMap(isRec(obj.metadata) ? obj.metadata : undefined, 'labels'), facts.label);
    return value === undefined || value === '' || facts.kind === undefined ? [] : [{ ...facts.kind, name: value, path: `metadata.labels["${facts.label}"]`, follower: facts.follower, ...(facts.changes === true ? { changes: true as const } : {}) }];
  }
  if (facts.by === 'issuer-annotations') return issuerAnnotations(stringMap(isRec(obj.metadata) ? obj.metadata : undefined, 'annotations'), facts.follower);
  if (facts.by === 'unlisted-keys') return unlistedKeys(obj, facts);
  if (facts.by === 'controller-name') return controllerName(obj, facts);
  const out: ObjectReference[] = [];
  const merges = facts.mergesWhen !== undefined && facts.mergesWhen.values.includes(String(valuesAt(obj, facts.mergesWhen.path)[0]?.value));
  const writes = {
    ...(facts.writes === true ? { writes: true as const, ...(merges ? { merges: true as const } : {}), ...(facts.createsUnowned === true ? { createsUnowned: true as const } : {}) } : {}),
    ...(facts.changes === true ? { changes: true as const } : {}),
  };
  for (const { value, at: path } of valuesAt(obj, facts.path)) {
    if (facts.selects === true) {
      // Any selector, even `{}` (every object): which it chooses is not known at admission.
      if (isRec(value) && facts.kind !== undefined) out.push({ ...facts.kind, name: JSON.stringify(value), path, follower: facts.follower, selects: true });
      continue;
    }
    if (facts.by === 'name') {
      if (typeof value === 'string' && value !== '' && facts.kind !== undefined) out.push({ ...facts.kind, name: value, path, follower: facts.follower, ...writes, ...(facts.readsLive === true ? { readsLive: true as const } : {}), ...(facts.mayNameAbsent === true ? { mayNameAbsent: true as const } : {}) });
      continue;
    }
    const ref =
      facts.by === 'gateway-ref' ? gatewayReference(value, facts.kind) : facts.by === 'local-ref' ? localReference(value, facts.kind) : facts.by === 'analysis-ref' ? analysisReference(value) : typedReference(value, facts.kind);
    if (ref !== undefined) out.push({ ...ref, path, follower: facts.follower, ...writes, ...(facts.readsLive === true ? { readsLive: true as const } : {}) });
  }
  // Absent or empty, the follower takes the object's own name (an ExternalSecret's target).
  if (facts.orOwnName === true && out.length === 0 && facts.kind !== undefined && isRec(obj.metadata)) {
    const own = text(obj.metadata, 'name');
    if (own !== undefined && own !== '') out.push({ ...facts.kind, name: own, path: facts.path, follower: facts.follower, ...writes });
  }
  return out;
}

/**
 * A reference that is always to the object's own namespace, `{name, kind?, group?}`: an
 * absent or empty kind or group is the row's default (cert-manager's issuerRef reads
 * `group: ""` as cert-manager.io; KEDA's authenticationRef has no group). A namespace it holds
 * is ignored, as its follower ignores it. Another group (an external issuer's kind) is
 * returned as given.
 */
function localReference(value: unknown, defaults: { group: string; kind: string } | undefined): { group: string; kind: string; name: string } | undefined {
  if (!isRec(value) || defaults === undefined) return undefined;
  const name = text(value, 'name');
  if (name === undefined || name === '') return undefined;
  const kind = text(value, 'kind');
  const group = text(value, 'group');
  return { group: group === undefined || group === '' ? defaults.group : group, kind: kind === undefined || kind === '' ? defaults.kind : kind, name };
}

/** An Argo Rollouts analysis template reference, `{templateName, clusterScope?}`: a ClusterAnalysisTemplate with clusterScope, else an AnalysisTemplate of the object's namespace. */
function analysisReference(value: unknown): { group: string; kind: string; name: string } | undefined {
  if (!isRec(value)) return undefined;
  const name = text(value, 'templateName');
  if (name === undefined || name === '') return undefined;
  return { group: 'argoproj.io', kind: field(value, 'clusterScope') === true ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate', name };
}

/**
 * One reference for the keys of each object at `facts.path` that `facts.listed` does not name,
 * at the first of them: the table lists no field of theirs, so what they name cannot be
 * found. Its `name` is those keys with what they hold, as written.
 */
function unlistedKeys(obj: Rec, facts: ReferenceFacts): ObjectReference[] {
  const listed = new Set(facts.listed ?? []);
  const out: ObjectReference[] = [];
  for (const { value, at } of valuesAt(obj, facts.path)) {
    if (!isRec(value) || facts.kind === undefined) continue;
    const unlisted = Object.keys(value).filter((k) => !listed.has(k));
    if (unlisted.length === 0) continue;
    const first = unlisted[0]!;
    const path = /^[A-Za-z0-9_-]+$/.test(first) ? `${at}.${first}` : `${at}[${quoted(first)}]`;
    out.push({ ...facts.kind, name: JSON.stringify(unlisted.map((k) => [k, value[k]])), path, follower: facts.follower, unlisted: true });
  }
  return out;
}

const SHIM_ISSUER = 'cert-manager.io/issuer';
const SHIM_CLUSTER_ISSUER = 'cert-manager.io/cluster-issuer';

/**
 * The issuer cert-manager's ingress-shim names in the Certificate it makes for an Ingress or a
 * Gateway, read as the shim reads it: `cert-manager.io/issuer` is an Issuer's name,
 * `cert-manager.io/cluster-issuer` a ClusterIssuer's, and `cert-manager.io/issuer-kind` and
 * `cert-manager.io/issuer-group`, when present, replace the kind and group of either (an empty
 * one is cert-manager's default, an Issuer of cert-manager.io). Both names given is an error
 * to the shim; each is judged all the same.
 */
function issuerAnnotations(annotations: Record<string, string>, follower: string): ObjectReference[] {
  const kind = entryOf(annotations, 'cert-manager.io/issuer-kind');
  const group = entryOf(annotations, 'cert-manager.io/issuer-group');
  const out: ObjectReference[] = [];
  for (const [key, named] of [[SHIM_ISSUER, 'Issuer'], [SHIM_CLUSTER_ISSUER, 'ClusterIssuer']] as const) {
    const name = entryOf(annotations, key);
    if (name === undefined || name === '') continue;
    out.push({
      group: group === undefined || group === '' ? CERT_MANAGER : group,
      kind: kind === undefined ? named : kind === '' ? 'Issuer' : kind,
      name,
      path: `metadata.annotations["${key}"]`,
      follower,
    });
  }
  return out;
}

/**
 * `{group?, kind?, name, namespace?}` (Gateway API's BackendObjectReference and
 * SecretObjectReference): an absent group or kind is the row's default (`group: ""` is the
 * core group, as the API says), an absent namespace the object's own. A kind or group Deed
 * does not read (a ServiceImport, `group: core`) is returned as given, and judged as such.
 */
function gatewayReference(value: unknown, defaults: { group: string; kind: string } | undefined): { group: string; kind: string; name: string; namespace?: string } | undefined {
  if (!isRec(value) || defaults === undefined) return undefined;
  const name = text(value, 'name');
  if (name === undefined || name === '') return undefined;
  const kind = text(value, 'kind');
  const namespace = text(value, 'namespace');
  return {
    group: text(value, 'group') ?? defaults.group,
    kind: kind === undefined || kind === '' ? defaults.kind : kind,
    name,
    ...(namespace !== undefined && namespace !== '' ? { namespace } : {}),
  };
}

/**
 * `{apiVersion, kind, name}` (a scale target) or `{apiGroup, kind, name}` (a TypedLocalObjectReference).
 * With `defaults` (a KEDA scaleTargetRef), an absent or empty apiVersion names the defaults'
 * group and an absent or empty kind their kind, as the follower reads it; without, a reference
 * that gives no kind names nothing.
 */
function typedReference(value: unknown, defaults?: { group: string; kind: string }): { group: string; kind: string; name: string } | undefined {
  if (!isRec(value)) return undefined;
  const given = text(value, 'kind');
  const kind = given === undefined || given === '' ? defaults?.kind : given;
  const name = text(value, 'name');
  if (kind === undefined || name === undefined || name === '') return undefined;
  const apiVersion = text(value, 'apiVersion');
  const defaulted = defaults !== undefined && (apiVersion === undefined || apiVersion === '');
  const group = defaulted ? defaults.group : apiVersion !== undefined ? groupOf(apiVersion) : (text(value, 'apiGroup') ?? '');
  return { group, kind, name };
}
