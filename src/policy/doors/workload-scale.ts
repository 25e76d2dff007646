// The workload-scale door (doors/door.ts): a workload's /scale, whose review carries a Scale
// that names the workload and holds none of its stamps: a scale makes or removes pods, and
// whose the workload is comes from a lookup (workload/stamps.ts).
import { allowed } from '../../admission/verdict.js';
import { SCALED_RESOURCES, type LookupResource } from '../kinds.js';
import { enforce } from '../rules/enforcement.js';
import { scaleFindings } from '../workload/stamps.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

export const WORKLOAD_SCALE_DOOR: DoorReview<Extract<Door, { kind: 'workload-scale' }>> = {
  // A scale names the workload, whose stamps are looked up.
  needs: ({ door, namespace, judges }) => (judges && door.name !== undefined && SCALED_RESOURCES.includes(door.resource) ? [{ resource: door.resource as LookupResource, namespace, name: door.name }] : []),
  stamp: () => allowed(),
  judge: (facts, namespace, ctx) => enforce(scaleFindings(facts.door.workload, facts.door.resource, facts.door.name, namespace, facts.requester, ctx), ctx.policy),
  judgesCreateWhole: false,
};
