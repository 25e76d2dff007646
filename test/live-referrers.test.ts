// reference.live-reader for what a live referrer names (policy/referrers.ts, the kind table's
// `followsByName`): a Service or a workload an environment creates takes no name that a live
// EndpointSlice, Endpoints, Ingress or HPA of another environment (or of none) names. The
// attack it closes: in a shared namespace beta creates its Service `api` and an EndpointSlice
// labelled `kubernetes.io/service-name: api` pointing at beta's pod; beta deletes the Service
// (the slice stays: no owner); alpha creates Service `api`, and kube-proxy sends alpha's traffic
// to beta's endpoint. Likewise beta's HPA naming a Deployment beta deleted scales alpha's.
import { describe, test } from 'node:test';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { decide } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { createCachedReader } from '../src/kube/cached-reader.js';
import { webhookLookupRules } from '../src/install/kind-rules.js';
import { kindRows } from '../src/policy/kinds.js';
import { lookupKey, lookupsNeeded, planLookups } from '../src/policy/lookup.js';
import { objectReferences } from '../src/policy/object-references.js';
import type { Lookup, ObjectLookup, Readers } from '../src/policy/policy.js';
import { admittedAcross, isReferredTarget, referenceNaming, referringKinds } from '../src/policy/referrers.js';
import { createMetrics } from '../src/observability/metrics.js';
import { ReviewedObjects } from '../src/review/run.js';
import { fakeCache, fakeLive } from './cache-fakes.js';
import { createReview, FIXTURE_KEYS, kubeSystem, stampedMetadata, testContext, type Review } from './helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['alpha-home'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'], managers: { users: ['system:serviceaccount:platform:beta-manager'] } },
  ],
  platform: { users: ['platform-deployer'] },
};
const NS = 'shared';
const ALPHA: UserInfo = { username: 'system:serviceaccount:sandbox-a:runner', groups: ['system:serviceaccounts'], extra: {} };
const PLATFORM: UserInfo = { username: 'platform-deployer', groups: ['system:authenticated'], extra: {} };
const STRANGER: UserInfo = { username: 'system:serviceaccount:plain:stranger', groups: ['system:serviceaccounts'], extra: {} };
const BETA_MANAGER: UserInfo = { username: 'system:serviceaccount:platform:beta-manager', groups: ['system:serviceaccounts'], extra: {} };

type Target = 'Service' | 'Deployment' | 'StatefulSet' | 'ReplicaSet' | 'ReplicationController' | 'CronJob';
const TARGETS: Record<Target, { group: string; resource: string }> = {
  Service: { group: '', resource: 'services' },
  Deployment: { group: 'apps', resource: 'deployments' },
  StatefulSet: { group: 'apps', resource: 'statefulsets' },
  ReplicaSet: { group: 'apps', resource: 'replicasets' },
  ReplicationController: { group: '', resource: 'replicationcontrollers' },
  CronJob: { group: 'batch', resource: 'cronjobs' },
};

function create(kind: Target, name: string, user: UserInfo = ALPHA, group = TARGETS[kind].group): Review {
  const { resource } = TARGETS[kind];
  const template = { metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'app:1' }] } };
  const spec =
    kind === 'Service'
      ? { selector: { app: name }, ports: [{ port: 80 }] }
      : kind === 'ReplicationController'
        ? { replicas: 1, selector: { app: name }, template }
        : kind === 'CronJob'
          ? { schedule: '0 0 1 1 *', jobTemplate: { spec: { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } } } }
        : { replicas: 1, selector: { matchLabels: { app: name } }, template, ...(kind === 'StatefulSet' ? { serviceName: name } : {}) };
  const object: KubeObject = { apiVersion: group === '' ? 'v1' : `${group}/v1`, kind, metadata: { name, namespace: NS }, spec };
  return createReview(object, resource, user, '5d6e7f80-0000-4000-8000-0000000000d1');
}

const stamped = (kind: string, env: string | undefined): Extract<Lookup, { state: 'found' }> =>
  env === undefined ? { state: 'found', metadata: { uid: `${kind}-none` } } : { state: 'found', metadata: { ...stampedMetadata(kind, env, NS).metadata, uid: `${kind}-${env}` } };

const SLICE = { path: 'metadata.labels["kubernetes.io/service-name"]', follower: "kube-proxy sends the Service's traffic to its endpoints" };
const HPA = { path: 'spec.scaleTargetRef', follower: "the horizontal-pod-autoscaler controller writes the target's /scale" };

/** Readers of `api` (of the name asked for) as the live list gives them: `kind` objects of `envs`. */
const referrers = (kind: string, reference: { path: string; follower: string }, ...envs: Array<string | undefined>): Readers => ({
  state: 'known',
  readers: envs.map((e, i) => ({ kind, name: `${kind.toLowerCase()}-${i}`, found: stamped(kind, e), reference })),
});

function lookupOf(readers: Readers): ObjectLookup {
  return { get: (): Lookup => ({ state: 'absent' }), readers: (_resource, _namespace, name) => (name === 'api' ? readers : { state: 'known', readers: [] }) };
}

function findings(review: Review, readers: Readers) {
  const decision = decide('validate', review, { ...testContext(POLICY), lookup: lookupOf(readers) });
  assert.ok(decision.kind === 'review');
  return decision.verdict.findings.filter((f) => f.rule === 'reference.live-reader');
}
const refusedBy = (review: Review, readers: Readers, message: RegExp) => {
  const found = findings(review, readers);
  assert.ok(found.some((f) => message.test(f.message)), JSON.stringify(found));
};
const passes = (review: Review, readers: Readers) => assert.deepEqual(findings(review, readers), []);

