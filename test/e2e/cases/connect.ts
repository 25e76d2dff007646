// Every way into a running sandbox: the CONNECTs of pods/exec, attach, portforward and
// proxy (and a Service's proxy), which write nothing but hand whoever gets in every Secret
// and workspace the pod holds. Tried as beta's janitor (wide RBAC in sandbox-a, which the
// built-in `edit` role gives too) against alpha's sandbox pod and runner, beside alpha's
// own, which must pass admission and go on to the node step. No kubelet runs here, so a
// CONNECT that passes ends with the API server's "does not have a host assigned".
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { PATHS, sandboxPod } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'sandbox-a';
const CONNECTS: Array<[string, (pod: string) => string]> = [
  ['exec', (pod) => `${PATHS.Pod(NS)}/${pod}/exec?command=true&stdout=true&container=main`],
  ['attach', (pod) => `${PATHS.Pod(NS)}/${pod}/attach?stdout=true&container=main`],
  ['portforward', (pod) => `${PATHS.Pod(NS)}/${pod}/portforward?ports=8080`],
  ['proxy', (pod) => `${PATHS.Pod(NS)}/${pod}:8080/proxy/`],
];
/** The node step: the API server reached it, so admission let the CONNECT through (a proxy to a pod with no IP: "address not allowed"). */
const NODE_STEP = /does not have a host assigned|address not allowed/;

export function connectCases(suite: () => Suite): void {
  describe('every way into alpha\'s running sandbox, tried by beta', () => {
    before(async () => {
      const s = suite();
      const created = await s.api(s.runnerA.identity, 'POST', PATHS.Pod(NS), sandboxPod('conn-victim'));
      assert.equal(created.status, 201, created.text);
    });

    test('beta\'s exec, attach, port-forward and proxy into alpha\'s sandbox pod and its runner are refused by Deed, naming neither', async () => {
      const s = suite();
      for (const pod of ['conn-victim', s.runnerA.pod]) {
        for (const [sub, path] of CONNECTS) {
          const answer = await s.api(s.janitorB, 'POST', path(pod));
          assert.equal(answer.status, 403, `${sub} ${pod}: ${answer.text}`);
          assert.match(answer.body.message, /admission webhook "validate\.deed\.dev" denied the request: Deed denied this request: \[guard\.connect\] system:serviceaccount:sandbox-b:janitor acts for "beta"; pod sandbox-a\/[a-z0-9-]+ is not known to be one of "beta"'s/, sub);
          assert.doesNotMatch(answer.body.message, /alpha|sandbox-a:runner/, sub);
        }
      }
    });

    test('kubectl exec by beta is refused with Deed\'s rule id; alpha\'s own goes on to the node step', async () => {
      const s = suite();
      const beta = await s.kubectl(s.janitorB, ['exec', 'conn-victim', '-n', NS, '-c', 'main', '--', 'true']);
      assert.notEqual(beta.code, 0);
      assert.match(beta.stderr, /\[guard\.connect\]/);
      const alpha = await s.kubectl(s.runnerA.identity, ['exec', 'conn-victim', '-n', NS, '-c', 'main', '--', 'true']);
      assert.notEqual(alpha.code, 0);
      assert.doesNotMatch(alpha.stderr, /validate\.deed\.dev/);
      assert.match(alpha.stderr, NODE_STEP);
    });

    test('alpha\'s exec, attach, port-forward and proxy into its own pod pass admission and reach the node step; so do its manager\'s and break-glass\'s', async () => {
      const s = suite();
      for (const who of [s.runnerA.identity, s.runnerController, s.admin]) {
        for (const [sub, path] of CONNECTS) {
          const answer = await s.api(who, 'POST', path('conn-victim'));
          assert.notEqual(answer.status, 403, `${who.name} ${sub}: ${answer.text}`);
          assert.doesNotMatch(answer.text, /validate\.deed\.dev/, `${who.name} ${sub}`);
          assert.match(answer.text, NODE_STEP, `${who.name} ${sub}`);
        }
      }
    });

    test('a pod that does not exist is refused like alpha\'s: the answer does not tell beta which one is there', async () => {
      const s = suite();
      const absent = await s.api(s.janitorB, 'POST', CONNECTS[0]![1]('conn-nobody'));
      const present = await s.api(s.janitorB, 'POST', CONNECTS[0]![1]('conn-victim'));
      assert.equal(absent.status, 403, absent.text);
      assert.equal(absent.body.message.replace('conn-nobody', 'POD'), present.body.message.replace('conn-victim', 'POD'));
    });

    test('a Service\'s proxy, which reaches whatever pods it selects, is refused to alpha and beta alike; break-glass passes admission', async () => {
      const s = suite();
      const svc = await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'conn-web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
      assert.equal(svc.status, 201, svc.text);
      for (const who of [s.janitorB, s.runnerA.identity]) {
        const answer = await s.api(who, 'GET', `/api/v1/namespaces/${NS}/services/conn-web:80/proxy/`);
        assert.equal(answer.status, 403, answer.text);
        assert.match(answer.body.message, /\[guard\.service-proxy\]/);
      }
      const glass = await s.api(s.admin, 'GET', `/api/v1/namespaces/${NS}/services/conn-web:80/proxy/`);
      assert.doesNotMatch(glass.text, /validate\.deed\.dev/);
      assert.notEqual(glass.status, 200);
    });
  });
}
