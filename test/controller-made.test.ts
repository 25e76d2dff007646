// What a workload controller creates is judged when it is created, as an object of its
// controlling owner's environment (src/policy/controller-made.ts), decided without a
// cluster: the owner's stamps come from a table-driven lookup. The same in a real API
// server, with the controllers running: test/e2e/cases/controller-made.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import { signStamps, verifyObject } from '../src/policy/stamps/key-ring.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { followUpLookups, gatherLookups, gatheredLookup, lookupKey, planLookups, type LookupKey } from '../src/policy/lookup.js';
import { createCachedReader } from '../src/kube/cached-reader.js';
import { createMetrics } from '../src/observability/metrics.js';
import { fakeCache, fakeLive } from './cache-fakes.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { decodePatch, fixture, FIXTURE_POLICY, kubeSystem, testContext, TEST_RING, type Review, NO_READERS } from './helpers.js';
import { stampedTemplateMetadata } from '../src/policy/pod/claim-templates.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- pod bodies reach deep into specs
type Spec = Record<string, any>;

const KEYS = stampKeys('deed.dev');
const NS = 'sandbox-a';
const RS_CONTROLLER = kubeSystem('replicaset-controller');
const DEPLOYMENT_CONTROLLER = kubeSystem('deployment-controller');
/** sandbox-a:runner, token bound to pod runner-0: alpha. */
const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;

/** The metadata Deed stamps on an object of `kind` for `environment` (no runner: as on a workload's own objects). */
function stampsOf(kind: string, environment: string, nonce = 'b'.repeat(64)): { labels: Record<string, string>; annotations: Record<string, string> } {
  return {
    labels: { [KEYS.managed]: 'true', [KEYS.environment]: environment },
    annotations: { [KEYS.createNonce]: nonce, [KEYS.attestation]: signStamps(TEST_RING, { kind, namespace: NS, environment, nonce }) },
  };
}

const ref = (kind: string, name: string, uid: string, apiVersion = 'apps/v1') => ({ apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true });

/** Owners and Secrets as the cache would answer; anything not listed is absent. */
function lookup(table: Record<string, Lookup>): ObjectLookup {
  const gathered = gatheredLookup(new Map(Object.entries(table)), 'unlisted');
  return { readers: NO_READERS, get: (resource, namespace, name) => (Object.hasOwn(table, lookupKey({ resource, namespace, name })) ? gathered.get(resource, namespace, name) : { state: 'absent' }) };
}
const found = (metadata: Spec, controller?: ReturnType<typeof ref>): Lookup => ({
  state: 'found',
  metadata: metadata as Extract<Lookup, { state: 'found' }>['metadata'],
  ...(controller ? { controller: { apiVersion: controller.apiVersion, kind: controller.kind, name: controller.name, uid: controller.uid } } : {}),
});

function pod(owner: ReturnType<typeof ref> | undefined, spec: Spec = {}, meta: Spec = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'lab-7d9-', namespace: NS, labels: { app: 'lab', 'pod-template-hash': '7d9' }, ...(owner ? { ownerReferences: [owner] } : {}), ...meta },
    spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }], ...spec },
  } as KubeObject;
}

function review(obj: KubeObject, userInfo: UserInfo, more: Spec = {}): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  const group = obj.apiVersion?.includes('/') ? obj.apiVersion.split('/')[0]! : '';
  const resource = obj.kind === 'Pod' ? 'pods' : obj.kind === 'ReplicaSet' ? 'replicasets' : 'jobs';
  body.request = {
    ...body.request,
    kind: { group, version: 'v1', kind: obj.kind },
    resource: { group, version: 'v1', resource },
    requestKind: undefined,
    requestResource: undefined,
    name: undefined,
    namespace: NS,
    userInfo,
    subResource: undefined,
    operation: 'CREATE',
    object: obj,
    oldObject: null,
    ...more,
  };
  return body;
}

