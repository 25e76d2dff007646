// Facts about other objects a decision needs: the pod an eviction, a binding or a CONNECT
// (exec, attach, port-forward, proxy) names, the run lease a new object names, the
// controlling owner of what a controller creates, the claims a new pod or a workload's
// template mounts or clones (or a new claim clones), the Secrets and ConfigMaps a pod or a
// template names, the snapshots a claim restores and then their source claims. Which
// objects a review needs is decided here, purely; the server reads them (with a deadline)
// before deciding, so the decision itself stays free of I/O.
import { decodeReview, type Decoded } from '../admission/decode.js';
import type { AdmissionRequest } from '../admission/types.js';
import { doorOf, type Door } from './doors/door.js';
import { isRec } from './unstructured.js';
import { podClaims, pvcClaims, referencedNames, snapshotClaims, type ClaimReference } from './pod/claim-environment.js';
import { addedReferences, isExemptReference, referencedNamesOf, referencedResource } from './pod/named-references.js';
import type { NamedReference, ReferencedKind } from './pod/reference-owner.js';
import type { Lookup, ObjectLookup, Policy } from './policy.js';
import { workloadClaims, workloadReferences } from './workload/review.js';
import { kindRows, SCALED_RESOURCES } from './kinds.js';
import { controllerOf, ownerLookupKey } from './controller-made.js';
import type { StampKeys } from './stamps/keys.js';
import { runLeaseToRead } from './rules/run-lease.js';
import { judgedAtMutation } from './create-judged-at-mutation.js';
import { podNamesOf, reviewFacts, type DecodedWithFacts, type ReviewFacts } from './review-facts.js';
import { changedReferences, objectReferences, referenceReads } from './object-references.js';
import { readsAccountStamps } from './rules/service-account-stamps.js';
import { serviceAccountOf } from './pod/service-account.js';
import { SERVICE_ACCOUNT_TOKEN_TYPE, tokenAccount } from './rules/service-account-guard.js';

export type { LookupResource } from './kinds.js';
import type { LookupResource } from './kinds.js';

/** `admit` reads what `mutate` does, and at the CREATEs it judges whole what `validate` does (create-judgement.ts). */
type LookupWebhook = 'mutate' | 'validate' | 'admit';

export interface LookupKey {
  resource: LookupResource;
  namespace: string;
  name: string;
}

export function lookupKey(k: LookupKey): string {
  return `${k.resource}/${k.namespace}/${k.name}`;
}

/**
 * At most this many claims are read for one review: a pod that names more is refused for
 * the rest (their environment stays unknown) rather than fanning out without bound.
 */
export const MAX_CLAIM_LOOKUPS = 32;

/** Likewise for the Secrets a pod names (each read as metadata only), and for its ConfigMaps. */
export const MAX_SECRET_LOOKUPS = 32;
export const MAX_CONFIGMAP_LOOKUPS = 32;
const MAX_REFERENCE_LOOKUPS: Readonly<Record<ReferencedKind, number>> = { Secret: MAX_SECRET_LOOKUPS, ConfigMap: MAX_CONFIGMAP_LOOKUPS };

/**
 * The objects a review's decision reads besides the request itself (the mutating side reads
 * none for claims, but for the CREATEs `admit` judges whole). `keys`: the policy's stamp keys (the run lease annotation is one).
 * `policy`: the names no rule judges (the well-known ConfigMaps) are not read; without it they are.
 */
export function lookupsNeeded(req: AdmissionRequest, webhook: LookupWebhook, keys: StampKeys, policy?: Policy): LookupKey[] {
  const door = doorOf(req);
  return readsOf(req, door, judgedAtMutation(req, door), webhook, keys, policy, undefined);
}

/** The reads of a request whose door is known, and whether `admit` judges it whole; `facts`: the review's, when built (what a new pod names is worked out once, on them). */
function readsOf(req: AdmissionRequest, door: Door, judgedWhole: boolean, webhook: LookupWebhook, keys: StampKeys, policy: Policy | undefined, facts: ReviewFacts | undefined): LookupKey[] {
  const namespace = req.namespace;
  if (namespace === undefined) return [];
  // Only the validating webhook judges them (the mutating webhooks' rules send it none).
  if (door.kind === 'pod-by-name' && door.pod !== undefined) return webhook === 'validate' ? [{ resource: 'pods', namespace, name: door.pod }] : [];
  // A scale names the workload, whose stamps are looked up.
  if (webhook === 'validate' && door.kind === 'workload-scale' && door.name !== undefined && SCALED_RESOURCES.includes(door.resource))
    return [{ resource: door.resource as LookupResource, namespace, name: door.name }];
  // A TokenRequest hands out a token of the account it names, whose stamps say whose it is.
  if (webhook === 'validate' && door.kind === 'token-request') return accountKeys(door.serviceAccount, namespace);
  const owners = ownerKeys(req, door, webhook, namespace);
  if ((webhook === 'validate' || (webhook === 'admit' && judgedWhole)) && req.object)
    return [
      ...owners,
      ...claimKeys(claimReferences(req, door, facts), namespace),
      ...referenceKeys(req, door, namespace, policy, facts),
      ...runLeaseKeys(req, door, namespace, keys),
      ...tableReferenceKeys(req, door, namespace),
      ...credentialAccountKeys(req, door, namespace),
    ];
  return owners;
}

