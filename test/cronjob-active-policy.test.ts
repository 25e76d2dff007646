// The ValidatingAdmissionPolicy that keeps a CronJob's status.active the controller's
// (src/install/cronjob-active-policy.ts; rev-93): with concurrencyPolicy Replace the cronjob
// controller deletes every Job that list names at the next run, in any namespace and by name
// alone. Its CEL evaluated here as the API server evaluates it; the chart renders the same
// objects as `deed manifests`. The API server evaluates it in the end-to-end suite
// (test/e2e/cases/controllers.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { run as runCel } from '@bufbuild/cel';
import { toCel } from './helpers.js';
import { assertChartRendersAsOurs, evaluatePolicy, HELM, NAMESPACE_POLICY, renderedPolicy } from './chart-render.js';

const ours = (policy: unknown = NAMESPACE_POLICY) => renderedPolicy('deed-cronjob-active', policy);

const sa = (ns: string, name: string) => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'] });
const user = (username: string, groups: string[] = []) => ({ username, groups: [...groups, 'system:authenticated'] });
const alphaJob = { kind: 'Job', namespace: 'sandbox-a', name: 'alpha-run', uid: '6f1c0f8e-0000-4000-8000-000000000001', apiVersion: 'batch/v1' };
const cronJob = (active?: unknown[]) => ({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'tick', namespace: 'beta-own' }, spec: { schedule: '* * * * *' }, status: active === undefined ? {} : { active } });

function admits(policy: V1ValidatingAdmissionPolicy, userInfo: unknown, before: unknown, after: unknown): boolean {
  const request = { operation: 'UPDATE', name: 'tick', namespace: 'beta-own', subResource: 'status', resource: { group: 'batch', version: 'v1', resource: 'cronjobs' }, userInfo };
  return evaluatePolicy(policy, { request, object: after, oldObject: before }).allowed;
}

describe('the cronjob-active policy', () => {
  test('it matches UPDATE of cronjobs/status in every namespace, fails closed and is bound with Deny', () => {
    const [policy, binding] = ours();
    assert.deepEqual(policy.spec!.matchConstraints!.resourceRules, [{ apiGroups: ['batch'], apiVersions: ['v1'], resources: ['cronjobs/status'], operations: ['UPDATE'] }]);
    assert.equal(policy.spec!.matchConstraints!.namespaceSelector, undefined, 'every namespace: a tenant writes it from one Deed does not review');
    assert.equal(policy.spec!.failurePolicy, 'Fail');
    assert.deepEqual(binding.spec!.validationActions, ['Deny']);
  });

  test("beta's namespace admin may not add another environment's Job to status.active, nor change or drop what is listed", () => {
    const [policy] = ours();
    const beta = sa('beta-own', 'admin');
    assert.equal(admits(policy, beta, cronJob(), cronJob([alphaJob])), false);
    assert.equal(admits(policy, beta, cronJob([alphaJob]), cronJob([{ ...alphaJob, name: 'other' }])), false);
    assert.equal(admits(policy, beta, cronJob([alphaJob]), cronJob([])), false);
    // A status write that leaves the list as it is (lastScheduleTime, conditions) passes.
    assert.equal(admits(policy, beta, cronJob([alphaJob]), { ...cronJob([alphaJob]), status: { active: [alphaJob], lastScheduleTime: '2026-12-07T03:00:00Z' } }), true);
    assert.equal(admits(policy, beta, cronJob(), cronJob()), true);
  });

  test('the cronjob controller (its service account, or the controller manager without per-controller credentials) and break-glass may', () => {
    const [policy] = ours();
    assert.equal(admits(policy, sa('kube-system', 'cronjob-controller'), cronJob(), cronJob([alphaJob])), true);
    assert.equal(admits(policy, user('system:kube-controller-manager'), cronJob(), cronJob([alphaJob])), true);
    assert.equal(admits(policy, user('oncall'), cronJob(), cronJob([alphaJob])), true, "the policy's break-glass user");
    assert.equal(admits(ours({})[0], user('kube-lab-admin', ['system:masters']), cronJob(), cronJob([alphaJob])), true, 'system:masters, the default break-glass group');
    assert.equal(admits(policy, user('kube-lab-admin', ['system:masters']), cronJob(), cronJob([alphaJob])), false, 'not break-glass in a policy that names its own');
  });

  test('the refusal names the CronJob and the fix', () => {
    const validation = ours()[0].spec!.validations![0]!;
    assert.equal(
      runCel(validation.messageExpression!, { request: toCel({ namespace: 'beta-own', name: 'tick' }) } as never),
      'cronjob beta-own/tick: status.active names the Jobs its controller deletes at the next run (concurrencyPolicy Replace), in any namespace and by name alone: only the cronjob controller (kube-system) and break-glass may change it: leave status.active out of the write',
    );
  });

  test('the chart renders the same objects as deed manifests', { skip: existsSync(HELM) ? false : 'no helm in KUBEBUILDER_ASSETS' }, () => {
    assertChartRendersAsOurs('cronjob-active-policy.yaml', [NAMESPACE_POLICY, {}, { breakGlass: { users: ['x'], groups: [] } }], (policy) => ours(policy));
  });
});
