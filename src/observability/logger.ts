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

export function createLogger(destination?: DestinationStream, level = process.env.DEED_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { service: 'deed' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}

export type { Logger };
