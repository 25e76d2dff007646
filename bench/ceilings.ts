// What the standalone targets leave for Deed's own work: CPU per review of the build as it
// is, against copies of the same build with parts of the review taken away, and the no-op
// server, in alternating rounds (bench/compare.ts). The copies are made in a temporary folder
// from `dist/` by replacing lines of the compiled review route (dist/server/app.js); the
// shipped code is untouched, and a copy whose line is not found is an error, not a silent
// measurement of something else.
//   decision-once   each review's decision is made once per webhook and request uid, then
//                   reused: what Deed costs if its policy code (decoding, rules, stamps, HMAC,
//                   patch) were free; everything else as shipped
//   transport       decision-once, and no scope wait, lookups (after a uid's first review),
//                   metrics or log line: Deed's fastify, TLS, body reading, hooks and answer
// With --transport-parts, two more copies of `transport` with one of its parts taken away
// each, and one with both: what Deed's transport costs beyond the no-op server's, by part.
//   transport-no-hooks    the per-request hooks of the drain and connection deadlines not registered
//   transport-plain-body  the body read as the no-op server's fastify reads it: no memory budget
//   transport-bare        both
// Usage: npx tsx bench/ceilings.ts [--no-build] [--review mutate|validate|admit|label-update] [--rounds 5] [--duration 3] [--transport-parts]
// Prints figures; asserts nothing. See docs/performance.md, "What the targets leave".
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './args.js';
import { editedBuild, ROOT, type Edit } from './processes.js';

const { values: flags } = benchArgs(import.meta.url, {
  options: {
    'no-build': { type: 'boolean', default: false },
    path: { type: 'string' },
    review: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
    'transport-parts': { type: 'boolean', default: false },
  },
});

const DECISION = 'const decision = decideWithin(webhook, req.body, ctx, deadline, clock, plan.decoded);';
// The decisions made so far, by webhook and request uid, in a global of the copied route.
const ONCE_KEY = "webhook + ':' + String(req.body?.request?.uid)";
const DECISION_ONCE =
  `let decision = globalThis.__deedOnce?.get(${ONCE_KEY}); ` +
  `if (decision === undefined) { decision = decideWithin(webhook, req.body, ctx, deadline, clock, plan.decoded); (globalThis.__deedOnce ??= new Map()).set(${ONCE_KEY}, decision); }`;
const DECIDED = `globalThis.__deedOnce?.has(${ONCE_KEY})`;
const TRANSPORT: Edit[] = [
  [DECISION, DECISION_ONCE],
  // The first review of a uid still waits for its scope and reads its lookups, so its decision is the real one.
  ["if (opts.awaitScope && typeof namespace === 'string')", `if (!${DECIDED} && opts.awaitScope && typeof namespace === 'string')`],
  ['const plan = opts.reader ? planLookups(', `const plan = ${DECIDED} ? { lookups: [] } : opts.reader ? planLookups(`],
  ['recordReview(metrics, webhook, request, outcome, verdict, durationMs / 1000);', ''],
  ['lineAfterAnswer(req.raw, reply.raw, () => {', 'if (false) lineAfterAnswer(req.raw, reply.raw, () => {'],
];
// serve.ts still makes both concerns (the drain and the connection slots at accept stay), and registers neither's per-request hooks.
const NO_HOOKS: Edit = [
  'transport: (app) => [(connections = trackConnections(app)), guardConnections(app, limits, metrics, logger)],',
  'transport: (app) => { connections = trackConnections(app); guardConnections(app, limits, metrics, logger); return []; },',
];
// The chunks gathered and decoded, as fastify's own parser does: no grants, no deadline, no size of the parsed body.
const PLAIN_BODY: Edit = [
  "readBody({ payload, contentLength: req.headers['content-length'], account, timeoutMs: limits.bodyTimeoutMs, onRefused: (reason) => metrics.bodiesRefused.inc({ reason }), maxParsedBytes: budget.perConnectionBytes, requestBytes: budget.perRequestBytes }, bodyLimit).then(",
  "new Promise((res, rej) => { const cs = []; payload.on('data', (c) => cs.push(c)); payload.on('end', () => res({ text: Buffer.concat(cs).toString('utf8') })); payload.on('error', rej); }).then(",
];
/** Each copy's edits, by compiled file. */
const VARIANTS: Record<string, Record<string, Edit[]>> = {
  'decision-once': { 'dist/server/app.js': [[DECISION, DECISION_ONCE]] },
  transport: { 'dist/server/app.js': TRANSPORT },
  ...(flags['transport-parts']
    ? {
        'transport-no-hooks': { 'dist/server/app.js': TRANSPORT, 'dist/server/serve.js': [NO_HOOKS] },
        'transport-plain-body': { 'dist/server/app.js': [...TRANSPORT, PLAIN_BODY] },
        'transport-bare': { 'dist/server/app.js': [...TRANSPORT, PLAIN_BODY], 'dist/server/serve.js': [NO_HOOKS] },
      }
    : {}),
};

if (!flags['no-build']) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
const top = mkdtempSync(join(tmpdir(), 'deed-ceilings-'));
const dirs: string[] = [];
try {
  for (const [name, edits] of Object.entries(VARIANTS)) {
    const dir = join(top, name);
    editedBuild(dir, edits, `bench/ceilings.ts, ${name}`);
    dirs.push(dir);
    process.stdout.write(`${name}: ${dir}\n`);
  }
  const compare = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/compare.ts'), '--noop', ...(flags.review !== undefined ? ['--review', flags.review] : flags.path !== undefined ? ['--path', flags.path] : []), '--rounds', flags.rounds, '--duration', flags.duration, ROOT, ...dirs],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (compare.status !== 0) process.exitCode = compare.status ?? 1;
} finally {
  rmSync(top, { recursive: true, force: true });
}
