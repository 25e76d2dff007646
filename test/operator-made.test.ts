// What an operator listed in workloadControllers makes for an environment's resource is that
// environment's (src/policy/controller-made.ts): the Secret External Secrets writes for an
// ExternalSecret, the Secret cert-manager writes for a Certificate (with
// --enable-certificate-owner-ref), each its controller. Unstamped, such a Secret was every
// environment's pods' to read. An annotation naming a Certificate is no evidence: another
// listed operator copies annotations from its tenants' templates. Decided without a cluster; the same in a real API server in
// test/e2e/cases/pointers.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { run as runCel } from '@bufbuild/cel';
import { operatorStampsCondition } from '../src/install/kind-rules.js';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import { signStamps, verifyObject } from '../src/policy/stamps/key-ring.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { followUpLookups, gatheredLookup, lookupKey, planLookups } from '../src/policy/lookup.js';
import { compilePolicy } from '../src/policy/policy.js';
import { parseConfig } from '../src/config/load.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { DEFAULT_WORKLOAD_CONTROLLERS } from '../src/config/schema.js';
import { decodePatch, fixture, FIXTURE_POLICY, NO_READERS, testContext, toCel, TEST_RING, type Review } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies as the API server sends them
type Spec = Record<string, any>;

const KEYS = stampKeys('deed.dev');
const NS = 'shared';
const operator = (ns: string, name: string): UserInfo => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'], extra: {} });
const ESO = operator('external-secrets', 'external-secrets');
const CERT_MANAGER = operator('cert-manager', 'cert-manager');
const UNLISTED = operator('other-operator', 'controller');
const BETA = operator('sandbox-b', 'lab');
const POLICY = { ...FIXTURE_POLICY, workloadControllers: { users: [...DEFAULT_WORKLOAD_CONTROLLERS, ESO.username, CERT_MANAGER.username] } };

function stampsOf(kind: string, environment: string): Spec {
  const nonce = 'c'.repeat(64);
  return { labels: { [KEYS.managed]: 'true', [KEYS.environment]: environment }, annotations: { [KEYS.createNonce]: nonce, [KEYS.attestation]: signStamps(TEST_RING, { kind, namespace: NS, environment, nonce }) } };
}

/** The operators' resources as a read answers: anything not listed is absent. */
function lookup(table: Record<string, Lookup>): ObjectLookup {
  const gathered = gatheredLookup(new Map(Object.entries(table)), 'unlisted');
  return { readers: NO_READERS, get: (resource, namespace, name) => (Object.hasOwn(table, lookupKey({ resource, namespace, name })) ? gathered.get(resource, namespace, name) : { state: 'absent' }) };
}
const at = (resource: string, name: string) => lookupKey({ resource: resource as never, namespace: NS, name });
const found = (metadata: Spec): Lookup => ({ state: 'found', metadata: metadata as Extract<Lookup, { state: 'found' }>['metadata'] });
const OWNERS = lookup({
  [at('externalsecrets', 'alpha-db')]: found({ uid: 'es-1', ...stampsOf('ExternalSecret', 'alpha') }),
  [at('externalsecrets', 'platform-db')]: found({ uid: 'es-2' }),
  [at('certificates', 'alpha-web')]: found({ uid: 'crt-1', ...stampsOf('Certificate', 'alpha') }),
});

const esOwner = (name: string, uid: string) => ({ apiVersion: 'external-secrets.io/v1', kind: 'ExternalSecret', name, uid, controller: true, blockOwnerDeletion: true });
function secret(name: string, meta: Spec = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS, ...meta }, type: 'Opaque', data: { password: 'c2VjcmV0' } } as KubeObject;
}
const certOwner = (name: string, uid: string) => ({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name, uid, controller: true, blockOwnerDeletion: true });
/** What cert-manager writes for a Certificate: its annotations name it; with --enable-certificate-owner-ref the Certificate is its controller. */
const issued = (name: string, certificate: string, uid: string | undefined, meta: Spec = {}) =>
  secret(name, { ...meta, ...(uid !== undefined ? { ownerReferences: [certOwner(certificate, uid)] } : {}), annotations: { 'cert-manager.io/certificate-name': certificate, 'cert-manager.io/issuer-name': 'ca', ...meta.annotations } });

