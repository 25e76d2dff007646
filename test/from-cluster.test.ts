// deed reap, audit and keys usage read the policy and key ring the install runs (its policy
// ConfigMap and attestation Secret in Deed's namespace) when no file names them, as the
// chart's NOTES print the reaper's dry run; files given still win. Against the fake API
// server, in-process through each command's own registration.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { KubeObject } from '../src/admission/types.js';
import { registerAudit } from '../src/cli/audit.js';
import { registerKeys } from '../src/cli/keys.js';
import { registerReap } from '../src/cli/reap.js';
import { renderManifests } from '../src/install/manifests.js';
import { signV2 } from '../src/policy/stamps/attestation.js';
import { runInProcess, type InProcessResult } from './cli-process.js';
import { FakeApiServer, type RecordedRequest } from './fake-apiserver.js';
import { TEST_KEY } from './helpers.js';
import { iso, stamped } from './reaper-helpers.js';

const POLICY = `environments:
  - id: alpha
    serviceAccounts: ["sandbox-a:runner"]
  - id: beta
    serviceAccounts: ["sandbox-b:*"]
`;
const REAPER = 'system:serviceaccount:deed-system:deed-reaper-alpha';
const OTHER_KEY = Buffer.from('another-release-attestation-key-0123456789');

let server: FakeApiServer;
const dir = mkdtempSync(join(tmpdir(), 'deed-from-cluster-'));
const kubeconfig = join(dir, 'kubeconfig');
const keyFile = join(dir, 'key');
const policyFile = join(dir, 'policy.yaml');

/** The policy ConfigMap exactly as `deed manifests` renders it (labels, name, the policy with the key at its mounted path). */
const installedConfigMap = (): KubeObject => {
  const cm = renderManifests({ namespace: 'deed-system', image: 'deed:test', policy: POLICY, reaperEnvironments: ['alpha'] }).find((o) => o.kind === 'ConfigMap')!;
  return structuredClone(cm) as unknown as KubeObject;
};
const keySecret = (name: string, data: Record<string, Buffer>, labels: Record<string, string> = {}): KubeObject =>
  ({ kind: 'Secret', metadata: { name, namespace: 'deed-system', labels }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.toString('base64')])) }) as unknown as KubeObject;

/** What the chart renders for `helm install foo`: fullname foo-deed, instance foo, a key ring (v2). */
function putRelease(release: string, fullname: string, key: Buffer): void {
  const cm = installedConfigMap();
  cm.metadata.name = `${fullname}-policy`;
  cm.metadata.labels = { ...cm.metadata.labels, 'app.kubernetes.io/instance': release };
  (cm as unknown as { data: Record<string, string> }).data['policy.yaml'] = stringify({
    labelPrefix: 'deed.dev',
    environments: [{ id: 'gamma', serviceAccounts: ['sandbox-c:runner'] }],
    attestation: { keys: [{ id: 'k1' }], signingKey: 'k1' },
  });
  server.put('configmaps', cm);
  server.put('secrets', keySecret(`${fullname}-attestation`, { k1: key }, { 'app.kubernetes.io/instance': release }));
}

const installReads = (r: RecordedRequest) => r.path.startsWith('/api/v1/namespaces/deed-system/');

before(async () => {
  server = await new FakeApiServer().start();
  server.writeKubeConfig(kubeconfig);
  writeFileSync(keyFile, TEST_KEY);
  writeFileSync(policyFile, stringify({ environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }], attestation: { keyFile } }));
});

after(async () => {
  await server.close();
});

beforeEach(() => {
  server.requests.length = 0;
  server.faults.length = 0;
  for (const name of ['deed-policy', 'foo-deed-policy', 'bar-policy']) server.remove('configmaps', 'deed-system', name);
  for (const name of ['deed-attestation', 'foo-deed-attestation', 'bar-attestation', 'byo-keys']) server.remove('secrets', 'deed-system', name);
  server.remove('pods', 'sandbox-a', 'sbx-1');
  server.remove('pods', 'sandbox-c', 'gamma-1');
  // alpha's leak, its runner gone, signed with the install's key (TEST_KEY, the pre-ring `key`).
  server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-60, Date.now()) }));
  server.put('configmaps', installedConfigMap());
  server.put('secrets', keySecret('deed-attestation', { key: Buffer.from(`${TEST_KEY.toString('latin1')}\n`, 'latin1') }));
});

const reap = (args: string[]): Promise<InProcessResult> => runInProcess(registerReap, ['reap', '--kubeconfig', kubeconfig, ...args]);
const keysUsage = (args: string[]): Promise<InProcessResult> => runInProcess(registerKeys, ['keys', 'usage', '--kubeconfig', kubeconfig, ...args]);
const audit = (args: string[]): Promise<InProcessResult> => runInProcess(registerAudit, ['audit', '--kubeconfig', kubeconfig, ...args]);

/** No output, no error, ever quotes key material: neither the key nor its base64. */
function assertNoKeyMaterial(run: InProcessResult): void {
  for (const key of [TEST_KEY, OTHER_KEY])
    for (const form of [key.toString('latin1'), key.toString('base64')]) assert.ok(!`${run.stdout}${run.stderr}${run.error?.message ?? ''}`.includes(form), 'key material in the output');
}

