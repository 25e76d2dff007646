// The keys of the objects a review reads besides the request, and how the doors' reviews
// (doors/) work them out from what a request names: the controlling owner of a new object,
// the claims, Secrets, ConfigMaps and service accounts it names, its run lease, what the kind
// table's references name. The read plan (lookup.ts) asks the request's door; the server
// reads what it answers, and the decision sees the answers through an ObjectLookup.
import type { AdmissionRequest } from '../admission/types.js';
import type { Door } from './doors/door.js';
import { referencedNames, type ClaimReference } from './pod/claim-environment.js';
import { MAX_CLAIM_LOOKUPS, MAX_CONFIGMAP_LOOKUPS, MAX_SECRET_LOOKUPS } from './read-bounds.js';
import { isExemptReference, referencedNamesOf, referencedResource } from './pod/named-references.js';
import type { NamedReference, ReferencedKind } from './pod/reference-owner.js';
import type { Lookup, ObjectLookup, Policy, Readers } from './policy.js';
import { addedBlockingOwners, addedOwners, controllerOf, judgesAdoptionBy, ownerLookupKey, sameController } from './controller-made.js';
import { isStatusWrite, judgesKeptReferences, judgesReferencesOf } from './rules/reference-scope.js';
import { isBreakGlassPrincipal } from './requester/principals.js';
import type { StampKeys } from './stamps/keys.js';
import { runLeaseToRead } from './rules/run-lease.js';
import type { ReviewFacts } from './review-facts.js';
import { changedReferences, objectReferences, referenceReads } from './object-references.js';
import { readsAccountStamps } from './rules/service-account-stamps.js';
import type { LookupResource } from './kinds.js';
import { liveReaderRead } from './rules/live-readers.js';
import { takesListenerHostnames } from './rules/route-hostnames.js';
import { isReferredTarget } from './referrers.js';
import type { Requester } from './requester/identity.js';

export interface LookupKey {
  resource: LookupResource;
  namespace: string;
  name: string;
  /**
   * Read from the API server whatever the cache holds, with the object's creation time (a
   * snapshot's source claim): what is handed over at once (a token's account, what a binding
   * or a pod made on its node hands the pod). Past the review's live reads (cached-reader.ts,
   * MAX_LIVE_READS_PER_REVIEW) it is unknown, and refused: the cache's record may be stale.
   */
  fresh?: true;
  /**
   * The uid the request gives the object (a Scale's, a Binding's, a token's bound pod): a
   * cached record of another uid is of an object deleted since and made again under the name,
   * which the watch has not delivered yet, so it is read from the API server.
   */
  uid?: string;
  /** A pod whose binding is judged: what it reads once bound is read next (rules/binding-reads.ts). */
  withReads?: true;
  /** Not the object: the live pods that read it by name (ObjectLookup's `readers`, rules/live-readers.ts). */
  readers?: true;
  /**
   * Of `readers`, the reading kinds (their resources) to read from the API server; absent,
   * every one. The cached reader answers the others from the lookup cache (cached-reader.ts).
   */
  readerKinds?: readonly LookupResource[];
  /**
   * Of `readers` of a Gateway or ListenerSet: the referring kinds (resources) its listeners
   * admit from every namespace (referrers.ts, admittedAcross), listed cluster-wide; the others
   * are listed in its own namespace. Absent, those the kind table names (`followsAcrossNamespaces`).
   */
  across?: readonly string[];
}

/**
 * How an object a request acts on at once is read: as the one of the uid the request gives
 * it (a Binding's pod, a Scale's workload; the cache answers only with a record of that uid),
 * or, where it gives none, from the API server.
 */
export function asRequested(object: unknown): { uid: string } | { fresh: true } {
  const uid = (object as { metadata?: { uid?: unknown } } | null | undefined)?.metadata?.uid;
  return typeof uid === 'string' && uid !== '' ? { uid } : { fresh: true };
}

/** A key's identity among a review's reads: the readers of an object are a read of their own. */
export function lookupKey(k: LookupKey): string {
  return `${k.resource}/${k.namespace}/${k.name}${k.readers === true ? ' readers' : ''}`;
}

