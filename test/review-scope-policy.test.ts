// The ValidatingAdmissionPolicy that keeps the review scope's switch (a namespace's opt-in
// label, Deed's webhook configurations) the platform's: what it matches and who it lets
// through, derived from the policy at render time. The API server evaluates it; the
// end-to-end suite (test/e2e/cases/scope-switch.ts) proves it there.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import { parseConfig } from '../src/config/load.js';
import { renderManifests } from '../src/install/manifests.js';
import { reviewScopePolicy, scopeAdmins } from '../src/install/review-scope-policy.js';
import { requesterIsOneOf } from '../src/install/admission-policy.js';

const config = (input: unknown) => parseConfig(input, 'the policy');

describe('the review scope policy', () => {
  test('platform and break-glass principals are its admins; system:masters is the default platform group', () => {
    assert.deepEqual(scopeAdmins(config({})), { users: [], groups: ['system:masters'] });
    const named = scopeAdmins(config({ platform: { users: ['argocd'], groups: [] }, breakGlass: { users: ['oncall', 'argocd'], groups: ['sre'] } }));
    assert.deepEqual(named, { users: ['argocd', 'oncall'], groups: ['sre'] });
  });

  test('names are CEL string literals, quotes and backslashes escaped', () => {
    assert.equal(
      requesterIsOneOf(['a"b', 'c\\d'], []),
      'request.userInfo.username in ["a\\"b", "c\\\\d"] || (has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in []))',
    );
  });

  test('it matches namespace updates (status and finalize too) and changes or deletions of Deed\'s own webhook configurations only', () => {
    const [policy] = reviewScopePolicy('deed', 'deed', config({}), {});
    const rules = policy.spec!.matchConstraints!.resourceRules!;
    assert.deepEqual(rules[0]!.resources, ['namespaces', 'namespaces/status', 'namespaces/finalize']);
    assert.deepEqual(rules[0]!.operations, ['UPDATE']);
    assert.deepEqual(rules[1]!.resourceNames, ['deed']);
    assert.deepEqual(rules[1]!.operations, ['UPDATE', 'DELETE']);
    assert.equal(policy.spec!.failurePolicy, 'Fail');
  });

  test('deed manifests renders it from the policy it installs, bound with Deny', () => {
    const objects = renderManifests({ namespace: 'deed-system', image: 'deed:1', policy: 'breakGlass:\n  users: ["oncall"]\n' });
    const policy = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as V1ValidatingAdmissionPolicy;
    const binding = objects.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding') as V1ValidatingAdmissionPolicyBinding;
    assert.match(policy.spec!.variables![0]!.expression, /username in \["oncall"\]/);
    assert.match(policy.spec!.variables![0]!.expression, /g in \["system:masters"\]/);
    assert.equal(binding.spec!.policyName, policy.metadata!.name);
    assert.deepEqual(binding.spec!.validationActions, ['Deny']);
  });
});
