// What a review leaves to the old generation: `deed serve` (compiled, the image's flags) under
// a fixed 1,000 reviews/s, with V8's own GC trace (--trace-gc-nvp), prints how fast the old
// generation grows between young collections, what each young collection promotes, and how
// many full collections (mark-compacts) came. A review whose garbage dies young costs a
// young collection a fraction of a millisecond; garbage that reaches the old generation
// brings full collections, each a pause of several milliseconds the latency tail shows.
// Usage: npx tsx bench/gc.ts [--review mutate|validate|admit|label-update] [--seconds 8] [DIR]
//   DIR: a checkout after `npm run build` (default: this one), to compare builds.
// Prints figures; asserts nothing. See docs/performance.md.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { benchArgs } from './args.js';
import { paced } from './load.js';
import { benchDir, ROOT, startDeed } from './processes.js';
import { benchCluster, benchReviews, clusterArgs, REVIEW_NAMES } from './reviews.js';

const { values: flags, positionals } = benchArgs(import.meta.url, {
  allowPositionals: true,
  options: { review: { type: 'string', default: 'mutate' }, seconds: { type: 'string', default: '8' }, rate: { type: 'string', default: '1000' } },
});
const root = resolve(positionals[0] ?? ROOT);
const seconds = Number(flags.seconds);
const rate = Number(flags.rate);

interface Collection {
  kind: string;
  /** Heap objects' size after it, bytes. */
  after: number;
  promoted: number;
}

/** One collection from a --trace-gc-nvp line: Node 20 prints `key=value` pairs, Node 22 and later a JSON object. */
function collectionOf(line: string): Collection | undefined {
  const json = line.indexOf('GC: {');
  if (json >= 0) {
    const o = JSON.parse(line.slice(json + 4)) as { gc: string; end_object_size: number; promoted?: number };
    return { kind: o.gc, after: o.end_object_size, promoted: o.promoted ?? 0 };
  }
  const kind = / gc=(\w+) /.exec(line)?.[1];
  if (kind === undefined) return undefined;
  const num = (key: string) => Number(new RegExp(` ${key}=(\\d+)`).exec(line)?.[1] ?? 0);
  return { kind, after: num('total_size_after'), promoted: num('promoted') };
}

const { dir, certDir, policy } = benchDir();
const cluster = await benchCluster();
const deed = await startDeed({ entry: 'dist', root, certDir, policy, nodeArgs: ['--max-semi-space-size=2', '--heap-growing-percent=50', '--trace-gc-nvp'], extraArgs: clusterArgs(cluster, join(dir, 'kubeconfig')) });
try {
  const review = (await benchReviews(deed, cluster)).find((r) => r.name === flags.review);
  if (review === undefined) throw new Error(`--review must be one of ${REVIEW_NAMES.join(', ')}`);
  const load = () => paced({ url: `${deed.url}${review.path}?timeout=10s`, ca: deed.ca, body: review.body, rate, durationS: seconds, connections: 16 });
  await load(); // warm-up: V8 compiles the hot paths
  const logFile = deed.logFile;
  if (logFile === undefined) throw new Error('deed serve wrote no log file');
  const before = readFileSync(logFile, 'utf8').split('\n').length;
  const result = await load();
  const collections = readFileSync(logFile, 'utf8').split('\n').slice(before).map(collectionOf).filter((c) => c !== undefined);
  const young = collections.filter((c) => c.kind === 's');
  // The old generation's growth: the heap after each young collection against the one before,
  // over pairs with no other collection between them.
  let growth = 0;
  let pairs = 0;
  let previous: number | undefined;
  for (const c of collections) {
    if (c.kind === 's' && previous !== undefined) {
      growth += c.after - previous;
      pairs++;
    }
    previous = c.kind === 's' ? c.after : undefined;
  }
  const perYoung = pairs > 0 ? growth / pairs : NaN;
  const promoted = young.reduce((sum, c) => sum + c.promoted, 0) / young.length;
  process.stdout.write(
    `gc: ${review.name} at ${review.path}, ${rate} reviews/s for ${seconds} s after as long a warm-up; deed ${root}, node ${process.version}, --max-semi-space-size=2 --heap-growing-percent=50\n` +
      `  young collections ${young.length}; full collections ${collections.length - young.length}\n` +
      `  old generation growth per young collection ${(perYoung / 1024).toFixed(0)} KB, ${((perYoung * young.length) / seconds / 1048576).toFixed(2)} MB/s; promoted per young collection ${(promoted / 1024).toFixed(0)} KB\n` +
      `  latency p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, answered ${result.ok} of ${result.sent}\n`,
  );
} finally {
  await deed.stop();
  await cluster.close();
}
