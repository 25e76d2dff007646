// No helm binary runs here (none is packaged for Debian or npm), so the chart is checked
// statically: values against the schema, template references against values, helper
// names, block balance, and parity with the objects `deed manifests` renders.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { parseConfig } from '../src/config/load.js';
import { HELM_README_FILE, helmReadme } from '../src/install/helm-readme.js';
import { HELM_SCHEMA_FILE, policyJsonSchema } from '../src/install/helm-schema.js';
import { auditArgs, defaultRowExcluded, REAPER_NODE_OPTIONS, renderManifests, SERVE_ARGS } from '../src/install/manifests.js';
import type { V1Deployment } from '@kubernetes/client-node';
import { HELM_CRD_FILE, helmCrdFileText } from '../src/install/policy-report-crd.js';
import { ROOT } from './cli-process.js';
import { keepStampsCondition, operatorStampsCondition } from '../src/install/kind-rules.js';

const CHART = join(ROOT, 'manifests/helm/deed');
const TEMPLATES = join(CHART, 'templates');
const schema = JSON.parse(readFileSync(join(ROOT, HELM_SCHEMA_FILE), 'utf8')) as { properties: Record<string, unknown> };
const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
// tests/ holds the helm test hook; its templates are checked like the others.
const templates = new Map(
  readdirSync(TEMPLATES, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(TEMPLATES, f)).isFile())
    .map((f) => [f, readFileSync(join(TEMPLATES, f), 'utf8')]),
);
const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);

function withValues(patch: (v: Record<string, unknown>) => void): Record<string, unknown> {
  const copy = structuredClone(values);
  patch(copy);
  return copy;
}

/** Template actions with their trim markers and comments removed. */
function actions(text: string): string[] {
  return [...text.replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '').matchAll(/\{\{-?([\s\S]*?)-?\}\}/g)].map((m) => m[1]!.trim());
}

