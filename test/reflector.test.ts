// One kind listed page by page and watched (src/kube/reflector.ts): every page of every kind
// reaches the store (the apps and batch kinds too, whose answers carry metadata.continue), and
// a relist after the watch expired replaces the store in place, sweeping what is gone.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nextPageSize, onePageAtATime, PAGE_CHARS, Reflector, type ReflectorOptions } from '../src/kube/reflector.js';
import type { ApiConnection } from '../src/kube/api-connection.js';

interface Fake {
  names: string[];
  lists: number;
  watches: ServerResponse[];
}

async function serve(fake: Fake): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/apis/apps/v1/deployments') return void res.writeHead(404).end();
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders(); // as kube-apiserver does: the watch is open
      fake.watches.push(res);
      return;
    }
    fake.lists++;
    const from = Number(url.searchParams.get('continue') ?? '0');
    const limit = Number(url.searchParams.get('limit'));
    const page = fake.names.slice(from, from + limit);
    const next = from + limit < fake.names.length ? String(from + limit) : undefined;
    const items = page.map((name) => ({ metadata: { name, namespace: 'sandbox-a', uid: `uid-${name}`, labels: { 'deed.dev/environment': 'alpha' } } }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ metadata: { resourceVersion: '10', ...(next ? { continue: next } : {}) }, items }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const until = async (what: string, check: () => boolean) => {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
};

/** Listens on a free port, closed after the test; the connection a Reflector reads through. */
async function listening(server: Server): Promise<ApiConnection> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requestOptions: () => Promise.resolve({}) };
}

/**
 * A fake API server paging `total` objects, the `i`th carrying an annotation of `padOf(i)`
 * characters: it records the limit each list asked for and the longest page it sent.
 */
function paging(total: number, padOf: (i: number) => number): { server: Server; limits: number[]; longest: () => number } {
  const limits: number[] = [];
  let longest = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') === 'true') return void res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
    const limit = Number(url.searchParams.get('limit'));
    limits.push(limit);
    const from = Number(url.searchParams.get('continue') ?? '0');
    const to = Math.min(total, from + limit);
    const items = Array.from({ length: to - from }, (_, k) => ({ metadata: { name: `web-${from + k}`, namespace: 'sandbox-a', annotations: { note: 'x'.repeat(padOf(from + k)) } } }));
    const text = JSON.stringify({ metadata: { resourceVersion: '10', ...(to < total ? { continue: String(to) } : {}) }, items });
    longest = Math.max(longest, text.length);
    res.writeHead(200, { 'content-type': 'application/json' }).end(text);
  });
  return { server, limits, longest: () => longest };
}

/** A reflector of metadata (deployments unless `o` says) that keeps every namespace; `o` adds or overrides. */
const metadataReflector = (kc: ApiConnection, o: Partial<ReflectorOptions> = {}) =>
  new Reflector({ kc, resource: 'deployments', metadataOnly: true, prefix: 'deed.dev', keeps: () => true, onError: () => {}, ...o });

