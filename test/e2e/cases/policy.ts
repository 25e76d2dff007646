// Dry runs, template and workspace denials, frozen stamps on every way an UPDATE is
// made (kubectl apply, patch, server-side apply), and guarded writes across environments.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import type { KubeObject } from '../../../src/admission/types.js';
import { annotation, claim, KEYS, label, PATHS, sandboxPod, secret, workspaceClaim } from '../objects.js';
import type { Suite } from '../suite.js';

export function policyCases(suite: () => Suite): void {
  describe('dry runs', () => {
    test('kubectl apply --dry-run=server shows the stamped object and stores nothing', async () => {
      const s = suite();
      const run = await s.kubectl(s.runnerA.identity, ['apply', '--dry-run=server', '-o', 'json', '-n', 'sandbox-a', '-f', '-'], JSON.stringify(secret('dry-secret')));
      assert.equal(run.code, 0, run.stderr);
      const shown = JSON.parse(run.stdout) as KubeObject;
      assert.equal(label(shown, KEYS.environment), 'alpha');
      assert.ok(annotation(shown, KEYS.attestation)?.startsWith('v1:'));
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-a')}/dry-secret`)).status, 404);
    });

    test('an API create with dryRun=All gets the same decision as a real one and stores nothing', async () => {
      const s = suite();
      const dry = await s.api(s.runnerA.identity, 'POST', `${PATHS.Pod('sandbox-a')}?dryRun=All`, sandboxPod('dry-pod'));
      assert.equal(dry.status, 201, dry.text);
      assert.equal(label(dry.body as KubeObject, KEYS.ownerUid), s.runnerA.uid);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/dry-pod`)).status, 404);
      const bad = sandboxPod('dry-bad', { spec: { restartPolicy: 'Never' } });
      const [dryDenied, realDenied] = await Promise.all([
        s.api(s.runnerA.identity, 'POST', `${PATHS.Pod('sandbox-a')}?dryRun=All`, bad),
        s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), bad),
      ]);
      assert.equal(dryDenied.status, 403);
      assert.equal(realDenied.status, 403);
      assert.equal(dryDenied.body.message, realDenied.body.message);
    });

    test('a denial reaches kubectl with the webhook name, the rule id and the field path', async () => {
      const s = suite();
      const pod = sandboxPod('dry-denied', { spec: { restartPolicy: 'Never' } });
      const run = await s.kubectl(s.runnerA.identity, ['apply', '--dry-run=server', '-n', 'sandbox-a', '-f', '-'], stringify(pod));
      assert.notEqual(run.code, 0);
      // The CREATE is judged whole by the mutating webhook (one call per create).
      assert.match(run.stderr, /admission webhook "mutate\.deed\.dev" denied the request/);
      assert.match(run.stderr, /\[template\.restart-policy\] spec\.restartPolicy/);
    });
  });

  describe('template and workspace denials', () => {
    before(async () => {
      // The workspace claim exists before the pods that mount it (claim.absent).
      const s = suite();
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim('sandbox-a'), workspaceClaim('sbx-ws'));
      assert.equal(answer.status, 201, answer.text);
    });

    test('a sidecar that mounts the workspace without a grant is refused, naming the container', async () => {
      const s = suite();
      const pod = sandboxPod('ws-undeclared', {
        spec: {
          volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: 'sbx-ws' } }],
          containers: [
            { name: 'main', image: 'registry.example/agent:1', volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] },
            { name: 'indexer', image: 'registry.example/indexer:1', volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] },
          ],
        },
      });
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[workspace\.undeclared-mount\] spec\.containers\[name=indexer\]/);
    });

    test('a granted read-only sidecar mount at /workspace is admitted', async () => {
      const s = suite();
      const pod = sandboxPod('ws-granted', {
        annotations: { [KEYS.workspaceGrants]: '{"indexer":"ro"}' },
        spec: {
          volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: 'sbx-ws' } }],
          containers: [
            { name: 'main', image: 'registry.example/agent:1', volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] },
            { name: 'indexer', image: 'registry.example/indexer:1', volumeMounts: [{ name: 'workspace', mountPath: '/workspace', readOnly: true }] },
          ],
        },
      });
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod);
      assert.equal(answer.status, 201, answer.text);
    });

    test('an init container that mounts the workspace is refused', async () => {
      const s = suite();
      const pod = sandboxPod('ws-init', {
        spec: {
          volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: 'sbx-ws' } }],
          initContainers: [{ name: 'setup', image: 'registry.example/setup:1', volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] }],
        },
      });
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[workspace\.init-or-ephemeral\]/);
    });

    test('an ephemeral container added through pods/ephemeralcontainers cannot mount the workspace', async () => {
      const s = suite();
      const pod = sandboxPod('ws-debug', {
        spec: {
          volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: 'sbx-ws' } }],
          containers: [{ name: 'main', image: 'registry.example/agent:1', volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] }],
        },
      });
      assert.equal((await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod)).status, 201);
      const stored = (await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/ws-debug`)).body as KubeObject;
      const spec = stored.spec as { ephemeralContainers?: unknown[] };
      spec.ephemeralContainers = [{ name: 'dbg', image: 'busybox', volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] }];
      const answer = await s.api(s.runnerA.identity, 'PUT', `${PATHS.Pod('sandbox-a')}/ws-debug/ephemeralcontainers`, stored);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[workspace\.init-or-ephemeral\]/);
    });
  });

  describe('frozen stamps on UPDATE', () => {
    before(async () => {
      const s = suite();
      for (const name of ['frozen-apply', 'frozen-patch', 'frozen-ssa', 'own-delete', 'guarded']) {
        const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), secret(name));
        assert.equal(answer.status, 201, answer.text);
      }
    });

    test('kubectl apply that changes the environment label is refused and the label stays', async () => {
      const s = suite();
      const stored = (await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-a')}/frozen-apply`)).body as KubeObject;
      stored.metadata.labels![KEYS.environment] = 'beta';
      delete stored.metadata.resourceVersion;
      const run = await s.kubectl(s.runnerA.identity, ['apply', '-n', 'sandbox-a', '-f', '-'], JSON.stringify(stored));
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/environment"\]/);
      const after = (await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-a')}/frozen-apply`)).body as KubeObject;
      assert.equal(label(after, KEYS.environment), 'alpha');
    });

    test('kubectl patch that removes the create nonce is refused', async () => {
      const s = suite();
      const run = await s.kubectl(s.runnerA.identity, ['patch', 'secret', 'frozen-patch', '-n', 'sandbox-a', '--type=merge', '-p', JSON.stringify({ metadata: { annotations: { [KEYS.createNonce]: null } } })]);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /\[frozen\.stamps\] metadata\.annotations\["deed\.dev\/create-nonce"\]: is frozen/);
    });

    test('server-side apply by another field manager that takes the owner label is refused', async () => {
      const s = suite();
      const applied = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'frozen-ssa', namespace: 'sandbox-a', labels: { [KEYS.ownerUid]: '00000000-0000-4000-8000-000000000000' } } };
      const run = await s.kubectl(s.runnerA.identity, ['apply', '--server-side', '--force-conflicts', '--field-manager=intruder', '-f', '-'], JSON.stringify(applied));
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/owner-uid"\]/);
    });

    test('a label change that leaves the stamps alone is allowed', async () => {
      const s = suite();
      const run = await s.kubectl(s.runnerA.identity, ['label', 'secret', 'frozen-patch', '-n', 'sandbox-a', 'team=agents']);
      assert.equal(run.code, 0, run.stderr);
    });
  });

  describe('guarded writes across environments', () => {
    test('another environment cannot update or delete the object; its own runner can delete it', async () => {
      const s = suite();
      const update = await s.kubectl(s.janitorB, ['annotate', 'secret', 'guarded', '-n', 'sandbox-a', 'touched=yes']);
      assert.notEqual(update.code, 0);
      assert.match(update.stderr, /\[guard\.cross-environment\]/);
      const del = await s.api(s.janitorB, 'DELETE', `${PATHS.Secret('sandbox-a')}/guarded`);
      assert.equal(del.status, 403, del.text);
      assert.match(del.body.message, /acts for "beta", and this object belongs to another environment/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-a')}/guarded`)).status, 200);
      const own = await s.kubectl(s.runnerA.identity, ['delete', 'secret', 'guarded', '-n', 'sandbox-a', '--wait=false']);
      assert.equal(own.code, 0, own.stderr);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-a')}/guarded`)).status, 404);
    });

    test('a claim owned by a pod is refused at CREATE', async () => {
      const s = suite();
      const body = { ...claim('owned-claim'), metadata: { name: 'owned-claim', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: s.runnerA.uid }] } };
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim('sandbox-a'), body);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[pvc\.pod-owner\]/);
    });
  });
}
