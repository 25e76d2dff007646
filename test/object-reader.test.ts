// The webhook's reads of the objects a review names: Secrets as metadata only, with no
// fallback that would bring their data; a run lease as metadata; NotFound is absent,
// anything else unknown.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createObjectReader, MAX_LISTED_OBJECTS, MAX_LISTS_IN_FLIGHT } from '../src/kube/object-reader.js';
import { FakeApiServer } from './fake-apiserver.js';

describe('the object reader', () => {
  let server: FakeApiServer;
  before(async () => {
    server = await new FakeApiServer().start();
    server.put('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'shared', labels: { 'deed.dev/environment': 'alpha' } }, data: { token: 'c2VjcmV0' } } as never);
  });
  after(async () => server.close());

  test('reads a Secret as PartialObjectMetadata only, and keeps its labels', async () => {
    const lookup = await createObjectReader(server.kubeConfig()).read([{ resource: 'secrets', namespace: 'shared', name: 'creds' }], 2000);
    const found = lookup.get('secrets', 'shared', 'creds');
    assert.equal(found.state, 'found');
    assert.deepEqual(found.state === 'found' ? found.metadata.labels : undefined, { 'deed.dev/environment': 'alpha' });
    const read = server.requests.find((r) => r.path === '/api/v1/namespaces/shared/secrets/creds')!;
    assert.equal(read.accept, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', 'no fallback to the whole Secret');
    assert.equal(JSON.stringify(found).includes('c2VjcmV0'), false);
  });

  test('reads the run lease a new object names as metadata only (its stamps), and a missing one is absent', async () => {
    server.put('leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'run-42', namespace: 'shared', labels: { 'deed.dev/environment': 'alpha' } }, spec: { holderIdentity: 'runner-0' } } as never);
    const reader = createObjectReader(server.kubeConfig());
    const found = (await reader.read([{ resource: 'leases', namespace: 'shared', name: 'run-42' }], 2000)).get('leases', 'shared', 'run-42');
    assert.equal(found.state, 'found');
    assert.deepEqual(found.state === 'found' ? found.metadata.labels : undefined, { 'deed.dev/environment': 'alpha' });
    const read = server.requests.find((r) => r.path === '/apis/coordination.k8s.io/v1/namespaces/shared/leases/run-42')!;
    assert.match(read.accept, /^application\/json;as=PartialObjectMetadata;g=meta\.k8s\.io;v=v1/);
    assert.equal((await reader.read([{ resource: 'leases', namespace: 'shared', name: 'run-43' }], 2000)).get('leases', 'shared', 'run-43').state, 'absent');
    server.faults.push({ path: /leases\/run-42$/, times: 1, answer: { status: 503, reason: 'ServiceUnavailable', message: 'injected' } });
    assert.equal((await reader.read([{ resource: 'leases', namespace: 'shared', name: 'run-42' }], 2000)).get('leases', 'shared', 'run-42').state, 'unknown');
  });

  test("reads a route's parent Gateway by its group's path, as metadata only (its stamps)", async () => {
    // The fake serves no Gateway API: the request is what is checked (test/e2e/cases/pointers.ts reads real ones).
    await createObjectReader(server.kubeConfig()).read([{ resource: 'gateways', namespace: 'shared', name: 'edge' }], 2000);
    const read = server.requests.find((r) => r.path === '/apis/gateway.networking.k8s.io/v1/namespaces/shared/gateways/edge')!;
    assert.match(read.accept, /^application\/json;as=PartialObjectMetadata;g=meta\.k8s\.io;v=v1/);
  });

  test('a claim read fresh carries its creation time; read otherwise, what a cached one holds', async () => {
    server.put('persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'ws', namespace: 'shared', creationTimestamp: '2026-11-29T17:00:00Z', labels: { 'deed.dev/environment': 'beta' } }, spec: {} } as never);
    const reader = createObjectReader(server.kubeConfig());
    const fresh = (await reader.read([{ resource: 'persistentvolumeclaims', namespace: 'shared', name: 'ws', fresh: true }], 2000)).get('persistentvolumeclaims', 'shared', 'ws');
    assert.equal(fresh.state === 'found' ? fresh.created : undefined, '2026-11-29T17:00:00Z');
    const plain = (await reader.read([{ resource: 'persistentvolumeclaims', namespace: 'shared', name: 'ws' }], 2000)).get('persistentvolumeclaims', 'shared', 'ws');
    assert.equal(plain.state === 'found' ? plain.created : 'not found', undefined);
  });

  test("a claim read live carries its controlling owner, as a cached one does: one the ephemeral volume controller made for a pod is that pod's", async () => {
    const owner = { apiVersion: 'v1', kind: 'Pod', name: 'alpha-lab', uid: 'pod-uid', controller: true };
    server.put('persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'alpha-lab-scratch', namespace: 'shared', creationTimestamp: '2026-11-29T17:00:00Z', ownerReferences: [owner] }, spec: {} } as never);
    const reader = createObjectReader(server.kubeConfig());
    for (const fresh of [true, false]) {
      const found = (await reader.read([{ resource: 'persistentvolumeclaims', namespace: 'shared', name: 'alpha-lab-scratch', ...(fresh ? { fresh } : {}) }], 2000)).get('persistentvolumeclaims', 'shared', 'alpha-lab-scratch');
      assert.deepEqual(found.state === 'found' ? found.controller : undefined, { apiVersion: 'v1', kind: 'Pod', name: 'alpha-lab', uid: 'pod-uid' }, `fresh: ${fresh}`);
    }
  });

  test('a missing Secret is absent; a server that cannot answer with metadata only leaves it unknown', async () => {
    const reader = createObjectReader(server.kubeConfig());
    assert.equal((await reader.read([{ resource: 'secrets', namespace: 'shared', name: 'gone' }], 2000)).get('secrets', 'shared', 'gone').state, 'absent');
    server.faults.push({ path: /secrets\/creds$/, times: 1, answer: { status: 406, reason: 'NotAcceptable', message: 'only the following media types are accepted: application/json' } });
    const answer = (await reader.read([{ resource: 'secrets', namespace: 'shared', name: 'creds' }], 2000)).get('secrets', 'shared', 'creds');
    assert.equal(answer.state, 'unknown');
  });

  test("the pods that read a name, when the cache cannot tell: the namespace's pods listed page by page, those that name it kept as a cached pod is", async () => {
    const pod = (name: string, secret: string, namespace = 'shared') =>
      ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, uid: name, labels: { 'deed.dev/environment': 'beta' } }, spec: { serviceAccountName: 'ci', nodeName: 'node-1', containers: [{ name: 'c', image: 'i', envFrom: [{ secretRef: { name: secret } }] }] } }) as never;
    for (let i = 0; i < 5; i++) server.put('pods', pod(`reads-${i}`, i % 2 === 0 ? 'creds' : 'other'));
    server.put('pods', pod('elsewhere', 'creds', 'other-ns'));
    server.maxPage = 2;
    try {
      const reader = createObjectReader(server.kubeConfig());
      const answer = (await reader.read([{ resource: 'secrets', namespace: 'shared', name: 'creds', readers: true }], 2000)).readers('secrets', 'shared', 'creds');
      assert.equal(answer.state, 'known');
      if (answer.state !== 'known') return;
      assert.deepEqual(answer.readers.map((p) => p.name), ['reads-0', 'reads-2', 'reads-4']);
      assert.equal(answer.readers[0]!.found.serviceAccountName, 'ci');
      assert.deepEqual(answer.readers[0]!.found.metadata.labels, { 'deed.dev/environment': 'beta' });
      assert.ok(server.requests.filter((r) => r.path === '/api/v1/namespaces/shared/pods').length >= 3, 'paged');
      server.faults.push({ path: /namespaces\/shared\/pods$/, times: 10, answer: { status: 503, reason: 'ServiceUnavailable', message: 'injected' } });
      const failed = (await reader.read([{ resource: 'secrets', namespace: 'shared', name: 'creds', readers: true }], 500)).readers('secrets', 'shared', 'creds');
      assert.equal(failed.state, 'unknown');
    } finally {
      server.maxPage = Infinity;
    }
  });

  test("a Secret's readers, read live, are the pods that name it and the Ingresses that name it for TLS, from their own group", async () => {
    server.put('ingresses', { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'tls', uid: 'web', labels: { 'deed.dev/environment': 'beta' } }, spec: { tls: [{ hosts: ['a.example'], secretName: 'cert' }] } } as never);
    server.put('ingresses', { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'other', namespace: 'tls', uid: 'other' }, spec: { tls: [{ secretName: 'not-cert' }] } } as never);
    server.put('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mounts', namespace: 'tls', uid: 'mounts' }, spec: { containers: [{ name: 'c', image: 'i' }], volumes: [{ name: 'd', secret: { secretName: 'cert' } }] } } as never);
    const reader = createObjectReader(server.kubeConfig());
    const answer = (await reader.read([{ resource: 'secrets', namespace: 'tls', name: 'cert', readers: true }], 2000)).readers('secrets', 'tls', 'cert');
    assert.deepEqual(answer.state === 'known' ? answer.readers.map((r) => `${r.kind} ${r.name}`) : answer, ['Pod mounts', 'Ingress web']);
    assert.deepEqual(answer.state === 'known' ? answer.readers[1]!.found.metadata.labels : undefined, { 'deed.dev/environment': 'beta' });
    assert.ok(server.requests.some((r) => r.path === '/apis/networking.k8s.io/v1/namespaces/tls/ingresses'));
  });

  test("the readers of a claim's name, read live: the pods that mount it and the claims not yet provisioned that clone it; a claim read alone says what it clones, as the cache keeps it", async () => {
    const claim = (name: string, source: string, volumeName?: string) =>
      ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'live', uid: name, labels: { 'deed.dev/environment': 'beta' } }, spec: { accessModes: ['ReadWriteOnce'], dataSource: { kind: 'PersistentVolumeClaim', name: source }, ...(volumeName ? { volumeName } : {}) } }) as never;
    server.put('persistentvolumeclaims', claim('copy', 'data'));
    server.put('persistentvolumeclaims', claim('copied', 'data', 'pv-1'));
    server.put('persistentvolumeclaims', claim('other', 'elsewhere'));
    server.put('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mounts', namespace: 'live', uid: 'mounts' }, spec: { containers: [{ name: 'c', image: 'i' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] } } as never);
    const reader = createObjectReader(server.kubeConfig());
    const answer = (await reader.read([{ resource: 'persistentvolumeclaims', namespace: 'live', name: 'data', readers: true }], 2000)).readers('persistentvolumeclaims', 'live', 'data');
    assert.deepEqual(answer.state === 'known' ? answer.readers.map((r) => `${r.kind} ${r.name}`) : answer, ['Pod mounts', 'PersistentVolumeClaim copy']);
    assert.deepEqual(answer.state === 'known' ? answer.readers[1]!.found.metadata.labels : undefined, { 'deed.dev/environment': 'beta' });
    // A Secret's readers are the pods only: no claim is listed.
    const before = server.requests.filter((r) => r.path === '/api/v1/namespaces/live/persistentvolumeclaims').length;
    await reader.read([{ resource: 'secrets', namespace: 'live', name: 'data', readers: true }], 2000);
    assert.equal(server.requests.filter((r) => r.path === '/api/v1/namespaces/live/persistentvolumeclaims').length, before);
    const one = (await reader.read([{ resource: 'persistentvolumeclaims', namespace: 'live', name: 'copy' }], 2000)).get('persistentvolumeclaims', 'live', 'copy');
    assert.deepEqual(one.state === 'found' ? one.reads?.claims : one, ['data']);
  });
  test("what a pod names past a review's GETs, listed: one list per kind and namespace, page by page, Secrets as metadata only with no fallback, a name the list lacks absent", async () => {
    const secret = (name: string, namespace = 'listed') => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, uid: name, creationTimestamp: '2026-12-06T10:00:00Z', labels: { 'deed.dev/environment': 'beta' } }, data: { token: 'c2VjcmV0' } }) as never;
    for (const name of ['a', 'b', 'c', 'd']) server.put('secrets', secret(name));
    server.put('secrets', secret('elsewhere', 'other-ns'));
    server.put('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'listed', uid: 'x' }, data: { k: 'v' } } as never);
    server.maxPage = 2;
    try {
      const reader = createObjectReader(server.kubeConfig());
      const keys = [
        { resource: 'secrets' as const, namespace: 'listed', name: 'a', fresh: true as const },
        { resource: 'secrets' as const, namespace: 'listed', name: 'd', fresh: true as const },
        { resource: 'secrets' as const, namespace: 'listed', name: 'missing', fresh: true as const },
        { resource: 'secrets' as const, namespace: 'listed', name: 'elsewhere', fresh: true as const },
        { resource: 'configmaps' as const, namespace: 'listed', name: 'x' },
      ];
      const before = server.requests.length;
      const lookup = await reader.readListed!(keys, 2000);
      const a = lookup.get('secrets', 'listed', 'a');
      assert.deepEqual(a, { state: 'found', metadata: { uid: 'a', labels: { 'deed.dev/environment': 'beta' } }, created: '2026-12-06T10:00:00Z' });
      assert.equal(lookup.get('secrets', 'listed', 'd').state, 'found', 'on the second page');
      assert.equal(lookup.get('secrets', 'listed', 'missing').state, 'absent');
      assert.equal(lookup.get('secrets', 'listed', 'elsewhere').state, 'absent', "another namespace's is not listed");
      assert.equal(lookup.get('configmaps', 'listed', 'x').state, 'found');
      assert.equal(JSON.stringify([...keys.map((k) => lookup.get(k.resource, k.namespace, k.name))]).includes('c2VjcmV0'), false);
      const sent = server.requests.slice(before);
      assert.deepEqual([...new Set(sent.map((r) => r.path))].sort(), ['/api/v1/namespaces/listed/configmaps', '/api/v1/namespaces/listed/secrets']);
      assert.equal(sent.filter((r) => r.path.endsWith('/secrets')).length, 2, 'two pages of two');
      for (const r of sent.filter((r) => r.path.endsWith('/secrets'))) assert.equal(r.accept, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', 'no fallback to whole Secrets');
      server.faults.push({ path: /namespaces\/listed\/secrets$/, times: 10, answer: { status: 503, reason: 'ServiceUnavailable', message: 'injected' } });
      assert.equal((await reader.readListed!(keys.slice(0, 1), 300)).get('secrets', 'listed', 'a').state, 'unknown', 'a list that fails answers unknown');
    } finally {
      server.maxPage = Infinity;
      server.faults.length = 0;
    }
  });

  test("a claim listed past the gets carries what a claim read by get does: its controlling owner and the claim it clones", async () => {
    const owner = { apiVersion: 'v1', kind: 'Pod', name: 'alpha-lab', uid: 'pod-uid', controller: true };
    server.put('persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'listed-scratch', namespace: 'claims-listed', uid: 'c1', ownerReferences: [owner] }, spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'data' } } } as never);
    const key = { resource: 'persistentvolumeclaims' as const, namespace: 'claims-listed', name: 'listed-scratch' };
    const [listed, got] = [(await createObjectReader(server.kubeConfig()).readListed!([key], 2000)).get(key.resource, key.namespace, key.name), (await createObjectReader(server.kubeConfig()).read([key], 2000)).get(key.resource, key.namespace, key.name)];
    assert.equal(listed.state, 'found');
    assert.deepEqual(listed, got);
    assert.deepEqual(listed.state === 'found' ? listed.controller : undefined, { apiVersion: 'v1', kind: 'Pod', name: 'alpha-lab', uid: 'pod-uid' });
  });

  test(`a list goes through at most ${MAX_LISTED_OBJECTS} objects: past them, its names are unknown`, async () => {
    for (let i = 0; i <= MAX_LISTED_OBJECTS; i++) server.put('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'big', uid: `cm-${i}` } } as never);
    server.maxPage = 500;
    try {
      const answer = (await createObjectReader(server.kubeConfig()).readListed!([{ resource: 'configmaps', namespace: 'big', name: `cm-${MAX_LISTED_OBJECTS}` }], 5000)).get('configmaps', 'big', `cm-${MAX_LISTED_OBJECTS}`);
      assert.match(answer.state === 'unknown' ? answer.reason : answer.state, new RegExp(`lists at most ${MAX_LISTED_OBJECTS} configmaps of a namespace for one review`));
    } finally {
      server.maxPage = Infinity;
    }
  });

  test(`at most ${MAX_LISTS_IN_FLIGHT} lists at once: the next waits its turn, and one whose review cannot wait that long is unknown`, async () => {
    const own = await new FakeApiServer().start();
    try {
      for (const ns of ['n1', 'n2', 'n3']) own.put('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns, uid: ns } } as never);
      own.faults.push({ path: /namespaces\/n[12]\/secrets$/, answer: { delayMs: 400 } });
      const reader = createObjectReader(own.kubeConfig());
      const key = (namespace: string) => ({ resource: 'secrets' as const, namespace, name: 's' });
      const slow = reader.readListed!([key('n1'), key('n2')], 5000);
      await new Promise((r) => setTimeout(r, 50));
      const hurried = await reader.readListed!([key('n3')], 100);
      const n3 = hurried.get('secrets', 'n3', 's');
      assert.match(n3.state === 'unknown' ? n3.reason : n3.state, /listing secrets for other reviews/);
      const patient = reader.readListed!([key('n3')], 5000);
      const [both, later] = await Promise.all([slow, patient]);
      assert.equal(both.get('secrets', 'n1', 's').state, 'found');
      assert.equal(both.get('secrets', 'n2', 's').state, 'found');
      assert.equal(later.get('secrets', 'n3', 's').state, 'found', 'its turn came');
      assert.equal(own.maxInFlight.get('GET'), MAX_LISTS_IN_FLIGHT);
    } finally {
      await own.close();
    }
  });
  test('without --cache-secrets (RBAC grants get alone on Secrets) no Secret is listed: past the gets, a Secret is unknown, and says why', async () => {
    const before = server.requests.length;
    const answer = (await createObjectReader(server.kubeConfig(), { listSecrets: false }).readListed!([{ resource: 'secrets', namespace: 'shared', name: 'creds' }], 1000)).get('secrets', 'shared', 'creds');
    assert.match(answer.state === 'unknown' ? answer.reason : answer.state, /does not list secrets \(--cache-secrets=false\)/);
    assert.equal(server.requests.length, before);
  });
  test("a few large objects cost a few small pages, not every page after them: the next page is sized from the last's objects", async () => {
    const own = await new FakeApiServer().start();
    try {
      const pad = 'x'.repeat(300 * 1024);
      // A tenant's 40 Secrets of 300 KiB of metadata, listed first (the API server lists by key), then 1,000 small ones.
      for (let i = 0; i < 40; i++) own.put('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `a-big-${String(i).padStart(2, '0')}`, namespace: 'shared', uid: `big-${i}`, annotations: { pad } } } as never);
      for (let i = 0; i < 1000; i++) own.put('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `b-${String(i).padStart(4, '0')}`, namespace: 'shared', uid: `s-${i}` } } as never);
      const lookup = await createObjectReader(own.kubeConfig()).readListed!([{ resource: 'secrets', namespace: 'shared', name: 'b-0999', fresh: true }], 20_000);
      assert.equal(lookup.get('secrets', 'shared', 'b-0999').state, 'found');
      // A first page too large for the bound, asked again smaller; a page per large object (each fills a page's
      // 96 KiB); then pages of the small ones at full size. 349 requests when a shrunk limit stayed for the rest.
      assert.ok(own.requests.length <= 40 + 15, `${own.requests.length} requests for one list`);
    } finally {
      await own.close();
    }
  });

  test("one namespace's lists take one turn at a time: a tenant's slow lists in its namespace leave the other turn to another namespace's review", async () => {
    const own = await new FakeApiServer().start();
    try {
      for (const ns of ['slow', 'other']) own.put('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns, uid: ns } } as never);
      own.faults.push({ path: /namespaces\/slow\/secrets$/, answer: { delayMs: 500 } });
      const reader = createObjectReader(own.kubeConfig());
      const key = (namespace: string) => ({ resource: 'secrets' as const, namespace, name: 's' });
      const slow = Array.from({ length: 4 }, () => reader.readListed!([key('slow')], 3000));
      await new Promise((r) => setTimeout(r, 50));
      const other = (await reader.readListed!([key('other')], 200)).get('secrets', 'other', 's');
      assert.equal(other.state, 'found', JSON.stringify(other));
      for (const answer of await Promise.all(slow)) assert.equal(answer.get('secrets', 'slow', 's').state, 'found', 'each in its turn');
      assert.equal(own.maxInFlight.get('GET'), MAX_LISTS_IN_FLIGHT, 'no more lists at once than the bound');
    } finally {
      await own.close();
    }
  });
});
