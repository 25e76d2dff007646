// The install objects against the real API server: `helm lint`, `helm install` with the
// default values and with each certificate mode that needs no cert-manager, and the
// rendered chart and the kustomize base accepted by `kubectl apply --dry-run=server`; the
// observability kit installed with the Prometheus Operator's CRDs, and the chart's settings.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { alertRules, dashboard } from '../../../src/install/observability.js';
import { ROOT } from '../../serve-process.js';
import { run, type Run } from '../client.js';
import type { Suite } from '../suite.js';
import { helm as helmIn } from '../helm.js';
import type { Tools } from './admission.js';

const CHART = join(ROOT, 'manifests/helm/deed');
const MONITORING_CRDS = join(import.meta.dirname, '../fixtures/monitoring-crds.yaml');
const KIT = ['--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.prometheusRule.enabled=true', '--set', 'metrics.dashboard.enabled=true'];

interface Rendered {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

export function installCases(suite: () => Suite, tools: Tools): void {
  const needsHelm = tools.helm ? false : 'needs helm in KUBEBUILDER_ASSETS (setup-envtest does not ship it)';

  const helm = (s: Suite, args: string[]): Promise<Run> => helmIn(s, 'helm', args);
  const webhookCaBundles = async (s: Suite, name: string): Promise<string[]> => {
    const bundles: string[] = [];
    for (const kind of ['mutating', 'validating']) {
      const answer = await s.api(s.admin, 'GET', `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${name}`);
      assert.equal(answer.status, 200, answer.text);
      bundles.push(...(answer.body.webhooks as Array<{ clientConfig: { caBundle: string } }>).map((w) => w.clientConfig.caBundle));
    }
    return bundles;
  };

  /** ServiceMonitor and PrometheusRule become kinds the API server stores. */
  const applyMonitoringCrds = async (s: Suite): Promise<void> => {
    const applied = await s.kubectl(s.admin, ['apply', '-f', MONITORING_CRDS]);
    assert.equal(applied.code, 0, applied.stderr);
    const ready = await s.kubectl(s.admin, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/servicemonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com']);
    assert.equal(ready.code, 0, ready.stderr);
  };

  describe('installing Deed', () => {
    test('helm lint passes on the chart', { skip: needsHelm }, async () => {
      const s = suite();
      const result = await helm(s, ['lint', CHART]);
      assert.equal(result.code, 0, result.stdout + result.stderr);
    });

    test('helm template with default values is accepted by kubectl apply --dry-run=server', { skip: needsHelm }, async () => {
      const s = suite();
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: 'helm-template' } })).status, 201);
      const rendered = await helm(s, ['template', 'rendered', CHART, '-n', 'helm-template', '--skip-tests']);
      assert.equal(rendered.code, 0, rendered.stderr);
      const applied = await s.kubectl(s.admin, ['apply', '--dry-run=server', '-n', 'helm-template', '-f', '-'], rendered.stdout);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /validatingwebhookconfiguration.admissionregistration.k8s.io\/rendered-deed created \(server dry run\)/);
    });

    test('the kustomize base, through an overlay, is accepted by kubectl apply --dry-run=server', async () => {
      const s = suite();
      // An overlay as the README shows one; the prefix keeps clear of the suite's own "deed" webhooks.
      // A server dry run persists no namespace, so the one the objects go to must exist.
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: 'kust-system' } })).status, 201);
      const overlay = join(s.cp.dir, 'overlay');
      mkdirSync(overlay);
      writeFileSync(join(overlay, 'kustomization.yaml'), `resources: [${JSON.stringify(relative(overlay, join(ROOT, 'manifests/kustomize/base')))}]\nnamePrefix: kust-\nnamespace: kust-system\n`);
      const built = await s.kubectl(s.admin, ['kustomize', overlay]);
      assert.equal(built.code, 0, built.stderr);
      const applied = await s.kubectl(s.admin, ['apply', '--dry-run=server', '-f', '-'], built.stdout);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /deployment.apps\/kust-deed created \(server dry run\)/);
      assert.match(applied.stdout, /validatingwebhookconfiguration.admissionregistration.k8s.io\/kust-deed created \(server dry run\)/);
    });

    test('helm install with default values makes a CA and serving certificate the webhooks trust', { skip: needsHelm }, async () => {
      const s = suite();
      const installed = await helm(s, ['install', 'chart-gen', CHART, '-n', 'helm-gen', '--create-namespace']);
      try {
        assert.equal(installed.code, 0, installed.stdout + installed.stderr);
        const tls = await s.api(s.admin, 'GET', '/api/v1/namespaces/helm-gen/secrets/chart-gen-deed-tls');
        assert.equal(tls.status, 200, tls.text);
        const ca = tls.body.data['ca.crt'] as string;
        assert.ok(ca.length > 0);
        assert.deepEqual([...new Set(await webhookCaBundles(s, 'chart-gen-deed'))], [ca]);
        assert.equal((await s.api(s.admin, 'GET', '/apis/apps/v1/namespaces/helm-gen/deployments/chart-gen-deed')).status, 200);
      } finally {
        // Its webhooks point at a Service no pod backs here: remove them before other tests write.
        const removed = await helm(s, ['uninstall', 'chart-gen', '-n', 'helm-gen', '--wait']);
        assert.equal(removed.code, 0, removed.stderr);
      }
    });

    test('helm install with provided certificates puts the given CA in both webhooks', { skip: needsHelm }, async () => {
      const s = suite();
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: 'helm-provided' } })).status, 201);
      const certs = join(s.cp.dir, 'provided-certs');
      const made = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'certs', '--out', certs, '--dns', 'chart-prov-deed.helm-provided.svc']);
      assert.equal(made.code, 0, made.stderr);
      const secret = await s.kubectl(s.admin, ['create', 'secret', 'tls', 'my-tls', '-n', 'helm-provided', `--cert=${join(certs, 'tls.crt')}`, `--key=${join(certs, 'tls.key')}`]);
      assert.equal(secret.code, 0, secret.stderr);
      const caBundle = readFileSync(join(certs, 'ca.crt')).toString('base64');
      const installed = await helm(s, ['install', 'chart-prov', CHART, '-n', 'helm-provided', '--set', 'certificates.mode=provided', '--set', 'certificates.provided.secretName=my-tls', '--set', `certificates.provided.caBundle=${caBundle}`]);
      try {
        assert.equal(installed.code, 0, installed.stdout + installed.stderr);
        assert.deepEqual([...new Set(await webhookCaBundles(s, 'chart-prov-deed'))], [caBundle]);
        assert.equal((await s.api(s.admin, 'GET', '/api/v1/namespaces/helm-provided/secrets/chart-prov-deed-tls')).status, 404, 'no generated certificate in provided mode');
      } finally {
        const removed = await helm(s, ['uninstall', 'chart-prov', '-n', 'helm-provided', '--wait']);
        assert.equal(removed.code, 0, removed.stderr);
      }
    });

    test('with the monitoring CRDs applied, helm install with the observability kit creates the ServiceMonitor, the PrometheusRule and the dashboard', { skip: needsHelm }, async () => {
      const s = suite();
      await applyMonitoringCrds(s);
      const installed = await helm(s, ['install', 'chart-mon', CHART, '-n', 'helm-mon', '--create-namespace', ...KIT]);
      try {
        assert.equal(installed.code, 0, installed.stdout + installed.stderr);
        const monitor = await s.api(s.admin, 'GET', '/apis/monitoring.coreos.com/v1/namespaces/helm-mon/servicemonitors/chart-mon-deed');
        assert.equal(monitor.status, 200, monitor.text);
        assert.deepEqual(monitor.body.spec.endpoints, [{ port: 'metrics', path: '/metrics', scheme: 'http', interval: '30s' }]);
        const service = await s.api(s.admin, 'GET', '/api/v1/namespaces/helm-mon/services/chart-mon-deed');
        for (const [k, v] of Object.entries(monitor.body.spec.selector.matchLabels as Record<string, string>)) assert.equal(service.body.metadata.labels[k], v, `the ServiceMonitor selects the webhook Service (${k})`);

        const rule = await s.api(s.admin, 'GET', '/apis/monitoring.coreos.com/v1/namespaces/helm-mon/prometheusrules/chart-mon-deed');
        assert.equal(rule.status, 200, rule.text);
        const rules = rule.body.spec.groups[0].rules as Array<{ alert: string; expr: string; annotations: Record<string, string> }>;
        assert.deepEqual(rules.map((r) => r.alert), alertRules({ namespace: 'x', deployment: 'x', reaperPrefix: 'x', timeoutSeconds: '5' }).map((r) => r.alert), 'the chart renders every alert of the kit');
        // The webhook's alerts; the reaper's series come from its metrics file, labelled by environment, not namespace.
        for (const r of rules) {
          if (!r.expr.includes('deed_reaper_')) assert.match(r.expr, /namespace="helm-mon"/, `${r.alert} is scoped to the release namespace`);
          assert.ok(r.annotations.runbook!.length > 50, `${r.alert} has runbook text`);
        }
        assert.match(rules.find((r) => r.alert === 'DeedNoReadyReplica')!.expr, /deployment="chart-mon-deed"/);
        assert.match(rules.find((r) => r.alert === 'DeedReviewLatencyNearTimeout')!.expr, /> 0\.5 \* 5$/);
        assert.match(rules.find((r) => r.alert === 'DeedCertificateExpiresSoon')!.annotations.description!, /\{\{ \$labels\.pod \}\}/, "Prometheus's own templates survive Helm's");

        const board = await s.api(s.admin, 'GET', '/api/v1/namespaces/helm-mon/configmaps/chart-mon-deed-dashboard');
        assert.equal(board.status, 200, board.text);
        assert.equal(board.body.metadata.labels.grafana_dashboard, '1');
        assert.deepEqual(JSON.parse(board.body.data['deed.json'] as string), dashboard());
      } finally {
        const removed = await helm(s, ['uninstall', 'chart-mon', '-n', 'helm-mon', '--wait']);
        assert.equal(removed.code, 0, removed.stderr);
      }
    });

    test('helm template: no PodDisruptionBudget at one replica, maxUnavailable when set, pod settings from the values; the API server accepts it', { skip: needsHelm }, async () => {
      const s = suite();
      await applyMonitoringCrds(s);
      const render = async (args: string[]): Promise<{ text: string; objects: Rendered[] }> => {
        const out = await helm(s, ['template', 'settings', CHART, '-n', 'helm-settings', '--skip-tests', ...args]);
        assert.equal(out.code, 0, out.stderr);
        return { text: out.stdout, objects: parseAllDocuments(out.stdout).map((d) => d.toJS() as Rendered).filter((o) => o !== null) };
      };
      const kinds = (objects: Rendered[]) => objects.map((o) => o.kind);

      assert.ok(kinds((await render([])).objects).includes('PodDisruptionBudget'), 'two replicas: a budget');
      assert.ok(!kinds((await render(['--set', 'replicaCount=1'])).objects).includes('PodDisruptionBudget'), 'one replica: none, or it would block every drain');
      const byMax = (await render(['--set', 'podDisruptionBudget.maxUnavailable=50%'])).objects.find((o) => o.kind === 'PodDisruptionBudget')!;
      assert.equal(byMax.spec!.maxUnavailable, '50%');
      assert.equal(byMax.spec!.minAvailable, undefined);
      assert.ok(!kinds((await render([])).objects).some((k) => k === 'ServiceMonitor' || k === 'PrometheusRule'), 'the kit is off by default');

      const custom = await render([
        ...KIT,
        '--set', 'podLabels.team=platform',
        '--set', 'podAnnotations.note=x',
        '--set', 'nodeSelector.pool=system',
        '--set-json', 'tolerations=[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}]',
        '--set-json', 'topologySpreadConstraints=[{"maxSkew":2,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"DoNotSchedule"}]',
        '--set', 'securityContext.readOnlyRootFilesystem=true',
        '--set', 'podSecurityContext.fsGroup=2000',
      ]);
      const deployment = custom.objects.find((o) => o.kind === 'Deployment')!;
      const template = deployment.spec!.template as { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: Record<string, unknown> };
      assert.equal(template.metadata.labels.team, 'platform');
      assert.equal(template.metadata.labels['app.kubernetes.io/name'], 'deed', 'the selector labels stay');
      assert.equal(template.metadata.annotations.note, 'x');
      assert.deepEqual(template.spec.nodeSelector, { pool: 'system' });
      assert.deepEqual(template.spec.tolerations, [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }]);
      const spread = template.spec.topologySpreadConstraints as Array<{ maxSkew: number; labelSelector: { matchLabels: Record<string, string> } }>;
      assert.equal(spread.length, 1);
      assert.equal(spread[0]!.maxSkew, 2);
      assert.equal(spread[0]!.labelSelector.matchLabels['app.kubernetes.io/component'], 'webhook', 'the chart selects its own pods');
      assert.equal((template.spec.securityContext as { fsGroup: number }).fsGroup, 2000);

      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: 'helm-settings' } })).status, 201);
      const applied = await s.kubectl(s.admin, ['apply', '--dry-run=server', '-n', 'helm-settings', '-f', '-'], custom.text);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /servicemonitor.monitoring.coreos.com\/settings-deed created \(server dry run\)/);
      assert.match(applied.stdout, /prometheusrule.monitoring.coreos.com\/settings-deed created \(server dry run\)/);
    });

    test('the kustomize base with the monitoring component, through an overlay, is accepted by kubectl apply --dry-run=server', async () => {
      const s = suite();
      await applyMonitoringCrds(s);
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: 'kmon-system' } })).status, 201);
      const overlay = join(s.cp.dir, 'overlay-monitoring');
      mkdirSync(overlay);
      const rel = (p: string) => JSON.stringify(relative(overlay, join(ROOT, p)));
      writeFileSync(join(overlay, 'kustomization.yaml'), `resources: [${rel('manifests/kustomize/base')}]\ncomponents: [${rel('manifests/kustomize/components/monitoring')}]\nnamePrefix: kmon-\nnamespace: kmon-system\n`);
      const built = await s.kubectl(s.admin, ['kustomize', overlay]);
      assert.equal(built.code, 0, built.stderr);
      const applied = await s.kubectl(s.admin, ['apply', '--dry-run=server', '-f', '-'], built.stdout);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /servicemonitor.monitoring.coreos.com\/kmon-deed created \(server dry run\)/);
      assert.match(applied.stdout, /prometheusrule.monitoring.coreos.com\/kmon-deed created \(server dry run\)/);
      assert.match(applied.stdout, /configmap\/kmon-deed-dashboard created \(server dry run\)/);
    });
  });
}
