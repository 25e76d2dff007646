// The human report of `deed review`, written to stderr so stdout carries only objects or
// patches: one header line per object, then each webhook's outcome with its warnings,
// audit annotations and each denial with its rule id.
import type { Decision, Webhook } from '../admission/decide.js';
import { formatFinding, type Verdict } from '../admission/verdict.js';
import { outcomeOf } from '../observability/metrics.js';
import type { ObjectReview } from './run.js';

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
  const lines = [`${r.subject} (${r.operation}${r.subResource ? ` of ${r.subResource}` : ''} by ${r.requester}): ${r.allowed ? 'allowed' : 'DENIED'}`];
  for (const step of r.steps) lines.push(...stepLines(step.webhook, step.verdict, step.error));
  return lines;
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