function answer(webhook: 'mutate' | 'validate', body: Review, l: ObjectLookup): AdmissionResponse {
  const d = decide(webhook, body, testContext(undefined, undefined, undefined, l));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** Mutated then validated, as the API server would store it; throws on a refusal. */
function made(obj: KubeObject, l: ObjectLookup, userInfo = RS_CONTROLLER): KubeObject {
  const body = review(obj, userInfo);
  const m = answer('mutate', body, l);
  assert.equal(m.allowed, true, m.status?.message);
  const stored = m.patch ? (jsonpatch.applyPatch(structuredClone(obj), decodePatch({ response: m } as never)).newDocument as KubeObject) : obj;
  const v = answer('validate', review(stored, userInfo), l);
  assert.equal(v.allowed, true, v.status?.message);
  return stored;
}

function refusedBoth(obj: KubeObject, l: ObjectLookup, pattern: RegExp, userInfo = RS_CONTROLLER): void {
  for (const webhook of ['mutate', 'validate'] as const) {
    const r = answer(webhook, review(obj, userInfo), l);
    assert.equal(r.allowed, false, `${webhook}: expected a refusal`);
    assert.match(r.status?.message ?? '', pattern, webhook);
  }
}

const RS_A = ref('ReplicaSet', 'lab-7d9', 'rs-a');
const alphaRs = lookup({ [lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' })]: found({ uid: 'rs-a', ...stampsOf('ReplicaSet', 'alpha') }) });
const betaRs = lookup({
  [lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' })]: found({ uid: 'rs-a', ...stampsOf('ReplicaSet', 'beta') }),
  [lookupKey({ resource: 'secrets', namespace: NS, name: 'alpha-creds' })]: found({ uid: 's-1', ...stampsOf('Secret', 'alpha') }),
});

describe("a workload controller's pod is judged and stamped as its owner's environment's", () => {
  test("the replicaset controller's pod for alpha's ReplicaSet carries alpha's stamps, whose attestation verifies as a Pod; no runner, no owner reference to one, no deadline", () => {
    const stored = made(pod(RS_A), alphaRs);
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'alpha');
    assert.equal(stored.metadata.labels?.[KEYS.managed], 'true');
    assert.equal(stored.metadata.labels?.[KEYS.ownerUid], undefined);
    assert.equal(stored.metadata.annotations?.[KEYS.owner], undefined);
    assert.equal(stored.metadata.annotations?.[KEYS.expiresAt], undefined);
    assert.deepEqual(stored.metadata.ownerReferences, [RS_A], 'the controller stays its only owner');
    assert.ok(verifyObject(TEST_RING, stored, KEYS, 'Pod', NS).ok);
  });

  test("a ReplicaSet carrying its Deployment's copied annotations (they do not verify for a ReplicaSet) is followed to the Deployment", () => {
    const deployment = ref('Deployment', 'lab', 'dep-a');
    const l = lookup({
      [lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' })]: found({ uid: 'rs-a', labels: { [KEYS.environment]: 'alpha' }, annotations: stampsOf('Deployment', 'alpha').annotations }, deployment),
      [lookupKey({ resource: 'deployments', namespace: NS, name: 'lab' })]: found({ uid: 'dep-a', ...stampsOf('Deployment', 'alpha') }),
    });
    assert.equal(made(pod(RS_A), l).metadata.labels?.[KEYS.environment], 'alpha');
  });

  test("beta's ReplicaSet's pod that names alpha's Secret is refused when it is made, as beta's own pod would be (a Secret swapped in before a scale-up, a pull secret the ServiceAccount plugin added)", () => {
    const volume = pod(RS_A, { volumes: [{ name: 'creds', secret: { secretName: 'alpha-creds' } }] });
    const r = answer('validate', review(volume, RS_CONTROLLER), betaRs);
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /secret-ref\.cross-environment/);
    const pull = pod(RS_A, { imagePullSecrets: [{ name: 'alpha-creds' }] });
    assert.match(answer('validate', review(pull, RS_CONTROLLER), betaRs).status?.message ?? '', /secret-ref\.cross-environment/);
  });

  test("alpha's copied stamps on a pod made for beta's ReplicaSet (a template from a ControllerRevision nobody reviewed) are replaced by beta's", () => {
    const copied = pod(RS_A, {}, { labels: { app: 'lab', ...stampsOf('Pod', 'alpha').labels }, annotations: stampsOf('Pod', 'alpha').annotations });
    const stored = made(copied, betaRs);
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'beta');
    assert.notEqual(stored.metadata.annotations?.[KEYS.createNonce], 'b'.repeat(64), 'a nonce of its own');
    assert.ok(verifyObject(TEST_RING, stored, KEYS, 'Pod', NS).ok);
  });

  test('an owner Deed cannot read, one that does not exist, and one that is another object than the reference names are refused on both webhooks (the controller retries)', () => {
    const key = lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' });
    refusedBoth(pod(RS_A), gatheredLookup(new Map([[key, { state: 'unknown', reason: 'timed out' }]]), 'x'), /\[guard\.controller-owner\] cannot tell whose ReplicaSet sandbox-a\/lab-7d9 is \(timed out\)/);
    refusedBoth(pod(RS_A), lookup({}), /\[guard\.controller-owner\].*does not exist/);
    refusedBoth(pod(RS_A), lookup({ [key]: found({ uid: 'rs-other', ...stampsOf('ReplicaSet', 'alpha') }) }), /\[guard\.controller-owner\].*another object than the reference names/);
  });

  test('an owner whose stamps do not verify, with no owner above it, is refused', () => {
    const key = lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' });
    const forged = { uid: 'rs-a', labels: { [KEYS.environment]: 'alpha' }, annotations: { [KEYS.attestation]: `v1:${'A'.repeat(43)}` } };
    refusedBoth(pod(RS_A), lookup({ [key]: found(forged) }), /\[guard\.controller-owner\].*carries stamps that do not verify/);
  });

  test("an owner of no environment makes an unstamped pod, judged as a principal of no environment: it may not run as alpha's runner account", () => {
    const key = lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' });
    const unowned = lookup({ [key]: found({ uid: 'rs-a' }) });
    const stored = made(pod(RS_A), unowned);
    assert.equal(stored.metadata.labels?.[KEYS.environment], undefined);
    const runner = answer('validate', review(pod(RS_A, { serviceAccountName: 'runner' }), RS_CONTROLLER), unowned);
    assert.equal(runner.allowed, false);
    assert.match(runner.status?.message ?? '', /guard\.service-account/);
  });

  test("the ephemeral claim stamps Deed wrote into alpha's Deployment's template (for the runner that created it) stay on the pod its controller makes", () => {
    const runner = { namespace: NS, name: 'runner-0', uid: '144baa57-4863-4fb3-a622-a0c0ecb4a7ff' };
    const metadata = stampedTemplateMetadata(undefined, { environment: 'alpha', runner, namespace: NS }, KEYS, TEST_RING, 'c'.repeat(64));
    const volumes = [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { metadata, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } }];
    const stored = made(pod(RS_A, { volumes }), alphaRs);
    assert.deepEqual((stored.spec as Spec).volumes[0].ephemeral.volumeClaimTemplate.metadata, metadata);
    const beta = answer('validate', review(pod(RS_A, { volumes }), RS_CONTROLLER), betaRs);
    assert.equal(beta.allowed, false, "and not on beta's: they are alpha's");
  });

  test("a Job's pod keeps the Job's restartPolicy", () => {
    const job = ref('Job', 'run-1', 'job-a', 'batch/v1');
    const l = lookup({ [lookupKey({ resource: 'jobs', namespace: NS, name: 'run-1' })]: found({ uid: 'job-a', ...stampsOf('Job', 'alpha') }) });
    assert.equal(made(pod(job, { restartPolicy: 'Never' }), l, kubeSystem('job-controller')).metadata.labels?.[KEYS.environment], 'alpha');
  });

  test("the deployment controller's ReplicaSet is stamped as its Deployment's environment's", () => {
    const rs = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'lab-7d9', namespace: NS, ownerReferences: [ref('Deployment', 'lab', 'dep-a')], annotations: stampsOf('Deployment', 'alpha').annotations },
      spec: { replicas: 1, selector: { matchLabels: { app: 'lab' } }, template: { metadata: { labels: { app: 'lab' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] } } },
    } as KubeObject;
    const l = lookup({ [lookupKey({ resource: 'deployments', namespace: NS, name: 'lab' })]: found({ uid: 'dep-a', ...stampsOf('Deployment', 'alpha') }) });
    const stored = made(rs, l, DEPLOYMENT_CONTROLLER);
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'alpha');
    assert.ok(verifyObject(TEST_RING, stored, KEYS, 'ReplicaSet', NS).ok);
  });

  test("a controller's status write and its UPDATEs that leave the controller reference alone pass; the webhooks are not even sent the latter (test/manifests.test.ts)", () => {
    const stored = made(pod(RS_A), alphaRs);
    for (const more of [{ subResource: 'status' }, {}]) {
      const r = answer('validate', review(stored, RS_CONTROLLER, { operation: 'UPDATE', oldObject: stored, name: 'lab-7d9-x', ...more }), alphaRs);
      assert.equal(r.allowed, true, r.status?.message);
    }
  });
});

