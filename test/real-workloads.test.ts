// Issue 40, "Real workloads pass as they are written": public manifests (test/fixtures/real-world,
// sources in its README) sent as an environment's runner sends them pass `deed review`
// unchanged but for Deed's stamps; a repository's directory is judged as the installed
// webhooks would be sent it (cluster-scoped kinds and Deed's own namespace are not judged);
// warnings are printed whole. The same workloads in a real API server:
// test/e2e/cases/real-workloads.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../src/admission/types.js';
import { decide } from '../src/admission/decide.js';
import { DEFAULT_NAMESPACE } from '../src/install/manifests.js';
import { DEFAULT_DEED_NAMESPACE } from '../src/review/run.js';
import { FIXTURE_POLICY, fixture, testContext } from './helpers.js';
import { ROOT } from './serve-process.js';

const REAL_WORLD = join(import.meta.dirname, 'fixtures', 'real-world');
const dir = mkdtempSync(join(tmpdir(), 'deed-real-workloads-'));
const policyFile = join(dir, 'policy.yaml');
writeFileSync(policyFile, stringify(FIXTURE_POLICY));
const RUNNER_A = ['--as', 'system:serviceaccount:sandbox-a:runner', '--pod-name', 'runner-0', '--pod-uid', '144baa57-4863-4fb3-a622-a0c0ecb4a7ff'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function deed(args: string[], input = ''): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, DEED_CONFIG: '' }, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

const objects = (stdout: string) => parseAllDocuments(stdout).map((d) => d.toJS() as KubeObject);
const byKind = (list: KubeObject[], kind: string) => list.find((o) => o.kind === kind)!;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reading deep into specs
const spec = (o: KubeObject): Record<string, any> => o.spec as Record<string, any>;

describe("real workloads, as a declared platform deployer sends them into a namespace environments share", () => {
  test("pass deed review as written: nothing stamped; what selects pods selects pods of no environment only, and the templates match; the platform's default-deny NetworkPolicy isolates every pod", async () => {
    const platformFile = join(dir, 'platform.yaml');
    writeFileSync(platformFile, stringify({ ...FIXTURE_POLICY, platform: { users: ['system:serviceaccount:argocd:argocd-application-controller'], groups: ['system:masters'] } }));
    const run = await deed(['review', '-f', REAL_WORLD, '-n', 'shared', '--as', 'system:serviceaccount:argocd:argocd-application-controller', '--config', platformFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^10 objects: 10 allowed, 0 denied, 0 warnings$/m);
    const out = objects(run.stdout);
    const MARK = 'deed.dev/no-environment';
    assert.ok(out.every((o) => o.metadata.labels?.['deed.dev/environment'] === undefined), 'nothing is stamped');
    const named = (kind: string, name: string) => out.find((o) => o.kind === kind && o.metadata.name === name)!;
    assert.deepEqual(spec(named('Service', 'web')).selector, { 'app.kubernetes.io/name': 'web', 'app.kubernetes.io/instance': 'web', [MARK]: 'true' });
    assert.deepEqual(spec(named('Deployment', 'web')).selector.matchLabels[MARK], 'true');
    assert.deepEqual(spec(named('Deployment', 'web')).template.metadata.labels[MARK], 'true');
    // The platform's NetworkPolicy is stored as written: every environment's sandbox here is isolated too (rev-89).
    assert.deepEqual(spec(named('NetworkPolicy', 'default-deny-ingress')).podSelector, {});
    assert.equal(named('Pod', 'web-test-connection').metadata.labels?.[MARK], 'true');
  });
});

describe("real workloads, as an environment's runner sends them", { concurrency: 3 }, () => {
  test('pass deed review as written: stamped, no denial, no warning; the templates keep automount unset, the test hook its restartPolicy', async () => {
    const run = await deed(['review', '-f', REAL_WORLD, '-n', 'sandbox-a', ...RUNNER_A, '--config', policyFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^10 objects: 10 allowed, 0 denied, 0 warnings$/m);
    assert.doesNotMatch(run.stderr, /warning: |denied \[/);
    const out = objects(run.stdout);
    assert.ok(out.every((o) => o.metadata.labels?.['deed.dev/environment'] === 'alpha'), 'every object is stamped as alpha\'s');
    assert.equal(spec(byKind(out, 'Deployment')).template.spec.automountServiceAccountToken, undefined, 'the Deployment template is as written');
    assert.equal(spec(byKind(out, 'StatefulSet')).template.spec.automountServiceAccountToken, undefined, 'the StatefulSet template is as written');
    const hook = byKind(out, 'Pod');
    assert.equal(hook.metadata.annotations?.['helm.sh/hook'], 'test');
    assert.equal(spec(hook).restartPolicy, 'Never', "the test hook's restartPolicy stands: it is not a sandbox");
    assert.equal(spec(hook).automountServiceAccountToken, false, 'Deed turned the token off in the pod');
    assert.match(run.stderr, /removed: volume kube-api-access-\w+ \(the API server's service-account token\) and its mounts/);
  });

  test("with a controller manager without per-controller credentials, Deed writes automount off into the templates, and they still pass", async () => {
    const policy = join(dir, 'no-per-controller-credentials.yaml');
    writeFileSync(policy, stringify({ ...FIXTURE_POLICY, workloadControllers: { perControllerCredentials: false } }));
    const run = await deed(['review', '-f', REAL_WORLD, '-n', 'sandbox-a', ...RUNNER_A, '--config', policy]);
    assert.equal(run.code, 0, run.stderr);
    const out = objects(run.stdout);
    assert.equal(spec(byKind(out, 'Deployment')).template.spec.automountServiceAccountToken, false);
    assert.equal(spec(byKind(out, 'StatefulSet')).template.spec.automountServiceAccountToken, false);
  });

  test('a sandbox pod (one with the main container) still has its restartPolicy owned', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'agent', namespace: 'sandbox-a', annotations: { 'helm.sh/hook': 'test' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'agent:1' }] } };
    const run = await deed(['review', '-f', '-', ...RUNNER_A, '--config', policyFile], stringify(pod));
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /denied \[template\.restart-policy\] spec\.restartPolicy: is platform-owned: expected "Always", got "Never"/);
  });
});

