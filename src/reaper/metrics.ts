// The reaper's metrics, in Prometheus text format: a CronJob is gone before anything could
// scrape it, so `deed reap --metrics-file FILE` writes them after each sweep (for a textfile
// collector or a push sidecar). Every verdict code of verdicts.ts is a series from the
// start, at 0, so an alert on a code works before the first object reaches it.
import { replaceFile } from '../files/replace-file.js';
import { Counter, Gauge, Registry } from 'prom-client';
import type { Decision, SweepSummary } from './sweep.js';
import { VERDICTS, VERDICT_CODES } from './verdicts.js';

/** Decisions that are not verdicts: a list or the review scope that could not be read. */
const ERROR_CODES = ['list-failed', 'scope-unreadable'] as const;
/** Why a run lease went unread (deed_reaper_leases_unread). */
const LEASE_UNREAD_REASONS = ['failed', 'bounded'] as const;

export class ReaperMetrics {
  readonly registry = new Registry();
  private readonly decisions = new Counter({
    name: 'deed_reaper_decisions_total',
    help: 'Objects judged by deed reap, by action (reap, keep, skip, error) and verdict code (docs/operations.md, "The verdict").',
    labelNames: ['environment', 'action', 'code'] as const,
    registers: [this.registry],
  });
  private readonly outcomes = new Counter({
    name: 'deed_reaper_reap_outcomes_total',
    help: 'What happened to reaped objects: would-delete or not-permitted (dry run), deleted, already-gone, conflict, failed, stopped.',
    labelNames: ['environment', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Gauge({ name: 'deed_reaper_sweep_duration_seconds', help: 'Duration of the last sweep.', labelNames: ['environment'] as const, registers: [this.registry] });
  private readonly complete = new Gauge({ name: 'deed_reaper_sweep_complete', help: '1 when the last sweep judged everything, 0 when it was stopped first.', labelNames: ['environment'] as const, registers: [this.registry] });
  private readonly finished = new Gauge({ name: 'deed_reaper_sweep_end_timestamp_seconds', help: 'When the last sweep ended.', labelNames: ['environment'] as const, registers: [this.registry] });
  // A gauge of the last sweep, not a counter: a CronJob's file holds one sweep's counts, and
  // a condition that repeats every sweep must stay visible (an increase() of it would be 0).
  private readonly leasesUnread = new Gauge({
    name: 'deed_reaper_leases_unread',
    help: 'Run leases the last sweep did not read, by reason: failed (a read other than NotFound failed; its objects kept as lease-unreadable), bounded (past the sweep\'s bound of leases read in a namespace; kept as lease-bounded).',
    labelNames: ['environment', 'reason'] as const,
    registers: [this.registry],
  });

  constructor(private readonly environment: string) {
    for (const code of VERDICT_CODES) this.decisions.inc({ environment, action: VERDICTS[code].action, code }, 0);
    for (const code of ERROR_CODES) this.decisions.inc({ environment, action: 'error', code }, 0);
    for (const outcome of ['would-delete', 'not-permitted', 'deleted', 'already-gone', 'conflict', 'failed', 'stopped']) this.outcomes.inc({ environment, outcome }, 0);
    for (const reason of LEASE_UNREAD_REASONS) this.leasesUnread.set({ environment, reason }, 0);
  }

  add(d: Decision): void {
    this.decisions.inc({ environment: this.environment, action: d.action, code: d.code });
    if (d.outcome !== undefined) this.outcomes.inc({ environment: this.environment, outcome: d.outcome });
  }

  finish(s: SweepSummary, now = Date.now()): void {
    const labels = { environment: this.environment };
    this.duration.set(labels, s.durationMs / 1000);
    this.complete.set(labels, s.complete ? 1 : 0);
    this.finished.set(labels, now / 1000);
    this.leasesUnread.set({ ...labels, reason: 'failed' }, s.leaseReadsFailed);
    this.leasesUnread.set({ ...labels, reason: 'bounded' }, s.leasesBounded);
  }

  /** Written whole, then renamed: a reader (node_exporter's textfile collector) never sees half a file. */
  async writeTo(file: string): Promise<void> {
    replaceFile(file, await this.registry.metrics(), 0o644);
  }
}