/** What the read plan knows of a request through a door, when it names a namespace. */
export interface ReadInput<D extends Door> {
  req: AdmissionRequest;
  door: D;
  namespace: string;
  /** Whether this webhook judges the request: the validating one, or `admit` at a CREATE it judges whole (the mutating side reads none for claims). */
  judges: boolean;
  /** The policy's stamp keys (the run lease annotation is one). */
  keys: StampKeys;
  /** The names no rule judges (the well-known ConfigMaps) are not read; without it they are. */
  policy: Policy | undefined;
  /** The review's, when built (what a new pod names is worked out once, on them). */
  facts: ReviewFacts | undefined;
}

export { MAX_CLAIM_LOOKUPS, MAX_CONFIGMAP_LOOKUPS, MAX_SECRET_LOOKUPS } from './read-bounds.js';
const MAX_REFERENCE_LOOKUPS: Readonly<Record<ReferencedKind, number>> = { Secret: MAX_SECRET_LOOKUPS, ConfigMap: MAX_CONFIGMAP_LOOKUPS };

/** What a judged object names, as a door tells it: the claims (and snapshots), the Secrets and ConfigMaps, the service accounts whose stamps are read. */
export interface NamedObjects {
  claims: ClaimReference[];
  references: NamedReference[];
  accounts: LookupKey[];
  /** The owners a runner pod's write gives it (rules/runner-owner.ts). */
  owners?: LookupKey[];
  /**
   * The kubelet acts on what `claims` and `references` name as soon as the request is stored
   * (a pod created on its node, an ephemeral container added), with no binding judged after:
   * they are read from the API server (`fresh`).
   */
  atOnce?: boolean;
}

/**
 * What a door does with a workload controller's writes (doors/controller-write.ts): whether it
 * judges them at all (`judged`: the change of an object's controller, and what it creates),
 * and whether it stamps and judges what the controller creates as its controlling owner's
 * environment's (`stampsAsOwners`: a pod, a Deployment's ReplicaSet, a CronJob's Job).
 */
export interface ControllerWrites {
  judged: boolean;
  stampsAsOwners: boolean;
  /** A controller's new object is judged on the claims it is filled from (a StatefulSet's claims): those are read. */
  sourcesOfMade?: boolean;
}

/**
 * The reads of a request through a door that carries an object of a stamped kind (a sandbox
 * object, a workload, a default-row kind's): its controlling owner, and where it is judged,
 * what it names (`named`, the door's own), its run lease and what the kind table's references
 * name. Where the plan knows who asks, only what that requester's rules judge: no trusted
 * principal's references (rules/reference-scope.ts), no run lease of what is created for no
 * environment (rules/run-lease.ts), of a workload controller's writes what `controllers` says.
 */
export function objectReads(read: ReadInput<Door>, named: () => NamedObjects, controllers: ControllerWrites): LookupKey[] {
  const { req, namespace, judges, keys, policy, facts } = read;
  // A break-glass principal's decision is made again as if it were none (admission/break-glass.ts): its plan is anyone's.
  const who = facts !== undefined && policy !== undefined && !isBreakGlassPrincipal(facts.requester, policy) ? { facts, policy } : undefined;
  // Undefined where the plan does not know who asks: then it may be a workload controller.
  const controller = facts?.controller;
  if (controller === true) {
    if (!controllers.judged || req.subResource !== undefined) return [];
    // And the plain owners it adds (addedOwnerFindings): the garbage collector deletes the object with them.
    if (req.operation === 'UPDATE') return [...ownerKeys(req, { made: false, controllerMade: false, adopted: judges }, namespace), ...(judges ? addedOwnerKeys(req, namespace) : [])];
    if (!controllers.stampsAsOwners) return judges && controllers.sourcesOfMade === true && req.operation === 'CREATE' && req.object ? claimKeys(named().claims, namespace) : [];
  }
  const judged: OwnerReads = {
    made: judges && (who === undefined || judgesReferencesOf(who.facts.requester, who.policy)),
    // Unjudged (the mutating side), a new object's owner is read only for what a workload controller may have made.
    controllerMade: controllers.stampsAsOwners && controller !== false,
    adopted: judges && (who === undefined || judgesAdoptionBy(who.facts.requester, who.policy)),
  };
  // Where the plan does not know who asks, the plain owners a workload controller's UPDATE would add too.
  const owners = [...ownerKeys(req, judged, namespace), ...(controller === undefined && judges && req.operation === 'UPDATE' ? addedOwnerKeys(req, namespace) : [])];
  if (!judges || !req.object) return owners;
  const { claims, references, accounts, owners: given = [], atOnce } = named();
  const asNamed = (k: LookupKey): LookupKey => (atOnce === true ? { ...k, fresh: true } : k);
  // What is created for an environment: the requester's, or a controller's owner's (known only once read).
  const leases = who === undefined || controller === true || (who.facts.identity !== undefined && 'environment' in who.facts.identity) ? runLeaseKeys(req, namespace, keys) : [];
  return [...owners, ...claimKeys(claims, namespace).map(asNamed), ...referenceKeys(references, namespace, policy).map(asNamed), ...leases, ...(judged.made ? tableReferenceKeys(req, namespace, judgesKeptReferences(req, namespace, keys, policy)) : []), ...(judged.made ? liveReaderKeys(req, namespace, policy, who?.facts.requester, controller === true) : []), ...accounts, ...given];
}

