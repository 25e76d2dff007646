// reference.live-reader (rules/live-readers.ts): an object an environment creates takes no
// name a live pod of another environment reads. The attack it closes: beta's running pod
// names beta's Secret `creds`; beta deletes it; alpha creates `creds`; the kubelet refreshes
// beta's volume from alpha's Secret. And the index of readers the lookup cache keeps for it
// (kube/name-readers.ts), which must follow every put, replace and removal of a pod.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { beyondMetadata, MAX_HASHED_READS, storedFactsOf } from '../src/kube/lookup-facts.js';
import { claimReadsOf, readingKinds, referencedReadsOf } from '../src/policy/pod/pod-reads.js';
import { NameReaders } from '../src/kube/name-readers.js';
import { lookupKey, lookupsNeeded, planLookups } from '../src/policy/lookup.js';
import type { Lookup, ObjectLookup, Readers } from '../src/policy/policy.js';
import { ReviewedObjects } from '../src/review/run.js';
import { objectReferences } from '../src/policy/object-references.js';
import { createReview, FIXTURE_KEYS, stampedMetadata, testContext, type Review } from './helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], claimsFrom: ['gamma'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'], managers: { users: ['system:serviceaccount:platform:beta-manager'] } },
    { id: 'gamma', serviceAccounts: ['sandbox-g:runner'] },
  ],
  platform: { users: ['platform-deployer'] },
};
const NS = 'shared';
const ALPHA: UserInfo = { username: 'system:serviceaccount:sandbox-a:runner', groups: ['system:serviceaccounts'], extra: {} };
const PLATFORM: UserInfo = { username: 'platform-deployer', groups: ['system:authenticated'], extra: {} };
/** A tenant of no environment, with `edit` in the namespace. */
const STRANGER: UserInfo = { username: 'system:serviceaccount:plain:stranger', groups: ['system:serviceaccounts'], extra: {} };
const BETA_MANAGER: UserInfo = { username: 'system:serviceaccount:platform:beta-manager', groups: ['system:serviceaccounts'], extra: {} };

function create(kind: 'Secret' | 'ConfigMap' | 'PersistentVolumeClaim' | 'ResourceClaim' | 'ResourceClaimTemplate', name: string, user: UserInfo = ALPHA, group = kind.startsWith('ResourceClaim') ? 'resource.k8s.io' : ''): Review {
  const resource = { Secret: 'secrets', ConfigMap: 'configmaps', PersistentVolumeClaim: 'persistentvolumeclaims', ResourceClaim: 'resourceclaims', ResourceClaimTemplate: 'resourceclaimtemplates' }[kind];
  const object: KubeObject = {
    apiVersion: group === '' ? 'v1' : `${group}/v1`,
    kind,
    metadata: { name, namespace: NS },
    ...(kind === 'PersistentVolumeClaim' ? { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } : kind === 'ResourceClaim' ? { spec: { devices: {} } } : kind === 'ResourceClaimTemplate' ? { spec: { spec: { devices: {} } } } : {}),
  };
  return createReview(object, resource, user, '5d6e7f80-0000-4000-8000-0000000000c1');
}

const pod = (env: string | undefined): Extract<Lookup, { state: 'found' }> =>
  env === undefined ? { state: 'found', metadata: { uid: 'p' } } : { state: 'found', metadata: { ...stampedMetadata('Pod', env, NS).metadata, uid: `pod-${env}` } };

/** A lookup whose readers of every name are `pods`; every object is absent. */
function readersOf(pods: Readers): ObjectLookup {
  return { get: (): Lookup => ({ state: 'absent' }), readers: (_resource, _namespace, name) => (name === 'creds' || name === 'data' ? pods : { state: 'known', readers: [] }) };
}

function verdict(review: Review, readers: Readers) {
  const decision = decide('validate', review, { ...testContext(POLICY), lookup: readersOf(readers) });
  assert.ok(decision.kind === 'review');
  return decision.verdict;
}
const refusedBy = (review: Review, readers: Readers, message: RegExp) => {
  const v = verdict(review, readers);
  assert.equal(v.allowed, false, JSON.stringify(v.findings));
  assert.ok(v.findings.some((f) => f.rule === 'reference.live-reader' && message.test(f.message)), JSON.stringify(v.findings));
};
const passes = (review: Review, readers: Readers) => {
  const v = verdict(review, readers);
  assert.deepEqual(v.findings.filter((f) => f.rule === 'reference.live-reader'), []);
};
const known = (...envs: Array<string | undefined>): Readers => ({ state: 'known', readers: envs.map((e, i) => ({ kind: 'Pod' as const, name: `job-${i}`, found: pod(e) })) });

