// guard.custom-scale: a /scale of a default-row kind (a custom resource's, say a lab's
// VirtualMachine pool) carries a Scale, which names the object but holds none of its stamps,
// and Deed does not read custom resources (its RBAC names the kinds it reads). Whose the
// object is cannot be known, so the scale is refused (fail closed) outside a namespace bound
// to an environment the requester acts for, where no other environment's objects stand. The
// HPA controller's scales (kube-system) never reach Deed; the object's own UPDATE of its
// replicas is judged as any write of it is, and is the way out the message names.
import type { Finding } from '../../admission/verdict.js';
import type { Door } from '../doors/door.js';
import type { DecisionContext } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { actsFor, isPlatform, isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';

export function customScaleGuard(door: Extract<Door, { kind: 'default-scale' }>, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  if (isTrusted(requester, ctx.policy) || isPlatform(requester, ctx.policy)) return [];
  const bound = ctx.policy.envByBoundNamespace.get(namespace);
  if (bound !== undefined && actsFor(requester, bound, ctx.policy)) return [];
  const what = `${door.resource} ${namespace}/${door.name ?? '(unnamed)'}`;
  return [
    {
      rule: RULES.guardCustomScale.id,
      message: `cannot tell whose ${what} is (a /scale carries no stamps, and Deed does not read ${door.resource}); change its replicas with an UPDATE of the object itself, which Deed judges`,
    },
  ];
}
