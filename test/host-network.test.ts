// One pod rule, every place a pod spec stands: host networking, granted per environment
// (template.host-network), judged on a Pod, on the pod template of every kind the kind
// table names, on stored pods in `deed audit`, and through `deed review`.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import { judgeObject } from '../src/audit/judge.js';
import { parseConfig } from '../src/config/load.js';
import type { ConfigInput } from '../src/config/schema.js';
import { apiVersionOf, kindRows } from '../src/policy/kinds.js';
import { compilePolicy } from '../src/policy/policy.js';
import { SANDBOX_POD_RULES } from '../src/policy/pod/sandbox-pod-rules.js';
import { POD_SPEC_RULES, RULES_BY_ID } from '../src/policy/rules/catalog.js';
import { hostNetworkRule, TEMPLATE_HOST_NETWORK } from '../src/policy/pod/host-network.js';
import { fixture, FIXTURE_POLICY, NOW, testContext, TEST_RING, type Review } from './helpers.js';
import { RUNNER, stamped } from './reaper-helpers.js';
import { ROOT } from './cli-process.js';
import { stamped as admittedBy } from './validate-helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies reach deep into specs
type Spec = Record<string, any>;

const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;
const NOBODY = fixture('mutate-create-pod-by-admin.json').request.userInfo as UserInfo;
const granted = (...ids: string[]): ConfigInput => ({ ...FIXTURE_POLICY, environments: FIXTURE_POLICY.environments!.map((e) => (ids.includes(e.id) ? { ...e, grants: { hostNetwork: true } } : e)) });
const POD_SPEC: Spec = { hostNetwork: true, automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] };

/** An object of `row`'s kind whose pod templates (at the row's paths) hold `spec`. */
function withTemplates(row: (typeof TEMPLATED)[number], spec: Spec): KubeObject {
  const obj: Spec = { apiVersion: apiVersionOf(row), kind: row.kind, metadata: { name: 'w', namespace: 'sandbox-a' } };
  const podSpec = row.templates!.ownsRestartPolicy ? { ...spec, restartPolicy: 'Never' } : spec;
  for (const path of row.templates!.pods) {
    const keys = path.split('.');
    let at = obj;
    for (const key of keys.slice(0, -1)) at = at[key] ??= {};
    at[keys.at(-1)!] = { metadata: {}, spec: podSpec };
  }
  return obj as KubeObject;
}

const TEMPLATED = kindRows().filter((r) => r.templates !== undefined && r.templates.pods.length > 0);

function review(row: { group: string; resource: string; kind: string }, object: KubeObject, userInfo: UserInfo): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  body.request = {
    ...body.request,
    kind: { group: row.group, version: 'v1', kind: row.kind },
    resource: { group: row.group, version: 'v1', resource: row.resource },
    requestKind: undefined,
    requestResource: undefined,
    name: object.metadata.name,
    namespace: 'sandbox-a',
    userInfo,
    object,
  };
  return body;
}

