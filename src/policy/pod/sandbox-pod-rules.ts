// The rules of a sandbox pod's spec, wherever it stands: a Pod's `spec`, every pod template
// of a kind in the kind table (src/policy/kinds.ts), and the pods `deed audit` reads back.
// A rule added to the catalogue's POD_SPEC_RULES (rules/catalog.ts) reaches all of them,
// and `deed review` and `deed test` (which call the same webhooks), with no other edit:
// each rule is a file of its own (host-network.ts, process-namespace.ts, template-collisions.ts,
// workspace-mounts.ts) holding its catalogue entries and its check.
import type { Finding } from '../../admission/verdict.js';
import type { PodSpecSubject } from './pod-spec-subject.js';
import { POD_SPEC_RULES } from '../rules/catalog.js';
import { runRules, type Facts, type Rule } from '../rules/rule.js';

export type { PodSpecSubject } from './pod-spec-subject.js';

/** Every rule of a sandbox pod's spec, in the order their findings are reported: the catalogue's (rules/catalog.ts, POD_SPEC_RULES). */
export const SANDBOX_POD_RULES: readonly Rule<PodSpecSubject>[] = POD_SPEC_RULES;

export { templateCollisionRule, controllerTokenRule, templateAutomountOff } from './template-collisions.js';
export { workspaceRule } from './workspace-mounts.js';
export { hostNetworkRule } from './host-network.js';
export { processNamespaceRule } from './process-namespace.js';

/** The findings of SANDBOX_POD_RULES on one pod spec. */
export function sandboxPodFindings(subject: PodSpecSubject, facts: Facts): Finding[] {
  return runRules(SANDBOX_POD_RULES, subject, facts);
}
