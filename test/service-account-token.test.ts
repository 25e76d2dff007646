import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { isPluginTokenVolume, pluginTokenSources, pluginTokenVolume, TOKEN_MOUNT_PATH, tokenVolumeRemoval } from '../src/policy/pod/service-account-token.js';
import { withServiceAccountToken } from '../src/review/build-review.js';
import { decodePatch, fixture, FIXTURE_POLICY, kubectlPatch, testContext, withObject, type Review } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test edits reach deep into pod specs
type Pod = KubeObject & { spec: Record<string, any> };

const TOKEN_MOUNT = (name: string) => ({ name, readOnly: true, mountPath: TOKEN_MOUNT_PATH });

function mutate(body: Review, config: ConfigInput = FIXTURE_POLICY): AdmissionResponse {
  const d = decide('mutate', body, testContext(config));
  assert.equal(d.kind, 'review');
  if (d.kind !== 'review') throw new Error('unreachable');
  return d.response.response;
}

function validate(body: Review, config: ConfigInput = FIXTURE_POLICY): AdmissionResponse {
  const d = decide('validate', body, testContext(config));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/**
 * The mutating webhook's patch applied by Kubernetes' own JSON Patch (kubectl), then a
 * second pass (reinvocation) that must change nothing, then the validating webhook on the
 * result: the object as the API server would store it.
 */
function admit(body: Review, config: ConfigInput = FIXTURE_POLICY): { out: Pod; ops: jsonpatch.Operation[]; validated: AdmissionResponse } {
  const first = mutate(body, config);
  assert.equal(first.allowed, true, first.status?.message);
  const ops = decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: first });
  const out = kubectlPatch(body.request.object, ops) as Pod;
  const again = mutate(withObject(body, out), config);
  assert.equal(again.allowed, true);
  assert.equal(again.patch, undefined, `a second pass gives no patch, got ${JSON.stringify(decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: again }))}`);
  const final = structuredClone(out);
  final.metadata.name ??= `${final.metadata.generateName ?? 'pod-'}x7k2q`;
  final.metadata.uid = '5f0e6a4c-1111-4222-8333-944455556666';
  const validated = validate({ ...body, request: { ...body.request, object: final } }, config);
  return { out, ops, validated };
}

/** A runner pod of sandbox-a as the API server hands it to the mutating webhook after the ServiceAccount plugin ran. */
function pluginPod(change: (o: Pod) => void = () => {}, sources = pluginTokenSources()): Review {
  const body = fixture('mutate-create-pod-generatename.json');
  const o = body.request.object as Pod;
  o.spec.volumes = [{ name: 'runtime', emptyDir: {} }, { name: 'kube-api-access-x7k2q', projected: { sources, defaultMode: 420 } }, { name: 'cache', emptyDir: {} }];
  o.spec.initContainers = [{ name: 'setup', image: 'x', volumeMounts: [{ name: 'cache', mountPath: '/cache' }, TOKEN_MOUNT('kube-api-access-x7k2q')] }];
  o.spec.containers = [
    { name: 'main', image: 'x', volumeMounts: [{ name: 'runtime', mountPath: '/run/deed' }, TOKEN_MOUNT('kube-api-access-x7k2q'), { name: 'cache', mountPath: '/cache' }] },
    { name: 'sidecar', image: 'x', volumeMounts: [TOKEN_MOUNT('kube-api-access-x7k2q')] },
  ];
  change(o);
  return body;
}

function mountsOf(o: Pod): string[] {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((list) =>
    ((o.spec[list] ?? []) as Array<{ name: string; volumeMounts?: Array<{ name: string; mountPath: string }> }>).flatMap((c) => (c.volumeMounts ?? []).map((m) => `${c.name}:${m.name}@${m.mountPath}`)),
  );
}

