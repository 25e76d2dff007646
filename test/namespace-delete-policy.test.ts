// The ValidatingAdmissionPolicy that keeps the deletion of an opted-in namespace the
// platform's (src/install/namespace-delete-policy.ts): its CEL evaluated here as the API
// server evaluates it, for who may delete which namespace; the chart renders the same
// objects as `deed manifests`. The API server evaluates it in the end-to-end suite
// (test/e2e/cases/namespace-wide.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { run as runCel } from '@bufbuild/cel';
import { toCel } from './helpers.js';
import { assertChartRendersAsOurs, evaluatePolicy, HELM, NAMESPACE_POLICY, renderedPolicy } from './chart-render.js';

const POLICY = NAMESPACE_POLICY;

const ours = (policy: unknown = POLICY) => renderedPolicy('deed-namespace-delete', policy);

const sa = (ns: string, name: string) => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'] });
const user = (username: string, groups: string[] = []) => ({ username, groups: [...groups, 'system:authenticated'] });
const namespace = (name: string, labels: Record<string, string> = { 'deed.dev/sandbox': 'enabled' }, terminating = false) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels }, ...(terminating ? { deletionTimestamp: '2026-11-29T15:24:34Z' } : {}) },
});

/** Whether the policy admits a DELETE of the namespace: its variables in order, then every validation. */
function admits(policy: V1ValidatingAdmissionPolicy, userInfo: unknown, ns: ReturnType<typeof namespace>): boolean {
  const request = { operation: 'DELETE', name: ns.metadata.name, namespace: ns.metadata.name, resource: { group: '', version: 'v1', resource: 'namespaces' }, userInfo };
  return evaluatePolicy(policy, { request, object: null, oldObject: ns }).allowed;
}

describe('the namespace-delete policy', () => {
  test('it matches DELETE of namespaces only, fails closed and is bound with Deny', () => {
    const [policy, binding] = ours();
    assert.deepEqual(policy.spec!.matchConstraints!.resourceRules, [{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['DELETE'] }]);
    assert.equal(policy.spec!.failurePolicy, 'Fail');
    assert.equal(binding.spec!.policyName, 'deed-namespace-delete');
    assert.deepEqual(binding.spec!.validationActions, ['Deny']);
  });

  const cases: Array<{ who: string; userInfo: unknown; ns: ReturnType<typeof namespace>; admitted: boolean }> = [
    { who: "beta's principal (a namespace-admin Role) an opted-in shared namespace", userInfo: sa('sandbox-b', 'janitor'), ns: namespace('shared'), admitted: false },
    { who: "alpha's runner an opted-in shared namespace", userInfo: sa('sandbox-a', 'runner'), ns: namespace('shared'), admitted: false },
    { who: "alpha's manager an opted-in shared namespace", userInfo: sa('platform', 'runner-controller'), ns: namespace('shared'), admitted: false },
    { who: 'a cluster administrator the policy does not name (system:masters is not this policy\'s platform)', userInfo: user('kube-lab-admin', ['system:masters']), ns: namespace('shared'), admitted: false },
    { who: "beta's principal alpha's bound namespace", userInfo: sa('sandbox-b', 'janitor'), ns: namespace('sandbox-a'), admitted: false },
    { who: 'a namespace controller that is no system principal here a namespace it was never asked to delete', userInfo: sa('kube-system', 'namespace-controller'), ns: namespace('shared'), admitted: false },
    { who: 'the platform (by user) an opted-in shared namespace', userInfo: user('argocd'), ns: namespace('shared'), admitted: true },
    { who: 'the platform (by group) an opted-in shared namespace', userInfo: user('jo', ['platform-admins']), ns: namespace('shared'), admitted: true },
    { who: 'a break-glass principal an opted-in shared namespace', userInfo: user('oncall'), ns: namespace('shared'), admitted: true },
    { who: "alpha's runner its bound namespace", userInfo: sa('sandbox-a', 'runner'), ns: namespace('sandbox-a'), admitted: true },
    { who: "a service account of alpha's wildcard its second bound namespace", userInfo: sa('ci', 'builder'), ns: namespace('lab-a'), admitted: true },
    { who: "alpha's group its bound namespace", userInfo: user('ann', ['team-a']), ns: namespace('sandbox-a'), admitted: true },
    { who: "alpha's manager (by user) its bound namespace", userInfo: sa('platform', 'runner-controller'), ns: namespace('sandbox-a'), admitted: true },
    { who: "alpha's manager (by group) its bound namespace", userInfo: user('ops', ['alpha-ops']), ns: namespace('sandbox-a'), admitted: true },
    { who: "beta's principal a namespace that has not opted in", userInfo: sa('sandbox-b', 'janitor'), ns: namespace('plain', {}), admitted: true },
    { who: "beta's principal a namespace opted out by another value", userInfo: sa('sandbox-b', 'janitor'), ns: namespace('plain', { 'deed.dev/sandbox': 'disabled' }), admitted: true },
    { who: 'the namespace controller a namespace already terminating', userInfo: sa('kube-system', 'namespace-controller'), ns: namespace('shared', undefined, true), admitted: true },
  ];
  for (const { who, userInfo, ns, admitted } of cases) {
    test(`${who}: ${admitted ? 'may delete it' : 'is refused'}`, () => {
      assert.equal(admits(ours()[0], userInfo, ns), admitted);
    });
  }

  test('system:masters is the default platform: a cluster administrator deletes an opted-in namespace under the default policy', () => {
    assert.equal(admits(ours({})[0], user('kube-lab-admin', ['system:masters']), namespace('shared')), true);
    assert.equal(admits(ours({})[0], sa('sandbox-b', 'janitor'), namespace('shared')), false);
  });

  test('the refusal names the namespace and the fix', () => {
    const [policy] = ours();
    const validation = policy.spec!.validations![0]!;
    const message = runCel(validation.messageExpression!, { request: toCel({ name: 'shared' }) } as never);
    assert.equal(
      message,
      "namespace shared is opted in to Deed (deed.dev/sandbox=enabled) and deleting it deletes every environment's objects in it: only the platform and break-glass principals of Deed's policy, and for a namespace the policy binds to one environment that environment's principals and managers, may delete it; ask the platform",
    );
    assert.equal(validation.reason, 'Forbidden');
  });

  test('the chart renders the same objects as deed manifests', { skip: existsSync(HELM) ? false : 'no helm in KUBEBUILDER_ASSETS' }, () => {
    assertChartRendersAsOurs('namespace-delete-policy.yaml', [POLICY, { environments: [{ id: 'default', groups: ['system:serviceaccounts'] }] }], (policy) => ours(policy));
  });
});
