// What both webhooks check first on a CREATE of a sandbox kind, before any stamp is
// computed or checked: the body's kind, the namespace, and who is asking.
import type { AdmissionRequest } from '../admission/types.js';
import { allowed, denied, type Finding, type Verdict } from '../admission/verdict.js';
import type { Requester } from './requester/identity.js';
import type { SandboxKind } from './kinds.js';
import type { Policy } from './policy.js';
import { actsFor } from './requester/principals.js';
import { presentOwnedKeys } from './stamps/identity-stamps.js';
import { RULES } from './rules/catalog.js';

/**
 * The webhooks are registered by resource; a body whose kind disagrees with its resource
 * could smuggle one kind's object past another kind's rules. A client value is quoted
 * only as a short string: String() of a deeply nested list overflows the stack.
 */
export function kindMismatch(req: AdmissionRequest, kind: { kind: string }): Finding | undefined {
  for (const given of [req.kind.kind, req.object?.kind, req.oldObject?.kind])
    if (given !== undefined && given !== kind.kind)
      return {
        rule: RULES.requestMalformed.id,
        message: `resource ${req.resource.resource} must carry a ${kind.kind}, got ${typeof given === 'string' ? JSON.stringify(given.slice(0, 80)) : 'a non-string kind'}`,
      };
  return undefined;
}

export function missingNamespace(kind: SandboxKind): Verdict {
  return denied([{ rule: RULES.requestMalformed.id, message: `a ${kind.kind} review must name a namespace` }]);
}

export function ambiguousIdentity(requester: Requester, ids: string[]): Finding {
  return { rule: RULES.identityAmbiguous.id, message: `${requester.username} acts for several environments (${ids.join(', ')}); the policy must map it to one` };
}

/**
 * Who a requester is as a creator in a namespace, before any object is read: the
 * environment it stamps for, the verdict identity alone decides (a bound namespace it may not
 * create in, an ambiguous identity, an unreadable runner), or no environment (then what
 * decides is whether its object carries admission-owned keys: `createIdentity`). Computed
 * once per review (review-facts.ts).
 */
export type CreatorIdentity = { environment: string } | { verdict: Verdict } | { none: true };

export function creatorIdentity(requester: Requester, namespace: string, policy: Policy): CreatorIdentity {
  // A bound namespace takes sandbox objects from its own environment only: no other
  // environment plants objects there that the owner could then neither change nor delete.
  const bound = policy.envByBoundNamespace.get(namespace);
  if (bound !== undefined && !actsFor(requester, bound, policy)) {
    const who = requester.environment.kind === 'one' ? `acts for "${requester.environment.id}"` : requester.environment.kind === 'none' ? 'acts for no environment' : 'acts for several environments';
    return { verdict: denied([{ rule: RULES.guardNamespaceBinding.id, message: `namespace ${namespace} is bound to environment "${bound}"; ${requester.username} ${who} and may not create sandbox objects in it` }]) };
  }
  const env = requester.environment;
  if (env.kind === 'none') return { none: true };
  if (env.kind === 'ambiguous') return { verdict: denied([ambiguousIdentity(requester, env.ids)]) };
  if (requester.runnerError !== undefined) return { verdict: denied([{ rule: RULES.identityMalformed.id, message: requester.runnerError }]) };
  return { environment: env.id };
}

/** What a requester's CREATE of an object is: stamped for an environment, or the verdict identity alone decides. */
export type CreateGate = { environment: string } | { verdict: Verdict };

/**
 * The environment a CREATE is stamped for, or the verdict identity alone decides: an
 * unmapped requester passes unless it carries an admission-owned key (forged); an
 * ambiguous one, or an unreadable runner, is denied. `identity`: the requester's creator
 * identity, when the review already has it.
 */
export function createIdentity(
  requester: Requester,
  namespace: string,
  labels: Record<string, string>,
  annotations: Record<string, string>,
  policy: Policy,
  identity: CreatorIdentity = creatorIdentity(requester, namespace, policy),
): CreateGate {
  if (!('none' in identity)) return identity;
  const forged = presentOwnedKeys(labels, annotations, policy.keys);
  return {
    verdict:
      forged.length === 0
        ? allowed()
        : denied(forged.map((k) => ({ rule: RULES.stampForged.id, path: k.path, message: `${requester.username} acts for no environment and cannot set the admission-owned key ${k.name}` }))),
  };
}
