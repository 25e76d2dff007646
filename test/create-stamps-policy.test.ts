// The ValidatingAdmissionPolicy that checks, after every mutating admission step, what CEL can
// tell of a new stamped object (src/install/create-stamps-policy.ts): the chart renders the same
// objects as `deed manifests`, and the requester mapping is the policy's. The API server
// evaluates it in the end-to-end suite (test/e2e/cases/one-call.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { renderManifests } from '../src/install/manifests.js';
import { actsForExpression } from '../src/install/create-stamps-policy.js';
import { stampedCreateRules } from '../src/install/kind-rules.js';
import { ROOT } from './cli-process.js';

const HELM = join(process.env.KUBEBUILDER_ASSETS ?? '/nonexistent', 'helm');
const POLICY = {
  labelPrefix: 'deed.dev',
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner', 'ci:*'], groups: ['team-a'], namespaces: ['sandbox-a'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:runner'] },
  ],
  breakGlass: { users: ['oncall'] },
};

function ours(policy: unknown): V1ValidatingAdmissionPolicy {
  return renderManifests({ namespace: 'deed-system', image: 'x', policy: stringify(policy) }).find((o) => o.metadata?.name === 'deed-create-stamps') as V1ValidatingAdmissionPolicy;
}

describe('the create-stamps policy', () => {
  test('a service account matches exactly or by its namespace\'s wildcard, and a group by membership', () => {
    assert.equal(
      actsForExpression(['sandbox-a:runner', 'ci:*'], ['team-a']),
      'request.userInfo.username in ["system:serviceaccount:sandbox-a:runner"] || request.userInfo.username.startsWith("system:serviceaccount:ci:") || (has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ["team-a"]))',
    );
    assert.equal(actsForExpression([], []), 'false');
  });

  test('it matches the CREATEs of the stamped kinds in the review scope, with the webhooks\' matchConditions', () => {
    const policy = ours(POLICY);
    assert.deepEqual(policy.spec!.matchConstraints!.resourceRules, stampedCreateRules());
    assert.ok(policy.spec!.matchConstraints!.resourceRules!.some((r) => r.resources!.includes('pods')));
    assert.ok(!policy.spec!.matchConstraints!.resourceRules!.some((r) => r.resources!.includes('podtemplates')), 'no stamps on a PodTemplate');
    assert.deepEqual(policy.spec!.matchConditions!.map((c) => c.name), ['exclude-deed-itself', 'exclude-kube-system-service-accounts']);
    const environments = policy.spec!.variables!.find((v) => v.name === 'environments')!.expression;
    assert.match(environments, /\? \["alpha"\] : \[\]\) \+ \(\(.*\? \["beta"\] : \[\]\)$/);
  });

  test('the chart renders the same policy as deed manifests', { skip: existsSync(HELM) ? false : 'no helm in KUBEBUILDER_ASSETS' }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-create-stamps-'));
    const values = join(dir, 'values.yaml');
    writeFileSync(values, stringify({ policy: POLICY }));
    const out = execFileSync(HELM, ['template', 'deed', join(ROOT, 'manifests/helm/deed'), '-n', 'deed-system', '-f', values, '-s', 'templates/create-stamps-policy.yaml'], { encoding: 'utf8' });
    const [chart] = parseAllDocuments(out).map((d) => d.toJS() as V1ValidatingAdmissionPolicy);
    const mine = ours(POLICY);
    for (const field of ['matchConstraints', 'matchConditions', 'variables', 'validations'] as const) assert.deepEqual(chart!.spec![field], mine.spec![field], field);
  });
});
