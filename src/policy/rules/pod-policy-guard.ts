// guard.pod-policy: a NetworkPolicy or PodDisruptionBudget that carries no stamps, in a
// namespace bound to no environment, whose selector reaches an environment's pods or
// runners (selector-scope.ts, `selectorReach`), is what isolates or protects them: the
// platform's egress policy for runners, its default-deny for every environment's pods, a
// manager's budget. Anyone who could rewrite or delete it would open those pods, or stall
// their evictions, without ever writing a selector that reaches them. So only the platform,
// managers of every environment it reaches, system controllers and break-glass change its
// spec or owner references, or delete it. A tenant's own (which excludes runners and names no environment) reaches none.
import { isDeepStrictEqual } from 'node:util';
import type { Finding } from '../../admission/verdict.js';
import type { KubeObject } from '../../admission/types.js';
import type { Ownership } from '../ownership.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { isManager, isPlatform, isTrusted } from '../requester/principals.js';
import { selectorReach } from '../selector-scope.js';
import { RULES } from './catalog.js';

/** `after`: the object as an UPDATE leaves it; undefined for a DELETE. */
export function podPolicyGuard(requester: Requester, owner: Ownership, before: KubeObject, after: KubeObject | undefined, resource: { group: string; resource: string }, object: { kind: string; namespace: string; name: string }, policy: Policy): Finding[] {
  if (owner.kind !== 'unowned' || isTrusted(requester, policy) || isPlatform(requester, policy)) return [];
  // What it does is its spec; an owner reference would let the garbage collector delete it. Labels, annotations and finalizers stay anyone's RBAC allows.
  if (after !== undefined && keeps(before, after)) return [];
  const reach = selectorReach(before, resource, policy);
  if (reach !== 'all' && reach.every((env) => isManager(requester, env, policy))) return [];
  // A refusal names no environment to another environment's principal (docs/security-model.md, "What a refusal tells").
  const whose =
    reach === 'all' ? "every environment's pods or runners" : requester.environment.kind === 'none' ? `the pods or runners of environments ${reach.map((e) => JSON.stringify(e)).join(', ')}` : "an environment's pods or runners";
  return [
    {
      rule: RULES.guardPodPolicy.id,
      message: `${object.kind} ${object.namespace}/${object.name} carries no stamps and its selector reaches ${whose}: it is the platform's, and only the platform, their managers, system controllers and break-glass may change or delete it (write your own, scoped to your pods)`,
    },
  ];
}

function keeps(before: KubeObject, after: KubeObject): boolean {
  try {
    return isDeepStrictEqual(before.spec, after.spec) && isDeepStrictEqual(before.metadata.ownerReferences ?? [], after.metadata.ownerReferences ?? []);
  } catch {
    return false; // nested past the comparison's stack (a hostile body): judged as a change
  }
}
