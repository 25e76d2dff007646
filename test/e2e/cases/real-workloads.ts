// Issue 40, "Real workloads pass as they are written", in a real API server with the workload
// controllers running under their own service accounts (--use-service-account-credentials).
// alpha's runner creates public manifests unchanged (test/fixtures/real-world, sources in
// its README): the Kubernetes docs' nginx Deployment and web StatefulSet, which leave
// automountServiceAccountToken unset and have no container named "main", and the test hook
// of every `helm create` chart (restartPolicy: Never). Each is stored as written, stamped as
// alpha's; the pods the controllers make from the templates are stored with the token off.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../src/admission/types.js';
import { attested, collectionPaths, eventually, KEYS, label } from '../objects.js';
import type { Suite } from '../suite.js';
import type { Tools } from './admission.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects as the API server stores them
type Spec = Record<string, any>;

const NS = 'real-workloads';
const PATH = collectionPaths(['Pod', 'Service', 'Deployment', 'StatefulSet', 'PersistentVolumeClaim'] as const);
type Kind = keyof typeof PATH;
const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'real-world');

function manifests(file: string): Spec[] {
  return parseAllDocuments(readFileSync(join(FIXTURES, file), 'utf8')).map((d) => d.toJS() as Spec);
}

/** The ServiceAccount plugin's token volume and its mount: what "automount off" takes out. */
function tokenFree(pod: Spec): boolean {
  const volumes: Spec[] = pod.spec.volumes ?? [];
  const mounts: Spec[] = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].flatMap((c: Spec) => c.volumeMounts ?? []);
  return pod.spec.automountServiceAccountToken === false && !volumes.some((v) => String(v.name).startsWith('kube-api-access-')) && !mounts.some((m) => m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount');
}

export function realWorkloadCases(suite: () => Suite, tools: Tools): void {
  const needsControllers = tools.controllers ? false : 'needs kube-controller-manager in KUBEBUILDER_ASSETS (setup-envtest does not ship it)';

  describe("real workloads pass as they are written, created by alpha's runner", () => {
    const stored: Partial<Record<string, KubeObject>> = {};
    const ok = (what: string, a: { status: number; text: string }) => {
      if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
    };
    const get = async (s: Suite, kind: Kind, name: string) => (await s.api(s.admin, 'GET', `${PATH[kind](NS)}/${name}`)).body as KubeObject;
    const pods = async (s: Suite, selector: string): Promise<Spec[]> => (await s.api(s.admin, 'GET', `${PATH.Pod(NS)}?labelSelector=${encodeURIComponent(selector)}`)).body.items ?? [];

    before(async () => {
      const s = suite();
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      ok('role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        metadata: { name: 'e2e-real-workloads' },
        rules: [
          { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['*'] },
          { apiGroups: [''], resources: ['pods', 'services'], verbs: ['*'] },
        ],
      }));
      ok('binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'e2e-real-workloads' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-real-workloads' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }],
      }));
      // The pods' service account: the API server refuses a pod whose account does not exist yet.
      await eventually(`the default service account of ${NS}`, async () => (await s.api(s.admin, 'GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200 || !tools.controllers);
      if (!tools.controllers) ok('default service account', await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } }));
      await eventually('RBAC lets alpha\'s runner create pods there', async () => (await s.api(s.runnerA.identity, 'POST', `${PATH.Pod(NS)}?dryRun=All`, manifests('helm-test-connection.yaml')[0])).status === 201);
      for (const file of ['helm-test-connection.yaml', 'nginx-deployment.yaml', 'web-statefulset.yaml'])
        for (const obj of manifests(file)) {
          const answer = await s.api(s.runnerA.identity, 'POST', PATH[obj.kind as Kind](NS), obj);
          assert.equal(answer.status, 201, `${obj.kind} ${obj.metadata.name}: ${answer.text}`);
          stored[`${obj.kind}/${obj.metadata.name}`] = answer.body as KubeObject;
        }
    });

    test('each is stored, stamped as alpha\'s with an attestation that verifies; the templates as written, automount left unset', async () => {
      const s = suite();
      for (const [key, obj] of Object.entries(stored)) {
        assert.equal(label(obj!, KEYS.environment), 'alpha', key);
        assert.ok(attested(s, obj!), `${key}: its attestation verifies`);
      }
      for (const [kind, name] of [['Deployment', 'nginx-deployment'], ['StatefulSet', 'web']] as const) {
        const obj = (await get(s, kind, name)) as Spec;
        assert.equal(obj.spec.template.spec.automountServiceAccountToken, undefined, `${kind} ${name}'s template is as written`);
        assert.deepEqual(obj.spec.template.spec.containers.map((c: Spec) => c.image), kind === 'Deployment' ? ['nginx:1.15'] : ['registry.k8s.io/nginx-slim:0.7']);
      }
    });

    test('the Helm test hook is an ordinary pod: its restartPolicy Never stands, its token is taken out', async () => {
      const pod = (await get(suite(), 'Pod', 'web-mychart-test-connection')) as Spec;
      assert.equal(pod.metadata.annotations['helm.sh/hook'], 'test');
      assert.equal(pod.spec.restartPolicy, 'Never');
      assert.ok(tokenFree(pod), JSON.stringify(pod.spec));
    });

    test("the pods the replicaset and statefulset controllers make are alpha's, stored with the token off", { skip: needsControllers }, async () => {
      const s = suite();
      let made: Spec[] = [];
      await eventually('the Deployment\'s two pods and the StatefulSet\'s first', async () => {
        made = await pods(s, 'app=nginx');
        return made.filter((p) => p.metadata.ownerReferences?.[0]?.kind === 'ReplicaSet').length === 2 && made.some((p) => p.metadata.name === 'web-0');
      }, 60_000);
      for (const pod of made) {
        const name = `${pod.metadata.ownerReferences?.[0]?.kind} pod ${pod.metadata.name}`;
        assert.equal(label(pod as KubeObject, KEYS.environment), 'alpha', name);
        assert.ok(attested(s, { ...pod, kind: 'Pod' } as KubeObject), `${name}: its attestation verifies (a list's items carry no kind)`);
        assert.ok(tokenFree(pod), `${name} is stored without the service-account token: ${JSON.stringify(pod.spec.volumes)}`);
      }
      const claim = await get(s, 'PersistentVolumeClaim', 'www-web-0');
      assert.equal(label(claim, KEYS.environment), 'alpha', "the StatefulSet's claim is alpha's");
      assert.ok(attested(s, claim), "the claim's attestation verifies");
    });
  });
}
