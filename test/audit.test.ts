// The audit's pure parts: the verdict on one stored object (stamps, pod rules under the
// current policy, the reaper's verdict, stamps outside the review scope), and the
// PolicyReport built from a namespace's results (bounded, summary counting everything).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../src/admission/types.js';
import { judgeObject, judgeOperatorConfig, ownerToLookUp, type AuditContext, type AuditResult } from '../src/audit/judge.js';
import { operatorConfigRows } from '../src/policy/kinds.js';
import { buildReport, MAX_REPORT_RESULTS, NamespaceResults, REPORT_LABELS, REPORT_NAME } from '../src/audit/report.js';
import { formatObject } from '../src/cli/audit.js';
import { parseConfig } from '../src/config/load.js';
import { compilePolicy } from '../src/policy/policy.js';
import { FIXTURE_POLICY, NOW, stampedMetadata, TEST_RING } from './helpers.js';
import { RUNNER, stamped } from './reaper-helpers.js';

function ctx(rules: Record<string, string> = {}): AuditContext {
  return { policy: compilePolicy(parseConfig({ ...FIXTURE_POLICY, rules })), keyRing: TEST_RING, now: NOW };
}

function withSpec(obj: KubeObject, spec: Record<string, unknown>): KubeObject {
  return { ...obj, apiVersion: 'v1', kind: 'Pod', spec };
}

const POD_SPEC = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] };
const by = (results: AuditResult[] | undefined, rule: string) => results?.find((r) => r.rule === rule);

