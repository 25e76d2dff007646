// The rules of a sandbox pod's spec, wherever it stands: a Pod's `spec`, every pod template
// of a kind in the kind table (src/policy/kinds.ts), and the pods `deed audit` reads back.
// A rule added to the catalogue's POD_SPEC_RULES (rules/catalog.ts) reaches all of them,
// and `deed review` and `deed test` (which call the same webhooks), with no other edit:
// each rule is a file of its own (host-network.ts, template-collisions.ts,
// workspace-mounts.ts) holding its catalogue entries and its check.
import type { Finding } from '../../admission/verdict.js';
import type { Rec } from '../unstructured.js';
import { POD_SPEC_RULES } from '../rules/catalog.js';
import { runRules, type Facts, type Rule } from '../rules/rule.js';

/** A pod spec, where it stands, and what its pod declares beside it. */
export interface PodSpecSubject {
  spec: Rec;
  /** The spec's field path: `spec`, `spec.template.spec`. */
  at: string;
  /** Where it comes from: the Pod itself, or a kind whose controller makes pods from it. */
  source: { kind: string; controller: boolean; ownsRestartPolicy: boolean };
  /** The pod's name, when it has one yet (a template's pods do not). */
  podName: string | undefined;
  /** The pod's workspace grants annotation, and its field path. */
  grants: { value: string | undefined; path: string };
  /** The claims it mounts that are workspaces (read before the rules run). */
  workspaceClaims: ReadonlySet<string>;
}

/** Every rule of a sandbox pod's spec, in the order their findings are reported: the catalogue's (rules/catalog.ts, POD_SPEC_RULES). */
export const SANDBOX_POD_RULES: readonly Rule<PodSpecSubject>[] = POD_SPEC_RULES;

export { templateCollisionRule, controllerTokenRule, templateAutomountOff } from './template-collisions.js';
export { workspaceRule } from './workspace-mounts.js';
export { hostNetworkRule } from './host-network.js';

/** The findings of SANDBOX_POD_RULES on one pod spec. */
export function sandboxPodFindings(subject: PodSpecSubject, facts: Facts): Finding[] {
  return runRules(SANDBOX_POD_RULES, subject, facts);
}
