// The observability kit's queries against the metrics Deed registers: a rule or panel that
// names a series Deed never exports would stay silent exactly when it is needed.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { createMetrics } from '../src/observability/metrics.js';
import { ReaperMetrics } from '../src/reaper/metrics.js';
import { KUSTOMIZE_BASE_DIR } from '../src/install/kustomize.js';
import {
  HELM_DASHBOARD_FILE,
  HELM_PROMETHEUS_RULE_TEMPLATE,
  helmDashboardJson,
  helmPrometheusRuleTemplate,
  kustomizeMonitoringComponent,
  KUSTOMIZE_MONITORING_DIR,
} from '../src/install/monitoring.js';
import { alertRules, allExpressions, dashboard, KUBE_STATE_METRICS } from '../src/install/observability.js';
import { ROOT } from './cli-process.js';

const SCOPE = { namespace: 'deed-system', deployment: 'deed', reaperPrefix: 'deed-reaper', timeoutSeconds: '5' };

/** Deed's series by name (the webhook's and the reaper's), with the labels each carries; a histogram's as its _bucket, _sum and _count. */
async function registered(): Promise<Map<string, Set<string>>> {
  const series = new Map<string, Set<string>>();
  for (const registry of [createMetrics().registry, new ReaperMetrics('alpha').registry]) {
    for (const { name, type } of await registry.getMetricsAsJSON()) {
      const labels = new Set<string>((registry.getSingleMetric(name) as unknown as { labelNames?: string[] }).labelNames ?? []);
      const names = String(type) === 'histogram' ? ['_bucket', '_sum', '_count'].map((suffix) => name + suffix) : [name];
      for (const n of names) series.set(n, n.endsWith('_bucket') ? new Set([...labels, 'le']) : labels);
    }
  }
  return series;
}

/** Labels Prometheus (and the Prometheus Operator) adds to every scraped series. */
const TARGET_LABELS = new Set(['job', 'instance', 'namespace', 'pod', 'service', 'container', 'endpoint']);

const METRIC = /\b((?:deed|process|nodejs|kube)_[a-z0-9_]+)\b/g;

describe('the observability kit', () => {
  test('every metric of Deed that an alert or a panel reads is one Deed registers, and the others are kube-state-metrics series', async () => {
    const series = await registered();
    const named = new Set(allExpressions(SCOPE).flatMap((expr) => [...expr.matchAll(METRIC)].map((m) => m[1]!)));
    assert.ok(named.size >= 8, 'the expressions name metrics');
    for (const name of named) {
      if (name.startsWith('kube_')) assert.ok((KUBE_STATE_METRICS as readonly string[]).includes(name), `${name} is not a listed kube-state-metrics series`);
      else assert.ok(series.has(name), `${name} is not registered by src/observability/metrics.ts or src/reaper/metrics.ts`);
    }
  });

  test("the labels each expression groups or filters Deed's series by are labels those series carry", async () => {
    const series = await registered();
    for (const expr of allExpressions(SCOPE)) {
      const metrics = [...expr.matchAll(METRIC)].map((m) => m[1]!).filter((n) => series.has(n));
      if (metrics.length === 0) continue;
      const carried = new Set([...TARGET_LABELS, ...metrics.flatMap((n) => [...series.get(n)!])]);
      const used = [...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((l) => l.trim()));
      used.push(...[...expr.matchAll(/([a-z_]+)=~?"/g)].map((m) => m[1]!));
      for (const label of used) assert.ok(carried.has(label), `${expr}: ${label} is not a label of ${metrics.join(', ')}`);
    }
  });

  test('the seven alerts are there, each with a summary, a description and runbook text', () => {
    const rules = alertRules(SCOPE);
    assert.deepEqual(rules.map((r) => r.alert), ['DeedCertificateExpiresSoon', 'DeedInternalErrors', 'DeedReviewLatencyNearTimeout', 'DeedNoReadyReplica', 'DeedLookupCacheShed', 'DeedReaperNotSucceeding', 'DeedReaperLeasesUnread']);
    for (const r of rules) {
      for (const text of [r.annotations.summary, r.annotations.description, r.annotations.runbook]) assert.ok(text.length > 20, `${r.alert}: ${text}`);
      // The reaper's own series come from its metrics file (a textfile collector or a push), not a target in Deed's namespace.
      if (!/\bdeed_reaper_/.test(r.expr)) assert.match(r.expr, /namespace="deed-system"/, `${r.alert} looks at Deed's namespace only`);
    }
    assert.match(rules[0]!.expr, /< 14 \* 86400$/);
    assert.match(rules[2]!.expr, /> 0\.5 \* 5$/, 'half the webhook timeout');
  });

  test('the dashboard reads one Prometheus data source and job, and every panel has a query', () => {
    const d = dashboard() as { panels: Array<{ targets: unknown[]; datasource: { uid: string } }>; templating: { list: Array<{ name: string }> } };
    assert.deepEqual(d.templating.list.map((v) => v.name), ['datasource', 'job']);
    for (const p of d.panels) {
      assert.ok(p.targets.length > 0);
      assert.equal(p.datasource.uid, '${datasource}');
    }
  });

  test('the committed chart files and kustomize component are what `npm run manifests` generates', () => {
    assert.equal(readFileSync(join(ROOT, HELM_DASHBOARD_FILE), 'utf8'), helmDashboardJson(), `${HELM_DASHBOARD_FILE} is stale`);
    assert.equal(readFileSync(join(ROOT, HELM_PROMETHEUS_RULE_TEMPLATE), 'utf8'), helmPrometheusRuleTemplate(), `${HELM_PROMETHEUS_RULE_TEMPLATE} is stale`);
    const expected = kustomizeMonitoringComponent();
    const dir = join(ROOT, KUSTOMIZE_MONITORING_DIR);
    assert.deepEqual(readdirSync(dir).sort(), [...expected.keys()].sort());
    for (const [file, text] of expected) assert.equal(readFileSync(join(dir, file), 'utf8'), text, `${file} is stale: run npm run manifests`);
  });

  test('an overlay of the base with the monitoring component renders the ServiceMonitor, the PrometheusRule and the dashboard ConfigMap', () => {
    const overlay = mkdtempSync(join(tmpdir(), 'deed-overlay-'));
    const rel = (p: string) => JSON.stringify(relative(overlay, join(ROOT, p)));
    writeFileSync(join(overlay, 'kustomization.yaml'), `resources: [${rel(KUSTOMIZE_BASE_DIR)}]\ncomponents: [${rel(KUSTOMIZE_MONITORING_DIR)}]\n`);
    const out = execFileSync('kubectl', ['kustomize', overlay], { encoding: 'utf8', timeout: 60_000 });
    const objects = parseAllDocuments(out).map((d) => d.toJS() as { kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: Record<string, unknown>; data?: Record<string, string> });
    const service = objects.find((o) => o.kind === 'Service')!;
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor')!;
    assert.deepEqual((monitor.spec!.selector as { matchLabels: object }).matchLabels, service.metadata.labels, 'the ServiceMonitor selects the webhook Service');
    assert.equal((monitor.spec!.endpoints as Array<{ port: string }>)[0]!.port, 'metrics');
    assert.ok(objects.some((o) => o.kind === 'PrometheusRule'));
    const board = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'deed-dashboard')!;
    assert.equal(board.metadata.labels!.grafana_dashboard, '1');
    assert.deepEqual(JSON.parse(board.data!['deed.json']!), dashboard());
  });
});
