// The observability kit: a ServiceMonitor, a PrometheusRule with the alerts an operator
// needs (each with its runbook), and a Grafana dashboard. One source for the Helm chart's
// templates and the kustomize component, which `npm run manifests` writes from here. The
// queries name Deed's metrics (src/observability/metrics.ts; a test checks every name is
// registered) and, where only the cluster knows, kube-state-metrics'.
import type { KubernetesObject } from '@kubernetes/client-node';
import { MAX_LEASE_READS_PER_NAMESPACE } from '../reaper/lease-facts.js';

/** Series of kube-state-metrics the alerts read: whether a replica is ready, when the reaper last succeeded. */
export const KUBE_STATE_METRICS = ['kube_deployment_status_replicas_available', 'kube_cronjob_status_last_successful_time'] as const;

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: 'warning' | 'critical' };
  annotations: { summary: string; description: string; runbook: string };
}

/**
 * Where the alerts look. Strings, so the Helm chart can pass template expressions
 * (`{{ $ns }}`) that the chart fills in at render time.
 */
export interface AlertScope {
  namespace: string;
  /** The webhook's Deployment. */
  deployment: string;
  /** Prefix of the reaper CronJobs' names (`<name>-reaper-<environment>`). */
  reaperPrefix: string;
  /** The webhook configurations' timeoutSeconds. */
  timeoutSeconds: string;
}

export function alertRules(s: AlertScope): AlertRule[] {
  const ns = `namespace="${s.namespace}"`;
  return [
    {
      alert: 'DeedCertificateExpiresSoon',
      expr: `min by (namespace, pod) (deed_certificate_expiry_timestamp_seconds{${ns}}) - time() < 14 * 86400`,
      for: '1h',
      labels: { severity: 'warning' },
      annotations: {
        summary: "Deed's serving certificate expires within 14 days.",
        description: 'Pod {{ $labels.pod }} serves a certificate that expires in {{ $value | humanizeDuration }}.',
        runbook:
          'Once it expires the API server refuses to call Deed (x509), and failurePolicy Fail refuses every sandbox write in opted-in namespaces. With cert-manager, check the Certificate and the cert-manager logs: it should have renewed at renewBefore. Otherwise replace the TLS Secret under the same CA (docs/operations.md, "Certificates"); the pods serve the new pair within about a minute, without a restart.',
      },
    },
    {
      alert: 'DeedInternalErrors',
      expr: `sum by (namespace) (increase(deed_review_errors_total{${ns}}[10m])) > 0`,
      for: '0m',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'Deed answered reviews with internal errors.',
        description: '{{ $value | humanize }} reviews failed inside Deed in the last 10 minutes; each was denied (fail closed).',
        runbook:
          'Each internal error denied a write with the request uid in its message. Find the log lines with "decision":"errored" (kubectl -n NAMESPACE logs deployment/deed): they name the fault. If it started with an upgrade or a policy change, roll it back.',
      },
    },
    {
      alert: 'DeedReviewLatencyNearTimeout',
      expr: `histogram_quantile(0.99, sum by (namespace, le) (rate(deed_review_duration_seconds_bucket{${ns}}[5m]))) > 0.5 * ${s.timeoutSeconds}`,
      for: '10m',
      labels: { severity: 'warning' },
      annotations: {
        summary: "Deed's p99 review time is above half the webhook timeout.",
        description: 'p99 {{ $value | humanizeDuration }} against a timeout of ' + s.timeoutSeconds + ' s.',
        runbook:
          'Past 80% of the timeout Deed denies a review itself (internal.deadline, 504), and past the timeout the API server fails the write. Check CPU throttling of the webhook pods (limit 1 core), the review rate per replica, and the API server reads Deed makes for evictions, bindings and claims; add replicas or raise the CPU limit.',
      },
    },
    {
      alert: 'DeedNoReadyReplica',
      expr: `kube_deployment_status_replicas_available{${ns}, deployment="${s.deployment}"} < 1`,
      for: '2m',
      labels: { severity: 'critical' },
      annotations: {
        summary: 'No Deed replica is ready: sandbox writes are refused.',
        description: 'Deployment {{ $labels.namespace }}/{{ $labels.deployment }} has no available replica.',
        runbook:
          'With failurePolicy Fail, every write Deed reviews in opted-in namespaces (every namespaced kind, not only the sandbox kinds) fails with "failed calling webhook". kubectl -n NAMESPACE describe pods -l app.kubernetes.io/name=deed (a missing Secret, an image pull, a policy that does not load), then the logs. To let writes through before it is fixed, see docs/operations.md, "When the webhook is down". Needs kube-state-metrics.',
      },
    },
    {
      alert: 'DeedLookupCacheShed',
      expr: `max by (namespace, pod, resource) (deed_lookup_cache_shed{${ns}}) > 0`,
      for: '0m',
      labels: { severity: 'warning' },
      annotations: {
        summary: "Deed's lookup cache reached its memory budget: a resource is read from the API server instead.",
        description: 'Pod {{ $labels.pod }} no longer caches {{ $labels.resource }}: every lookup of one is a GET to the API server until the pod restarts.',
        runbook:
          'Nothing is refused and nothing is wrong in an answer: Deed stopped caching the resource that held most rather than run out of memory, and reads it live (slower reviews, more API server reads: deed_lookup_live_reads_total). The cache estimate (deed_lookup_cache_bytes) outgrew deed_lookup_cache_budget_bytes, a quarter of the memory limit by default. Raise the limit (resources.limits.memory) or the budget (lookupCache.memoryMiB, --cache-memory) per docs/operations.md, "Sizing", then restart the pods.',
      },
    },
    {
      alert: 'DeedReaperNotSucceeding',
      expr: `time() - max by (namespace, cronjob) (kube_cronjob_status_last_successful_time{${ns}, cronjob=~"${s.reaperPrefix}-.+"}) > 3600`,
      for: '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary: "Deed's reaper has not completed a sweep for an hour.",
        description: 'CronJob {{ $labels.namespace }}/{{ $labels.cronjob }} last succeeded {{ $value | humanizeDuration }} ago.',
        runbook:
          'Leaked sandbox objects accumulate meanwhile (the reaper never deletes on doubt, so nothing is lost). Read the last Job\'s log: exit 1 is a failed list or delete (RBAC, API errors: the lines say which), exit 2 that it could not start (an environment the policy lacks, no attestation key, no credentials). Needs kube-state-metrics.',
      },
    },
    {
      // From the reaper's metrics file (deed reap --metrics-file), collected by a textfile
      // collector or a push sidecar: its series carry no namespace of Deed's, so by environment.
      alert: 'DeedReaperLeasesUnread',
      expr: 'max by (environment, reason) (deed_reaper_leases_unread) > 0',
      for: '30m',
      labels: { severity: 'warning' },
      annotations: {
        summary: "Deed's reaper keeps objects whose run lease it did not read.",
        description: 'The last sweep of environment {{ $labels.environment }} left {{ $value }} run leases unread ({{ $labels.reason }}); the objects naming them were kept.',
        runbook:
          `A kept object may be a leaked credential: nothing is deleted on doubt, so these stay until their lease is read. Find them in the reaper's log by code. failed (lease-unreadable): the read of the Lease by name failed other than NotFound; the line names the Lease and the error (RBAC: the reaper needs get on leases.coordination.k8s.io in that namespace; API server errors, timeouts). bounded (lease-bounded): objects in one namespace named more distinct run leases than a sweep reads there (${MAX_LEASE_READS_PER_NAMESPACE.toLocaleString('en-US')}); the rest are read by later sweeps as the first are reaped. Other environments' Leases never count: only the leases this environment's objects name are read. Needs the reaper's --metrics-file collected.`,
      },
    },
  ];
}