/**
 * The controlling owner of a new pod or workload (a controller made it: whose it is follows
 * the owner, controller-made.ts), and the new controlling owner an UPDATE gives an object
 * (adoption). Planned for any requester: who is a workload controller is the policy's.
 */
function ownerKeys(req: AdmissionRequest, door: Door, webhook: LookupWebhook, namespace: string): LookupKey[] {
  if (req.subResource !== undefined || (door.kind !== 'workload' && door.kind !== 'object' && door.kind !== 'default')) return [];
  const after = controllerOf(req.object);
  // Any new object's controller reference is judged (rules/reference-scope.ts); a controller-made one's decides whose it is.
  const made = req.operation === 'CREATE';
  const adopted = webhook === 'validate' && req.operation === 'UPDATE' && after !== undefined && controllerOf(req.oldObject)?.uid !== after.uid;
  const key = made || adopted ? ownerLookupKey(after, namespace) : undefined;
  return key ? [key] : [];
}

/** What the kind table's references of an object name (rules/reference-scope.ts): at CREATE all, on UPDATE what it adds or changes. */
function tableReferenceKeys(req: AdmissionRequest, door: Door, namespace: string): LookupKey[] {
  if (req.subResource !== undefined || (door.kind !== 'workload' && door.kind !== 'object' && door.kind !== 'default')) return [];
  const refs = req.operation === 'CREATE' ? objectReferences(req.resource, req.object) : req.operation === 'UPDATE' ? changedReferences(req.resource, req.oldObject, req.object) : [];
  return referenceReads(refs, namespace);
}

/** The account a new pod runs as, and the one a token Secret names: their stamps say whose credential it is (rules/service-account-stamps.ts). */
function credentialAccountKeys(req: AdmissionRequest, door: Door, namespace: string): LookupKey[] {
  const obj = req.object;
  if (door.kind !== 'object' || req.subResource !== undefined || !obj) return [];
  if (door.sandboxKind.kind === 'Pod') return req.operation === 'CREATE' && isRec(obj.spec) ? accountKeys(serviceAccountOf(obj.spec), namespace) : [];
  if (door.sandboxKind.kind === 'Secret') return accountKeys(tokenAccount(obj), namespace);
  return [];
}

function accountKeys(account: string | undefined, namespace: string): LookupKey[] {
  return account !== undefined && readsAccountStamps(account) ? [{ resource: 'serviceaccounts', namespace, name: account }] : [];
}

/** The Lease a new stamped object names as its run lease (rules/run-lease.ts); the annotation is frozen after CREATE. */
function runLeaseKeys(req: AdmissionRequest, door: Door, namespace: string, keys: StampKeys): LookupKey[] {
  if (req.operation !== 'CREATE' || req.subResource !== undefined) return [];
  if (door.kind !== 'object' && door.kind !== 'workload' && door.kind !== 'default') return [];
  const name = runLeaseToRead(req.object, keys);
  return name === undefined ? [] : [{ resource: 'leases', namespace, name }];
}

/** The claims (and snapshots) a validating review judges. */
function claimReferences(req: AdmissionRequest, door: Door, facts: ReviewFacts | undefined): ClaimReference[] {
  const obj = req.object;
  if (!obj) return [];
  // A pod's volumes and a claim's data source are fixed at CREATE: only then are the claims they name judged.
  if (door.kind === 'object' && req.operation === 'CREATE' && req.subResource === undefined) {
    const kind = door.sandboxKind.kind;
    return kind === 'Pod' && isRec(obj.spec) ? podNamesOf(facts, obj.spec).claims : kind === 'PersistentVolumeClaim' ? pvcClaims(obj) : [];
  }
  // An ephemeral container may mount a volume on a claim that is a workspace.
  if (isEphemeralContainerWrite(req, door) && isRec(obj.spec)) return podClaims(obj.spec, 'spec');
  const change = req.operation === 'CREATE' || req.operation === 'UPDATE';
  if (door.kind === 'workload' && change) return workloadClaims(obj, door.workload, req.operation === 'UPDATE' ? (req.oldObject ?? undefined) : undefined);
  if (door.kind === 'snapshot' && change) return snapshotClaims(obj);
  return [];
}

