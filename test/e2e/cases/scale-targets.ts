// The workload autoscalers and rollout controllers clusters commonly run, in the real API
// server (docs/security-model.md, "What an object points at"): each acts on the workload its
// object names, later and unreviewed, for whoever wrote the reference, as the HPA controller
// does. In a namespace alpha and beta share, beta's VerticalPodAutoscaler (the VPA updater
// evicts the target's pods, its admission controller rewrites their requests), KEDA
// ScaledObject (the operator scales the target, to zero when idle) and Argo Rollouts Rollout
// with a workloadRef (it takes the Deployment's pod template and scales it down) naming
// alpha's Deployment are refused as beta's HPA is; beta's own, and a principal of no
// environment's naming the platform's unstamped Deployment, are stored.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Identity } from '../client.js';
import { collectionPath, createdOrThere as ok, createStamped, eventually, namespaceAdmins, optedInNamespace, refusedBy as refused, standInCrd } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'shared-scalers';
const MERGE = 'application/merge-patch+json';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

// Stand-ins for the projects' CRDs (the real ones carry full schemas; the suite installs
// nothing from the network): only what the API server needs to serve the kinds, and the
// approval annotation a CRD of a *.k8s.io group must carry (the VPA's own).
const KINDS = [
  { group: 'autoscaling.k8s.io', version: 'v1', plural: 'verticalpodautoscalers', kind: 'VerticalPodAutoscaler', approval: 'https://github.com/kubernetes/kubernetes/pull/63797' },
  { group: 'keda.sh', version: 'v1alpha1', plural: 'scaledobjects', kind: 'ScaledObject' },
  { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', kind: 'Rollout' },
  { group: 'keda.sh', version: 'v1alpha1', plural: 'triggerauthentications', kind: 'TriggerAuthentication' },
  { group: 'argoproj.io', version: 'v1alpha1', plural: 'analysistemplates', kind: 'AnalysisTemplate' },
] as const;
const path = (k: (typeof KINDS)[number]) => `/apis/${k.group}/${k.version}/namespaces/${NS}/${k.plural}`;
const [VPA, KEDA, ARGO, KEDA_AUTH, ANALYSIS] = KINDS;
const TRIGGER_AUTHS = path(KEDA_AUTH);
const VPAS = path(VPA);
const SCALED_OBJECTS = path(KEDA);
const ROLLOUTS = path(ARGO);
/** Rollouts in sandbox-a, bound to alpha: there an environment's Rollout may carry a pod template. */
const BOUND_ROLLOUTS = `/apis/${ARGO.group}/${ARGO.version}/namespaces/sandbox-a/${ARGO.plural}`;

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/agent:1' }] } } },
});
/** A VPA that would hold the target's pods to at least 64 CPUs: unschedulable. */
const vpa = (name: string, target: string) => ({
  apiVersion: `${VPA.group}/${VPA.version}`,
  kind: VPA.kind,
  metadata: { name },
  spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, updatePolicy: { updateMode: 'Recreate' }, resourcePolicy: { containerPolicies: [{ containerName: '*', minAllowed: { cpu: '64' } }] } },
});
/** A ScaledObject with this scaleTargetRef (`{name}` alone: KEDA's default, an apps/v1 Deployment). */
const scaledObject = (name: string, scaleTargetRef: Any) => ({
  apiVersion: `${KEDA.group}/${KEDA.version}`,
  kind: KEDA.kind,
  metadata: { name },
  spec: { scaleTargetRef, minReplicaCount: 0, triggers: [{ type: 'cron', metadata: { timezone: 'Etc/UTC', start: '0 0 1 1 *', end: '1 0 1 1 *', desiredReplicas: '1' } }] },
});
/** A TriggerAuthentication that hands KEDA's scaler the Secret's `token` as a bearer token. */
const triggerAuth = (name: string, secret: string) => ({
  apiVersion: `${KEDA_AUTH.group}/${KEDA_AUTH.version}`,
  kind: KEDA_AUTH.kind,
  metadata: { name },
  spec: { secretTargetRef: [{ parameter: 'token', name: secret, key: 'token' }] },
});
/** A Rollout with its own pod template (no workloadRef), with these affinity terms. */
const templated = (name: string, affinity?: Any) => ({
  apiVersion: `${ARGO.group}/${ARGO.version}`,
  kind: ARGO.kind,
  metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, ...(affinity !== undefined ? { affinity } : {}), containers: [{ name: 'main', image: 'registry.example/agent:1' }] } } },
});
const rollout = (name: string, target: string) => ({
  apiVersion: `${ARGO.group}/${ARGO.version}`,
  kind: ARGO.kind,
  metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target, scaleDown: 'onsuccess' }, strategy: { canary: { steps: [{ setWeight: 20 }] } } },
});