describe("deed review judges what the installed webhooks would be sent", { concurrency: 3 }, () => {
  test("Deed's own install (deed manifests): cluster-scoped kinds and Deed's namespace are not judged, passed as they are", async () => {
    const manifests = await deed(['manifests']);
    assert.equal(manifests.code, 0, manifests.stderr);
    const run = await deed(['review', '-f', '-'], manifests.stdout);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^Deployment deed-system\/deed \(CREATE by [^)]*\): not judged, passed as it is \(namespace deed-system is Deed's own: the webhooks never select it\)$/m);
    assert.match(run.stderr, /^ValidatingWebhookConfiguration deed \(CREATE by [^)]*\): not judged, passed as it is \(cluster-scoped: no Deed webhook is called for CREATE of admissionregistration\.k8s\.io\/validatingwebhookconfigurations\)$/m);
    assert.match(run.stderr, /^ValidatingAdmissionPolicy deed-review-scope \(CREATE by [^)]*\): not judged, passed as it is \(cluster-scoped: /m);
    assert.match(run.stderr, /^(\d+) objects: 0 allowed, 0 denied, 0 warnings, \1 not judged$/m);
    const given = objects(manifests.stdout).filter((o) => o !== null);
    const printed = objects(run.stdout);
    assert.equal(printed.length, given.length);
    assert.ok(printed.every((o) => o.metadata.labels?.['deed.dev/environment'] === undefined), 'nothing is stamped');
    assert.deepEqual(printed.find((o) => o.kind === 'Deployment'), given.find((o) => o.kind === 'Deployment'), "Deed's Deployment is printed as given");
  });

  test('a PriorityClass and a StorageClass are addressed without a namespace and not judged, whatever -n says', async () => {
    const docs = [
      { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high-priority' }, value: 1000000, globalDefault: false, description: 'for XYZ service pods only' },
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: 'b' } },
    ];
    const run = await deed(['review', '-f', '-', '-n', 'sandbox-a', ...RUNNER_A, '--config', policyFile], docs.map((d) => stringify(d)).join('---\n'));
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^PriorityClass high-priority \(CREATE by [^)]*\): not judged, passed as it is \(cluster-scoped: no Deed webhook is called for CREATE of scheduling\.k8s\.io\/priorityclasses\)$/m);
    assert.match(run.stderr, /^StorageClass standard \(CREATE by [^)]*\): not judged, passed as it is \(cluster-scoped: /m);
    assert.match(run.stderr, /^ConfigMap sandbox-a\/settings \(CREATE by [^)]*\): allowed$/m, 'a namespaced object without a namespace takes -n, and is judged');
    const out = objects(run.stdout);
    assert.equal(byKind(out, 'PriorityClass').metadata.namespace, undefined);
    assert.equal(byKind(out, 'PriorityClass').metadata.labels, undefined, 'not stamped');
  });

  test("kube-system is never selected, and --deed-namespace names Deed's own", async () => {
    const cm = (namespace: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace }, data: { a: 'b' } });
    const run = await deed(['review', '-f', '-', '--deed-namespace', 'platform-deed'], [cm('kube-system'), cm('platform-deed'), cm('deed-system')].map((d) => stringify(d)).join('---\n'));
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^ConfigMap kube-system\/c \([^)]*\): not judged, passed as it is \(namespace kube-system is kube-system: the webhooks never select it\)$/m);
    assert.match(run.stderr, /^ConfigMap platform-deed\/c \([^)]*\): not judged, passed as it is \(namespace platform-deed is Deed's own: the webhooks never select it\)$/m);
    assert.match(run.stderr, /^ConfigMap deed-system\/c \([^)]*\): allowed$/m, 'deed-system is an ordinary namespace when Deed lives elsewhere');
  });

  test("the review's default for Deed's namespace is the install's", () => {
    assert.equal(DEFAULT_DEED_NAMESPACE, DEFAULT_NAMESPACE);
  });
});