describe('a sandbox pod that leaves automountServiceAccountToken unset is stored without a token', () => {
  test('the captured pod (OpenShift shape of the plugin volume) is stored with automount false and no token volume or mount', () => {
    const body = fixture('mutate-create-pod-generatename.json');
    assert.equal(body.request.object.spec.volumes[0].name, 'kube-api-access-874bc', 'the fixture carries the plugin volume');
    const { out, validated } = admit(body);
    assert.equal(out.spec.automountServiceAccountToken, false);
    assert.deepEqual(out.spec.volumes, []);
    assert.deepEqual(mountsOf(out), []);
    assert.equal(validated.allowed, true, validated.status?.message);
  });

  test('the upstream shape is removed from init and ordinary containers; every other volume and mount stays in order', () => {
    const { out, ops, validated } = admit(pluginPod());
    assert.equal(out.spec.automountServiceAccountToken, false);
    assert.deepEqual(out.spec.volumes.map((v: { name: string }) => v.name), ['runtime', 'cache']);
    assert.deepEqual(mountsOf(out), ['setup:cache@/cache', 'main:runtime@/run/deed', 'main:cache@/cache']);
    assert.equal(validated.allowed, true, validated.status?.message);
    // Each removal follows a test of the element's name, highest index first within an array.
    const removals = ops.filter((op) => op.op === 'remove').map((op) => op.path);
    assert.deepEqual(removals, ['/spec/initContainers/0/volumeMounts/1', '/spec/containers/0/volumeMounts/1', '/spec/containers/1/volumeMounts/0', '/spec/volumes/1']);
    for (const path of removals) assert.ok(ops.some((op) => op.op === 'test' && op.path === `${path}/name`), `a test guards ${path}`);
  });

  test('the patch fails rather than remove the wrong element when the pod is not the one reviewed', () => {
    const body = pluginPod();
    const ops = tokenVolumeRemoval(body.request.object.spec).ops;
    const other = structuredClone(body.request.object) as Pod;
    other.spec.volumes.shift(); // the token volume moves from index 1 to 0
    assert.throws(() => jsonpatch.applyPatch(other, ops, true, false), /Test operation failed/);
  });

  test('two token volumes (the plugin reuses none of them) are both removed, highest index first', () => {
    const body = pluginPod((o) => {
      o.spec.volumes.push({ name: 'kube-api-access-bcdfg', projected: { sources: pluginTokenSources() } });
      o.spec.containers[1].volumeMounts.push({ name: 'kube-api-access-bcdfg', mountPath: '/other', readOnly: true });
    });
    const { out } = admit(body);
    assert.deepEqual(out.spec.volumes.map((v: { name: string }) => v.name), ['runtime', 'cache']);
    assert.deepEqual(mountsOf(out), ['setup:cache@/cache', 'main:runtime@/run/deed', 'main:cache@/cache']);
  });

  test('a pod that sets automountServiceAccountToken false is left as it is', () => {
    const body = pluginPod((o) => {
      o.spec.automountServiceAccountToken = false;
      o.spec.volumes.splice(1, 1);
      for (const c of [...o.spec.initContainers, ...o.spec.containers]) c.volumeMounts = c.volumeMounts.filter((m: { name: string }) => m.name !== 'kube-api-access-x7k2q');
    });
    const { ops } = admit(body);
    assert.ok(!ops.some((op) => op.path.startsWith('/spec/') && op.path !== '/spec/activeDeadlineSeconds'), JSON.stringify(ops));
  });

  test('a pod that sets automountServiceAccountToken true keeps it, and the validating side refuses it', () => {
    const body = pluginPod((o) => (o.spec.automountServiceAccountToken = true));
    const { out, validated } = admit(body);
    assert.equal(out.spec.automountServiceAccountToken, true);
    assert.ok(out.spec.volumes.some((v: { name: string }) => v.name === 'kube-api-access-x7k2q'), 'the mutating side does not rewrite a client value');
    assert.equal(validated.allowed, false);
    assert.match(validated.status!.message, /\[template\.service-account-token\] spec\.automountServiceAccountToken: is platform-owned: expected false, got true/);
  });

  test('a policy that owns automount as true keeps the plugin volume, and the validating side allows it', () => {
    const config: ConfigInput = { ...FIXTURE_POLICY, template: { automountServiceAccountToken: true } };
    const { out, validated } = admit(pluginPod(), config);
    assert.equal(out.spec.automountServiceAccountToken, undefined);
    assert.ok(out.spec.volumes.some((v: { name: string }) => v.name === 'kube-api-access-x7k2q'));
    assert.equal(validated.allowed, true, validated.status?.message);
  });

  test('a pod created by a requester that acts for no environment is not a sandbox pod: its token stays, only the mark of no environment is added', () => {
    const body = fixture('mutate-create-pod-by-admin.json');
    const patch = mutate(body).patch;
    assert.deepEqual(JSON.parse(Buffer.from(patch ?? '', 'base64').toString('utf8')), [{ op: 'add', path: '/metadata/labels/deed.dev~1no-environment', value: 'true' }]);
  });
});

