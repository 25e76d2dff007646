// What an object points at (docs/security-model.md, "What an object points at"), in the real
// API server with the controllers running. In a namespace alpha and beta share, beta holds
// the tenant role the install renders (deed manifests --tenant-role) and, as a second try, a
// namespace-admin Role (every verb on every resource of the namespace). Each reference that
// a controller, kube-proxy or the token issuer follows later is refused when it names
// alpha's object: a HorizontalPodAutoscaler's target, an Ingress backend, an EndpointSlice's
// or an Endpoints' Service, a controller owner reference (a pod to alpha's Job, a Job to
// alpha's CronJob), a token of (or a pod running as) the service account alpha created, and
// the /scale of alpha's custom resource; and Gateway API's: an HTTPRoute's backend or mirror
// naming alpha's Service, a Gateway serving alpha's TLS Secret. Alpha's own use of each keeps working.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { renderManifests } from '../../../src/install/manifests.js';
import { TENANT_ROLE } from '../../../src/install/tenant-role.js';
import type { KubeObject } from '../../../src/admission/types.js';
import type { Identity } from '../client.js';
import { collectionPath, createdOrThere as ok, createStamped, eventually, namespaceAdmins, optedInNamespace, PATHS, refusedBy as refused, sandboxPod, standInCrd } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'shared-pointers';
const GROUP = 'pools.e2e.deed.dev';
const POOLS = (ns: string) => `/apis/${GROUP}/v1/namespaces/${ns}/pools`;
const HPAS = (ns: string) => `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers`;
const SLICES = (ns: string) => collectionPath('EndpointSlice', ns);
const CLAIMS = (ns: string) => `/apis/resource.k8s.io/v1/namespaces/${ns}/resourceclaims`;
const CLAIM_TEMPLATES = (ns: string) => `/apis/resource.k8s.io/v1/namespaces/${ns}/resourceclaimtemplates`;
const MERGE = 'application/merge-patch+json';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

const CRD = standInCrd({ group: GROUP, version: 'v1', plural: 'pools', kind: 'Pool', scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } });

const template = (name: string) => ({ metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.example/agent:1' }] } });
const deployment = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { ...template(name), spec: { ...template(name).spec, restartPolicy: 'Always' } } } });
const job = (name: string, meta: Any = {}) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, ...meta }, spec: { suspend: true, template: template(name) } });
const cronJob = (name: string) => ({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name }, spec: { schedule: '0 0 1 1 *', suspend: true, jobTemplate: { spec: { template: template(name) } } } });
const hpa = (name: string, target: string) => ({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, minReplicas: 1, maxReplicas: 1 } });
const ingress = (name: string, service: string) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name },
  spec: { rules: [{ host: `${name}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } }] } }] },
});
const service = (name: string, selector?: Any) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...(selector ? { selector } : {}) } });
const slice = (name: string, svc: string) => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name, labels: { 'kubernetes.io/service-name': svc } }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.9'] }], ports: [{ port: 80 }] });
const claimSpec = { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.e2e.deed.dev' } }] } };
const claim = (name: string) => ({ apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaim', metadata: { name }, spec: claimSpec });
const controlledBy = (apiVersion: string, kind: string, name: string, uid: string) => ({ ownerReferences: [{ apiVersion, kind, name, uid, controller: true }] });

// Gateway API: minimal stand-ins for its CRDs (the real ones carry full schemas; the suite
// installs nothing from the network). Only what the API server needs to serve the kinds,
// and the approval annotation every CRD of a *.k8s.io group must carry.
const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const GW_NS = 'shared-gateways';
const GW_INFRA = 'gateway-infra';
const ROUTES = (ns: string) => `/apis/${GATEWAY_GROUP}/v1/namespaces/${ns}/httproutes`;
const GATEWAYS = (ns: string) => `/apis/${GATEWAY_GROUP}/v1/namespaces/${ns}/gateways`;
const LISTENER_SETS = (ns: string) => `/apis/${GATEWAY_GROUP}/v1/namespaces/${ns}/listenersets`;
const gatewayCrd = (plural: string, kind: string) => standInCrd({ group: GATEWAY_GROUP, version: 'v1', plural, kind, approval: 'https://github.com/kubernetes-sigs/gateway-api/pull/2466' });
/** An HTTPRoute attached to the namespace's shared Gateway, one rule with these backendRefs (`{name}` alone: a Service, by default). */
const httpRoute = (name: string, ...backendRefs: Any[]) => ({
  apiVersion: `${GATEWAY_GROUP}/v1`,
  kind: 'HTTPRoute',
  metadata: { name },
  spec: { parentRefs: [{ name: 'shared-gw' }], hostnames: [`${name}.example.com`], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: backendRefs.map((b) => ({ port: 80, ...b })) }] },
});
const gateway = (name: string, ...certificateRefs: Any[]) => ({
  apiVersion: `${GATEWAY_GROUP}/v1`,
  kind: 'Gateway',
  metadata: { name },
  spec: { gatewayClassName: 'shared', listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: `${name}.example.com`, tls: { mode: 'Terminate', certificateRefs } }] },
});

// cert-manager: stand-ins for its CRDs (certificates, certificaterequests and issuers of
// cert-manager.io; the real ones carry full schemas and the suite installs nothing from the
// network), enough for the API server to serve the kinds. No cert-manager controller runs:
// what is checked is what Deed lets be stored for it to act on.
const CERT_GROUP = 'cert-manager.io';
const CM_NS = 'shared-certs';
const CM_INFRA = 'cert-infra';
const CERTIFICATES = (ns: string) => `/apis/${CERT_GROUP}/v1/namespaces/${ns}/certificates`;
const CERTIFICATE_REQUESTS = (ns: string) => `/apis/${CERT_GROUP}/v1/namespaces/${ns}/certificaterequests`;
const ISSUERS = (ns: string) => `/apis/${CERT_GROUP}/v1/namespaces/${ns}/issuers`;
const certManagerCrd = (plural: string, kind: string) => standInCrd({ group: CERT_GROUP, version: 'v1', plural, kind });
/** A CA Issuer: it signs with the key pair in `spec.ca.secretName`. */
const issuer = (name: string) => ({ apiVersion: `${CERT_GROUP}/v1`, kind: 'Issuer', metadata: { name }, spec: { ca: { secretName: `${name}-key` } } });
/** A Certificate signed by `issuerRef` (`{name}` alone: an Issuer of the Certificate's namespace), its key pair written into `secretName`. */
const certificate = (name: string, issuerRef: Any, secretName = `${name}-tls`) => ({ apiVersion: `${CERT_GROUP}/v1`, kind: 'Certificate', metadata: { name }, spec: { secretName, dnsNames: [`${name}.example.com`], issuerRef } });

// External Secrets Operator: stand-ins for its CRDs (externalsecrets and secretstores of
// external-secrets.io), as above. No operator runs: what is checked is what Deed lets be stored.
const ESO_GROUP = 'external-secrets.io';
const ESO_NS = 'shared-eso';
const EXTERNAL_SECRETS = (ns: string) => `/apis/${ESO_GROUP}/v1/namespaces/${ns}/externalsecrets`;
const SECRET_STORES = (ns: string) => `/apis/${ESO_GROUP}/v1/namespaces/${ns}/secretstores`;
const esoCrd = (plural: string, kind: string) => standInCrd({ group: ESO_GROUP, version: 'v1', plural, kind });
const GENERATORS_GROUP = 'generators.external-secrets.io';
const ECR_TOKENS = (ns: string) => `/apis/${GENERATORS_GROUP}/v1alpha1/namespaces/${ns}/ecrauthorizationtokens`;
const PUSH_SECRETS = (ns: string) => `/apis/${ESO_GROUP}/v1alpha1/namespaces/${ns}/pushsecrets`;
/** An ECR generator authenticating with these Secrets' AWS keys. */
const ecrToken = (name: string, secret: string) => ({ apiVersion: `${GENERATORS_GROUP}/v1alpha1`, kind: 'ECRAuthorizationToken', metadata: { name }, spec: { region: 'eu-west-1', auth: { secretRef: { accessKeyIDSecretRef: { name: secret, key: 'token' }, secretAccessKeySecretRef: { name: secret, key: 'token' } } } } });
/** A SecretStore that authenticates to Vault with the token in `secret`. */
const secretStore = (name: string, secret: string) => ({ apiVersion: `${ESO_GROUP}/v1`, kind: 'SecretStore', metadata: { name }, spec: { provider: { vault: { server: 'https://vault.example', path: 'secret', auth: { tokenSecretRef: { name: secret, key: 'token' } } } } } });
/** An ExternalSecret that fetches through `store` into the Secret `target`. */
const externalSecret = (name: string, store: string, target = `${name}-fetched`) => ({ apiVersion: `${ESO_GROUP}/v1`, kind: 'ExternalSecret', metadata: { name }, spec: { refreshInterval: '1h', secretStoreRef: { name: store, kind: 'SecretStore' }, target: { name: target }, data: [{ secretKey: 'password', remoteRef: { key: 'db/password' } }] } });

export function pointerCases(suite: () => Suite): void {
  let tenant: Identity; // sandbox-b:ptr-tenant: acts for beta, the tenant role in NS
  let admin: Identity; // sandbox-b:ptr-admin: acts for beta, a namespace-admin Role in NS
  let alpha: Identity; // sandbox-a:runner: alpha's runner, the tenant role and the namespace-admin Role in NS
  const uids: Record<string, string> = {};
  /** Refused, by Deed's rule when RBAC lets the identity try at all. */
  const refusedOrForbidden = (a: { status: number; text: string; body: { message?: string } }, rule: string) => {
    assert.equal(a.status, 403, a.text);
    if (!/cannot (create|patch|update) resource/.test(String(a.body.message))) assert.ok(String(a.body.message).includes(`[${rule}]`), a.body.message);
  };

  describe('what an object points at is its writer environment\'s to use', () => {
    before(async () => {
      const s = suite();
      await optedInNamespace(s, NS);
      ok('CRD', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', CRD));
      const role = renderManifests({ namespace: 'deed-system', image: 'x', tenantRole: true }).find((o) => o.metadata?.name === TENANT_ROLE)!;
      ok('tenant role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role));
      tenant = await s.newIdentity('sandbox-b', 'ptr-tenant');
      admin = await s.newIdentity('sandbox-b', 'ptr-admin');
      alpha = s.runnerA.identity;
      const bind = async (name: string, roleRef: Any, subjects: Array<[string, string]>) =>
        ok(name, await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { metadata: { name }, roleRef, subjects: subjects.map(([namespace, n]) => ({ kind: 'ServiceAccount', namespace, name: n })) }));
      await bind('ptr-tenants', { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: TENANT_ROLE }, [['sandbox-a', 'runner'], ['sandbox-b', 'ptr-tenant']]);
      ok('namespace-admin role', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'namespace-admin' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] }));
      await bind('ptr-admins', { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'namespace-admin' }, [['sandbox-a', 'runner'], ['sandbox-b', 'ptr-admin']]);
      for (const who of [alpha, tenant, admin])
        await eventually(`RBAC lets ${who.name} create autoscalers in ${NS}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${HPAS(NS)}?dryRun=All`, hpa('rbac-probe', 'rbac-probe'))).text));
      await eventually('the CRD is served', async () => (await s.api(s.admin, 'GET', POOLS(NS))).status === 200);
      // Alpha's objects, as its runner creates them.
      await createStamped(s, alpha, 'alpha', [
        ['deployment', collectionPath('Deployment', NS), deployment('alpha-web')],
        ['service', collectionPath('Service', NS), service('alpha-svc', { app: 'alpha-web' })],
        ['selectorless service', collectionPath('Service', NS), service('alpha-ext')],
        ['job', collectionPath('Job', NS), job('alpha-job')],
        ['cronjob', collectionPath('CronJob', NS), cronJob('alpha-cron')],
        ['service account', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'alpha-sa' } }],
        ['pool', POOLS(NS), { apiVersion: `${GROUP}/v1`, kind: 'Pool', metadata: { name: 'alpha-pool' }, spec: { replicas: 3 } }],
        ['resource claim', CLAIMS(NS), claim('alpha-gpu')],
      ], uids);
    });

    test("beta's HorizontalPodAutoscaler of alpha's Deployment is refused; alpha's own is stored and the Deployment keeps its replicas", async () => {
      const s = suite();
      refused(await s.api(tenant, 'POST', HPAS(NS), hpa('beta-hpa', 'alpha-web')), 'reference.cross-environment', /spec\.scaleTargetRef: names Deployment alpha-web, which belongs to another environment/);
      refused(await s.api(admin, 'POST', HPAS(NS), hpa('beta-hpa', 'alpha-web')), 'reference.cross-environment');
      ok("beta's own target", await s.api(admin, 'POST', collectionPath('Deployment', NS), deployment('beta-web')));
      const own = await s.api(admin, 'POST', HPAS(NS), hpa('beta-own', 'beta-web'));
      assert.equal(own.status, 201, own.text);
      refused(await s.api(admin, 'PATCH', `${HPAS(NS)}/beta-own`, { spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-web' } } }, MERGE), 'reference.cross-environment');
      assert.equal((await s.api(s.admin, 'GET', `${collectionPath('Deployment', NS)}/alpha-web`)).body.spec.replicas, 2);
      const alphas = await s.api(alpha, 'POST', HPAS(NS), hpa('alpha-hpa', 'alpha-web'));
      assert.equal(alphas.status, 201, alphas.text);
    });

    test("beta's Ingress that publishes alpha's Service is refused; alpha's own Ingress and Service work", async () => {
      const s = suite();
      refused(await s.api(tenant, 'POST', collectionPath('Ingress', NS), ingress('beta-route', 'alpha-svc')), 'reference.cross-environment', /backend\.service\.name: names Service alpha-svc/);
      refused(await s.api(admin, 'POST', collectionPath('Ingress', NS), ingress('beta-route', 'alpha-svc')), 'reference.cross-environment');
      const own = await s.api(alpha, 'POST', collectionPath('Ingress', NS), ingress('alpha-route', 'alpha-svc'));
      assert.equal(own.status, 201, own.text);
      // Its TLS Secret too: the ingress controller would serve alpha's certificate and key for beta's hosts.
      ok("alpha's TLS Secret", await s.api(alpha, 'POST', PATHS.Secret(NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-tls' }, type: 'Opaque', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }));
      const tls = { ...ingress('beta-tls', 'beta-nothing'), spec: { tls: [{ hosts: ['beta.example.com'], secretName: 'alpha-tls' }] } };
      refused(await s.api(tenant, 'POST', collectionPath('Ingress', NS), tls), 'reference.cross-environment', /spec\.tls\[0\]\.secretName: names Secret alpha-tls, which belongs to another environment/);
    });

    test("beta may not join alpha's Service with an EndpointSlice, nor write the Endpoints of alpha's selectorless Service; alpha may", async () => {
      const s = suite();
      refusedOrForbidden(await s.api(tenant, 'POST', SLICES(NS), slice('beta-hijack', 'alpha-svc')), 'reference.cross-environment');
      refused(await s.api(admin, 'POST', SLICES(NS), slice('beta-hijack', 'alpha-svc')), 'reference.cross-environment', /kubernetes\.io\/service-name"\]: names Service alpha-svc/);
      refused(await s.api(admin, 'POST', collectionPath('Endpoints', NS), { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'alpha-ext' }, subsets: [{ addresses: [{ ip: '10.0.0.9' }], ports: [{ port: 80 }] }] }), 'reference.cross-environment', /metadata\.name: names Service alpha-ext/);
      const own = await s.api(alpha, 'POST', SLICES(NS), slice('alpha-ext-1', 'alpha-ext'));
      assert.equal(own.status, 201, own.text);
    });

    test("beta's pod that names alpha's Job as its controller, and beta's Job that names alpha's CronJob, are refused", async () => {
      const s = suite();
      for (const who of [tenant, admin]) {
        refused(await s.api(who, 'POST', PATHS.Pod(NS), { ...sandboxPod('beta-counted'), metadata: { name: 'beta-counted', ...controlledBy('batch/v1', 'Job', 'alpha-job', uids['alpha-job']!) } }), 'reference.cross-environment', /the controller reference names Job shared-pointers\/alpha-job/);
        refused(await s.api(who, 'POST', collectionPath('Job', NS), job('beta-history', controlledBy('batch/v1', 'CronJob', 'alpha-cron', uids['alpha-cron']!))), 'reference.cross-environment', /CronJob shared-pointers\/alpha-cron/);
      }
      const own = await s.api(alpha, 'POST', collectionPath('Job', NS), job('alpha-run', controlledBy('batch/v1', 'CronJob', 'alpha-cron', uids['alpha-cron']!)));
      assert.equal(own.status, 201, own.text);
    });

    test("beta may neither get a token of the service account alpha created nor run a pod as it; alpha may get one", async () => {
      const s = suite();
      const token = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds: 600 } };
      refusedOrForbidden(await s.api(tenant, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/alpha-sa/token`, token), 'guard.service-account');
      refused(await s.api(admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/alpha-sa/token`, token), 'guard.service-account', /service account shared-pointers:alpha-sa is stamped for environment "alpha"/);
      refused(await s.api(admin, 'POST', PATHS.Pod(NS), sandboxPod('beta-as-alpha', { spec: { serviceAccountName: 'alpha-sa' } })), 'guard.service-account', /is stamped for environment "alpha"/);
      // And a Deployment whose pods would run as it: refused at the Deployment, not at each pod its ReplicaSet would make.
      const asAlpha = deployment('beta-web-as-alpha');
      refused(await s.api(admin, 'POST', collectionPath('Deployment', NS), { ...asAlpha, spec: { ...asAlpha.spec, template: { ...asAlpha.spec.template, spec: { ...asAlpha.spec.template.spec, serviceAccountName: 'alpha-sa' } } } }), 'guard.service-account', /spec\.template\.spec\.serviceAccountName: service account shared-pointers:alpha-sa is stamped for environment "alpha"; .* may not make pods that run as it from a Deployment template/);
      const own = await s.api(alpha, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/alpha-sa/token`, token);
      assert.equal(own.status, 201, own.text);
    });

    test("beta's pod may not share alpha's ResourceClaim, nor its ResourceClaimTemplate carry alpha's copied stamps; alpha's pod uses its claim", async () => {
      const s = suite();
      const usesClaim = (name: string, claimName: string) => sandboxPod(name, { spec: { resourceClaims: [{ name: 'gpu', resourceClaimName: claimName }], containers: [{ name: 'main', image: 'registry.example/agent:1', resources: { claims: [{ name: 'gpu' }] } }] } });
      refused(await s.api(admin, 'POST', PATHS.Pod(NS), usesClaim('beta-shares', 'alpha-gpu')), 'reference.cross-environment', /spec\.resourceClaims\[0\]\.resourceClaimName: names ResourceClaim alpha-gpu, which belongs to another environment/);
      const stored = (await s.api(s.admin, 'GET', `${CLAIMS(NS)}/alpha-gpu`)).body as KubeObject;
      const copied = { labels: stored.metadata.labels, annotations: stored.metadata.annotations };
      refused(
        await s.api(admin, 'POST', CLAIM_TEMPLATES(NS), { apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaimTemplate', metadata: { name: 'beta-copy' }, spec: { metadata: copied, spec: claimSpec } }),
        'stamp.template',
        /spec\.metadata\.annotations\["deed\.dev\/attestation"\]/,
      );
      const own = await s.api(alpha, 'POST', PATHS.Pod(NS), usesClaim('alpha-uses', 'alpha-gpu'));
      assert.equal(own.status, 201, own.text);
    });

    test("a claim a controller made for alpha's pod (a ResourceClaim from its template, an ephemeral volume's PVC) is alpha's: beta's pod may neither share its devices nor mount it", async () => {
      const s = suite();
      const created = await s.api(alpha, 'POST', PATHS.Pod(NS), sandboxPod('alpha-gpu-user'));
      assert.equal(created.status, 201, created.text);
      const owner = controlledBy('v1', 'Pod', 'alpha-gpu-user', created.body.metadata.uid as string);
      // What the resourceclaim and ephemeral volume controllers make, unstamped (break-glass stands in for them here).
      const made = await s.api(s.admin, 'POST', CLAIMS(NS), { ...claim('alpha-gpu-user-gpu-x7k2q'), metadata: { name: 'alpha-gpu-user-gpu-x7k2q', ...owner } });
      assert.equal(made.status, 201, made.text);
      const scratch = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'alpha-gpu-user-scratch', ...owner }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
      assert.equal((await s.api(s.admin, 'POST', PATHS.PersistentVolumeClaim(NS), scratch)).status, 201);
      const usesClaim = (name: string, claimName: string) => sandboxPod(name, { spec: { resourceClaims: [{ name: 'gpu', resourceClaimName: claimName }], containers: [{ name: 'main', image: 'registry.example/agent:1', resources: { claims: [{ name: 'gpu' }] } }] } });
      refused(await s.api(admin, 'POST', PATHS.Pod(NS), usesClaim('beta-takes-gpu', 'alpha-gpu-user-gpu-x7k2q')), 'reference.cross-environment', /names ResourceClaim alpha-gpu-user-gpu-x7k2q, which belongs to another environment/);
      refused(await s.api(admin, 'POST', PATHS.Pod(NS), sandboxPod('beta-takes-scratch', { spec: { volumes: [{ name: 'scratch', persistentVolumeClaim: { claimName: 'alpha-gpu-user-scratch' } }] } })), 'claim.cross-environment', /volume "scratch" mounts claim alpha-gpu-user-scratch, which belongs to another environment/);
      const own = await s.api(alpha, 'POST', PATHS.Pod(NS), usesClaim('alpha-shares-gpu', 'alpha-gpu-user-gpu-x7k2q'));
      assert.equal(own.status, 201, own.text);
    });

    test("a snapshot of a claim made for alpha's pod is alpha's: beta may neither restore it nor change or delete it; alpha restores it", async () => {
      const s = suite();
      ok('CRD volumesnapshots', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshots', kind: 'VolumeSnapshot', approval: 'https://github.com/kubernetes-csi/external-snapshotter/pull/814' })));
      const SNAPSHOTS = `/apis/snapshot.storage.k8s.io/v1/namespaces/${NS}/volumesnapshots`;
      await eventually('snapshots are served', async () => (await s.api(s.admin, 'GET', SNAPSHOTS)).status === 200);
      const created = await s.api(alpha, 'POST', PATHS.Pod(NS), sandboxPod('alpha-snapped'));
      assert.equal(created.status, 201, created.text);
      const pvc = (name: string, extra: Any = {}) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, ...extra }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
      // The ephemeral volume controller's claim for alpha's pod, unstamped (break-glass stands in for it).
      assert.equal((await s.api(s.admin, 'POST', PATHS.PersistentVolumeClaim(NS), pvc('alpha-snapped-data', controlledBy('v1', 'Pod', 'alpha-snapped', created.body.metadata.uid as string)))).status, 201);
      const snapshot = await s.api(alpha, 'POST', SNAPSHOTS, { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'alpha-snapped-1' }, spec: { source: { persistentVolumeClaimName: 'alpha-snapped-data' } } });
      assert.equal(snapshot.status, 201, snapshot.text);
      const restore = (name: string) => ({ ...pvc(name), spec: { ...pvc(name).spec, dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'alpha-snapped-1' } } });
      refused(await s.api(admin, 'POST', PATHS.PersistentVolumeClaim(NS), restore('beta-restores')), 'claim.cross-environment', /this claim restores snapshot alpha-snapped-1 of claim alpha-snapped-data, which belongs to another environment/);
      // Whose a snapshot is, is its source claim's: alpha's, through the pod it was made for.
      refused(await s.api(admin, 'PATCH', `${SNAPSHOTS}/alpha-snapped-1`, { metadata: { labels: { taken: 'by-beta' } } }, MERGE), 'guard.cross-environment');
      refused(await s.api(admin, 'PATCH', `${SNAPSHOTS}/alpha-snapped-1/status`, { status: { readyToUse: true } }, MERGE), 'guard.cross-environment');
      refused(await s.api(admin, 'DELETE', `${SNAPSHOTS}/alpha-snapped-1`), 'guard.cross-environment');
      const own = await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim(NS), restore('alpha-restores'));
      assert.equal(own.status, 201, own.text);
    });

    test("beta's claim filled by a volume populator (KubeVirt CDI's VolumeCloneSource, which may copy alpha's claim) is refused; alpha fills one in its bound namespace", async () => {
      const s = suite();
      const populated = (name: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, dataSourceRef: { apiGroup: 'cdi.kubevirt.io', kind: 'VolumeCloneSource', name: 'grab' } } });
      refused(await s.api(admin, 'POST', PATHS.PersistentVolumeClaim(NS), populated('beta-populated')), 'claim.unknown', /spec\.dataSourceRef: this claim is filled from VolumeCloneSource\.cdi\.kubevirt\.io\/grab, which Deed does not read \(a volume populator's source/);
      const ephemeral = sandboxPod('beta-populated-pod', { spec: { volumes: [{ name: 'data', ephemeral: { volumeClaimTemplate: { spec: populated('x').spec } } }] } });
      refused(await s.api(admin, 'POST', PATHS.Pod(NS), ephemeral), 'claim.unknown', /volume "data" is filled from VolumeCloneSource/);
      const own = await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim('sandbox-a'), populated('alpha-populated'));
      assert.equal(own.status, 201, own.text);
    });

    test("what beta's claims are filled from must be beta's whenever they are made: no source that does not exist yet in a pod's ephemeral volume or a StatefulSet's claim template, and the statefulset controller's claim of a scale-up is refused once its source is alpha's", async () => {
      const s = suite();
      const STATEFULSETS = `/apis/apps/v1/namespaces/${NS}/statefulsets`;
      const filledFrom = (name: string) => ({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, dataSource: { kind: 'PersistentVolumeClaim', name } });
      const statefulSet = (name: string, source: string) => ({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name },
        spec: { replicas: 1, podManagementPolicy: 'Parallel', serviceName: name, selector: { matchLabels: { app: name } }, template: { ...template(name), spec: { ...template(name).spec, restartPolicy: 'Always' } }, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: filledFrom(source) }] },
      });
      // The ephemeral volume controller makes the pod's claim at once, and no binding judges
      // what it is filled from: a name alpha creates later would be copied (201 before).
      const pod = sandboxPod('beta-fills-later', { spec: { volumes: [{ name: 'ws', ephemeral: { volumeClaimTemplate: { spec: filledFrom('fill-later') } } }] } });
      refused(await s.api(admin, 'POST', PATHS.Pod(NS), pod), 'claim.absent', /volumes\[name=ws\]\.ephemeral\.volumeClaimTemplate\.spec\.dataSource: claim fill-later does not exist; create it first/);
      refused(await s.api(admin, 'POST', STATEFULSETS, statefulSet('beta-fills-later', 'fill-later')), 'claim.absent', /volumeClaimTemplates\[name=d\]\.spec\.dataSource: claim fill-later does not exist/);
      // From beta's own claim: admitted, and the controller makes replica 0's claim from it.
      ok("beta's source claim", await s.api(admin, 'POST', PATHS.PersistentVolumeClaim(NS), { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'fill-src' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }));
      const made = await s.api(admin, 'POST', STATEFULSETS, statefulSet('beta-fill', 'fill-src'));
      assert.equal(made.status, 201, made.text);
      await eventually("replica 0's claim", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/d-beta-fill-0`)).status === 200);
      // Beta's source goes. While replica 0's claim is not provisioned it reads the name, and
      // alpha may not take it (before: 201, and the provisioner would copy alpha's claim).
      const sourceClaim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'fill-src' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
      assert.equal((await s.api(admin, 'DELETE', `${PATHS.PersistentVolumeClaim(NS)}/fill-src`)).status, 200);
      await eventually("beta's source gone", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/fill-src`)).status === 404);
      refused(await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim(NS), sourceClaim), 'reference.live-reader', /a claim of another environment \(or of none\) in namespace \S+ clones PersistentVolumeClaim fill-src and is not provisioned yet/);
      // Beta may: the controller's claim is beta's (its stamps verify as the claim's own).
      ok("beta's source again", await s.api(admin, 'POST', PATHS.PersistentVolumeClaim(NS), sourceClaim));
      assert.equal((await s.api(admin, 'DELETE', `${PATHS.PersistentVolumeClaim(NS)}/fill-src`)).status, 200);
      await eventually("beta's source gone again", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/fill-src`)).status === 404);
      // Once it is provisioned (its volume bound: by hand here, where no provisioner runs), alpha
      // makes a claim under the name; beta scales up (before: the controller made replica 1's
      // claim, a clone of alpha's).
      assert.equal((await s.api(s.admin, 'PATCH', `${PATHS.PersistentVolumeClaim(NS)}/d-beta-fill-0`, { spec: { volumeName: 'pv-beta-fill-0' } }, MERGE)).status, 200);
      let alphas = { status: 0, text: '' };
      await eventually("alpha's claim once replica 0's is provisioned", async () => (alphas = await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim(NS), sourceClaim)).status !== 403 || !/reference\.live-reader/.test(alphas.text));
      assert.equal(alphas.status, 201, alphas.text);
      assert.equal((await s.api(admin, 'PATCH', `${STATEFULSETS}/beta-fill/scale`, { spec: { replicas: 2 } }, MERGE)).status, 200);
      let refusal = '';
      await eventually("the statefulset controller's claim of replica 1 refused", async () => {
        const events = await s.api(s.admin, 'GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3Dbeta-fill`);
        refusal = ((events.body.items ?? []) as Array<{ reason: string; message: string }>).find((e) => e.reason === 'FailedCreate' && /d-beta-fill-1/.test(e.message))?.message ?? '';
        return refusal !== '';
      });
      assert.match(refusal, /claim\.cross-environment\] spec\.dataSource(Ref)?: this claim clones claim fill-src, which belongs to another environment; environment "beta" may not/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/d-beta-fill-1`)).status, 404);
      // A pending pod's ephemeral volume copies its source when the pod is scheduled: while the
      // pod lives the name is one it reads, and alpha may not take it once beta's claim is gone
      // (before: 201, and the copy would have been alpha's).
      ok("beta's second source claim", await s.api(admin, 'POST', PATHS.PersistentVolumeClaim(NS), { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'swap-src' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }));
      const swapper = await s.api(admin, 'POST', PATHS.Pod(NS), sandboxPod('beta-swapper', { spec: { volumes: [{ name: 'ws', ephemeral: { volumeClaimTemplate: { spec: filledFrom('swap-src') } } }] } }));
      assert.equal(swapper.status, 201, swapper.text);
      assert.equal((await s.api(admin, 'DELETE', `${PATHS.PersistentVolumeClaim(NS)}/swap-src`)).status, 200);
      await eventually("beta's second source gone", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/swap-src`)).status === 404);
      refused(await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim(NS), { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'swap-src' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }), 'reference.live-reader');
    });

    test("a claim not yet provisioned reads the claim it clones: with the tenant role, alpha may not take the name beta's source leaves while beta's copy is pending; beta may make it again", async () => {
      const s = suite();
      const source = (name: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
      ok("beta's source", await s.api(tenant, 'POST', PATHS.PersistentVolumeClaim(NS), source('copy-src')));
      const copy = { ...source('beta-copy'), spec: { ...source('beta-copy').spec, dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'copy-src' } } };
      ok("beta's copy", await s.api(tenant, 'POST', PATHS.PersistentVolumeClaim(NS), copy));
      // No provisioner runs here: the copy stays pending, as it does under a WaitForFirstConsumer
      // class until a pod that mounts it is scheduled, which beta may hold back.
      assert.equal((await s.api(tenant, 'DELETE', `${PATHS.PersistentVolumeClaim(NS)}/copy-src`)).status, 200);
      await eventually("beta's source gone", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/copy-src`)).status === 404);
      // Before: 201, and the provisioner would have copied alpha's claim into beta's.
      refused(await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim(NS), source('copy-src')), 'reference.live-reader', /clones PersistentVolumeClaim copy-src and is not provisioned yet, so its provisioner would copy this one: choose a name of this run's own, or create it once that claim is provisioned or deleted/);
      ok("beta's source again", await s.api(tenant, 'POST', PATHS.PersistentVolumeClaim(NS), source('copy-src')));
    });

    test("the PV controller may not bind beta's pending claim to a volume copied from a claim alpha's StatefulSet made under its source's name since, nor once alpha's is gone and beta's made again; a claim of beta's own source it binds", async () => {
      const s = suite();
      const claim = (name: string, source?: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(source ? { dataSource: { kind: 'PersistentVolumeClaim', name: source } } : {}) } });
      // A volume made for the claim, as a provisioner makes one (none runs here): the PV controller binds the claim to it.
      const volumeFor = (name: string) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `pv-${name}` }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: `/tmp/${name}` }, claimRef: { namespace: NS, name } } });
      const volumeName = async (name: string) => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/${name}`)).body.spec?.volumeName ?? '';
      const refusals = () => s.cp.audit().filter((e) => e.verb === 'update' && e.objectRef?.name === 'bind-copy' && e.stage === 'ResponseComplete' && e.responseStatus?.code === 403);
      // Beta's pending copy of its own claim, under the name alpha's StatefulSet will give its first replica's claim.
      ok("beta's source", await s.api(tenant, 'POST', PATHS.PersistentVolumeClaim(NS), claim('d-alpha-bind-0')));
      ok("beta's copy", await s.api(tenant, 'POST', PATHS.PersistentVolumeClaim(NS), claim('bind-copy', 'd-alpha-bind-0')));
      assert.equal((await s.api(tenant, 'DELETE', `${PATHS.PersistentVolumeClaim(NS)}/d-alpha-bind-0`)).status, 200);
      await eventually("beta's source gone", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/d-alpha-bind-0`)).status === 404);
      const sts = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'alpha-bind' }, spec: { replicas: 1, serviceName: 'alpha-bind', selector: { matchLabels: { app: 'alpha-bind' } }, template: { ...template('alpha-bind'), spec: { ...template('alpha-bind').spec, restartPolicy: 'Always' } }, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: claim('d').spec }] } };
      ok("alpha's StatefulSet", await s.api(alpha, 'POST', `/apis/apps/v1/namespaces/${NS}/statefulsets`, sts));
      // The statefulset controller makes alpha's claim under the name (a system controller: no live-reader judgement reaches it).
      await eventually("alpha's replica claim", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/d-alpha-bind-0`)).body.metadata?.labels?.['deed.dev/environment'] === 'alpha');
      ok('a volume for the copy', await s.api(s.admin, 'POST', '/api/v1/persistentvolumes', volumeFor('bind-copy')));
      // Before: the claim was bound (the PV controller's writes were not sent to Deed). Whether alpha's claim was
      // made in the copy's second (judged: alpha's) or after it, the binding is refused.
      await eventually("the PV controller's binding refused", async () => refusals().length > 0 || (await volumeName('bind-copy')) !== '');
      assert.equal(await volumeName('bind-copy'), '', 'not bound');
      assert.match(refusals()[0]?.responseStatus?.message ?? '', /\[claim\.at-binding\] spec\.dataSource(Ref)?: claim d-alpha-bind-0, which this claim is filled from, was made (after the claim|in the same second as the claim)/);
      // Alpha's claim goes; beta makes its own under the name again. The copy was of alpha's: still refused when the PV controller tries again.
      assert.equal((await s.api(alpha, 'DELETE', `/apis/apps/v1/namespaces/${NS}/statefulsets/alpha-bind`)).status, 200);
      assert.equal((await s.api(alpha, 'DELETE', `${PATHS.PersistentVolumeClaim(NS)}/d-alpha-bind-0`)).status, 200);
      await eventually("alpha's claim gone", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/d-alpha-bind-0`)).status === 404, 60_000);
      ok("beta's source made again", await s.api(tenant, 'POST', PATHS.PersistentVolumeClaim(NS), claim('d-alpha-bind-0')));
      // A retry already on its way while no claim stood under the name is refused as "no longer exists"; the one after
      // beta's is made again is judged against beta's, made after the copy.
      const before = refusals().length;
      const madeAfter = /claim d-alpha-bind-0, which this claim is filled from, was made after the claim/;
      const triedOnBetas = () => refusals().slice(before).some((e) => madeAfter.test(e.responseStatus?.message ?? ''));
      await eventually("the PV controller tried again, with beta's made again", async () => triedOnBetas() || (await volumeName('bind-copy')) !== '', 60_000);
      assert.equal(await volumeName('bind-copy'), '', 'still not bound');
      assert.ok(triedOnBetas(), refusals().slice(before).map((e) => e.responseStatus?.message).join(' | '));
      // Beta binding its copy itself, by merge patch or server-side apply with the tenant role: judged the same.
      refused(await s.api(tenant, 'PATCH', `${PATHS.PersistentVolumeClaim(NS)}/bind-copy`, { spec: { volumeName: 'pv-bind-copy' } }, MERGE), 'claim.at-binding', /was made after the claim/);
      refused(await s.api(tenant, 'PATCH', `${PATHS.PersistentVolumeClaim(NS)}/bind-copy?fieldManager=beta&force=true`, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'bind-copy' }, spec: { volumeName: 'pv-bind-copy' } }, 'application/apply-patch+yaml'), 'claim.at-binding');
      assert.equal(await volumeName('bind-copy'), '', 'still not bound');
      // Beta's own, untouched source: bound.
      ok("beta's second source", await s.api(tenant, 'POST', PATHS.PersistentVolumeClaim(NS), claim('bind-ok-src')));
      ok("beta's second copy", await s.api(tenant, 'POST', PATHS.PersistentVolumeClaim(NS), claim('bind-ok', 'bind-ok-src')));
      ok('a volume for it', await s.api(s.admin, 'POST', '/api/v1/persistentvolumes', volumeFor('bind-ok')));
      await eventually('bound', async () => (await volumeName('bind-ok')) === 'pv-bind-ok');
    });

    test("an ephemeral volume's claim the controller makes late, and a restore from a snapshot of a claim whose name alpha took before it was taken, are not bound (helper-70's ways past the first binding rule)", async () => {
      const s = suite();
      const claim = (name: string, extra: Any = {}) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...extra } });
      const volumeFor = (name: string) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `pv-${name}` }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: `/tmp/${name}` }, claimRef: { namespace: NS, name } } });
      const get = async (name: string) => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/${name}`)).body;
      const refusals = (name: string) => s.cp.audit().filter((e) => e.verb === 'update' && e.objectRef?.name === name && e.stage === 'ResponseComplete' && e.responseStatus?.code === 403);
      const statefulSet = (name: string) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name }, spec: { replicas: 1, serviceName: name, selector: { matchLabels: { app: name } }, template: { ...template(name), spec: { ...template(name).spec, restartPolicy: 'Always' } }, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: claim('d').spec }] } });
      const boundOrRefused = async (name: string) => {
        ok(`a volume for ${name}`, await s.api(s.admin, 'POST', '/api/v1/persistentvolumes', volumeFor(name)));
        await eventually(`${name} bound or refused`, async () => refusals(name).length > 0 || ((await get(name)).spec?.volumeName ?? '') !== '', 60_000);
        assert.equal((await get(name)).spec?.volumeName ?? '', '', `${name} not bound`);
        return refusals(name)[0]?.responseStatus?.message ?? '';
      };
      // An ephemeral claim: beta holds the name `<pod>-<volume>` with a claim of its own, so the controller makes the
      // pod's claim only once beta deletes it, after alpha's StatefulSet made its claim under the source's name.
      ok("beta's source", await s.api(admin, 'POST', PATHS.PersistentVolumeClaim(NS), claim('d-alpha-eph-0')));
      ok("beta's claim under the ephemeral claim's name", await s.api(admin, 'POST', PATHS.PersistentVolumeClaim(NS), claim('late-ws')));
      ok("beta's pod", await s.api(admin, 'POST', PATHS.Pod(NS), sandboxPod('late', { spec: { volumes: [{ name: 'ws', ephemeral: { volumeClaimTemplate: { spec: { ...claim('x').spec, dataSource: { kind: 'PersistentVolumeClaim', name: 'd-alpha-eph-0' } } } } }] } })));
      assert.equal((await s.api(admin, 'DELETE', `${PATHS.PersistentVolumeClaim(NS)}/d-alpha-eph-0`)).status, 200);
      await eventually("beta's source gone", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/d-alpha-eph-0`)).status === 404);
      ok("alpha's StatefulSet", await s.api(alpha, 'POST', `/apis/apps/v1/namespaces/${NS}/statefulsets`, statefulSet('alpha-eph')));
      await eventually("alpha's claim", async () => (await get('d-alpha-eph-0')).metadata?.labels?.['deed.dev/environment'] === 'alpha');
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal((await s.api(admin, 'DELETE', `${PATHS.PersistentVolumeClaim(NS)}/late-ws`)).status, 200);
      await eventually('the controller makes the ephemeral claim', async () => ((await get('late-ws')).metadata?.ownerReferences ?? []).some((o: Any) => o.kind === 'Pod'), 90_000);
      // Before: bound (the claim was made after alpha's source, which the rule took for the one judged).
      assert.match(await boundOrRefused('late-ws'), /\[claim\.at-binding\] spec\.dataSource(Ref)?: claim d-alpha-eph-0, which this claim is filled from, was made (after|in the same second as) pod late/);
      // A restore: beta's snapshot of its own claim, not taken yet (its claim is not bound); beta deletes the claim,
      // and alpha makes one under its name (a snapshot is no reader of a name): the snapshot would be taken of alpha's.
      ok('CRD volumesnapshots', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshots', kind: 'VolumeSnapshot', approval: 'https://github.com/kubernetes-csi/external-snapshotter/pull/814' })));
      const SNAPSHOTS = `/apis/snapshot.storage.k8s.io/v1/namespaces/${NS}/volumesnapshots`;
      await eventually('snapshots are served', async () => (await s.api(s.admin, 'GET', SNAPSHOTS)).status === 200);
      ok("beta's claim", await s.api(admin, 'POST', PATHS.PersistentVolumeClaim(NS), claim('snap-src')));
      ok("beta's snapshot", await s.api(admin, 'POST', SNAPSHOTS, { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'beta-snap' }, spec: { source: { persistentVolumeClaimName: 'snap-src' } } }));
      await new Promise((r) => setTimeout(r, 1100));
      ok("beta's restore", await s.api(admin, 'POST', PATHS.PersistentVolumeClaim(NS), claim('beta-restore', { dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'beta-snap' } })));
      assert.equal((await s.api(admin, 'DELETE', `${PATHS.PersistentVolumeClaim(NS)}/snap-src`)).status, 200);
      await eventually("beta's claim gone", async () => (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim(NS)}/snap-src`)).status === 404);
      ok("alpha's claim under its name", await s.api(alpha, 'POST', PATHS.PersistentVolumeClaim(NS), claim('snap-src')));
      // Before: bound (the snapshot was made before the restore).
      assert.match(await boundOrRefused('beta-restore'), /\[claim\.at-binding\] spec\.dataSource(Ref)?: snapshot beta-snap, which this claim is filled from, copies whatever claim stands under its source's name when it is taken.*snapshot beta-snap was taken of claim snap-src, which has since been deleted and made again/);
    });

    test("beta may not scale alpha's custom resource through /scale; alpha changes its replicas by an UPDATE, break-glass may scale", async () => {
      const s = suite();
      for (const who of [tenant, admin]) refusedOrForbidden(await s.api(who, 'PATCH', `${POOLS(NS)}/alpha-pool/scale`, { spec: { replicas: 0 } }, MERGE), 'guard.custom-scale');
      refused(await s.api(admin, 'PATCH', `${POOLS(NS)}/alpha-pool/scale`, { spec: { replicas: 0 } }, MERGE), 'guard.custom-scale', /change its replicas with an UPDATE of the object itself/);
      assert.equal((await s.api(s.admin, 'GET', `${POOLS(NS)}/alpha-pool`)).body.spec.replicas, 3);
      refused(await s.api(admin, 'PATCH', `${POOLS(NS)}/alpha-pool`, { spec: { replicas: 0 } }, MERGE), 'guard.cross-environment');
      const own = await s.api(alpha, 'PATCH', `${POOLS(NS)}/alpha-pool`, { spec: { replicas: 1 } }, MERGE);
      assert.equal(own.status, 200, own.text);
      const glass = await s.api(s.admin, 'PATCH', `${POOLS(NS)}/alpha-pool/scale`, { spec: { replicas: 2 } }, MERGE);
      assert.equal(glass.status, 200, glass.text);
    });
  });

  // Gateway API routes and Gateways, in a namespace alpha and beta share. The tenant role is
  // Kubernetes' edit role, which grants no Gateway API kinds: each identity here holds a
  // namespace-admin Role (every verb on every resource of the namespace) instead.
  describe("a Gateway API route or Gateway names only what its writer environment may use", () => {
    let beta: Identity; // sandbox-b:gw-admin: acts for beta
    let alpha: Identity; // sandbox-a:runner: alpha's runner

    before(async () => {
      const s = suite();
      await optedInNamespace(s, GW_NS);
      // The platform's infrastructure namespace, outside the review scope (not opted in).
      ok('infra namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: GW_INFRA } }));
      for (const [plural, kind] of [['httproutes', 'HTTPRoute'], ['gateways', 'Gateway'], ['listenersets', 'ListenerSet']] as const) ok(`CRD ${plural}`, await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', gatewayCrd(plural, kind)));
      beta = await s.newIdentity('sandbox-b', 'gw-admin');
      alpha = s.runnerA.identity;
      await namespaceAdmins(s, GW_NS, 'gw-admins', [['sandbox-a', 'runner'], ['sandbox-b', 'gw-admin']]);
      // And Services in alpha's own namespace, for a route that names one across namespaces.
      ok('service writer role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/sandbox-a/roles', { metadata: { name: 'gw-services' }, rules: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }] }));
      ok('service writers', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/sandbox-a/rolebindings', { metadata: { name: 'gw-services' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'gw-services' }, subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }] }));
      await eventually('the Gateway API kinds are served', async () => (await s.api(s.admin, 'GET', ROUTES(GW_NS))).status === 200 && (await s.api(s.admin, 'GET', GATEWAYS(GW_NS))).status === 200 && (await s.api(s.admin, 'GET', LISTENER_SETS(GW_NS))).status === 200);
      // The namespace's shared Gateway, the platform's (unstamped): every route here attaches to it.
      ok('shared Gateway', await s.api(s.admin, 'POST', GATEWAYS(GW_NS), { ...gateway('shared-gw'), spec: { gatewayClassName: 'shared', listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] } }));
      for (const who of [alpha, beta]) await eventually(`RBAC lets ${who.name} create routes in ${GW_NS}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${ROUTES(GW_NS)}?dryRun=All`, httpRoute('rbac-probe'))).text));
      await eventually('RBAC lets alpha create Services in sandbox-a', async () => !/cannot create resource/.test((await s.api(alpha, 'POST', '/api/v1/namespaces/sandbox-a/services?dryRun=All', service('rbac-probe'))).text));
      await createStamped(s, alpha, 'alpha', [
        ['service', `/api/v1/namespaces/${GW_NS}/services`, service('alpha-svc', { app: 'alpha-web' })],
        ['service in its own namespace', '/api/v1/namespaces/sandbox-a/services', service('alpha-api', { app: 'alpha-api' })],
        ['TLS Secret', PATHS.Secret(GW_NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-tls' }, type: 'Opaque', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }],
      ], {});
      await createStamped(s, beta, 'beta', [
        ['service', `/api/v1/namespaces/${GW_NS}/services`, service('beta-svc', { app: 'beta-web' })],
        ['TLS Secret', PATHS.Secret(GW_NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'beta-tls' }, type: 'Opaque', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }],
      ], {});
    });

    test("beta's HTTPRoute to alpha's Service is refused, defaulted or explicit, as a backend or a mirror; alpha's own route and beta's to its own Service are stored", async () => {
      const s = suite();
      refused(await s.api(beta, 'POST', ROUTES(GW_NS), httpRoute('beta-route', { name: 'alpha-svc' })), 'reference.cross-environment', /spec\.rules\[0\]\.backendRefs\[0\]: names Service alpha-svc, which belongs to another environment \(the gateway controller sends the route's traffic to the backend/);
      refused(await s.api(beta, 'POST', ROUTES(GW_NS), httpRoute('beta-route', { group: '', kind: 'Service', name: 'alpha-svc' })), 'reference.cross-environment', /spec\.rules\[0\]\.backendRefs\[0\]: names Service alpha-svc/);
      const plain = httpRoute('beta-mirror', { name: 'beta-svc' });
      const mirror = { ...plain, spec: { ...plain.spec, rules: [{ ...plain.spec.rules[0], filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'alpha-svc', port: 80 } } }] }] } };
      refused(await s.api(beta, 'POST', ROUTES(GW_NS), mirror), 'reference.cross-environment', /spec\.rules\[0\]\.filters\[0\]\.requestMirror\.backendRef: names Service alpha-svc/);
      const authed = { ...plain, metadata: { name: 'beta-authed' }, spec: { ...plain.spec, rules: [{ ...plain.spec.rules[0], filters: [{ type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef: { name: 'alpha-svc', port: 80 } } }] }] } };
      refused(await s.api(beta, 'POST', ROUTES(GW_NS), authed), 'reference.cross-environment', /spec\.rules\[0\]\.filters\[0\]\.externalAuth\.backendRef: names Service alpha-svc/);
      const own = await s.api(alpha, 'POST', ROUTES(GW_NS), httpRoute('alpha-route', { name: 'alpha-svc' }));
      assert.equal(own.status, 201, own.text);
      const betas = await s.api(beta, 'POST', ROUTES(GW_NS), httpRoute('beta-own', { group: '', kind: 'Service', name: 'beta-svc' }));
      assert.equal(betas.status, 201, betas.text);
      // An UPDATE that points beta's stored route at alpha's Service.
      refused(await s.api(beta, 'PATCH', `${ROUTES(GW_NS)}/beta-own`, { spec: { rules: [{ backendRefs: [{ name: 'alpha-svc', port: 80 }] }] } }, MERGE), 'reference.cross-environment', /names Service alpha-svc/);
    });

    test("once alpha deletes a Service its HTTPRoute names, beta's Service under the name is refused (the gateway controller would send alpha's route's traffic to it); alpha's own is stored again", async () => {
      const s = suite();
      ok("alpha's Service", await s.api(alpha, 'POST', `/api/v1/namespaces/${GW_NS}/services`, service('alpha-next', { app: 'alpha-next' })));
      ok("alpha's route to it", await s.api(alpha, 'POST', ROUTES(GW_NS), httpRoute('alpha-next', { name: 'alpha-next' })));
      assert.equal((await s.api(alpha, 'DELETE', `/api/v1/namespaces/${GW_NS}/services/alpha-next`)).status, 200);
      refused(
        await s.api(beta, 'POST', `/api/v1/namespaces/${GW_NS}/services`, service('alpha-next', { app: 'beta-web' })),
        'reference.live-reader',
        /HTTPRoute shared-gateways\/alpha-next of another environment \(or of none\) names Service alpha-next \(spec\.rules\[0\]\.backendRefs\[0\]\), and once this one stands the gateway controller sends the route's traffic to the backend/,
      );
      const own = await s.api(alpha, 'POST', `/api/v1/namespaces/${GW_NS}/services`, service('alpha-next', { app: 'alpha-next' }));
      assert.equal(own.status, 201, own.text);
    });

    test("once alpha deletes the Gateway its HTTPRoute and ListenerSet name as parent, beta's Gateway under the name is refused (it would serve alpha's route, and alpha's listeners with alpha's certificate); alpha's own is stored again", async () => {
      const s = suite();
      ok("alpha's Gateway", await s.api(alpha, 'POST', GATEWAYS(GW_NS), gateway('alpha-edge', { name: 'alpha-tls' })));
      ok("alpha's route on it", await s.api(alpha, 'POST', ROUTES(GW_NS), { ...httpRoute('alpha-edge', { name: 'alpha-svc' }), spec: { ...httpRoute('alpha-edge', { name: 'alpha-svc' }).spec, parentRefs: [{ name: 'alpha-edge' }] } }));
      const listeners = { apiVersion: `${GATEWAY_GROUP}/v1`, kind: 'ListenerSet', metadata: { name: 'alpha-edge-extra' }, spec: { parentRef: { name: 'alpha-edge' }, listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: 'extra.alpha.example.com', tls: { mode: 'Terminate', certificateRefs: [{ name: 'alpha-tls' }] } }] } };
      ok("alpha's ListenerSet on it", await s.api(alpha, 'POST', LISTENER_SETS(GW_NS), listeners));
      assert.equal((await s.api(alpha, 'DELETE', `${GATEWAYS(GW_NS)}/alpha-edge`)).status, 200);
      refused(
        await s.api(beta, 'POST', GATEWAYS(GW_NS), gateway('alpha-edge', { name: 'beta-tls' })),
        'reference.live-reader',
        /HTTPRoute shared-gateways\/alpha-edge of another environment \(or of none\) names Gateway alpha-edge \(spec\.parentRefs\[0\]\), and once this one stands the gateway controller serves the route on the parent Gateway's listeners/,
      );
      assert.equal((await s.api(alpha, 'DELETE', `${ROUTES(GW_NS)}/alpha-edge`)).status, 200);
      refused(
        await s.api(beta, 'POST', GATEWAYS(GW_NS), gateway('alpha-edge', { name: 'beta-tls' })),
        'reference.live-reader',
        /ListenerSet shared-gateways\/alpha-edge-extra of another environment \(or of none\) names Gateway alpha-edge \(spec\.parentRef\), and once this one stands the gateway controller adds the set's listeners to the parent Gateway/,
      );
      const own = await s.api(alpha, 'POST', GATEWAYS(GW_NS), gateway('alpha-edge', { name: 'alpha-tls' }));
      assert.equal(own.status, 201, own.text);
    });

    test("beta's route to alpha's Service in alpha's own namespace is judged there and refused; alpha's is stored", async () => {
      const s = suite();
      refused(await s.api(beta, 'POST', ROUTES(GW_NS), httpRoute('beta-across', { name: 'alpha-api', namespace: 'sandbox-a' })), 'reference.cross-environment', /names Service sandbox-a\/alpha-api, which belongs to another environment/);
      const own = await s.api(alpha, 'POST', ROUTES(GW_NS), httpRoute('alpha-across', { name: 'alpha-api', namespace: 'sandbox-a' }));
      assert.equal(own.status, 201, own.text);
    });

    test("beta's Gateway that would serve alpha's TLS certificate and key is refused; alpha's Gateway and beta's of its own Secret are stored", async () => {
      const s = suite();
      refused(await s.api(beta, 'POST', GATEWAYS(GW_NS), gateway('beta-gw', { name: 'alpha-tls' })), 'reference.cross-environment', /spec\.listeners\[0\]\.tls\.certificateRefs\[0\]: names Secret alpha-tls, which belongs to another environment/);
      refused(await s.api(beta, 'POST', GATEWAYS(GW_NS), gateway('beta-gw', { group: '', kind: 'Secret', name: 'alpha-tls' })), 'reference.cross-environment');
      const own = await s.api(alpha, 'POST', GATEWAYS(GW_NS), gateway('alpha-gw', { name: 'alpha-tls' }));
      assert.equal(own.status, 201, own.text);
      const betas = await s.api(beta, 'POST', GATEWAYS(GW_NS), gateway('beta-gw', { kind: 'Secret', name: 'beta-tls' }));
      assert.equal(betas.status, 201, betas.text);
    });

    test("beta's Gateway whose infrastructure.parametersRef names alpha's ConfigMap is refused (the gateway controller would build beta's proxy from alpha's overlays); alpha's is stored (reviewer-98 F2)", async () => {
      const s = suite();
      ok("alpha's parameters", await s.api(alpha, 'POST', `/api/v1/namespaces/${GW_NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'alpha-params' }, data: { deployment: 'spec: {}' } }));
      const withParameters = (name: string, tls: string) => ({ ...gateway(name, { name: tls }), spec: { ...gateway(name, { name: tls }).spec, infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: 'alpha-params' } } } });
      refused(await s.api(beta, 'POST', GATEWAYS(GW_NS), withParameters('beta-params-gw', 'beta-tls')), 'reference.cross-environment', /spec\.infrastructure\.parametersRef: names ConfigMap alpha-params, which belongs to another environment/);
      const own = await s.api(alpha, 'POST', GATEWAYS(GW_NS), withParameters('alpha-params-gw', 'alpha-tls'));
      assert.equal(own.status, 201, own.text);
    });

    test("beta's route may not attach to alpha's Gateway nor, in mesh mode, to alpha's Service; to the platform's Gateway, here or outside the scope, it may", async () => {
      const s = suite();
      // alpha's host, a more specific path: a listener's default allowedRoutes (Same namespace) would take it.
      const hijack = (name: string, ...parentRefs: Any[]) => ({ ...httpRoute(name, { name: 'beta-svc' }), spec: { ...httpRoute(name, { name: 'beta-svc' }).spec, parentRefs, hostnames: ['alpha-gw.example.com'] } });
      refused(await s.api(beta, 'POST', ROUTES(GW_NS), hijack('beta-hijack', { name: 'alpha-gw' })), 'reference.cross-environment', /spec\.parentRefs\[0\]: names Gateway alpha-gw, which belongs to another environment \(the gateway controller serves the route on the parent Gateway's listeners/);
      refused(await s.api(beta, 'POST', ROUTES(GW_NS), hijack('beta-hijack', { name: 'shared-gw' }, { group: GATEWAY_GROUP, kind: 'Gateway', name: 'alpha-gw', sectionName: 'https' })), 'reference.cross-environment', /spec\.parentRefs\[1\]: names Gateway alpha-gw/);
      refused(await s.api(beta, 'POST', ROUTES(GW_NS), hijack('beta-mesh', { group: '', kind: 'Service', name: 'alpha-svc', port: 80 })), 'reference.cross-environment', /spec\.parentRefs\[0\]: names Service alpha-svc, which belongs to another environment/);
      // An UPDATE that moves beta's stored route onto alpha's Gateway.
      refused(await s.api(beta, 'PATCH', `${ROUTES(GW_NS)}/beta-own`, { spec: { parentRefs: [{ name: 'alpha-gw' }] } }, MERGE), 'reference.cross-environment', /names Gateway alpha-gw/);
      for (const [name, parents] of [
        ['beta-shared', [{ name: 'shared-gw' }]],
        ['beta-own-gw', [{ name: 'beta-gw' }, { group: '', kind: 'Service', name: 'beta-svc' }]],
        ['beta-infra', [{ name: 'public', namespace: GW_INFRA }]],
      ] as const) {
        const stored = await s.api(beta, 'POST', ROUTES(GW_NS), { ...httpRoute(name, { name: 'beta-svc' }), spec: { ...httpRoute(name, { name: 'beta-svc' }).spec, parentRefs: parents } });
        assert.equal(stored.status, 201, `${name}: ${stored.text}`);
      }
      const own = await s.api(alpha, 'POST', ROUTES(GW_NS), { ...httpRoute('alpha-on-own', { name: 'alpha-svc' }), spec: { ...httpRoute('alpha-on-own', { name: 'alpha-svc' }).spec, parentRefs: [{ name: 'alpha-gw' }, { group: '', kind: 'Service', name: 'alpha-svc' }] } });
      assert.equal(own.status, 201, own.text);
    });

    test("beta's ListenerSet may not add listeners to alpha's Gateway nor serve alpha's certificate, nor may beta's route attach to alpha's ListenerSet; each one's own is stored", async () => {
      const s = suite();
      const listenerSet = (name: string, parent: string, secret: string) => ({
        apiVersion: `${GATEWAY_GROUP}/v1`,
        kind: 'ListenerSet',
        metadata: { name },
        spec: { parentRef: { name: parent }, listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: `${name}.example.com`, tls: { mode: 'Terminate', certificateRefs: [{ name: secret }] } }] },
      });
      refused(await s.api(beta, 'POST', LISTENER_SETS(GW_NS), listenerSet('beta-ls', 'alpha-gw', 'beta-tls')), 'reference.cross-environment', /spec\.parentRef: names Gateway alpha-gw, which belongs to another environment \(the gateway controller adds the set's listeners to the parent Gateway\)/);
      refused(await s.api(beta, 'POST', LISTENER_SETS(GW_NS), listenerSet('beta-ls', 'shared-gw', 'alpha-tls')), 'reference.cross-environment', /spec\.listeners\[0\]\.tls\.certificateRefs\[0\]: names Secret alpha-tls, which belongs to another environment/);
      for (const [who, name, parent, secret] of [[alpha, 'alpha-ls', 'alpha-gw', 'alpha-tls'], [beta, 'beta-ls', 'shared-gw', 'beta-tls']] as const) {
        const stored = await s.api(who, 'POST', LISTENER_SETS(GW_NS), listenerSet(name, parent, secret));
        assert.equal(stored.status, 201, `${name}: ${stored.text}`);
      }
      // A route's parent ListenerSet is read (get on listenersets, from the rendered ClusterRole) and judged as a Gateway is.
      const onSet = (name: string, set: string) => ({ ...httpRoute(name, { name: 'beta-svc' }), spec: { ...httpRoute(name, { name: 'beta-svc' }).spec, parentRefs: [{ group: GATEWAY_GROUP, kind: 'ListenerSet', name: set, sectionName: 'https' }] } });
      refused(await s.api(beta, 'POST', ROUTES(GW_NS), onSet('beta-on-alpha-ls', 'alpha-ls')), 'reference.cross-environment', /spec\.parentRefs\[0\]: names ListenerSet alpha-ls, which belongs to another environment/);
      const own = await s.api(beta, 'POST', ROUTES(GW_NS), onSet('beta-on-own-ls', 'beta-ls'));
      assert.equal(own.status, 201, own.text);
    });
  });
  // cert-manager in a namespace alpha and beta share. The tenant role is Kubernetes' edit
  // role as the install renders it, without cert-manager's aggregated rules: each identity
  // here holds a namespace-admin Role instead.
  describe("a cert-manager Certificate, CertificateRequest or issuer annotation names only its writer environment's Issuers and Secrets", () => {
    let beta: Identity; // sandbox-b:cm-admin: acts for beta
    let alpha: Identity; // sandbox-a:runner: alpha's runner
    let tenant: Identity; // plain:cm-tenant: acts for no environment

    before(async () => {
      const s = suite();
      await optedInNamespace(s, CM_NS);
      // A Helm chart's namespace, outside the review scope (not opted in).
      ok('infra namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CM_INFRA } }));
      for (const [plural, kind] of [['certificates', 'Certificate'], ['certificaterequests', 'CertificateRequest'], ['issuers', 'Issuer']] as const)
        ok(`CRD ${plural}`, await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', certManagerCrd(plural, kind)));
      beta = await s.newIdentity('sandbox-b', 'cm-admin');
      tenant = await s.newIdentity('plain', 'cm-tenant');
      alpha = s.runnerA.identity;
      for (const ns of [CM_NS, CM_INFRA]) await namespaceAdmins(s, ns, 'cm-admins', [['sandbox-a', 'runner'], ['sandbox-b', 'cm-admin'], ['plain', 'cm-tenant']]);
      await eventually('the cert-manager kinds are served', async () => (await s.api(s.admin, 'GET', CERTIFICATES(CM_NS))).status === 200 && (await s.api(s.admin, 'GET', CERTIFICATE_REQUESTS(CM_NS))).status === 200 && (await s.api(s.admin, 'GET', ISSUERS(CM_NS))).status === 200);
      for (const who of [alpha, beta, tenant]) await eventually(`RBAC lets ${who.name} create Issuers in ${CM_NS}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${ISSUERS(CM_NS)}?dryRun=All`, issuer('rbac-probe'))).text));
      await eventually(`RBAC lets ${tenant.name} create Certificates in ${CM_INFRA}`, async () => !/cannot create resource/.test((await s.api(tenant, 'POST', `${CERTIFICATES(CM_INFRA)}?dryRun=All`, certificate('rbac-probe', { name: 'x' }))).text));
      // The platform's CA Issuer of the namespace (unstamped), and each environment's own.
      ok('platform Issuer', await s.api(s.admin, 'POST', ISSUERS(CM_NS), issuer('platform-ca')));
      await createStamped(s, alpha, 'alpha', [
        // The CA key first: an Issuer names it, and one not there yet is refused in a shared namespace.
        ['CA key', PATHS.Secret(CM_NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-ca-key' }, type: 'Opaque', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }],
        ['CA Issuer', ISSUERS(CM_NS), issuer('alpha-ca')],
        ['TLS Secret', PATHS.Secret(CM_NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-tls' }, type: 'Opaque', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }],
      ], {});
      await createStamped(s, beta, 'beta', [
        // The CA key first: an Issuer names it, and one not there yet is refused in a shared namespace.
        ['CA key', PATHS.Secret(CM_NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'beta-ca-key' }, type: 'Opaque', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }],
        ['CA Issuer', ISSUERS(CM_NS), issuer('beta-ca')],
        ['TLS Secret', PATHS.Secret(CM_NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'beta-tls' }, type: 'Opaque', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }],
      ], {});
    });

    test("beta's Certificate for a hostname alpha declares (*.alpha.sandboxes.test) is refused (route.hostnames): an ACME CA would issue it to whoever answers the challenge there; alpha's passes", async () => {
      const s = suite();
      const forHost = (name: string, dnsNames: string[]) => ({ ...certificate(name, { name: 'platform-ca' }), spec: { ...certificate(name, { name: 'platform-ca' }).spec, dnsNames } });
      refused(await s.api(beta, 'POST', CERTIFICATES(CM_NS), forHost('beta-alpha-host', ['beta.example.net', 'run-2.alpha.sandboxes.test'])), 'route.hostnames', /spec\.dnsNames\[1\]: run-2\.alpha\.sandboxes\.test is environment alpha's hostname \(\*\.alpha\.sandboxes\.test\), and system:serviceaccount:sandbox-b:cm-admin does not act for it: cert-manager would have a certificate for it issued into this Certificate's Secret/);
      const own = await s.api(alpha, 'POST', CERTIFICATES(CM_NS), forHost('alpha-own-host', ['run-2.alpha.sandboxes.test']));
      assert.equal(own.status, 201, `alpha's Certificate for its own hostname: ${own.text}`);
    });

    test("beta's Certificate, CertificateRequest or Ingress annotation signed by alpha's Issuer is refused, and so is its Certificate written into alpha's TLS Secret", async () => {
      const s = suite();
      refused(await s.api(beta, 'POST', CERTIFICATES(CM_NS), certificate('beta-as-alpha', { name: 'alpha-ca' })), 'reference.cross-environment', /spec\.issuerRef: names Issuer alpha-ca, which belongs to another environment \(cert-manager has the issuer sign the Certificate's key/);
      refused(await s.api(beta, 'POST', CERTIFICATES(CM_NS), certificate('beta-as-alpha', { name: 'alpha-ca', kind: 'Issuer', group: CERT_GROUP })), 'reference.cross-environment', /spec\.issuerRef: names Issuer alpha-ca/);
      const csr = { apiVersion: `${CERT_GROUP}/v1`, kind: 'CertificateRequest', metadata: { name: 'beta-csr' }, spec: { request: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K', usages: ['server auth'], issuerRef: { name: 'alpha-ca' } } };
      refused(await s.api(beta, 'POST', CERTIFICATE_REQUESTS(CM_NS), csr), 'reference.cross-environment', /spec\.issuerRef: names Issuer alpha-ca, which belongs to another environment/);
      // What cert-manager's ingress-shim would make a Certificate of, for beta's Ingress.
      const annotated = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'beta-web', annotations: { 'cert-manager.io/issuer': 'alpha-ca' } }, spec: { tls: [{ hosts: ['beta-web.example.com'], secretName: 'beta-tls' }], rules: [{ host: 'beta-web.example.com' }] } };
      refused(await s.api(beta, 'POST', collectionPath('Ingress', CM_NS), annotated), 'reference.cross-environment', /metadata\.annotations\["cert-manager\.io\/issuer"\]: names Issuer alpha-ca, which belongs to another environment/);
      // cert-manager would overwrite alpha's certificate and key with beta's.
      refused(await s.api(beta, 'POST', CERTIFICATES(CM_NS), certificate('beta-over-alpha', { name: 'beta-ca' }, 'alpha-tls')), 'reference.cross-environment', /spec\.secretName: names Secret alpha-tls, which belongs to another environment \(cert-manager writes the issued certificate and private key into the Secret/);
      // An UPDATE that moves beta's stored Certificate onto alpha's Issuer.
      ok("beta's own Certificate", await s.api(beta, 'POST', CERTIFICATES(CM_NS), certificate('beta-moved', { name: 'beta-ca' })));
      refused(await s.api(beta, 'PATCH', `${CERTIFICATES(CM_NS)}/beta-moved`, { spec: { issuerRef: { name: 'alpha-ca' } } }, MERGE), 'reference.cross-environment', /names Issuer alpha-ca/);
      // Nor have cert-manager encrypt beta's keystore with alpha's password, which beta could then guess at offline.
      refused(await s.api(beta, 'PATCH', `${CERTIFICATES(CM_NS)}/beta-moved`, { spec: { keystores: { pkcs12: { create: true, passwordSecretRef: { name: 'alpha-tls', key: 'tls.key' } } } } }, MERGE), 'reference.cross-environment', /spec\.keystores\.pkcs12\.passwordSecretRef\.name: names Secret alpha-tls, which belongs to another environment/);
    });

    test("the ACME Order cert-manager (a listed controller) makes for beta's own CertificateRequest naming alpha's hostname is refused as beta's (the names stand in the CSR); for beta's own name it is made and stamped beta's, for alpha's request alpha's (reviewer-102 F2)", async () => {
      const s = suite();
      const ORDERS = `/apis/acme.cert-manager.io/v1/namespaces/${CM_NS}/orders`;
      ok('CRD orders', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: 'acme.cert-manager.io', version: 'v1', plural: 'orders', kind: 'Order' })));
      await eventually('orders are served', async () => (await s.api(s.admin, 'GET', ORDERS)).status === 200);
      const operator = await s.newIdentity('platform', 'cert-manager');
      await namespaceAdmins(s, CM_NS, 'cm-operator-orders', [['platform', 'cert-manager']]);
      await eventually('RBAC lets cert-manager create Orders', async () => !/cannot create resource/.test((await s.api(operator, 'POST', `${ORDERS}?dryRun=All`, { apiVersion: 'acme.cert-manager.io/v1', kind: 'Order', metadata: { name: 'probe' }, spec: {} })).text));
      const csr = (name: string, issuer: string) => ({ apiVersion: `${CERT_GROUP}/v1`, kind: 'CertificateRequest', metadata: { name }, spec: { request: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K', usages: ['server auth'], issuerRef: { name: issuer } } });
      const made = async (who: Identity, name: string, issuer: string) => {
        const created = await s.api(who, 'POST', CERTIFICATE_REQUESTS(CM_NS), csr(name, issuer));
        assert.equal(created.status, 201, created.text);
        return created.body as KubeObject;
      };
      // As cert-manager's ACME issuer writes it: the request is its controller, its names are the CSR's.
      const order = (request: KubeObject, dnsNames: string[]) => ({ apiVersion: 'acme.cert-manager.io/v1', kind: 'Order', metadata: { name: `${request.metadata.name}-1`, ownerReferences: [{ apiVersion: `${CERT_GROUP}/v1`, kind: 'CertificateRequest', name: request.metadata.name, uid: request.metadata.uid, controller: true, blockOwnerDeletion: true }] }, spec: { request: 'LS0t', issuerRef: { name: 'beta-ca' }, dnsNames } });
      const betaRequest = await made(beta, 'beta-acme', 'beta-ca');
      refused(await s.api(operator, 'POST', ORDERS, order(betaRequest, ['beta.example.net', 'run-3.alpha.sandboxes.test'])), 'route.hostnames', /spec\.dnsNames\[1\]: run-3\.alpha\.sandboxes\.test is environment alpha's hostname \(\*\.alpha\.sandboxes\.test\), and system:serviceaccount:platform:cert-manager does not act for it: cert-manager would have the ACME CA issue a certificate for it to the Order's account/);
      const own = await s.api(operator, 'POST', ORDERS, order(betaRequest, ['beta.example.net']));
      assert.equal(own.status, 201, own.text);
      assert.equal((own.body as KubeObject).metadata.labels?.['deed.dev/environment'], 'beta', "stamped as its request's environment's");
      const alphaRequest = await made(alpha, 'alpha-acme', 'alpha-ca');
      const alphas = await s.api(operator, 'POST', ORDERS, order(alphaRequest, ['run-3.alpha.sandboxes.test']));
      assert.equal(alphas.status, 201, alphas.text);
      assert.equal((alphas.body as KubeObject).metadata.labels?.['deed.dev/environment'], 'alpha');
    });

    test("beta's Certificate may not have cert-manager write over the unstamped Secret cert-manager made for alpha", async () => {
      const s = suite();
      // What cert-manager made for alpha's Certificate, as a platform principal (the admin stands in): unstamped.
      ok('operator-made Secret', await s.api(s.admin, 'POST', PATHS.Secret(CM_NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-issued-tls' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }));
      refused(await s.api(beta, 'POST', CERTIFICATES(CM_NS), certificate('beta-over', { name: 'beta-ca' }, 'alpha-issued-tls')), 'reference.cross-environment', /spec\.secretName: names Secret alpha-issued-tls, which carries no stamps: the platform's, or what an operator made for an environment/);
      refused(await s.api(tenant, 'POST', CERTIFICATES(CM_NS), certificate('tenant-over', { name: 'platform-ca' }, 'alpha-issued-tls')), 'reference.cross-environment', /which carries no stamps/);
    });

    test("what cert-manager (a listed controller, with owner references) makes for alpha's Certificate is alpha's: beta's pods may not mount it, beta's Certificate may not write into it, alpha's may again", async () => {
      const s = suite();
      const operator = await s.newIdentity('platform', 'cert-manager');
      await namespaceAdmins(s, CM_NS, 'cm-operator', [['platform', 'cert-manager']]);
      const owner = await s.api(alpha, 'POST', CERTIFICATES(CM_NS), certificate('alpha-owned', { name: 'alpha-ca' }, 'alpha-owned-tls'));
      assert.equal(owner.status, 201, owner.text);
      // As cert-manager writes it with --enable-certificate-owner-ref: the Certificate is its controller.
      const issuedSecret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'alpha-owned-tls', annotations: { 'cert-manager.io/certificate-name': 'alpha-owned', 'cert-manager.io/issuer-name': 'alpha-ca' }, ownerReferences: [{ apiVersion: `${CERT_GROUP}/v1`, kind: 'Certificate', name: 'alpha-owned', uid: owner.body.metadata.uid, controller: true, blockOwnerDeletion: true }] },
        type: 'kubernetes.io/tls',
        stringData: { 'tls.crt': 'x', 'tls.key': 'y' },
      };
      let made = await s.api(operator, 'POST', PATHS.Secret(CM_NS), issuedSecret);
      await eventually('RBAC lets cert-manager create Secrets', async () => made.status === 201 || !/cannot create resource/.test((made = await s.api(operator, 'POST', PATHS.Secret(CM_NS), issuedSecret)).text));
      assert.equal(made.status, 201, made.text);
      assert.equal(made.body.metadata.labels?.['deed.dev/environment'], 'alpha');
      refused(await s.api(beta, 'POST', PATHS.Pod(CM_NS), sandboxPod('beta-reads-cert', { spec: { volumes: [{ name: 'tls', secret: { secretName: 'alpha-owned-tls' } }] } })), 'secret-ref.cross-environment', /alpha-owned-tls/);
      refused(await s.api(beta, 'POST', CERTIFICATES(CM_NS), certificate('beta-takes', { name: 'beta-ca' }, 'alpha-owned-tls')), 'reference.cross-environment', /spec\.secretName: names Secret alpha-owned-tls, which belongs to another environment/);
      // Alpha may name it again (a Certificate re-created under another name over its own Secret).
      const again = await s.api(alpha, 'POST', CERTIFICATES(CM_NS), certificate('alpha-owned-2', { name: 'alpha-ca' }, 'alpha-owned-tls'));
      assert.equal(again.status, 201, again.text);
      // An annotation naming alpha's Certificate is no evidence: what cert-manager writes without an owner reference is of no environment.
      const unowned = await s.api(operator, 'POST', PATHS.Secret(CM_NS), { ...issuedSecret, metadata: { name: 'planted-tls', annotations: issuedSecret.metadata.annotations } });
      assert.equal(unowned.status, 201, unowned.text);
      assert.equal(unowned.body.metadata.labels?.['deed.dev/environment'], undefined);
    });

    test("cert-manager's ingress-shim for alpha's Ingress: what cert-manager makes again for the Certificate it made for the Ingress (with owner references) is alpha's, past the TLS name the Ingress holds; beta's Secret under it is refused", async () => {
      const s = suite();
      const operator = await s.newIdentity('platform', 'cert-manager');
      await namespaceAdmins(s, CM_NS, 'cm-operator', [['platform', 'cert-manager']]);
      const tlsSecret = (name: string, meta: Any = {}) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, ...meta }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } });
      ok("alpha's TLS Secret", await s.api(alpha, 'POST', PATHS.Secret(CM_NS), tlsSecret('alpha-shim-tls')));
      const shop = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'alpha-shim', annotations: { 'cert-manager.io/issuer': 'alpha-ca' } }, spec: { tls: [{ hosts: ['alpha-shim.example.com'], secretName: 'alpha-shim-tls' }], rules: [{ host: 'alpha-shim.example.com' }] } };
      const ingress = await s.api(alpha, 'POST', collectionPath('Ingress', CM_NS), shop);
      assert.equal(ingress.status, 201, ingress.text);
      // What the ingress-shim makes, as cert-manager: a Certificate named after the Ingress, the Ingress its controller.
      const ingressRef = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'alpha-shim', uid: ingress.body.metadata.uid, controller: true, blockOwnerDeletion: true };
      const shimmed = { ...certificate('alpha-shim', { name: 'alpha-ca' }, 'alpha-shim-tls'), metadata: { name: 'alpha-shim', ownerReferences: [ingressRef] } };
      let cert = await s.api(operator, 'POST', CERTIFICATES(CM_NS), shimmed);
      await eventually('RBAC lets cert-manager create Certificates', async () => cert.status === 201 || !/cannot create resource/.test((cert = await s.api(operator, 'POST', CERTIFICATES(CM_NS), shimmed)).text));
      assert.equal(cert.status, 201, cert.text);
      // `kubectl delete secret` is how cert-manager is asked to issue again.
      assert.equal((await s.api(alpha, 'DELETE', `${PATHS.Secret(CM_NS)}/alpha-shim-tls`)).status, 200);
      await eventually("beta's Secret under the name alpha's Ingress holds is refused", async () => (await s.api(beta, 'POST', `${PATHS.Secret(CM_NS)}?dryRun=All`, tlsSecret('alpha-shim-tls'))).status === 403);
      refused(await s.api(beta, 'POST', PATHS.Secret(CM_NS), tlsSecret('alpha-shim-tls')), 'reference.live-reader', /a live Ingress of another environment \(or of none\) in namespace .* names Secret alpha-shim-tls/);
      // Before: refused (reference.live-reader), the Secret being of no environment.
      const owned = { annotations: { 'cert-manager.io/certificate-name': 'alpha-shim' }, ownerReferences: [{ apiVersion: `${CERT_GROUP}/v1`, kind: 'Certificate', name: 'alpha-shim', uid: cert.body.metadata.uid, controller: true, blockOwnerDeletion: true }] };
      const made = await s.api(operator, 'POST', PATHS.Secret(CM_NS), tlsSecret('alpha-shim-tls', owned));
      assert.equal(made.status, 201, made.text);
      assert.equal(made.body.metadata.labels?.['deed.dev/environment'], 'alpha');
    });

    test("cert-manager's ingress-shim copies the Ingress's labels onto its Certificate, Deed's among them, and writes them back on each sync: the Secret cert-manager then issues for it is still the Ingress's environment's (reviewer-107)", async () => {
      const s = suite();
      const operator = await s.newIdentity('platform', 'cert-manager');
      await namespaceAdmins(s, CM_NS, 'cm-operator-107', [['platform', 'cert-manager']]);
      const tls = (name: string, meta: Any = {}) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, ...meta }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } });
      ok("alpha's TLS Secret", await s.api(alpha, 'POST', PATHS.Secret(CM_NS), tls('alpha-shim-107-tls')));
      const shop = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'alpha-shim-107', labels: { app: 'shop' }, annotations: { 'cert-manager.io/issuer': 'alpha-ca' } }, spec: { tls: [{ hosts: ['shop-107.example.com'], secretName: 'alpha-shim-107-tls' }], rules: [{ host: 'shop-107.example.com' }] } };
      const ingress = await s.api(alpha, 'POST', collectionPath('Ingress', CM_NS), shop);
      assert.equal(ingress.status, 201, ingress.text);
      const labels = ingress.body.metadata.labels;
      assert.equal(labels['deed.dev/environment'], 'alpha');
      // As the shim builds it (sync.go: Labels: the Ingress's), with the Ingress its controller.
      const ingressRef = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'alpha-shim-107', uid: ingress.body.metadata.uid, controller: true, blockOwnerDeletion: true };
      const shimmed = { ...certificate('alpha-shim-107-tls', { name: 'alpha-ca', kind: 'Issuer' }, 'alpha-shim-107-tls'), metadata: { name: 'alpha-shim-107-tls', labels, ownerReferences: [ingressRef] } };
      let cert = await s.api(operator, 'POST', CERTIFICATES(CM_NS), shimmed);
      await eventually('RBAC lets cert-manager create Certificates', async () => cert.status === 201 || !/cannot create resource/.test((cert = await s.api(operator, 'POST', CERTIFICATES(CM_NS), shimmed)).text));
      assert.equal(cert.status, 201, cert.text);
      // The shim's next sync writes the Ingress's labels back, and the spec it derives.
      const synced = await s.api(operator, 'PUT', `${CERTIFICATES(CM_NS)}/alpha-shim-107-tls`, { ...cert.body, metadata: { ...cert.body.metadata, labels }, spec: { ...cert.body.spec, dnsNames: ['shop-107.example.com', 'www-107.example.com'] } });
      assert.equal(synced.status, 200, synced.text);
      // The Secret cert-manager issues for it: its Certificate carries Deed's labels without an attestation, so whose it is is read from the Ingress.
      assert.equal((await s.api(alpha, 'DELETE', `${PATHS.Secret(CM_NS)}/alpha-shim-107-tls`)).status, 200);
      const owned = { annotations: { 'cert-manager.io/certificate-name': 'alpha-shim-107-tls' }, ownerReferences: [{ apiVersion: `${CERT_GROUP}/v1`, kind: 'Certificate', name: 'alpha-shim-107-tls', uid: cert.body.metadata.uid, controller: true, blockOwnerDeletion: true }] };
      const made = await s.api(operator, 'POST', PATHS.Secret(CM_NS), tls('alpha-shim-107-tls', owned));
      assert.equal(made.status, 201, `the Secret issued after the shim's label write: ${made.text}`);
      assert.equal(made.body.metadata.labels?.['deed.dev/environment'], 'alpha');
    });

    test("beta's ACME Issuer's solver pod template has its affinity terms scoped (cert-manager copies it into its solver pods as a platform principal); its account key must exist (cert-manager would make it of no environment)", async () => {
      const s = suite();
      // beta's own account key, stamped as beta's: cert-manager uses the key it finds.
      ok("beta's ACME account key", await s.api(beta, 'POST', PATHS.Secret(CM_NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'beta-acme-account' }, type: 'Opaque', stringData: { 'tls.key': 'placeholder' } }));
      const acme = (name: string, matchLabels: Any, account = 'beta-acme-account') => ({ apiVersion: `${CERT_GROUP}/v1`, kind: 'Issuer', metadata: { name }, spec: { acme: { server: 'https://acme.example/directory', privateKeySecretRef: { name: account }, disableAccountKeyGeneration: true, solvers: [{ http01: { ingress: { ingressClassName: 'shared', podTemplate: { spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels }, topologyKey: 'kubernetes.io/os' }] } } } } } } }] } } });
      refused(await s.api(beta, 'POST', ISSUERS(CM_NS), acme('beta-hold', { 'deed.dev/environment': 'alpha' })), 'selector.affinity-scope', /spec\.acme\.solvers\[0\]\.http01\.ingress\.podTemplate\.spec\.affinity\.podAntiAffinity/);
      const stored = await s.api(beta, 'POST', ISSUERS(CM_NS), acme('beta-acme', { app: 'solver' }));
      assert.equal(stored.status, 201, stored.text);
      assert.deepEqual(stored.body.spec.acme.solvers[0].http01.ingress.podTemplate.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector, { matchLabels: { app: 'solver', 'deed.dev/environment': 'beta' } });
      refused(await s.api(beta, 'POST', ISSUERS(CM_NS), acme('beta-keyless', { app: 'solver' }, 'beta-keyless-account')), 'reference.absent', /spec\.acme\.privateKeySecretRef\.name: names Secret beta-keyless-account, which does not exist; create it first.*creates one that does not exist with no owner reference, of no environment/);
      // Without disableAccountKeyGeneration cert-manager would re-create the key, ownerless, once it is deleted.
      const generating = acme('beta-generating', { app: 'solver' });
      delete (generating.spec.acme as Any).disableAccountKeyGeneration;
      refused(await s.api(beta, 'POST', ISSUERS(CM_NS), generating), 'guard.unowned-output', /with spec\.acme\.disableAccountKeyGeneration unset: cert-manager would create its ACME account key Secret .*set disableAccountKeyGeneration: true/);
      // A tenant of no environment makes objects of none: cert-manager's ordinary flow passes.
      const tenants = acme('tenant-acme', { app: 'solver' }, 'tenant-acme-account');
      delete (tenants.spec.acme as Any).disableAccountKeyGeneration;
      ok("the tenant's ACME Issuer", await s.api(tenant, 'POST', ISSUERS(CM_NS), tenants));
    });

    test("beta's Issuer may not sign with alpha's CA key; one whose CA key does not exist yet is refused in the shared namespace", async () => {
      const s = suite();
      refused(await s.api(beta, 'POST', ISSUERS(CM_NS), { ...issuer('beta-stolen'), spec: { ca: { secretName: 'alpha-ca-key' } } }), 'reference.cross-environment', /spec\.ca\.secretName: names Secret alpha-ca-key, which belongs to another environment \(cert-manager signs every Certificate that names the Issuer with the Secret's CA key\)/);
      refused(await s.api(beta, 'POST', ISSUERS(CM_NS), issuer('beta-early')), 'reference.absent', /spec\.ca\.secretName: names Secret beta-early-key, which does not exist/);
    });

    test("alpha's Certificate of its own Issuer, anyone's of a ClusterIssuer, a tenant's of the platform's Issuer, one whose Secret does not exist yet and a chart's outside the scope are stored", async () => {
      const s = suite();
      for (const [what, who, ns, body] of [
        ["alpha's of its own Issuer, into its own Secret", alpha, CM_NS, certificate('alpha-web', { name: 'alpha-ca' }, 'alpha-tls')],
        ["beta's of a ClusterIssuer", beta, CM_NS, certificate('beta-public', { name: 'letsencrypt', kind: 'ClusterIssuer', group: CERT_GROUP })],
        ["the tenant's (no environment) of the platform's Issuer", tenant, CM_NS, certificate('tenant-web', { name: 'platform-ca' })],
        ["beta's of its own Issuer, whose Secret cert-manager will make", beta, CM_NS, certificate('beta-web', { name: 'beta-ca', kind: 'Issuer' }, 'beta-web-tls')],
        // A Helm chart's Certificate created before its Issuer, where Deed reviews nothing.
        ["a chart's outside the review scope", tenant, CM_INFRA, certificate('chart-webhook', { name: 'chart-selfsigned' })],
      ] as const) {
        const stored = await s.api(who, 'POST', CERTIFICATES(ns), body);
        assert.equal(stored.status, 201, `${what}: ${stored.text}`);
      }
      const ownCsr = await s.api(alpha, 'POST', CERTIFICATE_REQUESTS(CM_NS), { apiVersion: `${CERT_GROUP}/v1`, kind: 'CertificateRequest', metadata: { name: 'alpha-csr' }, spec: { request: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K', issuerRef: { name: 'alpha-ca' } } });
      assert.equal(ownCsr.status, 201, ownCsr.text);
      const ownIngress = await s.api(beta, 'POST', collectionPath('Ingress', CM_NS), { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'beta-shimmed', annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' } }, spec: { rules: [{ host: 'beta-shimmed.example.com' }] } });
      assert.equal(ownIngress.status, 201, ownIngress.text);
    });
  });
  // The tenant role grants no External Secrets kinds: each identity holds a namespace-admin Role here.
  describe("an ExternalSecret or a SecretStore uses only its writer environment's stores and credentials", () => {
    let beta: Identity; // sandbox-b:eso-admin: acts for beta
    let alpha: Identity; // sandbox-a:runner: alpha's runner

    before(async () => {
      const s = suite();
      await optedInNamespace(s, ESO_NS);
      for (const [plural, kind] of [['externalsecrets', 'ExternalSecret'], ['secretstores', 'SecretStore']] as const) ok(`CRD ${plural}`, await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', esoCrd(plural, kind)));
      ok('CRD pushsecrets', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: ESO_GROUP, version: 'v1alpha1', plural: 'pushsecrets', kind: 'PushSecret' })));
      ok('CRD ecrauthorizationtokens', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: GENERATORS_GROUP, version: 'v1alpha1', plural: 'ecrauthorizationtokens', kind: 'ECRAuthorizationToken' })));
      beta = await s.newIdentity('sandbox-b', 'eso-admin');
      alpha = s.runnerA.identity;
      await namespaceAdmins(s, ESO_NS, 'eso-admins', [['sandbox-a', 'runner'], ['sandbox-b', 'eso-admin']]);
      await eventually('the External Secrets kinds are served', async () => (await s.api(s.admin, 'GET', EXTERNAL_SECRETS(ESO_NS))).status === 200 && (await s.api(s.admin, 'GET', SECRET_STORES(ESO_NS))).status === 200);
      for (const who of [alpha, beta]) await eventually(`RBAC lets ${who.name} create SecretStores in ${ESO_NS}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${SECRET_STORES(ESO_NS)}?dryRun=All`, secretStore('rbac-probe', 'x'))).text));
      const token = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', stringData: { token: `${name}-value` } });
      await createStamped(s, alpha, 'alpha', [
        ['Vault token', PATHS.Secret(ESO_NS), token('alpha-vault-token')],
        ['SecretStore', SECRET_STORES(ESO_NS), secretStore('alpha-vault', 'alpha-vault-token')],
      ], {});
      await createStamped(s, beta, 'beta', [
        ['Vault token', PATHS.Secret(ESO_NS), token('beta-vault-token')],
        ['SecretStore', SECRET_STORES(ESO_NS), secretStore('beta-vault', 'beta-vault-token')],
      ], {});
    });

    test("beta's ExternalSecret may not fetch through alpha's SecretStore nor write into alpha's Secret, and beta's SecretStore may not use alpha's Vault token; each one's own is stored", async () => {
      const s = suite();
      // The store is read with get, from the rendered ClusterRole.
      refused(await s.api(beta, 'POST', EXTERNAL_SECRETS(ESO_NS), externalSecret('beta-db', 'alpha-vault')), 'reference.cross-environment', /spec\.secretStoreRef: names SecretStore alpha-vault, which belongs to another environment \(the External Secrets operator fetches with the store's credentials/);
      refused(await s.api(beta, 'POST', EXTERNAL_SECRETS(ESO_NS), externalSecret('beta-db', 'beta-vault', 'alpha-vault-token')), 'reference.cross-environment', /spec\.target\.name: names Secret alpha-vault-token, which belongs to another environment/);
      // Without target.name the operator writes into the Secret named as the ExternalSecret.
      const untargeted = externalSecret('alpha-vault-token', 'beta-vault');
      refused(await s.api(beta, 'POST', EXTERNAL_SECRETS(ESO_NS), { ...untargeted, spec: { ...untargeted.spec, target: { creationPolicy: 'Merge' } } }), 'reference.cross-environment', /spec\.target\.name: names Secret alpha-vault-token, which belongs to another environment/);
      // Nor read alpha's Secret into its own target through a template.
      const templated = externalSecret('beta-templated', 'beta-vault');
      refused(await s.api(beta, 'POST', EXTERNAL_SECRETS(ESO_NS), { ...templated, spec: { ...templated.spec, target: { name: 'beta-templated-fetched', template: { templateFrom: [{ secret: { name: 'alpha-vault-token', items: [{ key: 'token' }] } }] } } } }), 'reference.cross-environment', /spec\.target\.template\.templateFrom\[0\]\.secret\.name: names Secret alpha-vault-token/);
      refused(await s.api(beta, 'POST', SECRET_STORES(ESO_NS), secretStore('beta-borrowed', 'alpha-vault-token')), 'reference.cross-environment', /spec\.provider\.vault\.auth\.tokenSecretRef\.name: names Secret alpha-vault-token, which belongs to another environment/);
      for (const [who, name, store] of [[beta, 'beta-db', 'beta-vault'], [alpha, 'alpha-db', 'alpha-vault']] as const) {
        const stored = await s.api(who, 'POST', EXTERNAL_SECRETS(ESO_NS), externalSecret(name, store));
        assert.equal(stored.status, 201, `${name}: ${stored.text}`);
      }
    });

    test("beta's ExternalSecret may not run alpha's generator, nor beta's generator authenticate with alpha's credentials; each one's own is stored", async () => {
      const s = suite();
      await eventually('the generator kind is served', async () => (await s.api(s.admin, 'GET', ECR_TOKENS(ESO_NS))).status === 200);
      // The generator is read with get, from the rendered ClusterRole.
      ok("alpha's generator", await s.api(alpha, 'POST', ECR_TOKENS(ESO_NS), ecrToken('alpha-ecr', 'alpha-vault-token')));
      refused(await s.api(beta, 'POST', ECR_TOKENS(ESO_NS), ecrToken('beta-borrowed-ecr', 'alpha-vault-token')), 'reference.cross-environment', /spec\.auth\.secretRef\.accessKeyIDSecretRef\.name: names Secret alpha-vault-token, which belongs to another environment \(the External Secrets operator generates with the Secret's credentials/);
      ok("beta's generator", await s.api(beta, 'POST', ECR_TOKENS(ESO_NS), ecrToken('beta-ecr', 'beta-vault-token')));
      const generated = (name: string, generator: string) => ({ apiVersion: `${ESO_GROUP}/v1`, kind: 'ExternalSecret', metadata: { name }, spec: { refreshInterval: '1h', target: { name: `${name}-token` }, dataFrom: [{ sourceRef: { generatorRef: { apiVersion: `${GENERATORS_GROUP}/v1alpha1`, kind: 'ECRAuthorizationToken', name: generator } } }] } });
      refused(await s.api(beta, 'POST', EXTERNAL_SECRETS(ESO_NS), generated('beta-registry', 'alpha-ecr')), 'reference.cross-environment', /spec\.dataFrom\[0\]\.sourceRef\.generatorRef: names ECRAuthorizationToken alpha-ecr, which belongs to another environment \(the External Secrets operator runs the generator/);
      const own = await s.api(beta, 'POST', EXTERNAL_SECRETS(ESO_NS), generated('beta-registry', 'beta-ecr'));
      assert.equal(own.status, 201, own.text);
    });

    test("beta's SecretStore may not hand alpha's Secret to a webhook or a GitLab of its choosing, nor use a provider Deed does not know, nor its PushSecret push what alpha's generator makes; beta's own and a fake store are stored", async () => {
      const s = suite();
      const store = (name: string, provider: Record<string, unknown>) => ({ apiVersion: `${ESO_GROUP}/v1`, kind: 'SecretStore', metadata: { name }, spec: { provider } });
      // The webhook provider templates the Secret's keys into a request to its URL: the writer's server.
      const webhook = (secret: string) => ({ webhook: { url: 'https://collector.beta.example/{{ .remoteRef.key }}', headers: { Authorization: 'Bearer {{ .auth.token }}' }, result: { jsonPath: '$.value' }, secrets: [{ name: 'auth', secretRef: { name: secret } }] } });
      refused(await s.api(beta, 'POST', SECRET_STORES(ESO_NS), store('beta-webhook', webhook('alpha-vault-token'))), 'reference.cross-environment', /spec\.provider\.webhook\.secrets\[0\]\.secretRef\.name: names Secret alpha-vault-token, which belongs to another environment/);
      refused(await s.api(beta, 'POST', `${SECRET_STORES(ESO_NS)}?dryRun=All`, store('beta-webhook', webhook('alpha-vault-token'))), 'reference.cross-environment', /alpha-vault-token/);
      refused(await s.api(beta, 'POST', SECRET_STORES(ESO_NS), store('beta-gitlab', { gitlab: { url: 'https://gitlab.beta.example', projectID: '1', auth: { SecretRef: { accessToken: { name: 'alpha-vault-token', key: 'token' } } } } })), 'reference.cross-environment', /spec\.provider\.gitlab\.auth\.SecretRef\.accessToken\.name: names Secret alpha-vault-token/);
      // A provider Deed does not list: which of its fields name Secrets is not known.
      refused(await s.api(beta, 'POST', SECRET_STORES(ESO_NS), store('beta-unknown', { futurevault: { auth: { apiKey: { name: 'alpha-vault-token', key: 'token' } } } })), 'reference.unknown', /spec\.provider\.futurevault: .*a provider whose fields Deed does not know/);
      ok("beta's webhook store of its own Secret", await s.api(beta, 'POST', SECRET_STORES(ESO_NS), store('beta-webhook', webhook('beta-vault-token'))));
      ok("beta's fake store", await s.api(beta, 'POST', SECRET_STORES(ESO_NS), store('beta-fake', { fake: { data: [{ key: 'db/password', value: 'not-a-secret' }] } })));
      // Nor swap alpha's Secret in later, by a merge patch of its own store.
      refused(await s.api(beta, 'PATCH', `${SECRET_STORES(ESO_NS)}/beta-webhook`, { spec: { provider: { webhook: { secrets: [{ name: 'auth', secretRef: { name: 'alpha-vault-token' } }] } } } }, 'application/merge-patch+json'), 'reference.cross-environment', /alpha-vault-token/);
      // A PushSecret's generator runs with the generator's credentials, and pushes what it makes to the PushSecret's stores.
      await eventually('the generator kind is served', async () => (await s.api(s.admin, 'GET', ECR_TOKENS(ESO_NS))).status === 200);
      const alphaEcr = await s.api(alpha, 'POST', ECR_TOKENS(ESO_NS), ecrToken('alpha-push-ecr', 'alpha-vault-token'));
      assert.equal(alphaEcr.status, 201, alphaEcr.text);
      ok("beta's generator", await s.api(beta, 'POST', ECR_TOKENS(ESO_NS), ecrToken('beta-push-ecr', 'beta-vault-token')));
      const push = (name: string, generator: string) => ({ apiVersion: `${ESO_GROUP}/v1alpha1`, kind: 'PushSecret', metadata: { name }, spec: { secretStoreRefs: [{ name: 'beta-webhook', kind: 'SecretStore' }], selector: { generatorRef: { apiVersion: `${GENERATORS_GROUP}/v1alpha1`, kind: 'ECRAuthorizationToken', name: generator } }, data: [{ match: { secretKey: 'password', remoteRef: { remoteKey: 'pushed' } } }] } });
      await eventually('the PushSecret kind is served', async () => (await s.api(s.admin, 'GET', PUSH_SECRETS(ESO_NS))).status === 200);
      refused(await s.api(beta, 'POST', PUSH_SECRETS(ESO_NS), push('beta-push', 'alpha-push-ecr')), 'reference.cross-environment', /spec\.selector\.generatorRef: names ECRAuthorizationToken alpha-push-ecr, which belongs to another environment/);
      ok("beta's PushSecret of its own generator", await s.api(beta, 'POST', PUSH_SECRETS(ESO_NS), push('beta-push', 'beta-push-ecr')));
    });

    test("no store of beta's may have External Secrets sign in as itself (its token sent to beta's Vault, its AWS role); with beta's own service account, and the platform's, it may", async () => {
      const s = suite();
      const store = (name: string, provider: Record<string, unknown>) => ({ apiVersion: `${ESO_GROUP}/v1`, kind: 'SecretStore', metadata: { name }, spec: { provider } });
      const kubernetesAuth = (auth: Record<string, unknown>) => ({ vault: { server: 'https://vault.beta.example', path: 'secret', auth: { kubernetes: { mountPath: 'kubernetes', role: 'reader', ...auth } } } });
      const fix = /with spec\.provider\.vault\.auth\.kubernetes as written: the External Secrets controller would send its own service account token to the Vault server, which acts for every environment and the platform; name a service account \(serviceAccountRef\) or a token Secret \(secretRef\) of your own/;
      refused(await s.api(beta, 'POST', SECRET_STORES(ESO_NS), store('beta-ambient', kubernetesAuth({}))), 'guard.operator-identity', fix);
      refused(await s.api(beta, 'POST', `${SECRET_STORES(ESO_NS)}?dryRun=All`, store('beta-ambient', kubernetesAuth({}))), 'guard.operator-identity', fix);
      refused(await s.api(beta, 'POST', SECRET_STORES(ESO_NS), store('beta-aws', { aws: { service: 'SecretsManager', region: 'eu-west-1' } })), 'guard.operator-identity', /spec\.provider\.aws as written: the External Secrets controller would fetch with its own AWS identity/);
      ok("beta's store of its own service account", await s.api(beta, 'POST', SECRET_STORES(ESO_NS), store('beta-own-sa', kubernetesAuth({ serviceAccountRef: { name: 'default' } }))));
      // Nor drop the account later.
      refused(await s.api(beta, 'PATCH', `${SECRET_STORES(ESO_NS)}/beta-own-sa`, { spec: { provider: { vault: { auth: { kubernetes: { serviceAccountRef: null } } } } } }, 'application/merge-patch+json'), 'guard.operator-identity', fix);
      ok("the platform's store of the controller's own token", await s.api(s.admin, 'POST', SECRET_STORES(ESO_NS), store('platform-ambient', kubernetesAuth({}))));
      // Nor lure an operator that signs in as beta's account into reading alpha's token Secret, which the account lists.
      refused(await s.api(beta, 'POST', `/api/v1/namespaces/${ESO_NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'lure' }, secrets: [{ name: 'alpha-vault-token' }] }), 'reference.cross-environment', /secrets\[0\]\.name: names Secret alpha-vault-token, which belongs to another environment/);
    });

    test("beta may not move the platform's ExternalSecret, which writes into alpha's Secret, onto its own store", async () => {
      const s = suite();
      // The platform's (the admin's, unstamped): it may name alpha's Secret.
      const platform = { ...externalSecret('platform-into-alpha', 'beta-vault', 'alpha-vault-token'), spec: { ...externalSecret('x', 'beta-vault').spec, secretStoreRef: { name: 'global', kind: 'ClusterSecretStore' }, target: { name: 'alpha-vault-token', creationPolicy: 'Merge' } } };
      ok("the platform's ExternalSecret", await s.api(s.admin, 'POST', EXTERNAL_SECRETS(ESO_NS), platform));
      refused(await s.api(beta, 'PATCH', `${EXTERNAL_SECRETS(ESO_NS)}/platform-into-alpha`, { spec: { secretStoreRef: { name: 'beta-vault', kind: 'SecretStore' } } }, 'application/merge-patch+json'), 'reference.cross-environment', /spec\.target\.name: names Secret alpha-vault-token, which belongs to another environment .*carries no stamps \(the platform's, or of no environment\)/);
      const labelled = await s.api(s.admin, 'PATCH', `${EXTERNAL_SECRETS(ESO_NS)}/platform-into-alpha`, { metadata: { labels: { team: 'data' } } }, 'application/merge-patch+json');
      assert.equal(labelled.status, 200, labelled.text);
    });

    test("what External Secrets (a listed controller) makes for alpha's ExternalSecret is alpha's: beta's pods may not mount it, beta's ExternalSecret may not write into it, alpha's may", async () => {
      const s = suite();
      const operator = await s.newIdentity('platform', 'external-secrets');
      await namespaceAdmins(s, ESO_NS, 'eso-operator', [['platform', 'external-secrets']]);
      const owner = await s.api(alpha, 'POST', EXTERNAL_SECRETS(ESO_NS), externalSecret('alpha-made', 'alpha-vault'));
      assert.equal(owner.status, 201, owner.text);
      // As the operator writes it (creationPolicy Owner): the ExternalSecret is its controller.
      const target = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-made-fetched', ownerReferences: [{ apiVersion: `${ESO_GROUP}/v1`, kind: 'ExternalSecret', name: 'alpha-made', uid: owner.body.metadata.uid, controller: true, blockOwnerDeletion: true }] }, type: 'Opaque', stringData: { password: 'fetched' } };
      let made = await s.api(operator, 'POST', PATHS.Secret(ESO_NS), target);
      await eventually('RBAC lets External Secrets create Secrets', async () => made.status === 201 || !/cannot create resource/.test((made = await s.api(operator, 'POST', PATHS.Secret(ESO_NS), target)).text));
      assert.equal(made.status, 201, made.text);
      assert.equal(made.body.metadata.labels?.['deed.dev/environment'], 'alpha');
      // Its refresh merges the ExternalSecret's own labels and annotations (Deed's stamps for it among them): the Secret keeps its own.
      const es = (await s.api(s.admin, 'GET', `${EXTERNAL_SECRETS(ESO_NS)}/alpha-made`)).body;
      const refreshed = { ...made.body, metadata: { ...made.body.metadata, labels: { ...made.body.metadata.labels, ...es.metadata.labels }, annotations: { ...made.body.metadata.annotations, ...es.metadata.annotations } }, data: { password: Buffer.from('rotated').toString('base64') } };
      delete refreshed.stringData;
      const synced = await s.api(operator, 'PUT', `${PATHS.Secret(ESO_NS)}/alpha-made-fetched`, refreshed);
      assert.equal(synced.status, 200, synced.text);
      for (const key of ['deed.dev/create-nonce', 'deed.dev/attestation']) assert.equal(synced.body.metadata.annotations?.[key], made.body.metadata.annotations?.[key], key);
      assert.equal(Buffer.from(synced.body.data.password, 'base64').toString(), 'rotated');
      refused(await s.api(beta, 'POST', PATHS.Pod(ESO_NS), sandboxPod('beta-reads-fetched', { spec: { containers: [{ name: 'main', image: 'registry.example/agent:1', env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 'alpha-made-fetched', key: 'password' } } }] }] } })), 'secret-ref.cross-environment', /alpha-made-fetched/);
      const merged = (name: string, store: string) => ({ ...externalSecret(name, store, 'alpha-made-fetched'), spec: { ...externalSecret(name, store).spec, target: { name: 'alpha-made-fetched', creationPolicy: 'Merge' } } });
      refused(await s.api(beta, 'POST', EXTERNAL_SECRETS(ESO_NS), merged('beta-merge', 'beta-vault')), 'reference.cross-environment', /spec\.target\.name: names Secret alpha-made-fetched, which belongs to another environment/);
      const own = await s.api(alpha, 'POST', EXTERNAL_SECRETS(ESO_NS), merged('alpha-merge', 'alpha-vault'));
      assert.equal(own.status, 201, own.text);
    });

    test("beta may not ask External Secrets for a target of no environment (creationPolicy Orphan) in a shared namespace, by create, patch or apply; its Owner one is stored", async () => {
      const s = suite();
      const orphan = (name: string) => ({ ...externalSecret(name, 'beta-vault'), spec: { ...externalSecret(name, 'beta-vault').spec, target: { name: `${name}-fetched`, creationPolicy: 'Orphan' } } });
      const fix = /with spec\.target\.creationPolicy Orphan: the External Secrets operator would write its target Secret with no owner reference.*leave creationPolicy unset \(Owner, the default\)/;
      refused(await s.api(beta, 'POST', EXTERNAL_SECRETS(ESO_NS), orphan('beta-orphan')), 'guard.unowned-output', fix);
      refused(await s.api(beta, 'POST', `${EXTERNAL_SECRETS(ESO_NS)}?dryRun=All`, orphan('beta-orphan')), 'guard.unowned-output', fix);
      const owned = await s.api(beta, 'POST', EXTERNAL_SECRETS(ESO_NS), externalSecret('beta-owned', 'beta-vault'));
      assert.equal(owned.status, 201, owned.text);
      refused(await s.api(beta, 'PATCH', `${EXTERNAL_SECRETS(ESO_NS)}/beta-owned`, { spec: { target: { creationPolicy: 'Orphan' } } }, 'application/merge-patch+json'), 'guard.unowned-output', fix);
      refused(await s.api(beta, 'PATCH', `${EXTERNAL_SECRETS(ESO_NS)}/beta-owned?fieldManager=beta&force=true`, orphan('beta-owned'), 'application/apply-patch+yaml'), 'guard.unowned-output', fix);
      const kept = (await s.api(s.admin, 'GET', `${EXTERNAL_SECRETS(ESO_NS)}/beta-owned`)).body;
      assert.equal(kept.spec.target.creationPolicy, undefined, 'the stored ExternalSecret is unchanged');
      // The platform's may (it writes unstamped Secrets itself).
      ok("the platform's Orphan ExternalSecret", await s.api(s.admin, 'POST', EXTERNAL_SECRETS(ESO_NS), { ...orphan('platform-orphan'), spec: { ...orphan('platform-orphan').spec, secretStoreRef: { name: 'global', kind: 'ClusterSecretStore' } } }));
    });
  });
}