describe('warnings', () => {
  const pod = () => {
    const body = fixture('validate-create-pod-by-runner.json');
    const main = body.request.object.spec.containers[0];
    main.securityContext = { capabilities: { add: ['NET_ADMIN', 'NET_RAW', 'SYS_ADMIN', 'SYS_PTRACE', 'SYS_RESOURCE', 'IPC_LOCK', 'SYS_TIME', 'MKNOD'] } };
    return body.request.object as KubeObject;
  };

  test('are printed whole by deed review, however long', async () => {
    const obj = pod();
    delete obj.metadata.managedFields;
    const claim = fixture('mutate-create-pvc-by-runner.json').request.object as KubeObject;
    claim.metadata.labels = { ...claim.metadata.labels, 'deed.dev/workspace': 'true' };
    for (const o of [obj, claim]) for (const k of ['uid', 'creationTimestamp', 'resourceVersion', 'managedFields']) delete o.metadata[k];
    const run = await deed(['review', '-f', '-', ...RUNNER_A, '--config', policyFile], [claim, obj].map((d) => stringify(d)).join('---\n'));
    const line = run.stderr.split('\n').find((l) => l.includes('warning: deed template.privileged'));
    assert.ok(line !== undefined, run.stderr);
    const text = line.trim().slice('warning: '.length);
    assert.ok(text.length > 119, `the whole warning: ${text}`);
    assert.ok(text.endsWith('(spec.containers[name=main].securityContext.capabilities.add)'), text);
  });

  test("are cut to 119 characters in the webhook's answer, the verdict keeping them whole", () => {
    const body = fixture('validate-create-pod-by-runner.json');
    body.request.object = pod();
    const d = decide('validate', body, testContext());
    assert.equal(d.kind, 'review');
    if (d.kind !== 'review') return;
    const whole = d.verdict.warnings.find((w) => w.startsWith('deed template.privileged'))!;
    assert.ok(whole.length > 119);
    const wire = d.response.response.warnings!.find((w) => w.startsWith('deed template.privileged'))!;
    assert.equal(wire.length, 119);
    assert.equal(wire, `${whole.slice(0, 116)}...`);
  });
});
