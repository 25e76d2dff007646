// Guarded writes (confused deputy): a change or removal of an object that belongs to an
// environment (stamps that verify, a runner pod whose service account acts for it, or an
// unstamped object in a namespace bound to it) is
// made only by that environment's principals or managers, a system controller that
// legitimately deletes or orphans, or a break-glass principal. An object whose stamps do
// not verify belongs to no one: only system controllers and break-glass may touch it.
import type { Finding } from '../../admission/verdict.js';
import type { Requester } from '../requester/identity.js';
import type { Ownership } from '../ownership.js';
import type { Policy } from '../policy.js';
import { RULES } from './catalog.js';
import { ambiguousIdentity } from '../create-gate.js';
import { isManager, isTrusted } from '../requester/principals.js';

export function guardedWrite(requester: Requester, owner: Ownership, policy: Policy): Finding[] {
  if (owner.kind === 'unowned') return [];
  // Break-glass and system controllers win over an environment membership they may also have.
  if (isTrusted(requester, policy)) return [];
  const env = requester.environment;
  if (owner.kind === 'unverifiable') {
    // The label is named only to the environment it claims: to anyone else it is another environment's name.
    const own = owner.label !== undefined && env.kind === 'one' && env.id === owner.label;
    return [
      {
        rule: RULES.attestationInvalid.id,
        path: 'metadata.annotations',
        message: `the object's stamps do not verify (${owner.reason}), so it belongs to no environment${own ? ` whatever its label says (${JSON.stringify(owner.label)})` : ''}; only system controllers and break-glass principals may change or delete it`,
      },
    ];
  }
  const objectEnvironment = owner.environment;
  if (isManager(requester, objectEnvironment, policy)) return [];
  // A refusal names no other environment, runner or service account (docs/security-model.md,
  // "What a refusal tells"): only that the object is not the requester's environment's.
  if (env.kind === 'one') {
    if (env.id === objectEnvironment) return [];
    return [{ rule: RULES.guardCrossEnvironment.id, message: `${requester.username} acts for "${env.id}", and this object belongs to another environment; only that environment's principals, its managers, system controllers and break-glass may change or delete it` }];
  }
  if (env.kind === 'ambiguous') return [ambiguousIdentity(requester, env.ids)];
  return [{ rule: RULES.guardUnmapped.id, message: `${requester.username} acts for no environment and is not a manager, system controller or break-glass principal; this object belongs to an environment` }];
}
