// An environment's objects are reached only through it: Secret and ConfigMap references, absent claims,
// a bound namespace's unstamped objects, NetworkPolicy selectors, the workspace in any pod.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { lookupsNeeded, MAX_CONFIGMAP_LOOKUPS, MAX_SECRET_LOOKUPS } from '../src/policy/lookup.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { podSecrets } from '../src/policy/pod/secret-references.js';
import { podConfigMaps } from '../src/policy/pod/configmap-references.js';
import { normalMountPath } from '../src/policy/pod/spec.js';
import { decodePatch, fixture, FIXTURE_KEYS, NOW, testContext, workspaceClaimOf, claimOf, stampedMetadata, type Review, NO_READERS } from './helpers.js';
import { RUNNER_A, RUNNER_B, stamped } from './validate-helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'], managers: { users: ['alpha-manager'] } },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
};
const NONE: UserInfo = { username: 'stranger', groups: ['system:authenticated'], extra: {} };
const MANAGER: UserInfo = { username: 'alpha-manager', groups: ['system:authenticated'], extra: {} };
const MAIN = { name: 'main', image: 'registry.example/agent:1' };

function secretOf(environment: string, namespace: string, kind: 'Secret' | 'ConfigMap' = 'Secret'): KubeObject {
  return stampedMetadata(kind, environment, namespace, 'b'.repeat(64));
}

/** `resource/namespace/name` to the object, null for absent, a string for unknown; anything not listed is absent. */
function lookupOf(objects: Record<string, KubeObject | null | string>): ObjectLookup {
  return {
    readers: NO_READERS,
    get(resource, namespace, name): Lookup {
      const key = `${resource}/${namespace}/${name}`;
      const value = Object.hasOwn(objects, key) ? objects[key] : null;
      if (typeof value === 'string') return { state: 'unknown', reason: value };
      if (value === null || value === undefined) return { state: 'absent' };
      return { state: 'found', metadata: { ...(value.metadata.labels ? { labels: value.metadata.labels } : {}), ...(value.metadata.annotations ? { annotations: value.metadata.annotations } : {}) } };
    },
  };
}

const OBJECTS: Record<string, KubeObject | null | string> = {
  'secrets/shared/alpha-creds': secretOf('alpha', 'shared'),
  'secrets/shared/beta-creds': secretOf('beta', 'shared'),
  'secrets/shared/shared-pull': { metadata: {} },
  'secrets/shared/slow': 'timed out',
  'secrets/sandbox-a/runner-config': { metadata: {} },
  'configmaps/shared/alpha-script': secretOf('alpha', 'shared', 'ConfigMap'),
  'configmaps/shared/shared-settings': { metadata: {} },
  'configmaps/shared/slow-settings': 'timed out',
  'configmaps/shared/kube-root-ca.crt': { metadata: {} },
  'configmaps/sandbox-a/kube-root-ca.crt': { metadata: {} },
  'persistentvolumeclaims/shared/alpha-ws': workspaceClaimOf('alpha', 'shared'),
  'persistentvolumeclaims/shared/alpha-data': claimOf('alpha', 'shared'),
};

interface Options {
  namespace?: string;
  dryRun?: boolean;
  resource?: 'pods' | 'networkpolicies' | 'persistentvolumeclaims';
  old?: KubeObject;
  subResource?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}

const KINDS = {
  pods: { group: '', kind: 'Pod', apiVersion: 'v1' },
  networkpolicies: { group: 'networking.k8s.io', kind: 'NetworkPolicy', apiVersion: 'networking.k8s.io/v1' },
  persistentvolumeclaims: { group: '', kind: 'PersistentVolumeClaim', apiVersion: 'v1' },
} as const;

/** A review of `spec` as `userInfo` sends it; for CREATE by a requester of an environment, stamped as the mutating webhook would. */
function review(userInfo: UserInfo, spec: Record<string, unknown>, o: Options = {}): Review {
  const namespace = o.namespace ?? 'shared';
  const k = KINDS[o.resource ?? 'pods'];
  const body = fixture('validate-create-pod-by-runner.json');
  const gvk = { group: k.group, version: 'v1', kind: k.kind };
  const gvr = { group: k.group, version: 'v1', resource: o.resource ?? 'pods' };
  body.request = { ...body.request, kind: gvk, requestKind: gvk, resource: gvr, requestResource: gvr, namespace, name: 'obj', userInfo, dryRun: o.dryRun === true };
  let obj: KubeObject = { apiVersion: k.apiVersion, kind: k.kind, metadata: { name: 'obj', namespace, annotations: o.annotations ?? {}, labels: o.labels ?? {} }, spec };
  if (o.old !== undefined) {
    body.request = { ...body.request, operation: 'UPDATE', object: { ...o.old, spec }, oldObject: o.old, ...(o.subResource ? { subResource: o.subResource } : {}) };
    return body;
  }
  const forMutate = { ...body, request: { ...body.request } };
  if (mutateAllows(forMutate, obj)) obj = stamped(forMutate, obj, userInfo, POLICY);
  body.request = { ...body.request, operation: 'CREATE', object: obj, oldObject: null };
  return body;
}

