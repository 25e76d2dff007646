// The ValidatingAdmissionPolicy that checks, after every mutating admission step, what CEL can
// tell of a new stamped object (src/install/create-stamps-policy.ts): the chart renders the same
// objects as `deed manifests`, and the requester mapping is the policy's. The API server
// evaluates it in the end-to-end suite (test/e2e/cases/one-call.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { renderManifests } from '../src/install/manifests.js';
import { actsForExpression } from '../src/install/create-stamps-policy.js';
import { ROOT } from './cli-process.js';
import { evaluatePolicy } from './chart-render.js';

const HELM = join(process.env.KUBEBUILDER_ASSETS ?? '/nonexistent', 'helm');
const POLICY = {
  labelPrefix: 'deed.dev',
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner', 'ci:*'], groups: ['team-a'], namespaces: ['sandbox-a'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:runner'] },
  ],
  breakGlass: { users: ['oncall'] },
};

function ours(policy: unknown): V1ValidatingAdmissionPolicy {
  return renderManifests({ namespace: 'deed-system', image: 'x', policy: stringify(policy) }).find((o) => o.metadata?.name === 'deed-create-stamps') as V1ValidatingAdmissionPolicy;
}

/** Whether the policy admits a CREATE: its variables in order, then every validation, as the API server evaluates them. */
function admits(policy: V1ValidatingAdmissionPolicy, request: Record<string, unknown>, object: Record<string, unknown>): boolean {
  return evaluatePolicy(policy, { request, object }).allowed;
}

