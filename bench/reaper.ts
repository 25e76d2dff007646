// `npm run bench:reaper`: the reaper at scale in the end-to-end control plane (etcd and
// kube-apiserver from KUBEBUILDER_ASSETS, the real `deed serve` as its webhooks; no garbage
// collector, so only the reaper deletes). Builds N stamped Secrets of alpha in sandbox-a,
// half owned by live runners and half by runners that are gone, sweeps them dry and then
// with --apply, and beside it deletes M more orphans with a plain client (16 in flight, the
// same identity, the same UID preconditions, the same webhooks). Every object names its
// run's Lease (`--no-leases` for none): a live runner's run holds a fresh Lease, a gone
// runner's Lease is gone, so the sweep lists Leases too. Prints peak RSS, durations,
// deletes per second and the ratio to the plain client; asserts nothing.
//   npm run bench:reaper                         10,000 objects
//   npm run bench:reaper -- --objects 100000
//   npm run bench:reaper -- --entry tsx          the TypeScript source instead of dist/
//   npm run bench:reaper -- --cpu-prof           V8 CPU profiles of each sweep in bench/profiles/
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { benchArgs } from './args.js';
import { assets } from '../test/e2e/control-plane.js';
import { startSuite, readKey, withoutWebhooks, type Suite } from '../test/e2e/suite.js';
import { LEASES, signedLease, signedSecret } from '../test/e2e/objects.js';
import { memory, ROOT } from './processes.js';

