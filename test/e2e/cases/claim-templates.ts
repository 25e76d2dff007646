// A pod's ResourceClaimTemplate by name (docs/security-model.md, "What an object points at"),
// in the real API server with the resourceclaim controller running: it makes each pod's claim
// from whatever template stands under the name the pod gives, copying the template's device
// requests, their opaque configuration (which network, which VLAN, sharing) and its
// `spec.metadata` labels. Beta holds the tenant role (`edit`) in a namespace it shares with
// alpha. Before, alpha's pod could name a template not made yet and get beta's, and beta's pod
// or Deployment could name alpha's and get alpha's configuration (helper-72's finding F1).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { renderManifests } from '../../../src/install/manifests.js';
import { TENANT_ROLE } from '../../../src/install/tenant-role.js';
import type { Identity } from '../client.js';
import { collectionPath, createdOrThere as ok, eventually, optedInNamespace, PATHS, refusedBy, sandboxPod } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'shared-claim-templates';
const CLAIMS = `/apis/resource.k8s.io/v1/namespaces/${NS}/resourceclaims`;
const TEMPLATES = `/apis/resource.k8s.io/v1/namespaces/${NS}/resourceclaimtemplates`;
const REPLICA_SETS = `/apis/apps/v1/namespaces/${NS}/replicasets`;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;
const spec = (cls: string) => ({ devices: { requests: [{ name: 'dev', exactly: { deviceClassName: cls } }] } });
/** A template whose claims carry `parameters` as their device configuration, and a label saying who wrote it. */
const template = (name: string, parameters: Any) => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaimTemplate',
  metadata: { name },
  spec: { metadata: { labels: { 'written-by': String(parameters.by) } }, spec: { devices: { ...spec('net.example').devices, config: [{ requests: ['dev'], opaque: { driver: 'net.example', parameters } }] } } },
});
const podSpec = (templateName: string) => ({ resourceClaims: [{ name: 'dev', resourceClaimTemplateName: templateName }], containers: [{ name: 'main', image: 'registry.example/agent:1', resources: { claims: [{ name: 'dev' }] } }] });
const podNaming = (name: string, templateName: string) => sandboxPod(name, { spec: podSpec(templateName) });
const deployment = (name: string, templateName: string, replicas = 1) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, restartPolicy: 'Always', ...podSpec(templateName) } } },
});

