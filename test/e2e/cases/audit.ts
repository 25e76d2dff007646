// `deed audit --write-reports` against the real API server, run as the audit's own service
// account with the RBAC `deed manifests --audit` renders: objects Deed never judged (written
// while their namespace was not opted in), a pod admitted under an older policy, an orphan
// whose runner is gone and a valid sandbox each get the expected PolicyReport results; a
// second run replaces the report; deleting the objects clears it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { KubernetesObject } from '@kubernetes/client-node';
import { AUDIT_NAME, renderManifests } from '../../../src/install/manifests.js';
import { policyReportCrd } from '../../../src/install/policy-report-crd.js';
import { run, type Identity } from '../client.js';
import { eventually, KEYS, LEASES, PATHS, runLease, sandboxPod, secret, standInCrd } from '../objects.js';
import { about as reapedAbout, reap } from './reaper.js';
import { DEED_NAMESPACE, type Runner, type Suite } from '../suite.js';
import { helm } from '../helm.js';
import { ROOT } from '../../serve-process.js';

const LIVE = 'audit-live';
const LATE = 'audit-late';
const REPORTS = (ns: string) => `/apis/wgpolicyk8s.io/v1alpha2/namespaces/${ns}/policyreports`;

interface Result {
  source: string;
  policy: string;
  rule: string;
  result: string;
  message: string;
  resources?: Array<{ kind: string; name: string; namespace: string; uid: string }>;
  properties?: Record<string, string>;
}
interface Report {
  metadata: { name: string; resourceVersion: string; labels: Record<string, string>; annotations: Record<string, string> };
  summary: Record<string, number>;
  results: Result[];
}

async function audit(s: Suite, who: Identity, args: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, [
    '--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'audit',
    '--kubeconfig', who.kubeconfig!, '--config', s.policyFile, '--deed-namespace', DEED_NAMESPACE, '--write-reports', '-o', 'json', '--timeout', '10', ...args,
  ]);
}

async function report(s: Suite, ns: string): Promise<Report | undefined> {
  const answer = await s.api(s.admin, 'GET', `${REPORTS(ns)}/deed-audit`);
  if (answer.status === 404) return undefined;
  assert.equal(answer.status, 200, answer.text);
  return answer.body as Report;
}

const liveReport = async (s: Suite) => (await report(s, LIVE))!;

/** The results about one object, by rule. */
function about(r: Report, name: string): Map<string, Result> {
  return new Map(r.results.filter((x) => x.resources?.[0]?.name === name).map((x) => [x.rule, x]));
}