function mutateAllows(body: Review, obj: KubeObject): boolean {
  const d = decide('mutate', { ...body, request: { ...body.request, operation: 'CREATE', object: obj, oldObject: null } }, testContext(POLICY));
  return d.kind === 'review' && d.response.response.allowed;
}

function judge(body: Review, lookup: ObjectLookup = lookupOf(OBJECTS), config: ConfigInput = POLICY) {
  const d = decide('validate', body, testContext(config, NOW, undefined, lookup));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

function refused(body: Review, rule: string, pattern?: RegExp, lookup?: ObjectLookup): void {
  const r = judge(body, lookup);
  assert.equal(r.allowed, false, `expected a denial by ${rule}`);
  assert.ok(r.status?.message?.includes(`[${rule}]`), r.status?.message);
  if (pattern) assert.match(r.status!.message!, pattern);
}

function admitted(body: Review, lookup?: ObjectLookup): string[] {
  const r = judge(body, lookup);
  assert.equal(r.allowed, true, r.status?.message);
  return r.warnings ?? [];
}

/** Every form a pod names a Secret in, one pod spec each. */
function forms(name: string): Array<[string, Record<string, unknown>]> {
  return [
    ['secret volume', { volumes: [{ name: 'v', secret: { secretName: name } }], containers: [MAIN] }],
    ['projected source', { volumes: [{ name: 'v', projected: { sources: [{ configMap: { name: 'kube-root-ca.crt' } }, { secret: { name } }] } }], containers: [MAIN] }],
    ['CSI nodePublishSecretRef', { volumes: [{ name: 'v', csi: { driver: 'd', nodePublishSecretRef: { name } } }], containers: [MAIN] }],
    ['rbd secretRef', { volumes: [{ name: 'v', rbd: { monitors: ['m'], image: 'i', secretRef: { name } } }], containers: [MAIN] }],
    ['azureFile secretName', { volumes: [{ name: 'v', azureFile: { secretName: name, shareName: 's' } }], containers: [MAIN] }],
    ['env secretKeyRef', { containers: [{ ...MAIN, env: [{ name: 'T', valueFrom: { secretKeyRef: { name, key: 'k' } } }] }] }],
    ['envFrom secretRef', { containers: [{ ...MAIN, envFrom: [{ secretRef: { name } }] }] }],
    ['init container env', { initContainers: [{ name: 'i', image: 'x', envFrom: [{ prefix: 'I_', secretRef: { name, optional: true } }] }], containers: [MAIN] }],
    ['imagePullSecrets', { imagePullSecrets: [{ name }], containers: [MAIN] }],
  ];
}

/** Alpha's object named through each form: refused to beta and to a pod of no environment, admitted to alpha. */
function crossEnvironmentForms(kind: string, rules: string, named: Array<[string, Record<string, unknown>]>, name: string): void {
  for (const [form, spec] of named) {
    test(`beta's pod naming alpha's ${kind} through ${form} is refused`, () => {
      refused(review(RUNNER_B, spec), `${rules}.cross-environment`, new RegExp(`${kind} ${name}, which belongs to another environment; environment "beta" may not`));
    });
    test(`a pod of no environment naming alpha's ${kind} through ${form} is refused`, () => {
      refused(review(NONE, spec), `${rules}.cross-environment`, /stranger acts for no environment and may not/);
    });
    test(`alpha's pod naming alpha's ${kind} through ${form} is admitted`, () => {
      admitted(review(RUNNER_A, spec));
    });
  }
}

describe('Secret references are guarded like claims', () => {
  test('podSecrets finds every form, in every container kind, with the field path under `at`', () => {
    for (const [form, spec] of forms('s')) assert.equal(podSecrets(spec, 'spec').length, 1, form);
    const ephemeral = podSecrets({ ephemeralContainers: [{ name: 'dbg', env: [{ name: 'T', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] }, 'spec.template.spec');
    assert.deepEqual(ephemeral.map((r) => r.path), ['spec.template.spec.ephemeralContainers[name=dbg].env[name=T].valueFrom.secretKeyRef.name']);
  });

  crossEnvironmentForms('Secret', 'secret-ref', forms('alpha-creds'), 'alpha-creds');

  test('an unstamped Secret outside a bound namespace is usable by all; one in a bound namespace is its environment\'s', () => {
    admitted(review(RUNNER_B, { imagePullSecrets: [{ name: 'shared-pull' }], containers: [MAIN] }));
    admitted(review(NONE, { imagePullSecrets: [{ name: 'shared-pull' }], containers: [MAIN] }));
    admitted(review(MANAGER, { containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 'runner-config' } }] }] }, { namespace: 'sandbox-a' }));
  });

  test("alpha's manager (acting for no environment) may name alpha's Secret", () => {
    admitted(review(MANAGER, { containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 'alpha-creds' } }] }] }));
  });

  test('a Secret that does not exist is refused whoever names it in a pod that names its node, optional or not; allowed in a namespace bound to the requester', () => {
    // No binding follows a pod that names its node: it would read whatever is created under the name later.
    const spec = { nodeName: 'node-1', containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 'not-yet', optional: true } }] }] };
    refused(review(NONE, spec), 'secret-ref.absent', /Secret not-yet does not exist/);
    refused(review(RUNNER_B, spec), 'secret-ref.absent');
    admitted(review(RUNNER_A, spec, { namespace: 'sandbox-a' }));
  });

  test('a pod the scheduler binds may name a Secret or ConfigMap that does not exist yet (a manifest that lists the pod first): its binding and whoever creates it are judged later', () => {
    const spec = { containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 'not-yet' } }, { configMapRef: { name: 'settings-not-yet' } }] }] };
    admitted(review(NONE, spec));
    admitted(review(RUNNER_B, spec));
  });

  test('a Secret Deed cannot read, or whose stamps do not verify, is refused (fail closed)', () => {
    refused(review(RUNNER_A, { imagePullSecrets: [{ name: 'slow' }], containers: [MAIN] }), 'secret-ref.unknown', /cannot tell which environment Secret slow belongs to: timed out/);
    const forged = secretOf('alpha', 'shared');
    forged.metadata.labels!['deed.dev/environment'] = 'beta';
    refused(review(RUNNER_B, { imagePullSecrets: [{ name: 'x' }], containers: [MAIN] }), 'secret-ref.unknown', /do not verify/, lookupOf({ 'secrets/shared/x': forged }));
  });

  test('each Secret is read once, and at most MAX_SECRET_LOOKUPS of them; the rest stay unknown and are refused', () => {
    const many = Array.from({ length: MAX_SECRET_LOOKUPS + 3 }, (_, i) => ({ name: `s-${i}` }));
    const body = review(RUNNER_A, { imagePullSecrets: [...many, { name: 's-0' }], containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 's-0' } }] }] });
    const secrets = lookupsNeeded(body.request, 'validate', FIXTURE_KEYS).filter((k) => k.resource === 'secrets');
    assert.equal(secrets.length, MAX_SECRET_LOOKUPS);
    assert.equal(new Set(secrets.map((k) => k.name)).size, MAX_SECRET_LOOKUPS);
  });

  test('past MAX_SECRET_LOOKUPS and MAX_CONFIGMAP_LOOKUPS, the names a pod gives are one finding of each kind, not one each', () => {
    // A pod of thousands of names cost a judgement and a message each, and every review behind it waited.
    const past = 40;
    const secrets = Array.from({ length: MAX_SECRET_LOOKUPS + past }, (_, i) => ({ secretRef: { name: `s-${i}` } }));
    const configMaps = Array.from({ length: MAX_CONFIGMAP_LOOKUPS + past }, (_, i) => ({ configMapRef: { name: `c-${i}` } }));
    const body = review(RUNNER_A, { containers: [{ ...MAIN, envFrom: [...secrets, ...configMaps].map((s) => ({ ...s, prefix: 'APP_' })) }] });
    // Every name the plan reads is alpha's own; the rest were not read, as the server's gathered lookup answers them.
    const own = secretOf('alpha', 'shared');
    const cm = secretOf('alpha', 'shared', 'ConfigMap');
    const read = (name: string) => Number(name.slice(2)) < MAX_SECRET_LOOKUPS;
    const lookup: ObjectLookup = {
      readers: NO_READERS,
      get: (resource, _namespace, name) =>
        read(name) ? { state: 'found', metadata: { labels: (resource === 'secrets' ? own : cm).metadata.labels!, annotations: (resource === 'secrets' ? own : cm).metadata.annotations! } } : { state: 'unknown', reason: 'not read before the decision' },
    };
    const d = decide('validate', body, testContext(POLICY, NOW, undefined, lookup));
    assert.equal(d.kind, 'review');
    if (d.kind !== 'review') return;
    const byRule = (rule: string) => d.verdict.findings.filter((f) => f.rule === rule);
    assert.equal(byRule('secret-ref.unknown').length, 1, d.response.response.status?.message);
    assert.equal(byRule('configmap-ref.unknown').length, 1);
    assert.match(byRule('secret-ref.unknown')[0]!.message, new RegExp(`names more than ${MAX_SECRET_LOOKUPS} Secrets, and Deed reads at most ${MAX_SECRET_LOOKUPS} for one object.*Secret s-${MAX_SECRET_LOOKUPS} the first of them`));
    assert.equal(byRule('secret-ref.unknown')[0]!.path, `spec.containers[name=main].envFrom[${MAX_SECRET_LOOKUPS}].secretRef.name`);
    assert.deepEqual(byRule('reference.unknown'), [], "the whole-pod bound is the ephemeral containers' (a CREATE's is the kinds' own)");
    assert.equal(d.response.response.allowed, false);
  });

  test('an ephemeral container that names another environment\'s Secret is refused; the Secrets the pod already named are not read again', () => {
    const old: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'obj', namespace: 'shared' }, spec: { containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 'beta-creds' } }] }] } };
    const spec = { ...old.spec, ephemeralContainers: [{ name: 'dbg', image: 'x', envFrom: [{ secretRef: { name: 'alpha-creds' } }] }] };
    const body = review(RUNNER_B, spec, { old, subResource: 'ephemeralcontainers' });
    assert.deepEqual(lookupsNeeded(body.request, 'validate', FIXTURE_KEYS), [{ resource: 'secrets', namespace: 'shared', name: 'alpha-creds', fresh: true }]);
    refused(body, 'secret-ref.cross-environment', /container "dbg" reads Secret alpha-creds, which belongs to another environment/);
  });
});