export function claimTemplateCases(suite: () => Suite, tools: { controllers: boolean }): void {
  let tenant: Identity; // sandbox-b:rct-tenant: beta, the tenant role (edit) in NS
  let stranger: Identity; // plain:rct-stranger: of no environment, the tenant role in NS
  let alpha: Identity; // sandbox-a:runner
  const needsControllers = tools.controllers ? false : 'needs kube-controller-manager in KUBEBUILDER_ASSETS (setup-envtest does not ship it)';
  /** The claims the resourceclaim controller made for the pods whose names start with `prefix`. */
  const claimsOf = async (s: Suite, prefix: string): Promise<Any[]> =>
    ((await s.api(s.admin, 'GET', CLAIMS)).body.items ?? []).filter((c: Any) => (c.metadata.ownerReferences ?? []).some((o: Any) => o.kind === 'Pod' && String(o.name).startsWith(prefix)));
  const claimOf = async (s: Suite, pod: string): Promise<Any> => (await claimsOf(s, pod)).find((c) => c.metadata.ownerReferences.some((o: Any) => o.name === pod)) as Any;
  const podsOf = async (s: Suite, app: string): Promise<Any[]> => (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}?labelSelector=app%3D${app}`)).body.items ?? [];
  /** The ReplicaSet of Deployment `name`'s failure to create its pods, once it has one. */
  const replicaFailure = async (s: Suite, name: string): Promise<string | undefined> => {
    const sets: Any[] = (await s.api(s.admin, 'GET', REPLICA_SETS)).body.items ?? [];
    const set = sets.find((r) => (r.metadata.ownerReferences ?? []).some((o: Any) => o.kind === 'Deployment' && o.name === name));
    return (set?.status?.conditions ?? []).find((c: Any) => c.type === 'ReplicaFailure')?.message;
  };

  describe("a pod's ResourceClaimTemplate is its writer environment's to use", { skip: needsControllers }, () => {
    before(async () => {
      const s = suite();
      await optedInNamespace(s, NS);
      ok('tenant role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', renderManifests({ namespace: 'deed-system', image: 'x', tenantRole: true }).find((o) => o.metadata?.name === TENANT_ROLE)!));
      tenant = await s.newIdentity('sandbox-b', 'rct-tenant');
      stranger = await s.newIdentity('plain', 'rct-stranger');
      alpha = s.runnerA.identity;
      const subjects = [['sandbox-a', 'runner'], ['sandbox-b', 'rct-tenant'], ['plain', 'rct-stranger']].map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name }));
      ok('tenants', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { metadata: { name: 'rct-tenants' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: TENANT_ROLE }, subjects }));
      for (const who of [alpha, tenant, stranger])
        await eventually(`RBAC for ${who.name}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${TEMPLATES}?dryRun=All`, template('probe', { by: 'probe' }))).text));
    });

    test("alpha's pod may not name a template that does not exist yet (beta would take the name), nor beta's once beta made it", async () => {
      const s = suite();
      // Before: 201, and the claim made once beta created `gpu` carried beta's configuration.
      refusedBy(
        await s.api(alpha, 'POST', PATHS.Pod(NS), podNaming('alpha-gpu', 'gpu')),
        'reference.absent',
        /spec\.resourceClaims\[0\]\.resourceClaimTemplateName: names ResourceClaimTemplate gpu, which does not exist; create it first, or one another environment creates under that name later would be acted on \(the resourceclaim controller makes the pod's claim/,
      );
      const squat = await s.api(tenant, 'POST', TEMPLATES, template('gpu', { by: 'beta', sharing: 'time-sliced' }));
      assert.equal(squat.status, 201, squat.text);
      refusedBy(await s.api(alpha, 'POST', PATHS.Pod(NS), podNaming('alpha-gpu', 'gpu')), 'reference.cross-environment', /names ResourceClaimTemplate gpu, which belongs to another environment/);
      // Alpha's Deployment naming it: stored, but its ReplicaSet's pods are judged as alpha's when made, and refused.
      const made = await s.api(alpha, 'POST', collectionPath('Deployment', NS), deployment('alpha-squatted', 'gpu'));
      assert.equal(made.status, 201, made.text);
      await eventually("alpha's ReplicaSet is refused its pods", async () => /\[reference\.cross-environment\].*names ResourceClaimTemplate gpu/.test((await replicaFailure(s, 'alpha-squatted')) ?? ''), 45_000);
      assert.deepEqual(await podsOf(s, 'alpha-squatted'), []);
      assert.deepEqual(await claimsOf(s, 'alpha-'), [], "no claim of alpha's carries beta's configuration");
    });

    test("beta's pod or Deployment may not have its claim made from alpha's template; alpha's own pod gets alpha's configuration", async () => {
      const s = suite();
      const own = await s.api(alpha, 'POST', TEMPLATES, template('alpha-net', { by: 'alpha', network: 'alpha-private', vlan: 42 }));
      assert.equal(own.status, 201, own.text);
      refusedBy(
        await s.api(tenant, 'POST', PATHS.Pod(NS), podNaming('beta-nic', 'alpha-net')),
        'reference.cross-environment',
        /spec\.resourceClaims\[0\]\.resourceClaimTemplateName: names ResourceClaimTemplate alpha-net, which belongs to another environment \(the resourceclaim controller makes the pod's claim from whatever template stands under the name: its devices, their configuration and its metadata\); environment "beta" may not/,
      );
      refusedBy(await s.api(stranger, 'POST', PATHS.Pod(NS), podNaming('plain-nic', 'alpha-net')), 'reference.cross-environment', /acts for no environment and may not/);
      const beta = await s.api(tenant, 'POST', collectionPath('Deployment', NS), deployment('beta-nic', 'alpha-net'));
      assert.equal(beta.status, 201, beta.text);
      await eventually("beta's ReplicaSet is refused its pods", async () => /\[reference\.cross-environment\].*names ResourceClaimTemplate alpha-net, which belongs to another environment/.test((await replicaFailure(s, 'beta-nic')) ?? ''), 45_000);
      assert.deepEqual(await podsOf(s, 'beta-nic'), []);
      // Alpha's own pod: admitted, and its claim carries alpha's configuration.
      const pod = await s.api(alpha, 'POST', PATHS.Pod(NS), podNaming('alpha-nic', 'alpha-net'));
      assert.equal(pod.status, 201, pod.text);
      await eventually("alpha's claim", async () => (await claimOf(s, 'alpha-nic')) !== undefined, 45_000);
      const claim = await claimOf(s, 'alpha-nic');
      assert.deepEqual(claim.spec.devices.config[0].opaque.parameters, { by: 'alpha', network: 'alpha-private', vlan: 42 });
      assert.deepEqual((await claimsOf(s, 'beta-')).map((c) => c.metadata.name), [], "no claim of beta's was made from alpha's template");
    });

    test("the claim the resourceclaim controller makes for alpha's pod is stamped as alpha's: a tenant of no environment may neither drop its owner reference nor delete it, and beta's pod may not share it (rev-94 F1)", async () => {
      const s = suite();
      assert.equal((await s.api(alpha, 'POST', TEMPLATES, template('alpha-gpu-owned', { by: 'alpha' }))).status, 201);
      const pod = await s.api(alpha, 'POST', PATHS.Pod(NS), podNaming('alpha-owned', 'alpha-gpu-owned'));
      assert.equal(pod.status, 201, pod.text);
      await eventually("alpha's claim", async () => (await claimOf(s, 'alpha-owned')) !== undefined, 45_000);
      const claim = await claimOf(s, 'alpha-owned');
      const name = claim.metadata.name as string;
      // Before: unstamped, alpha's only by its owner reference to alpha's pod.
      assert.equal(claim.metadata.labels?.['deed.dev/environment'], 'alpha', JSON.stringify(claim.metadata));
      assert.equal(claim.metadata.labels?.['written-by'], 'alpha', "the template's spec.metadata labels stay");
      // Before: 200, and the claim was no one's.
      refusedBy(await s.api(stranger, 'PATCH', `${CLAIMS}/${name}`, { metadata: { ownerReferences: null } }, 'application/merge-patch+json'), 'guard.unmapped', /acts for no environment/);
      refusedBy(await s.api(stranger, 'DELETE', `${CLAIMS}/${name}`), 'guard.unmapped', /acts for no environment/);
      refusedBy(await s.api(tenant, 'POST', PATHS.Pod(NS), sandboxPod('beta-shares', { spec: { resourceClaims: [{ name: 'dev', resourceClaimName: name }], containers: [{ name: 'main', image: 'registry.example/agent:1', resources: { claims: [{ name: 'dev' }] } }] } })), 'reference.cross-environment', /belongs to another environment/);
      // Alpha's own second pod may share it.
      const shared = await s.api(alpha, 'POST', PATHS.Pod(NS), sandboxPod('alpha-shares', { spec: { resourceClaims: [{ name: 'dev', resourceClaimName: name }], containers: [{ name: 'main', image: 'registry.example/agent:1', resources: { claims: [{ name: 'dev' }] } }] } }));
      assert.equal(shared.status, 201, shared.text);
    });

    test("alpha deletes its template while its Deployment's pod still names it: beta may not take the name, and alpha may make it again", async () => {
      const s = suite();
      assert.equal((await s.api(alpha, 'POST', TEMPLATES, template('alpha-lab', { by: 'alpha', network: 'alpha-lab' }))).status, 201);
      const made = await s.api(alpha, 'POST', collectionPath('Deployment', NS), deployment('alpha-lab', 'alpha-lab'));
      assert.equal(made.status, 201, made.text);
      await eventually("alpha's Deployment's pod and its claim", async () => (await podsOf(s, 'alpha-lab')).length === 1 && (await claimsOf(s, 'alpha-lab-')).length === 1, 60_000);
      assert.equal((await s.api(alpha, 'DELETE', `${TEMPLATES}/alpha-lab`)).status, 200);
      await eventually("alpha's template gone", async () => (await s.api(s.admin, 'GET', `${TEMPLATES}/alpha-lab`)).status === 404);
      // Before: 201, and the next claim made for alpha's Deployment carried beta's configuration.
      refusedBy(
        await s.api(tenant, 'POST', TEMPLATES, template('alpha-lab', { by: 'beta', network: 'beta-tap' })),
        'reference.live-reader',
        /a live pod of another environment \(or of none\) in namespace shared-claim-templates reads ResourceClaimTemplate alpha-lab by name, and the resourceclaim controller would make that pod's claim from this one \(its devices, their configuration, its metadata\): choose a name of this run's own, or create it once no such pod is left/,
      );
      refusedBy(await s.api(stranger, 'POST', TEMPLATES, template('alpha-lab', { by: 'plain' })), 'reference.live-reader', /a live pod of an environment this requester does not act for/);
      const again = await s.api(alpha, 'POST', TEMPLATES, template('alpha-lab', { by: 'alpha', network: 'alpha-lab' }));
      assert.equal(again.status, 201, again.text);
    });

    test('a pod with its own template: beta\'s, and a tenant\'s of no environment, are admitted and their claims made from them', async () => {
      const s = suite();
      assert.equal((await s.api(tenant, 'POST', TEMPLATES, template('beta-net', { by: 'beta', network: 'beta-private' }))).status, 201);
      const beta = await s.api(tenant, 'POST', PATHS.Pod(NS), podNaming('beta-own', 'beta-net'));
      assert.equal(beta.status, 201, beta.text);
      assert.equal((await s.api(stranger, 'POST', TEMPLATES, template('plain-net', { by: 'plain', network: 'shared' }))).status, 201);
      const plain = await s.api(stranger, 'POST', PATHS.Pod(NS), podNaming('plain-own', 'plain-net'));
      assert.equal(plain.status, 201, plain.text);
      await eventually('both claims', async () => (await claimOf(s, 'beta-own')) !== undefined && (await claimOf(s, 'plain-own')) !== undefined, 45_000);
      assert.equal((await claimOf(s, 'beta-own')).spec.devices.config[0].opaque.parameters.network, 'beta-private');
      assert.equal((await claimOf(s, 'plain-own')).metadata.labels['written-by'], 'plain');
    });
  });
}
