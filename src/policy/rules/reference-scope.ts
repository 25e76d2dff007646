// reference.*: what an object points at is its writer's to use (docs/security-model.md,
// "What an object points at"). A HorizontalPodAutoscaler's target is scaled by the HPA
// controller, an Ingress backend (or a Gateway API route's) published by the ingress (or
// gateway) controller, an EndpointSlice's
// Service routed to by kube-proxy, an object's controller counts, adopts and deletes what
// names it as controller: each acts later, unreviewed, for whoever wrote the reference. So
// every reference the kind table lists (object-references.ts), and the controlling owner
// reference of any object, names only an object of an environment its writer acts for (or
// of none, when it acts for none): judged at CREATE, and on UPDATE for what the UPDATE adds
// or changes (a change of controller is guard.adoption's), a write through /status too (its
// metadata changes are kept: isStatusWrite). Whose the named object is comes
// from its verified stamps, as for the Secrets a pod names (pod/reference-owner.ts).
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import { quoted, type Finding } from '../../admission/verdict.js';
import { addedBlockingOwners, controllerOf, environmentOfController, isWorkloadController, ownerLookupKey, sameController } from '../controller-made.js';
import { changedReferences, MAX_REFERENCE_READS, objectReferences, readableRow, referenceKey, type ObjectReference } from '../object-references.js';
import { isManaged } from '../stamps/identity-stamps.js';
import type { StampKeys } from '../stamps/keys.js';
import { groupOf, kindRow, kindRowNamed } from '../kinds.js';
import { judgeReference, referencedOwnership, whoMayNot, type Reach } from '../pod/reference-owner.js';
import type { DecisionContext, Policy } from '../policy.js';
import { environmentId, type Requester } from '../requester/identity.js';
import { actsFor, isPlatform, isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';
import { environmentOfOwnership } from '../ownership.js';
import { liveReaderFindings, widenedReferrerFindings } from './live-readers.js';
import { POD_READS, podReadsOf, referencedReadsOf, type PodReads } from '../pod/pod-reads.js';

/** Whether the references `requester` writes are judged: the platform's and trusted principals' are not (the read plan asks too). */
export function judgesReferencesOf(requester: Requester, policy: Policy): boolean {
  return !isTrusted(requester, policy) && !isPlatform(requester, policy);
}

/**
 * Whether a request is a write of its object's status: the API server's status strategies drop
 * its spec changes before the validating webhook but keep (for most kinds: a Service's, a
 * Job's, an Ingress's, a pod's) its metadata changes, owner references, labels and annotations
 * among them. So what the write changes is metadata and status, judged as an UPDATE's.
 */
export function isStatusWrite(req: AdmissionRequest): boolean {
  return req.subResource === 'status' && req.operation === 'UPDATE';
}

/** The findings of a write of an object itself, or of its status (isStatusWrite), by `requester`. */
export function referenceScope(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  if (!judgesReferencesOf(requester, ctx.policy)) return [];
  if (req.subResource !== undefined && !isStatusWrite(req)) return [];
  const reach: Reach = { requester, environment: environmentId(requester) };
  if (req.operation === 'CREATE')
    return [
      ...liveReadsBound(req),
      ...tableReferences(objectReferences(req.resource, req.object), namespace, reach, ctx),
      ...controllerReference(req.object, namespace, reach, ctx),
      ...blockingOwners(req.object, undefined, namespace, reach, ctx),
      ...jobClaim(req, undefined),
      ...liveReaderFindings(req, namespace, reach, ctx),
    ];
  if (req.operation === 'UPDATE') {
    const changed = changedReferences(req.resource, req.oldObject, req.object);
    return [
      ...liveReadsBound(req),
      ...tableReferences(changed, namespace, reach, ctx),
      ...keptReferenceFindings(req, changed, namespace, reach, ctx),
      ...blockingOwners(req.object, req.oldObject, namespace, reach, ctx),
      ...jobClaim(req, req.oldObject),
      ...widenedReferrerFindings(req, namespace, reach, ctx),
    ];
  }
  return [];
}

/**
 * What an object reads by name once stored (a pod's Secrets, ConfigMaps and claims; the kind
 * table's `readsLive`: an Ingress's TLS Secrets) is held against other environments' creates
 * (rules/live-readers.ts) by the lookup cache's index of readers, which keeps at most a pod's
 * worth of names for one object (pod/pod-reads.ts POD_READS): past that, the object may read
 * any name of its namespace, and every CREATE of that kind there is refused. Each write is
 * bounded in what it adds (MAX_REFERENCE_READS, a pod's ephemeral container's lookups), so the
 * whole object is bounded too, where a write grows it past the bound: rev-95 grew one Ingress
 * to 1,312 TLS names by UPDATEs of 32, rev-97 a pod to 1,536 names by ephemeral containers.
 */
export function liveReadsBound(req: AdmissionRequest): Finding[] {
  // A pod's spec is bounded at its CREATE, kind by kind (the reference rules' `unknown`); only ephemeral containers add to it after.
  if (req.resource.resource === 'pods' && req.subResource !== 'ephemeralcontainers') return [];
  const after = storedReadsOf(req.resource.resource, req.object);
  if (after === undefined) return [];
  const before = req.operation === 'UPDATE' ? storedReadsOf(req.resource.resource, req.oldObject) : undefined;
  for (const read of POD_READS) {
    const names = after[read.field].length;
    if (names <= read.max || names <= (before?.[read.field].length ?? 0)) continue;
    if (req.resource.resource === 'pods')
      return [{ rule: RULES.referenceUnknown.id, path: 'spec.ephemeralContainers', message: `the pod would name ${names} ${read.kind}s, each held for it against other environments' creates in the namespace; Deed holds at most ${read.max} for one pod: add a container that names fewer` }];
    const paths = [...new Set(objectReferences(req.resource, req.object).filter((r) => r.readsLive === true && r.kind === read.kind).map((r) => r.path.replace(/\[\d+\]/g, '[]')))].join(', ');
    return [{ rule: RULES.referenceUnknown.id, path: paths, message: `names ${names} ${read.kind}s (${paths}), each held for it against other environments' creates in the namespace; Deed holds at most ${read.max} for one object: split it into several` }];
  }
  return [];
}

/** What the lookup cache keeps of what `obj` reads by name (lookup-facts.ts factsOf): a pod's spec's, or the kind table's `readsLive` references'. */
function storedReadsOf(resource: string, obj: KubeObject | null | undefined): PodReads | undefined {
  if (obj === null || obj === undefined) return undefined;
  return resource === 'pods' ? podReadsOf(obj.spec, obj.status) : referencedReadsOf(resource, obj);
}

/**
 * Whether an UPDATE is judged on the references it keeps too: a change beyond its metadata of
 * an object that carries no stamps outside a bound namespace (the platform's, or one of no
 * environment). Its references were judged for their writer, who may name what the requester
 * may not (the platform's ExternalSecret writing into alpha's Secret, its route publishing
 * alpha's Service); what the requester changes beside them (the store the secret is fetched
 * from, the issuer that signs, the hostnames) would act on them for it. A change of metadata
 * alone changes none of that (a reference held in metadata is judged where it changes); nor
 * does a status write's, but for the ingress-shim's annotations it changes beside a kept
 * issuer (its spec changes are dropped before the validating webhook). Who
 * asks is judgesReferencesOf's; the read plan, not knowing the policy, reads them.
 */
export function judgesKeptReferences(req: AdmissionRequest, namespace: string, keys: StampKeys, policy: Policy | undefined): boolean {
  const { oldObject: before, object: after } = req;
  const status = isStatusWrite(req);
  if (req.operation !== 'UPDATE' || (req.subResource !== undefined && !status) || !before || !after) return false;
  // A kind that names nothing keeps nothing: no comparison of the two objects on its UPDATEs.
  if ((kindRow(req.resource)?.references?.length ?? 0) === 0) return false;
  if (policy?.envByBoundNamespace.has(namespace) === true || isManaged(before.metadata?.labels, keys)) return false;
  try {
    // A status write's spec changes are dropped before the validating webhook, and no follower acts on a status: only the annotations it follows.
    return (!status && !isDeepStrictEqual({ ...before, metadata: undefined }, { ...after, metadata: undefined })) || !isDeepStrictEqual(followedAnnotations(req, before), followedAnnotations(req, after));
  } catch {
    return true; // nested past the comparison's stack (a hostile body): judged
  }
}

/** cert-manager's ingress-shim annotations beside the issuer's (common name, usages, duration...): they shape what the kept issuer signs. */
const SHIM_PREFIX = 'cert-manager.io/';

/** The annotations a follower of the object's kind reads, where its row names any (kinds.ts `issuer-annotations`). */
function followedAnnotations(req: AdmissionRequest, obj: KubeObject): Record<string, unknown> {
  if (kindRow(req.resource)?.references?.some((r) => r.by === 'issuer-annotations') !== true) return {};
  const annotations: unknown = obj.metadata?.annotations;
  if (annotations === null || typeof annotations !== 'object') return {};
  return Object.fromEntries(Object.entries(annotations).filter(([k]) => k.startsWith(SHIM_PREFIX)));
}

/** The references an UPDATE of an unstamped object keeps (judgesKeptReferences) beside those it `changed`, judged as the requester's own. */
function keptReferenceFindings(req: AdmissionRequest, changed: ObjectReference[], namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  if (!judgesKeptReferences(req, namespace, ctx.policy.keys, ctx.policy)) return [];
  const judged = new Set(changed.map(referenceKey));
  const kept = objectReferences(req.resource, req.object).filter((r) => !judged.has(referenceKey(r)));
  const why = `; ${namespace}/${req.oldObject?.metadata?.name ?? ''} carries no stamps (the platform's, or of no environment), and its follower would act on what it names with what ${reach.requester.username} changes: create your own`;
  // A principal of no environment may rewrite an unstamped Secret itself (guard.shared-input): an unstamped one it keeps having written into is no finding.
  // A kept reference to what does not exist was as open to a later squat before the change as after: not this change's finding.
  return tableReferences(kept, namespace, reach, ctx, reach.environment === undefined)
    .filter((f) => f.rule !== RULES.referenceAbsent.id)
    .map((f) => ({ ...f, message: `${f.message}${why}` }));
}

/**
 * An owner reference with `blockOwnerDeletion: true` holds its owner's foreground deletion
 * (`kubectl delete --cascade=foreground`, a Deployment's rollout) until the dependent is gone,
 * and a finalizer on the dependent holds that for ever: the owner stays Terminating and its
 * name cannot be used again. The garbage collector finds dependents by the owner's uid,
 * whatever kind and name the reference gives, and never deletes a dependent whose owner's kind
 * it cannot resolve (no finalizer needed then). So such a reference names an owner of a kind
 * Deed reads by its own uid, of an environment its writer acts for (or of none, or unstamped
 * outside a bound namespace); one of a kind Deed does not read names a uid Deed cannot place,
 * and comes only from those whose references are not judged (an operator's controller, the
 * platform). A controller reference of a kind Deed reads is judged as the controller (at
 * CREATE below, its change by guard.adoption); one an UPDATE keeps is not judged again.
 */
function blockingOwners(obj: KubeObject | null | undefined, before: KubeObject | null | undefined, namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const added = addedBlockingOwners(obj, before);
  // A workload controller writes the owner references its owner's kind calls for (a StatefulSet's claims), acting for that owner.
  if (added.length === 0 || isWorkloadController(reach.requester, ctx.policy)) return [];
  const findings: Finding[] = [];
  for (const ref of added) {
    const path = `metadata.ownerReferences[${ref.index}]`;
    const key = ownerLookupKey(ref, namespace);
    if (key === undefined) {
      findings.push({
        rule: RULES.referenceUnknown.id,
        path,
        message: `blocks the deletion of the object of uid ${ref.uid}, named as ${ref.kind} ${namespace}/${ref.name} (${ref.apiVersion}), a kind Deed does not read, so which object that uid is cannot be known (the garbage collector finds an owner's dependents by uid whatever kind the reference gives); only the platform's principals, system controllers and break-glass may write it; drop blockOwnerDeletion (an operator that sets it on what it makes for its own resources runs as a platform principal, policy platform, or is listed in systemPrincipals)`,
      });
      continue;
    }
    if (ref.controller) continue;
    const what = `${ref.kind} ${namespace}/${ref.name}`;
    const found = ctx.lookup.get(key.resource, namespace, ref.name);
    if (found.state === 'unknown') findings.push({ rule: RULES.referenceUnknown.id, path, message: `cannot tell which environment ${what} belongs to: ${found.reason}` });
    else if (found.state === 'absent' || (found.metadata.uid !== undefined && found.metadata.uid !== ref.uid))
      findings.push({ rule: RULES.referenceUnknown.id, path, message: `blocks the deletion of ${what} by a uid it does not have (the garbage collector finds dependents by uid); name the owner's own uid, or drop blockOwnerDeletion` });
    else {
      const owner = referencedOwnership(found, ref.kind, namespace, ctx);
      const environment = environmentOfOwnership(owner);
      if (owner.kind === 'unknown') findings.push({ rule: RULES.referenceUnknown.id, path, message: `cannot tell which environment ${what} belongs to: ${owner.reason}` });
      else if (owner.kind === 'unverifiable') findings.push({ rule: RULES.referenceUnknown.id, path, message: `${what} carries Deed's stamps but they do not verify (${owner.reason}), so its environment is unknown` });
      else if (environment !== undefined && environment !== reach.environment && !actsFor(reach.requester, environment, ctx.policy))
        findings.push({ rule: RULES.referenceCrossEnvironment.id, path, message: `blocks the deletion of ${what}, which belongs to another environment (a finalizer here would hold it Terminating); ${whoMayNot(reach)}; drop blockOwnerDeletion or the reference` });
    }
  }
  return findings;
}

/**
 * A StatefulSet's claim template's metadata is copied whole onto each claim the statefulset
 * controller makes, owner references and finalizers too, by that controller (whose writes
 * blockingOwners leaves alone): a blocking reference there would hold any owner's foreground
 * deletion by a claim nobody judged. The controller writes the claims' own owner references
 * itself (persistentVolumeClaimRetentionPolicy), so a template never needs one: none from a
 * requester whose references are judged. Finalizers are the claim's own business.
 */
export function claimTemplateOwners(metadata: Record<string, unknown>, at: string, requester: Requester, policy: Policy): Finding[] {
  const refs = metadata.ownerReferences;
  if (!Array.isArray(refs) || refs.length === 0 || !judgesReferencesOf(requester, policy)) return [];
  return [
    {
      rule: RULES.referenceUnknown.id,
      path: `${at}.metadata.ownerReferences`,
      message: 'the statefulset controller copies these owner references onto every claim it makes from the template, unreviewed (a blocking one holds its owner\'s deletion); it writes the claims\' own owner references itself: drop ownerReferences from the claim template',
    },
  ];
}

/** The labels a Job's generated selector matches its pods by (`batch.kubernetes.io/controller-uid`, and the older `controller-uid`). */
const JOB_UID_LABELS = ['batch.kubernetes.io/controller-uid', 'controller-uid'] as const;

/**
 * The Job labels of a pod the job controller may count for a Job that does not control it:
 * the pod's controller reference gives that Job's uid to another kind (ClaimPods compares uids
 * alone: counted), or it has no controller (adopted). A controller of another uid keeps it
 * (`deed audit` reports the first form in pods stored before Deed judged them).
 */
export function jobUidClaims(obj: KubeObject | null | undefined): Array<{ key: string; value: unknown; orphan: boolean }> {
  const labels: unknown = obj?.metadata?.labels;
  if (labels === undefined || labels === null || typeof labels !== 'object') return [];
  const ref = controllerOf(obj);
  const out: Array<{ key: string; value: unknown; orphan: boolean }> = [];
  for (const key of JOB_UID_LABELS) {
    const value = (labels as Record<string, unknown>)[key];
    if (value === undefined) continue;
    // A manualSelector Job's pods may carry an older Job's label: ClaimPods ignores a pod another uid controls.
    if (ref !== undefined && (ref.uid !== value || (ref.kind === 'Job' && groupOf(ref.apiVersion) === 'batch'))) continue;
    out.push({ key, value, orphan: ref === undefined });
  }
  return out;
}

/**
 * A Job's generated selector is its uid, under the labels above, whoever's pod carries them,
 * and the job controller claims a pod whose controller reference has the Job's uid whatever
 * kind and name it gives (ClaimObject compares uids): a pod that names another environment's
 * Job by uid, as a custom resource of Deed's do-not-read kinds, would be counted, deleted and
 * completed by that Job. So a pod carries such a label only under a controller reference to
 * a Job of that uid, which the controller reference's rules judge as any other.
 */
function jobClaim(req: AdmissionRequest, before: KubeObject | null | undefined): Finding[] {
  if (req.resource.group !== '' || req.resource.resource !== 'pods') return [];
  const ref = controllerOf(req.object);
  const was = controllerOf(before);
  const old = before?.metadata?.labels as Record<string, unknown> | undefined;
  // What an UPDATE leaves as it was (the label and the controller reference) is judged as stored.
  const kept = (key: string, value: unknown) => before !== undefined && old?.[key] === value && sameController(was, ref);
  return jobUidClaims(req.object)
    .filter(({ key, value }) => !kept(key, value))
    .map(({ key, value, orphan }) => ({
      rule: RULES.referenceUnknown.id,
      path: `metadata.labels.${key}`,
      message: `the label ${key} makes this pod one the job controller may count for the Job of uid ${quoted(value)}, ${orphan ? 'and the pod has no controller to keep it from being adopted' : 'but its controller reference gives that uid to another kind'}; drop the label (a Job's own controller writes it on the pods it makes)`,
    }));
}

function tableReferences(refs: ObjectReference[], namespace: string, reach: Reach, ctx: DecisionContext, unstampedWritable = false): Finding[] {
  const findings: Finding[] = [];
  const judged = new Set<string>();
  for (const ref of refs) {
    // A Gateway API reference may name another namespace: the object is judged there, as it is stamped there.
    const at = ref.namespace ?? namespace;
    const what = at === namespace ? `${ref.kind} ${ref.name}` : `${ref.kind} ${at}/${ref.name}`;
    const key = `${ref.group}/${ref.kind} ${at}/${ref.name}`;
    if (judged.has(key)) continue;
    judged.add(key);
    if (ref.selects === true) {
      findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `chooses ${ref.kind}s by label, so whose each one is cannot be known (${ref.follower}); name each one instead: only the platform's principals may write a selector here` });
      continue;
    }
    // In a namespace bound to the requester's environment, every object it could name is its environment's.
    if (ref.unlisted === true) {
      if (!boundToReacher(namespace, reach, ctx))
        findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `is a provider whose fields Deed does not know, so which ${ref.kind}s it names, and whose they are, cannot be known (${ref.follower}); use a provider Deed lists, or a namespace bound to your environment: only the platform's principals may write it here` });
      continue;
    }
    const target = kindRowNamed(ref.group, ref.kind);
    // Naming one hands over nothing of anyone's (a Password generator).
    if (target?.asTarget === 'nothing') continue;
    // A cluster-scoped kind the table knows (a ClusterIssuer) is the platform's: Deed stamps no cluster-scoped object.
    if (target?.namespaced === false) {
      // But one whose operator reads the Secrets it names in the referrer's namespace reads them, in a shared namespace, wherever they belong.
      if (target.asTarget === 'referrer-namespace' && !boundToReacher(namespace, reach, ctx))
        findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `names ${ref.kind} ${ref.name}, cluster-scoped, whose Secrets are read by name in namespace ${namespace}, where one may be another environment's (${ref.follower}); name one of your own namespace instead, or use a namespace bound to your environment` });
      continue;
    }
    const row = readableRow(ref.group, ref.kind);
    if (row === undefined) {
      const group = ref.group === '' ? '' : ` (${ref.group})`;
      findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `names ${what}${group}, a kind Deed does not read, so whose it is cannot be known (${ref.follower}); only the platform's principals may write this reference` });
      continue;
    }
    if (at !== namespace) {
      const scope = ctx.scope.of(at);
      // Outside the review scope no environment's object is stamped and Deed reads nothing: the
      // namespace is the platform's, and Gateway API follows the reference only where a
      // ReferenceGrant written there (RBAC's to allow) consents.
      if (scope.state === 'out') continue;
      if (scope.state === 'unknown') {
        findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `cannot tell which environment ${what} belongs to: whether namespace ${at} is in the review scope is not known (${scope.reason})` });
        continue;
      }
    }
    if (judged.size > MAX_REFERENCE_READS) {
      findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `names more than ${MAX_REFERENCE_READS} objects; Deed reads at most that many for one object, so whose ${what} is was not read` });
      continue;
    }
    const found = ctx.lookup.get(row.resource as Parameters<DecisionContext['lookup']['get']>[0], at, ref.name);
    const verdict = judgeReference(found, row.kind, at, reach, ctx);
    if (ref.writes === true) {
      // What the follower writes into: it creates one that does not exist yet; one that carries
      // no stamps outside a bound namespace is the platform's, or what an operator made for an
      // environment, and only the platform may have the follower write over it.
      // Merged into (an ExternalSecret's Merge), it must exist; created with no owner (an ACME
      // account key), it must for an environment, whose key it would otherwise not be: the
      // reference's own rules judge one that does not.
      const mustExist = ref.merges === true || (ref.createsUnowned === true && reach.requester.environment.kind !== 'none');
      if (found.state === 'absent' && !mustExist) continue;
      if (!unstampedWritable && verdict.kind === 'allowed' && verdict.unstamped === true) {
        findings.push({ rule: RULES.referenceCrossEnvironment.id, path: ref.path, message: `names ${what}, which carries no stamps: the platform's, or what an operator made for an environment (${ref.follower}); ${reach.requester.username} may not have it written over: name one that does not exist yet` });
        continue;
      }
    }
    // What the follower changes: the platform's, unstamped, is no environment's to have changed,
    // as it is none's to change itself (guard.shared-input); a principal of no environment may.
    if (ref.changes === true && !unstampedWritable && verdict.kind === 'allowed' && verdict.unstamped === true && reach.requester.environment.kind === 'one' && !isTrusted(reach.requester, ctx.policy) && !isPlatform(reach.requester, ctx.policy)) {
      findings.push({ rule: RULES.referenceCrossEnvironment.id, path: ref.path, message: `names ${what}, which carries no stamps in a namespace bound to no environment: it is the platform's (${ref.follower}); ${reach.requester.username} acts for "${reach.requester.environment.id}" and may not have it changed, as it may not change it itself (guard.shared-input): name one of your own` });
      continue;
    }
    if (verdict.kind === 'allowed') continue;
    // Followed by name (a StatefulSet's governing Service): whoever creates it later is judged against this object.
    if (verdict.kind === 'absent' && ref.mayNameAbsent === true) continue;
    if (verdict.kind === 'unknown') findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `cannot tell which environment ${what} belongs to: ${verdict.reason}` });
    else if (verdict.kind === 'unverifiable')
      findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `${what} carries Deed's stamps but they do not verify (${verdict.reason}), so its environment is unknown` });
    else if (verdict.kind === 'absent')
      findings.push({ rule: RULES.referenceAbsent.id, path: ref.path, message: `names ${what}, which does not exist; create it first, or one another environment creates under that name later would be acted on (${ref.follower})` });
    else findings.push({ rule: RULES.referenceCrossEnvironment.id, path: ref.path, message: `names ${what}, which belongs to another environment (${ref.follower}); ${whoMayNot(reach)}` });
  }
  return findings;
}

