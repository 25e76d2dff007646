import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { MAX_CLAIM_LOOKUPS, noLookup, planLookups } from '../src/policy/lookup.js';
import type { ObjectLookup } from '../src/policy/policy.js';
import { claimLookup, claimOf, decodePatch, fixture, fixtureClaims, FIXTURE_KEYS, FIXTURE_POLICY, testContext, NOW, type Review } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test edits reach deep into pod specs
type Pod = KubeObject & { spec: Record<string, any> };

const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;
const RUNNER_B = fixture('mutate-create-pod-by-other-namespace-runner.json').request.userInfo as UserInfo;

/** `body`'s object as Deed's mutating webhook stamps it for `userInfo`. */
function stamped(body: Review, userInfo: UserInfo, config: ConfigInput): KubeObject {
  const { uid: _uid, ...metadata } = body.request.object.metadata;
  const review = { ...body, request: { ...body.request, operation: 'CREATE', subResource: undefined, userInfo, object: { ...body.request.object, metadata }, oldObject: null, options: null } };
  const d = decide('mutate', review, testContext(config));
  assert.ok(d.kind === 'review' && d.response.response.allowed, d.kind === 'review' ? d.response.response.status?.message : d.message);
  return jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch(d.response)).newDocument;
}

interface Options {
  userInfo?: UserInfo;
  config?: ConfigInput;
  lookup?: ObjectLookup;
}

function validate(body: Review, { config = FIXTURE_POLICY, lookup }: Options = {}): AdmissionResponse {
  const d = decide('validate', body, testContext(config, NOW, undefined, lookup));
  if (d.kind !== 'review') throw new Error(d.message);
  assert.equal(d.response.response.uid, body.request.uid);
  return d.response.response;
}

/** The captured CREATE of sbx-1 (main; indexer granted ro) with `change` applied, then stamped for the requester (ephemeral claim templates too). */
function createPod(change: (o: Pod) => void = () => {}, { userInfo = RUNNER_A, config = FIXTURE_POLICY }: Options = {}): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  body.request.userInfo = userInfo;
  change(body.request.object as Pod);
  body.request.object = stamped(body, userInfo, config);
  return body;
}

function denies(body: Review, rule: string, pattern?: RegExp, options?: Options): string {
  const r = validate(body, options);
  assert.equal(r.allowed, false, `expected a denial by ${rule}`);
  const message = r.status?.message ?? '';
  assert.ok(message.includes(`[${rule}]`), message);
  if (pattern) assert.match(message, pattern);
  return message;
}

function allows(body: Review, options?: Options): AdmissionResponse {
  const r = validate(body, options);
  assert.equal(r.allowed, true, r.status?.message);
  return r;
}

const ALIAS = { name: 'ws-alias', persistentVolumeClaim: { claimName: 'sbx-1-workspace' } };
const CLONE = { name: 'ws-copy', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, dataSource: { kind: 'PersistentVolumeClaim', name: 'sbx-1-workspace' } } } } };