describe("a StatefulSet's pod mounts under its claim templates' names only its environment's claims (claim.statefulset-template)", () => {
  const STS_CONTROLLER = kubeSystem('statefulset-controller');
  const DB = ref('StatefulSet', 'db', 'sts-a');
  const stsKey = lookupKey({ resource: 'statefulsets', namespace: NS, name: 'db' });
  const claimKey = (name: string) => lookupKey({ resource: 'persistentvolumeclaims', namespace: NS, name });
  /** Pod db-0 as the statefulset controller makes it: volume "data" mounts claim data-db-0, from the claim template "data". */
  const db0 = (extra: Spec[] = []) => pod(DB, { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } }, ...extra] }, { name: 'db-0', generateName: undefined, labels: { app: 'db' } });
  const world = (owner: Spec, claims: Record<string, Spec>) => lookup({ [stsKey]: found({ uid: 'sts-a', ...owner }), ...Object.fromEntries(Object.entries(claims).map(([name, metadata]) => [claimKey(name), found(metadata)])) });
  const alphaSts = stampsOf('StatefulSet', 'alpha');

  test("the claim the controller made from alpha's template (alpha's stamps) is mounted", () => {
    const stored = made(db0(), world(alphaSts, { 'data-db-0': { uid: 'c-1', ...stampsOf('PersistentVolumeClaim', 'alpha') } }), STS_CONTROLLER);
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'alpha');
  });

  test('an unstamped claim squatted under the name (by a principal of no environment) is refused, by the validating webhook and by the one call per create, naming the claim and who must delete it', () => {
    const l = world(alphaSts, { 'data-db-0': { uid: 'c-1' } });
    for (const webhook of ['validate', 'admit'] as const) {
      const d = decide(webhook, review(db0(), STS_CONTROLLER), testContext(undefined, undefined, undefined, l));
      assert.ok(d.kind === 'review' && !d.response.response.allowed, `${webhook}: expected a refusal`);
      assert.match(
        d.response.response.status?.message ?? '',
        /\[claim\.statefulset-template\] spec\.volumes\[name=data\]\.persistentVolumeClaim\.claimName: StatefulSet sandbox-a\/db's claim template "data" names claim data-db-0 for pod db-0, but claim data-db-0 already exists and carries no stamps .*the platform .* must delete claim data-db-0/,
        webhook,
      );
    }
  });

  test("another environment's claim squatted under the name is refused, the refusal saying who must delete it and naming no environment but the pod's", () => {
    const r = answer('validate', review(db0(), STS_CONTROLLER), world(alphaSts, { 'data-db-0': { uid: 'c-1', ...stampsOf('PersistentVolumeClaim', 'beta') } }));
    assert.equal(r.allowed, false);
    const message = r.status?.message ?? '';
    assert.match(message, /\[claim\.statefulset-template\].*belongs to another environment.*its environment or the platform must delete claim data-db-0/);
    assert.doesNotMatch(message, /beta/);
  });

  test('in warn mode the squat is let through with a warning (a short one: the API server keeps warnings short)', () => {
    const l = world(alphaSts, { 'data-db-0': { uid: 'c-1' } });
    const d = decide('admit', review(db0(), STS_CONTROLLER), testContext({ ...FIXTURE_POLICY, rules: { 'claim.statefulset-template': 'warn' } }, undefined, undefined, l));
    assert.ok(d.kind === 'review' && d.response.response.allowed, d.kind === 'review' ? d.response.response.status?.message : d.message);
    assert.match((d.response.response.warnings ?? []).join('\n'), /claim\.statefulset-template.*data-db-0/);
  });

  test("a shared unstamped claim the template's pod mounts under another name is still a shared input; a StatefulSet of no environment (a Helm chart's) mounts what it did", () => {
    const shared = { name: 'cache', persistentVolumeClaim: { claimName: 'shared-cache' } };
    const claims = { 'data-db-0': { uid: 'c-1', ...stampsOf('PersistentVolumeClaim', 'alpha') }, 'shared-cache': { uid: 'c-2' } };
    assert.equal(made(db0([shared]), world(alphaSts, claims), STS_CONTROLLER).metadata.labels?.[KEYS.environment], 'alpha');
    const helm = made(db0(), world({}, { 'data-db-0': { uid: 'c-1' } }), STS_CONTROLLER);
    assert.equal(helm.metadata.labels?.[KEYS.environment], undefined);
  });
});

