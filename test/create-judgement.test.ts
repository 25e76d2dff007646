// One webhook call per create (src/policy/create-judgement.ts): the install's mutating
// webhook (`admit`) stamps a stamped object's, a workload's or a default-row kind's CREATE and judges the stamped
// result with the validating side's rules, lookups and messages; on reinvocation it keeps
// its own stamps and judges the object as later mutators left it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { AdmissionReviewResponse, KubeObject } from '../src/admission/types.js';
import { planLookups } from '../src/policy/lookup.js';
import { verifyObject } from '../src/policy/stamps/key-ring.js';
import type { ConfigInput } from '../src/config/schema.js';
import { decodePatch, fixture, FIXTURE_KEYS, FIXTURE_POLICY, kubectlPatch, testContext, TEST_RING, withObject, type Review } from './helpers.js';

function answer(webhook: Webhook, body: Review): AdmissionReviewResponse {
  const decision = decide(webhook, body, testContext());
  assert.equal(decision.kind, 'review');
  return decision.response;
}

/** The two-call chain of older installs: mutate, its patch applied, then validate on the result. */
function twoCalls(body: Review): { mutated: AdmissionReviewResponse; validated?: AdmissionReviewResponse } {
  const mutated = answer('mutate', body);
  if (!mutated.response.allowed) return { mutated };
  return { mutated, validated: answer('validate', withObject(body, kubectlPatch(body.request.object, decodePatch(mutated)))) };
}

function pod(change: (o: KubeObject) => void = () => {}, base = 'mutate-create-pod-by-runner.json'): Review {
  const body = fixture(base);
  change(body.request.object);
  return body;
}

const sidecar = (o: KubeObject) => {
  (o.spec!.containers as unknown[]).push({ name: 'snoop', image: 'registry.example/snoop:1', volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] });
};

