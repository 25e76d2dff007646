// What an API call's failure means to the reaper. Only an API-server `Status` with reason
// NotFound proves an object absent: a 404 from a proxy or an unserved group path, a
// timeout, a 5xx, a 403 or an unreadable body proves nothing and must never become
// "gone": only a provable NotFound allows a delete (docs/operations.md, "The verdict").

export type KubeErrorReason = 'NotFound' | 'Conflict' | 'Timeout' | 'TooManyRequests' | 'Other';

export class KubeError extends Error {
  override name = 'KubeError';
  constructor(
    readonly reason: KubeErrorReason,
    message: string,
    readonly status?: number,
    /** From a 429's Retry-After header (API Priority and Fairness sends one): how long to hold off. */
    readonly retryAfterSeconds?: number,
    /**
     * From a 410 answered to a list's `continue` that outlived etcd's compaction: the token
     * the API server offers to go on from the same place (the rest read at a newer revision).
     */
    readonly continueToken?: string,
  ) {
    super(message);
  }
}

interface StatusBody {
  kind?: unknown;
  reason?: unknown;
  message?: unknown;
  code?: unknown;
  metadata?: { continue?: unknown };
}

/**
 * Turns whatever an API call threw into a KubeError; `what` names the call for the message.
 * A client-node ApiException is known by its shape (a numeric status code and a body), so
 * this module loads no client: `deed serve` reads through api-connection.ts without one.
 */
export function classify(err: unknown, what: string): KubeError {
  if (err instanceof KubeError) return err;
  const e = err as { name?: string; type?: string; code?: unknown; message?: string; body?: unknown; headers?: Record<string, string> };
  if (typeof e?.code === 'number' && 'body' in e) return classifyAnswer(e.code, e.body, e.headers, what);
  if (e?.name === 'AbortError' || e?.type === 'aborted') return new KubeError('Timeout', `${what}: aborted`);
  return new KubeError('Other', `${what}: ${typeof e?.code === 'string' ? e.code : (e?.name ?? 'error')}: ${e?.message ?? String(err)}`);
}

/** An API server's answer that is not a 2xx, from its status code, body (a Status, or plain text) and headers. */
export function classifyAnswer(code: number, body: unknown, headers: Record<string, string> | undefined, what: string): KubeError {
  const status = parseStatus(body);
  // The message comes from the Status only: the exception's own text embeds headers and body.
  const detail = typeof status?.message === 'string' ? `: ${status.message}` : '';
  if (code === 404 && status?.reason === 'NotFound') return new KubeError('NotFound', `${what}: not found`, code);
  if (code === 409 && status?.reason === 'Conflict') return new KubeError('Conflict', `${what}: conflict${detail}`, code);
  if (code === 429) return new KubeError('TooManyRequests', `${what}: HTTP 429${detail || plainWords(body)}`, code, retryAfter(headers));
  const token = status?.metadata?.continue;
  if (code === 410 && typeof token === 'string' && token !== '') return new KubeError('Other', `${what}: HTTP 410${detail}`, code, undefined, token);
  return new KubeError('Other', `${what}: HTTP ${code}${detail || (code === 404 ? ' without a NotFound status' : '')}`, code);
}

/** Retry-After in seconds (RFC 9110: delay-seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfter(headers: Record<string, string> | undefined, now = Date.now()): number | undefined {
  const value = Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === 'retry-after')?.[1]?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Priority and Fairness answers its 429 in plain text ("Too many requests, please try again
 * later."), not as a Status: a short line of it is kept, as the server's words.
 */
function plainWords(body: unknown): string {
  const text = (Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : '').trim();
  if (text === '' || text.length > 200 || text.startsWith('{')) return '';
  return `: ${text.split('\n')[0]!.replace(/\p{Cc}/gu, ' ')}`;
}

function parseStatus(body: unknown): StatusBody | undefined {
  let value = body;
  if (Buffer.isBuffer(value)) value = value.toString('utf8');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || (value as StatusBody).kind !== 'Status') return undefined;
  return value as StatusBody;
}
