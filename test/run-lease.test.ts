// Run leases at admission (docs/operations.md, "Run leases"): a Lease created in the review
// scope by an environment's principal is stamped as that environment's, frozen, and its
// renewals and its delete are guarded to that environment; an object that names a run lease
// at CREATE is admitted only when the Lease exists in its namespace and its stamps verify
// for the object's environment. holderIdentity decides nothing. The same in a real API
// server: test/e2e/cases/run-end.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import { isDefaultRowException, kindRowNamed } from '../src/policy/kinds.js';
import { lookupKey, planLookups } from '../src/policy/lookup.js';
import type { ObjectLookup } from '../src/policy/policy.js';
import { singleKeyRing, verifyObject } from '../src/policy/stamps/key-ring.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { claimLookup, decodePatch, fixture, fixtureClaims, FIXTURE_KEYS, FIXTURE_POLICY, testContext, TEST_RING, type Review, NO_READERS } from './helpers.js';
import { ADMIN, allows, denies, RUNNER_A, RUNNER_B, stamped } from './validate-helpers.js';

const LEASE = 'deed.dev/run-lease';
const NS = 'sandbox-a';
const BREAK_GLASS = { ...FIXTURE_POLICY, breakGlass: { groups: ['system:masters'] } };
const MANAGER: UserInfo = { username: 'system:serviceaccount:platform:runner-controller', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
const WITH_MANAGER = { ...FIXTURE_POLICY, environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'], managers: { users: [MANAGER.username] } }, { id: 'beta', serviceAccounts: ['sandbox-b:*'] }] };
// A tenant's own app in a shared namespace, electing its leader: a principal of no environment.
const TENANT_APP: UserInfo = { username: 'system:serviceaccount:sandbox-a:operator', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };

type Resource = { group: string; version: string; resource: string; kind: string };
const LEASES: Resource = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease' };

function review(r: Resource, userInfo: UserInfo, more: Record<string, unknown>): Review {
  const body = fixture('validate-create-secret-by-runner.json');
  body.request = {
    ...body.request,
    kind: { group: r.group, version: r.version, kind: r.kind },
    resource: { group: r.group, version: r.version, resource: r.resource },
    requestKind: undefined,
    requestResource: undefined,
    namespace: NS,
    userInfo,
    subResource: undefined,
    ...more,
  };
  return body;
}

function lease(name = 'run-42', renewTime = '2026-11-29T15:24:34.000000Z'): KubeObject {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: NS }, spec: { holderIdentity: 'runner-0', leaseDurationSeconds: 40, renewTime } } as KubeObject;
}

function answer(webhook: 'mutate' | 'validate', body: Review, config = FIXTURE_POLICY, lookup?: ObjectLookup): AdmissionResponse {
  const d = decide(webhook, body, testContext(config, undefined, undefined, lookup));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** A Lease as the API server stores it after both webhooks: created by `userInfo`. */
function storedLease(userInfo: UserInfo = RUNNER_A, name = 'run-42'): KubeObject {
  const body = review(LEASES, userInfo, { name, operation: 'CREATE', object: lease(name), oldObject: null });
  const m = answer('mutate', body);
  assert.equal(m.allowed, true, m.status?.message);
  const obj = (m.patch === undefined ? structuredClone(body.request.object) : jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: m })).newDocument) as KubeObject;
  const v = answer('validate', { ...body, request: { ...body.request, object: obj } });
  assert.equal(v.allowed, true, v.status?.message);
  return { ...obj, metadata: { ...obj.metadata, uid: `uid-${name}` } };
}

/** A write of a stored Lease: UPDATE (renewal) or DELETE. */
function leaseWrite(stored: KubeObject, userInfo: UserInfo, change?: (l: KubeObject & { spec: Record<string, unknown> }) => void): Review {
  if (change === undefined) return review(LEASES, userInfo, { name: stored.metadata.name, operation: 'DELETE', object: null, oldObject: stored });
  const next = structuredClone(stored) as KubeObject & { spec: Record<string, unknown> };
  change(next);
  return review(LEASES, userInfo, { name: stored.metadata.name, operation: 'UPDATE', object: next, oldObject: stored });
}