export function auditCases(suite: () => Suite, tools: { helm: boolean }): void {
  describe('deed audit in a real API server', () => {
    let auditor: Identity;
    let leaker: Runner;

    before(async () => {
      const s = suite();
      const must = async (what: string, p: Promise<{ status: number; text: string }>) => {
        const a = await p;
        assert.ok(a.status < 300, `${what}: ${a.status} ${a.text}`);
      };
      // The CRD, as the chart ships it, and the audit's own account and RBAC, as rendered.
      await must('PolicyReport CRD', s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', policyReportCrd()));
      await eventually('the PolicyReport API is served', async () => (await s.api(s.admin, 'GET', '/apis/wgpolicyk8s.io/v1alpha2/policyreports')).status === 200);
      const rendered = renderManifests({ namespace: DEED_NAMESPACE, image: 'deed:e2e', audit: {} }).filter((o: KubernetesObject) => o.metadata?.name === AUDIT_NAME);
      for (const o of rendered) {
        if (o.kind === 'ClusterRole') await must('audit role', s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', o));
        if (o.kind === 'ClusterRoleBinding') await must('audit binding', s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', o));
      }
      auditor = await s.newIdentity(DEED_NAMESPACE, AUDIT_NAME);

      for (const [name, optIn] of [[LIVE, true], [LATE, false]] as const) {
        await must(`namespace ${name}`, s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name, labels: optIn ? { 'deed.dev/sandbox': 'enabled' } : {} } }));
        if (!s.cp.controllers) await must(`default service account in ${name}`, s.api(s.admin, 'POST', `/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'default' } }));
      }
      await s.bindSandboxRole(LIVE, [['sandbox-a', 'runner']]);

      // Under an older policy that only audited the restart policy, a pod that breaks it is admitted.
      const current = readFileSync(s.policyFile, 'utf8');
      const older = parse(current) as Record<string, unknown>;
      older.rules = { 'template.restart-policy': 'audit' };
      await s.restartDeed(stringify(older));
      try {
        await must('old-policy pod', s.api(s.runnerA.identity, 'POST', PATHS.Pod(LIVE), sandboxPod('old-policy-pod', { spec: { restartPolicy: 'Never' } })));
      } finally {
        await s.restartDeed(current);
      }

      // A valid sandbox: its runner lives.
      await must('valid pod', s.api(s.runnerA.identity, 'POST', PATHS.Pod(LIVE), sandboxPod('valid-sandbox')));
      await must('valid secret', s.api(s.runnerA.identity, 'POST', PATHS.Secret(LIVE), secret('valid-creds')));
      // An orphan: its runner writes it where no owner reference can reach (another namespace), then goes.
      leaker = await s.newRunner('sandbox-a', 'runner-audit-leak');
      await must('orphan secret', s.api(leaker.identity, 'POST', PATHS.Secret(LIVE), secret('orphan-creds')));
      await must('runner gone', s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-audit-leak`, { gracePeriodSeconds: 0 }));

      // Written where Deed does not review: a Secret with a forged attestation, and a pod whose
      // stamps were copied from the valid sandbox (and whose spec the template forbids).
      const valid = (await s.api(s.admin, 'GET', `${PATHS.Pod(LIVE)}/valid-sandbox`)).body as KubernetesObject;
      await must('forged secret', s.api(s.admin, 'POST', PATHS.Secret(LATE), {
        ...secret('forged-creds'),
        metadata: {
          name: 'forged-creds',
          labels: { [KEYS.managed]: 'true', [KEYS.environment]: 'alpha' },
          annotations: { [KEYS.createNonce]: 'ab'.repeat(32), [KEYS.attestation]: `v1:${'A'.repeat(43)}` },
        },
      }));
      const copied = sandboxPod('copied-pod', { spec: { restartPolicy: 'Never' } });
      await must('copied pod', s.api(s.admin, 'POST', PATHS.Pod(LATE), { ...copied, metadata: { name: 'copied-pod', labels: valid.metadata!.labels, annotations: valid.metadata!.annotations } }));
    });

    test('stamps where Deed does not review are reported as such, and nothing else there is judged', async () => {
      const s = suite();
      const result = await audit(s, auditor, ['--namespace', LATE]);
      assert.equal(result.code, 0, result.stderr);
      const r = (await report(s, LATE))!;
      for (const name of ['forged-creds', 'copied-pod']) {
        const results = about(r, name);
        assert.deepEqual([...results.keys()], ['scope.outside-review'], name);
        assert.equal(results.get('scope.outside-review')!.result, 'warn');
      }
      assert.deepEqual(r.summary, { pass: 0, fail: 0, warn: 2, error: 0, skip: 0 });
    });

    test('after opt-in, each object gets the expected results: forged stamps, a copied pod, a pod of an older policy, an orphan, a valid sandbox', async () => {
      const s = suite();
      assert.equal((await s.api(s.admin, 'PATCH', `/api/v1/namespaces/${LATE}`, { metadata: { labels: { 'deed.dev/sandbox': 'enabled' } } }, 'application/merge-patch+json')).status, 200);
      const result = await audit(s, auditor);
      assert.equal(result.code, 0, result.stderr);
      const summary = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
      assert.equal(summary.type, 'summary');
      assert.equal(summary.reportErrors, 0);
      // The log line: the run's metrics, for a CronJob no one scrapes.
      const log = result.stderr.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'audit finished')!;
      for (const k of ['startedAt', 'durationSeconds', 'pass', 'fail', 'warn', 'error', 'skip']) assert.ok(k in log, k);

      const late = (await report(s, LATE))!;
      const forged = about(late, 'forged-creds');
      assert.equal(forged.get('stamps.attestation')!.result, 'fail');
      assert.match(forged.get('stamps.attestation')!.message, /do not verify/);
      assert.equal(forged.get('reaper.verdict')!.properties!.code, 'attestation-invalid');
      const copied = about(late, 'copied-pod');
      assert.equal(copied.get('stamps.attestation')!.result, 'fail');
      assert.equal(copied.get('template.restart-policy')!.result, 'fail');

      const live = (await report(s, LIVE))!;
      assert.equal(live.metadata.labels['app.kubernetes.io/component'], 'audit');
      assert.ok(live.metadata.annotations['deed.dev/audit-started-at']);
      assert.ok(Number(live.metadata.annotations['deed.dev/audit-duration-seconds']) >= 0);
      assert.ok(live.results.every((x) => x.source === 'deed'));
      const old = about(live, 'old-policy-pod');
      assert.equal(old.get('stamps.attestation')!.result, 'pass');
      assert.equal(old.get('stamps.attestation')!.properties!.keyId, 'key');
      assert.equal(old.get('template.restart-policy')!.result, 'fail');
      assert.equal(old.get('template.restart-policy')!.properties!.mode, 'deny');
      const orphan = about(live, 'orphan-creds');
      assert.equal(orphan.get('stamps.attestation')!.result, 'pass');
      assert.equal(orphan.get('reaper.verdict')!.result, 'warn');
      assert.equal(orphan.get('reaper.verdict')!.properties!.code, 'owner-gone');
      const pod = about(live, 'valid-sandbox');
      assert.equal(pod.get('stamps.attestation')!.result, 'pass');
      assert.equal(pod.get('rules.content')!.result, 'pass');
      assert.equal(pod.get('reaper.verdict')!.properties!.code, 'owner-running');
      assert.equal(about(live, 'valid-creds').get('reaper.verdict')!.result, 'pass');

      const counted = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 } as Record<string, number>;
      for (const x of live.results) counted[x.result]!++;
      assert.deepEqual(live.summary, counted);
    });

    test("an operator's configuration stored before guard.operator-identity is reported: stamped for an environment, it fails; unstamped (perhaps the platform's), it warns; one naming its own account passes", async () => {
      const s = suite();
      // ACRAccessToken: an External Secrets generator no other case installs.
      const group = 'generators.external-secrets.io';
      const path = `/apis/${group}/v1alpha1/namespaces/${LIVE}/acraccesstokens`;
      const crd = await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group, version: 'v1alpha1', plural: 'acraccesstokens', kind: 'ACRAccessToken' }));
      assert.equal(crd.status, 201, crd.text);
      await eventually('the ACRAccessToken API is served', async () => (await s.api(s.admin, 'GET', path)).status === 200);
      const role = { metadata: { name: 'audit-acr-writer' }, rules: [{ apiGroups: [group], resources: ['acraccesstokens'], verbs: ['*'] }] };
      assert.equal((await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${LIVE}/roles`, role)).status, 201);
      const binding = { metadata: { name: 'audit-acr-writer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'audit-acr-writer' }, subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }] };
      assert.equal((await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${LIVE}/rolebindings`, binding)).status, 201);
      await s.awaitAccess('sandbox-a:runner', { namespace: LIVE, verb: 'create', group, resource: 'acraccesstokens' });
      const token = (name: string, auth: Record<string, unknown>) => ({ apiVersion: `${group}/v1alpha1`, kind: 'ACRAccessToken', metadata: { name }, spec: { registry: 'r.azurecr.io', auth } });
      const workload = (account?: string) => ({ workloadIdentity: account === undefined ? {} : { serviceAccountRef: { name: account } } });

      // Alpha's, stamped, once naming its own account; then the platform (break-glass here) takes
      // the account out, as an older Deed let anyone do. Alpha may not write that itself now.
      const stamped = await s.api(s.runnerA.identity, 'POST', path, token('alpha-acr', workload('reader')));
      assert.equal(stamped.status, 201, stamped.text);
      assert.equal(stamped.body.metadata.labels[KEYS.environment], 'alpha');
      const refused = await s.api(s.runnerA.identity, 'POST', path, token('alpha-acr-own', workload()));
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.text, /guard\.operator-identity/);
      const patched = await s.api(s.admin, 'PATCH', `${path}/alpha-acr`, { spec: { auth: { workloadIdentity: { serviceAccountRef: null } } } }, 'application/merge-patch+json');
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.metadata.labels[KEYS.environment], 'alpha', 'the stamps stay');
      assert.equal((await s.api(s.admin, 'POST', path, token('unstamped-acr', workload()))).status, 201);
      assert.equal((await s.api(s.runnerA.identity, 'POST', path, token('named-acr', workload('reader')))).status, 201);

      const result = await audit(s, auditor, ['--namespace', LIVE]);
      assert.equal(result.code, 0, result.stderr);
      const live = await liveReport(s);
      const alpha = about(live, 'alpha-acr').get('guard.operator-identity')!;
      assert.equal(alpha.result, 'fail');
      assert.deepEqual(alpha.properties, { mode: 'deny', path: 'spec.auth.workloadIdentity', environment: 'alpha' });
      assert.match(alpha.message, /sign in to the registry with its own federated token.*name a service account of your own \(serviceAccountRef\)\. Stamped for environment "alpha"/);
      assert.equal(alpha.resources![0]!.kind, 'ACRAccessToken');
      assert.equal(about(live, 'unstamped-acr').get('guard.operator-identity')!.result, 'warn');
      assert.equal(about(live, 'named-acr').get('rules.operator-config')!.result, 'pass');
    });

    test("what names alpha's hostnames is reported (route.hostnames): alpha's own Ingress passes, an unstamped one (perhaps the platform's) warns, and one outside the review scope warns in its namespace's report", async () => {
      const s = suite();
      const OUT = 'audit-hosts';
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: OUT } })).status, 201);
      const role = { metadata: { name: 'audit-ingress-writer' }, rules: [{ apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['*'] }] };
      assert.equal((await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${LIVE}/roles`, role)).status, 201);
      const binding = { metadata: { name: 'audit-ingress-writer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'audit-ingress-writer' }, subjects: [{ kind: 'ServiceAccount', namespace: 'sandbox-a', name: 'runner' }] };
      assert.equal((await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${LIVE}/rolebindings`, binding)).status, 201);
      await s.awaitAccess('sandbox-a:runner', { namespace: LIVE, verb: 'create', group: 'networking.k8s.io', resource: 'ingresses' });
      // A host and no backend: the hostname is what is judged.
      const ingress = (name: string, host: string) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name }, spec: { rules: [{ host }] } });
      const ingresses = (ns: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`;
      const own = await s.api(s.runnerA.identity, 'POST', ingresses(LIVE), ingress('alpha-web', 'web.alpha.sandboxes.test'));
      assert.equal(own.status, 201, own.text);
      assert.equal(own.body.metadata.labels[KEYS.environment], 'alpha');
      // The platform (break-glass here) may name them, in the review scope and outside it.
      assert.equal((await s.api(s.admin, 'POST', ingresses(LIVE), ingress('platform-login', 'login.alpha.sandboxes.test'))).status, 201);
      assert.equal((await s.api(s.admin, 'POST', ingresses(OUT), ingress('outside-login', 'login.alpha.sandboxes.test'))).status, 201);

      const result = await audit(s, auditor);
      assert.equal(result.code, 0, result.stderr);
      const live = await liveReport(s);
      assert.equal(about(live, 'alpha-web').get('route.hostnames')!.result, 'pass');
      const unstamped = about(live, 'platform-login').get('route.hostnames')!;
      assert.equal(unstamped.result, 'warn');
      assert.deepEqual(unstamped.properties, { mode: 'deny', path: 'spec.rules[0].host', environment: 'alpha' });
      assert.match(unstamped.message, /^spec\.rules\[0\]\.host: login\.alpha\.sandboxes\.test is environment "alpha"'s hostname \(\*\.alpha\.sandboxes\.test\): the ingress controller would send .*Carries no environment's stamps/);
      assert.equal(unstamped.resources![0]!.kind, 'Ingress');
      const outside = about((await report(s, OUT))!, 'outside-login').get('route.hostnames')!;
      assert.equal(outside.result, 'warn');
      assert.match(outside.message, /In namespace audit-hosts, outside the review scope/);
      // Gone from outside the scope (the later runs here clear that report); the review scope's stay for the runs that follow.
      assert.equal((await s.api(s.admin, 'DELETE', `${ingresses(OUT)}/outside-login`)).status, 200);
    });

    test('a second run replaces the report: one report of Deed\'s per namespace, written again', async () => {
      const s = suite();
      const first = (await report(s, LIVE))!;
      const result = await audit(s, auditor);
      assert.equal(result.code, 0, result.stderr);
      const second = (await report(s, LIVE))!;
      assert.notEqual(second.metadata.resourceVersion, first.metadata.resourceVersion);
      assert.deepEqual(second.summary, first.summary);
      const listed = await s.api(s.admin, 'GET', REPORTS(LIVE));
      assert.deepEqual((listed.body.items as Report[]).map((i) => i.metadata.name), ['deed-audit']);
    });

    test('with --report-api openreports the same results go to an openreports.io Report, under the RBAC deed manifests renders for it', async () => {
      const s = suite();
      const crd = policyReportCrd() as unknown as { metadata: { name: string }; spec: { group: string; names: Record<string, unknown>; versions: Array<{ name: string }> } };
      crd.metadata.name = 'reports.openreports.io';
      crd.spec.group = 'openreports.io';
      crd.spec.names = { kind: 'Report', listKind: 'ReportList', plural: 'reports', singular: 'report' };
      crd.spec.versions[0]!.name = 'v1alpha1';
      const created = await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
      assert.equal(created.status, 201, created.text);
      await eventually('the Report API is served', async () => (await s.api(s.admin, 'GET', '/apis/openreports.io/v1alpha1/reports')).status === 200);
      // The role rendered for openreports, under a name of its own beside the wgpolicyk8s one.
      const role = renderManifests({ namespace: DEED_NAMESPACE, image: 'x', audit: { reportApi: 'openreports' } }).find((o: KubernetesObject) => o.kind === 'ClusterRole' && o.metadata?.name === AUDIT_NAME)!;
      const rules = (role as unknown as { rules: Array<{ apiGroups: string[] }> }).rules.filter((r) => r.apiGroups.includes('openreports.io'));
      assert.equal(rules.length, 1);
      assert.equal((await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name: 'deed-audit-openreports' }, rules })).status, 201);
      const binding = { metadata: { name: 'deed-audit-openreports' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'deed-audit-openreports' }, subjects: [{ kind: 'ServiceAccount', name: AUDIT_NAME, namespace: DEED_NAMESPACE }] };
      assert.equal((await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding)).status, 201);
      await eventually('RBAC lets the audit write Reports', async () => {
        const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: `system:serviceaccount:${DEED_NAMESPACE}:${AUDIT_NAME}`, resourceAttributes: { namespace: LIVE, verb: 'create', group: 'openreports.io', resource: 'reports' } } };
        return (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true;
      });

      const result = await audit(s, auditor, ['--report-api', 'openreports', '--namespace', LIVE]);
      assert.equal(result.code, 0, result.stderr);
      const answer = await s.api(s.admin, 'GET', `/apis/openreports.io/v1alpha1/namespaces/${LIVE}/reports/deed-audit`);
      assert.equal(answer.status, 200, answer.text);
      const report = answer.body as Report;
      assert.deepEqual(report.summary, (await liveReport(s)).summary);
      assert.equal(about(report, 'orphan-creds').get('reaper.verdict')!.properties!.code, 'owner-gone');
    });

    test('the audit account can read and report, but not change a sandbox object', async () => {
      const s = suite();
      const del = await s.api(auditor, 'DELETE', `${PATHS.Secret(LIVE)}/valid-creds`);
      assert.equal(del.status, 403, del.text);
      const read = await s.api(auditor, 'GET', `${PATHS.Secret(LIVE)}/valid-creds`);
      assert.equal(read.status, 403, read.text);
    });

    test('deleting the objects clears the report', async () => {
      const s = suite();
      for (const [kind, name] of [['Secret', 'forged-creds'], ['Pod', 'copied-pod']] as const) {
        const answer = await s.api(s.admin, 'DELETE', `${PATHS[kind](LATE)}/${name}`, { gracePeriodSeconds: 0 });
        assert.equal(answer.status, 200, answer.text);
      }
      await eventually('the objects are gone', async () => (await s.api(s.admin, 'GET', `${PATHS.Pod(LATE)}/copied-pod`)).status === 404);
      const result = await audit(s, auditor);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(await report(s, LATE), undefined);
      assert.ok(await report(s, LIVE), 'the other namespace keeps its report');
    });

    test('the chart with audit.enabled and installCRDs renders the CRD, RBAC and CronJob deed manifests --audit does, and the API server accepts them', { skip: tools.helm ? false : 'needs helm in KUBEBUILDER_ASSETS' }, async () => {
      const s = suite();
      const ns = 'helm-audit';
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
      const rendered = await helm(s, 'helm-audit', ['template', 'chart-audit', join(ROOT, 'manifests/helm/deed'), '-n', ns, '--skip-tests', '--set', 'audit.enabled=true', '--set', 'audit.installCRDs=true']);
      assert.equal(rendered.code, 0, rendered.stderr);
      const docs = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as KubernetesObject & Record<string, unknown>).filter(Boolean);
      const expected = renderManifests({ namespace: ns, image: 'x', audit: { installCrd: true } });
      // The release "chart-audit" names its objects chart-audit-deed-*; deed manifests names them deed-*.
      const pick = (objects: Array<KubernetesObject & Record<string, unknown>>, kind: string, name: string) => objects.find((o) => o.kind === kind && (kind === 'CustomResourceDefinition' || o.metadata?.name === name));
      const ours = expected as Array<KubernetesObject & Record<string, unknown>>;
      assert.deepEqual(pick(docs, 'CustomResourceDefinition', ''), JSON.parse(JSON.stringify(policyReportCrd())));
      assert.deepEqual(pick(docs, 'ClusterRole', 'chart-audit-deed-audit')!.rules, pick(ours, 'ClusterRole', AUDIT_NAME)!.rules);
      const args = (o: KubernetesObject | undefined) => (o as { spec: { jobTemplate: { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } } } }).spec.jobTemplate.spec.template.spec.containers[0]!.args;
      assert.deepEqual(args(pick(docs, 'CronJob', 'chart-audit-deed-audit')), args(pick(ours, 'CronJob', AUDIT_NAME)));
      const applied = await s.kubectl(s.admin, ['apply', '--dry-run=server', '-n', ns, '-f', '-'], rendered.stdout);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /cronjob\.batch\/chart-audit-deed-audit created \(server dry run\)/);
    });
  });

  describe('deed audit and deed reap under a custom label prefix', () => {
    const NS = 'audit-prefix';
    const PREFIX = 'sandbox.example.com';
    let runner: Runner;
    let original: string;

    before(async () => {
      const s = suite();
      original = readFileSync(s.policyFile, 'utf8');
      await s.restartDeed(stringify({ ...(parse(original) as Record<string, unknown>), labelPrefix: PREFIX }));
      const made = await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } });
      assert.equal(made.status, 201, made.text);
      if (!s.cp.controllers) assert.equal((await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } })).status, 201);
      await s.bindSandboxRole(NS, [['sandbox-a', 'runner']]);
      runner = await s.newRunner('sandbox-a', 'runner-audit-prefix');
    });
    after(async () => suite().restartDeed(original));

    test("a live object naming its run's freshly renewed Lease: both keep it (the audit read the Lease's stamps under the policy's prefix, not deed.dev's)", async () => {
      const s = suite();
      const lease = await s.api(runner.identity, 'POST', LEASES(NS), runLease({ name: 'prefix-run', renewTime: new Date(), durationSeconds: 3600 }));
      assert.equal(lease.status, 201, lease.text);
      assert.equal(lease.body.metadata.labels?.[`${PREFIX}/environment`], 'alpha');
      const creds = await s.api(runner.identity, 'POST', PATHS.Secret(NS), secret('prefix-live-creds', { [`${PREFIX}/run-lease`]: 'prefix-run' }));
      assert.equal(creds.status, 201, creds.text);
      const reaped = await reap(s, s.admin.kubeconfig!, ['--namespace', NS]);
      assert.equal(reapedAbout(reaped.lines, 'prefix-live-creds')?.code, 'owner-running');
      const audited = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'audit', '--kubeconfig', s.admin.kubeconfig!, '--config', s.policyFile, '--deed-namespace', DEED_NAMESPACE, '-o', 'json', '--timeout', '10', '--namespace', NS]);
      const line = audited.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; object?: { name: string }; results?: Result[] }).find((o) => o.type === 'object' && o.object?.name === 'prefix-live-creds');
      const verdict = line?.results?.find((r) => r.properties?.code !== undefined);
      assert.deepEqual([verdict?.properties?.action, verdict?.properties?.code], ['keep', 'owner-running'], JSON.stringify(verdict));
    });
  });
}
