// The processes a benchmark drives: `deed serve` as an operator runs it (compiled, one
// child process), and the no-op baseline server. Both print their URL on stdout.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

export const ROOT = join(import.meta.dirname, '..');

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
  certDir: string;
  policy: string;
  port?: number;
  nodeArgs?: string[];
  extraArgs?: string[];
  /** The CA that signed the serving certificate; the generated one in certDir otherwise. */
  caFile?: string;
}

/** Starts `deed serve` and times spawn → readyz 200 by polling every 5 ms. */
export async function startDeed(o: DeedOptions): Promise<Served> {
  const script = o.entry === 'dist' ? [join(ROOT, 'bin/deed.js')] : ['--import', 'tsx', join(ROOT, 'src/cli/main.ts')];
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...(o.nodeArgs ?? []), ...script, 'serve', '--port', String(o.port ?? 0), '--cert-dir', o.certDir, '--config', o.policy, ...(o.extraArgs ?? [])],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEED_LOG_LEVEL: process.env.DEED_LOG_LEVEL ?? 'info' } },
  );
  const url = await waitForLine(child, (line) => {
    try {
      const parsed = JSON.parse(line) as { msg?: string; url?: string };
      return parsed.msg === 'deed is serving' ? parsed.url : undefined;
    } catch {
      return undefined;
    }
  }, 'deed serve');
  const port = Number(new URL(url).port);
  const ca = readFileSync(o.caFile ?? join(o.certDir, 'ca.crt'), 'utf8');
  while ((await getStatus(port, ca, '/readyz')) !== 200) await new Promise((r) => setTimeout(r, 5));
  const readyMs = performance.now() - started;
  return { child, url, port, ca, readyMs, stop: stopper(child) };
}

/** Starts the no-op baseline with the same certificate and TLS settings. */
export async function startNoop(certDir: string): Promise<Served> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/noop-server.ts'), certDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