describe('deed reap without --config or --attestation-key', () => {
  test("reads the installed policy and key ring, as the kubeconfig's own identity, and sweeps as --as: the NOTES' dry run works as printed", async () => {
    const run = await reap(['--environment', 'alpha', '--as', REAPER]);
    assert.equal(run.error, undefined, run.error?.message);
    assert.equal(run.exitCode, undefined, `exit 0:\n${run.stdout}`);
    assert.match(run.stdout, /^reap Pod sandbox-a\/sbx-1 uid=\S+: owner sandbox-a\/runner-0 .* is gone \(NotFound\).* \[would-delete\]$/m, 'the attestation verified with the Secret\'s key');
    const reads = server.requests.filter(installReads);
    assert.deepEqual(
      reads.map((r) => `${r.method} ${r.path}`),
      ['GET /api/v1/namespaces/deed-system/configmaps', 'GET /api/v1/namespaces/deed-system/secrets/deed-attestation'],
    );
    assert.equal(reads[0]!.query.get('labelSelector'), 'app.kubernetes.io/name=deed,app.kubernetes.io/component=webhook');
    assert.ok(reads.every((r) => r.impersonate === undefined), 'the install is read as the caller');
    const sweep = server.requests.filter((r) => !installReads(r));
    assert.ok(sweep.length > 0 && sweep.every((r) => r.impersonate === REAPER), 'the sweep runs as --as');
    assert.equal(server.deletes().length, 0, 'a dry run');
    assertNoKeyMaterial(run);
  });

  test('--from-cluster says the same explicitly; an environment the installed policy lacks is refused before the key Secret is read', async () => {
    const run = await reap(['--environment', 'alpah', '--from-cluster']);
    assert.match(run.error?.message ?? '', /^environment "alpah" is not in the policy \(alpha, beta\), read from ConfigMap deed-system\/deed-policy; pass --release NAME or --deed-namespace NS/);
    assert.ok(!server.requests.some((r) => r.path.includes('/secrets/')), 'no key material read');
  });

  test('--release picks one of several installs in the namespace; without it the error names them and the flag', async () => {
    putRelease('foo', 'foo-deed', OTHER_KEY);
    const several = await reap(['--environment', 'alpha']);
    assert.equal(several.error?.message, 'several Deed installs in namespace deed-system hold a policy: deed-policy (release deed), foo-deed-policy (release foo); pass --release NAME');
    server.requests.length = 0;
    server.put('pods', stamped({ kind: 'Pod', namespace: 'sandbox-c', name: 'gamma-1', environment: 'gamma', expiresAt: iso(-60, Date.now()), attest: (s) => signV2(OTHER_KEY, 'k1', s) }));
    const picked = await reap(['--environment', 'gamma', '--release', 'foo', '-n', 'sandbox-c']);
    assert.equal(picked.error, undefined, picked.error?.message);
    assert.match(picked.stdout, /^reap Pod sandbox-c\/gamma-1 .*\[would-delete\]$/m, "verified with foo's ring (v2, key k1)");
    assert.equal(server.requests.find(installReads)!.query.get('labelSelector'), 'app.kubernetes.io/name=deed,app.kubernetes.io/component=webhook,app.kubernetes.io/instance=foo');
    assert.ok(server.requests.some((r) => r.path === '/api/v1/namespaces/deed-system/secrets/foo-deed-attestation'));
    assertNoKeyMaterial(picked);
  });

  test('--attestation-secret names a key Secret of another name (the chart\'s attestation.existingSecret)', async () => {
    server.remove('secrets', 'deed-system', 'deed-attestation');
    server.put('secrets', keySecret('byo-keys', { key: TEST_KEY }));
    const run = await reap(['--environment', 'alpha', '--attestation-secret', 'byo-keys']);
    assert.equal(run.error, undefined, run.error?.message);
    assert.match(run.stdout, /\[would-delete\]$/m);
  });

  test('--from-cluster with --attestation-key: the policy from the cluster, the key from the file, the Secret never read', async () => {
    const run = await reap(['--environment', 'alpha', '--from-cluster', '--attestation-key', keyFile]);
    assert.equal(run.error, undefined, run.error?.message);
    assert.match(run.stdout, /\[would-delete\]$/m);
    assert.deepEqual(server.requests.filter(installReads).map((r) => r.path), ['/api/v1/namespaces/deed-system/configmaps']);
  });

  const failures: Array<[string, () => void, string[], RegExp]> = [
    [
      'no installed policy in the namespace: names --deed-namespace, --release and --config',
      () => server.remove('configmaps', 'deed-system', 'deed-policy'),
      [],
      /^no installed Deed policy in namespace deed-system: no ConfigMap there labelled app\.kubernetes\.io\/name=deed,app\.kubernetes\.io\/component=webhook holds policy\.yaml; pass --deed-namespace with the namespace Deed is installed in \(and --release NAME\), or --config FILE with the policy file$/,
    ],
    [
      'RBAC refuses the ConfigMaps: says which identity reads them, and the flag to use instead',
      () => server.faults.push({ method: 'GET', path: /\/namespaces\/deed-system\/configmaps$/, answer: { status: 403, reason: 'Forbidden', message: 'configmaps is forbidden: User "ops" cannot list resource "configmaps"' } }),
      [],
      /^cannot read Deed's installed policy \(the ConfigMap labelled .* in deed-system\): list configmaps in deed-system: HTTP 403: configmaps is forbidden: User "ops" cannot list resource "configmaps"; it is read as the kubeconfig's own identity, not as --as: grant that identity the read, or pass --config FILE with the policy file$/,
    ],
    [
      'no key Secret: names --attestation-secret and --attestation-key',
      () => server.remove('secrets', 'deed-system', 'deed-attestation'),
      [],
      /^the attestation key ring of ConfigMap deed-system\/deed-policy is not there: no Secret deed-system\/deed-attestation; pass --attestation-secret NAME .*, or --attestation-key FILE$/,
    ],
    [
      'RBAC refuses the Secret to the caller: names --attestation-key',
      () => server.faults.push({ method: 'GET', path: /\/secrets\/deed-attestation$/, answer: { status: 403, reason: 'Forbidden', message: 'secrets "deed-attestation" is forbidden' } }),
      ['--as', REAPER],
      /^cannot read the attestation key ring \(Secret deed-system\/deed-attestation\): get secret deed-system\/deed-attestation: HTTP 403: secrets "deed-attestation" is forbidden; it is read as the kubeconfig's own identity, not as --as: .*--attestation-key FILE/,
    ],
    [
      'a key entry the ring names is missing from the Secret',
      () => server.put('secrets', keySecret('deed-attestation', { other: TEST_KEY })),
      [],
      /^Secret deed-system\/deed-attestation has no entry "key", a key of the ring ConfigMap deed-system\/deed-policy names$/,
    ],
    [
      'a key too short: its size, never its bytes',
      () => server.put('secrets', keySecret('deed-attestation', { key: Buffer.from('short') })),
      [],
      /^the attestation key "key" of Secret deed-system\/deed-attestation holds 5 bytes; at least 32 are required$/,
    ],
  ];
  for (const [name, arrange, args, message] of failures) {
    test(`refuses clearly when ${name}; no sweep starts`, async () => {
      arrange();
      const run = await reap(['--environment', 'alpha', ...args]);
      assert.match(run.error?.message ?? '', message);
      assert.ok(server.requests.every(installReads), 'nothing but the install was read');
      assertNoKeyMaterial(run);
    });
  }
});

