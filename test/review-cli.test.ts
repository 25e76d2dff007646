import { entryOf } from '../src/policy/unstructured.js';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { AdmissionReviewResponse, KubeObject } from '../src/admission/types.js';
import type { PatchOperation } from '../src/admission/verdict.js';
import { readStamps } from '../src/policy/stamps/attestation.js';
import { createKeyRing, singleKeyRing, verifyStamps } from '../src/policy/stamps/key-ring.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { DRY_RUN_KEY } from '../src/cli/review.js';
import { decide } from '../src/admission/decide.js';
import { FIXTURE_POLICY, FIXTURES, fixture, kubectlPatch, TEST_KEY, decodePatch, testContext } from './helpers.js';
import { ROOT } from './serve-process.js';

const dir = mkdtempSync(join(tmpdir(), 'deed-review-'));
const policyFile = join(dir, 'policy.yaml');
writeFileSync(policyFile, stringify(FIXTURE_POLICY));
const keyFile = join(dir, 'attestation.key');
writeFileSync(keyFile, TEST_KEY);

const RUNNER_A = ['--as', 'system:serviceaccount:sandbox-a:runner', '--pod-name', 'runner-0', '--pod-uid', '144baa57-4863-4fb3-a622-a0c0ecb4a7ff'];
const keys = stampKeys('deed.dev');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `deed review` as an operator would, as a child process. */
function deed(args: string[], input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'review', ...args],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, DEED_CONFIG: '' }, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
    child.stdin!.end(input ?? '');
  });
}

// Each test starts its own process; a few run at once to keep the file fast.
const CONCURRENCY = { concurrency: 4 };

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : stringify(content));
  return path;
}

/** The object of a captured review, as a user would write it. */
function objectOf(name: string): KubeObject {
  const obj = fixture(name).request.object as KubeObject;
  delete obj.metadata.managedFields;
  return obj;
}

const runnerPod = objectOf('mutate-create-pod-by-runner.json');
const adminPod = objectOf('mutate-create-pod-by-admin.json');
/** The runner pod's workspace claim, marked as one: given before the pod, `deed review` knows its environment. */
const workspaceClaim = objectOf('mutate-create-pvc-by-runner.json');
workspaceClaim.metadata.labels = { ...workspaceClaim.metadata.labels, 'deed.dev/workspace': 'true' };

/** A YAML stream of the workspace claim and then `objects`, as one file would hold them. */
function withClaim(...objects: unknown[]): string {
  return [workspaceClaim, ...objects].map((d) => stringify(d)).join('---\n');
}

function attestationVerifies(obj: KubeObject, key: Buffer): boolean {
  const stamps = readStamps(obj, keys, String(obj.kind), obj.metadata.namespace!);
  return stamps !== undefined && verifyStamps(singleKeyRing(key), stamps, entryOf(obj.metadata.annotations ?? {}, keys.attestation)).ok;
}