describe('the reflector', () => {
  test('lists every page of an apps kind, then relists in place after a 410, sweeping what is gone', async () => {
    const fake: Fake = { names: Array.from({ length: 7 }, (_, i) => `web-${i}`), lists: 0, watches: [] };
    const api = await serve(fake);
    after(api.close);
    const reflector = metadataReflector({ server: api.url, requestOptions: () => Promise.resolve({}) }, { pageSize: 3 });
    reflector.start();
    after(() => reflector.stop());
    await until('current', () => reflector.current);
    assert.equal(fake.lists, 3, 'three pages of three');
    assert.equal(reflector.size, 7);
    assert.equal(reflector.get('sandbox-a', 'web-6')?.labels?.['deed.dev/environment'], 'alpha');

    // Two are deleted while the watch is down; the watch ends with 410 Gone, so the kind lists again.
    fake.names = fake.names.slice(0, 5);
    fake.watches.shift()!.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } })}\n`);
    await until('listed again and current', () => fake.lists === 5 && reflector.current);
    assert.equal(reflector.size, 5);
    assert.equal(reflector.get('sandbox-a', 'web-6'), undefined);
    assert.equal(reflector.get('sandbox-a', 'web-4')?.uid, 'uid-web-4');
  });

  test('list pages are sized in bytes: each asks for as many objects as fill PAGE_CHARS at the size of the last page\'s', async () => {
    const total = 400;
    const { server, limits } = paging(total, () => 2000);
    const reflector = metadataReflector(await listening(server));
    reflector.start();
    after(() => reflector.stop());
    await until('current', () => reflector.current);
    assert.equal(reflector.size, total, 'every object stored');
    // About 2.1 KB an object: 50 first, then about 46 (96 KiB of them).
    assert.equal(limits[0], 50);
    assert.ok(limits[1]! >= 40 && limits[1]! < 50, `second page of ${limits[1]}`);
    assert.ok(limits.slice(1).every((l) => l === limits[1]), 'the same size while the objects are');

    // The pure rule: large objects, few to a page (never none); small ones, at most 500; an empty page changes nothing.
    assert.equal(nextPageSize(PAGE_CHARS * 10, 5, 50), 1);
    assert.equal(nextPageSize(PAGE_CHARS / 2, 10, 50), 20);
    assert.equal(nextPageSize(1000, 100, 50), 500);
    assert.equal(nextPageSize(20, 0, 37), 37);
  });

  test('a page longer than its byte bound is asked again for fewer objects: small objects first, then padded ones, never make one huge page', async () => {
    const total = 300;
    // 200 small objects, then 100 padded to 20 KB each (a tenant's 256 KiB annotations, scaled down).
    const { server, limits, longest } = paging(total, (i) => (i < 200 ? 10 : 20_000));
    const reflector = metadataReflector(await listening(server), { maxPageBytes: 256 * 1024 });
    reflector.start();
    after(() => reflector.stop());
    await until('current', () => reflector.current);
    assert.equal(reflector.size, total, 'every object stored');
    // 50, then pages as large as the small objects allow (500), cut to 62 and 7 once the padded ones begin.
    assert.deepEqual(limits.slice(0, 2), [50, 500]);
    assert.ok(limits.includes(62), `a cut page: ${limits.join(', ')}`);
    assert.ok(longest() > 256 * 1024, 'the server did send a page past the bound');
  });

  test('a single object past the byte bound fails the list (the kind is read live), never parsed', async () => {
    const { server } = paging(1, () => 64 * 1024);
    const errors: string[] = [];
    const reflector = metadataReflector(await listening(server), { maxPageBytes: 16 * 1024, onError: (err: unknown) => errors.push(String(err)) });
    reflector.start();
    after(() => reflector.stop());
    await until('an error', () => errors.length > 0);
    assert.match(errors[0]!, /the answer is longer than 16384 bytes/);
    assert.equal(reflector.current, false);
    assert.equal(reflector.size, 0);
  });

  test('shed while a list page is in flight: that page is not kept, so a shed kind holds nothing', async () => {
    // The cache sheds a kind from another kind's page (its weight is weighed there), between
    // two of this kind's pages: the page that answers next belongs to a list that no longer is.
    let pages = 0;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.searchParams.get('watch') === 'true') return void res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
      const from = Number(url.searchParams.get('continue') ?? '0');
      if (++pages === 2) reflector.shed(); // the server answers only after \`reflector\` started it
      const items = [0, 1, 2].map((k) => ({ metadata: { name: `web-${from + k}`, namespace: 'sandbox-a' } }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ metadata: { resourceVersion: '10', ...(from === 0 ? { continue: '3' } : {}) }, items }));
    });
    const reflector = metadataReflector(await listening(server), { pageSize: 3 });
    reflector.start();
    after(() => reflector.stop());
    await until('the second page served', () => pages === 2);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(reflector.current, false);
    assert.equal(reflector.size, 0, 'no object of the page that arrived after the shed is kept');
    assert.equal(reflector.bytes, 0);
    assert.equal(reflector.get('sandbox-a', 'web-3'), undefined);
  });

  test('kinds that share a page gate never have two list pages in flight at once; without it they do', async () => {
    let inFlight = 0;
    let most = 0;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.searchParams.get('watch') === 'true') return void res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
      most = Math.max(most, ++inFlight);
      const from = Number(url.searchParams.get('continue') ?? '0');
      const items = [{ metadata: { name: `o-${from}`, namespace: 'sandbox-a' } }];
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ metadata: { resourceVersion: '10', ...(from < 3 ? { continue: String(from + 1) } : {}) }, items }));
      }, 15);
    });
    const kc = await listening(server);
    const listAll = async (pageGate: ReturnType<typeof onePageAtATime> | undefined) => {
      most = 0;
      const resources = ['deployments', 'replicasets', 'statefulsets'] as const;
      const reflectors = resources.map((resource) => metadataReflector(kc, { resource, ...(pageGate ? { pageGate } : {}) }));
      for (const r of reflectors) r.start();
      try {
        await until('every kind current', () => reflectors.every((r) => r.current));
        assert.ok(reflectors.every((r) => r.size === 4), 'four pages of one each');
      } finally {
        for (const r of reflectors) r.stop();
      }
      return most;
    };
    assert.equal(await listAll(onePageAtATime()), 1, 'one page at a time, across kinds');
    assert.ok((await listAll(undefined)) > 1, 'without the gate, kinds list side by side');

    // A page that never answers holds the others back for the gate's patience, no longer.
    const gate = onePageAtATime(50);
    void gate(() => new Promise<void>(() => {}));
    const started = performance.now();
    assert.equal(await gate(() => Promise.resolve('next')), 'next');
    assert.ok(performance.now() - started >= 45, 'waited for the patience');
  });

  test('a watch that never answers is presumed dead after its timeout and the grace, and asked for again', async () => {
    let watches = 0;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.searchParams.get('watch') === 'true') {
        watches++;
        return; // no headers, no events: a connection that hangs
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ metadata: { resourceVersion: '10' }, items: [] }));
    });
    const errors: string[] = [];
    const reflector = metadataReflector(await listening(server), { onError: (err) => errors.push(String(err)), watchSeconds: 1, stallGraceSeconds: 0.2 });
    reflector.start();
    after(() => reflector.stop());
    await until('a second watch asked for', () => watches >= 2);
    assert.equal(reflector.current, false, 'never current: the watch never opened');
    assert.match(errors[0] ?? '', /no event for 1\.2 s/);
  });

  test("a custom resource served at no version (the Gateway API not installed) is current and empty, without an error; once installed it is listed within the recheck, and one served at another version is listed there", async () => {
    const G = '/apis/gateway.networking.k8s.io';
    let served: string | undefined; // the version the fake serves Gateways at, if any
    const asked: string[] = [];
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      asked.push(`${url.pathname}${url.searchParams.get('watch') === 'true' ? '?watch' : ''}`);
      const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (served === undefined) return void res.writeHead(404).end(); // no such group: kube-apiserver's plain 404
      if (url.pathname === G) return json({ kind: 'APIGroup', versions: [{ version: served }] });
      if (url.pathname === `${G}/${served}`) return json({ kind: 'APIResourceList', resources: [{ name: 'gateways' }, { name: 'gateways/status' }] });
      if (url.pathname !== `${G}/${served}/gateways`) return void res.writeHead(404).end();
      if (url.searchParams.get('watch') === 'true') return void res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
      json({ metadata: { resourceVersion: '10' }, items: [{ metadata: { name: 'edge', namespace: 'sandbox-a', uid: 'edge' }, spec: { listeners: [{ name: 'https', tls: { certificateRefs: [{ name: 'creds' }] } }] } }] });
    });
    const errors: string[] = [];
    const current: boolean[] = [];
    const reflector = new Reflector({ kc: await listening(server), resource: 'gateways', metadataOnly: false, prefix: 'deed.dev', keeps: () => true, mayBeUnserved: true, unservedRecheckMs: 50, onError: (err) => errors.push(String(err)), onCurrent: (c) => current.push(c) });
    reflector.start();
    after(() => reflector.stop());
    await until('current while not served', () => reflector.current);
    assert.equal(reflector.notServed, true);
    assert.equal(reflector.size, 0);
    assert.ok(asked.includes(G), 'the group\'s discovery was asked');
    assert.deepEqual(errors, [], 'a kind not installed is no error');
    // Installed at v1beta1 only (an older Gateway API): listed and watched there.
    served = 'v1beta1';
    await until('listed once served', () => reflector.size === 1 && reflector.current);
    assert.equal(reflector.notServed, false);
    assert.deepEqual(reflector.get('sandbox-a', 'edge')?.reads?.secrets, ['creds']);
    assert.ok(asked.includes(`${G}/v1beta1/gateways?watch`), asked.join(' '));
    // Its definition deleted: the watch ends, the kind is served at no version, and what the store held is forgotten.
    served = undefined;
    server.closeAllConnections();
    await until('forgotten once not served', () => reflector.notServed && reflector.size === 0 && reflector.current);
  });

  test('without mayBeUnserved (a core kind), a 404 is an error and the kind is never current', async () => {
    const server = createServer((_req, res) => void res.writeHead(404).end());
    const errors: string[] = [];
    const reflector = metadataReflector(await listening(server), { onError: (err) => errors.push(String(err)) });
    reflector.start();
    after(() => reflector.stop());
    await until('an error', () => errors.length > 0);
    assert.equal(reflector.current, false);
    assert.equal(reflector.notServed, false);
  });

  test('discovery naming the kind at versions whose lists all answer 404 (discovery behind a definition deleted, or a version no longer served) is an error with the usual pause, not a loop of requests (reviewer-99 F3)', async () => {
    const G = '/apis/gateway.networking.k8s.io';
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      const url = new URL(req.url ?? '/', 'http://x');
      const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (url.pathname === G) return json({ kind: 'APIGroup', versions: [{ version: 'v1' }, { version: 'v1beta1' }] });
      if (url.pathname === `${G}/v1` || url.pathname === `${G}/v1beta1`) return json({ kind: 'APIResourceList', resources: [{ name: 'gateways' }] });
      res.writeHead(404).end();
    });
    const errors: string[] = [];
    const reflector = new Reflector({ kc: await listening(server), resource: 'gateways', metadataOnly: false, prefix: 'deed.dev', keeps: () => true, mayBeUnserved: true, onError: (err) => errors.push(String(err)) });
    reflector.start();
    after(() => reflector.stop());
    await new Promise((r) => setTimeout(r, 1000));
    reflector.stop();
    // Backing off from 500 ms, doubling, as for any failure: a handful of requests in a second (without the bound, thousands).
    assert.ok(requests < 30, `${requests} requests in one second`);
    assert.match(errors[0] ?? '', /serves it at v1(beta1)? by its discovery, but its lists answer 404/);
    assert.equal(reflector.current, false);
  });
});