describe('a pod grown by ephemeral containers stays within what the cache keeps for one pod', () => {
  // Beta's own Secrets and ConfigMaps, every name (each write's are judged on their own).
  const betaOwns: ObjectLookup = { readers: NO_READERS, get: (resource): Lookup => ({ state: 'found', metadata: stampedMetadata(resource === 'secrets' ? 'Secret' : 'ConfigMap', 'beta', 'shared', 'b'.repeat(64)).metadata as never }) };
  const debugger_ = (round: number, secrets: number) => ({
    name: `dbg-${round}`,
    image: 'busybox',
    envFrom: Array.from({ length: secrets }, (_, i) => ({ prefix: `S${i}_`, secretRef: { name: `s-${round}-${i}`, optional: true } })),
  });
  const grown = (rounds: number[]) => ({ containers: [MAIN], ...(rounds.length > 0 ? { ephemeralContainers: rounds.map((n, round) => debugger_(round, n)) } : {}) });
  const write = (before: number[], added: number) => {
    const old: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { ...stampedMetadata('Pod', 'beta', 'shared').metadata, name: 'obj', namespace: 'shared' }, spec: grown(before) };
    return judge(review(RUNNER_B, grown([...before, added]), { old, subResource: 'ephemeralcontainers' }), betaOwns);
  };

  test('an ephemeral container that takes the pod past 256 Secrets is refused, though it adds fewer: the index would take the pod to read every name of the namespace (rev-97 F1)', () => {
    const first = write([], 200);
    assert.equal(first.allowed, true, first.status?.message);
    const past = write([200], 57);
    assert.equal(past.allowed, false);
    assert.match(past.status?.message ?? '', /\[reference\.unknown\] spec\.ephemeralContainers: the pod would name 257 Secrets, each held for it against other environments' creates in the namespace; Deed holds at most 256 for one pod: add a container that names fewer/);
    assert.equal(write([200], 56).allowed, true);
  });
});

