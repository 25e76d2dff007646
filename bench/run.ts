// `npm run bench`: Deed against a no-op TLS server, over HTTP/1.1 (autocannon) and HTTP/2
// (h2load, when installed), with a realistic ~9 KB pod AdmissionReview. Prints figures;
// asserts nothing. See docs/performance.md for how to read them.
//   npm run bench -- --quick             short runs (a shared machine)
//   npm run bench -- --soak 200000       RSS across that many reviews
//   npm run bench -- --cpu-prof          write a V8 CPU profile of Deed to bench/profiles/
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { benchArgs } from './args.js';
import { cannon, median, paced, h2load, type LoadResult } from './load.js';
import { benchDir, cpuMs, resetPeak, memory, ROOT, startDeed, startNoop, withCpuPerReview } from './processes.js';
import { benchCluster, benchReviews, clusterArgs, lookupCounts, verdictCheck } from './reviews.js';

const { values: flags } = benchArgs(import.meta.url, {
  options: {
    quick: { type: 'boolean', default: false },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '8' },
    rate: { type: 'string', default: '1000' },
    soak: { type: 'string' },
    entry: { type: 'string', default: 'dist' },
    'no-build': { type: 'boolean', default: false },
    'no-h2': { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
    'node-options': { type: 'string', default: '' },
  },
});
const quick = flags.quick;
const duration = Number(flags.duration ?? (quick ? 3 : 5));
const roundCount = Number(flags.rounds ?? (quick ? 1 : 3));
const connections = Number(flags.connections);
const rate = Number(flags.rate);
const soak = Number(flags.soak ?? (quick ? 20_000 : 200_000));
const entry = flags.entry === 'tsx' ? 'tsx' : 'dist';

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const pad = (s: string, n: number) => s.padEnd(n);
const log = (s = '') => process.stdout.write(`${s}\n`);

/** Samples the Deed process's RSS while `run` is in flight. */
async function sampled<T>(pid: number, everyMs: number, run: () => Promise<T>): Promise<{ result: T; samples: number[] }> {
  const samples: number[] = [];
  const timer = setInterval(() => {
    const m = memory(pid);
    if (m) samples.push(m.rssMiB);
  }, everyMs);
  try {
    return { result: await run(), samples };
  } finally {
    clearInterval(timer);
  }
}

/** Server CPU time per review (µs), all threads: steadier than a rate on a shared machine. */
const cpuPerReview = new Map<LoadResult, number>();

function row(label: string, r: LoadResult, baseline?: LoadResult): string {
  const ratio = baseline ? fmt(r.perSecond / baseline.perSecond, 2) : '';
  const bad = r.non2xx + r.errors + r.timeouts + r.mismatches;
  return `${pad(label, 34)} ${fmt(r.perSecond).padStart(8)} ${fmt(r.p50, 2).padStart(8)} ${fmt(r.p99, 2).padStart(8)} ${ratio.padStart(6)} ${fmt(cpuPerReview.get(r) ?? NaN).padStart(9)} ${String(bad).padStart(5)}`;
}