describe('reference.live-reader: a Service or workload takes no name a live referrer of another environment names', () => {
  test("alpha's Service under the name beta's EndpointSlice names is refused, saying what kube-proxy would do and what to do instead", () => {
    refusedBy(
      create('Service', 'api'),
      referrers('EndpointSlice', SLICE, 'beta'),
      /^EndpointSlice shared\/endpointslice-0 of another environment \(or of none\) names Service api \(label kubernetes\.io\/service-name\), and once this one stands kube-proxy sends the Service's traffic to its endpoints: choose a name of this run's own, or create it once that EndpointSlice is deleted$/,
    );
  });

  test("an Endpoints (by its own name) and an Ingress backend of beta's are refused too", () => {
    refusedBy(create('Service', 'api'), referrers('Endpoints', { path: 'metadata.name', follower: 'kube-proxy, through the endpointslice-mirroring controller, sends the Service\'s traffic to its addresses' }, 'beta'), /^Endpoints shared\/endpoints-0 of another environment \(or of none\) names Service api \(its own name\)/);
    refusedBy(create('Service', 'api'), referrers('Ingress', { path: 'spec.rules[0].http.paths[0].backend.service.name', follower: 'the ingress controller publishes the Service on its routes' }, 'beta'), /^Ingress shared\/ingress-0 .* names Service api \(spec\.rules\[0\]\.http\.paths\[0\]\.backend\.service\.name\), and once this one stands the ingress controller publishes the Service on its routes/);
  });

  const ROUTE = { path: 'spec.parentRefs[0]', follower: "the gateway controller serves the route on the parent Gateway's listeners" };
  const GATEWAY_UID = '5d6e7f80-0000-4000-8000-0000000000d2';
  /** A Gateway `api` whose one listener takes routes `from` (absent: the default, its own namespace's). */
  const gatewayObject = (from?: string, allowedListeners?: string): KubeObject => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'api', namespace: NS },
    spec: { gatewayClassName: 'shared', ...(allowedListeners !== undefined ? { allowedListeners: { namespaces: { from: allowedListeners } } } : {}), listeners: [{ name: 'http', protocol: 'HTTP', port: 80, ...(from !== undefined ? { allowedRoutes: { namespaces: { from } } } : {}) }] },
  });
  const gateway = (user: UserInfo, from = 'All') => createReview(gatewayObject(from), 'gateways', user, GATEWAY_UID);
  const routeIn = (namespace: string, env?: string, kind = 'HTTPRoute'): Readers => ({ state: 'known', readers: [{ kind, name: 'front', namespace, found: env === undefined ? { state: 'found', metadata: { uid: 'r' } } : stamped(kind, env), reference: ROUTE }] });
  const BETA: UserInfo = { username: 'system:serviceaccount:sandbox-b:admin', groups: ['system:serviceaccounts'], extra: {} };

  test("a referrer in another namespace (a route naming its parent Gateway across namespaces, which the Gateway's listeners admit) is named where it stands, and is whose its own namespace says", () => {
    refusedBy(gateway(BETA), routeIn('front-ns', 'alpha'), /^HTTPRoute front-ns\/front of another environment \(or of none\) names Gateway api \(spec\.parentRefs\[0\]\), and once this one stands the gateway controller serves the route on the parent Gateway's listeners/);
    refusedBy(gateway(BETA, 'Selector'), routeIn('front-ns', 'alpha'), /^HTTPRoute front-ns\/front /);
    // Unstamped in a namespace bound to alpha: alpha's, so alpha may take the name and beta may not.
    passes(gateway(ALPHA), routeIn('alpha-home'));
    refusedBy(gateway(BETA), routeIn('alpha-home'), /^HTTPRoute alpha-home\/front /);
  });

  test('a route in another namespace that a ReferenceGrant admits to a Service (the reader lists only those) holds its name as one of its own namespace does', () => {
    const BACKEND = { path: 'spec.rules[0].backendRefs[0]', follower: "the gateway controller sends the route's traffic to the backend" };
    refusedBy(create('Service', 'api'), { state: 'known', readers: [{ kind: 'HTTPRoute', name: 'front', namespace: 'front-ns', found: stamped('HTTPRoute', 'beta'), reference: BACKEND }] }, /^HTTPRoute front-ns\/front of another environment \(or of none\) names Service api \(spec\.rules\[0\]\.backendRefs\[0\]\)/);
  });

  test("a Gateway whose listeners take routes from its own namespace only (the default) is not held by a route elsewhere that names it: the gateway controller attaches none of them", () => {
    for (const from of [undefined, 'Same'])
      for (const kind of ['HTTPRoute', 'ListenerSet']) passes(createReview(gatewayObject(from), 'gateways', BETA, GATEWAY_UID), routeIn('front-ns', 'alpha', kind));
    // In its own namespace, as ever.
    refusedBy(createReview(gatewayObject(), 'gateways', BETA, GATEWAY_UID), routeIn(NS, 'alpha'), /^HTTPRoute shared\/front of another environment/);
    // A ListenerSet elsewhere counts where the Gateway admits ListenerSets from every namespace, whatever its listeners take.
    refusedBy(createReview(gatewayObject('Same', 'All'), 'gateways', BETA, GATEWAY_UID), routeIn('front-ns', 'alpha', 'ListenerSet'), /^ListenerSet front-ns\/front /);
    passes(createReview(gatewayObject('All', 'Same'), 'gateways', BETA, GATEWAY_UID), routeIn('front-ns', 'alpha', 'ListenerSet'));
  });

  test("beta's UPDATE that has its Gateway's listeners take routes from every namespace is refused while alpha's route elsewhere names it; one that widens nothing, or finds only routes of its own namespace, is not judged again", () => {
    const update = (before: KubeObject, after: KubeObject) => ({ ...createReview(after, 'gateways', BETA, GATEWAY_UID), request: { ...createReview(after, 'gateways', BETA, GATEWAY_UID).request, operation: 'UPDATE', oldObject: before } }) as Review;
    const stampedGw = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, ...stampedMetadata('Gateway', 'beta', NS).metadata, name: 'api', namespace: NS } });
    refusedBy(
      update(stampedGw(gatewayObject()), stampedGw(gatewayObject('All'))),
      routeIn('front-ns', 'alpha'),
      /^HTTPRoute front-ns\/front of another environment \(or of none\) names Gateway api \(spec\.parentRefs\[0\]\), and once this one admits its namespace the gateway controller serves the route on the parent Gateway's listeners: keep the listeners' allowedRoutes \(and allowedListeners\) to this namespace \(namespaces\.from: Same\), or widen them once that HTTPRoute is deleted$/,
    );
    const found = findings(update(stampedGw(gatewayObject()), stampedGw(gatewayObject('All'))), routeIn('front-ns', 'alpha'));
    assert.equal(found[0]?.path, 'spec');
    // Already admitted from every namespace (judged at its CREATE), or still its own only: not judged.
    passes(update(stampedGw(gatewayObject('Selector')), stampedGw(gatewayObject('All'))), routeIn('front-ns', 'alpha'));
    passes(update(stampedGw(gatewayObject()), stampedGw(gatewayObject('Same'))), routeIn('front-ns', 'alpha'));
    // What it widens is routes: a route of its own namespace was judged when it, or the Gateway, was written.
    passes(update(stampedGw(gatewayObject()), stampedGw(gatewayObject('All'))), routeIn(NS, 'alpha'));
    // A ListenerSet elsewhere counts where allowedListeners is widened, not where only the routes are.
    passes(update(stampedGw(gatewayObject()), stampedGw(gatewayObject('All'))), routeIn('front-ns', 'alpha', 'ListenerSet'));
    refusedBy(update(stampedGw(gatewayObject()), stampedGw(gatewayObject(undefined, 'All'))), routeIn('front-ns', 'alpha', 'ListenerSet'), /^ListenerSet front-ns\/front .*once this one admits its namespace/);
    // Its referrers unread: refused, saying so.
    refusedBy(update(stampedGw(gatewayObject()), stampedGw(gatewayObject('All'))), { state: 'unknown', reason: 'list httproutes in every namespace: no answer within 4000 ms' }, /^cannot tell whether an object of another environment \(or of none\) in namespace shared or another \(HTTPRoute, .*\) names Gateway api: list httproutes/);
  });

  test('what a Gateway or ListenerSet admits from every namespace: a value Deed does not know, or a listener it cannot read, admits every namespace', () => {
    const ROUTES = ['httproutes', 'grpcroutes', 'tlsroutes', 'tcproutes', 'udproutes'];
    const SETS = ['listenersets', 'xlistenersets'];
    const gw = (spec: unknown) => ({ spec });
    assert.deepEqual(admittedAcross('gateways', gw({ listeners: [{ name: 'a' }, { name: 'b', allowedRoutes: { namespaces: { from: 'Same' } } }] })), []);
    assert.deepEqual(admittedAcross('gateways', gw({ listeners: [{ name: 'a' }, { name: 'b', allowedRoutes: { namespaces: { from: 'All' } } }] })), ROUTES);
    for (const hostile of [{ listeners: 'x' }, { listeners: [null] }, { listeners: [{ allowedRoutes: { namespaces: { from: 7 } } }] }, { listeners: [{ allowedRoutes: { namespaces: null } }] }, { listeners: [{ allowedRoutes: 'x' }] }, { listeners: [{ allowedRoutes: { namespaces: { from: 'Some' } } }] }])
      assert.deepEqual(admittedAcross('gateways', gw(hostile)), ROUTES, JSON.stringify(hostile));
    for (const from of ['None', 'Same']) assert.deepEqual(admittedAcross('gateways', gw({ allowedListeners: { namespaces: { from } }, listeners: [] })), []);
    for (const from of ['All', 'Selector', 'Other']) assert.deepEqual(admittedAcross('gateways', gw({ allowedListeners: { namespaces: { from } }, listeners: [] })), SETS);
    // A ListenerSet's listeners admit routes as a Gateway's do; nothing adds listeners to it.
    assert.deepEqual(admittedAcross('listenersets', gw({ allowedListeners: { namespaces: { from: 'All' } }, listeners: [{ allowedRoutes: { namespaces: { from: 'Selector' } } }] })), ROUTES);
    assert.deepEqual(admittedAcross('listenersets', gw({ listeners: [{}] })), []);
    // No referrer of a Service is named from every namespace.
    assert.deepEqual(admittedAcross('services', gw({ listeners: 'x' })), []);
  });

  test('the read plan lists a Gateway\'s referrers across the cluster only of the kinds its listeners admit from there, at its CREATE and at an UPDATE that widens them', () => {
    const keysOf = (review: Review) => planLookups(review, 'validate', FIXTURE_KEYS).lookups.filter((k) => k.readers === true);
    assert.deepEqual(keysOf(createReview(gatewayObject(), 'gateways', BETA, GATEWAY_UID)).map((k) => [k.resource, k.name, k.across]), [['gateways', 'api', []]]);
    assert.deepEqual(keysOf(gateway(BETA, 'All')).map((k) => k.across), [['httproutes', 'grpcroutes', 'tlsroutes', 'tcproutes', 'udproutes']]);
    assert.deepEqual(keysOf(createReview(gatewayObject(undefined, 'Selector'), 'gateways', BETA, GATEWAY_UID)).map((k) => k.across), [['listenersets', 'xlistenersets']]);
    const update = (before: KubeObject, after: KubeObject) => ({ ...createReview(after, 'gateways', BETA, GATEWAY_UID), request: { ...createReview(after, 'gateways', BETA, GATEWAY_UID).request, operation: 'UPDATE', oldObject: before } }) as Review;
    assert.deepEqual(keysOf(update(gatewayObject(), gatewayObject('All', 'All'))).map((k) => k.across), [['httproutes', 'grpcroutes', 'tlsroutes', 'tcproutes', 'udproutes', 'listenersets', 'xlistenersets']]);
    assert.deepEqual(keysOf(update(gatewayObject('All'), gatewayObject('All', 'Same'))), []);
    assert.deepEqual(keysOf(update(gatewayObject(), { ...gatewayObject(), metadata: { ...gatewayObject().metadata, labels: { a: 'b' } } })), []);
  });

  test("alpha's Service under the name beta's live StatefulSet governs is refused: the EndpointSlice controller would publish alpha's pods under beta's set's stable DNS names (rev-93)", () => {
    const governs = { path: 'spec.serviceName', follower: "the EndpointSlice controller publishes the Service's pods under the set's stable DNS names (<pod>.<service>)" };
    refusedBy(
      create('Service', 'api'),
      referrers('StatefulSet', governs, 'beta'),
      /^StatefulSet shared\/statefulset-0 of another environment \(or of none\) names Service api \(spec\.serviceName\), and once this one stands the EndpointSlice controller publishes the Service's pods under the set's stable DNS names \(<pod>\.<service>\): choose a name of this run's own, or create it once that StatefulSet is deleted$/,
    );
    passes(create('Service', 'api'), referrers('StatefulSet', governs, 'alpha'));
    // The set itself may name a Service that does not exist (it needs none); one of beta's it may not.
    const set = (service: Lookup) => {
      const decision = decide('validate', create('StatefulSet', 'db'), { ...testContext(POLICY), lookup: { get: (resource, _ns, name) => (resource === 'services' && name === 'db' ? service : { state: 'absent' }), readers: () => ({ state: 'known', readers: [] }) } });
      assert.ok(decision.kind === 'review');
      return decision.verdict.findings.filter((f) => f.path === 'spec.serviceName');
    };
    assert.deepEqual(set({ state: 'absent' }), []);
    assert.match(set(stamped('Service', 'beta'))[0]?.message ?? '', /^names Service db, which belongs to another environment \(the EndpointSlice controller publishes/);
    assert.deepEqual(set(stamped('Service', 'alpha')), []);
    assert.deepEqual(referenceNaming({ group: 'apps', resource: 'statefulsets' }, { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: NS }, spec: { serviceName: 'api' } } as KubeObject, NS, 'services', 'api')?.path, 'spec.serviceName');
  });

  test("beta's CronJob under the name alpha's Job's controller reference carries (its ConfigMap's, an operator's) is refused: the cronjob controller would delete alpha's finished Jobs (rev-93)", () => {
    const counted = { path: 'metadata.ownerReferences[0].name', follower: 'the cronjob controller of a CronJob of that name counts the Job as its own and deletes it once finished, past its history limits' };
    refusedBy(
      create('CronJob', 'api', STRANGER),
      referrers('Job', counted, 'alpha'),
      /^Job shared\/job-0 of an environment this requester does not act for names CronJob api \(metadata\.ownerReferences\[0\]\.name\), and once this one stands the cronjob controller of a CronJob of that name counts the Job as its own and deletes it once finished, past its history limits: choose a name of this run's own, or create it once that Job is deleted$/,
    );
    passes(create('CronJob', 'api'), referrers('Job', counted, 'alpha'));
    const job = (owner: Record<string, unknown>) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'train-step', namespace: NS, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'other', uid: 'u0' }, { controller: true, uid: 'u1', ...owner }] } }) as KubeObject;
    assert.equal(referenceNaming({ group: 'batch', resource: 'jobs' }, job({ apiVersion: 'v1', kind: 'ConfigMap', name: 'api' }), NS, 'cronjobs', 'api')?.path, 'metadata.ownerReferences[1].name');
    assert.equal(referenceNaming({ group: 'batch', resource: 'jobs' }, job({ apiVersion: 'jobset.x-k8s.io/v1alpha2', kind: 'JobSet', name: 'api' }), NS, 'cronjobs', 'api')?.path, 'metadata.ownerReferences[1].name');
    // Its own CronJob is its parent, not a namesake; a reference that is not the controller names nothing.
    assert.equal(referenceNaming({ group: 'batch', resource: 'jobs' }, job({ apiVersion: 'batch/v1', kind: 'CronJob', name: 'api' }), NS, 'cronjobs', 'api'), undefined);
    assert.equal(referenceNaming({ group: 'batch', resource: 'jobs' }, job({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }), NS, 'cronjobs', 'other'), undefined);
  });

  test("a Deployment, StatefulSet, ReplicaSet or ReplicationController under the name beta's HPA scales is refused", () => {
    for (const kind of ['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController'] as const)
      refusedBy(create(kind, 'api'), referrers('HorizontalPodAutoscaler', HPA, 'beta'), new RegExp(`^HorizontalPodAutoscaler shared/horizontalpodautoscaler-0 of another environment \\(or of none\\) names ${kind} api \\(spec\\.scaleTargetRef\\), and once this one stands the horizontal-pod-autoscaler controller writes the target's /scale`));
  });

  test('a referrer of no environment, or whose stamps do not verify, is another\'s too; what cannot be told is refused', () => {
    refusedBy(create('Service', 'api'), referrers('EndpointSlice', SLICE, undefined), /names Service api/);
    const stamps = stamped('EndpointSlice', 'beta');
    const forged = { ...stamps, metadata: { ...stamps.metadata, labels: { ...stamps.metadata.labels, 'deed.dev/environment': 'alpha' } } };
    refusedBy(create('Service', 'api'), { state: 'known', readers: [{ kind: 'EndpointSlice', name: 'x', found: forged, reference: SLICE }] }, /names Service api/);
    refusedBy(create('Service', 'api'), { state: 'unknown', reason: 'the EndpointSlices could not be listed' }, /^cannot tell whether an object of another environment \(or of none\) in namespace shared \(StatefulSet, Endpoints, EndpointSlice, Ingress, HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute\) names Service api: the EndpointSlices could not be listed$/);
    refusedBy(create('Deployment', 'api'), { state: 'unknown', reason: 'no turn' }, /\(HorizontalPodAutoscaler\) names Deployment api: no turn/);
  });

  test("alpha's own referrers, a name none names, and the platform's create pass", () => {
    passes(create('Service', 'api'), referrers('EndpointSlice', SLICE, 'alpha', 'alpha'));
    passes(create('Service', 'web'), referrers('EndpointSlice', SLICE, 'beta'));
    passes(create('Deployment', 'api'), referrers('HorizontalPodAutoscaler', HPA, 'alpha'));
    passes(create('Service', 'api', PLATFORM), referrers('EndpointSlice', SLICE, 'beta'));
  });

  test("a tenant of no environment may not take a name beta's referrer names; beta's manager may, and one of no environment is anyone's", () => {
    refusedBy(create('Service', 'api', STRANGER), referrers('EndpointSlice', SLICE, 'beta'), /^EndpointSlice shared\/endpointslice-0 of an environment this requester does not act for names Service api/);
    passes(create('Service', 'api', STRANGER), referrers('EndpointSlice', SLICE, undefined));
    passes(create('Service', 'api', BETA_MANAGER), referrers('EndpointSlice', SLICE, 'beta', undefined));
    passes(create('Deployment', 'api', BETA_MANAGER), referrers('HorizontalPodAutoscaler', HPA, 'beta'));
    refusedBy(create('Service', 'api', BETA_MANAGER), referrers('EndpointSlice', SLICE, 'alpha'), /names Service api/);
  });

  test('a custom resource sharing a plural, an UPDATE and a ReplicaSet the deployment controller makes are not judged', () => {
    passes(create('Service', 'api', ALPHA, 'example.com'), referrers('EndpointSlice', SLICE, 'beta'));
    const update = create('Service', 'api');
    update.request.operation = 'UPDATE';
    update.request.oldObject = update.request.object;
    update.request.options = { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' };
    passes(update, referrers('EndpointSlice', SLICE, 'beta'));
    const made = create('ReplicaSet', 'api', kubeSystem('deployment-controller'));
    made.request.object.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', uid: 'd-1', controller: true }];
    passes(made, referrers('HorizontalPodAutoscaler', HPA, 'beta'));
    const keys = planLookups(made, 'validate', FIXTURE_KEYS, testContext(POLICY).policy).lookups.filter((k) => k.readers === true);
    assert.deepEqual(keys, []);
  });
});

