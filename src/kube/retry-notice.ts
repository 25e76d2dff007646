// What a Deed process says when an API call answered 429 is sent again after the server's
// Retry-After (client.ts, withRetries and the reaper's throttle): one warning per retry, with
// the same fields from the CLI and from `deed serve`. Kept apart from client.ts so that the
// commands can log it without loading @kubernetes/client-node first.

/** A call answered 429 that is sent again after the server's Retry-After. */
export interface RetryNotice {
  /** The call, as error messages name it ("list pods in sandbox-a"). */
  what: string;
  /** The wait before the next try, from the answer's Retry-After (capped; 1 s without one). */
  retryAfterSeconds: number;
  /** Tries answered 429 so far. */
  attempt: number;
  /** The server's own words (the Status message of the 429). */
  message: string;
}

export const RETRY_MESSAGE = "the API server answered 429 (too many requests); retrying after its Retry-After";

/** The fields of the log line. */
export function retryLog(r: RetryNotice): { call: string; retryAfterSeconds: number; attempt: number; server: string } {
  return { call: r.what, retryAfterSeconds: r.retryAfterSeconds, attempt: r.attempt, server: r.message };
}

/** An `onRetry` that writes each retry's warning line to `log` (any pino logger). */
export function warnRetries(log: { warn(fields: object, message: string): void }): (retry: RetryNotice) => void {
  return (retry) => log.warn(retryLog(retry), RETRY_MESSAGE);
}