const renew = (holder: string) => (l: { spec: Record<string, unknown> }) => {
  l.spec.holderIdentity = holder;
  l.spec.renewTime = '2026-11-29T15:30:00.000000Z';
};

/** Leases by `namespace/name`: the stored object, null (absent) or a string (unreadable, for that reason). Other reads: the fixtures' claims. */
function leaseLookup(leases: Record<string, KubeObject | null | string>): ObjectLookup {
  const claims = claimLookup(fixtureClaims());
  return {
    readers: NO_READERS,
    get(resource, namespace, name) {
      if (resource !== 'leases') return claims.get(resource, namespace, name);
      const value = Object.hasOwn(leases, `${namespace}/${name}`) ? leases[`${namespace}/${name}`] : null;
      if (typeof value === 'string') return { state: 'unknown', reason: value };
      if (value === null || value === undefined) return { state: 'absent' };
      const { labels, annotations } = value.metadata;
      return { state: 'found', metadata: { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
    },
  };
}

/** A sandbox pod that alpha's runner creates naming `name` as its run lease, as the validating webhook sees it. */
function podNaming(name: string, userInfo: UserInfo = RUNNER_A): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  const obj = body.request.object as KubeObject;
  body.request.userInfo = userInfo;
  body.request.object = stamped(body, { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, [LEASE]: name } } }, userInfo);
  return body;
}

describe('a Lease in the review scope is stamped as its creator\'s environment', () => {
  test('a Lease that alpha\'s runner creates carries alpha\'s stamps and an attestation that verifies, and no owner reference', () => {
    const stored = storedLease();
    assert.equal(stored.metadata.labels?.['deed.dev/environment'], 'alpha');
    assert.equal(stored.metadata.labels?.['deed.dev/managed'], 'true');
    assert.ok(verifyObject(TEST_RING, stored, FIXTURE_KEYS, 'Lease', NS).ok);
    assert.equal(stored.metadata.ownerReferences, undefined, 'a runner restart must not end the runs its Lease tracks');
    assert.equal(stored.metadata.annotations?.['deed.dev/expires-at'], undefined);
    const row = kindRowNamed('coordination.k8s.io', 'Lease')!;
    assert.equal(row.door, 'object');
    assert.equal(isDefaultRowException('coordination.k8s.io', 'leases'), false, 'a row of its own, not the default row');
  });

  test('a Lease that a principal of no environment creates (a tenant app electing its leader) gets no stamps, and it renews it freely', () => {
    const stored = storedLease(TENANT_APP, 'operator-leader');
    assert.equal(stored.metadata.labels, undefined);
    allows(leaseWrite(stored, TENANT_APP, renew('operator-7f9c')));
    allows(leaseWrite(stored, TENANT_APP));
  });

  test('a client cannot hand a Lease stamps of its own: copied stamps are refused as forged', () => {
    const copied = storedLease();
    const body = review(LEASES, RUNNER_B, { name: 'run-copy', operation: 'CREATE', object: { ...lease('run-copy'), metadata: { ...copied.metadata, name: 'run-copy', uid: undefined } }, oldObject: null });
    const v = answer('validate', body);
    assert.equal(v.allowed, false);
    assert.match(v.status?.message ?? '', /\[(stamp\.missing|stamp\.conflict|attestation\.forged)\]/);
  });
});

