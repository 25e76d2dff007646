// An environment's objects are reached only through that environment: what points at them
// (Secret and claim references, NetworkPolicy selectors), what Deed never stamped (a
// manager's objects in a bound namespace) and the workspace in every pod that mounts it.
// Each attack is tried as beta (an account that may only create pods, and the janitor with
// wide RBAC) and as a principal of no environment; beside it, the owning environment's own
// use keeps working.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import type { KubeObject } from '../../../src/admission/types.js';
import type { Identity } from '../client.js';
import { claim, createdOrThere as ok, eventually, KEYS, label, networkPolicy, optedInNamespace, PATHS, refusedBy as refused, sandboxPod, secret, workspaceClaim } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'shared-refs';
const MAIN = { name: 'main', image: 'registry.example/agent:1' };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Spec = Record<string, any>;

/** A pod that names Secret `name` in one form, by the form's name. */
function secretForms(name: string): Array<[string, Spec]> {
  return [
    ['a secret volume', { volumes: [{ name: 'creds', secret: { secretName: name } }], containers: [{ ...MAIN, volumeMounts: [{ name: 'creds', mountPath: '/creds' }] }] }],
    ['a projected source', { volumes: [{ name: 'creds', projected: { sources: [{ secret: { name } }] } }], containers: [{ ...MAIN, volumeMounts: [{ name: 'creds', mountPath: '/creds' }] }] }],
    ['env secretKeyRef', { containers: [{ ...MAIN, env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name, key: 'token' } } }] }] }],
    ['envFrom secretRef', { containers: [{ ...MAIN, envFrom: [{ secretRef: { name } }] }] }],
    ['imagePullSecrets', { imagePullSecrets: [{ name }], containers: [MAIN] }],
    ['a CSI nodePublishSecretRef', { volumes: [{ name: 'csi', csi: { driver: 'secrets.example.com', nodePublishSecretRef: { name } } }], containers: [{ ...MAIN, volumeMounts: [{ name: 'csi', mountPath: '/csi' }] }] }],
    ['an init container env secretKeyRef', { initContainers: [{ name: 'setup', image: 'registry.example/setup:1', env: [{ name: 'T', valueFrom: { secretKeyRef: { name, key: 'token' } } }] }], containers: [MAIN] }],
  ];
}

const slug = (form: string) => form.replace(/[^a-z]+/gi, '-').replace(/^-|-$/g, '').toLowerCase();

