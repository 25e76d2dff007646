// claim.at-binding (rules/claim-binding.ts): a claim's data source is judged again when the
// claim is bound to the volume provisioned from it. The attack it closes: beta's claim
// `copy` clones beta's `data` and waits unprovisioned (WaitForFirstConsumer, its pod held
// back); beta deletes `data`; a claim of alpha's is made under the name, by a controller for
// alpha (no live-reader judgement reaches a system controller) or within the watch's delay;
// the provisioner copies alpha's claim into beta's volume, and the PV controller binds it.
// And the webhooks' matchCondition that sends that binding, alone of the PV controller's
// writes, to Deed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { run as runCel } from '@bufbuild/cel';
import { decide } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { kubeSystemExclusion } from '../src/install/manifests.js';
import { gatheredLookup, lookupKey, planLookups } from '../src/policy/lookup.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { DEFAULT_WORKLOAD_CONTROLLERS } from '../src/config/schema.js';
import { claimOf, fixture, FIXTURE_KEYS, FIXTURE_POLICY, stampedMetadata, testContext, toCel, type Review } from './helpers.js';

const NS = 'shared';
const BINDER: UserInfo = { username: 'system:serviceaccount:kube-system:persistent-volume-binder', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} };
/** The PV controller where the controller manager runs without service-account credentials: a system principal. */
const CONTROLLER_MANAGER: UserInfo = { username: 'system:kube-controller-manager', groups: ['system:authenticated'], extra: {} };
const BETA_RUNNER = fixture('mutate-create-pod-by-other-namespace-runner.json').request.userInfo as UserInfo;
const CREATED = '2026-12-06T05:00:00Z';
const EARLIER = '2026-12-06T04:00:00Z';
const LATER = '2026-12-06T06:00:00Z';

const clone = { dataSource: { kind: 'PersistentVolumeClaim', name: 'data' } };
const restore = { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' } };

/** Beta's claim as stored, not yet bound, filled from `source`; `metadata` replaces its stamps. */
function pending(source: Record<string, unknown>, metadata: KubeObject['metadata'] = claimOf('beta', NS).metadata): KubeObject {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { ...metadata, name: 'copy', namespace: NS, uid: 'copy-uid', creationTimestamp: CREATED }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...source } };
}