const { values: flags } = benchArgs(import.meta.url, {
  options: {
    objects: { type: 'string', default: '10000' },
    baseline: { type: 'string' },
    'per-owner': { type: 'string', default: '250' },
    concurrency: { type: 'string', default: '16' },
    entry: { type: 'string', default: 'dist' },
    'no-build': { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
    'no-leases': { type: 'boolean', default: false },
    // Node flags for the reaper, e.g. --max-semi-space-size=2 (the CronJob's NODE_OPTIONS).
    'node-options': { type: 'string', default: '' },
  },
});
const N = Number(flags.objects);
// The plain client's share: enough deletes for a steady rate, not so many that building them dominates.
const BASELINE = Number(flags.baseline ?? Math.min(Math.max(Math.round(N / 5), 1000), 5000));
const PER_OWNER = Number(flags['per-owner']);
const CONCURRENCY = Number(flags.concurrency);
const CREATE_IN_FLIGHT = 64;
const entry = flags.entry === 'tsx' ? 'tsx' : 'dist';
const log = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const found = assets();
  if ('missing' in found) throw new Error(`${found.missing}: export KUBEBUILDER_ASSETS (test/e2e/README.md)`);
  if (entry === 'dist' && !flags['no-build']) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  log(`Deed reaper benchmark  ${new Date().toISOString()}  node ${process.version}  entry=${entry}  objects=${N}  baseline=${BASELINE}  concurrency=${CONCURRENCY}  leases=${!flags['no-leases']}  node-options=${flags['node-options'] || '(none)'}`);
  const started = Date.now();
  // On a loaded machine `deed serve` can miss the suite's start deadline: try again.
  let s: Suite | undefined;
  for (let attempt = 1; s === undefined; attempt++) {
    try {
      s = await startSuite(found.bin, false);
    } catch (err) {
      if (attempt >= 3) throw err;
      log(`the control plane did not start (${(err as Error).message.split('\n')[0]}); again`);
    }
  }
  try {
    await run(s);
  } finally {
    await s.stop();
  }
  log(`total ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

async function run(s: Suite): Promise<void> {
  const key = readKey(s);
  const http = new Client(s, CREATE_IN_FLIGHT);
  // A namespace of its own for the plain client's orphans, in the review scope like sandbox-a.
  await http.call(s.admin.token, 'POST', '/api/v1/namespaces', { metadata: { name: 'bench-base', labels: { 'deed.dev/sandbox': 'enabled' } } });

  const owners: Array<{ namespace: string; name: string; uid: string }> = [];
  const ownerCount = Math.max(2, Math.ceil(N / PER_OWNER));
  for (let i = 0; i < ownerCount; i++) {
    const name = `bench-runner-${i}`;
    if (i % 2 === 0) {
      const pod = await http.call(s.admin.token, 'POST', '/api/v1/namespaces/sandbox-a/pods', {
        metadata: { name, labels: { app: 'runner' } },
        spec: { serviceAccountName: 'runner', containers: [{ name: 'runner', image: 'registry.example/runner:1' }] },
      });
      owners.push({ namespace: 'sandbox-a', name, uid: (pod as { metadata: { uid: string } }).metadata.uid });
    } else owners.push({ namespace: 'sandbox-a', name, uid: randomUUID() }); // never created: gone
  }
  const gone = { namespace: 'sandbox-a', name: 'bench-runner-gone', uid: randomUUID() };

  const t0 = Date.now();
  const leases = !flags['no-leases'];
  const object = (i: number) => signedSecret(key, { namespace: 'sandbox-a', name: `bench-${i}`, environment: 'alpha', owner: owners[i % ownerCount]!, ...(leases ? { runLease: `bench-run-${i % ownerCount}` } : {}) });
  await withoutWebhooks(s, async () => {
    // Each live runner's run holds a fresh Lease; a gone runner's run Lease is gone with it.
    // Written with Deed's stamps behind the webhooks, as the objects are (the webhook stamps a Lease itself).
    if (leases)
      for (let i = 0; i < ownerCount; i += 2)
        await http.call(s.admin.token, 'POST', LEASES('sandbox-a'), signedLease(key, { namespace: 'sandbox-a', name: `bench-run-${i}`, environment: 'alpha', renewTime: new Date(), durationSeconds: 3600 }));
    await http.each(N, (i) => ['POST', '/api/v1/namespaces/sandbox-a/secrets', object(i)]);
    await http.each(BASELINE, (i) => ['POST', '/api/v1/namespaces/bench-base/secrets', signedSecret(key, { namespace: 'bench-base', name: `base-${i}`, environment: 'alpha', owner: gone })]);
  });
  const orphans = Math.floor(N / 2);
  log(`built ${N} objects (${orphans} orphans, ${ownerCount} runners) and ${BASELINE} baseline orphans in ${((Date.now() - t0) / 1000).toFixed(0)} s (${Math.round((N + BASELINE) / ((Date.now() - t0) / 1000))}/s)`);

  const dry = await sweep(s, false);
  log(`dry run   ${fmt(dry)}`);

  // The plain client: list the baseline orphans, then delete each with its uid, 16 in flight, as the reaper's identity.
  const listed = await http.listAll(s.admin.token, '/api/v1/namespaces/bench-base/secrets');
  const plain = new Client(s, CONCURRENCY);
  const p0 = Date.now();
  const statuses = await plain.each(listed.length, (i) => ['DELETE', `/api/v1/namespaces/bench-base/secrets/${listed[i]!.name}`, { preconditions: { uid: listed[i]!.uid } }], s.reaperA.token);
  const plainSeconds = (Date.now() - p0) / 1000;
  const plainRate = listed.length / plainSeconds;
  log(`plain     ${listed.length} deletes, ${CONCURRENCY} in flight, in ${plainSeconds.toFixed(1)} s: ${plainRate.toFixed(0)} deletes/s (${statuses.retried} answered 429 and retried)`);

  const apply = await sweep(s, true);
  const rate = apply.deleted / apply.seconds;
  log(`apply     ${fmt(apply)}  ${rate.toFixed(0)} deletes/s`);
  log(`ratio     reaper/plain deletes per second: ${(rate / plainRate).toFixed(2)}`);
  const left = (await http.listAll(s.admin.token, '/api/v1/namespaces/sandbox-a/secrets?labelSelector=deed.dev%2Fmanaged%3Dtrue')).filter((o) => o.name.startsWith('bench-')).length;
  log(`check     ${left} bench objects left (expected ${N - orphans}), ${apply.deleted} deleted (expected ${orphans})`);
}

interface SweepFigures {
  seconds: number;
  peakMiB: number;
  judged: number;
  deleted: number;
  errors: number;
  leaseReads: number;
  ownerReads: number;
  code: number | null;
}

function fmt(f: SweepFigures): string {
  return `judged ${f.judged} in ${f.seconds.toFixed(1)} s (${Math.round(f.judged / f.seconds)}/s), deleted ${f.deleted}, errors ${f.errors}, owner reads ${f.ownerReads}, lease reads ${f.leaseReads}, peak RSS ${f.peakMiB.toFixed(0)} MiB, exit ${f.code}`;
}

/** `deed reap` as the CronJob runs it, its output read line by line (never held), its peak RSS sampled from /proc. */
async function sweep(s: Suite, apply: boolean): Promise<SweepFigures> {
  const cli = entry === 'dist' ? [join(ROOT, 'dist/cli/main.js')] : ['--import', 'tsx', join(ROOT, 'src/cli/main.ts')];
  const args = ['reap', '--environment', 'alpha', '--kubeconfig', s.reaperA.kubeconfig!, '--config', s.policyFile, '--namespace', 'sandbox-a', '-o', 'json', '--concurrency', String(CONCURRENCY), ...(apply ? ['--apply'] : [])];
  const started = Date.now();
  const prof = flags['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${join(ROOT, 'bench/profiles')}`] : [];
  const nodeOptions = flags['node-options'].split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeOptions, ...prof, ...cli, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let peakMiB = 0;
  // VmHWM is the peak so far: the last reading before the process exits is its peak.
  const sample = () => (peakMiB = Math.max(peakMiB, memory(child.pid!)?.peakMiB || 0));
  const timer = setInterval(sample, 100);
  let judged = 0;
  let deleted = 0;
  let errors = 0;
  let leaseReads = 0;
  let ownerReads = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    sample();
    const d = JSON.parse(line) as { type: string; outcome?: string; action?: string; errors?: number; leaseReads?: number; ownerReads?: number };
    if (d.type === 'summary') {
      errors = d.errors ?? 0;
      leaseReads = d.leaseReads ?? 0;
      ownerReads = d.ownerReads ?? 0;
    }
    else if (d.action === 'error' || d.outcome === 'failed') process.stderr.write(`${line}\n`);
    if (d.type !== 'summary' && d.action !== 'error') {
      judged++;
      if (d.outcome === 'deleted') deleted++;
    }
  }
  const code = await new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', resolve)));
  clearInterval(timer);
  return { seconds: (Date.now() - started) / 1000, peakMiB, judged, deleted, errors, leaseReads, ownerReads, code };
}

