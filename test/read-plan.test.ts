// The read plan covers every read: the lookups a decision makes (its rules' reads of other
// objects) are the keys the server planned and read before deciding, and the follow-ups of
// those reads (a snapshot's source claim). A rule that read a key the plan does not name
// would be answered "unknown" in a cluster; here it fails the test.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import { kindRows } from '../src/policy/kinds.js';
import { followUpLookups, lookupKey, planLookups, type LookupKey } from '../src/policy/lookup.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { claimOf, stampedMetadata, fixture, FIXTURE_POLICY, FIXTURE_KEYS, FIXTURES, kubeSystem, testContext, type Review, NO_READERS } from './helpers.js';
import { pluginTokenSources } from '../src/policy/pod/service-account-token.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies reach deep into specs
type Spec = Record<string, any>;

const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;
const NOBODY = fixture('mutate-create-pod-by-admin.json').request.userInfo as UserInfo;

/** Answers every read (claims and a StatefulSet of alpha, a snapshot whose source is `source-claim`), and records each key read. */
function recordingLookup(): { lookup: ObjectLookup; read: LookupKey[] } {
  const read: LookupKey[] = [];
  return {
    read,
    lookup: {
      readers(resource, namespace, name) {
        read.push({ resource, namespace, name, readers: true });
        return NO_READERS();
      },
      get(resource, namespace, name): Lookup {
        read.push({ resource, namespace, name });
        if (resource === 'volumesnapshots') return { state: 'found', metadata: {}, sourceClaim: 'source-claim' };
        if (resource === 'pods') return { state: 'found', metadata: {}, serviceAccountName: 'runner' };
        if (resource === 'secrets') return { state: 'absent' };
        // The corpus' controlling owner: alpha's StatefulSet, with its uid.
        if (resource === 'statefulsets') return { state: 'found', metadata: { uid: 'sts-1', ...stampedMetadata('StatefulSet', 'alpha', namespace).metadata } };
        return { state: 'found', metadata: claimOf('alpha', namespace).metadata };
      },
    },
  };
}

function review(group: string, resource: string, kind: string, object: KubeObject | null, userInfo: UserInfo, more: Spec = {}): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  body.request = { ...body.request, kind: { group, version: 'v1', kind }, resource: { group, version: 'v1', resource }, requestKind: undefined, requestResource: undefined, name: object?.metadata.name ?? more.name, namespace: 'sandbox-a', userInfo, object, ...more };
  return body;
}

const REFERENCING_SPEC: Spec = {
  automountServiceAccountToken: false,
  imagePullSecrets: [{ name: 'pull' }],
  containers: [{ name: 'main', image: 'agent:1', env: [{ name: 'T', valueFrom: { secretKeyRef: { name: 'token', key: 't' } } }] }],
  volumes: [
    { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
    { name: 'creds', secret: { secretName: 'creds' } },
    { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'seed' } } } } },
  ],
};