function isEphemeralContainerWrite(req: AdmissionRequest, door: Door): boolean {
  return door.kind === 'object' && door.sandboxKind.kind === 'Pod' && req.operation === 'UPDATE' && req.subResource === 'ephemeralcontainers';
}

/** The Secrets and ConfigMaps a validating review judges: a new pod's, those an ephemeral container adds, a changed template's. */
function referenceKeys(req: AdmissionRequest, door: Door, namespace: string, policy: Policy | undefined, facts: ReviewFacts | undefined): LookupKey[] {
  const obj = req.object;
  let refs: NamedReference[] = [];
  if (obj && door.kind === 'object' && door.sandboxKind.kind === 'Pod' && isRec(obj.spec)) {
    if (req.operation === 'CREATE' && req.subResource === undefined) refs = podNamesOf(facts, obj.spec).references;
    else if (isEphemeralContainerWrite(req, door)) refs = addedReferences(req.oldObject?.spec, obj.spec);
  } else if (obj && door.kind === 'workload' && (req.operation === 'CREATE' || req.operation === 'UPDATE')) {
    refs = workloadReferences(obj, door.workload, req.operation === 'UPDATE' ? (req.oldObject ?? undefined) : undefined);
  }
  return (Object.keys(MAX_REFERENCE_LOOKUPS) as ReferencedKind[]).flatMap((kind) =>
    referencedNamesOf(refs, kind)
      .filter((name) => policy === undefined || !isExemptReference(kind, name, policy))
      .slice(0, MAX_REFERENCE_LOOKUPS[kind])
      .map((name) => ({ resource: referencedResource(kind), namespace, name })),
  );
}

function claimKeys(refs: ClaimReference[], namespace: string): LookupKey[] {
  const { claims, snapshots } = referencedNames(refs);
  return [
    ...snapshots.map((name) => ({ resource: 'volumesnapshots' as const, namespace, name })),
    ...claims.map((name) => ({ resource: 'persistentvolumeclaims' as const, namespace, name })),
  ].slice(0, MAX_CLAIM_LOOKUPS);
}

/**
 * What the first reads make necessary: the source claim of each snapshot read (a claim
 * restored from a snapshot is judged by the claim the snapshot copied).
 */
export function followUpLookups(read: LookupKey[], found: ObjectLookup): LookupKey[] {
  const known = new Set(read.map(lookupKey));
  const out: LookupKey[] = [];
  for (const key of read) {
    const answer = found.get(key.resource, key.namespace, key.name);
    if (answer.state !== 'found') continue;
    // A controller-made object's owner, whose own stamps may not verify (a ReplicaSet
    // carrying its Deployment's copied annotations): its owner too.
    const next: LookupKey | undefined =
      key.resource === 'volumesnapshots'
        ? answer.sourceClaim === undefined
          ? undefined
          : { resource: 'persistentvolumeclaims', namespace: key.namespace, name: answer.sourceClaim }
        : OWNER_RESOURCES.has(key.resource)
          ? ownerLookupKey(answer.controller, key.namespace)
          : undefined;
    if (next !== undefined && !known.has(lookupKey(next))) {
      known.add(lookupKey(next));
      out.push(next);
    }
  }
  return out;
}

/** Answers from the first lookup, and what it does not know from the second. */
export function combinedLookup(first: ObjectLookup, second: ObjectLookup): ObjectLookup {
  return {
    get(resource, namespace, name) {
      const a = first.get(resource, namespace, name);
      return a.state === 'unknown' ? second.get(resource, namespace, name) : a;
    },
  };
}

/** The resources whose objects name other objects (the kind table's `references`), and those where an UPDATE can change what they name. */
const REFERENCING_RESOURCES = new Set<unknown>(kindRows().filter((r) => r.references !== undefined).map((r) => r.resource));
const MUTABLY_REFERENCING_RESOURCES = new Set<unknown>(kindRows().filter((r) => r.references?.some((f) => f.immutable !== true)).map((r) => r.resource));
const TEMPLATE_RESOURCES = new Set<unknown>(kindRows().filter((r) => r.door === 'workload' || r.door === 'snapshot').map((r) => r.resource));
/** The workloads whose own controlling owner is followed (controller-made.ts). */
const OWNER_RESOURCES = new Set<string>(kindRows().filter((r) => r.templates !== undefined && r.lookup !== undefined).map((r) => r.resource));

/**
 * The lookups for a raw review body, as the server sees it before deciding, and the body
 * decoded when that took decoding (decide() then reuses it), with the review's facts when
 * `policy` is given (review-facts.ts; decide() reuses them too). Most reviews need none,
 * and are told apart by a glance at a few fields, without decoding.
 */
