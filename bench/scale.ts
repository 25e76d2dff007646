// `npm run bench:scale`: Deed's memory and fill time with a large cluster behind its lookup
// cache (issue 39). A stand-in API server in a child process of its own (bench/scale-cluster.ts)
// serves N objects in K opted-in namespaces, generated per page; the compiled `deed serve`
// reads it as installed (kubeconfig, its own namespace) and is measured only from outside:
// /readyz, /metrics, /proc and HTTPS reviews. So the same bench measures any rewrite of the
// cache. Prints figures; asserts nothing, but exits 1 when Deed never gets current or exits.
//   npm run bench:scale -- --objects 45000               fill, then 300 reviews
//   npm run bench:scale -- --objects 227000 --relist     and every watch ended by 410 Gone
//   npm run bench:scale -- --objects 9000 -- --cache-memory 64   (after `--`: deed serve flags)
//   npm run bench:scale -- --objects 227000 --pending-clones   every claim a clone not yet provisioned
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { benchArgs } from './args.js';
import { getPlain } from '../test/serve-process.js';
import { writeBenchKubeConfig, type BenchCluster } from './cluster.js';
import { benchDir, memory, resetPeak, ROOT, startDeed, type Served } from './processes.js';
import { benchReviews, clusterArgs, metricsText, post, verdictCheck, type BenchReview } from './reviews.js';
import { cachedKinds, objectMix } from './scale-objects.js';

/** The image's Node flags (Dockerfile: NODE_OPTIONS, and the ENTRYPOINT's V8 flag). */
const IMAGE_NODE_OPTIONS = '--max-semi-space-size=2 --heap-growing-percent=50';

const { values: flags, positionals } = benchArgs(import.meta.url, {
  allowPositionals: true,
  options: {
    objects: { type: 'string', default: '45000' },
    namespaces: { type: 'string', default: '200' },
    reviews: { type: 'string', default: '300' },
    relist: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
    entry: { type: 'string', default: 'dist' },
    'node-options': { type: 'string', default: IMAGE_NODE_OPTIONS },
    'deed-arg': { type: 'string', multiple: true, default: [] },
    'baseline-mib': { type: 'string' },
    'timeout-seconds': { type: 'string', default: '180' },
    unsigned: { type: 'boolean', default: false },
    'pending-clones': { type: 'boolean', default: false },
  },
});
const N = Number(flags.objects);
const K = Number(flags.namespaces);
const R = Number(flags.reviews);
const timeoutMs = Number(flags['timeout-seconds']) * 1000;
const entry = flags.entry === 'tsx' ? 'tsx' : 'dist';
const nodeArgs = flags['node-options'].split(' ').filter(Boolean);
const deedArgs = [...flags['deed-arg'], ...positionals];
if (!(timeoutMs > 0)) fail('--timeout-seconds must be a positive number');
for (const [name, v] of [['--objects', N], ['--namespaces', K], ['--reviews', R]] as const)
  if (!Number.isInteger(v) || v < 0 || (name === '--namespaces' && v < 2)) fail(`${name} must be a whole number${name === '--namespaces' ? ' of at least 2' : ''}`);

const log = (s = '') => process.stdout.write(`${s}\n`);
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const MiB = 1048576;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fail(message: string): never {
  process.stderr.write(`\nbench:scale FAILED: ${message}\n`);
  process.exit(1);
}

// ---- the stand-in API server, a child process --------------------------------------------

interface ScaleCluster extends BenchCluster {
  child: ChildProcess;
  stats(): Promise<ClusterStats>;
  expire(): Promise<void>;
}
interface ClusterStats {
  requests: number;
  listPages: number;
  listItems: number;
  listBytes: number;
  gets: number;
  watches: number;
  watchesOpen: number;
  watchesExpired: number;
  cpuMs: number;
  rssMiB: number;
  byResource: Record<string, { pages: number; items: number; bytes: number; watches: number; gets: number }>;
}