/** Every form a pod names a ConfigMap in, one pod spec each. */
function configMapForms(name: string): Array<[string, Record<string, unknown>]> {
  return [
    ['configMap volume', { volumes: [{ name: 'scripts', configMap: { name } }], containers: [MAIN] }],
    ['projected source', { volumes: [{ name: 'v', projected: { sources: [{ secret: { name: 'shared-pull' } }, { configMap: { name } }] } }], containers: [MAIN] }],
    ['env configMapKeyRef', { containers: [{ ...MAIN, env: [{ name: 'S', valueFrom: { configMapKeyRef: { name, key: 'run.sh' } } }] }] }],
    ['envFrom configMapRef', { containers: [{ ...MAIN, envFrom: [{ configMapRef: { name } }] }] }],
    ['init container envFrom', { initContainers: [{ name: 'i', image: 'x', envFrom: [{ prefix: 'I_', configMapRef: { name, optional: true } }] }], containers: [MAIN] }],
  ];
}

describe('ConfigMap references are judged as Secret references are', () => {
  test('podConfigMaps finds every form, in every container kind, with the field path under `at`, and no Secret', () => {
    for (const [form, spec] of configMapForms('c')) assert.deepEqual(podConfigMaps(spec, 'spec').map((r) => [r.kind, r.name]), [['ConfigMap', 'c']], form);
    const ephemeral = podConfigMaps({ ephemeralContainers: [{ name: 'dbg', env: [{ name: 'S', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }] }] }, 'spec.template.spec');
    assert.deepEqual(ephemeral.map((r) => r.path), ['spec.template.spec.ephemeralContainers[name=dbg].env[name=S].valueFrom.configMapKeyRef.name']);
    assert.deepEqual(podSecrets({ volumes: [{ name: 'v', configMap: { name: 'c' } }], containers: [MAIN] }, 'spec'), []);
  });

  crossEnvironmentForms('ConfigMap', 'configmap-ref', configMapForms('alpha-script'), 'alpha-script');

  test('an unstamped ConfigMap outside a bound namespace is usable by all', () => {
    admitted(review(RUNNER_B, { volumes: [{ name: 'v', configMap: { name: 'shared-settings' } }], containers: [MAIN] }));
    admitted(review(NONE, { volumes: [{ name: 'v', configMap: { name: 'shared-settings' } }], containers: [MAIN] }));
  });

  test('a ConfigMap that does not exist is refused whoever names it in a pod that names its node, optional or not; allowed in a namespace bound to the requester', () => {
    const spec = { nodeName: 'node-1', containers: [{ ...MAIN, envFrom: [{ configMapRef: { name: 'not-yet', optional: true } }] }] };
    refused(review(NONE, spec), 'configmap-ref.absent', /ConfigMap not-yet does not exist; create it first, or a ConfigMap another environment creates under that name later would be used/);
    refused(review(RUNNER_B, spec), 'configmap-ref.absent');
    admitted(review(RUNNER_A, spec, { namespace: 'sandbox-a' }));
  });

  test('a ConfigMap Deed cannot read, or whose stamps do not verify, is refused (fail closed)', () => {
    refused(review(RUNNER_A, { volumes: [{ name: 'v', configMap: { name: 'slow-settings' } }], containers: [MAIN] }), 'configmap-ref.unknown', /cannot tell which environment ConfigMap slow-settings belongs to: timed out/);
    const forged = secretOf('alpha', 'shared', 'ConfigMap');
    forged.metadata.labels!['deed.dev/environment'] = 'beta';
    refused(review(RUNNER_B, { volumes: [{ name: 'v', configMap: { name: 'x' } }], containers: [MAIN] }), 'configmap-ref.unknown', /do not verify/, lookupOf({ 'configmaps/shared/x': forged }));
  });

  test("a Secret's stamps do not pass for a ConfigMap's: the attestation covers the kind", () => {
    refused(review(RUNNER_A, { volumes: [{ name: 'v', configMap: { name: 'x' } }], containers: [MAIN] }), 'configmap-ref.unknown', /do not verify/, lookupOf({ 'configmaps/shared/x': secretOf('alpha', 'shared') }));
  });

  test("the ServiceAccount plugin's token volume, which projects kube-root-ca.crt, and a pod that mounts the cluster's CA keep working, whether or not the ConfigMap exists yet", () => {
    const token = { volumes: [{ name: 'kube-api-access-x1', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }] } }], containers: [MAIN] };
    admitted(review(NONE, token), lookupOf({}));
    admitted(review(MANAGER, token, { namespace: 'sandbox-a' }), lookupOf({}));
    // An environment's pods lose that volume at mutation; one that mounts the cluster's CA itself keeps it.
    const ca = { volumes: [{ name: 'ca', configMap: { name: 'kube-root-ca.crt' } }], containers: [{ ...MAIN, volumeMounts: [{ name: 'ca', mountPath: '/etc/ca' }] }] };
    for (const who of [RUNNER_A, RUNNER_B]) admitted(review(who, ca), lookupOf({}));
    admitted(review(RUNNER_A, ca, { namespace: 'sandbox-a' }));
    admitted(review(NONE, { volumes: [{ name: 'v', configMap: { name: 'openshift-service-ca.crt' } }], containers: [MAIN] }), lookupOf({}));
  });

  test('the well-known ConfigMaps are a policy field: emptied, kube-root-ca.crt is judged like any other', () => {
    const spec = { nodeName: 'node-1', volumes: [{ name: 'v', configMap: { name: 'kube-root-ca.crt' } }], containers: [MAIN] };
    const strict: ConfigInput = { ...POLICY, template: { wellKnownConfigMaps: [] } };
    const r = judge(review(NONE, spec), lookupOf({}), strict);
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /\[configmap-ref\.absent\].*ConfigMap kube-root-ca\.crt does not exist/);
    assert.equal(judge(review(NONE, spec), lookupOf({}), POLICY).allowed, true);
  });

  test('a pod naming 40 ConfigMaps has all 40 looked up (the cache answers them; live reads are bounded apart)', () => {
    const forty = Array.from({ length: 40 }, (_, i) => ({ configMapRef: { name: `c-${i}` } }));
    const keys = lookupsNeeded(review(RUNNER_A, { containers: [{ ...MAIN, envFrom: forty }] }).request, 'validate', FIXTURE_KEYS);
    assert.equal(keys.filter((k) => k.resource === 'configmaps').length, 40);
  });

  test('each ConfigMap is read once, and at most MAX_CONFIGMAP_LOOKUPS of them, apart from the Secrets', () => {
    const many = Array.from({ length: MAX_CONFIGMAP_LOOKUPS + 3 }, (_, i) => ({ configMapRef: { name: `c-${i}` } }));
    const body = review(RUNNER_A, { imagePullSecrets: [{ name: 'c-0' }], containers: [{ ...MAIN, envFrom: [...many, { configMapRef: { name: 'c-0' } }] }] });
    const keys = lookupsNeeded(body.request, 'validate', FIXTURE_KEYS);
    const configMaps = keys.filter((k) => k.resource === 'configmaps');
    assert.equal(configMaps.length, MAX_CONFIGMAP_LOOKUPS);
    assert.equal(new Set(configMaps.map((k) => k.name)).size, MAX_CONFIGMAP_LOOKUPS);
    assert.deepEqual(keys.filter((k) => k.resource === 'secrets').map((k) => k.name), ['c-0']);
  });

  test("an ephemeral container that reads another environment's ConfigMap is refused; the ConfigMaps the pod already named are not read again", () => {
    const old: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'obj', namespace: 'shared' }, spec: { containers: [{ ...MAIN, envFrom: [{ configMapRef: { name: 'shared-settings' } }] }] } };
    const spec = { ...old.spec, ephemeralContainers: [{ name: 'dbg', image: 'x', envFrom: [{ configMapRef: { name: 'alpha-script' } }] }] };
    const body = review(RUNNER_B, spec, { old, subResource: 'ephemeralcontainers' });
    assert.deepEqual(lookupsNeeded(body.request, 'validate', FIXTURE_KEYS), [{ resource: 'configmaps', namespace: 'shared', name: 'alpha-script', fresh: true }]);
    refused(body, 'configmap-ref.cross-environment', /container "dbg" reads ConfigMap alpha-script, which belongs to another environment/);
  });
});