describe('deed review on objects from files', CONCURRENCY, () => {
  test('a pod that passes unchanged exits 0 and prints the object as given', async () => {
    // The administrator's pod, already marked as of no environment (the one thing Deed would add).
    const marked = { ...adminPod, metadata: { ...adminPod.metadata, labels: { ...adminPod.metadata.labels, 'deed.dev/no-environment': 'true' } } };
    const run = await deed(['-f', file('admin-pod.yaml', marked), '--as', 'kube-lab-admin', '--as-group', 'system:masters', '--config', policyFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(parse(run.stdout), marked);
    assert.match(run.stderr, /^Pod sandbox-a\/by-admin \(CREATE by kube-lab-admin\): allowed$/m);
    assert.match(run.stderr, /^ {2}mutate: allowed$/m);
  });

  test('a runner pod is mutated: stamps, owner reference, deadline, and an attestation under the given key', async () => {
    const run = await deed(['-f', file('runner-pod.yaml', withClaim(runnerPod)), ...RUNNER_A, '--config', policyFile, '--attestation-key', keyFile, '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const out = (JSON.parse(run.stdout) as { items: KubeObject[] }).items[1]!;
    assert.equal(out.metadata.labels?.['deed.dev/environment'], 'alpha');
    assert.equal(out.metadata.labels?.['deed.dev/owner-uid'], '144baa57-4863-4fb3-a622-a0c0ecb4a7ff');
    assert.equal(out.metadata.annotations?.['deed.dev/owner'], 'sandbox-a/runner-0');
    assert.equal(out.metadata.annotations?.['deed.dev/create-nonce'], runnerPod.metadata.annotations?.['deed.dev/create-nonce'], 'the client nonce is kept');
    assert.deepEqual(out.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: '144baa57-4863-4fb3-a622-a0c0ecb4a7ff' }]);
    assert.equal(out.spec?.activeDeadlineSeconds, 5400);
    assert.equal(out.metadata.uid, undefined, 'the printed object is the mutated one, before the API server assigns a uid');
    assert.ok(attestationVerifies(out, TEST_KEY), 'signed with --attestation-key');
    assert.doesNotMatch(run.stderr, /dry-run key/);
    assert.match(run.stderr, /^ {2}mutate: patched, \d+ patch operations\n {2}validate: allowed$/m, 'then the validating webhook passes the final object');
  });

  test('a pod the mutating side stamps but the validating side refuses is denied with the rule id', async () => {
    const pod = structuredClone(runnerPod);
    pod.spec!.restartPolicy = 'Never';
    const run = await deed(['-f', file('never-pod.yaml', pod), ...RUNNER_A, '--config', policyFile]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^ {2}mutate: patched, \d+ patch operations\n {2}validate: denied\n {4}denied \[template\.restart-policy\]/m);
  });

  test('--policy-keys signs with the signing key of the policy\'s ring (v2) and verifies under every key of it', async () => {
    const other = join(dir, 'other.key');
    writeFileSync(other, 'another-review-key-0123456789abcdef-other');
    const ringPolicy = join(dir, 'ring-policy.yaml');
    writeFileSync(ringPolicy, stringify({ ...FIXTURE_POLICY, attestation: { keys: [{ id: 'old', file: keyFile }, { id: 'new', file: other }], signingKey: 'new' } }));
    // The pod's workspace claim comes first, so the claim rules know it is alpha's.
    const podOf = (stdout: string) => (JSON.parse(stdout) as { items: KubeObject[] }).items.find((o) => o.kind === 'Pod')!;
    const run = await deed(['-f', file('ring-pod.yaml', withClaim(runnerPod)), ...RUNNER_A, '--config', ringPolicy, '--policy-keys', '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /dry-run key/);
    const out = podOf(run.stdout);
    assert.match(out.metadata.annotations!['deed.dev/attestation']!, /^v2:new:/);
    const ring = createKeyRing([{ id: 'old', key: TEST_KEY }, { id: 'new', key: readFileSync(other) }], 'new', 'v2');
    const stamps = readStamps(out, keys, 'Pod', 'sandbox-a')!;
    assert.deepEqual(verifyStamps(ring, stamps, out.metadata.annotations!['deed.dev/attestation']), { ok: true, format: 'v2', keyId: 'new' });
    // Without --policy-keys the dry-run key signs, in the format the policy's ring would.
    const dry = await deed(['-f', file('ring-pod.yaml', withClaim(runnerPod)), ...RUNNER_A, '--config', ringPolicy, '-o', 'json']);
    assert.match(podOf(dry.stdout).metadata.annotations!['deed.dev/attestation']!, /^v2:dry-run:/);
  });

  test('without --attestation-key the fixed dry-run key signs, and says so; warnings of both webhooks are reported', async () => {
    const pod = structuredClone(runnerPod);
    pod.spec!.activeDeadlineSeconds = 99999;
    (pod.spec!.containers as Array<Record<string, unknown>>)[0]!.securityContext = { privileged: true };
    const run = await deed(['-f', file('warned-pod.yaml', withClaim(pod)), ...RUNNER_A, '--config', policyFile]);
    assert.equal(run.code, 0, run.stderr);
    const out = parseAllDocuments(run.stdout)[1]!.toJS() as KubeObject;
    assert.ok(attestationVerifies(out, DRY_RUN_KEY));
    assert.ok(!attestationVerifies(out, TEST_KEY));
    assert.match(run.stderr, /fixed dry-run key/);
    assert.equal(out.spec?.activeDeadlineSeconds, 5400);
    assert.match(run.stderr, /^ {2}mutate: patched.*\n {4}warning: Deed lowered spec\.activeDeadlineSeconds from 99999 to 5400/m);
    assert.match(run.stderr, /^ {2}validate: allowed\n {4}warning: .*privileged/m);
  });

  test("a Secret is allowed on the assumption, said in the report, that nothing outside the files names it: the webhook reads its live readers from the cluster (rev-90)", async () => {
    const run = await deed(['-f', file('assumed-secret.yaml', objectOf('mutate-create-secret-by-runner.json')), ...RUNNER_A, '--config', policyFile, '--attestation-key', keyFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /\n {2}assumed: nothing outside these files and --existing names secrets sandbox-a\/sbx-1-creds \(the webhook reads who does from the cluster, and refuses the write if another environment's live object does: reference\.live-reader\)\n/);
    // A denied object's report says what denied it, and nothing assumed.
    const denied = await deed(['-f', file('assumed-denied.yaml', { ...objectOf('mutate-create-pod-by-runner.json'), spec: { ...objectOf('mutate-create-pod-by-runner.json').spec, hostNetwork: true } }), ...RUNNER_A, '--config', policyFile, '--attestation-key', keyFile]);
    assert.equal(denied.code, 1);
    assert.doesNotMatch(denied.stderr, /assumed:/, 'a denied object says what denied it, no assumption');
  });

  test('a pod claiming another environment is denied with the rule id, exit 1, nothing on stdout', async () => {
    const claimed = structuredClone(runnerPod);
    claimed.metadata.labels!['deed.dev/environment'] = 'beta';
    const run = await deed(['-f', file('claimed-pod.yaml', claimed), ...RUNNER_A, '--config', policyFile]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^Pod sandbox-a\/sbx-1 \(CREATE by system:serviceaccount:sandbox-a:runner\): DENIED$/m);
    assert.match(run.stderr, /denied \[stamp\.conflict\] metadata\.labels\["deed\.dev\/environment"\]: .*given "beta", expected "alpha"/);
  });

  test('without --as the requester is the default service account of the object namespace (environment default under the embedded policy)', async () => {
    const run = await deed(['-f', file('plain-pod.yaml', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } }), '-n', 'team-x']);
    assert.equal(run.code, 0, run.stderr);
    const out = parse(run.stdout) as KubeObject;
    assert.equal(out.metadata.namespace, 'team-x');
    assert.equal(out.metadata.labels?.['deed.dev/environment'], 'default');
    assert.match(run.stderr, /CREATE by system:serviceaccount:team-x:default/);
  });

  test('a pod that leaves automountServiceAccountToken unset: the dry run shows the token volume the API server would add, removed', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team-x' }, spec: { initContainers: [{ name: 'init', image: 'x' }], containers: [{ name: 'c', image: 'x' }] } };
    const run = await deed(['-f', file('token-pod.yaml', pod), '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as KubeObject & { spec: Record<string, unknown> };
    assert.equal(out.spec.automountServiceAccountToken, false);
    // Emptied lists stay as []: the API server stores them as absent (omitempty).
    assert.deepEqual(out.spec.volumes, [], 'no token volume is left');
    assert.deepEqual(out.spec.containers, [{ name: 'c', image: 'x', volumeMounts: [] }]);
    assert.deepEqual(out.spec.initContainers, [{ name: 'init', image: 'x', volumeMounts: [] }]);
    assert.match(run.stderr, /^ {4}removed: volume kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5} \(the API server's service-account token\) and its mounts$/m);
    const patch = await deed(['-f', file('token-pod.yaml', pod), '-o', 'patch']);
    const ops = (JSON.parse(patch.stdout) as { patch: PatchOperation[] }).patch;
    assert.deepEqual(ops.filter((op) => op.op === 'remove').map((op) => op.path), ['/spec/initContainers/0/volumeMounts/0', '/spec/containers/0/volumeMounts/0', '/spec/volumes/0']);
  });

  test('a pod whose claim is not in the files is denied: deed review cannot know its environment, and says how to tell it', async () => {
    const run = await deed(['-f', file('pod-alone.yaml', runnerPod), ...RUNNER_A, '--config', policyFile]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /denied \[claim\.unknown\] spec\.volumes\[name=workspace\]\.persistentVolumeClaim\.claimName: cannot tell which environment claim sbx-1-workspace belongs to: it is not among the objects reviewed before this one or given with --existing, and deed review has no cluster to ask; give it first in the same file, or with --existing/,
    );
  });

  test('a claim given after the pod does not count: kubectl would create the pod first', async () => {
    const run = await deed(['-f', file('pod-then-claim.yaml', [runnerPod, workspaceClaim].map((d) => stringify(d)).join('---\n')), ...RUNNER_A, '--config', policyFile]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /denied \[claim\.unknown\]/);
  });

  test('a Secret given before the pod that names it is known, as the cluster would hold it after the apply; given after, it is not', async () => {
    const creds = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sbx-1-creds', namespace: 'sandbox-a' }, stringData: { token: 'x' } };
    const pod = structuredClone(runnerPod) as KubeObject & { spec: { containers: Array<Record<string, unknown>> } };
    pod.spec.containers[0]!.envFrom = [{ secretRef: { name: 'sbx-1-creds' } }];
    const before = await deed(['-f', file('secret-then-pod.yaml', withClaim(creds, pod)), ...RUNNER_A, '--config', policyFile]);
    assert.equal(before.code, 0, before.stderr);
    const after = await deed(['-f', file('pod-then-secret.yaml', withClaim(pod, creds)), ...RUNNER_A, '--config', policyFile]);
    assert.equal(after.code, 1, after.stderr);
    assert.match(after.stderr, /denied \[secret-ref\.unknown\] spec\.containers\[name=main\]\.envFrom\[0\]\.secretRef\.name: cannot tell which environment Secret sbx-1-creds belongs to/);
  });

  const namespace = (name: string, labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } } });
  const existing = (...objects: unknown[]) => ({ apiVersion: 'v1', kind: 'List', items: objects });

  test("a claim already stored for another environment, given with --existing and its opted-in Namespace, is another environment's: denied", async () => {
    const claim = stamped('mutate-create-pvc-by-runner.json');
    const stored = existing(namespace('sandbox-a', { 'deed.dev/sandbox': 'enabled' }), claim);
    const run = await deed(['-f', file('beta-pod.yaml', runnerPod), '--existing', file('alpha-claim.yaml', stored), '--as', 'system:serviceaccount:sandbox-b:runner', '--config', policyFile, '--attestation-key', keyFile]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /denied \[claim\.cross-environment\] spec\.volumes\[name=workspace\]\.persistentVolumeClaim\.claimName: volume "workspace" mounts claim sbx-1-workspace, which belongs to another environment; environment "beta" may not/);
    assert.doesNotMatch(run.stderr, /stamps not trusted/);
  });

  test('a stamped claim given with --existing in a namespace outside the review scope is not trusted: listed, and the pod that mounts it is denied as unknown', async () => {
    const claim = stamped('mutate-create-pvc-by-runner.json');
    for (const [name, ns] of [['not-opted-in', namespace('sandbox-a', {})], ['deeds-own', namespace('sandbox-a', { 'deed.dev/sandbox': 'enabled' })]] as const) {
      const args = name === 'deeds-own' ? ['--deed-namespace', 'sandbox-a'] : [];
      const run = await deed(['-f', file(`pod-${name}.yaml`, runnerPod), '--existing', file(`claim-${name}.yaml`, existing(ns, claim)), ...RUNNER_A, '--config', policyFile, '--attestation-key', keyFile, ...args]);
      assert.match(run.stderr, /^existing PersistentVolumeClaim sandbox-a\/sbx-1-workspace: stamps not trusted: namespace sandbox-a is outside the review scope/m, name);
      if (name === 'deeds-own') {
        // Deed's own namespace is never selected: the webhooks are not sent the pod either.
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stderr, /^Pod sandbox-a\/sbx-1 \([^)]*\): not judged, passed as it is \(namespace sandbox-a is Deed's own: the webhooks never select it\)$/m);
        continue;
      }
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /denied \[claim\.unknown\] .*claim sbx-1-workspace .*namespace sandbox-a is outside the review scope/, name);
    }
  });

  test('a claim given with --existing without its Namespace is not trusted, and the message says how to give it', async () => {
    const run = await deed(['-f', file('pod-no-ns.yaml', runnerPod), '--existing', file('claim-no-ns.yaml', stamped('mutate-create-pvc-by-runner.json')), ...RUNNER_A, '--config', policyFile, '--attestation-key', keyFile]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /stamps not trusted: its Namespace sandbox-a is not given with --existing, .*\(give it: kubectl get namespace sandbox-a -o yaml\)/);
    assert.match(run.stderr, /denied \[claim\.unknown\]/);
  });

  test("a claim restored from a snapshot of alpha's claim, both given with --existing and their opted-in Namespace, is judged by alpha's claim: denied for beta", async () => {
    const claim = stamped('mutate-create-pvc-by-runner.json');
    // As `kubectl get -o yaml` gives them: with their creation times, the claim's before the snapshot's.
    claim.metadata.creationTimestamp = '2026-11-29T15:00:00Z';
    const snapshot = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'snap', namespace: 'sandbox-a', creationTimestamp: '2026-11-29T16:00:00Z' }, spec: { source: { persistentVolumeClaimName: 'sbx-1-workspace' } } };
    const restore = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'loot', namespace: 'sandbox-a' }, spec: { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' } } };
    const existing = file('alpha-claim-and-snapshot.yaml', [namespace('sandbox-a', { 'deed.dev/sandbox': 'enabled' }), claim, snapshot].map((d) => stringify(d)).join('---\n'));
    const run = await deed(['-f', file('restore.yaml', restore), '--existing', existing, '--as', 'system:serviceaccount:sandbox-b:runner', '--config', policyFile, '--attestation-key', keyFile]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /denied \[claim\.cross-environment\] spec\.dataSource: this claim restores snapshot snap of claim sbx-1-workspace, which belongs to another environment; environment "beta" may not/);
    // A claim made under that name after the snapshot is not the one it copied, whoever's it is.
    claim.metadata.creationTimestamp = '2026-11-29T17:00:00Z';
    const replaced = file('alpha-snapshot-and-later-claim.yaml', [namespace('sandbox-a', { 'deed.dev/sandbox': 'enabled' }), claim, snapshot].map((d) => stringify(d)).join('---\n'));
    const later = await deed(['-f', file('restore-later.yaml', restore), '--existing', replaced, ...RUNNER_A, '--config', policyFile, '--attestation-key', keyFile]);
    assert.equal(later.code, 1, later.stderr);
    assert.match(later.stderr, /denied \[claim\.unknown\] spec\.dataSource: snapshot snap was taken of claim sbx-1-workspace, which has since been deleted and made again \(created 2026-11-29T17:00:00Z, after the snapshot's 2026-11-29T16:00:00Z\)/);
  });

  test("a Deployment is reviewed as its template's pods: one that runs as alpha's runner account is denied for beta, at the template path", async () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'sandbox-a' }, spec: { template: { spec: { serviceAccountName: 'runner', containers: [{ name: 'main', image: 'x' }] } } } };
    const run = await deed(['-f', file('deployment.yaml', deployment), '--as', 'system:serviceaccount:sandbox-b:runner', '--config', policyFile]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /denied \[guard\.service-account\] spec\.template\.spec\.serviceAccountName: service account sandbox-a:runner acts for environment "alpha"/);
  });

  test('several documents are reviewed one by one: the allowed ones printed, the denied one reported, exit 1', async () => {
    const forged = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'forged', namespace: 'sandbox-a', annotations: { 'deed.dev/attestation': 'v1:made-up' } } };
    const docs = [workspaceClaim, runnerPod, forged, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'np', namespace: 'sandbox-a' }, spec: { podSelector: {} } }];
    const run = await deed(['-f', file('multi.yaml', docs.map((d) => stringify(d)).join('---\n') + '---\n'), ...RUNNER_A, '--config', policyFile]);
    assert.equal(run.code, 1, run.stderr);
    const printed = parseAllDocuments(run.stdout).map((d) => d.toJS() as KubeObject);
    assert.deepEqual(printed.map((o) => `${o.kind}/${o.metadata.name}`), ['PersistentVolumeClaim/sbx-1-workspace', 'Pod/sbx-1', 'NetworkPolicy/np']);
    assert.ok(printed.every((o) => o.metadata.labels?.['deed.dev/environment'] === 'alpha'));
    assert.match(run.stderr, /^Secret sandbox-a\/forged .*: DENIED$/m);
    assert.match(run.stderr, /denied \[attestation\.forged\]/);
    assert.equal(run.stderr.match(/^\S.*\((CREATE) by /gm)?.length, 4, 'one report per object');
  });

  test('-o patch names an object the API server will name by its generateName, and a denied one with an empty patch', async () => {
    const generated = { apiVersion: 'v1', kind: 'Secret', metadata: { generateName: 'creds-', namespace: 'sandbox-a' }, data: { token: 'c2VjcmV0' } };
    const forged = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'forged', annotations: { 'deed.dev/attestation': 'v1:made-up' } } };
    const run = await deed(['-f', file('named.yaml', [generated, forged].map((d) => stringify(d)).join('---\n')), ...RUNNER_A, '-n', 'sandbox-a', '--config', policyFile, '-o', 'patch']);
    assert.equal(run.code, 1, run.stderr);
    const [first, second] = run.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual({ ...first, patch: undefined }, { apiVersion: 'v1', kind: 'Secret', namespace: 'sandbox-a', generateName: 'creds-', patch: undefined });
    assert.ok((first!.patch as unknown[]).length > 0);
    assert.deepEqual(second, { apiVersion: 'v1', kind: 'Secret', namespace: 'sandbox-a', name: 'forged', patch: [] });
  });

  test('-o patch of a replay names the object the captured request is for', async () => {
    const run = await deed(['--review', join(FIXTURES, 'mutate-create-pod-by-runner.json'), '--config', policyFile, '-o', 'patch']);
    const line = JSON.parse(run.stdout.trimEnd()) as { kind: string; namespace: string; name: string; patch: PatchOperation[] };
    assert.deepEqual([line.kind, line.namespace, line.name], ['Pod', runnerPod.metadata.namespace ?? 'sandbox-a', runnerPod.metadata.name]);
    assert.ok(line.patch.length > 0);
  });

  test('a List and a PodList from stdin are expanded into their items, -o json prints a List', async () => {
    const list = { apiVersion: 'v1', kind: 'List', items: [workspaceClaim, runnerPod, { apiVersion: 'v1', kind: 'Secret', metadata: { generateName: 'creds-', namespace: 'sandbox-a' }, data: { token: 'c2VjcmV0' } }] };
    const podList = { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [adminPod] };
    const run = await deed(['-f', '-', ...RUNNER_A, '--config', policyFile, '-o', 'json'], `${stringify(list)}---\n${JSON.stringify(podList)}\n`);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as { kind: string; items: KubeObject[] };
    assert.equal(out.kind, 'List');
    assert.deepEqual(out.items.map((o) => `${o.kind}/${o.metadata.name ?? o.metadata.generateName}`), ['PersistentVolumeClaim/sbx-1-workspace', 'Pod/sbx-1', 'Secret/creds-', 'Pod/by-admin']);
    assert.ok(out.items.every((o) => o.metadata.labels?.['deed.dev/environment'] === 'alpha'));
    assert.equal(out.items[2]!.metadata.name, undefined, 'generateName is left for the API server');
  });

  test('-o patch prints one line per object naming it, with the JSON Patch Kubernetes applies to give the -o json object', async () => {
    const pods = [workspaceClaim, runnerPod, adminPod];
    const input = file('two.yaml', pods.map((d) => stringify(d)).join('---\n'));
    const args = ['-f', input, ...RUNNER_A, '--config', policyFile, '--attestation-key', keyFile];
    const patchRun = await deed([...args, '-o', 'patch']);
    assert.equal(patchRun.code, 0, patchRun.stderr);
    const lines = patchRun.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { apiVersion: string; kind: string; namespace: string; name: string; patch: PatchOperation[] });
    assert.deepEqual(
      lines.map(({ apiVersion, kind, namespace, name }) => `${apiVersion} ${kind} ${namespace}/${name}`),
      pods.map((p) => `v1 ${p.kind} sandbox-a/${p.metadata.name}`),
    );
    const patches = lines.map((l) => l.patch);
    assert.equal(patches.length, 3);
    assert.ok(patches.every((p) => p.length > 0));
    const objects = (JSON.parse((await deed([...args, '-o', 'json'])).stdout) as { items: KubeObject[] }).items;
    pods.forEach((pod, i) => {
      const patched = kubectlPatch(pod, patches[i]!);
      // The nonce and expiry of the two runs differ where Deed minted them; everything else is equal.
      const minted = pod.metadata.annotations?.['deed.dev/create-nonce'] === undefined;
      for (const obj of [patched, objects[i]!]) for (const k of ['deed.dev/expires-at', 'deed.dev/attestation', ...(minted ? ['deed.dev/create-nonce'] : [])]) delete obj.metadata.annotations?.[k];
      assert.deepEqual(patched, objects[i]);
    });
  });
});

