// What acts on a whole shared namespace is the platform's (issue 38). Beta, in a namespace it
// shares with alpha, tries the three attacks confirmed against a bare API server: deleting
// the namespace (the namespace controller would then delete alpha's objects), a
// ResourceQuota of `pods: 0` (and a LimitRange), and a Service whose externalIPs take the
// calls alpha's sandboxes make to an address (CVE-2020-8554). Beta holds either the tenant
// role the install renders (`deed manifests --tenant-role`) or a namespace-admin Role (every
// verb on every resource of the namespace, which RBAC resolves to the Namespace object too).
// Beside each refusal, what must keep working: alpha's own Service, alpha's quota in its
// bound namespace, the platform's (the admin here: system:masters is the default platform)
// quotas, Services with external IPs and namespace deletion.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { renderManifests } from '../../../src/install/manifests.js';
import { TENANT_ROLE } from '../../../src/install/tenant-role.js';
import type { Identity } from '../client.js';
import { collectionPath, createdOrThere as ok, eventually, KEYS, sandboxPod } from '../objects.js';
import type { Suite } from '../suite.js';
import type { Tools } from './admission.js';

const NS = 'shared-wide';
/** Created for the namespace deletion alone: the suite's shared namespaces must outlive it. */
const DOOMED = 'shared-doomed';
const PLAIN = 'wide-plain';
const MERGE = 'application/merge-patch+json';
const VAP = /ValidatingAdmissionPolicy 'deed-namespace-delete'.*denied request/;
const LABELS_VAP = /ValidatingAdmissionPolicy 'deed-namespace-labels' with binding 'deed-namespace-labels' denied request/;
const QUOTAS = (ns: string) => collectionPath('ResourceQuota', ns);
const LIMITS = (ns: string) => collectionPath('LimitRange', ns);
const SERVICES = (ns: string) => collectionPath('Service', ns);

const freeze = (name: string) => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard: { pods: '0', secrets: '0' } } });
const cap = (name: string) => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name }, spec: { limits: [{ type: 'Container', max: { memory: '1Mi' } }] } });
// What the platform or alpha may write without shutting the suite's other writes out: constraints on kinds nobody here creates.
const harmlessQuota = (name: string) => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard: { 'count/cronjobs.batch': '10' } } });
const harmlessLimits = (name: string) => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name }, spec: { limits: [{ type: 'PersistentVolumeClaim', max: { storage: '100Gi' } }] } });
const service = (name: string, externalIPs?: string[]) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...(externalIPs ? { externalIPs } : {}) } });

