// The processes a benchmark drives: `deed serve` as an operator runs it (compiled, one
// child process), and the no-op baseline server. Both print their URL on stdout.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { getPlain } from '../test/serve-process.js';

export const ROOT = join(import.meta.dirname, '..');

/** A replacement of one line of compiled code: `from` must occur exactly once. */
export type Edit = [from: string, to: string];

/**
 * A copy of this checkout's build in `dir` (dist/, bin/, package.json, node_modules linked)
 * with lines of its compiled files replaced, for benches that measure a variant of the build
 * (bench/ceilings.ts, bench/stages.ts). A line not found once is an error naming `bench`, not
 * a silent measurement of something else; the shipped code is untouched.
 */
export function editedBuild(dir: string, edits: Record<string, Edit[]>, bench: string): void {
  for (const part of ['dist', 'bin', 'package.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  for (const [file, replacements] of Object.entries(edits)) {
    let text = readFileSync(join(ROOT, file), 'utf8');
    for (const [from, to] of replacements) {
      const at = text.split(from).length - 1;
      if (at !== 1) throw new Error(`the line to replace occurs ${at} times in ${file} (the code changed; update ${bench}): ${from}`);
      text = text.replace(from, to);
    }
    writeFileSync(join(dir, file), text);
  }
}

/** The fixtures' policy: the runner service account acts for `alpha`, so the pod review is stamped. */
export const BENCH_POLICY = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
};

export interface Served {
  child: ChildProcess;
  url: string;
  port: number;
  ca: string;
  /** Milliseconds from spawn to the first readyz 200 (Deed only). */
  readyMs?: number;
  /** Where Deed's log lines went (Deed only). */
  logFile?: string;
  stop(): Promise<number | null>;
}

function waitForLine(child: ChildProcess, match: (line: string) => string | undefined, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const seen: string[] = [];
    const timer = setTimeout(() => reject(new Error(`${what} did not start:\n${seen.join('\n')}`)), 30_000);
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        seen.push(line);
        const found = match(line);
        if (found !== undefined) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          child.stdout!.resume(); // keep draining: a full pipe would block the server's logging
          resolve(found);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => seen.push(c.toString('utf8')));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${seen.join('\n')}`));
    });
  });
}

// Every server this process starts dies with it, even when a script fails half-way.
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function stopper(child: ChildProcess): () => Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
}

export function getStatus(port: number, ca: string, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', servername: 'localhost', port, path, ca, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** A fresh directory with the bench policy and generated certificates (by a first, untimed start). */
export function benchDir(): { dir: string; certDir: string; policy: string } {
  const dir = mkdtempSync(join(tmpdir(), 'deed-bench-'));
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, stringify(BENCH_POLICY));
  return { dir, certDir: join(dir, 'certs'), policy };
}

export interface DeedOptions {
  /** Run the compiled CLI (dist/, as a container does) or the TypeScript source through tsx. */
  entry: 'dist' | 'tsx';
  /** The checkout to run (bench/compare.ts runs other builds); this one otherwise. */
  root?: string;
  certDir: string;
  policy: string;
  port?: number;
  nodeArgs?: string[];
  extraArgs?: string[];
  /** The CA that signed the serving certificate; the generated one in certDir otherwise. */
  caFile?: string;
  /** Probes on a plain-HTTP port of their own (--metrics-port), as --client-ca needs: readiness is polled there. */
  metricsPort?: number;
}

/** A port free right now: Deed's log then goes to a file, so it cannot announce one. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts `deed serve` and times spawn → readyz 200 by polling every 5 ms. Its log goes to
 * a file, as a container runtime takes stdout: a pipe read by this busy process would
 * make Deed buffer log lines (pino retries a full pipe after 100 ms) and skew RSS and latency.
 */
export async function startDeed(o: DeedOptions): Promise<Served> {
  const root = o.root ?? ROOT;
  const script = o.entry === 'dist' ? [join(root, 'bin/deed.js')] : ['--import', 'tsx', join(root, 'src/cli/main.ts')];
  const port = o.port ?? (await freePort());
  const logFile = join(o.certDir, '..', `deed-${port}.log`);
  mkdirSync(o.certDir, { recursive: true });
  const out = openSync(logFile, 'a');
  const started = performance.now();
  const child = track(spawn(
    process.execPath,
    [...(o.nodeArgs ?? []), ...script, 'serve', '--port', String(port), '--cert-dir', o.certDir, '--config', o.policy, ...(o.metricsPort !== undefined ? ['--metrics-port', String(o.metricsPort)] : []), ...(o.extraArgs ?? [])],
    // MALLOC_ARENA_MAX as the image sets it (Dockerfile), unless the caller's environment says otherwise.
    { cwd: ROOT, stdio: ['ignore', out, out], env: { MALLOC_ARENA_MAX: '2', ...process.env, DEED_LOG_LEVEL: process.env.DEED_LOG_LEVEL ?? 'info' } },
  ));
  closeSync(out);
  const early = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`deed serve exited with ${code}:\n${readFileSync(logFile, 'utf8')}`))));
  early.catch(() => {});
  const ready = (async () => {
    const caFile = o.caFile ?? join(o.certDir, 'ca.crt');
    while (child.exitCode === null) {
      const ca = existsSync(caFile) ? readFileSync(caFile, 'utf8') : undefined;
      const status = o.metricsPort !== undefined ? await getPlain(o.metricsPort, '/readyz').then((a) => a.status, () => 0) : ca !== undefined ? await getStatus(port, ca, '/readyz') : 0;
      if (ca !== undefined && status === 200) return ca;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('deed serve exited');
  })();
  const ca = await Promise.race([ready, early]);
  const readyMs = performance.now() - started;
  return { child, url: `https://127.0.0.1:${port}`, port, ca, readyMs, logFile, stop: stopper(child) };
}

/** Starts the no-op baseline with the same certificate and TLS settings (`args`: bench/noop-server.ts's flags). */
export async function startNoop(certDir: string, args: string[] = []): Promise<Served> {
  const child = track(spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/noop-server.ts'), certDir, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }));
  const url = await waitForLine(child, (line) => (line.startsWith('https://') ? line.trim() : undefined), 'the no-op server');
  return { child, url, port: Number(new URL(url).port), ca: readFileSync(join(certDir, 'ca.crt'), 'utf8'), stop: stopper(child) };
}

/** Resident set size now and at its peak (VmHWM), in MiB, from /proc. */
export function memory(pid: number): { rssMiB: number; peakMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Runs a load and measures the server's CPU time per answered review (µs, all threads) meanwhile. */
export async function withCpuPerReview<T extends { ok: number }>(pid: number, load: () => Promise<T>): Promise<{ result: T; cpuUsPerReview: number }> {
  const before = cpuMs(pid);
  const result = await load();
  return { result, cpuUsPerReview: ((cpuMs(pid) - before) * 1000) / (result.ok || 1) };
}

/**
 * Resets the process's peak RSS (VmHWM) to its current RSS (`5` to /proc/PID/clear_refs),
 * so a later peak belongs to what ran in between. False where the kernel refuses.
 */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU time (user + system, all threads) the process has used so far, in milliseconds. */
export function cpuMs(pid: number): number {
  try {
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100 on Linux)
  } catch {
    return NaN;
  }
}