/** An object as Deed's mutating webhook stamps it for runner-0 of sandbox-a, under TEST_KEY. */
function stamped(name: string): KubeObject {
  const body = fixture(name);
  const decision = decide('mutate', body, testContext());
  assert.ok(decision.kind === 'review' && decision.response.response.allowed);
  const obj = kubectlPatch(body.request.object as KubeObject, decodePatch(decision.response));
  delete obj.metadata.managedFields;
  return obj;
}

describe('deed review of UPDATE and DELETE on stamped objects (validating webhook only)', CONCURRENCY, () => {
  const pod = stamped('mutate-create-pod-by-runner.json');
  const annotated = structuredClone(pod);
  annotated.metadata.annotations!['note'] = 'touched';
  const oldFile = file('stamped-pod.yaml', pod);
  const newFile = file('annotated-pod.yaml', annotated);
  const secretFile = file('stamped-secret.yaml', stamped('mutate-create-secret-by-runner.json'));
  const common = ['--config', policyFile, '--attestation-key', keyFile];

  const cases: Array<[string, string[], number, RegExp]> = [
    ['its own runner may annotate a stamped pod', ['--operation', 'UPDATE', '--old', oldFile, '-f', newFile, ...RUNNER_A], 0, /\(UPDATE by system:serviceaccount:sandbox-a:runner\): allowed\n {2}validate: allowed/],
    [
      'the runner of another environment may not (validate-update-pod-annotation-by-other-runner, stamped)',
      ['--operation', 'UPDATE', '--old', oldFile, '-f', newFile, '--as', 'system:serviceaccount:sandbox-b:runner', '--pod-name', 'runner-0', '--pod-uid', 'd33085f3-2ede-4348-92f9-44817b50c45d'],
      1,
      /denied \[guard\.cross-environment\] system:serviceaccount:sandbox-b:runner acts for "beta", and this object belongs to another environment/,
    ],
    ['removing a stamp is refused even to its own runner', ['--operation', 'UPDATE', '--old', oldFile, '-f', file('unstamped-pod.yaml', { ...annotated, metadata: { ...annotated.metadata, labels: { 'deed.dev/run-id': 'run-42' } } }), ...RUNNER_A], 1, /denied \[frozen\.stamps\]/],
    ['the janitor of another environment may not delete a stamped Secret (validate-delete-secret-by-other-janitor, stamped)', ['--operation', 'DELETE', '-f', secretFile, '--as', 'system:serviceaccount:sandbox-b:janitor'], 1, /\(DELETE by system:serviceaccount:sandbox-b:janitor\): DENIED\n {2}validate: denied\n {4}denied \[guard\.cross-environment\]/],
    // kubectl replace -f with the manifest as written: the install's stamps.mutate.deed.dev keeps the stamps, as in the cluster (rev-90).
    ['its own runner may replace a stamped Secret with its manifest as written: the stamps are kept', ['--operation', 'UPDATE', '--old', secretFile, '-f', file('replaced-secret.yaml', { ...objectOf('mutate-create-secret-by-runner.json'), data: { token: 'cm90YXRlZA==' } }), ...RUNNER_A], 0, /\(UPDATE by system:serviceaccount:sandbox-a:runner\): allowed\n {2}mutate: patched, 3 patch operations\n {4}warning: Deed kept its stamps as stored: this write carried none, and they are frozen \(docs\/concepts\.md\)\n {2}validate: allowed/],
    // Judged allowed when its review arrives (validate-delete-secret-by-garbage-collector); the install's matchCondition sends none (rev-91).
    ['the garbage collector deletes it without Deed: its deletions are never sent', ['--operation', 'DELETE', '--old', secretFile, '--as', 'system:serviceaccount:kube-system:generic-garbage-collector'], 0, /\(DELETE by system:serviceaccount:kube-system:generic-garbage-collector\): not judged, passed as it is \(system:serviceaccount:kube-system:generic-garbage-collector is a kube-system service account: the webhooks' matchCondition sends them only a listed workload controller's creations and owner-reference changes\)/],
  ];
  for (const [name, args, code, report] of cases)
    test(name, async () => {
      const run = await deed([...args, ...common]);
      assert.equal(run.code, code, run.stderr);
      assert.match(run.stderr, report);
      if (args.includes('DELETE')) assert.equal(run.stdout, '', 'a deletion prints no object');
    });
});

