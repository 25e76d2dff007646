// What a workload controller creates is judged when it is created (docs/security-model.md,
// "Controller doors"). A ReplicaSet's pod, a Deployment's ReplicaSet, a CronJob's Job are
// made later than their template was written, by a kube-system identity, against state
// nobody judged then: which Secret holds a name at scale-up, the pull secrets the
// ServiceAccount plugin adds, a ControllerRevision the template came from. So the object
// is judged as one of the environment of its controlling owner (the owner reference with
// `controller: true`), read from that owner's verified stamps, up the chain (a pod's
// ReplicaSet, whose stamps the deployment controller overwrites with its Deployment's
// annotations, is followed to the Deployment). It is stamped as that environment's, so the
// guards, the reaper and the audit know it. An owner Deed cannot read, one that is not the
// object the reference names, or one whose stamps do not verify (with nothing above it) is
// refused: the controller retries. An owner of no environment makes objects of none (or of
// its bound namespace's environment), judged as a requester of that standing would be.
//
// The same chain decides adoption: a change of an object's controlling owner (a controller
// adopting an orphan its selector matches, or a client writing the reference) stays within
// the object's environment. Pure: what it knows of owners comes from ctx.lookup.
import type { AdmissionRequest, KubeObject } from '../admission/types.js';
import type { Finding } from '../admission/verdict.js';
import { groupOf, type KindRow, type LookupResource, type StampRow } from './kinds.js';
import { readableRow } from './object-references.js';
import { environmentOfOwnership, ownershipOfFound, ownershipOfObject, type Ownership } from './ownership.js';
import type { ControllerRef, DecisionContext, Lookup, Policy } from './policy.js';
import type { Requester } from './requester/identity.js';
import { actsFor, isPlatform, isTrusted } from './requester/principals.js';
import { RULES } from './rules/catalog.js';
import { stampedAnnotationKeys, stampedLabelKeys } from './stamps/keys.js';

/**
 * How many owners above the direct one Deed follows: one (a pod's ReplicaSet, then its
 * Deployment; a pod's Job, then its CronJob). The server reads the owner, then its owner.
 */
export const MAX_CONTROLLER_DEPTH = 1;

/** A requester the policy lists as a workload controller (`workloadControllers`). */
export function isWorkloadController(requester: Pick<Requester, 'username'>, policy: Policy): boolean {
  return policy.controllerUsers.has(requester.username);
}

/** The one owner reference with `controller: true` (the API server allows at most one), if well formed. */
export function controllerRefOf(refs: unknown): ControllerRef | undefined {
  if (!Array.isArray(refs)) return undefined;
  for (const r of refs as unknown[]) {
    if (r === null || typeof r !== 'object') continue;
    const { apiVersion, kind, name, uid, controller } = r as Record<string, unknown>;
    if (controller !== true) continue;
    return typeof apiVersion === 'string' && typeof kind === 'string' && typeof name === 'string' && typeof uid === 'string' ? { apiVersion, kind, name, uid } : undefined;
  }
  return undefined;
}

/**
 * The same controller, named the same way (group, kind, name and uid), or none on both sides.
 * The version is not compared: a reference rewritten from `apps/v1beta2` to `apps/v1` names the
 * same owner (stamps/identity-stamps.ts `sameReference` compares Deed's own owner reference whole).
 */
export function sameController(a: ControllerRef | undefined, b: ControllerRef | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.uid === b.uid && a.kind === b.kind && a.name === b.name && groupOf(a.apiVersion) === groupOf(b.apiVersion);
}

/** An owner reference of an object, well formed, with its index and its flags. */
export type OwnerReference = ControllerRef & { index: number; controller: boolean; blockOwnerDeletion: boolean };

