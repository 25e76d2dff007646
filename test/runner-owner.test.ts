// guard.runner-owner: a runner pod's owners are objects its environment's guards keep, whoever
// creates it (the platform, a manager): deleting an owner anyone may delete would make the
// garbage collector delete the runner and everything Deed stamped with an owner reference to it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { planLookups } from '../src/policy/lookup.js';
import { compilePolicy } from '../src/policy/policy.js';
import { parseConfig } from '../src/config/load.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { decodePatch, fixture, FIXTURE_KEYS, NOW, stampedMetadata, testContext, type Review, NO_READERS } from './helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner', 'shared:runner'], namespaces: ['sandbox-a'], managers: { users: ['alpha-manager'] } },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  platform: { users: ['deployer'] },
};
const MANAGER: UserInfo = { username: 'alpha-manager', groups: ['system:authenticated'], extra: {} };
const PLATFORM: UserInfo = { username: 'deployer', groups: ['system:authenticated'], extra: {} };
const BREAK_GLASS: UserInfo = { username: 'root', groups: ['system:masters', 'system:authenticated'], extra: {} };
/** alpha's runner shared/runner-0, by its pod-bound token. */
const RUNNER: UserInfo = {
  username: 'system:serviceaccount:shared:runner',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:shared', 'system:authenticated'],
  extra: { 'authentication.kubernetes.io/pod-name': ['runner-0'], 'authentication.kubernetes.io/pod-uid': ['144baa57-4863-4fb3-a622-a0c0ecb4a7ff'] },
};

type Ref = { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean };

const LEASE_UID = '11111111-1111-4111-8111-111111111111';
const lease = (name: string, uid = LEASE_UID): Ref => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name, uid });

/** `resource/namespace/name` to what a lookup finds (metadata, a pod's service account), a string for unknown; the rest is absent. */
function lookupOf(objects: Record<string, { metadata: KubeObject['metadata']; serviceAccountName?: string } | string>): ObjectLookup {
  return {
    readers: NO_READERS,
    get(resource, namespace, name): Lookup {
      const value = objects[`${resource}/${namespace}/${name}`];
      if (value === undefined) return { state: 'absent' };
      if (typeof value === 'string') return { state: 'unknown', reason: value };
      const { uid, labels, annotations } = value.metadata;
      return { state: 'found', metadata: { ...(uid !== undefined ? { uid } : {}), ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) }, ...(value.serviceAccountName !== undefined ? { serviceAccountName: value.serviceAccountName } : {}) };
    },
  };
}

const withUid = (obj: KubeObject, uid = LEASE_UID): KubeObject['metadata'] => ({ ...obj.metadata, uid });
const OBJECTS = lookupOf({
  'leases/shared/unstamped': { metadata: { uid: LEASE_UID } },
  'leases/shared/alpha-lease': { metadata: withUid(stampedMetadata('Lease', 'alpha', 'shared')) },
  'leases/shared/beta-lease': { metadata: withUid(stampedMetadata('Lease', 'beta', 'shared')) },
  'leases/shared/forged': { metadata: { ...withUid(stampedMetadata('Lease', 'alpha', 'shared')), annotations: { 'deed.dev/create-nonce': 'a'.repeat(64), 'deed.dev/attestation': 'v1:forged' } } },
  'leases/shared/slow': 'timed out',
  'leases/sandbox-a/unstamped': { metadata: { uid: LEASE_UID } },
  'pods/shared/runner-0': { metadata: { uid: LEASE_UID }, serviceAccountName: 'runner' },
});

interface Options {
  namespace?: string;
  serviceAccountName?: string;
  /** The pod as stored: the review is an UPDATE to the owners given. */
  before?: Ref[];
}

/** A pod with `owners`, as the mutating webhook leaves it for the validating one (CREATE), or an UPDATE of its owners. */
function review(userInfo: UserInfo, owners: Ref[], o: Options = {}): Review {
  const namespace = o.namespace ?? 'shared';
  const body = fixture('validate-create-pod-by-runner.json');
  const pod = (ownerReferences: Ref[]): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'runner-1', namespace, ownerReferences },
    spec: { serviceAccountName: o.serviceAccountName ?? 'runner', containers: [{ name: 'runner', image: 'registry.example/runner:1' }] },
  });
  body.request = { ...body.request, namespace, name: 'runner-1', userInfo, options: null };
  const create = { ...body, request: { ...body.request, operation: 'CREATE', object: pod(o.before ?? owners), oldObject: null } };
  const d = decide('mutate', create, testContext(POLICY));
  assert.ok(d.kind === 'review' && d.response.response.allowed, d.kind === 'review' ? d.response.response.status?.message : d.message);
  const admitted = jsonpatch.applyPatch(structuredClone(create.request.object), decodePatch(d.response)).newDocument;
  if (o.before === undefined) return { ...create, request: { ...create.request, object: admitted } };
  const stored = { ...admitted, metadata: { ...admitted.metadata, uid: '22222222-2222-4222-8222-222222222222' } };
  const after = { ...stored, metadata: { ...stored.metadata, ownerReferences: owners } };
  return { ...body, request: { ...body.request, operation: 'UPDATE', object: after, oldObject: stored } };
}