describe("only the ServiceAccount plugin's exact volume is the plugin's", () => {
  const upstream = pluginTokenVolume('kube-api-access-x7k2q');
  const variants: Array<[string, Record<string, unknown>]> = [
    ['a name with a vowel in the suffix', { ...upstream, name: 'kube-api-access-abcde' }],
    ['a name with a longer suffix', { ...upstream, name: 'kube-api-access-x7k2qq' }],
    ['a name without the suffix', { ...upstream, name: 'kube-api-access' }],
    ['a token lifetime of its own', { name: 'kube-api-access-x7k2q', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 600, path: 'token' } }, ...pluginTokenSources().slice(1)] } }],
    ['an audience', { name: 'kube-api-access-x7k2q', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token', audience: 'vault' } }, ...pluginTokenSources().slice(1)] } }],
    ['a source fewer', { name: 'kube-api-access-x7k2q', projected: { sources: pluginTokenSources().slice(0, 2) } }],
    ['a source more', { name: 'kube-api-access-x7k2q', projected: { sources: [...pluginTokenSources(), { secret: { name: 'mine' } }] } }],
    ['the sources in another order', { name: 'kube-api-access-x7k2q', projected: { sources: pluginTokenSources().reverse() } }],
    ['another defaultMode', { name: 'kube-api-access-x7k2q', projected: { sources: pluginTokenSources(), defaultMode: 256 } }],
    ['a second volume source', { ...upstream, emptyDir: {} }],
  ];
  for (const [name, volume] of variants)
    test(`a volume with ${name} is the client's own, and the mutating side leaves it`, () => {
      assert.equal(isPluginTokenVolume(volume), false);
      const body = pluginPod((o) => {
        o.spec.volumes[1] = volume;
        o.spec.volumes.splice(2, 1); // no cache: keep the variant the only volume mounted at the token path besides runtime
        for (const c of [...o.spec.initContainers, ...o.spec.containers]) c.volumeMounts = c.volumeMounts.filter((m: { name: string }) => m.name !== 'cache');
        for (const c of [...o.spec.initContainers, ...o.spec.containers]) for (const m of c.volumeMounts) if (m.mountPath === TOKEN_MOUNT_PATH) m.name = volume.name;
      });
      const ops = decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: mutate(body) });
      assert.ok(!ops.some((op) => op.op === 'remove'), JSON.stringify(ops));
      assert.ok(ops.some((op) => op.path === '/spec/automountServiceAccountToken' && 'value' in op && op.value === false), 'the field is still set');
    });

  test('the upstream shape, with or without the defaulted mode, and the OpenShift shape are the plugin\'s', () => {
    assert.equal(isPluginTokenVolume(upstream), true);
    assert.equal(isPluginTokenVolume({ name: 'kube-api-access-x7k2q', projected: { sources: pluginTokenSources() } }), true);
    assert.equal(isPluginTokenVolume(fixture('mutate-create-pod-generatename.json').request.object.spec.volumes[0]), true);
  });
});

