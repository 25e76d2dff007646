// Guarded writes (confused deputy): an UPDATE or DELETE of a managed object is made only
// by a principal of the object's own environment, a system controller that legitimately
// deletes or orphans, or a configured break-glass principal.
import type { Finding } from '../../admission/verdict.js';
import type { Requester } from '../identity.js';
import type { Policy } from '../policy.js';
import { RULES } from './catalog.js';
import { ambiguousIdentity } from '../create-gate.js';

export function guardedWrite(requester: Requester, objectEnvironment: string, policy: Policy): Finding[] {
  const env = requester.environment;
  if (env.kind === 'one') {
    if (env.id === objectEnvironment) return [];
    return [{ rule: RULES.guardCrossEnvironment.id, message: `${requester.username} acts for "${env.id}" but the object belongs to "${objectEnvironment}"` }];
  }
  if (env.kind === 'ambiguous')
    return [ambiguousIdentity(requester, env.ids)];
  const trusted =
    policy.systemUsers.has(requester.username) ||
    policy.breakGlassUsers.has(requester.username) ||
    requester.groups.some((g) => policy.systemGroups.has(g) || policy.breakGlassGroups.has(g));
  if (trusted) return [];
  return [{ rule: RULES.guardUnmapped.id, message: `${requester.username} acts for no environment and is not a system controller or break-glass principal (object environment "${objectEnvironment}")` }];
}
