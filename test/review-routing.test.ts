import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionRequest } from '../src/admission/types.js';
import { routedTo } from '../src/review/routing.js';

function request(operation: AdmissionRequest['operation'], group: string, resource: string, subResource?: string) {
  return { operation, resource: { group, version: 'v1', resource }, ...(subResource === undefined ? {} : { subResource }) };
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

  test('kinds no rule names reach neither webhook', () => {
    for (const webhook of ['mutate', 'validate'] as const) {
      assert.equal(routedTo(webhook, request('CREATE', '', 'endpoints')), false);
      assert.equal(routedTo(webhook, request('CREATE', 'rbac.authorization.k8s.io', 'roles')), false);
    }
  });
});