/** The well-formed owner references of `obj`, controller or not, with their index. */
export function ownerReferencesOf(obj: KubeObject | null | undefined): OwnerReference[] {
  const refs: unknown = obj?.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return [];
  const out: OwnerReference[] = [];
  (refs as unknown[]).forEach((r, index) => {
    if (r === null || typeof r !== 'object') return;
    const { apiVersion, kind, name, uid, controller, blockOwnerDeletion } = r as Record<string, unknown>;
    if (typeof apiVersion === 'string' && typeof kind === 'string' && typeof name === 'string' && typeof uid === 'string')
      out.push({ apiVersion, kind, name, uid, index, controller: controller === true, blockOwnerDeletion: blockOwnerDeletion === true });
  });
  return out;
}

/** A blocking owner reference, with its index and whether it is the controller's. */
export type BlockingOwner = ControllerRef & { index: number; controller: boolean };

/** The owner references of `obj` that hold their owner's foreground deletion (`blockOwnerDeletion: true`), the controller's too, with their index. */
export function blockingOwnerReferences(obj: KubeObject | null | undefined): BlockingOwner[] {
  return ownerReferencesOf(obj)
    .filter((r) => r.blockOwnerDeletion)
    .map(({ apiVersion, kind, name, uid, index, controller }) => ({ apiVersion, kind, name, uid, index, controller }));
}

/**
 * The blocking owner references `obj` has that `before` did not (or not as blocking), of any
 * kind: the garbage collector finds an owner's dependents by uid whatever kind the reference
 * gives, and never deletes one whose owner's kind it cannot resolve (rules/reference-scope.ts
 * judges them; the read plan reads the owners of kinds Deed reads).
 */
export function addedBlockingOwners(obj: KubeObject | null | undefined, before: KubeObject | null | undefined): BlockingOwner[] {
  const key = (r: BlockingOwner) => `${r.uid}/${r.apiVersion}/${r.kind}/${r.name}/${r.controller}`;
  const kept = new Set(blockingOwnerReferences(before).map(key));
  return blockingOwnerReferences(obj).filter((r) => !kept.has(key(r)));
}

export function controllerOf(obj: KubeObject | null | undefined): ControllerRef | undefined {
  return controllerRefOf(obj?.metadata?.ownerReferences);
}

/** The kind-table row an owner reference names, when Deed reads it as an owner (a row with a lookup, not read as a reference's target only). */
function ownerRow(ref: ControllerRef): (KindRow & { lookup: string }) | undefined {
  const row = readableRow(groupOf(ref.apiVersion), ref.kind);
  return row?.readAsTargetOnly === true ? undefined : row;
}

/**
 * The read that answers whose the object a controller reference names is: of the reference's
 * uid, so a cached record of an owner deleted and made again under its name is read again,
 * not taken for the owner the reference names.
 */
export function ownerLookupKey(ref: ControllerRef | undefined, namespace: string): { resource: LookupResource; namespace: string; name: string; uid?: string } | undefined {
  const row = ref === undefined ? undefined : ownerRow(ref);
  return row === undefined ? undefined : { resource: row.resource as LookupResource, namespace, name: ref!.name, ...ofUid(ref!.uid) };
}

/** A key's `uid`, where the reference gives one. */
export function ofUid(uid: string | undefined): { uid: string } | Record<string, never> {
  return typeof uid === 'string' && uid !== '' ? { uid } : {};
}

/** Whose a controller-made object is: an environment, none, or a finding that refuses it. */
export type MadeFor = { environment: string | undefined } | { finding: Finding };

/**
 * The environment of the object `ref` names, up the chain. `what` says what is being decided
 * (for messages). An unowned object with no controller is of its bound namespace's
 * environment, or of none. An owner of a kind Deed does not read is refused (adoption), or,
 * for what a listed controller creates (`unread: 'unowned'`), an operator's own resource: the
 * object is of the bound namespace's environment or of none, as an unowned one.
 */
