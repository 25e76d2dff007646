// reference.at-binding (rules/binding-reads.ts): a pod's binding is judged again on what the
// pod reads once bound, by whose the pod is. The attack it closes: beta's pod, held back from
// scheduling, names beta's Secret `creds`; beta deletes it; alpha creates `creds`; the
// binding would hand alpha's Secret to beta's pod. The lookup cache keeps those names for
// every pod (kube/lookup-facts.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { factsFromStored, factsOf, foundLookup, readsOfStored, storedFactsOf } from '../src/kube/lookup-facts.js';
import { followUpLookups, gatheredLookup, gatherLookups, lookupKey, lookupsNeeded } from '../src/policy/lookup.js';
import { podReadsOf, type PodReads } from '../src/policy/pod/pod-reads.js';
import type { Lookup } from '../src/policy/policy.js';
import { ReviewedObjects } from '../src/review/run.js';
import { FIXTURE_KEYS, stampedMetadata, testContext, type Review } from './helpers.js';
import { createCachedReader, MAX_LIVE_READS_PER_REVIEW } from '../src/kube/cached-reader.js';
import { createMetrics } from '../src/observability/metrics.js';
import { fakeCache, fakeLive } from './cache-fakes.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], claimsFrom: ['gamma'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
    { id: 'gamma', serviceAccounts: ['sandbox-g:runner'] },
  ],
};
const NS = 'shared';
const SCHEDULER: UserInfo = { username: 'system:kube-scheduler', groups: ['system:authenticated'], extra: {} };