describe('one call per create', () => {
  test('a good pod gets the same patch from admit as from the two-call chain, and the chain would allow it', () => {
    const body = pod();
    const given = structuredClone(body.request.object);
    const one = answer('admit', body);
    assert.deepEqual(body.request.object, given, 'the request\'s object is left as it came');
    const { mutated, validated } = twoCalls(body);
    assert.equal(one.response.allowed, true, one.response.status?.message);
    assert.equal(validated?.response.allowed, true, validated?.response.status?.message);
    assert.deepEqual(decodePatch(one), decodePatch(mutated));
    assert.equal(verifyObject(TEST_RING, kubectlPatch(body.request.object, decodePatch(one)), FIXTURE_KEYS, 'Pod', 'sandbox-a').ok, true);
  });

  for (const [what, change] of [
    ['a restartPolicy the platform owns', (o: KubeObject) => void (o.spec!.restartPolicy = 'Never')],
    ['a sidecar that mounts the workspace without a grant', sidecar],
  ] as const) {
    test(`${what} is refused by admit with the rule id and message the validating webhook gives after mutate allowed it`, () => {
      const body = pod(change);
      const { mutated, validated } = twoCalls(body);
      assert.equal(mutated.response.allowed, true, 'the stamping alone allows it');
      assert.equal(validated?.response.allowed, false);
      const one = answer('admit', body);
      assert.equal(one.response.allowed, false);
      assert.equal(one.response.uid, body.request.uid);
      assert.equal(one.response.patch, undefined, 'a denial carries no patch');
      assert.equal(one.response.status?.message, validated?.response.status?.message);
      assert.equal(one.response.status?.code, 403);
    });
  }

  test('a claim restoring a snapshot named only in dataSource is refused naming spec.dataSourceRef, as the API server fills it in before the validating webhook', () => {
    const body = fixture('mutate-create-pvc-by-runner.json');
    body.request.object.spec = { ...body.request.object.spec, dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap-unknown' } };
    const stored = structuredClone(body.request.object);
    stored.spec!.dataSourceRef = { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap-unknown' };
    const { mutated } = twoCalls(body);
    const validated = answer('validate', withObject(body, kubectlPatch(stored, decodePatch(mutated))));
    const one = answer('admit', body);
    assert.equal(one.response.allowed, false);
    assert.match(one.response.status?.message ?? '', /spec\.dataSourceRef/);
    assert.equal(one.response.status?.message, validated.response.status?.message);
  });

  test('a dry run is refused by admit with the message of the real create', () => {
    const body = pod((o) => void (o.spec!.restartPolicy = 'Never'));
    const dry = answer('admit', withObject(body, body.request.object, { dryRun: true }));
    const real = answer('admit', body);
    assert.equal(dry.response.allowed, false);
    assert.equal(dry.response.status?.message, real.response.status?.message);
  });

  test('what the stamping refuses (a forged attestation) is refused by admit as by mutate, before any judgement', () => {
    const body = pod((o) => void (o.metadata.annotations!['deed.dev/attestation'] = `v1:${'A'.repeat(43)}`));
    const one = answer('admit', body);
    assert.equal(one.response.allowed, false);
    assert.equal(one.response.status?.message, answer('mutate', body).response.status?.message);
    assert.match(one.response.status?.message ?? '', /\[attestation\.forged\]/);
  });

  test('the warnings of both judgements reach the client once each', () => {
    const body = pod((o) => {
      o.spec!.activeDeadlineSeconds = 999999;
      (o.spec!.volumes as unknown[]).push({ name: 'host', hostPath: { path: '/var/log' } });
    });
    const one = answer('admit', body);
    const { mutated, validated } = twoCalls(body);
    assert.equal(one.response.allowed, true, one.response.status?.message);
    const both = [...new Set([...(mutated.response.warnings ?? []), ...(validated?.response.warnings ?? [])])];
    assert.ok(both.some((w) => w.includes('lowered spec.activeDeadlineSeconds')) && both.some((w) => w.includes('template.host-access')), JSON.stringify(both));
    assert.deepEqual(one.response.warnings, both);
  });
});

describe("one call per create of a default-row kind (a Service)", () => {
  const BOUND: ConfigInput = { ...FIXTURE_POLICY, environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'] }] };
  const on = (webhook: Webhook, body: Review, config: ConfigInput = BOUND) => {
    const decision = decide(webhook, body, testContext(config));
    assert.equal(decision.kind, 'review');
    return decision.response;
  };
  /** A Service CREATE as the pod fixture's requester made it. */
  function service(base: string, labels: Record<string, string> = {}): Review {
    const template = fixture(base);
    const object: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'sandbox-a', labels }, spec: { ports: [{ port: 80 }] } };
    return withObject(template, object, { kind: { group: '', version: 'v1', kind: 'Service' }, resource: { group: '', version: 'v1', resource: 'services' }, requestKind: { group: '', version: 'v1', kind: 'Service' }, requestResource: { group: '', version: 'v1', resource: 'services' }, name: 'web' });
  }
  const chain = (body: Review, config: ConfigInput = BOUND) => {
    const mutated = on('mutate', body, config);
    return mutated.response.allowed ? on('validate', withObject(body, kubectlPatch(body.request.object, decodePatch(mutated))), config) : mutated;
  };

  test("alpha's runner's Service gets the two-call chain's stamps from admit, and they verify", () => {
    const body = service('mutate-create-pod-by-runner.json');
    const one = on('admit', body);
    assert.equal(one.response.allowed, true, one.response.status?.message);
    assert.deepEqual(decodePatch(one), decodePatch(on('mutate', body)));
    assert.equal(chain(body).response.allowed, true);
    assert.equal(verifyObject(TEST_RING, kubectlPatch(body.request.object, decodePatch(one)), FIXTURE_KEYS, 'Service', 'sandbox-a').ok, true);
  });

  test("a Service naming a run lease Deed cannot find: admit plans the Lease's read and refuses as the validating webhook did (run-lease.*)", () => {
    const body = service('mutate-create-pod-by-runner.json');
    body.request.object.metadata.annotations = { [FIXTURE_KEYS.runLease]: 'run-7' };
    // And what names the Service (reference.live-reader): EndpointSlices, Endpoints, Ingresses.
    assert.deepEqual(planLookups(body, 'admit', FIXTURE_KEYS).lookups, [{ resource: 'leases', namespace: 'sandbox-a', name: 'run-7' }, { resource: 'services', namespace: 'sandbox-a', name: 'web', readers: true }]);
    assert.deepEqual(planLookups(body, 'mutate', FIXTURE_KEYS).lookups, []);
    const validated = chain(body);
    assert.equal(validated.response.allowed, false);
    assert.match(validated.response.status?.message ?? '', /\[run-lease\.unknown\]/);
    const one = on('admit', body);
    assert.equal(one.response.allowed, false);
    assert.equal(one.response.status?.message, validated.response.status?.message);
  });

  for (const [what, base, labels, rule, config] of [
    ["beta's runner, in the namespace bound to alpha", 'mutate-create-pod-by-other-namespace-runner.json', {}, 'guard.namespace-binding', BOUND],
    ["a principal of no environment, with alpha's environment label (no namespace bound)", 'mutate-create-pod-by-admin.json', { 'deed.dev/environment': 'alpha' }, 'stamp.forged', FIXTURE_POLICY],
  ] as const) {
    test(`${what}: admit refuses it with the rule the validating webhook gave at CREATE (${rule})`, () => {
      const body = service(base, labels);
      const validated = chain(body, config);
      assert.equal(validated.response.allowed, false);
      assert.match(validated.response.status?.message ?? '', new RegExp(`\\[${rule.replace('.', '\\.')}\\]`));
      const one = on('admit', body, config);
      assert.equal(one.response.allowed, false);
      assert.equal(one.response.status?.message, validated.response.status?.message);
    });
  }
});

describe('reinvocation of the install\'s mutating webhook', () => {
  function firstPass(body: Review): KubeObject {
    const one = answer('admit', body);
    assert.equal(one.response.allowed, true, one.response.status?.message);
    return kubectlPatch(body.request.object, decodePatch(one));
  }

  test('called again with its own stamps and a harmless change by a later mutator, it allows with no new stamps', () => {
    const body = pod();
    const stamped = firstPass(body);
    stamped.metadata.annotations!['mesh.example/injected'] = 'true';
    const again = answer('admit', withObject(body, stamped));
    assert.equal(again.response.allowed, true, again.response.status?.message);
    assert.equal(again.response.patch, undefined, `no patch on reinvocation, got ${JSON.stringify(decodePatch(again))}`);
  });

  test('called again after a later mutator added what the judgement forbids, it refuses with that rule', () => {
    const body = pod();
    const stamped = firstPass(body);
    sidecar(stamped);
    const again = answer('admit', withObject(body, stamped));
    assert.equal(again.response.allowed, false);
    assert.match(again.response.status?.message ?? '', /\[workspace\.undeclared-mount\]/);
  });

  test('called again after a later mutator changed a stamp, it refuses the stamps as no longer its own', () => {
    const body = pod();
    const stamped = firstPass(body);
    stamped.metadata.labels!['deed.dev/environment'] = 'beta';
    const again = answer('admit', withObject(body, stamped));
    assert.equal(again.response.allowed, false);
    assert.match(again.response.status?.message ?? '', /\[attestation\.forged\]/);
  });
});

describe('what admit leaves to the validating webhook', () => {
  test('an eviction (a CREATE of a subresource) is not judged by admit', () => {
    const body = fixture('validate-delete-pod-by-runner.json');
    const eviction = withObject(body, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'sbx-1', namespace: 'sandbox-a' } }, {
      operation: 'CREATE',
      subResource: 'eviction',
      kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
      oldObject: null,
    });
    assert.equal(answer('admit', eviction).response.allowed, true);
    assert.equal(answer('validate', eviction).response.allowed, false, 'the validating webhook judges it (the named pod is unknown here)');
  });

  test('an UPDATE that changes a stamp is not judged by admit (the validating webhook refuses it)', () => {
    const body = pod();
    const stamped = kubectlPatch(body.request.object, decodePatch(answer('admit', body)));
    const changed = structuredClone(stamped);
    changed.metadata.labels!['deed.dev/environment'] = 'beta';
    const update = withObject(body, changed, { operation: 'UPDATE', oldObject: stamped });
    assert.match(answer('validate', update).response.status?.message ?? '', /\[frozen\.stamps\]/);
    assert.equal(answer('admit', update).response.allowed, true);
  });
});

describe('the read plan of admit', () => {
  test('at a pod CREATE it names what the validating webhook would read; mutate names none of it', () => {
    const body = pod((o) => {
      (o.spec!.volumes as unknown[]).push({ name: 'creds', secret: { secretName: 'creds' } });
    });
    const validate = planLookups(body, 'validate', FIXTURE_KEYS).lookups;
    assert.ok(validate.some((k) => k.resource === 'secrets') && validate.some((k) => k.resource === 'persistentvolumeclaims'), JSON.stringify(validate));
    assert.deepEqual(planLookups(body, 'admit', FIXTURE_KEYS).lookups, validate);
    assert.deepEqual(planLookups(body, 'mutate', FIXTURE_KEYS).lookups, []);
  });

  test('at an UPDATE it names what mutate names, not the validating webhook\'s reads', () => {
    const body = fixture('validate-update-pod-ephemeralcontainers.json');
    assert.ok(planLookups(body, 'validate', FIXTURE_KEYS).lookups.length > 0);
    assert.deepEqual(planLookups(body, 'admit', FIXTURE_KEYS).lookups, planLookups(body, 'mutate', FIXTURE_KEYS).lookups);
  });
});
