// Owner references that hold their owner's foreground deletion (docs/security-model.md, "What
// an object points at"), in the real API server. The garbage collector finds an owner's
// dependents by uid whatever kind the reference gives, and never deletes a dependent whose
// owner's kind it cannot resolve: beta's ConfigMap naming alpha's Deployment's uid as a
// PodDisruptionBudget (with a finalizer) or as a custom kind (as the controller, no finalizer
// needed) would keep alpha's foreground delete Terminating for ever. The statefulset controller
// copies a claim template's owner references onto its claims: the same hold, one step removed.
// Beta holds the tenant role the install renders in a namespace it shares with alpha.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { renderManifests } from '../../../src/install/manifests.js';
import { TENANT_ROLE } from '../../../src/install/tenant-role.js';
import type { Identity } from '../client.js';
import { collectionPath, createdOrThere as ok, createStamped, eventually, PATHS, refusedBy as refused } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'shared-holds';
const MERGE = 'application/merge-patch+json';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

const LAB = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/lab:1' }] };
const deployment = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: 0, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: LAB } } });
const configMap = (name: string, metadata: Any = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...metadata }, data: { k: 'v' } });
const statefulSet = (name: string, claimMetadata: Any) => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name },
  spec: {
    replicas: 0,
    serviceName: name,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { ...LAB, containers: [{ ...LAB.containers[0], volumeMounts: [{ name: 'data', mountPath: '/data' }] }] } },
    volumeClaimTemplates: [{ metadata: { name: 'data', ...claimMetadata }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  },
});

export function blockingOwnerCases(suite: () => Suite, tools: { controllers: boolean }): void {
  let beta: Identity; // sandbox-b:hold-tenant: acts for beta, the tenant role in NS
  let alpha: Identity; // alpha's runner, the tenant role in NS
  const uids: Record<string, string> = {};

  describe("no environment holds another's object in deletion with a blocking owner reference", () => {
    before(async () => {
      const s = suite();
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      const role = renderManifests({ namespace: 'deed-system', image: 'x', tenantRole: true }).find((o) => o.metadata?.name === TENANT_ROLE)!;
      ok('tenant role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role));
      beta = await s.newIdentity('sandbox-b', 'hold-tenant');
      alpha = s.runnerA.identity;
      ok('binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'hold-tenants' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: TENANT_ROLE },
        subjects: [['sandbox-a', 'runner'], ['sandbox-b', 'hold-tenant']].map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      for (const who of [alpha, beta])
        await eventually(`RBAC lets ${who.name} create StatefulSets in ${NS}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${collectionPath('StatefulSet', NS)}?dryRun=All`, statefulSet('rbac-probe', {}))).text));
      await createStamped(s, alpha, 'alpha', [
        ['deployment', collectionPath('Deployment', NS), deployment('alpha-lab')],
        ['secret', PATHS.Secret(NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-cred' }, stringData: { k: 'v' } }],
      ], uids);
    });

    test("beta's blocking owner reference to alpha's uid is refused under a kind Deed does not read, as under alpha's own kind; alpha's own objects are admitted", async () => {
      const s = suite();
      const byPdb = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', name: 'anything', uid: uids['alpha-lab'], blockOwnerDeletion: true };
      refused(
        await s.api(beta, 'POST', collectionPath('ConfigMap', NS), configMap('beta-hold', { finalizers: ['hold.example.com/forever'], ownerReferences: [byPdb] })),
        'reference.unknown',
        /metadata\.ownerReferences\[0\]: blocks the deletion of the object of uid .*, named as PodDisruptionBudget shared-holds\/anything \(policy\/v1\), a kind Deed does not read/,
      );
      // As the controller, with no finalizer: the collector cannot resolve the kind, so it would never delete beta's Secret.
      const byHold = { apiVersion: 'hold.example.com/v1', kind: 'Hold', name: 'anything', uid: uids['alpha-cred'], controller: true, blockOwnerDeletion: true };
      refused(await s.api(beta, 'POST', PATHS.Secret(NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'beta-hold', ownerReferences: [byHold] } }), 'reference.unknown', /Hold shared-holds\/anything \(hold\.example\.com\/v1\), a kind Deed does not read/);
      // Under alpha's own kind, as before.
      refused(
        await s.api(beta, 'POST', collectionPath('ConfigMap', NS), configMap('beta-hold', { ownerReferences: [{ ...byPdb, apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-lab' }] })),
        'reference.cross-environment',
        /blocks the deletion of Deployment shared-holds\/alpha-lab, which belongs to another environment/,
      );
      // Not blocking, the reference holds nothing; made blocking by a patch, it is judged as added.
      const plain = await s.api(beta, 'POST', collectionPath('ConfigMap', NS), configMap('beta-plain', { ownerReferences: [{ ...byHold, blockOwnerDeletion: false }] }));
      assert.equal(plain.status, 201, plain.text);
      refused(await s.api(beta, 'PATCH', `${collectionPath('ConfigMap', NS)}/beta-plain`, { metadata: { ownerReferences: [byHold] } }, MERGE), 'reference.unknown', /a kind Deed does not read/);
      // Alpha's own: a plain ConfigMap, and one its own Deployment owns and blocks on.
      for (const [name, metadata] of [
        ['alpha-plain', {}],
        ['alpha-owned', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-lab', uid: uids['alpha-lab'], blockOwnerDeletion: true }] }],
      ] as Array<[string, Any]>) {
        const own = await s.api(alpha, 'POST', collectionPath('ConfigMap', NS), configMap(name, metadata));
        assert.equal(own.status, 201, `${name}: ${own.text}`);
      }
      if (!tools.controllers) return;
      // Nothing holds alpha's foreground delete: the collector deletes its dependent, then the Deployment.
      const fg = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' };
      ok('foreground delete', await s.api(alpha, 'DELETE', `${collectionPath('Deployment', NS)}/alpha-lab`, fg));
      await eventually("alpha's Deployment and its ConfigMap are gone", async () => (await s.api(s.admin, 'GET', `${collectionPath('Deployment', NS)}/alpha-lab`)).status === 404 && (await s.api(s.admin, 'GET', `${collectionPath('ConfigMap', NS)}/alpha-owned`)).status === 404);
    });

    test("beta's StatefulSet whose claim template carries owner references is refused; alpha's with a finalizer in its claim template is admitted", async () => {
      const s = suite();
      const holds = {
        finalizers: ['hold.example.com/forever'],
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-lab', uid: uids['alpha-lab'], blockOwnerDeletion: true },
          { apiVersion: 'v1', kind: 'Secret', name: 'alpha-cred', uid: uids['alpha-cred'], blockOwnerDeletion: true },
        ],
      };
      refused(
        await s.api(beta, 'POST', collectionPath('StatefulSet', NS), statefulSet('holder', holds)),
        'reference.unknown',
        /spec\.volumeClaimTemplates\[name=data\]\.metadata\.ownerReferences: the statefulset controller copies these owner references onto every claim it makes/,
      );
      const own = await s.api(alpha, 'POST', collectionPath('StatefulSet', NS), statefulSet('alpha-db', { finalizers: ['example.com/keep'] }));
      assert.equal(own.status, 201, own.text);
      const betas = await s.api(beta, 'POST', collectionPath('StatefulSet', NS), statefulSet('beta-db', {}));
      assert.equal(betas.status, 201, betas.text);
    });
  });
}
