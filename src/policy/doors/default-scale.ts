// The default-scale door (doors/door.ts): a default-row kind's /scale (a custom resource's),
// whose review carries a Scale that names the object and none of its stamps
// (rules/custom-scale.ts). Nothing is read or stamped.
import { allowed } from '../../admission/verdict.js';
import { enforce } from '../rules/enforcement.js';
import { customScaleGuard } from '../rules/custom-scale.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

export const DEFAULT_SCALE_DOOR: DoorReview<Extract<Door, { kind: 'default-scale' }>> = {
  needs: () => [],
  stamp: () => allowed(),
  judge: (facts, namespace, ctx) => enforce(customScaleGuard(facts.door, namespace, facts.requester, ctx), ctx.policy),
  judgesCreateWhole: false,
};
