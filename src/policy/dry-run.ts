// On a dry run (`kubectl apply --dry-run=server -f`) nothing is created, so a claim, a
// Secret, a ConfigMap (or a run lease) that the same apply creates does not exist when the object naming it is judged: a
// refusal for its absence would predict the wrong outcome. It is a warning instead, that
// the real create needs it first. The one place a dry run answers otherwise than the real
// request, which otherwise gets the same answer (docs/concepts.md, "Admission facts Deed relies on").
import type { Finding, Verdict } from '../admission/verdict.js';
import type { Policy } from './policy.js';
import { RULES } from './rules/catalog.js';
import { enforce, warningText } from './rules/enforcement.js';

const NEEDED_FIRST: ReadonlySet<string> = new Set([RULES.claimAbsent.id, RULES.secretRefAbsent.id, RULES.configMapRefAbsent.id, RULES.runLeaseAbsent.id, RULES.referenceAbsent.id]);

export function enforceCreate(findings: Finding[], policy: Policy, dryRun: boolean): Verdict {
  if (!dryRun) return enforce(findings, policy);
  const deferred = findings.filter((f) => NEEDED_FIRST.has(f.rule));
  const warnings = deferred.map((f) => warningText({ ...f, message: `dry run: ${f.message.replace(/; create it first.*$/, '')}; the real create needs it first` }));
  return enforce(
    findings.filter((f) => !NEEDED_FIRST.has(f.rule)),
    policy,
    warnings,
  );
}