describe('absent claims, from anyone, and dry runs', () => {
  // A pod that names its node: no binding follows, which would judge what it reads again.
  const mounting = (claim: string) => ({ nodeName: 'node-1', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }], containers: [MAIN] });

  test('a requester of no environment naming a claim that does not exist in a pod that names its node is refused', () => {
    refused(review(NONE, mounting('alpha-next-ws')), 'claim.absent', /claim alpha-next-ws does not exist/);
  });

  test('a pod the scheduler binds may mount a claim that does not exist yet: its binding is judged on it again', () => {
    const { nodeName: _node, ...scheduled } = mounting('later');
    admitted(review(NONE, scheduled));
    admitted(review(RUNNER_B, scheduled));
  });

  test("in a namespace bound to the requester's environment an absent claim is allowed: no other environment can create it there", () => {
    admitted(review(RUNNER_A, mounting('later'), { namespace: 'sandbox-a' }));
    admitted(review(MANAGER, mounting('later'), { namespace: 'sandbox-a' }));
  });

  test('on a dry run an absent claim or Secret is a warning that the real create needs it first; other refusals stand', () => {
    const spec = { ...mounting('later'), imagePullSecrets: [{ name: 'later-too' }] };
    const warnings = admitted(review(RUNNER_B, spec, { dryRun: true }));
    assert.deepEqual(warnings, [
      'deed claim.absent: dry run: claim later does not exist; the real create needs it first (spec.volumes[name=data].pers...',
      'deed secret-ref.absent: dry run: Secret later-too does not exist; the real create needs it first (spec.imagePullSecr...',
    ]);
    refused(review(RUNNER_B, spec), 'claim.absent');
    refused(review(RUNNER_B, { ...spec, imagePullSecrets: [{ name: 'alpha-creds' }] }, { dryRun: true }), 'secret-ref.cross-environment');
  });
});

