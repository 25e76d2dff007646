// A custom resource whose operator makes workloads from its pod spec (rules/operator-pods.ts):
// an Argo Rollout's `spec.template`, a KEDA ScaledJob's `spec.jobTargetRef.template`. Their
// operators create the ReplicaSets and Jobs as principals of their own, so the pods are of no
// environment; an environment may write such a spec only in a namespace bound to it. In a real
// API server: test/e2e/cases/scale-targets.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { kindRows } from '../src/policy/kinds.js';
import { fixture, testContext, type Review } from './helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  breakGlass: { groups: [] },
};
const sa = (ns: string, name: string): UserInfo => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'], extra: {} });
const ALPHA = sa('sandbox-a', 'runner');
const BETA = sa('sandbox-b', 'lab');
const TENANT = sa('tools', 'deployer'); // acts for no environment

const ARGO = { group: 'argoproj.io', version: 'v1alpha1' } as const;
const jobMetric = (template: unknown) => ({ metrics: [{ name: 'smoke', provider: template !== undefined ? { job: { spec: { backoffLimit: 0, template } } } : { web: { url: 'https://beta.example/health' } } }] });
const KINDS = {
  Rollout: { resource: { group: 'argoproj.io', version: 'v1alpha1', resource: 'rollouts' }, at: 'spec.template', spec: (template: unknown) => ({ replicas: 1, selector: { matchLabels: { app: 'web' } }, ...(template !== undefined ? { template } : {}) }) },
  ScaledJob: { resource: { group: 'keda.sh', version: 'v1alpha1', resource: 'scaledjobs' }, at: 'spec.jobTargetRef.template', spec: (template: unknown) => ({ jobTargetRef: template !== undefined ? { template } : {}, triggers: [] }) },
  AnalysisTemplate: { resource: { ...ARGO, resource: 'analysistemplates' }, at: 'spec.metrics[0].provider.job.spec.template', spec: jobMetric },
  AnalysisRun: { resource: { ...ARGO, resource: 'analysisruns' }, at: 'spec.metrics[0].provider.job.spec.template', spec: jobMetric },
  Experiment: { resource: { ...ARGO, resource: 'experiments' }, at: 'spec.templates[0].template', spec: (template: unknown) => ({ templates: template !== undefined ? [{ name: 'baseline', selector: { matchLabels: { app: 'web' } }, template }] : [] }) },
} as const;
type Kind = keyof typeof KINDS;
const TEMPLATE = { metadata: { labels: { app: 'web' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/agent:1' }] } };

function object(kind: Kind, namespace: string, template: unknown = TEMPLATE, labels: Record<string, string> = {}): KubeObject {
  const { resource } = KINDS[kind];
  return { apiVersion: `${resource.group}/${resource.version}`, kind, metadata: { name: 'web', namespace, labels }, spec: KINDS[kind].spec(template) } as KubeObject;
}

function answer(webhook: Webhook, who: UserInfo, obj: KubeObject, old?: KubeObject): AdmissionResponse {
  const body: Review = fixture('validate-create-pod-by-runner.json');
  const { resource } = KINDS[obj.kind as Kind];
  body.request = { ...body.request, kind: { group: resource.group, version: resource.version, kind: obj.kind }, resource, requestKind: undefined, requestResource: undefined, name: 'web', namespace: obj.metadata.namespace, userInfo: who, subResource: undefined, operation: old ? 'UPDATE' : 'CREATE', object: obj, oldObject: old ?? null };
  const d = decide(webhook, body, testContext(POLICY));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}
const byRule = (r: AdmissionResponse) => /\[guard\.operator-pods\]/.test(r.status?.message ?? '');

describe('a custom resource whose operator makes pods from its pod spec', () => {
  test("the kind table's operatorPods rows are the ScaledJob and Argo Rollouts' kinds, each with pod specs", () => {
    assert.deepEqual(kindRows().filter((r) => r.operatorPods !== undefined).map((r) => [r.kind, r.podSpecs]), [
      ['ScaledJob', ['spec.jobTargetRef.template.spec']],
      ['AnalysisTemplate', ['spec.metrics[].provider.job.spec.template.spec']],
      ['AnalysisRun', ['spec.metrics[].provider.job.spec.template.spec']],
      ['Experiment', ['spec.templates[].template.spec']],
      ['Rollout', ['spec.template.spec']],
    ]);
  });

  for (const kind of Object.keys(KINDS) as Kind[]) {
    test(`${kind}: beta's with a pod spec in a shared namespace is refused at /admit and /validate, and the message names the fix`, () => {
      for (const webhook of ['admit', 'validate'] as const) {
        const r = answer(webhook, BETA, object(kind, 'shared'));
        assert.equal(r.allowed, false, webhook);
        assert.match(r.status?.message ?? '', new RegExp(`\\[guard\\.operator-pods\\] ${KINDS[kind].at.replace(/[.[\]]/g, '\\$&')}\\.spec: system:serviceaccount:sandbox-b:lab may not create ${kind} shared/web with a pod spec: .* so their pods would be of no environment.*; use .*, or a namespace bound to your environment`));
      }
    });

    test(`${kind}: an UPDATE that changes the pod spec is refused; one that keeps it, alpha's in its bound namespace, and a tenant of no environment's pass this rule`, () => {
      const stored = object(kind, 'shared');
      const changed = object(kind, 'shared', { ...TEMPLATE, spec: { ...TEMPLATE.spec, containers: [{ name: 'main', image: 'registry.example/other:2' }] } });
      assert.ok(byRule(answer('validate', BETA, changed, stored)));
      assert.ok(!byRule(answer('validate', BETA, object(kind, 'shared', TEMPLATE, { team: 'web' }), stored)), 'a label change of an admitted object');
      const annotated = object(kind, 'shared', { ...TEMPLATE, metadata: { ...TEMPLATE.metadata, annotations: { 'sidecar.example/inject': 'false' } } });
      assert.ok(byRule(answer('validate', BETA, annotated, stored)), "the template's metadata is the pods' too");
      assert.ok(!byRule(answer('validate', ALPHA, object(kind, 'sandbox-a'))), "alpha's bound namespace: its pods there are alpha's");
      assert.ok(byRule(answer('validate', ALPHA, object(kind, 'shared'))), 'a shared namespace is shared');
      assert.ok(!byRule(answer('validate', TENANT, object(kind, 'shared'))), 'a tenant of no environment makes pods of none itself');
    });
  }

  test('without a pod spec (a Rollout naming a Deployment by workloadRef, an analysis of a web metric) it passes this rule', () => {
    const ref = { ...object('Rollout', 'shared', undefined), spec: { replicas: 1, workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } } } as KubeObject;
    assert.ok(!byRule(answer('validate', BETA, ref)));
    const web = { ...object('AnalysisTemplate', 'shared'), spec: jobMetric(undefined) } as KubeObject;
    assert.ok(!byRule(answer('validate', BETA, web)));
  });
});
