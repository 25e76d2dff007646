// The human report of `deed review`, written to stderr so stdout carries only objects or
// patches: one header line per object, then each webhook's outcome with its warnings,
// audit annotations and each denial with its rule id.
import type { Decision, Webhook } from '../admission/decide.js';
import { formatFinding, type Verdict } from '../admission/verdict.js';
import { outcomeOf } from '../observability/metrics.js';
import { judged, type ObjectReview } from './run.js';

function stepLines(webhook: string, verdict: Verdict, error?: string): string[] {
  const outcome = outcomeOf(verdict);
  const lines = [`  ${webhook}: ${outcome}${verdict.patch ? `, ${verdict.patch.length} patch operation${verdict.patch.length === 1 ? '' : 's'}` : ''}`];
  for (const op of verdict.patch ?? [])
    if (op.op === 'test' && /^\/spec\/volumes\/\d+\/name$/.test(op.path)) lines.push(`    removed: volume ${String(op.value)} (the API server's service-account token) and its mounts`);
  for (const w of verdict.warnings) lines.push(`    warning: ${w}`);
  for (const [k, v] of Object.entries(verdict.auditAnnotations)) lines.push(`    audit: ${k}=${v}`);
  if (!verdict.allowed) for (const f of verdict.findings) lines.push(`    denied ${formatFinding(f)}`);
  if (error !== undefined) lines.push(`    internal error: ${error}`);
  return lines;
}

export function reportObject(r: ObjectReview): string[] {
  const head = `${r.subject} (${r.operation}${r.subResource ? ` of ${r.subResource}` : ''} by ${r.requester})`;
  // The cluster never sends such a request to Deed: "allowed" would claim a judgement.
  if (!judged(r)) return [`${head}: not judged, passed as it is (${r.notJudged ?? `no Deed webhook is called for ${r.operation} of ${r.steps[0]?.resource ?? 'this kind'}`})`];
  const lines = [`${head}: ${r.allowed ? 'allowed' : 'DENIED'}`];
  for (const step of r.steps) if (step.routed) lines.push(...stepLines(step.webhook, step.verdict, step.error));
  // The webhook reads these from the cluster: a live reader of another environment's would refuse the write.
  for (const what of r.assumed ?? []) lines.push(`  assumed: nothing outside these files and --existing names ${what} (the webhook reads who does from the cluster, and refuses the write if another environment's live object does: reference.live-reader)`);
  return lines;
}

export interface Tally {
  objects: number;
  allowed: number;
  denied: number;
  warnings: number;
  notJudged: number;
}

/** The last line of a review: how many objects, how each fared, and how many warnings. */
export function summaryLine(t: Tally): string {
  const counts = [`${t.allowed} allowed`, `${t.denied} denied`, `${t.warnings} warning${t.warnings === 1 ? '' : 's'}`];
  if (t.notJudged > 0) counts.push(`${t.notJudged} not judged`);
  return `${t.objects} object${t.objects === 1 ? '' : 's'}: ${counts.join(', ')}`;
}

export function reportSummary(reviews: readonly ObjectReview[]): string {
  const notJudged = reviews.filter((r) => !judged(r)).length;
  const allowed = reviews.filter((r) => r.allowed && judged(r)).length;
  const warnings = reviews.reduce((n, r) => n + r.steps.reduce((m, s) => m + (s.routed ? s.verdict.warnings.length : 0), 0), 0);
  return summaryLine({ objects: reviews.length, allowed, denied: reviews.length - allowed - notJudged, warnings, notJudged });
}

/** A replayed review was sent by an API server, so it was judged. */
export function replaySummary(verdicts: readonly Verdict[]): string {
  const allowed = verdicts.filter((v) => v.allowed).length;
  const warnings = verdicts.reduce((n, v) => n + v.warnings.length, 0);
  return summaryLine({ objects: verdicts.length, allowed, denied: verdicts.length - allowed, warnings, notJudged: 0 });
}

export function reportReplay(webhook: Webhook, decision: Extract<Decision, { kind: 'review' }>): string[] {
  const request = decision.request;
  const subject = request ? `${request.kind.kind} ${request.namespace ? `${request.namespace}/` : ''}${request.name ?? request.object?.metadata.generateName ?? ''}` : '(unreadable request)';
  const by = request ? ` by ${request.userInfo.username}` : '';
  const error = decision.error === undefined ? undefined : decision.error instanceof Error ? decision.error.message : String(decision.error);
  return [
    `${subject} (${request?.operation ?? 'review'}${request?.subResource ? ` of ${request.subResource}` : ''}${by}, uid ${decision.uid}): ${decision.verdict.allowed ? 'allowed' : 'DENIED'}`,
    ...stepLines(webhook, decision.verdict, error),
  ];
}
