// The pod-by-name door (doors/door.ts): a request that names a pod but carries something
// else (an Eviction, a Binding, the options of a CONNECT into its containers). Whose the pod
// is comes from a lookup (rules/named-pod.ts); nothing is stamped.
import type { AdmissionRequest } from '../../admission/types.js';
import { allowed, denied, type Finding, type Verdict } from '../../admission/verdict.js';
import type { Requester } from '../requester/identity.js';
import type { DecisionContext } from '../policy.js';
import { RULES } from '../rules/catalog.js';
import { enforce } from '../rules/enforcement.js';
import { frozenBindingAnnotations } from '../rules/frozen-stamps.js';
import { namedPodGuard } from '../rules/named-pod.js';
import { bindingReads } from '../rules/binding-reads.js';
import { asRequested } from '../reads.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

type PodByNameDoor = Extract<Door, { kind: 'pod-by-name' }>;

export const POD_BY_NAME_DOOR: DoorReview<PodByNameDoor> = {
  // Only the validating webhook judges them (the mutating webhooks' rules send it none).
  // A binding's pod, then what it reads once bound (rules/binding-reads.ts).
  needs: ({ req, door, namespace, judges }) => (door.pod !== undefined && judges ? [{ resource: 'pods', namespace, name: door.pod, ...podAsNamed(req, door) }] : []),
  stamp: () => allowed(),
  judge: (facts, namespace, ctx) => validatePodByName(facts.request, facts.door, namespace, facts.requester, ctx),
  judgesCreateWhole: false,
};

/**
 * How the pod is read. The review names it by name, and the request acts at once on the pod
 * standing under it: one deleted and made again by another environment within the watch's
 * delay would be judged by the cache as the one before. A binding gives the pod's uid (the
 * scheduler's always does): the cache answers only for that pod. An eviction or a CONNECT, or
 * a binding without it, reads the pod from the API server.
 */
function podAsNamed(req: AdmissionRequest, door: PodByNameDoor): { withReads?: true; uid?: string; fresh?: true } {
  return door.action === 'binding' ? { withReads: true, ...asRequested(req.object) } : { fresh: true };
}

/**
 * An eviction, a binding or a CONNECT into a pod: the review names the pod, so whose it is
 * comes from a lookup (rules/named-pod.ts). When Deed cannot know, it refuses.
 */
function validatePodByName(req: AdmissionRequest, door: PodByNameDoor, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  const { policy } = ctx;
  const findings: Finding[] = door.action === 'binding' ? frozenBindingAnnotations(req.object ?? undefined, policy.keys) : [];
  if (door.pod === undefined) return denied([{ rule: RULES.requestMalformed.id, message: `the ${door.action} names no pod` }]);
  findings.push(...namedPodGuard(requester, door.action, namespace, door.pod, ctx));
  // Whoever binds: the kubelet then hands the pod what it names.
  if (door.action === 'binding') findings.push(...bindingReads(ctx.lookup.get('pods', namespace, door.pod), door.pod, namespace, ctx));
  return enforce(findings, policy);
}