function corpus(): Array<[string, Review]> {
  const out: Array<[string, Review]> = readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.json'))
    .map((f) => [f, fixture(f)]);
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'sandbox-a' }, spec: REFERENCING_SPEC } as KubeObject;
  for (const who of [RUNNER_A, NOBODY]) {
    out.push([`a pod naming claims and Secrets, by ${who.username}`, review('', 'pods', 'Pod', pod, who)]);
    out.push([`an ephemeral container naming Secrets, by ${who.username}`, review('', 'pods', 'Pod', { ...pod, spec: { ...REFERENCING_SPEC, ephemeralContainers: [{ name: 'dbg', image: 'x', envFrom: [{ secretRef: { name: 'added' } }] }] } } as KubeObject, who, { operation: 'UPDATE', subResource: 'ephemeralcontainers', oldObject: pod })]);
    out.push([`a claim restoring a snapshot, by ${who.username}`, review('', 'persistentvolumeclaims', 'PersistentVolumeClaim', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'sandbox-a' }, spec: { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' } } } as KubeObject, who)]);
    out.push([`a snapshot, by ${who.username}`, review('snapshot.storage.k8s.io', 'volumesnapshots', 'VolumeSnapshot', { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 's', namespace: 'sandbox-a' }, spec: { source: { persistentVolumeClaimName: 'data' } } } as KubeObject, who)]);
    out.push([`an eviction, by ${who.username}`, review('', 'pods', 'Eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p', namespace: 'sandbox-a' } } as KubeObject, who, { subResource: 'eviction', name: 'p' })]);
    // The run lease a new object names, on a kind of each door that stamps.
    const runLease = { annotations: { 'deed.dev/run-lease': 'run-42' } };
    out.push([`a pod naming a run lease, by ${who.username}`, review('', 'pods', 'Pod', { ...pod, metadata: { ...pod.metadata, ...runLease } }, who)]);
    out.push([`a Secret naming a run lease, by ${who.username}`, review('', 'secrets', 'Secret', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'sandbox-a', ...runLease } } as KubeObject, who)]);
    out.push([`a custom resource naming a run lease, by ${who.username}`, review('labs.example', 'virtualmachines', 'VirtualMachine', { apiVersion: 'labs.example/v1', kind: 'VirtualMachine', metadata: { name: 'vm', namespace: 'sandbox-a', ...runLease } } as KubeObject, who)]);
    out.push([`a Deployment naming a run lease, by ${who.username}`, review('apps', 'deployments', 'Deployment', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'sandbox-a', ...runLease }, spec: { template: { metadata: {}, spec: REFERENCING_SPEC } } } as KubeObject, who)]);
    // As the API server sends a pod that leaves automount unset: the ServiceAccount plugin's
    // token volume names kube-root-ca.crt (and, on OpenShift, openshift-service-ca.crt).
    const tokenVolume = { name: 'kube-api-access-x7k2p', projected: { defaultMode: 420, sources: [...pluginTokenSources(), { configMap: { name: 'openshift-service-ca.crt', items: [{ key: 'service-ca.crt', path: 'service-ca.crt' }] } }] } };
    const withToken: Spec = { ...REFERENCING_SPEC, automountServiceAccountToken: undefined, volumes: [...REFERENCING_SPEC.volumes, tokenVolume, { name: 'scripts', configMap: { name: 'run-script' } }] };
    delete withToken.automountServiceAccountToken;
    out.push([`a pod with the API server's token volume and a ConfigMap, by ${who.username}`, review('', 'pods', 'Pod', { ...pod, spec: withToken }, who)]);
    out.push([`a Deployment whose template projects kube-root-ca.crt, by ${who.username}`, review('apps', 'deployments', 'Deployment', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'sandbox-a' }, spec: { template: { metadata: {}, spec: withToken } } } as KubeObject, who)]);
    out.push([`a legacy binding, by ${who.username}`, review('', 'bindings', 'Binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p', namespace: 'sandbox-a' } } as KubeObject, who)]);
    for (const row of kindRows().filter((r) => r.templates !== undefined)) {
      const obj: Spec = { apiVersion: row.group === '' ? 'v1' : `${row.group}/v1`, kind: row.kind, metadata: { name: 'w', namespace: 'sandbox-a' } };
      for (const path of row.templates!.pods) {
        const keys = path.split('.');
        let at = obj;
        for (const key of keys.slice(0, -1)) at = at[key] ??= {};
        at[keys.at(-1)!] = { metadata: {}, spec: REFERENCING_SPEC };
      }
      for (const path of row.templates!.claims) {
        const keys = path.split('.');
        let at = obj;
        for (const key of keys.slice(0, -1)) at = at[key] ??= {};
        at[keys.at(-1)!] = [{ metadata: { name: 'data' }, spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'seed' } } }];
      }
      out.push([`a ${row.kind} whose templates name claims and Secrets, by ${who.username}`, review(row.group, row.resource, row.kind, obj as KubeObject, who)]);
    }
  }
  // An UPDATE that gives an object a controlling owner (an adoption, or a client writing the
  // reference), of the object or through its status: whose the new owner is is read where it
  // is judged, on every kind, not only pods and workloads; and a new object with one, which the
  // mutating side reads only for what a workload controller makes. By a runner, an admin (whose
  // references are not judged), a workload controller (judged only on the object and workload
  // doors) and a system controller that is none (the endpointslice controller). Each names a
  // run lease, judged only on what is created for an environment (a controller's pod is its owner's).
  const owner = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'sts-1', controller: true };
  const withStatus = new Set(['Service', 'PersistentVolumeClaim', 'ReplicaSet']);
  for (const who of [RUNNER_A, NOBODY, kubeSystem('statefulset-controller'), kubeSystem('endpointslice-controller')])
    for (const [group, resource, kind] of [
      ['', 'configmaps', 'ConfigMap'],
      ['apps', 'controllerrevisions', 'ControllerRevision'],
      ['labs.example', 'virtualmachines', 'VirtualMachine'],
      ['', 'services', 'Service'],
      ['', 'persistentvolumeclaims', 'PersistentVolumeClaim'],
      ['apps', 'replicasets', 'ReplicaSet'],
      ['', 'pods', 'Pod'],
    ] as const) {
      // The UPDATE changes the owner alone (a changed annotation of Deed's would be refused first).
      const before = { apiVersion: group === '' ? 'v1' : `${group}/v1`, kind, metadata: { name: 'o', namespace: 'sandbox-a', annotations: { 'deed.dev/run-lease': 'run-42' } }, ...(kind === 'Pod' ? { spec: REFERENCING_SPEC } : {}) } as KubeObject;
      const adopted = { ...before, metadata: { ...before.metadata, ownerReferences: [owner] } } as KubeObject;
      out.push([`an UPDATE giving a ${kind} a controlling owner, by ${who.username}`, review(group, resource, kind, adopted, who, { operation: 'UPDATE', oldObject: before })]);
      if (withStatus.has(kind)) out.push([`a status UPDATE giving a ${kind} a controlling owner, by ${who.username}`, review(group, resource, kind, adopted, who, { operation: 'UPDATE', oldObject: before, subResource: 'status' })]);
      out.push([`a ${kind} created with a controlling owner, by ${who.username}`, review(group, resource, kind, adopted, who)]);
    }
  return out;
}

