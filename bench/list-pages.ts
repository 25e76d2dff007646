// `npx tsx bench/list-pages.ts`: the peak memory of the lookup cache's first list when a
// tenant pads its objects. A fake API server (a child process, so its memory is not counted)
// serves 550 small ConfigMaps' metadata, then 500 padded to 250,000 characters of annotations
// each (the API server allows 256 KiB): the pages are sized from the small objects (500 after
// the first 50), so without a byte bound the third page holds 500 padded objects (125 MB). Runs one Reflector, as the
// cache runs it, and prints the list requests, the limits asked and the peak RSS and heap.
// `--unbounded` lifts the page's byte bound (what Deed did before MAX_PAGE_BYTES). Prints
// figures; asserts nothing.
//   NODE_OPTIONS=--max-semi-space-size=2 npx tsx bench/list-pages.ts [--small 550] [--padded 500] [--unbounded]
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchArgs } from './args.js';
import { MAX_PAGE_BYTES, Reflector } from '../src/kube/reflector.js';

const { values: flags } = benchArgs(import.meta.url, { options: { small: { type: 'string', default: '550' }, padded: { type: 'string', default: '500' }, unbounded: { type: 'boolean', default: false }, serve: { type: 'boolean', default: false } } });
const SMALL = Number(flags.small);
const TOTAL = SMALL + Number(flags.padded);
const PAD = 'x'.repeat(250_000);

if (flags.serve) {
  // The fake API server: each item written as it is made, so it holds no page.
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') === 'true') return void res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
    const limit = Number(url.searchParams.get('limit'));
    process.send!({ limit });
    const from = Number(url.searchParams.get('continue') ?? '0');
    const to = Math.min(TOTAL, from + limit);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(`{"kind":"PartialObjectMetadataList","metadata":{"resourceVersion":"10"${to < TOTAL ? `,"continue":"${to}"` : ''}},"items":[`);
    for (let i = from; i < to; i++) {
      const annotations = i < SMALL ? {} : { 'example.com/pad': PAD };
      res.write(`${i > from ? ',' : ''}${JSON.stringify({ metadata: { name: `cm-${String(i).padStart(6, '0')}`, namespace: 'shared', uid: `uid-${i}`, annotations } })}`);
    }
    res.end(']}');
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
} else {
  const child = fork(process.argv[1]!, ['--serve', '--small', String(SMALL), '--padded', flags.padded], { execArgv: process.execArgv });
  const limits: number[] = [];
  const port = await new Promise<number>((r) =>
    child.on('message', (m: { port?: number; limit?: number }) => {
      if (m.port !== undefined) r(m.port);
      if (m.limit !== undefined) limits.push(m.limit);
    }),
  );
  let peakRss = 0;
  let peakHeap = 0;
  const sample = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 5);
  const started = process.memoryUsage().rss;
  const errors: string[] = [];
  const reflector = new Reflector({
    kc: { server: `http://127.0.0.1:${port}`, requestOptions: () => Promise.resolve({}) },
    resource: 'configmaps',
    metadataOnly: true,
    prefix: 'deed.dev',
    keeps: () => true,
    onError: (err) => errors.push(String(err)),
    ...(flags.unbounded ? { maxPageBytes: Infinity } : {}),
  });
  const t0 = Date.now();
  reflector.start();
  while (!reflector.current && errors.length === 0 && Date.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 20));
  clearInterval(sample);
  reflector.stop();
  child.kill();
  const mib = (b: number) => (b / 1024 / 1024).toFixed(1);
  console.log(`objects: ${SMALL} small, then ${flags.padded} padded to ${PAD.length} characters of annotations; page bound ${flags.unbounded ? 'none' : `${MAX_PAGE_BYTES} bytes`}; Node ${process.version}`);
  console.log(`listed ${reflector.size} objects in ${Date.now() - t0} ms${errors.length > 0 ? `; error: ${errors[0]}` : ''}`);
  console.log(`${limits.length} list requests; the first limits asked: ${limits.slice(0, 12).join(', ')}`);
  console.log(`RSS at start ${mib(started)} MiB, peak ${mib(peakRss)} MiB; heap used peak ${mib(peakHeap)} MiB`);
}