describe('the audit verdict on one object', () => {
  test('a valid sandbox pod passes its stamps (naming the key) and the pod rules, and the reaper keeps it while its runner lives', () => {
    const pod = withSpec(stamped({ kind: 'Pod', name: 'agent' }), POD_SPEC);
    const c = ctx();
    assert.deepEqual(ownerToLookUp(pod, 'Pod', true, c), RUNNER);
    const audit = judgeObject(pod, 'Pod', true, c, { state: 'present', uid: RUNNER.uid })!;
    assert.equal(by(audit.results, 'stamps.attestation')?.result, 'pass');
    assert.equal(by(audit.results, 'stamps.attestation')?.properties?.keyId, 'key');
    assert.equal(by(audit.results, 'rules.content')?.result, 'pass');
    assert.deepEqual(by(audit.results, 'reaper.verdict')?.properties, { action: 'keep', code: 'owner-running' });
    assert.equal(by(audit.results, 'reaper.verdict')?.result, 'pass');
  });

  test("an object stamped for an environment the policy no longer defines fails stamps.environment: the webhook refuses every write of it but break-glass's and system controllers' (guard.unmapped), and no reaper sweeps it (rev-90)", () => {
    const retired: AuditContext = { ...ctx(), policy: compilePolicy(parseConfig({ ...FIXTURE_POLICY, environments: [{ id: 'beta', serviceAccounts: ['sandbox-b:*'] }] })) };
    for (const kind of ['Secret', 'PersistentVolumeClaim', 'Pod'] as const) {
      const obj = kind === 'Pod' ? withSpec(stamped({ kind, name: 'agent' }), POD_SPEC) : stamped({ kind, name: 'creds' });
      assert.equal(by(judgeObject(obj, kind, true, ctx())!.results, 'stamps.environment'), undefined, `${kind}: alpha is defined`);
      const result = by(judgeObject(obj, kind, true, retired)!.results, 'stamps.environment');
      assert.equal(result?.result, 'fail', kind);
      assert.match(result?.message ?? '', /^is stamped for environment "alpha", which the policy does not define \(retired or renamed\).*Delete it as break-glass, or put the environment back in the policy/);
      assert.deepEqual(result?.properties, { environment: 'alpha' });
    }
  });

  test('a pod admitted under an older policy fails the rule the current policy denies, and only warns under a warn override', () => {
    const pod = withSpec(stamped({ kind: 'Pod', name: 'agent' }), { ...POD_SPEC, restartPolicy: 'Never' });
    const denied = by(judgeObject(pod, 'Pod', true, ctx())!.results, 'template.restart-policy');
    assert.equal(denied?.result, 'fail');
    assert.equal(denied?.properties?.path, 'spec.restartPolicy');
    assert.equal(by(judgeObject(pod, 'Pod', true, ctx({ 'template.restart-policy': 'warn' }))!.results, 'template.restart-policy')?.result, 'warn');
    assert.equal(by(judgeObject(pod, 'Pod', true, ctx({ 'template.restart-policy': 'audit' }))!.results, 'template.restart-policy')?.properties?.mode, 'audit');
  });

  test("a pod stored before Deed judged Job labels, whose controller reference gives a Job's uid to another kind, fails with the command that deletes it; a Job's own pod and an orphan say nothing of it", () => {
    const pod = (labels: Record<string, string>, ownerReferences?: unknown[]) =>
      withSpec({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mole', namespace: 'sandbox-a', uid: 'p', labels, ...(ownerReferences ? { ownerReferences } : {}) } } as KubeObject, POD_SPEC);
    const claim = (p: KubeObject) => by(judgeObject(p, 'Pod', true, ctx())?.results, 'rules.job-claim');
    const planted = claim(pod({ 'batch.kubernetes.io/controller-uid': 'job-uid' }, [{ apiVersion: 'tekton.dev/v1', kind: 'TaskRun', name: 'run-1', uid: 'job-uid', controller: true }]));
    assert.equal(planted?.result, 'fail');
    assert.match(planted!.message, /kubectl delete pod -n sandbox-a mole/);
    assert.equal(claim(pod({ 'batch.kubernetes.io/controller-uid': 'job-uid' }, [{ apiVersion: 'batch/v1', kind: 'Job', name: 'work', uid: 'job-uid', controller: true }])), undefined);
    assert.equal(claim(pod({ 'controller-uid': 'gone-job-uid' })), undefined);
  });

  test("a pod of no environment: a runner without the runner mark warns, naming the command that marks it; a wrong mark fails; a marked runner passes; any other pod says nothing of it", () => {
    const pod = (serviceAccountName: string, labels: Record<string, string>) => withSpec({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'runner-0', namespace: 'sandbox-a', uid: 'p', labels } } as KubeObject, { ...POD_SPEC, serviceAccountName });
    const mark = (p: KubeObject) => by(judgeObject(p, 'Pod', true, ctx())?.results, 'stamps.runner-mark');
    const legacy = mark(pod('runner', {}));
    assert.equal(legacy?.result, 'warn');
    assert.match(legacy!.message, /kubectl label pod -n sandbox-a runner-0 deed\.dev\/runner=alpha/);
    assert.equal(mark(pod('runner', { 'deed.dev/runner': 'alpha' }))?.result, 'pass');
    assert.equal(mark(pod('runner', { 'deed.dev/runner': 'beta' }))?.result, 'fail');
    const unearned = mark(pod('builder', { 'deed.dev/runner': 'alpha' }));
    assert.equal(unearned?.result, 'fail');
    assert.match(unearned!.message, /kubectl label pod -n sandbox-a runner-0 deed\.dev\/runner-/);
    assert.equal(mark(pod('builder', {})), undefined);
  });

  test('a forged attestation fails the stamps, and the reaper would skip the object', () => {
    const secret = stamped({ kind: 'Secret', name: 'forged', signingKey: Buffer.from('not-deeds-key-0123456789abcdef0123456789') });
    const audit = judgeObject(secret, 'Secret', true, ctx())!;
    assert.equal(by(audit.results, 'stamps.attestation')?.result, 'fail');
    assert.deepEqual(by(audit.results, 'reaper.verdict')?.properties, { action: 'skip', code: 'attestation-invalid' });
  });

  test('an orphan whose runner is gone is one the reaper would delete: a warning', () => {
    const secret = stamped({ kind: 'Secret', name: 'orphan' });
    const reaper = by(judgeObject(secret, 'Secret', true, ctx(), { state: 'absent' })!.results, 'reaper.verdict');
    assert.equal(reaper?.result, 'warn');
    assert.equal(reaper?.properties?.code, 'owner-gone');
  });

  test('outside the review scope, stamps are reported as such and nothing else is judged; unstamped objects there are not reported', () => {
    const secret = stamped({ kind: 'Secret', name: 'elsewhere', namespace: 'plain' });
    const c = ctx();
    assert.equal(ownerToLookUp(secret, 'Secret', false, c), undefined);
    const audit = judgeObject(secret, 'Secret', false, c)!;
    assert.deepEqual(audit.results.map((r) => [r.rule, r.result]), [['scope.outside-review', 'warn']]);
    // What opting the namespace (back) in takes: back in the scope, these stamps would verify.
    assert.match(audit.results[0]!.message, /Before the namespace is opted in \(again\), delete this object or have its environment re-create it/);
    assert.equal(judgeObject({ metadata: { name: 'x', namespace: 'plain', uid: 'u' } }, 'Secret', false, c), undefined);
  });

  test('an unstamped object in scope is skipped with the reason', () => {
    const audit = judgeObject({ metadata: { name: 'runner-0', namespace: 'sandbox-a', uid: 'u' }, spec: {} }, 'Pod', true, ctx())!;
    assert.deepEqual(audit.results.map((r) => [r.rule, r.result]), [['stamps.attestation', 'skip']]);
  });

  test("the well-known ConfigMaps every namespace holds are not reported unless they carry stamps; any other unstamped ConfigMap is skipped with the reason", () => {
    const rootCa = { metadata: { name: 'kube-root-ca.crt', namespace: 'sandbox-a', uid: 'u' } };
    assert.equal(judgeObject(rootCa, 'ConfigMap', true, ctx()), undefined);
    const settings = judgeObject({ metadata: { name: 'settings', namespace: 'sandbox-a', uid: 'u' } }, 'ConfigMap', true, ctx())!;
    assert.deepEqual(settings.results.map((r) => [r.rule, r.result]), [['stamps.attestation', 'skip']]);
    const forged = { metadata: { ...rootCa.metadata, labels: { 'deed.dev/environment': 'alpha' } } };
    assert.equal(judgeObject(forged, 'ConfigMap', true, ctx())!.results.find((r) => r.rule === 'stamps.attestation')?.result, 'fail');
  });
});

describe('the PolicyReport of a namespace', () => {
  test('carries Deed\'s name, labels and run annotations, each result with its resource, and a summary of every result', () => {
    const ns = new NamespaceResults('sandbox-a');
    const pod = withSpec(stamped({ kind: 'Pod', name: 'agent' }), { ...POD_SPEC, restartPolicy: 'Never' });
    ns.addObject(judgeObject(pod, 'Pod', true, ctx(), { state: 'present', uid: RUNNER.uid })!);
    const report = buildReport('wgpolicyk8s', ns, { startedAt: NOW, durationMs: 1500, prefix: 'deed.dev' }) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
      summary: Record<string, number>;
      results: Array<{ source: string; result: string; resources: Array<{ kind: string; name: string }> }>;
    };
    assert.equal(report.apiVersion, 'wgpolicyk8s.io/v1alpha2');
    assert.equal(report.kind, 'PolicyReport');
    assert.equal(report.metadata.name, REPORT_NAME);
    assert.deepEqual(report.metadata.labels, REPORT_LABELS);
    assert.equal(report.metadata.annotations['deed.dev/audit-duration-seconds'], '1.500');
    assert.equal(report.metadata.annotations['deed.dev/audit-started-at'], '2026-11-29T15:24:34Z');
    assert.deepEqual(report.summary, { pass: 2, fail: 1, warn: 0, error: 0, skip: 0 });
    assert.ok(report.results.every((r) => r.source === 'deed' && r.resources[0]!.name === 'agent' && r.resources[0]!.kind === 'Pod'));
    const open = buildReport('openreports', ns, { startedAt: NOW, durationMs: 0, prefix: 'deed.dev' }) as { apiVersion: string; kind: string };
    assert.deepEqual([open.apiVersion, open.kind], ['openreports.io/v1alpha1', 'Report']);
  });

  test('past the cap, failures are kept before passes, and the summary still counts everything', () => {
    const ns = new NamespaceResults('big');
    const object = { apiVersion: 'v1', kind: 'Secret' as const, namespace: 'big', name: 'x', uid: 'u' };
    for (let i = 0; i < MAX_REPORT_RESULTS; i++) ns.add({ policy: 'deed-reaper', rule: 'reaper.verdict', result: 'pass', message: 'keep', object });
    for (let i = 0; i < 10; i++) ns.add({ policy: 'deed-stamps', rule: 'stamps.attestation', result: 'fail', message: 'forged', object });
    const report = buildReport('wgpolicyk8s', ns, { startedAt: NOW, durationMs: 0, prefix: 'deed.dev' }) as { results: Array<{ result: string }>; summary: Record<string, number>; metadata: { annotations: Record<string, string> } };
    assert.equal(report.results.length, MAX_REPORT_RESULTS);
    assert.equal(report.results.filter((r) => r.result === 'fail').length, 10);
    assert.deepEqual(report.summary, { pass: MAX_REPORT_RESULTS, fail: 10, warn: 0, error: 0, skip: 0 });
    assert.equal(report.metadata.annotations['deed.dev/audit-results-omitted'], '10');
  });
});