describe("alpha's run lease is alpha's to renew and to end", () => {
  const stored = storedLease();

  test('alpha renews it (holderIdentity and renewTime), and deletes it', () => {
    allows(leaseWrite(stored, RUNNER_A, renew('runner-1')));
    allows(leaseWrite(stored, RUNNER_A));
  });

  test("beta can neither renew it (keeping alpha's run alive) nor delete it (ending it), and is not told whose it is", () => {
    const renewal = denies(leaseWrite(stored, RUNNER_B, renew('beta')), 'guard.cross-environment');
    assert.doesNotMatch(renewal, /alpha/);
    denies(leaseWrite(stored, RUNNER_B), 'guard.cross-environment');
  });

  test('a principal of no environment can neither renew nor delete it; alpha\'s managers and break-glass can', () => {
    denies(leaseWrite(stored, TENANT_APP, renew('x')), 'guard.unmapped');
    denies(leaseWrite(stored, TENANT_APP), 'guard.unmapped');
    allows(leaseWrite(stored, MANAGER, renew('platform')), WITH_MANAGER);
    allows(leaseWrite(stored, MANAGER), WITH_MANAGER);
    allows(leaseWrite(stored, ADMIN, renew('ops')), BREAK_GLASS);
  });

  test('its stamps are frozen, even for alpha', () => {
    denies(leaseWrite(stored, RUNNER_A, (l) => void delete l.metadata.labels!['deed.dev/environment']), 'frozen.stamps');
    denies(leaseWrite(stored, RUNNER_A, (l) => (l.metadata.annotations!['deed.dev/create-nonce'] = 'b'.repeat(64))), 'frozen.stamps');
  });
});

describe('an object names a run lease only when the Lease is its own environment\'s', () => {
  const alphas = storedLease(RUNNER_A, 'run-42');
  const betas = storedLease(RUNNER_B, 'run-other');
  const admins = storedLease(ADMIN, 'run-admin');
  const lookup = leaseLookup({ 'sandbox-a/run-42': alphas, 'sandbox-a/run-other': betas, 'sandbox-a/run-admin': admins, 'sandbox-a/run-down': 'get leases sandbox-a/run-down: timed out after 2000 ms' });

  test("alpha's pod naming alpha's Lease is admitted", () => {
    allows(podNaming('run-42'), undefined, lookup);
  });

  test('naming a Lease that does not exist is refused: the reaper would count the run over at once', () => {
    assert.match(denies(podNaming('run-missing'), 'run-lease.absent', undefined, lookup), /sandbox-a\/run-missing does not exist; create it first/);
  });

  test("naming beta's Lease is refused, without naming beta", () => {
    const message = denies(podNaming('run-other'), 'run-lease.environment', undefined, lookup);
    assert.match(message, /is not stamped for environment "alpha": it belongs to another environment/);
    assert.doesNotMatch(message, /beta/);
  });

  test('naming an unstamped Lease (an administrator\'s) is refused: holderIdentity proves nothing', () => {
    assert.equal(admins.metadata.labels, undefined);
    assert.match(denies(podNaming('run-admin'), 'run-lease.environment', undefined, lookup), /Deed did not stamp it/);
  });

  test('naming a Lease whose stamps do not verify (signed under another key) is refused', () => {
    const foreignKey = leaseLookup({ 'sandbox-a/run-42': alphas });
    const d = decide('validate', podNaming('run-42'), { ...testContext(undefined, undefined, undefined, foreignKey), keyRing: singleKeyRing(Buffer.from('another-attestation-key-0123456789abcdef')) });
    // The pod's own stamps do not verify under that ring either; the Lease's finding is there all the same.
    assert.ok(d.kind === 'review');
    assert.match(d.response.response.status?.message ?? '', /\[run-lease\.environment\][^;]*its stamps do not verify/);
  });

  test('a Lease Deed cannot read is refused (fail closed), and says why', () => {
    assert.match(denies(podNaming('run-down'), 'run-lease.unknown', undefined, lookup), /timed out after 2000 ms/);
    assert.match(denies(podNaming('run-42'), 'run-lease.unknown', undefined, claimLookup(fixtureClaims())), /cannot tell whether run lease sandbox-a\/run-42 is environment "alpha"'s/);
  });

  test("beta's pod naming alpha's Lease is refused too", () => {
    denies(podNaming('run-42', RUNNER_B), 'run-lease.environment', undefined, lookup);
  });

  test('on a dry run, a Lease the same apply creates is a warning, not a refusal', () => {
    const body = podNaming('run-missing');
    body.request.dryRun = true;
    const r = allows(body, undefined, lookup);
    assert.ok((r.warnings ?? []).some((w) => /run-lease\.absent.*the real create needs it first/.test(w)), JSON.stringify(r.warnings));
    const foreign = podNaming('run-other');
    foreign.request.dryRun = true;
    denies(foreign, 'run-lease.environment', undefined, lookup);
  });

  test('a Secret, a workload and a kind of the default row are held to the same check', () => {
    const secret = fixture('validate-create-secret-by-runner.json');
    const s = secret.request.object as KubeObject;
    secret.request.object = stamped(secret, { ...s, metadata: { ...s.metadata, annotations: { [LEASE]: 'run-other' } } });
    denies(secret, 'run-lease.environment', undefined, lookup);

    const deployment: Resource = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' };
    const lab: Resource = { group: 'labs.example', version: 'v1', resource: 'virtualmachines', kind: 'VirtualMachine' };
    const objects: Array<[Resource, KubeObject]> = [
      [deployment, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'lab', namespace: NS }, spec: { selector: { matchLabels: { app: 'lab' } }, template: { metadata: { labels: { app: 'lab' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] } } } } as KubeObject],
      [lab, { apiVersion: 'labs.example/v1', kind: 'VirtualMachine', metadata: { name: 'vm-1', namespace: NS }, spec: { running: true } } as KubeObject],
    ];
    for (const [r, obj] of objects) {
      const withLease = (name: string) => {
        const body = review(r, RUNNER_A, { name: obj.metadata.name, operation: 'CREATE', object: { ...obj, metadata: { ...obj.metadata, annotations: { [LEASE]: name } } }, oldObject: null });
        const m = answer('mutate', body);
        assert.equal(m.allowed, true, m.status?.message);
        body.request.object = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: m })).newDocument;
        return body;
      };
      assert.ok(verifyObject(TEST_RING, withLease('run-42').request.object, FIXTURE_KEYS, r.kind, NS).ok, `${r.kind}: the run lease is attested`);
      allows(withLease('run-42'), undefined, lookup);
      denies(withLease('run-missing'), 'run-lease.absent', undefined, lookup);
      denies(withLease('run-other'), 'run-lease.environment', undefined, lookup);
    }
  });
});

