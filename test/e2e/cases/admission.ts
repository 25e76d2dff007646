// CREATE of each sandbox kind by a runner, read back from the API server: the stamps,
// the owner reference, the deadline and an attestation that verifies.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { annotation, attested, claim, KEYS, label, networkPolicy, PATHS, sandboxPod, secret } from '../objects.js';
import type { Suite } from '../suite.js';

export interface Tools {
  controllers: boolean;
  helm: boolean;
}

const NONCE = 'ab'.repeat(32);

export function admissionCases(suite: () => Suite): void {
  describe('a runner creates sandbox objects', () => {
    const create = async (kind: keyof typeof PATHS, body: unknown): Promise<KubeObject> => {
      const s = suite();
      const created = await s.api(s.runnerA.identity, 'POST', PATHS[kind]('sandbox-a'), body);
      assert.equal(created.status, 201, created.text);
      const name = (created.body as KubeObject).metadata.name!;
      const stored = await s.api(s.admin, 'GET', `${PATHS[kind]('sandbox-a')}/${name}`);
      assert.equal(stored.status, 200);
      return stored.body as KubeObject;
    };
    const assertStamped = (s: Suite, obj: KubeObject) => {
      assert.equal(label(obj, 'app.kubernetes.io/managed-by'), undefined, 'Deed leaves app.kubernetes.io/managed-by to the tool that applies the object');
      assert.equal(label(obj, KEYS.managed), 'true');
      assert.equal(label(obj, KEYS.environment), 'alpha');
      assert.equal(label(obj, KEYS.ownerUid), s.runnerA.uid);
      assert.equal(annotation(obj, KEYS.owner), 'sandbox-a/runner-0');
      assert.match(annotation(obj, KEYS.createNonce) ?? '', /^[0-9a-f]{64}$/);
      assert.ok(attested(s, obj), 'the stored attestation verifies under Deed key');
    };
    const ownerUids = (obj: KubeObject) => (obj.metadata.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}/${r.uid}`);

    test('a Pod is stored with the stamps, an owner reference to the runner and a deadline from its budget', async () => {
      const s = suite();
      const pod = await create('Pod', sandboxPod('sbx-pod', { annotations: { [KEYS.maxDuration]: '600' } }));
      assertStamped(s, pod);
      assert.deepEqual(ownerUids(pod), [`Pod/runner-0/${s.runnerA.uid}`]);
      assert.equal((pod.spec as { activeDeadlineSeconds?: number }).activeDeadlineSeconds, 600 + 1800);
      const expires = Date.parse(annotation(pod, KEYS.expiresAt)!);
      const created = Date.parse(String(pod.metadata.creationTimestamp));
      assert.ok(Math.abs(expires - created - 2400_000) < 10_000, `expires-at ${annotation(pod, KEYS.expiresAt)} is 2400 s after creation`);
    });

    test('a budget given as a label is refused with where it belongs, and nothing is stored', async () => {
      const s = suite();
      const pod = sandboxPod('sbx-label-budget');
      const body = { ...pod, metadata: { ...pod.metadata, labels: { [KEYS.maxDuration]: '600' } } };
      const refused = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), body);
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.text, /budget\.invalid/);
      assert.match(refused.text, /read from the annotation deed\.dev\/max-duration-seconds, not a label/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/sbx-label-budget`)).status, 404);
    });

    test('a Secret is stored with the stamps and an owner reference, and no deadline without a budget or cap', async () => {
      const s = suite();
      const obj = await create('Secret', secret('sbx-creds'));
      assertStamped(s, obj);
      assert.deepEqual(ownerUids(obj), [`Pod/runner-0/${s.runnerA.uid}`]);
      assert.equal(annotation(obj, KEYS.expiresAt), undefined);
    });

    test('a NetworkPolicy is stored with the stamps and an owner reference', async () => {
      const s = suite();
      const obj = await create('NetworkPolicy', networkPolicy('sbx-egress'));
      assertStamped(s, obj);
      assert.deepEqual(ownerUids(obj), [`Pod/runner-0/${s.runnerA.uid}`]);
    });

    test('a PersistentVolumeClaim is stored with the stamps and never an owner reference', async () => {
      const s = suite();
      const obj = await create('PersistentVolumeClaim', claim('sbx-workspace'));
      assertStamped(s, obj);
      assert.deepEqual(ownerUids(obj), []);
    });

    test('a Pod created with generateName is stamped although the mutating webhook saw no name', async () => {
      const s = suite();
      const pod = await create('Pod', sandboxPod('probe-'));
      assert.match(pod.metadata.name!, /^probe-[a-z0-9]{5}$/);
      assertStamped(s, pod);
    });

    test('a well-formed client nonce is kept, and a Secret with a budget gets expires-at', async () => {
      const s = suite();
      const obj = await create('Secret', secret('sbx-nonce', { [KEYS.createNonce]: NONCE, [KEYS.maxDuration]: '60' }));
      assert.equal(annotation(obj, KEYS.createNonce), NONCE);
      assert.ok(annotation(obj, KEYS.expiresAt));
      assert.ok(attested(s, obj));
    });

    test('an object created by the administrator, who acts for no environment, is stored unstamped', async () => {
      const s = suite();
      const created = await s.api(s.admin, 'POST', PATHS.Secret('sandbox-a'), secret('admin-secret'));
      assert.equal(created.status, 201, created.text);
      assert.equal(label(created.body as KubeObject, KEYS.managed), undefined);
    });
  });
}