// Planned as the server plans (with the policy, which says who asks), under the fixture policy
// and under one whose break-glass group (system:masters, the default) holds the captured admin:
// a break-glass review is decided a second time as if it were not one, and that decision's
// reads must be planned too, or it refuses on what went unread and reports a false override.
const BREAK_GLASS_POLICY = { ...FIXTURE_POLICY, breakGlass: { groups: ['system:masters'] } };
describe('the read plan covers every read a decision makes', () => {
  for (const [policyName, config] of [['', FIXTURE_POLICY], [' (admin is break-glass)', BREAK_GLASS_POLICY]] as const)
    for (const webhook of ['mutate', 'validate', 'admit'] as Webhook[])
      for (const [name, body] of corpus())
        test(`${webhook}: ${name}${policyName}`, () => {
          const { lookup, read } = recordingLookup();
          const ctx = testContext(config, undefined, undefined, lookup);
          const plan = planLookups(body, webhook, FIXTURE_KEYS, ctx.policy).lookups;
          const allowed = new Set([...plan, ...followUpLookups(plan, lookup)].map(lookupKey));
          read.length = 0;
          decide(webhook, body, ctx);
          const undeclared = read.map(lookupKey).filter((k) => !allowed.has(k));
          assert.deepEqual(undeclared, [], `read without being planned: ${undeclared.join(', ')}`);
        });

  test('the corpus makes decisions read (the check above is not vacuous)', () => {
    let reads = 0;
    for (const [, body] of corpus()) {
      const { lookup, read } = recordingLookup();
      decide('validate', body, testContext(undefined, undefined, undefined, lookup));
      reads += read.length;
    }
    assert.ok(reads > 50, `${reads} reads`);
  });
});