const clusters = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of clusters) if (c.exitCode === null) c.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130)); // the exit handlers kill the children

function call(url: string, method: string, path: string, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, agent: false, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`${method} ${path}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function startScaleCluster(objects: number, keyFile: string | undefined): Promise<ScaleCluster> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/scale-cluster.ts'), '--objects', String(objects), '--namespaces', String(K), ...(keyFile ? ['--key-file', keyFile] : []), ...(flags['pending-clones'] ? ['--pending-clones'] : [])], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  clusters.add(child);
  let errors = '';
  child.stderr!.on('data', (c: Buffer) => (errors = (errors + c.toString('utf8')).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (out.includes('\n')) resolve(out.split('\n')[0]!.trim());
    });
    child.once('exit', (code) => reject(new Error(`the stand-in API server exited with ${code}:\n${errors}`)));
  });
  child.once('exit', (code, signal) => {
    if (signal === null && code !== 0) fail(`the stand-in API server exited with ${code}:\n${errors}`);
  });
  return {
    child,
    url,
    requests: () => NaN,
    // Fire and forget, as bench/cluster.ts's add is synchronous: the verdict checks retry until the watch brings it.
    add: (resource, obj) => void call(url, 'POST', `/_bench/add/${resource}`, JSON.stringify(obj)).catch((err: unknown) => fail(`adding a ${resource}: ${String(err)}`)),
    stats: async () => JSON.parse(await call(url, 'GET', '/_bench/stats')) as ClusterStats,
    expire: async () => void (await call(url, 'POST', '/_bench/expire')),
    writeKubeConfig: (file) => writeBenchKubeConfig(file, url),
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---- Deed's metrics ----------------------------------------------------------------------

/** `--metrics-port P` among deed's flags moves /readyz and /metrics to plain HTTP there. */
const metricsPortAt = deedArgs.indexOf('--metrics-port');
const metricsPort = metricsPortAt >= 0 ? Number(deedArgs[metricsPortAt + 1]) : undefined;
const passedArgs = metricsPortAt >= 0 ? deedArgs.filter((_, i) => i !== metricsPortAt && i !== metricsPortAt + 1) : deedArgs;

async function scrape(deed: Served): Promise<Map<string, number>> {
  const text = metricsPort !== undefined ? (await getPlain(metricsPort, '/metrics')).body : await metricsText(deed);
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/** Series of `metric` by its `resource` label. */
function byResource(m: Map<string, number>, metric: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const [series, v] of m) {
    const r = new RegExp(`^${metric}\\{resource="([^"]+)"\\}$`).exec(series);
    if (r) out.set(r[1]!, v);
  }
  return out;
}

