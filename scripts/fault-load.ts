// `npm run fault`: faults under load against a child `deed serve`. Prints counts; asserts nothing.
//   1. certificate rotation: the serving certificate and key are replaced on disk (write
//      beside, rename over, as a Secret volume update does) twice during an autocannon run,
//      while a second client opens a fresh TLS connection for every review;
//   2. SIGTERM during an autocannon run, with --shutdown-delay: readiness goes 503 first,
//      in-flight reviews finish, the process exits (3 and 4: the same over HTTP/2);
//   5. hostile connections that never finish (scripts/hostile-connections.ts), with the
//      default limits and again with the bound on connections raised past the flood;
//   6. HTTP/2 request bodies that never end (scripts/hostile-bodies.ts): 1 and 3 sessions
//      of 100 streams of 7.9 MiB each, RSS sampled, while real reviews are answered; then
//      (6c, 6d) uploads that declare 8 MiB and stall, from two addresses;
//   7. with --client-ca, reviews on fresh authenticated connections during a flood of
//      connections from another address.
// Every request should get a complete AdmissionReview. Outcomes are counted by kind.
//   npm run fault -- [--duration 12] [--connections 8] [--shutdown-delay 2] [--hostile 5000] [--only hostile|bodies|client-ca] [--no-build]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { connect as connectH2 } from 'node:http2';
import { parseArgs } from 'node:util';
import { generate } from 'selfsigned';
import { generateCertificates } from '../src/server/certificates.js';
import { cannon, type LoadResult } from '../bench/load.js';
import { benchDir, getStatus, ROOT, startDeed, type Served } from '../bench/processes.js';
import { hostileConnections } from './hostile-connections.js';
import { hostileBodies } from './hostile-bodies.js';
import { clientCaFlood } from './client-ca-flood.js';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '12' },
    connections: { type: 'string', default: '8' },
    'shutdown-delay': { type: 'string', default: '2' },
    entry: { type: 'string', default: 'dist' },
    'no-build': { type: 'boolean', default: false },
    hostile: { type: 'string', default: '5000' },
    only: { type: 'string' },
  },
});
const duration = Number(flags.duration);
const connections = Number(flags.connections);
const shutdownDelay = Number(flags['shutdown-delay']);
const entry = flags.entry === 'tsx' ? 'tsx' : 'dist';
const log = (s = ''): void => void process.stdout.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const BODY = readFileSync(join(ROOT, 'test/fixtures/admission/mutate-create-pod-by-runner.json'), 'utf8');
const UID = (JSON.parse(BODY) as { request: { uid: string } }).request.uid;
/** A complete answer: the AdmissionReview envelope and the request's uid, in a body that parses. */
function complete(body: string): boolean {
  try {
    const review = JSON.parse(body) as { apiVersion?: string; kind?: string; response?: { uid?: string } };
    return review.apiVersion === 'admission.k8s.io/v1' && review.kind === 'AdmissionReview' && review.response?.uid === UID;
  } catch {
    return false;
  }
}

interface Tally {
  load: LoadResult;
  errorCodes: Record<string, number>;
  statuses: Record<string, number>;
}

function runLoad(server: Served, ca: string, onStart: () => void): Promise<Tally> {
  const errorCodes: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  return cannon({
    url: `${server.url}/mutate?timeout=10s`,
    ca,
    body: BODY,
    connections,
    duration,
    verify: complete,
    onStart: (instance) => {
      instance.on('reqError', (err: NodeJS.ErrnoException) => {
        const code = err.code ?? err.message;
        errorCodes[code] = (errorCodes[code] ?? 0) + 1;
      });
      instance.on('response', (_c: unknown, status: number) => void (statuses[status] = (statuses[status] ?? 0) + 1));
      onStart();
    },
  }).then((load) => ({ load, errorCodes, statuses }));
}

function print(t: Tally): void {
  const { load } = t;
  const answered = Object.values(t.statuses).reduce((a, b) => a + b, 0);
  log(`  requests sent                       ${load.sent}`);
  log(`  answered                            ${answered}   (by status: ${JSON.stringify(t.statuses)})`);
  log(`  2xx complete AdmissionReview        ${load.ok - countMismatched2xx(load)}`);
  log(`  non-2xx                             ${load.non2xx}`);
  log(`  bodies that were not a complete review  ${load.mismatches}`);
  log(`  errors / resets                     ${load.errors - load.timeouts}   (by code: ${JSON.stringify(t.errorCodes)})`);
  log(`  timeouts (10 s)                     ${load.timeouts}`);
}

