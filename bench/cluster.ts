// The API server a benchmark's `deed serve` reads from, so its lookups are answered as in a
// cluster (from the watch-backed cache) instead of refused: without one, a pod that mounts
// a claim is denied (`claim.unknown`) and /validate would measure a denial. It serves what
// Deed's lookup cache asks for and nothing else: a list of every kind the cache keeps (the
// kind table's `lookup` rows and namespaces), watches that stay open for the time asked,
// carrying the objects `add` puts after they opened, and a get of one object by name (a
// kind's cache is not current while its watch reopens). Plain HTTP on 127.0.0.1; not a
// kube-apiserver.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { KubeObject } from '../src/admission/types.js';

export interface BenchCluster {
  url: string;
  /** Lists and watches answered so far (a review's lookup from the cache makes none). */
  requests(): number;
  /** Stores an object of `resource` (plural) and sends it to the open watches of that resource. */
  add(resource: string, obj: KubeObject): void;
  writeKubeConfig(file: string): void;
  close(): Promise<void>;
}

/** `namespaces`: name to labels (the review scope lists them by label). */
export async function startBenchCluster(namespaces: Record<string, Record<string, string>>): Promise<BenchCluster> {
  let revision = 100;
  let requests = 0;
  const objects = new Map<string, KubeObject[]>([['namespaces', Object.entries(namespaces).map(([name, labels]) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels, uid: `ns-${name}`, resourceVersion: '1' } }))]]);
  const watches = new Map<string, Set<ServerResponse>>();
  const server = createServer((req, res) => {
    requests++;
    const url = new URL(req.url ?? '/', 'http://cluster');
    // One object by name: what Deed reads while a kind's cache is not current (a watch reopening).
    const one = /^\/(?:api\/v1|apis\/[^/]+\/[^/]+)\/namespaces\/([^/]+)\/([a-z]+)\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && one !== null) {
      const found = objects.get(one[2]!)?.find((o) => o.metadata.namespace === one[1] && o.metadata.name === one[3]);
      if (found !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(found));
        return;
      }
    }
    // /api/v1/RESOURCE or /apis/GROUP/VERSION/RESOURCE: the cache lists and watches cluster-wide.
    const resource = /^\/(?:api\/v1|apis\/[^/]+\/[^/]+)\/([a-z]+)$/.exec(url.pathname)?.[1];
    if (req.method !== 'GET' || resource === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${req.method} ${url.pathname}` }));
      return;
    }
    let items = objects.get(resource) ?? [];
    const selector = url.searchParams.get('labelSelector');
    if (selector !== null) {
      const [key, value] = selector.split('=') as [string, string?];
      items = items.filter((o) => o.metadata.labels?.[key] === value);
    }
    if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      res.flushHeaders();
      // What changed since the list the watch follows, as kube-apiserver's watch cache replays it.
      const since = Number(url.searchParams.get('resourceVersion') || 0);
      for (const o of items) if (Number(o.metadata.resourceVersion ?? 0) > since) res.write(`${JSON.stringify({ type: 'ADDED', object: o })}\n`);
      const open = watches.get(resource) ?? new Set();
      watches.set(resource, open.add(res));
      const seconds = Number(url.searchParams.get('timeoutSeconds') ?? 60);
      const timer = setTimeout(() => res.end(), seconds * 1000);
      res.once('close', () => {
        clearTimeout(timer);
        open.delete(res);
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: String(revision) }, items }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests: () => requests,
    add(resource, obj) {
      const stored = { ...obj, metadata: { ...obj.metadata, uid: obj.metadata.uid ?? `${resource}-${revision}`, resourceVersion: String(++revision) } };
      const same = (o: KubeObject) => o.metadata.namespace === obj.metadata.namespace && o.metadata.name === obj.metadata.name;
      const before = objects.get(resource) ?? [];
      objects.set(resource, [...before.filter((o) => !same(o)), stored]);
      const type = before.some(same) ? 'MODIFIED' : 'ADDED';
      for (const res of watches.get(resource) ?? []) res.write(`${JSON.stringify({ type, object: stored })}\n`);
    },
    writeKubeConfig: (file) => writeBenchKubeConfig(file, url),
    async close() {
      for (const open of watches.values()) for (const res of open) res.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A kubeconfig for a stand-in API server at `url` (plain HTTP on the loopback), as Deed reads one. */
export function writeBenchKubeConfig(file: string, url: string): void {
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'bench', cluster: { server: url, 'insecure-skip-tls-verify': true } }], // plain HTTP on loopback
      users: [{ name: 'deed', user: { token: 'bench' } }],
      contexts: [{ name: 'bench', context: { cluster: 'bench', user: 'deed' } }],
      'current-context': 'bench',
    }),
  );
}