/** The UPDATE that binds `before` to a volume, as the PV controller sends it (its annotations too), or another change by `user`. */
function binding(before: KubeObject, user: UserInfo = BINDER, change: (o: KubeObject) => void = bind): Review {
  const after = structuredClone(before);
  change(after);
  const body = fixture('validate-create-pod-by-runner.json');
  body.request = {
    ...body.request,
    kind: { group: '', version: 'v1', kind: 'PersistentVolumeClaim' },
    resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
    requestKind: undefined,
    requestResource: undefined,
    name: 'copy',
    namespace: NS,
    operation: 'UPDATE',
    userInfo: user,
    object: after,
    oldObject: before,
  };
  return body;
}
function bind(o: KubeObject): void {
  (o.spec as Record<string, unknown>).volumeName = 'pvc-copy-uid';
  o.metadata.annotations = { ...o.metadata.annotations, 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' };
}

const claim = (env: string | undefined, created: string): Lookup => ({ state: 'found', metadata: env === undefined ? { uid: 'd' } : { ...claimOf(env, NS).metadata, uid: 'd' }, created });
const lookup = (entries: Record<string, Lookup>): ObjectLookup => gatheredLookup(new Map(Object.entries(entries)), 'not read in this test');
const source = (found: Lookup) => lookup({ 'persistentvolumeclaims/shared/data': found });

function answer(body: Review, read: ObjectLookup, config: ConfigInput = FIXTURE_POLICY) {
  const d = decide('validate', body, testContext(config, undefined, undefined, read));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}
function refused(body: Review, read: ObjectLookup, pattern: RegExp, config?: ConfigInput): void {
  const r = answer(body, read, config);
  assert.equal(r.allowed, false, 'expected a refusal');
  assert.match(r.status?.message ?? '', pattern);
}
function passes(body: Review, read: ObjectLookup, config?: ConfigInput): void {
  const r = answer(body, read, config);
  assert.equal(r.allowed, true, r.status?.message);
}

describe('claim.at-binding: a claim is bound to its copy only if what it was filled from is the source judged at its CREATE', () => {
  test("the PV controller's binding of beta's claim filled from a source made after it is refused whoever's that is now: what was copied cannot be told", () => {
    for (const now of ['alpha', 'beta', undefined])
      refused(
        binding(pending(clone)),
        source(claim(now, LATER)),
        /\[claim\.at-binding\] spec\.dataSource: claim data, which this claim is filled from, was made after the claim \(2026-12-06T06:00:00Z; the claim 2026-12-06T05:00:00Z\): it was deleted and made again under its name since it was judged.*Delete this claim and create it again from a source that stays until the claim is bound/,
      );
    // As the controller manager's own identity too (a system principal, judged as any binder).
    refused(binding(pending(clone), CONTROLLER_MANAGER), source(claim('alpha', LATER)), /\[claim\.at-binding\]/);
  });

  test("a source made in the claim's own second is judged for the claim's environment: alpha's is refused, beta's and one of no environment are bound (a manifest that makes both at once)", () => {
    refused(
      binding(pending(clone)),
      source(claim('alpha', CREATED)),
      /\[claim\.at-binding\] spec\.dataSource: claim data, which this claim is filled from, was made in the same second as the claim, .*this claim clones claim data, which belongs to another environment; environment "beta" may not .*Delete this claim and create it again from a source of its own environment/,
    );
    passes(binding(pending(clone)), source(claim('beta', CREATED)));
    passes(binding(pending(clone)), source(claim(undefined, CREATED)));
  });

  test('a source made before the claim is the one judged at its CREATE, whoever could tell whose the claim is; a claim with no data source reads nothing', () => {
    passes(binding(pending(clone)), source(claim('alpha', EARLIER)));
    passes(binding(pending(clone)), source(claim('beta', EARLIER)));
    // Stamps that no longer verify (a key retired while the claim waited) do not matter then.
    const relabelled = claimOf('beta', NS).metadata;
    passes(binding(pending(clone, { ...relabelled, labels: { ...relabelled.labels, 'deed.dev/environment': 'gamma' } }), BINDER), source(claim('beta', EARLIER)));
    passes(binding(pending({})), lookup({}));
  });

  test('a source that is gone, cannot be read, or whose creation time is unknown is refused: what was copied cannot be told', () => {
    refused(binding(pending(clone)), source({ state: 'absent' }), /\[claim\.at-binding\] spec\.dataSource: claim data, which this claim is filled from, no longer exists/);
    refused(binding(pending(clone)), source({ state: 'unknown', reason: 'timed out' }), /cannot tell whether claim data, which this claim is filled from, is the one judged when the claim was made: timed out/);
    refused(binding(pending(clone)), source({ state: 'found', metadata: claimOf('beta', NS).metadata }), /was made after the claim \(when is not known/);
  });

  test('a restore is judged through its snapshot whenever that was made (a snapshot is taken of whatever claim stands under its source\'s name): a source claim of alpha\'s, or made after the snapshot, is refused; one of beta\'s made before it passes; a snapshot made after the claim is refused', () => {
    const snapshot = (created: string): Lookup => ({ state: 'found', metadata: { uid: 's' }, sourceClaim: 'taken', created });
    const restoring = (snap: string, taken: Lookup) => lookup({ 'volumesnapshots/shared/snap': snapshot(snap), 'persistentvolumeclaims/shared/taken': taken });
    passes(binding(pending(restore)), restoring(EARLIER, claim('beta', '2026-12-06T03:00:00Z')));
    refused(binding(pending(restore)), restoring(EARLIER, claim('alpha', '2026-12-06T03:00:00Z')), /\[claim\.at-binding\] spec\.dataSource: snapshot snap, which this claim is filled from, copies whatever claim stands under its source's name when it is taken.*belongs to another environment/);
    // Beta's pending source deleted and made again by alpha after the snapshot, before it was taken.
    refused(binding(pending(restore)), restoring(EARLIER, claim('alpha', '2026-12-06T04:30:00Z')), /snapshot snap was taken of claim taken, which has since been deleted and made again/);
    refused(binding(pending(restore)), restoring(LATER, claim('beta', '2026-12-06T03:00:00Z')), /snapshot snap, which this claim is filled from, was made after the claim/);
  });

  test("an ephemeral volume's claim (made for beta's pod, by its controller, unreviewed, as late as it takes the name) is judged from its pod's CREATE, where its source was: a source made after the pod is refused even if the claim is later still", () => {
    const claimAt = (created: string): KubeObject => {
      const c = pending(clone, { ...claimOf('beta', NS).metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'lab', uid: 'lab-uid', controller: true, blockOwnerDeletion: true }] });
      c.metadata.creationTimestamp = created;
      return c;
    };
    const pod: Lookup = { state: 'found', metadata: { ...stampedMetadata('Pod', 'beta', NS).metadata, uid: 'lab-uid' }, created: CREATED };
    // The claim made an hour after the pod (its name held by another claim till then); alpha's source made in between.
    refused(binding(claimAt(LATER)), lookup({ 'persistentvolumeclaims/shared/data': claim('alpha', '2026-12-06T05:30:00Z'), 'pods/shared/lab': pod }), /claim data, which this claim is filled from, was made after pod lab \(2026-12-06T05:30:00Z; pod lab 2026-12-06T05:00:00Z\)/);
    passes(binding(claimAt(LATER)), lookup({ 'persistentvolumeclaims/shared/data': claim('alpha', EARLIER), 'pods/shared/lab': pod }));
    // In the pod's second: judged for the claim's environment.
    passes(binding(claimAt(LATER)), lookup({ 'persistentvolumeclaims/shared/data': claim('beta', CREATED), 'pods/shared/lab': pod }));
    refused(binding(claimAt(LATER)), lookup({ 'persistentvolumeclaims/shared/data': claim('alpha', CREATED), 'pods/shared/lab': pod }), /environment "beta" may not/);
    // Unstamped (made before the namespace opted in), it is its pod's: beta's.
    const unstamped = claimAt(LATER);
    unstamped.metadata = { ...unstamped.metadata, labels: {}, annotations: {} };
    passes(binding(unstamped), lookup({ 'persistentvolumeclaims/shared/data': claim('beta', CREATED), 'pods/shared/lab': pod }));
    refused(binding(unstamped), lookup({ 'persistentvolumeclaims/shared/data': claim('alpha', CREATED), 'pods/shared/lab': pod }), /environment "beta" may not/);
    // Its pod gone (an Orphan delete) or another under its name: when its source was judged cannot be told.
    refused(binding(claimAt(LATER)), lookup({ 'persistentvolumeclaims/shared/data': claim('beta', EARLIER), 'pods/shared/lab': { state: 'absent' } }), /when that source was judged cannot be told \(it was made for pod lab \(uid lab-uid\), which is gone\)/);
    refused(binding(claimAt(LATER)), lookup({ 'persistentvolumeclaims/shared/data': claim('beta', EARLIER), 'pods/shared/lab': { ...pod, metadata: { ...pod.metadata, uid: 'other' } } as Lookup }), /which is gone/);
  });

  test('a break-glass principal binds it anyway (the override is logged)', () => {
    const glass: ConfigInput = { ...FIXTURE_POLICY, breakGlass: { users: ['night-shift'] } };
    passes(binding(pending(clone), { username: 'night-shift', groups: ['system:authenticated'], extra: {} }), source(claim('alpha', LATER)), glass);
  });

  test('not judged in a namespace bound to an environment, nor on a change that binds nothing', () => {
    const bound: ConfigInput = { ...FIXTURE_POLICY, environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'], namespaces: [NS] }] };
    passes(binding(pending(clone), CONTROLLER_MANAGER), source(claim('alpha', LATER)), bound);
    // Beta's own label change reads nothing for it.
    const relabel = binding(pending(clone), BETA_RUNNER, (o) => (o.metadata.labels = { ...o.metadata.labels, tier: 'x' }));
    passes(relabel, lookup({}));
    assert.deepEqual(planLookups(relabel, 'validate', FIXTURE_KEYS, testContext().policy).lookups.map(lookupKey), []);
  });

  test('the read plan reads the source fresh (its creation time), and the pod a claim was made for, fresh too', () => {
    const keys = (body: Review) => planLookups(body, 'validate', FIXTURE_KEYS, testContext().policy).lookups;
    assert.deepEqual(keys(binding(pending(clone))), [{ resource: 'persistentvolumeclaims', namespace: NS, name: 'data', fresh: true }]);
    assert.deepEqual(keys(binding(pending(restore))).map(lookupKey), ['volumesnapshots/shared/snap']);
    const made = pending(clone, { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'lab', uid: 'lab-uid', controller: true }] });
    assert.deepEqual(keys(binding(made)), [{ resource: 'persistentvolumeclaims', namespace: NS, name: 'data', fresh: true }, { resource: 'pods', namespace: NS, name: 'lab', fresh: true }]);
  });

  test("a new claim's source is read fresh where it is judged (the binding compares with what stands under the name), a claim a pod mounts from the cache", () => {
    const create = (obj: KubeObject): Review => {
      const body = binding(obj, BETA_RUNNER);
      body.request = { ...body.request, operation: 'CREATE', object: obj, oldObject: null };
      return body;
    };
    const copy = pending(clone, {});
    for (const webhook of ['admit', 'validate'] as const) {
      const keys = planLookups(create(copy), webhook, FIXTURE_KEYS, testContext().policy).lookups.filter((k) => k.resource === 'persistentvolumeclaims' && k.readers !== true);
      assert.deepEqual(keys, [{ resource: 'persistentvolumeclaims', namespace: NS, name: 'data', fresh: true }], webhook);
    }
    const pod = fixture('mutate-create-pod-by-runner.json');
    const mounted = planLookups(pod, 'admit', FIXTURE_KEYS, testContext().policy).lookups.filter((k) => k.resource === 'persistentvolumeclaims');
    assert.ok(mounted.length > 0 && mounted.every((k) => k.fresh === undefined), JSON.stringify(mounted));
  });

  test("the PV controller's binding is judged on the source alone: it acts for no environment, and no guarded write refuses it", () => {
    passes(binding(pending(clone)), source(claim('beta', EARLIER)));
    // Any other write of its to beta's claim is not sent to Deed; if one were, it is a principal of no environment's.
    refused(binding(pending(clone), BINDER, (o) => (o.metadata.labels = { ...o.metadata.labels, tier: 'x' })), lookup({}), /\[guard\.unmapped\]/);
  });
});