/** A binding as the scheduler sends it: it gives the pod's uid. */
function binding(pod: string, subResource = true, uid: string | null = `uid-${pod}`): Review {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '5d6e7f80-0000-4000-8000-0000000000b1',
      kind: { group: '', version: 'v1', kind: 'Binding' },
      resource: { group: '', version: 'v1', resource: subResource ? 'pods' : 'bindings' },
      ...(subResource ? { subResource: 'binding' } : {}),
      name: pod,
      namespace: NS,
      operation: 'CREATE',
      userInfo: SCHEDULER,
      object: { apiVersion: 'v1', kind: 'Binding', metadata: { name: pod, namespace: NS, ...(uid !== null ? { uid } : {}) }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}

const owned = (kind: string, env: string): Lookup => ({ state: 'found', metadata: { ...stampedMetadata(kind, env, NS).metadata, uid: `${kind}-${env}` } });
const unowned: Lookup = { state: 'found', metadata: { uid: 'u' } };
const reads = (r: Partial<PodReads>): PodReads => ({ claims: [], secrets: [], configMaps: [], resourceClaims: [], resourceClaimTemplates: [], ...r });
const pendingPod = (env: string | undefined, r: Partial<PodReads>): Lookup => ({
  ...(env === undefined ? unowned : owned('Pod', env)),
  reads: reads(r),
} as Lookup);

/** `resource/name` in the shared namespace to its answer; anything else unknown. */
function cluster(objects: Record<string, Lookup>) {
  return gatheredLookup(new Map(Object.entries(objects).map(([k, v]) => { const [resource, name] = k.split('/'); return [lookupKey({ resource: resource as never, namespace: NS, name: name! }), v]; })), 'not in the test table');
}

function verdict(objects: Record<string, Lookup>, pod = 'job-7') {
  const d = decide('validate', binding(pod), testContext(POLICY, undefined, undefined, cluster(objects)));
  assert.equal(d.kind, 'review');
  return d.kind === 'review' ? d.response.response : undefined!;
}

function refused(objects: Record<string, Lookup>, message: RegExp) {
  const r = verdict(objects);
  assert.equal(r.allowed, false, 'expected a refusal');
  assert.match(r.status?.message ?? '', /\[reference\.at-binding\]/);
  assert.match(r.status?.message ?? '', message);
}

function bound(objects: Record<string, Lookup>) {
  const r = verdict(objects);
  assert.equal(r.allowed, true, r.status?.message);
}

describe('a binding is judged on what the pod reads once bound', () => {
  test('the plan reads the pod, then what it names; an eviction reads the pod alone', () => {
    const plan = lookupsNeeded(binding('job-7').request, 'validate', FIXTURE_KEYS);
    // The pod of the binding's uid: a cached record of another (deleted, made again under the name) is read live.
    assert.deepEqual(plan, [{ resource: 'pods', namespace: NS, name: 'job-7', withReads: true, uid: 'uid-job-7' }]);
    // A binding that gives no uid reads the pod from the API server.
    assert.deepEqual(lookupsNeeded(binding('job-7', true, null).request, 'validate', FIXTURE_KEYS), [{ resource: 'pods', namespace: NS, name: 'job-7', withReads: true, fresh: true }]);
    const first = cluster({ 'pods/job-7': pendingPod('beta', { claims: ['data'], secrets: ['creds'], configMaps: ['kube-root-ca.crt', 'settings'], resourceClaims: ['gpu'] }) });
    assert.deepEqual(
      followUpLookups(plan, first).map((k) => `${k.resource}/${k.name}`),
      ['persistentvolumeclaims/data', 'secrets/creds', 'configmaps/kube-root-ca.crt', 'configmaps/settings', 'resourceclaims/gpu'],
    );
    assert.deepEqual(followUpLookups([{ resource: 'pods', namespace: NS, name: 'job-7' }], first), [], 'only a binding follows a pod\'s reads');
    // The kubelet acts on a binding at once: what the pod reads is read from the API server; the well-known ConfigMaps, never judged, are not read.
    assert.ok(followUpLookups(plan, first).every((k) => k.fresh === true));
    assert.deepEqual(
      followUpLookups(plan, first, testContext(POLICY).policy).map((k) => `${k.resource}/${k.name}`),
      ['persistentvolumeclaims/data', 'secrets/creds', 'configmaps/settings', 'resourceclaims/gpu'],
    );
  });

  test('beta\'s pending pod naming a Secret alpha made under the name since is not bound', () => {
    refused({ 'pods/job-7': pendingPod('beta', { secrets: ['creds'] }), 'secrets/creds': owned('Secret', 'alpha') }, /pod shared\/job-7 \(environment "beta"\) names Secret creds, which belongs to another environment: once bound, the kubelet would hand it to this pod/);
  });

  test('so with a claim, a ConfigMap, a ResourceClaim and a ResourceClaimTemplate; a claim of an environment in claimsFrom is not refused', () => {
    refused({ 'pods/job-7': pendingPod('beta', { claims: ['data'] }), 'persistentvolumeclaims/data': owned('PersistentVolumeClaim', 'alpha') }, /names PersistentVolumeClaim data/);
    refused({ 'pods/job-7': pendingPod('beta', { configMaps: ['settings'] }), 'configmaps/settings': owned('ConfigMap', 'alpha') }, /names ConfigMap settings/);
    refused({ 'pods/job-7': pendingPod('beta', { resourceClaims: ['gpu'] }), 'resourceclaims/gpu': owned('ResourceClaim', 'alpha') }, /names ResourceClaim gpu/);
    refused({ 'pods/job-7': pendingPod('beta', { resourceClaimTemplates: ['net'] }), 'resourceclaimtemplates/net': owned('ResourceClaimTemplate', 'alpha') }, /names ResourceClaimTemplate net, which belongs to another environment: the resourceclaim controller would make this pod's claim from it\. Delete the pod/);
    bound({ 'pods/job-7': pendingPod('beta', { resourceClaimTemplates: ['net'] }), 'resourceclaimtemplates/net': owned('ResourceClaimTemplate', 'beta') });
    bound({ 'pods/job-7': pendingPod('alpha', { claims: ['data'] }), 'persistentvolumeclaims/data': owned('PersistentVolumeClaim', 'gamma') });
  });

  test("a ResourceClaim the resourceclaim controller made for alpha's pod is alpha's: beta's pending pod naming it is not bound, alpha's is; one whose pod cannot be read is refused", () => {
    const madeFor = (pod: string, uid: string): Lookup => ({ state: 'found', metadata: { uid: `${pod}-gpu` }, controller: { apiVersion: 'v1', kind: 'Pod', name: pod, uid } });
    const objects = { 'resourceclaims/gpu': madeFor('alpha-lab', 'Pod-alpha'), 'pods/alpha-lab': owned('Pod', 'alpha') };
    refused({ 'pods/job-7': pendingPod('beta', { resourceClaims: ['gpu'] }), ...objects }, /\(environment "beta"\) names ResourceClaim gpu, which belongs to another environment/);
    bound({ 'pods/job-7': pendingPod('alpha', { resourceClaims: ['gpu'] }), ...objects });
    refused({ 'pods/job-7': pendingPod('alpha', { resourceClaims: ['gpu'] }), 'resourceclaims/gpu': madeFor('alpha-lab', 'Pod-alpha') }, /cannot tell which environment ResourceClaim gpu, which pod shared\/job-7 reads once bound, belongs to: it was made for pod alpha-lab, and whose that pod is cannot be told: not in the test table/);
  });

  test("what a binding hands its pod is read from the API server: beta's pod padded past the review's GETs with names of its own choosing is judged on what stands under the name it targets, listed, not on the cache's stale record", async () => {
    const policy = testContext(POLICY).policy;
    const key = (resource: 'pods' | 'secrets' | 'configmaps', name: string) => lookupKey({ resource, namespace: NS, name });
    const pad = Array.from({ length: MAX_LIVE_READS_PER_REVIEW }, (_, i) => `pad-${i}`);
    const judged = async (padding: string[], settings: Lookup) => {
      const pod = { ...owned('Pod', 'beta'), reads: reads({ secrets: padding, configMaps: ['settings'] }) } as Lookup;
      // The cache still holds beta's ConfigMap `settings`; what stands under the name now is `settings`. The padding does not exist.
      const cache = fakeCache({ [key('configmaps', 'settings')]: { ...stampedMetadata('ConfigMap', 'beta', NS).metadata, uid: 'cm-beta', deleting: false } }, { inScope: [NS], current: ['configmaps', 'secrets'] });
      const live = fakeLive({ [key('pods', 'job-7')]: pod, [key('configmaps', 'settings')]: settings });
      const reader = createCachedReader(cache, live, 'deed.dev', createMetrics());
      const found = await gatherLookups(lookupsNeeded(binding('job-7').request, 'validate', FIXTURE_KEYS), (keys) => reader.read(keys, 1000), policy);
      const d = decide('validate', binding('job-7'), testContext(POLICY, undefined, undefined, found));
      return { answer: d.kind === 'review' ? d.response.response : undefined!, listed: live.listed };
    };
    const alphas = owned('ConfigMap', 'alpha');
    const plain = await judged([], alphas);
    assert.equal(plain.answer.allowed, false);
    assert.match(plain.answer.status?.message ?? '', /\[reference\.at-binding\] .*names ConfigMap settings, which belongs to another environment/);
    const padded = await judged(pad, alphas);
    assert.equal(padded.answer.allowed, false, 'padded past the GETs, the name it targets is not answered from the cache');
    assert.match(padded.answer.status?.message ?? '', /\[reference\.at-binding\] .*names ConfigMap settings, which belongs to another environment/);
    assert.ok(padded.listed.includes(key('configmaps', 'settings')), 'the ConfigMap, named last, was listed');
    // Its own ConfigMap under the name, past 32 names: bound.
    const own = await judged(pad, owned('ConfigMap', 'beta'));
    assert.equal(own.answer.allowed, true, own.answer.status?.message);
  });

  test('the server reads in rounds: the pod, what it names, then the pod a claim was made for', async () => {
    const objects: Record<string, Lookup> = {
      'pods/job-7': pendingPod('alpha', { resourceClaims: ['gpu'] }),
      'resourceclaims/gpu': { state: 'found', metadata: { uid: 'g' }, controller: { apiVersion: 'v1', kind: 'Pod', name: 'alpha-lab', uid: 'Pod-alpha' } },
      'pods/alpha-lab': owned('Pod', 'alpha'),
    };
    const rounds: string[][] = [];
    const all = cluster(objects);
    const found = await gatherLookups(lookupsNeeded(binding('job-7').request, 'validate', FIXTURE_KEYS), async (keys) => {
      rounds.push(keys.map((k) => `${k.resource}/${k.name}`));
      return cluster(Object.fromEntries(keys.map((k) => [`${k.resource}/${k.name}`, all.get(k.resource, k.namespace, k.name)])));
    });
    assert.deepEqual(rounds, [['pods/job-7'], ['resourceclaims/gpu'], ['pods/alpha-lab']]);
    const d = decide('validate', binding('job-7'), testContext(POLICY, undefined, undefined, found));
    assert.ok(d.kind === 'review' && d.response.response.allowed, d.kind === 'review' ? d.response.response.status?.message : d.kind);
  });

  test('a pod of no environment (a tenant acting for none) is not bound to an environment\'s Secret either', () => {
    refused({ 'pods/job-7': pendingPod(undefined, { secrets: ['creds'] }), 'secrets/creds': owned('Secret', 'alpha') }, /\(of no environment\) names Secret creds/);
  });

  test('its own objects, unstamped ones, gone ones and the well-known ConfigMaps bind', () => {
    bound({ 'pods/job-7': pendingPod('beta', { secrets: ['creds', 'pull', 'gone'], configMaps: ['kube-root-ca.crt'] }), 'secrets/creds': owned('Secret', 'beta'), 'secrets/pull': unowned, 'secrets/gone': { state: 'absent' } });
    bound({ 'pods/job-7': { ...owned('Pod', 'beta') } });
  });

  test('a pod naming more than the reads bound is refused for the rest, unread, however they are owned', () => {
    const secrets = Array.from({ length: 257 }, (_, i) => `s${i}`);
    const objects: Record<string, Lookup> = { 'pods/job-7': pendingPod('beta', { secrets }) };
    for (const name of secrets.slice(0, 256)) objects[`secrets/${name}`] = owned('Secret', 'beta');
    refused(objects, /cannot tell which environment Secret s256, which pod shared\/job-7 reads once bound, belongs to: Deed reads at most 256 Secret names of one pod/);
    assert.equal(followUpLookups([{ resource: 'pods', namespace: NS, name: 'job-7', withReads: true }], cluster(objects)).length, 256);
  });

  test('what cannot be told is refused (fail closed)', () => {
    refused({ 'pods/job-7': pendingPod('beta', { secrets: ['creds'] }) }, /cannot tell which environment Secret creds, which pod shared\/job-7 reads once bound, belongs to: not in the test table/);
    const forged: Lookup = { state: 'found', metadata: { labels: { 'deed.dev/environment': 'beta' }, annotations: { 'deed.dev/create-nonce': 'a'.repeat(64), 'deed.dev/attestation': 'v1:forged' } } };
    refused({ 'pods/job-7': pendingPod('beta', { secrets: ['creds'] }), 'secrets/creds': forged }, /Secret creds, which pod shared\/job-7 reads once bound, carries Deed's stamps but they do not verify/);
  });
});

describe('the lookup cache keeps what a pod reads, bound or not', () => {
  const pod = (nodeName?: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'job-7', namespace: NS, uid: 'p' },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      containers: [{ name: 'c', image: 'busybox', envFrom: [{ secretRef: { name: 'creds' } }], env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'settings', key: 'x' } } }] }],
      volumes: [{ name: 'ws', persistentVolumeClaim: { claimName: 'data' } }, { name: 'more', secret: { secretName: 'creds' } }],
      resourceClaims: [{ name: 'gpu', resourceClaimName: 'gpu-1' }, { name: 't', resourceClaimTemplateName: 'tpl' }],
      schedulingGates: [{ name: 'example.com/hold' }],
    },
  });

  test('a pod\'s names survive the cache\'s record, a bound pod\'s too (its CREATE-time names are judged at the CREATE of what they name)', () => {
    const expected: PodReads = { claims: ['data'], secrets: ['creds'], configMaps: ['settings'], resourceClaims: ['gpu-1'], resourceClaimTemplates: ['tpl'] };
    assert.deepEqual(podReadsOf(pod().spec), expected);
    const stored = storedFactsOf(pod(), 'deed.dev');
    assert.deepEqual(factsFromStored(stored, 'deed.dev'), factsOf(pod(), 'deed.dev'));
    assert.deepEqual(foundLookup(factsFromStored(stored, 'deed.dev')).reads, expected);
    assert.deepEqual(podReadsOf(pod('node-1').spec), expected);
    assert.deepEqual(factsFromStored(storedFactsOf(pod('node-1'), 'deed.dev'), 'deed.dev').reads, expected);
    assert.deepEqual(readsOfStored(storedFactsOf(pod('node-1'), 'deed.dev')), expected);
    // A workload's spec lists no containers at its top: nothing kept for it.
    assert.equal(podReadsOf({ template: pod().spec }), undefined);
  });

  test("an ephemeral volume's clone source is read by name until the pod is bound: beta's pending pod is not bound once the name is alpha's, and alpha may not take the name meanwhile", () => {
    const spec = { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], dataSource: { kind: 'PersistentVolumeClaim', name: 'swap-ws' } } } } }] };
    const podReads = podReadsOf(spec);
    assert.deepEqual(podReads, { claims: ['swap-ws'], secrets: [], configMaps: [], resourceClaims: [], resourceClaimTemplates: [] });
    // Beta's own claim deleted since the pod's CREATE, and alpha's made under the name.
    refused({ 'pods/job-7': pendingPod('beta', podReads!), 'persistentvolumeclaims/swap-ws': owned('PersistentVolumeClaim', 'alpha') }, /names PersistentVolumeClaim swap-ws, which belongs to another environment: once bound, the kubelet would hand it to this pod \(or, for the claim an ephemeral volume clones, the provisioner would copy it into the pod's claim\)\. Delete the pod/);
    bound({ 'pods/job-7': pendingPod('beta', podReads!), 'persistentvolumeclaims/swap-ws': owned('PersistentVolumeClaim', 'beta') });
    // A restore reads a snapshot, which the pod's reads do not keep: the ephemeral claim's own name is the pod's.
    const restoring = { ...spec, volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 's' } } } } }] };
    assert.equal(podReadsOf(restoring), undefined);
  });
});

describe("deed review's lookups give a pod what the webhook's do", () => {
  test('a pending pod it reviewed before answers with its account, its controller and what it reads once bound', () => {
    const reviewed = new ReviewedObjects();
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'job-7', namespace: NS, uid: 'p', ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'job', uid: 'j', controller: true }] },
      spec: { serviceAccountName: 'ci', containers: [{ name: 'c', image: 'i', envFrom: [{ secretRef: { name: 'creds' } }] }] },
    };
    reviewed.remember({ stored: pod, deleted: null });
    const found = reviewed.lookup.get('pods', NS, 'job-7');
    assert.equal(found.state, 'found');
    if (found.state !== 'found') return;
    assert.equal(found.serviceAccountName, 'ci');
    assert.deepEqual(found.reads, { claims: [], secrets: ['creds'], configMaps: [], resourceClaims: [], resourceClaimTemplates: [] });
    assert.equal(found.controller?.name, 'job');
  });
});
