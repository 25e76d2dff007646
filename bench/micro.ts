// Per-stage cost of one review, in process, without TLS or HTTP: where a review's CPU goes.
// Usage: npx tsx bench/micro.ts   (prints microseconds per call; figures only)
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { decide } from '../src/admission/decide.js';
import { decodeReview, findPrototypeKey } from '../src/admission/decode.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/observability/logger.js';
import { productionContext } from '../src/admission/production-context.js';
import { singleKeyRing } from '../src/policy/stamps/key-ring.js';
import { BENCH_POLICY, ROOT } from './processes.js';

const text = readFileSync(join(ROOT, 'test/fixtures/admission/mutate-create-pod-by-runner.json'), 'utf8');
const ctx = productionContext(parseConfig(BENCH_POLICY), singleKeyRing(Buffer.alloc(32, 7)));
const devNull = () => pino.destination({ dest: openSync('/dev/null', 'w'), sync: true });

function time(name: string, n: number, f: () => void): void {
  for (let i = 0; i < Math.min(n, 2000); i++) f(); // warm-up: let the JIT settle
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  const us = Number(process.hrtime.bigint() - started) / n / 1000;
  process.stdout.write(`${name.padEnd(44)} ${us.toFixed(1).padStart(7)} µs\n`);
}

const body = JSON.parse(text) as unknown;
const line = { webhook: 'mutate', uid: 'u', kind: 'Pod', namespace: 'sandbox-a', name: 'sbx-1', operation: 'CREATE', requester: 'system:serviceaccount:sandbox-a:runner', dryRun: false, decision: 'patched', patchBytes: 1400, durationMs: 0.05 };
const logger = createLogger(devNull());
const reviewLog = logger.child({}, { redact: [] });

process.stdout.write(`per-call cost, ${(text.length / 1024).toFixed(1)} KB pod review (node ${process.version})\n`);
time('JSON.parse of the body', 20_000, () => JSON.parse(text));
time('findPrototypeKey', 20_000, () => findPrototypeKey(body));
time('decodeReview', 20_000, () => decodeReview(body));
time('decide(mutate), body parsed fresh each time', 20_000, () => decide('mutate', JSON.parse(text), ctx));
time('log line, redacting logger', 20_000, () => logger.info(line, 'review'));
time('log line, review logger (no redaction)', 20_000, () => reviewLog.info(line, 'review'));
