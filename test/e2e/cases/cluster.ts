// What the cluster itself does with Deed in the chain: the garbage collector following
// Deed's owner references, namespace deletion, the HTTP version the API server speaks,
// and the failure mode when Deed is down.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually, claim, networkPolicy, PATHS, sandboxPod, secret } from '../objects.js';
import type { Suite } from '../suite.js';
import type { Tools } from './admission.js';

export function clusterCases(suite: () => Suite, tools: Tools): void {
  const needsControllers = tools.controllers ? false : 'needs kube-controller-manager in KUBEBUILDER_ASSETS (setup-envtest does not ship it)';

  describe('the garbage collector and the namespace controller', () => {
    test('deleting a runner makes the garbage collector delete its pods, Secrets and NetworkPolicies, and keep its claim', { skip: needsControllers }, async () => {
      const s = suite();
      const runner = await s.newRunner('sandbox-a', 'runner-gc');
      const created: Array<[keyof typeof PATHS, string]> = [['Pod', 'gc-pod'], ['Secret', 'gc-secret'], ['NetworkPolicy', 'gc-netpol'], ['PersistentVolumeClaim', 'gc-claim']];
      const bodies = { Pod: sandboxPod('gc-pod'), Secret: secret('gc-secret'), NetworkPolicy: networkPolicy('gc-netpol'), PersistentVolumeClaim: claim('gc-claim') };
      for (const [kind] of created) {
        const answer = await s.api(runner.identity, 'POST', PATHS[kind]('sandbox-a'), bodies[kind]);
        assert.equal(answer.status, 201, answer.text);
      }
      const del = await s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-gc`, { gracePeriodSeconds: 0 });
      assert.equal(del.status, 200, del.text);
      for (const [kind, name] of created.slice(0, 3)) {
        await eventually(`the garbage collector deletes ${kind} ${name}`, async () => (await s.api(s.admin, 'GET', `${PATHS[kind]('sandbox-a')}/${name}`)).status === 404);
      }
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim('sandbox-a')}/gc-claim`)).status, 200, 'the workspace claim outlives its runner');
    });

    test('a namespace holding stamped objects is deleted to the end with Deed in the chain', { skip: needsControllers }, async () => {
      const s = suite();
      const ns = 'sandbox-doomed';
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { 'deed.dev/sandbox': 'enabled' } } })).status, 201);
      await s.bindSandboxRole(ns, [['sandbox-a', 'runner']]);
      for (const [kind, body] of [['Secret', secret('doomed')], ['PersistentVolumeClaim', claim('doomed')], ['NetworkPolicy', networkPolicy('doomed')]] as const) {
        const answer = await s.api(s.runnerA.identity, 'POST', PATHS[kind](ns), body);
        assert.equal(answer.status, 201, answer.text);
      }
      assert.equal((await s.api(s.admin, 'DELETE', `/api/v1/namespaces/${ns}`)).status, 200);
      await eventually(`namespace ${ns} is gone`, async () => (await s.api(s.admin, 'GET', `/api/v1/namespaces/${ns}`)).status === 404, 60_000);
    });
  });

  describe('transport', () => {
    test('the API server talks HTTP/2 to Deed', async () => {
      const s = suite();
      const before = s.deed.logs().length;
      assert.equal((await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), secret('h2-probe'))).status, 201);
      const reviews = () => s.deed.logs().slice(before).filter((l) => l.msg === 'review' && l.name === 'h2-probe');
      // Deed's log reaches this process through a pipe, a little after the answer.
      // One call per create: the mutating webhook (/admit) alone reviews a Secret's CREATE.
      await eventually('the mutating webhook logs the review', async () => reviews().some((l) => l.webhook === 'admit'), 5000);
      assert.deepEqual([...new Set(reviews().map((l) => l.httpVersion))], ['2.0']);
    });
  });

  describe('when Deed is down', () => {
    test('writes in opted-in namespaces fail closed naming the webhook; kube-system and other namespaces go on', async () => {
      const s = suite();
      await s.stopDeed();
      try {
        const refused = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), secret('while-down'));
        assert.equal(refused.status, 500, refused.text);
        assert.match(refused.body.message, /failed calling webhook "mutate\.deed\.dev"/);
        const del = await s.api(s.runnerA.identity, 'DELETE', `${PATHS.Secret('sandbox-a')}/h2-probe`);
        assert.equal(del.status, 500, del.text);
        assert.match(del.body.message, /failed calling webhook "validate\.deed\.dev"/);
        for (const ns of ['kube-system', 'plain']) {
          const answer = await s.api(s.admin, 'POST', PATHS.Secret(ns), secret('while-down'));
          assert.equal(answer.status, 201, `${ns}: ${answer.text}`);
        }
      } finally {
        await s.restartDeed();
      }
      const after = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), secret('after-restart'));
      assert.equal(after.status, 201, after.text);
    });
  });
}
