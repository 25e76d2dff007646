// Principals the policy names beside the environments: system controllers, break-glass,
// and each environment's managers.
import type { Requester } from './identity.js';
import type { Policy } from '../policy.js';

/** System controllers and break-glass principals: they act on any environment's objects. */
export function isTrusted(requester: Requester, policy: Policy): boolean {
  return isSystem(requester, policy) || isBreakGlassPrincipal(requester, policy);
}

/** Named in `breakGlass` (by user or group): its decisions are made again as if it were not (admission/break-glass.ts, `isBreakGlass`, which the review route asks of the request). */
export function isBreakGlassPrincipal(requester: Pick<Requester, 'username' | 'groups'>, policy: Policy): boolean {
  return policy.breakGlassUsers.has(requester.username) || requester.groups.some((g) => policy.breakGlassGroups.has(g));
}

/** System controllers alone (not break-glass): what they create Deed stamps nothing on. */
export function isSystem(requester: Requester, policy: Policy): boolean {
  return policy.systemUsers.has(requester.username) || requester.groups.some((g) => policy.systemGroups.has(g));
}

/**
 * The platform's own principals (`platform`, by default the group system:masters: whoever
 * installs and upgrades Deed, and the deployers the platform declares): they switch the review
 * scope (src/install/review-scope-policy.ts), what acts on a whole shared namespace is theirs,
 * and what they write may point at any environment's objects.
 */
export function isPlatform(requester: Requester, policy: Policy): boolean {
  const { users, groups } = policy.config.platform;
  return users.includes(requester.username) || requester.groups.some((g) => groups.includes(g));
}

/** Is the requester a manager of `environment` (the component that creates and deletes its runners)? */
export function isManager(requester: Requester, environment: string, policy: Policy): boolean {
  return (
    (policy.managedByUser.get(requester.username) ?? []).includes(environment) ||
    requester.groups.some((g) => (policy.managedByGroup.get(g) ?? []).includes(environment))
  );
}

/** May the requester act on `environment`'s behalf: its own principal, a manager, or trusted? */
export function actsFor(requester: Requester, environment: string, policy: Policy): boolean {
  return (requester.environment.kind === 'one' && requester.environment.id === environment) || isManager(requester, environment, policy) || isTrusted(requester, policy);
}