describe('the create-stamps policy', () => {
  test('a service account matches exactly or by its namespace\'s wildcard, and a group by membership', () => {
    assert.equal(
      actsForExpression(['sandbox-a:runner', 'ci:*'], ['team-a']),
      'request.userInfo.username in ["system:serviceaccount:sandbox-a:runner"] || request.userInfo.username.startsWith("system:serviceaccount:ci:") || (has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ["team-a"]))',
    );
    assert.equal(actsForExpression([], []), 'false');
  });

  test('it matches the CREATEs Deed stamps in the review scope (the stamped kinds\', the workloads\', the default row\'s), with the webhooks\' matchConditions', () => {
    const policy = ours(POLICY);
    const { resourceRules, excludeResourceRules } = policy.spec!.matchConstraints!;
    const names = (rules: typeof resourceRules, group: string, resource: string) =>
      (rules ?? []).some((r) => r.operations!.includes('CREATE') && (r.apiGroups!.includes('*') || r.apiGroups!.includes(group)) && r.apiVersions!.includes('*') && (r.resources!.includes('*') || r.resources!.includes(resource)));
    const cases: Array<[string, string, boolean]> = [
      ['', 'pods', true],
      ['', 'secrets', true],
      ['coordination.k8s.io', 'leases', true],
      ['apps', 'deployments', true],
      ['', 'services', true], // the default row's
      ['labs.example', 'virtualmachines', true],
      ['', 'podtemplates', false], // no stamps on a PodTemplate
      ['', 'bindings', false],
      ['snapshot.storage.k8s.io', 'volumesnapshots', false],
      ['', 'events', false],
      ['wgpolicyk8s.io', 'policyreports', false], // an exception, in every version (v1alpha2)
    ];
    for (const [group, resource, stamped] of cases) assert.equal(names(resourceRules, group, resource) && !names(excludeResourceRules, group, resource), stamped, `${group}/${resource}`);
    assert.deepEqual(policy.spec!.matchConditions!.map((c) => c.name), ['exclude-deed-itself', 'exclude-kube-system-service-accounts']);
    const environments = policy.spec!.variables!.find((v) => v.name === 'environments')!.expression;
    assert.match(environments, /\? \["alpha"\] : \[\]\) \+ \(\(.*\? \["beta"\] : \[\]\)$/);
  });

  test("a workload controller's object of a default-row kind (a StatefulSet's ControllerRevision, with its template's labels) passes unstamped; its pods must carry the stamps whole", () => {
    const policy = ours(POLICY);
    const controller = { username: 'system:serviceaccount:kube-system:statefulset-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] };
    const request = (group: string, resource: string, userInfo: unknown) => ({ operation: 'CREATE', namespace: 'sandbox-a', resource: { group, version: 'v1', resource }, userInfo });
    const labelled = { metadata: { name: 'lab-7d9', labels: { 'deed.dev/environment': 'alpha', app: 'lab' } } };
    assert.equal(admits(policy, request('apps', 'controllerrevisions', controller), labelled), true);
    assert.equal(admits(policy, request('', 'pods', controller), labelled), false, 'a pod of the controller with half the stamps');
    // A pod's ResourceClaim, which the resourceclaim controller makes and Deed stamps whole (rev-96 F2).
    const claims = { username: 'system:serviceaccount:kube-system:resource-claim-controller', groups: controller.groups };
    assert.equal(admits(policy, request('resource.k8s.io', 'resourceclaims', claims), labelled), false, 'a claim of the controller a later mutator took the managed label from');
    const runner = { username: 'system:serviceaccount:sandbox-a:runner', groups: ['system:serviceaccounts', 'system:authenticated'] };
    const whole = { metadata: { name: 'web', labels: { 'deed.dev/environment': 'alpha', 'deed.dev/managed': 'true' }, annotations: { 'deed.dev/create-nonce': 'a'.repeat(64), 'deed.dev/attestation': 'v2:k:x' } } };
    assert.equal(admits(policy, request('', 'services', runner), whole), true);
    assert.equal(admits(policy, request('', 'services', runner), { metadata: { ...whole.metadata, labels: { 'deed.dev/environment': 'alpha' } } }), false, "a runner's Service a later mutator took the managed label from");
  });

  test("a pod's runner mark is the environment its service account is mapped to, on a pod of no environment, and never on an environment's", () => {
    const policy = ours({ ...POLICY, environments: [...POLICY.environments, { id: 'gamma', serviceAccounts: ['shared:gamma-runner'] }] });
    const manager = { username: 'platform-manager', groups: ['system:authenticated'] };
    const request = (namespace: string, userInfo: unknown = manager) => ({ operation: 'CREATE', namespace, resource: { group: '', version: 'v1', resource: 'pods' }, userInfo });
    const pod = (serviceAccountName: string | undefined, labels: Record<string, string>) => ({ metadata: { name: 'runner-0', labels }, spec: { ...(serviceAccountName ? { serviceAccountName } : {}), containers: [{ name: 'main' }] } });
    const MARK = 'deed.dev/runner';
    assert.equal(admits(policy, request('shared'), pod('gamma-runner', { [MARK]: 'gamma' })), true);
    assert.equal(admits(policy, request('shared'), pod('gamma-runner', {})), false, 'a later mutator took it off');
    assert.equal(admits(policy, request('shared'), pod('gamma-runner', { [MARK]: 'alpha' })), false, 'or changed it');
    assert.equal(admits(policy, request('shared'), pod('builder', { [MARK]: 'gamma' })), false, 'or put it on a pod that is no runner');
    assert.equal(admits(policy, request('shared'), pod(undefined, {})), true, 'the default account is no runner here');
    assert.equal(admits(policy, request('ci'), pod(undefined, { [MARK]: 'alpha' })), true, "a namespace's wildcard maps its default account too");
    assert.equal(admits(policy, request('ci'), { metadata: { name: 'x', labels: {} }, spec: { serviceAccount: 'old-field' } }), false, 'the deprecated field names the account when the new one is absent');
    const runner = { username: 'system:serviceaccount:sandbox-a:runner', groups: ['system:serviceaccounts', 'system:authenticated'] };
    const stamped = { 'deed.dev/environment': 'alpha', 'deed.dev/managed': 'true', 'deed.dev/owner-uid': 'u' };
    const whole = (labels: Record<string, string>) => ({ ...pod('builder', { ...stamped, ...labels }), metadata: { name: 'lab', labels: { ...stamped, ...labels }, annotations: { 'deed.dev/create-nonce': 'a'.repeat(64), 'deed.dev/attestation': 'v2:k:x' } } });
    const withUid = { ...request('sandbox-a', { ...runner, extra: { 'authentication.kubernetes.io/pod-uid': ['u'] } }) };
    assert.equal(admits(policy, withUid, whole({})), true);
    assert.equal(admits(policy, withUid, whole({ [MARK]: 'alpha' })), false, "an environment's pod is no runner");
    const secret = { operation: 'CREATE', namespace: 'shared', resource: { group: '', version: 'v1', resource: 'secrets' }, userInfo: manager };
    assert.equal(admits(policy, secret, { metadata: { name: 's', labels: { [MARK]: 'gamma' } } }), true, 'only pods are judged for it');
  });

  test("every expression stays under the API server's limit of 100,000 characters with 100 environments of 10 service accounts each", () => {
    const environments = Array.from({ length: 100 }, (_, i) => ({ id: `env-${i}`, serviceAccounts: Array.from({ length: 10 }, (_, j) => `ns-${i}:runner-${j}`) }));
    const policy = ours({ ...POLICY, environments });
    const sizes = [...policy.spec!.variables!, ...policy.spec!.validations!].map((v) => [...v.expression].length);
    assert.ok(Math.max(...sizes) < 100_000, `largest: ${Math.max(...sizes)}`);
  });

  test('the chart renders the same policy as deed manifests', { skip: existsSync(HELM) ? false : 'no helm in KUBEBUILDER_ASSETS' }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-create-stamps-'));
    const values = join(dir, 'values.yaml');
    writeFileSync(values, stringify({ policy: POLICY }));
    const out = execFileSync(HELM, ['template', 'deed', join(ROOT, 'manifests/helm/deed'), '-n', 'deed-system', '-f', values, '-s', 'templates/create-stamps-policy.yaml'], { encoding: 'utf8' });
    const [chart] = parseAllDocuments(out).map((d) => d.toJS() as V1ValidatingAdmissionPolicy);
    const mine = ours(POLICY);
    for (const field of ['matchConstraints', 'matchConditions', 'variables', 'validations'] as const) assert.deepEqual(chart!.spec![field], mine.spec![field], field);
  });

  test("the chart's own matchConditions reach the policy too, and with failurePolicy Ignore its binding warns instead of denying", { skip: existsSync(HELM) ? false : 'no helm in KUBEBUILDER_ASSETS' }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-create-stamps-'));
    const render = (webhook: Record<string, unknown>) => {
      const values = join(dir, 'values.yaml');
      writeFileSync(values, stringify({ policy: POLICY, webhook }));
      const out = execFileSync(HELM, ['template', 'deed', join(ROOT, 'manifests/helm/deed'), '-n', 'deed-system', '-f', values, '-s', 'templates/create-stamps-policy.yaml'], { encoding: 'utf8' });
      return parseAllDocuments(out).map((d) => d.toJS() as { kind: string; spec: { matchConditions?: Array<{ name: string }>; validationActions?: string[] } });
    };
    const skip = { name: 'skip-ci-bots', expression: "!request.userInfo.username.startsWith('system:serviceaccount:ci:')" };
    const [policy, binding] = render({ matchConditions: [skip] });
    assert.deepEqual(policy!.spec.matchConditions!.map((c) => c.name), ['exclude-deed-itself', 'exclude-kube-system-service-accounts', 'skip-ci-bots'], 'a write the webhooks skip is not checked for stamps Deed never wrote');
    assert.deepEqual(binding!.spec.validationActions, ['Deny']);
    assert.deepEqual(render({ failurePolicy: 'Ignore' })[1]!.spec.validationActions, ['Warn', 'Audit'], 'a write that passed unstamped while Deed was down is not refused here');
  });
});