/** Raw API calls over kept-alive connections, `inFlight` at a time; 429s honoured as the reaper does. */
class Client {
  private readonly agent: Agent;
  constructor(
    private readonly s: Suite,
    private readonly inFlight: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: inFlight, ca: s.cp.ca });
  }

  async each(n: number, make: (i: number) => [string, string, unknown], token = this.s.admin.token): Promise<{ retried: number }> {
    let next = 0;
    let retried = 0;
    const worker = async () => {
      while (next < n) {
        const [method, path, body] = make(next++);
        for (;;) {
          const answer = await this.raw(token, method, path, body);
          if (answer.status === 429) {
            retried++;
            await new Promise((r) => setTimeout(r, Number(answer.retryAfter ?? 1) * 1000));
            continue;
          }
          if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
          break;
        }
      }
    };
    await Promise.all(Array.from({ length: this.inFlight }, worker));
    return { retried };
  }

  async call(token: string, method: string, path: string, body?: unknown): Promise<unknown> {
    const answer = await this.raw(token, method, path, body);
    if (answer.status >= 300 && answer.status !== 409) throw new Error(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
    return JSON.parse(answer.text) as unknown;
  }

  async listAll(token: string, path: string): Promise<Array<{ name: string; uid: string }>> {
    const out: Array<{ name: string; uid: string }> = [];
    let next: string | undefined;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const page = (await this.call(token, 'GET', `${path}${sep}limit=500${next ? `&continue=${encodeURIComponent(next)}` : ''}`)) as {
        metadata: { continue?: string };
        items: Array<{ metadata: { name: string; uid: string } }>;
      };
      for (const item of page.items ?? []) out.push({ name: item.metadata.name, uid: item.metadata.uid });
      next = page.metadata.continue || undefined;
    } while (next);
    return out;
  }

  private raw(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string; retryAfter?: string }> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, this.s.cp.server),
        {
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: res.headers['retry-after'] }));
        },
      );
      req.on('error', reject);
      req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
      req.end(payload);
    });
  }
}

await main();
