// template.priority-class (rev-92): a sandbox pod's PriorityClass decides whom the scheduler
// preempts to place it. Beta's pod at `system-cluster-critical` would have alpha's runner and
// sandboxes deleted on a full node, and the garbage collector then deletes what they own; naming
// a class needs no RBAC. One pod rule: judged on a Pod, every workload template, in deed audit.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject } from '../src/admission/types.js';
import { judgeObject } from '../src/audit/judge.js';
import { parseConfig } from '../src/config/load.js';
import type { ConfigInput } from '../src/config/schema.js';
import { apiVersionOf, kindRows } from '../src/policy/kinds.js';
import { compilePolicy } from '../src/policy/policy.js';
import { POD_SPEC_RULES, RULES_BY_ID } from '../src/policy/rules/catalog.js';
import { priorityClassRule, TEMPLATE_PRIORITY_CLASS } from '../src/policy/pod/priority-class.js';
import { fixture, FIXTURE_POLICY, NOW, testContext, TEST_RING, type Review } from './helpers.js';
import { RUNNER, stamped } from './reaper-helpers.js';
import { stamped as admittedBy } from './validate-helpers.js';

const allowing = (template: string[], grants: Record<string, string[]> = {}): ConfigInput => ({
  ...FIXTURE_POLICY,
  template: { ...FIXTURE_POLICY.template, priorityClasses: template },
  environments: FIXTURE_POLICY.environments!.map((e) => (grants[e.id] ? { ...e, grants: { hostNetwork: false, priorityClasses: grants[e.id]! } } : e)),
});

function validate(body: Review, config: ConfigInput): AdmissionResponse {
  const d = decide('validate', body, testContext(config));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** The runner's captured sandbox pod, naming `priorityClassName`, as its mutating review left it. */
function pod(priorityClassName: string | undefined): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  if (priorityClassName !== undefined) body.request.object.spec.priorityClassName = priorityClassName;
  body.request.object = admittedBy(body, body.request.object);
  return body;
}

describe('template.priority-class', () => {
  test('is a pod rule with its catalogue entry, denying by default and overridable; no class is allowed by default', () => {
    assert.ok(POD_SPEC_RULES.includes(priorityClassRule));
    assert.equal(RULES_BY_ID.get('template.priority-class'), TEMPLATE_PRIORITY_CLASS);
    assert.equal(TEMPLATE_PRIORITY_CLASS.defaultMode, 'deny');
    assert.equal(TEMPLATE_PRIORITY_CLASS.overridable, true);
    const config = parseConfig(FIXTURE_POLICY);
    assert.deepEqual(config.template.priorityClasses, []);
    assert.deepEqual(config.environments[0]!.grants.priorityClasses, []);
    assert.throws(() => parseConfig(allowing(['Not A Name'])), /PriorityClass name/);
  });

  test("refuses a sandbox pod at system-cluster-critical, naming the fix; admits one with no class, or a class the policy lists for every environment or grants its own", () => {
    const refused = validate(pod('system-cluster-critical'), FIXTURE_POLICY);
    assert.equal(refused.allowed, false);
    assert.match(
      refused.status!.message!,
      /\[template\.priority-class\] spec\.priorityClassName: priority class "system-cluster-critical" is not allowed for environment "alpha": the scheduler would preempt lower-priority pods to place it, other environments' included; leave priorityClassName unset, or list it in template\.priorityClasses or environments\[\]\.grants\.priorityClasses/,
    );
    assert.equal(validate(pod(undefined), FIXTURE_POLICY).allowed, true);
    assert.equal(validate(pod('sandbox-low'), allowing(['sandbox-low'])).allowed, true);
    assert.equal(validate(pod('alpha-high'), allowing([], { alpha: ['alpha-high'] })).allowed, true);
    // Another environment's grant is not alpha's.
    assert.equal(validate(pod('beta-high'), allowing([], { beta: ['beta-high'] })).allowed, false);
    // Set to warn, it is a warning.
    const warned = validate(pod('system-node-critical'), { ...FIXTURE_POLICY, rules: { 'template.priority-class': 'warn' } });
    assert.equal(warned.allowed, true);
    assert.ok(warned.warnings?.some((w) => w.includes('template.priority-class')));
  });

  for (const row of kindRows().filter((r) => r.templates !== undefined && r.templates.pods.length > 0 && r.stamps !== undefined))
    test(`reaches the pod templates of a ${row.kind}`, () => {
      const body = fixture('validate-create-pod-by-runner.json');
      const obj: Record<string, any> = { apiVersion: apiVersionOf(row), kind: row.kind, metadata: { name: 'w', namespace: 'sandbox-a' } }; // eslint-disable-line @typescript-eslint/no-explicit-any
      const spec = { ...(row.templates!.ownsRestartPolicy ? { restartPolicy: 'Never' } : {}), priorityClassName: 'system-node-critical', automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] };
      for (const path of row.templates!.pods) {
        const keys = path.split('.');
        let at = obj;
        for (const key of keys.slice(0, -1)) at = at[key] ??= {};
        at[keys.at(-1)!] = { metadata: {}, spec };
      }
      body.request = { ...body.request, kind: { group: row.group, version: 'v1', kind: row.kind }, resource: { group: row.group, version: 'v1', resource: row.resource }, requestKind: undefined, requestResource: undefined, name: 'w', object: obj as KubeObject };
      body.request.object = admittedBy(body, body.request.object);
      const refused = validate(body, FIXTURE_POLICY);
      assert.equal(refused.allowed, false);
      for (const path of row.templates!.pods) assert.ok(refused.status!.message!.includes(`[template.priority-class] ${path}.spec.priorityClassName`), refused.status!.message);
    });

  test('fails in deed audit for a stored sandbox pod naming a class not allowed', () => {
    const stored = { ...stamped({ kind: 'Pod', name: 'agent' }), apiVersion: 'v1', kind: 'Pod', spec: { priorityClassName: 'system-cluster-critical', containers: [{ name: 'main', image: 'agent:1' }] } };
    const audit = (config: ConfigInput) => judgeObject(stored, 'Pod', true, { policy: compilePolicy(parseConfig(config)), keyRing: TEST_RING, now: NOW }, { state: 'present', uid: RUNNER.uid })!.results;
    assert.equal(audit(FIXTURE_POLICY).find((r) => r.rule === 'template.priority-class')?.result, 'fail');
    assert.equal(audit(allowing(['system-cluster-critical'])).find((r) => r.rule === 'template.priority-class'), undefined);
  });
});
