// The default row in a real API server: a custom resource kind installed only for the test
// (a lab's VirtualMachine), and a built-in kind Deed has no row for (a Service), written in
// the namespace alpha and beta share, are stamped as their writer's environment and guarded
// after: beta's janitor and a principal of no environment may not delete alpha's, alpha may.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { attested, eventually, KEYS, label, standInCrd } from '../objects.js';
import type { Identity } from '../client.js';
import type { Suite } from '../suite.js';

const NS = 'shared-labs';
/** The lab's VirtualMachine kind, installed by the cases that use it (idempotently: whichever runs first creates it). */
export const GROUP = 'labs.e2e.deed.dev';
export const VMS = (ns: string) => `/apis/${GROUP}/v1/namespaces/${ns}/virtualmachines`;
const SERVICES = (ns: string) => `/api/v1/namespaces/${ns}/services`;
const MERGE = 'application/merge-patch+json';

export const VM_CRD = standInCrd({ group: GROUP, version: 'v1', plural: 'virtualmachines', kind: 'VirtualMachine' });

export function vm(name: string, meta: Record<string, unknown> = {}) {
  return { apiVersion: `${GROUP}/v1`, kind: 'VirtualMachine', metadata: { name, ...meta }, spec: { running: true } };
}

export function defaultRowCases(suite: () => Suite): void {
  describe('a kind Deed has never heard of is no way around it', () => {
    let intruder: Identity;
    const ok = (what: string, a: { status: number; text: string }) => {
      if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
    };

    before(async () => {
      const s = suite();
      intruder = await s.newIdentity('platform', 'vm-intruder');
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      ok('CRD', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', VM_CRD));
      ok('vm role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        metadata: { name: 'e2e-vms' },
        rules: [
          { apiGroups: [GROUP], resources: ['virtualmachines', 'virtualmachines/status'], verbs: ['*'] },
          { apiGroups: [''], resources: ['services'], verbs: ['*'] },
        ],
      }));
      ok('vm rights', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'e2e-vms' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-vms' },
        subjects: [['sandbox-a', 'runner'], ['sandbox-b', 'janitor'], ['platform', 'vm-intruder']].map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      await eventually('the CRD is served', async () => (await s.api(s.admin, 'GET', VMS(NS))).status === 200);
      for (const user of ['system:serviceaccount:sandbox-a:runner', 'system:serviceaccount:sandbox-b:janitor', 'system:serviceaccount:platform:vm-intruder']) {
        const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['system:serviceaccounts', 'system:authenticated'], resourceAttributes: { namespace: NS, verb: 'delete', group: GROUP, resource: 'virtualmachines' } } };
        await eventually(`RBAC lets ${user} delete virtual machines`, async () => (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true);
      }
    });

    test("alpha's runner's VirtualMachine is stored with alpha's stamps, whose attestation verifies", async () => {
      const s = suite();
      const answer = await s.api(s.runnerA.identity, 'POST', VMS(NS), vm('alpha-vm'));
      assert.equal(answer.status, 201, answer.text);
      const stored = answer.body as KubeObject;
      assert.equal(label(stored, KEYS.environment), 'alpha');
      assert.equal(label(stored, KEYS.ownerUid), s.runnerA.uid);
      assert.ok(attested(s, stored));
    });

    test("beta's janitor may neither delete alpha's VirtualMachine, nor change it, nor write its status", async () => {
      const s = suite();
      const del = await s.api(s.janitorB, 'DELETE', `${VMS(NS)}/alpha-vm`);
      assert.equal(del.status, 403, del.text);
      assert.match(del.body.message, /\[guard\.cross-environment\] system:serviceaccount:sandbox-b:janitor acts for "beta", and this object belongs to another environment/);
      const all = await s.api(s.janitorB, 'DELETE', VMS(NS));
      assert.equal(all.status, 403, all.text);
      const stop = await s.api(s.janitorB, 'PATCH', `${VMS(NS)}/alpha-vm`, { spec: { running: false } }, MERGE);
      assert.equal(stop.status, 403, stop.text);
      const status = await s.api(s.janitorB, 'PATCH', `${VMS(NS)}/alpha-vm/status`, { status: { phase: 'Stopped' } }, MERGE);
      assert.equal(status.status, 403, status.text);
      assert.equal((await s.api(s.admin, 'GET', `${VMS(NS)}/alpha-vm`)).body.spec.running, true);
    });

    test('a principal of no environment may not delete it, nor create one with forged stamps', async () => {
      const s = suite();
      const del = await s.api(intruder, 'DELETE', `${VMS(NS)}/alpha-vm`);
      assert.equal(del.status, 403, del.text);
      assert.match(del.body.message, /\[guard\.unmapped\]/);
      const forged = await s.api(intruder, 'POST', VMS(NS), vm('forged-vm', { labels: { [KEYS.environment]: 'alpha' } }));
      assert.equal(forged.status, 403, forged.text);
      assert.match(forged.body.message, /\[stamp\.forged\]/);
    });

    test("alpha changes, writes the status of and deletes its own VirtualMachine; beta's own is beta's", async () => {
      const s = suite();
      const stop = await s.api(s.runnerA.identity, 'PATCH', `${VMS(NS)}/alpha-vm`, { spec: { running: false } }, MERGE);
      assert.equal(stop.status, 200, stop.text);
      const status = await s.api(s.runnerA.identity, 'PATCH', `${VMS(NS)}/alpha-vm/status`, { status: { phase: 'Stopped' } }, MERGE);
      assert.equal(status.status, 200, status.text);
      const del = await s.api(s.runnerA.identity, 'DELETE', `${VMS(NS)}/alpha-vm`);
      assert.equal(del.status, 200, del.text);
      const beta = await s.api(s.janitorB, 'POST', VMS(NS), vm('beta-vm'));
      assert.equal(beta.status, 201, beta.text);
      assert.equal(label(beta.body as KubeObject, KEYS.environment), 'beta');
      assert.equal((await s.api(s.runnerA.identity, 'DELETE', `${VMS(NS)}/beta-vm`)).status, 403);
      assert.equal((await s.api(s.janitorB, 'DELETE', `${VMS(NS)}/beta-vm`)).status, 200);
    });

    test("a built-in kind Deed names nowhere, a Service, is alpha's too", async () => {
      const s = suite();
      const svc = await s.api(s.runnerA.identity, 'POST', SERVICES(NS), { apiVersion: 'v1', kind: 'Service', metadata: { name: 'alpha-svc' }, spec: { ports: [{ port: 80 }] } });
      assert.equal(svc.status, 201, svc.text);
      assert.equal(label(svc.body as KubeObject, KEYS.environment), 'alpha');
      assert.ok(attested(s, svc.body as KubeObject));
      const del = await s.api(s.janitorB, 'DELETE', `${SERVICES(NS)}/alpha-svc`);
      assert.equal(del.status, 403, del.text);
      assert.equal((await s.api(s.runnerA.identity, 'DELETE', `${SERVICES(NS)}/alpha-svc`)).status, 200);
    });
  });
}