// The converse: a read the plan names that no rule then uses is a wasted read before every
// such review, and a live API call where the object is absent (the cache cannot answer
// "absent" for a name it never saw). The well-known ConfigMaps every pod's token volume
// names are the case that made this test: the rules exempt them, so nothing reads them.
describe('every read the plan names is used by a rule', () => {
  for (const webhook of ['mutate', 'validate', 'admit'] as Webhook[])
    for (const [name, body] of corpus())
      test(`${webhook}: ${name}`, () => {
        const { lookup, read } = recordingLookup();
        const ctx = testContext(undefined, undefined, undefined, lookup);
        const plan = planLookups(body, webhook, FIXTURE_KEYS, ctx.policy).lookups;
        read.length = 0;
        decide(webhook, body, ctx);
        const used = new Set(read.map(lookupKey));
        const unused = plan.map(lookupKey).filter((k) => !used.has(k));
        assert.deepEqual(unused, [], `planned but read by no rule: ${unused.join(', ')}`);
      });

  test("the well-known ConfigMaps are not planned; the pod's own ConfigMap is", () => {
    const [, body] = corpus().find(([n]) => n.startsWith("a pod with the API server's token volume"))!;
    const keys = planLookups(body, 'validate', FIXTURE_KEYS, testContext().policy).lookups.map(lookupKey);
    assert.ok(keys.includes('configmaps/sandbox-a/run-script'), keys.join(', '));
    assert.ok(!keys.some((k) => k.endsWith('/kube-root-ca.crt') || k.endsWith('/openshift-service-ca.crt')), keys.join(', '));
  });
});

// What the kubelet acts on as soon as the request is stored, with no binding judged after,
// is read from the API server: the cache may still hold an object another environment has
// since deleted and made again under the name.
describe('what the kubelet acts on at once is read from the API server', () => {
  const pod = (spec: Spec): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'sandbox-a' }, spec });
  const plan = (body: Review) => planLookups(body, 'validate', FIXTURE_KEYS, testContext().policy).lookups;
  const named = (keys: LookupKey[]) => keys.filter((k) => k.resource === 'secrets' || k.resource === 'persistentvolumeclaims');

  test("a pod created on its node (spec.nodeName) reads what it names from the API server; one the scheduler binds reads it from the cache, judged again at its binding", () => {
    const onNode = named(plan(review('', 'pods', 'Pod', pod({ ...REFERENCING_SPEC, nodeName: 'node-1' }), RUNNER_A)));
    assert.deepEqual(onNode.map((k) => `${k.resource}/${k.name}`).sort(), ['persistentvolumeclaims/data', 'persistentvolumeclaims/seed', 'secrets/creds', 'secrets/pull', 'secrets/token']);
    // The claim an ephemeral volume clones is read fresh whatever the pod: its creation time is judged.
    assert.ok(onNode.every((k) => k.fresh === true), JSON.stringify(onNode));
    const scheduled = named(plan(review('', 'pods', 'Pod', pod(REFERENCING_SPEC), RUNNER_A)));
    assert.equal(scheduled.length, onNode.length);
    assert.ok(scheduled.every((k) => k.fresh === undefined || k.name === 'seed'), JSON.stringify(scheduled));
  });

  test('an ephemeral container added to a running pod reads the Secrets it adds from the API server', () => {
    const before = { containers: [{ name: 'main', image: 'agent:1' }], nodeName: 'node-1' };
    const after = { ...before, ephemeralContainers: [{ name: 'debug', image: 'busybox', env: [{ name: 'T', valueFrom: { secretKeyRef: { name: 'debug-token', key: 't' } } }] }] };
    const keys = named(plan(review('', 'pods', 'Pod', pod(after), RUNNER_A, { operation: 'UPDATE', subResource: 'ephemeralcontainers', oldObject: pod(before) })));
    assert.deepEqual(keys, [{ resource: 'secrets', namespace: 'sandbox-a', name: 'debug-token', fresh: true }]);
  });
});
