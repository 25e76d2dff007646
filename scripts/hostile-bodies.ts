// `npm run fault` section 6: request bodies that never end, over HTTP/2, as a tenant pod
// could send them to Deed's Service (scripts/body-flood.ts, in a process of its own, from
// 127.0.0.2), while real reviews go over one HTTP/2 session from 127.0.0.1, as the API
// server's do. Prints Deed's RSS (sampled, and its peak), the flood's outcomes, the
// refusals Deed counted, and how the real reviews fared.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { join } from 'node:path';
import { percentile } from '../bench/load.js';
import { benchDir, memory, resetPeak, ROOT, startDeed } from '../bench/processes.js';
import type { FloodResult } from './body-flood.js';

export interface BodyFloodOptions {
  entry: 'dist' | 'tsx';
  title: string;
  sessions: number;
  streams: number;
  bytes: number;
  seconds: number;
  body: string;
  uid: string;
  extraArgs?: string[];
  /** Each stream declares this content-length, sends `bytes` of it, and stalls (default: no length, a body that never ends). */
  declared?: number;
  /** Where the flood comes from (default one address, 127.0.0.2). */
  addresses?: string[];
  log: (s?: string) => void;
}

const MiB = 1024 * 1024;
/** The Dockerfile's NODE_OPTIONS and ENTRYPOINT flags. */
const IMAGE_NODE_ARGS = ['--max-semi-space-size=2', '--heap-growing-percent=50'];

/** Real reviews over one HTTP/2 session, `rate` a second: latency of each 200, count of the rest by outcome. */
function realReviews(url: string, ca: string, body: string, uid: string, rate: number) {
  const session = connect(url, { ca });
  session.on('error', () => {});
  const latencies: number[] = [];
  const failed: Record<string, number> = {};
  let sent = 0;
  const one = () => {
    sent++;
    const started = performance.now();
    const stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=10s', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    let status = 0;
    let text = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (c: string) => (text += c));
    stream.on('end', () => {
      if (status === 200 && text.includes(uid)) latencies.push(performance.now() - started);
      else failed[`status ${status}`] = (failed[`status ${status}`] ?? 0) + 1;
    });
    stream.on('error', (err: NodeJS.ErrnoException) => void (failed[err.code ?? err.message] = (failed[err.code ?? err.message] ?? 0) + 1));
    stream.end(body);
  };
  const timer = setInterval(one, 1000 / rate);
  return {
    stop: async () => {
      clearInterval(timer);
      await new Promise((r) => setTimeout(r, 2000)); // the last ones answered
      session.destroy();
      const sorted = Float64Array.from(latencies).sort();
      return { sent, ok: latencies.length, failed, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: percentile(sorted, 100) };
    },
  };
}

async function metric(url: string, ca: string, name: string): Promise<string> {
  const session = connect(url, { ca });
  session.on('error', () => {});
  const text = await new Promise<string>((resolve) => {
    const stream = session.request({ ':path': '/metrics' });
    let out = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (out += c));
    stream.on('end', () => resolve(out));
    stream.on('error', () => resolve(out));
    stream.end();
  });
  session.destroy();
  return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? .*$`, 'gm'))].map((m) => m[0]).join('; ');
}

export async function hostileBodies(o: BodyFloodOptions): Promise<void> {
  const { dir, certDir, policy } = benchDir();
  // With the image's memory settings (Dockerfile): what runs in a cluster.
  const deed = await startDeed({ entry: o.entry, certDir, policy, nodeArgs: IMAGE_NODE_ARGS, extraArgs: o.extraArgs ?? [] });
  const pid = deed.child.pid!;
  const { log } = o;
  log(`\n${o.title}`);
  log(`  node ${IMAGE_NODE_ARGS.join(' ')} deed serve ${(o.extraArgs ?? []).join(' ') || '(default limits: --body-budget 48 MiB, a peer half, a connection a third)'}; real reviews at 20/s over one HTTP/2 session from 127.0.0.1`);
  const rssBefore = memory(pid);
  const peakReset = resetPeak(pid);
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(memory(pid)?.rssMiB ?? 0), 250);
  const real = realReviews(deed.url.replace('127.0.0.1', 'localhost'), deed.ca, o.body, o.uid, 20);
  await new Promise((r) => setTimeout(r, 1000));

  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, deed.ca);
  const outFile = join(dir, 'body-flood.json');
  const addresses = o.addresses ?? ['127.0.0.2'];
  const args = [String(deed.port), caFile, String(o.sessions), String(o.streams), String(o.bytes), String(o.seconds), addresses.join(','), outFile, ...(o.declared !== undefined ? [String(o.declared)] : [])];
  const flood = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/body-flood.ts'), ...args], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  await new Promise((resolve) => flood.once('exit', resolve));
  const result = JSON.parse(readFileSync(outFile, 'utf8')) as FloodResult;
  const reviews = await real.stop();
  clearInterval(sampler);
  const rss = memory(pid);
  const refused = await metric(deed.url.replace('127.0.0.1', 'localhost'), deed.ca, 'deed_request_bodies_refused_total');

  const sorted = Float64Array.from(samples).sort();
  const what = o.declared === undefined ? `sending ${(o.bytes / MiB).toFixed(1)} MiB and never ending` : `declaring ${(o.declared / MiB).toFixed(1)} MiB, sending ${(o.bytes / MiB).toFixed(1)} MiB of it, then stalling`;
  log(`  flood: ${o.sessions} HTTP/2 session(s) from ${addresses.join(' and ')} x ${o.streams} streams, each ${what}, for ${o.seconds} s (a stream answered or reset is replaced)`);
  log(`    streams opened ${result.streamsOpened}; body bytes the server let through ${(result.bytesSent / MiB).toFixed(0)} MiB; sessions the server ended ${result.sessionsEnded}`);
  for (const [outcome, n] of Object.entries(result.outcomes).sort((a, b) => b[1] - a[1])) log(`    ${String(n).padStart(7)}  ${outcome}`);
  log(`  deed: ${refused}`);
  log(`  deed RSS before ${rssBefore?.rssMiB.toFixed(1)} MiB; during the flood (every 250 ms) median ${percentile(sorted, 50).toFixed(1)} MiB, max ${percentile(sorted, 100).toFixed(1)} MiB; peak ${peakReset ? `(VmHWM, reset before the flood) ${rss?.peakMiB.toFixed(1)} MiB` : '(VmHWM not resettable here)'}; after ${rss?.rssMiB.toFixed(1)} MiB; the chart's limit is 256 MiB`);
  log(`  real reviews: ${reviews.sent} sent, ${reviews.ok} answered 200 with the review (p50 ${reviews.p50.toFixed(1)} ms, p99 ${reviews.p99.toFixed(1)} ms, max ${reviews.max.toFixed(1)} ms); not: ${JSON.stringify(reviews.failed)}`);
  await deed.stop();
}