describe('volumes that hand a container a service-account token are refused', () => {
  function createdWith(change: (o: Pod) => void): Review {
    const body = fixture('mutate-create-pod-by-runner.json');
    change(body.request.object as Pod);
    return body;
  }

  test('a hand-written projected token for the API server is denied, naming the volume and the containers', () => {
    const { validated } = admit(
      createdWith((o) => {
        o.spec.volumes.push({ name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } });
        o.spec.containers[0].volumeMounts.push({ name: 'tok', mountPath: '/var/run/tok' });
        o.spec.containers[1].volumeMounts.push({ name: 'tok', mountPath: '/var/run/tok' });
      }),
    );
    assert.equal(validated.allowed, false);
    assert.match(
      validated.status!.message,
      /\[template\.service-account-token\] spec\.volumes\[name=tok\]\.projected\.sources\.serviceAccountToken: volume "tok" projects a service-account token for the API server \(no audience\) into containers main, indexer/,
    );
  });

  test('a token for an audience the policy does not list is denied; one it lists is allowed', () => {
    const body = createdWith((o) => {
      o.spec.volumes.push({ name: 'vault', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'vault.example' } }] } });
      o.spec.containers[1].volumeMounts.push({ name: 'vault', mountPath: '/var/run/vault' });
    });
    assert.match(admit(body).validated.status?.message ?? '', /for audience "vault\.example", not in template\.tokenAudiences into containers indexer/);
    const allowed = admit(body, { ...FIXTURE_POLICY, template: { tokenAudiences: ['vault.example'] } }).validated;
    assert.equal(allowed.allowed, true, allowed.status?.message);
  });

  test("a pod certificate from the API server's client signer (a client credential of the pod's service account) is denied; one from another signer is allowed (rev-92)", () => {
    const body = (signerName: string) =>
      createdWith((o) => {
        o.spec.volumes.push({ name: 'cert', projected: { sources: [{ podCertificate: { signerName, keyType: 'ED25519', credentialBundlePath: 'creds.pem' } }] } });
        o.spec.containers[1].volumeMounts.push({ name: 'cert', mountPath: '/var/run/cert' });
      });
    const { validated } = admit(body('kubernetes.io/kube-apiserver-client-pod'));
    assert.equal(validated.allowed, false);
    assert.match(
      validated.status!.message,
      /\[template\.service-account-token\] spec\.volumes\[name=cert\]\.projected\.sources\.podCertificate: volume "cert" projects a certificate from signer kubernetes\.io\/kube-apiserver-client-pod, a client credential of the pod's service account for the API server, into containers indexer/,
    );
    const mesh = admit(body('mesh.example.com/workload')).validated;
    assert.equal(mesh.allowed, true, mesh.status?.message);
  });

  test('a platform that really wants a token in a sidecar can relax the rule to warn', () => {
    const body = createdWith((o) => {
      o.spec.volumes.push({ name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } });
      o.spec.containers[1].volumeMounts.push({ name: 'tok', mountPath: '/var/run/tok' });
    });
    const { validated } = admit(body, { ...FIXTURE_POLICY, rules: { 'template.service-account-token': 'warn' } });
    assert.equal(validated.allowed, true);
    assert.ok(validated.warnings?.some((w) => w.startsWith('deed template.service-account-token: volume "tok" projects')), JSON.stringify(validated.warnings));
  });

  test('the plugin volume put back by a later mutator is denied at validation', () => {
    const body = fixture('validate-create-pod-by-runner.json');
    const d = decide('mutate', withObject(body, body.request.object, { operation: 'CREATE' }), testContext());
    assert.ok(d.kind === 'review' && d.response.response.allowed);
    const out = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch(d.response)).newDocument as Pod;
    out.spec.volumes.push(pluginTokenVolume('kube-api-access-x7k2q'));
    out.spec.containers[0].volumeMounts.push(TOKEN_MOUNT('kube-api-access-x7k2q'));
    const validated = validate(withObject(body, out));
    assert.equal(validated.allowed, false);
    assert.match(validated.status!.message, /volume "kube-api-access-x7k2q" projects a service-account token for the API server \(no audience\) into containers main/);
  });
});