function countMismatched2xx(load: LoadResult): number {
  // autocannon counts a 2xx whose body fails verification both as 2xx and as a mismatch.
  return Math.min(load.mismatches, load.ok);
}

/** Reviews on fresh connections (a TLS handshake each), back to back, until stopped. */
function freshConnectionLoop(server: Served, ca: string): { stop(): Promise<{ sent: number; ok: number; failed: Record<string, number> }> } {
  let running = true;
  const tally = { sent: 0, ok: 0, failed: {} as Record<string, number> };
  const one = () =>
    new Promise<void>((resolve) => {
      tally.sent++;
      const req = request({ host: '127.0.0.1', servername: 'localhost', port: server.port, path: '/mutate?timeout=10s', method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode === 200 && complete(Buffer.concat(chunks).toString('utf8'))) tally.ok++;
          else tally.failed[`status ${res.statusCode}`] = (tally.failed[`status ${res.statusCode}`] ?? 0) + 1;
          resolve();
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        tally.failed[err.code ?? err.message] = (tally.failed[err.code ?? err.message] ?? 0) + 1;
        resolve();
      });
      req.end(BODY);
    });
  const loop = (async () => {
    while (running) {
      await one();
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return tally;
    },
  };
}

function fingerprintOf(server: Served, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: server.port, servername: 'localhost', ca }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
      socket.end();
    });
    socket.on('error', reject);
  });
}

/** A new serving certificate from the same CA, as cert-manager renews one. */
async function renew(caDir: string, outDir: string): Promise<{ certFile: string; keyFile: string }> {
  const now = Date.now();
  const leaf = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: readFileSync(join(caDir, 'ca.key'), 'utf8'), cert: readFileSync(join(caDir, 'ca.crt'), 'utf8') },
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'tls.crt'), leaf.cert);
  writeFileSync(join(outDir, 'tls.key'), leaf.private);
  return { certFile: join(outDir, 'tls.crt'), keyFile: join(outDir, 'tls.key') };
}

async function rotation(): Promise<void> {
  const { dir, certDir, policy } = benchDir();
  const first = await generateCertificates(join(dir, 'ca'), ['localhost', '127.0.0.1']);
  const mount = { certFile: join(dir, 'mount', 'tls.crt'), keyFile: join(dir, 'mount', 'tls.key') }; // the files Deed serves
  mkdirSync(join(dir, 'mount'));
  copyFileSync(first.certFile, mount.certFile);
  copyFileSync(first.keyFile, mount.keyFile);
  const next = [await renew(first.dir, join(dir, 'renewed-1')), await renew(first.dir, join(dir, 'renewed-2'))];
  const ca = readFileSync(first.caFile, 'utf8');
  const deed = await startDeed({ entry, certDir, policy, caFile: first.caFile, extraArgs: ['--tls-cert', mount.certFile, '--tls-key', mount.keyFile] });

  log(`\n1. certificate rotation during a ${duration} s autocannon run (${connections} keep-alive connections), plus reviews on fresh connections`);
  const fresh = freshConnectionLoop(deed, ca);
  const served: string[] = [];
  const tally = await runLoad(deed, ca, () => {
    next.forEach((pair, i) =>
      setTimeout(() => {
        copyFileSync(pair.keyFile, `${mount.keyFile}.new`);
        copyFileSync(pair.certFile, `${mount.certFile}.new`);
        renameSync(`${mount.keyFile}.new`, mount.keyFile);
        renameSync(`${mount.certFile}.new`, mount.certFile);
        log(`  t=${(((i + 1) * duration) / 3).toFixed(1)} s: rotated the serving certificate on disk`);
        setTimeout(() => void fingerprintOf(deed, ca).then((f) => served.push(f)), 1000);
      }, ((i + 1) * duration * 1000) / 3),
    );
  });
  const freshTally = await fresh.stop();
  print(tally);
  log(`  fresh-connection reviews: ${freshTally.sent} sent, ${freshTally.ok} complete, failed ${JSON.stringify(freshTally.failed)}`);
  const expected = next.map((p) => new X509Certificate(readFileSync(p.certFile)).fingerprint256);
  log(`  a new connection 1 s after each rotation was served the new certificate: ${served.map((f, i) => (f === expected[i] ? 'yes' : 'NO')).join(', ')}`);
  await deed.stop();
}

