import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionRequest } from '../src/admission/types.js';
import { routedTo } from '../src/review/routing.js';

function request(operation: AdmissionRequest['operation'], group: string, resource: string, subResource?: string, namespace?: string) {
  return { operation, resource: { group, version: 'v1', resource }, ...(subResource === undefined ? {} : { subResource }), ...(namespace === undefined ? {} : { namespace }) };
}

describe('which requests the installed webhook configurations send to Deed', () => {
  test('a pod CREATE goes to both webhooks, its UPDATE and DELETE to the validating one only', () => {
    assert.equal(routedTo('mutate', request('CREATE', '', 'pods')), true);
    assert.equal(routedTo('validate', request('CREATE', '', 'pods')), true);
    assert.equal(routedTo('mutate', request('UPDATE', '', 'pods')), false);
    assert.equal(routedTo('validate', request('DELETE', '', 'pods')), true);
  });

  test('the doors to a pod are routed by subresource: the writes and the CONNECTs into its containers, not its log', () => {
    assert.equal(routedTo('validate', request('UPDATE', '', 'pods', 'status')), true);
    assert.equal(routedTo('validate', request('CREATE', '', 'pods', 'eviction')), true);
    for (const sub of ['exec', 'attach', 'portforward', 'proxy']) assert.equal(routedTo('validate', request('CONNECT', '', 'pods', sub)), true, sub);
    assert.equal(routedTo('validate', request('CONNECT', '', 'services', 'proxy')), true);
    assert.equal(routedTo('mutate', request('CONNECT', '', 'pods', 'exec')), false);
    assert.equal(routedTo('validate', request('CONNECT', '', 'pods', 'log')), false);
    assert.equal(routedTo('mutate', request('UPDATE', '', 'pods', 'status')), false);
  });

  test('network policies are matched in their own group, not the core one', () => {
    assert.equal(routedTo('mutate', request('CREATE', 'networking.k8s.io', 'networkpolicies')), true);
    assert.equal(routedTo('mutate', request('CREATE', '', 'networkpolicies')), false);
  });

  test('cluster-scoped kinds no rule names reach neither webhook', () => {
    for (const webhook of ['mutate', 'validate', 'admit'] as const) {
      assert.equal(routedTo(webhook, request('CREATE', '', 'namespaces')), false);
      assert.equal(routedTo(webhook, request('CREATE', 'rbac.authorization.k8s.io', 'clusterroles')), false);
    }
  });

  test("every other namespaced kind reaches the default row's webhooks: its CREATE the mutating one (and validate, in the two-call model), its later writes, status and scale the validating one; not its exceptions", () => {
    for (const [group, resource] of [['', 'endpoints'], ['', 'services'], ['rbac.authorization.k8s.io', 'roles'], ['labs.example', 'virtualmachines']] as const) {
      assert.equal(routedTo('admit', request('CREATE', group, resource, undefined, 'sandbox-a')), true, `${group}/${resource}`);
      assert.equal(routedTo('validate', request('CREATE', group, resource, undefined, 'sandbox-a')), true, `${group}/${resource}`);
      // A Service's UPDATE reaches the mutating webhook too: it keeps the scope of its selector (selector-scope.ts).
      assert.equal(routedTo('admit', request('UPDATE', group, resource, undefined, 'sandbox-a')), resource === 'services', `${group}/${resource}`);
      assert.equal(routedTo('validate', request('DELETE', group, resource, undefined, 'sandbox-a')), true, `${group}/${resource}`);
      assert.equal(routedTo('validate', request('UPDATE', group, resource, 'status', 'sandbox-a')), true, `${group}/${resource}`);
      // A /scale carries a Scale: guard.custom-scale judges it.
      assert.equal(routedTo('validate', request('UPDATE', group, resource, 'scale', 'sandbox-a')), true, `${group}/${resource}/scale`);
    }
    for (const [group, resource] of [['', 'events'], ['events.k8s.io', 'events'], ['wgpolicyk8s.io', 'policyreports'], ['authorization.k8s.io', 'localsubjectaccessreviews']] as const)
      for (const webhook of ['mutate', 'validate', 'admit'] as const) assert.equal(routedTo(webhook, request('CREATE', group, resource, undefined, 'sandbox-a')), false, `${webhook} ${group}/${resource}`);
    // A first-pair kind stays the first pair's: a pod's UPDATE does not reach a mutating webhook through the default row.
    assert.equal(routedTo('admit', request('UPDATE', '', 'pods', undefined, 'sandbox-a')), false);
  });
});