describe('adoption and release stay within one environment', () => {
  const alphaPod = () => made(pod(undefined), lookup({}), RUNNER_A);
  const sweep = ref('ReplicaSet', 'sweep', 'rs-b');
  const owners = lookup({
    [lookupKey({ resource: 'replicasets', namespace: NS, name: 'sweep' })]: found({ uid: 'rs-b', ...stampsOf('ReplicaSet', 'beta') }),
    [lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' })]: found({ uid: 'rs-a', ...stampsOf('ReplicaSet', 'alpha') }),
  });
  const adopt = (obj: KubeObject, owner: ReturnType<typeof ref>) => ({ ...obj, metadata: { ...obj.metadata, ownerReferences: [...(obj.metadata.ownerReferences ?? []), owner] } }) as KubeObject;

  test("the replicaset controller may not adopt alpha's pod for beta's ReplicaSet (its selector matched it), and may for alpha's", () => {
    const old = alphaPod();
    const refused = answer('validate', review(adopt(old, sweep), RS_CONTROLLER, { operation: 'UPDATE', oldObject: old, name: 'p' }), owners);
    assert.equal(refused.allowed, false);
    assert.match(refused.status?.message ?? '', /\[guard\.adoption\] metadata\.ownerReferences: Pod sandbox-a\/.* is not of the environment of ReplicaSet sandbox-a\/sweep/);
    assert.doesNotMatch(refused.status?.message ?? '', /beta/, 'names no other environment');
    const ok = answer('validate', review(adopt(old, RS_A), RS_CONTROLLER, { operation: 'UPDATE', oldObject: old, name: 'p' }), owners);
    assert.equal(ok.allowed, true, ok.status?.message);
  });

  test("an unstamped ReplicaSet is of its own controller's environment where Deed reads that (alpha's Deployment), and of none where it does not (an operator's custom resource): the replicaset controller's adoption of a pod of no environment for it is not refused", () => {
    const orphan = made(pod(undefined), lookup({}), { username: 'helm', groups: ['system:authenticated'], extra: {} });
    const operatorSet = ref('ReplicaSet', 'op-rs', 'rs-op');
    const world = lookup({
      [lookupKey({ resource: 'replicasets', namespace: NS, name: 'op-rs' })]: found({ uid: 'rs-op' }, ref('Rollout', 'op', 'ro-1', 'labs.example/v1')),
      [lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' })]: found({ uid: 'rs-a' }, ref('Deployment', 'lab', 'dep-a')),
      [lookupKey({ resource: 'deployments', namespace: NS, name: 'lab' })]: found({ uid: 'dep-a', ...stampsOf('Deployment', 'alpha') }),
    });
    const adopted = answer('validate', review(adopt(orphan, operatorSet), RS_CONTROLLER, { operation: 'UPDATE', oldObject: orphan, name: 'p' }), world);
    assert.equal(adopted.allowed, true, adopted.status?.message);
    // The pod the replicaset controller makes for the unstamped ReplicaSet of alpha's Deployment (one made before the upgrade) is alpha's.
    assert.equal(made(pod(RS_A), world).metadata.labels?.[KEYS.environment], 'alpha');
    assert.equal(made(pod(operatorSet), world).metadata.labels?.[KEYS.environment], undefined);
  });

  test("a plain owner a workload controller adds (the statefulset controller of Kubernetes 1.28 to 1.30, on a claim under its template's name) is judged as a controller is: beta's StatefulSet onto alpha's claim, or one that is not there, refused; alpha's onto alpha's passes; the owner is read (reviewer-104 F1)", () => {
    const STS = kubeSystem('statefulset-controller');
    const plain = (name: string, uid: string) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', name, uid });
    const claimOf = (owners: Spec[] = []): KubeObject => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-grab-0', namespace: NS, uid: 'c-1', ...stampsOf('PersistentVolumeClaim', 'alpha'), ownerReferences: owners }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }) as unknown as KubeObject;
    const sets = lookup({
      [lookupKey({ resource: 'statefulsets', namespace: NS, name: 'grab' })]: found({ uid: 'ss-b', ...stampsOf('StatefulSet', 'beta') }),
      [lookupKey({ resource: 'statefulsets', namespace: NS, name: 'keep' })]: found({ uid: 'ss-a', ...stampsOf('StatefulSet', 'alpha') }),
    });
    const update = (owners: Spec[], who = STS): Review => {
      const body = review(claimOf(owners), who, { operation: 'UPDATE', oldObject: claimOf(), name: 'data-grab-0' });
      body.request.kind = { group: '', version: 'v1', kind: 'PersistentVolumeClaim' };
      body.request.resource = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };
      return body;
    };
    const taken = answer('validate', update([plain('grab', 'ss-b')]), sets);
    assert.equal(taken.allowed, false);
    assert.match(taken.status?.message ?? '', /\[guard\.adoption\] metadata\.ownerReferences\[0\]: PersistentVolumeClaim sandbox-a\/data-grab-0 is not of the environment of StatefulSet sandbox-a\/grab; it may not become an owner of it \(the garbage collector would delete it once its owners are gone\)/);
    assert.match(answer('validate', update([plain('gone', 'ss-x')]), sets).status?.message ?? '', /\[guard\.adoption\] metadata\.ownerReferences\[0\]: the adoption of PersistentVolumeClaim sandbox-a\/data-grab-0: its controlling owner StatefulSet sandbox-a\/gone does not exist/);
    const own = answer('validate', update([plain('keep', 'ss-a')]), sets);
    assert.equal(own.allowed, true, own.status?.message);
    assert.deepEqual(planLookups(update([plain('grab', 'ss-b')]), 'validate', KEYS).lookups, [{ resource: 'statefulsets', namespace: NS, name: 'grab', uid: 'ss-b' }]);
  });

  test("alpha's runner may not hand its own pod to beta's ReplicaSet by writing the reference", () => {
    const old = alphaPod();
    const r = answer('validate', review(adopt(old, sweep), RUNNER_A, { operation: 'UPDATE', oldObject: old, name: 'p' }), owners);
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /\[guard\.adoption\]/);
  });

  test("on every kind: alpha's runner may not hand its own custom resource or ControllerRevision to beta's ReplicaSet (refused at CREATE already), and may to its own", () => {
    for (const [group, resource, kind] of [['labs.example', 'virtualmachines', 'VirtualMachine'], ['apps', 'controllerrevisions', 'ControllerRevision']] as const) {
      const as = (obj: KubeObject, more: Spec = {}): Review => {
        const body = review(obj, RUNNER_A, { name: 'o', ...more });
        body.request.resource = { group, version: 'v1', resource };
        return body;
      };
      const created = { apiVersion: `${group}/v1`, kind, metadata: { name: 'o', namespace: NS } } as KubeObject;
      const m = answer('mutate', as(created), owners);
      assert.equal(m.allowed, true, m.status?.message);
      const old = jsonpatch.applyPatch(structuredClone(created), decodePatch({ response: m } as never)).newDocument as KubeObject;
      const refused = answer('validate', as(adopt(old, sweep), { operation: 'UPDATE', oldObject: old }), owners);
      assert.equal(refused.allowed, false, kind);
      assert.match(refused.status?.message ?? '', new RegExp(`\\[guard\\.adoption\\] metadata\\.ownerReferences: ${kind} sandbox-a/o is not of the environment of ReplicaSet sandbox-a/sweep`));
      const ok = answer('validate', as(adopt(old, RS_A), { operation: 'UPDATE', oldObject: old }), owners);
      assert.equal(ok.allowed, true, `${kind}: ${ok.status?.message}`);
      // A controller of a kind Deed does not read is its operator's to judge, as at CREATE; but not one that blocks its owner's
      // deletion, whose uid Deed cannot place (the garbage collector finds it by uid, whatever kind the reference gives).
      const notebook = ref('Notebook', 'nb', 'nb-1', 'labs.example/v1');
      const operators = answer('validate', as(adopt(old, { ...notebook, blockOwnerDeletion: false }), { operation: 'UPDATE', oldObject: old }), owners);
      assert.equal(operators.allowed, true, `${kind}: ${operators.status?.message}`);
      const blocking = answer('validate', as(adopt(old, notebook), { operation: 'UPDATE', oldObject: old }), owners);
      assert.match(blocking.status?.message ?? '', /\[reference\.unknown\] metadata\.ownerReferences\[0\]: blocks the deletion of the object of uid nb-1, named as Notebook/, kind);
    }
  });

  test('through the status subresource too, whose strategy keeps owner-reference changes: a Service, a claim, a ReplicaSet', () => {
    // The default, object and workload doors. (A custom resource's status strategy resets its metadata.)
    for (const [group, resource, kind] of [['', 'services', 'Service'], ['', 'persistentvolumeclaims', 'PersistentVolumeClaim'], ['apps', 'replicasets', 'ReplicaSet']] as const) {
      const as = (obj: KubeObject, more: Spec = {}): Review => {
        const body = review(obj, RUNNER_A, { name: 'o', ...more });
        body.request.resource = { group, version: 'v1', resource };
        return body;
      };
      const created = { apiVersion: group === '' ? 'v1' : `${group}/v1`, kind, metadata: { name: 'o', namespace: NS }, spec: {} } as KubeObject;
      if (kind === 'ReplicaSet') created.spec = { selector: { matchLabels: { app: 'o' } }, template: { metadata: { labels: { app: 'o' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'x' }] } } };
      const m = answer('mutate', as(created), owners);
      assert.equal(m.allowed, true, `${kind}: ${m.status?.message}`);
      const old = jsonpatch.applyPatch(structuredClone(created), decodePatch({ response: m } as never)).newDocument as KubeObject;
      const status = { operation: 'UPDATE', oldObject: old, subResource: 'status' };
      const handed = as(adopt(old, sweep), status);
      assert.deepEqual(planLookups(handed, 'validate', KEYS).lookups, [{ resource: 'replicasets', namespace: NS, name: 'sweep', uid: 'rs-b' }], `${kind}: the new controller is read`);
      const refused = answer('validate', handed, owners);
      assert.equal(refused.allowed, false, kind);
      assert.match(refused.status?.message ?? '', new RegExp(`\\[guard\\.adoption\\] metadata\\.ownerReferences: ${kind} sandbox-a/o is not of the environment of ReplicaSet sandbox-a/sweep`));
      const ok = answer('validate', as(adopt(old, RS_A), status), owners);
      assert.equal(ok.allowed, true, `${kind}: ${ok.status?.message}`);
      // A status write that leaves the references as they were reads nothing for them.
      assert.deepEqual(planLookups(as({ ...old, status: { ready: true } } as KubeObject, status), 'validate', KEYS).lookups, [], kind);
    }
  });

  test("alpha's runner may not give its claim a controller of a kind Deed does not read (on the stamped kinds whose it is cannot be told); the operator listed in systemPrincipals may", () => {
    const body = (old: KubeObject): Review => {
      const r = review(adopt(old, ref('DataVolume', 'disk', 'dv-1', 'cdi.kubevirt.io/v1beta1')), RUNNER_A, { operation: 'UPDATE', oldObject: old, name: 'disk' });
      r.request.resource = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };
      return r;
    };
    const created = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'disk', namespace: NS }, spec: {} } as KubeObject;
    const create = review(created, RUNNER_A, { name: 'disk' });
    create.request.resource = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };
    const m = answer('mutate', create, owners);
    assert.equal(m.allowed, true, m.status?.message);
    const old = jsonpatch.applyPatch(structuredClone(created), decodePatch({ response: m } as never)).newDocument as KubeObject;
    const refused = answer('validate', body(old), owners);
    assert.equal(refused.allowed, false);
    assert.match(refused.status?.message ?? '', /\[guard\.adoption\] .*its controlling owner is a DataVolume \(cdi\.kubevirt\.io\/v1beta1\), whose stamps Deed does not read; an operator that makes or adopts objects for its own resources is listed in systemPrincipals/);
    const operator = { ...body(old).request.userInfo, username: 'system:serviceaccount:cdi:cdi-deployment', groups: ['system:serviceaccounts', 'system:authenticated'] };
    const asOperator = body(old);
    asOperator.request.userInfo = operator;
    const listed = testContext({ ...FIXTURE_POLICY, systemPrincipals: { users: [operator.username], groups: ['system:nodes'] } }, undefined, undefined, owners);
    const d = decide('validate', asOperator, listed);
    assert.equal(d.kind === 'review' && d.response.response.allowed, true);
  });

  test('a controller reference to an owner Deed cannot read is refused', () => {
    const old = alphaPod();
    const r = answer('validate', review(adopt(old, ref('ReplicaSet', 'ghost', 'rs-x')), RS_CONTROLLER, { operation: 'UPDATE', oldObject: old, name: 'p' }), owners);
    assert.match(r.status?.message ?? '', /\[guard\.adoption\].*does not exist/);
  });
});