describe('absent ConfigMaps on a dry run', () => {
  test('on a dry run an absent ConfigMap is a warning that the real create needs it first, as a Secret is; another environment\'s stays refused', () => {
    const spec = { nodeName: 'node-1', volumes: [{ name: 'scripts', configMap: { name: 'later-script' } }], containers: [MAIN] };
    const warnings = admitted(review(RUNNER_B, spec, { dryRun: true }));
    assert.deepEqual(warnings, ['deed configmap-ref.absent: dry run: ConfigMap later-script does not exist; the real create needs it first (spec.volu...']);
    refused(review(RUNNER_B, spec), 'configmap-ref.absent');
    refused(review(RUNNER_B, { ...spec, volumes: [{ name: 'scripts', configMap: { name: 'alpha-script' } }] }, { dryRun: true }), 'configmap-ref.cross-environment');
  });
});

describe("a bound namespace's unstamped objects are its environment's", () => {
  const old: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'obj', namespace: 'sandbox-a', labels: { app: 'helper' } }, spec: { containers: [MAIN] } };
  const update = (userInfo: UserInfo, subResource?: string) => review(userInfo, { containers: [MAIN] }, { namespace: 'sandbox-a', old, ...(subResource ? { subResource } : {}) });

  test('beta and a principal of no environment may not change it, on the object or its status', () => {
    refused(update(RUNNER_B), 'guard.cross-environment', /this object belongs to another environment/);
    refused(update(RUNNER_B, 'status'), 'guard.cross-environment');
    refused(update(NONE), 'guard.unmapped', /acts for no environment/);
  });

  test('alpha\'s principal and its manager may', () => {
    admitted(update(RUNNER_A));
    admitted(update(MANAGER));
  });

  test("outside a bound namespace an unstamped object is the platform's: no environment changes it, a principal of no environment may", () => {
    refused(review(RUNNER_B, { containers: [MAIN] }, { old: { ...old, metadata: { ...old.metadata, namespace: 'shared' } } }), 'guard.shared-input', /Pod shared\/obj carries no stamps: it is the platform's/);
    admitted(review(NONE, { containers: [MAIN] }, { old: { ...old, metadata: { ...old.metadata, namespace: 'shared' } } }));
  });
});

