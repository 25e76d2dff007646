// The objects that name another by name for as long as they live, and whose follower acts on
// whatever stands under that name (the kind table's `followsByName`): an EndpointSlice or an
// Endpoints routes the Service of its name, an Ingress or a Gateway API route sends traffic to
// the Services it names, an HPA scales the workload its scaleTargetRef names. What each names is what the kind table's
// references say it names (objectReferences, referenceReads), read the same way as where the
// reference is judged when written (rules/reference-scope.ts): one table of kinds.
import type { KubeObject } from '../admission/types.js';
import { kindRows, type KindRow, type LookupResource } from './kinds.js';
import { objectReferences, referenceReads, type ObjectReference } from './object-references.js';
import { isRec } from './unstructured.js';
import type { Reader } from './policy.js';

/** The rows whose live objects name objects of `resource` and are followed there (`followsByName`); empty for a resource none does. */
export function referringKinds(resource: string): readonly KindRow[] {
  let rows = REFERRING.get(resource);
  if (rows === undefined) REFERRING.set(resource, (rows = kindRows().filter((r) => r.followsByName?.includes(resource) === true)));
  return rows;
}
/** referringKinds' answers, per resource: asked on every CREATE of a Service or a workload. */
const REFERRING = new Map<string, readonly KindRow[]>();

/** Whether a live object of another kind names `resource`'s objects and is followed there: their CREATE is judged against those (rules/live-readers.ts). */
export function isReferredTarget(resource: string): resource is LookupResource {
  return referringKinds(resource).length > 0;
}

/**
 * The reference by which `obj`, an object of `row` in `namespace`, names `resource` `name` in
 * `targetNamespace` (by default its own), if it does: the first of its references (as the kind
 * table reads them) whose read is that object.
 */
export function referenceNaming(row: Pick<KindRow, 'group' | 'resource'>, obj: KubeObject | null | undefined, namespace: string, resource: string, name: string, targetNamespace = namespace): ObjectReference | undefined {
  for (const ref of objectReferences(row, obj)) {
    const read = referenceReads([ref], namespace)[0];
    if (read !== undefined && read.resource === resource && read.namespace === targetNamespace && read.name === name) return ref;
  }
  return undefined;
}

/**
 * `obj`, an object of `row` standing in namespace `at`, as a referrer of `target` (where it names
 * it, and where it stands when that is another namespace), if one of its references names it;
 * what is kept of the object itself (`found`) is the caller's.
 */
export function referrerOf(row: Pick<KindRow, 'group' | 'resource' | 'kind'>, obj: KubeObject, at: string, target: { resource: string; namespace: string; name: string }): Omit<Reader, 'found'> | undefined {
  const name = obj.metadata?.name;
  const ref = name === undefined ? undefined : referenceNaming(row, obj, at, target.resource, target.name, target.namespace);
  if (name === undefined || ref === undefined) return undefined;
  return { kind: row.kind, name, reference: { path: ref.path, follower: ref.follower }, ...(at !== target.namespace ? { namespace: at } : {}) };
}

/**
 * Whether `row`'s objects name `resource`'s from any namespace (`followsAcrossNamespaces`): its
 * referrers are then listed cluster-wide. `admitted`, when the named object is known (a read
 * plan's key, admittedAcross): only the referring kinds it admits from other namespaces.
 */
export function followsAcross(row: Pick<KindRow, 'followsAcrossNamespaces' | 'resource'>, resource: string, admitted?: readonly string[]): boolean {
  return row.followsAcrossNamespaces?.includes(resource) === true && (admitted === undefined || admitted.includes(row.resource));
}

/**
 * The referring kinds (their resources) whose objects in other namespaces `obj`, a Gateway or
 * ListenerSet of `resource`, admits, and its gateway controller follows: routes where one of its
 * listeners' `allowedRoutes.namespaces.from` is `All` or `Selector` (the default, `Same`, takes
 * only routes of the parent's own namespace), and for a Gateway the ListenerSets where its
 * `allowedListeners.namespaces.from` is (the default, `None`, takes none; `Same`, its own
 * namespace's). A value Deed does not know, or a listener it cannot read, admits every
 * namespace: the cluster-wide list is what was read before. A namespace selector is taken as
 * every namespace (a namespace's labels may change later, unreviewed by Deed).
 */
export function admittedAcross(resource: string, obj: unknown): string[] {
  const across = referringKinds(resource).filter((r) => followsAcross(r, resource));
  if (across.length === 0) return [];
  const spec = isRec(obj) && isRec(obj.spec) ? obj.spec : undefined;
  // Absent at each level: the default (routes: `Same`; ListenerSets: `None`).
  const wide = (allowed: unknown, narrow: readonly string[]): boolean => {
    if (allowed === undefined) return false;
    if (!isRec(allowed)) return true;
    const { namespaces } = allowed;
    if (namespaces === undefined) return false;
    if (!isRec(namespaces)) return true;
    return !(namespaces.from === undefined || (typeof namespaces.from === 'string' && narrow.includes(namespaces.from)));
  };
  const listeners = spec?.listeners;
  const routes = listeners !== undefined && (!Array.isArray(listeners) || listeners.some((l) => !isRec(l) || wide(l.allowedRoutes, ['Same'])));
  const sets = resource === 'gateways' && wide(spec?.allowedListeners, ['Same', 'None']);
  return across.filter((r) => (LISTENER_SETS.has(r.resource) ? sets : routes)).map((r) => r.resource);
}
/** The kinds that add listeners to a Gateway (its `allowedListeners`); the other referrers of a parent are routes (its listeners' `allowedRoutes`). */
const LISTENER_SETS: ReadonlySet<string> = new Set(['listenersets', 'xlistenersets']);

/** Whether `row`'s objects name `resource`'s in another namespace where a ReferenceGrant there consents (`followsByGrant`). */
export function followsByGrant(row: Pick<KindRow, 'followsByGrant'>, resource: string): boolean {
  return row.followsByGrant?.includes(resource) === true;
}

/**
 * The namespaces whose objects of `row` the ReferenceGrants of a namespace (`grants`, as listed)
 * let name its `target` object `name` (Gateway API: a grant's `from` gives a group, kind and
 * namespace; its `to` a group, kind and optional name).
 */
export function grantedNamespaces(grants: readonly unknown[], row: Pick<KindRow, 'group' | 'kind'>, target: { group: string; kind: string }, name: string): string[] {
  const out = new Set<string>();
  for (const grant of grants) {
    const spec = isRec(grant) && isRec(grant.spec) ? grant.spec : undefined;
    const to = Array.isArray(spec?.to) ? spec.to : [];
    const admits = to.some((t) => isRec(t) && (t.group ?? '') === target.group && t.kind === target.kind && (t.name === undefined || t.name === '' || t.name === name));
    if (!admits) continue;
    for (const from of Array.isArray(spec?.from) ? spec.from : [])
      if (isRec(from) && (from.group ?? '') === row.group && from.kind === row.kind && typeof from.namespace === 'string' && from.namespace !== '') out.add(from.namespace);
  }
  return [...out];
}