describe('the workspace is its claim, whatever the volume is called', () => {
  const denied: Array<[string, (o: Pod) => void, string, RegExp]> = [
    [
      'a read-only grantee mounting the claim read-write under another volume name',
      (o) => { o.spec.volumes.push(ALIAS); o.spec.containers[1].volumeMounts = [{ name: 'ws-alias', mountPath: '/workspace' }]; },
      'workspace.read-only',
      /container "indexer" is granted "ro" but mounts the workspace \(as volume "ws-alias"\) read-write/,
    ],
    [
      'a read-only grantee mounting the claim a second time, elsewhere',
      (o) => { o.spec.volumes.push(ALIAS); o.spec.containers[1].volumeMounts.push({ name: 'ws-alias', mountPath: '/data', readOnly: true }); },
      'workspace.mount-path',
      /container "indexer" mounts the workspace 2 times; once only.*must be exactly "\/workspace", got "\/data"/,
    ],
    [
      'an ungranted sidecar mounting the claim with subPath .git',
      (o) => { o.spec.volumes.push(ALIAS); o.spec.containers.push({ name: 'sidecar', image: 'x', volumeMounts: [{ name: 'ws-alias', mountPath: '/git', subPath: '.git' }] }); },
      'workspace.undeclared-mount',
      /container "sidecar" mounts the workspace \(as volume "ws-alias"\) without a grant/,
    ],
    [
      'a granted sidecar mounting the claim with subPath',
      (o) => { o.spec.volumes.push(ALIAS); o.spec.containers[1].volumeMounts = [{ name: 'ws-alias', mountPath: '/workspace', readOnly: true, subPath: '.git' }]; },
      'workspace.subpath',
      /volumeMounts\[mountPath=\/workspace\]\.subPath: subPath is not allowed on the workspace/,
    ],
    [
      'a granted sidecar mounting the claim with HostToContainer propagation',
      (o) => { o.spec.volumes.push(ALIAS); o.spec.containers[1].volumeMounts = [{ name: 'ws-alias', mountPath: '/workspace', readOnly: true, mountPropagation: 'HostToContainer' }]; },
      'workspace.propagation',
      /must be None, got "HostToContainer"/,
    ],
    [
      'an init container mounting the claim',
      (o) => { o.spec.volumes.push(ALIAS); o.spec.initContainers = [{ name: 'setup', image: 'x', volumeMounts: [{ name: 'ws-alias', mountPath: '/src' }] }]; },
      'workspace.init-or-ephemeral',
      /init container "setup" may not mount the workspace \(volume "ws-alias" on the workspace claim sbx-1-workspace\)/,
    ],
    [
      'an ungranted sidecar mounting a clone of the claim (an ephemeral volume with the workspace as its data source)',
      (o) => { o.spec.volumes.push(CLONE); o.spec.containers.push({ name: 'sidecar', image: 'x', volumeMounts: [{ name: 'ws-copy', mountPath: '/copy' }] }); },
      'workspace.undeclared-mount',
      /container "sidecar" mounts the workspace \(as volume "ws-copy"\) without a grant/,
    ],
    [
      'an init container mounting a clone through dataSourceRef',
      (o) => {
        const clone = structuredClone(CLONE);
        const spec = clone.ephemeral.volumeClaimTemplate.spec as Record<string, unknown>;
        spec.dataSourceRef = spec.dataSource;
        delete spec.dataSource;
        o.spec.volumes.push(clone);
        o.spec.initContainers = [{ name: 'setup', image: 'x', volumeMounts: [{ name: 'ws-copy', mountPath: '/copy' }] }];
      },
      'workspace.init-or-ephemeral',
      /init container "setup" may not mount the workspace \(volume "ws-copy", a clone of the workspace claim sbx-1-workspace\)/,
    ],
    [
      // The API server keeps a dataSourceRef of any group, and the CSI provisioner clones on the kind alone.
      'an init container mounting a clone through a dataSourceRef that names an API group',
      (o) => {
        const clone = structuredClone(CLONE);
        const spec = clone.ephemeral.volumeClaimTemplate.spec as Record<string, unknown>;
        spec.dataSourceRef = { apiGroup: 'x.example.com', ...(spec.dataSource as object) };
        delete spec.dataSource;
        o.spec.volumes.push(clone);
        o.spec.initContainers = [{ name: 'setup', image: 'x', volumeMounts: [{ name: 'ws-copy', mountPath: '/copy' }] }];
      },
      'workspace.init-or-ephemeral',
      /init container "setup" may not mount the workspace \(volume "ws-copy", a clone of the workspace claim sbx-1-workspace\)/,
    ],
  ];
  for (const [name, change, rule, pattern] of denied)
    test(`${name} is denied by ${rule}`, () => {
      denies(createPod(change), rule, pattern);
    });

  test('an ephemeral container added through pods/ephemeralcontainers with the claim under another name is denied', () => {
    const body = fixture('validate-update-pod-ephemeralcontainers.json');
    const config = FIXTURE_POLICY;
    const old = stamped({ ...body, request: { ...body.request, object: body.request.oldObject } }, RUNNER_A, config) as Pod;
    old.spec.volumes.push(ALIAS);
    body.request.oldObject = old;
    const next = structuredClone(old);
    next.spec.ephemeralContainers = [{ ...body.request.object.spec.ephemeralContainers[0], volumeMounts: [{ name: 'ws-alias', mountPath: '/w' }] }];
    body.request.object = next;
    denies(body, 'workspace.init-or-ephemeral', /ephemeral container "dbg" may not mount the workspace \(volume "ws-alias" on the workspace claim sbx-1-workspace\)/);
  });

  test('the main container may mount the claim under another name at /workspace; an unmounted alias is harmless', () => {
    allows(createPod((o) => { o.spec.volumes.push(ALIAS); o.spec.containers[0].volumeMounts[0].name = 'ws-alias'; }));
    allows(createPod((o) => o.spec.volumes.push(ALIAS)));
  });

  test('a granted sidecar mounting the claim under another name, as its grant says, is allowed', () => {
    allows(createPod((o) => { o.spec.volumes.push(ALIAS); o.spec.containers[1].volumeMounts = [{ name: 'ws-alias', mountPath: '/workspace', readOnly: true }]; }));
  });

  test('another claim, or a clone of another claim, is not the workspace', () => {
    const lookup = claimLookup({ ...fixtureClaims(), 'sandbox-a/cache': claimOf('alpha') });
    const other = { name: 'cache', persistentVolumeClaim: { claimName: 'cache' } };
    const clone = structuredClone(CLONE);
    clone.ephemeral.volumeClaimTemplate.spec.dataSource.name = 'cache';
    allows(createPod((o) => { o.spec.volumes.push(other, clone); o.spec.containers.push({ name: 'sidecar', image: 'x', volumeMounts: [{ name: 'cache', mountPath: '/cache' }, { name: 'ws-copy', mountPath: '/copy' }] }); }), { lookup });
  });

  test('with an ephemeral workspace, a persistentVolumeClaim volume on the claim it creates (<pod>-workspace) is the workspace too', () => {
    const config: ConfigInput = { ...FIXTURE_POLICY, template: { volumes: { workspace: { source: 'ephemeral' } } } };
    const lookup = claimLookup({ 'sandbox-a/sbx-1-workspace': null });
    const body = createPod((o) => {
      o.spec.volumes[0] = { name: 'workspace', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } };
      o.spec.volumes.push(ALIAS);
      o.spec.containers.push({ name: 'sidecar', image: 'x', volumeMounts: [{ name: 'ws-alias', mountPath: '/w' }] });
    }, { config });
    denies(body, 'workspace.undeclared-mount', /"sidecar" mounts the workspace \(as volume "ws-alias"\)/, { config, lookup });
  });
});