// More input errors are covered in-process by build-review.test.ts.
describe('deed review usage and input errors exit 2 with a message', CONCURRENCY, () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['a missing file', ['-f', join(dir, 'nope.yaml')], /cannot read .*nope\.yaml: no such file or directory/],
    ['a YAML syntax error', ['-f', file('broken.yaml', 'kind: Pod\nmetadata: [\n')], /broken\.yaml#1: cannot parse as YAML/],
    ['an object without a kind', ['-f', file('nokind.yaml', { apiVersion: 'v1', metadata: { name: 'x' } })], /nokind\.yaml#1: kind is required/],
    ['UPDATE without --old', ['-f', file('u.yaml', adminPod), '--operation', 'update'], /UPDATE needs the new objects \(-f\) and the stored ones \(--old\)/],
    ['--existing and -f both from stdin', ['-f', '-', '--existing', '-'], /only one of -f, --old and --existing can read stdin/],
    ['--existing with a replay', ['--review', file('mutate-y.json', JSON.stringify(fixture('mutate-create-pod-by-admin.json'))), '--existing', file('e.yaml', adminPod)], /--existing answers lookups for objects reviewed with -f/],
    ['an unknown output format', ['-f', file('u.yaml', adminPod), '-o', 'xml'], /argument 'xml' is invalid/],
    ['a replay whose webhook the file name does not tell', ['--review', file('capture.json', JSON.stringify(fixture('mutate-create-pod-by-admin.json')))], /pass --webhook admit\|mutate\|validate/],
    ['a replay of something that is not an AdmissionReview', ['--review', file('mutate-x.json', '{"hello":"world"}')], /mutate-x\.json: the body must be|expected apiVersion admission\.k8s\.io\/v1/],
  ];
  for (const [name, args, message] of cases)
    test(name, async () => {
      const run = await deed(args);
      assert.equal(run.code, 2, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stdout, '');
    });
});

