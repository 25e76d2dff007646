// Many small HTTP/2 requests held open at once: each connection may carry 100 streams and each
// peer 100 connections, so one address keeps 10,000 requests in flight, and the body budget
// (bytes) counts next to nothing for them. Mode `scope`: complete forged reviews for a
// namespace not opted in (each waits 1 s for the namespace watch), sent again as answered.
// Mode `stall`: a few bytes of a body, then nothing (each lasts the 2 s body deadline).
// Prints the peak RSS of `deed serve` and the latency of an ordinary review meanwhile.
// Reviewer 83's scripts/rev83/h2-streams.ts. Prints figures; asserts nothing.
// Usage: [DEED_CPU=0 taskset -c 1] npx tsx bench/hostile-streams.ts [scope|stall] [peers=2] [sessionsPerPeer=100] [seconds=15]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type ClientHttp2Session, type SecureClientSessionOptions } from 'node:http2';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { FakeApiServer } from '../test/fake-apiserver.js';
import { FIXTURE_POLICY } from '../test/helpers.js';

const mode = (process.argv[2] ?? 'scope') as 'scope' | 'stall';
const peers = Number(process.argv[3] ?? 2);
const sessionsPerPeer = Number(process.argv[4] ?? 100);
const seconds = Number(process.argv[5] ?? 15);
const ROOT = join(import.meta.dirname, '..');
const api = await new FakeApiServer().start();
const dir = mkdtempSync(join(tmpdir(), 'rev83-'));
api.writeKubeConfig(join(dir, 'kubeconfig'));
writeFileSync(join(dir, 'policy.yaml'), stringify(FIXTURE_POLICY));
const main = existsSync(join(ROOT, 'dist/cli/main.js')) ? [join(ROOT, 'dist/cli/main.js')] : ['--import', 'tsx', join(ROOT, 'src/cli/main.ts')];
// DEED_CPU=0: deed serve pinned to that CPU (run this script with `taskset -c 1`), so the load generator does not take its CPU.
const pin = process.env.DEED_CPU !== undefined ? ['-c', process.env.DEED_CPU, process.execPath] : [];
const child = spawn(pin.length > 0 ? 'taskset' : process.execPath, [...pin, '--max-semi-space-size=2', '--heap-growing-percent=50', ...main, 'serve', '--port', '0', '--cert-dir', join(dir, 'certs'), '--config', join(dir, 'policy.yaml'), '--kubeconfig', join(dir, 'kubeconfig'), '--deed-namespace', 'deed', '--host', '0.0.0.0'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, DEED_LOG_LEVEL: 'warn' } });
let err = '';
const port = await new Promise<number>((resolve) => child.stderr!.on('data', (c: Buffer) => { err += c; const m = /serving https:\/\/[^:]+:(\d+)/.exec(err); if (m) resolve(Number(m[1])); if (err.length > 1e5) err = err.slice(-1e4); }));
await new Promise((r) => setTimeout(r, 2000));
const deedPid = () => child.pid; // taskset execs node in place
const status = () => readFileSync(`/proc/${deedPid()}/status`, 'utf8');
const mib = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status())![1]) / 1024;
console.log(`deed serve pid ${child.pid}, idle RSS ${mib('VmRSS').toFixed(0)} MiB; mode ${mode}, ${peers} peers x ${sessionsPerPeer} HTTP/2 sessions x 100 streams`);

const forged = fixtureBody();
function fixtureBody(): Buffer {
  const r = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/admission/validate-create-secret-by-runner.json'), 'utf8'));
  r.request.namespace = 'plain';
  return Buffer.from(JSON.stringify(r));
}
const ordinary = Buffer.from(readFileSync(join(ROOT, 'test/fixtures/admission/validate-create-secret-by-runner.json')));
let stop = false;
const counts = new Map<string, number>();
const count = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
function stream(session: ClientHttp2Session): Promise<void> {
  return new Promise((resolve) => {
    if (session.destroyed || session.closed) return resolve();
    let s;
    try {
      s = session.request({ ':method': 'POST', ':path': '/validate?timeout=30s', 'content-type': 'application/json', ...(mode === 'scope' ? { 'content-length': String(forged.length) } : {}) });
    } catch { return resolve(); }
    s.on('response', (h) => count(String(h[':status'])));
    s.on('error', () => count('reset'));
    s.on('close', () => resolve());
    s.resume();
    if (mode === 'scope') s.end(forged);
    else s.write('{"apiVersion":');
  });
}
async function sessionLoop(localAddress: string) {
  while (!stop) {
    const session = connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, localAddress, peerMaxConcurrentStreams: 100 } as SecureClientSessionOptions);
    session.on('error', () => {});
    await new Promise<void>((resolve) => { session.once('connect', () => resolve()); session.once('close', () => resolve()); });
    const workers = Array.from({ length: 100 }, async () => { while (!stop && !session.closed && !session.destroyed) await stream(session); });
    await Promise.all(workers);
    session.destroy();
    count('session ended');
  }
}
const loops: Promise<void>[] = [];
for (let p = 0; p < peers; p++) for (let s = 0; s < sessionsPerPeer; s++) loops.push(sessionLoop(`127.0.0.${p + 2}`));

const agent = new Agent({ keepAlive: true, rejectUnauthorized: false });
const lat: number[] = [];
const answers = new Map<string, number>();
async function probe() {
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/validate?timeout=10s', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': ordinary.length }, timeout: 15000 }, (res) => {
      answers.set(String(res.statusCode), (answers.get(String(res.statusCode)) ?? 0) + 1);
      res.resume().once('end', () => resolve());
    });
    req.once('error', (e) => { answers.set(e.message.slice(0, 30), (answers.get(e.message.slice(0, 30)) ?? 0) + 1); resolve(); });
    req.end(ordinary);
  });
  lat.push(performance.now() - t0);
}
const start = Date.now();
const timer = setInterval(() => {
  if (child.exitCode !== null || child.signalCode !== null) console.log(`DEED EXITED ${child.exitCode ?? child.signalCode}`);
  else console.log(`t=${((Date.now() - start) / 1000).toFixed(0)}s RSS ${mib('VmRSS').toFixed(0)} MiB, peak ${mib('VmHWM').toFixed(0)} MiB; forged answers ${JSON.stringify(Object.fromEntries(counts))}`);
}, 2000);
const probes: Promise<void>[] = [];
while (Date.now() - start < seconds * 1000) { probes.push(probe()); await new Promise((r) => setTimeout(r, 500)); }
stop = true;
clearInterval(timer);
await Promise.race([Promise.all(probes), new Promise((r) => setTimeout(r, 15000))]);
lat.sort((a, b) => a - b);
console.log(`peak RSS ${child.exitCode === null ? mib('VmHWM').toFixed(0) : '?'} MiB; ordinary reviews ${lat.length}: p50 ${lat[Math.floor(lat.length / 2)]?.toFixed(0)} ms, max ${lat.at(-1)?.toFixed(0)} ms, answers ${JSON.stringify(Object.fromEntries(answers))}`);
child.kill('SIGKILL');
await api.close();
process.exit(0);
