// `npm run fault` section 7: with strict client certificates (--client-ca), reviews on
// fresh connections that present the API server's certificate, one after another from
// 127.0.0.1, while scripts/hostile-flood.ts opens a flood of connections from 127.0.0.2
// (a tenant pod's address), none with a certificate. The API server opens a fresh
// connection after an idle timeout or a Deed restart; before the share per peer, one in a
// flood of 2,400 hanging connections got a reset.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { percentile } from '../bench/load.js';
import { benchDir, freePort, memory, resetPeak, ROOT, startDeed } from '../bench/processes.js';
import { clientCertificatePair } from '../test/e2e/control-plane.js';
import { getPlain } from '../test/serve-process.js';
import type { Conn } from './hostile-flood.js';

export interface ClientCaFloodOptions {
  entry: 'dist' | 'tsx';
  title: string;
  connections: number;
  watchS: number;
  body: string;
  uid: string;
  log: (s?: string) => void;
}

/** A client CA and a certificate it signed, as the API server's AdmissionConfiguration names one. */
async function clientPki(dir: string): Promise<{ caFile: string; cert: string; key: string }> {
  const { ca, client } = await clientCertificatePair();
  const caFile = join(dir, 'client-ca.crt');
  writeFileSync(caFile, ca.cert);
  return { caFile, cert: client.cert, key: client.private };
}

export async function clientCaFlood(o: ClientCaFloodOptions): Promise<void> {
  const { dir, certDir, policy } = benchDir();
  const pki = await clientPki(dir);
  const metricsPort = await freePort();
  const deed = await startDeed({ entry: o.entry, certDir, policy, metricsPort, extraArgs: ['--client-ca', pki.caFile] });
  const pid = deed.child.pid!;
  const { log } = o;
  log(`\n${o.title}`);
  log(`  deed serve --client-ca (default limits: --max-connections 1000, --max-connections-per-peer 100); a review on a fresh authenticated connection from 127.0.0.1 every 100 ms`);

  let running = true;
  const latencies: number[] = [];
  const failed: Record<string, number> = {};
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      sent++;
      const started = performance.now();
      const req = request(
        { host: '127.0.0.1', servername: 'localhost', port: deed.port, path: '/mutate?timeout=10s', method: 'POST', ca: deed.ca, cert: pki.cert, key: pki.key, agent: false, headers: { 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            if (res.statusCode === 200 && text.includes(o.uid)) latencies.push(performance.now() - started);
            else failed[`status ${res.statusCode}`] = (failed[`status ${res.statusCode}`] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        failed[err.code ?? err.message] = (failed[err.code ?? err.message] ?? 0) + 1;
        resolve();
      });
      req.end(o.body);
    });
  const loop = (async () => {
    while (running) {
      await one();
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  await new Promise((r) => setTimeout(r, 2000));
  const rssBefore = memory(pid);
  const peakReset = resetPeak(pid);
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, deed.ca);
  const outFile = join(dir, 'flood.json');
  const before = latencies.length;
  const failedBefore = Object.values(failed).reduce((a, b) => a + b, 0);
  const sentBefore = sent;
  const flood = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/hostile-flood.ts'), String(deed.port), caFile, String(o.connections), String(o.watchS), outFile, '127.0.0.2'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  await new Promise((resolve) => flood.once('exit', resolve));
  running = false;
  await loop;
  const rss = memory(pid);
  const result = JSON.parse(readFileSync(outFile, 'utf8')) as { openedIn: number; watched: number; conns: Array<Omit<Conn, 'destroy'>> };
  const metrics = await getPlain(metricsPort, '/metrics').then((a) => a.body, () => '');
  const refusals = [...metrics.matchAll(/^deed_connections_refused_total\{reason="(\w+)"\} (\d+)$/gm)].map(([, reason, n]) => `${reason} ${n}`).join(', ');

  const during = Float64Array.from(latencies.slice(before)).sort();
  const failedDuring = Object.values(failed).reduce((a, b) => a + b, 0) - failedBefore;
  const kinds = new Map<string, { opened: number; quickly: number }>();
  for (const c of result.conns) {
    const k = kinds.get(c.kind) ?? { opened: 0, quickly: 0 };
    k.opened++;
    if (c.refused || (c.closedAt !== undefined && c.openedAt !== undefined && c.closedAt - c.openedAt < 1000)) k.quickly++;
    kinds.set(c.kind, k);
  }
  log(`  flood from 127.0.0.2: ${result.conns.length} connections opened in ${(result.openedIn / 1000).toFixed(1)} s, watched ${(result.watched / 1000).toFixed(1)} s`);
  for (const [kind, k] of kinds) log(`    ${kind}: ${k.opened} opened, ${k.quickly} closed within 1 s (no client certificate, or a slot needed)`);
  log(`  reviews on fresh authenticated connections while it ran: ${sent - sentBefore} sent, ${during.length} answered 200 with the review (p50 ${percentile(during, 50).toFixed(1)} ms, p99 ${percentile(during, 99).toFixed(1)} ms, max ${percentile(during, 100).toFixed(1)} ms), ${failedDuring} not: ${JSON.stringify(failed)}`);
  log(`  deed_connections_refused_total: ${refusals} (closed at once, or in their handshake to make room)`);
  log(`  deed RSS before ${rssBefore?.rssMiB.toFixed(1)} MiB; peak ${peakReset ? `(VmHWM, reset before the flood) ${rss?.peakMiB.toFixed(1)}` : '-'} MiB`);
  await deed.stop();
}