export function environmentOfController(ref: ControllerRef | undefined, namespace: string, what: string, ctx: DecisionContext, rule = RULES.guardControllerOwner.id, unread: 'refused' | 'unowned' = 'refused'): MadeFor {
  const bound = ctx.policy.envByBoundNamespace.get(namespace);
  let current = ref;
  for (let depth = 0; current !== undefined; depth++) {
    const name = `${current.kind} ${namespace}/${current.name}`;
    const read = readOwner(current, namespace, ctx);
    if (read.kind === 'unread') {
      if (unread === 'unowned') return { environment: bound };
      return { finding: { rule, message: `${what}: its controlling owner is a ${current.kind} (${current.apiVersion}), whose stamps Deed does not read; an operator that makes or adopts objects for its own resources is listed in systemPrincipals` } };
    }
    if (read.kind === 'unknown') return { finding: { rule, message: `cannot tell whose ${name} is (${read.reason}); refusing ${what}` } };
    if (read.kind === 'absent') return { finding: { rule, message: `${what}: its controlling owner ${name} does not exist` } };
    if (read.kind === 'replaced') return { finding: { rule, message: `${what}: its controlling owner ${name} is another object than the reference names (uid ${read.uid}, not ${current.uid})` } };
    const { found, owner } = read;
    if (owner.kind === 'stamped' || owner.kind === 'runner' || owner.kind === 'bound') return { environment: owner.environment };
    // An unstamped owner is of its own controlling owner's environment, where Deed reads that as
    // an environment's: what a listed operator makes for an environment's object it makes
    // unstamped (cert-manager's ingress-shim, a Certificate for alpha's Ingress), and what it
    // then makes for that (the Certificate's Secret) is the Ingress's environment's. Whoever may
    // write that reference was judged for it (rules/reference-scope.ts, guard.adoption).
    // Anything else above it (unread, gone, unstamped) leaves it of no environment, as before.
    if (owner.kind === 'unowned') {
      const above = found.controller !== undefined && depth < MAX_CONTROLLER_DEPTH ? environmentAbove(found.controller, namespace, ctx) : undefined;
      return { environment: above ?? bound };
    }
    // Stamps that do not verify: a ReplicaSet carrying its Deployment's copied annotations is
    // its Deployment's; anything else is refused.
    if (found.controller === undefined || depth >= MAX_CONTROLLER_DEPTH)
      return { finding: { rule, message: `${what}: its controlling owner ${name} carries stamps that do not verify (${owner.reason})` } };
    current = found.controller;
  }
  return { environment: bound };
}

/** The environment of an unstamped owner's own controlling owner, where Deed reads it as one's; undefined for anything else. */
function environmentAbove(ref: ControllerRef, namespace: string, ctx: DecisionContext): string | undefined {
  const read = readOwner(ref, namespace, ctx);
  return read.kind === 'found' ? environmentOfOwnership(read.owner) : undefined;
}

/** The object a controller reference names, as the lookup answers it: read and whose it is, or why not. */
type OwnerRead =
  | { kind: 'unread' }
  | { kind: 'unknown'; reason: string }
  | { kind: 'absent' }
  | { kind: 'replaced'; uid: string }
  | { kind: 'found'; found: Extract<Lookup, { state: 'found' }>; owner: Ownership };

function readOwner(ref: ControllerRef, namespace: string, ctx: DecisionContext): OwnerRead {
  const row = ownerRow(ref);
  if (row === undefined) return { kind: 'unread' };
  const found = ctx.lookup.get(row.resource as LookupResource, namespace, ref.name);
  if (found.state !== 'found') return found.state === 'unknown' ? { kind: 'unknown', reason: found.reason } : { kind: 'absent' };
  // Of the reference's uid: one deleted and made again under its name is another object.
  if (found.metadata.uid !== undefined && found.metadata.uid !== ref.uid) return { kind: 'replaced', uid: found.metadata.uid };
  return { kind: 'found', found, owner: ownershipOfFound(found, row.kind, namespace, ctx.policy, ctx.keyRing) };
}

