import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run as runCel } from '@bufbuild/cel';
import { parseAllDocuments, stringify } from 'yaml';
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1CronJob,
  V1Deployment,
  V1MutatingWebhookConfiguration,
  V1PodDisruptionBudget,
  V1PodSpec,
  V1NetworkPolicy,
  V1Service,
  V1ServiceAccount,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { loadConfig, parseConfigText } from '../src/config/load.js';
import { DEFAULT_WORKLOAD_CONTROLLERS, ringKeyFile } from '../src/config/schema.js';
import { renderManifests, DEFAULT_POLICY, REAPER_NODE_OPTIONS, SERVE_ARGS } from '../src/install/manifests.js';
import { policyReportCrd } from '../src/install/policy-report-crd.js';
import { resolveRequester } from '../src/policy/requester/identity.js';
import { compilePolicy } from '../src/policy/policy.js';
import { generateCertificates } from '../src/server/certificates.js';
import { deed } from './cli-process.js';
import { FIXTURE_POLICY, toCel } from './helpers.js';
/** The External Secrets generators an ExternalSecret's generatorRef may name (kinds.ts), read with get: those that hold credentials. */
const GENERATORS = ['acraccesstokens', 'ecrauthorizationtokens', 'stssessiontokens', 'gcraccesstokens', 'githubaccesstokens', 'gitlabdeploytokens', 'vaultdynamicsecrets', 'webhooks', 'grafanas', 'mfas', 'quayaccesstokens', 'cloudsmithaccesstokens'];
import { keepStampsCondition, operatorStampsCondition } from '../src/install/kind-rules.js';

type Obj = KubernetesObject & Record<string, unknown>;
type Webhook = V1MutatingWebhookConfiguration['webhooks'] extends (infer W)[] | undefined ? W : never;

const NS = 'sandbox-deed';

function find<T>(objects: Obj[], kind: string, name?: string): T {
  const hits = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata?.name === name));
  assert.equal(hits.length, 1, `exactly one ${kind}${name ? ` ${name}` : ''}`);
  return hits[0] as T;
}

function webhooksOf(objects: Obj[]): Array<{ kind: string; hook: Webhook }> {
  const out: Array<{ kind: string; hook: Webhook }> = [];
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
    const config = find<V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration>(objects, kind);
    for (const hook of config.webhooks ?? []) out.push({ kind, hook: hook as Webhook });
  }
  return out;
}

/** The resources a webhook sees for an operation, as "group/version/resource". */
function covered(hook: Webhook, operation: string): string[] {
  const out: string[] = [];
  for (const rule of hook.rules ?? [])
    if (rule.operations?.includes(operation) || rule.operations?.includes('*'))
      for (const g of rule.apiGroups ?? []) for (const v of rule.apiVersions ?? []) for (const r of rule.resources ?? []) out.push(`${g}/${v}/${r}`);
  return out.sort();
}

const CORE_AND_NETWORKING = ['/v1/configmaps', '/v1/persistentvolumeclaims', '/v1/pods', '/v1/secrets', 'networking.k8s.io/v1/networkpolicies'];
// Leases are stamped too: a run lease's renewals and delete are its environment's.
const LEASE_RULE = 'coordination.k8s.io/v1/leases';
const WORKLOADS = [
  'apps/v1/daemonsets',
  'apps/v1/deployments',
  'apps/v1/replicasets',
  'apps/v1/statefulsets',
  'batch/v1/cronjobs',
  'batch/v1/jobs',
  '/v1/podtemplates',
  '/v1/replicationcontrollers',
];

/** The webhook that keeps Deed's stamps where a write drops every one (src/policy/stamps/kept-stamps.ts). */
const KEEPS_STAMPS = 'stamps.mutate.deed.dev';

/** The webhook that keeps Deed's stamps on a listed operator's refresh of what it made (kept-stamps.ts keptOperatorStamps). */
const KEEPS_OPERATOR_STAMPS = 'operator-stamps.mutate.deed.dev';

/** A webhook's conditions on the request alone: the keepers' conditions on the objects are tested on their own (test/kept-stamps.test.ts, test/operator-made.test.ts). */
function requesterConditions(hook: Webhook) {
  return (hook.matchConditions ?? []).filter((c) => c.name !== 'drops-every-stamp' && c.name !== 'listed-operator');
}

