// Where one review's time goes inside the server: a copy of the build whose route times the
// body's sizing (sizeOfBody: its text and parsed strings) and decoding, its JSON.parse, its parse-overhead count (body-budget.ts), the read plan and the decision,
// each review, under load (8 connections, as bench/compare.ts), beside the server's CPU per
// review. The hot loop of bench/micro.ts times the same stages far lower: inside the server
// they run between the HTTP, TLS and socket work of other reviews. The copy is made in a
// temporary folder from `dist/` by replacing lines of the compiled code, as bench/ceilings.ts
// does; a line not found is an error. Wall-clock µs, so each stage includes any garbage
// collection that fell inside it.
// Usage: npx tsx bench/stages.ts [--no-build] [--review admit|mutate|validate|label-update] [--duration 10]
// Prints figures; asserts nothing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './args.js';
import { cannon, median } from './load.js';
import { benchDir, editedBuild, type Edit, ROOT, startDeed, withCpuPerReview } from './processes.js';
import { benchCluster, benchReviews, clusterArgs, REVIEW_NAMES, verdictCheck } from './reviews.js';

const { values: flags } = benchArgs(import.meta.url, {
  options: {
    'no-build': { type: 'boolean', default: false },
    review: { type: 'string', default: 'admit' },
    duration: { type: 'string', default: '10' },
  },
});

const STAGES = ['size', 'decode', 'parse', 'parse-overhead', 'plan', 'decision'] as const;
// Each timed statement adds its nanoseconds to a global of the copy; once a second the sums
// go to stderr (Deed's log file) as one line, and start again.
const add = (key: string, value: string) => `(globalThis.__deedStages ??= {})[${JSON.stringify(key)}] = (globalThis.__deedStages[${JSON.stringify(key)}] ?? 0n) + ${value};`;
const timed = (stage: (typeof STAGES)[number], statement: string) => {
  const t = `__deedStage${STAGES.indexOf(stage)}`;
  return `const ${t} = process.hrtime.bigint(); ${statement} ${add(stage, `(process.hrtime.bigint() - ${t})`)}`;
};
const REPORT =
  "globalThis.__deedStagesTimer ??= setInterval(() => { const s = globalThis.__deedStages ?? {}; process.stderr.write('deed-stages ' + JSON.stringify(Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Number(v)]))) + '\\n'); globalThis.__deedStages = {}; }, 1000).unref();";
const PARSE = 'const parsed = JSON.parse(text);';
const SIZE = 'const { ascii, wide, textBytes, stringBytes } = sizeOfBody(body);';
const DECODE = "const text = body.toString(ascii ? 'latin1' : 'utf8');";
const PLAN = 'const plan = opts.reader ? planLookups(req.body, webhook, opts.ctx.policy.keys, opts.ctx.policy) : { lookups: [] };';
const DECISION = 'const decision = decideWithin(webhook, req.body, ctx, deadline, clock, plan.decoded);';
const OVERHEAD = 'const overhead = parseOverhead(body, most - before + 1);';
const EDITS: Record<string, Edit[]> = {
  'dist/server/app.js': [
    ['done(null, JSON.parse(text));', `${REPORT} ${timed('parse', PARSE)} ${add('reviews', '1n')} done(null, parsed);`],
    [PLAN, timed('plan', PLAN)],
    [DECISION, timed('decision', DECISION)],
  ],
  'dist/server/body-budget.js': [
    [SIZE, timed('size', SIZE)],
    [DECODE, timed('decode', DECODE)],
    [OVERHEAD, timed('parse-overhead', OVERHEAD)],
  ],
};

if (!flags['no-build']) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
const copy = mkdtempSync(join(tmpdir(), 'deed-stages-'));
const { dir, certDir, policy } = benchDir();
const cluster = await benchCluster();
try {
  editedBuild(copy, EDITS, 'bench/stages.ts');
  const served = await startDeed({ entry: 'dist', root: copy, certDir, policy, extraArgs: clusterArgs(cluster, join(dir, 'kubeconfig')) });
  try {
    const review = (await benchReviews(served, cluster)).find((r) => r.name === flags.review);
    if (review === undefined) throw new Error(`--review must be one of ${REVIEW_NAMES.join(', ')}, got ${flags.review}`);
    const load = (duration: number) => cannon({ url: `${served.url}${review.path}?timeout=10s`, ca: served.ca, body: review.body, connections: 8, duration, verify: verdictCheck(review) });
    await review.refresh();
    await load(3); // warm-up: its lines are left out below
    const skip = readFileSync(served.logFile!, 'utf8').split('\n').filter((l) => l.startsWith('deed-stages ')).length + 1;
    const { result, cpuUsPerReview } = await withCpuPerReview(served.child.pid!, () => load(Number(flags.duration)));
    if (result.mismatches > 0) throw new Error(`${result.mismatches} answers without the expected verdict`);
    const lines = readFileSync(served.logFile!, 'utf8').split('\n').filter((l) => l.startsWith('deed-stages ')).slice(skip, -1);
    const seconds = lines.map((l) => JSON.parse(l.slice('deed-stages '.length)) as Record<string, number>).filter((s) => (s.reviews ?? 0) > 0);
    process.stdout.write(
      `stages: ${review.name} at ${review.path}, 8 connections, ${flags.duration} s after a 3 s warm-up; node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n` +
        `  ${result.perSecond.toFixed(0)} reviews/s, ${cpuUsPerReview.toFixed(1)} µs of server CPU per review (all threads)\n` +
        `  wall-clock µs per review inside the server, median of ${seconds.length} one-second windows (min–max):\n`,
    );
    for (const stage of STAGES) {
      const perReview = seconds.map((s) => (s[stage] ?? 0) / 1000 / s.reviews!);
      process.stdout.write(`    ${stage.padEnd(15)} ${median(perReview).toFixed(1).padStart(7)}  (${Math.min(...perReview).toFixed(1)}–${Math.max(...perReview).toFixed(1)})\n`);
    }
  } finally {
    await served.stop();
  }
} finally {
  await cluster.close();
  rmSync(copy, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}
