// Deadlines: a client budget (`<prefix>/max-duration-seconds`) plus the policy margin,
// capped by policy. No budget and no cap means no deadline: Deed never invents a cap.
import { quoted } from '../../admission/verdict.js';

export const MAX_BUDGET_SECONDS = 31_536_000 * 10; // ten years; keeps arithmetic exact and dates valid

export type BudgetResult = { ok: true; seconds?: number } | { ok: false; message: string };

export function parseBudget(value: string | undefined): BudgetResult {
  if (value === undefined) return { ok: true };
  if (!/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > MAX_BUDGET_SECONDS)
    return { ok: false, message: `must be a positive whole number of seconds up to ${MAX_BUDGET_SECONDS}, got ${quoted(value)}` };
  return { ok: true, seconds: Number(value) };
}

/**
 * The budget is read from the annotation only. A label of the same key would otherwise be
 * silently ignored, leaving the pod at the cap (or with no deadline) while the client
 * believes it asked for less, so it is refused with the way to fix it.
 */
export function budgetAsLabel(key: string): string {
  return `a duration budget is read from the annotation ${key}, not a label: move it to metadata.annotations`;
}

export function deadlineSeconds(budget: number | undefined, marginSeconds: number, capSeconds: number | undefined): number | undefined {
  if (budget === undefined) return capSeconds;
  const seconds = budget + marginSeconds;
  return capSeconds !== undefined && seconds > capSeconds ? capSeconds : seconds;
}

const EXPIRY_MEMO = 8;
const expiryMemo: Array<{ at: number; text: string }> = [];
let nextExpiry = 0;

/** RFC 3339 UTC, whole seconds: `2026-11-29T16:00:00Z`. */
export function expiresAt(nowMs: number, seconds: number): string {
  const at = Math.floor(nowMs / 1000) * 1000 + seconds * 1000;
  // The text is a function of `at` alone, and a review asks for the same few instants as the
  // reviews of the same second (the stamp, and the two bounds of a fresh expiry): the last
  // EXPIRY_MEMO are kept. NaN never equals itself, so it is formatted, and throws, as before.
  for (let i = 0; i < expiryMemo.length; i++) if (expiryMemo[i]!.at === at) return expiryMemo[i]!.text;
  // toISOString always ends in `.sssZ`: dropping those five characters is the regex's replace, without a regex per review.
  const text = `${new Date(at).toISOString().slice(0, -5)}Z`;
  expiryMemo[nextExpiry] = { at, text };
  nextExpiry = (nextExpiry + 1) % EXPIRY_MEMO;
  return text;
}

/** The deadline a budget annotation asks for under the policy's margin and cap (undefined seconds: none). */
export function policyDeadline(budgetValue: string | undefined, policy: { marginSeconds: number; capSeconds?: number | undefined }): BudgetResult {
  const budget = parseBudget(budgetValue);
  if (!budget.ok) return budget;
  const seconds = deadlineSeconds(budget.seconds, policy.marginSeconds, policy.capSeconds);
  return seconds === undefined ? { ok: true } : { ok: true, seconds };
}

/**
 * How far back the expiry of a reinvoked admission may lie: the mutating webhook is called
 * again within the same request, which the API server's request timeout (60 s by default)
 * bounds. An older expiry was not written by this admission: it was copied.
 */
export const REINVOCATION_WINDOW_SECONDS = 60;
/** Replicas' clocks differ a little: an expiry this far ahead of this replica's is still fresh. */
export const CLOCK_SKEW_SECONDS = 5;

const WRITTEN_EXPIRY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/**
 * Whether `given` is an expiry this admission could have written for a deadline of
 * `seconds`: in Deed's own format and no older than the reinvocation window. Same-format
 * RFC 3339 UTC strings compare in time order.
 */
export function isFreshExpiry(given: string, nowMs: number, seconds: number): boolean {
  if (!WRITTEN_EXPIRY.test(given)) return false;
  return given >= expiresAt(nowMs - REINVOCATION_WINDOW_SECONDS * 1000, seconds) && given <= expiresAt(nowMs + CLOCK_SKEW_SECONDS * 1000, seconds);
}