export interface MonitoringTarget {
  namespace: string;
  name: string;
  /** The Service's labels that select it. */
  selector: Record<string, string>;
}

export function serviceMonitor(t: MonitoringTarget, interval = '30s'): KubernetesObject {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: t.name, namespace: t.namespace, labels: { ...t.selector } },
    spec: {
      selector: { matchLabels: { ...t.selector } },
      namespaceSelector: { matchNames: [t.namespace] },
      // Plain HTTP on the metrics port; the NetworkPolicy must admit Prometheus to it.
      endpoints: [{ port: 'metrics', path: '/metrics', scheme: 'http', interval }],
    },
  } as KubernetesObject;
}

export function prometheusRule(t: MonitoringTarget, scope: AlertScope): KubernetesObject {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: t.name, namespace: t.namespace, labels: { ...t.selector } },
    spec: { groups: [{ name: 'deed', rules: alertRules(scope) }] },
  } as KubernetesObject;
}

/** Grafana's sidecar loads ConfigMaps carrying this label (kube-prometheus-stack, the Grafana chart). */
export const DASHBOARD_LABEL = { grafana_dashboard: '1' };
export const DASHBOARD_FILE = 'deed.json';

export function dashboardConfigMap(t: MonitoringTarget): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${t.name}-dashboard`, namespace: t.namespace, labels: { ...t.selector, ...DASHBOARD_LABEL } },
    data: { [DASHBOARD_FILE]: dashboardJson() },
  } as KubernetesObject;
}

interface Panel {
  title: string;
  type: 'timeseries' | 'stat';
  unit: string;
  targets: Array<{ expr: string; legend: string }>;
  description: string;
}

const SEL = '{job=~"$job"}';

const PANELS: Panel[] = [
  {
    title: 'Reviews by decision',
    type: 'timeseries',
    unit: 'reqps',
    description: 'Reviews answered per second, by webhook and decision (allowed, patched, denied, errored, bad-request).',
    targets: [{ expr: `sum by (webhook, decision) (rate(deed_reviews_total${SEL}[$__rate_interval]))`, legend: '{{webhook}} {{decision}}' }],
  },
  {
    title: 'Denials by rule',
    type: 'timeseries',
    unit: 'reqps',
    description: 'Denied reviews per second by rule id (docs/rules.md).',
    targets: [{ expr: `sum by (rule) (rate(deed_denials_total${SEL}[$__rate_interval]))`, legend: '{{rule}}' }],
  },
  {
    title: 'Review time',
    type: 'timeseries',
    unit: 's',
    description: 'Time to decide one review. Past 80% of the webhook timeout Deed denies (internal.deadline).',
    targets: [
      { expr: `histogram_quantile(0.5, sum by (le) (rate(deed_review_duration_seconds_bucket${SEL}[$__rate_interval])))`, legend: 'p50' },
      { expr: `histogram_quantile(0.99, sum by (le) (rate(deed_review_duration_seconds_bucket${SEL}[$__rate_interval])))`, legend: 'p99' },
    ],
  },
  {
    title: 'Internal errors',
    type: 'timeseries',
    unit: 'short',
    description: 'Reviews that failed inside Deed, each answered with a denial (fail closed).',
    targets: [{ expr: `sum(increase(deed_review_errors_total${SEL}[$__rate_interval]))`, legend: 'errors' }],
  },
  {
    title: 'Serving certificate expires in',
    type: 'stat',
    unit: 's',
    description: 'The soonest expiry of the certificates the replicas serve.',
    targets: [{ expr: `min(deed_certificate_expiry_timestamp_seconds${SEL}) - time()`, legend: 'expires in' }],
  },
  {
    title: 'Attestations verified, by key',
    type: 'timeseries',
    unit: 'reqps',
    description: 'Attestations checked per second by ring key id and result: a retired key should fall to zero before it leaves the ring.',
    targets: [{ expr: `sum by (key, result) (rate(deed_attestation_verifications_total${SEL}[$__rate_interval]))`, legend: '{{key}} {{result}}' }],
  },
  {
    title: 'Connections refused and timed out',
    type: 'timeseries',
    unit: 'cps',
    description: 'Connections closed at the bound (refused) or by a deadline, by phase. Anything but idle means a client opens connections it does not finish.',
    targets: [
      { expr: `sum(rate(deed_connections_refused_total${SEL}[$__rate_interval]))`, legend: 'refused' },
      { expr: `sum by (phase) (rate(deed_connections_timed_out_total${SEL}[$__rate_interval]))`, legend: 'timed out: {{phase}}' },
    ],
  },
  {
    title: 'Resident memory',
    type: 'timeseries',
    unit: 'bytes',
    description: 'Per replica; the limit is 256 MiB by default.',
    targets: [{ expr: `process_resident_memory_bytes${SEL}`, legend: '{{pod}}' }],
  },
];

/** The dashboard, as Grafana imports it: a Prometheus data source and the scrape job to show. */
export function dashboard(): Record<string, unknown> {
  return {
    title: 'Deed',
    uid: 'deed-webhook',
    description: 'Admission reviews, denials, latency, certificates, attestations and connections of the Deed webhook.',
    tags: ['deed', 'admission'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus' },
        {
          name: 'job',
          label: 'Job',
          type: 'query',
          datasource: { type: 'prometheus', uid: '${datasource}' },
          query: { query: 'label_values(deed_reviews_total, job)', refId: 'job' },
          definition: 'label_values(deed_reviews_total, job)',
          includeAll: true,
          multi: true,
          refresh: 2,
        },
      ],
    },
    panels: PANELS.map((p, i) => ({
      id: i + 1,
      title: p.title,
      type: p.type,
      description: p.description,
      datasource: { type: 'prometheus', uid: '${datasource}' },
      gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
      fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
      options: {},
      targets: p.targets.map((t, j) => ({ refId: String.fromCharCode(65 + j), expr: t.expr, legendFormat: t.legend, datasource: { type: 'prometheus', uid: '${datasource}' } })),
    })),
  };
}

export function dashboardJson(): string {
  return `${JSON.stringify(dashboard(), null, 2)}\n`;
}

/** Every PromQL expression the kit evaluates: the alerts' and the dashboard's. */
export function allExpressions(scope: AlertScope): string[] {
  return [...alertRules(scope).map((r) => r.expr), ...PANELS.flatMap((p) => p.targets.map((t) => t.expr))];
}
