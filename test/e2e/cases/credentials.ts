// Sandbox pods get no stray credentials and no back door to the workspace: the
// ServiceAccount plugin's token comes out of pods created as clients really create them
// (automountServiceAccountToken omitted), and the workspace claim cannot be reached
// under another volume name.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { get } from '../../serve-process.js';
import { claim, eventually, KEYS, optedInNamespace, PATHS, sandboxPod, workspaceClaim } from '../objects.js';
import type { Suite } from '../suite.js';

const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- pod specs as the API server stores them
type Spec = Record<string, any>;

/** A sandbox pod as a client writes it: no automountServiceAccountToken at all. */
function omitted(name: string, spec: Spec = {}, annotations: Record<string, string> = {}) {
  const pod = sandboxPod(name, { annotations, spec });
  delete (pod.spec as Spec).automountServiceAccountToken;
  return pod;
}

function mountsAt(spec: Spec, path: string): string[] {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((list) =>
    ((spec[list] ?? []) as Spec[]).flatMap((c) => ((c.volumeMounts ?? []) as Spec[]).filter((m) => m.mountPath === path).map((m) => `${c.name}:${m.name}`)),
  );
}

const WORKSPACE = { name: 'workspace', persistentVolumeClaim: { claimName: 'cred-ws' } };
const ALIAS = { name: 'ws-alias', persistentVolumeClaim: { claimName: 'cred-ws' } };
const MAIN = { name: 'main', image: 'registry.example/agent:1', volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] };
const GRANT = { [KEYS.workspaceGrants]: '{"indexer":"ro"}' };