describe('deed review simulates the ServiceAccount plugin, so the dry run shows what Deed removes', () => {
  test("the captured pod, as its client sent it, is given the plugin's volume and mount again (up to the random suffix and OpenShift's extra source)", () => {
    const captured = fixture('mutate-create-pod-generatename.json').request.object as Pod;
    const sent = structuredClone(captured);
    sent.spec.volumes = [];
    sent.spec.containers[0].volumeMounts = [];
    const rebuilt = withServiceAccountToken(sent, testContext().randomBytes) as Pod;
    const name = rebuilt.spec.volumes[0].name as string;
    assert.match(name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const expected = structuredClone(captured);
    expected.spec.volumes[0].name = name;
    expected.spec.volumes[0].projected.sources.pop();
    expected.spec.containers[0].volumeMounts[0].name = name;
    assert.deepEqual(rebuilt, expected);
  });

  test('a pod with the field set, a volume already named kube-api-access-*, or a mount at the token path is treated as the plugin does', () => {
    const base = fixture('mutate-create-pod-by-runner.json').request.object as Pod;
    assert.deepEqual(withServiceAccountToken(base, testContext().randomBytes), base, 'automount false: nothing added');
    const unset = structuredClone(base);
    delete unset.spec.automountServiceAccountToken;
    unset.spec.volumes.push({ name: 'kube-api-access-mine', emptyDir: {} });
    unset.spec.containers[1].volumeMounts.push({ name: 'runtime', mountPath: TOKEN_MOUNT_PATH });
    const out = withServiceAccountToken(unset, testContext().randomBytes) as Pod;
    assert.equal(out.spec.volumes.length, unset.spec.volumes.length, 'the existing kube-api-access-* volume is reused');
    assert.deepEqual(out.spec.containers[0].volumeMounts.at(-1), TOKEN_MOUNT('kube-api-access-mine'));
    assert.deepEqual(out.spec.containers[1].volumeMounts, unset.spec.containers[1].volumeMounts, 'a container with something at the token path is left');
  });
});

describe('a sandbox Secret cannot be made into a legacy service-account token', () => {
  function secretBody(type: string | undefined): Review {
    const body = fixture('validate-create-secret-by-runner.json');
    const obj = body.request.object as KubeObject;
    if (type !== undefined) obj.type = type;
    obj.metadata.annotations = { ...obj.metadata.annotations, 'kubernetes.io/service-account.name': 'runner' };
    const { uid: _uid, ...metadata } = obj.metadata;
    const d = decide('mutate', withObject(body, { ...obj, metadata }, { operation: 'CREATE' }), testContext());
    assert.ok(d.kind === 'review' && d.response.response.allowed);
    body.request.object = jsonpatch.applyPatch(structuredClone(obj), decodePatch(d.response)).newDocument;
    return body;
  }

  test('a Secret of type kubernetes.io/service-account-token is refused, naming the service account', () => {
    const r = validate(secretBody('kubernetes.io/service-account-token'));
    assert.equal(r.allowed, false);
    assert.match(r.status!.message, /\[secret\.service-account-token\] type: a Secret of type kubernetes\.io\/service-account-token would receive a non-expiring token of service account "runner"/);
  });

  test('an Opaque Secret is fine', () => {
    const r = validate(secretBody(undefined));
    assert.equal(r.allowed, true, r.status?.message);
  });
});