describe('NetworkPolicies act on their own environment only', () => {
  const policy = (podSelector: Record<string, unknown>) => ({ podSelector, policyTypes: ['Ingress'] });
  const np = { resource: 'networkpolicies' } as const;

  test("the mutating webhook scopes an environment's policy to its pods, keeping the rest of the selector", () => {
    const body = review(RUNNER_B, policy({ matchLabels: { app: 'x' } }), np);
    assert.deepEqual((body.request.object.spec as Record<string, unknown>).podSelector, { matchLabels: { app: 'x', 'deed.dev/environment': 'beta' } });
    admitted(body);
  });

  test("a policy selecting another environment's pods is refused at mutation", () => {
    const body = fixture('mutate-create-networkpolicy-by-runner.json');
    body.request.userInfo = RUNNER_B;
    body.request.namespace = 'shared';
    body.request.object.metadata.namespace = 'shared';
    body.request.object.spec.podSelector = { matchLabels: { 'deed.dev/environment': 'alpha' } };
    const d = decide('mutate', body, testContext(POLICY));
    assert.ok(d.kind === 'review');
    assert.equal(d.response.response.allowed, false);
    assert.match(d.response.response.status!.message!, /\[selector\.scope\] spec\.podSelector\.matchLabels\["deed\.dev\/environment"\]: selects pods of environment "alpha"; environment "beta" selects only its own pods/);
    assert.deepEqual(decodePatch(d.response), []);
  });

  test('a policy of an environment that arrives unscoped (the mutating webhook bypassed) is refused', () => {
    const body = review(RUNNER_B, policy({}), np);
    body.request.object.spec.podSelector = {};
    refused(body, 'selector.scope', /was it bypassed/);
  });

  test('a requester of no environment has its policy scoped to pods of no environment, or scopes it away from the environments, or to one it manages', () => {
    const marked = review(NONE, policy({}), np);
    assert.deepEqual(
      (marked.request.object.spec as Record<string, unknown>).podSelector,
      { matchLabels: { 'deed.dev/no-environment': 'true' }, matchExpressions: [{ key: 'deed.dev/runner', operator: 'DoesNotExist' }] },
      "a tenant's selects no runner either",
    );
    admitted(marked);
    const unmarked = review(NONE, policy({}), np);
    unmarked.request.object.spec.podSelector = {};
    refused(unmarked, 'selector.scope', /may select pods of any environment/);
    refused(review(NONE, policy({ matchLabels: { 'deed.dev/environment': 'alpha' } }), np), 'selector.scope');
    admitted(review(NONE, policy({ matchExpressions: [{ key: 'deed.dev/environment', operator: 'DoesNotExist' }] }), np));
    admitted(review(MANAGER, policy({ matchExpressions: [{ key: 'deed.dev/environment', operator: 'In', values: ['alpha'] }] }), np));
    const shared = review(MANAGER, policy({}), np);
    assert.deepEqual(
      (shared.request.object.spec as Record<string, unknown>).podSelector,
      { matchLabels: { 'deed.dev/no-environment': 'true' }, matchExpressions: [{ key: 'deed.dev/runner', operator: 'DoesNotExist' }] },
      'a manager outside its bound namespace acts for no environment',
    );
    const bound = review(MANAGER, policy({}), { ...np, namespace: 'sandbox-a' });
    assert.deepEqual((bound.request.object.spec as Record<string, unknown>).podSelector, {}, 'in its bound namespace its default-deny selects all');
    admitted(bound);
  });

  test('on UPDATE the scope of a stamped policy is frozen; an edit that keeps it passes', () => {
    const created = review(RUNNER_B, policy({}), np).request.object as KubeObject;
    refused(review(RUNNER_B, policy({}), { ...np, old: created }), 'selector.scope');
    admitted(review(RUNNER_B, { ...(created.spec as Record<string, unknown>), policyTypes: ['Ingress', 'Egress'] }, { ...np, old: created }));
  });
});