export function referenceCases(suite: () => Suite): void {
  let podMaker: Identity; // beta (sandbox-b:*), may only create pods in NS
  let stranger: Identity; // a principal of no environment, may only create pods in NS


  describe('references, selectors, unstamped objects and the workspace reach an environment only through it', () => {
    before(async () => {
      const s = suite();
      await optedInNamespace(s, NS);
      await s.bindSandboxRole(NS, [['sandbox-a', 'runner'], ['sandbox-b', 'janitor']]);
      podMaker = await s.newIdentity('sandbox-b', 'pod-maker');
      stranger = await s.newIdentity('plain', 'stranger');
      ok('role', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'create-pods' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create'] }] }));
      ok('binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'create-pods' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'create-pods' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-b', name: 'pod-maker' }, { kind: 'ServiceAccount', namespace: 'plain', name: 'stranger' }],
      }));
      await eventually('RBAC lets pod-maker create pods', async () => (await s.api(podMaker, 'POST', `${PATHS.Pod(NS)}?dryRun=All`, sandboxPod('rbac-probe'))).status === 201);
      ok('alpha secret', await s.api(s.runnerA.identity, 'POST', PATHS.Secret(NS), secret('alpha-creds')));
      // A shared registry pull secret the platform created: unstamped, usable by all.
      ok('shared pull secret', await s.api(s.admin, 'POST', PATHS.Secret(NS), { ...secret('shared-pull'), type: 'Opaque' }));
    });

    test("beta's pod-only account cannot read alpha's Secret, and cannot get a pod admitted that names it in any form", async () => {
      const s = suite();
      assert.equal((await s.api(podMaker, 'GET', `${PATHS.Secret(NS)}/alpha-creds`)).status, 403, 'RBAC refuses the read');
      for (const [form, spec] of secretForms('alpha-creds')) {
        const answer = await s.api(podMaker, 'POST', PATHS.Pod(NS), sandboxPod(`beta-${slug(form)}`, { spec }));
        refused(answer, 'secret-ref.cross-environment', /Secret alpha-creds, which belongs to another environment; environment "beta" may not/);
      }
    });

    test("beta cannot make its pod one of alpha's Job: not by a controller reference that keeps the Job's uid under another kind or name, nor by the label the Job's selector matches", async () => {
      const s = suite();
      ok('job role', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'jobs' }, rules: [{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get'] }] }));
      ok('job binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'jobs' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'jobs' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }],
      }));
      const JOBS = `/apis/batch/v1/namespaces/${NS}/jobs`;
      // Suspended: the job controller makes no pod of its own; its generated selector is its uid alone.
      const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'alpha-job' }, spec: { suspend: true, backoffLimit: 0, template: { spec: { restartPolicy: 'Never', automountServiceAccountToken: false, containers: [MAIN] } } } };
      await eventually('RBAC lets alpha create jobs', async () => (await s.api(s.runnerA.identity, 'POST', `${JOBS}?dryRun=All`, job)).status === 201);
      const made = await s.api(s.runnerA.identity, 'POST', JOBS, job);
      assert.equal(made.status, 201, made.text);
      const uid = made.body.metadata.uid as string;
      assert.deepEqual(made.body.spec.selector.matchLabels, { 'batch.kubernetes.io/controller-uid': uid });
      const controlledBy = (apiVersion: string, kind: string, name: string) => ({ ownerReferences: [{ apiVersion, kind, name, uid, controller: true }] });
      const mole = (name: string, metadata: Record<string, unknown>) => ({ ...sandboxPod(name), metadata: { name, ...metadata } });
      // The job controller claims a pod whose controller reference carries its uid, whatever kind and name it gives.
      refused(await s.api(s.janitorB, 'POST', PATHS.Pod(NS), mole('mole-kind', controlledBy('batch/v1', 'JobX', 'alpha-job'))), 'reference.unknown', /names JobX \(batch\/v1\), no kind Kubernetes serves as a controller there/);
      refused(await s.api(s.janitorB, 'POST', PATHS.Pod(NS), mole('mole-name', controlledBy('batch/v1', 'Job', 'no-such-job'))), 'reference.absent', /names Job shared-refs\/no-such-job, which does not exist/);
      refused(
        await s.api(s.janitorB, 'POST', PATHS.Pod(NS), mole('mole-label', { labels: { 'batch.kubernetes.io/controller-uid': uid }, ...controlledBy('tekton.dev/v1', 'TaskRun', 'run-1') })),
        'reference.unknown',
        /the label batch\.kubernetes\.io\/controller-uid makes this pod one the job controller may count/,
      );
      // Planted under an operator's kind (whose reference Deed leaves to its operator), then renamed to alpha's Job: a change of controller.
      ok('planted', await s.api(s.janitorB, 'POST', PATHS.Pod(NS), mole('mole-planted', controlledBy('tekton.dev/v1', 'TaskRun', 'run-1'))));
      const renamed = await s.api(s.janitorB, 'PATCH', `${PATHS.Pod(NS)}/mole-planted`, { metadata: controlledBy('batch/v1', 'Job', 'alpha-job') }, 'application/merge-patch+json');
      refused(renamed, 'guard.adoption', /is not of the environment of Job shared-refs\/alpha-job; it may not become its controller/);
      const stored = await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/mole-planted`);
      assert.equal(stored.body.metadata.ownerReferences[0].kind, 'TaskRun');
    });

    test("beta cannot hold alpha's Secret in deletion with an owner reference that blocks it", async () => {
      const s = suite();
      const creds = await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/alpha-creds`);
      const hold = (name: string, blockOwnerDeletion: boolean) => ({
        ...secret(name),
        metadata: { name, finalizers: ['example.com/hold'], ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 'alpha-creds', uid: creds.body.metadata.uid, blockOwnerDeletion }] },
      });
      refused(await s.api(s.janitorB, 'POST', PATHS.Secret(NS), hold('beta-hold', true)), 'reference.cross-environment', /blocks the deletion of Secret shared-refs\/alpha-creds, which belongs to another environment/);
      // Without it, the reference holds nothing: the collector deletes beta's Secret when alpha's goes.
      const plain = await s.api(s.janitorB, 'POST', `${PATHS.Secret(NS)}?dryRun=All`, hold('beta-plain', false));
      assert.equal(plain.status, 201, plain.text);
    });

    test("a principal of no environment cannot get a pod admitted that names alpha's Secret in any form", async () => {
      const s = suite();
      for (const [form, spec] of secretForms('alpha-creds')) {
        const answer = await s.api(stranger, 'POST', PATHS.Pod(NS), sandboxPod(`none-${slug(form)}`, { spec }));
        refused(answer, 'secret-ref.cross-environment', /acts for no environment and may not/);
      }
    });

    test("alpha's pods use alpha's Secret in every form, and anyone may pull with the shared unstamped pull secret", async () => {
      const s = suite();
      for (const [form, spec] of secretForms('alpha-creds')) {
        const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod(NS), sandboxPod(`alpha-${slug(form)}`, { spec }));
        assert.equal(answer.status, 201, `${form}: ${answer.text}`);
      }
      for (const [who, id] of [['beta', podMaker], ['none', stranger]] as const) {
        const answer = await s.api(id, 'POST', PATHS.Pod(NS), sandboxPod(`${who}-shared-pull`, { spec: { imagePullSecrets: [{ name: 'shared-pull' }], containers: [MAIN] } }));
        assert.equal(answer.status, 201, `${who}: ${answer.text}`);
      }
    });

    test("beta's Deployment whose pod template names alpha's Secret is refused at the template's path; alpha's own is admitted", async () => {
      const s = suite();
      ok('workload role', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'deployments' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['create'] }] }));
      ok('workload binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'deployments' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployments' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-b', name: 'janitor' }, { kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }],
      }));
      const deployment = (name: string) => ({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 'alpha-creds' } }] }] } },
        },
      });
      const path = `/apis/apps/v1/namespaces/${NS}/deployments`;
      await eventually('RBAC lets beta create deployments', async () => (await s.api(s.janitorB, 'POST', `${path}?dryRun=All`, { ...deployment('probe'), spec: { ...deployment('probe').spec, template: { ...deployment('probe').spec.template, spec: { automountServiceAccountToken: false, containers: [MAIN] } } } })).status === 201);
      refused(await s.api(s.janitorB, 'POST', path, deployment('beta-reads')), 'secret-ref.cross-environment', /spec\.template\.spec\.containers\[name=main\]\.envFrom\[0\]\.secretRef\.name: container "main" reads Secret alpha-creds, which belongs to another environment/);
      const own = await s.api(s.runnerA.identity, 'POST', path, deployment('alpha-reads'));
      assert.equal(own.status, 201, own.text);
    });

    test("beta may not add its pull secret to the namespace's default service account, which would go into alpha's pods, nor replace the platform's ResourceClaimTemplate or plant a well-known ConfigMap", async () => {
      const s = suite();
      // What the tenant role and edit grant on both.
      ok('role', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'inputs' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts', 'configmaps'], verbs: ['*'] }, { apiGroups: ['resource.k8s.io'], resources: ['resourceclaimtemplates'], verbs: ['*'] }] }));
      ok('binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { metadata: { name: 'inputs' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'inputs' }, subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-b', name: 'janitor' }] }));
      const template = { apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaimTemplate', metadata: { name: 'gpu' }, spec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com' } }] } } } };
      ok('platform template', await s.api(s.admin, 'POST', `/apis/resource.k8s.io/v1/namespaces/${NS}/resourceclaimtemplates`, template));
      // The authorizer learns of the binding a moment later.
      const access = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'system:serviceaccount:sandbox-b:janitor', groups: ['system:serviceaccounts', 'system:authenticated'], resourceAttributes: { namespace: NS, verb: 'patch', resource: 'serviceaccounts' } } };
      await eventually('RBAC lets beta patch service accounts', async () => (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', access)).body?.status?.allowed === true);
      const pull = await s.api(s.janitorB, 'PATCH', `/api/v1/namespaces/${NS}/serviceaccounts/default`, { imagePullSecrets: [{ name: 'beta-pull' }] }, 'application/merge-patch+json');
      refused(pull, 'guard.shared-input', /ServiceAccount [a-z0-9-]+\/default carries no stamps: it is the platform's/);
      refused(await s.api(s.janitorB, 'DELETE', `/apis/resource.k8s.io/v1/namespaces/${NS}/resourceclaimtemplates/gpu`), 'guard.shared-input', /ResourceClaimTemplate [a-z0-9-]+\/gpu carries no stamps/);
      // A well-known ConfigMap no controller keeps here (OpenShift's service CA): alpha's pods would read it unjudged.
      const ca = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'openshift-service-ca.crt' }, data: { 'service-ca.crt': 'beta CA' } };
      refused(await s.api(s.janitorB, 'POST', `/api/v1/namespaces/${NS}/configmaps`, ca), 'configmap.well-known', /environment "beta" may not create one/);
    });

    test('a Secret that does not exist yet is refused whoever names it in a pod that names its node (no binding follows), optional or not', async () => {
      const s = suite();
      for (const [who, id] of [['beta', podMaker], ['none', stranger]] as const) {
        const optional = await s.api(id, 'POST', PATHS.Pod(NS), sandboxPod(`${who}-optional`, { spec: { nodeName: 'node-1', containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 'alpha-next-creds', optional: true } }] }] } }));
        refused(optional, 'secret-ref.absent', /Secret alpha-next-creds does not exist/);
      }
    });

    test("an ephemeral container beta adds to its own pod cannot read alpha's Secret", async () => {
      const s = suite();
      ok('beta pod', await s.api(s.janitorB, 'POST', PATHS.Pod(NS), sandboxPod('beta-debuggee')));
      const stored = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/beta-debuggee`)).body as KubeObject;
      (stored.spec as Spec).ephemeralContainers = [{ name: 'dbg', image: 'busybox', env: [{ name: 'T', valueFrom: { secretKeyRef: { name: 'alpha-creds', key: 'token' } } }] }];
      const answer = await s.api(s.janitorB, 'PUT', `${PATHS.Pod(NS)}/beta-debuggee/ephemeralcontainers`, stored);
      refused(answer, 'secret-ref.cross-environment', /container "dbg" reads Secret alpha-creds, which belongs to another environment/);
    });

    test("beta's pod grown by ephemeral containers past 256 Secrets is refused, though each write adds fewer: the lookup cache would take it to read every name of the namespace, and refuse every environment its Secrets there (rev-97 F1)", async () => {
      const s = suite();
      ok('beta pod', await s.api(s.janitorB, 'POST', PATHS.Pod(NS), sandboxPod('beta-grown')));
      const add = async (name: string, count: number) => {
        const stored = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/beta-grown`)).body as KubeObject;
        const envFrom = Array.from({ length: count }, (_, i) => ({ prefix: `S${i}_`, secretRef: { name: `${name}-${i}`, optional: true } }));
        (stored.spec as Spec).ephemeralContainers = [...(((stored.spec as Spec).ephemeralContainers as Spec[] | undefined) ?? []), { name, image: 'busybox', envFrom }];
        return s.api(s.janitorB, 'PUT', `${PATHS.Pod(NS)}/beta-grown/ephemeralcontainers`, stored);
      };
      const first = await add('dbg-a', 200);
      assert.equal(first.status, 200, first.text);
      // Before: 200, and the pod named 257 Secrets, then 513, past what the index keeps.
      refused(await add('dbg-b', 57), 'reference.unknown', /spec\.ephemeralContainers: the pod would name 257 Secrets, each held for it against other environments' creates in the namespace; Deed holds at most 256 for one pod/);
      const fits = await add('dbg-c', 56);
      assert.equal(fits.status, 200, fits.text);
    });

    test('a claim that does not exist yet is refused for a principal of no environment too, in a pod that names its node', async () => {
      const s = suite();
      const pod = sandboxPod('none-preplant', { spec: { nodeName: 'node-1', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'alpha-next-ws' } }], containers: [MAIN] } });
      refused(await s.api(stranger, 'POST', PATHS.Pod(NS), pod), 'claim.absent', /claim alpha-next-ws does not exist/);
    });

    test('a file that lists the pod before the claim and the Secret it names applies as written, and its server-side dry run predicts it', async () => {
      const s = suite();
      const file = [
        sandboxPod('dry-user', { spec: { volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: 'dry-ws' } }], containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 'dry-creds' } }] }] } }),
        workspaceClaim('dry-ws'),
        secret('dry-creds'),
      ]
        .map((o) => stringify(o))
        .join('---\n');
      const dry = await s.kubectl(s.runnerA.identity, ['apply', '--dry-run=server', '-n', NS, '-f', '-'], file);
      assert.equal(dry.code, 0, dry.stderr);
      assert.doesNotMatch(dry.stderr, /\.absent/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/dry-user`)).status, 404, 'a dry run stores nothing');
      const real = await s.kubectl(s.runnerA.identity, ['apply', '-n', NS, '-f', '-'], file);
      assert.equal(real.code, 0, real.stderr);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/dry-user`)).status, 200);
    });

    test("in alpha's bound namespace, alpha's pod may name a claim and a Secret not created yet: no other environment can create them there", async () => {
      const s = suite();
      const pod = sandboxPod('bound-early', { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'bound-later' } }], containers: [{ ...MAIN, envFrom: [{ secretRef: { name: 'bound-later' } }] }] } });
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod);
      assert.equal(answer.status, 201, answer.text);
    });
  });

  describe("NetworkPolicies act on their own environment's pods only", () => {
    const selecting = (name: string, podSelector: Spec) => ({ ...networkPolicy(name), spec: { podSelector, policyTypes: ['Ingress'] } });

    test("beta's policy selecting alpha's pods is refused; its own is stored scoped to beta's pods, and cannot be widened", async () => {
      const s = suite();
      const aimed = await s.api(s.janitorB, 'POST', PATHS.NetworkPolicy(NS), selecting('beta-aims', { matchLabels: { [KEYS.environment]: 'alpha' } }));
      refused(aimed, 'selector.scope', /selects pods of environment "alpha"; environment "beta" selects only its own pods/);
      const own = await s.api(s.janitorB, 'POST', PATHS.NetworkPolicy(NS), selecting('beta-own', {}));
      assert.equal(own.status, 201, own.text);
      assert.deepEqual((own.body as { spec: Spec }).spec.podSelector, { matchLabels: { [KEYS.environment]: 'beta' } });
      // Dropping the scope gets it back (as a server-side apply would drop it), with a warning; naming alpha is refused.
      const widened = await s.kubectl(s.janitorB, ['patch', 'networkpolicy', 'beta-own', '-n', NS, '--type=json', '-p', JSON.stringify([{ op: 'remove', path: '/spec/podSelector/matchLabels' }])]);
      assert.equal(widened.code, 0, widened.stderr);
      assert.match(widened.stderr, /Deed kept deed\.dev\/environment: "beta" in spec\.podSelector/);
      assert.deepEqual((await s.api(s.admin, 'GET', `${PATHS.NetworkPolicy(NS)}/beta-own`)).body.spec.podSelector, { matchLabels: { [KEYS.environment]: 'beta' } });
      const aimedLater = await s.kubectl(s.janitorB, ['patch', 'networkpolicy', 'beta-own', '-n', NS, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: `/spec/podSelector/matchLabels/${KEYS.environment.replace('/', '~1')}`, value: 'alpha' }])]);
      assert.notEqual(aimedLater.code, 0);
      assert.match(aimedLater.stderr, /\[selector\.scope\]/);
    });

    test('a principal of no environment selecting every pod of a shared namespace selects every pod of no environment but the runners; it may exclude the environments itself', async () => {
      const s = suite();
      await s.bindSandboxRole(NS, [['plain', 'stranger']]);
      const all = await s.api(stranger, 'POST', PATHS.NetworkPolicy(NS), selecting('none-all', {}));
      assert.equal(all.status, 201, all.text);
      assert.deepEqual((all.body as { spec: Spec }).spec.podSelector, { matchLabels: { 'deed.dev/no-environment': 'true' }, matchExpressions: [{ key: KEYS.runner, operator: 'DoesNotExist' }] }, 'every pod of no environment but the runners');
      const excluding = await s.api(stranger, 'POST', PATHS.NetworkPolicy(NS), selecting('none-others', { matchExpressions: [{ key: KEYS.environment, operator: 'DoesNotExist' }] }));
      assert.equal(excluding.status, 201, excluding.text);
    });

    test("alpha's policy is scoped to alpha's pods, and alpha's manager's default-deny in its bound namespace selects all", async () => {
      const s = suite();
      const alpha = await s.api(s.runnerA.identity, 'POST', PATHS.NetworkPolicy(NS), selecting('alpha-own', { matchLabels: { app: 'agent' } }));
      assert.equal(alpha.status, 201, alpha.text);
      assert.deepEqual((alpha.body as { spec: Spec }).spec.podSelector, { matchLabels: { app: 'agent', [KEYS.environment]: 'alpha' } });
      const managed = await s.api(s.runnerController, 'POST', PATHS.NetworkPolicy('sandbox-a'), selecting('default-deny', {}));
      assert.equal(managed.status, 201, managed.text);
      assert.deepEqual((managed.body as { spec: Spec }).spec.podSelector, {});
    });
  });

  describe("a bound namespace's unstamped objects are its environment's on every door", () => {
    before(async () => {
      const s = suite();
      await s.bindSandboxRole('sandbox-a', [['plain', 'stranger']]);
      // Alpha's manager's creates are not stamped.
      for (const [kind, body] of [
        ['NetworkPolicy', { ...networkPolicy('mgr-deny'), spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } }],
        ['Secret', secret('runner-config')],
        ['PersistentVolumeClaim', claim('mgr-claim')],
        ['Pod', sandboxPod('mgr-helper')],
      ] as const) {
        const answer = await s.api(s.runnerController, 'POST', PATHS[kind]('sandbox-a'), body);
        assert.equal(answer.status, 201, answer.text);
        assert.equal(label(answer.body as KubeObject, KEYS.environment), undefined, 'a manager\'s create is not stamped');
      }
    });

    for (const who of ['beta', 'none'] as const) {
      test(`${who === 'beta' ? "beta's janitor" : 'a principal of no environment'} cannot change, delete, debug, write the status of or evict them`, async () => {
        const s = suite();
        const id = who === 'beta' ? s.janitorB : stranger;
        const rule = who === 'beta' ? 'guard.cross-environment' : 'guard.unmapped';
        const why = /this object belongs to (another|an) environment|is not known to be one of/;
        refused(await s.api(id, 'PATCH', `${PATHS.Secret('sandbox-a')}/runner-config`, { stringData: { endpoint: 'https://beta.example' } }, 'application/merge-patch+json'), rule, why);
        refused(await s.api(id, 'DELETE', `${PATHS.NetworkPolicy('sandbox-a')}/mgr-deny`), rule, why);
        refused(await s.api(id, 'DELETE', `${PATHS.PersistentVolumeClaim('sandbox-a')}/mgr-claim`), rule, why);
        const stored = (await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/mgr-helper`)).body as KubeObject;
        (stored.spec as Spec).ephemeralContainers = [{ name: `dbg-${who}`, image: 'busybox' }];
        refused(await s.api(id, 'PUT', `${PATHS.Pod('sandbox-a')}/mgr-helper/ephemeralcontainers`, stored), rule, why);
        refused(await s.api(id, 'PATCH', `${PATHS.Pod('sandbox-a')}/mgr-helper/status`, { status: { phase: 'Failed' } }, 'application/merge-patch+json'), rule, why);
        const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'mgr-helper', namespace: 'sandbox-a' } };
        refused(await s.api(id, 'POST', `${PATHS.Pod('sandbox-a')}/mgr-helper/eviction`, eviction), rule, why);
        for (const [kind, name] of [['Secret', 'runner-config'], ['NetworkPolicy', 'mgr-deny'], ['PersistentVolumeClaim', 'mgr-claim'], ['Pod', 'mgr-helper']] as const)
          assert.equal((await s.api(s.admin, 'GET', `${PATHS[kind]('sandbox-a')}/${name}`)).status, 200, `${kind} ${name} is still there`);
      });
    }

    test("alpha's runner and its manager still change and delete them", async () => {
      const s = suite();
      const patched = await s.api(s.runnerA.identity, 'PATCH', `${PATHS.Secret('sandbox-a')}/runner-config`, { stringData: { endpoint: 'https://alpha.example' } }, 'application/merge-patch+json');
      assert.equal(patched.status, 200, patched.text);
      const deleted = await s.api(s.runnerController, 'DELETE', `${PATHS.PersistentVolumeClaim('sandbox-a')}/mgr-claim`);
      assert.equal(deleted.status, 200, deleted.text);
    });
  });

  describe('the workspace is its claim in every pod', () => {
    const WS = { name: 'workspace', persistentVolumeClaim: { claimName: 'marked-ws' } };
    const DATA = { name: 'data', persistentVolumeClaim: { claimName: 'marked-ws' } };
    const pod = (name: string, spec: Spec, annotations: Record<string, string> = {}) => sandboxPod(name, { annotations, spec });
    const create = (s: Suite, body: unknown) => s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), body);

    before(async () => {
      const s = suite();
      ok('marked workspace', await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim('sandbox-a'), workspaceClaim('marked-ws')));
      ok('unmarked claim', await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim('sandbox-a'), claim('unmarked-ws')));
      const first = await create(s, pod('ws-first', { volumes: [WS], containers: [{ ...MAIN, volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] }] }));
      assert.equal(first.status, 201, first.text);
    });

    test('a second pod mounting the workspace claim as "data" into an init container or an ungranted sidecar with subPath .git is refused', async () => {
      const s = suite();
      refused(
        await create(s, pod('ws-init', { volumes: [DATA], initContainers: [{ name: 'setup', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/src' }] }], containers: [MAIN] })),
        'workspace.init-or-ephemeral',
        /init container "setup" may not mount the workspace \(volume "data" on the workspace claim marked-ws\)/,
      );
      refused(
        await create(s, pod('ws-git', { volumes: [DATA], containers: [MAIN, { name: 'sidecar', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/git', subPath: '.git' }] }] })),
        'workspace.undeclared-mount',
        /container "sidecar" mounts the workspace \(as volume "data"\) without a grant/,
      );
    });

    test('volumeDevices reach the workspace as mounts do', async () => {
      const s = suite();
      refused(
        await create(s, pod('ws-dev', { volumes: [WS], containers: [{ ...MAIN, volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] }, { name: 'sidecar', image: 'x', volumeDevices: [{ name: 'workspace', devicePath: '/dev/ws' }] }] })),
        'workspace.undeclared-mount',
      );
      refused(
        await create(s, pod('ws-dev-init', { volumes: [WS], initContainers: [{ name: 'setup', image: 'x', volumeDevices: [{ name: 'workspace', devicePath: '/dev/ws' }] }], containers: [{ ...MAIN, volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] }] })),
        'workspace.init-or-ephemeral',
      );
    });

    test('a path that climbs back into the workspace overlaps it', async () => {
      const s = suite();
      const spec = { volumes: [WS, { name: 'hooks', emptyDir: {} }], containers: [{ ...MAIN, volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] }, { name: 'sidecar', image: 'x', volumeMounts: [{ name: 'hooks', mountPath: '/x/../workspace/.git/hooks' }] }] };
      refused(await create(s, pod('ws-climb', spec)), 'workspace.overlap', /volume "hooks" mounted at "\/workspace\/\.git\/hooks" overlaps the workspace/);
    });

    test('a claim mounted as the workspace must have been marked as one; the mark cannot be taken off', async () => {
      const s = suite();
      refused(await create(s, pod('ws-unmarked', { volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: 'unmarked-ws' } }], containers: [MAIN] })), 'workspace.claim-marker', /claim unmarked-ws is mounted as the workspace but is not marked deed\.dev\/workspace/);
      const unmark = await s.kubectl(s.runnerA.identity, ['label', 'pvc', 'marked-ws', '-n', 'sandbox-a', `${KEYS.workspace}-`]);
      assert.notEqual(unmark.code, 0);
      assert.match(unmark.stderr, /\[frozen\.stamps\]/);
    });

    test('a granted read-only reader is admitted, under the workspace volume or any other name', async () => {
      const s = suite();
      const grant = { [KEYS.workspaceGrants]: '{"reader":"ro"}' };
      const reader = (volume: string) => ({ name: 'reader', image: 'x', volumeMounts: [{ name: volume, mountPath: '/workspace', readOnly: true }] });
      const same = await create(s, pod('ws-reader', { volumes: [WS], containers: [{ ...MAIN, volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] }, reader('workspace')] }, grant));
      assert.equal(same.status, 201, same.text);
      const other = await create(s, pod('ws-reader-data', { volumes: [DATA], containers: [MAIN, reader('data')] }, grant));
      assert.equal(other.status, 201, other.text);
    });
  });
}