describe('deed audit output', () => {
  test('text is one line per result, and a client-written newline cannot forge another line', () => {
    const audit = {
      object: { apiVersion: 'v1', kind: 'Pod' as const, namespace: 'sandbox-a', name: 'agent', uid: 'u' },
      results: [
        { policy: 'deed-stamps' as const, rule: 'stamps.attestation', result: 'pass' as const, message: 'verifies' },
        { policy: 'deed-rules' as const, rule: 'template.main-container', result: 'fail' as const, message: 'got "x\npass Pod sandbox-a/other [forged]"' },
      ],
    };
    const text = formatObject(audit, 'text');
    assert.equal(text.split('\n').filter(Boolean).length, 2);
    assert.match(text, /^pass Pod sandbox-a\/agent \[stamps\.attestation\] verifies$/m);
    const json = JSON.parse(formatObject(audit, 'json')) as { type: string; object: { name: string } };
    assert.deepEqual([json.type, json.object.name], ['object', 'agent']);
  });
});

describe("the audit's verdict on an operator's configuration", () => {
  const acr = (auth: Record<string, unknown>, metadata: KubeObject['metadata'] = {}): KubeObject => ({ apiVersion: 'generators.external-secrets.io/v1alpha1', kind: 'ACRAccessToken', metadata: { ...metadata, name: 'acr', namespace: 'sandbox-a', uid: 'u' }, spec: { registry: 'r.azurecr.io', auth } });
  const row = operatorConfigRows().find((r) => r.kind === 'ACRAccessToken')!;
  const stampedFor = (environment: string) => stampedMetadata('ACRAccessToken', environment, 'sandbox-a').metadata;

  test('each place the operator signs in as itself is one result; stamped for an environment it fails, in the rule\'s warn mode it warns', () => {
    const both = acr({ managedIdentity: {}, workloadIdentity: {} }, stampedFor('alpha'));
    assert.deepEqual(judgeOperatorConfig(both, row, ctx()).results.map((r) => [r.rule, r.result, r.properties?.path, r.properties?.environment]), [
      ['guard.operator-identity', 'fail', 'spec.auth.managedIdentity', 'alpha'],
      ['guard.operator-identity', 'fail', 'spec.auth.workloadIdentity', 'alpha'],
    ]);
    assert.deepEqual(judgeOperatorConfig(both, row, ctx({ 'guard.operator-identity': 'warn' })).results.map((r) => [r.result, r.properties?.mode]), [['warn', 'warn'], ['warn', 'warn']]);
  });

  test('stamps that do not verify (copied onto another kind) prove no environment: it warns, as an unstamped one does', () => {
    const copied = acr({ managedIdentity: {} }, stampedMetadata('Secret', 'alpha', 'sandbox-a').metadata);
    assert.deepEqual(judgeOperatorConfig(copied, row, ctx()).results.map((r) => [r.result, r.properties?.environment]), [['warn', undefined]]);
  });

  test('a configuration naming its own credential passes', () => {
    assert.deepEqual(judgeOperatorConfig(acr({ workloadIdentity: { serviceAccountRef: { name: 'reader' } } }), row, ctx()).results.map((r) => [r.rule, r.result]), [['rules.operator-config', 'pass']]);
  });
});