/** What each fixture README line says Deed should do (the policy it describes). */
interface Expected {
  allowed: boolean;
  /** A rule the denial must name. */
  rule?: string;
  environment?: string;
  ownerReference?: boolean;
  deadline?: number;
}

const EXPECTED: Record<string, Expected> = {
  'mutate-create-pod-by-runner.json': { allowed: true, environment: 'alpha', ownerReference: true, deadline: 5400 },
  'mutate-create-pod-by-runner-dryrun.json': { allowed: true, environment: 'alpha', ownerReference: true, deadline: 5400 },
  'mutate-create-pod-generatename.json': { allowed: true, environment: 'alpha', ownerReference: true },
  'mutate-create-secret-by-runner.json': { allowed: true, environment: 'alpha', ownerReference: true },
  'mutate-create-networkpolicy-by-runner.json': { allowed: true, environment: 'alpha', ownerReference: true },
  'mutate-create-pvc-by-runner.json': { allowed: true, environment: 'alpha', ownerReference: false },
  'mutate-create-pod-by-other-namespace-runner.json': { allowed: true, environment: 'beta', ownerReference: false },
  'mutate-create-pod-by-admin.json': { allowed: true },
  'mutate-create-pod-by-unbound-token.json': { allowed: true, environment: 'alpha', ownerReference: false },
  // As captured, nothing mutated these: the stamps are missing, which the validating side notices.
  'validate-create-pod-by-runner.json': { allowed: false, rule: 'stamp.missing' },
  'validate-create-pod-by-runner-dryrun.json': { allowed: false, rule: 'stamp.missing' },
  'validate-create-pod-generatename.json': { allowed: false, rule: 'stamp.missing' },
  'validate-create-secret-by-runner.json': { allowed: false, rule: 'stamp.missing' },
  'validate-create-networkpolicy-by-runner.json': { allowed: false, rule: 'stamp.missing' },
  'validate-create-pvc-by-runner.json': { allowed: false, rule: 'stamp.missing' },
  'validate-update-pod-label-by-runner.json': { allowed: false, rule: 'guard.shared-input' },
  'validate-update-pod-ephemeralcontainers.json': { allowed: false, rule: 'guard.shared-input' },
  'validate-delete-secret-by-garbage-collector.json': { allowed: true },
  // An unstamped pod in a namespace bound to no environment is the platform's (guard.shared-input).
  'validate-delete-pod-by-runner.json': { allowed: false, rule: 'guard.shared-input' },
  // "Denied once the object is stamped alpha": as captured it is not stamped, so the
  // guard does not apply; the stamped case is replayed in the next describe block.
  'validate-update-pod-annotation-by-other-runner.json': { allowed: false, rule: 'guard.shared-input' },
  // Unstamped in a namespace bound to no environment: the platform's, which no environment may delete.
  'validate-delete-secret-by-other-janitor.json': { allowed: false, rule: 'guard.shared-input' },
};

