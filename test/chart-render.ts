// The Helm chart's rendering of one admission policy template, held equal to what
// `deed manifests` renders from the same policy (the chart writes the CEL twice: in
// TypeScript and in its templates).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import { run as runCel } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { renderManifests } from '../src/install/manifests.js';
import { ROOT } from './cli-process.js';
import { toCel } from './helpers.js';

/** A policy for the namespace policies' tests: alpha bound to two namespaces, with managers; beta bound to none; a platform and break-glass. */
export const NAMESPACE_POLICY = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner', 'ci:*'], groups: ['team-a'], namespaces: ['sandbox-a', 'lab-a'], managers: { users: ['system:serviceaccount:platform:runner-controller'], groups: ['alpha-ops'] } },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  platform: { users: ['argocd'], groups: ['platform-admins'] },
  breakGlass: { users: ['oncall'], groups: [] },
};

/** helm from the envtest assets; tests that need it are skipped without it. */
export const HELM = join(process.env.KUBEBUILDER_ASSETS ?? '/nonexistent', 'helm');

/** For each policy, `templates/<template>` renders a ValidatingAdmissionPolicy and its binding whose specs are `ours(policy)`'s. */
export function assertChartRendersAsOurs(template: string, policies: unknown[], ours: (policy: unknown) => [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding]): void {
  const dir = mkdtempSync(join(tmpdir(), `deed-${template.replace(/\.yaml$/, '')}-`));
  for (const policy of policies) {
    const values = join(dir, 'values.yaml');
    writeFileSync(values, stringify({ policy }));
    const out = execFileSync(HELM, ['template', 'deed', join(ROOT, 'manifests/helm/deed'), '-n', 'deed-system', '-f', values, '-s', `templates/${template}`], { encoding: 'utf8' });
    const chart = parseAllDocuments(out).map((d) => d.toJS() as { kind: string; spec: unknown });
    const mine = ours(policy);
    assert.deepEqual(chart.map((o) => o.kind), ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    assert.deepEqual(chart[0]!.spec, JSON.parse(JSON.stringify(mine[0].spec)));
    assert.deepEqual(chart[1]!.spec, JSON.parse(JSON.stringify(mine[1].spec)));
  }
}

/** The admission policy `name` and its binding as `deed manifests` renders them from `policy`. */
export function renderedPolicy(name: string, policy: unknown, namespace = 'deed-system'): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] {
  const objects = renderManifests({ namespace, image: 'x', policy: stringify(policy) }).filter((o) => o.metadata?.name === name);
  return [objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as V1ValidatingAdmissionPolicy, objects.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding') as V1ValidatingAdmissionPolicyBinding];
}

/**
 * A policy's answer as the API server evaluates it: its variables in order, then each
 * validation; the first refusal's message (its messageExpression, where it has one). The
 * bindings given (`object`, `oldObject`) are bound as they are, `null` included.
 */
export function evaluatePolicy(policy: V1ValidatingAdmissionPolicy, given: { request: unknown; object?: unknown; oldObject?: unknown; namespaceObject?: unknown }): { allowed: boolean; message?: string } {
  const variables = new Map<string, unknown>();
  const bound = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, v === null ? null : toCel(v)]));
  const bindings = () => ({ ...bound, variables }) as never;
  // The API server's CEL has the strings extension (lowerAscii, substring, …).
  const cel = (expression: string) => runCel(expression, bindings(), { funcs: strings });
  for (const v of policy.spec!.variables!) variables.set(v.name, cel(v.expression));
  for (const v of policy.spec!.validations!) if (cel(v.expression) !== true) return { allowed: false, ...(v.messageExpression !== undefined ? { message: String(cel(v.messageExpression)) } : {}) };
  return { allowed: true };
}
