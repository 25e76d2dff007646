// The ValidatingAdmissionPolicy that holds each reaper account's deletes to its own
// environment's objects in the review scope (src/install/reaper-delete-policy.ts): its CEL
// evaluated here as the API server evaluates it (match condition, variables in order, every
// validation); the chart renders the same objects as `deed manifests`. The API server
// evaluates it in the end-to-end suite (test/e2e/cases/reaper.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import { run as runCel } from '@bufbuild/cel';
import { renderManifests } from '../src/install/manifests.js';
import { ROOT } from './cli-process.js';
import { toCel } from './helpers.js';

const HELM = join(process.env.KUBEBUILDER_ASSETS ?? '/nonexistent', 'helm');
const POLICY = { environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'] }] };

function ours(reapers = ['alpha', 'beta'], policy: unknown = POLICY): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] | [] {
  const objects = renderManifests({ namespace: 'deed-system', image: 'x', policy: stringify(policy), reaperEnvironments: reapers }).filter((o) => o.metadata?.name === 'deed-reaper-delete');
  if (objects.length === 0) return [];
  return [objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as V1ValidatingAdmissionPolicy, objects.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding') as V1ValidatingAdmissionPolicyBinding];
}

const reaper = (env: string, ns = 'deed-system') => ({ username: `system:serviceaccount:${ns}:deed-reaper-${env}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'] });
const namespace = (name: string, labels: Record<string, string> = { 'deed.dev/sandbox': 'enabled' }) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } } });
const stamped = (env: string | undefined, managed = 'true', prefix = 'deed.dev') => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'leak', namespace: 'shared', labels: env === undefined ? { app: 'x' } : { [`${prefix}/managed`]: managed, [`${prefix}/environment`]: env } },
});

type Verdict = 'not-matched' | 'admitted' | string;

/** What the policy says of a DELETE: not matched (its match condition false), admitted, or the first failing validation's message. */
function verdict(policy: V1ValidatingAdmissionPolicy, userInfo: unknown, ns: ReturnType<typeof namespace> | null, old: unknown): Verdict {
  const request = { operation: 'DELETE', name: 'leak', namespace: ns?.metadata.name ?? '', resource: { group: '', version: 'v1', resource: 'configmaps' }, userInfo };
  const variables = new Map<string, unknown>();
  const bindings = () => ({ request: toCel(request), object: null, oldObject: toCel(old), namespaceObject: ns === null ? null : toCel(ns), variables }) as never;
  if (!policy.spec!.matchConditions!.every((c) => runCel(c.expression, bindings()) === true)) return 'not-matched';
  for (const v of policy.spec!.variables!) variables.set(v.name, runCel(v.expression, bindings()));
  const failed = policy.spec!.validations!.find((v) => runCel(v.expression, bindings()) !== true);
  return failed === undefined ? 'admitted' : (runCel(failed.messageExpression!, bindings()) as string);
}

describe('the reaper-delete policy', () => {
  test('it matches every DELETE of every kind, fails closed and is bound with Deny', () => {
    const [policy, binding] = ours() as [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding];
    assert.deepEqual(policy.spec!.matchConstraints!.resourceRules, [{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], operations: ['DELETE'] }]);
    assert.equal(policy.spec!.failurePolicy, 'Fail');
    assert.equal(binding.spec!.policyName, 'deed-reaper-delete');
    assert.deepEqual(binding.spec!.validationActions, ['Deny']);
  });

  test('without a reaper there is no policy', () => {
    assert.deepEqual(ours([]), []);
  });

  const cases: Array<{ who: string; userInfo: unknown; ns: ReturnType<typeof namespace> | null; old: unknown; want: 'not-matched' | 'admitted' | RegExp }> = [
    { who: "alpha's reaper, alpha's object in an opted-in namespace", userInfo: reaper('alpha'), ns: namespace('shared'), old: stamped('alpha'), want: 'admitted' },
    { who: "beta's reaper, beta's object in an opted-in namespace", userInfo: reaper('beta'), ns: namespace('shared'), old: stamped('beta'), want: 'admitted' },
    { who: "alpha's reaper, alpha-labelled object in a namespace not opted in", userInfo: reaper('alpha'), ns: namespace('plain', {}), old: stamped('alpha'), want: /reaper for environment alpha deletes only in the review scope .*: namespace plain is outside it; delete it as its owner or the platform$/ },
    { who: "alpha's reaper, a namespace opted out by another value", userInfo: reaper('alpha'), ns: namespace('plain', { 'deed.dev/sandbox': 'disabled' }), old: stamped('alpha'), want: /namespace plain is outside it/ },
    { who: "alpha's reaper, kube-system labelled as opted in", userInfo: reaper('alpha'), ns: namespace('kube-system'), old: stamped('alpha'), want: /namespace kube-system is outside it/ },
    { who: "alpha's reaper, Deed's own namespace labelled as opted in", userInfo: reaper('alpha'), ns: namespace('deed-system'), old: stamped('alpha'), want: /namespace deed-system is outside it/ },
    { who: "alpha's reaper, a cluster-scoped object", userInfo: reaper('alpha'), ns: null, old: stamped('alpha'), want: /this object is cluster-scoped/ },
    { who: "alpha's reaper, beta's object in an opted-in namespace", userInfo: reaper('alpha'), ns: namespace('shared'), old: stamped('beta'), want: /reaper for environment alpha deletes only objects stamped for it \(deed\.dev\/managed=true, deed\.dev\/environment=alpha\); leak is not/ },
    { who: "beta's reaper, alpha's object", userInfo: reaper('beta'), ns: namespace('shared'), old: stamped('alpha'), want: /environment beta deletes only objects stamped for it/ },
    { who: "alpha's reaper, an unstamped object (a tenant's, the platform's)", userInfo: reaper('alpha'), ns: namespace('shared'), old: stamped(undefined), want: /deletes only objects stamped for it/ },
    { who: "alpha's reaper, alpha's environment label without the managed label true", userInfo: reaper('alpha'), ns: namespace('shared'), old: stamped('alpha', 'false'), want: /deletes only objects stamped for it/ },
    { who: 'a delete with no old object', userInfo: reaper('alpha'), ns: namespace('shared'), old: null, want: /deletes only objects stamped for it/ },
    { who: "alpha's runner (not a reaper): not this policy's", userInfo: { username: 'system:serviceaccount:sandbox-a:runner', groups: [] }, ns: namespace('plain', {}), old: stamped('beta'), want: 'not-matched' },
    { who: 'an account of the same name in another namespace: not a reaper', userInfo: reaper('alpha', 'sandbox-b'), ns: namespace('plain', {}), old: stamped('alpha'), want: 'not-matched' },
  ];
  for (const { who, userInfo, ns, old, want } of cases) {
    test(`${who}: ${typeof want === 'string' ? want : 'refused'}`, () => {
      const got = verdict(ours()[0]!, userInfo, ns, old);
      if (typeof want === 'string') assert.equal(got, want);
      else assert.match(got, want);
    });
  }

  test("a reaper rendered only for alpha does not match beta's account", () => {
    assert.equal(verdict(ours(['alpha'])[0]!, reaper('beta'), namespace('plain', {}), stamped('beta')), 'not-matched');
    assert.equal(verdict(ours(['alpha'])[0]!, reaper('alpha'), namespace('shared'), stamped('alpha')), 'admitted');
  });

  test("the labels judged follow the policy's labelPrefix", () => {
    const policy = ours(['alpha'], { ...POLICY, labelPrefix: 'sandbox.example.com' })[0]!;
    assert.equal(verdict(policy, reaper('alpha'), namespace('shared'), stamped('alpha', 'true', 'sandbox.example.com')), 'admitted');
    assert.match(verdict(policy, reaper('alpha'), namespace('shared'), stamped('alpha')), /sandbox\.example\.com\/managed=true/);
  });

  test('the chart renders the same objects as deed manifests', { skip: existsSync(HELM) ? false : 'no helm in KUBEBUILDER_ASSETS' }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-reaper-delete-'));
    const values = join(dir, 'values.yaml');
    for (const [reapers, policy] of [[['alpha', 'beta'], POLICY], [['beta'], { ...POLICY, labelPrefix: 'sandbox.example.com' }], [[], POLICY]] as const) {
      writeFileSync(values, stringify({ policy, reaper: { environments: reapers } }));
      // The whole chart: `helm template -s` refuses a template that renders nothing.
      const out = execFileSync(HELM, ['template', 'deed', join(ROOT, 'manifests/helm/deed'), '-n', 'deed-system', '-f', values], { encoding: 'utf8' });
      const chart = parseAllDocuments(out)
        .map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: unknown } | null)
        .filter((o) => o?.metadata.name === 'deed-reaper-delete') as Array<{ kind: string; spec: unknown }>;
      const mine = ours([...reapers], policy);
      assert.deepEqual(chart.map((o) => o.kind), mine.map((o) => o.kind), `reapers ${reapers.join(',')}`);
      chart.forEach((o, i) => assert.deepEqual(o.spec, JSON.parse(JSON.stringify(mine[i]!.spec))));
    }
  });
});
