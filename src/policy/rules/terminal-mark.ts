// Terminal marks (docs/operations.md, "Terminal marks"): `<prefix>/terminal: "true"` is the
// platform's word that a run's object is finished, and the reaper deletes a marked object of
// any kind. So only the object's own environment may write it, and once written no one
// takes it back (the reaper may already have judged it). An annotation, not a label: labels
// are what selectors (Services, NetworkPolicies, controllers) match, and marking a pod
// finished must not change what selects it; the reaper reads every object of its
// environment anyway, so a selector on the mark would save it nothing.
import type { KubeObject } from '../../admission/types.js';
import { quoted, type Finding } from '../../admission/verdict.js';
import type { Ownership } from '../ownership.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { isManager } from '../requester/principals.js';
import { entryOf } from '../unstructured.js';
import { annotationPath } from '../stamps/identity-stamps.js';
import { RULES } from './catalog.js';

/** At CREATE (`before` undefined) only the value is checked: the creator's environment is the one the stamps name. */
export function terminalMark(before: KubeObject | undefined, after: KubeObject, owner: Ownership | undefined, requester: Requester, policy: Policy): Finding[] {
  const key = policy.keys.terminal;
  const path = annotationPath(key);
  const was = before === undefined ? undefined : entryOf(before.metadata.annotations ?? {}, key);
  const is = entryOf(after.metadata.annotations ?? {}, key);
  if (was === is) return [];
  // Objects that are no environment's are not the reaper's business either.
  if (owner?.kind === 'unowned') return [];
  if (was !== undefined)
    return [{ rule: RULES.terminalFrozen.id, path, message: `${key} was set to ${quoted(was)} and cannot be changed or removed: the run it marks is over` }];
  if (is !== 'true') return [{ rule: RULES.terminalMalformed.id, path, message: `${key} must be "true", got ${JSON.stringify(is!.slice(0, 80))}` }];
  if (owner === undefined) return [];
  if (owner.kind === 'unverifiable')
    return [{ rule: RULES.terminalEnvironment.id, path, message: `the object's stamps do not verify (${owner.reason}): it belongs to no environment, so none may mark it terminal` }];
  const env = requester.environment;
  if ((env.kind === 'one' && env.id === owner.environment) || isManager(requester, owner.environment, policy)) return [];
  const who = env.kind === 'one' ? `acts for "${env.id}"` : env.kind === 'ambiguous' ? `acts for several environments (${env.ids.join(', ')})` : 'acts for no environment';
  // Names no environment but the requester's own (docs/security-model.md, "What a refusal tells").
  return [{ rule: RULES.terminalEnvironment.id, path, message: `only a principal of the environment this object belongs to may mark it terminal; ${requester.username} ${who}` }];
}