async function sigterm(): Promise<void> {
  const { certDir, policy } = benchDir();
  const deed = await startDeed({ entry, certDir, policy, extraArgs: ['--shutdown-delay', String(shutdownDelay)] });
  const at = (duration * 1000) / 2;
  log(`\n2. SIGTERM at t=${(at / 1000).toFixed(1)} s of a ${duration} s autocannon run (${connections} keep-alive connections), --shutdown-delay ${shutdownDelay}`);
  const events: string[] = [];
  let signalled = 0;
  const exited = new Promise<number | null>((resolve) => deed.child.once('exit', (code) => resolve(code)));
  void exited.then((code) => events.push(`exited with code ${code} at +${Math.round(performance.now() - signalled)} ms after SIGTERM`));
  const tally = await runLoad(deed, deed.ca, () => {
    setTimeout(() => {
      signalled = performance.now();
      void deed.child.kill('SIGTERM');
      void (async () => {
        // Readiness must go false at once, while reviews are still answered.
        for (let i = 0; i < 200 && deed.child.exitCode === null; i++) {
          const status = await getStatus(deed.port, deed.ca, '/readyz');
          if (status !== 200) {
            events.push(`readyz answered ${status || 'no connection'} at +${Math.round(performance.now() - signalled)} ms`);
            break;
          }
          await sleep(20);
        }
      })();
    }, at);
  });
  const code = await exited;
  print(tally);
  for (const e of events) log(`  ${e}`);
  log(`  (errors after the exit are connections refused by a process that is gone: in a cluster the endpoint was removed during the shutdown delay; exit code ${code})`);
}

async function sigtermHttp2(): Promise<void> {
  if (spawnSync('h2load', ['--version']).error) return log('\n3. HTTP/2 SIGTERM: h2load not found (Debian: apt-get install nghttp2-client); skipped.');
  const { dir, certDir, policy } = benchDir();
  const deed = await startDeed({ entry, certDir, policy, extraArgs: ['--shutdown-delay', String(shutdownDelay)] });
  const bodyFile = join(dir, 'body.json');
  writeFileSync(bodyFile, BODY);
  const at = (duration * 1000) / 2;
  log(`\n3. HTTP/2: SIGTERM at t=${(at / 1000).toFixed(1)} s of a ${duration} s h2load run (4 connections x 8 streams), --shutdown-delay ${shutdownDelay}`);
  const args = ['-D', String(duration), '-c', '4', '-m', '8', '-d', bodyFile, '-H', 'content-type: application/json', `${deed.url}/mutate?timeout=10s`];
  const h2 = spawn('h2load', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  h2.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  h2.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => deed.child.once('exit', (code) => resolve(code)));
  setTimeout(() => void deed.child.kill('SIGTERM'), at);
  await new Promise((resolve) => h2.once('exit', resolve));
  const code = await exited;
  const requests = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(out);
  const statuses = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (!requests || !statuses) return log(`  cannot read h2load output:\n${out}`);
  log(`  requests started                    ${requests[2]}`);
  log(`  done                                ${requests[3]}   (2xx ${statuses[1]}, 4xx ${statuses[3]}, 5xx ${statuses[4]})`);
  log(`  failed / errored / timeout          ${requests[5]} / ${requests[6]} / ${requests[7]}`);
  log(`  deed exited with code ${code}; h2load: ${args.join(' ').replace(bodyFile, 'BODY')}`);
}

