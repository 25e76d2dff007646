// `deed keys usage` against the fake API server: which keys the managed objects still
// carry, read as the reaper reads (metadata only, paged), across every environment.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess, type InProcessResult } from './cli-process.js';
import { stringify } from 'yaml';
import { registerKeys } from '../src/cli/keys.js';
import { signV1, signV2 } from '../src/policy/stamps/attestation.js';
import type { KeyUsage } from '../src/keys/usage.js';
import type { KubeObject } from '../src/admission/types.js';
import { FakeApiServer } from './fake-apiserver.js';
import { KEYS, stamped } from './reaper-helpers.js';

const OLD = Buffer.from('the-key-before-rotation-0123456789abcdef');
const NEW = Buffer.from('the-key-after-rotation-0123456789abcdef!');
const GONE = Buffer.from('a-key-retired-long-ago-0123456789abcdef!');

let server: FakeApiServer;
const dir = mkdtempSync(join(tmpdir(), 'deed-keys-'));
const kubeconfig = join(dir, 'kubeconfig');
const policy = (attestation: object) => {
  const file = join(dir, `policy-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify({ environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'] }], attestation }));
  return file;
};
writeFileSync(join(dir, 'key'), OLD);
writeFileSync(join(dir, 'next'), NEW);
/** Step 2 of the rotation: `next` signs, `key` verifies. */
const STEP2 = policy({ keys: [{ id: 'key', file: join(dir, 'key') }, { id: 'next', file: join(dir, 'next') }], signingKey: 'next' });

const OPTED_IN = { 'deed.dev/sandbox': 'enabled' };

before(async () => {
  server = await new FakeApiServer().start();
  server.writeKubeConfig(kubeconfig);
  server.putNamespace('sandbox-a', OPTED_IN);
  server.putNamespace('sandbox-b', OPTED_IN);
  server.putNamespace('tenant-c'); // not opted in: outside the review scope
  server.putNamespace('deed-system', OPTED_IN); // Deed's own: never selected, whatever its labels
});

after(async () => {
  await server.close();
});

beforeEach(() => {
  server.requests.length = 0;
  server.faults.length = 0;
  for (const [resource, name] of [['pods', 'v1-pod'], ['pods', 'key-pod'], ['secrets', 'next-secret'], ['persistentvolumeclaims', 'next-pvc'], ['pods', 'beta-pod'], ['pods', 'gone-pod'], ['pods', 'tampered'], ['secrets', 'bare']] as const)
    server.remove(resource, name === 'beta-pod' ? 'sandbox-b' : 'sandbox-a', name);
  for (const namespace of ['tenant-c', 'deed-system']) server.remove('pods', namespace, 'planted');
  server.remove('leases', 'sandbox-a', 'run-42');
  server.remove('widgets', 'sandbox-a', 'w');
  server.put('pods', stamped({ kind: 'Pod', name: 'v1-pod', signingKey: OLD }));
  server.put('pods', stamped({ kind: 'Pod', name: 'key-pod', attest: (s) => signV2(OLD, 'key', s) }));
  server.put('secrets', stamped({ kind: 'Secret', name: 'next-secret', attest: (s) => signV2(NEW, 'next', s) }));
  server.put('persistentvolumeclaims', stamped({ kind: 'PersistentVolumeClaim', name: 'next-pvc', owner: null, attest: (s) => signV2(NEW, 'next', s) }));
  server.put('pods', stamped({ kind: 'Pod', name: 'beta-pod', namespace: 'sandbox-b', environment: 'beta', attest: (s) => signV2(NEW, 'next', s) }));
  server.put('pods', stamped({ kind: 'Pod', name: 'gone-pod', attest: (s) => signV2(GONE, 'gone', s) }));
  const tampered = stamped({ kind: 'Pod', name: 'tampered', attest: (s) => signV2(NEW, 'next', s) });
  tampered.metadata.annotations![KEYS.expiresAt] = '2099-01-01T00:00:00Z';
  server.put('pods', tampered);
  const bare = stamped({ kind: 'Secret', name: 'bare' });
  delete bare.metadata.annotations![KEYS.attestation];
  server.put('secrets', bare);
});

/** An object of `kind` stamped for alpha (no owner) and signed v2 by `key` under `id`: a run Lease, a custom resource. */
function stampedAs(kind: string, name: string, key: Buffer, id: string): KubeObject {
  return stamped({ kind: 'Pod', name, owner: null, attest: (s) => signV2(key, id, { ...s, kind }) });
}

function usage(args: string[]): Promise<InProcessResult> {
  return runInProcess(registerKeys, ['keys', 'usage', '--kubeconfig', kubeconfig, ...args]);
}

describe('deed keys usage', () => {
  test('counts, per ring key, the managed objects of every environment whose attestation it verifies, v1 ones attributed to their key', async () => {
    const run = await usage(['--config', STEP2, '-o', 'json']);
    assert.equal(run.error, undefined);
    assert.equal(run.exitCode, undefined, 'exit 0');
    const u = JSON.parse(run.stdout) as KeyUsage;
    assert.deepEqual(u.keys, [
      { key: 'key', role: 'verify-only', objects: 2, v1: 1 },
      { key: 'next', role: 'signing', objects: 3, v1: 0 },
      { key: 'gone', role: 'not-in-ring', objects: 1, v1: 0 },
    ]);
    assert.equal(u.unverifiable, 2, 'the retired key\'s pod and the tampered one');
    assert.equal(u.unattested, 1);
    assert.deepEqual(u.retirable, []);
    assert.equal('objects' in u, false, 'objects only with --show-objects');
  });

  test('reads metadata only, by the managed label alone (all environments), in all namespaces, of every namespaced kind discovery serves, after the opted-in namespaces', async () => {
    await usage(['--config', STEP2]);
    const [namespaces, ...rest] = server.requests.filter((r) => r.method === 'GET');
    assert.equal(namespaces!.path, '/api/v1/namespaces');
    assert.equal(namespaces!.query.get('labelSelector'), 'deed.dev/sandbox=enabled');
    const discovery = rest.filter((r) => /^\/api(s)?(\/[^/]+)?(\/v1)?$/.test(r.path) && !r.path.endsWith('/namespaces'));
    assert.deepEqual(discovery.map((r) => r.path).sort(), ['/api/v1', '/apis', '/apis/coordination.k8s.io/v1', '/apis/example.com/v1', '/apis/networking.k8s.io/v1']);
    const lists = rest.filter((r) => !discovery.includes(r));
    assert.deepEqual(
      lists.map((r) => r.path).sort(),
      ['/api/v1/configmaps', '/api/v1/persistentvolumeclaims', '/api/v1/pods', '/api/v1/secrets', '/apis/coordination.k8s.io/v1/leases', '/apis/example.com/v1/widgets', '/apis/networking.k8s.io/v1/ingresses', '/apis/networking.k8s.io/v1/networkpolicies'],
      'every namespaced kind with the list verb: no Namespaces (cluster-scoped), no pods/status (a subresource)',
    );
    for (const r of lists) {
      assert.equal(r.query.get('labelSelector'), 'deed.dev/managed=true');
      assert.match(r.accept, /as=PartialObjectMetadataList/);
    }
  });

  test('once no object carries the verify-only key, it is reported retirable', async () => {
    for (const name of ['v1-pod', 'key-pod']) server.remove('pods', 'sandbox-a', name);
    const run = await usage(['--config', STEP2]);
    assert.match(run.stdout, /^key +verify-only +0 +0$/m);
    assert.match(run.stdout, /^next +signing +3 +0$/m);
    assert.match(run.stdout, /^retirable: key \(verify-only, carried by no managed object\)$/m);
  });

  test('a run Lease signed by the verify-only key keeps it in use, though every sandbox kind has moved on (a retired key would make its run lease-foreign)', async () => {
    for (const name of ['v1-pod', 'key-pod']) server.remove('pods', 'sandbox-a', name);
    server.put('leases', stampedAs('Lease', 'run-42', OLD, 'key'));
    const run = await usage(['--config', STEP2, '--show-objects']);
    assert.equal(run.exitCode, undefined, 'exit 0');
    assert.match(run.stdout, /^key +verify-only +1 +0$/m);
    assert.match(run.stdout, /^retirable: none$/m);
    assert.match(run.stdout, /^verified Lease\.coordination\.k8s\.io sandbox-a\/run-42 \S+ key=key format=v2$/m);
  });

  test('so does a custom resource (the default row stamps it) signed by the verify-only key', async () => {
    for (const name of ['v1-pod', 'key-pod']) server.remove('pods', 'sandbox-a', name);
    server.put('widgets', stampedAs('Widget', 'w', OLD, 'key'));
    const u = JSON.parse((await usage(['--config', STEP2, '-o', 'json', '--show-objects'])).stdout) as KeyUsage;
    assert.deepEqual(u.keys[0], { key: 'key', role: 'verify-only', objects: 1, v1: 0 });
    assert.deepEqual(u.retirable, []);
    assert.deepEqual(
      u.objects.filter((o) => o.kind === 'Widget').map((o) => [o.group, o.name, o.status, o.key]),
      [['example.com', 'w', 'verified', 'key']],
    );
  });

  test('a group version whose kinds cannot be discovered makes the counts incomplete: exit 1, it is named, and no key is retirable', async () => {
    for (const name of ['v1-pod', 'key-pod']) server.remove('pods', 'sandbox-a', name);
    server.faults.push({ method: 'GET', path: /^\/apis\/example\.com\/v1$/, answer: { status: 503, reason: 'ServiceUnavailable', message: 'the server is currently unable to handle the request' } });
    const run = await usage(['--config', STEP2]);
    assert.equal(run.exitCode, 1);
    assert.match(run.stdout, /^error: could not list the kinds of example\.com\/v1 in the cluster: .*HTTP 503.*the counts are incomplete$/m);
    assert.doesNotMatch(run.stdout, /retirable/);
  });

  test('a custom kind whose list is refused is named in the error, and no key is retirable', async () => {
    for (const name of ['v1-pod', 'key-pod']) server.remove('pods', 'sandbox-a', name);
    server.faults.push({ method: 'GET', path: /\/widgets$/, answer: { status: 403, reason: 'Forbidden', message: 'cannot list widgets' } });
    const run = await usage(['--config', STEP2]);
    assert.equal(run.exitCode, 1);
    assert.match(run.stdout, /^error: could not list Widget\.example\.com in \*: .*cannot list widgets; the counts are incomplete$/m);
    assert.doesNotMatch(run.stdout, /retirable/);
  });

  test('--show-objects lists each object with its key and why it does not verify', async () => {
    const run = await usage(['--config', STEP2, '--show-objects']);
    assert.match(run.stdout, /^verified Pod sandbox-a\/v1-pod \S+ key=key format=v1$/m);
    assert.match(run.stdout, /^unverifiable Pod sandbox-a\/gone-pod \S+ key=gone format=v2 \(names key "gone", which is not in the key ring/m);
    assert.match(run.stdout, /^unverifiable Pod sandbox-a\/tampered \S+ key=next format=v2 \(does not verify over the stamps under key "next"/m);
    assert.match(run.stdout, /^unattested Secret sandbox-a\/bare \S+ key=- format=none \(no attestation\)$/m);
  });

  test('--without-keys counts by the key each attestation names, and v1 ones as "(v1)", which keeps every key from being called retirable', async () => {
    const run = await usage(['--config', policy({ keys: [{ id: 'key', file: '/nonexistent/key' }, { id: 'next', file: '/nonexistent/next' }], signingKey: 'next' }), '--without-keys', '-o', 'json']);
    assert.equal(run.error, undefined, 'no key material is read');
    const u = JSON.parse(run.stdout) as KeyUsage;
    assert.deepEqual(u.keys, [
      { key: 'key', role: 'verify-only', objects: 1, v1: 0 },
      { key: 'next', role: 'signing', objects: 4, v1: 0 },
      { key: '(v1)', role: 'not-in-ring', objects: 1, v1: 1 },
      { key: 'gone', role: 'not-in-ring', objects: 1, v1: 0 },
    ]);
    assert.equal(u.verified, false);
    assert.deepEqual(u.retirable, []);
  });

  test('a failed list makes the counts incomplete: exit 1, and no key is called retirable', async () => {
    for (const name of ['v1-pod', 'key-pod']) server.remove('pods', 'sandbox-a', name);
    server.faults.push({ method: 'GET', path: /\/secrets$/, answer: { status: 500, reason: 'InternalError', message: 'boom' } });
    const run = await usage(['--config', STEP2]);
    assert.equal(run.exitCode, 1);
    assert.match(run.stdout, /^error: could not list Secret in \*: .*the counts are incomplete$/m);
    assert.doesNotMatch(run.stdout, /retirable/);
  });

  test('stamps verifying under the old key, planted outside the review scope, are listed as outside it and never counted: the key stays retirable', async () => {
    for (const name of ['v1-pod', 'key-pod']) server.remove('pods', 'sandbox-a', name);
    // What a forged review for an uncovered namespace got signed: alpha's stamps, under the cluster's old key.
    for (const namespace of ['tenant-c', 'deed-system']) server.put('pods', stamped({ kind: 'Pod', name: 'planted', namespace, attest: (st) => signV2(OLD, 'key', st) }));
    const run = await usage(['--config', STEP2, '-o', 'json', '--show-objects']);
    assert.equal(run.exitCode, undefined, 'exit 0');
    const u = JSON.parse(run.stdout) as KeyUsage;
    assert.deepEqual(u.keys[0], { key: 'key', role: 'verify-only', objects: 0, v1: 0 });
    assert.equal(u.outsideScope, 2);
    assert.deepEqual(u.retirable, ['key']);
    const planted = u.objects.filter((obj) => obj.name === 'planted');
    assert.deepEqual(planted.map((obj) => [obj.namespace, obj.status, obj.key]), [['deed-system', 'outside-scope', 'key'], ['tenant-c', 'outside-scope', 'key']].sort());
    assert.match(planted[0]!.reason!, /outside the review scope: Deed does not review writes there, so anyone can write stamps/);
    const text = await usage(['--config', STEP2]);
    assert.match(text.stdout, /^outside the review scope: 2 \(stamped objects in namespaces Deed does not review, where anyone can write stamps: not counted\)$/m);
  });

  test('--deed-namespace names the namespace the webhooks never select', async () => {
    server.put('pods', stamped({ kind: 'Pod', name: 'planted', namespace: 'deed-system', attest: (st) => signV2(OLD, 'key', st) }));
    const u = JSON.parse((await usage(['--config', STEP2, '-o', 'json', '--deed-namespace', 'other'])).stdout) as KeyUsage;
    assert.equal(u.outsideScope, 0, 'deed-system is opted in, and Deed lives elsewhere');
    assert.deepEqual(u.keys[0], { key: 'key', role: 'verify-only', objects: 3, v1: 1 });
  });

  test('when the namespaces cannot be listed, no object counts: exit 1, and no key is called retirable', async () => {
    server.faults.push({ method: 'GET', path: /^\/api\/v1\/namespaces$/, answer: { status: 403, reason: 'Forbidden', message: 'cannot list namespaces' } });
    const run = await usage(['--config', STEP2, '-o', 'json']);
    assert.equal(run.exitCode, 1);
    const u = JSON.parse(run.stdout) as KeyUsage;
    assert.equal(u.keys.reduce((n, k) => n + k.objects, 0), 0);
    assert.equal(u.outsideScope, 8);
    assert.deepEqual(u.retirable, []);
    assert.match(u.errors[0]!.message, /cannot list namespaces/);
  });

  test('a policy with no key and no --attestation-key is refused before anything is listed', async () => {
    const run = await usage(['--config', policy({})]);
    assert.match(run.error?.message ?? '', /needs the attestation key ring/);
    assert.equal(server.requests.length, 0);
  });

  test('the pre-ring keyFile policy reports its one key, id "key", with the v1 objects under it', async () => {
    const run = await usage(['--config', policy({ keyFile: join(dir, 'key') }), '-o', 'json']);
    const u = JSON.parse(run.stdout) as KeyUsage;
    assert.deepEqual(u.keys[0], { key: 'key', role: 'signing', objects: 2, v1: 1 });
  });
});

test('signV1 is what the pre-ring release wrote', () => {
  // Guards the fixtures above: the v1 objects here are what an older Deed left in the cluster.
  assert.match(signV1(OLD, { kind: 'Pod', namespace: 'n', environment: 'e', nonce: 'x' }), /^v1:[A-Za-z0-9_-]{43}$/);
});