function logTail(deed: Served, lines = 40): string {
  try {
    return readFileSync(deed.logFile!, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function failWith(deed: Served, message: string): never {
  fail(`${message}\n--- the last lines of deed's log (${deed.logFile}) ---\n${logTail(deed)}`);
}

/** The kinds Deed is expected to keep (the kind table's; Secrets unless --no-cache-secrets). */
const expected = ['namespaces', ...cachedKinds().map((k) => k.resource).filter((r) => r !== 'secrets' || !deedArgs.includes('--no-cache-secrets'))];

/** Heap used and total, and external memory, from Deed's /metrics. */
const heapFigures = (m: Map<string, number>) =>
  `used ${fmt((m.get('nodejs_heap_size_used_bytes') ?? NaN) / MiB, 1)} MiB, total ${fmt((m.get('nodejs_heap_size_total_bytes') ?? NaN) / MiB, 1)} MiB; external ${fmt((m.get('nodejs_external_memory_bytes') ?? NaN) / MiB, 1)} MiB`;

/** About a dozen of the RSS samples, evenly spaced, as ms:MiB. */
function sampled(samples: Array<{ t: number; rss: number }>): string {
  const step = Math.max(1, Math.ceil(samples.length / 12));
  return samples.filter((_, i) => i % step === 0).map((x) => `${fmt(x.t)}:${fmt(x.rss)}`).join(' ');
}

/** Samples Deed's RSS every `everyMs` until stopped. */
function sampler(pid: number, t0: number, everyMs = 200) {
  const samples: Array<{ t: number; rss: number }> = [];
  const timer = setInterval(() => {
    const m = memory(pid);
    if (m) samples.push({ t: performance.now() - t0, rss: m.rssMiB });
  }, everyMs);
  return {
    samples,
    stop: () => clearInterval(timer),
  };
}

/**
 * Waits until every expected kind is settled: its `deed_lookup_cache_current` is 1, or it was
 * shed past the memory budget (`deed_lookup_cache_shed` 1: read live from then on, reported
 * below), and `done` (if given) agrees; the ms each first got there.
 */
async function untilCurrent(deed: Served, t0: number, done: () => Promise<boolean> = async () => true): Promise<{ ms: number; first: Map<string, number> }> {
  const first = new Map<string, number>();
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (deed.child.exitCode !== null || deed.child.signalCode !== null) failWith(deed, `deed exited (${deed.child.exitCode ?? deed.child.signalCode}) before its caches were current`);
    const m = await scrape(deed).catch(() => new Map<string, number>());
    const current = byResource(m, 'deed_lookup_cache_current');
    const shed = byResource(m, 'deed_lookup_cache_shed');
    const settled = (r: string) => current.get(r) === 1 || shed.get(r) === 1;
    const now = performance.now() - t0;
    for (const r of expected) if (settled(r) && !first.has(r)) first.set(r, now);
    if (expected.every(settled) && (await done())) return { ms: now, first };
    if (performance.now() > deadline) failWith(deed, `deed's lookup caches were not current within ${timeoutMs / 1000} s; not current: ${expected.filter((r) => !settled(r)).join(', ')}`);
    await sleep(100);
  }
}

// ---- reviews -----------------------------------------------------------------------------

interface ReviewTally {
  ok: number;
  failed: number;
  latencies: number[];
  firstFailure?: string;
}

async function sendReviews(deed: Served, endpoints: BenchReview[], tally: ReviewTally, keepGoing: (sent: number) => boolean, concurrency: number): Promise<void> {
  let sent = 0;
  const worker = async () => {
    while (keepGoing(sent)) {
      const ep = endpoints[sent++ % endpoints.length]!;
      const start = performance.now();
      try {
        const answer = await post(deed, `${ep.path}?timeout=10s`, ep.body);
        tally.latencies.push(performance.now() - start);
        if (answer.status === 200 && verdictCheck(ep)(answer.text)) tally.ok++;
        else {
          tally.failed++;
          tally.firstFailure ??= `${ep.path}: ${answer.status} ${answer.text.slice(0, 300)}`;
        }
      } catch (err) {
        tally.failed++;
        tally.firstFailure ??= `${ep.path}: ${String(err)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

// ---- one measured run --------------------------------------------------------------------

interface Figures {
  readyMs: number;
  currentMs: number;
  rssAfterFill: number;
  peakAfterFill: number;
  /** Objects the cache says it keeps, namespaces not counted. */
  kept: number;
}

interface Dir {
  dir: string;
  certDir: string;
  policy: string;
  keyFile: string;
}

async function measure(at: Dir, objects: number, label: string, full: boolean): Promise<Figures> {
  const { dir, certDir, policy, keyFile } = at;
  const cluster = await startScaleCluster(objects, flags.unsigned ? undefined : keyFile);
  const extraArgs = [...clusterArgs(cluster, join(dir, `kubeconfig-${objects}`)), ...passedArgs];
  if (full) log(`deed serve ${extraArgs.join(' ')}  (node ${nodeArgs.join(' ')}); log ${dir}`);

  const deed = await startDeed({ entry, certDir, policy, nodeArgs, extraArgs, ...(metricsPort !== undefined ? { metricsPort } : {}) }).catch((err: unknown) => fail(String(err)));
  const t0 = performance.now() - deed.readyMs!;
  const pid = deed.child.pid!;
  const rss = sampler(pid, t0);
  const fill = await untilCurrent(deed, t0);
  // deed_lookup_cache_objects is refreshed every 5 s: wait for it to count what was served.
  let objectsByKind = new Map<string, number>();
  const want = objects + K;
  // Until it matches, or two refreshes after current (a kind that keeps fewer is reported below).
  while (performance.now() - t0 < fill.ms + 11_000) {
    objectsByKind = byResource(await scrape(deed), 'deed_lookup_cache_objects');
    if ([...objectsByKind.values()].reduce((a, b) => a + b, 0) === want) break;
    await sleep(200);
  }
  // Then the same time after current in every run (the baseline's count is right at once), so
  // the RSS after fill is compared at the same point of Deed's life.
  while (performance.now() - t0 < fill.ms + 6000) await sleep(200);
  rss.stop();
  const m = await scrape(deed);
  const after = memory(pid)!;
  const sum = [...objectsByKind.values()].reduce((a, b) => a + b, 0);
  const maxSample = rss.samples.reduce((a, b) => (b.rss > a.rss ? b : a), { t: NaN, rss: 0 });

  log(`\n[${label}] fill: ${objects} objects + ${K} namespaces`);
  log(`  ready (spawn -> /readyz 200):                ${fmt(deed.readyMs!)} ms`);
  log(`  every deed_lookup_cache_current is 1 (or shed): ${fmt(fill.ms)} ms after spawn`);
  log(`  first current, per resource (ms):            ${[...fill.first].sort((a, b) => a[1] - b[1]).map(([r, t]) => `${r} ${fmt(t)}`).join(', ')}`);
  log(`  deed_lookup_cache_objects:                   ${sum} in all (${sum - (objectsByKind.get('namespaces') ?? 0)} without namespaces; ${want} served)${sum === want ? '' : '  MISMATCH'}`);
  log(`    per resource: ${[...objectsByKind].map(([r, n]) => `${r} ${n}`).join(', ')}`);
  const served: Record<string, number> = { ...objectMix(objects, K), namespaces: K };
  const short = Object.entries(served).filter(([r, n]) => objectsByKind.has(r) && objectsByKind.get(r) !== n);
  if (short.length > 0) log(`    KEPT OTHER THAN SERVED: ${short.map(([r, n]) => `${r} ${objectsByKind.get(r)} of ${n}`).join(', ')}`);
  log(`  heap after fill (nodejs_heap_size_*_bytes):  ${heapFigures(m)}`);
  const estimated = [...byResource(m, 'deed_lookup_cache_bytes').values()].reduce((a, b) => a + b, 0);
  const shed = [...byResource(m, 'deed_lookup_cache_shed')].filter(([, v]) => v > 0).map(([r]) => r);
  if (m.has('deed_lookup_cache_budget_bytes'))
    log(`  cache estimate (deed_lookup_cache_bytes):    ${fmt(estimated / MiB, 1)} MiB of a ${fmt((m.get('deed_lookup_cache_budget_bytes') ?? NaN) / MiB, 1)} MiB budget; shed: ${shed.length > 0 ? shed.join(', ') : 'none'}`);
  log(`  RSS after fill:                              ${fmt(after.rssMiB, 1)} MiB`);
  log(`  peak RSS (VmHWM) after fill:                 ${fmt(after.peakMiB, 1)} MiB (highest 200 ms sample ${fmt(maxSample.rss, 1)} MiB at ${fmt(maxSample.t)} ms; every kind current at ${fmt(fill.ms)} ms)`);
  log(`  RSS during fill (ms:MiB):                    ${sampled(rss.samples)}`);
  const figures: Figures = { readyMs: deed.readyMs!, currentMs: fill.ms, rssAfterFill: after.rssMiB, peakAfterFill: after.peakMiB, kept: sum - (objectsByKind.get('namespaces') ?? 0) };
  if (!full) {
    await deed.stop();
    await cluster.close();
    return figures;
  }

  const cs = await cluster.stats();
  log(`  stand-in API server for the fill:            ${cs.listPages} list pages, ${cs.listItems} items, ${fmt(cs.listBytes / MiB, 1)} MiB of JSON; ${cs.watches} watches; ${cs.gets} gets; its CPU ${fmt(cs.cpuMs)} ms, its RSS ${fmt(cs.rssMiB)} MiB`);
  log(`    list pages (items) per resource: ${Object.entries(cs.byResource).filter(([, r]) => r.pages > 0).map(([name, r]) => `${name} ${r.pages} (${r.items})`).join(', ')}`);

  // Reviews: the fixtures' pod at /mutate (patched) and the pod Deed stamped at /validate
  // (allowed once its workspace claim is found in the cache), alternately, 4 at a time.
  const endpoints = await benchReviews(deed, cluster).catch((err: unknown) => failWith(deed, String(err)));
  const peakReset = resetPeak(pid);
  const tally: ReviewTally = { ok: 0, failed: 0, latencies: [] };
  const started = performance.now();
  await sendReviews(deed, endpoints, tally, (sent) => sent < R, 4);
  const afterReviews = memory(pid)!;
  log(`\n[${label}] ${R} reviews (${endpoints.map((e) => `${e.path} ${e.expect}`).join(', ')}; 4 at a time, a TLS connection each)`);
  log(`  answered as expected ${tally.ok}, failed ${tally.failed} in ${fmt(performance.now() - started)} ms; latency p50 ${fmt(pct(tally.latencies, 50), 1)} ms, p99 ${fmt(pct(tally.latencies, 99), 1)} ms${tally.firstFailure ? `; first failure: ${tally.firstFailure}` : ''}`);
  log(`  RSS after reviews:                           ${fmt(afterReviews.rssMiB, 1)} MiB`);
  log(`  peak RSS (VmHWM) ${peakReset ? 'during the reviews:          ' : 'since start:                 '} ${fmt(afterReviews.peakMiB, 1)} MiB; since start: ${fmt(Math.max(after.peakMiB, afterReviews.peakMiB), 1)} MiB`);

  if (flags.relist) {
    // Every watch ends with a 410 Expired ERROR event: each kind lists everything again.
    for (const ep of endpoints) await ep.refresh();
    const before = await cluster.stats();
    const resetAgain = resetPeak(pid);
    const rssBefore = memory(pid)!.rssMiB;
    const t1 = performance.now();
    const relistRss = sampler(pid, t1);
    const during: ReviewTally = { ok: 0, failed: 0, latencies: [] };
    let relisting = true;
    const refresher = setInterval(() => void Promise.all(endpoints.map((e) => e.refresh())).catch(() => {}), 30_000);
    await cluster.expire();
    const reviewing = sendReviews(deed, endpoints, during, () => relisting, 2);
    const watchedAgain = async () => {
      const s = await cluster.stats();
      return expected.every((r) => (s.byResource[r]?.watches ?? 0) > (before.byResource[r]?.watches ?? 0));
    };
    const relist = await untilCurrent(deed, t1, watchedAgain);
    relisting = false;
    await reviewing;
    clearInterval(refresher);
    relistRss.stop();
    const afterRelist = memory(pid)!;
    const s = await cluster.stats();
    const maxRelist = relistRss.samples.reduce((a, b) => (b.rss > a.rss ? b : a), { t: NaN, rss: 0 });
    log(`\n[${label}] relist: every watch ended with 410 Expired, reviews sent 2 at a time throughout`);
    log(`  every kind current again (listed and watching): ${fmt(relist.ms)} ms after the 410s`);
    log(`  peak RSS (VmHWM) ${resetAgain ? 'across the relist:' : 'since start:      '}            ${fmt(afterRelist.peakMiB, 1)} MiB (RSS before ${fmt(rssBefore, 1)} MiB, highest sample ${fmt(maxRelist.rss, 1)} MiB at ${fmt(maxRelist.t)} ms, after ${fmt(afterRelist.rssMiB, 1)} MiB)`);
    const hm = await scrape(deed).catch(() => new Map<string, number>());
    log(`  heap after the relist:                       ${heapFigures(hm)}`);
    log(`  RSS during the relist (ms:MiB):              ${sampled(relistRss.samples)}`);
    log(`  reviews during the relist: answered as expected ${during.ok}, failed ${during.failed}; latency p50 ${fmt(pct(during.latencies, 50), 1)} ms, p99 ${fmt(pct(during.latencies, 99), 1)} ms, max ${fmt(Math.max(...during.latencies), 1)} ms${during.firstFailure ? `; first failure: ${during.firstFailure}` : ''}`);
    log(`  stand-in API server for the relist:         ${s.listPages - before.listPages} list pages, ${fmt((s.listBytes - before.listBytes) / MiB, 1)} MiB; ${s.gets - before.gets} gets (lookups read live while not current); ${s.watchesExpired - before.watchesExpired} watches ended by 410`);
  }

  await deed.stop();
  await cluster.close();
  return figures;
}

async function main(): Promise<void> {
  log(`Deed scale benchmark  ${new Date().toISOString()}  node ${process.version}  entry=${entry}`);
  const quoted = process.argv.slice(2).map((a) => (/[\s"'$]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a));
  log(`command: npm run bench:scale -- ${quoted.join(' ')}`.trimEnd());
  log(`load average (1, 5, 15 min) at the start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const mix = objectMix(N, K);
  log(`object mix (${N} objects in ${K} opted-in namespaces, plus deed-system unlabelled): ${Object.entries(mix).map(([r, n]) => `${r} ${n}`).join(', ')}`);
  log(`  a run: 1 pod (whole, ~4 KB), 2 Secrets, 1 ConfigMap, 1 claim; workloads 0.2 per pod; 3 service accounts per namespace; all as metadata but pods`);
  log(`  stamps signed with the attestation key in deed's --cert-dir: ${flags.unsigned ? 'no (--unsigned)' : 'yes'}`);
  log(`  claims: ${flags['pending-clones'] ? 'each a clone not yet provisioned, of a source with a 253-character name (--pending-clones)' : 'bound to a volume'}`);
  if (entry === 'dist' && !flags['no-build']) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });

  const { dir, certDir, policy } = benchDir();
  // Deed's generated attestation key, written before its first start: the objects are signed with it.
  mkdirSync(certDir, { recursive: true });
  const keyFile = join(certDir, 'attestation.key');
  if (!existsSync(keyFile)) writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  // A first, untimed start generates the serving certificates, as bench/run.ts's does.
  await (await startDeed({ entry, certDir, policy, nodeArgs })).stop();
  const at = { dir, certDir, policy, keyFile };

  let baseline = flags['baseline-mib'] !== undefined ? Number(flags['baseline-mib']) : undefined;
  if (baseline === undefined && N > 0) {
    const b = await measure(at, 0, 'baseline, 0 objects', false);
    baseline = b.rssAfterFill;
  }
  const f = await measure(at, N, `${N} objects`, true);
  log('\nsummary');
  log(`  RSS after fill ${fmt(f.rssAfterFill, 1)} MiB, peak ${fmt(f.peakAfterFill, 1)} MiB; current ${fmt(f.currentMs)} ms after spawn`);
  if (f.kept > 0 && baseline !== undefined)
    log(`  memory per 10,000 cached objects: ${fmt(((f.rssAfterFill - baseline) / f.kept) * 10_000, 1)} MiB of RSS ((${fmt(f.rssAfterFill, 1)} - ${fmt(baseline, 1)} MiB with 0 objects${flags['baseline-mib'] !== undefined ? ', --baseline-mib' : ''}) / ${f.kept} objects kept x 10,000${f.kept === N ? '' : `; ${N} served`})`);
  log(`load average (1, 5, 15 min) at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

await main();
