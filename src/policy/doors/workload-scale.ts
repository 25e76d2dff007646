// The workload-scale door (doors/door.ts): a workload's /scale, whose review carries a Scale
// that names the workload and holds none of its stamps: a scale makes or removes pods, and
// whose the workload is comes from a lookup (workload/stamps.ts).
import { allowed } from '../../admission/verdict.js';
import { SCALED_RESOURCES, type LookupResource } from '../kinds.js';
import { enforce } from '../rules/enforcement.js';
import { scaleFindings } from '../workload/stamps.js';
import { asRequested } from '../reads.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

export const WORKLOAD_SCALE_DOOR: DoorReview<Extract<Door, { kind: 'workload-scale' }>> = {
  // A scale names the workload, whose stamps are looked up: the one of the Scale's uid (the API
  // server gives it the workload's), so a cached record of one deleted and made again under the
  // name is not taken for it.
  needs: ({ req, door, namespace, judges }) => {
    if (!judges || door.name === undefined || !SCALED_RESOURCES.includes(door.resource)) return [];
    return [{ resource: door.resource as LookupResource, namespace, name: door.name, ...asRequested(req.object) }];
  },
  stamp: () => allowed(),
  judge: (facts, namespace, ctx) => enforce(scaleFindings(facts.door.workload, facts.request.resource, facts.door.name, namespace, facts.requester, ctx), ctx.policy),
  judgesCreateWhole: false,
};
