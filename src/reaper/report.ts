// The reaper's output: one line per decision as it is made, then one summary line; text for
// people, JSON lines (`-o json`) for log pipelines. Metadata only: names, UIDs and reasons.
// On a terminal, a progress line on stderr says how far a long sweep has got.
import type { Decision, SweepSummary } from './sweep.js';

export type OutputFormat = 'text' | 'json';

export function formatDecision(d: Decision, format: OutputFormat): string {
  if (format === 'json') return JSON.stringify({ type: 'decision', ...d });
  const where = d.name === undefined ? `${d.kind} ${d.namespace}` : `${d.kind} ${d.namespace}/${d.name}`;
  const uid = d.uid === undefined ? '' : ` uid=${d.uid}`;
  const outcome = d.outcome === undefined ? '' : ` [${d.outcome}${d.error ? `: ${d.error}` : ''}]`;
  return oneLine(`${d.action} ${where}${uid}: ${d.reason}${outcome}`);
}

/** Reasons quote API-server messages: a newline in one must not forge another decision line. */
function oneLine(text: string): string {
  return text.replace(/\p{Cc}/gu, ' ');
}

export function formatSummary(s: SweepSummary, format: OutputFormat): string {
  if (format === 'json') return JSON.stringify({ type: 'summary', ...s });
  const mode = s.dryRun ? 'dry run (nothing deleted; --apply deletes)' : 'applied';
  const state = s.complete ? 'complete' : 'INCOMPLETE (stopped; the rest is judged next sweep)';
  const counts = [`reaped ${s.reaped}`, `kept ${s.kept}`, `skipped ${s.skipped}`, `conflicts ${s.conflicts}`, `stopped ${s.stopped}`, `errors ${s.errors}`];
  const reasons = (['reap', 'keep', 'skip', 'error'] as const)
    .filter((a) => s.reasons[a] !== undefined)
    .map((a) => `${a} (${Object.entries(s.reasons[a]!).map(([code, n]) => `${code} ${n}`).join(', ')})`);
  return [
    `summary: environment ${s.environment}, ${mode}, ${state}: judged ${s.judged} in ${(s.durationMs / 1000).toFixed(1)} s: ${counts.join(', ')}`,
    ...(reasons.length > 0 ? [`; by reason: ${reasons.join('; ')}`] : []),
    `; owner reads ${s.ownerReads}`,
    ...(s.leaseReads > 0 || s.leasesBounded > 0 ? [`, lease reads ${s.leaseReads} (failed ${s.leaseReadsFailed}), leases past the bound ${s.leasesBounded}`] : []),
  ].join('');
}

/** Running counts for the progress line, fed with each decision. */
export class Progress {
  judged = 0;
  deleted = 0;
  kept = 0;
  errors = 0;
  private readonly started = Date.now();

  add(d: Decision): void {
    if (d.action !== 'error') this.judged++;
    if (d.action === 'error' || d.outcome === 'failed' || d.outcome === 'not-permitted') this.errors++;
    else if (d.outcome === 'deleted' || d.outcome === 'would-delete') this.deleted++;
    else if (d.action === 'keep') this.kept++;
  }

  line(dryRun: boolean, now = Date.now()): string {
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const rate = Math.round(this.judged / seconds);
    return `reap: judged ${this.judged}, ${dryRun ? 'would delete' : 'deleted'} ${this.deleted}, kept ${this.kept}, errors ${this.errors}, ${rate}/s, ${seconds.toFixed(0)} s`;
  }
}
