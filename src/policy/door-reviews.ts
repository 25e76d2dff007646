// One door review per door (doors/door-review.ts), looked up, not branched to: the mutating
// webhook's stamping (mutate.ts), the validating webhook's judgement (validate.ts), `/admit`'s
// one call per create (create-judgement.ts) and the read plan (lookup.ts) each take the
// request's door's row of this table. A new door is a Door kind, its file and its row here.
//
// A review's facts are built here too, once per review (review-facts.ts): the door the
// request comes through, who asks, whether that is a workload controller, whether its
// body's kind is the kind its door carries, who the requester is as a creator in the
// namespace, and whether `/admit` judges it whole. Pure: the request and the policy in, no
// lookup (what a controller's owner is comes from the reads, after the plan).
import type { AdmissionRequest } from '../admission/types.js';
import { doorOf, type Door } from './doors/door.js';
import type { DoorReview } from './doors/door-review.js';
import { DEFAULT_DOOR } from './doors/default.js';
import { DEFAULT_SCALE_DOOR } from './doors/default-scale.js';
import { OBJECT_DOOR } from './doors/object.js';
import { POD_BY_NAME_DOOR } from './doors/pod-by-name.js';
import { SERVICE_PROXY_DOOR } from './doors/service-proxy.js';
import { SNAPSHOT_DOOR } from './doors/snapshot.js';
import { TOKEN_REQUEST_DOOR } from './doors/token-request.js';
import { UNREVIEWED_DOOR } from './doors/unreviewed.js';
import { WORKLOAD_DOOR } from './doors/workload.js';
import { WORKLOAD_SCALE_DOOR } from './doors/workload-scale.js';
import { resolveRequester } from './requester/identity.js';
import { isWorkloadController } from './controller-made.js';
import { creatorIdentity, kindMismatch } from './create-gate.js';
import type { Policy } from './policy.js';
import type { ReviewFacts } from './review-facts.js';

export const DOOR_REVIEWS: { readonly [K in Door['kind']]: DoorReview<Extract<Door, { kind: K }>> } = {
  object: OBJECT_DOOR,
  'pod-by-name': POD_BY_NAME_DOOR,
  'service-proxy': SERVICE_PROXY_DOOR,
  workload: WORKLOAD_DOOR,
  'workload-scale': WORKLOAD_SCALE_DOOR,
  'token-request': TOKEN_REQUEST_DOOR,
  snapshot: SNAPSHOT_DOOR,
  default: DEFAULT_DOOR,
  'default-scale': DEFAULT_SCALE_DOOR,
  unreviewed: UNREVIEWED_DOOR,
};

/** The review of a door (its row, taken for any door: each row's functions take the facts of its own door only). */
export function doorReview(door: Door): DoorReview<Door> {
  return DOOR_REVIEWS[door.kind] as DoorReview<Door>;
}

/**
 * A CREATE the mutating webhook judges whole (create-judgement.ts): of a door's own
 * resource, not a subresource, through a door whose review says so (a stamped kind's, a
 * workload's, a default-row kind's); evictions, bindings and token requests stay the
 * validating webhook's. The install leaves exactly these out of the validating webhooks'
 * rules (src/install/kind-rules.ts).
 */
export function judgedWhole(req: AdmissionRequest, door: Door): boolean {
  return req.operation === 'CREATE' && req.subResource === undefined && doorReview(door).judgesCreateWhole;
}

export function reviewFacts(request: AdmissionRequest, policy: Policy): ReviewFacts {
  const door = doorOf(request);
  const requester = resolveRequester(request.userInfo, policy);
  const carried = doorReview(door).carries?.(door);
  return {
    request,
    door,
    requester,
    controller: isWorkloadController(requester, policy),
    kindMismatch: carried === undefined ? undefined : kindMismatch(request, { kind: carried }),
    identity: request.namespace === undefined ? undefined : creatorIdentity(requester, request.namespace, policy),
    judgedAtMutation: judgedWhole(request, door),
  };
}
