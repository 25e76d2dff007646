// The snapshot door (doors/door.ts): a VolumeSnapshot, a copy of the claim it names, which a
// new claim can restore: judged as a clone of that claim. Not stamped: whose it is, for its
// later writes, status writes and deletes, is its source claim's (rules/snapshot-source.ts).
import type { AdmissionRequest } from '../../admission/types.js';
import { allowed, type Finding, type Verdict } from '../../admission/verdict.js';
import { environmentId, type Requester } from '../requester/identity.js';
import type { DecisionContext } from '../policy.js';
import { isTrusted } from '../requester/principals.js';
import { enforce } from '../rules/enforcement.js';
import { ambiguousIdentity } from '../create-gate.js';
import { claimEnvironment, snapshotClaims } from '../pod/claim-environment.js';
import { claimKeys, lookupKey, type LookupKey } from '../reads.js';
import { keptScope } from '../selector-scope.js';
import { snapshotSourceKeys, snapshotWrite } from '../rules/snapshot-source.js';
import type { DoorReview, DoorFacts } from './door-review.js';
import type { Door } from './door.js';

type SnapshotDoor = Extract<Door, { kind: 'snapshot' }>;

export const SNAPSHOT_DOOR: DoorReview<SnapshotDoor> = {
  needs: ({ req, namespace, judges }) => (judges ? snapshotReads(req, namespace) : []),
  // The scope a selector was stored with is kept, as through every door that carries a whole object.
  stamp: (facts, ctx) => keptScope(facts.request, ctx, facts.requester) ?? allowed(),
  judge: (facts, namespace, ctx) => validateSnapshot(facts, namespace, ctx),
  judgesCreateWhole: false,
};

/**
 * At CREATE, and on an UPDATE that changes it, the claim the snapshot copies; on every write of
 * a stored one (UPDATE, status, DELETE), the claim it copied, fresh (whose the snapshot is).
 */
function snapshotReads(req: AdmissionRequest, namespace: string): LookupKey[] {
  const stored = req.operation === 'CREATE' ? [] : snapshotSourceKeys(req.oldObject, namespace);
  const copies = req.object && (req.operation === 'CREATE' || (req.operation === 'UPDATE' && req.subResource === undefined)) ? claimKeys(snapshotClaims(req.object), namespace) : [];
  // The fresh read of a claim answers for both.
  const read = new Set(stored.map(lookupKey));
  return [...stored, ...copies.filter((k) => !read.has(lookupKey(k)))];
}

/** A VolumeSnapshot copies a claim: judged as a clone of it; a stored one is its source claim's environment's to change or delete. */
function validateSnapshot(facts: DoorFacts<SnapshotDoor>, namespace: string, ctx: DecisionContext): Verdict {
  const { request: req, requester } = facts;
  const guarded = snapshotWrite(req, namespace, requester, ctx);
  if (req.operation === 'DELETE' || req.subResource !== undefined) return enforce(guarded, ctx.policy);
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return allowed();
  // An ambiguous requester is refused once, whichever rule says so first.
  const copied = copiedClaim(req, namespace, requester, ctx).filter((f) => !guarded.some((g) => g.rule === f.rule && g.message === f.message));
  return enforce([...guarded, ...copied], ctx.policy);
}

/** The claim a new snapshot copies, or the one an UPDATE makes it copy instead, must be one the requester may reach. */
function copiedClaim(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  if (isTrusted(requester, ctx.policy)) return [];
  if (requester.environment.kind === 'ambiguous') return [ambiguousIdentity(requester, requester.environment.ids)];
  const refs = snapshotClaims(req.object!);
  if (req.operation === 'UPDATE' && req.oldObject && JSON.stringify(snapshotClaims(req.oldObject)) === JSON.stringify(refs)) return [];
  return claimEnvironment(refs, namespace, { requester, environment: environmentId(requester) }, ctx);
}