export function credentialCases(suite: () => Suite): void {
  describe('sandbox pods get no service-account token', () => {
    const created = async (s: Suite, pod: unknown): Promise<Spec> => {
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod);
      assert.equal(answer.status, 201, answer.text);
      const stored = await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/${(answer.body as KubeObject).metadata.name!}`);
      return (stored.body as KubeObject).spec as Spec;
    };

    test('a pod created with the field omitted is stored with automount false and no token volume or mount in any container', async () => {
      const s = suite();
      // First, what the API server itself does to such a pod (Deed leaves the administrator's alone).
      const plain = omitted('token-plain', { initContainers: [{ name: 'setup', image: 'registry.example/setup:1' }] });
      const byAdmin = await s.api(s.admin, 'POST', PATHS.Pod('sandbox-a'), plain);
      assert.equal(byAdmin.status, 201, byAdmin.text);
      const injected = (byAdmin.body as KubeObject).spec as Spec;
      assert.match(injected.volumes[0].name, /^kube-api-access-[a-z0-9]{5}$/, 'the ServiceAccount plugin added its volume');
      assert.deepEqual(mountsAt(injected, TOKEN_PATH).length, 2, 'and mounted it in the init and the main container');

      const spec = await created(s, omitted('token-omitted', { initContainers: [{ name: 'setup', image: 'registry.example/setup:1' }] }));
      assert.equal(spec.automountServiceAccountToken, false);
      assert.deepEqual((spec.volumes ?? []).filter((v: Spec) => String(v.name).startsWith('kube-api-access-')), []);
      assert.deepEqual(mountsAt(spec, TOKEN_PATH), []);
    });

    test("a pod that names the runner's own service account gets no token either", async () => {
      const s = suite();
      const spec = await created(s, omitted('token-runner-sa', { serviceAccountName: 'runner', containers: [{ name: 'main', image: 'registry.example/agent:1' }, { name: 'sidecar', image: 'registry.example/sidecar:1' }] }));
      assert.equal(spec.serviceAccountName, 'runner');
      assert.equal(spec.automountServiceAccountToken, false);
      assert.deepEqual(mountsAt(spec, TOKEN_PATH), []);
    });

    test('a client volume with a name like the plugin\'s is not removed', async () => {
      const s = suite();
      const spec = await created(s, omitted('token-lookalike', { volumes: [{ name: 'kube-api-access-mine', emptyDir: {} }], containers: [{ name: 'main', image: 'registry.example/agent:1', volumeMounts: [{ name: 'kube-api-access-mine', mountPath: '/scratch' }] }] }));
      assert.deepEqual(spec.volumes.map((v: Spec) => v.name), ['kube-api-access-mine']);
    });

    test('an explicit automountServiceAccountToken true is refused', async () => {
      const s = suite();
      const pod = sandboxPod('token-true', { spec: { automountServiceAccountToken: true } });
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[template\.service-account-token\] spec\.automountServiceAccountToken: is platform-owned: expected false, got true/);
    });

    test('a hand-written projected token volume is refused, naming the volume and the containers', async () => {
      const s = suite();
      const pod = sandboxPod('token-projected', {
        spec: {
          volumes: [{ name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }] } }],
          containers: [{ name: 'main', image: 'registry.example/agent:1', volumeMounts: [{ name: 'tok', mountPath: '/var/run/tok' }] }],
        },
      });
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[template\.service-account-token\] spec\.volumes\[name=tok\]\.projected\.sources\.serviceAccountToken: volume "tok" projects a service-account token for the API server \(no audience\) into containers main/);
    });
  });

  describe('no legacy token Secret', () => {
    test('a runner cannot create a Secret of type kubernetes.io/service-account-token for its own service account', async () => {
      const s = suite();
      const body = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 'legacy-token', annotations: { 'kubernetes.io/service-account.name': 'runner' } } };
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), body);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[secret\.service-account-token\] type: a Secret of type kubernetes\.io\/service-account-token would receive a non-expiring token of service account "runner"/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-a')}/legacy-token`)).status, 404);
    });
  });

  describe('the workspace claim under another volume name', () => {
    before(async () => {
      const s = suite();
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim('sandbox-a'), workspaceClaim('cred-ws'));
      assert.equal(answer.status, 201, answer.text);
    });

    const refused = async (name: string, pod: unknown, rule: string, message: RegExp) => {
      const s = suite();
      const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod);
      assert.equal(answer.status, 403, `${name}: ${answer.text}`);
      assert.ok(String(answer.body.message).includes(`[${rule}]`), answer.body.message);
      assert.match(answer.body.message, message);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/${name}`)).status, 404, 'nothing stored');
    };

    test('a read-only grantee mounting the claim read-write under another name is refused', async () => {
      await refused(
        'alias-rw',
        sandboxPod('alias-rw', { annotations: GRANT, spec: { volumes: [WORKSPACE, ALIAS], containers: [MAIN, { name: 'indexer', image: 'registry.example/indexer:1', volumeMounts: [{ name: 'ws-alias', mountPath: '/workspace' }] }] } }),
        'workspace.read-only',
        /container "indexer" is granted "ro" but mounts the workspace \(as volume "ws-alias"\) read-write/,
      );
    });

    test('an ungranted sidecar mounting the claim with subPath .git is refused', async () => {
      await refused(
        'alias-git',
        sandboxPod('alias-git', { spec: { volumes: [WORKSPACE, ALIAS], containers: [MAIN, { name: 'sidecar', image: 'registry.example/sidecar:1', volumeMounts: [{ name: 'ws-alias', mountPath: '/git', subPath: '.git' }] }] } }),
        'workspace.undeclared-mount',
        /container "sidecar" mounts the workspace \(as volume "ws-alias"\) without a grant/,
      );
    });

    test('an init container mounting the claim under another name is refused', async () => {
      await refused(
        'alias-init',
        sandboxPod('alias-init', { spec: { volumes: [WORKSPACE, ALIAS], containers: [MAIN], initContainers: [{ name: 'setup', image: 'registry.example/setup:1', volumeMounts: [{ name: 'ws-alias', mountPath: '/src' }] }] } }),
        'workspace.init-or-ephemeral',
        /init container "setup" may not mount the workspace \(volume "ws-alias" on the workspace claim cred-ws\)/,
      );
    });

    test('an ungranted sidecar mounting a clone of the claim is refused', async () => {
      const clone = { name: 'ws-copy', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, dataSource: { kind: 'PersistentVolumeClaim', name: 'cred-ws' } } } } };
      await refused(
        'alias-clone',
        sandboxPod('alias-clone', { spec: { volumes: [WORKSPACE, clone], containers: [MAIN, { name: 'sidecar', image: 'registry.example/sidecar:1', volumeMounts: [{ name: 'ws-copy', mountPath: '/copy' }] }] } }),
        'workspace.undeclared-mount',
        /container "sidecar" mounts the workspace \(as volume "ws-copy"\) without a grant/,
      );
    });

    test('a legitimate read-only grantee is admitted, and an ephemeral container then added with the claim under another name is refused', async () => {
      const s = suite();
      const pod = sandboxPod('alias-debug', {
        annotations: GRANT,
        spec: { volumes: [WORKSPACE, ALIAS], containers: [MAIN, { name: 'indexer', image: 'registry.example/indexer:1', volumeMounts: [{ name: 'workspace', mountPath: '/workspace', readOnly: true }] }] },
      });
      const admitted = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod);
      assert.equal(admitted.status, 201, admitted.text);
      const stored = (await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/alias-debug`)).body as KubeObject;
      (stored.spec as Spec).ephemeralContainers = [{ name: 'dbg', image: 'busybox', volumeMounts: [{ name: 'ws-alias', mountPath: '/w' }] }];
      const answer = await s.api(s.runnerA.identity, 'PUT', `${PATHS.Pod('sandbox-a')}/alias-debug/ephemeralcontainers`, stored);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[workspace\.init-or-ephemeral\] .*ephemeral container "dbg" may not mount the workspace \(volume "ws-alias" on the workspace claim cred-ws\)/);
    });
  });

  describe("claims of another environment, in a namespace both environments may use", () => {
    const NS = 'shared-ab';
    before(async () => {
      const s = suite();
      await optedInNamespace(s, NS);
      await s.bindSandboxRole(NS, [['sandbox-a', 'runner'], ['sandbox-b', 'janitor']]);
      const created = await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim(NS), workspaceClaim('alpha-ws'));
      assert.equal(created.status, 201, created.text);
    });

    const workspacePod = (name: string, claimName: string) =>
      sandboxPod(name, { spec: { volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName } }], containers: [MAIN] } });

    test("beta's pod mounting alpha's workspace claim is refused, and alpha's own pod is admitted", async () => {
      const s = suite();
      const beta = await s.api(s.janitorB, 'POST', PATHS.Pod(NS), workspacePod('beta-steals', 'alpha-ws'));
      assert.equal(beta.status, 403, beta.text);
      assert.match(beta.body.message, /\[claim\.cross-environment\] spec\.volumes\[name=workspace\]\.persistentVolumeClaim\.claimName: volume "workspace" mounts claim alpha-ws, which belongs to another environment; environment "beta" may not/);
      const alpha = await s.api(s.runnerA.identity, 'POST', PATHS.Pod(NS), workspacePod('alpha-owns', 'alpha-ws'));
      assert.equal(alpha.status, 201, alpha.text);
    });

    test("beta's claim cloning alpha's workspace is refused", async () => {
      const s = suite();
      const body = { ...claim('beta-copy'), spec: { ...claim('beta-copy').spec, dataSource: { kind: 'PersistentVolumeClaim', name: 'alpha-ws' } } };
      // The API server mirrors dataSource into dataSourceRef; Deed names the one it read first.
      const answer = await s.api(s.janitorB, 'POST', PATHS.PersistentVolumeClaim(NS), body);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[claim\.cross-environment\] spec\.dataSource(Ref)?: this claim clones claim alpha-ws, which belongs to another environment/);
      // The API server keeps a dataSourceRef of any API group, and a CSI provisioner clones on the kind alone.
      const grouped = { ...claim('beta-copy-grouped'), spec: { ...claim('beta-copy-grouped').spec, dataSourceRef: { apiGroup: 'x.example.com', kind: 'PersistentVolumeClaim', name: 'alpha-ws' } } };
      const viaGroup = await s.api(s.janitorB, 'POST', PATHS.PersistentVolumeClaim(NS), grouped);
      assert.equal(viaGroup.status, 403, viaGroup.text);
      assert.match(viaGroup.body.message, /\[claim\.cross-environment\] spec\.dataSourceRef: this claim clones claim alpha-ws, which belongs to another environment/);
    });

    test('a pod naming a claim that does not exist yet is admitted when the scheduler binds it, and refused when it names its node: no binding would judge it again', async () => {
      const s = suite();
      const pinned = workspacePod('pre-planted', 'not-yet');
      (pinned.spec as Record<string, unknown>).nodeName = 'node-1';
      const answer = await s.api(s.janitorB, 'POST', PATHS.Pod(NS), pinned);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.message, /\[claim\.absent\] .*claim not-yet does not exist/);
      const scheduled = await s.api(s.janitorB, 'POST', PATHS.Pod(NS), workspacePod('claim-later', 'not-yet-either'));
      assert.equal(scheduled.status, 201, scheduled.text);
      // Whoever creates the claim while the pod lives is judged against it: alpha may not.
      await eventuallyStatus(() => s.api(s.runnerA.identity, 'POST', `${PATHS.PersistentVolumeClaim(NS)}?dryRun=All`, claim('not-yet-either')), 403);
      assert.equal((await s.api(s.janitorB, 'DELETE', `${PATHS.Pod(NS)}/claim-later`)).status, 200);
    });

    test("alpha may not take the name of a Secret beta's live pod reads, once beta deleted it; alpha may once the pod is gone", async () => {
      const s = suite();
      const SECRETS = PATHS.Secret(NS);
      const must = (what: string, a: { status: number; text: string }, status: number) => assert.equal(a.status, status, `${what}: ${a.text}`);
      const reads = (name: string, secret: string) => sandboxPod(name, { spec: { containers: [{ name: 'main', image: 'registry.example/agent:1', envFrom: [{ secretRef: { name: secret } }] }] } });
      const alphaTakes = (dryRun: boolean) => s.api(s.runnerA.identity, 'POST', `${SECRETS}${dryRun ? '?dryRun=All' : ''}`, { metadata: { name: 'live-creds' }, stringData: { token: 'alpha' } });
      must("beta's Secret", await s.api(s.janitorB, 'POST', SECRETS, { metadata: { name: 'live-creds' }, stringData: { token: 'beta' } }), 201);
      must("beta's pod reading it", await s.api(s.janitorB, 'POST', PATHS.Pod(NS), reads('beta-reads', 'live-creds')), 201);
      must("beta's Secret deleted", await s.api(s.janitorB, 'DELETE', `${SECRETS}/live-creds`), 200);
      // The kubelet would refresh beta's volume (or its env at a restart) from alpha's Secret.
      await eventuallyStatus(() => alphaTakes(true), 403);
      const refused = await alphaTakes(false);
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.body.message, /\[reference\.live-reader\] metadata\.name: a live pod of another environment \(or of none\) in namespace shared-ab reads Secret live-creds by name, and the kubelet would hand it this one/);
      assert.doesNotMatch(refused.body.message, /beta/);
      // The same for a ConfigMap, a claim: every kind a pod reads by name. (The suite's role grants no ConfigMaps: a Role of its own.)
      must('a Role for ConfigMaps', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'live-configmaps' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get'] }] }), 201);
      must('its binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { metadata: { name: 'live-configmaps' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'live-configmaps' }, subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }] }), 201);
      await s.awaitAccess('sandbox-a:runner', { namespace: NS, verb: 'create', resource: 'configmaps' });
      must("beta's pod reading a ConfigMap and a claim not made yet", await s.api(s.admin, 'POST', PATHS.Pod(NS), sandboxPod('beta-cm', { spec: { containers: [{ name: 'main', image: 'registry.example/agent:1', envFrom: [{ configMapRef: { name: 'live-settings' } }] }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'live-data' } }] } })), 201);
      await eventuallyStatus(() => s.api(s.runnerA.identity, 'POST', `/api/v1/namespaces/${NS}/configmaps?dryRun=All`, { metadata: { name: 'live-settings' }, data: { x: 'alpha' } }), 403);
      const cmRefused = await s.api(s.runnerA.identity, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: 'live-settings' }, data: { x: 'alpha' } });
      assert.equal(cmRefused.status, 403, cmRefused.text);
      assert.match(cmRefused.body.message, /\[reference\.live-reader\] .*reads ConfigMap live-settings by name/);
      const claimRefused = await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim(NS), claim('live-data'));
      assert.equal(claimRefused.status, 403, claimRefused.text);
      assert.match(claimRefused.body.message, /\[reference\.live-reader\] .*reads PersistentVolumeClaim live-data by name/);
      // Nor may a tenant of no environment: it would write beta's pod's input.
      const stranger = await s.newIdentity('plain', 'live-stranger');
      await s.bindSandboxRole(NS, [['plain', 'live-stranger']]);
      const strangerRefused = await s.api(stranger, 'POST', SECRETS, { metadata: { name: 'live-creds' }, stringData: { token: 'stranger' } });
      assert.equal(strangerRefused.status, 403, strangerRefused.text);
      assert.match(strangerRefused.body.message, /\[reference\.live-reader\] metadata\.name: a live pod of an environment this requester does not act for in namespace shared-ab reads Secret live-creds by name/);
      // Beta's pod gone (an unbound pod is deleted at once), the name is alpha's to take.
      must("beta's pod deleted", await s.api(s.janitorB, 'DELETE', `${PATHS.Pod(NS)}/beta-reads`), 200);
      await eventuallyStatus(() => alphaTakes(true), 201);
      must("alpha's Secret", await alphaTakes(false), 201);
    });

    test("a tenant of no environment may not change what the platform's Secret holds while beta's live pod reads it; a change of its labels, and the platform's change, pass", async () => {
      const s = suite();
      const SECRETS = PATHS.Secret(NS);
      const must = (what: string, a: { status: number; text: string }, status: number) => assert.equal(a.status, status, `${what}: ${a.text}`);
      // The platform's shared input (unstamped: any environment's pods may read it), read by beta's running pod.
      must("the platform's Secret", await s.api(s.admin, 'POST', SECRETS, { metadata: { name: 'platform-token' }, stringData: { token: 'platform' } }), 201);
      must("beta's pod reading it", await s.api(s.janitorB, 'POST', PATHS.Pod(NS), sandboxPod('beta-platform', { spec: { containers: [{ name: 'main', image: 'registry.example/agent:1', envFrom: [{ secretRef: { name: 'platform-token' } }] }] } })), 201);
      const stranger = await s.newIdentity('plain', 'rewrite-stranger');
      await s.bindSandboxRole(NS, [['plain', 'rewrite-stranger']]);
      const rewrite = (dryRun: boolean) => s.api(stranger, 'PATCH', `${SECRETS}/platform-token${dryRun ? '?dryRun=All' : ''}`, { stringData: { token: 'stranger' } }, 'application/merge-patch+json');
      // Refused once Deed's index has seen beta's pod (a moment after its CREATE).
      await eventuallyStatus(() => rewrite(true), 403);
      const refused = await rewrite(false);
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.body.message, /\[reference\.live-reader\] data: a live pod of an environment this requester does not act for in namespace shared-ab reads Secret platform-token, and the kubelet would hand it what this write puts there/);
      must('a label', await s.api(stranger, 'PATCH', `${SECRETS}/platform-token`, { metadata: { labels: { team: 'x' } } }, 'application/merge-patch+json'), 200);
      must("the platform's own change", await s.api(s.admin, 'PATCH', `${SECRETS}/platform-token`, { stringData: { token: 'rotated' } }, 'application/merge-patch+json'), 200);
      must("beta's pod deleted", await s.api(s.janitorB, 'DELETE', `${PATHS.Pod(NS)}/beta-platform`), 200);
      await eventuallyStatus(() => rewrite(true), 200);
    });

    test("a tenant of no environment may not change the image pull secrets of the namespace's default service account, which go into every environment's pods; its labels it may", async () => {
      const s = suite();
      const must = (what: string, a: { status: number; text: string }, status: number) => assert.equal(a.status, status, `${what}: ${a.text}`);
      const stranger = await s.newIdentity('plain', 'pull-stranger');
      must('a Role for service accounts', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'pull-accounts' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'patch', 'update'] }] }), 201);
      must('its binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { metadata: { name: 'pull-accounts' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pull-accounts' }, subjects: [{ kind: 'ServiceAccount', namespace: 'plain', name: 'pull-stranger' }] }), 201);
      await s.awaitAccess('plain:pull-stranger', { namespace: NS, verb: 'patch', resource: 'serviceaccounts' });
      const ACCOUNT = `/api/v1/namespaces/${NS}/serviceaccounts/default`;
      const refused = await s.api(stranger, 'PATCH', ACCOUNT, { imagePullSecrets: [{ name: 'ghost-pull' }] }, 'application/merge-patch+json');
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.body.message, /\[guard\.shared-input\] imagePullSecrets: ServiceAccount shared-ab\/default carries no stamps: it is the platform's, and the API server copies its image pull secrets into every pod that runs as it/);
      must('a label', await s.api(stranger, 'PATCH', ACCOUNT, { metadata: { labels: { team: 'x' } } }, 'application/merge-patch+json'), 200);
      must("beta's pod, as the default account", await s.api(s.janitorB, 'POST', PATHS.Pod(NS), sandboxPod('beta-default-account')), 201);
    });

    test("with the pods no longer cached (shed past the memory budget), the pods that read a name are listed live: alpha is still refused", async () => {
      const s = suite();
      const SECRETS = PATHS.Secret(NS);
      const must = (what: string, a: { status: number; text: string }, status: number) => assert.equal(a.status, status, `${what}: ${a.text}`);
      must("beta's Secret", await s.api(s.janitorB, 'POST', SECRETS, { metadata: { name: 'shed-creds' }, stringData: { token: 'beta' } }), 201);
      must("beta's pod reading it", await s.api(s.janitorB, 'POST', PATHS.Pod(NS), sandboxPod('beta-reads-shed', { spec: { containers: [{ name: 'main', image: 'registry.example/agent:1', env: [{ name: 'T', valueFrom: { secretKeyRef: { name: 'shed-creds', key: 'token' } } }] }] } })), 201);
      must("beta's Secret deleted", await s.api(s.janitorB, 'DELETE', `${SECRETS}/shed-creds`), 200);
      // A budget of about a kilobyte: every kind is shed as soon as it is listed, and read from the API server.
      await s.restartDeed(undefined, ['--cache-memory', '0.001']);
      try {
        const refused = await s.api(s.runnerA.identity, 'POST', SECRETS, { metadata: { name: 'shed-creds' }, stringData: { token: 'alpha' } });
        assert.equal(refused.status, 403, refused.text);
        assert.match(refused.body.message, /\[reference\.live-reader\] .*reads Secret shed-creds by name/);
        must("alpha's Secret under a name no pod reads", await s.api(s.runnerA.identity, 'POST', SECRETS, { metadata: { name: 'shed-own' }, stringData: { token: 'alpha' } }), 201);
      } finally {
        await s.restartDeed();
      }
    });

    test("a pod naming more than the cache keeps of one pod's reads: alpha still may not take a name beta's pod or the wide pod reads, may take another, and the wide pod's binding is judged on all it names", async () => {
      const s = suite();
      const SECRETS = PATHS.Secret(NS);
      const must = (what: string, a: { status: number; text: string }, status: number) => assert.equal(a.status, status, `${what}: ${a.text}`);
      const alphaTakes = (name: string, dryRun = false) => s.api(s.runnerA.identity, 'POST', `${SECRETS}${dryRun ? '?dryRun=All' : ''}`, { metadata: { name }, stringData: { token: 'alpha' } });
      const notKept = async () => Number(/^deed_lookup_cache_pods_reads_not_kept (\S+)$/m.exec((await get(s.deed, '/metrics', { agent: false })).body)?.[1] ?? 0);
      must("alpha's Secret the wide pod names", await alphaTakes('wide-alpha'), 201);
      must("beta's Secret", await s.api(s.janitorB, 'POST', SECRETS, { metadata: { name: 'wide-creds' }, stringData: { token: 'beta' } }), 201);
      must("beta's pod reading it", await s.api(s.janitorB, 'POST', PATHS.Pod(NS), sandboxPod('beta-reads-wide', { spec: { containers: [{ name: 'main', image: 'registry.example/agent:1', envFrom: [{ secretRef: { name: 'wide-creds' } }] }] } })), 201);
      must("beta's Secret deleted", await s.api(s.janitorB, 'DELETE', `${SECRETS}/wide-creds`), 200);
      // 20 names of 253 characters and alpha's: past what the cache keeps (KEPT_READS_BYTES), so its names are kept as hashes.
      // Break-glass gets it past the CREATE's judgement, as a tenant's pod naming absent Secrets would pass.
      const long = Array.from({ length: 20 }, (_, i) => `wide-${i}-`.padEnd(253, 'x'));
      const wide = sandboxPod('wide-reads', { spec: { containers: [{ name: 'main', image: 'registry.example/agent:1', envFrom: ['wide-alpha', ...long].map((name) => ({ secretRef: { name, optional: true } })) }] } });
      must('the wide pod', await s.api(s.admin, 'POST', PATHS.Pod(NS), wide), 201);
      try {
        await eventually("Deed's cache holds the wide pod, its reads not kept", async () => (await notKept()) >= 1);
        // The readers of a name in the namespace are still told from the index: beta's pod is found there.
        const refused = await eventuallyStatus(() => alphaTakes('wide-creds', true), 403);
        assert.match(refused.body.message, /\[reference\.live-reader\] metadata\.name: a live pod of another environment \(or of none\) in namespace shared-ab reads Secret wide-creds by name/);
        must("alpha's Secret under beta's pod's name", await alphaTakes('wide-creds'), 403);
        must("alpha's Secret under a name no pod reads", await alphaTakes('wide-own'), 201);
        // And the wide pod, from the hashes of its names: a reader of one it names.
        const held = await s.api(s.runnerA.identity, 'POST', `${SECRETS}?dryRun=All`, { metadata: { name: long[7] }, stringData: { token: 'alpha' } });
        assert.equal(held.status, 403, held.text);
        assert.match(held.body.message, /\[reference\.live-reader\] metadata\.name: a live pod of another environment \(or of none\) in namespace shared-ab reads Secret wide-7-x+ by name/);
        // The wide pod is read live at its binding: it names alpha's Secret, and it is of no environment.
        const bind = await s.api(s.admin, 'POST', `${PATHS.Pod(NS)}/wide-reads/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'wide-reads' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } });
        assert.equal(bind.status, 403, bind.text);
        assert.match(bind.body.message, /\[reference\.at-binding\] pod shared-ab\/wide-reads \(of no environment\) names Secret wide-alpha, which belongs to another environment/);
      } finally {
        must('the wide pod deleted', await s.api(s.admin, 'DELETE', `${PATHS.Pod(NS)}/wide-reads`), 200);
      }
      await eventually("the wide pod gone from Deed's cache", async () => (await notKept()) === 0);
    });

    test("a pending pod of no environment is not bound to what alpha's Secret holds; alpha's pending pod is", async () => {
      const s = suite();
      const SECRETS = PATHS.Secret(NS);
      const must = (what: string, a: { status: number; text: string }, status: number) => assert.equal(a.status, status, `${what}: ${a.text}`);
      const reads = (name: string) => sandboxPod(name, { spec: { containers: [{ name: 'main', image: 'registry.example/agent:1', envFrom: [{ secretRef: { name: 'bind-creds' } }] }] } });
      const bind = (pod: string, dryRun = false) =>
        s.api(s.admin, 'POST', `${PATHS.Pod(NS)}/${pod}/binding${dryRun ? '?dryRun=All' : ''}`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: pod }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } });
      // Break-glass gets its pod past the CREATE's judgement; what the pod reads once bound is judged at the binding, by whose the pod is.
      must("alpha's Secret", await s.api(s.runnerA.identity, 'POST', SECRETS, { metadata: { name: 'bind-creds' }, stringData: { token: 'alpha' } }), 201);
      // No scheduler runs here: every pod waits unbound, as one held by schedulingGates would.
      must("break-glass's pod reading it", await s.api(s.admin, 'POST', PATHS.Pod(NS), reads('platform-waits')), 201);
      // The admin stands in for the scheduler; a dry run until Deed's cache has seen the pod.
      await eventuallyStatus(() => bind('platform-waits', true), 403);
      const refused = await bind('platform-waits');
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.body.message, /\[reference\.at-binding\] pod shared-ab\/platform-waits \(of no environment\) names Secret bind-creds, which belongs to another environment: once bound, the kubelet would hand it to this pod/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/platform-waits`)).body.spec.nodeName, undefined);
      must("alpha's pod reading it", await s.api(s.runnerA.identity, 'POST', PATHS.Pod(NS), reads('alpha-waits')), 201);
      must("alpha's pod bound", await bind('alpha-waits'), 201);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/alpha-waits`)).body.spec.nodeName, 'node-1');
    });

    test("a pod of no environment, or of beta, that kept an account's name gets no token once alpha's account takes the name; alpha's own pod does", async () => {
      const s = suite();
      const ACCOUNTS = `/api/v1/namespaces/${NS}/serviceaccounts`;
      const must = (what: string, a: { status: number; text: string }, status: number) => assert.equal(a.status, status, `${what}: ${a.text}`);
      // alpha's runner may write service accounts here (the tenant role grants it; the suite's sandbox role does not).
      must('role', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'accounts' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['*'] }] }), 201);
      must('binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { metadata: { name: 'alpha-accounts' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'accounts' }, subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }] }), 201);
      // A pod of no environment runs as ci-bot; the account goes, the pod stays (it keeps the name for life).
      must('the first ci-bot', await s.api(s.admin, 'POST', ACCOUNTS, { metadata: { name: 'ci-bot' } }), 201);
      must('the pod that keeps the name', await s.api(s.admin, 'POST', PATHS.Pod(NS), sandboxPod('kept-bot', { spec: { serviceAccountName: 'ci-bot' } })), 201);
      must('the first ci-bot deleted', await s.api(s.admin, 'DELETE', `${ACCOUNTS}/ci-bot`), 200);
      const taken = await eventuallyStatus(() => s.api(s.runnerA.identity, 'POST', ACCOUNTS, { metadata: { name: 'ci-bot' } }), 201);
      assert.equal(taken.body.metadata.labels?.[KEYS.environment], 'alpha');
      must("alpha's pod that runs as it", await s.api(s.runnerA.identity, 'POST', PATHS.Pod(NS), sandboxPod('alpha-bot', { spec: { serviceAccountName: 'ci-bot' } })), 201);
      // The kubelet asks for each pod's token as a system principal; the admin stands in for it.
      const token = async (pod: string) => {
        const uid = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/${pod}`)).body.metadata.uid as string;
        return s.api(s.admin, 'POST', `${ACCOUNTS}/ci-bot/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['https://kubernetes.default.svc'], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod, uid } } });
      };
      const kept = await token('kept-bot');
      assert.equal(kept.status, 403, kept.text);
      assert.match(kept.body.message, /\[guard\.service-account\] service account shared-ab:ci-bot is stamped for environment "alpha"; pod kept-bot is of no environment and gets no token of it/);
      must("alpha's pod's token", await token('alpha-bot'), 201);

      // The same as another environment: beta's pod keeps the name of beta's account, which beta deletes and alpha takes.
      must('beta binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { metadata: { name: 'beta-accounts' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'accounts' }, subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-b', name: 'janitor' }] }), 201);
      await eventuallyStatus(() => s.api(s.janitorB, 'POST', ACCOUNTS, { metadata: { name: 'lab-bot' } }), 201);
      must("beta's pod as lab-bot", await s.api(s.janitorB, 'POST', PATHS.Pod(NS), sandboxPod('beta-bot', { spec: { serviceAccountName: 'lab-bot' } })), 201);
      must("beta's lab-bot deleted", await s.api(s.janitorB, 'DELETE', `${ACCOUNTS}/lab-bot`), 200);
      must("alpha's lab-bot", await s.api(s.runnerA.identity, 'POST', ACCOUNTS, { metadata: { name: 'lab-bot' } }), 201);
      const uid = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/beta-bot`)).body.metadata.uid as string;
      const beta = await s.api(s.admin, 'POST', `${ACCOUNTS}/lab-bot/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['https://kubernetes.default.svc'], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'beta-bot', uid } } });
      assert.equal(beta.status, 403, beta.text);
      assert.match(beta.body.message, /service account shared-ab:lab-bot is stamped for environment "alpha"; pod beta-bot is environment "beta"'s and gets no token of it/);
    });
  });
}

/** Retries a write until it answers `status` (RBAC granted a moment ago takes effect in the API server's cache). */
async function eventuallyStatus(call: () => ReturnType<Suite['api']>, status: number, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const answer = await call();
    if (answer.status === status || Date.now() > until) {
      assert.equal(answer.status, status, answer.text);
      return answer;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
