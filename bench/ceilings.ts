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
// Usage: npx tsx bench/ceilings.ts [--no-build] [--review mutate|validate|admit|label-update] [--rounds 5] [--duration 3]
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
  },
});

const DECISION = 'const decision = decideWithin(webhook, req.body, ctx, deadline, clock, plan.decoded);';
// The decisions made so far, by webhook and request uid, in a global of the copied route.
const ONCE_KEY = "webhook + ':' + String(req.body?.request?.uid)";
const DECISION_ONCE =
  `let decision = globalThis.__deedOnce?.get(${ONCE_KEY}); ` +
  `if (decision === undefined) { decision = decideWithin(webhook, req.body, ctx, deadline, clock, plan.decoded); (globalThis.__deedOnce ??= new Map()).set(${ONCE_KEY}, decision); }`;
const DECIDED = `globalThis.__deedOnce?.has(${ONCE_KEY})`;
const VARIANTS: Record<string, Edit[]> = {
  'decision-once': [[DECISION, DECISION_ONCE]],
  transport: [
    [DECISION, DECISION_ONCE],
    // The first review of a uid still waits for its scope and reads its lookups, so its decision is the real one.
    ["if (opts.awaitScope && typeof namespace === 'string')", `if (!${DECIDED} && opts.awaitScope && typeof namespace === 'string')`],
    ['const plan = opts.reader ? planLookups(', `const plan = ${DECIDED} ? { lookups: [] } : opts.reader ? planLookups(`],
    ['recordReview(metrics, webhook, request, outcome, verdict, durationMs / 1000);', ''],
    ['lineAfterAnswer(req.raw, reply.raw, () => {', 'if (false) lineAfterAnswer(req.raw, reply.raw, () => {'],
  ],
};

if (!flags['no-build']) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
const top = mkdtempSync(join(tmpdir(), 'deed-ceilings-'));
const dirs: string[] = [];
try {
  for (const [name, edits] of Object.entries(VARIANTS)) {
    const dir = join(top, name);
    editedBuild(dir, { 'dist/server/app.js': edits }, `bench/ceilings.ts, ${name}`);
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
