// Forged reviews whose parsed form is far larger than what the body budget grants for them,
// held for a second each by the scope wait (a namespace not opted in). Prints the peak RSS of
// `deed serve` (VmHWM) for plain-ASCII bodies and for the same bodies with one non-Latin-1
// character (V8 then keeps the whole string two bytes a character).
// Reviewer 83's scripts/rev83/parsed-hold.ts. Prints figures; asserts nothing.
// Usage: [DEED_CPU=0 taskset -c 1] npx tsx bench/hostile-bodies.ts [ascii|wide] [seconds=15] [namespace=plain] [MiB=8]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { FakeApiServer } from '../test/fake-apiserver.js';
import { FIXTURE_POLICY } from '../test/helpers.js';

const mode = (process.argv[2] ?? 'wide') as 'ascii' | 'wide';
const seconds = Number(process.argv[3] ?? 15);
const namespace = process.argv[4] ?? 'plain';
const ROOT = join(import.meta.dirname, '..');
const api = await new FakeApiServer().start();
const dir = mkdtempSync(join(tmpdir(), 'rev83-'));
api.writeKubeConfig(join(dir, 'kubeconfig'));
writeFileSync(join(dir, 'policy.yaml'), stringify(FIXTURE_POLICY));
// DEED_CPU=0: deed serve pinned to that CPU (run this script with `taskset -c 1`), so the load generator does not take its CPU.
const pin = process.env.DEED_CPU !== undefined ? ['-c', process.env.DEED_CPU, process.execPath] : [];
const child = spawn(pin.length > 0 ? 'taskset' : process.execPath, [...pin, '--max-semi-space-size=2', '--heap-growing-percent=50', ...(existsSync(join(ROOT, 'dist/cli/main.js')) ? [join(ROOT, 'dist/cli/main.js')] : ['--import', 'tsx', join(ROOT, 'src/cli/main.ts')]), 'serve', '--port', '0', '--cert-dir', join(dir, 'certs'), '--config', join(dir, 'policy.yaml'), '--kubeconfig', join(dir, 'kubeconfig'), '--deed-namespace', 'deed', '--host', '0.0.0.0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEED_LOG_LEVEL: 'warn' } });
let out = '';
child.stdout!.resume();
const url = await new Promise<string>((resolve) => child.stderr!.on('data', (c: Buffer) => { out += c; const m = /serving (https:\S+?);/.exec(out); if (m) resolve(m[1]!); if (out.length > 1e6) out = out.slice(-1e5); }));
const port = Number(new URL(url).port);
await new Promise((r) => setTimeout(r, 2000)); // the scope is listed
const deedPid = () => child.pid; // taskset execs node in place
const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${deedPid()}/status`, 'utf8'))![1]) / 1024;
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${deedPid()}/status`, 'utf8'))![1]) / 1024;
console.log(`deed serve (${child.spawnargs.slice(1, 4).join(' ')}) pid ${child.pid}, idle RSS ${rss().toFixed(0)} MiB`);

const SIZE = Number(process.argv[5] ?? 8) * 1024 * 1024 - 4096; // 8 MiB: the body limit
const filler = 'x'.repeat(SIZE - 400) + (mode === 'wide' ? '\u4e2d' : 'y');
// No uid needed: the handler waits on request.namespace before the review is decoded.
const body = Buffer.from(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'forged', namespace, operation: 'CREATE', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, userInfo: { username: 'x' }, object: { metadata: { name: 'x', annotations: { a: filler } } } } }));
console.log(`${mode}: each forged body ${(body.length / 1048576).toFixed(2)} MiB, namespace ${namespace}`);

const codes = new Map<number, number>();
let stop = false;
async function loop(localAddress: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false, localAddress });
  while (!stop) {
    await new Promise<void>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/validate?timeout=30s', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
        codes.set(res.statusCode!, (codes.get(res.statusCode!) ?? 0) + 1);
        res.resume().once('end', () => resolve());
      });
      req.once('error', () => { codes.set(0, (codes.get(0) ?? 0) + 1); setTimeout(resolve, 50); });
      req.end(body);
    });
  }
}
// Two attacking addresses (a peer may hold half the budget), three connections each (a connection a third).
const loops = ['127.0.0.2', '127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3', '127.0.0.3'].map(loop);
const start = Date.now();
const timer = setInterval(() => console.log(`t=${((Date.now() - start) / 1000).toFixed(0)}s RSS ${rss().toFixed(0)} MiB, peak ${hwm().toFixed(0)} MiB, answers ${JSON.stringify(Object.fromEntries(codes))}${child.exitCode !== null ? ' DEED EXITED ' + child.exitCode : ''}`), 2000);
await new Promise((r) => setTimeout(r, seconds * 1000));
stop = true;
clearInterval(timer);
console.log(`${mode}: peak RSS of deed serve ${hwm().toFixed(0)} MiB (chart limit 256 MiB; --body-budget 48 MiB)`);
child.kill('SIGKILL');
await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 3000))]);
await api.close();
process.exit(0);