describe('the Helm chart', () => {
  test('the chart README is generated from Chart.yaml, values.yaml and the schema (run npm run manifests after changing them)', () => {
    const read = (f: string) => readFileSync(join(CHART, f), 'utf8');
    assert.equal(readFileSync(join(ROOT, HELM_README_FILE), 'utf8'), helmReadme(read('Chart.yaml'), read('values.yaml'), read('values.schema.json')), 'stale: run npm run manifests');
  });

  test('the README has a row for every value, its default, and the comment above it', () => {
    const readme = readFileSync(join(ROOT, HELM_README_FILE), 'utf8');
    const leaves = (node: unknown, prefix: string): string[] =>
      node !== null && typeof node === 'object' && !Array.isArray(node) && Object.keys(node).length > 0 ? Object.entries(node).flatMap(([k, v]) => leaves(v, `${prefix}${k}.`)) : [prefix.slice(0, -1)];
    for (const key of leaves(values, '')) assert.match(readme, new RegExp(`^\\| \`${key.replaceAll('.', '\\.')}\` \\| `, 'm'), key);
    assert.match(readme, /^\| `webhook\.failurePolicy` \| `"Fail"` \| Fail: while no replica answers, every write to a sandbox kind in an opted-in namespace is refused /m);
    assert.match(readme, /^\| `replicaCount` \| `2` \| Two replicas and a PodDisruptionBudget of one/m);
    // No comment in values.yaml: the schema's description.
    assert.match(readme, /^\| `securityContext` \| {2}\| The webhook's and the reaper's container securityContext\. \|$/m);
  });

  test('a README row is as the comment says, with its example lines as code, and a pipe in a value escaped', () => {
    const text = helmReadme('name: c\ndescription: d\nversion: 1.0.0\nappVersion: "1"\n', 'a:\n  # Set it.\n  # Example:\n  #   - x: 1\n  b: "x|y"\n', '{}');
    assert.match(text, /^\| `a\.b` \| `"x\\\|y"` \| Set it\. Example: `- x: 1` \|$/m);
  });
  test('Chart.yaml follows the package version', () => {
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(chart.version, pkg.version);
    assert.equal(chart.appVersion, pkg.version);
  });

  test('values.yaml validates against values.schema.json', () => {
    assert.ok(validate(values), JSON.stringify(validate.errors, null, 2));
  });

  test("the schema's policy part is Deed's own policy schema (run npm run manifests after changing it)", () => {
    assert.deepEqual(schema.properties.policy, policyJsonSchema());
  });

  test("the default policy is one deed serve accepts", () => {
    assert.doesNotThrow(() => parseConfig(values.policy, 'values.yaml policy'));
  });

  const invalid: Array<{ name: string; patch: (v: Record<string, unknown>) => void }> = [
    { name: 'an unknown certificate mode', patch: (v) => ((v.certificates as Record<string, unknown>).mode = 'selfSigned') },
    {
      name: 'mode provided without a caBundle',
      patch: (v) => Object.assign(v.certificates as object, { mode: 'provided', provided: { secretName: 'deed-tls', caBundle: '' } }),
    },
    { name: 'a timeout of 10 s or more', patch: (v) => ((v.webhook as Record<string, unknown>).timeoutSeconds = 10) },
    { name: 'zero replicas', patch: (v) => (v.replicaCount = 0) },
    { name: 'a policy field deed does not know', patch: (v) => ((v.policy as Record<string, unknown>).colour = 'blue') },
    { name: 'a policy environment id that is not a label value', patch: (v) => ((v.policy as Record<string, unknown>).environments = [{ id: 'no spaces' }]) },
    { name: 'a reaper environment that cannot name a CronJob', patch: (v) => ((v.reaper as Record<string, unknown>).environments = ['Alpha_1']) },
    { name: 'a misspelt top-level key', patch: (v) => (v.replicas = 3) },
    { name: 'an attestation key id with a colon', patch: (v) => ((v.attestation as Record<string, unknown>).keys = ['a:b']) },
    { name: 'the same attestation key id twice', patch: (v) => ((v.attestation as Record<string, unknown>).keys = ['a', 'a']) },
    { name: 'a misspelt networkPolicy key', patch: (v) => ((v.networkPolicy as Record<string, unknown>).metricFrom = []) },
    { name: 'a deed serve flag that is not a string', patch: (v) => (v.extraArgs = [2000]) },
    { name: 'a report API the audit cannot write', patch: (v) => ((v.audit as Record<string, unknown>).reportApi = 'kyverno') },
    { name: 'a misspelt audit key', patch: (v) => ((v.audit as Record<string, unknown>).installCRD = true) },
  ];
  for (const { name, patch } of invalid) {
    test(`the schema rejects ${name}`, () => {
      assert.equal(validate(withValues(patch)), false);
    });
  }

  test('the schema accepts a key ring and its signing key', () => {
    assert.ok(validate(withValues((v) => Object.assign(v.attestation as object, { keys: ['key', 'k-2027.01'], signingKey: 'k-2027.01' }))), JSON.stringify(validate.errors));
  });

  test('the attestation Secret, the Deployment and the reaper take their key entries from one helper, and the policy its ring from the values', () => {
    for (const file of ['attestation-secret.yaml', 'deployment.yaml', 'reaper.yaml', 'audit.yaml']) assert.match(templates.get(file)!, /include "deed\.attestationKeyIds"/, file);
    const helpers = templates.get('_helpers.tpl')!;
    assert.match(helpers, /define "deed\.attestationKeyIds"[\s\S]*\.Values\.attestation\.keys \| default \(list "key"\)/);
    assert.match(helpers, /set \$policy "attestation" \(dict "keys" \$ring "signingKey" \$signing\)/);
    assert.match(helpers, /set \$policy "attestation" \(dict "keyFile" "\/etc\/deed\/attestation\/key"\)/);
  });

  test('the schema accepts each certificate mode with what it needs', () => {
    for (const certificates of [
      { mode: 'generated', generated: { validityDays: 365 } },
      { mode: 'certManager', certManager: { issuerRef: { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' } } },
      { mode: 'provided', provided: { secretName: 'deed-tls', caBundle: 'LS0tLS1CRUdJTg==' } },
    ]) {
      assert.ok(validate(withValues((v) => (v.certificates = certificates))), `${certificates.mode}: ${JSON.stringify(validate.errors)}`);
    }
  });

  test('every .Values path a template reads exists in values.yaml', () => {
    for (const [file, text] of templates) {
      for (const [, path] of text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
        let node: unknown = values;
        for (const part of path!.slice(1).split('.')) {
          assert.ok(node !== null && typeof node === 'object' && part in node, `${file}: .Values${path} is not in values.yaml`);
          node = (node as Record<string, unknown>)[part];
        }
      }
    }
  });

  test('every included helper is defined, and every block is closed', () => {
    const defined = new Set<string>();
    for (const text of templates.values()) for (const [, name] of text.matchAll(/\{\{-?\s*define\s+"([^"]+)"/g)) defined.add(name!);
    for (const [file, text] of templates) {
      for (const [, name] of text.matchAll(/include\s+"([^"]+)"/g)) assert.ok(defined.has(name!), `${file}: include "${name}" is not defined`);
      const stack: string[] = [];
      for (const action of actions(text)) {
        const word = action.split(/\s+/)[0];
        if (['if', 'range', 'with', 'define', 'block'].includes(word!)) stack.push(word!);
        if (word === 'end') assert.ok(stack.pop(), `${file}: an {{ end }} closes nothing`);
      }
      assert.deepEqual(stack, [], `${file}: unclosed blocks`);
    }
  });

  test('it renders every kind deed manifests does, except the Namespace (helm install --create-namespace)', () => {
    const chartKinds = new Set<string>();
    // The helm test hook's objects (tests/) exist only while helm test runs.
    for (const [file, text] of templates) if (!file.startsWith('tests/')) for (const [, kind] of text.matchAll(/^kind: (\w+)$/gm)) chartKinds.add(kind!);
    const deedKinds = new Set(renderManifests({ namespace: 'deed-system', image: 'x', reaperEnvironments: ['default'], reaperNamespaces: { default: ['sandbox'] }, audit: {} }).map((o) => o.kind!));
    deedKinds.delete('Namespace');
    for (const kind of deedKinds) assert.ok(chartKinds.has(kind), `the chart has no ${kind}`);
    // cert-manager's objects and the generated Secrets; the optional observability kit.
    assert.deepEqual([...chartKinds].filter((k) => !deedKinds.has(k)).sort(), ['Certificate', 'Issuer', 'PrometheusRule', 'Secret', 'ServiceMonitor']);
  });

  test('the reaper CronJob takes nodeSelector, tolerations, priorityClassName and resources from reaper values, and its arguments and RBAC match deed manifests', () => {
    const reaper = templates.get('reaper.yaml')!;
    for (const key of ['nodeSelector', 'tolerations', 'priorityClassName', 'resources']) assert.match(reaper, new RegExp(`\\$\\.Values\\.reaper\\.${key}\\b`), key);
    const full = /args: \[(.+)\]/.exec(reaper)![1]!;
    // The namespaces a confined reaper sweeps follow the common arguments, as in deed manifests.
    const sweeps = /\{\{ range \$ns := \$sweeps \}\}(.*)\{\{ end \}\}/.exec(full);
    assert.equal(sweeps?.[1], ', "--namespace", {{ $ns | quote }}');
    const line = full.replace(sweeps![0], '');
    const args = line.split(', ').map((a) => (a.includes('$env') ? 'default' : a.includes('Release.Namespace') ? 'deed-system' : a.replace(/^"(.*)"$/, '$1')));
    const cron = renderManifests({ namespace: 'deed-system', image: 'x', reaperEnvironments: ['default'] }).find((o) => o.kind === 'CronJob') as { spec: { jobTemplate: { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } } } };
    assert.deepEqual(args, cron.spec.jobTemplate.spec.template.spec.containers[0]!.args);
    assert.match(reaper, /resources: \["namespaces"\]\n\s+verbs: \["list"\]/);
    assert.ok(reaper.includes(`- name: NODE_OPTIONS\n                  value: "${REAPER_NODE_OPTIONS}"`), 'the same heap bounds as deed manifests');
    assert.ok(validate(withValues((v) => Object.assign(v.reaper as object, { nodeSelector: { pool: 'system' }, tolerations: [{ key: 'dedicated', operator: 'Exists' }], priorityClassName: 'low' }))));
    assert.equal(validate(withValues((v) => ((v.reaper as Record<string, unknown>).nodeSelector = { pool: 1 }))), false);
  });

  test('the Deployment runs deed serve with the same arguments as deed manifests', () => {
    const deployment = templates.get('deployment.yaml')!;
    const block = /args:\n((?:\s+- .+\n)+)/.exec(deployment)![1]!;
    // The two ports are values, whose defaults are deed manifests' ports.
    const ports: Record<string, string> = { '{{ .Values.webhook.port | quote }}': String((values.webhook as { port: number }).port), '{{ .Values.metrics.port | quote }}': String((values.metrics as { port: number }).port) };
    const args = [...block.matchAll(/- (.+)/g)].map((m) => ports[m[1]!] ?? m[1]!.replace(/^"(.*)"$/, '$1'));
    assert.deepEqual(args, SERVE_ARGS);
  });

  test('probes go to the plain-HTTP metrics port, and the NetworkPolicy (on by default) opens the webhook port and admits only the listed peers to the metrics port', () => {
    const deployment = templates.get('deployment.yaml')!;
    assert.equal(deployment.match(/port: metrics\n\s+scheme: HTTP\n/g)?.length, 2);
    assert.match(deployment, /- name: metrics\n\s+containerPort: \{\{ \.Values\.metrics\.port \}\}/);
    assert.equal((values.metrics as { port: number }).port, 8080);
    assert.equal((values.webhook as { port: number }).port, 8443);
    assert.equal((values.networkPolicy as { enabled: boolean }).enabled, true);
    const policy = templates.get('networkpolicy.yaml')!;
    assert.match(policy, /^\{\{- if \.Values\.networkPolicy\.enabled \}\}/);
    assert.match(policy, /- ports:\n\s+- port: \{\{ \.Values\.webhook\.port \}\}\n\s+protocol: TCP\n\s+\{\{- with \.Values\.networkPolicy\.webhookFrom \}\}/);
    assert.match(policy, /\{\{- with \.Values\.networkPolicy\.metricsFrom \}\}\n\s+- ports:\n\s+- port: \{\{ \$\.Values\.metrics\.port \}\}/);
  });

  test('both webhook configurations carry the cainjector annotation in certManager mode and the shared rules', () => {
    const text = templates.get('webhooks.yaml')!;
    assert.equal(text.match(/cert-manager\.io\/inject-ca-from/g)?.length, 2);
    assert.equal(text.match(/include "deed\.webhookCommon"/g)?.length, 6, "the first pair, the default row's, and the two that keep stamps");
    assert.match(text, /include "deed\.keepStampsCondition"/);
    assert.match(text, /include "deed\.operatorStampsCondition"/);
    assert.ok(templates.get('_helpers.tpl')!.includes(operatorStampsCondition('LABEL-PREFIX', ['CONTROLLERS']).replace('["CONTROLLERS"]', '{{ include "deed.celList" (include "deed.workloadControllers" . | fromJsonArray) }}').replace('LABEL-PREFIX', '{{ .Values.policy.labelPrefix }}')), "the chart's operator condition is deed manifests' own");
    assert.ok(templates.get('_kinds.tpl')!.includes(keepStampsCondition('LABEL-PREFIX')), "the chart's condition is deed manifests' own, under its label prefix");
    assert.equal(text.match(/include "deed\.defaultRowExclusion"/g)?.length, 2);
    assert.ok(templates.get('_kinds.tpl')!.includes(`in [${defaultRowExcluded().map((r) => `'${r}'`).join(', ')}])`), "the chart's default-row exclusions are deed manifests' own");
    assert.match(text, /pods\/ephemeralcontainers/);
    assert.match(text, /reinvocationPolicy: IfNeeded/);
    const helpers = templates.get('_helpers.tpl')!;
    assert.equal((values.webhook as { failurePolicy: string }).failurePolicy, 'Fail', 'fail closed by default');
    assert.deepEqual((values.webhook as { matchConditions: unknown[] }).matchConditions, []);
    for (const needle of ['sideEffects: None', 'failurePolicy: {{ .Values.webhook.failurePolicy | default "Fail" }}', '{{- with .Values.webhook.matchConditions }}', 'matchPolicy: Equivalent', 'admissionReviewVersions: ["v1"]', 'kubernetes.io/metadata.name', 'request.userInfo.username', "'system:serviceaccounts:kube-system' in request.userInfo.groups"])
      assert.ok(helpers.includes(needle), `_helpers.tpl: ${needle}`);
  });

  test('the observability kit is off by default, each part rendered only when enabled', () => {
    const { port: _, ...metrics } = values.metrics as Record<string, { enabled: boolean }>;
    assert.deepEqual(Object.keys(metrics).sort(), ['dashboard', 'prometheusRule', 'serviceMonitor']);
    for (const [part, file] of [['serviceMonitor', 'servicemonitor.yaml'], ['prometheusRule', 'prometheusrule.yaml'], ['dashboard', 'dashboard.yaml']] as const) {
      assert.equal(metrics[part]!.enabled, false, `metrics.${part}.enabled`);
      assert.match(templates.get(file)!, new RegExp(`^(\\{\\{- /\\*.*\\*/ -\\}\\}\\n)?\\{\\{- if \\.Values\\.metrics\\.${part}\\.enabled \\}\\}\\n`), file);
    }
    assert.ok(!validate(withValues((v) => ((v.metrics as Record<string, Record<string, unknown>>).serviceMonitor!.enable = true))), 'a misspelt switch is refused, not ignored');
  });

  test('the PodDisruptionBudget takes minAvailable or maxUnavailable, a number or a percentage, and is skipped below two replicas', () => {
    const pdb = (patch: Record<string, unknown>) => withValues((v) => Object.assign(v.podDisruptionBudget as object, patch));
    assert.ok(validate(pdb({ maxUnavailable: 1 })));
    assert.ok(validate(pdb({ maxUnavailable: '50%' })));
    assert.ok(validate(pdb({ minAvailable: '50%' })));
    assert.ok(!validate(pdb({ maxUnavailable: 'half' })));
    assert.ok(!validate(pdb({ minAvailable: -1 })));
    assert.match(templates.get('poddisruptionbudget.yaml')!, /\{\{- if and \.Values\.podDisruptionBudget\.enabled \(ge \(int \.Values\.replicaCount\) 2\) \}\}/);
  });

  test("the pod settings that are values default to what deed manifests renders", () => {
    const deployment = renderManifests({ namespace: 'deed-system', image: 'x' }).find((o) => o.kind === 'Deployment') as V1Deployment;
    const pod = deployment.spec!.template.spec!;
    assert.deepEqual(values.podSecurityContext, pod.securityContext);
    assert.deepEqual(values.securityContext, pod.containers[0]!.securityContext);
    assert.deepEqual(
      values.topologySpreadConstraints,
      pod.topologySpreadConstraints!.map(({ labelSelector: _, ...rest }) => rest),
      'the chart adds the labelSelector',
    );
    for (const key of ['podLabels', 'podAnnotations', 'nodeSelector', 'tolerations', 'topologySpreadConstraints', 'podSecurityContext', 'securityContext'])
      assert.ok(key in (schema.properties as object), `values.schema.json describes ${key}`);
  });

  test('the audit is off by default, and its CRD is installed only when asked, from the file npm run manifests writes', () => {
    const audit = values.audit as { enabled: boolean; installCRDs: boolean };
    assert.equal(audit.enabled, false);
    assert.equal(audit.installCRDs, false);
    assert.match(templates.get('audit.yaml')!, /^\{\{- if \.Values\.audit\.enabled -\}\}/);
    assert.match(templates.get('policyreport-crd.yaml')!, /^\{\{- if \.Values\.audit\.installCRDs \}\}\n\{\{ \.Files\.Get "files\/policyreport-crd\.yaml" \}\}/);
    assert.equal(readFileSync(join(ROOT, HELM_CRD_FILE), 'utf8'), helmCrdFileText(), 'stale: run npm run manifests');
  });

  test('the audit CronJob runs deed audit with the same arguments as deed manifests --audit', () => {
    const line = /args: \[(.+)\]/.exec(templates.get('audit.yaml')!)![1]!;
    const args = line.split(', ').map((a) => a.replace(/^\{\{ \.Values\.audit\.reportApi \| quote \}\}$/, 'API').replace(/^\{\{ \.Release\.Namespace \| quote \}\}$/, 'NS').replace(/^"(.*)"$/, '$1'));
    assert.deepEqual(args, auditArgs('NS', 'API' as never));
    assert.ok(templates.get('audit.yaml')!.includes(`- name: NODE_OPTIONS\n                  value: "${REAPER_NODE_OPTIONS}"`), "the reaper's heap bounds, as deed manifests --audit");
  });
});
