// What a pod's spec names is worked out once per review (issue 37): the judged pod's names
// (after Deed's patch took the service-account token volume out) are derived from the
// arrived pod's, and must be exactly what walking the judged pod gives; where they cannot be
// told apart by path, or anything else a name is read from changed, they are walked again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { namesAfter, podNames } from '../src/policy/pod/pod-names.js';
import { pluginTokenVolume, TOKEN_MOUNT_PATH } from '../src/policy/pod/service-account-token.js';
import type { Rec } from '../src/policy/unstructured.js';

const TOKEN = 'kube-api-access-x7k2q';

function arrived(extraVolume?: Rec): Rec {
  return {
    volumes: [
      { name: 'creds', secret: { secretName: 'api-key' } },
      pluginTokenVolume(TOKEN),
      { name: 'cfg', configMap: { name: 'settings' } },
      { name: 'ws', persistentVolumeClaim: { claimName: 'sbx-1-workspace' } },
      { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'seed' } } } } },
      ...(extraVolume ? [extraVolume] : []),
    ],
    containers: [
      { name: 'main', image: 'x', envFrom: [{ configMapRef: { name: 'env' } }], volumeMounts: [{ name: 'ws', mountPath: '/workspace' }, { name: TOKEN, mountPath: TOKEN_MOUNT_PATH, readOnly: true }] },
      { name: 'side', image: 'x', env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 'side-key', key: 'k' } } }] },
    ],
    imagePullSecrets: [{ name: 'pull' }],
  };
}

/** The spec as Deed's patch leaves it (create-judgement.ts copies only along the paths it changes). */
function withoutToken(spec: Rec): Rec {
  const [main, side] = spec.containers as Rec[];
  return {
    ...spec,
    automountServiceAccountToken: false,
    volumes: (spec.volumes as Rec[]).filter((v) => v.name !== TOKEN),
    containers: [{ ...main, volumeMounts: (main!.volumeMounts as Rec[]).filter((m) => m.name !== TOKEN) }, side],
  };
}

test('the names of the pod without its token volume are derived from the arrived pod\'s, exactly as walked', () => {
  const before = arrived();
  const after = withoutToken(before);
  const derived = namesAfter(before, podNames(before), after);
  assert.deepEqual(derived, podNames(after));
  assert.ok(podNames(before).references.some((r) => r.name === 'kube-root-ca.crt'));
  assert.ok(!derived!.references.some((r) => r.name === 'kube-root-ca.crt'));
});

test('the same spec keeps its names', () => {
  const spec = arrived();
  const names = podNames(spec);
  assert.equal(namesAfter(spec, names, { ...spec, activeDeadlineSeconds: 60 }), names);
});

test('a volume whose path begins like the taken-out one\'s: walked again', () => {
  const before = arrived({ name: `${TOKEN}].x`, configMap: { name: 'hidden' } });
  assert.equal(namesAfter(before, podNames(before), withoutToken(before)), undefined);
});

test('anything else a name is read from changed: walked again', () => {
  const before = arrived();
  const after = withoutToken(before);
  const [main, side] = after.containers as Rec[];
  assert.equal(namesAfter(before, podNames(before), { ...after, containers: [{ ...main, envFrom: [] }, side] }), undefined);
  assert.equal(namesAfter(before, podNames(before), { ...after, volumes: [...(after.volumes as Rec[]), { name: 'new', secret: { secretName: 'x' } }] }), undefined);
  assert.equal(namesAfter(before, podNames(before), { ...after, volumes: (after.volumes as Rec[]).map((v) => ({ ...v })) }), undefined);
  assert.equal(namesAfter(before, podNames(before), { ...after, imagePullSecrets: [] }), undefined);
});
