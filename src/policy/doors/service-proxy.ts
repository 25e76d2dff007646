// The service-proxy door (doors/door.ts): a CONNECT to a Service's proxy, which reaches
// whichever pods the Service selects (rules/service-proxy.ts). Nothing is read or stamped.
import { allowed } from '../../admission/verdict.js';
import { enforce } from '../rules/enforcement.js';
import { serviceProxyGuard } from '../rules/service-proxy.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

export const SERVICE_PROXY_DOOR: DoorReview<Extract<Door, { kind: 'service-proxy' }>> = {
  needs: () => [],
  stamp: () => allowed(),
  judge: (facts, namespace, ctx) => enforce(serviceProxyGuard(facts.requester, namespace, facts.door.service, ctx.policy), ctx.policy),
  judgesCreateWhole: false,
};