/**
 * Whose an object a listed controller creates is (environmentOfController): an owner of a kind
 * Deed does not read is the operator's own resource, whose objects are unowned ones.
 */
export function environmentOfControllerMade(ref: ControllerRef | undefined, namespace: string, what: string, ctx: DecisionContext): MadeFor {
  return environmentOfController(ref, namespace, what, ctx, RULES.guardControllerOwner.id, 'unowned');
}

/**
 * The stamps of a controller-made object: the environment's labels, a nonce and an
 * attestation, but no owner reference to a runner (its controller owns it), no deadline
 * and no expiry (its workload's lifetime is its own).
 */
export function controllerMadeRow<R extends StampRow>(row: R): R {
  return { ...row, ownerReference: false, activeDeadline: false, expiresAt: false };
}

/**
 * The object as Deed stamps it: without the stamps it arrived with. They are never the
 * controller's claim: a template carries none Deed wrote (stamp.template), and the
 * deployment controller copies its Deployment's annotations onto each ReplicaSet.
 */
export function withoutStamps(obj: KubeObject, policy: Policy): KubeObject {
  const drop = (map: Record<string, string> | undefined, keys: readonly string[]) => {
    if (map === undefined) return undefined;
    const out = { ...map };
    for (const k of keys) delete out[k];
    return out;
  };
  const labels = drop(obj.metadata.labels, stampedLabelKeys(policy.keys));
  const annotations = drop(obj.metadata.annotations, stampedAnnotationKeys(policy.keys));
  return { ...obj, metadata: { ...obj.metadata, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
}

/**
 * The requester a controller-made object is judged as: the controller, acting for its
 * owner's environment (or none), with no runner and no service account of its own.
 */
export function actingFor(requester: Requester, environment: string | undefined): Requester {
  return { username: requester.username, groups: requester.groups, environment: environment === undefined ? { kind: 'none' } : { kind: 'one', id: environment } };
}

/** Whether a change of controller `requester` writes is judged: a trusted principal's is not, unless it is a workload controller's (the read plan asks too). */
export function judgesAdoptionBy(requester: Requester, policy: Policy): boolean {
  return !isTrusted(requester, policy) || isWorkloadController(requester, policy);
}

/**
 * The adoption findings of an UPDATE that carries both sides, of the object or of any of its
 * subresources: the status strategies of Services, claims and workloads keep owner-reference
 * changes; where a strategy resets metadata (pods' subresources, a custom resource's status)
 * the object the validating webhook sees shows none.
 */
export function adoptionOfUpdate(req: AdmissionRequest, kind: string, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  return req.operation === 'UPDATE' && req.object && req.oldObject ? adoptionFindings(req.oldObject, req.object, kind, namespace, requester, ctx) : [];
}

/**
 * Adoption and release: an UPDATE that changes the object's controlling owner reference
 * to a workload of another environment than the object's is refused, from anyone but
 * system principals and break-glass. Releasing (removing the reference) is the object's
 * own guarded write.
 */
export function adoptionFindings(oldObj: KubeObject, newObj: KubeObject, kind: string, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  const before = controllerOf(oldObj);
  const after = controllerOf(newObj);
  // Controllers compare owners by uid alone (the job controller's claim of a pod), so a
  // reference that keeps the uid but names another kind or name is a change of controller too.
  if (after === undefined || sameController(before, after)) return [];
  if (!judgesAdoptionBy(requester, ctx.policy)) return [];
  return ownerOfOtherEnvironment(oldObj, after, 'metadata.ownerReferences', true, kind, namespace, requester, ctx);
}

/**
 * The owner references other than the controller's that a workload controller's UPDATE adds
 * (judgeControllerWrite): the garbage collector deletes an object once every owner it names is
 * gone, so a controller's reference onto another environment's object puts it at the mercy of
 * whoever deletes the owner. The statefulset controller of Kubernetes 1.28 to 1.30 writes its
 * StatefulSet as a plain owner onto whatever claim stands under a claim template's name
 * (`persistentVolumeClaimRetentionPolicy`, kubernetes#122400; a controller reference from 1.31,
 * which adoptionFindings judges): beta's StatefulSet named to match alpha's claim, then deleted,
 * had alpha's claim deleted with it (reviewer-104 F1). A client's own references are
 * rules/reference-scope.ts's: it writes only objects of its environment.
 */
export function addedOwnerFindings(oldObj: KubeObject, newObj: KubeObject, kind: string, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  if (!judgesAdoptionBy(requester, ctx.policy)) return [];
  return addedOwners(oldObj, newObj).flatMap((r) => ownerOfOtherEnvironment(oldObj, r, `metadata.ownerReferences[${r.index}]`, false, kind, namespace, requester, ctx));
}

/** The owner references other than the controller's that `newObj` has and `oldObj` did not (by uid, group, kind and name). */
export function addedOwners(oldObj: KubeObject | null | undefined, newObj: KubeObject | null | undefined): OwnerReference[] {
  const key = (r: OwnerReference) => `${r.uid}/${groupOf(r.apiVersion)}/${r.kind}/${r.name}`;
  const kept = new Set(ownerReferencesOf(oldObj).map(key));
  return ownerReferencesOf(newObj).filter((r) => !r.controller && !kept.has(key(r)));
}

/**
 * Whether `owner`, written onto `oldObj` as its controller (`controller`) or a plain owner, is of
 * another environment than the object: one of no environment is given none, nor one of an
 * environment an owner of another or of none (the findings of guard.adoption).
 */
function ownerOfOtherEnvironment(oldObj: KubeObject, owner: ControllerRef, path: string, controller: boolean, kind: string, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  const object = ownershipOfObject(oldObj, kind, namespace, ctx.policy, ctx.keyRing);
  const objectEnv = environmentOfOwnership(object);
  const name = `${kind} ${namespace}/${oldObj.metadata.name ?? ''}`;
  const what = controller ? 'the controller' : 'an owner';
  const made = environmentOfController(owner, namespace, `the adoption of ${name}`, ctx, RULES.guardAdoption.id);
  if ('finding' in made) return [controller ? made.finding : { ...made.finding, path }];
  if (object.kind === 'unverifiable') return [{ rule: RULES.guardAdoption.id, path, message: `${name} carries stamps that do not verify; it may not be given ${controller ? 'a controller' : 'an owner'}` }];
  const consequence = controller ? 'its controller would count, delete or complete with it' : 'the garbage collector would delete it once its owners are gone';
  if (objectEnv === undefined || objectEnv === made.environment) {
    // A write names as controller only what its writer may reference, as at CREATE
    // (rules/reference-scope.ts): an environment's controller counts, deletes and completes
    // with what names its uid, so an object of no environment is no way in, by a client's
    // write nor by a controller's adoption (a Job's selector is its uid, not an environment).
    // A workload controller adopts for its owner: only the object of no environment is refused it.
    if (made.environment === undefined || objectEnv !== undefined || actsFor(requester, made.environment, ctx.policy) || isPlatform(requester, ctx.policy)) return [];
    return [{ rule: RULES.guardAdoption.id, path, message: `${owner.kind} ${namespace}/${owner.name} belongs to another environment than ${requester.username} acts for; it may not become ${what} of ${name} (${consequence})` }];
  }
  return [
    {
      rule: RULES.guardAdoption.id,
      path,
      message: `${name} is not of the environment of ${owner.kind} ${namespace}/${owner.name}${made.environment === undefined ? ' (of no environment)' : ''}; it may not become ${controller ? 'its controller' : 'an owner of it'}${controller ? '' : ` (${consequence})`}`,
    },
  ];
}
