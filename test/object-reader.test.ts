// The webhook's reads of the objects a review names: Secrets as metadata only, with no
// fallback that would bring their data; a run lease as metadata; NotFound is absent,
// anything else unknown.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createObjectReader } from '../src/kube/object-reader.js';
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
});