function judge(body: Review, lookup: ObjectLookup = OBJECTS): AdmissionResponse {
  const d = decide('validate', body, testContext(POLICY, NOW, undefined, lookup));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

function refused(body: Review, pattern: RegExp): void {
  const r = judge(body);
  assert.equal(r.allowed, false, 'expected a denial by guard.runner-owner');
  assert.ok(r.status?.message?.includes('[guard.runner-owner]'), r.status?.message);
  assert.match(r.status!.message!, pattern);
}

function admitted(body: Review, lookup?: ObjectLookup): AdmissionResponse {
  const r = judge(body, lookup);
  assert.equal(r.allowed, true, r.status?.message);
  return r;
}

/** What the review reads besides the service account a new pod runs as (rules/service-account-stamps.ts). */
const reads = (body: Review) => planLookups(body, 'validate', FIXTURE_KEYS, compilePolicy(parseConfig(POLICY))).lookups.filter((k) => k.resource !== 'serviceaccounts');

describe('guard.runner-owner', () => {
  test("alpha's manager may not create a runner pod owned by an unstamped Lease outside a bound namespace", () => {
    refused(review(MANAGER, [lease('unstamped')]), /owner Lease shared\/unstamped carries no stamps outside a namespace bound to an environment, so any principal of no environment \(a tenant with edit\) may delete it/);
  });

  test('nor may the platform (guard.service-account refuses it too), controller or not', () => {
    refused(review(PLATFORM, [{ ...lease('unstamped'), controller: true }]), /any principal of no environment \(a tenant with edit\) may delete it/);
    refused(review(PLATFORM, [lease('unstamped')]), /own the runner by an object stamped for its environment/);
  });

  test("a runner pod owned by a Lease stamped for alpha, or by another of alpha's runners, is admitted", () => {
    admitted(review(MANAGER, [lease('alpha-lease')]));
    admitted(review(MANAGER, [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: LEASE_UID }]));
  });

  test("an owner of another environment, with stamps that do not verify, unreadable or absent, is refused", () => {
    refused(review(MANAGER, [lease('beta-lease')]), /belongs to another environment/);
    refused(review(MANAGER, [lease('forged')]), /stamps but they do not verify/);
    refused(review(MANAGER, [lease('slow')]), /cannot be read \(timed out\)/);
    refused(review(MANAGER, [lease('gone')]), /does not exist with the uid/);
    refused(review(MANAGER, [lease('alpha-lease', '33333333-3333-4333-8333-333333333333')]), /does not exist with the uid/);
  });

  test('an unstamped owner in the namespace bound to the runner\'s environment is admitted', () => {
    admitted(review(MANAGER, [lease('unstamped')], { namespace: 'sandbox-a' }));
  });

  test('a custom resource owner (an EphemeralRunner) is left to RBAC and not read; a Kubernetes kind Deed does not read is refused', () => {
    const cr = { apiVersion: 'actions.github.com/v1alpha1', kind: 'EphemeralRunner', name: 'er-1', uid: LEASE_UID, controller: true };
    const body = review(MANAGER, [cr]);
    admitted(body);
    assert.deepEqual(reads(body), []);
    refused(review(MANAGER, [{ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', name: 'np', uid: LEASE_UID }]), /a kind Deed does not read/);
    // One the kind table names only for what it points at (an Argo Rollout, a KEDA ScaledObject) is a custom resource still.
    for (const [apiVersion, kind] of [['argoproj.io/v1alpha1', 'Rollout'], ['keda.sh/v1alpha1', 'ScaledObject']] as const) admitted(review(MANAGER, [{ apiVersion, kind, name: 'owner', uid: LEASE_UID }]));
  });

  test('a pod of no mapped account with the same unstamped owner is admitted, and reads no owner', () => {
    const body = review(MANAGER, [lease('unstamped')], { serviceAccountName: 'app' });
    admitted(body);
    assert.deepEqual(reads(body), []);
  });

  test("the runner pod's owners are in the read plan", () => {
    assert.deepEqual(reads(review(MANAGER, [lease('unstamped')])), [{ resource: 'leases', namespace: 'shared', name: 'unstamped', uid: '11111111-1111-4111-8111-111111111111' }]);
  });

  test('an UPDATE that adds such an owner is refused; one that keeps it is not judged again', () => {
    refused(review(MANAGER, [lease('unstamped')], { before: [] }), /any principal of no environment \(a tenant with edit\) may delete it/);
    refused(review(MANAGER, [lease('alpha-lease'), lease('unstamped')], { before: [lease('alpha-lease')] }), /Lease shared\/unstamped/);
    const kept = review(MANAGER, [lease('unstamped')], { before: [lease('unstamped')] });
    admitted(kept);
    assert.deepEqual(reads(kept), []);
  });

  test("Deed's own owner reference to the creating runner is not read", () => {
    const body = review(RUNNER, []);
    const refs = body.request.object.metadata.ownerReferences as Array<{ name: string }>;
    assert.equal(refs[0]?.name, 'runner-0');
    admitted(body);
    assert.deepEqual(reads(body).filter((k) => k.resource === 'pods'), []);
  });

  test('break-glass passes, and the override is named', () => {
    const r = admitted(review(BREAK_GLASS, [lease('unstamped')]));
    assert.ok((r.warnings ?? []).some((w) => w.includes('guard.runner-owner')), JSON.stringify(r.warnings));
  });
});
