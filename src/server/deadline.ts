// The internal deadline. The API server calls `/mutate?timeout=5s` and gives up at that
// timeout; with failurePolicy Fail the write then fails with a bare "context deadline
// exceeded". Deed answers within a budget shorter than the timeout instead: a review that
// cannot finish in time is denied with a reason (HTTP 200, allowed false, code 504).
import { decide, type Decision, type Webhook } from '../admission/decide.js';
import { requestUid } from '../admission/decode.js';
import type { DecodedWithFacts } from '../policy/review-facts.js';
import { complete, errored } from '../admission/verdict.js';
import type { DecisionContext } from '../policy/policy.js';
import { RULES } from '../policy/rules/catalog.js';

/** The API server's default webhook timeout (timeoutSeconds unset). */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** timeoutSeconds is capped at 30 by the API server; a larger claim is not believed. */
export const MAX_TIMEOUT_MS = 30_000;
/**
 * The clock starts when Node has parsed the request headers: time before that (accept
 * queue, event-loop lag, the network) is invisible to Deed, and the answer still has to
 * travel back. The last fifth of the timeout is kept for both.
 */
export const BUDGET_FRACTION = 0.8;

const UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const SEGMENT = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/** Parses a non-negative Go duration (`5s`, `500ms`, `1m30s`, `1.5s`) into milliseconds. */
export function parseGoDuration(text: string): number | undefined {
  if (text === '0') return 0;
  if (text === '' || text.length > 64) return undefined;
  let rest = text;
  let total = 0;
  while (rest !== '') {
    const m = SEGMENT.exec(rest);
    if (m === null) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return Number.isFinite(total) ? total : undefined;
}

export interface ReviewDeadline {
  /** Clock reading (ms) when the request arrived. */
  startedMs: number;
  /** The timeout the API server applies, as Deed understood it. */
  timeoutMs: number;
  /** How long Deed may take before it answers with a deadline denial instead. */
  budgetMs: number;
}

/** The deadline for a review, from the `timeout` query parameter (absent or unreadable: the API server's default). */
export function reviewDeadline(timeoutQuery: unknown, startedMs: number): ReviewDeadline {
  const parsed = typeof timeoutQuery === 'string' ? parseGoDuration(timeoutQuery) : undefined;
  const timeoutMs = parsed === undefined || parsed <= 0 ? DEFAULT_TIMEOUT_MS : Math.min(parsed, MAX_TIMEOUT_MS);
  return { startedMs, timeoutMs, budgetMs: timeoutMs * BUDGET_FRACTION };
}

export function elapsedMs(deadline: ReviewDeadline, nowMs: number): number {
  return nowMs - deadline.startedMs;
}

export function isOverBudget(deadline: ReviewDeadline, nowMs: number): boolean {
  return elapsedMs(deadline, nowMs) > deadline.budgetMs;
}

/** A denial that keeps the uid; without a readable uid there is nothing to answer but a 400-style refusal. */
export function deadlineDecision(body: unknown, deadline: ReviewDeadline, nowMs: number, phase: 'before' | 'during'): Decision {
  const uid = requestUid(body);
  const spent = Math.round(elapsedMs(deadline, nowMs));
  const where = phase === 'before' ? 'before the review could start' : 'while reviewing';
  const message = `the internal deadline of ${Math.round(deadline.budgetMs)} ms (${Math.round(BUDGET_FRACTION * 100)}% of the ${Math.round(deadline.timeoutMs)} ms webhook timeout) passed ${where} (${spent} ms); Deed is overloaded, retry`;
  if (uid === undefined) return { kind: 'bad-request', message: `Deed could not review this request: ${message}` };
  const verdict = errored(504, RULES.internalDeadline.id, message);
  return { kind: 'review', uid, verdict, response: complete(uid, verdict) };
}

/**
 * decide() under a deadline: a review that already waited past its budget is not started
 * (shedding load when the process is behind), and one whose decision finished past it is
 * denied, since its answer can no longer be trusted to reach the API server in time.
 */
export function decideWithin(webhook: Webhook, body: unknown, ctx: DecisionContext, deadline: ReviewDeadline, clock: () => number, decoded?: DecodedWithFacts): Decision {
  const before = clock();
  if (isOverBudget(deadline, before)) return deadlineDecision(body, deadline, before, 'before');
  const decision = decide(webhook, body, ctx, decoded);
  const after = clock();
  if (decision.kind !== 'review' || !isOverBudget(deadline, after)) return decision;
  const late = deadlineDecision(body, deadline, after, 'during');
  if (late.kind === 'review' && decision.request !== undefined) late.request = decision.request; // for the log line
  return late;
}