function review(obj: KubeObject, userInfo: UserInfo): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  const resource = obj.kind === 'Pod' ? 'pods' : 'secrets';
  body.request = { ...body.request, kind: { group: '', version: 'v1', kind: obj.kind }, resource: { group: '', version: 'v1', resource }, requestKind: undefined, requestResource: undefined, name: obj.metadata.name, namespace: NS, userInfo, subResource: undefined, operation: 'CREATE', object: obj, oldObject: null };
  return body;
}

function answer(webhook: 'mutate' | 'validate', body: Review, l: ObjectLookup = OWNERS): AdmissionResponse {
  const d = decide(webhook, body, testContext(POLICY, undefined, undefined, l));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** Mutated then validated, as the API server would store it; throws on a refusal. */
function made(obj: KubeObject, userInfo: UserInfo, l: ObjectLookup = OWNERS): KubeObject {
  const m = answer('mutate', review(obj, userInfo), l);
  assert.equal(m.allowed, true, m.status?.message);
  const stored = m.patch ? (jsonpatch.applyPatch(structuredClone(obj), decodePatch({ response: m } as never)).newDocument as KubeObject) : obj;
  const v = answer('validate', review(stored, userInfo), l);
  assert.equal(v.allowed, true, v.status?.message);
  return stored;
}

function refusedBoth(obj: KubeObject, userInfo: UserInfo, pattern: RegExp, l: ObjectLookup = OWNERS): void {
  for (const webhook of ['mutate', 'validate'] as const) {
    const r = answer(webhook, review(obj, userInfo), l);
    assert.equal(r.allowed, false, `${webhook}: expected a refusal`);
    assert.match(r.status?.message ?? '', pattern, webhook);
  }
}

describe("what an operator listed in workloadControllers makes for an environment's resource is that environment's", () => {
  test("External Secrets' Secret for alpha's ExternalSecret carries alpha's stamps, read from the ExternalSecret (its controller); no runner, no deadline", () => {
    const obj = secret('alpha-db', { ownerReferences: [esOwner('alpha-db', 'es-1')] });
    assert.deepEqual(planLookups(review(obj, ESO), 'mutate', KEYS).lookups, [{ resource: 'externalsecrets', namespace: NS, name: 'alpha-db', uid: 'es-1' }]);
    const stored = made(obj, ESO);
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'alpha');
    assert.equal(stored.metadata.labels?.[KEYS.managed], 'true');
    assert.equal(stored.metadata.annotations?.[KEYS.expiresAt], undefined);
    assert.deepEqual(stored.metadata.ownerReferences, [esOwner('alpha-db', 'es-1')], 'the ExternalSecret stays its only owner');
    assert.ok(verifyObject(TEST_RING, stored, KEYS, 'Secret', NS).ok);
  });

  test("cert-manager's Secret for alpha's Certificate (its controller, with --enable-certificate-owner-ref) carries alpha's stamps", () => {
    const obj = issued('alpha-web-tls', 'alpha-web', 'crt-1');
    assert.deepEqual(planLookups(review(obj, CERT_MANAGER), 'mutate', KEYS).lookups, [{ resource: 'certificates', namespace: NS, name: 'alpha-web', uid: 'crt-1' }]);
    const stored = made(obj, CERT_MANAGER);
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'alpha');
    assert.ok(verifyObject(TEST_RING, stored, KEYS, 'Secret', NS).ok);
    assert.equal(stored.metadata.annotations?.['cert-manager.io/certificate-name'], 'alpha-web');
  });

  test("cert-manager's Secret for the Certificate its ingress-shim made for alpha's Ingress (unstamped, alpha's Ingress its controller) carries alpha's stamps, the Ingress read after the Certificate; for the platform's Ingress it stays of no environment", () => {
    const ingressOwner = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'shop', uid: 'ing-1' };
    const shim = (ingress: Spec): ObjectLookup =>
      lookup({
        [at('certificates', 'shop')]: { state: 'found', metadata: { uid: 'crt-shop' }, controller: ingressOwner },
        [at('ingresses', 'shop')]: found({ uid: 'ing-1', ...ingress }),
      });
    const obj = issued('shop-tls', 'shop', 'crt-shop');
    const plan = planLookups(review(obj, CERT_MANAGER), 'mutate', KEYS);
    assert.deepEqual(plan.lookups, [{ resource: 'certificates', namespace: NS, name: 'shop', uid: 'crt-shop' }]);
    assert.deepEqual(followUpLookups(plan.lookups, shim({}), compilePolicy(parseConfig(POLICY))), [{ resource: 'ingresses', namespace: NS, name: 'shop', uid: 'ing-1' }]);
    const stored = made(obj, CERT_MANAGER, shim(stampsOf('Ingress', 'alpha')));
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'alpha');
    assert.ok(verifyObject(TEST_RING, stored, KEYS, 'Secret', NS).ok);
    assert.equal(made(obj, CERT_MANAGER, shim({})).metadata.labels?.[KEYS.environment], undefined);
    // A stamped Certificate's own controller is not read.
    assert.deepEqual(followUpLookups(plan.lookups, lookup({ [at('certificates', 'shop')]: { state: 'found', metadata: { uid: 'crt-shop', ...stampsOf('Certificate', 'alpha') }, controller: ingressOwner } }), compilePolicy(parseConfig(POLICY))), []);
    // The shim copies the Ingress's labels, Deed's among them, onto the Certificate, without an attestation: the Ingress is read, and the Secret is alpha's (reviewer-107).
    const copied = { labels: stampsOf('Ingress', 'alpha').labels };
    const labelled = (ingress: Spec): ObjectLookup => lookup({ [at('certificates', 'shop')]: { state: 'found', metadata: { uid: 'crt-shop', ...copied }, controller: ingressOwner }, [at('ingresses', 'shop')]: found({ uid: 'ing-1', ...ingress }) });
    assert.deepEqual(followUpLookups(plan.lookups, labelled({}), compilePolicy(parseConfig(POLICY))), [{ resource: 'ingresses', namespace: NS, name: 'shop', uid: 'ing-1' }]);
    assert.equal(made(obj, CERT_MANAGER, labelled(stampsOf('Ingress', 'alpha'))).metadata.labels?.[KEYS.environment], 'alpha');
  });

  test('stamps the Secret arrives with are never the operator\'s claim: a template\'s beta stamps become alpha\'s, and a resource of no environment makes an unstamped Secret', () => {
    const forged = stampsOf('Secret', 'beta');
    const stored = made(secret('alpha-db', { labels: forged.labels, annotations: forged.annotations, ownerReferences: [esOwner('alpha-db', 'es-1')] }), ESO);
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'alpha');
    assert.ok(verifyObject(TEST_RING, stored, KEYS, 'Secret', NS).ok);
    const platform = made(secret('platform-db', { labels: forged.labels, annotations: forged.annotations, ownerReferences: [esOwner('platform-db', 'es-2')] }), ESO);
    assert.equal(platform.metadata.labels?.[KEYS.environment], undefined);
    assert.equal(platform.metadata.annotations?.[KEYS.attestation], undefined);
    const plain = made(secret('plain'), ESO);
    assert.equal(plain.metadata.labels?.[KEYS.environment], undefined);
  });

  test('a resource that does not exist, is another object than the reference names, or cannot be read refuses the Secret: the operator retries', () => {
    refusedBoth(secret('gone', { ownerReferences: [esOwner('gone', 'es-9')] }), ESO, /\[guard\.controller-owner\] .*ExternalSecret shared\/gone does not exist/);
    refusedBoth(secret('alpha-db', { ownerReferences: [esOwner('alpha-db', 'es-other')] }), ESO, /is another object than the reference names/);
    refusedBoth(issued('gone-tls', 'gone', 'crt-9'), CERT_MANAGER, /Certificate shared\/gone does not exist/);
    const unreadable: ObjectLookup = { readers: NO_READERS, get: () => ({ state: 'unknown', reason: 'the API server did not answer' }) };
    refusedBoth(issued('alpha-web-tls', 'alpha-web', 'crt-1'), CERT_MANAGER, /cannot tell whose Certificate shared\/alpha-web is \(the API server did not answer\)/, unreadable);
  });

  test("an annotation naming alpha's Certificate makes no Secret alpha's: beta's own is beta's, and a listed operator's without a controller (an Orphan target whose template beta wrote) is of no environment", () => {
    const m = answer('mutate', review(issued('beta-tls', 'alpha-web', undefined), BETA));
    assert.equal(m.allowed, true, m.status?.message);
    const stored = jsonpatch.applyPatch(structuredClone(issued('beta-tls', 'alpha-web', undefined)), decodePatch({ response: m } as never)).newDocument as KubeObject;
    assert.equal(stored.metadata.labels?.[KEYS.environment], 'beta');
    for (const who of [ESO, CERT_MANAGER]) {
      const planted = made(issued('planted', 'alpha-web', undefined), who);
      assert.equal(planted.metadata.labels?.[KEYS.environment], undefined, who.username);
      assert.equal(planted.metadata.annotations?.[KEYS.attestation], undefined, who.username);
    }
    // Nor beside an owner reference that is not the controller's.
    const beside = made(issued('planted', 'alpha-web', undefined, { ownerReferences: [{ ...esOwner('beta-db', 'es-3'), controller: false }] }), ESO);
    assert.equal(beside.metadata.labels?.[KEYS.environment], undefined);
  });

  test("an operator not listed may not make a Secret controlled by alpha's ExternalSecret", () => {
    const r = answer('validate', review(secret('alpha-db', { ownerReferences: [esOwner('alpha-db', 'es-1')] }), UNLISTED));
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /names ExternalSecret shared\/alpha-db, which belongs to another environment .*listed in workloadControllers\.users/);
  });

  test("a listed operator's pod for its own resource, of a kind Deed does not read (an ACME solver's Challenge), is of no environment, not refused", () => {
    const challenge = { apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', name: 'web-1', uid: 'ch-1', controller: true, blockOwnerDeletion: true };
    const solver = { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'cm-acme-http-solver-', namespace: NS, ownerReferences: [challenge] }, spec: { automountServiceAccountToken: false, containers: [{ name: 'acmesolver', image: 'quay.io/jetstack/cert-manager-acmesolver:v1.19.1' }] } } as KubeObject;
    const stored = made(solver, CERT_MANAGER);
    assert.equal(stored.metadata.labels?.[KEYS.environment], undefined);
    assert.equal(stored.metadata.labels?.[KEYS.noEnvironment], 'true');
  });
});

