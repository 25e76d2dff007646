// The ValidatingAdmissionPolicy that keeps the review scope's switch (a namespace's opt-in
// label, Deed's webhook configurations) the platform's: what it matches and who it lets
// through, derived from the policy at render time. The API server evaluates it; the
// end-to-end suite (test/e2e/cases/scope-switch.ts) proves it there.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import { parseConfig } from '../src/config/load.js';
import { renderManifests } from '../src/install/manifests.js';
import { CERT_MANAGER_CAINJECTOR, reviewScopePolicy, scopeAdmins } from '../src/install/review-scope-policy.js';
import { kustomizeCertManagerComponentPatch } from '../src/install/cert-manager.js';
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
    assert.equal(rules[1]!.resourceNames, undefined, 'resourceNames never match a deletecollection');
    assert.deepEqual(rules[1]!.operations, ['UPDATE', 'DELETE']);
    const variable = (name: string) => policy.spec!.variables!.find((v) => v.name === name)!.expression;
    assert.equal(variable('deedConfiguration'), '!variables.isNamespace && (oldObject != null ? oldObject.metadata.name : request.name) == "deed"');
    assert.equal(variable('caInjector'), 'request.userInfo.username in []');
    assert.equal(policy.spec!.failurePolicy, 'Fail');
  });

  test('a cainjector it names may update Deed\'s configurations, not delete them; the cert-manager component names cert-manager\'s', () => {
    const [policy] = reviewScopePolicy('deed', 'deed', config({}), {}, [CERT_MANAGER_CAINJECTOR]);
    const variables = policy.spec!.variables!;
    assert.equal(variables.find((v) => v.name === 'caInjector')!.expression, `request.userInfo.username in ["${CERT_MANAGER_CAINJECTOR}"]`);
    assert.match(policy.spec!.validations![1]!.expression, /variables\.caInjector && request\.operation == "UPDATE"/);
    const { patch } = kustomizeCertManagerComponentPatch();
    assert.deepEqual(patch, [{ op: 'replace', path: `/spec/variables/${variables.findIndex((v) => v.name === 'caInjector')}/expression`, value: `request.userInfo.username in ["${CERT_MANAGER_CAINJECTOR}"]` }]);
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
