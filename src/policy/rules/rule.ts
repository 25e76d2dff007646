// One signature for a rule: its catalogue entries, when it applies, and its check of a
// subject (a pod spec wherever it stands, an object's metadata, a selector) under the facts
// of the review, computed once before any rule runs. A rule returns findings; enforcement
// (enforcement.ts) alone turns them into a denial, a warning or an audit annotation.
import type { Finding } from '../../admission/verdict.js';
import type { RuleInfo } from './rule-info.js';
import type { Policy } from '../policy.js';

/** What a review knows before its rules run. */
export interface Facts {
  policy: Policy;
  namespace: string;
  /**
   * The environment the subject is judged for: its requester's at admission, its verified
   * stamps' in the audit; undefined when it belongs to none.
   */
  environment: string | undefined;
}

export interface Rule<S> {
  /** The catalogue entries of the findings it returns. */
  info: readonly RuleInfo[];
  /** Whether it applies to this review at all (absent: always). */
  when?(facts: Facts): boolean;
  check(subject: S, facts: Facts): Finding[];
}

/** Every rule of `rules` that applies, on one subject. */
export function runRules<S>(rules: readonly Rule<S>[], subject: S, facts: Facts): Finding[] {
  return rules.flatMap((r) => (r.when === undefined || r.when(facts) ? r.check(subject, facts) : []));
}
