// `npx tsx bench/dense-bodies.ts`: forged reviews whose bodies parse to many times their size
// (an array of N MiB of `{}` or of `1`, inside a captured Secret review), sent C at once to
// `deed serve` (the image's Node flags), while an ordinary review is sent every 200 ms.
// Prints each answer's status and time, the ordinary reviews' latencies and Deed's peak RSS.
// A tenant reaches the same through the API server with a ResourceClaim's opaque parameters
// or a custom resource that keeps unknown fields (up to 3 MiB). Prints figures; asserts nothing.
//   npx tsx bench/dense-bodies.ts [--concurrency 6] [--mib 3] [--unit '{}']
import { request } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchArgs } from './args.js';
import { benchDir, memory, ROOT, startDeed } from './processes.js';

const { values: flags } = benchArgs(import.meta.url, { options: { concurrency: { type: 'string', default: '6' }, mib: { type: 'string', default: '3' }, unit: { type: 'string', default: '{}' } } });
const review = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/admission/mutate-create-secret-by-runner.json'), 'utf8')) as { request: { object: Record<string, unknown> } };
const small = JSON.stringify(review);
review.request.object.x = 'X';
const head = JSON.stringify(review);
const n = Math.floor((Number(flags.mib) * 1048576 - head.length) / (flags.unit.length + 1));
const big = head.replace('"x":"X"', `"x":[${Array(n).fill(flags.unit).join(',')}]`);

const { certDir, policy } = benchDir();
const deed = await startDeed({ entry: 'tsx', certDir, policy, nodeArgs: ['--max-semi-space-size=2', '--heap-growing-percent=50'] });
const post = (body: string) =>
  new Promise<{ status: number | string; ms: number; text: string }>((resolve) => {
    const started = Date.now();
    const req = request({ host: '127.0.0.1', port: deed.port, path: '/admit?timeout=10s', method: 'POST', ca: deed.ca, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', (e) => resolve({ status: `error ${e.message}`, ms: Date.now() - started, text: '' }));
    req.end(body);
  });
console.log(`${flags.concurrency} bodies of ${(big.length / 1048576).toFixed(2)} MiB of ${flags.unit}; Deed's RSS before ${memory(deed.child.pid!)?.rssMiB.toFixed(1)} MiB; Node ${process.version}`);
let stop = false;
const latencies: string[] = [];
const ticker = (async () => {
  while (!stop) {
    const r = await post(small);
    latencies.push(`${r.ms}${r.status === 200 ? '' : `!${r.status}`}`);
    await new Promise((r) => setTimeout(r, 200));
  }
})();
await new Promise((r) => setTimeout(r, 500));
const answers = await Promise.all(Array.from({ length: Number(flags.concurrency) }, () => post(big)));
for (const a of answers) console.log(`forged: ${a.status} in ${a.ms} ms ${a.text.slice(0, 100)}`);
await new Promise((r) => setTimeout(r, 1000));
stop = true;
await ticker;
console.log(`ordinary reviews meanwhile (ms): ${latencies.join(' ')}`);
console.log(`Deed's peak RSS ${memory(deed.child.pid!)?.peakMiB.toFixed(1)} MiB`);
await deed.stop();
