// What a 429 means to every client of Deed's (client.ts over client-node, api-connection.ts
// without it): the call was not served (API Priority and Fairness, or a cache still
// initialising: "storage is (re)initializing"), so it is sent again after its Retry-After,
// as client-go does.
import { KubeError } from './errors.js';
import type { RetryNotice } from './retry-notice.js';

// API Priority and Fairness answers 429 with a Retry-After of a second or so; a larger one
// is honoured up to this, so one answer cannot park a sweep past its CronJob deadline.
const MAX_RETRY_AFTER_SECONDS = 30;
// A 429 without Retry-After (a proxy, an old server): the client-go default.
const DEFAULT_RETRY_AFTER_SECONDS = 1;
/** The wait a 429 asks for, in seconds: its Retry-After, capped; the client-go default without one. */
export function retryWait(err: KubeError): number {
  return Math.min(err.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS, MAX_RETRY_AFTER_SECONDS);
}

/** The server's words in a 429's message ("list pods: HTTP 429: too many requests" gives "too many requests"). */
export function serverWords(err: KubeError): string {
  return err.message.replace(/^.*?HTTP 429:? ?/, '') || 'too many requests';
}

const withinDeadline = (deadlineMs: number) => `within the call's deadline of ${deadlineMs / 1000} s`;

/**
 * The one line a caller reads when the 429 did not clear: what was asked, what the server
 * said, how often and how long it was retried, and why it stopped (`end`).
 */
export function gaveUp(err: KubeError, what: string, tries: number, elapsedMs: number, end: string): KubeError {
  const message =
    `${what}: HTTP 429 (${serverWords(err)}) on each of ${tries} ${tries === 1 ? 'try' : 'tries'} over ${(elapsedMs / 1000).toFixed(1)} s, ` +
    `each retry after the server's Retry-After (${retryWait(err)} s); gave up ${end}`;
  return new KubeError('TooManyRequests', message, err.status, err.retryAfterSeconds);
}

export interface RetryClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: RetryClock = { now: Date.now, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

/**
 * One call under an overall deadline: each attempt gets what is left of it, and a 429 is
 * sent again after its Retry-After as long as the wait ends before the deadline. Otherwise
 * the 429 stands, as a TooManyRequests KubeError that says how often it was tried.
 */
export async function retriedWithin<T>(
  deadlineMs: number,
  what: string,
  attempt: (remainingMs: number) => Promise<T>,
  onRetry?: (retry: RetryNotice) => void,
  clock: RetryClock = realClock,
): Promise<T> {
  const started = clock.now();
  const end = started + deadlineMs;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt(Math.max(1, end - clock.now()));
    } catch (err) {
      if (!(err instanceof KubeError) || err.reason !== 'TooManyRequests') throw err;
      const seconds = retryWait(err);
      // The retry must still have time to be answered: a wait that reaches the deadline is no retry.
      if (clock.now() + seconds * 1000 >= end) throw gaveUp(err, what, tries, clock.now() - started, withinDeadline(deadlineMs));
      onRetry?.({ what, retryAfterSeconds: seconds, attempt: tries, message: serverWords(err) });
      await clock.sleep(seconds * 1000);
    }
  }
}
