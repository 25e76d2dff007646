// The ValidatingAdmissionPolicy that keeps an opted-in Namespace's labels and annotations the
// platform's (src/install/namespace-labels-policy.ts): its CEL evaluated here as the API server
// evaluates it, for who may change which key of which namespace; the chart renders the same
// objects as `deed manifests`. The API server evaluates it in the end-to-end suite
// (test/e2e/cases/namespace-wide.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { PLATFORM_NAMESPACE_KEYS } from '../src/install/namespace-labels-policy.js';
import { assertChartRendersAsOurs, evaluatePolicy, HELM, NAMESPACE_POLICY, renderedPolicy } from './chart-render.js';

const POLICY = NAMESPACE_POLICY;

const ours = (policy: unknown = POLICY, namespace = 'deed-system') => renderedPolicy('deed-namespace-labels', policy, namespace);

type Meta = { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] };
const sa = (ns: string, name: string) => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'] });
const user = (username: string, groups: string[] = []) => ({ username, groups: [...groups, 'system:authenticated'] });
const OPTED_IN = { 'deed.dev/sandbox': 'enabled' };
type Ns = { apiVersion: string; kind: string; metadata: Meta & { name: string; labels: Record<string, string> }; spec: { finalizers: string[] } };
const namespace = (name: string, meta: Meta = { labels: OPTED_IN }): Ns => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, ...meta, labels: { 'kubernetes.io/metadata.name': name, ...meta.labels } },
  spec: { finalizers: ['kubernetes'] },
});

/** The policy's answer to an UPDATE of `old` into `now`: its variables in order, then each validation; the first refusal's message. */
function review(policy: V1ValidatingAdmissionPolicy, userInfo: unknown, old: Ns, now: Ns, subResource = ''): { allowed: boolean; message?: string } {
  const request = { operation: 'UPDATE', name: old.metadata.name, namespace: old.metadata.name, resource: { group: '', version: 'v1', resource: 'namespaces' }, subResource, userInfo };
  return evaluatePolicy(policy, { request, object: now, oldObject: old });
}
const admits = (userInfo: unknown, old: Ns, now: Ns, policy = ours()[0]) => review(policy, userInfo, old, now).allowed;

const withLabels = (ns: Ns, labels: Record<string, string | null>) => {
  const next = structuredClone(ns);
  for (const [k, v] of Object.entries(labels)) {
    if (v === null) delete next.metadata.labels[k];
    else next.metadata.labels[k] = v;
  }
  return next;
};
const withAnnotations = (ns: Ns, annotations: Record<string, string | null>) => {
  const next = structuredClone(ns);
  next.metadata.annotations = { ...next.metadata.annotations };
  for (const [k, v] of Object.entries(annotations)) {
    if (v === null) delete next.metadata.annotations[k];
    else next.metadata.annotations[k] = v;
  }
  return next;
};

const shared = namespace('shared', { labels: { ...OPTED_IN, team: 'platform' }, annotations: { owner: 'platform' } });
const bound = namespace('sandbox-a', { labels: { ...OPTED_IN, team: 'alpha' } });
const BETA = sa('sandbox-b', 'janitor');
const ALPHA = sa('sandbox-a', 'runner');

