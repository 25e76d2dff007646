// `npm run bench:scale`'s stand-in API server, run as a child process of its own so that its
// memory is not Deed's and its CPU is not on Deed's event loop. Plain HTTP on 127.0.0.1; not
// a kube-apiserver: it serves what Deed's lookup cache asks for (bench/cluster.ts's paths, at
// scale), its objects generated per page from an index (bench/scale-objects.ts):
// - cluster-wide and per-namespace lists of every cached kind and of namespaces, paged by
//   `limit` / `continue`, as PartialObjectMetadataList when the Accept header asks for it;
// - a get of one object by name (whole, or PartialObjectMetadata when asked);
// - watches (`?watch=true`, client-node's form) open for the timeoutSeconds asked, with a
//   BOOKMARK every few seconds, replaying objects added after the resourceVersion asked;
// - control paths for the bench: POST /_bench/add/RESOURCE (an object, sent to the open
//   watches), POST /_bench/expire (every open watch ends with a 410 Expired ERROR event, and
//   a watch from an older resourceVersion gets one at once, so each kind lists again), and
//   GET /_bench/stats.
// Prints its URL on stdout, then nothing.
//   node --import tsx bench/scale-cluster.ts --objects N --namespaces K [--key-file F] [--pending-clones]
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchArgs } from './args.js';
import { generator, namespaceIndex, namespaceName } from './scale-objects.js';

const { values: flags } = benchArgs(import.meta.url, {
  options: {
    objects: { type: 'string', default: '45000' },
    namespaces: { type: 'string', default: '200' },
    'key-file': { type: 'string' },
    'bookmark-seconds': { type: 'string', default: '10' },
    'deed-namespace': { type: 'string', default: 'deed-system' },
    'pending-clones': { type: 'boolean', default: false },
  },
});
const K = Number(flags.namespaces);
// Deed reads its generated key as the file's bytes (the hex text itself).
const key = flags['key-file'] ? Buffer.from(readFileSync(flags['key-file'], 'latin1').replace(/\r?\n$/, ''), 'latin1') : undefined;
const gen = generator(Number(flags.objects), K, key, flags['pending-clones'] ? 'pending-clones' : 'bound');
const bookmarkMs = Number(flags['bookmark-seconds']) * 1000;

type Obj = { apiVersion?: string; kind?: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string; [k: string]: unknown }; [k: string]: unknown };

let revision = 1000;
/** Generated objects carry this resourceVersion; lists answer the current revision. */
const generatedRv = String(revision);
/** Watches from below this resourceVersion are answered 410 Expired (set by /_bench/expire). */
let expiredBelow = 0;
const added = new Map<string, Obj[]>();
const namespaceObjects: Obj[] = [...Array.from({ length: K }, (_, j) => namespaceName(j)), flags['deed-namespace']].map((name, j) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, uid: `ns-${name}`, resourceVersion: generatedRv, labels: { 'kubernetes.io/metadata.name': name, ...(j < K ? { 'deed.dev/sandbox': 'enabled' } : {}) } },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Active' },
}));

interface Watcher {
  res: ServerResponse;
  resource: string;
  namespace: string | undefined;
  metadataOnly: boolean;
  selector: [string, string] | undefined;
}
const watchers = new Set<Watcher>();

const stats = {
  requests: 0,
  listPages: 0,
  listItems: 0,
  listBytes: 0,
  gets: 0,
  watches: 0,
  watchesExpired: 0,
  byResource: {} as Record<string, { pages: number; items: number; bytes: number; watches: number; gets: number }>,
};
const statsOf = (resource: string) => (stats.byResource[resource] ??= { pages: 0, items: 0, bytes: 0, watches: 0, gets: 0 });

const kindsByResource = new Map(gen.kinds.map((k) => [k.resource, k]));
const toMetadata = (o: Obj): Obj => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: o.metadata });

