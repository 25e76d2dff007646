// `npx tsx bench/reaper-pages.ts`: the peak memory of the reaper's (and the audit's) list of
// objects with large metadata, in the reaper CronJob's Node heap. A fake API server (a child
// process, so its memory is not counted) serves `--small` ordinary ConfigMaps' metadata, then
// `--large` whose metadata is ~750 KB each, as the reviewer's probe made them in a real API
// server: 24 annotations of 10 KB and the managedFields of 3,000 data keys. This process lists
// them with the reaper's client (createKubeClient, listPages: what each kind of a sweep reads)
// and prints the list requests, the limits asked, the objects listed and the peak RSS and heap.
// Run it with the CronJob's flags; a heap exhaustion is the failure it measures. Prints
// figures; asserts nothing.
//   node --max-semi-space-size=1 --max-old-space-size=96 --import tsx bench/reaper-pages.ts [--small 0] [--large 50]
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchArgs } from './args.js';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../src/kube/client.js';

const { values: flags } = benchArgs(import.meta.url, { options: { small: { type: 'string', default: '0' }, large: { type: 'string', default: '50' }, serve: { type: 'boolean', default: false } } });
const SMALL = Number(flags.small);
const TOTAL = SMALL + Number(flags.large);

/** One object's metadata as a metadata-only list returns it, `NAME` to be replaced. */
function itemText(large: boolean): string {
  const annotations: Record<string, string> = {};
  const fields: Record<string, unknown> = { '.': {} };
  if (large) {
    for (let j = 0; j < 24; j++) annotations[`example.com/pad-${j}`] = 'y'.repeat(10_000);
    for (let j = 0; j < 3000; j++) fields[`f:k${String(j).padStart(5, '0')}-${'x'.repeat(140)}`] = {};
  }
  const managedFields = [{ manager: 'bloat', operation: 'Update', apiVersion: 'v1', time: '2026-12-04T20:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': fields } }];
  const labels = { 'deed.dev/managed': 'true', 'deed.dev/environment': 'alpha' };
  return JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'NAME', namespace: 'tenant-own', uid: 'UID', resourceVersion: '10', labels, annotations, managedFields } });
}

if (flags.serve) {
  const small = itemText(false);
  const large = itemText(true);
  // Each item written as it is made, so the server holds no page.
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const listed = url.pathname.endsWith('/configmaps') ? TOTAL : 0;
    const limit = Number(url.searchParams.get('limit'));
    const from = Number(url.searchParams.get('continue') ?? '0');
    if (listed > 0) process.send!({ limit, from });
    const to = Math.min(listed, from + limit);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"10"${to < listed ? `,"continue":"${to}"` : ''}},"items":[`);
    for (let i = from; i < to; i++) {
      const name = `cm-${String(i).padStart(6, '0')}`;
      res.write(`${i > from ? ',' : ''}${(i < SMALL ? small : large).replace('NAME', name).replace('UID', `uid-${i}`)}`);
    }
    res.end(']}');
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  // The measured process dying of heap exhaustion is an outcome: the server goes with it.
  process.on('disconnect', () => process.exit(0));
} else {
  // The child runs with Node's default flags: only this process has the CronJob's heap.
  const child = fork(process.argv[1]!, ['--serve', '--small', String(SMALL), '--large', flags.large], { execArgv: ['--import', 'tsx'], env: { ...process.env, NODE_OPTIONS: '' } });
  const requests: Array<{ limit: number; from: number }> = [];
  const port = await new Promise<number>((resolve) =>
    child.on('message', (m: { port?: number; limit?: number; from?: number }) => {
      if (m.port !== undefined) resolve(m.port);
      else requests.push({ limit: m.limit!, from: m.from! });
    }),
  );
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'fake', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'c', cluster: 'fake', user: 'u' }], currentContext: 'c' });
  const client = createKubeClient(kc, { timeoutMs: 60_000, labelPrefix: 'deed.dev' });
  let heapPeak = 0;
  const sample = setInterval(() => (heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)), 5);
  const started = Date.now();
  let objects = 0;
  let outcome = 'listed';
  try {
    for await (const page of client.listPages('ConfigMap', undefined, 'deed.dev/managed=true,deed.dev/environment=alpha')) objects += page.length;
  } catch (err) {
    outcome = `failed: ${(err as Error).message}`;
  }
  clearInterval(sample);
  const ms = Date.now() - started;
  child.kill();
  console.log(`node flags: ${process.execArgv.filter((a) => a.startsWith('--max')).join(' ') || '(default)'}${process.env.NODE_OPTIONS ? ` NODE_OPTIONS=${process.env.NODE_OPTIONS}` : ''}`);
  console.log(`served: ${SMALL} small, then ${TOTAL - SMALL} with ~${Math.round(itemText(true).length / 1024)} KB of metadata each`);
  console.log(`${outcome}: ${objects} objects in ${ms} ms, ${requests.length} list requests`);
  console.log(`limits asked (from): ${requests.map((r) => `${r.limit}@${r.from}`).join(' ')}`);
  console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB, peak heap used (sampled) ${(heapPeak / 1024 / 1024).toFixed(0)} MiB`);
}