/** Which of a controlling owner's reads a rule will use for this requester: at CREATE, where judged (`made`) or followed (`controllerMade`); on UPDATE (`adopted`). */
interface OwnerReads {
  made: boolean;
  controllerMade: boolean;
  adopted: boolean;
}

/**
 * The controlling owner of a new object, where it is judged (rules/reference-scope.ts) or
 * where a workload controller may have made it and whose it is follows the owner
 * (`controllerMade`); and where it is judged, the new controlling owner an UPDATE gives an
 * object (adoption, controller-made.ts).
 */
function ownerKeys(req: AdmissionRequest, judged: OwnerReads, namespace: string): LookupKey[] {
  const after = controllerOf(req.object);
  const made = req.operation === 'CREATE' && req.subResource === undefined && (judged.made || judged.controllerMade);
  // A status write changes the controller too, where the kind's status strategy keeps owner references.
  // A reference that keeps the uid under another kind or name is a change of controller too (adoptionFindings).
  const adopted = judged.adopted && req.operation === 'UPDATE' && req.oldObject !== undefined && req.oldObject !== null && after !== undefined && !sameController(controllerOf(req.oldObject), after);
  const key = made || adopted ? ownerLookupKey(after, namespace) : undefined;
  return key ? [key] : [];
}

/** The owners of kinds Deed reads that an UPDATE adds as plain owner references (controller-made.ts addedOwnerFindings). */
function addedOwnerKeys(req: AdmissionRequest, namespace: string): LookupKey[] {
  return req.subResource === undefined && req.oldObject ? addedOwners(req.oldObject, req.object).flatMap((r) => ownerLookupKey(r, namespace) ?? []) : [];
}

/** What the kind table's references of an object name (rules/reference-scope.ts): at CREATE all, on UPDATE what it adds or changes, or all (`kept`: judgesKeptReferences). */
function tableReferenceKeys(req: AdmissionRequest, namespace: string, kept: boolean): LookupKey[] {
  // A status write is judged as an UPDATE of the metadata it keeps (rules/reference-scope.ts, isStatusWrite).
  if (req.subResource !== undefined && !isStatusWrite(req)) return [];
  // A route that comes to name no hostname has its parents read whole: whose listeners it takes (rules/route-hostnames.ts).
  const refs = req.operation === 'CREATE' || kept || takesListenerHostnames(req) ? objectReferences(req.resource, req.object) : req.operation === 'UPDATE' ? changedReferences(req.resource, req.oldObject, req.object) : [];
  // And the owners a new blocking owner reference names (rules/reference-scope.ts, blockingOwners): the controller is read as the controller.
  const blocking = req.operation === 'CREATE' || req.operation === 'UPDATE' ? addedBlockingOwners(req.object, req.operation === 'UPDATE' ? req.oldObject : undefined).filter((r) => !r.controller) : [];
  // Read from the API server, not the lookup cache: its follower acts on the reference at once (the HPA controller scales
  // the target, the ingress controller serves the Secret), so a record of an object deleted and made again under the name
  // by another environment since the watch last told would let the reference reach that environment's object.
  const named = referenceReads(refs, namespace).map((k): LookupKey => ({ ...k, fresh: true }));
  return [...named, ...blocking.flatMap((r) => ownerLookupKey(r, namespace) ?? [])];
}