describe('the namespace-labels policy', () => {
  test('it matches UPDATE of namespaces, their status and finalize, fails closed and is bound with Deny', () => {
    const [policy, binding] = ours();
    assert.deepEqual(policy.spec!.matchConstraints!.resourceRules, [{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces', 'namespaces/status', 'namespaces/finalize'], operations: ['UPDATE'] }]);
    assert.equal(policy.spec!.failurePolicy, 'Fail');
    assert.equal(binding.spec!.policyName, 'deed-namespace-labels');
    assert.deepEqual(binding.spec!.validationActions, ['Deny']);
  });

  const cases: Array<{ who: string; userInfo: unknown; old: Ns; now: Ns; admitted: boolean }> = [
    // helper-72's F2: beta's namespace-admin Role relabels the namespace it shares.
    { who: "beta's principal adding resource.kubernetes.io/admin-access to a shared namespace", userInfo: BETA, old: shared, now: withLabels(shared, { 'resource.kubernetes.io/admin-access': 'true' }), admitted: false },
    { who: "beta's principal setting pod-security.kubernetes.io/enforce=privileged on a shared namespace", userInfo: BETA, old: shared, now: withLabels(shared, { 'pod-security.kubernetes.io/enforce': 'privileged' }), admitted: false },
    { who: "beta's principal adding an ordinary label to a shared namespace", userInfo: BETA, old: shared, now: withLabels(shared, { app: 'beta' }), admitted: false },
    { who: "beta's principal changing a label of a shared namespace", userInfo: BETA, old: shared, now: withLabels(shared, { team: 'beta' }), admitted: false },
    { who: "beta's principal removing a label of a shared namespace", userInfo: BETA, old: shared, now: withLabels(shared, { team: null }), admitted: false },
    { who: "beta's principal adding an annotation to a shared namespace", userInfo: BETA, old: shared, now: withAnnotations(shared, { 'scheduler.alpha.kubernetes.io/node-selector': '' }), admitted: false },
    { who: "beta's principal changing an annotation of a shared namespace", userInfo: BETA, old: shared, now: withAnnotations(shared, { owner: 'beta' }), admitted: false },
    { who: "beta's principal removing every annotation of a shared namespace", userInfo: BETA, old: shared, now: withAnnotations(shared, { owner: null }), admitted: false },
    { who: "alpha's runner adding an ordinary label to a shared namespace", userInfo: ALPHA, old: shared, now: withLabels(shared, { team: 'alpha' }), admitted: false },
    { who: "alpha's manager adding an ordinary label to a shared namespace", userInfo: sa('platform', 'runner-controller'), old: shared, now: withLabels(shared, { team: 'alpha' }), admitted: false },
    { who: "a cluster administrator the policy does not name (system:masters is not this policy's platform)", userInfo: user('kube-lab-admin', ['system:masters']), old: shared, now: withLabels(shared, { team: 'x' }), admitted: false },
    { who: "beta's principal adding an ordinary label to alpha's bound namespace", userInfo: BETA, old: bound, now: withLabels(bound, { team: 'beta' }), admitted: false },
    { who: "alpha's runner setting pod-security.kubernetes.io/enforce on its bound namespace", userInfo: ALPHA, old: bound, now: withLabels(bound, { 'pod-security.kubernetes.io/enforce': 'privileged' }), admitted: false },
    { who: "alpha's runner removing the platform's pod-security.kubernetes.io/enforce from its bound namespace", userInfo: ALPHA, old: withLabels(bound, { 'pod-security.kubernetes.io/enforce': 'restricted' }), now: bound, admitted: false },
    { who: "alpha's manager adding resource.kubernetes.io/admin-access to its bound namespace", userInfo: user('ops', ['alpha-ops']), old: bound, now: withLabels(bound, { 'resource.kubernetes.io/admin-access': 'true' }), admitted: false },
    { who: "alpha's group widening the tolerations whitelist of its bound namespace", userInfo: user('ann', ['team-a']), old: bound, now: withAnnotations(bound, { 'scheduler.alpha.kubernetes.io/tolerationsWhitelist': '[]' }), admitted: false },
    { who: 'the platform (by user) adding resource.kubernetes.io/admin-access to a shared namespace', userInfo: user('argocd'), old: shared, now: withLabels(shared, { 'resource.kubernetes.io/admin-access': 'true' }), admitted: true },
    { who: 'the platform (by group) setting Pod Security on a shared namespace', userInfo: user('jo', ['platform-admins']), old: shared, now: withLabels(shared, { 'pod-security.kubernetes.io/enforce': 'restricted' }), admitted: true },
    { who: 'the platform annotating a shared namespace', userInfo: user('argocd'), old: shared, now: withAnnotations(shared, { 'argocd.argoproj.io/tracking-id': 'ns' }), admitted: true },
    { who: 'a break-glass principal removing a label of a shared namespace', userInfo: user('oncall'), old: shared, now: withLabels(shared, { team: null }), admitted: true },
    { who: "a kube-system service account (a system controller) changing a shared namespace's labels", userInfo: sa('kube-system', 'namespace-controller'), old: shared, now: withLabels(shared, { team: 'x' }), admitted: true },
    { who: "Deed's own service account changing a shared namespace's annotations", userInfo: sa('deed-system', 'deed'), old: shared, now: withAnnotations(shared, { note: 'x' }), admitted: true },
    { who: "alpha's runner adding team=x to its bound namespace", userInfo: ALPHA, old: bound, now: withLabels(bound, { team: 'x' }), admitted: true },
    { who: "a service account of alpha's wildcard annotating its second bound namespace", userInfo: sa('ci', 'builder'), old: namespace('lab-a'), now: withAnnotations(namespace('lab-a'), { note: 'x' }), admitted: true },
    { who: "alpha's manager removing a label of its bound namespace", userInfo: sa('platform', 'runner-controller'), old: bound, now: withLabels(bound, { team: null }), admitted: true },
    { who: "beta's principal writing the metadata finalizers of a shared namespace (no label or annotation changes)", userInfo: BETA, old: shared, now: { ...shared, metadata: { ...shared.metadata, finalizers: ['example.com/hold'] } }, admitted: true },
    { who: "beta's principal rewriting a shared namespace's spec.finalizers (no label or annotation changes)", userInfo: BETA, old: shared, now: { ...shared, spec: { finalizers: [] } }, admitted: true },
    { who: "beta's principal writing a shared namespace's labels as they are", userInfo: BETA, old: shared, now: withLabels(shared, { team: 'platform' }), admitted: true },
    { who: "beta's principal removing the opt-in label alone (deed-review-scope's to refuse, not this policy's)", userInfo: BETA, old: shared, now: withLabels(shared, { 'deed.dev/sandbox': null }), admitted: true },
    { who: "beta's principal removing the opt-in label and adding Pod Security's", userInfo: BETA, old: shared, now: withLabels(shared, { 'deed.dev/sandbox': null, 'pod-security.kubernetes.io/enforce': 'privileged' }), admitted: false },
    { who: "beta's principal relabelling a namespace that has not opted in", userInfo: BETA, old: namespace('plain', {}), now: withLabels(namespace('plain', {}), { 'pod-security.kubernetes.io/enforce': 'privileged' }), admitted: true },
    { who: "beta's principal relabelling a namespace opted out by another value", userInfo: BETA, old: namespace('plain', { labels: { 'deed.dev/sandbox': 'disabled' } }), now: withLabels(namespace('plain', { labels: { 'deed.dev/sandbox': 'disabled' } }), { team: 'x' }), admitted: true },
  ];
  for (const { who, userInfo, old, now, admitted } of cases) {
    test(`${who}: ${admitted ? 'passes' : 'is refused'}`, () => {
      assert.equal(admits(userInfo, old, now), admitted);
    });
  }

  test('through status and finalize the same: beta may not relabel a shared namespace there either', () => {
    const now = withLabels(shared, { 'resource.kubernetes.io/admin-access': 'true' });
    for (const sub of ['status', 'finalize']) assert.equal(review(ours()[0], BETA, shared, now, sub).allowed, false, sub);
  });

  test("system:masters is the default platform: a cluster administrator relabels an opted-in namespace under the default policy, a tenant may not", () => {
    const [policy] = ours({});
    assert.equal(admits(user('kube-lab-admin', ['system:masters']), shared, withLabels(shared, { 'pod-security.kubernetes.io/enforce': 'baseline' }), policy), true);
    assert.equal(admits(sa('sandbox-b', 'janitor'), shared, withLabels(shared, { 'pod-security.kubernetes.io/enforce': 'privileged' }), policy), false);
  });

  test("Deed's service account is the one of the namespace it is installed in", () => {
    const [policy] = ours(POLICY, 'deed-prod');
    const now = withAnnotations(shared, { note: 'x' });
    assert.equal(admits(sa('deed-prod', 'deed'), shared, now, policy), true);
    assert.equal(admits(sa('deed-system', 'deed'), shared, now, policy), false);
  });

  test('the refusal names the namespace, the key and the fix', () => {
    const sharedRefusal = review(ours()[0], BETA, shared, withLabels(shared, { 'resource.kubernetes.io/admin-access': 'true' }));
    assert.equal(
      sharedRefusal.message,
      "namespace shared is opted in to Deed (deed.dev/sandbox=enabled) and its labels and annotations act on every environment's objects in it (here resource.kubernetes.io/admin-access): only the platform and break-glass principals of Deed's policy may add, change or remove them: ask the platform to label or annotate the namespace. In a namespace the policy binds to one environment, that environment's principals and managers may write any but pod-security.kubernetes.io/*, resource.kubernetes.io/admin-access, scheduler.alpha.kubernetes.io/node-selector, scheduler.alpha.kubernetes.io/defaultTolerations, scheduler.alpha.kubernetes.io/tolerationsWhitelist",
    );
    const boundRefusal = review(ours()[0], ALPHA, bound, withLabels(bound, { team: 'x', 'pod-security.kubernetes.io/enforce': 'privileged' }));
    assert.equal(
      boundRefusal.message,
      "namespace sandbox-a: pod-security.kubernetes.io/enforce acts beyond one environment's objects (as do pod-security.kubernetes.io/*, resource.kubernetes.io/admin-access, scheduler.alpha.kubernetes.io/node-selector, scheduler.alpha.kubernetes.io/defaultTolerations, scheduler.alpha.kubernetes.io/tolerationsWhitelist): they are the platform's even in a namespace bound to your environment: ask the platform to write them",
    );
    for (const v of ours()[0].spec!.validations!) assert.equal(v.reason, 'Forbidden');
  });

  test('every key the platform keeps has its reason', () => {
    for (const { key, why } of PLATFORM_NAMESPACE_KEYS) assert.ok(why.length > 40, key);
  });

  test('the chart renders the same objects as deed manifests', { skip: existsSync(HELM) ? false : 'no helm in KUBEBUILDER_ASSETS' }, () => {
    assertChartRendersAsOurs('namespace-labels-policy.yaml', [POLICY, { environments: [{ id: 'default', groups: ['system:serviceaccounts'] }] }], (policy) => ours(policy));
  });
});
