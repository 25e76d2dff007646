// The lookup cache's stores against a small API server of lists and watches over
// node:http: only namespaces in scope are kept, a namespace that opts in is listed on its
// own (a backfill), one that leaves is dropped, watch events move the store, and an event
// that arrives while a backfill is in flight wins over the backfill's older list.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLookupCache, type LookupCache } from '../src/kube/lookup-cache.js';

type Obj = { metadata: { name: string; namespace?: string; uid: string; labels?: Record<string, string>; resourceVersion?: string } };

const OPTED_IN = { 'deed.dev/sandbox': 'enabled' };
const ns = (name: string, labels: Record<string, string> = OPTED_IN): Obj => ({ metadata: { name, uid: `ns-${name}`, labels } });
const sec = (namespace: string, name: string): Obj => ({ metadata: { name, namespace, uid: `${namespace}-${name}`, labels: { 'deed.dev/environment': 'alpha', other: 'x' } } });

/** Lists and watches of namespaces and Secrets (pods and claims are empty), answered from tables. */
function fakeApi(moreSecretsInA = 0) {
  const more = Array.from({ length: moreSecretsInA }, (_, i) => sec('a', `more-${i}`));
  const objects = { namespaces: [ns('a'), ns('plain', {})], secrets: [sec('a', 's1'), sec('b', 's2'), sec('c', 'x'), ...more], pods: [sec('a', 'runner')] as Obj[], persistentvolumeclaims: [] as Obj[], ingresses: [] as Obj[] };
  const watchers = new Map<string, ServerResponse[]>();
  let rv = 100;
  /** Namespaced lists wait for this before answering, when set. */
  let holdList: Promise<void> | undefined;
  /** Namespaced lists answer 500 while set. */
  let failList = false;
  const listed: string[] = [];
  const server = createServer((req, res) => void answer(req.url!, res));
  const answer = async (path: string, res: ServerResponse) => {
    const url = new URL(path, 'http://x');
    // The core group's kinds, and the Ingresses (networking.k8s.io), which read Secrets by name too.
    const m = /^\/(?:api\/v1|apis\/networking\.k8s\.io\/v1)\/(?:namespaces\/([^/]+)\/)?(\w+)$/.exec(url.pathname);
    const resource = m?.[2] as keyof typeof objects | undefined;
    if (!resource || !(resource in objects)) return void res.writeHead(404).end();
    res.setHeader('content-type', 'application/json');
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200);
      res.flushHeaders();
      watchers.set(resource, [...(watchers.get(resource) ?? []), res]);
      return;
    }
    const namespace = m![1];
    listed.push(`${resource}${namespace ? ` in ${namespace}` : ''}`);
    if (namespace && holdList) await holdList;
    if (namespace && failList) return void res.writeHead(500).end('{"kind":"Status","code":500,"message":"injected"}');
    const selector = url.searchParams.get('labelSelector');
    const items = objects[resource].filter((o) => (!namespace || o.metadata.namespace === namespace) && (!selector || o.metadata.labels?.['deed.dev/sandbox'] === 'enabled'));
    res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: String(rv) }, items: items.length > 0 ? items : null }));
  };
  return {
    server,
    listed,
    hold(p: Promise<void> | undefined) {
      holdList = p;
    },
    fail(on: boolean) {
      failList = on;
    },
    /** Sends a watch event to every watcher of the resource. */
    emit(resource: keyof typeof objects, type: string, obj: Obj) {
      const line = JSON.stringify({ type, object: { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } } });
      for (const w of watchers.get(resource) ?? []) w.write(`${line}\n`);
    },
    close() {
      for (const list of watchers.values()) for (const w of list) w.end();
      server.closeAllConnections();
      server.close();
    },
  };
}

const kubeConfigFor = (server: ReturnType<typeof createServer>) => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
};

/** Polls `check` until it holds, for up to 15 s: the whole suite runs files side by side, and a loaded machine delivers watch events late. */
const until = async (what: string, check: () => boolean) => {
  const deadline = Date.now() + 15_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
};