describe('claims of another environment', () => {
  /** The captured pod, created in sandbox-a by the sandbox-b runner (environment beta), mounting sbx-1's workspace claim. */
  const betaPod = (change: (o: Pod) => void = () => {}, config?: ConfigInput) => createPod(change, { userInfo: RUNNER_B, ...(config ? { config } : {}) });

  test("a beta pod mounting alpha's workspace claim is denied, naming the volume, the claim and both environments", () => {
    denies(
      betaPod(),
      'claim.cross-environment',
      /\[claim\.cross-environment\] spec\.volumes\[name=workspace\]\.persistentVolumeClaim\.claimName: volume "workspace" mounts claim sbx-1-workspace, which belongs to another environment; environment "beta" may not \(policy: environments\[\]\.claimsFrom\)/,
    );
  });

  test('an alpha pod mounting the same claim is allowed', () => {
    allows(createPod());
  });

  test("a beta pod cloning alpha's claim into an ephemeral volume is denied too", () => {
    const lookup = claimLookup({ ...fixtureClaims(), 'sandbox-a/beta-ws': claimOf('beta') });
    const message = denies(
      betaPod((o) => { o.spec.volumes[0].persistentVolumeClaim.claimName = 'beta-ws'; o.spec.volumes.push({ ...CLONE, name: 'loot' }); o.spec.containers[0].volumeMounts.push({ name: 'loot', mountPath: '/loot' }); }),
      'claim.cross-environment',
      /spec\.volumes\[name=loot\]\.ephemeral\.volumeClaimTemplate\.spec\.dataSource: volume "loot" clones claim sbx-1-workspace, which belongs to another environment/,
      { lookup },
    );
    assert.ok(!message.includes('beta-ws of environment'), 'its own claim is fine');
  });

  test('the policy may let beta mount claims of alpha', () => {
    const config: ConfigInput = { environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'], claimsFrom: ['alpha'] }] };
    allows(betaPod(() => {}, config), { config });
  });

  test('the rule can be relaxed to warn like other rules', () => {
    const config: ConfigInput = { ...FIXTURE_POLICY, rules: { 'claim.cross-environment': 'warn' } };
    const r = allows(betaPod(() => {}, config), { config });
    assert.ok(r.warnings?.some((w) => w.startsWith('deed claim.cross-environment: volume "workspace" mounts claim sbx-1-workspace')), JSON.stringify(r.warnings));
  });

  test('a claim whose environment is a bare label, without a verifying attestation, is of unknown environment: denied', () => {
    const forged = claimOf('beta');
    forged.metadata.labels!['deed.dev/environment'] = 'beta';
    forged.metadata.annotations!['deed.dev/attestation'] = claimOf('alpha').metadata.annotations!['deed.dev/attestation']!;
    const lookups: Array<[string, KubeObject]> = [
      ['an attestation over other stamps', forged],
      ['no attestation', { metadata: { labels: { 'deed.dev/environment': 'beta' } } }],
      ['stamps signed in another namespace', claimOf('beta', 'sandbox-b')],
    ];
    for (const [what, claim] of lookups) {
      const r = validate(betaPod(), { lookup: claimLookup({ 'sandbox-a/sbx-1-workspace': claim }) });
      assert.equal(r.allowed, false, what);
      assert.match(r.status!.message, /\[claim\.unknown\] .*claim sbx-1-workspace carries Deed's stamps but they do not verify \(.+\), so its environment is unknown/, what);
    }
  });

  test('an unmanaged claim (no Deed stamps) is allowed', () => {
    allows(betaPod(), { lookup: claimLookup({ 'sandbox-a/sbx-1-workspace': { metadata: { labels: { app: 'legacy' } } } }) });
  });

  test('a claim Deed cannot look up fails closed, with the reason', () => {
    denies(createPod(), 'claim.unknown', /cannot tell which environment claim sbx-1-workspace belongs to: the metadata cache is not synced yet/, { lookup: claimLookup({ 'sandbox-a/sbx-1-workspace': 'the metadata cache is not synced yet' }) });
    denies(createPod(), 'claim.unknown', /cannot tell which environment claim sbx-1-workspace belongs to: Deed has no access to the API server/, { lookup: noLookup('Deed has no access to the API server') });
  });

  // A pod that names its node: no binding follows, which would judge the claim again.
  const onNode = (o: Pod) => void ((o.spec as Record<string, unknown>).nodeName = 'node-1');

  test('a claim that does not exist is refused in a pod that names its node: it would bind whatever another environment creates under that name later', () => {
    denies(createPod(onNode), 'claim.absent', /claim sbx-1-workspace does not exist; create it first, or a claim another environment creates under that name later would be used/, { lookup: claimLookup({}) });
  });

  test('claims are looked up in the pod\'s own namespace', () => {
    denies(createPod(onNode), 'claim.absent', undefined, { lookup: claimLookup({ 'sandbox-b/sbx-1-workspace': claimOf('alpha', 'sandbox-b') }) });
  });

  test("a PersistentVolumeClaim created by beta cloning alpha's claim is denied; cloning its own is allowed", () => {
    const body = fixture('validate-create-pvc-by-runner.json');
    body.request.userInfo = RUNNER_B;
    body.request.object.metadata.name = 'loot';
    body.request.object.spec.dataSource = { kind: 'PersistentVolumeClaim', name: 'sbx-1-workspace' };
    body.request.object = stamped(body, RUNNER_B, FIXTURE_POLICY);
    denies(body, 'claim.cross-environment', /spec\.dataSource: this claim clones claim sbx-1-workspace, which belongs to another environment; environment "beta" may not/);
    allows(body, { lookup: claimLookup({ 'sandbox-a/sbx-1-workspace': claimOf('beta') }) });
  });

  test("a clone whose data source names an API group is still a clone: beta's claim naming alpha's under apiGroup x.example.com is denied", () => {
    for (const key of ['dataSource', 'dataSourceRef'] as const) {
      const body = fixture('validate-create-pvc-by-runner.json');
      body.request.userInfo = RUNNER_B;
      body.request.object.metadata.name = 'loot';
      body.request.object.spec[key] = { apiGroup: 'x.example.com', kind: 'PersistentVolumeClaim', name: 'sbx-1-workspace' };
      body.request.object = stamped(body, RUNNER_B, FIXTURE_POLICY);
      denies(body, 'claim.cross-environment', new RegExp(`spec\\.${key}: this claim clones claim sbx-1-workspace, which belongs to another environment`));
      // Read fresh, as what a new claim is filled from (its binding compares with it: rules/claim-binding.ts); and the pods that read the new claim's name (reference.live-reader).
      assert.deepEqual(planLookups(body, 'validate', FIXTURE_KEYS).lookups, [
        { resource: 'persistentvolumeclaims', namespace: 'sandbox-a', name: 'sbx-1-workspace', fresh: true },
        { resource: 'persistentvolumeclaims', namespace: 'sandbox-a', name: 'loot', readers: true },
      ]);
    }
  });

  test('an UPDATE does not look claims up again (volumes are immutable)', () => {
    const body = fixture('validate-update-pod-label-by-runner.json');
    const old = stamped({ ...body, request: { ...body.request, object: body.request.oldObject } }, RUNNER_A, FIXTURE_POLICY);
    body.request.oldObject = old;
    body.request.object = { ...structuredClone(old), metadata: { ...structuredClone(old.metadata), labels: { ...old.metadata.labels, touched: 'yes' } } };
    allows(body, { lookup: noLookup('no cluster') });
  });
});

describe('the server reads the claims a review names before deciding', () => {
  test('a pod CREATE on the validating webhook needs its claims (each once); the mutating webhook and an UPDATE need none', () => {
    const body = createPod((o) => o.spec.volumes.push(ALIAS, { ...CLONE, name: 'copy' }, { name: 'cache', persistentVolumeClaim: { claimName: 'cache' } }));
    // The workspace is mounted and cloned: read once, fresh (what an ephemeral claim is filled from); the cache from the cache.
    assert.deepEqual(planLookups(body, 'validate', FIXTURE_KEYS).lookups, [
      { resource: 'persistentvolumeclaims', namespace: 'sandbox-a', name: 'sbx-1-workspace', fresh: true },
      { resource: 'persistentvolumeclaims', namespace: 'sandbox-a', name: 'cache' },
    ]);
    assert.deepEqual(planLookups(body, 'mutate', FIXTURE_KEYS).lookups, []);
    assert.deepEqual(planLookups(fixture('validate-update-pod-label-by-runner.json'), 'validate', FIXTURE_KEYS).lookups, []);
  });

  test('a claim that clones another needs it; a pod naming many claims gets at most MAX_CLAIM_LOOKUPS read', () => {
    const pvc = fixture('validate-create-pvc-by-runner.json');
    pvc.request.object.spec.dataSourceRef = { kind: 'PersistentVolumeClaim', name: 'source' };
    assert.deepEqual(planLookups(pvc, 'validate', FIXTURE_KEYS).lookups, [
      { resource: 'persistentvolumeclaims', namespace: 'sandbox-a', name: 'source', fresh: true },
      { resource: 'persistentvolumeclaims', namespace: 'sandbox-a', name: pvc.request.object.metadata.name, readers: true },
    ]);
    const many = createPod((o) => { for (let i = 0; i < MAX_CLAIM_LOOKUPS + 40; i++) o.spec.volumes.push({ name: `v${i}`, persistentVolumeClaim: { claimName: `c${i}` } }); });
    assert.equal(planLookups(many, 'validate', FIXTURE_KEYS).lookups.length, MAX_CLAIM_LOOKUPS);
  });

  test('the body decoded to find the lookups is handed on, so decide() does not decode it again', () => {
    const body = createPod();
    const plan = planLookups(body, 'validate', FIXTURE_KEYS);
    assert.ok(plan.decoded?.ok);
    assert.equal(plan.decoded.request.uid, body.request.uid);
    // A review that reads nothing is decoded by the plan too (its door says it needs nothing), and handed on the same way.
    const label = planLookups(fixture('validate-update-pod-label-by-runner.json'), 'validate', FIXTURE_KEYS);
    assert.deepEqual(label.lookups, []);
    assert.ok(label.decoded?.ok, 'no lookups, decoded once all the same');
  });

  test('a fault while working out the reads plans none and hands it on; the review is still answered with its uid, refused for what went unread', () => {
    const body = createPod();
    // A bug in a door's needs, stood in for by stamp keys whose run lease cannot be read.
    const keys = new Proxy(FIXTURE_KEYS, { get: (target, key, receiver) => (key === 'runLease' ? assert.fail('a bug in the read plan') : Reflect.get(target, key, receiver)) });
    const ctx = testContext(undefined, undefined, undefined, noLookup('nothing was planned'));
    const plan = planLookups(body, 'validate', keys, ctx.policy);
    assert.deepEqual(plan.lookups, []);
    assert.match(String(plan.fault), /a bug in the read plan/, 'the server logs and counts it');
    const d = decide('validate', body, ctx, plan.decoded);
    assert.ok(d.kind === 'review' && d.uid === body.request.uid && !d.response.response.allowed);
    assert.equal(planLookups(body, 'validate', FIXTURE_KEYS, ctx.policy).fault, undefined);
  });

  test('a body whose decoding throws plans no lookups and leaves the answer to decide(), which keeps the uid', () => {
    const request = { uid: 'e1b2c3d4-0000-4000-8000-000000000000', operation: 'CREATE', resource: { group: '', version: 'v1', resource: 'pods' } };
    const hostile = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: Object.defineProperty(request, 'object', { enumerable: true, get: () => { throw new Error('hostile getter'); } }) };
    assert.deepEqual(planLookups(hostile, 'validate', FIXTURE_KEYS), { lookups: [] });
    const d = decide('validate', hostile, testContext());
    assert.ok(d.kind === 'review' && !d.response.response.allowed && d.uid === request.uid);
  });
});
