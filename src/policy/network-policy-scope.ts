// A NetworkPolicy acts on the pods its spec.podSelector selects: it can isolate them, or
// open them to anyone. So a policy selects only pods of environments its requester acts
// for. An environment's policy is scoped by the mutating webhook: `<prefix>/environment:
// <id>` is added to spec.podSelector.matchLabels (a label Deed stamps on the environment's
// pods and freezes), and the validating webhook holds it there, at CREATE and on UPDATE.
// A requester of no environment (a manager, an operator tool) scopes its own: a term for an
// environment it manages, or `<prefix>/environment DoesNotExist` (no environment's pods);
// a manager's policy in a namespace bound to its environment, and a break-glass or system
// principal's, may select anything. Peer selectors (ingress from, egress to) are left
// alone: they only widen what the selected pods allow, never what another's pods accept.
import { entryOf } from './unstructured.js';
import type { KubeObject } from '../admission/types.js';
import type { Finding } from '../admission/verdict.js';

import type { Requester } from './requester/identity.js';
import type { Policy } from './policy.js';
import { field, isRec, recs, text, type Rec } from './unstructured.js';
import { isManager, isTrusted } from './requester/principals.js';
import { RULES } from './rules/catalog.js';

const PATH = 'spec.podSelector';

function selectorOf(obj: KubeObject): Rec {
  const selector = isRec(obj.spec) ? field(obj.spec, 'podSelector') : undefined;
  return isRec(selector) ? selector : {};
}

function matchLabels(selector: Rec): Record<string, string> {
  const labels = field(selector, 'matchLabels');
  return isRec(labels) ? (labels as Record<string, string>) : {};
}

/** The pod selector an environment's new policy is stored with, or why it cannot be scoped. */
export function scopedPodSelector(obj: KubeObject, environment: string, policy: Policy): { selector: Rec } | { finding: Finding } {
  const key = policy.keys.environment;
  const selector = selectorOf(obj);
  const labels = matchLabels(selector);
  const given = entryOf(labels, key);
  if (given !== undefined && given !== environment)
    return { finding: { rule: RULES.networkPolicyScope.id, path: `${PATH}.matchLabels`, message: `selects pods of environment ${JSON.stringify(given.slice(0, 80))}; environment "${environment}" selects only its own pods (${key}: ${environment})` } };
  return { selector: { ...selector, matchLabels: { ...labels, [key]: environment } } };
}

/** The environments whose pods the selector is limited to; [] for none; undefined when it may select any pod. */
function scopeOf(selector: Rec, key: string): string[] | undefined {
  const labelled = entryOf(matchLabels(selector), key);
  if (labelled !== undefined) return [labelled];
  for (const e of recs(field(selector, 'matchExpressions'))) {
    if (text(e, 'key') !== key) continue;
    const op = text(e, 'operator');
    if (op === 'DoesNotExist') return [];
    const values = field(e, 'values');
    if (op === 'In' && Array.isArray(values) && values.every((v) => typeof v === 'string')) return values as string[];
  }
  return undefined;
}

/**
 * Whether `obj`'s pod selector stays within what its requester may select. `environment`:
 * the environment the policy is (or is being) stamped for, undefined for an unstamped one.
 */
export function networkPolicyScope(obj: KubeObject, namespace: string, requester: Requester, environment: string | undefined, policy: Policy): Finding[] {
  if (isTrusted(requester, policy)) return [];
  const key = policy.keys.environment;
  const scope = scopeOf(selectorOf(obj), key);
  if (environment !== undefined) {
    if (scope !== undefined && scope.length === 1 && scope[0] === environment && entryOf(matchLabels(selectorOf(obj)), key) === environment) return [];
    return [{ rule: RULES.networkPolicyScope.id, path: `${PATH}.matchLabels`, message: `a policy of environment "${environment}" selects only its pods: ${key} must be ${JSON.stringify(environment)} (the mutating webhook adds it; was it bypassed?)` }];
  }
  const bound = policy.envByBoundNamespace.get(namespace);
  if (bound !== undefined && isManager(requester, bound, policy)) return [];
  if (scope !== undefined && scope.every((env) => isManager(requester, env, policy))) return [];
  return [
    {
      rule: RULES.networkPolicyScope.id,
      path: PATH,
      message: `may select pods of any environment; ${requester.username} acts for none here: add matchExpressions [{key: ${key}, operator: DoesNotExist}] (or ${key} of an environment it manages)`,
    },
  ];
}
