// Workloads are stamped kinds (docs/security-model.md, "Controller doors"): a Deployment,
// ReplicaSet, StatefulSet, DaemonSet, Job, CronJob or ReplicationController that an
// environment's principal creates carries that environment, its owner, a nonce and an
// attestation, as a sandbox object does; they are frozen after, and every door that can
// change or remove the workload is guarded: UPDATE (rollbacks and rollout restarts are
// UPDATEs), DELETE (deletecollection reviews each item as a DELETE), /status and /scale.
// One environment's janitor can then neither scale another's lab to zero nor delete it.
//
// The facts of each workload's stamps are its row of the kind table (../kinds.ts).
import type { AdmissionRequest, GroupVersionResource } from '../../admission/types.js';
import { patched, type Finding, type Verdict } from '../../admission/verdict.js';
import { SCALED_RESOURCES, stampRowNamed, type LookupResource, type StampRow } from '../kinds.js';
import type { Requester } from '../requester/identity.js';
import type { DecisionContext } from '../policy.js';
import { guardedWrite } from '../rules/guarded-writes.js';
import { sharedInputGuard } from '../rules/shared-input.js';
import { ownershipOfFound } from '../ownership.js';
import { stampedObjectFindings } from '../stamped-object.js';
import type { CreatorIdentity } from '../create-gate.js';
import { RULES } from '../rules/catalog.js';
import { isTrusted } from '../requester/principals.js';
import type { WorkloadKind } from './kinds.js';

/** The stamps a workload kind gets at CREATE; undefined for a kind that is not stamped (a PodTemplate). */
export function workloadStampRow(kind: WorkloadKind): StampRow | undefined {
  return stampRowNamed(kind.kind);
}

/** The mutating side: a workload's own stamps, then its templates' claim stamps, as one patch. */
export function withTemplateOps(stamps: Verdict, templates: Verdict): Verdict {
  if (!stamps.allowed) return stamps;
  return patched([...(templates.patch ?? []), ...(stamps.patch ?? [])], [...templates.warnings, ...stamps.warnings]);
}

/**
 * The validating side's rules of a workload's own metadata, for a request on the workload
 * itself or on its status (both carry the whole object); the template review (review.ts)
 * runs beside it and reports who may not create here at all.
 */
export function workloadStampFindings(req: AdmissionRequest, kind: WorkloadKind, namespace: string, requester: Requester, ctx: DecisionContext, creator?: CreatorIdentity): Finding[] {
  const stamped = workloadStampRow(kind);
  return stamped === undefined ? [] : stampedObjectFindings(req, stamped, namespace, requester, ctx, false, creator);
}

/**
 * A /scale write carries a Scale, whose metadata holds the workload's name and uid but not
 * its labels or annotations: whose the workload is comes from a lookup, and when Deed
 * cannot know, it refuses (the scaler retries).
 */
export function scaleFindings(kind: WorkloadKind, resource: Pick<GroupVersionResource, 'group' | 'resource'>, name: string | undefined, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  const stamped = workloadStampRow(kind);
  if (stamped === undefined || isTrusted(requester, ctx.policy)) return [];
  if (name === undefined) return [{ rule: RULES.requestMalformed.id, message: `the ${kind.kind} scale names no object` }];
  if (!SCALED_RESOURCES.includes(resource.resource)) return [{ rule: RULES.requestMalformed.id, message: `${resource.resource} has no scale Deed knows` }];
  const found = ctx.lookup.get(resource.resource as LookupResource, namespace, name);
  if (found.state === 'found') {
    const owner = ownershipOfFound(found, stamped.kind, namespace, ctx.policy, ctx.keyRing);
    // The platform's unstamped workload in a namespace bound to none: scaled to zero, it serves no environment.
    if (owner.kind === 'unowned') return sharedInputGuard(requester, owner, resource, { kind: kind.kind, namespace, name }, ctx.policy, { doing: 'scale' });
    return guardedWrite(requester, owner, ctx.policy);
  }
  const why = found.state === 'unknown' ? found.reason : 'it does not exist';
  return [{ rule: RULES.guardOwnerUnknown.id, message: `cannot tell whose ${kind.kind} ${namespace}/${name} is (${why}); refusing the scale` }];
}