/** A pod of `namespace` naming 256 Secrets of 253 characters (the most one pod may name) and `creds`. */
const hostile = (namespace: string, name: string): Obj =>
  ({ ...sec(namespace, name), spec: { containers: [{ name: 'c', image: 'i', envFrom: [{ secretRef: { name: 'creds' } }, ...Array.from({ length: 256 }, (_, i) => ({ secretRef: { name: `${i}-`.padEnd(253, 'x') } }))] }] } }) as Obj;

/** The kinds that read by name which the fake API server serves at no version (the Gateway API's): read live, never from the cache. */
const SERVED_NOWHERE = ['gateways', 'listenersets', 'xlistenersets', 'backendtlspolicies'];

describe('the lookup cache', () => {
  const api = fakeApi();
  let cache: LookupCache;
  /** The cached readers where the cache answers every reading kind the fake serves; undefined where one is to be read live. */
  const cachedReaders = (...[resource, namespace, name]: Parameters<LookupCache['readersIn']>) => {
    const answer = cache.readersIn(resource, namespace, name);
    return answer.unread.every((k) => SERVED_NOWHERE.includes(k)) ? answer.readers : undefined;
  };
  const notKept: string[] = [];
  before(async () => {
    await new Promise<void>((r) => api.server.listen(0, '127.0.0.1', r));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    cache = createLookupCache({ kc, deedNamespace: 'deed-system', prefix: 'deed.dev', secrets: true, onError: () => {}, backfillRetryMs: 50, onReadsNotKept: (namespace, pod) => notKept.push(`${namespace}/${pod}`) });
    cache.start();
    await cache.scopeKnown();
    await until('secrets current', () => cache.current('secrets'));
  });
  after(() => {
    cache.stop();
    api.close();
  });

  test('objects are kept only in namespaces in the scope, and only their uid and Deed\'s labels', () => {
    assert.deepEqual(cache.scope.of('a'), { state: 'in' });
    assert.equal(cache.scope.of('plain').state, 'out');
    assert.deepEqual(cache.get('secrets', 'a', 's1'), { uid: 'a-s1', labels: { 'deed.dev/environment': 'alpha' }, deleting: false });
    assert.equal(cache.get('secrets', 'b', 's2'), undefined, 'b is not opted in');
  });

  test('a review of a namespace never in scope (kube-system, Deed\'s own) does not wait for it to opt in; another namespace does', async () => {
    const settled = (p: Promise<void>) => Promise.race([p.then(() => 'resolved'), new Promise((r) => setTimeout(() => r('waiting'), 2_000))]);
    assert.equal(await settled(cache.awaitScope('kube-system', 60_000)), 'resolved');
    assert.equal(await settled(cache.awaitScope('deed-system', 60_000)), 'resolved');
    assert.equal(await settled(cache.awaitScope('not-yet', 60_000)), 'waiting');
  });

  test('a namespace that opts in is listed on its own, and one that leaves is dropped', async () => {
    api.emit('namespaces', 'ADDED', ns('b'));
    await until('b is in scope and its Secret cached', () => cache.get('secrets', 'b', 's2') !== undefined);
    assert.ok(api.listed.includes('secrets in b'));
    api.emit('namespaces', 'DELETED', ns('b'));
    await until('b leaves the scope', () => cache.scope.of('b').state === 'out');
    assert.equal(cache.get('secrets', 'b', 's2'), undefined);
  });

  test('watch events move the store: a deleted Secret is gone, a new one is there', async () => {
    api.emit('secrets', 'ADDED', sec('a', 's3'));
    api.emit('secrets', 'DELETED', sec('a', 's1'));
    await until('s1 gone, s3 there', () => cache.get('secrets', 'a', 's1') === undefined && cache.get('secrets', 'a', 's3') !== undefined);
  });

  test('the pods that read a name follow the pods\' watch: added, changed, deleted, and dropped with their namespace', async () => {
    await until('pods current', () => cache.current('pods'));
    const reader = (name: string, secret: string): Obj => ({ ...sec('a', name), spec: { containers: [{ name: 'c', image: 'i', envFrom: [{ secretRef: { name: secret } }] }] } }) as Obj;
    const names = () => (cachedReaders('secrets', 'a', 'creds') ?? []).map((r) => r.name).sort();
    api.emit('pods', 'ADDED', reader('job-1', 'creds'));
    api.emit('pods', 'ADDED', reader('job-2', 'creds'));
    await until('both read creds', () => names().length === 2);
    assert.deepEqual(cachedReaders('secrets', 'a', 'creds')?.find((r) => r.name === 'job-1')?.facts.labels, { 'deed.dev/environment': 'alpha' });
    api.emit('pods', 'MODIFIED', reader('job-2', 'other'));
    api.emit('pods', 'DELETED', reader('job-1', 'creds'));
    await until('neither reads creds', () => names().length === 0);
    assert.deepEqual((cachedReaders('secrets', 'a', 'other') ?? []).map((r) => r.name), ['job-2']);
    assert.ok(cache.bytes().pods > 0);
  });

  test("a reading kind the API server serves at no version (the Gateway API not installed) is current and holds nothing, yet is never answered from the cache: the Gateway API may have been installed since it was last listed (reviewer-99 F4)", async () => {
    await until('gateways current', () => cache.current('gateways'));
    assert.equal(cache.sizes().gateways, 0);
    assert.deepEqual(cache.readersIn('secrets', 'a', 'creds').unread, ['gateways', 'listenersets', 'xlistenersets']);
    assert.deepEqual(cache.readersIn('configmaps', 'a', 'creds').unread, ['gateways', 'backendtlspolicies']);
    assert.deepEqual(cache.readersIn('persistentvolumeclaims', 'a', 'data').unread, []);
  });

  test("the readers of a Secret's name are the pods that name it and the Ingresses that name it for TLS, following the Ingresses' watch", async () => {
    await until('ingresses current', () => cache.current('ingresses'));
    const ingress = (secret: string): Obj => ({ ...sec('a', 'web'), spec: { tls: [{ hosts: ['a.example'], secretName: secret }], rules: [{ host: 'a.example' }] } }) as Obj;
    const readers = () => (cachedReaders('secrets', 'a', 'tls') ?? []).map((r) => `${r.kind} ${r.name}`).sort();
    api.emit('ingresses', 'ADDED', ingress('tls'));
    api.emit('pods', 'ADDED', { ...sec('a', 'mounts-tls'), spec: { containers: [{ name: 'c', image: 'i' }], volumes: [{ name: 't', secret: { secretName: 'tls' } }] } } as Obj);
    await until('both read tls', () => readers().length === 2);
    assert.deepEqual(readers(), ['Ingress web', 'Pod mounts-tls']);
    assert.deepEqual(cachedReaders('secrets', 'a', 'tls')?.find((r) => r.kind === 'Ingress')?.facts.labels, { 'deed.dev/environment': 'alpha' });
    assert.ok(cache.bytes().ingresses > 0);
    api.emit('ingresses', 'MODIFIED', ingress('other-tls'));
    await until('the Ingress names another', () => readers().length === 1);
    api.emit('ingresses', 'DELETED', ingress('other-tls'));
    api.emit('pods', 'DELETED', sec('a', 'mounts-tls'));
    await until('nothing reads tls or other-tls', () => readers().length === 0 && (cachedReaders('secrets', 'a', 'other-tls') ?? []).length === 0);
  });

  test("the readers of a claim's name are the pods that mount it and the claims not yet provisioned that clone it, until provisioned", async () => {
    await until('claims current', () => cache.current('persistentvolumeclaims'));
    const copy = (volumeName?: string): Obj => ({ ...sec('a', 'copy'), spec: { accessModes: ['ReadWriteOnce'], dataSource: { kind: 'PersistentVolumeClaim', name: 'data' }, ...(volumeName ? { volumeName } : {}) } }) as Obj;
    const readers = () => (cachedReaders('persistentvolumeclaims', 'a', 'data') ?? []).map((r) => `${r.kind} ${r.name}`).sort();
    api.emit('persistentvolumeclaims', 'ADDED', copy());
    api.emit('pods', 'ADDED', { ...sec('a', 'mounts'), spec: { containers: [{ name: 'c', image: 'i' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] } } as Obj);
    await until('both read data', () => readers().length === 2);
    assert.deepEqual(readers(), ['PersistentVolumeClaim copy', 'Pod mounts']);
    assert.deepEqual(cachedReaders('persistentvolumeclaims', 'a', 'data')?.find((r) => r.kind === 'PersistentVolumeClaim')?.facts.labels, { 'deed.dev/environment': 'alpha' });
    // A claim reads no Secret.
    assert.deepEqual(cachedReaders('secrets', 'a', 'data'), []);
    assert.ok(cache.bytes().persistentvolumeclaims > 0);
    api.emit('persistentvolumeclaims', 'MODIFIED', copy('pv-1'));
    await until('the provisioned claim reads nothing', () => readers().length === 1);
    assert.deepEqual(readers(), ['Pod mounts']);
    api.emit('pods', 'DELETED', sec('a', 'mounts'));
    await until('nothing reads data', () => readers().length === 0);
  });

  test("a pod naming more than the cache keeps of one pod's reads: its namespace's readers are still told from the index, the pod by the hashes of its names", async () => {
    await until('pods current', () => cache.current('pods'));
    api.emit('namespaces', 'ADDED', ns('other'));
    await until('other listed', () => cachedReaders('secrets', 'other', 'creds') !== undefined);
    api.emit('pods', 'ADDED', hostile('a', 'wide'));
    api.emit('pods', 'ADDED', hostile('a', 'wide-2'));
    await until('both wide pods cached', () => cache.readsNotKept() === 2);
    assert.deepEqual(notKept, ['a/wide'], 'told once for the namespace');
    // Not read live: the wide pods are answered as readers of what they name, and only of that.
    assert.deepEqual(cachedReaders('secrets', 'a', 'creds')?.map((r) => r.name).sort(), ['wide', 'wide-2']);
    assert.equal(cachedReaders('secrets', 'a', 'creds')?.[0]?.facts.uid, 'a-wide');
    assert.deepEqual(cachedReaders('secrets', 'a', '0-'.padEnd(253, 'x'))?.length, 2);
    assert.deepEqual(cachedReaders('secrets', 'a', 'nobody-reads'), []);
    // Another namespace is still answered from the index (once its watch is current again, should it have been re-opened meanwhile).
    await until('another namespace is still answered', () => cachedReaders('secrets', 'other', 'creds') !== undefined);
    assert.deepEqual(cachedReaders('secrets', 'other', 'creds'), []);
    const facts = cache.get('pods', 'a', 'wide');
    assert.equal(facts?.readsNotKept, true);
    assert.equal(facts?.reads, undefined);
    api.emit('pods', 'DELETED', hostile('a', 'wide'));
    api.emit('pods', 'DELETED', hostile('a', 'wide-2'));
    await until('the wide pods gone', () => cache.readsNotKept() === 0);
    assert.deepEqual(cachedReaders('secrets', 'a', 'creds'), []);
  });

  test('the readers of a name in a namespace that just opted in are not told from the index until its pods are listed, nor after its list failed', async () => {
    let release = () => {};
    api.hold(new Promise<void>((r) => (release = r)));
    api.emit('namespaces', 'ADDED', ns('late'));
    await until('late is in scope and its pods being listed', () => cache.scope.of('late').state === 'in' && api.listed.includes('pods in late'));
    assert.equal(cachedReaders('secrets', 'late', 'creds'), undefined, 'an absent reader cannot be told from one not listed yet');
    api.hold(undefined);
    release();
    await until('late listed', () => cachedReaders('secrets', 'late', 'creds') !== undefined);
    assert.deepEqual(cachedReaders('secrets', 'late', 'creds'), []);
    api.fail(true);
    try {
      api.emit('namespaces', 'ADDED', ns('failed'));
      await until('failed is in scope and its pods list tried', () => cache.scope.of('failed').state === 'in' && api.listed.includes('pods in failed'));
      assert.equal(cachedReaders('secrets', 'failed', 'creds'), undefined, 'read live until listed');
    } finally {
      api.fail(false);
    }
    // The failed backfill is tried again: once it is listed, the index answers.
    await until('failed listed on a retry', () => cachedReaders('secrets', 'failed', 'creds') !== undefined);
    assert.ok(api.listed.filter((l) => l === 'pods in failed').length >= 2);
  });

  test('a deletion the watch delivers while a backfill is in flight is not undone by the backfill\'s older list', async () => {
    let release = () => {};
    api.hold(new Promise<void>((r) => (release = r)));
    api.emit('namespaces', 'ADDED', ns('c'));
    await until('the backfill of c has asked for its list', () => api.listed.includes('secrets in c'));
    api.emit('secrets', 'DELETED', sec('c', 'x'));
    await new Promise((r) => setTimeout(r, 50));
    release();
    api.hold(undefined);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(cache.scope.of('c').state, 'in');
    assert.equal(cache.get('secrets', 'c', 'x'), undefined, 'the list still held x; the watch had deleted it');
  });
});

describe('the lookup cache past its memory budget', () => {
  test("pods naming hundreds of long names do not shed the pods' store: past the bound their names are kept as hashes", async () => {
    const api = fakeApi();
    await new Promise<void>((r) => api.server.listen(0, '127.0.0.1', r));
    const shed: string[] = [];
    // 20 such pods named some 2.6 MB before the bound (their names in the record and in the index); 200 KB is ample after (some 2.5 KB each).
    const cache = createLookupCache({ kc: kubeConfigFor(api.server), deedNamespace: 'deed-system', prefix: 'deed.dev', secrets: true, onError: () => {}, memoryBudgetBytes: 200_000, onShed: (resource) => shed.push(resource) });
    cache.start();
    try {
      await cache.scopeKnown();
      await until('pods current', () => cache.current('pods'));
      for (let i = 0; i < 20; i++) api.emit('pods', 'ADDED', hostile('a', `wide-${i}`));
      await until('every wide pod cached', () => cache.sizes().pods === 21 || shed.length > 0);
      assert.deepEqual(shed, []);
      assert.equal(cache.current('pods'), true);
      assert.ok(cache.bytes().pods < 60_000, `the pods hold ${cache.bytes().pods} bytes`);
      assert.equal(cache.readsNotKept(), 20);
      assert.equal(cache.get('pods', 'a', 'runner')?.uid, 'a-runner');
    } finally {
      cache.stop();
      api.close();
    }
  });

  test('sheds the kind that holds most and reads it live from then on; the others stay cached, the namespaces always', async () => {
    const api = fakeApi(40);
    await new Promise<void>((r) => api.server.listen(0, '127.0.0.1', r));
    const shed: Array<{ resource: string; bytes: number; total: number; budget: number }> = [];
    // 40 Secrets hold some 8 KB; the pod and the namespaces a few hundred bytes.
    const cache = createLookupCache({ kc: kubeConfigFor(api.server), deedNamespace: 'deed-system', prefix: 'deed.dev', secrets: true, onError: () => {}, memoryBudgetBytes: 2000, onShed: (resource, w) => shed.push({ resource, ...w }) });
    cache.start();
    try {
      await cache.scopeKnown();
      await until('pods current and Secrets shed', () => cache.current('pods') && shed.length > 0);
      assert.deepEqual(shed.map((s) => s.resource), ['secrets']);
      assert.ok(shed[0]!.bytes > 2000 && shed[0]!.total <= 2000 && shed[0]!.budget === 2000, JSON.stringify(shed[0]));
      assert.deepEqual(cache.shed(), ['secrets']);
      assert.equal(cache.current('secrets'), false, 'a shed kind is never current: its lookups are read live');
      assert.equal(cache.get('secrets', 'a', 's1'), undefined);
      assert.equal(cache.sizes().secrets, 0);
      assert.equal(cache.bytes().secrets, 0);
      assert.equal(cache.get('pods', 'a', 'runner')?.uid, 'a-runner');
      assert.equal(cache.scope.of('a').state, 'in');
      // A namespace that opts in later is not listed for a shed kind.
      api.emit('namespaces', 'ADDED', ns('b'));
      await until('b in scope', () => cache.scope.of('b').state === 'in');
      await new Promise((r) => setTimeout(r, 100));
      assert.ok(!api.listed.includes('secrets in b'), api.listed.join(', '));
    } finally {
      cache.stop();
      api.close();
    }
  });
});