describe('reference.live-reader: what an environment creates takes no name a live pod of another reads', () => {
  test("alpha's Secret under the name beta's running pod reads is refused, without naming the pod or beta", () => {
    refusedBy(create('Secret', 'creds'), known('beta'), /a live pod of another environment \(or of none\) in namespace shared reads Secret creds by name, and the kubelet would hand it this one: choose a name of this run's own/);
    const v = verdict(create('Secret', 'creds'), known('alpha', 'beta'));
    assert.ok(!JSON.stringify(v.findings).includes('beta') && !JSON.stringify(v.findings).includes('job-1'));
  });

  test('every kind a pod reads by name: ConfigMap, claim, ResourceClaim', () => {
    refusedBy(create('ConfigMap', 'creds'), known('beta'), /reads ConfigMap creds/);
    refusedBy(create('PersistentVolumeClaim', 'data'), known('beta'), /reads PersistentVolumeClaim data/);
    refusedBy(create('ResourceClaim', 'creds'), known('beta'), /reads ResourceClaim creds/);
  });

  test("a ResourceClaimTemplate under the name beta's live pod makes its claim from is refused, saying what the controller would do and what to do instead", () => {
    refusedBy(
      create('ResourceClaimTemplate', 'creds'),
      known('beta'),
      /a live pod of another environment \(or of none\) in namespace shared reads ResourceClaimTemplate creds by name, and the resourceclaim controller would make that pod's claim from this one \(its devices, their configuration, its metadata\): choose a name of this run's own, or create it once no such pod is left/,
    );
    refusedBy(create('ResourceClaimTemplate', 'creds', STRANGER), known('beta'), /a live pod of an environment this requester does not act for in namespace shared reads ResourceClaimTemplate creds/);
    refusedBy(create('ResourceClaimTemplate', 'creds'), { state: 'unknown', reason: 'the pods could not be listed' }, /cannot tell whether a live pod of another environment reads ResourceClaimTemplate creds/);
    passes(create('ResourceClaimTemplate', 'creds'), known('alpha'));
    passes(create('ResourceClaimTemplate', 'other'), known('beta'));
    // A custom resource that shares the plural is not one.
    passes(create('ResourceClaimTemplate', 'creds', ALPHA, 'example.com'), known('beta'));
  });

  test("a pod of no environment, or one whose stamps do not verify, is another's too", () => {
    refusedBy(create('Secret', 'creds'), known(undefined), /reads Secret creds/);
    // Beta's stamps relabelled alpha's: the attestation no longer verifies.
    const stamps = stampedMetadata('Pod', 'beta', NS).metadata;
    const forged = { state: 'found', metadata: { ...stamps, labels: { ...stamps.labels, [FIXTURE_KEYS.environment]: 'alpha' } } } as Extract<Lookup, { state: 'found' }>;
    refusedBy(create('Secret', 'creds'), { state: 'known', readers: [{ kind: 'Pod', name: 'job', found: forged }] }, /reads Secret creds/);
  });

  test("alpha's own readers, a claim alpha's pods take from gamma, and names no pod reads pass", () => {
    passes(create('Secret', 'creds'), known('alpha', 'alpha'));
    passes(create('Secret', 'other'), known('beta'));
    const gamma: UserInfo = { username: 'system:serviceaccount:sandbox-g:runner', groups: [], extra: {} };
    passes(create('PersistentVolumeClaim', 'data', gamma), known('alpha'));
    refusedBy(create('Secret', 'creds', gamma), known('alpha'), /reads Secret creds/);
  });

  test('what cannot be told is refused; what the platform creates (a shared input) is not judged', () => {
    refusedBy(create('Secret', 'creds'), { state: 'unknown', reason: 'the pods could not be listed' }, /cannot tell whether a live pod of another environment reads Secret creds in namespace shared: the pods could not be listed/);
    passes(create('Secret', 'creds', PLATFORM), known('beta'));
  });

  test("a tenant of no environment may not write the input of beta's live pod; beta's manager may, and pods of no environment are anyone's", () => {
    refusedBy(create('Secret', 'creds', STRANGER), known('beta'), /a live pod of an environment this requester does not act for in namespace shared reads Secret creds by name/);
    passes(create('Secret', 'creds', STRANGER), known(undefined));
    passes(create('Secret', 'creds', BETA_MANAGER), known('beta', undefined));
    refusedBy(create('Secret', 'creds', BETA_MANAGER), known('alpha'), /reads Secret creds/);
  });

  test('a custom resource whose plural is one of these kinds is not judged as it', () => {
    const custom = create('Secret', 'creds', ALPHA, 'example.com');
    custom.request.object.apiVersion = 'example.com/v1';
    assert.deepEqual(lookupsNeeded(custom.request, 'validate', FIXTURE_KEYS).filter((k) => k.readers === true), []);
    passes(custom, known('beta'));
  });

  test('the read plan asks for the readers of what an environment creates, and only then', () => {
    const keys = (r: Review) => lookupsNeeded(r.request, 'validate', FIXTURE_KEYS).filter((k) => k.readers === true).map(lookupKey);
    assert.deepEqual(keys(create('Secret', 'creds')), ['secrets/shared/creds readers']);
    assert.deepEqual(keys(create('ResourceClaim', 'creds')), ['resourceclaims/shared/creds readers']);
    assert.deepEqual(keys(create('ResourceClaimTemplate', 'creds')), ['resourceclaimtemplates/shared/creds readers']);
    const update = create('Secret', 'creds');
    update.request.operation = 'UPDATE';
    update.request.oldObject = update.request.object;
    assert.deepEqual(keys(update), []);
  });
});

describe("reference.live-reader on a rewrite: an unstamped input a live pod reads is not changed by a tenant of no environment", () => {
  /** An UPDATE of the unstamped (the platform's) `kind` `creds`, changing its content unless `same`. */
  function rewrite(kind: 'Secret' | 'ConfigMap', user: UserInfo, same = false, stored: KubeObject['metadata'] = {}): Review {
    const review = create(kind, 'creds', user);
    const before: KubeObject = { ...review.request.object, metadata: { ...review.request.object.metadata, ...stored }, data: { 'init.sh': 'ZWNobyBoaQ==' } };
    review.request.operation = 'UPDATE';
    review.request.oldObject = before;
    review.request.object = same ? { ...before, metadata: { ...before.metadata, labels: { ...before.metadata.labels, tier: 'x' } } } : { ...before, data: { 'init.sh': 'Y3VybCB4IHwgc2g=' } };
    review.request.options = { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' };
    return review;
  }

  test("a tenant's change of what the platform's Secret or ConfigMap holds, read by beta's live pod, is refused with where the fix lies", () => {
    refusedBy(rewrite('ConfigMap', STRANGER), known('beta'), /a live pod of an environment this requester does not act for in namespace shared reads ConfigMap creds, and the kubelet would hand it what this write puts there: its content is changed by the platform/);
    refusedBy(rewrite('Secret', STRANGER), known('beta'), /reads Secret creds, and the kubelet would hand it what this write puts there/);
    refusedBy(rewrite('Secret', STRANGER), { state: 'unknown', reason: 'the pods could not be listed' }, /cannot tell whether a live pod of another environment reads Secret creds/);
  });

  test("what changes no content, what no environment's pod reads, and the platform's or beta's manager's change pass", () => {
    passes(rewrite('ConfigMap', STRANGER, true), known('beta'));
    passes(rewrite('ConfigMap', STRANGER), known(undefined));
    passes(rewrite('ConfigMap', STRANGER), known());
    passes(rewrite('ConfigMap', PLATFORM), known('beta'));
    passes(rewrite('ConfigMap', BETA_MANAGER), known('beta'));
  });

  test("an environment's object is guarded writes', and an environment's principal may change no unstamped input at all (guard.shared-input)", () => {
    const alphas = rewrite('Secret', STRANGER, false, stampedMetadata('Secret', 'alpha', NS).metadata);
    const v = verdict(alphas, known('beta'));
    assert.equal(v.allowed, false);
    assert.deepEqual(v.findings.filter((f) => f.rule === 'reference.live-reader'), []);
    const own = verdict(rewrite('Secret', ALPHA), known('beta'));
    assert.deepEqual(own.findings.map((f) => f.rule), ['guard.shared-input']);
  });

  test('the read plan asks for the readers of a rewrite that changes content, and not for an environment or the platform', () => {
    // As the server plans it: the review's facts known, so whose write it is.
    const keys = (r: Review) => planLookups(r, 'validate', FIXTURE_KEYS, testContext(POLICY).policy).lookups.filter((k) => k.readers === true).map(lookupKey);
    assert.deepEqual(keys(rewrite('Secret', STRANGER)), ['secrets/shared/creds readers']);
    assert.deepEqual(keys(rewrite('Secret', STRANGER, true)), []);
    assert.deepEqual(keys(rewrite('Secret', ALPHA)), []);
    assert.deepEqual(keys(rewrite('Secret', PLATFORM)), []);
  });
});

describe('reference.live-reader: a claim not yet provisioned reads the claim it clones', () => {
  // Beta's claim `copy` clones beta's `data`, and its volume is not provisioned yet (WaitForFirstConsumer: as late
  // as its first pod's scheduling). Beta deletes `data`; alpha creates `data`: the provisioner would copy alpha's.
  const claimSpec = (source: Record<string, unknown>, volumeName?: string) => ({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...source, ...(volumeName ? { volumeName } : {}) });
  const clone = { dataSource: { kind: 'PersistentVolumeClaim', name: 'data' } };
  const claim = (env: string): Extract<Lookup, { state: 'found' }> => ({ state: 'found', metadata: { ...stampedMetadata('PersistentVolumeClaim', env, NS).metadata, uid: `claim-${env}` } });
  const cloning = (env: string): Readers => ({ state: 'known', readers: [{ kind: 'PersistentVolumeClaim', name: 'copy', found: claim(env) }] });

  test('what it reads: the claim it clones (either spelling), until provisioned; not a restore, a populator, or a pod', () => {
    assert.deepEqual(claimReadsOf(claimSpec(clone)), { claims: ['data'], secrets: [], configMaps: [], resourceClaims: [], resourceClaimTemplates: [] });
    assert.deepEqual(claimReadsOf(claimSpec({ dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'data' } }))?.claims, ['data']);
    assert.equal(claimReadsOf(claimSpec(clone, 'pv-1')), undefined);
    assert.equal(claimReadsOf(claimSpec({ dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' } })), undefined);
    assert.equal(claimReadsOf(claimSpec({})), undefined);
    assert.equal(claimReadsOf({ containers: [], ...clone }), undefined);
    // As the lookups keep it, cached or read live (kube/lookup-facts.ts).
    assert.deepEqual(beyondMetadata({ spec: claimSpec(clone) }).reads?.claims, ['data']);
  });

  test("alpha's claim under the name beta's unprovisioned claim clones is refused, saying why and what to do; beta's own, and a Secret of that name, pass", () => {
    refusedBy(create('PersistentVolumeClaim', 'data'), cloning('beta'), /a claim of another environment \(or of none\) in namespace shared clones PersistentVolumeClaim data and is not provisioned yet, so its provisioner would copy this one: choose a name of this run's own, or create it once that claim is provisioned or deleted/);
    passes(create('PersistentVolumeClaim', 'data'), cloning('alpha'));
    // Alpha takes claims from gamma, not gamma from alpha: gamma's claim may not be filled from alpha's.
    refusedBy(create('PersistentVolumeClaim', 'data'), cloning('gamma'), /clones PersistentVolumeClaim data/);
    // A tenant of no environment writes beta's claim's input too; beta's manager may.
    refusedBy(create('PersistentVolumeClaim', 'data', STRANGER), cloning('beta'), /a claim of an environment this requester does not act for/);
    passes(create('PersistentVolumeClaim', 'data', BETA_MANAGER), cloning('beta'));
  });

  test('the read plan asks for the readers of a claim as of a Secret, and the claims are listed with the pods only for a claim', () => {
    assert.deepEqual(readingKinds('persistentvolumeclaims').map(([kind]) => kind), ['Pod', 'PersistentVolumeClaim']);
    assert.deepEqual(readingKinds('secrets').map(([kind]) => kind), ['Pod', 'Ingress', 'Gateway', 'ListenerSet', 'XListenerSet']);
    assert.deepEqual(readingKinds('resourceclaimtemplates').map(([kind]) => kind), ['Pod']);
  });

  test('the index follows a claim until it is provisioned', () => {
    const index = new NameReaders();
    const claimObject = (volumeName?: string): KubeObject => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'copy', namespace: NS, uid: 'copy' }, spec: claimSpec(clone, volumeName) });
    index.update(NS, 'copy', undefined, storedFactsOf(claimObject(), 'deed.dev'));
    assert.deepEqual(index.readers('persistentvolumeclaims', NS, 'data'), ['copy']);
    index.update(NS, 'copy', storedFactsOf(claimObject(), 'deed.dev'), storedFactsOf(claimObject('pv-1'), 'deed.dev'));
    assert.deepEqual(index.readers('persistentvolumeclaims', NS, 'data'), []);
    assert.equal(index.bytes, 0);
  });

  test("deed review: a claim reviewed before, not provisioned, reads its source", () => {
    const reviewed = new ReviewedObjects();
    const copy: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { ...stampedMetadata('PersistentVolumeClaim', 'beta', NS).metadata, name: 'copy', namespace: NS, uid: 'claim-beta' }, spec: claimSpec(clone) };
    reviewed.remember({ stored: copy, deleted: null });
    const readers = reviewed.lookup.readers('persistentvolumeclaims', NS, 'data');
    assert.deepEqual(readers.state === 'known' ? readers.readers.map((r) => [r.kind, r.name]) : readers, [['PersistentVolumeClaim', 'copy']]);
    assert.deepEqual(reviewed.lookup.readers('secrets', NS, 'data'), { state: 'known', readers: [] });
  });
});

describe('reference.live-reader: an Ingress reads the Secrets it names for TLS', () => {
  // Beta's Ingress names `creds` for TLS before any Secret stands under the name (cert-manager's
  // ingress-shim makes it later; ordinary). Alpha then creates `creds`: the ingress controller would
  // serve alpha's certificate and key for beta's hosts.
  const ingress = (name: string, metadata: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: NS, uid: name, ...metadata },
    spec: {
      tls: [{ hosts: ['a.example'], secretName: 'creds' }, { secretName: 'creds' }, { secretName: 'wild' }, {}],
      rules: [{ host: 'a.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
    },
  });
  // Its stamps are an Ingress's: a pod's would not verify on it (the attestation names the kind).
  const stamped = (env: string | undefined): Extract<Lookup, { state: 'found' }> => ({ state: 'found', metadata: env === undefined ? { uid: 'web' } : { ...stampedMetadata('Ingress', env, NS).metadata, uid: 'web' } });
  const ingressOf = (env: string | undefined): Readers => ({ state: 'known', readers: [{ kind: 'Ingress', name: 'web', found: stamped(env) }] });

  test('what it reads: the Secrets of spec.tls, once each; not its backends; as the lookups keep it, cached or read live', () => {
    assert.deepEqual(referencedReadsOf('ingresses', ingress('web')), { claims: [], secrets: ['creds', 'wild'], configMaps: [], resourceClaims: [], resourceClaimTemplates: [] });
    assert.equal(referencedReadsOf('ingresses', { spec: { rules: [] } }), undefined);
    // A pod's or a claim's reads are their own functions'; a kind that reads nothing reads nothing.
    assert.equal(referencedReadsOf('pods', ingress('web')), undefined);
    assert.equal(referencedReadsOf('services', ingress('web')), undefined);
    assert.deepEqual(beyondMetadata(ingress('web'), 'ingresses').reads?.secrets, ['creds', 'wild']);
    assert.equal(beyondMetadata(ingress('web')).reads, undefined);
    assert.deepEqual(readingKinds('secrets').slice(0, 2), [['Pod', 'pods'], ['Ingress', 'ingresses']]);
  });

  test("alpha's Secret under the name beta's Ingress names for TLS is refused, saying what the controller would do; alpha's own Ingress, its manager's and the platform's Secrets pass", () => {
    refusedBy(
      create('Secret', 'creds'),
      ingressOf('beta'),
      /^a live Ingress of another environment \(or of none\) in namespace shared names Secret creds \(spec\.tls\[\]\.secretName\), and once this one stands the ingress controller serves the Secret's certificate and key for its hosts: choose a name of this run's own, or create it once no such Ingress is left$/,
    );
    refusedBy(create('Secret', 'creds'), ingressOf(undefined), /a live Ingress of another environment \(or of none\)/);
    refusedBy(create('Secret', 'creds', STRANGER), ingressOf('beta'), /a live Ingress of an environment this requester does not act for/);
    passes(create('Secret', 'creds'), ingressOf('alpha'));
    passes(create('Secret', 'creds', BETA_MANAGER), ingressOf('beta'));
    passes(create('Secret', 'creds', PLATFORM), ingressOf('beta'));
    // An Ingress whose stamps do not verify is another's.
    refusedBy(create('Secret', 'creds'), { state: 'known', readers: [{ kind: 'Ingress', name: 'web', found: pod('alpha') }] }, /^a live Ingress of another environment/);
  });

  test("a listed operator's Secret made for no environment (cert-manager without --enable-certificate-owner-ref) under the name alpha's Ingress serves is refused, saying how it becomes alpha's (rev-95 F3)", () => {
    const operator: UserInfo = { username: 'system:serviceaccount:platform:cert-manager', groups: ['system:serviceaccounts'], extra: {} };
    const decision = decide('validate', create('Secret', 'creds', operator), { ...testContext({ ...POLICY, workloadControllers: { users: [operator.username] } }), lookup: readersOf(ingressOf('alpha')) });
    assert.ok(decision.kind === 'review');
    const finding = decision.verdict.findings.find((f) => f.rule === 'reference.live-reader');
    assert.match(finding?.message ?? '', /^a live Ingress of an environment this requester does not act for in namespace shared names Secret creds \(spec\.tls\[\]\.secretName\).*; system:serviceaccount:platform:cert-manager made it for no environment: a listed operator's object is an environment's when its controlling owner reference names that environment's resource \(cert-manager writes one, to the environment's Certificate or the one its ingress-shim or gateway-shim makes for the environment's Ingress or Gateway, when run with --enable-certificate-owner-ref\)$/);
  });

  test("a tenant's change of the platform's Secret that beta's Ingress serves is refused, with where the fix lies", () => {
    const review = create('Secret', 'creds', STRANGER);
    const before: KubeObject = { ...review.request.object, data: { 'tls.crt': 'YQ==' } };
    review.request.operation = 'UPDATE';
    review.request.oldObject = before;
    review.request.object = { ...before, data: { 'tls.crt': 'Yg==' } };
    review.request.options = { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' };
    refusedBy(review, ingressOf('beta'), /^a live Ingress of an environment this requester does not act for in namespace shared names Secret creds \(spec\.tls\[\]\.secretName\), and the ingress controller serves the Secret's certificate and key for its hosts: its content is changed by the platform/);
  });

  test("alpha's Ingress may not name a TLS Secret not made yet in a shared namespace: beta's Secret created under the name before Deed's watch delivers the Ingress would be served for alpha's hosts (rev-96 F1)", () => {
    const review = createReview(ingress('web'), 'ingresses', ALPHA, '5d6e7f80-0000-4000-8000-0000000000c3');
    const absent = verdict(review, { state: 'known', readers: [] }).findings.filter((f) => f.rule === 'reference.absent');
    assert.deepEqual(absent.map((f) => f.path), ['spec.rules[0].http.paths[0].backend.service.name', 'spec.tls[0].secretName', 'spec.tls[2].secretName']);
  });

  test("an Ingress's TLS names are bounded on the whole object: an UPDATE that grows it past a pod's worth of Secrets is refused (the index would take it to read every name of the namespace: rev-95 F1); one that keeps or shrinks them, and its own Secrets' names, pass", () => {
    const named = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ hosts: [`h${i + from}.example`], secretName: `tls-${i + from}` }));
    const update = (before: number, after: number, label?: string) => {
      const review = createReview(ingress('web'), 'ingresses', ALPHA, '5d6e7f80-0000-4000-8000-0000000000c2');
      const old = { ...ingress('web'), spec: { tls: named(before) } } as KubeObject;
      review.request.operation = 'UPDATE';
      review.request.oldObject = old;
      review.request.object = { ...old, metadata: { ...old.metadata, ...(label ? { labels: { run: label } } : {}) }, spec: { tls: named(after) } } as KubeObject;
      review.request.options = { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' };
      return verdict(review, { state: 'known', readers: [] });
    };
    const bound = (v: ReturnType<typeof verdict>) => v.findings.filter((f) => f.rule === 'reference.unknown' && /Deed holds at most/.test(f.message));
    assert.deepEqual(
      bound(update(250, 260)).map((f) => [f.path, f.message]),
      [['spec.tls[].secretName', "names 260 Secrets (spec.tls[].secretName), each held for it against other environments' creates in the namespace; Deed holds at most 256 for one object: split it into several"]],
    );
    assert.deepEqual(bound(update(250, 256)), []);
    // Stored before the bound: kept or shrunk, not refused.
    assert.deepEqual(bound(update(300, 300, 'b')), []);
    assert.deepEqual(bound(update(300, 290)), []);
  });

  test('the index follows an Ingress: put, replaced without the name, removed', () => {
    const index = new NameReaders();
    const facts = (obj: KubeObject) => storedFactsOf(obj, 'deed.dev', undefined, 'ingresses');
    index.update(NS, 'web', undefined, facts(ingress('web')));
    assert.deepEqual(index.readers('secrets', NS, 'creds'), ['web']);
    assert.deepEqual(index.readers('secrets', NS, 'wild'), ['web']);
    const other = { ...ingress('web'), spec: { tls: [{ secretName: 'wild' }] } };
    index.update(NS, 'web', facts(ingress('web')), facts(other));
    assert.deepEqual(index.readers('secrets', NS, 'creds'), []);
    index.update(NS, 'web', facts(other), undefined);
    assert.deepEqual(index.readers('secrets', NS, 'wild'), []);
    assert.equal(index.bytes, 0);
  });

  test("deed review: an Ingress reviewed before names its TLS Secrets", () => {
    const reviewed = new ReviewedObjects();
    reviewed.remember({ stored: ingress('web', stampedMetadata('Ingress', 'beta', NS).metadata), deleted: null });
    const readers = reviewed.lookup.readers('secrets', NS, 'creds');
    assert.deepEqual(readers.state === 'known' ? readers.readers.map((r) => [r.kind, r.name]) : readers, [['Ingress', 'web']]);
  });
});

describe("reference.live-reader: a Gateway or ListenerSet reads the Secrets its listeners serve, and a Gateway its infrastructure's ConfigMap (reviewer-98 F2b)", () => {
  // Alpha's Gateway serves alpha's certificate `creds` on its listener, and Istio builds its
  // proxy Deployment from the overlays of alpha's ConfigMap `gw-params`. Once alpha deletes
  // either, beta's under the name would be served for alpha's hostnames, or would build alpha's
  // gateway pods (beta's image, beside alpha's certificates).
  const G = 'gateway.networking.k8s.io';
  const gateway = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: `${G}/v1`, kind: 'Gateway', metadata: { name: 'edge', namespace: NS, uid: 'edge' }, spec: { gatewayClassName: 'istio', ...spec } });
  const listeners = (...refs: Array<Record<string, unknown>>) => ({ listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, tls: { certificateRefs: refs } }] });
  const stamped = (kind: string, env: string | undefined): Extract<Lookup, { state: 'found' }> => ({ state: 'found', metadata: env === undefined ? { uid: 'edge' } : { ...stampedMetadata(kind, env, NS).metadata, uid: 'edge' } });
  const readerOf = (kind: 'Gateway' | 'ListenerSet', env: string | undefined): Readers => ({ state: 'known', readers: [{ kind, name: 'edge', found: stamped(kind, env) }] });

  test('what each reads: its listeners\' certificates (in its namespace: named with it, or without one), its backend client certificate, a Gateway\'s ConfigMap parameters; not a certificate of another namespace, nor parameters of a kind Deed does not read', () => {
    const gw = gateway({
      ...listeners({ name: 'creds' }, { kind: 'Secret', group: '', name: 'wild', namespace: NS }, { name: 'far', namespace: 'certs' }),
      tls: { backend: { clientCertificateRef: { name: 'client' } } },
      infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: 'gw-params' } },
    });
    assert.deepEqual(referencedReadsOf('gateways', gw), { claims: [], secrets: ['creds', 'wild', 'client'], configMaps: ['gw-params'], resourceClaims: [], resourceClaimTemplates: [] });
    // The CA certificates it authenticates clients by (reviewer-99 F5): beta's CA under the name would admit beta's client certificates to alpha's backends.
    const ca = { group: '', kind: 'ConfigMap' };
    const mtls = gateway({
      listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, tls: { certificateRefs: [{ name: 'creds' }], frontendValidation: { caCertificateRefs: [{ ...ca, name: 'ca-listener' }] } } }],
      tls: { frontend: { default: { validation: { caCertificateRefs: [{ ...ca, name: 'ca' }] } }, perPort: [{ port: 8443, tls: { validation: { caCertificateRefs: [{ ...ca, name: 'ca-8443' }] } } }] } },
    });
    assert.deepEqual(referencedReadsOf('gateways', mtls)?.configMaps.sort(), ['ca', 'ca-8443', 'ca-listener']);
    assert.deepEqual(objectReferences({ group: G, resource: 'gateways' }, mtls).map((r) => `${r.kind} ${r.name} ${r.path}`), [
      'Secret creds spec.listeners[0].tls.certificateRefs[0]',
      'ConfigMap ca spec.tls.frontend.default.validation.caCertificateRefs[0]',
      'ConfigMap ca-8443 spec.tls.frontend.perPort[0].tls.validation.caCertificateRefs[0]',
      'ConfigMap ca-listener spec.listeners[0].tls.frontendValidation.caCertificateRefs[0]',
    ]);
    assert.equal(referencedReadsOf('gateways', gateway({ infrastructure: { parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'proxy' } } })), undefined);
    const set: KubeObject = { apiVersion: `${G}/v1`, kind: 'ListenerSet', metadata: { name: 'extra', namespace: NS }, spec: { parentRef: { name: 'edge' }, ...listeners({ name: 'creds' }) } };
    assert.deepEqual(referencedReadsOf('listenersets', set)?.secrets, ['creds']);
    assert.deepEqual(beyondMetadata(gw, 'gateways').reads?.configMaps, ['gw-params']);
    assert.deepEqual(readingKinds('configmaps'), [['Pod', 'pods'], ['Gateway', 'gateways'], ['BackendTLSPolicy', 'backendtlspolicies']]);
    // A BackendTLSPolicy's CA certificates, by which the gateway verifies its Service's certificate.
    const policy: KubeObject = { apiVersion: `${G}/v1`, kind: 'BackendTLSPolicy', metadata: { name: 'api-tls', namespace: NS }, spec: { targetRefs: [{ group: '', kind: 'Service', name: 'api' }], validation: { hostname: 'api.example', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'api-ca' }] } } };
    assert.deepEqual(referencedReadsOf('backendtlspolicies', policy)?.configMaps, ['api-ca']);
    // Kept in the index as an Ingress is, and forgotten with the Gateway.
    const index = new NameReaders();
    const facts = storedFactsOf(gw, 'deed.dev', undefined, 'gateways');
    index.update(NS, 'edge', undefined, facts);
    assert.deepEqual([index.readers('secrets', NS, 'creds'), index.readers('secrets', NS, 'far'), index.readers('configmaps', NS, 'gw-params')], [['edge'], [], ['edge']]);
    index.update(NS, 'edge', facts, undefined);
    assert.deepEqual(index.readers('configmaps', NS, 'gw-params'), []);
  });

  test("alpha's Secret under the name beta's Gateway or ListenerSet serves, and alpha's ConfigMap under the name of beta's Gateway's parameters, are refused, saying what the controller would do; alpha's own, beta's manager's and the platform's pass", () => {
    refusedBy(
      create('Secret', 'creds'),
      readerOf('Gateway', 'beta'),
      // The index keeps the name, not which reference gave it: every reference that could is named (reviewer-99 F1).
      /^a live Gateway of another environment \(or of none\) in namespace shared names Secret creds \(spec\.listeners\[\]\.tls\.certificateRefs\[\], spec\.tls\.backend\.clientCertificateRef or spec\.backendTLS\.clientCertificateRef\), and once this one stands the gateway controller serves the Secret's certificate and key on the listener, or the gateway controller presents the Secret's certificate and key to backends as its own: choose a name of this run's own, or create it once no such Gateway is left$/,
    );
    refusedBy(create('Secret', 'creds'), readerOf('ListenerSet', undefined), /^a live ListenerSet of another environment \(or of none\) in namespace shared names Secret creds \(spec\.listeners\[\]\.tls\.certificateRefs\[\]\), and once/);
    refusedBy(
      create('ConfigMap', 'creds'),
      readerOf('Gateway', 'beta'),
      /^a live Gateway of another environment \(or of none\) in namespace shared names ConfigMap creds \(spec\.tls\.frontend\.default\.validation\.caCertificateRefs\[\], spec\.tls\.frontend\.perPort\[\]\.tls\.validation\.caCertificateRefs\[\], spec\.listeners\[\]\.tls\.frontendValidation\.caCertificateRefs\[\] or spec\.infrastructure\.parametersRef\), and once this one stands the gateway controller admits clients whose certificates the ConfigMap's CA certificates sign, or the gateway controller builds the Gateway's proxy Deployment and Service from the parameters/,
    );
    refusedBy(create('ConfigMap', 'creds', STRANGER), readerOf('Gateway', 'beta'), /a live Gateway of an environment this requester does not act for/);
    passes(create('Secret', 'creds'), readerOf('Gateway', 'alpha'));
    passes(create('ConfigMap', 'creds'), readerOf('Gateway', 'alpha'));
    passes(create('Secret', 'creds', BETA_MANAGER), readerOf('ListenerSet', 'beta'));
    passes(create('ConfigMap', 'creds', PLATFORM), readerOf('Gateway', 'beta'));
    // Beta's CA under the name of the one alpha's BackendTLSPolicy trusts would vouch for the certificate beta's pods present as alpha's Service.
    const policyOf = (env: string): Readers => ({ state: 'known', readers: [{ kind: 'BackendTLSPolicy', name: 'api-tls', found: stamped('BackendTLSPolicy', env) }] });
    refusedBy(create('ConfigMap', 'creds'), policyOf('beta'), /^a live BackendTLSPolicy of another environment \(or of none\) in namespace shared names ConfigMap creds \(spec\.validation\.caCertificateRefs\[\]\), and once this one stands the gateway controller trusts the ConfigMap's CA certificates to verify the Service's certificate: choose a name of this run's own/);
    passes(create('ConfigMap', 'creds'), policyOf('alpha'));
  });
  test("deed review: a Secret alpha's Gateway names only as its backend client certificate is refused naming that reference among those it may be named by, and what the controller does with it (reviewer-99 F1)", () => {
    const reviewed = new ReviewedObjects();
    reviewed.remember({ stored: { ...gateway({ listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }], tls: { backend: { clientCertificateRef: { name: 'creds' } } } }), metadata: { ...stampedMetadata('Gateway', 'beta', NS).metadata, name: 'edge', namespace: NS, uid: 'edge' } }, deleted: null });
    const decision = decide('validate', create('Secret', 'creds'), { ...testContext(POLICY), lookup: { get: (): Lookup => ({ state: 'absent' }), readers: (r, ns, n) => reviewed.lookup.readers(r, ns, n) } });
    assert.ok(decision.kind === 'review');
    const message = decision.verdict.findings.find((f) => f.rule === 'reference.live-reader')?.message ?? '';
    assert.match(message, /names Secret creds \(.*spec\.tls\.backend\.clientCertificateRef.*\), and once this one stands .*presents the Secret's certificate and key to backends as its own/, message);
  });

  test("deed review: a Gateway given at another version its group serves (v1beta1, as the webhook reads it there) holds its certificate's name offline as in the cluster (reviewer-99 F2)", () => {
    const reviewed = new ReviewedObjects();
    reviewed.remember({ stored: { ...gateway(listeners({ name: 'creds' })), apiVersion: `${G}/v1beta1`, metadata: { ...stampedMetadata('Gateway', 'beta', NS).metadata, name: 'edge', namespace: NS, uid: 'edge' } }, deleted: null });
    const readers = reviewed.lookup.readers('secrets', NS, 'creds');
    assert.deepEqual(readers.state === 'known' ? readers.readers.map((r) => `${r.kind} ${r.name}`) : readers, ['Gateway edge']);
  });

  test("cert-manager's Secret made for no environment under the name alpha's Gateway serves (its gateway-shim without --enable-certificate-owner-ref): the refusal's advice names the gateway-shim and the Gateway (reviewer-99 F1b)", () => {
    const operator: UserInfo = { username: 'system:serviceaccount:platform:cert-manager', groups: ['system:serviceaccounts'], extra: {} };
    const decision = decide('validate', create('Secret', 'creds', operator), { ...testContext({ ...POLICY, workloadControllers: { users: [operator.username] } }), lookup: readersOf(readerOf('Gateway', 'alpha')) });
    assert.ok(decision.kind === 'review');
    assert.match(decision.verdict.findings.find((f) => f.rule === 'reference.live-reader')?.message ?? '', /made it for no environment: .*the one its ingress-shim or gateway-shim makes for the environment's Ingress or Gateway, when run with --enable-certificate-owner-ref\)$/);
  });
});