describe("the webhooks' matchCondition sends the PV controller's binding of a claim, and nothing else of kube-system's but the workload controllers' own", () => {
  const matches = (request: Record<string, unknown>, object: unknown, oldObject: unknown) =>
    runCel(kubeSystemExclusion(DEFAULT_WORKLOAD_CONTROLLERS), { request: toCel(request), object: toCel(object), oldObject: toCel(oldObject) } as never) === true;
  const request = (user: UserInfo, extra: Record<string, unknown> = {}) => ({ operation: 'UPDATE', resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' }, userInfo: { username: user.username, groups: user.groups }, ...extra });
  const before = pending(clone);
  const after = structuredClone(before);
  bind(after);

  test('the binding of a claim filled from a data source is sent; of one with none, the same change of a bound claim, its status, another change, and the binder on another kind are not', () => {
    assert.equal(matches(request(BINDER), after, before), true);
    const plain = pending({});
    const plainBound = structuredClone(plain);
    bind(plainBound);
    assert.equal(matches(request(BINDER), plainBound, plain), false);
    assert.equal(matches(request(BINDER), after, after), false);
    assert.equal(matches(request(BINDER, { subResource: 'status' }), after, before), false);
    assert.equal(matches(request(BINDER), { ...before, metadata: { ...before.metadata, labels: { tier: 'x' } } }, before), false);
    assert.equal(matches(request(BINDER, { resource: { group: '', version: 'v1', resource: 'persistentvolumes' } }), after, before), false);
    // Another kube-system account's binding is not sent; anyone outside kube-system is.
    assert.equal(matches(request({ ...BINDER, username: 'system:serviceaccount:kube-system:expand-controller' }), after, before), false);
    assert.equal(matches(request(BETA_RUNNER), after, before), true);
    assert.equal(runCel(kubeSystemExclusion([]), { request: toCel(request(BINDER)), object: toCel(after), oldObject: toCel(before) } as never), true);
  });
});
