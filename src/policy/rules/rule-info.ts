// A rule's catalogue entry: its id, what it checks, its default enforcement and an example
// message. The entries live beside the checks that emit them; rules/catalog.ts gathers
// them into the one list (RULES) that metrics, the docs and policy validation read.
/** What a finding of a rule becomes: a denial, an admission warning, or an audit annotation only. */
export const ENFORCEMENT_MODES = ['deny', 'warn', 'audit'] as const;
export type EnforcementMode = (typeof ENFORCEMENT_MODES)[number];

export interface RuleInfo {
  id: string;
  webhook: 'mutate' | 'validate' | 'both';
  checks: string;
  defaultMode: EnforcementMode;
  /** Integrity rules guard the stamps themselves: relaxing them would make the stamps lie. */
  overridable: boolean;
  example: string;
}

export function rule(info: RuleInfo): RuleInfo {
  return info;
}
