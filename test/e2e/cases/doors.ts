// Every door to an environment's object, tried as environment beta's janitor (wide RBAC in
// sandbox-a) against alpha's objects: status subresources, eviction, bindings, the runner
// pod whose deletion the garbage collector would follow, deletecollection, server-side
// apply, planting into a bound namespace. And the doors that must stay open: the owning
// environment, its manager, break-glass, the garbage collector.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { claim, KEYS, label, networkPolicy, PATHS, sandboxPod, secret } from '../objects.js';
import type { Suite } from '../suite.js';

const eviction = (name: string) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'sandbox-a' } });
const binding = (name: string, annotations: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Binding',
  metadata: { name, namespace: 'sandbox-a', annotations },
  target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' },
});

export function doorCases(suite: () => Suite): void {
  describe('every door to alpha\'s objects, tried by beta', () => {
    before(async () => {
      const s = suite();
      for (const [kind, body] of [
        ['Pod', sandboxPod('victim')],
        ['Pod', sandboxPod('victim-evict')],
        ['Pod', sandboxPod('victim-bind')],
        ['PersistentVolumeClaim', claim('victim-ws')],
        ['Secret', secret('victim-creds')],
      ] as const) {
        const answer = await s.api(s.runnerA.identity, 'POST', PATHS[kind]('sandbox-a'), body);
        assert.equal(answer.status, 201, answer.text);
      }
    });

    test('a label change through pods/status is refused, and the DELETE that would have followed stays refused', async () => {
      const s = suite();
      const run = await s.kubectl(s.janitorB, ['patch', 'pod', 'victim', '-n', 'sandbox-a', '--subresource=status', '--type=merge', '-p', JSON.stringify({ metadata: { labels: { [KEYS.environment]: 'beta' } } })]);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /\[guard\.cross-environment\]/);
      assert.match(run.stderr, /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/environment"\]/);
      const pod = (await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/victim`)).body as KubeObject;
      assert.equal(label(pod, KEYS.environment), 'alpha');
      const del = await s.api(s.janitorB, 'DELETE', `${PATHS.Pod('sandbox-a')}/victim`);
      assert.equal(del.status, 403, del.text);
    });

    test('marking alpha\'s claim terminal or owned through persistentvolumeclaims/status is refused', async () => {
      const s = suite();
      const terminal = await s.kubectl(s.janitorB, ['patch', 'pvc', 'victim-ws', '-n', 'sandbox-a', '--subresource=status', '--type=merge', '-p', JSON.stringify({ metadata: { annotations: { [KEYS.terminal]: 'true' } } })]);
      assert.notEqual(terminal.code, 0);
      assert.match(terminal.stderr, /\[guard\.cross-environment\]/);
      const owned = await s.kubectl(s.janitorB, ['patch', 'pvc', 'victim-ws', '-n', 'sandbox-a', '--subresource=status', '--type=merge', '-p', JSON.stringify({ metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'ghost', uid: '00000000-0000-4000-8000-000000000000' }] } })]);
      assert.notEqual(owned.code, 0);
      const pvc = (await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim('sandbox-a')}/victim-ws`)).body as KubeObject;
      assert.equal(pvc.metadata.annotations?.[KEYS.terminal], undefined);
      assert.equal(pvc.metadata.ownerReferences, undefined);
    });

    test('a status-only write by beta (a terminal phase) is refused', async () => {
      const s = suite();
      const run = await s.kubectl(s.janitorB, ['patch', 'pod', 'victim', '-n', 'sandbox-a', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { phase: 'Failed' } })]);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /\[guard\.cross-environment\]/);
    });

    test('in an unbound namespace, a principal of no environment cannot run a pod as beta\'s runner or mount alpha\'s claim', async () => {
      const s = suite();
      const intruder = await s.newIdentity('plain', 'intruder');
      await s.bindSandboxRole('sandbox-b', [['plain', 'intruder'], ['sandbox-a', 'runner']]);
      const ws = await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim('sandbox-b'), claim('alpha-ws-in-b'));
      assert.equal(ws.status, 201, ws.text);
      const borrowed = await s.api(intruder, 'POST', PATHS.Pod('sandbox-b'), sandboxPod('borrowed', { spec: { serviceAccountName: 'runner' } }));
      assert.equal(borrowed.status, 403, borrowed.text);
      assert.match(borrowed.body.message, /\[guard\.service-account\] spec\.serviceAccountName: service account sandbox-b:runner acts for environment "beta"/);
      const mounted = await s.api(intruder, 'POST', PATHS.Pod('sandbox-b'), sandboxPod('mounted', { spec: { volumes: [{ name: 'ws', persistentVolumeClaim: { claimName: 'alpha-ws-in-b' } }] } }));
      assert.equal(mounted.status, 403, mounted.text);
      assert.match(mounted.body.message, /\[claim\.cross-environment\].*a requester acting for no environment may not/);
      // Beta's own principal may run a pod as beta's runner account.
      const own = await s.api(s.janitorB, 'POST', PATHS.Pod('sandbox-b'), sandboxPod('beta-runner-pod', { spec: { serviceAccountName: 'runner' } }));
      assert.equal(own.status, 201, own.text);
    });

    test('alpha\'s own status write with a label is allowed', async () => {
      const s = suite();
      const run = await s.kubectl(s.runnerA.identity, ['patch', 'pod', 'victim', '-n', 'sandbox-a', '--subresource=status', '--type=merge', '-p', JSON.stringify({ metadata: { labels: { phase: 'observed' } } })]);
      assert.equal(run.code, 0, run.stderr);
    });

    test('an eviction by beta is refused; one by alpha deletes the pod', async () => {
      const s = suite();
      const refused = await s.api(s.janitorB, 'POST', `${PATHS.Pod('sandbox-a')}/victim-evict/eviction`, eviction('victim-evict'));
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.body.message, /\[guard\.cross-environment\] system:serviceaccount:sandbox-b:janitor acts for "beta"; pod sandbox-a\/victim-evict is not known to be one of "beta"'s \(or does not exist\), so it may not evict it/);
      assert.doesNotMatch(refused.body.message, /alpha/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/victim-evict`)).status, 200);
      const evicted = await s.api(s.runnerA.identity, 'POST', `${PATHS.Pod('sandbox-a')}/victim-evict/eviction`, eviction('victim-evict'));
      assert.equal(evicted.status, 201, evicted.text);
    });

    test('a binding by beta is refused, and no one binds with annotations under Deed\'s prefix (both binding APIs)', async () => {
      const s = suite();
      const byBeta = await s.api(s.janitorB, 'POST', `${PATHS.Pod('sandbox-a')}/victim-bind/binding`, binding('victim-bind'));
      assert.equal(byBeta.status, 403, byBeta.text);
      assert.match(byBeta.body.message, /\[guard\.cross-environment\]/);
      const forged = await s.api(s.admin, 'POST', '/api/v1/namespaces/sandbox-a/bindings', binding('victim-bind', { [KEYS.attestation]: 'v1:forged' }));
      assert.equal(forged.status, 403, forged.text);
      assert.match(forged.body.message, /\[frozen\.stamps\] metadata\.annotations\["deed\.dev\/attestation"\]/);
      const pod = (await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/victim-bind`)).body as KubeObject;
      assert.notEqual(pod.metadata.annotations?.[KEYS.attestation], 'v1:forged');
      assert.equal((pod.spec as { nodeName?: string }).nodeName, undefined);
    });

    test('a deletecollection by beta is refused item by item and deletes nothing of alpha\'s', async () => {
      const s = suite();
      const answer = await s.api(s.janitorB, 'DELETE', `${PATHS.Secret('sandbox-a')}?labelSelector=${encodeURIComponent(`${KEYS.environment}=alpha`)}`);
      assert.equal(answer.status, 403, answer.text);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-a')}/victim-creds`)).status, 200);
    });

    test('server-side apply by beta that adds a label to alpha\'s Secret is refused', async () => {
      const s = suite();
      const applied = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'victim-creds', namespace: 'sandbox-a', labels: { owner: 'beta' } } };
      const run = await s.kubectl(s.janitorB, ['apply', '--server-side', '--field-manager=beta', '-f', '-'], JSON.stringify(applied));
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /\[guard\.cross-environment\]/);
    });

    test('beta cannot delete or evict alpha\'s runner; alpha\'s manager can delete it, and the garbage collector then takes its objects', async () => {
      const s = suite();
      const runner = await s.newRunner('sandbox-a', 'runner-door');
      const owned = await s.api(runner.identity, 'POST', PATHS.Secret('sandbox-a'), secret('door-owned'));
      assert.equal(owned.status, 201, owned.text);
      const del = await s.api(s.janitorB, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-door`);
      assert.equal(del.status, 403, del.text);
      assert.match(del.body.message, /\[guard\.cross-environment\] system:serviceaccount:sandbox-b:janitor acts for "beta", and this object belongs to another environment/);
      assert.doesNotMatch(del.body.message, /alpha|sandbox-a:runner/);
      const evict = await s.api(s.janitorB, 'POST', `${PATHS.Pod('sandbox-a')}/runner-door/eviction`, eviction('runner-door'));
      assert.equal(evict.status, 403, evict.text);
      const managed = await s.api(s.runnerController, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-door`, { gracePeriodSeconds: 0 });
      assert.equal(managed.status, 200, managed.text);
    });

    test('beta cannot plant a NetworkPolicy in sandbox-a, which is bound to alpha', async () => {
      const s = suite();
      const planted = await s.api(s.janitorB, 'POST', PATHS.NetworkPolicy('sandbox-a'), networkPolicy('deny-all'));
      assert.equal(planted.status, 403, planted.text);
      assert.match(planted.body.message, /\[guard\.namespace-binding\] namespace sandbox-a is bound to environment "alpha"/);
    });

    test('a client owner reference to the runner from another namespace is refused at CREATE', async () => {
      const s = suite();
      await s.bindSandboxRole('sandbox-b', [['sandbox-a', 'runner']]);
      const body = { ...secret('cross-owned'), metadata: { name: 'cross-owned', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'runner-0', uid: s.runnerA.uid }] } };
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-b'), body);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[owner\.cross-namespace\]/);
    });

    test('Helm handing an unstamped object to Argo CD is not a stamp change', async () => {
      const s = suite();
      const created = await s.api(s.admin, 'POST', PATHS.Secret('sandbox-a'), { ...secret('helm-owned'), metadata: { name: 'helm-owned', labels: { 'app.kubernetes.io/managed-by': 'Helm' } } });
      assert.equal(created.status, 201, created.text);
      const run = await s.kubectl(s.admin, ['label', '--overwrite', 'secret', 'helm-owned', '-n', 'sandbox-a', 'app.kubernetes.io/managed-by=argocd']);
      assert.equal(run.code, 0, run.stderr);
    });

    test("a runner's Secret rendered by Helm (managed-by: Helm) is stored with Helm's label and Deed's stamps under its prefix", async () => {
      const s = suite();
      const body = { ...secret('helm-rendered'), metadata: { name: 'helm-rendered', labels: { 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/instance': 'lab' } } };
      const created = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), body);
      assert.equal(created.status, 201, created.text);
      const labels = (created.body as KubeObject).metadata.labels ?? {};
      assert.equal(labels['app.kubernetes.io/managed-by'], 'Helm');
      assert.equal(labels[KEYS.managed], 'true');
      assert.equal(labels[KEYS.environment], 'alpha');
      const relabel = await s.kubectl(s.runnerA.identity, ['label', '--overwrite', 'secret', 'helm-rendered', '-n', 'sandbox-a', 'app.kubernetes.io/managed-by=argocd']);
      assert.equal(relabel.code, 0, relabel.stderr);
    });

    test('objects whose stamps no longer verify (Deed given another key) are alpha\'s no more: only break-glass may delete them', async () => {
      const s = suite();
      const original = readFileSync(s.keyFile);
      writeFileSync(s.keyFile, 'another-key-that-signed-nothing-here-0123456789');
      await s.restartDeed();
      try {
        const own = await s.api(s.runnerA.identity, 'DELETE', `${PATHS.Secret('sandbox-a')}/victim-creds`);
        assert.equal(own.status, 403, own.text);
        assert.match(own.body.message, /\[attestation\.invalid\].*belongs to no environment whatever its label says \("alpha"\)/);
        const glass = await s.api(s.admin, 'DELETE', `${PATHS.Secret('sandbox-a')}/victim-creds`);
        assert.equal(glass.status, 200, glass.text);
      } finally {
        writeFileSync(s.keyFile, original);
        await s.restartDeed();
      }
    });
  });
}