function validate(body: Review, config: ConfigInput): AdmissionResponse {
  const d = decide('validate', body, testContext(config));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

describe('template.host-network', () => {
  test('is one rule object in the pod rules, with its catalogue entry, denying by default and overridable', () => {
    const rule = SANDBOX_POD_RULES.find((r) => r.info.some((i) => i.id === 'template.host-network'));
    assert.ok(rule);
    assert.equal(RULES_BY_ID.get('template.host-network')?.defaultMode, 'deny');
    assert.equal(RULES_BY_ID.get('template.host-network')?.overridable, true);
    assert.equal(parseConfig(FIXTURE_POLICY).environments[0]!.grants.hostNetwork, false, 'no grant by default');
  });

  test('its file holds its catalogue entry and its check, and the catalogue is built from such files: every pod rule\'s entries are the catalogue\'s own', () => {
    assert.equal(RULES_BY_ID.get('template.host-network'), TEMPLATE_HOST_NETWORK);
    assert.ok(POD_SPEC_RULES.includes(hostNetworkRule));
    assert.equal(SANDBOX_POD_RULES, POD_SPEC_RULES, 'the pod rules run are the catalogue\'s');
    for (const rule of POD_SPEC_RULES) for (const info of rule.info) assert.equal(RULES_BY_ID.get(info.id), info, `${info.id} is in the catalogue as its file defines it`);
  });

  test("refuses a sandbox pod on the host network for an environment without the grant, at spec.hostNetwork, and admits it for one with it", () => {
    const pod = fixture('validate-create-pod-by-runner.json');
    pod.request.object.spec.hostNetwork = true;
    pod.request.object = admittedBy(pod, pod.request.object);
    const refused = validate(pod, FIXTURE_POLICY);
    assert.equal(refused.allowed, false);
    assert.match(refused.status!.message!, /\[template\.host-network\] spec\.hostNetwork: environment "alpha" is not granted host networking/);
    const admitted = validate(pod, granted('alpha'));
    assert.equal(admitted.allowed, true, admitted.status?.message);
    // The grant is this rule's alone: template.host-access does not flag it, so a policy that
    // denies host-access (to refuse the host PID namespace) still admits a granted host network (rev-92).
    assert.ok(!admitted.warnings?.some((w) => w.includes('template.host-access')), JSON.stringify(admitted.warnings));
    const strict = validate(pod, { ...granted('alpha'), rules: { 'template.host-access': 'deny' } });
    assert.equal(strict.allowed, true, strict.status?.message);
    pod.request.object.spec.hostPID = true;
    pod.request.object = admittedBy(pod, pod.request.object);
    const pid = validate(pod, { ...granted('alpha'), rules: { 'template.host-access': 'deny' } });
    assert.equal(pid.allowed, false);
    assert.match(pid.status!.message!, /\[template\.host-access\] spec\.hostPID: uses the host pid namespace/);
    assert.doesNotMatch(pid.status!.message!, /hostNetwork/);
  });

  for (const row of TEMPLATED)
    test(`reaches the pod templates of a ${row.kind} (${row.templates!.pods.join(', ')}) with no edit for the kind`, () => {
      const body = review(row, withTemplates(row, POD_SPEC), RUNNER_A);
      // A stamped workload carries the stamps its mutating review wrote (issue 26).
      if (row.stamps !== undefined) body.request.object = admittedBy(body, body.request.object);
      const refused = validate(body, FIXTURE_POLICY);
      assert.equal(refused.allowed, false);
      for (const path of row.templates!.pods) assert.ok(refused.status!.message!.includes(`[template.host-network] ${path}.spec.hostNetwork: environment "alpha"`), refused.status!.message);
      const admitted = validate(body, granted('alpha'));
      assert.equal(admitted.allowed, true, admitted.status?.message);
    });

  test('does not apply to a requester acting for no environment, whose pods are not sandbox pods', () => {
    const row = TEMPLATED.find((r) => r.kind === 'Deployment')!;
    const obj = withTemplates(row, POD_SPEC);
    // Its selector excludes every environment's pods (selector-scope.ts).
    obj.spec!.selector = { matchExpressions: [{ key: 'deed.dev/environment', operator: 'DoesNotExist' }] };
    const r = validate(review(row, obj, NOBODY), FIXTURE_POLICY);
    assert.equal(r.allowed, true, r.status?.message);
  });

  test("fails in deed audit for a stored pod of an environment without the grant, and passes for one with it", () => {
    const pod = { ...stamped({ kind: 'Pod', name: 'agent' }), apiVersion: 'v1', kind: 'Pod', spec: POD_SPEC };
    const audit = (config: ConfigInput) => judgeObject(pod, 'Pod', true, { policy: compilePolicy(parseConfig(config)), keyRing: TEST_RING, now: NOW }, { state: 'present', uid: RUNNER.uid })!.results;
    const environment = pod.metadata.labels!['deed.dev/environment']!;
    const failed = audit(FIXTURE_POLICY).find((r) => r.rule === 'template.host-network');
    assert.equal(failed?.result, 'fail');
    assert.equal(failed?.properties?.path, 'spec.hostNetwork');
    assert.equal(audit(granted(environment)).find((r) => r.rule === 'template.host-network'), undefined);
  });

  test('deed review refuses the Deployment with the rule id and exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-hostnet-'));
    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, stringify(FIXTURE_POLICY));
    const file = join(dir, 'deployment.yaml');
    writeFileSync(file, stringify(withTemplates(TEMPLATED.find((r) => r.kind === 'Deployment')!, POD_SPEC)));
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'review', '-f', file, '--as', 'system:serviceaccount:sandbox-a:runner', '--pod-name', 'runner-0', '--pod-uid', RUNNER_A.extra!['authentication.kubernetes.io/pod-uid']![0]!, '--config', policy],
        { cwd: ROOT, encoding: 'utf8', env: { ...process.env, DEED_CONFIG: '' }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
      ),
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout + run.stderr, /template\.host-network/);
  });
});
