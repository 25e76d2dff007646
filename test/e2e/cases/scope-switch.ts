// The namespace's opt-in label is the platform's: the ValidatingAdmissionPolicy the install
// ships refuses anyone else adding, changing or removing it (on the Namespace and through
// its status), and changing or deleting Deed's webhook configurations (the API server
// applies no admission policy to policies and their bindings: those are RBAC's).
// The attacker is beta with a namespaced wildcard Role, which RBAC resolves to cover the
// Namespace object too; an operator with cluster-wide rights on webhook configurations who
// is not named by the policy is refused as well. The platform (the admin here, in
// system:masters, the default platform group, and break-glass) can.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { NAME } from '../../../src/install/manifests.js';
import { kustomizeCertManagerComponentPatch } from '../../../src/install/cert-manager.js';
import { caInjectorExpression, REVIEW_SCOPE_POLICY_SUFFIX } from '../../../src/install/review-scope-policy.js';
import type { Identity } from '../client.js';
import { eventually } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'scope-switch';
const LABEL = 'deed.dev/sandbox';
const VAP = /ValidatingAdmissionPolicy 'deed-review-scope'.*denied request/;

export function scopeSwitchCases(suite: () => Suite): void {
  describe('the opt-in label and Deed\'s own configurations are the platform\'s', () => {
    let deployer: Identity;
    const relabel = (s: Suite, who: Identity, value: string | null, sub = '') =>
      s.api(who, 'PATCH', `/api/v1/namespaces/${NS}${sub}`, { metadata: { labels: { [LABEL]: value } } }, 'application/merge-patch+json');

    before(async () => {
      const s = suite();
      const ns = await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: NS, labels: { [LABEL]: 'enabled' } } });
      assert.equal(ns.status, 201, ns.text);
      // beta's namespaced wildcard Role: RBAC resolves namespaces/scope-switch inside it.
      const role = await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'everything' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] });
      assert.equal(role.status, 201, role.text);
      const binding = await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'beta-everything' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'everything' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-b', name: 'janitor' }],
      });
      assert.equal(binding.status, 201, binding.text);
      // An operator with cluster-wide rights on webhook configurations, not named by Deed's policy.
      deployer = await s.newIdentity('platform', 'deployer');
      const cr = await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name: 'e2e-webhook-admin' }, rules: [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['*'], verbs: ['*'] }] });
      assert.equal(cr.status, 201, cr.text);
      const crb = await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        metadata: { name: 'e2e-webhook-admin' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-webhook-admin' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'platform', name: 'deployer' }],
      });
      assert.equal(crb.status, 201, crb.text);
      const may = (user: string, groups: string[], attrs: Record<string, string>) =>
        s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups, resourceAttributes: attrs } });
      const sa = (ns: string) => ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'];
      await eventually('RBAC lets beta patch the namespace it has a wildcard Role in', async () => (await may('system:serviceaccount:sandbox-b:janitor', sa('sandbox-b'), { namespace: NS, verb: 'patch', resource: 'namespaces', name: NS })).body?.status?.allowed === true);
      await eventually('RBAC lets the deployer delete webhook configurations', async () => (await may('system:serviceaccount:platform:deployer', sa('platform'), { verb: 'delete', group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', name: NAME })).body?.status?.allowed === true);
    });

    test('beta removing, changing or re-adding the label (on the namespace or through its status) is refused by the API server', async () => {
      const s = suite();
      for (const [value, sub] of [[null, ''], ['disabled', ''], [null, '/status']] as const) {
        const answer = await relabel(s, s.janitorB, value, sub);
        assert.equal(answer.status, 403, `${value} ${sub}: ${answer.text}`);
        assert.match(answer.body.message, VAP);
        assert.match(answer.body.message, /only the platform and break-glass principals of Deed's policy may add, change or remove it/);
      }
      const ns = (await s.api(s.admin, 'GET', `/api/v1/namespaces/${NS}`)).body;
      assert.equal(ns.metadata.labels[LABEL], 'enabled');
      // Its other labels are the platform's too, by the namespace-labels policy (test/e2e/cases/namespace-wide.ts).
      const other = await s.api(s.janitorB, 'PATCH', `/api/v1/namespaces/${NS}`, { metadata: { labels: { team: 'beta' } } }, 'application/merge-patch+json');
      assert.equal(other.status, 403, other.text);
      assert.match(other.body.message, /ValidatingAdmissionPolicy 'deed-namespace-labels'.*denied request/);
    });

    test('an operator not named by the policy cannot change or delete Deed\'s webhook configurations', async () => {
      const s = suite();
      const base = '/apis/admissionregistration.k8s.io/v1';
      for (const path of [`${base}/validatingwebhookconfigurations/${NAME}`, `${base}/mutatingwebhookconfigurations/${NAME}`]) {
        const del = await s.api(deployer, 'DELETE', path);
        assert.equal(del.status, 403, `${path}: ${del.text}`);
        assert.match(del.body.message, /change only by the platform and break-glass principals/);
        const patch = await s.api(deployer, 'PATCH', path, { metadata: { labels: { touched: 'yes' } } }, 'application/merge-patch+json');
        assert.equal(patch.status, 403, `${path}: ${patch.text}`);
      }
      // A deletecollection names no object: the policy must still see Deed's among the items.
      for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
        const all = await s.api(deployer, 'DELETE', `${base}/${kind}?labelSelector=${encodeURIComponent('app.kubernetes.io/name=deed')}`);
        assert.equal(all.status, 403, `${kind} collection: ${all.text}`);
        assert.match(all.body.message, /change only by the platform and break-glass principals/);
      }
      assert.equal((await s.api(s.admin, 'GET', `${base}/validatingwebhookconfigurations/${NAME}`)).status, 200);
      assert.equal((await s.api(s.admin, 'GET', `${base}/mutatingwebhookconfigurations/${NAME}`)).status, 200);
      // Other webhook configurations stay RBAC's.
      const other = await s.api(deployer, 'POST', `${base}/validatingwebhookconfigurations`, { metadata: { name: 'e2e-other', labels: { 'e2e-other': 'yes' } }, webhooks: [] });
      assert.equal(other.status, 201, other.text);
      const gone = await s.api(deployer, 'DELETE', `${base}/validatingwebhookconfigurations?labelSelector=e2e-other%3Dyes`);
      assert.equal(gone.status, 200, gone.text);
    });

    test("with the cert-manager component, the cainjector may update Deed's webhook configurations (their caBundle), never delete them", async () => {
      const s = suite();
      const base = '/apis/admissionregistration.k8s.io/v1';
      const policyPath = `${base}/validatingadmissionpolicies/${NAME}-${REVIEW_SCOPE_POLICY_SUFFIX}`;
      await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: 'cert-manager' } });
      const cainjector = await s.newIdentity('cert-manager', 'cert-manager-cainjector');
      const crb = await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        metadata: { name: 'e2e-cainjector' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-webhook-admin' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'cert-manager', name: 'cert-manager-cainjector' }],
      });
      assert.equal(crb.status, 201, crb.text);
      const path = `${base}/validatingwebhookconfigurations/${NAME}`;
      const caBundle = (await s.api(s.admin, 'GET', path)).body.webhooks[0].clientConfig.caBundle as string;
      const inject = () => s.api(cainjector, 'PATCH', path, [{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: caBundle }], 'application/json-patch+json');
      const before = await inject();
      assert.equal(before.status, 403, `without the component: ${before.text}`);
      // What the component's patch does to the installed policy (src/install/cert-manager.ts).
      const { patch } = kustomizeCertManagerComponentPatch();
      const applied = await s.api(s.admin, 'PATCH', policyPath, patch, 'application/json-patch+json');
      assert.equal(applied.status, 200, applied.text);
      try {
        await eventually('the API server applies the patched policy', async () => (await inject()).status === 200);
        const del = await s.api(cainjector, 'DELETE', path);
        assert.equal(del.status, 403, del.text);
        assert.equal((await s.api(s.admin, 'GET', path)).status, 200);
      } finally {
        const undo = await s.api(s.admin, 'PATCH', policyPath, patch.map((op) => ({ ...op, value: caInjectorExpression([]) })), 'application/json-patch+json');
        assert.equal(undo.status, 200, undo.text);
      }
    });

    test('the platform takes the namespace out of the scope and puts it back', async () => {
      const s = suite();
      const off = await relabel(s, s.admin, null);
      assert.equal(off.status, 200, off.text);
      const on = await relabel(s, s.admin, 'enabled');
      assert.equal(on.status, 200, on.text);
    });
  });
}