export function scaleTargetCases(suite: () => Suite): void {
  // The tenant role is Kubernetes' edit role, which grants none of these custom resources:
  // each identity here holds a namespace-admin Role (every verb on every resource of NS).
  describe("a VPA, a KEDA ScaledObject or an Argo Rollout names only a workload its writer environment may use", () => {
    let beta: Identity; // sandbox-b:scale-admin: acts for beta
    let alpha: Identity; // sandbox-a:runner: alpha's runner
    let stranger: Identity; // plain:scale-stranger: acts for no environment

    before(async () => {
      const s = suite();
      await optedInNamespace(s, NS);
      for (const k of KINDS) ok(`CRD ${k.plural}`, await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd(k)));
      beta = await s.newIdentity('sandbox-b', 'scale-admin');
      stranger = await s.newIdentity('plain', 'scale-stranger');
      alpha = s.runnerA.identity;
      await namespaceAdmins(s, NS, 'scale-admins', [['sandbox-a', 'runner'], ['sandbox-b', 'scale-admin'], ['plain', 'scale-stranger']]);
      await eventually('the stand-in kinds are served', async () => (await Promise.all(KINDS.map(async (k) => (await s.api(s.admin, 'GET', path(k))).status))).every((st) => st === 200));
      ok('rollouts role in sandbox-a', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/sandbox-a/roles', { metadata: { name: 'rollouts' }, rules: [{ apiGroups: [ARGO.group], resources: [ARGO.plural], verbs: ['*'] }] }));
      ok('rollouts binding in sandbox-a', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/sandbox-a/rolebindings', { metadata: { name: 'rollouts' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'rollouts' }, subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }] }));
      await eventually('RBAC lets alpha create rollouts in sandbox-a', async () => !/cannot create resource/.test((await s.api(alpha, 'POST', `${BOUND_ROLLOUTS}?dryRun=All`, rollout('rbac-probe', 'rbac-probe'))).text));
      for (const who of [alpha, beta, stranger])
        await eventually(`RBAC lets ${who.name} create rollouts in ${NS}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${ROLLOUTS}?dryRun=All`, rollout('rbac-probe', 'rbac-probe'))).text));
      await createStamped(s, alpha, 'alpha', [
        ['deployment', collectionPath('Deployment', NS), deployment('alpha-web')],
        ['Secret', collectionPath('Secret', NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-token' }, type: 'Opaque', stringData: { token: 'alpha-s-credential' } }],
        ['TriggerAuthentication', TRIGGER_AUTHS, triggerAuth('alpha-auth', 'alpha-token')],
      ], {});
      await createStamped(s, beta, 'beta', [['deployment', collectionPath('Deployment', NS), deployment('beta-web')]], {});
      // The platform's, created by the administrator (break-glass, no environment): unstamped.
      ok('platform deployment', await s.api(s.admin, 'POST', collectionPath('Deployment', NS), deployment('platform-web')));
    });

    test("beta's VerticalPodAutoscaler of alpha's Deployment is refused; alpha's of its own is stored", async () => {
      const s = suite();
      refused(await s.api(beta, 'POST', VPAS, vpa('beta-vpa', 'alpha-web')), 'reference.cross-environment', /spec\.targetRef: names Deployment alpha-web, which belongs to another environment \(the VPA updater evicts the target's pods/);
      const own = await s.api(alpha, 'POST', VPAS, vpa('alpha-vpa', 'alpha-web'));
      assert.equal(own.status, 201, own.text);
    });

    test("beta's ScaledObject of alpha's Deployment is refused, with KEDA's defaulted target as with an explicit one", async () => {
      const s = suite();
      refused(await s.api(beta, 'POST', SCALED_OBJECTS, scaledObject('beta-so', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-web' })), 'reference.cross-environment', /spec\.scaleTargetRef: names Deployment alpha-web, which belongs to another environment \(the KEDA operator scales the target/);
      // No apiVersion and no kind: KEDA takes an apps/v1 Deployment.
      refused(await s.api(beta, 'POST', SCALED_OBJECTS, scaledObject('beta-so', { name: 'alpha-web' })), 'reference.cross-environment', /spec\.scaleTargetRef: names Deployment alpha-web, which belongs to another environment/);
      refused(await s.api(beta, 'POST', SCALED_OBJECTS, scaledObject('beta-so', { kind: 'Deployment', name: 'alpha-web' })), 'reference.cross-environment', /names Deployment alpha-web/);
      const own = await s.api(alpha, 'POST', SCALED_OBJECTS, scaledObject('alpha-so', { name: 'alpha-web' }));
      assert.equal(own.status, 201, own.text);
    });

    test("beta's Rollout that takes over alpha's Deployment by workloadRef is refused; alpha's is stored", async () => {
      const s = suite();
      refused(await s.api(beta, 'POST', ROLLOUTS, rollout('beta-ro', 'alpha-web')), 'reference.cross-environment', /spec\.workloadRef: names Deployment alpha-web, which belongs to another environment \(the Argo Rollouts controller runs the Deployment's pod template/);
      const own = await s.api(alpha, 'POST', ROLLOUTS, rollout('alpha-ro', 'alpha-web'));
      assert.equal(own.status, 201, own.text);
    });

    test("beta's of its own Deployment are stored, and an UPDATE that retargets one to alpha's is refused", async () => {
      const s = suite();
      for (const [what, at, body] of [
        ['VPA', VPAS, vpa('beta-own-vpa', 'beta-web')],
        ['ScaledObject', SCALED_OBJECTS, scaledObject('beta-own-so', { name: 'beta-web' })],
        ['Rollout', ROLLOUTS, rollout('beta-own-ro', 'beta-web')],
      ] as const) {
        const own = await s.api(beta, 'POST', at, body);
        assert.equal(own.status, 201, `${what}: ${own.text}`);
      }
      refused(await s.api(beta, 'PATCH', `${SCALED_OBJECTS}/beta-own-so`, { spec: { scaleTargetRef: { name: 'alpha-web' } } }, MERGE), 'reference.cross-environment', /names Deployment alpha-web/);
      refused(await s.api(beta, 'PATCH', `${VPAS}/beta-own-vpa`, { spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-web' } } }, MERGE), 'reference.cross-environment', /names Deployment alpha-web/);
    });

    test("beta's TriggerAuthentication may not hand KEDA alpha's Secret, nor beta's trigger send alpha's TriggerAuthentication's credentials to beta's URL", async () => {
      const s = suite();
      refused(await s.api(beta, 'POST', TRIGGER_AUTHS, triggerAuth('beta-auth', 'alpha-token')), 'reference.cross-environment', /spec\.secretTargetRef\[0\]\.name: names Secret alpha-token, which belongs to another environment \(the KEDA operator reads the Secret's key/);
      // A metrics-api trigger at beta's URL, authenticated by alpha's TriggerAuthentication (read with get, from the rendered ClusterRole).
      const exfiltrating = { ...scaledObject('beta-exfil', { name: 'beta-web' }), spec: { scaleTargetRef: { name: 'beta-web' }, triggers: [{ type: 'metrics-api', metadata: { url: 'https://beta.example/metrics', valueLocation: 'v', targetValue: '1', authMode: 'bearer' }, authenticationRef: { name: 'alpha-auth' } }] } };
      refused(await s.api(beta, 'POST', SCALED_OBJECTS, exfiltrating), 'reference.cross-environment', /spec\.triggers\[0\]\.authenticationRef: names TriggerAuthentication alpha-auth, which belongs to another environment/);
      const own = await s.api(alpha, 'POST', SCALED_OBJECTS, { ...exfiltrating, metadata: { name: 'alpha-metrics' }, spec: { ...exfiltrating.spec, scaleTargetRef: { name: 'alpha-web' } } });
      assert.equal(own.status, 201, own.text);
    });

    test("beta's TriggerAuthentication may not have KEDA send its own token to beta's Vault address, nor alpha's Secret to beta's OAuth2 token URL, nor beta's analysis query with the Argo controller's credentials; with a service account of the namespace it may", async () => {
      const s = suite();
      const vault = (name: string, credential?: Record<string, unknown>) => ({ apiVersion: `${KEDA_AUTH.group}/${KEDA_AUTH.version}`, kind: KEDA_AUTH.kind, metadata: { name }, spec: { hashiCorpVault: { address: 'https://vault.beta.example', authentication: 'kubernetes', role: 'keda', mount: 'kubernetes', ...(credential !== undefined ? { credential } : {}), secrets: [{ parameter: 'token', path: 'secret/data/x', key: 'token' }] } } });
      const fix = /spec\.hashiCorpVault as written: the KEDA operator would send its own service account token .* to the Vault address.*name a service account of your namespace in credential\.serviceAccountName/;
      refused(await s.api(beta, 'POST', TRIGGER_AUTHS, vault('beta-vault')), 'guard.operator-identity', fix);
      refused(await s.api(beta, 'POST', TRIGGER_AUTHS, vault('beta-vault', { serviceAccount: '/var/run/secrets/kubernetes.io/serviceaccount/token' })), 'guard.operator-identity', fix);
      ok("beta's of a service account of the namespace", await s.api(beta, 'POST', TRIGGER_AUTHS, vault('beta-vault', { serviceAccountName: 'default' })));
      // Nor send alpha's Secret as its OAuth2 client secret to beta's token URL.
      refused(await s.api(beta, 'POST', TRIGGER_AUTHS, { apiVersion: `${KEDA_AUTH.group}/${KEDA_AUTH.version}`, kind: KEDA_AUTH.kind, metadata: { name: 'beta-oauth' }, spec: { oauth2: { type: 'clientCredentials', clientId: 'x', tokenUrl: 'https://beta.example/token', clientSecret: { valueFrom: { secretKeyRef: { name: 'alpha-token', key: 'token' } } } } } }), 'reference.cross-environment', /spec\.oauth2\.clientSecret\.valueFrom\.secretKeyRef\.name: names Secret alpha-token, which belongs to another environment/);
      // Nor have the Argo Rollouts controller query with its own credentials, or with alpha's Datadog keys.
      const datadog = (name: string, secretRef?: Record<string, unknown>) => ({ apiVersion: `${ANALYSIS.group}/${ANALYSIS.version}`, kind: ANALYSIS.kind, metadata: { name }, spec: { metrics: [{ name: 'errors', provider: { datadog: { apiVersion: 'v2', query: 'avg:errors{*}', ...(secretRef !== undefined ? { secretRef } : {}) } } }] } });
      refused(await s.api(beta, 'POST', path(ANALYSIS), datadog('beta-dd')), 'guard.operator-identity', /spec\.metrics\[0\]\.provider\.datadog as written: the Argo Rollouts controller would query Datadog with its own credentials/);
      refused(await s.api(beta, 'POST', path(ANALYSIS), datadog('beta-dd', { name: 'alpha-token', namespaced: true })), 'reference.cross-environment', /spec\.metrics\[0\]\.provider\.datadog\.secretRef\.name: names Secret alpha-token/);
      // Nor hand KEDA's own cloud token to its trigger's server.
      refused(await s.api(beta, 'POST', TRIGGER_AUTHS, { apiVersion: `${KEDA_AUTH.group}/${KEDA_AUTH.version}`, kind: KEDA_AUTH.kind, metadata: { name: 'beta-gcp' }, spec: { podIdentity: { provider: 'gcp' } } }), 'guard.operator-identity', /spec\.podIdentity as written: the KEDA operator would hand its own cloud token/);
    });

    test("beta may not give a Rollout in a shared namespace a pod template (the Argo Rollouts controller's pods of it would be of no environment), by create, patch or apply", async () => {
      const s = suite();
      const fix = /may not (create|change) Rollout shared-scalers\/beta-templated with a pod spec: the Argo Rollouts controller makes its ReplicaSets from it as a principal of its own, so their pods would be of no environment.*use a Deployment, whose pods Deed stamps and judges as your environment's/;
      refused(await s.api(beta, 'POST', ROLLOUTS, templated('beta-templated')), 'guard.operator-pods', fix);
      refused(await s.api(beta, 'POST', `${ROLLOUTS}?dryRun=All`, templated('beta-templated')), 'guard.operator-pods', fix);
      // Its workloadRef Rollout (stored above) may not be given one later.
      const stored = await s.api(beta, 'POST', ROLLOUTS, { ...rollout('beta-templated', 'beta-web') });
      assert.equal(stored.status, 201, stored.text);
      refused(await s.api(beta, 'PATCH', `${ROLLOUTS}/beta-templated`, { spec: { template: templated('x').spec.template } }, MERGE), 'guard.operator-pods', fix);
      refused(await s.api(beta, 'PATCH', `${ROLLOUTS}/beta-templated?fieldManager=beta&force=true`, { ...templated('beta-templated'), apiVersion: `${ARGO.group}/${ARGO.version}`, kind: ARGO.kind }, 'application/apply-patch+yaml'), 'guard.operator-pods', fix);
      assert.equal((await s.api(s.admin, 'GET', `${ROLLOUTS}/beta-templated`)).body.spec.template, undefined, 'the stored Rollout is unchanged');
      // Nor an analysis whose job metric the controller runs as a Job of its own.
      const analysis = { apiVersion: `${ANALYSIS.group}/${ANALYSIS.version}`, kind: ANALYSIS.kind, metadata: { name: 'beta-smoke' }, spec: { metrics: [{ name: 'smoke', provider: { job: { spec: { backoffLimit: 0, template: templated('x').spec.template } } } }] } };
      refused(await s.api(beta, 'POST', path(ANALYSIS), analysis), 'guard.operator-pods', /may not create AnalysisTemplate shared-scalers\/beta-smoke with a pod spec: the Argo Rollouts controller makes its job metrics' Jobs/);
      // A principal of no environment makes pods of no environment itself.
      ok("the stranger's templated Rollout", await s.api(stranger, 'POST', ROLLOUTS, templated('stranger-templated')));
    });

    test("beta's Rollout may not run alpha's AnalysisTemplate, whose arguments read alpha's Secret; its own is stored", async () => {
      const s = suite();
      const template = (name: string, secret: string) => ({ apiVersion: `${ANALYSIS.group}/${ANALYSIS.version}`, kind: ANALYSIS.kind, metadata: { name }, spec: { args: [{ name: 'url' }, { name: 'token', valueFrom: { secretKeyRef: { name: secret, key: 'token' } } }], metrics: [{ name: 'probe', provider: { web: { url: '{{args.url}}', headers: [{ key: 'Authorization', value: 'Bearer {{args.token}}' }] } } }] } });
      // Read with get, from the rendered ClusterRole.
      ok("alpha's AnalysisTemplate", await s.api(alpha, 'POST', path(ANALYSIS), template('alpha-check', 'alpha-token')));
      refused(await s.api(beta, 'POST', path(ANALYSIS), template('beta-borrowed', 'alpha-token')), 'reference.cross-environment', /spec\.args\[1\]\.valueFrom\.secretKeyRef\.name: names Secret alpha-token, which belongs to another environment/);
      const analysed = (name: string, templateName: string) => ({ ...rollout(name, 'beta-web'), spec: { ...rollout(name, 'beta-web').spec, strategy: { canary: { steps: [{ setWeight: 20 }, { analysis: { templates: [{ templateName }], args: [{ name: 'url', value: 'https://beta.example/collect' }] } }] } } } });
      refused(await s.api(beta, 'POST', ROLLOUTS, analysed('beta-analysed', 'alpha-check')), 'reference.cross-environment', /spec\.strategy\.canary\.steps\[1\]\.analysis\.templates\[0\]: names AnalysisTemplate alpha-check, which belongs to another environment/);
      ok("beta's AnalysisTemplate", await s.api(beta, 'POST', path(ANALYSIS), { ...template('beta-check', 'alpha-token'), spec: { metrics: [{ name: 'probe', provider: { web: { url: 'https://beta.example/health' } } }] } }));
      const own = await s.api(beta, 'POST', ROLLOUTS, analysed('beta-analysed', 'beta-check'));
      assert.equal(own.status, 201, own.text);
    });

    test("a Rollout's pod template, which the Argo Rollouts controller copies as a principal of its own, has its affinity terms scoped where alpha writes it in its bound namespace", async () => {
      const s = suite();
      const hostile = (matchLabels: Any) => ({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels }, topologyKey: 'kubernetes.io/os' }] } });
      refused(await s.api(alpha, 'POST', BOUND_ROLLOUTS, templated('alpha-hold', hostile({ 'deed.dev/environment': 'beta' }))), 'selector.affinity-scope', /spec\.template\.spec\.affinity\.podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution\[0\]\.labelSelector: selects pods of environment "beta"/);
      const stored = await s.api(alpha, 'POST', BOUND_ROLLOUTS, templated('alpha-spread', hostile({ app: 'alpha-spread' })));
      assert.equal(stored.status, 201, stored.text);
      assert.deepEqual(stored.body.spec.template.spec.affinity, hostile({ app: 'alpha-spread', 'deed.dev/environment': 'alpha' }));
      // GitOps re-applies the chart's affinity as written: the mutating webhook scopes it again; one naming beta is refused.
      const reapplied = await s.api(alpha, 'PATCH', `${BOUND_ROLLOUTS}/alpha-spread`, { spec: { template: { spec: { affinity: hostile({ app: 'alpha-spread' }) } } } }, MERGE);
      assert.equal(reapplied.status, 200, reapplied.text);
      assert.deepEqual(reapplied.body.spec.template.spec.affinity, hostile({ app: 'alpha-spread', 'deed.dev/environment': 'alpha' }));
      // An UPDATE that adds a term of its own: scoped too, not stored as written for the Argo Rollouts controller to copy.
      const added = await s.api(alpha, 'PATCH', `${BOUND_ROLLOUTS}/alpha-spread`, { spec: { template: { spec: { affinity: hostile({ app: 'web' }) } } } }, MERGE);
      assert.equal(added.status, 200, added.text);
      assert.deepEqual(added.body.spec.template.spec.affinity, hostile({ app: 'web', 'deed.dev/environment': 'alpha' }));
      refused(await s.api(alpha, 'PATCH', `${BOUND_ROLLOUTS}/alpha-spread`, { spec: { template: { spec: { affinity: hostile({ 'deed.dev/environment': 'beta' }) } } } }, MERGE), 'selector.affinity-scope', /selects pods of environment "beta"/);
    });

    test("a principal of no environment may name the platform's unstamped Deployment, not alpha's; beta may not have the platform's changed for it", async () => {
      const s = suite();
      // beta acts for an environment: its follower would change the platform's Deployment, which beta may not change itself.
      for (const [what, at, body] of [
        ['VPA', VPAS, vpa('beta-platform-vpa', 'platform-web')],
        ['ScaledObject', SCALED_OBJECTS, scaledObject('beta-platform-so', { name: 'platform-web' })],
        ['Rollout', ROLLOUTS, rollout('beta-platform-ro', 'platform-web')],
      ] as const)
        refused(await s.api(beta, 'POST', at, body), 'reference.cross-environment', new RegExp(`${what === 'Rollout' ? 'workloadRef' : what === 'VPA' ? 'targetRef' : 'scaleTargetRef'}: names Deployment platform-web, which carries no stamps in a namespace bound to no environment: it is the platform's .*acts for "beta" and may not have it changed`));
      for (const [what, at, body] of [
        ['VPA', VPAS, vpa('platform-vpa', 'platform-web')],
        ['ScaledObject', SCALED_OBJECTS, scaledObject('platform-so', { name: 'platform-web' })],
        ['Rollout', ROLLOUTS, rollout('platform-ro', 'platform-web')],
      ] as const) {
        const stored = await s.api(stranger, 'POST', at, body);
        assert.equal(stored.status, 201, `${what}: ${stored.text}`);
      }
      refused(await s.api(stranger, 'POST', SCALED_OBJECTS, scaledObject('stranger-so', { name: 'alpha-web' })), 'reference.cross-environment', /acts for no environment and may not/);
    });
  });
}