async function main(): Promise<void> {
  log(`Deed benchmark  ${new Date().toISOString()}  node ${process.version}  entry=${entry}  duration=${duration}s  connections=${connections}`);
  log(`command: npm run bench -- ${process.argv.slice(2).join(' ')}`.trimEnd());
  log('Figures are indicative: a shared 2-core machine, with the load generator on the same cores.');
  if (entry === 'dist' && !flags['no-build']) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });

  const { dir, certDir, policy } = benchDir();
  // Deed reads a cluster as it does when installed: its lookups (the claim a pod mounts)
  // come from its watch-backed cache. Without one, /validate's pod would be denied.
  const cluster = await benchCluster();
  const extraArgs = clusterArgs(cluster, join(dir, 'kubeconfig'));
  log(`load average (1, 5, 15 min) at the start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  // Startup: the first start generates the certificates; later starts are what a restart costs.
  const first = await startDeed({ entry, certDir, policy });
  await first.stop();
  const readies: number[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await startDeed({ entry, certDir, policy });
    readies.push(s.readyMs!);
    await s.stop();
  }
  readies.sort((a, b) => a - b);
  log(`\nstartup: spawn -> readyz 200: first start (generates certificates) ${fmt(first.readyMs!)} ms; restarts ${readies.map((r) => fmt(r)).join(', ')} ms (median ${fmt(readies[1]!)} ms)`);
  const withCluster = await startDeed({ entry, certDir, policy, extraArgs });
  await withCluster.stop();
  log(`  reading a cluster (client-node loaded, the opted-in namespaces listed before readyz is 200): ${fmt(withCluster.readyMs!)} ms`);

  const profDir = join(ROOT, 'bench', 'profiles');
  if (flags['cpu-prof']) mkdirSync(profDir, { recursive: true });
  const nodeArgs = [...flags['node-options'].split(' ').filter(Boolean), ...(flags['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [])];
  if (nodeArgs.length > 0) log(`deed runs with node ${nodeArgs.join(' ')}`);
  const deed = await startDeed({ entry, certDir, policy, nodeArgs, extraArgs });
  const noop = await startNoop(certDir);
  const pid = deed.child.pid!;

  // The two reviews this bench has always timed; bench/compare.ts times the others by name.
  const endpoints = (await benchReviews(deed, cluster)).filter((e) => e.name === 'mutate' || e.name === 'validate');
  const mutate = endpoints.find((e) => e.path === '/mutate')!;
  log(`\nverdicts checked before the runs and on every answer under them (a different one counts as bad): ${endpoints.map((e) => `${e.path} ${e.expect}`).join(', ')}`);
  log(`\nHTTP/1.1, autocannon, ${connections} keep-alive connections; ${roundCount} alternating round(s) of ${duration} s per server after a 2 s warm-up; median round shown`);
  log(`${pad('run', 34)} ${'rev/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'ratio'.padStart(6)} ${'cpu µs/rev'.padStart(9)} ${'bad'.padStart(5)}`);
  const peak: number[] = [];
  for (const ep of endpoints) {
    const size = Buffer.byteLength(ep.body);
    const verify = verdictCheck(ep);
    const noopVerify = (b: string) => b.includes(`"uid":"${ep.uid}"`) && b.includes('"allowed":true');
    // Alternate the two servers over several rounds and keep each one's median round: the
    // machine's other load drifts, and back-to-back halves would charge the drift to one side.
    const rounds: LoadResult[][] = [[], []];
    for (const server of [noop, deed]) {
      await ep.refresh(); // a stamped pod is judged fresh only moments after its admission: stamped again before each run
      await cannon({ url: `${server.url}${ep.path}?timeout=10s`, ca: server.ca, body: ep.body, connections, duration: 2, verify: server === deed ? verify : noopVerify });
    }
    for (let round = 0; round < roundCount; round++)
      for (const [i, server] of [noop, deed].entries()) {
        const url = `${server.url}${ep.path}?timeout=10s`;
        await ep.refresh();
        const { result, cpuUsPerReview } = await withCpuPerReview(server.child.pid!, () => cannon({ url, ca: server.ca, body: ep.body, connections, duration, verify: server === deed ? verify : noopVerify }));
        cpuPerReview.set(result, cpuUsPerReview);
        rounds[i]!.push(result);
      }
    const results = rounds.map((rs) => [...rs].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(rs.length / 2)]!);
    log(row(`no-op ${ep.path}`, results[0]!));
    log(row(`deed  ${ep.path} (${(size / 1024).toFixed(1)} KB, ${ep.expect})`, results[1]!, results[0]!));
    peak.push(memory(pid)?.peakMiB ?? NaN);
  }
  log(`peak RSS of deed (VmHWM) after the throughput runs: ${fmt(Math.max(...peak), 1)} MiB`);

  const fixedS = quick ? 5 : 10;
  log(`\nfixed rate: ${rate} reviews/s to /mutate for ${fixedS} s, deed then the no-op server, ${roundCount} round(s), open loop (a request every ${fmt(1000 / rate, 2)} ms over up to 16 keep-alive connections; latency from each request's due time)`);
  // The no-op server under the same load shows what the machine and the generator alone
  // put into the tail; the generator's own send lag is printed too. A 10 s p99 moves by
  // several milliseconds between identical runs here, so the rounds alternate and the
  // median p99 is the figure.
  const p99s: number[][] = [[], []];
  for (let round = 0; round < roundCount; round++)
    for (const [i, [label, server]] of ([['deed ', deed], ['no-op', noop]] as const).entries()) {
      const open = await paced({ url: `${server.url}/mutate?timeout=10s`, ca: server.ca, body: mutate.body, rate, durationS: fixedS, connections: 16 });
      p99s[i]!.push(open.p99);
      log(`  ${label} achieved ${fmt(open.perSecond)} reviews/s, p50 ${fmt(open.p50, 2)} ms, p99 ${fmt(open.p99, 2)} ms, max ${fmt(open.max, 2)} ms, bad ${open.bad}; generator send lag p99 ${fmt(open.sendLagP99, 2)} ms`);
    }
  log(`  median p99 over ${roundCount} round(s): deed ${fmt(median(p99s[0]!), 2)} ms, no-op ${fmt(median(p99s[1]!), 2)} ms`);
  log(`fixed rate, bursty: autocannon overallRate ${rate}/s, 10 connections (each sends its quota back to back at the start of every second)`);
  const fixed = await cannon({ url: `${deed.url}/mutate?timeout=10s`, ca: deed.ca, body: mutate.body, connections: 10, duration: fixedS, overallRate: rate });
  log(`  achieved ${fmt(fixed.perSecond)} reviews/s, p50 ${fmt(fixed.p50, 2)} ms, p99 ${fmt(fixed.p99, 2)} ms, max ${fmt(fixed.max, 2)} ms, bad ${fixed.non2xx + fixed.errors + fixed.timeouts}`);

  if (!flags['no-h2']) {
    const amount = quick ? 10_000 : 40_000;
    const probe = h2load(`${noop.url}/mutate`, mutate.body, 10, 1, 1);
    if (probe === undefined) log('\nHTTP/2: h2load not found (Debian: apt-get install nghttp2-client); skipped.');
    else {
      log(`\nHTTP/2, h2load, ${amount} reviews, 4 connections x 8 concurrent streams`);
      // CPU per review too, as over HTTP/1.1: the two tables then say which protocol Node serves cheaper.
      log(`${pad('run', 34)} ${'rev/s'.padStart(8)} ${'mean ms'.padStart(8)} ${'max ms'.padStart(8)} ${'ratio'.padStart(6)} ${'cpu µs/rev'.padStart(9)} ${'bad'.padStart(6)}`);
      const h2 = (server: typeof deed, ep: (typeof endpoints)[number]) => {
        const before = cpuMs(server.child.pid!);
        const r = h2load(`${server.url}${ep.path}?timeout=10s`, ep.body, amount, 4, 8)!;
        return { ...r, cpuUs: ((cpuMs(server.child.pid!) - before) * 1000) / (r.ok || 1) };
      };
      for (const ep of endpoints) {
        await ep.refresh();
        const base = h2(noop, ep);
        await ep.refresh();
        const mine = h2(deed, ep);
        for (const [label, r, ratio] of [
          [`no-op ${ep.path}`, base, ''],
          [`deed  ${ep.path}`, mine, fmt(mine.perSecond / base.perSecond, 2)],
        ] as const)
          log(`${pad(label, 34)} ${fmt(r.perSecond).padStart(8)} ${fmt(r.meanMs, 2).padStart(8)} ${fmt(r.maxMs, 2).padStart(8)} ${ratio.padStart(6)} ${fmt(r.cpuUs).padStart(9)} ${String(r.failed + (amount - r.ok)).padStart(6)}`);
      }
      log(`peak RSS of deed (VmHWM) since start, after the HTTP/2 runs: ${fmt(memory(pid)?.peakMiB ?? NaN, 1)} MiB`);
    }
  }

  log(`\nmemory: ${soak} reviews to deed /mutate, ${connections} connections, RSS sampled every second`);
  // The peak from here on: the throughput and HTTP/2 runs above load Deed harder. The
  // kernel resets it to the current RSS, so memory they left behind still counts.
  const peakReset = resetPeak(pid);
  const before = memory(pid);
  const { result: soaked, samples } = await sampled(pid, 1000, () => cannon({ url: `${deed.url}/mutate?timeout=10s`, ca: deed.ca, body: mutate.body, connections, amount: soak, verify: verdictCheck(mutate) }));
  const after = memory(pid);
  const tenth = Math.max(1, Math.floor(samples.length / 10));
  log(`  RSS before ${fmt(before?.rssMiB ?? NaN, 1)} MiB; during (every ${tenth} s): ${samples.filter((_, i) => i % tenth === 0).map((s) => fmt(s, 0)).join(' ')} MiB; after ${fmt(after?.rssMiB ?? NaN, 1)} MiB; peak (VmHWM) ${peakReset ? 'during the soak (reset to the RSS it started at)' : 'since start'} ${fmt(after?.peakMiB ?? NaN, 1)} MiB`);
  const half = samples.slice(Math.floor(samples.length / 2));
  const thirds = [samples.slice(0, Math.floor(samples.length / 3)), samples.slice(-Math.floor(samples.length / 3))].map(median);
  log(`  median RSS first third ${fmt(thirds[0]!, 1)} MiB, last third ${fmt(thirds[1]!, 1)} MiB; second-half range ${fmt(Math.min(...half), 1)}-${fmt(Math.max(...half), 1)} MiB`);
  log(`  ${soaked.ok} answered 2xx in ${fmt(soaked.durationS, 1)} s (${fmt(soaked.perSecond)} reviews/s), bad ${soaked.non2xx + soaked.errors + soaked.timeouts + soaked.mismatches}`);

  log(`\nlookups under the runs (deed_lookups_total): ${await lookupCounts(deed)}`);
  log(`load average (1, 5, 15 min) at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await noop.stop();
  const code = await deed.stop();
  await cluster.close();
  if (flags['cpu-prof']) log(`\nCPU profile written to ${profDir} (deed exited ${code}); summarise with: npx tsx bench/profile-summary.ts ${profDir}`);
}

await main();