describe('the read plan and the reads of referrers', () => {
  const readerKeys = (r: Review) => lookupsNeeded(r.request, 'validate', FIXTURE_KEYS).filter((k) => k.readers === true).map(lookupKey);

  test("the plan asks for the referrers of a new Service or workload, of the object's own name, and not at an UPDATE or for the platform", () => {
    assert.deepEqual(readerKeys(create('Service', 'api')), ['services/shared/api readers']);
    assert.deepEqual(readerKeys(create('Deployment', 'web')), ['deployments/shared/web readers']);
    assert.deepEqual(readerKeys(create('StatefulSet', 'db')), ['statefulsets/shared/db readers']);
    assert.deepEqual(readerKeys(create('ReplicationController', 'rc')), ['replicationcontrollers/shared/rc readers']);
    const update = create('Service', 'api');
    update.request.operation = 'UPDATE';
    update.request.oldObject = update.request.object;
    assert.deepEqual(readerKeys(update), []);
    assert.deepEqual(readerKeys(create('Service', 'api', ALPHA, 'example.com')), []);
    const planned = (r: Review) => planLookups(r, 'validate', FIXTURE_KEYS, testContext(POLICY).policy).lookups.filter((k) => k.readers === true).map(lookupKey);
    assert.deepEqual(planned(create('Service', 'api', PLATFORM)), []);
    assert.deepEqual(planned(create('Service', 'api', STRANGER)), ['services/shared/api readers']);
  });

  test('which kinds refer to a resource comes from the kind table: its built-in referrers, none for a Secret', () => {
    assert.deepEqual(referringKinds('services').map((r) => r.kind), ['StatefulSet', 'Endpoints', 'EndpointSlice', 'Ingress', 'HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute']);
    for (const resource of ['deployments', 'statefulsets', 'replicasets', 'replicationcontrollers']) assert.deepEqual(referringKinds(resource).map((r) => r.kind), ['HorizontalPodAutoscaler']);
    assert.deepEqual(referringKinds('cronjobs').map((r) => r.kind), ['Job']);
    // A route's parents: a Gateway made under the name serves the route, and a ListenerSet's listeners with their certificates.
    assert.deepEqual(referringKinds('gateways').map((r) => r.kind), ['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute', 'ListenerSet', 'XListenerSet']);
    assert.deepEqual(referringKinds('listenersets').map((r) => r.kind), ['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute']);
    for (const resource of ['secrets', 'configmaps', 'daemonsets', 'jobs', 'pods']) assert.equal(isReferredTarget(resource), false, resource);
  });

  test("each row's followsByName is what its references can name, of a kind Deed reads; the webhook may list those rows, and watches only those it caches", () => {
    const rules = webhookLookupRules(true);
    const granted = (verb: string) => rules.filter((r) => r.verbs.includes(verb)).flatMap((r) => r.resources!.map((res) => `${r.apiGroups![0]}/${res}`));
    for (const row of kindRows().filter((r) => r.followsByName !== undefined)) {
      assert.ok(granted('list').includes(`${row.group}/${row.resource}`), `${row.kind} is listed`);
      for (const across of [...(row.followsAcrossNamespaces ?? []), ...(row.followsByGrant ?? [])]) assert.ok(row.followsByName!.includes(across), `${row.kind} follows ${across} across namespaces only if it follows it by name`);
      assert.equal(granted('watch').includes(`${row.group}/${row.resource}`), row.lookup === 'cache', `${row.kind} is watched only if cached`);
      for (const resource of row.followsByName!) {
        const target = kindRows().find((r) => r.resource === resource && r.group !== undefined && r.lookup !== undefined)!;
        assert.ok(target !== undefined, `${resource} is read`);
        // A reference that gives its own group and kind (object-ref, gateway-ref) may name any kind.
        const names = (row.references ?? []).some((f) => f.by === 'object-ref' || f.by === 'gateway-ref' || f.kind?.kind === target.kind);
        assert.ok(names, `${row.kind}'s references can name ${target.kind}`);
      }
    }
  });

  test('what a referrer names is what the kind table reads from it', () => {
    const slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'api-x', namespace: NS, labels: { 'kubernetes.io/service-name': 'api' } } } as KubeObject;
    assert.equal(referenceNaming({ group: 'discovery.k8s.io', resource: 'endpointslices' }, slice, NS, 'services', 'api')?.path, 'metadata.labels["kubernetes.io/service-name"]');
    assert.equal(referenceNaming({ group: 'discovery.k8s.io', resource: 'endpointslices' }, slice, NS, 'services', 'web'), undefined);
    const endpoints = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'api', namespace: NS } } as KubeObject;
    assert.equal(referenceNaming({ group: '', resource: 'endpoints' }, endpoints, NS, 'services', 'api')?.path, 'metadata.name');
    const ingress = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'edge', namespace: NS }, spec: { tls: [{ secretName: 'api' }], rules: [{ http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 80 } } } }] } }] } } as KubeObject;
    assert.equal(referenceNaming({ group: 'networking.k8s.io', resource: 'ingresses' }, ingress, NS, 'services', 'api')?.path, 'spec.rules[0].http.paths[0].backend.service.name');
    // Its TLS Secret is named, but no Secret's CREATE is judged against it (not followsByName).
    assert.ok(objectReferences({ group: 'networking.k8s.io', resource: 'ingresses' }, ingress).some((r) => r.kind === 'Secret'));
    const hpa = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'api', namespace: NS }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' }, maxReplicas: 3 } } as KubeObject;
    const row = { group: 'autoscaling', resource: 'horizontalpodautoscalers' };
    assert.equal(referenceNaming(row, hpa, NS, 'deployments', 'api')?.follower, HPA.follower);
    assert.equal(referenceNaming(row, hpa, NS, 'statefulsets', 'api'), undefined);
  });

  test('the referrers are listed live whatever the lookup cache answers, and keep where they name it and where they stand', async () => {
    const key = { resource: 'services' as const, namespace: 'sandbox-a', name: 'api', readers: true as const };
    const route = { path: 'spec.parentRefs[0]', follower: 'the gateway controller serves the route' };
    const listed: Readers = {
      state: 'known',
      readers: [
        { kind: 'EndpointSlice', name: 'api-x', found: { state: 'found', metadata: { uid: 's', labels: { 'deed.dev/environment': 'beta', other: 'x' } } }, reference: SLICE },
        { kind: 'HTTPRoute', name: 'front', namespace: 'front-ns', found: { state: 'found', metadata: { uid: 'r' } }, reference: route },
      ],
    };
    const live = fakeLive({}, listed);
    const cache = fakeCache({}, { readers: () => [] });
    const answer = (await createCachedReader(cache, live, 'deed.dev', createMetrics()).read([key], 1000)).readers('services', 'sandbox-a', 'api');
    assert.deepEqual(live.reads, ['services/sandbox-a/api readers']);
    assert.deepEqual(answer.state === 'known' ? answer.readers.map((r) => [r.kind, r.name, r.namespace, r.reference?.path, r.found.metadata.labels]) : answer, [
      ['EndpointSlice', 'api-x', undefined, SLICE.path, { 'deed.dev/environment': 'beta' }],
      ['HTTPRoute', 'front', 'front-ns', route.path, undefined],
    ]);
  });

  test('deed review: an EndpointSlice or HPA reviewed before names what is created after it, until it is deleted', () => {
    const reviewed = new ReviewedObjects();
    const slice: KubeObject = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { ...stampedMetadata('EndpointSlice', 'beta', NS).metadata, name: 'api-x', namespace: NS, labels: { ...stampedMetadata('EndpointSlice', 'beta', NS).metadata.labels, 'kubernetes.io/service-name': 'api' } } };
    const hpa: KubeObject = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: NS }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 2 } };
    reviewed.remember({ stored: slice, deleted: null });
    reviewed.remember({ stored: hpa, deleted: null });
    const names = (resource: 'services' | 'deployments', name: string) => {
      const r = reviewed.lookup.readers(resource, NS, name);
      return r.state === 'known' ? r.readers.map((x) => `${x.kind} ${x.name}`) : r;
    };
    assert.deepEqual(names('services', 'api'), ['EndpointSlice api-x']);
    assert.deepEqual(names('services', 'web'), []);
    assert.deepEqual(names('deployments', 'web'), ['HorizontalPodAutoscaler web']);
    reviewed.remember({ stored: null, deleted: slice });
    assert.deepEqual(names('services', 'api'), []);
    // A route in another namespace naming its parent Gateway here by namespace (a parent is named from any namespace).
    const route: KubeObject = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'front', namespace: 'front-ns' }, spec: { parentRefs: [{ name: 'edge', namespace: NS }, { name: 'local' }] } };
    reviewed.remember({ stored: route, deleted: null });
    const parents = (name: string) => {
      const r = reviewed.lookup.readers('gateways', NS, name);
      return r.state === 'known' ? r.readers.map((x) => `${x.kind} ${x.namespace ?? NS}/${x.name}`) : r;
    };
    assert.deepEqual(parents('edge'), ['HTTPRoute front-ns/front']);
    assert.deepEqual(parents('local'), [], 'its own namespace\'s Gateway, not this one');
  });
});

