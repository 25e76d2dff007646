// Enforcement modes: each finding is denied, warned about, or only recorded as an audit
// annotation, by its rule's mode (policy override, else the catalogue default), so a
// rule can be rolled out safely.
import { allowed, denied, type Finding, type Verdict } from '../../admission/verdict.js';
import type { Policy } from '../policy.js';
import { RULES_BY_ID, type EnforcementMode } from './catalog.js';

const MAX_AUDIT_VALUE_LENGTH = 1024;

export function modeOf(rule: string, policy: Policy): EnforcementMode {
  const info = RULES_BY_ID.get(rule);
  const override = Object.hasOwn(policy.config.rules, rule) ? policy.config.rules[rule] : undefined;
  return info?.overridable && override !== undefined ? override : (info?.defaultMode ?? 'deny');
}

export function warningText(f: Finding): string {
  // The message first: when the webhook cuts the line, the field path goes, not the reason.
  return `deed ${f.rule}: ${f.message}${f.path !== undefined ? ` (${f.path})` : ''}`;
}

export function enforce(findings: Finding[], policy: Policy, extraWarnings: string[] = []): Verdict {
  const deny: Finding[] = [];
  const warnings = [...extraWarnings];
  const audit: Record<string, string> = {};
  for (const f of findings) {
    const mode = modeOf(f.rule, policy);
    if (mode === 'deny') deny.push(f);
    else if (mode === 'warn') warnings.push(warningText(f));
    else {
      const line = `${f.path !== undefined ? `${f.path}: ` : ''}${f.message}`;
      const prior = audit[f.rule];
      audit[f.rule] = (prior === undefined ? line : `${prior}; ${line}`).slice(0, MAX_AUDIT_VALUE_LENGTH);
    }
  }
  return deny.length > 0 ? denied(deny, warnings, audit) : allowed(warnings, audit);
}