/**
 * The live pods that read what an environment creates, or the live referrers that name it (a
 * Service's EndpointSlices, a workload's HPAs: rules/live-readers.ts); not for what a workload
 * controller makes (its writes are judged by judgeControllerWrite, which no referrer concerns).
 */
function liveReaderKeys(req: AdmissionRequest, namespace: string, policy: Policy | undefined, requester: Requester | undefined, controller: boolean): LookupKey[] {
  const read = liveReaderRead(req, policy, requester);
  return read === undefined || (controller && isReferredTarget(read.resource)) ? [] : [{ ...read, namespace, readers: true }];
}

/** A service account whose stamps say whose credential it is (rules/service-account-stamps.ts). */
export function accountKeys(account: string | undefined, namespace: string): LookupKey[] {
  return account !== undefined && readsAccountStamps(account) ? [{ resource: 'serviceaccounts', namespace, name: account }] : [];
}

/** The Lease a new stamped object names as its run lease (rules/run-lease.ts); the annotation is frozen after CREATE. */
function runLeaseKeys(req: AdmissionRequest, namespace: string, keys: StampKeys): LookupKey[] {
  if (req.operation !== 'CREATE' || req.subResource !== undefined) return [];
  const name = runLeaseToRead(req.object, keys);
  return name === undefined ? [] : [{ resource: 'leases', namespace, name }];
}

/** The Secrets and ConfigMaps a validating review judges: a new pod's, those an ephemeral container adds, a changed template's. */
function referenceKeys(refs: NamedReference[], namespace: string, policy: Policy | undefined): LookupKey[] {
  return (Object.keys(MAX_REFERENCE_LOOKUPS) as ReferencedKind[]).flatMap((kind) =>
    referencedNamesOf(refs, kind)
      .filter((name) => policy === undefined || !isExemptReference(kind, name, policy))
      .slice(0, MAX_REFERENCE_LOOKUPS[kind])
      .map((name) => ({ resource: referencedResource(kind), namespace, name })),
  );
}

export function claimKeys(refs: ClaimReference[], namespace: string): LookupKey[] {
  const { claims, snapshots } = referencedNames(refs);
  // A claim a new claim is filled from, fresh: its binding takes one made after it for a successor (rules/claim-binding.ts), so it is judged as it stands, not as the watch last told.
  const fills = new Set(refs.flatMap((r) => ('claim' in r && r.fills === true ? [r.claim] : [])));
  return [
    ...snapshots.map((name) => ({ resource: 'volumesnapshots' as const, namespace, name })),
    ...claims.map((name) => ({ resource: 'persistentvolumeclaims' as const, namespace, name, ...(fills.has(name) ? { fresh: true as const } : {}) })),
  ].slice(0, MAX_CLAIM_LOOKUPS);
}

/** Answers from facts gathered beforehand (`readers`: under the keys of reads with `readers`); anything not gathered is unknown, with `reason`. */
export function gatheredLookup(facts: ReadonlyMap<string, Lookup>, reason: string, readers: ReadonlyMap<string, Readers> = new Map()): ObjectLookup {
  return {
    get(resource, namespace, name) {
      return facts.get(lookupKey({ resource, namespace, name })) ?? { state: 'unknown', reason };
    },
    readers(resource, namespace, name) {
      return readers.get(lookupKey({ resource, namespace, name, readers: true })) ?? { state: 'unknown', reason };
    },
  };
}

/** For decisions made with no cluster to ask (local runs without credentials, tests). */
export function noLookup(reason: string): ObjectLookup {
  return gatheredLookup(new Map(), reason);
}
