// Structured logs (pino). Deed logs review metadata only, never objects; the redaction
// list is a second line of defence for fields that must never appear.
import { pino, type DestinationStream, type Logger } from 'pino';

export const REDACT_PATHS = [
  '*.data',
  '*.stringData',
  '*.token',
  '*.password',
  'req.headers.authorization',
  'userInfo.extra',
  'request.object',
  'request.oldObject',
];

/**
 * `json`: pino's own lines, epoch milliseconds and numeric levels (30 = info), as Deed always
 * wrote them. `iso`: the same lines with an ISO-8601 UTC time and the level by name, which
 * log stores that do not know pino read without a mapping.
 */
export const LOG_FORMATS = ['json', 'iso'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export function createLogger(destination?: DestinationStream, level = process.env.DEED_LOG_LEVEL ?? 'info', format: LogFormat = 'json'): Logger {
  const iso = format === 'iso' ? { timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } } : {};
  return pino({ level, base: { service: 'deed' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, ...iso }, destination);
}

export type { Logger };