describe('local files still win', () => {
  test('with --config, nothing is read from the cluster but the sweep, even with an install there', async () => {
    const run = await reap(['--environment', 'alpha', '--config', policyFile]);
    assert.equal(run.error, undefined, run.error?.message);
    assert.match(run.stdout, /\[would-delete\]$/m);
    assert.ok(!server.requests.some(installReads));
  });

  test('with --attestation-key alone, the embedded default policy as before', async () => {
    const run = await reap(['--environment', 'alpha', '--attestation-key', keyFile]);
    assert.match(run.error?.message ?? '', /^environment "alpha" is not in the policy \(default\), read from the embedded default; pass --config .* or leave out --config and --attestation-key to read the installed one \(--from-cluster\)$/);
    assert.equal(server.requests.length, 0);
  });

  test('--from-cluster, --release and --attestation-secret with --config are usage errors', async () => {
    for (const flags of [['--from-cluster'], ['--release', 'foo'], ['--attestation-secret', 'byo-keys']]) {
      const run = await reap(['--environment', 'alpha', '--config', policyFile, ...flags]);
      assert.match(run.error?.message ?? '', /cannot be used with option '--config <file>'/, flags.join(' '));
    }
    assert.equal(server.requests.length, 0);
  });
});

describe('deed keys usage and deed audit from the cluster', () => {
  test('keys usage counts with the installed ring; --without-keys reads the policy only, no Secret', async () => {
    const run = await keysUsage(['-o', 'json']);
    assert.equal(run.error, undefined, run.error?.message);
    const usage = JSON.parse(run.stdout) as { keys: Array<{ key: string; objects: number }> };
    assert.deepEqual(usage.keys.map((k) => [k.key, k.objects]), [['key', 1]]);
    assertNoKeyMaterial(run);
    server.requests.length = 0;
    const without = await keysUsage(['--without-keys', '-o', 'json']);
    assert.equal(without.error, undefined, without.error?.message);
    assert.deepEqual(server.requests.filter(installReads).map((r) => r.path), ['/api/v1/namespaces/deed-system/configmaps']);
  });

  test('audit judges with the installed policy and ring', async () => {
    const run = await audit(['-n', 'sandbox-a', '-o', 'json', '--as', REAPER]);
    assert.equal(run.error, undefined, run.error?.message);
    assert.match(run.stdout, /"type":"summary"/);
    assert.ok(server.requests.filter(installReads).every((r) => r.impersonate === undefined));
    assert.ok(server.requests.some((r) => r.path === '/api/v1/namespaces/deed-system/secrets/deed-attestation'));
    assertNoKeyMaterial(run);
  });
});
