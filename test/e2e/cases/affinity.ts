// Pod affinity terms are scoped like selectors (docs/security-model.md, "Selectors";
// src/policy/rules/affinity-scope.ts), in a real API server, in a namespace alpha, beta and a
// tenant of no environment share (shared-affinity: opted in, bound to no environment). As
// the incident would be tried: beta's pod whose required anti-affinity, over a topology every
// node shares, would hold every new pod of alpha's (or every runner) off every node once the
// scheduler placed it (kube-scheduler's anti-affinity is symmetric). There is no scheduler
// here: what is asserted is what the API server stores, and what it refuses.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { collectionPaths, eventually, KEYS, PATHS, refusedBy, sandboxPod } from '../objects.js';
import type { Identity } from '../client.js';
import type { Suite } from '../suite.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects as the API server stores them
type Spec = Record<string, any>;

const NS = 'shared-affinity';
const PATH = { ...collectionPaths(['Deployment'] as const), Pod: PATHS.Pod };
const MERGE = 'application/merge-patch+json';
const ENV = KEYS.environment;
const RUNNER = KEYS.runner;
const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED = 'preferredDuringSchedulingIgnoredDuringExecution';
const NO_ENVIRONMENT = { key: ENV, operator: 'DoesNotExist' };
const NO_RUNNERS = { key: RUNNER, operator: 'DoesNotExist' };

/** Required anti-affinity over a key every node shares with one value: the pod holds whatever it selects off every node. */
const everywhere = (labelSelector: unknown) => ({ podAntiAffinity: { [REQUIRED]: [{ labelSelector, topologyKey: 'kubernetes.io/os' }] } });
/** A chart spreading its own replicas over nodes. */
const SPREADING = { podAntiAffinity: { [PREFERRED]: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' } }] } };

function pod(name: string, affinity: unknown): Spec {
  const p = sandboxPod(name, { spec: { affinity } }) as Spec;
  p.metadata.labels = { app: name };
  return p;
}

function deployment(name: string, affinity: unknown): Spec {
  const spec = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/web:1' }], affinity };
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec } } };
}

export function affinityCases(suite: () => Suite): void {
  describe("pod affinity terms are scoped to their writer's environment", () => {
    let alpha: Identity;
    let beta: Identity;
    /** platform:affinity-tenant: acts for no environment (a tenant's deployer), with edit-like rights here. */
    let tenant: Identity;

    const ok = (what: string, a: { status: number; text: string }) => {
      if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
    };
    const create = async (s: Suite, who: Identity, path: string, body: Spec): Promise<Spec> => {
      const answer = await s.api(who, 'POST', path, body);
      assert.equal(answer.status, 201, answer.text);
      return answer.body as Spec;
    };

    before(async () => {
      const s = suite();
      alpha = s.runnerA.identity;
      beta = s.janitorB;
      tenant = await s.newIdentity('platform', 'affinity-tenant');
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      ok('affinity role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        metadata: { name: 'e2e-affinity' },
        rules: [
          { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
          { apiGroups: [''], resources: ['pods'], verbs: ['*'] },
        ],
      }));
      const subjects: Array<[string, string]> = [['sandbox-a', 'runner'], ['sandbox-b', 'janitor'], ['platform', 'affinity-tenant']];
      ok('affinity rights', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'e2e-affinity' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-affinity' },
        subjects: subjects.map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      for (const [namespace, name] of subjects) await s.awaitAccess(`${namespace}:${name}`, { namespace: NS, verb: 'create', group: 'apps', resource: 'deployments' });
      await eventually(`Deed reviews ${NS}`, async () => (await s.api(beta, 'POST', `${PATH.Pod(NS)}?dryRun=All`, pod('probe', everywhere({ matchLabels: { app: 'x' } })))).body?.spec?.affinity?.podAntiAffinity?.[REQUIRED]?.[0]?.labelSelector?.matchLabels?.[ENV] === 'beta');
    });

    test("beta's pod whose anti-affinity would hold every pod with an app label off every node is stored repelling beta's pods only; one naming alpha's is refused", async () => {
      const s = suite();
      const stored = await create(s, beta, PATH.Pod(NS), pod('beta-repels', everywhere({ matchExpressions: [{ key: 'app', operator: 'Exists' }] })));
      assert.deepEqual(stored.spec.affinity, everywhere({ matchExpressions: [{ key: 'app', operator: 'Exists' }], matchLabels: { [ENV]: 'beta' } }));
      const aimed = await s.api(beta, 'POST', PATH.Pod(NS), pod('beta-aims', everywhere({ matchLabels: { [ENV]: 'alpha' } })));
      refusedBy(aimed, 'selector.affinity-scope', /podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution\[0\]\.labelSelector: selects pods of environment "alpha"; environment "beta" selects only its own pods/);
      assert.equal((await s.api(s.admin, 'GET', `${PATH.Pod(NS)}/beta-aims`)).status, 404, 'nothing is stored');
    });

    test("a tenant's pod whose anti-affinity targets every runner is stored with the runners excluded (it then selects no pod)", async () => {
      const s = suite();
      const stored = await create(s, tenant, PATH.Pod(NS), pod('tenant-repels', everywhere({ matchExpressions: [{ key: RUNNER, operator: 'Exists' }] })));
      assert.deepEqual(stored.spec.affinity, everywhere({ matchExpressions: [{ key: RUNNER, operator: 'Exists' }, NO_ENVIRONMENT, NO_RUNNERS] }));
    });

    test("a Deployment of no environment spreading its replicas is stored with only the expressions added, and keeps them when an update drops them", async () => {
      const s = suite();
      const stored = await create(s, tenant, PATH.Deployment(NS), deployment('web', SPREADING));
      const want = { podAntiAffinity: { [PREFERRED]: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' }, matchExpressions: [NO_ENVIRONMENT, NO_RUNNERS] }, topologyKey: 'kubernetes.io/hostname' } }] } };
      assert.deepEqual(stored.spec.template.spec.affinity, want);
      // The chart applied again as written (a merge patch replaces the list whole): what was added is put back, and no new rollout comes of it.
      const applied = await s.api(tenant, 'PATCH', `${PATH.Deployment(NS)}/web`, { spec: { template: { spec: { affinity: SPREADING } } } }, MERGE);
      assert.equal(applied.status, 200, applied.text);
      assert.deepEqual(applied.body.spec.template.spec.affinity, want);
      assert.equal(applied.body.metadata.generation, stored.metadata.generation, 'the template is unchanged');
    });

    test("alpha's own pod whose affinity term is pinned to alpha is stored unchanged", async () => {
      const s = suite();
      const affinity = { podAffinity: { [REQUIRED]: [{ labelSelector: { matchLabels: { app: 'db', [ENV]: 'alpha' } }, topologyKey: 'kubernetes.io/hostname' }] } };
      const stored = await create(s, alpha, PATH.Pod(NS), pod('alpha-near-db', affinity));
      assert.deepEqual(stored.spec.affinity, affinity);
      assert.equal(stored.metadata.labels[ENV], 'alpha');
    });
  });
}