describe('the read plan names the run lease a new object names', () => {
  test('a CREATE naming a run lease reads that Lease in its namespace, on the validating side only', () => {
    const body = podNaming('run-42');
    assert.ok(planLookups(body, 'validate', FIXTURE_KEYS).lookups.map(lookupKey).includes('leases/sandbox-a/run-42'));
    assert.ok(!planLookups(body, 'mutate', FIXTURE_KEYS).lookups.some((k) => k.resource === 'leases'));
  });

  test('an UPDATE reads no Lease (the annotation is frozen), nor does a name that is no Lease name', () => {
    const body = podNaming('run-42');
    const update = { ...body, request: { ...body.request, operation: 'UPDATE', oldObject: structuredClone(body.request.object) } };
    assert.ok(!planLookups(update, 'validate', FIXTURE_KEYS).lookups.some((k) => k.resource === 'leases'));
    const malformed = podNaming('run-42');
    malformed.request.object.metadata.annotations[LEASE] = 'Run_42';
    assert.ok(!planLookups(malformed, 'validate', FIXTURE_KEYS).lookups.some((k) => k.resource === 'leases'));
  });

  test('the annotation is read under the policy\'s prefix', () => {
    const body = podNaming('run-42');
    assert.ok(!planLookups(body, 'validate', stampKeys('example.com')).lookups.some((k) => k.resource === 'leases'));
    body.request.object.metadata.annotations['example.com/run-lease'] = 'run-7';
    assert.ok(planLookups(body, 'validate', stampKeys('example.com')).lookups.map(lookupKey).includes('leases/sandbox-a/run-7'));
  });
});
