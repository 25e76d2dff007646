// One kind listed page by page and watched (src/kube/reflector.ts): every page of every kind
// reaches the store (the apps and batch kinds too, whose answers carry metadata.continue), and
// a relist after the watch expired replaces the store in place, sweeping what is gone.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Reflector } from '../src/kube/reflector.js';

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

describe('the reflector', () => {
  test('lists every page of an apps kind, then relists in place after a 410, sweeping what is gone', async () => {
    const fake: Fake = { names: Array.from({ length: 7 }, (_, i) => `web-${i}`), lists: 0, watches: [] };
    const api = await serve(fake);
    after(api.close);
    const reflector = new Reflector({
      kc: { server: api.url, requestOptions: () => Promise.resolve({}) },
      resource: 'deployments',
      metadataOnly: true,
      prefix: 'deed.dev',
      keeps: () => true,
      onError: () => {},
      pageSize: 3,
    });
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
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => {
      server.closeAllConnections();
      server.close();
    });
    const errors: string[] = [];
    const reflector = new Reflector({
      kc: { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requestOptions: () => Promise.resolve({}) },
      resource: 'deployments',
      metadataOnly: true,
      prefix: 'deed.dev',
      keeps: () => true,
      onError: (err) => errors.push(String(err)),
      watchSeconds: 1,
      stallGraceSeconds: 0.2,
    });
    reflector.start();
    after(() => reflector.stop());
    await until('a second watch asked for', () => watches >= 2);
    assert.equal(reflector.current, false, 'never current: the watch never opened');
    assert.match(errors[0] ?? '', /no event for 1\.2 s/);
  });
});