/** Whether `namespace` is bound to an environment the requester acts for: no other environment's object is there to name. */
function boundToReacher(namespace: string, reach: Reach, ctx: DecisionContext): boolean {
  const bound = ctx.policy.envByBoundNamespace.get(namespace);
  return bound !== undefined && actsFor(reach.requester, bound, ctx.policy);
}

/** Kubernetes' own groups of workload controllers: no custom resource is served in them, and Deed reads every controller kind they hold. */
const WORKLOAD_GROUPS: ReadonlySet<string> = new Set(['', 'apps', 'batch']);

/**
 * The controlling owner reference a client writes at CREATE. Controllers compare owners by
 * uid (the job controller counts a pod whose reference has its uid, whatever kind and name
 * it gives), so the reference must name an object that exists with that uid; one that names
 * none would be a uid planted for later. An owner of a kind Deed does not read (an operator's
 * custom resource, whose operator makes its own pods) is its operator's to judge, but a kind
 * that does not exist in Kubernetes' own workload groups names nothing at all.
 */
function controllerReference(obj: KubeObject | null | undefined, namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const ref = controllerOf(obj);
  if (ref === undefined) return [];
  const what = `${ref.kind} ${namespace}/${ref.name}`;
  const key = ownerLookupKey(ref, namespace);
  if (key === undefined)
    return WORKLOAD_GROUPS.has(groupOf(ref.apiVersion))
      ? [{ rule: RULES.referenceUnknown.id, path: 'metadata.ownerReferences', message: `the controller reference names ${ref.kind} (${ref.apiVersion}), no kind Kubernetes serves as a controller there; drop the reference` }]
      : [];
  const found = ctx.lookup.get(key.resource, namespace, ref.name);
  if (found.state === 'absent')
    return [{ rule: RULES.referenceAbsent.id, path: 'metadata.ownerReferences', message: `the controller reference names ${what}, which does not exist (controllers count what carries their uid as their own); name an owner that exists, or drop the reference` }];
  if (found.state === 'found' && found.metadata.uid !== undefined && found.metadata.uid !== ref.uid)
    return [{ rule: RULES.referenceUnknown.id, path: 'metadata.ownerReferences', message: `the controller reference names ${what} with a uid it does not have (controllers count what carries their uid as their own); name the owner's own uid, or drop the reference` }];
  const owner = environmentOfController(ref, namespace, 'this object', ctx, RULES.referenceUnknown.id);
  if ('finding' in owner) return [{ ...owner.finding, path: 'metadata.ownerReferences' }];
  const environment = owner.environment;
  if (environment === reach.environment || (environment !== undefined && actsFor(reach.requester, environment, ctx.policy))) return [];
  return [
    {
      rule: RULES.referenceCrossEnvironment.id,
      path: 'metadata.ownerReferences',
      message: `the controller reference names ${ref.kind} ${namespace}/${ref.name}, which belongs to ${environment === undefined ? 'no environment' : 'another environment'} (its controller would count, adopt or delete this object as its own); ${whoMayNot(reach)}; drop the reference${reach.requester.environment.kind === 'none' ? ' (an operator that makes objects for the resources it reconciles is listed in workloadControllers.users: what it makes is then its resource\'s environment\'s)' : ''}`,
    },
  ];
}
