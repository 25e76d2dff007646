// A pod rule written once reaches every pod source: host networking, granted per
// environment (beta is granted it in the suite's policy, alpha is not), judged on a
// Deployment's template through the real API server as each environment's runner.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { eventually, PATHS, sandboxPod } from '../objects.js';
import type { Suite } from '../suite.js';

const DEPLOYMENTS = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`;

function deployment(name: string): Record<string, unknown> {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { hostNetwork: true, automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/agent:1' }] } } },
  };
}

export function hostNetworkCases(suite: () => Suite): void {
  describe('host networking is an environment grant, on every pod source', () => {
    before(async () => {
      const s = suite();
      const must = async (what: string, answer: Promise<{ status: number; text: string }>) => {
        const a = await answer;
        if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
      };
      await must('deployment role', s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name: 'e2e-host-network' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['create', 'get'] }] }));
      for (const ns of ['sandbox-a', 'sandbox-b'])
        await must(`deployment rights in ${ns}`, s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
          metadata: { name: 'e2e-host-network' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-host-network' },
          subjects: [{ kind: 'ServiceAccount', namespace: ns, name: 'runner' }],
        }));
      for (const ns of ['sandbox-a', 'sandbox-b']) {
        const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: `system:serviceaccount:${ns}:runner`, groups: ['system:serviceaccounts', 'system:authenticated'], resourceAttributes: { namespace: ns, verb: 'create', group: 'apps', resource: 'deployments' } } };
        await eventually(`RBAC lets ${ns}:runner create deployments`, async () => (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true);
      }
    });

    test("alpha's runner, whose environment is not granted host networking, is refused a Deployment whose pods would use it, at its template path", async () => {
      const s = suite();
      const answer = await s.api(s.runnerA.identity, 'POST', DEPLOYMENTS('sandbox-a'), deployment('alpha-hostnet'));
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[template\.host-network\] spec\.template\.spec\.hostNetwork: environment "alpha" is not granted host networking/);
      assert.equal((await s.api(s.admin, 'GET', `${DEPLOYMENTS('sandbox-a')}/alpha-hostnet`)).status, 404, 'nothing stored');
    });

    test("alpha's runner is refused the same as a Pod, at spec.hostNetwork", async () => {
      const s = suite();
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), sandboxPod('alpha-hostnet-pod', { spec: { hostNetwork: true } }));
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[template\.host-network\] spec\.hostNetwork: environment "alpha" is not granted host networking/);
    });

    test("beta's runner, whose environment is granted it, gets the Deployment admitted and stored as written", async () => {
      const s = suite();
      const answer = await s.api(s.runnerB.identity, 'POST', DEPLOYMENTS('sandbox-b'), deployment('beta-hostnet'));
      assert.equal(answer.status, 201, answer.text);
      assert.equal((await s.api(s.admin, 'GET', `${DEPLOYMENTS('sandbox-b')}/beta-hostnet`)).body.spec.template.spec.hostNetwork, true);
    });

    test("beta's runner is refused a pod, and a Deployment, at system-cluster-critical: the scheduler would preempt alpha's runner and sandboxes to place it (rev-92)", async () => {
      const s = suite();
      const pod = await s.api(s.runnerB.identity, 'POST', PATHS.Pod('sandbox-b'), sandboxPod('beta-critical', { spec: { priorityClassName: 'system-cluster-critical' } }));
      assert.equal(pod.status, 403, pod.text);
      assert.match(pod.body.message, /\[template\.priority-class\] spec\.priorityClassName: priority class "system-cluster-critical" is not allowed for environment "beta": the scheduler would preempt lower-priority pods to place it, other environments' included; leave priorityClassName unset/);
      const critical = deployment('beta-critical');
      const template = (critical.spec as { template: { spec: Record<string, unknown> } }).template.spec;
      delete template.hostNetwork;
      template.priorityClassName = 'system-node-critical';
      const workload = await s.api(s.runnerB.identity, 'POST', DEPLOYMENTS('sandbox-b'), critical);
      assert.equal(workload.status, 403, workload.text);
      assert.match(workload.body.message, /\[template\.priority-class\] spec\.template\.spec\.priorityClassName: priority class "system-node-critical"/);
      // Without a class the pod takes the cluster's default, and is stored.
      const plain = await s.api(s.runnerB.identity, 'POST', PATHS.Pod('sandbox-b'), sandboxPod('beta-default-priority'));
      assert.equal(plain.status, 201, plain.text);
    });
  });
}
