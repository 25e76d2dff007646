import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionRequest, KubeObject } from '../src/admission/types.js';
import { routedTo as routedWith } from '../src/review/routing.js';
import { stampedMetadata, testContext } from './helpers.js';

const { policy } = testContext();
const routedTo = (webhook: Parameters<typeof routedWith>[0], req: Parameters<typeof routedWith>[1]) => routedWith(webhook, req, policy);

function request(operation: AdmissionRequest['operation'], group: string, resource: string, subResource?: string, namespace?: string, write: { object?: KubeObject; oldObject?: KubeObject; username?: string } = {}): Parameters<typeof routedWith>[1] {
  return {
    operation,
    resource: { group, version: 'v1', resource },
    ...(subResource === undefined ? {} : { subResource }),
    ...(namespace === undefined ? {} : { namespace }),
    object: write.object ?? null,
    oldObject: write.oldObject ?? null,
    userInfo: { username: write.username ?? 'system:serviceaccount:sandbox-a:runner', groups: [], extra: {} },
  };
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

  test("an UPDATE of an environment's object reaches the mutating webhook where the install's matchConditions send it: one that drops every stamp (kubectl replace), a listed controller's (the operator-stamps webhook); not one that keeps a stamp", () => {
    const stored = { apiVersion: 'v1', kind: 'Secret', ...stampedMetadata('Secret', 'alpha', 'sandbox-a') } as KubeObject;
    const replaced = { apiVersion: 'v1', kind: 'Secret', metadata: { name: stored.metadata.name, namespace: 'sandbox-a' }, data: {} } as KubeObject;
    const unmanaged = { ...replaced, metadata: { ...replaced.metadata, labels: { app: 'web' } } };
    const update = (object: KubeObject, oldObject: KubeObject, username?: string) => request('UPDATE', '', 'secrets', undefined, 'sandbox-a', { object, oldObject, ...(username === undefined ? {} : { username }) });
    for (const webhook of ['mutate', 'admit'] as const) {
      assert.equal(routedTo(webhook, update(replaced, stored)), true, `${webhook}: every stamp dropped`);
      assert.equal(routedTo(webhook, update(stored, stored)), false, `${webhook}: stamps kept`);
      assert.equal(routedTo(webhook, update(replaced, unmanaged)), false, `${webhook}: an object Deed never stamped`);
      // Any namespaced kind, a custom resource's too; its subresources never.
      assert.equal(routedTo(webhook, { ...update(replaced, stored), resource: { group: 'labs.example', version: 'v1', resource: 'virtualmachines' } }), true, `${webhook}: custom resource`);
      assert.equal(routedTo(webhook, { ...update(replaced, stored), subResource: 'status' }), false, `${webhook}: /status`);
      // A listed controller's write of a Secret it made: its stamps are put back whatever it carries.
      const controller = 'system:serviceaccount:kube-system:job-controller';
      assert.equal(routedTo(webhook, update(stored, stored, controller)), true, `${webhook}: a listed controller's write`);
      assert.equal(routedTo(webhook, update(stored, unmanaged, controller)), false, `${webhook}: a listed controller's write of an unmanaged Secret`);
      assert.equal(routedTo(webhook, { ...update(stored, stored, controller), resource: { group: '', version: 'v1', resource: 'configmaps' } }), false, `${webhook}: a ConfigMap is no operator's`);
    }
  });

  test("kube-system's service accounts reach Deed only where the install's matchCondition sends them: a listed controller's creations and changes of owner references, the volume binder's binding of a cloned claim (rev-91)", () => {
    const KUBE_SYSTEM = ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'];
    const as = (username: string, req: Parameters<typeof routedWith>[1]) => ({ ...req, userInfo: { username, groups: KUBE_SYSTEM, extra: {} } });
    const stored = { apiVersion: 'v1', kind: 'Secret', ...stampedMetadata('Secret', 'alpha', 'sandbox-a') } as KubeObject;
    const relabelled = { ...stored, metadata: { ...stored.metadata, labels: { app: 'x' } } } as KubeObject;
    const controller = 'system:serviceaccount:kube-system:job-controller';
    const update = request('UPDATE', '', 'secrets', undefined, 'sandbox-a', { object: relabelled, oldObject: stored });
    for (const webhook of ['mutate', 'admit', 'validate'] as const) assert.equal(routedTo(webhook, as(controller, update)), false, `${webhook}: owner references unchanged`);
    const owned = { ...stored, metadata: { ...stored.metadata, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'run', uid: 'u-1', controller: true }] } } as KubeObject;
    assert.equal(routedTo('validate', as(controller, request('UPDATE', '', 'secrets', undefined, 'sandbox-a', { object: stored, oldObject: owned }))), true, 'a release');
    assert.equal(routedTo('admit', as(controller, request('CREATE', '', 'pods', undefined, 'sandbox-a'))), true, 'a creation');
    assert.equal(routedTo('validate', as('system:serviceaccount:kube-system:namespace-controller', request('DELETE', '', 'secrets', undefined, 'sandbox-a', { oldObject: stored }))), false, 'another kube-system account');
    const claim = (volumeName: string | undefined) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'copy', namespace: 'sandbox-a' }, spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' }, ...(volumeName === undefined ? {} : { volumeName }) } }) as KubeObject;
    const binding = request('UPDATE', '', 'persistentvolumeclaims', undefined, 'sandbox-a', { object: claim('pv-1'), oldObject: claim(undefined) });
    assert.equal(routedTo('validate', as('system:serviceaccount:kube-system:persistent-volume-binder', binding)), true, "the volume binder's binding");
    assert.equal(routedTo('validate', as('system:serviceaccount:kube-system:persistent-volume-binder', { ...binding, oldObject: claim('pv-1') })), false, 'already bound');
  });
});
