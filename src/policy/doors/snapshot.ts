// The snapshot door (doors/door.ts): a VolumeSnapshot, a copy of the claim it names, which a
// new claim can restore: judged as a clone of that claim. Not stamped.
import type { AdmissionRequest } from '../../admission/types.js';
import { allowed, denied, type Verdict } from '../../admission/verdict.js';
import { environmentId, type Requester } from '../requester/identity.js';
import type { DecisionContext } from '../policy.js';
import { isTrusted } from '../requester/principals.js';
import { enforce } from '../rules/enforcement.js';
import { ambiguousIdentity } from '../create-gate.js';
import { claimEnvironment, snapshotClaims } from '../pod/claim-environment.js';
import { claimKeys } from '../reads.js';
import { keptScope } from '../selector-scope.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

export const SNAPSHOT_DOOR: DoorReview<Extract<Door, { kind: 'snapshot' }>> = {
  needs: ({ req, namespace, judges }) => (judges && req.object && (req.operation === 'CREATE' || req.operation === 'UPDATE') ? claimKeys(snapshotClaims(req.object), namespace) : []),
  // The scope a selector was stored with is kept, as through every door that carries a whole object.
  stamp: (facts, ctx) => keptScope(facts.request, ctx, facts.requester) ?? allowed(),
  judge: (facts, namespace, ctx) => validateSnapshot(facts.request, namespace, facts.requester, ctx),
  judgesCreateWhole: false,
};

/** A VolumeSnapshot copies a claim: judged as a clone of it. */
function validateSnapshot(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object || isTrusted(requester, ctx.policy)) return allowed();
  if (requester.environment.kind === 'ambiguous') return denied([ambiguousIdentity(requester, requester.environment.ids)]);
  const refs = snapshotClaims(req.object);
  if (req.operation === 'UPDATE' && req.oldObject && JSON.stringify(snapshotClaims(req.oldObject)) === JSON.stringify(refs)) return allowed();
  return enforce(claimEnvironment(refs, namespace, { requester, environment: environmentId(requester) }, ctx), ctx.policy);
}