/** HTTP/2 as the API server's Go client uses it: few sessions, many concurrent streams; every stream's outcome is classified. */
async function sigtermHttp2Streams(): Promise<void> {
  const { certDir, policy } = benchDir();
  const deed = await startDeed({ entry, certDir, policy, extraArgs: ['--shutdown-delay', String(shutdownDelay)] });
  const at = (duration * 1000) / 2;
  log(`\n4. HTTP/2, 4 sessions x 8 concurrent streams (Node's client, every stream classified), SIGTERM at t=${(at / 1000).toFixed(1)} s, --shutdown-delay ${shutdownDelay}`);
  const sessions = Array.from({ length: 4 }, () => connectH2(`https://localhost:${deed.port}`, { ca: deed.ca }));
  const outcomes: Record<string, number> = {};
  const goaways: string[] = [];
  const lastAccepted = new Map<(typeof sessions)[number], number>();
  for (const session of sessions) {
    session.on('error', () => {});
    session.on('goaway', (code: number, last: number) => {
      goaways.push(`code ${code} after stream ${last}`);
      lastAccepted.set(session, last);
    });
  }
  let stop = false;
  const worker = async (session: (typeof sessions)[number]) => {
    while (!stop && !session.closed && !session.destroyed) {
      const outcome = await new Promise<string>((resolve) => {
        const stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=10s', 'content-type': 'application/json' });
        let status = 0;
        const chunks: Buffer[] = [];
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => resolve(status === 200 && complete(Buffer.concat(chunks).toString('utf8')) ? '2xx complete AdmissionReview' : `status ${status}, incomplete body`));
        stream.on('error', (err: NodeJS.ErrnoException) => {
          // A stream numbered above the GOAWAY's last stream id was never processed (RFC 9113 6.8): safe to retry.
          const last = lastAccepted.get(session);
          const where = last === undefined ? 'no GOAWAY yet' : (stream.id ?? 0) > last ? 'opened after the GOAWAY (not processed)' : 'accepted before the GOAWAY';
          resolve(`stream error ${err.code} (RST code ${stream.rstCode}), ${status ? 'after response headers' : 'before any response'}, ${where}`);
        });
        stream.end(BODY);
      });
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  };
  const exited = new Promise<number | null>((resolve) => deed.child.once('exit', (code) => resolve(code)));
  setTimeout(() => void deed.child.kill('SIGTERM'), at);
  setTimeout(() => (stop = true), duration * 1000);
  await Promise.all(sessions.flatMap((session) => Array.from({ length: 8 }, () => worker(session))));
  for (const session of sessions) session.destroy();
  const code = await exited;
  for (const [outcome, n] of Object.entries(outcomes)) log(`  ${String(n).padStart(7)}  ${outcome}`);
  log(`  GOAWAY frames seen: ${goaways.length > 0 ? goaways.join('; ') : 'none'}; deed exited with code ${code}`);
}

log(`Deed fault injection under load  ${new Date().toISOString()}  node ${process.version}  entry=${entry}`);
log(`command: npm run fault -- ${process.argv.slice(2).join(' ')}`.trimEnd());
log('A shared 2-core machine: counts are exact, timings indicative.');
if (entry === 'dist' && !flags['no-build']) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
const only = flags.only;
if (only === undefined) {
  await rotation();
  await sigterm();
  await sigtermHttp2();
  await sigtermHttp2Streams();
}
const hostile = Number(flags.hostile);
const watchS = 45; // the longest default deadline (request, 30 s), the time to open the flood, and slack
if (only === undefined || only === 'hostile') {
  await hostileConnections({ entry, connections: hostile, extraArgs: [], title: `5. ${hostile} hostile connections against the default limits (--max-connections 1000)`, body: BODY, watchS, log });
  await hostileConnections({
    entry,
    connections: hostile,
    extraArgs: ['--max-connections', String(hostile * 2)],
    title: `5b. the same ${hostile}, every one held: --max-connections raised past the flood (the memory the bound saves)`,
    body: BODY,
    watchS,
    log,
  });
}
if (only === undefined || only === 'bodies') {
  const bytes = Math.round(7.9 * 1024 * 1024);
  for (const [sessions, title] of [
    [1, '6. one HTTP/2 session, 100 streams each sending 7.9 MiB of a body that never ends'],
    [3, '6b. the same from three sessions'],
  ] as const)
    await hostileBodies({ entry, title, sessions, streams: 100, bytes, seconds: 20, body: BODY, uid: UID, log });
  // Uploads that declare their length and stall, from two addresses (two tenant pods): each
  // address may hold half the budget, so together they could hold all of it.
  const addresses = ['127.0.0.2', '127.0.0.3'];
  const declared = 8 * 1024 * 1024; // the body limit: six of them fill the budget exactly
  for (const [sent, title] of [
    [0, '6c. two addresses, 2 sessions each, 100 streams each declaring 8 MiB (the body limit) and sending none of it'],
    [declared - 16 * 1024, '6d. the same, each stream sending all but the last 16 KiB, then stalling'],
  ] as const)
    await hostileBodies({ entry, title, sessions: 4, streams: 100, bytes: sent, declared, addresses, seconds: 20, body: BODY, uid: UID, log });
}
if (only === undefined || only === 'client-ca')
  await clientCaFlood({ entry, title: `7. --client-ca: reviews on fresh authenticated connections during a flood of ${hostile} connections from another address`, connections: hostile, watchS: 15, body: BODY, uid: UID, log });