describe("what an operator copies onto the Secrets it makes carries none of Deed's stamps", () => {
  const update = (before: KubeObject, after: KubeObject, userInfo: UserInfo): Review => {
    const body = review(after, userInfo);
    body.request.operation = 'UPDATE';
    body.request.oldObject = before;
    return body;
  };

  test("cert-manager's later update of alpha's Secret keeps the stamps it was made with: a template's labels may not rewrite them", () => {
    const stored = made(issued('alpha-web-tls', 'alpha-web', 'crt-1'), CERT_MANAGER);
    const renewed = { ...stored, metadata: { ...stored.metadata, labels: { ...stored.metadata.labels, team: 'web' } }, data: { 'tls.crt': 'bmV3' } } as KubeObject;
    const ok = answer('validate', update(stored, renewed, CERT_MANAGER));
    assert.equal(ok.allowed, true, ok.status?.message);
    const rewritten = { ...stored, metadata: { ...stored.metadata, labels: { ...stored.metadata.labels, [KEYS.environment]: 'beta' } } } as KubeObject;
    const r = answer('validate', update(stored, rewritten, CERT_MANAGER));
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/environment"\]: is frozen at "alpha", got "beta"/);
  });

  test("External Secrets' refresh, which merges the ExternalSecret's own labels and annotations (Deed's stamps for it) or drops those its field manager owns, keeps the Secret's stamps as stored", () => {
    const stored = made(secret('alpha-db', { labels: { app: 'db' }, ownerReferences: [esOwner('alpha-db', 'es-1')] }), ESO);
    const owner = stampsOf('ExternalSecret', 'alpha');
    const refresh = (labels: Record<string, string>, annotations: Record<string, string> | undefined) =>
      ({ ...stored, metadata: { ...stored.metadata, labels, ...(annotations === undefined ? { annotations: undefined } : { annotations }) }, data: { password: 'cm90YXRlZA==' } }) as KubeObject;
    for (const [what, written] of [
      ["the ExternalSecret's own stamps merged in", refresh({ ...stored.metadata.labels, ...owner.labels }, { ...stored.metadata.annotations, ...owner.annotations })],
      ['the keys its field manager owns dropped', refresh({ app: 'db' }, undefined)],
    ] as const) {
      const body = update(stored, written, ESO);
      assert.equal(runCel(operatorStampsCondition('deed.dev', POLICY.workloadControllers.users), { request: { userInfo: { username: ESO.username } }, oldObject: toCel(stored), object: toCel(written) } as never), true, `${what}: the install sends it`);
      const m = answer('mutate', body);
      assert.equal(m.allowed, true, m.status?.message);
      const kept = (m.patch ? jsonpatch.applyPatch(structuredClone(written), decodePatch({ response: m } as never)).newDocument : written) as KubeObject;
      for (const key of [KEYS.environment, KEYS.managed]) assert.equal(kept.metadata.labels?.[key], stored.metadata.labels?.[key], `${what}: ${key}`);
      for (const key of [KEYS.createNonce, KEYS.attestation]) assert.equal(kept.metadata.annotations?.[key], stored.metadata.annotations?.[key], `${what}: ${key}`);
      assert.ok(verifyObject(TEST_RING, kept, KEYS, 'Secret', NS).ok, what);
      const v = answer('validate', update(stored, kept, ESO));
      assert.equal(v.allowed, true, `${what}: ${v.status?.message}`);
    }
    // Not sent: another requester's write, or a Secret of no environment.
    assert.equal(runCel(operatorStampsCondition('deed.dev', POLICY.workloadControllers.users), { request: { userInfo: { username: BETA.username } }, oldObject: toCel(stored), object: toCel(stored) } as never), false);
    const plain = made(secret('plain'), ESO);
    assert.equal(runCel(operatorStampsCondition('deed.dev', POLICY.workloadControllers.users), { request: { userInfo: { username: ESO.username } }, oldObject: toCel(plain), object: toCel(plain) } as never), false);
  });

  test("a Certificate's secretTemplate and an ExternalSecret's target template may not carry Deed's stamps, from anyone", () => {
    const copied = stampsOf('Secret', 'alpha');
    const certificate = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'beta-web', namespace: NS }, spec: { secretName: 'beta-web-tls', issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer' }, secretTemplate: { labels: copied.labels, annotations: { team: 'web' } } } } as KubeObject;
    const externalSecret = { apiVersion: 'external-secrets.io/v1', kind: 'ExternalSecret', metadata: { name: 'beta-db', namespace: NS }, spec: { secretStoreRef: { name: 'vault', kind: 'ClusterSecretStore' }, target: { name: 'beta-db', template: { metadata: { annotations: copied.annotations } } } } } as KubeObject;
    for (const [obj, resource, pattern] of [
      [certificate, { group: 'cert-manager.io', version: 'v1', resource: 'certificates' }, /\[stamp\.template\] spec\.secretTemplate\.labels\["deed\.dev\/environment"\]/],
      [externalSecret, { group: 'external-secrets.io', version: 'v1', resource: 'externalsecrets' }, /\[stamp\.template\] spec\.target\.template\.metadata\.annotations\["deed\.dev\/attestation"\]/],
    ] as const) {
      for (const userInfo of [BETA, UNLISTED]) {
        const body = review(obj, userInfo);
        body.request.kind = { group: resource.group, version: 'v1', kind: obj.kind };
        body.request.resource = resource;
        const r = answer('validate', body);
        assert.equal(r.allowed, false, `${obj.kind} by ${userInfo.username}`);
        assert.match(r.status?.message ?? '', pattern);
      }
    }
  });
});

