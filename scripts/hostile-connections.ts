// `npm run fault` section 5: connections that never finish, as a tenant pod could open
// them against Deed's Service (scripts/hostile-flood.ts, in a process of its own), while
// real reviews are paced over a connection opened before, as the API server's is. For
// each kind it prints how many the server refused at once (the bound), how many it held
// and when it closed them, and how many were still open at the end; with Deed's peak RSS
// and the p99 of real reviews before the flood, while it opens, and while it hangs.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { paced, percentile, type PacedResult } from '../bench/load.js';
import { benchDir, memory, resetPeak, ROOT, startDeed } from '../bench/processes.js';
import { split, type Conn, type Kind } from './hostile-flood.js';

type Record_ = Omit<Conn, 'destroy'>;

const fmtS = (ms: number | undefined) => (ms !== undefined && Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '-');
const fmtMs = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(1)} ms` : '-');

const DEADLINES: Record<Kind, string> = {
  'partial header (TLS, HTTP/1.1)': 'headers, 10 s after the handshake',
  'no TLS (TCP only)': 'handshake, 10 s',
  'HTTP/2 stream left open': 'request, 30 s after the stream opened',
};

function report(conns: Record_[], log: (s?: string) => void): void {
  for (const [kind] of split(conns.length)) {
    const of = conns.filter((c) => c.kind === kind);
    // "At once": closed within a second of the connection coming up, far below any deadline.
    const refused = of.filter((c) => c.refused || (c.closedAt !== undefined && c.closedAt - c.openedAt! < 1000));
    const held = of.filter((c) => !refused.includes(c));
    const closed = held.filter((c) => c.closedAt !== undefined);
    const lifetimes = Float64Array.from(closed.map((c) => c.closedAt! - c.openedAt!)).sort();
    log(`  ${kind}: ${of.length} opened`);
    log(`    refused at once (at the bound)        ${refused.length}`);
    log(`    held, then closed by the server       ${closed.length}   after ${fmtS(lifetimes[0])} min, ${fmtS(percentile(lifetimes, 50))} median, ${fmtS(percentile(lifetimes, 100))} max (deadline: ${DEADLINES[kind]})`);
    log(`    still open at the end                 ${held.length - closed.length}`);
  }
}

function latencyLine(label: string, samples: number[]): string {
  const sorted = Float64Array.from(samples).sort();
  return `  ${label.padEnd(48)} ${String(sorted.length).padStart(5)} answered 200   p50 ${fmtMs(percentile(sorted, 50))}, p99 ${fmtMs(percentile(sorted, 99))}, max ${fmtMs(percentile(sorted, 100))}`;
}

export interface HostileOptions {
  entry: 'dist' | 'tsx';
  connections: number;
  /** Extra `deed serve` flags (e.g. a higher --max-connections). */
  extraArgs: string[];
  title: string;
  body: string;
  /** How long to watch after the flood is open, in seconds. */
  watchS: number;
  log: (s?: string) => void;
}

export async function hostileConnections(o: HostileOptions): Promise<void> {
  const { dir, certDir, policy } = benchDir();
  const deed = await startDeed({ entry: o.entry, certDir, policy, extraArgs: o.extraArgs });
  const pid = deed.child.pid!;
  const { log } = o;
  log(`\n${o.title}`);
  log(`  deed serve ${o.extraArgs.join(' ') || '(default limits)'}; real reviews paced at 50/s over one keep-alive connection opened before the flood`);
  const url = `${deed.url}/mutate?timeout=10s`;
  const before: number[] = [];
  await paced({ url, ca: deed.ca, body: o.body, rate: 50, durationS: 5, connections: 1, onAnswer: (_due, ms) => before.push(ms) });
  const rssBefore = memory(pid);
  const peakReset = resetPeak(pid);
  let rssPeakSampled = 0;
  const sampler = setInterval(() => (rssPeakSampled = Math.max(rssPeakSampled, memory(pid)?.rssMiB ?? 0)), 250);

  // Real reviews all along; one connection, so the generator never opens another mid-flood.
  const answers: Array<[number, number]> = [];
  const realLoad = paced({ url, ca: deed.ca, body: o.body, rate: 50, durationS: o.watchS + 20, connections: 1, onAnswer: (due, ms) => answers.push([performance.timeOrigin + due, ms]) });
  await new Promise((r) => setTimeout(r, 1000));
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, deed.ca);
  const outFile = join(dir, 'flood.json');
  const flood = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/hostile-flood.ts'), String(deed.port), caFile, String(o.connections), String(o.watchS), outFile], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  await new Promise((resolve) => flood.once('exit', resolve));
  const result = JSON.parse(readFileSync(outFile, 'utf8')) as { startedAt: number; openedIn: number; watched: number; conns: Record_[] };
  clearInterval(sampler);
  const rss = memory(pid);
  const real: PacedResult = await realLoad;

  log(`  ${result.conns.length} hostile connections opened in ${fmtS(result.openedIn)}`);
  report(result.conns, log);
  log(`  (watched until every connection was closed, or ${o.watchS} s after the last one opened: ${fmtS(result.watched)} from the first)`);
  log(`  deed RSS before ${rssBefore?.rssMiB.toFixed(1)} MiB; peak ${peakReset ? '(VmHWM, reset before the flood)' : '(sampled every 250 ms)'} ${(peakReset ? rss?.peakMiB : rssPeakSampled)?.toFixed(1)} MiB; after ${rss?.rssMiB.toFixed(1)} MiB; the chart's limit is 256 MiB`);
  const opened = result.startedAt + result.openedIn;
  const lastClose = result.startedAt + Math.max(...result.conns.map((c) => c.closedAt ?? result.watched));
  log(latencyLine('real reviews before the flood (5 s)', before));
  log(latencyLine(`while it opens (${fmtS(result.openedIn)})`, answers.filter(([t]) => t >= result.startedAt && t < opened).map(([, ms]) => ms)));
  log(latencyLine(`while it hangs, all opened (${fmtS(lastClose - opened)})`, answers.filter(([t]) => t >= opened && t < lastClose).map(([, ms]) => ms)));
  log(`  real reviews not answered 200: ${real.bad} of ${real.sent}`);
  await deed.stop();
}
