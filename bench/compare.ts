// Compares builds of Deed by server CPU per review, measured in alternating rounds on the
// same machine: a change worth a few percent is smaller than the drift between two bench
// runs, so both builds (and optionally the no-op server) take turns under the same load.
// Usage: npx tsx bench/compare.ts [--rounds 7] [--duration 3] [--connections 8] [--noop] [--review NAME] DIR[::NODE_FLAGS] ...
//   Each DIR is a checkout of Deed after `npm run build` (it runs DIR/bin/deed.js), for
//   instance a `git worktree` of the commit before a change; `::` adds Node flags for that
//   server, so one build can be compared with itself under other flags:
//   npx tsx bench/compare.ts . '.::--heap-growing-percent=50'. Load: `--review` mutate (the
//   runner's pod at /mutate, the default), validate (the stamped pod at /validate), admit (the
//   runner's pod at /admit) or label-update (its label UPDATE at /validate); `--path /validate`
//   still means validate. Each Deed reads the bench cluster (bench/reviews.ts), and every
//   answer must carry the verdict the body was chosen for.
import { join, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { benchArgs } from './args.js';
import { cannon, median } from './load.js';
import { benchDir, BENCH_POLICY, startDeed, startNoop, withCpuPerReview, type Served } from './processes.js';
import { benchCluster, benchReviews, clusterArgs, expectVerdict, REVIEW_NAMES, verdictCheck } from './reviews.js';

const { values: flags, positionals: dirs } = benchArgs(import.meta.url, {
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '7' },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
    noop: { type: 'boolean', default: false },
    path: { type: 'string' },
    review: { type: 'string' },
  },
});
if (dirs.length === 0) throw new Error('usage: compare.ts [--rounds N] [--duration S] [--noop] DIR[::NODE_FLAGS] ...');
const rounds = Number(flags.rounds);
const duration = Number(flags.duration);
const connections = Number(flags.connections);

const { dir, certDir, policy } = benchDir();
const cluster = await benchCluster();
const extraArgs = clusterArgs(cluster, join(dir, 'kubeconfig'));
const servers: Array<{ label: string; served: Served; perSecond: number[]; cpu: number[] }> = [];
for (const arg of dirs) {
  const [dir, flags = ''] = arg.split('::') as [string, string?];
  const nodeArgs = flags.split(' ').filter(Boolean);
  const label = `${resolve(dir)}${nodeArgs.length > 0 ? ` (node ${nodeArgs.join(' ')})` : ''}`;
  servers.push({ label, served: await startDeed({ entry: 'dist', root: resolve(dir), certDir, policy, nodeArgs, extraArgs }), perSecond: [], cpu: [] });
}
// Every Deed shares the certificate directory, so the attestation key: the claim one stamps verifies in all.
// Each is checked to give the body its verdict; the first one's stamped claim stays in the cluster.
const wanted = flags.review ?? (flags.path === '/validate' ? 'validate' : flags.path === undefined || flags.path === '/mutate' ? 'mutate' : flags.path);
const review = (await benchReviews(servers[0]!.served, cluster)).find((r) => r.name === wanted);
if (review === undefined) throw new Error(`--review must be one of ${REVIEW_NAMES.join(', ')} (or --path /mutate, /validate), got ${wanted}`);
for (const s of servers.slice(1)) await expectVerdict(s.served, review);
const { path } = review;
const deedVerify = verdictCheck(review);
const noopVerify = (text: string) => text.includes(`"uid":"${review.uid}"`);
if (flags.noop) servers.push({ label: 'no-op server', served: await startNoop(certDir), perSecond: [], cpu: [] });

process.stdout.write(`compare: ${review.name} at ${path} (${review.expect}), ${connections} connections, ${rounds} alternating rounds of ${duration} s after a 2 s warm-up each; node ${process.version}; policy ${JSON.stringify(BENCH_POLICY.environments.map((e) => e.id))}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
try {
  const verifyOf = (s: (typeof servers)[number]) => (s.label === 'no-op server' ? noopVerify : deedVerify);
  for (const s of servers) {
    await review.refresh();
    await cannon({ url: `${s.served.url}${path}?timeout=10s`, ca: s.served.ca, body: review.body, connections, duration: 2, verify: verifyOf(s) });
  }
  for (let round = 0; round < rounds; round++)
    for (const s of servers) {
      await review.refresh(); // a fresh stamp each round: the same body for every server, never older than the reinvocation window
      const body = review.body;
      const { result, cpuUsPerReview } = await withCpuPerReview(s.served.child.pid!, () =>
        cannon({ url: `${s.served.url}${path}?timeout=10s`, ca: s.served.ca, body, connections, duration, verify: verifyOf(s) }),
      );
      if (result.mismatches > 0) throw new Error(`${s.label}: ${result.mismatches} answers without the expected verdict`);
      s.perSecond.push(result.perSecond);
      s.cpu.push(cpuUsPerReview);
    }
  for (const s of servers)
    process.stdout.write(
      `${s.label}\n  median ${median(s.perSecond).toFixed(0)} reviews/s, ${median(s.cpu).toFixed(1)} µs CPU per review (rounds: ${s.cpu.map((c) => c.toFixed(0)).join(' ')})\n`,
    );
  process.stdout.write(`load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
} finally {
  for (const s of servers) await s.served.stop();
  await cluster.close();
}