describe("what an environment asks an operator to make with no owner reference (guard.unowned-output)", () => {
  const ES = { group: 'external-secrets.io', version: 'v1', resource: 'externalsecrets' };
  // beta's namespace sandbox-b is bound to it: only its pods run there.
  const BOUND = { ...POLICY, environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'], namespaces: ['sandbox-b'] }] };
  const externalSecret = (creationPolicy: string | undefined, namespace = NS, labels: Spec = {}): KubeObject =>
    ({ apiVersion: 'external-secrets.io/v1', kind: 'ExternalSecret', metadata: { name: 'db', namespace, labels }, spec: { secretStoreRef: { name: 'vault', kind: 'ClusterSecretStore' }, target: { name: 'db', ...(creationPolicy !== undefined ? { creationPolicy } : {}) } } }) as KubeObject;
  function write(webhook: 'admit' | 'validate', userInfo: UserInfo, obj: KubeObject, old?: KubeObject, policy = POLICY): AdmissionResponse {
    const body = review(obj, userInfo);
    body.request = { ...body.request, kind: { group: ES.group, version: 'v1', kind: 'ExternalSecret' }, resource: ES, namespace: obj.metadata.namespace, ...(old !== undefined ? { operation: 'UPDATE', oldObject: old } : {}) };
    const d = decide(webhook, body, testContext(policy, undefined, undefined, OWNERS));
    if (d.kind !== 'review') throw new Error(d.message);
    return d.response.response;
  }
  const unowned = (r: AdmissionResponse) => /\[guard\.unowned-output\]/.test(r.status?.message ?? '');

  test("beta's ExternalSecret with creationPolicy Orphan in a shared namespace is refused, at /admit and at /validate, and the message names the fix", () => {
    for (const webhook of ['admit', 'validate'] as const) {
      const r = write(webhook, BETA, externalSecret('Orphan'));
      assert.equal(r.allowed, false, webhook);
      assert.match(r.status?.message ?? '', /\[guard\.unowned-output\] spec\.target\.creationPolicy: system:serviceaccount:sandbox-b:lab may not create ExternalSecret shared\/db with spec\.target\.creationPolicy Orphan: the External Secrets operator would write its target Secret with no owner reference.*leave creationPolicy unset \(Owner, the default\)/);
    }
  });

  test('an UPDATE into Orphan, or of the spec of an admitted Orphan one, is refused; a label change of one, Owner, Merge and None are not judged by it', () => {
    assert.ok(unowned(write('validate', BETA, externalSecret('Orphan'), externalSecret(undefined))));
    assert.ok(unowned(write('validate', BETA, externalSecret('Orphan'), externalSecret('Owner'))));
    assert.ok(!unowned(write('validate', BETA, externalSecret('Orphan', NS, { team: 'db' }), externalSecret('Orphan'))), 'a label change of an object admitted as it is');
    const repointed = externalSecret('Orphan');
    (repointed.spec as Spec).secretStoreRef = { name: 'other', kind: 'ClusterSecretStore' };
    assert.ok(unowned(write('validate', BETA, repointed, externalSecret('Orphan'))), 'a spec change of an admitted Orphan one asks again');
    for (const policy of [undefined, 'Owner', 'Merge', 'None']) assert.ok(!unowned(write('validate', BETA, externalSecret(policy))), String(policy));
  });

  test('in a namespace bound to beta, and for requesters of no environment, Orphan passes this rule', () => {
    assert.ok(!unowned(write('validate', BETA, externalSecret('Orphan', 'sandbox-b'), undefined, BOUND)));
    assert.ok(unowned(write('validate', BETA, externalSecret('Orphan'), undefined, BOUND)), 'a shared namespace is still shared');
    assert.ok(!unowned(write('validate', UNLISTED, externalSecret('Orphan'))), 'it may write an unstamped Secret itself');
  });
});
