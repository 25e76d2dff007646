// Break-glass use: a review allowed only because its requester is a break-glass principal
// (policy `breakGlass`, by default the group system:masters). The decision is made a second
// time as if break-glass were empty; the rules that would have refused it are what the
// principal overrode. They go into an audit annotation, a warning to the client, the review's
// log line and a counter (docs/operations.md, "Break-glass"), so every use is visible.
import type { AdmissionRequest } from './types.js';
import type { Verdict } from './verdict.js';
import type { DecisionContext, Policy } from '../policy/policy.js';

/** Is the requester named in `breakGlass` (by user or group)? */
export function isBreakGlass(request: AdmissionRequest, policy: Policy): boolean {
  const { username, groups } = request.userInfo;
  return policy.breakGlassUsers.has(username) || (groups ?? []).some((g) => policy.breakGlassGroups.has(g));
}

/**
 * The rule ids an allowed verdict overrode by break-glass, in the order found; empty when
 * the requester is no break-glass principal or the review passes without it.
 */
export function breakGlassOverrides(request: AdmissionRequest, ctx: DecisionContext, verdict: Verdict, decideAgain: (ctx: DecisionContext) => Verdict): string[] {
  if (!verdict.allowed || !isBreakGlass(request, ctx.policy)) return [];
  const without: Policy = { ...ctx.policy, breakGlassUsers: new Set(), breakGlassGroups: new Set() };
  // The second decision is never answered: it must not draw from the real random source.
  const counterfactual = decideAgain({ ...ctx, policy: without, randomBytes: (size) => Buffer.alloc(size) });
  return counterfactual.allowed ? [] : [...new Set(counterfactual.findings.map((f) => f.rule))];
}

/** The verdict as answered: the override named to the client and in the API server's audit log. */
export function withBreakGlassNotice(verdict: Verdict, request: AdmissionRequest, rules: string[]): Verdict {
  if (rules.length === 0) return verdict;
  return {
    ...verdict,
    warnings: [...verdict.warnings, `Deed: break-glass use by ${request.userInfo.username}: allowed past ${rules.join(', ')}; this is logged and counted`],
    auditAnnotations: { ...verdict.auditAnnotations, 'break-glass': rules.join(',') },
  };
}
