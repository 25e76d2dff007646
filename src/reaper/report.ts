// The reaper's output: one line per decision, then one summary line; text for people,
// JSON lines (`-o json`) for log pipelines. Metadata only: names, UIDs and reasons.
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
  const parts = [`reaped ${s.reaped}`, `kept ${s.kept}`, `skipped-foreign ${s.skippedForeign}`, `conflicts ${s.conflicts}`, `errors ${s.errors}`];
  return `summary: environment ${s.environment}, ${mode}${s.interrupted ? ', interrupted' : ''}: ${parts.join(', ')}`;
}