export function namespaceWideCases(suite: () => Suite, tools: Tools): void {
  let tenant: Identity; // sandbox-b:wide-tenant, acts for beta, bound to the tenant role in NS and DOOMED
  let nsAdmin: Identity; // sandbox-b:wide-admin, acts for beta, every verb on everything in NS, DOOMED and PLAIN
  const refusedBy = (a: { status: number; text: string; body: { message?: string } }, rule: string) => {
    assert.equal(a.status, 403, a.text);
    assert.ok(String(a.body.message).includes(`[${rule}]`), a.body.message);
  };
  const refusedByRbac = (a: { status: number; text: string; body: { message?: string } }, verb: string, resource: string) => {
    assert.equal(a.status, 403, a.text);
    assert.match(String(a.body.message), new RegExp(`cannot ${verb} resource "${resource}"`));
  };

  describe('what acts on a whole shared namespace is the platform\'s', () => {
    before(async () => {
      const s = suite();
      for (const [name, optIn] of [[NS, true], [DOOMED, true], [PLAIN, false]] as const)
        ok(`namespace ${name}`, await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: optIn ? { 'deed.dev/sandbox': 'enabled' } : {} } }));
      ok('default service account', await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } }));
      const role = renderManifests({ namespace: 'deed-system', image: 'x', tenantRole: true }).find((o) => o.metadata?.name === TENANT_ROLE)!;
      ok('tenant role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role));
      tenant = await s.newIdentity('sandbox-b', 'wide-tenant');
      nsAdmin = await s.newIdentity('sandbox-b', 'wide-admin');
      const subject = (ns: string, name: string) => ({ kind: 'ServiceAccount', namespace: ns, name });
      for (const ns of [NS, DOOMED]) {
        ok(`tenant binding in ${ns}`, await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
          metadata: { name: 'tenants' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: TENANT_ROLE },
          subjects: [subject('sandbox-b', 'wide-tenant')],
        }));
      }
      // The namespace-admin Role: beta's in every namespace here; alpha's runner's too in NS.
      for (const ns of [NS, DOOMED, PLAIN]) {
        ok(`admin role in ${ns}`, await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, { metadata: { name: 'namespace-admin' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] }));
        ok(`admin binding in ${ns}`, await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
          metadata: { name: 'namespace-admins' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'namespace-admin' },
          subjects: ns === NS ? [subject('sandbox-b', 'wide-admin'), subject('sandbox-a', 'runner')] : [subject('sandbox-b', 'wide-admin')],
        }));
      }
      // In alpha's bound namespace: quotas, limit ranges and the namespace's deletion for alpha's runner and manager, and for beta.
      ok('quota role in sandbox-a', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/sandbox-a/roles', {
        metadata: { name: 'wide-quotas' },
        rules: [
          { apiGroups: [''], resources: ['resourcequotas', 'resourcequotas/status', 'limitranges'], verbs: ['*'] },
          { apiGroups: [''], resources: ['namespaces'], verbs: ['delete', 'patch'] },
        ],
      }));
      ok('quota binding in sandbox-a', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/sandbox-a/rolebindings', {
        metadata: { name: 'wide-quotas' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'wide-quotas' },
        subjects: [subject('sandbox-a', 'runner'), subject('platform', 'runner-controller'), subject('sandbox-b', 'wide-admin')],
      }));
      const may = (sa: [string, string], attrs: Record<string, string>) =>
        s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: `system:serviceaccount:${sa[0]}:${sa[1]}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${sa[0]}`, 'system:authenticated'], resourceAttributes: attrs },
        });
      const checks: Array<[[string, string], Record<string, string>]> = [
        [['sandbox-b', 'wide-tenant'], { namespace: NS, verb: 'create', resource: 'services' }],
        [['sandbox-b', 'wide-admin'], { namespace: NS, verb: 'create', resource: 'resourcequotas' }],
        [['sandbox-b', 'wide-admin'], { namespace: DOOMED, verb: 'delete', resource: 'namespaces', name: DOOMED }],
        [['sandbox-b', 'wide-admin'], { namespace: PLAIN, verb: 'delete', resource: 'namespaces', name: PLAIN }],
        [['sandbox-b', 'wide-admin'], { namespace: 'sandbox-a', verb: 'delete', resource: 'namespaces', name: 'sandbox-a' }],
        [['sandbox-a', 'runner'], { namespace: NS, verb: 'create', resource: 'limitranges' }],
        [['sandbox-a', 'runner'], { namespace: 'sandbox-a', verb: 'delete', resource: 'namespaces', name: 'sandbox-a' }],
        [['platform', 'runner-controller'], { namespace: 'sandbox-a', verb: 'create', resource: 'resourcequotas' }],
        [['platform', 'runner-controller'], { namespace: 'sandbox-a', verb: 'patch', resource: 'namespaces', name: 'sandbox-a' }],
        [['sandbox-b', 'wide-admin'], { namespace: NS, verb: 'patch', resource: 'namespaces', name: NS }],
      ];
      for (const [sa, attrs] of checks) await eventually(`RBAC lets ${sa.join(':')} ${attrs.verb} ${attrs.resource} in ${attrs.namespace}`, async () => (await may(sa, attrs)).body?.status?.allowed === true);
    });

    test("beta's quota of pods: 0 and its limit range in a shared namespace are refused, by RBAC with the tenant role and by Deed with a namespace-admin Role; alpha keeps creating pods there", async () => {
      const s = suite();
      refusedByRbac(await s.api(tenant, 'POST', QUOTAS(NS), freeze('freeze')), 'create', 'resourcequotas');
      refusedByRbac(await s.api(tenant, 'POST', LIMITS(NS), cap('cap')), 'create', 'limitranges');
      for (const [path, body] of [[QUOTAS(NS), freeze('freeze')], [LIMITS(NS), cap('cap')]] as const) {
        const answer = await s.api(nsAdmin, 'POST', path, body);
        refusedBy(answer, 'guard.namespace-wide');
        assert.match(answer.body.message, /acts on every environment's objects in namespace shared-wide, so it is the platform's; ask the platform to write it, or use a namespace bound to your environment/);
        // A dry run gets the same answer.
        refusedBy(await s.api(nsAdmin, 'POST', `${path}?dryRun=All`, body), 'guard.namespace-wide');
      }
      assert.deepEqual((await s.api(s.admin, 'GET', QUOTAS(NS))).body.items, []);
      const pod = await s.api(s.runnerA.identity, 'POST', collectionPath('Pod', NS), sandboxPod('alpha-still-runs'));
      assert.equal(pod.status, 201, pod.text);
    });

    test('alpha, too, may not write a quota in a namespace it shares; only in its bound namespace, where it and its manager may, stamped as alpha\'s', async () => {
      const s = suite();
      refusedBy(await s.api(s.runnerA.identity, 'POST', LIMITS(NS), harmlessLimits('alpha-limits')), 'guard.namespace-wide');
      for (const [who, name] of [[s.runnerA.identity, 'alpha-quota'], [s.runnerController, 'alpha-managed-quota']] as const) {
        const created = await s.api(who, 'POST', QUOTAS('sandbox-a'), harmlessQuota(name));
        assert.equal(created.status, 201, created.text);
        if (who === s.runnerA.identity) assert.equal(created.body.metadata.labels?.[KEYS.environment], 'alpha', 'stamped by the default row');
        const changed = await s.api(who, 'PATCH', `${QUOTAS('sandbox-a')}/${name}`, { spec: { hard: { 'count/cronjobs.batch': '20' } } }, MERGE);
        assert.equal(changed.status, 200, changed.text);
        // Beta may not touch it, whatever its RBAC there says.
        refusedBy(await s.api(nsAdmin, 'DELETE', `${QUOTAS('sandbox-a')}/${name}`), 'guard.namespace-wide');
        assert.equal((await s.api(who, 'DELETE', `${QUOTAS('sandbox-a')}/${name}`)).status, 200);
      }
      // Beta's own quota in alpha's bound namespace is refused as any object of beta's there.
      refusedBy(await s.api(nsAdmin, 'POST', QUOTAS('sandbox-a'), freeze('beta-freeze')), 'guard.namespace-binding');
    });

    test("the platform's quota and limit range in a shared namespace stand: beta may neither change, rewrite the status of, nor delete them; the platform may", async () => {
      const s = suite();
      ok('platform quota', await s.api(s.admin, 'POST', QUOTAS(NS), harmlessQuota('platform-quota')));
      ok('platform limits', await s.api(s.admin, 'POST', LIMITS(NS), harmlessLimits('platform-limits')));
      const quota = `${QUOTAS(NS)}/platform-quota`;
      const limits = `${LIMITS(NS)}/platform-limits`;
      const attempts: Array<[string, string, string, unknown?]> = [
        ['quota PATCH', 'PATCH', quota, { spec: { hard: { pods: '0' } } }],
        ['quota status PATCH', 'PATCH', `${quota}/status`, { status: { hard: { 'count/cronjobs.batch': '10' }, used: { 'count/cronjobs.batch': '10' } } }],
        ['quota DELETE', 'DELETE', quota],
        ['limits PATCH', 'PATCH', limits, { spec: { limits: [{ type: 'Container', max: { memory: '1Mi' } }] } }],
        ['limits DELETE', 'DELETE', limits],
      ];
      for (const [what, method, path, body] of attempts) {
        const answer = await s.api(nsAdmin, method, path, body, MERGE);
        assert.equal(answer.status, 403, `${what}: ${answer.text}`);
        assert.ok(String(answer.body.message).includes('[guard.namespace-wide]'), `${what}: ${answer.body.message}`);
        if (method === 'DELETE') refusedByRbac(await s.api(tenant, method, path), 'delete', path.includes('limitranges') ? 'limitranges' : 'resourcequotas');
      }
      assert.deepEqual((await s.api(s.admin, 'GET', quota)).body.spec.hard, { 'count/cronjobs.batch': '10' });
      assert.equal((await s.api(s.admin, 'PATCH', quota, { spec: { hard: { 'count/cronjobs.batch': '20' } } }, MERGE)).status, 200);
      assert.equal((await s.api(s.admin, 'DELETE', quota)).status, 200);
      assert.equal((await s.api(s.admin, 'DELETE', limits)).status, 200);
    });

    test("beta's Service may not set external IPs, with the tenant role or a namespace-admin Role, at CREATE or by an UPDATE; alpha's own Service and the platform's external IPs pass", async () => {
      const s = suite();
      for (const who of [tenant, nsAdmin]) {
        const answer = await s.api(who, 'POST', SERVICES(NS), service(`steal-${who === tenant ? 'tenant' : 'admin'}`, ['203.0.113.7']));
        refusedBy(answer, 'service.external-ips');
        assert.match(answer.body.message, /spec\.externalIPs: .* may not set spec\.externalIPs \["203\.0\.113\.7"\]: kube-proxy would send traffic .*CVE-2020-8554.*ask the platform, or turn external IPs off with Kubernetes' DenyServiceExternalIPs admission plugin/);
      }
      // Beta's own Service, admitted without, may not gain one later (merge patch, then server-side apply).
      assert.equal((await s.api(tenant, 'POST', SERVICES(NS), service('beta-web'))).status, 201);
      refusedBy(await s.api(tenant, 'PATCH', `${SERVICES(NS)}/beta-web`, { spec: { externalIPs: ['203.0.113.7'] } }, MERGE), 'service.external-ips');
      const applied = await s.api(tenant, 'PATCH', `${SERVICES(NS)}/beta-web?fieldManager=beta&force=true`, service('beta-web', ['203.0.113.7']), 'application/apply-patch+yaml');
      refusedBy(applied, 'service.external-ips');
      // Alpha's ordinary Service.
      const alpha = await s.api(s.runnerA.identity, 'POST', SERVICES(NS), service('alpha-web'));
      assert.equal(alpha.status, 201, alpha.text);
      assert.equal(alpha.body.metadata.labels?.[KEYS.environment], 'alpha');
      // The platform's Service with an external IP: unstamped in a shared namespace it is the platform's, so beta may
      // not even relabel it (guard.shared-input), let alone add an address.
      const platform = await s.api(s.admin, 'POST', SERVICES(NS), service('platform-ingress', ['203.0.113.7']));
      assert.equal(platform.status, 201, platform.text);
      refusedBy(await s.api(tenant, 'PATCH', `${SERVICES(NS)}/platform-ingress`, { metadata: { labels: { team: 'beta' } } }, MERGE), 'guard.shared-input');
      refusedBy(await s.api(tenant, 'PATCH', `${SERVICES(NS)}/platform-ingress`, { spec: { externalIPs: ['203.0.113.7', '203.0.113.8'] } }, MERGE), 'service.external-ips');
      assert.deepEqual((await s.api(s.admin, 'GET', `${SERVICES(NS)}/platform-ingress`)).body.spec.externalIPs, ['203.0.113.7']);
    });

    test("the shared namespace's labels and annotations are the platform's: beta's namespace-admin may not label it for DRA admin access or privileged pods; the platform may, and a change of neither passes", async () => {
      const s = suite();
      const path = `/api/v1/namespaces/${NS}`;
      const labelsNow = async () => (await s.api(s.admin, 'GET', path)).body.metadata.labels as Record<string, string>;
      // helper-72's F2: with either label, every tenant of the namespace may claim devices in use, or run privileged pods.
      for (const [key, value] of [['resource.kubernetes.io/admin-access', 'true'], ['pod-security.kubernetes.io/enforce', 'privileged']] as const) {
        for (const at of [path, `${path}?dryRun=All`]) {
          const answer = await s.api(nsAdmin, 'PATCH', at, { metadata: { labels: { [key]: value } } }, MERGE);
          assert.equal(answer.status, 403, `${key} ${at}: ${answer.text}`);
          assert.match(answer.body.message, LABELS_VAP);
          assert.ok(String(answer.body.message).includes(`namespace ${NS} is opted in to Deed (deed.dev/sandbox=enabled) and its labels and annotations act on every environment's objects in it (here ${key}): only the platform and break-glass principals of Deed's policy may add, change or remove them: ask the platform to label or annotate the namespace.`), answer.body.message);
        }
        refusedByRbac(await s.api(tenant, 'PATCH', path, { metadata: { labels: { [key]: value } } }, MERGE), 'patch', 'namespaces');
      }
      // Any other label or annotation too, and alpha's runner (a namespace-admin here as well) is no different.
      for (const [who, body] of [[nsAdmin, { metadata: { labels: { team: 'beta' } } }], [nsAdmin, { metadata: { annotations: { note: 'beta' } } }], [s.runnerA.identity, { metadata: { labels: { team: 'alpha' } } }]] as const) {
        const answer = await s.api(who, 'PATCH', path, body, MERGE);
        assert.equal(answer.status, 403, `${who.name}: ${answer.text}`);
        assert.match(answer.body.message, LABELS_VAP);
      }
      const labels = await labelsNow();
      assert.equal(labels['resource.kubernetes.io/admin-access'], undefined);
      assert.equal(labels['pod-security.kubernetes.io/enforce'], undefined);
      // The platform (kubectl label, a GitOps annotation) may; labels and annotations it wrote are as much the platform's.
      const labelled = await s.kubectl(s.admin, ['label', 'namespace', NS, 'pod-security.kubernetes.io/warn=restricted']);
      assert.equal(labelled.code, 0, labelled.stderr);
      const annotated = await s.api(s.admin, 'PATCH', path, { metadata: { annotations: { 'platform.example/owner': 'team-platform' } } }, MERGE);
      assert.equal(annotated.status, 200, annotated.text);
      const removal = await s.api(nsAdmin, 'PATCH', path, { metadata: { labels: { 'pod-security.kubernetes.io/warn': null } } }, MERGE);
      assert.equal(removal.status, 403, removal.text);
      assert.match(removal.body.message, LABELS_VAP);
      // What changes neither labels nor annotations is RBAC's: beta's namespace-admin adds and removes a finalizer.
      const held = await s.api(nsAdmin, 'PATCH', path, { metadata: { finalizers: ['example.com/hold'] } }, MERGE);
      assert.equal(held.status, 200, held.text);
      const released = await s.api(nsAdmin, 'PATCH', path, { metadata: { finalizers: null } }, MERGE);
      assert.equal(released.status, 200, released.text);
      const cleared = await s.api(s.admin, 'PATCH', path, { metadata: { labels: { 'pod-security.kubernetes.io/warn': null }, annotations: { 'platform.example/owner': null } } }, MERGE);
      assert.equal(cleared.status, 200, cleared.text);
    });

    test("alpha's bound namespace: alpha's runner and manager may label it, but not with Pod Security's or DRA admin access's keys; beta may not label it", async () => {
      const s = suite();
      const path = '/api/v1/namespaces/sandbox-a';
      for (const [who, value] of [[s.runnerA.identity, 'x'], [s.runnerController, 'y']] as const) {
        const own = await s.api(who, 'PATCH', path, { metadata: { labels: { team: value } } }, MERGE);
        assert.equal(own.status, 200, `${who.name}: ${own.text}`);
        for (const key of ['pod-security.kubernetes.io/enforce', 'resource.kubernetes.io/admin-access']) {
          const answer = await s.api(who, 'PATCH', path, { metadata: { labels: { [key]: key.startsWith('pod-security') ? 'privileged' : 'true' } } }, MERGE);
          assert.equal(answer.status, 403, `${who.name} ${key}: ${answer.text}`);
          assert.match(answer.body.message, LABELS_VAP);
          assert.ok(String(answer.body.message).includes(`namespace sandbox-a: ${key} acts beyond one environment's objects`), answer.body.message);
        }
      }
      const beta = await s.api(nsAdmin, 'PATCH', path, { metadata: { labels: { team: 'beta' } } }, MERGE);
      assert.equal(beta.status, 403, beta.text);
      assert.match(beta.body.message, LABELS_VAP);
      assert.equal((await s.api(s.admin, 'GET', path)).body.metadata.labels.team, 'y');
      assert.equal((await s.api(s.runnerA.identity, 'PATCH', path, { metadata: { labels: { team: null } } }, MERGE)).status, 200);
    });

    test('beta may not delete the shared namespace, by RBAC with the tenant role and by the API server\'s own policy with a namespace-admin Role; alpha\'s objects stay', async () => {
      const s = suite();
      ok('alpha secret', await s.api(s.admin, 'POST', collectionPath('Secret', DOOMED), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-work' } }));
      refusedByRbac(await s.api(tenant, 'DELETE', `/api/v1/namespaces/${DOOMED}`), 'delete', 'namespaces');
      for (const path of [`/api/v1/namespaces/${DOOMED}`, `/api/v1/namespaces/${DOOMED}?dryRun=All`]) {
        const answer = await s.api(nsAdmin, 'DELETE', path);
        assert.equal(answer.status, 403, answer.text);
        assert.match(answer.body.message, VAP);
        assert.match(answer.body.message, /namespace shared-doomed is opted in to Deed \(deed\.dev\/sandbox=enabled\) and deleting it deletes every environment's objects in it: .*; ask the platform/);
      }
      const kubectl = await s.kubectl(nsAdmin, ['delete', 'namespace', DOOMED, '--wait=false']);
      assert.notEqual(kubectl.code, 0, kubectl.stdout);
      assert.match(kubectl.stderr, /Error from server \(Forbidden\): namespaces "shared-doomed" is forbidden: ValidatingAdmissionPolicy 'deed-namespace-delete' with binding 'deed-namespace-delete' denied request: namespace shared-doomed is opted in/);
      const ns = (await s.api(s.admin, 'GET', `/api/v1/namespaces/${DOOMED}`)).body;
      assert.equal(ns.metadata.deletionTimestamp, undefined, 'not terminating');
      assert.equal((await s.api(s.admin, 'GET', `${collectionPath('Secret', DOOMED)}/alpha-work`)).status, 200);
    });

    test("alpha's bound namespace: alpha's runner and manager may delete it (server dry run), beta may not", async () => {
      const s = suite();
      const path = '/api/v1/namespaces/sandbox-a?dryRun=All';
      for (const who of [s.runnerA.identity, s.runnerController]) {
        const answer = await s.api(who, 'DELETE', path);
        assert.equal(answer.status, 200, `${who.name}: ${answer.text}`);
      }
      const beta = await s.api(nsAdmin, 'DELETE', path);
      assert.equal(beta.status, 403, beta.text);
      assert.match(beta.body.message, VAP);
      assert.equal((await s.api(s.admin, 'GET', '/api/v1/namespaces/sandbox-a')).body.metadata.deletionTimestamp, undefined);
    });

    test('a namespace that has not opted in is RBAC\'s alone: beta\'s namespace-admin Role deletes it', async () => {
      const s = suite();
      const answer = await s.api(nsAdmin, 'DELETE', `/api/v1/namespaces/${PLAIN}`);
      assert.equal(answer.status, 200, answer.text);
    });

    test('the platform deletes the shared namespace, and the namespace controller finishes the deletion', async () => {
      const s = suite();
      const answer = await s.api(s.admin, 'DELETE', `/api/v1/namespaces/${DOOMED}`);
      assert.equal(answer.status, 200, answer.text);
      // Its follow-up writes (content deleted, finalizers removed) pass: the namespace goes.
      if (tools.controllers) await eventually(`namespace ${DOOMED} is gone`, async () => (await s.api(s.admin, 'GET', `/api/v1/namespaces/${DOOMED}`)).status === 404, 60_000);
    });
  });
}