function serviceAccountUser(namespace: string, name: string) {
  return { username: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'] };
}

function podSpecs(objects: Obj[]): Array<{ owner: string; spec: V1PodSpec }> {
  const out: Array<{ owner: string; spec: V1PodSpec }> = [];
  for (const o of objects) {
    if (o.kind === 'Deployment') out.push({ owner: `Deployment ${o.metadata!.name}`, spec: (o as V1Deployment).spec!.template.spec! });
    if (o.kind === 'CronJob') out.push({ owner: `CronJob ${o.metadata!.name}`, spec: (o as V1CronJob).spec!.jobTemplate.spec!.template.spec! });
  }
  return out;
}

/** The kinds the webhook lists, never watches: their live objects name a Service or a workload (kinds.ts `followsByName`). */
const FOLLOWED_BY_NAME = [
  { apiGroups: [''], resources: ['endpoints'], verbs: ['list'] },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list'] },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: ['list'] },
  // (ListenerSets, which name a Gateway, are listed and watched already: above.)
  { apiGroups: ['gateway.networking.k8s.io'], resources: ['httproutes', 'grpcroutes', 'tlsroutes', 'tcproutes', 'udproutes'], verbs: ['list'] },
  // The ReferenceGrants of a Service's namespace: which other namespaces' routes may name it.
  { apiGroups: ['gateway.networking.k8s.io'], resources: ['referencegrants'], verbs: ['list'] },
];

describe('deed manifests', () => {
  let objects: Obj[];
  let caPem: string;
  let policyFile: string;

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-manifests-'));
    const certs = await generateCertificates(join(dir, 'certs'), [`deed.${NS}.svc`]);
    caPem = readFileSync(certs.caFile, 'utf8');
    policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, `# operators keep notes here\n${stringify(FIXTURE_POLICY)}`);
    const out = deed(['manifests', '--deed-namespace', NS, '--image', 'registry.test/deed:1', '--ca-bundle', certs.caFile, '--config', policyFile, '--reaper-environment', 'alpha']);
    assert.equal(out.status, 0, out.stderr);
    const docs = parseAllDocuments(out.stdout);
    assert.ok(Array.isArray(docs));
    for (const d of docs) assert.deepEqual(d.errors, []);
    objects = docs.map((d) => d.toJS() as Obj);
  });

  test('prints one YAML document per object, each with apiVersion, kind and name', () => {
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata?.name}`),
      [
        `Namespace/${NS}`,
        'ServiceAccount/deed',
        'ClusterRole/deed',
        'ClusterRoleBinding/deed',
        'ConfigMap/deed-policy',
        'Deployment/deed',
        'PodDisruptionBudget/deed',
        'Service/deed',
        'NetworkPolicy/deed',
        'MutatingWebhookConfiguration/deed',
        'ValidatingWebhookConfiguration/deed',
        'ValidatingAdmissionPolicy/deed-review-scope',
        'ValidatingAdmissionPolicyBinding/deed-review-scope',
        'ValidatingAdmissionPolicy/deed-namespace-delete',
        'ValidatingAdmissionPolicyBinding/deed-namespace-delete',
        'ValidatingAdmissionPolicy/deed-namespace-labels',
        'ValidatingAdmissionPolicyBinding/deed-namespace-labels',
        'ValidatingAdmissionPolicy/deed-cronjob-active',
        'ValidatingAdmissionPolicyBinding/deed-cronjob-active',
        'ValidatingAdmissionPolicy/deed-create-stamps',
        'ValidatingAdmissionPolicyBinding/deed-create-stamps',
        'ClusterRole/deed-reaper',
        'ValidatingAdmissionPolicy/deed-reaper-delete',
        'ValidatingAdmissionPolicyBinding/deed-reaper-delete',
        'ServiceAccount/deed-reaper-alpha',
        'ClusterRoleBinding/deed-reaper-alpha',
        'CronJob/deed-reaper-alpha',
      ],
    );
    for (const o of objects) assert.ok(o.apiVersion, `${o.kind} has an apiVersion`);
    for (const o of objects.filter((x) => !['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].includes(x.kind!)))
      assert.equal(o.metadata?.namespace, NS, `${o.kind} ${o.metadata?.name} lives in ${NS}`);
  });

  test('both webhooks take v1 reviews, declare no side effects, fail closed, time out under 10 s and match equivalent versions', () => {
    const hooks = webhooksOf(objects);
    assert.equal(hooks.length, 6, "the first pair, the default row's, and the two that keep stamps");
    for (const { kind, hook } of hooks) {
      assert.deepEqual(hook.admissionReviewVersions, ['v1'], kind);
      assert.equal(hook.sideEffects, 'None', kind);
      assert.equal(hook.failurePolicy, 'Fail', kind);
      assert.ok(hook.timeoutSeconds !== undefined && hook.timeoutSeconds >= 1 && hook.timeoutSeconds < 10, `${kind} timeout ${hook.timeoutSeconds}`);
      assert.equal(hook.matchPolicy, 'Equivalent', kind);
      for (const rule of hook.rules ?? []) assert.equal(rule.scope, 'Namespaced', kind);
    }
  });

  test('the mutating webhook sees CREATE of pods, secrets, configmaps, PVCs, networkpolicies and leases, CREATE and UPDATE of workload templates, UPDATE of networkpolicies (their selector keeps its scope), judges a CREATE whole on /admit, and is reinvoked if needed', () => {
    const hook = find<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration').webhooks![0]!;
    assert.deepEqual(covered(hook, 'CREATE'), [...CORE_AND_NETWORKING, LEASE_RULE, ...WORKLOADS].sort());
    assert.deepEqual(covered(hook, 'UPDATE'), [...WORKLOADS, 'networking.k8s.io/v1/networkpolicies'].sort());
    for (const op of ['DELETE', 'CONNECT']) assert.deepEqual(covered(hook, op), [], `no ${op}`);
    assert.equal(hook.reinvocationPolicy, 'IfNeeded');
    assert.equal(hook.clientConfig.service?.path, '/admit');
  });

  test('the validating webhook sees every door but the CREATEs the mutating webhook judges whole: the five kinds and leases, the subresources that write them, evictions, bindings, tokens, templates, and snapshots with their status and deletion, and every door of a stamped workload', () => {
    const hook = find<V1ValidatingWebhookConfiguration>(objects, 'ValidatingWebhookConfiguration').webhooks![0]!;
    const templates = [...WORKLOADS, 'snapshot.storage.k8s.io/v1/volumesnapshots'];
    const workloadDoors = [
      ...['deployments', 'replicasets', 'statefulsets'].flatMap((r) => [`apps/v1/${r}/status`, `apps/v1/${r}/scale`]),
      'apps/v1/daemonsets/status',
      'batch/v1/jobs/status',
      'batch/v1/cronjobs/status',
      '/v1/replicationcontrollers/status',
      '/v1/replicationcontrollers/scale',
    ];
    assert.deepEqual(covered(hook, 'CREATE'), ['snapshot.storage.k8s.io/v1/volumesnapshots', '/v1/bindings', '/v1/pods/binding', '/v1/pods/eviction', '/v1/serviceaccounts/token'].sort());
    assert.deepEqual(
      covered(hook, 'UPDATE'),
      [...CORE_AND_NETWORKING, LEASE_RULE, ...templates, ...workloadDoors, '/v1/pods/ephemeralcontainers', '/v1/pods/status', '/v1/pods/resize', '/v1/persistentvolumeclaims/status', 'snapshot.storage.k8s.io/v1/volumesnapshots/status'].sort(),
    );
    // A snapshot is its source claim's environment's: deleting it (and taking its name) is guarded as a write of that claim.
    assert.deepEqual(covered(hook, 'DELETE'), [...CORE_AND_NETWORKING, LEASE_RULE, ...WORKLOADS, 'snapshot.storage.k8s.io/v1/volumesnapshots'].sort());
    assert.deepEqual(covered(hook, 'CONNECT'), ['/v1/pods/attach', '/v1/pods/exec', '/v1/pods/portforward', '/v1/pods/proxy', '/v1/services/proxy']);
    assert.equal(hook.clientConfig.service?.path, '/validate');
  });

  test('both webhooks call the Service on 443 and trust the given CA as caBundle', () => {
    const svc = find<V1Service>(objects, 'Service', 'deed');
    for (const { kind, hook } of webhooksOf(objects)) {
      assert.deepEqual({ ...hook.clientConfig.service, path: undefined }, { namespace: NS, name: svc.metadata!.name, port: 443, path: undefined }, kind);
      assert.equal(Buffer.from(hook.clientConfig.caBundle!, 'base64').toString('utf8').trim(), caPem.trim(), kind);
    }
  });

  test('without a CA bundle no caBundle is rendered, to be injected or patched in', () => {
    const plain = renderManifests({ namespace: NS, image: 'x' }) as Obj[];
    for (const { kind, hook } of webhooksOf(plain)) assert.equal(hook.clientConfig.caBundle, undefined, kind);
  });

  test("the operators' stamps keeper sees UPDATEs of Secrets on /admit, and only a listed controller's of an environment's", () => {
    const hook = find<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration').webhooks!.find((w) => w.name === KEEPS_OPERATOR_STAMPS)!;
    assert.deepEqual(hook.rules, [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'], scope: 'Namespaced' }]);
    assert.equal(hook.clientConfig.service?.path, '/admit');
    assert.deepEqual(hook.matchConditions?.find((c) => c.name === 'listed-operator')?.expression, operatorStampsCondition('deed.dev', DEFAULT_WORKLOAD_CONTROLLERS));
    assert.deepEqual(requesterConditions(hook), find<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration').webhooks![0]!.matchConditions);
  });

  test('the stamps keeper sees every namespaced UPDATE of an object itself, on /admit, and only those that drop every one of its stamps', () => {
    const hook = find<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration').webhooks!.find((w) => w.name === KEEPS_STAMPS)!;
    assert.deepEqual(hook.rules, [{ operations: ['UPDATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Namespaced' }]);
    assert.equal(hook.clientConfig.service?.path, '/admit');
    assert.deepEqual(hook.matchConditions?.find((c) => c.name === 'drops-every-stamp')?.expression, keepStampsCondition('deed.dev'));
    // Its other conditions are the requester's, as every webhook's.
    assert.deepEqual(requesterConditions(hook), find<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration').webhooks![0]!.matchConditions);
  });

  test("the namespace selector is opt-in by label and excludes kube-system and Deed's namespace by the API server's name label", () => {
    for (const { kind, hook } of webhooksOf(objects)) {
      assert.deepEqual(
        hook.namespaceSelector,
        {
          matchExpressions: [
            { key: 'deed.dev/sandbox', operator: 'In', values: ['enabled'] },
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', NS] },
          ],
        },
        kind,
      );
      assert.equal(hook.objectSelector, undefined, `${kind}: no object selector, which clients could dodge by labelling`);
    }
  });

  const requesters = [
    { who: "Deed's own service account", user: serviceAccountUser(NS, 'deed'), reviewed: false },
    { who: 'a kube-system controller that makes nothing from a template', user: serviceAccountUser('kube-system', 'namespace-controller'), reviewed: false },
    { who: 'a runner service account', user: serviceAccountUser('sandbox-a', 'runner'), reviewed: true },
    { who: "the reaper, whose deletes must be guarded", user: serviceAccountUser(NS, 'deed-reaper-alpha'), reviewed: true },
    { who: 'a service account named like kube-system in another namespace', user: serviceAccountUser('kube-system-x', 'deed'), reviewed: true },
    { who: 'a human admin', user: { username: 'kube-lab-admin', groups: ['system:authenticated'] }, reviewed: true },
    { who: 'a user who calls itself kube-system in a label-like username', user: { username: 'kube-system', groups: ['system:authenticated'] }, reviewed: true },
  ];
  for (const { who, user, reviewed } of requesters) {
    test(`matchConditions ${reviewed ? 'send' : 'skip'} requests from ${who}`, () => {
      for (const { kind, hook } of webhooksOf(objects)) {
        const request = toCel({ userInfo: { ...user, extra: {} }, operation: 'CREATE', namespace: 'sandbox-a', resource: { group: 'labs.example', version: 'v1', resource: 'virtualmachines' } });
        const results = requesterConditions(hook).map((c) => runCel(c.expression, { request } as never));
        for (const r of results) assert.equal(typeof r, 'boolean', `${kind}: every condition evaluates to a bool`);
        assert.equal(results.every((r) => r === true), reviewed, kind);
      }
    });
  }

  test("a workload controller's creations and its changes of owner references are sent; its other writes, and its writes of subresources, are not", () => {
    const controller = { ...serviceAccountUser('kube-system', 'replicaset-controller'), extra: {} };
    const refs = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'lab', uid: 'u-1', controller: true }];
    const pod = (ownerReferences?: unknown[]) => toCel({ metadata: { name: 'p', ...(ownerReferences ? { ownerReferences } : {}) } });
    const cases: Array<[string, Record<string, unknown>, boolean]> = [
      // A write to the object itself carries no subResource key (kube-apiserver v1.36: "no such key: subResource").
      ['a CREATE', { operation: 'CREATE', object: pod(refs), oldObject: null }, true],
      ['an adoption (an UPDATE that adds its owner reference)', { operation: 'UPDATE', object: pod(refs), oldObject: pod() }, true],
      ['a release (an UPDATE that removes it)', { operation: 'UPDATE', object: pod(), oldObject: pod(refs) }, true],
      ['an UPDATE that keeps the owner references', { operation: 'UPDATE', object: pod(refs), oldObject: pod(refs) }, false],
      ['a status write', { operation: 'UPDATE', subResource: 'status', object: pod(refs), oldObject: pod() }, false],
      ['a DELETE', { operation: 'DELETE', object: null, oldObject: pod(refs) }, false],
    ];
    // Pods are the first pair's; the default pair shares the same condition on the requester.
    for (const { kind, hook } of webhooksOf(objects).filter(({ hook }) => !hook.name.startsWith('default.'))) {
      for (const [what, fields, reviewed] of cases) {
        const { object, oldObject, ...rest } = fields;
        const request = toCel({ userInfo: controller, namespace: 'sandbox-a', resource: { group: '', version: 'v1', resource: 'pods' }, ...rest });
        const results = requesterConditions(hook).map((c) => runCel(c.expression, { request, object, oldObject } as never));
        for (const r of results) assert.equal(typeof r, 'boolean', `${kind} ${hook.name}, ${what}: every condition evaluates to a bool`);
        assert.equal(results.every((r) => r === true), reviewed, `${kind} ${hook.name}: ${what}`);
      }
    }
  });

  test("the default row's webhooks see every namespaced kind but the first pair's and the exceptions: a custom resource, a Service, an Ingress, not an event, a lease, a pod or a ConfigMap (rows of their own)", () => {
    const hooks = webhooksOf(objects).filter(({ hook }) => hook.name.startsWith('default.'));
    assert.deepEqual(hooks.map(({ hook }) => hook.name), ['default.mutate.deed.dev', 'default.validate.deed.dev']);
    const cases: Array<[string, string, boolean]> = [
      ['labs.example', 'virtualmachines', true],
      ['', 'services', true],
      ['networking.k8s.io', 'ingresses', true],
      ['policy', 'poddisruptionbudgets', true],
      ['apps', 'controllerrevisions', true],
      ['', 'events', false],
      ['events.k8s.io', 'events', false],
      ['coordination.k8s.io', 'leases', false],
      ['', 'pods', false],
      ['', 'configmaps', false],
      ['apps', 'deployments', false],
      ['snapshot.storage.k8s.io', 'volumesnapshots', false],
    ];
    for (const { hook } of hooks) {
      assert.deepEqual(hook.rules?.map((r) => [r.apiGroups, r.apiVersions, r.resources]).slice(0, 1), [[['*'], ['*'], ['*']]], hook.name);
      for (const [group, resource, reviewed] of cases) {
        const request = toCel({ userInfo: { username: 'system:serviceaccount:sandbox-a:runner', groups: ['system:authenticated'], extra: {} }, operation: 'CREATE', namespace: 'sandbox-a', resource: { group, version: 'v1', resource } });
        const results = requesterConditions(hook).map((c) => runCel(c.expression, { request } as never));
        assert.equal(results.every((r) => r === true), reviewed, `${hook.name}: ${group}/${resource}`);
      }
    }
    const main = webhooksOf(objects).filter(({ hook }) => !hook.name.startsWith('default.') && hook.name !== KEEPS_STAMPS && hook.name !== KEEPS_OPERATOR_STAMPS);
    for (const { hook } of main) assert.ok(!(hook.rules ?? []).some((r) => r.resources?.includes('*')), `${hook.name} names its kinds`);
  });

  test('the Deployment runs 2 non-root replicas with a read-only root filesystem, no capabilities and RuntimeDefault seccomp', () => {
    const dep = find<V1Deployment>(objects, 'Deployment', 'deed');
    assert.equal(dep.spec!.replicas, 2);
    assert.equal(dep.spec!.strategy?.rollingUpdate?.maxUnavailable, 0);
    const pod = dep.spec!.template.spec!;
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.ok((pod.securityContext?.runAsUser ?? 0) > 0);
    assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    assert.ok((pod.topologySpreadConstraints ?? []).length >= 1);
    for (const c of pod.topologySpreadConstraints ?? []) assert.deepEqual(c.labelSelector?.matchLabels, dep.spec!.selector.matchLabels);
    const [container] = pod.containers;
    assert.equal(pod.containers.length, 1);
    const sc = container!.securityContext!;
    assert.equal(sc.readOnlyRootFilesystem, true);
    assert.equal(sc.allowPrivilegeEscalation, false);
    assert.deepEqual(sc.capabilities?.drop, ['ALL']);
    assert.equal(sc.capabilities?.add, undefined);
    assert.equal(sc.privileged, undefined);
    assert.equal(sc.seccompProfile?.type, 'RuntimeDefault');
    assert.ok(container!.resources?.requests?.cpu && container!.resources?.requests?.memory);
    assert.ok(container!.resources?.limits?.memory);
    assert.equal(container!.image, 'registry.test/deed:1');
  });

  test('probes hit /healthz and /readyz over plain HTTP on the metrics port, 8080, apart from the webhook port, 8443', () => {
    const container = find<V1Deployment>(objects, 'Deployment', 'deed').spec!.template.spec!.containers[0]!;
    const port = container.ports!.find((p) => p.name === container.livenessProbe?.httpGet?.port);
    assert.equal(port?.containerPort, 8080);
    assert.deepEqual(
      [container.livenessProbe?.httpGet, container.readinessProbe?.httpGet],
      [
        { path: '/healthz', port: 'metrics', scheme: 'HTTP' },
        { path: '/readyz', port: 'metrics', scheme: 'HTTP' },
      ],
    );
    assert.deepEqual(container.args, SERVE_ARGS);
    assert.deepEqual(SERVE_ARGS.slice(0, 7), ['serve', '--host', '0.0.0.0', '--port', '8443', '--metrics-port', '8080']);
    assert.deepEqual(
      container.ports!.map((p) => [p.name, p.containerPort]),
      [
        ['https', 8443],
        ['metrics', 8080],
      ],
    );
  });

  test('the NetworkPolicy selects the Deployment pods, opens the webhook port to all, and the metrics port to no one but the node', () => {
    const policy = find<V1NetworkPolicy>(objects, 'NetworkPolicy', 'deed');
    const dep = find<V1Deployment>(objects, 'Deployment', 'deed');
    assert.deepEqual(policy.spec!.podSelector?.matchLabels, dep.spec!.selector.matchLabels);
    assert.deepEqual(policy.spec!.policyTypes, ['Ingress']);
    assert.deepEqual(policy.spec!.ingress, [{ ports: [{ port: 8443, protocol: 'TCP' }] }]);
  });

  test("--client-ca-configmap makes the webhook port require the API server's certificate, from a CA the pod mounts; --webhook-from admits the webhook port only from those CIDRs", () => {
    const out = deed(['manifests', '--deed-namespace', NS, '--client-ca-configmap', 'apiserver-client-ca', '--webhook-from', '10.0.0.0/24', '--webhook-from', 'fd00::/64']);
    assert.equal(out.status, 0, out.stderr);
    const strict = parseAllDocuments(out.stdout).map((d) => d.toJS() as Obj);
    const pod = find<V1Deployment>(strict, 'Deployment', 'deed').spec!.template.spec!;
    const args = pod.containers[0]!.args!;
    assert.equal(args[args.indexOf('--client-ca') + 1], '/etc/deed/client-ca/ca.crt');
    assert.ok(args.includes('--metrics-port'), 'probes keep a port without client certificates');
    const source = pod.volumes!.flatMap((v) => v.projected?.sources ?? []).find((src) => src.configMap?.name === 'apiserver-client-ca');
    assert.deepEqual(source?.configMap?.items, [{ key: 'ca.crt', path: 'client-ca/ca.crt' }]);
    const policy = find<V1NetworkPolicy>(strict, 'NetworkPolicy', 'deed');
    assert.deepEqual(policy.spec!.ingress, [{ ports: [{ port: 8443, protocol: 'TCP' }], from: [{ ipBlock: { cidr: '10.0.0.0/24' } }, { ipBlock: { cidr: 'fd00::/64' } }] }]);
    assert.equal(find<V1Deployment>(objects, 'Deployment', 'deed').spec!.template.spec!.containers[0]!.args!.includes('--client-ca'), false, 'off unless asked for');
  });

  test('a --webhook-from that is not a CIDR exits 2 with a message', () => {
    for (const bad of ['10.0.0.0', '10.0.0.0/33', 'example.com/8', '10.0.0.0/24/1']) {
      const out = deed(['manifests', '--webhook-from', bad]);
      assert.equal(out.status, 2, bad);
      assert.match(out.stderr, /must be a CIDR/);
    }
  });

  test('every file deed serve is told to read is one the pod mounts', () => {
    const pod = find<V1Deployment>(objects, 'Deployment', 'deed').spec!.template.spec!;
    const container = pod.containers[0]!;
    const mounted = new Set<string>();
    for (const m of container.volumeMounts ?? []) {
      const volume = pod.volumes!.find((v) => v.name === m.name)!;
      for (const source of volume.projected?.sources ?? [])
        for (const item of source.configMap?.items ?? source.secret?.items ?? []) mounted.add(`${m.mountPath}/${item.path}`);
    }
    const args = container.args!;
    const files = ['--config', '--tls-cert', '--tls-key'].map((flag) => args[args.indexOf(flag) + 1]!);
    const policy = parseConfigText(find<V1ConfigMap>(objects, 'ConfigMap', 'deed-policy').data!['policy.yaml']!);
    files.push(policy.attestation.keyFile!); // the pre-ring form; the ring's files are checked below
    for (const f of files) assert.ok(mounted.has(f), `${f} is mounted (mounted: ${[...mounted].join(', ')})`);
    const names = pod.volumes!.flatMap((v) => v.projected?.sources ?? []).map((s) => s.configMap?.name ?? s.secret?.name);
    assert.deepEqual(names, ['deed-policy', 'deed-tls', 'deed-attestation']);
  });

  test("the ConfigMap carries the operator's policy, comments kept, with the mounted key and each reaper acting for its environment", () => {
    const text = find<V1ConfigMap>(objects, 'ConfigMap', 'deed-policy').data!['policy.yaml']!;
    assert.match(text, /# operators keep notes here/);
    const policy = parseConfigText(text);
    assert.equal(policy.attestation.keyFile, '/etc/deed/attestation/key');
    assert.deepEqual(
      policy.environments.map((e) => e.id),
      ['alpha', 'beta'],
    );
    const acts = resolveRequester({ ...serviceAccountUser(NS, 'deed-reaper-alpha'), extra: {} }, compilePolicy(policy)).environment;
    assert.deepEqual(acts, { kind: 'one', id: 'alpha' });
  });

  test('the default cluster policy is the embedded default deed serve runs on', () => {
    assert.deepEqual(parseConfigText(DEFAULT_POLICY), loadConfig());
  });

  test('a changed policy changes the pod template, so the pods roll', () => {
    const checksum = (policy: string) =>
      (renderManifests({ namespace: NS, image: 'x', policy }).find((o) => o.kind === 'Deployment') as V1Deployment).spec!.template.metadata!.annotations!['checksum/policy'];
    assert.notEqual(checksum(DEFAULT_POLICY), checksum(stringify(FIXTURE_POLICY)));
    assert.equal(checksum(DEFAULT_POLICY), checksum(DEFAULT_POLICY));
  });

  test('the PodDisruptionBudget keeps one replica of exactly the Deployment pods', () => {
    const pdb = find<V1PodDisruptionBudget>(objects, 'PodDisruptionBudget', 'deed');
    const dep = find<V1Deployment>(objects, 'Deployment', 'deed');
    assert.equal(pdb.spec!.minAvailable, 1);
    assert.deepEqual(pdb.spec!.selector?.matchLabels, dep.spec!.selector.matchLabels);
    assert.deepEqual(dep.spec!.template.metadata!.labels, dep.spec!.selector.matchLabels);
  });

  test('the Service maps 443 to the pods’ https port, and 8080 to their metrics port', () => {
    const svc = find<V1Service>(objects, 'Service', 'deed');
    const dep = find<V1Deployment>(objects, 'Deployment', 'deed');
    assert.deepEqual(svc.spec!.selector, dep.spec!.selector.matchLabels);
    assert.deepEqual(
      svc.spec!.ports!.map((p) => [p.port, p.targetPort]),
      [
        [443, 'https'],
        [8080, 'metrics'],
      ],
    );
  });

  test('the webhook may read (get, list, watch) pods, ConfigMaps, claims, Secrets, service accounts, workloads (a scale names one, a controller-made object is its owner\'s) and Ingresses (the Secrets they name for TLS), list and watch namespaces, get snapshots (the claim a snapshot copied), the run lease a new object names and what a reference names (Services, DRA claims and claim templates, the Gateways and ListenerSets routes attach to, the cert-manager Issuers Certificates name and the CertificateRequests ACME Orders are made for, the KEDA TriggerAuthentications triggers name, the SecretStores ExternalSecrets name), and nothing else; the reaper may get, list and delete the five kinds, list namespaces and get leases (never list them)', () => {
    const bindings = objects.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') as unknown as V1ClusterRoleBinding[];
    const webhookBindings = bindings.filter((b) => (b.subjects ?? []).some((s) => s.name === 'deed'));
    assert.deepEqual(webhookBindings.map((b) => [b.metadata!.name, b.roleRef.name, b.subjects]), [['deed', 'deed', [{ kind: 'ServiceAccount', name: 'deed', namespace: NS }]]]);
    assert.deepEqual(find<V1ClusterRole>(objects, 'ClusterRole', 'deed').rules, [
      { apiGroups: [''], resources: ['pods', 'configmaps', 'persistentvolumeclaims', 'serviceaccounts', 'replicationcontrollers', 'secrets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: ['get', 'list', 'watch'] },
      // The Secrets an Ingress names for TLS, cached as a pod's reads are (reference.live-reader); listed too at a Service's CREATE.
      { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['get', 'list', 'watch'] },
      // Gateways and ListenerSets too (the certificates they serve, a Gateway's infrastructure ConfigMap), and read when a route names one as its parent.
      { apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways', 'listenersets', 'backendtlspolicies'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['gateway.networking.x-k8s.io'], resources: ['xlistenersets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['get'] },
      // The run lease a new object names: whose it is (its stamps) is read at that object's CREATE.
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
      // What a reference names (rules/reference-scope.ts): an Ingress's, an EndpointSlice's Service, a pod's DRA claim (below), a route's Gateway, a Certificate's Issuer; and the owner of what a listed operator makes (a Certificate, an ExternalSecret).
      { apiGroups: [''], resources: ['services'], verbs: ['get'] },
      { apiGroups: ['keda.sh'], resources: ['triggerauthentications'], verbs: ['get'] },
      { apiGroups: ['external-secrets.io'], resources: ['externalsecrets', 'secretstores'], verbs: ['get'] },
      { apiGroups: ['generators.external-secrets.io'], resources: GENERATORS, verbs: ['get'] },
      { apiGroups: ['argoproj.io'], resources: ['analysistemplates'], verbs: ['get'] },
      { apiGroups: ['cert-manager.io'], resources: ['certificates', 'certificaterequests', 'issuers'], verbs: ['get'] },
      // A pod's DRA claims and claim templates past a review's gets are listed (object-reader.ts, readListed).
      { apiGroups: ['resource.k8s.io'], resources: ['resourceclaims', 'resourceclaimtemplates'], verbs: ['get', 'list'] },
      // What names a Service or a workload and is followed there, listed at the CREATE of one (reference.live-reader).
      ...FOLLOWED_BY_NAME,
    ]);
    assert.equal(find<V1ServiceAccount>(objects, 'ServiceAccount', 'deed').automountServiceAccountToken, false, 'a token only where a pod asks for one');
    for (const { owner, spec } of podSpecs(objects)) assert.equal(spec.automountServiceAccountToken, true, owner);

    assert.deepEqual(objects.filter((o) => o.kind === 'Role'), []);
    const role = find<V1ClusterRole>(objects, 'ClusterRole', 'deed-reaper');
    const granted = new Set<string>();
    for (const rule of role.rules ?? []) {
      assert.equal(rule.resourceNames, undefined);
      assert.equal(rule.nonResourceURLs, undefined);
      for (const g of rule.apiGroups ?? []) for (const r of rule.resources ?? []) for (const v of rule.verbs) granted.add(`${g}/${r}:${v}`);
    }
    const expected = [];
    for (const r of ['/pods', '/secrets', '/configmaps', '/persistentvolumeclaims', 'networking.k8s.io/networkpolicies']) for (const v of ['get', 'list', 'delete']) expected.push(`${r}:${v}`);
    // The review scope: which namespaces opted in.
    expected.push('/namespaces:list');
    // Run leases: whether the Lease an object names is renewed, read by that name; never a
    // list, which another environment's flood of Leases could make fail.
    expected.push('coordination.k8s.io/leases:get');
    assert.deepEqual([...granted].sort(), expected.sort());

    const binding = find<V1ClusterRoleBinding>(objects, 'ClusterRoleBinding', 'deed-reaper-alpha');
    assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'deed-reaper' });
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'deed-reaper-alpha', namespace: NS }]);
  });

  test('the reaper CronJob runs one bounded, non-overlapping pass for its environment as its own service account', () => {
    const cron = find<V1CronJob>(objects, 'CronJob', 'deed-reaper-alpha');
    assert.equal(cron.spec!.concurrencyPolicy, 'Forbid');
    const pod = cron.spec!.jobTemplate.spec!.template.spec!;
    assert.equal(pod.serviceAccountName, 'deed-reaper-alpha');
    assert.deepEqual(pod.containers[0]!.args, ['reap', '--environment', 'alpha', '--once', '--apply', '--deed-namespace', NS, '--config', '/etc/deed/policy.yaml']);
    assert.ok(pod.terminationGracePeriodSeconds! >= 20, 'time for deletes in flight to finish after the deadline');
    assert.deepEqual(pod.containers[0]!.env, [{ name: 'NODE_OPTIONS', value: REAPER_NODE_OPTIONS }]);
    assert.equal(pod.containers[0]!.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.ok(cron.spec!.jobTemplate.spec!.activeDeadlineSeconds! > 0);
  });

  describe('--audit', () => {
    let audit: Obj[];
    before(() => {
      const out = deed(['manifests', '--deed-namespace', NS, '--image', 'registry.test/deed:1', '--config', policyFile, '--audit', '--audit-crds', '--audit-schedule', '5 * * * *']);
      assert.equal(out.status, 0, out.stderr);
      audit = parseAllDocuments(out.stdout).map((d) => d.toJS() as Obj);
    });

    test('without --audit nothing of the audit is rendered', () => {
      assert.deepEqual(objects.filter((o) => o.metadata?.name === 'deed-audit' || o.kind === 'CustomResourceDefinition'), []);
    });

    test('--audit-crds puts the PolicyReport CRD first, as the chart ships it', () => {
      assert.deepEqual(audit[0], JSON.parse(JSON.stringify(policyReportCrd())));
      assert.equal(deed(['manifests', '--audit-crds']).status, 2, '--audit-crds alone is refused');
    });

    test("the audit may list the five kinds, namespaces, operators' configurations and what names hostnames, get a pod (an owner) and a run lease, and write only its reports", () => {
      const role = find<V1ClusterRole>(audit, 'ClusterRole', 'deed-audit');
      const granted = new Set<string>();
      for (const rule of role.rules ?? []) for (const g of rule.apiGroups ?? []) for (const r of rule.resources ?? []) for (const v of rule.verbs) granted.add(`${g}/${r}:${v}`);
      const expected = ['/namespaces:list', '/pods:get', '/pods:list', '/secrets:list', '/configmaps:list', '/persistentvolumeclaims:list', 'networking.k8s.io/networkpolicies:list', 'coordination.k8s.io/leases:get'];
      for (const v of ['get', 'list', 'create', 'update', 'delete']) expected.push(`wgpolicyk8s.io/policyreports:${v}`);
      // Configurations that name credentials, never hold them (guard.operator-identity's kinds).
      expected.push('external-secrets.io/secretstores:list', 'keda.sh/triggerauthentications:list', 'argoproj.io/analysistemplates:list', 'argoproj.io/analysisruns:list');
      for (const g of ['acraccesstokens', 'ecrauthorizationtokens', 'stssessiontokens', 'gcraccesstokens', 'vaultdynamicsecrets']) expected.push(`generators.external-secrets.io/${g}:list`);
      // What names hostnames, where the policy declares some (route.hostnames): specs, in every namespace.
      expected.push('networking.k8s.io/ingresses:list', 'cert-manager.io/certificates:list', 'acme.cert-manager.io/orders:list', 'acme.cert-manager.io/challenges:list', 'projectcontour.io/httpproxies:list', 'networking.istio.io/virtualservices:list', 'externaldns.k8s.io/dnsendpoints:list', 'gateway.networking.x-k8s.io/xlistenersets:list');
      for (const r of ['httproutes', 'grpcroutes', 'tlsroutes', 'tcproutes', 'udproutes', 'gateways', 'listenersets']) expected.push(`gateway.networking.k8s.io/${r}:list`);
      expected.push('/services:list'); // external-dns's hostname annotations
      assert.deepEqual([...granted].sort(), expected.sort());
      const binding = find<V1ClusterRoleBinding>(audit, 'ClusterRoleBinding', 'deed-audit');
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'deed-audit', namespace: NS }]);
    });

    test('the audit CronJob writes reports on its schedule, as its own account, with the policy and keys mounted', () => {
      const cron = find<V1CronJob>(audit, 'CronJob', 'deed-audit');
      assert.equal(cron.spec!.schedule, '5 * * * *');
      assert.equal(cron.spec!.concurrencyPolicy, 'Forbid');
      const pod = cron.spec!.jobTemplate.spec!.template.spec!;
      assert.equal(pod.serviceAccountName, 'deed-audit');
      assert.deepEqual(pod.containers[0]!.args, ['audit', '--write-reports', '--report-api', 'wgpolicyk8s', '--deed-namespace', NS, '--config', '/etc/deed/policy.yaml', '--quiet']);
      assert.deepEqual(pod.containers[0]!.env, [{ name: 'NODE_OPTIONS', value: REAPER_NODE_OPTIONS }], 'a bounded heap: the default one outgrew the 256Mi limit');
      assert.equal(pod.containers[0]!.securityContext?.readOnlyRootFilesystem, true);
      const sources = pod.volumes![0]!.projected!.sources!;
      assert.ok(sources.some((s) => s.secret?.name === 'deed-attestation'));
    });
  });

  test('Deed’s own namespace enforces the restricted Pod Security level', () => {
    const ns = find<Obj>(objects, 'Namespace');
    assert.equal(ns.metadata!.labels!['pod-security.kubernetes.io/enforce'], 'restricted');
  });

  describe('with an attestation key ring in the policy', () => {
    const ringPolicy = stringify({ ...FIXTURE_POLICY, attestation: { keys: [{ id: 'key' }, { id: 'k-2027' }], signingKey: 'k-2027' } });
    const ringObjects = renderManifests({ namespace: NS, image: 'x', policy: ringPolicy, reaperEnvironments: ['alpha'] }) as Obj[];
    const attestationItems = (spec: V1PodSpec) =>
      spec.volumes!.flatMap((v) => v.projected?.sources ?? []).find((src) => src.secret?.name === 'deed-attestation')!.secret!.items;

    test('the webhook and the reaper mount every key of the ring from the one Secret, one file per key id', () => {
      const want = [
        { key: 'key', path: 'attestation/key' },
        { key: 'k-2027', path: 'attestation/k-2027' },
      ];
      assert.deepEqual(attestationItems(find<V1Deployment>(ringObjects, 'Deployment', 'deed').spec!.template.spec!), want);
      assert.deepEqual(attestationItems(find<V1CronJob>(ringObjects, 'CronJob').spec!.jobTemplate.spec!.template.spec!), want);
    });

    test('the ConfigMap keeps the ring as written, and its default files are where the Secret is mounted', () => {
      const policy = parseConfigText(find<V1ConfigMap>(ringObjects, 'ConfigMap', 'deed-policy').data!['policy.yaml']!);
      assert.equal(policy.attestation.keyFile, undefined);
      assert.deepEqual(policy.attestation.keys, [{ id: 'key' }, { id: 'k-2027' }]);
      assert.equal(policy.attestation.signingKey, 'k-2027');
      const container = find<V1Deployment>(ringObjects, 'Deployment', 'deed').spec!.template.spec!.containers[0]!;
      const mount = container.volumeMounts!.find((m) => m.name === 'config')!.mountPath;
      assert.deepEqual(policy.attestation.keys!.map(ringKeyFile), [`${mount}/attestation/key`, `${mount}/attestation/k-2027`]);
    });

    test('switching the signing key is a policy change, so the pods roll', () => {
      const checksum = (policy: string) =>
        (renderManifests({ namespace: NS, image: 'x', policy }).find((o) => o.kind === 'Deployment') as V1Deployment).spec!.template.metadata!.annotations!['checksum/policy'];
      assert.notEqual(checksum(ringPolicy), checksum(ringPolicy.replace('signingKey: k-2027', 'signingKey: key')));
    });

    test('without a ring, the one pre-ring entry `key` is mounted, as before', () => {
      assert.deepEqual(attestationItems(find<V1Deployment>(objects, 'Deployment', 'deed').spec!.template.spec!), [{ key: 'key', path: 'attestation/key' }]);
    });
  });

  const refusals: Array<{ name: string; policy?: string; reapers?: string[]; error: RegExp }> = [
    { name: 'a policy that keeps the attestation key elsewhere', policy: 'attestation:\n  keyFile: /keys/k\n', error: /attestation\.keyFile/ },
    { name: 'a ring key kept elsewhere than its Secret entry', policy: stringify({ attestation: { keys: [{ id: 'a', file: '/keys/a' }] } }), error: /attestation\.keys\.0\.file: .*entry "a" of the Secret deed-attestation/ },
    { name: 'a ring without its signing key', policy: stringify({ attestation: { keys: [{ id: 'a' }, { id: 'b' }] } }), error: /attestation\.signingKey/ },
    { name: 'a reaper for an environment the policy lacks', reapers: ['gamma'], error: /no environment "gamma"/ },
    { name: 'a reaper whose account would act for two environments', policy: stringify({ environments: [{ id: 'alpha', serviceAccounts: [`${NS}:*`] }, { id: 'beta' }] }), reapers: ['beta'], error: /several environments \(alpha, beta\)/ },
    { name: 'a reaper environment that cannot name a CronJob', policy: stringify({ environments: [{ id: 'Alpha_1' }] }), reapers: ['Alpha_1'], error: /DNS label/ },
    { name: 'a policy that is not valid', policy: 'environments:\n  - id: alpha\n    color: blue\n', error: /environments\.0/ },
    { name: 'a policy that is not a mapping', policy: '- 1\n', error: /mapping/ },
  ];
  for (const { name, policy, reapers, error } of refusals) {
    test(`refuses ${name}`, () => {
      assert.throws(() => renderManifests({ namespace: NS, image: 'x', policy: policy ?? stringify(FIXTURE_POLICY), reaperEnvironments: reapers ?? [] }), error);
    });
  }

  test('an invalid --config exits 2 naming the field, and prints no manifests', () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-manifests-bad-'));
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, 'deadline:\n  marginSeconds: -1\n');
    const out = deed(['manifests', '--config', file]);
    assert.equal(out.status, 2);
    assert.match(out.stderr, /deadline\.marginSeconds/);
    assert.equal(out.stdout, '');
  });

  test('a --ca-bundle that is not a certificate exits 2 with a message', () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-manifests-bad-'));
    const file = join(dir, 'ca.crt');
    writeFileSync(file, 'not a certificate\n');
    const out = deed(['manifests', '--ca-bundle', file]);
    assert.equal(out.status, 2);
    assert.match(out.stderr, /not a PEM certificate/);
  });
});

describe('deed manifests without the Secret cache', () => {
  const objects = renderManifests({ namespace: 'deed-system', image: 'x', cacheSecrets: false }) as Obj[];
  test('the webhook may only get Secrets, and deed serve is told not to cache them', () => {
    assert.deepEqual(find<V1ClusterRole>(objects, 'ClusterRole', 'deed').rules, [
      { apiGroups: [''], resources: ['pods', 'configmaps', 'persistentvolumeclaims', 'serviceaccounts', 'replicationcontrollers'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways', 'listenersets', 'backendtlspolicies'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['gateway.networking.x-k8s.io'], resources: ['xlistenersets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['get'] },
      // The run lease a new object names: whose it is (its stamps) is read at that object's CREATE.
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
      { apiGroups: [''], resources: ['services'], verbs: ['get'] },
      { apiGroups: ['keda.sh'], resources: ['triggerauthentications'], verbs: ['get'] },
      { apiGroups: ['external-secrets.io'], resources: ['externalsecrets', 'secretstores'], verbs: ['get'] },
      { apiGroups: ['generators.external-secrets.io'], resources: GENERATORS, verbs: ['get'] },
      { apiGroups: ['argoproj.io'], resources: ['analysistemplates'], verbs: ['get'] },
      { apiGroups: ['cert-manager.io'], resources: ['certificates', 'certificaterequests', 'issuers'], verbs: ['get'] },
      // A pod's DRA claims and claim templates past a review's gets are listed (object-reader.ts, readListed).
      { apiGroups: ['resource.k8s.io'], resources: ['resourceclaims', 'resourceclaimtemplates'], verbs: ['get', 'list'] },
      // What names a Service or a workload and is followed there, listed at the CREATE of one (reference.live-reader).
      ...FOLLOWED_BY_NAME,
    ]);
    const deployment = find<V1Deployment>(objects, 'Deployment', 'deed');
    assert.deepEqual(deployment.spec!.template.spec!.containers[0]!.args, [...SERVE_ARGS, '--no-cache-secrets']);
  });

  test('deed serve learns its own namespace from the downward API', () => {
    const env = find<V1Deployment>(objects, 'Deployment', 'deed').spec!.template.spec!.containers[0]!.env ?? [];
    assert.deepEqual(env.find((e) => e.name === 'POD_NAMESPACE'), { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
  });
});

describe('deed manifests with a reaper confined to named namespaces', () => {
  const policy = `environments:\n  - id: alpha\n    serviceAccounts: ["sandbox-a:runner"]\n  - id: beta\n    serviceAccounts: ["sandbox-b:*"]\n`;
  const objects = renderManifests({ namespace: 'deed-system', image: 'x', policy, reaperEnvironments: ['alpha', 'beta'], reaperNamespaces: { alpha: ['sandbox-a', 'shared'] } }) as Obj[];
  const subject = (env: string) => [{ kind: 'ServiceAccount', name: `deed-reaper-${env}`, namespace: 'deed-system' }];

  test("alpha's reaper may delete only in its namespaces: a RoleBinding in each, and cluster-wide only reads without delete", () => {
    const roleBindings = objects.filter((o) => o.kind === 'RoleBinding') as unknown as Array<V1ClusterRoleBinding & { metadata: { namespace: string } }>;
    assert.deepEqual(
      roleBindings.map((b) => [b.metadata.namespace, b.metadata.name, b.roleRef.name, b.subjects]),
      [
        ['sandbox-a', 'deed-reaper-alpha', 'deed-reaper', subject('alpha')],
        ['shared', 'deed-reaper-alpha', 'deed-reaper', subject('alpha')],
      ],
    );
    const cluster = find<V1ClusterRoleBinding>(objects, 'ClusterRoleBinding', 'deed-reaper-alpha');
    assert.equal(cluster.roleRef.name, 'deed-reaper-scope');
    const scope = find<V1ClusterRole>(objects, 'ClusterRole', 'deed-reaper-scope');
    assert.deepEqual(scope.rules, [
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] },
    ]);
    for (const rule of scope.rules ?? []) assert.ok(!rule.verbs.includes('delete'));
  });

  test('its CronJob sweeps exactly those namespaces; an environment not named keeps the cluster-wide binding', () => {
    const args = find<V1CronJob>(objects, 'CronJob', 'deed-reaper-alpha').spec!.jobTemplate.spec!.template.spec!.containers[0]!.args!;
    assert.deepEqual(args.slice(-4), ['--namespace', 'sandbox-a', '--namespace', 'shared']);
    assert.equal(find<V1ClusterRoleBinding>(objects, 'ClusterRoleBinding', 'deed-reaper-beta').roleRef.name, 'deed-reaper');
    assert.ok(!find<V1CronJob>(objects, 'CronJob', 'deed-reaper-beta').spec!.jobTemplate.spec!.template.spec!.containers[0]!.args!.includes('--namespace'));
  });

  test('a namespace for an environment with no reaper, or one that is not a namespace name, is refused', () => {
    assert.throws(() => renderManifests({ namespace: 'deed-system', image: 'x', policy, reaperEnvironments: ['beta'], reaperNamespaces: { alpha: ['sandbox-a'] } }), /no reaper for environment "alpha"/);
    assert.throws(() => renderManifests({ namespace: 'deed-system', image: 'x', policy, reaperEnvironments: ['alpha'], reaperNamespaces: { alpha: ['Not_A_Namespace'] } }), /not a namespace name/);
  });

  test('deed manifests --reaper-namespace ENV=NS renders the same', () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-manifests-'));
    writeFileSync(join(dir, 'policy.yaml'), policy);
    const out = deed(['manifests', '--config', join(dir, 'policy.yaml'), '--reaper-environment', 'alpha', '--reaper-namespace', 'alpha=sandbox-a', '--reaper-namespace', 'alpha=shared']);
    assert.equal(out.status, 0, out.stderr);
    const docs = parseAllDocuments(out.stdout).map((d) => d.toJS() as Obj);
    assert.deepEqual(docs.filter((o) => o.kind === 'RoleBinding').map((o) => o.metadata?.namespace), ['sandbox-a', 'shared']);
    assert.equal(deed(['manifests', '--reaper-environment', 'default', '--reaper-namespace', 'default']).status, 2);
  });
});
