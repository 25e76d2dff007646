// The policy's `rules` (an enforcement mode per rule id) name rules of Deed's catalogue and
// relax only the rules that may be relaxed. Checked here, on the schema, rather than in it:
// the catalogue gathers the rule files, which read the schema's types.
import type { z } from 'zod';
import { RENAMED_RULES, RULES_BY_ID } from '../policy/rules/catalog.js';
import type { EnforcementMode } from '../policy/rules/rule-info.js';
import { didYouMean } from './diagnostics.js';
import { configSchema } from './schema.js';

export function checkRuleModes(rules: Readonly<Record<string, EnforcementMode>>, ctx: z.RefinementCtx): void {
  for (const [id, mode] of Object.entries(rules)) {
    const info = RULES_BY_ID.get(id);
    const renamed = RENAMED_RULES.get(id);
    if (info === undefined) {
      const guess = didYouMean(id, [...RULES_BY_ID.keys()]);
      const unknown = `unknown rule id "${id}"${guess !== undefined ? ` (did you mean ${guess}?)` : ' (docs/rules.md lists them)'}`;
      ctx.addIssue({ code: 'custom', path: ['rules', id], message: renamed === undefined ? unknown : `rule "${id}" is now "${renamed}" (docs/rules.md says what it covers); set that one` });
    } else if (!info.overridable && mode !== 'deny') ctx.addIssue({ code: 'custom', path: ['rules', id], message: `rule "${id}" guards the stamps themselves and is always deny` });
  }
}

/** The policy's schema with its rule ids checked against the catalogue: what a policy is parsed with. */
export const policySchema = configSchema.superRefine((cfg, ctx) => checkRuleModes(cfg.rules, ctx));
