// Load generators: autocannon for HTTP/1.1 (keep-alive), h2load for HTTP/2. Latencies are
// kept per response at sub-millisecond resolution (autocannon's own histogram rounds to
// whole milliseconds, too coarse against a 5 ms target).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon, { type Instance, type Result } from 'autocannon';

export interface LoadOptions {
  url: string;
  ca: string;
  body: string;
  connections: number;
  duration?: number;
  amount?: number;
  overallRate?: number;
  /** A complete answer: counted in `mismatches` when false. */
  verify?: (body: string) => boolean;
  /** Called with the running instance, e.g. to inject a fault mid-run. */
  onStart?: (instance: Instance) => void;
}

export interface LoadResult {
  sent: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  durationS: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  raw: Result;
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The median of a list (the mean of the two middle values when it has an even length). */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function cannon(o: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let times = new Float64Array(1 << 16);
    let n = 0;
    const instance = autocannon(
      {
        url: o.url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: o.body,
        connections: o.connections,
        pipelining: 1,
        timeout: 10, // seconds: the API server's default webhook timeout
        ...(o.amount !== undefined ? { amount: o.amount } : { duration: o.duration ?? 10 }),
        ...(o.overallRate !== undefined ? { overallRate: o.overallRate } : {}),
        servername: 'localhost',
        tlsOptions: { ca: o.ca },
        ...(o.verify ? { verifyBody: o.verify } : {}),
      },
      (err, raw) => {
        if (err) return reject(err);
        const sorted = times.subarray(0, n).sort();
        const codes = Object.entries(raw.statusCodeStats ?? {}).reduce((sum, [, v]) => sum + v.count, 0);
        resolve({
          sent: codes + raw.errors,
          ok: raw['2xx'],
          non2xx: raw.non2xx,
          errors: raw.errors,
          timeouts: raw.timeouts,
          mismatches: raw.mismatches,
          durationS: raw.duration,
          perSecond: raw['2xx'] / raw.duration,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          max: percentile(sorted, 100),
          raw,
        });
      },
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status < 200 || status > 299) return;
      if (n === times.length) {
        const grown = new Float64Array(times.length * 2);
        grown.set(times);
        times = grown;
      }
      times[n++] = ms;
    });
    o.onStart?.(instance);
  });
}

export interface H2Result {
  perSecond: number;
  meanMs: number;
  maxMs: number;
  ok: number;
  failed: number;
  line: string;
}

/** Runs h2load (nghttp2-client) when installed: `amount` requests over `clients` connections, `streams` concurrent streams each. */
export function h2load(url: string, body: string, amount: number, clients: number, streams: number): H2Result | undefined {
  const probe = spawnSync('h2load', ['--version'], { encoding: 'utf8' });
  if (probe.error) return undefined;
  const file = join(tmpdir(), `deed-bench-body-${process.pid}.json`);
  writeFileSync(file, body);
  const out = spawnSync('h2load', ['-n', String(amount), '-c', String(clients), '-m', String(streams), '-d', file, '-H', 'content-type: application/json', url], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  const text = `${out.stdout}${out.stderr}`;
  const rps = /finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(text);
  const req = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed/.exec(text);
  const time = /time for request:\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)/.exec(text);
  if (!rps || !req || !time) throw new Error(`cannot read h2load output:\n${text}`);
  const ms = (v: string, unit: string) => Number(v) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);
  const status = /status codes: (\d+) 2xx/.exec(text);
  return {
    perSecond: Number(rps[1]),
    meanMs: ms(time[5]!, time[6]!),
    maxMs: ms(time[3]!, time[4]!),
    ok: Number(status?.[1] ?? 0),
    failed: Number(req[2]),
    line: `h2load -n ${amount} -c ${clients} -m ${streams} -d BODY -H 'content-type: application/json' ${url}`,
  };
}

export interface PacedResult {
  sent: number;
  ok: number;
  bad: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** How late the generator itself sent requests (p99, ms): its own stalls, charged to the server above. */
  sendLagP99: number;
}

/**
 * An open-loop load at a fixed rate: request i is due at start + i/rate and is sent then,
 * whatever earlier requests are doing, over a pool of keep-alive connections. Latency
 * counts from the due time, so a late generator or a queue in the server is charged
 * (no coordinated omission). autocannon's overallRate is not this: each connection
 * sends its per-second quota back to back at the start of every second, so its "fixed
 * rate" measures bursts at saturation.
 */
export function paced(o: {
  url: string;
  ca: string;
  body: string;
  rate: number;
  durationS: number;
  connections: number;
  /** Each answered request: when it was due (performance.now()) and its latency in ms. */
  onAnswer?: (due: number, latencyMs: number) => void;
}): Promise<PacedResult> {
  const target = new URL(o.url);
  const agent = new HttpsAgent({ keepAlive: true, maxSockets: o.connections, ca: o.ca, servername: 'localhost' });
  const total = Math.round(o.rate * o.durationS);
  const intervalMs = 1000 / o.rate;
  const latencies = new Float64Array(total);
  const sendLags = new Float64Array(total);
  let issued = 0;
  let done = 0;
  let ok = 0;
  const start = performance.now();
  return new Promise((resolve) => {
    const finish = () => {
      if (++done < total) return;
      agent.destroy();
      const sorted = latencies.subarray(0, ok).sort();
      const lags = sendLags.sort();
      resolve({ sent: total, ok, bad: total - ok, perSecond: total / ((performance.now() - start) / 1000), p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: percentile(sorted, 100), sendLagP99: percentile(lags, 99) });
    };
    const send = (due: number, i: number) => {
      sendLags[i] = performance.now() - due;
      const req = httpsRequest(
        { agent, host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(o.body) } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) {
              latencies[ok++] = performance.now() - due;
              o.onAnswer?.(due, latencies[ok - 1]!);
            }
            finish();
          });
        },
      );
      req.on('error', finish);
      req.end(o.body);
    };
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1);
      for (; issued < due; issued++) send(start + issued * intervalMs, issued);
      if (issued < total) setTimeout(tick, Math.max(0, start + issued * intervalMs - performance.now()));
    };
    tick();
  });
}