export function planLookups(body: unknown, webhook: LookupWebhook, keys: StampKeys, policy?: Policy): { lookups: LookupKey[]; decoded?: DecodedWithFacts } {
  const req = (body as { request?: { resource?: { resource?: unknown }; subResource?: unknown; operation?: unknown; object?: { type?: unknown; metadata?: { ownerReferences?: unknown; annotations?: unknown } } } } | null)?.request;
  const resource = req?.resource?.resource;
  // A new pod or workload with owners may be a controller's, judged as its owner's; an UPDATE may change its controller.
  const owned = hasOwners(req);
  const judgesCreate = webhook === 'validate' || webhook === 'admit';
  const mayNeed =
    (owned && req?.subResource === undefined && (req?.operation === 'CREATE' || (webhook === 'validate' && req?.operation === 'UPDATE')) && (resource === 'pods' || TEMPLATE_RESOURCES.has(resource))) ||
    // Any new object's controller reference is judged (rules/reference-scope.ts), and what the kind table's references name.
    (owned && judgesCreate && req?.operation === 'CREATE' && req.subResource === undefined) ||
    (judgesCreate && req?.operation === 'CREATE' && req.subResource === undefined && REFERENCING_RESOURCES.has(resource)) ||
    (webhook === 'validate' && req?.operation === 'UPDATE' && req.subResource === undefined && MUTABLY_REFERENCING_RESOURCES.has(resource)) ||
    (webhook === 'validate' && req?.operation === 'CREATE' && req.subResource === 'token') ||
    (resource === 'secrets' && req?.subResource === undefined && isTokenSecret(req?.object)) ||
    (judgesCreate && req?.operation === 'CREATE' && req.subResource === undefined && namesRunLease(req, keys)) ||
    resource === 'bindings' ||
    req?.subResource === 'eviction' ||
    req?.subResource === 'binding' ||
    (req?.operation === 'CONNECT' && resource === 'pods') ||
    (webhook === 'validate' && req?.subResource === 'scale') ||
    (judgesCreate && req?.operation === 'CREATE' && req.subResource === undefined && (resource === 'pods' || resource === 'persistentvolumeclaims')) ||
    (webhook === 'validate' && req?.operation === 'UPDATE' && req.subResource === 'ephemeralcontainers' && resource === 'pods') ||
    (((judgesCreate && req?.operation === 'CREATE') || (webhook === 'validate' && req?.operation === 'UPDATE')) && req.subResource === undefined && TEMPLATE_RESOURCES.has(resource));
  if (!mayNeed) return { lookups: [] };
  let decoded: Decoded;
  try {
    decoded = decodeReview(body);
  } catch {
    return { lookups: [] }; // decide() decodes again and answers the fault with the uid
  }
  if (!decoded.ok) return { lookups: [], decoded };
  if (policy === undefined) return { lookups: lookupsNeeded(decoded.request, webhook, keys), decoded };
  const facts = reviewFacts(decoded.request, policy);
  return { lookups: readsOf(facts.request, facts.door, facts.judgedAtMutation, webhook, keys, policy, facts), decoded: { ...decoded, facts } };
}

/** Whether a raw request's object carries the run lease annotation; a body that throws on reading is decide()'s to answer. */
function namesRunLease(req: { object?: { metadata?: { annotations?: unknown } } }, keys: StampKeys): boolean {
  try {
    const annotations = req.object?.metadata?.annotations;
    return isRec(annotations) && Object.hasOwn(annotations, keys.runLease);
  } catch {
    return false;
  }
}

/** Whether a raw request's object is a token Secret (rules/service-account-stamps.ts reads the account it names). */
function isTokenSecret(obj: { type?: unknown } | undefined): boolean {
  try {
    return obj?.type === SERVICE_ACCOUNT_TOKEN_TYPE;
  } catch {
    return false;
  }
}

/** Whether a request's object names owners, read without decoding it; a body that throws on reading names none here (decide() answers it). */
function hasOwners(req: { object?: { metadata?: { ownerReferences?: unknown } } } | undefined): boolean {
  try {
    const refs = req?.object?.metadata?.ownerReferences;
    return Array.isArray(refs) && refs.length > 0;
  } catch {
    return false;
  }
}

/** Answers from facts gathered beforehand; anything not gathered is unknown, with `reason`. */
export function gatheredLookup(facts: ReadonlyMap<string, Lookup>, reason: string): ObjectLookup {
  return {
    get(resource, namespace, name) {
      return facts.get(lookupKey({ resource, namespace, name })) ?? { state: 'unknown', reason };
    },
  };
}

/** For decisions made with no cluster to ask (local runs without credentials, tests). */
export function noLookup(reason: string): ObjectLookup {
  return gatheredLookup(new Map(), reason);
}