/** A list's items as a sequence: generated objects first (in the namespace asked, if any), then added ones. */
function sequence(resource: string, namespace: string | undefined, metadataOnly: boolean): { length: number; at(p: number): Obj } | undefined {
  const extra = (added.get(resource) ?? []).filter((o) => namespace === undefined || o.metadata.namespace === namespace);
  const shape = (o: Obj) => (metadataOnly ? toMetadata(o) : o);
  if (resource === 'namespaces') {
    const all = namespaceObjects.filter((o) => namespace === undefined || o.metadata.name === namespace);
    return { length: all.length, at: (p) => shape(all[p]!) };
  }
  if (!kindsByResource.has(resource)) return undefined;
  const count = gen.counts[resource] ?? 0;
  if (namespace === undefined) return { length: count + extra.length, at: (p) => (p < count ? (gen.object(resource, p, metadataOnly, generatedRv) as Obj) : shape(extra[p - count]!)) };
  const j = namespaceIndex(namespace);
  const mine = j === undefined || j >= K || j >= count ? 0 : Math.ceil((count - j) / K);
  return { length: mine + extra.length, at: (p) => (p < mine ? (gen.object(resource, j! + p * K, metadataOnly, generatedRv) as Obj) : shape(extra[p - mine]!)) };
}

function selectorOf(s: string | null): [string, string] | undefined {
  if (s === null || s === '') return undefined;
  const [k, v] = s.split('=') as [string, string?];
  return [k, v ?? ''];
}
const matches = (o: Obj, sel: [string, string] | undefined) => sel === undefined || o.metadata.labels?.[sel[0]] === sel[1];

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message }));
}

function sendEvent(w: Watcher, type: string, o: Obj): void {
  if (w.namespace !== undefined && o.metadata.namespace !== w.namespace) return;
  if (!matches(o, w.selector)) return;
  w.res.write(`${JSON.stringify({ type, object: w.metadataOnly ? toMetadata(o) : o })}\n`);
}