describe('the workspace is its claim in every pod', () => {
  const WS = { name: 'workspace', persistentVolumeClaim: { claimName: 'alpha-ws' } };
  const DATA = { name: 'data', persistentVolumeClaim: { claimName: 'alpha-ws' } };
  const mainWs = { ...MAIN, volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] };

  test('mount paths are normalised before any comparison', () => {
    assert.equal(normalMountPath('/x/../workspace/.git/hooks'), '/workspace/.git/hooks');
    assert.equal(normalMountPath('//workspace//'), '/workspace');
    assert.equal(normalMountPath('workspace/./a/'), '/workspace/a');
    assert.equal(normalMountPath('/'), '/');
  });

  test('a sidecar mount that climbs back into the workspace overlaps it', () => {
    const spec = { volumes: [WS, { name: 'hooks', emptyDir: {} }], containers: [mainWs, { name: 's', image: 'x', volumeMounts: [{ name: 'hooks', mountPath: '/x/../workspace/.git/hooks' }] }] };
    refused(review(RUNNER_A, spec), 'workspace.overlap', /volume "hooks" mounted at "\/workspace\/\.git\/hooks" overlaps/);
  });

  test("an environment's ordinary build pod (kaniko's, Tekton's own /workspace, an emptyDir) overlaps no workspace: it has none", () => {
    const kaniko = { restartPolicy: 'Never', volumes: [{ name: 'build-context', emptyDir: {} }], containers: [{ name: 'kaniko', image: 'gcr.io/kaniko-project/executor:v1.23.2', volumeMounts: [{ name: 'build-context', mountPath: '/workspace' }] }] };
    admitted(review(RUNNER_A, kaniko));
    const tekton = { restartPolicy: 'Never', volumes: [{ name: 'ws', emptyDir: {} }], initContainers: [{ name: 'prepare', image: 'busybox', volumeMounts: [{ name: 'ws', mountPath: '/workspace' }] }], containers: [{ name: 'step', image: 'golang:1.23', volumeMounts: [{ name: 'ws', mountPath: '/workspace' }] }] };
    admitted(review(RUNNER_A, tekton));
    // With the main container it is a sandbox pod, whose workspace it would shadow.
    refused(review(RUNNER_A, { ...kaniko, containers: [...kaniko.containers, MAIN] }), 'workspace.overlap');
  });

  test('volumeDevices reach the workspace: in a sidecar, an init container, and the main container', () => {
    const device = { volumeDevices: [{ name: 'workspace', devicePath: '/dev/ws' }] };
    refused(review(RUNNER_A, { volumes: [WS], containers: [mainWs, { name: 's', image: 'x', ...device }] }), 'workspace.undeclared-mount');
    refused(review(RUNNER_A, { volumes: [WS], initContainers: [{ name: 'i', image: 'x', ...device }], containers: [mainWs] }), 'workspace.init-or-ephemeral');
    refused(review(RUNNER_A, { volumes: [WS], containers: [{ ...MAIN, ...device }] }), 'workspace.mount-path', /attaches the workspace as a block device/);
  });

  test('a claim marked as a workspace is held to the workspace rules in a pod that mounts it under another name', () => {
    refused(review(RUNNER_A, { volumes: [DATA], initContainers: [{ name: 'i', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/src' }] }], containers: [MAIN] }), 'workspace.init-or-ephemeral', /volume "data" on the workspace claim alpha-ws/);
    refused(review(RUNNER_A, { volumes: [DATA], containers: [MAIN, { name: 's', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/git', subPath: '.git' }] }] }), 'workspace.undeclared-mount');
    admitted(review(RUNNER_A, { volumes: [DATA], containers: [MAIN, { name: 'reader', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/workspace', readOnly: true }] }] }, { annotations: { 'deed.dev/workspace-grants': '{"reader":"ro"}' } }));
  });

  test("an environment's claim mounted as the workspace must be marked; an unmanaged one need not", () => {
    refused(review(RUNNER_A, { volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: 'alpha-data' } }], containers: [mainWs] }), 'workspace.claim-marker', /claim alpha-data is mounted as the workspace but is not marked/);
    admitted(review(RUNNER_A, { volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: 'plain' } }], containers: [mainWs] }), lookupOf({ 'persistentvolumeclaims/shared/plain': { metadata: {} } }));
  });

  test('the mark is "true" or absent at CREATE, and frozen on UPDATE', () => {
    const pvc = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } };
    refused(review(RUNNER_A, pvc, { resource: 'persistentvolumeclaims', labels: { 'deed.dev/workspace': 'yes' } }), 'workspace.claim-marker', /must be "true"/);
    const created = review(RUNNER_A, pvc, { resource: 'persistentvolumeclaims', labels: { 'deed.dev/workspace': 'true' } });
    admitted(created);
    const old = created.request.object as KubeObject;
    const unmarked = review(RUNNER_A, pvc, { resource: 'persistentvolumeclaims', old });
    unmarked.request.object = { ...old, metadata: { ...old.metadata, labels: { ...old.metadata.labels, 'deed.dev/workspace': undefined } } };
    delete unmarked.request.object.metadata.labels['deed.dev/workspace'];
    refused(unmarked, 'frozen.stamps', /deed\.dev\/workspace"\]: is frozen at "true" and cannot be removed/);
  });

  test('an ephemeral container mounting a workspace claim under another name is refused; an unread claim counts as a workspace', () => {
    const old: KubeObject = stampedPod({ volumes: [WS, DATA], containers: [mainWs] });
    const spec = { ...(old.spec as Record<string, unknown>), ephemeralContainers: [{ name: 'dbg', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/w' }] }] };
    refused(review(RUNNER_A, spec, { old, subResource: 'ephemeralcontainers' }), 'workspace.init-or-ephemeral');
    refused(review(RUNNER_A, spec, { old, subResource: 'ephemeralcontainers' }), 'workspace.init-or-ephemeral', undefined, lookupOf({ 'persistentvolumeclaims/shared/alpha-ws': 'not read' }));
  });
});

function stampedPod(spec: Record<string, unknown>): KubeObject {
  return review(RUNNER_A, spec).request.object as KubeObject;
}

describe('Secret references in workload templates', () => {
  const deployment = (secret: string): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'shared' },
    spec: { selector: {}, template: { metadata: {}, spec: { automountServiceAccountToken: false, containers: [{ ...MAIN, env: [{ name: 'T', valueFrom: { secretKeyRef: { name: secret, key: 'k' } } }] }] } } },
  });
  const reviewOf = (userInfo: UserInfo, obj: KubeObject): Review => {
    const body = fixture('validate-create-pod-by-runner.json');
    const gvk = { group: 'apps', version: 'v1', kind: 'Deployment' };
    const gvr = { group: 'apps', version: 'v1', resource: 'deployments' };
    body.request = { ...body.request, kind: gvk, requestKind: gvk, resource: gvr, requestResource: gvr, namespace: 'shared', name: 'd', userInfo, operation: 'CREATE', object: obj, oldObject: null };
    // As the API server sends it: after the mutating webhook stamped the Deployment.
    if (mutateAllows(body, obj)) body.request.object = stamped(body, obj, userInfo, POLICY);
    return body;
  };

  test("a template naming another environment's Secret is refused at the template's path, for beta and for a requester of no environment", () => {
    const body = reviewOf(RUNNER_B, deployment('alpha-creds'));
    // And the HPAs of the namespace that name it (reference.live-reader).
    assert.deepEqual(lookupsNeeded(body.request, 'validate', FIXTURE_KEYS), [
      { resource: 'secrets', namespace: 'shared', name: 'alpha-creds' },
      { resource: 'deployments', namespace: 'shared', name: 'd', readers: true },
    ]);
    refused(body, 'secret-ref.cross-environment', /spec\.template\.spec\.containers\[name=main\]\.env\[name=T\]\.valueFrom\.secretKeyRef\.name: container "main" reads Secret alpha-creds/);
    refused(reviewOf(NONE, deployment('alpha-creds')), 'secret-ref.cross-environment');
    admitted(reviewOf(RUNNER_A, deployment('alpha-creds')));
  });
});