describe('the live list of referrers (kube/object-reader.ts)', () => {
  /**
   * An API server of lists only: each collection path to its objects, served `limit` at a time
   * with a `continue` offset (a path given `'fails'` answers 500, one not given 404, as a kind
   * not served); `groups` the versions each API group's discovery document lists. Every request recorded.
   */
  async function listServer(collections: Record<string, object[] | 'fails'>, groups: Record<string, string[]> = {}): Promise<{ kc: KubeConfig; requests: string[]; close: () => Promise<void> }> {
    const requests: string[] = [];
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const group = /^\/apis\/([^/]+)$/.exec(url.pathname)?.[1];
      if (group !== undefined) {
        requests.push(url.pathname);
        const versions = groups[group];
        // The API server's own answer for a group it does not serve: a plain 404, no Status.
        if (versions === undefined) res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found');
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'APIGroup', apiVersion: 'v1', name: group, versions: versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v })) }));
        return;
      }
      if (collections[url.pathname] === 'fails') {
        requests.push(url.pathname);
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', code: 500, message: 'etcd is down' }));
        return;
      }
      const labelSelector = url.searchParams.get('labelSelector');
      const fieldSelector = url.searchParams.get('fieldSelector');
      const selectors = `${labelSelector !== null ? `&labelSelector=${labelSelector}` : ''}${fieldSelector !== null ? `&fieldSelector=${fieldSelector}` : ''}`;
      requests.push(`${url.pathname}?limit=${url.searchParams.get('limit') ?? ''}&continue=${url.searchParams.get('continue') ?? ''}${selectors}${String(req.headers.accept ?? '').includes('as=PartialObjectMetadataList') ? ' (metadata)' : ''}`);
      // The selectors the live lists give, as the API server applies them (one `key=value` each).
      const [labelKey, labelValue] = labelSelector?.split('=') ?? [];
      const named = fieldSelector?.startsWith('metadata.name=') === true ? fieldSelector.slice('metadata.name='.length) : undefined;
      const items = (collections[url.pathname] as object[] | undefined)?.filter((o) => {
        const m = (o as { metadata?: { name?: string; labels?: Record<string, string> } }).metadata;
        return (labelKey === undefined || m?.labels?.[labelKey] === labelValue) && (named === undefined || m?.name === named);
      });
      if (items === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not served' }));
        return;
      }
      const from = Number(url.searchParams.get('continue') || '0');
      const limit = Number(url.searchParams.get('limit') || String(items.length));
      const page = items.slice(from, from + limit);
      const next = from + limit < items.length ? String(from + limit) : undefined;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: next ? { continue: next } : {}, items: page }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'lists', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'deed', token: 't' }],
      contexts: [{ name: 'lists', cluster: 'lists', user: 'deed' }],
      currentContext: 'lists',
    });
    return { kc, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }
  const beta = stampedMetadata('EndpointSlice', 'beta', NS).metadata;

  test("a Service's StatefulSets, EndpointSlices, Endpoints and Ingresses are each listed page by page in its namespace; those that name it kept with their metadata and where they name it", async () => {
    const slices = Array.from({ length: 300 }, (_, i) => ({ metadata: { name: `s-${i}`, namespace: NS, uid: `s-${i}`, labels: { ...beta.labels, 'kubernetes.io/service-name': i % 100 === 0 ? 'api' : 'web' }, annotations: beta.annotations }, endpoints: [{ addresses: ['10.0.0.9'] }] }));
    const api = await listServer({
      [`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`]: slices,
      [`/api/v1/namespaces/${NS}/endpoints`]: [{ metadata: { name: 'api', namespace: NS } }, { metadata: { name: 'web', namespace: NS } }],
      [`/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`]: [{ metadata: { name: 'edge', namespace: NS }, spec: { tls: [{ secretName: 'api' }], rules: [{ http: { paths: [{ backend: { service: { name: 'api' } } }] } }] } }],
      // A StatefulSet's governing Service (rev-93): its pods' stable DNS names are published under it.
      [`/apis/apps/v1/namespaces/${NS}/statefulsets`]: [{ metadata: { name: 'db', namespace: NS }, spec: { serviceName: 'api' } }, { metadata: { name: 'cache', namespace: NS }, spec: { serviceName: 'cache-hl' } }],
    });
    try {
      const { createObjectReader } = await import('../src/kube/object-reader.js');
      const answer = (await createObjectReader(api.kc).read([{ resource: 'services', namespace: NS, name: 'api', readers: true }], 2000)).readers('services', NS, 'api');
      assert.equal(answer.state, 'known', JSON.stringify(answer));
      if (answer.state !== 'known') return;
      assert.deepEqual(answer.readers.map((r) => `${r.kind} ${r.name} ${r.reference?.path}`), [
        'StatefulSet db spec.serviceName',
        'Endpoints api metadata.name',
        'EndpointSlice s-0 metadata.labels["kubernetes.io/service-name"]',
        'EndpointSlice s-100 metadata.labels["kubernetes.io/service-name"]',
        'EndpointSlice s-200 metadata.labels["kubernetes.io/service-name"]',
        'Ingress edge spec.rules[0].http.paths[0].backend.service.name',
      ]);
      // Its stamps, and nothing past its metadata (an EndpointSlice's endpoints are not kept).
      const slice = answer.readers.find((r) => r.kind === 'EndpointSlice')!;
      assert.deepEqual(slice.found, { state: 'found', metadata: { uid: 's-0', labels: { ...beta.labels, 'kubernetes.io/service-name': 'api' }, annotations: beta.annotations } });
      // No pod is listed for a Service's name; its slices and its Endpoints are selected by the API server, not the namespace's listed whole.
      assert.ok(!api.requests.some((r) => r.includes('/pods')), api.requests.join(', '));
      assert.deepEqual(
        api.requests.filter((r) => r.includes('/endpointslices') || r.includes('/endpoints?')).map((r) => r.replace(/\?limit=\d+&continue=/, '?')).sort(),
        [`/api/v1/namespaces/${NS}/endpoints?&fieldSelector=metadata.name=api (metadata)`, `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?&labelSelector=kubernetes.io/service-name=api (metadata)`],
      );
      assert.ok(!api.requests.some((r) => (r.includes('/ingresses') || r.includes('/statefulsets')) && r.includes('Selector')), 'an Ingress and a StatefulSet name it in their specs: listed whole');
      // What names a Service in metadata only (a slice's label, an Endpoints' name) is listed as metadata; an Ingress's backends and a set's serviceName are in their specs.
      const listedAs = (kind: string) => [...new Set(api.requests.filter((r) => r.includes(`/${kind}?`)).map((r) => r.endsWith('(metadata)')))];
      assert.deepEqual([listedAs('endpointslices'), listedAs('endpoints'), listedAs('ingresses'), listedAs('statefulsets')], [[true], [true], [false], [false]]);
    } finally {
      await api.close();
    }
  });

  test("a workload's HPAs, by the kind and group their scaleTargetRef names; a list that fails leaves it unknown", async () => {
    const hpa = (name: string, kind: string, target: string) => ({ metadata: { name, namespace: NS }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind, name: target } } });
    const api = await listServer({ [`/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`]: [hpa('a', 'Deployment', 'web'), hpa('b', 'StatefulSet', 'web'), hpa('c', 'Deployment', 'other')], '/apis/autoscaling/v2/namespaces/elsewhere/horizontalpodautoscalers': 'fails' }, { autoscaling: ['v2', 'v1'] });
    try {
      const { createObjectReader } = await import('../src/kube/object-reader.js');
      const reader = createObjectReader(api.kc);
      const answer = (await reader.read([{ resource: 'deployments', namespace: NS, name: 'web', readers: true }], 2000)).readers('deployments', NS, 'web');
      assert.deepEqual(answer.state === 'known' ? answer.readers.map((r) => r.name) : answer, ['a']);
      // In another namespace the list fails: what names the workload cannot be told.
      const failed = (await reader.read([{ resource: 'deployments', namespace: 'elsewhere', name: 'web', readers: true }], 2000)).readers('deployments', 'elsewhere', 'web');
      assert.equal(failed.state, 'unknown');
    } finally {
      await api.close();
    }
  });
  test("a Secret's or ConfigMap's readers read live (the cache not current): its pods, Ingresses and Gateways in its namespace; Gateways at whichever version is served, none where the Gateway API is not installed; a failing list leaves it unknown", async () => {
    const GW = 'gateway.networking.k8s.io';
    const readersIn = (ns: string) => ({ [`/api/v1/namespaces/${ns}/pods`]: [], [`/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`]: [] });
    const gateway = { metadata: { name: 'edge', namespace: NS, uid: 'edge', labels: beta.labels }, spec: { listeners: [{ name: 'https', tls: { certificateRefs: [{ name: 'creds' }] } }], infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: 'gw-params' } } } };
    const { createObjectReader } = await import('../src/kube/object-reader.js');
    const names = (answer: Readers) => (answer.state === 'known' ? answer.readers.map((r) => `${r.kind} ${r.name}`) : answer);
    // Installed at v1beta1 only: 404 at the row's v1, listed at the version the group serves.
    const api = await listServer({ ...readersIn(NS), [`/apis/${GW}/v1beta1/namespaces/${NS}/gateways`]: [gateway], [`/apis/${GW}/v1beta1/namespaces/${NS}/listenersets`]: [], [`/api/v1/namespaces/broken/pods`]: [], [`/apis/networking.k8s.io/v1/namespaces/broken/ingresses`]: [], [`/apis/${GW}/v1beta1/namespaces/broken/gateways`]: 'fails' }, { [GW]: ['v1beta1'] });
    try {
      const reader = createObjectReader(api.kc);
      assert.deepEqual(names((await reader.read([{ resource: 'secrets', namespace: NS, name: 'creds', readers: true }], 2000)).readers('secrets', NS, 'creds')), ['Gateway edge']);
      assert.deepEqual(names((await reader.read([{ resource: 'configmaps', namespace: NS, name: 'gw-params', readers: true }], 2000)).readers('configmaps', NS, 'gw-params')), ['Gateway edge']);
      assert.equal((await reader.read([{ resource: 'secrets', namespace: 'broken', name: 'creds', readers: true }], 2000)).readers('secrets', 'broken', 'creds').state, 'unknown');
    } finally {
      await api.close();
    }
    const bare = await listServer(readersIn(NS));
    try {
      assert.deepEqual((await createObjectReader(bare.kc).read([{ resource: 'secrets', namespace: NS, name: 'creds', readers: true }], 2000)).readers('secrets', NS, 'creds'), { state: 'known', readers: [] });
    } finally {
      await bare.close();
    }
  });

  test("a Service's Gateway API routes (those of the namespaces its ReferenceGrants admit too; a Gateway's routes and ListenerSets across the cluster) are listed at whichever version the cluster serves, and read as none where the kind is not installed; a list that fails leaves it unknown", async () => {
    const GW = 'gateway.networking.k8s.io';
    // A Service's built-in referrers, none of them naming it.
    const builtIns = (ns: string) => ({ [`/apis/apps/v1/namespaces/${ns}/statefulsets`]: [], [`/api/v1/namespaces/${ns}/endpoints`]: [], [`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`]: [], [`/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`]: [] });
    const route = (name: string, spec: object) => ({ metadata: { name, namespace: NS, uid: name, labels: beta.labels, annotations: beta.annotations }, spec });
    const api = await listServer(
      {
        ...builtIns(NS),
        ...builtIns('broken'),
        [`/apis/${GW}/v1/namespaces/${NS}/httproutes`]: [route('web', { rules: [{ backendRefs: [{ name: 'web' }] }] }), route('to-api', { parentRefs: [{ name: 'shared-gw' }], rules: [{ backendRefs: [{ name: 'api', port: 80 }] }] })],
        // TLSRoute at v1 alone (the row reads v1alpha2): served at another version of its group.
        [`/apis/${GW}/v1/namespaces/${NS}/tlsroutes`]: [route('mesh', { parentRefs: [{ group: '', kind: 'Service', name: 'api' }] })],
        [`/apis/${GW}/v1/namespaces/broken/httproutes`]: 'fails',
      },
      { [GW]: ['v1'] },
    );
    try {
      const { createObjectReader } = await import('../src/kube/object-reader.js');
      const reader = createObjectReader(api.kc);
      const answer = (await reader.read([{ resource: 'services', namespace: NS, name: 'api', readers: true }], 2000)).readers('services', NS, 'api');
      assert.deepEqual(answer.state === 'known' ? answer.readers.map((r) => `${r.kind} ${r.name} ${r.reference?.path}`) : answer, ['HTTPRoute to-api spec.rules[0].backendRefs[0]', 'TLSRoute mesh spec.parentRefs[0]']);
      // GRPCRoute, TCPRoute, UDPRoute: 404 at the row's version, the group's discovery asked (once for the five), no other version to list.
      assert.equal(api.requests.filter((r) => r === `/apis/${GW}`).length, 1, api.requests.join(', '));
      assert.ok(api.requests.some((r) => r.startsWith(`/apis/${GW}/v1alpha2/namespaces/${NS}/tlsroutes?`)) && api.requests.some((r) => r.startsWith(`/apis/${GW}/v1/namespaces/${NS}/tlsroutes?`)), api.requests.join(', '));
      // A cluster without the Gateway API: every route kind answers 404, and so does the group.
      const bare = await listServer(builtIns(NS));
      try {
        const none = (await createObjectReader(bare.kc).read([{ resource: 'services', namespace: NS, name: 'api', readers: true }], 2000)).readers('services', NS, 'api');
        assert.deepEqual(none, { state: 'known', readers: [] });
      } finally {
        await bare.close();
      }
      const failed = (await reader.read([{ resource: 'services', namespace: 'broken', name: 'api', readers: true }], 2000)).readers('services', 'broken', 'api');
      assert.equal(failed.state, 'unknown');
      // A route in another namespace names the Service as a backend where the Service's namespace grants it (a ReferenceGrant there): listed there too.
      const granted = await listServer(
        {
          ...builtIns(NS),
          [`/apis/${GW}/v1/namespaces/${NS}/httproutes`]: [],
          [`/apis/${GW}/v1beta1/namespaces/${NS}/referencegrants`]: [
            { metadata: { name: 'front-to-api', namespace: NS }, spec: { from: [{ group: GW, kind: 'HTTPRoute', namespace: 'front' }], to: [{ group: '', kind: 'Service', name: 'api' }] } },
            { metadata: { name: 'other-to-web', namespace: NS }, spec: { from: [{ group: GW, kind: 'HTTPRoute', namespace: 'other' }], to: [{ group: '', kind: 'Service', name: 'web' }] } },
            { metadata: { name: 'tls-any', namespace: NS }, spec: { from: [{ group: GW, kind: 'TLSRoute', namespace: 'edge' }], to: [{ group: '', kind: 'Service' }] } },
          ],
          [`/apis/${GW}/v1/namespaces/front/httproutes`]: [
            { ...route('across', { rules: [{ backendRefs: [{ name: 'api', namespace: NS }] }] }), metadata: { ...route('across', {}).metadata, namespace: 'front' } },
            { ...route('own-api', { rules: [{ backendRefs: [{ name: 'api' }] }] }), metadata: { ...route('own-api', {}).metadata, namespace: 'front' } },
          ],
          [`/apis/${GW}/v1/namespaces/edge/tlsroutes`]: [{ ...route('tls', { rules: [{ backendRefs: [{ name: 'api', namespace: NS }] }] }), metadata: { ...route('tls', {}).metadata, namespace: 'edge' } }],
        },
        { [GW]: ['v1', 'v1beta1'] },
      );
      try {
        const backends = (await createObjectReader(granted.kc).read([{ resource: 'services', namespace: NS, name: 'api', readers: true }], 2000)).readers('services', NS, 'api');
        assert.deepEqual(backends.state === 'known' ? backends.readers.map((r) => `${r.kind} ${r.namespace ?? NS}/${r.name} ${r.reference?.path}`) : backends, ['HTTPRoute front/across spec.rules[0].backendRefs[0]', 'TLSRoute edge/tls spec.rules[0].backendRefs[0]']);
        // Only the namespaces granted for this Service: not `other` (its grant is for `web`), and no namespace's routes listed whole across the cluster.
        assert.ok(!granted.requests.some((r) => r.includes('/namespaces/other/') || /\/v1\/httproutes\?/.test(r)), granted.requests.join(', '));
      } finally {
        await granted.close();
      }
      // A Gateway's: the routes and ListenerSets whose parent it is.
      const gw = await listServer(
        {
          // Across the cluster: in the Gateway's namespace, and in another naming it by namespace (the one there naming its own `edge` does not).
          [`/apis/${GW}/v1/httproutes`]: [
            route('on-gw', { parentRefs: [{ name: 'edge' }] }),
            route('on-set', { parentRefs: [{ group: GW, kind: 'ListenerSet', name: 'edge' }] }),
            { ...route('across', { parentRefs: [{ name: 'edge', namespace: NS }] }), metadata: { ...route('across', {}).metadata, namespace: 'front' } },
            { ...route('own-edge', { parentRefs: [{ name: 'edge' }] }), metadata: { ...route('own-edge', {}).metadata, namespace: 'front' } },
          ],
          // And in the Gateway's namespace alone.
          [`/apis/${GW}/v1/namespaces/${NS}/httproutes`]: [route('on-gw', { parentRefs: [{ name: 'edge' }] }), route('on-set', { parentRefs: [{ group: GW, kind: 'ListenerSet', name: 'edge' }] })],
          [`/apis/${GW}/v1/namespaces/${NS}/listenersets`]: [route('extra', { parentRef: { name: 'edge' } }), route('other', { parentRef: { name: 'main' } })],
          [`/apis/${GW}/v1/listenersets`]: [
            route('extra', { parentRef: { name: 'edge' } }),
            route('other', { parentRef: { name: 'main' } }),
            { ...route('extra-across', { parentRef: { name: 'edge', namespace: NS } }), metadata: { ...route('extra-across', {}).metadata, namespace: 'front' } },
          ],
        },
        { [GW]: ['v1'] },
      );
      try {
        const parents = (await createObjectReader(gw.kc).read([{ resource: 'gateways', namespace: NS, name: 'edge', readers: true }], 2000)).readers('gateways', NS, 'edge');
        assert.deepEqual(parents.state === 'known' ? parents.readers.map((r) => `${r.kind} ${r.namespace ?? NS}/${r.name} ${r.reference?.path}`) : parents, [
          'HTTPRoute shared/on-gw spec.parentRefs[0]',
          'HTTPRoute front/across spec.parentRefs[0]',
          'ListenerSet shared/extra spec.parentRef',
          'ListenerSet front/extra-across spec.parentRef',
        ]);
        // Listed across the cluster: a parent may be named from any namespace.
        assert.ok(gw.requests.some((r) => r.startsWith(`/apis/${GW}/v1/httproutes?`)) && !gw.requests.some((r) => r.includes(`/namespaces/${NS}/httproutes`)), gw.requests.join(', '));
        // A Gateway whose listeners take routes from every namespace, and ListenerSets from its own (the read plan's `across`): routes across the cluster, ListenerSets in its namespace.
        gw.requests.length = 0;
        const routesAcross = (await createObjectReader(gw.kc).read([{ resource: 'gateways', namespace: NS, name: 'edge', readers: true, across: ['httproutes'] }], 2000)).readers('gateways', NS, 'edge');
        assert.deepEqual(routesAcross.state === 'known' ? routesAcross.readers.map((r) => `${r.kind} ${r.namespace ?? NS}/${r.name}`) : routesAcross, ['HTTPRoute shared/on-gw', 'HTTPRoute front/across', 'ListenerSet shared/extra']);
        assert.ok(gw.requests.some((r) => r.startsWith(`/apis/${GW}/v1/namespaces/${NS}/listenersets?`)) && !gw.requests.some((r) => r.startsWith(`/apis/${GW}/v1/listenersets?`)), gw.requests.join(', '));
        // One that takes both from its own namespace only: nothing is listed across the cluster.
        gw.requests.length = 0;
        const own = (await createObjectReader(gw.kc).read([{ resource: 'gateways', namespace: NS, name: 'edge', readers: true, across: [] }], 2000)).readers('gateways', NS, 'edge');
        assert.deepEqual(own.state === 'known' ? own.readers.map((r) => `${r.kind} ${r.namespace ?? NS}/${r.name}`) : own, ['HTTPRoute shared/on-gw', 'ListenerSet shared/extra']);
        assert.ok(gw.requests.length > 0 && gw.requests.every((r) => !/\/v1\/(httproutes|listenersets|xlistenersets|grpcroutes)\?/.test(r)), gw.requests.join(', '));
      } finally {
        await gw.close();
      }
    } finally {
      await api.close();
    }
  });
});