const gone = (since: string) => ({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${since} (${expiredBelow})`, reason: 'Expired', code: 410 } });

const PATH = /^\/(?:api\/v1|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?\/([a-z]+)(?:\/([^/]+))?$/;

const server = createServer((req, res) => {
  stats.requests++;
  const url = new URL(req.url ?? '/', 'http://cluster');
  if (url.pathname.startsWith('/_bench/')) return control(url.pathname, req, res);
  const m = PATH.exec(url.pathname);
  if (req.method !== 'GET' || m === null) return status(res, 404, 'NotFound', `${req.method} ${url.pathname}`);
  const [namespace, resource, name] = [m[3], m[4]!, m[5]];
  const accept = req.headers.accept ?? '';
  const metadataOnly = accept.includes('as=PartialObjectMetadata');
  const s = statsOf(resource);

  if (name !== undefined) {
    // One object by name.
    stats.gets++;
    s.gets++;
    let found: Obj | undefined;
    if (resource === 'namespaces') found = namespaceObjects.find((o) => o.metadata.name === name);
    else if (namespace !== undefined) {
      found = added.get(resource)?.find((o) => o.metadata.namespace === namespace && o.metadata.name === name);
      const j = namespaceIndex(namespace);
      const i = found === undefined && j !== undefined && j < K ? gen.indexOf(resource, j, name) : undefined;
      if (i !== undefined) found = gen.object(resource, i, false, generatedRv) as Obj;
    }
    if (found === undefined) return status(res, 404, 'NotFound', `${resource} "${name}" not found`);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(metadataOnly ? toMetadata(found) : found));
    return;
  }

  const seq = sequence(resource, namespace, metadataOnly);
  if (seq === undefined) return status(res, 404, 'NotFound', `the server could not find the requested resource (${resource})`);
  const selector = selectorOf(url.searchParams.get('labelSelector'));

  if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
    stats.watches++;
    s.watches++;
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const since = url.searchParams.get('resourceVersion') ?? '';
    if (since !== '' && Number(since) < expiredBelow) {
      stats.watchesExpired++;
      res.end(`${JSON.stringify(gone(since))}\n`);
      return;
    }
    const w: Watcher = { res, resource, namespace, metadataOnly, selector };
    // What changed since the list the watch follows, as kube-apiserver's watch cache replays it.
    for (const o of added.get(resource) ?? []) if (Number(o.metadata.resourceVersion ?? 0) > Number(since || 0)) sendEvent(w, 'ADDED', o);
    watchers.add(w);
    const kind = resource === 'namespaces' ? { kind: 'Namespace', apiVersion: 'v1' } : { kind: kindsByResource.get(resource)!.kind, apiVersion: kindsByResource.get(resource)!.apiVersion };
    const bookmark = () => res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { ...(metadataOnly ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' } : kind), metadata: { resourceVersion: String(revision) } } })}\n`);
    const bookmarks = url.searchParams.get('allowWatchBookmarks') === 'true' ? setInterval(bookmark, bookmarkMs) : undefined;
    const seconds = Number(url.searchParams.get('timeoutSeconds') ?? 1800);
    const timer = setTimeout(() => res.end(), seconds * 1000);
    res.once('close', () => {
      clearTimeout(timer);
      clearInterval(bookmarks);
      watchers.delete(w);
    });
    return;
  }

  // A list page: `continue` is "<resourceVersion>:<offset>" of the list it continues.
  const limit = Number(url.searchParams.get('limit') || 0) || Infinity;
  const token = url.searchParams.get('continue');
  let [rv, offset] = [String(revision), 0];
  if (token) {
    const [r, o] = token.split(':');
    [rv, offset] = [r!, Number(o)];
  }
  const items: string[] = [];
  let p = offset;
  for (; p < seq.length && items.length < limit; p++) {
    const o = seq.at(p);
    if (matches(o, selector)) items.push(JSON.stringify(o));
  }
  const more = p < seq.length;
  const listKind = metadataOnly ? { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' } : { kind: resource === 'namespaces' ? 'NamespaceList' : `${kindsByResource.get(resource)!.kind}List`, apiVersion: resource === 'namespaces' ? 'v1' : kindsByResource.get(resource)!.apiVersion };
  const meta = { resourceVersion: rv, ...(more ? { continue: `${rv}:${p}`, remainingItemCount: seq.length - p } : {}) };
  const body = `{"kind":${JSON.stringify(listKind.kind)},"apiVersion":${JSON.stringify(listKind.apiVersion)},"metadata":${JSON.stringify(meta)},"items":[${items.join(',')}]}`;
  stats.listPages++;
  stats.listItems += items.length;
  stats.listBytes += body.length;
  s.pages++;
  s.items += items.length;
  s.bytes += body.length;
  res.writeHead(200, { 'content-type': 'application/json' }).end(body);
});

function control(path: string, req: import('node:http').IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const add = /^\/_bench\/add\/([a-z]+)$/.exec(path);
    if (req.method === 'POST' && add !== null) {
      const resource = add[1]!;
      const obj = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj;
      const stored: Obj = { ...obj, metadata: { ...obj.metadata, uid: (obj.metadata.uid as string | undefined) ?? `${resource}-${revision}`, resourceVersion: String(++revision) } };
      const same = (o: Obj) => o.metadata.namespace === obj.metadata.namespace && o.metadata.name === obj.metadata.name;
      const before = added.get(resource) ?? [];
      added.set(resource, [...before.filter((o) => !same(o)), stored]);
      for (const w of watchers) if (w.resource === resource) sendEvent(w, before.some(same) ? 'MODIFIED' : 'ADDED', stored);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ resourceVersion: stored.metadata.resourceVersion }));
      return;
    }
    if (req.method === 'POST' && path === '/_bench/expire') {
      expiredBelow = ++revision;
      let ended = 0;
      for (const w of [...watchers]) {
        w.res.end(`${JSON.stringify(gone(String(expiredBelow - 1)))}\n`);
        watchers.delete(w);
        ended++;
      }
      stats.watchesExpired += ended;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ended, expiredBelow }));
      return;
    }
    if (path === '/_bench/stats') {
      const cpu = process.cpuUsage();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...stats, watchesOpen: watchers.size, cpuMs: (cpu.user + cpu.system) / 1000, rssMiB: process.memoryUsage().rss / 1048576 }));
      return;
    }
    status(res, 404, 'NotFound', path);
  });
}

server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