describe('the reads a controller-made object needs are planned', () => {
  test("a pod with a controller reference plans its owner on both webhooks, and the owner's own controller follows", () => {
    const body = review(pod(RS_A), RS_CONTROLLER);
    const rsKey: LookupKey = { resource: 'replicasets', namespace: NS, name: 'lab-7d9', uid: 'rs-a' };
    for (const webhook of ['mutate', 'validate'] as const) assert.deepEqual(planLookups(body, webhook, KEYS).lookups, [rsKey], webhook);
    const first = lookup({ [lookupKey(rsKey)]: found({ uid: 'rs-a' }, ref('Deployment', 'lab', 'dep-a')) });
    assert.deepEqual(followUpLookups([rsKey], first), [{ resource: 'deployments', namespace: NS, name: 'lab', uid: 'dep-a' }]);
  });

  test("an owner the cache still records under an earlier uid (deleted and made again, the watch behind) is read from the API server, not refused as another object", async () => {
    const rs = (uid: string) => ({ uid, ...stampsOf('ReplicaSet', 'alpha') });
    const cache = fakeCache({ [lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' })]: { ...rs('rs-old'), deleting: false } }, { inScope: [NS], current: ['replicasets'] });
    const live = fakeLive({ [lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' })]: found(rs('rs-a')) });
    const reader = createCachedReader(cache, live, 'deed.dev', createMetrics());
    const judged = async (webhook: 'mutate' | 'validate', body: Review, from: typeof reader) =>
      answer(webhook, body, await gatherLookups(planLookups(body, webhook, KEYS).lookups, (keys) => from.read(keys, 1000)));
    const m = await judged('mutate', review(pod(RS_A), RS_CONTROLLER), reader);
    assert.equal(m.allowed, true, m.status?.message);
    const stored = jsonpatch.applyPatch(pod(RS_A), decodePatch({ response: m } as never)).newDocument as KubeObject;
    const v = await judged('validate', review(stored, RS_CONTROLLER), reader);
    assert.equal(v.allowed, true, v.status?.message);
    assert.deepEqual(live.reads, ['replicasets/sandbox-a/lab-7d9', 'replicasets/sandbox-a/lab-7d9']);
    // The record of the uid the reference names is the cache's to answer, with no read.
    const current = createCachedReader(fakeCache({ [lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' })]: { ...rs('rs-a'), deleting: false } }, { inScope: [NS], current: ['replicasets'] }), live, 'deed.dev', createMetrics());
    assert.equal((await judged('validate', review(stored, RS_CONTROLLER), current)).allowed, true);
    assert.equal(live.reads.length, 2);
    // Made again in the API server too: another object than the reference names, refused.
    const replaced = createCachedReader(cache, fakeLive({ [lookupKey({ resource: 'replicasets', namespace: NS, name: 'lab-7d9' })]: found(rs('rs-new')) }), 'deed.dev', createMetrics());
    assert.match((await judged('validate', review(stored, RS_CONTROLLER), replaced)).status?.message ?? '', /another object than the reference names \(uid rs-new, not rs-a\)/);
  });

  test('an UPDATE that changes the controller reference plans the new owner; one that keeps it plans none', () => {
    const old = pod(undefined);
    assert.deepEqual(planLookups(review(pod(RS_A), RS_CONTROLLER, { operation: 'UPDATE', oldObject: old, name: 'p' }), 'validate', KEYS).lookups, [{ resource: 'replicasets', namespace: NS, name: 'lab-7d9', uid: 'rs-a' }]);
    assert.deepEqual(planLookups(review(pod(RS_A), RS_CONTROLLER, { operation: 'UPDATE', oldObject: pod(RS_A), name: 'p' }), 'validate', KEYS).lookups, []);
  });
});