describe('the index of which pods read a name', () => {
  const podObject = (name: string, secrets: string[], configMaps: string[] = []): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, uid: name },
    spec: {
      nodeName: 'node-1',
      containers: [{ name: 'c', image: 'i', envFrom: secrets.map((s) => ({ secretRef: { name: s } })) }],
      volumes: configMaps.map((c) => ({ name: c, configMap: { name: c } })),
    },
  });
  const stored = (name: string, secrets: string[], configMaps: string[] = []) => storedFactsOf(podObject(name, secrets, configMaps), 'deed.dev');

  test('follows puts, replacements and removals, leaves the well-known ConfigMaps out, and forgets a pod that has finished', () => {
    const index = new NameReaders(new Set(['kube-root-ca.crt']));
    index.update(NS, 'a', undefined, stored('a', ['creds'], ['kube-root-ca.crt', 'settings']));
    index.update(NS, 'b', undefined, stored('b', ['creds']));
    assert.deepEqual(index.readers('secrets', NS, 'creds').sort(), ['a', 'b']);
    assert.deepEqual(index.readers('configmaps', NS, 'settings'), ['a']);
    assert.deepEqual(index.readers('configmaps', NS, 'kube-root-ca.crt'), []);
    assert.deepEqual(index.readers('secrets', 'elsewhere', 'creds'), []);
    // An ephemeral container adds a name; replacing the record moves it.
    index.update(NS, 'b', stored('b', ['creds']), stored('b', ['creds', 'token']));
    assert.deepEqual(index.readers('secrets', NS, 'token'), ['b']);
    index.update(NS, 'a', stored('a', ['creds'], ['kube-root-ca.crt', 'settings']), undefined);
    assert.deepEqual(index.readers('secrets', NS, 'creds'), ['b']);
    assert.deepEqual(index.readers('configmaps', NS, 'settings'), []);
    const held = index.bytes;
    assert.ok(held > 0);
    index.update(NS, 'b', stored('b', ['creds', 'token']), undefined);
    assert.equal(index.bytes, 0);
    // A pod that has finished reads nothing again: its names leave the index.
    index.update(NS, 'd', undefined, stored('d', ['creds']));
    index.update(NS, 'd', stored('d', ['creds']), storedFactsOf({ ...podObject('d', ['creds']), status: { phase: 'Succeeded' } }, 'deed.dev'));
    assert.deepEqual(index.readers('secrets', NS, 'creds'), []);
    index.update(NS, 'c', undefined, stored('c', ['x']));
    index.clear();
    assert.deepEqual(index.readers('secrets', NS, 'x'), []);
    assert.equal(index.bytes, 0);
  });

  test("a pod's ResourceClaimTemplates are indexed by name, apart from its ResourceClaims, until it finishes", () => {
    const index = new NameReaders();
    const dra = (status?: Record<string, unknown>): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'gpu-job', namespace: NS, uid: 'gpu-job' },
      spec: { containers: [{ name: 'c', image: 'i' }], resourceClaims: [{ name: 'net', resourceClaimTemplateName: 'net' }, { name: 'gpu', resourceClaimName: 'gpu' }] },
      ...(status ? { status } : {}),
    });
    index.update(NS, 'gpu-job', undefined, storedFactsOf(dra(), 'deed.dev'));
    assert.deepEqual(index.readers('resourceclaimtemplates', NS, 'net'), ['gpu-job']);
    assert.deepEqual(index.readers('resourceclaimtemplates', NS, 'gpu'), []);
    assert.deepEqual(index.readers('resourceclaims', NS, 'net'), []);
    assert.deepEqual(index.readers('resourceclaims', NS, 'gpu'), ['gpu-job']);
    index.update(NS, 'gpu-job', storedFactsOf(dra(), 'deed.dev'), storedFactsOf(dra({ phase: 'Failed' }), 'deed.dev'));
    assert.deepEqual(index.readers('resourceclaimtemplates', NS, 'net'), []);
    assert.equal(index.bytes, 0);
    // Read live (the cache's fallback lists the pods): the same names.
    assert.deepEqual(beyondMetadata(dra()).reads?.resourceClaimTemplates, ['net']);
  });

  test("a pod whose names its record does not keep is answered from their hashes: a reader of what it names, of nothing else, and its namespace's other pods as ever", () => {
    const index = new NameReaders();
    /** 256 Secret names of 253 characters: what one pod may name. */
    const long = Array.from({ length: 256 }, (_, i) => `${i}-`.padEnd(253, 'x'));
    index.update(NS, 'a', undefined, stored('a', ['creds']));
    const one = index.bytes;
    assert.equal(index.update(NS, 'hostile', undefined, stored('hostile', long)), true, 'the first such pod of its namespace is told');
    assert.equal(index.update(NS, 'hostile-2', undefined, stored('hostile-2', ['creds', ...long])), false, 'the next is not');
    assert.equal(index.readsNotKept, 2);
    // Each weighs its hashes (4 bytes a name) and a few entries, not its names.
    const two = index.bytes - one;
    assert.ok(two > 2 * 256 * 4 && two < 2 * 256 * 4 + 600, `two such pods weigh ${two} bytes`);
    // Told from the index, no live list: the pods that name a name, and only those.
    assert.deepEqual(index.readers('secrets', NS, 'creds').sort(), ['a', 'hostile-2']);
    assert.deepEqual(index.readers('secrets', NS, long[0]!).sort(), ['hostile', 'hostile-2']);
    assert.deepEqual(index.readers('secrets', NS, long[255]!).sort(), ['hostile', 'hostile-2']);
    assert.deepEqual(index.readers('secrets', NS, 'other'), []);
    assert.deepEqual(index.readers('configmaps', NS, long[0]!), [], 'a name of another kind is not one it reads');
    assert.deepEqual(index.readers('secrets', 'elsewhere', long[0]!), [], 'nor one of another namespace');
    // Replaced by hashes again: its weight follows exactly, and nobody is told again.
    assert.equal(index.update(NS, 'hostile', stored('hostile', long), stored('hostile', long.slice(0, 200))), false);
    assert.equal(index.bytes - one, two - 56 * 4);
    assert.deepEqual(index.readers('secrets', NS, long[255]!), ['hostile-2']);
    // One replaced by a pod that fits: its names are indexed, the other is still answered from its hashes.
    index.update(NS, 'hostile', stored('hostile', long.slice(0, 200)), stored('hostile', ['token']));
    assert.equal(index.readsNotKept, 1);
    assert.deepEqual(index.readers('secrets', NS, 'token'), ['hostile']);
    assert.deepEqual(index.readers('secrets', NS, long[0]!), ['hostile-2']);
    index.update(NS, 'hostile-2', stored('hostile-2', ['creds', ...long]), undefined);
    assert.equal(index.readsNotKept, 0);
    assert.deepEqual(index.readers('secrets', NS, 'creds'), ['a']);
    assert.deepEqual(index.readers('secrets', NS, long[0]!), []);
    // A pod whose names are indexed grows past the bound (an ephemeral container): its names leave the index for hashes.
    const indexed = index.bytes;
    assert.equal(index.update(NS, 'hostile', stored('hostile', ['token']), stored('hostile', ['token', ...long])), true);
    assert.deepEqual(index.readers('secrets', NS, 'token'), ['hostile']);
    index.update(NS, 'hostile', stored('hostile', ['token', ...long]), stored('hostile', ['token']));
    assert.equal(index.bytes, indexed, 'back to its names: what the hashes held is given back');
    index.update(NS, 'hostile', stored('hostile', ['token']), undefined);
    assert.deepEqual(index.readers('secrets', NS, 'token'), []);
    assert.equal(index.bytes, one, 'all it held is given back');
    // A pod naming more than the hashes keep (made past admission): a reader of any name of its namespace, fail closed.
    const most = Array.from({ length: MAX_HASHED_READS + 1 }, (_, i) => `s-${i}`);
    index.update(NS, 'beyond', undefined, stored('beyond', most));
    assert.deepEqual(index.readers('secrets', NS, 'creds').sort(), ['a', 'beyond']);
    assert.deepEqual(index.readers('configmaps', NS, 'anything'), ['beyond']);
    assert.deepEqual(index.readers('secrets', 'elsewhere', 'creds'), []);
    index.update(NS, 'beyond', stored('beyond', most), undefined);
    assert.equal(index.bytes, one);
    index.update(NS, 'hostile', undefined, stored('hostile', long));
    index.clear();
    assert.equal(index.readsNotKept, 0);
    assert.deepEqual(index.readers('secrets', NS, 'creds'), []);
    assert.equal(index.bytes, 0);
  });
});

describe("deed review's readers are the pods it reviewed or was given", () => {
  test("a Secret alpha creates after beta's pod that reads it is refused in the same run", () => {
    const reviewed = new ReviewedObjects();
    const beta: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { ...stampedMetadata('Pod', 'beta', NS).metadata, name: 'job', namespace: NS, uid: 'pod-beta' }, spec: { containers: [{ name: 'c', image: 'i', envFrom: [{ secretRef: { name: 'creds' } }] }] } };
    reviewed.remember({ stored: beta, deleted: null });
    const readers = reviewed.lookup.readers('secrets', NS, 'creds');
    assert.equal(readers.state, 'known');
    assert.deepEqual(readers.state === 'known' ? readers.readers.map((p) => p.name) : [], ['job']);
    assert.deepEqual(reviewed.lookup.readers('secrets', NS, 'other'), { state: 'known', readers: [] });
    reviewed.remember({ stored: null, deleted: beta });
    assert.deepEqual(reviewed.lookup.readers('secrets', NS, 'creds'), { state: 'known', readers: [] });
  });
});
