// Structured logs (pino). Deed logs review metadata only, never objects; the redaction
// list is a second line of defence for fields that must never appear.
import { pino, type DestinationStream, type Logger } from 'pino';

export const REDACT_PATHS = [
  '*.data',
  '*.stringData',
  '*.token',
  '*.password',
  'req.headers.authorization',
  // Node's HTTP parser errors carry the bytes read so far (server/client-errors.ts logs none).
  'err.rawPacket',
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

// Below this many buffered bytes a line waits for the end of the event loop's turn; at it,
// the buffer is written at once. sonic-boom requires it below its largest write (16 KiB).
const BATCH_BYTES = 8 * 1024;

/**
 * Standard output, the lines of one turn of the event loop joined into one write: a line is
 * appended to a buffer, and the buffer written once the turn's I/O callbacks have run
 * (setImmediate), so under load one system call carries several reviews' lines instead of
 * one each. The write is synchronous, as pino's default: a line is never held past the
 * turn that wrote it, and what is buffered is written when the process exits, however it
 * exits (process.exit included).
 */
export function standardOutput(fd = 1): DestinationStream {
  const out = pino.destination({ dest: fd, sync: true, minLength: BATCH_BYTES });
  let scheduled = false;
  // flush() writes what is buffered (synchronously, as the stream is); flushSync() would fsync too.
  const flush = () => {
    scheduled = false;
    out.flush();
  };
  process.on('exit', () => out.flushSync());
  return {
    write(line: string) {
      out.write(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
}

/** The most characters of one value a review line copies from the request (a name, a username): a forged review's megabyte field would otherwise be a megabyte line. */
export const MAX_LOGGED_VALUE = 256;

/** A value the request gives, as a review line holds it: whole up to MAX_LOGGED_VALUE characters, else its start and its length. */
export function clipped(value: string | undefined): string | undefined {
  return value === undefined || value.length <= MAX_LOGGED_VALUE ? value : `${value.slice(0, MAX_LOGGED_VALUE)}... (${value.length} characters)`;
}

export function createLogger(destination: DestinationStream = standardOutput(), level = process.env.DEED_LOG_LEVEL ?? 'info', format: LogFormat = 'json'): Logger {
  const iso = format === 'iso' ? { timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } } : {};
  return pino({ level, base: { service: 'deed' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, ...iso }, destination);
}

export type { Logger };