describe('deed review --review --webhook admit replays what the installed mutating webhook calls', CONCURRENCY, () => {
  test('a pod CREATE that /mutate only stamps, /admit stamps and judges whole, as the cluster would', async () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    body.request.object.spec.hostNetwork = true;
    const capture = join(mkdtempSync(join(tmpdir(), 'deed-admit-')), 'capture.json');
    writeFileSync(capture, JSON.stringify(body));
    const stamped = await deed(['--review', capture, '--webhook', 'mutate', '--config', policyFile]);
    assert.equal(stamped.code, 0, stamped.stderr);
    const admitted = await deed(['--review', capture, '--webhook', 'admit', '--config', policyFile]);
    assert.equal(admitted.code, 1, admitted.stderr);
    assert.match(admitted.stderr + admitted.stdout, /\[template\.host-network\]/);
  });
});

describe('deed review --review replays every captured fixture', CONCURRENCY, () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json')).sort();

  test('every fixture has an expectation from its README line', () => {
    assert.deepEqual(files.filter((f) => EXPECTED[f] === undefined), []);
  });

  test('each replay echoes the uid and gives the decision the README expects', async () => {
    const run = await deed(['--review', ...files.map((f) => join(FIXTURES, f)), '--config', policyFile, '-o', 'json']);
    const anyDenied = files.some((f) => EXPECTED[f]?.allowed === false);
    assert.equal(run.code, anyDenied ? 1 : 0, run.stderr);
    const out = JSON.parse(run.stdout) as { kind: string; items: AdmissionReviewResponse[] };
    assert.equal(out.items.length, files.length);
    files.forEach((f, i) => {
      const expected = EXPECTED[f]!;
      const { response } = out.items[i]!;
      assert.equal(response.uid, fixture(f).request.uid, `${f}: uid echoed`);
      assert.equal(response.allowed, expected.allowed, `${f}: ${response.status?.message ?? 'allowed'}`);
      if (expected.rule !== undefined) assert.ok(response.status?.message.includes(`[${expected.rule}]`), `${f}: denied by ${expected.rule}`);
      const ops = decodePatch(out.items[i]!);
      const labels = ops.flatMap((op) => ('value' in op && op.path === '/metadata/labels' ? [op.value as Record<string, string>] : []))[0] ?? {};
      const environment = labels['deed.dev/environment'] ?? ops.find((op) => op.path === '/metadata/labels/deed.dev~1environment' && 'value' in op)?.['value' as never];
      assert.equal(environment, expected.environment, `${f}: environment`);
      if (expected.ownerReference !== undefined) assert.equal(ops.some((op) => op.path === '/metadata/ownerReferences'), expected.ownerReference, `${f}: owner reference`);
      if (expected.deadline !== undefined) assert.ok(ops.some((op) => op.path === '/spec/activeDeadlineSeconds' && 'value' in op && op.value === expected.deadline), `${f}: deadline`);
      // Of no environment: unstamped, a pod only marked as such (selector-scope.ts).
      if (expected.environment === undefined) assert.deepEqual(ops.filter((op) => op.path !== '/metadata/labels/deed.dev~1no-environment'), [], `${f}: unchanged`);
    });
    assert.equal(run.stderr.match(/, uid [0-9a-f-]+\): /g)?.length, files.length, 'one report per replay');
  });
});

