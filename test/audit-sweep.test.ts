// One audit run over an in-memory cluster: which reports it writes, replaces and deletes,
// and what it keeps when a list fails (an empty answer proves nothing). The API server's
// own behaviour is in test/e2e/cases/audit.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../src/admission/types.js';
import { audit } from '../src/audit/sweep.js';
import { parseConfig } from '../src/config/load.js';
import type { KubeClient, ReapKind } from '../src/kube/client.js';
import { KubeError } from '../src/kube/errors.js';
import type { ReportStore } from '../src/kube/reports.js';
import { compilePolicy } from '../src/policy/policy.js';
import { ReportApiNotServed } from '../src/audit/report.js';
import { FIXTURE_POLICY, NOW, stampedMetadata, TEST_RING } from './helpers.js';
import type { LeaseRecord } from '../src/reaper/verdict.js';
import { iso, RUNNER, stamped, stampedLease } from './reaper-helpers.js';

const OPTED_IN = { 'deed.dev/sandbox': 'enabled' };

function cluster(objects: Array<{ kind: ReapKind; obj: KubeObject }>, failing: { outside?: boolean } = {}, leases: { held?: Map<string, LeaseRecord>; reads?: string[] } = {}): KubeClient {
  const namespaces = [
    { name: 'sandbox-a', labels: OPTED_IN },
    { name: 'plain', labels: {} },
  ];
  const of = (kind: ReapKind, ns: string | undefined) => objects.filter((o) => o.kind === kind && (ns === undefined || o.obj.metadata.namespace === ns)).map((o) => o.obj);
  return {
    async *listPages(kind, ns, selector) {
      if (ns === undefined && failing.outside) throw new KubeError('Other', 'injected failure');
      yield of(kind, ns).filter((o) => selector === '' || Object.hasOwn(o.metadata.labels ?? {}, selector));
    },
    async *listPodSpecPages(ns) {
      yield of('Pod', ns);
    },
    // No operator's CRD is served but those a test gives (the API server's plain 404).
    // eslint-disable-next-line require-yield
    async *listSpecPages(resource) {
      throw new KubeError('Other', `list ${resource.resource}: HTTP 404 without a NotFound status`, 404);
    },
    getLease: async (ns, name) => {
      leases.reads?.push(`${ns}/${name}`);
      const lease = leases.held?.get(`${ns}/${name}`);
      if (lease === undefined) throw new KubeError('NotFound', 'not found');
      return lease;
    },
    canDelete: async () => ({ allowed: false, reason: 'the audit deletes nothing' }),
    list: async () => [],
    getPod: async (ns, name) => {
      if (ns === RUNNER.namespace && name === RUNNER.name) return { metadata: { name, namespace: ns, uid: RUNNER.uid } };
      throw new KubeError('NotFound', 'not found');
    },
    getPodClock: async (ns, name) => {
      const pod = of('Pod', ns).find((o) => o.metadata.name === name);
      if (pod === undefined) throw new KubeError('NotFound', 'not found');
      const status = (pod.status ?? {}) as { phase?: string; startTime?: string };
      return { uid: pod.metadata.uid, ...status, activeDeadlineSeconds: (pod.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds };
    },
    async *listNamespaces(selector) {
      yield namespaces.filter((ns) => selector === '' || Object.entries(ns.labels).some(([k, v]) => `${k}=${v}` === selector));
    },
    delete: async () => {},
  };
}

function store(existing: string[]): ReportStore & { written: Map<string, Record<string, unknown>>; removed: string[] } {
  const written = new Map<string, Record<string, unknown>>();
  const removed: string[] = [];
  return {
    written,
    removed,
    namespacesWithReports: async () => existing,
    write: async (ns, report) => {
      written.set(ns, report);
      return 'created';
    },
    remove: async (ns) => {
      removed.push(ns);
      return true;
    },
  };
}

async function run(client: KubeClient, reports: ReturnType<typeof store>, policy = FIXTURE_POLICY) {
  const errors: string[] = [];
  const summary = await audit({
    client,
    ctx: { policy: compilePolicy(parseConfig(policy)), keyRing: TEST_RING },
    now: () => NOW,
    deedNamespace: 'deed-system',
    namespaces: [],
    onObject: () => {},
    onError: (m) => errors.push(m),
    reports: { store: reports, api: 'wgpolicyk8s' },
  });
  return { summary, errors };
}

describe('an audit run', () => {
  test('writes a report where results are, and deletes Deed\'s old report where nothing remains', async () => {
    const reports = store(['sandbox-a', 'gone']);
    const { summary, errors } = await run(cluster([{ kind: 'Secret', obj: stamped({ kind: 'Secret', name: 'creds' }) }]), reports);
    assert.deepEqual(errors, []);
    assert.deepEqual([...reports.written.keys()], ['sandbox-a']);
    assert.deepEqual(reports.removed, ['gone']);
    assert.equal(summary.reportsWritten, 1);
    assert.equal(summary.reportsDeleted, 1);
    assert.equal(summary.objects, 1);
  });

  test('stamps outside the review scope get a report of their own namespace', async () => {
    const reports = store([]);
    await run(cluster([{ kind: 'Secret', obj: stamped({ kind: 'Secret', name: 'copied', namespace: 'plain' }) }]), reports);
    const plain = reports.written.get('plain') as { results: Array<{ rule: string; result: string }> };
    assert.deepEqual(plain.results.map((r) => [r.rule, r.result]), [['scope.outside-review', 'warn']]);
  });

  test("the reaper's verdict reads each run lease by name, once for every object naming it", async () => {
    const fresh = stampedLease('run-held', { renewTime: iso(-5) });
    const held = new Map<string, LeaseRecord>([['sandbox-a/run-held', { labels: fresh.metadata.labels, annotations: fresh.metadata.annotations, renewedAt: iso(-5), leaseDurationSeconds: 40 }]]);
    const reads: string[] = [];
    const objects = [
      stamped({ kind: 'Secret', name: 'over-token', runLease: 'run-over' }),
      stamped({ kind: 'Secret', name: 'over-creds', runLease: 'run-over' }),
      stamped({ kind: 'Secret', name: 'held-creds', runLease: 'run-held' }),
    ].map((obj) => ({ kind: 'Secret' as const, obj }));
    const reports = store([]);
    await run(cluster(objects, {}, { held, reads }), reports);
    assert.deepEqual(reads.sort(), ['sandbox-a/run-held', 'sandbox-a/run-over']);
    const report = reports.written.get('sandbox-a') as { results: Array<{ rule: string; properties?: Record<string, string>; resources: Array<{ name: string }> }> };
    const code = (name: string) => report.results.find((r) => r.rule === 'reaper.verdict' && r.resources[0]!.name === name)?.properties?.code;
    assert.equal(code('over-token'), 'lease-gone');
    assert.equal(code('over-creds'), 'lease-gone');
    assert.equal(code('held-creds'), 'owner-running');
  });

  test("a runner recreated under its name while the audit runs is read again for what was listed after: its new run's objects are not reported as leaks", async () => {
    const OLD = { ...RUNNER, uid: '11111111-1111-4111-8111-111111111111' };
    const objects: Array<{ kind: ReapKind; obj: KubeObject }> = [{ kind: 'Secret', obj: stamped({ kind: 'Secret', name: 'old-run-token', owner: OLD }) }];
    let live: typeof RUNNER | undefined; // the old run's runner is gone
    const client: KubeClient = {
      ...cluster([]),
      async *listPages(kind, ns) {
        yield objects.filter((o) => o.kind === kind && (ns === undefined || o.obj.metadata.namespace === ns)).map((o) => o.obj);
      },
      getPod: async (ns, name) => {
        const was = live;
        // Right after this read the platform recreates runner-0, and its new run makes a NetworkPolicy.
        if (live === undefined) {
          live = RUNNER;
          objects.push({ kind: 'NetworkPolicy', obj: stamped({ kind: 'NetworkPolicy', name: 'new-run-np', owner: RUNNER }) });
        }
        if (was !== undefined && was.namespace === ns && was.name === name) return { metadata: { name, namespace: ns, uid: was.uid } };
        throw new KubeError('NotFound', 'not found');
      },
    };
    const reports = store([]);
    await run(client, reports);
    const report = reports.written.get('sandbox-a') as { results: Array<{ rule: string; properties?: Record<string, string>; resources: Array<{ name: string }> }> };
    const code = (name: string) => report.results.find((r) => r.rule === 'reaper.verdict' && r.resources[0]!.name === name)?.properties?.code;
    assert.equal(code('old-run-token'), 'owner-gone');
    assert.equal(code('new-run-np'), 'owner-running', 'listed after the read that found runner-0 gone: read again');
  });

  test('when the report kind is not served (no CRD), the run stops with one error that says how to install it, and judges nothing', async () => {
    const reports = store([]);
    reports.namespacesWithReports = async () => {
      throw new ReportApiNotServed('wgpolicyk8s');
    };
    const { summary, errors } = await run(cluster([{ kind: 'Secret', obj: stamped({ kind: 'Secret', name: 'creds' }) }]), reports);
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(errors[0]!, /does not serve wgpolicyk8s\.io\/v1alpha2 PolicyReport \(its CRD is not installed\)/);
    assert.match(errors[0]!, /audit\.installCRDs=true.*components\/policyreport-crd.*deed manifests --audit --audit-crds/);
    assert.equal(reports.written.size, 0);
    assert.equal(summary.objects, 0);
    assert.equal(summary.reportErrors, 1);
  });

  test("stores stored before guard.operator-identity: one stamped for an environment that has External Secrets sign in as itself fails, an unstamped one (maybe the platform's) warns, one naming its own account passes; operators not installed are skipped without an error", async () => {
    const store_ = (name: string, auth: Record<string, unknown>, metadata: KubeObject['metadata'] = {}): KubeObject => ({
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { ...metadata, name, namespace: 'sandbox-a', uid: `uid-${name}` },
      spec: { provider: { vault: { server: 'https://vault.example', path: 'secret', auth } } },
    });
    const stores = [
      store_('alpha-own-token', { kubernetes: { role: 'reader' } }, stampedMetadata('SecretStore', 'alpha', 'sandbox-a').metadata),
      store_('unstamped-own-token', { kubernetes: { role: 'reader' } }),
      store_('named-account', { kubernetes: { role: 'reader', serviceAccountRef: { name: 'reader' } } }),
    ];
    const listed: string[] = [];
    const base = cluster([]);
    const client: KubeClient = {
      ...base,
      async *listSpecPages(resource, ns) {
        listed.push(`${resource.resource}/${ns}`);
        if (resource.resource !== 'secretstores') yield* base.listSpecPages(resource, ns);
        else yield stores.filter((o) => o.metadata.namespace === ns);
      },
    };
    const reports = store([]);
    const { summary, errors } = await run(client, reports);
    assert.deepEqual(errors, []);
    const report = reports.written.get('sandbox-a') as { results: Array<{ rule: string; result: string; message: string; properties?: Record<string, string>; resources: Array<{ name: string; kind: string; apiVersion: string }> }> };
    const of = (name: string) => report.results.filter((r) => r.resources[0]!.name === name).map((r) => [r.rule, r.result, r.properties?.path]);
    assert.deepEqual(of('alpha-own-token'), [['guard.operator-identity', 'fail', 'spec.provider.vault.auth.kubernetes']]);
    assert.deepEqual(of('unstamped-own-token'), [['guard.operator-identity', 'warn', 'spec.provider.vault.auth.kubernetes']]);
    assert.deepEqual(of('named-account'), [['rules.operator-config', 'pass', undefined]]);
    const alpha = report.results.find((r) => r.resources[0]!.name === 'alpha-own-token')!;
    assert.deepEqual(alpha.resources[0], { apiVersion: 'external-secrets.io/v1', kind: 'SecretStore', namespace: 'sandbox-a', name: 'alpha-own-token', uid: 'uid-alpha-own-token' });
    assert.match(alpha.message, /External Secrets controller would send its own service account token to the Vault server.*name a service account \(serviceAccountRef\).*Stamped for environment "alpha"/);
    assert.equal(summary.objects, 3);
    // A kind found not served is not asked again in the next namespace (only sandbox-a is in scope here).
    assert.equal(listed.filter((l) => l.startsWith('secretstores/')).length, 1);
  });

  test("routes stored before alpha's hostnames were declared: beta's stamped route naming one fails, an unstamped one warns, alpha's own passes, one outside the review scope warns in its namespace's report; no hostnames declared, no route is listed (reviewer-101 F5)", async () => {
    const HOSTS_POLICY = { ...FIXTURE_POLICY, environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'], hostnames: ['*.alpha.sandboxes.test'] }, { ...FIXTURE_POLICY.environments![1]!, hostnames: ['beta.sandboxes.test'] }] };
    const route = (name: string, namespace: string, hostnames: string[], metadata: KubeObject['metadata'] = {}): KubeObject => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { ...metadata, name, namespace, uid: `uid-${name}` },
      spec: { parentRefs: [{ name: 'shared', namespace: 'gateways' }], hostnames },
    });
    const routes = [
      route('beta-login', 'sandbox-a', ['beta.example.net', 'login.alpha.sandboxes.test'], stampedMetadata('HTTPRoute', 'beta', 'sandbox-a').metadata),
      route('unstamped-login', 'sandbox-a', ['Login.Alpha.Sandboxes.Test']),
      route('alpha-web', 'sandbox-a', ['web.alpha.sandboxes.test'], stampedMetadata('HTTPRoute', 'alpha', 'sandbox-a').metadata),
      // Alpha's, but its wildcard is over beta's name too (reviewer-103 F1).
      route('alpha-wide', 'sandbox-a', ['*.sandboxes.test'], stampedMetadata('HTTPRoute', 'alpha', 'sandbox-a').metadata),
      route('elsewhere', 'sandbox-a', ['docs.example.com']),
      route('plain-login', 'plain', ['*.sandboxes.test']),
      route('plain-docs', 'plain', ['docs.example.com']),
    ];
    // Istio's `*` host takes every name (reviewer-101 F3).
    const meshWide: KubeObject = { apiVersion: 'networking.istio.io/v1', kind: 'VirtualService', metadata: { name: 'catch-all', namespace: 'plain', uid: 'uid-catch-all' }, spec: { hosts: ['*'], gateways: ['istio-system/shared'] } };
    const listed: string[] = [];
    const base = cluster([]);
    const client: KubeClient = {
      ...base,
      async *listSpecPages(resource, ns) {
        listed.push(`${resource.resource}/${ns ?? '*'}`);
        if (resource.resource === 'virtualservices') yield [meshWide].filter((o) => ns === undefined || o.metadata.namespace === ns);
        else if (resource.resource !== 'httproutes') yield* base.listSpecPages(resource, ns);
        else yield routes.filter((o) => ns === undefined || o.metadata.namespace === ns);
      },
    };
    const reports = store([]);
    const { errors } = await run(client, reports, HOSTS_POLICY);
    assert.deepEqual(errors, []);
    type Report = { results: Array<{ rule: string; result: string; message: string; properties?: Record<string, string>; resources: Array<{ name: string; kind: string; apiVersion: string }> }> };
    const of = (ns: string, name: string) => (reports.written.get(ns) as Report).results.filter((r) => r.resources[0]!.name === name).map((r) => [r.rule, r.result, r.properties?.path, r.properties?.environment]);
    assert.deepEqual(of('sandbox-a', 'beta-login'), [['route.hostnames', 'fail', 'spec.hostnames[1]', 'alpha']]);
    assert.deepEqual(of('sandbox-a', 'unstamped-login'), [['route.hostnames', 'warn', 'spec.hostnames[0]', 'alpha']]);
    assert.deepEqual(of('sandbox-a', 'alpha-web'), [['route.hostnames', 'pass', undefined, 'alpha']]);
    assert.deepEqual(of('sandbox-a', 'alpha-wide'), [['route.hostnames', 'fail', 'spec.hostnames[0]', 'beta']]);
    assert.deepEqual(of('sandbox-a', 'elsewhere'), []);
    assert.deepEqual(of('plain', 'plain-login'), [['route.hostnames', 'warn', 'spec.hostnames[0]', 'alpha']]);
    assert.deepEqual(of('plain', 'plain-docs'), []);
    assert.deepEqual(of('plain', 'catch-all'), [['route.hostnames', 'warn', 'spec.hosts[0]', 'alpha']]);
    const beta = (reports.written.get('sandbox-a') as Report).results.find((r) => r.resources[0]!.name === 'beta-login')!;
    assert.deepEqual(beta.resources[0], { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', namespace: 'sandbox-a', name: 'beta-login', uid: 'uid-beta-login' });
    assert.match(beta.message, /^spec\.hostnames\[1\]: login\.alpha\.sandboxes\.test is environment "alpha"'s hostname \(\*\.alpha\.sandboxes\.test\): the gateway controller would send .*; remove it, or have the platform or that environment write the object\. Stamped for environment "beta"/);
    assert.match((reports.written.get('plain') as Report).results[0]!.message, /In namespace plain, outside the review scope/);
    // Every namespace's routes once (outside the scope), then each opted-in namespace's; a kind found not served is not asked again.
    assert.deepEqual(listed.filter((l) => l.startsWith('httproutes/')), ['httproutes/*', 'httproutes/sandbox-a']);
    assert.deepEqual(listed.filter((l) => l.startsWith('ingresses/')), ['ingresses/*']);

    listed.length = 0;
    await run(client, store([]));
    assert.deepEqual(listed.filter((l) => /^(httproutes|ingresses|gateways|certificates)\//.test(l)), [], 'no hostnames declared: none listed');
  });

  test("a forbidden list of an operator's kind (an install whose RBAC predates it) is an error result for that kind, and the run says so", async () => {
    const base = cluster([]);
    const client: KubeClient = {
      ...base,
      async *listSpecPages(resource, ns) {
        if (resource.resource === 'triggerauthentications') throw new KubeError('Other', `list triggerauthentications.keda.sh in ${ns}: HTTP 403: forbidden`, 403);
        yield* base.listSpecPages(resource, ns);
      },
    };
    const reports = store([]);
    const { summary, errors } = await run(client, reports);
    assert.deepEqual(errors, ['list triggerauthentications.keda.sh in sandbox-a: HTTP 403: forbidden']);
    const report = reports.written.get('sandbox-a') as { results: Array<{ rule: string; result: string; properties?: Record<string, string> }> };
    assert.deepEqual(report.results.map((r) => [r.rule, r.result, r.properties?.kind]), [['audit.list', 'error', 'TriggerAuthentication']]);
    assert.equal(summary.error, 1);
  });

  test('when the list outside the scope fails, Deed\'s reports there are kept, and the run says so', async () => {
    const reports = store(['plain']);
    const { errors } = await run(cluster([], { outside: true }), reports);
    assert.deepEqual(reports.removed, []);
    assert.ok(errors.some((e) => /outside the review scope/.test(e)));
  });
});