describe('deed review sums up and says what it does not judge', CONCURRENCY, () => {
  const ingress = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'settings', namespace: 'sandbox-a' }, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } };
  const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'sandbox-a' }, spec: { ports: [{ port: 80 }] } };
  // Events are the default row's exceptions: no Deed webhook is called for them.
  const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'web.1', namespace: 'sandbox-a' }, involvedObject: { kind: 'Service', name: 'web', namespace: 'sandbox-a' }, reason: 'Started', message: 'started' };
  const newEvent = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'web.2', namespace: 'sandbox-a' }, eventTime: '2026-12-02T00:00:00.000000Z', reportingController: 'e2e', reportingInstance: 'e2e', action: 'Started', reason: 'Started', regarding: { kind: 'Service', name: 'web', namespace: 'sandbox-a' } };
  const forged = { ...adminPod, metadata: { ...adminPod.metadata, name: 'forged', labels: { 'deed.dev/environment': 'beta' } } };
  const lowered = { ...runnerPod, metadata: { ...runnerPod.metadata, name: 'lowered' }, spec: { ...runnerPod.spec, activeDeadlineSeconds: 99999 } };

  test('the report ends with one line counting objects, allowed, denied, warnings and those not judged', async () => {
    const run = await deed(['-f', file('mixed.yaml', withClaim(lowered, forged, event)), ...RUNNER_A, '--config', policyFile, '-o', 'patch']);
    assert.equal(run.code, 1, run.stderr);
    const lines = run.stderr.trimEnd().split('\n');
    assert.equal(lines.at(-1), '4 objects: 2 allowed, 1 denied, 1 warning, 1 not judged');
  });

  test('a kind no Deed webhook is called for is "not judged", not "allowed", and passes', async () => {
    const run = await deed(['-f', file('unjudged.yaml', [event, newEvent].map((d) => stringify(d)).join('---\n')), ...RUNNER_A, '--config', policyFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^Event sandbox-a\/web\.1 \(CREATE by system:serviceaccount:sandbox-a:runner\): not judged, passed as it is \(no Deed webhook is called for CREATE of events\)$/m);
    assert.match(run.stderr, /^Event sandbox-a\/web\.2 \(CREATE by [^)]*\): not judged, passed as it is \(no Deed webhook is called for CREATE of events\.k8s\.io\/events\)$/m);
    assert.doesNotMatch(run.stderr, /: allowed$/m);
    assert.match(run.stderr, /^2 objects: 0 allowed, 0 denied, 0 warnings, 2 not judged$/m);
  });

  test("a kind of the default row (an Ingress, a Service) is judged as the install's default webhooks judge it: stamped for the requester's environment", async () => {
    // The Service first: the Ingress names it, and a reference is judged by whose its target is (reference.unknown when deed review has not seen it).
    const run = await deed(['-f', file('default-row.yaml', [service, ingress].map((d) => stringify(d)).join('---\n')), ...RUNNER_A, '--config', policyFile, '-o', 'patch']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^Ingress sandbox-a\/settings \(CREATE by system:serviceaccount:sandbox-a:runner\): allowed$/m);
    assert.match(run.stderr, /^Service sandbox-a\/web \(CREATE by [^)]*\): allowed$/m);
    assert.match(run.stdout, /deed\.dev~1environment|"deed\.dev\/environment":"alpha"/);
    assert.match(run.stderr, /^2 objects: 2 allowed, 0 denied, 0 warnings$/m);
  });

  test('a replay of captured reviews ends with the same count', async () => {
    // The captured validating review carries no stamps (nothing mutated it): stamp.missing.
    const run = await deed(['--review', join(FIXTURES, 'mutate-create-pod-by-runner.json'), join(FIXTURES, 'validate-create-pod-by-runner.json'), '--config', policyFile, '--attestation-key', keyFile, '-o', 'json']);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr.trimEnd().split('\n').at(-1), '2 objects: 1 allowed, 1 denied, 0 warnings');
    // The mutate-* capture passed /mutate, which only stamps: the report says what the install's webhook calls (rev-90).
    assert.match(run.stderr, /\nnote: the mutate-\* captures were replayed through \/mutate, which only stamps; the install's mutating webhooks call \/admit, which judges a CREATE whole: pass --webhook admit for their answer\n2 objects/);
  });
});
