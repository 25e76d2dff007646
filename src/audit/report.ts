// What an audit writes: one PolicyReport per namespace (wgpolicyk8s.io/v1alpha2, or its
// successor openreports.io/v1alpha1 Report, which has the same results), under a fixed
// name and label so each run replaces Deed's previous report and nobody else's; and the
// run's own summary: when it ran, how long it took, counts by result. Pure.
import type { AuditResult, ObjectAudit, ObjectRef, ResultStatus } from './judge.js';
import { RESULT_STATUSES } from './judge.js';

export type ReportApi = 'wgpolicyk8s' | 'openreports';

export interface ReportGroup {
  group: string;
  version: string;
  kind: string;
  plural: string;
}

export const REPORT_APIS: Record<ReportApi, ReportGroup> = {
  wgpolicyk8s: { group: 'wgpolicyk8s.io', version: 'v1alpha2', kind: 'PolicyReport', plural: 'policyreports' },
  openreports: { group: 'openreports.io', version: 'v1alpha1', kind: 'Report', plural: 'reports' },
};

/** How to get each report kind served: Deed ships the wgpolicyk8s CRD, not openreports'. */
const INSTALL_CRD: Record<ReportApi, string> = {
  wgpolicyk8s:
    "install its CRD (the chart's audit.installCRDs=true, the kustomize component components/policyreport-crd, or deed manifests --audit --audit-crds), or let Kyverno or Policy Reporter install it",
  openreports: 'install the openreports.io CRDs (Deed does not ship them), or write wgpolicyk8s PolicyReports with --report-api wgpolicyk8s',
};

/**
 * The report kind is not served (its CRD is not installed): every write would fail alike, so
 * the run stops with this one error, which says how to install it.
 */
export class ReportApiNotServed extends Error {
  override name = 'ReportApiNotServed';
  constructor(api: ReportApi) {
    const { group, version, kind } = REPORT_APIS[api];
    super(`--write-reports: the API server does not serve ${group}/${version} ${kind} (its CRD is not installed), so no report can be written: ${INSTALL_CRD[api]}`);
  }
}

/** Deed's report in each namespace: one fixed name, so a run replaces the last. */
export const REPORT_NAME = 'deed-audit';
/** The labels that mark a report as Deed's: the run lists (and only ever deletes) reports carrying them. */
export const REPORT_LABELS: Readonly<Record<string, string>> = { 'app.kubernetes.io/name': 'deed', 'app.kubernetes.io/component': 'audit' };
export const REPORT_SELECTOR = Object.entries(REPORT_LABELS)
  .map(([k, v]) => `${k}=${v}`)
  .join(',');
export const REPORT_SOURCE = 'deed';

/**
 * At most this many results in one report: a report is one etcd object (1.5 MiB by
 * default) and a result takes some 300 to 600 bytes. Failures, warnings and errors are
 * kept first; the summary always counts every result.
 */
export const MAX_REPORT_RESULTS = 2000;

export type Summary = Record<ResultStatus, number>;

export function emptySummary(): Summary {
  return { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
}

export interface ReportEntry extends AuditResult {
  /** Unset for a result about the namespace (a list that failed). */
  object?: ObjectRef;
}

const SEVERE: ReadonlySet<ResultStatus> = new Set(['fail', 'warn', 'error']);

/** A namespace's results as they come, held within MAX_REPORT_RESULTS whatever the number of objects. */
export class NamespaceResults {
  readonly summary = emptySummary();
  private readonly severe: ReportEntry[] = [];
  private readonly rest: ReportEntry[] = [];
  omitted = 0;
  /** A list failed here: the report is incomplete, and an empty one is no proof that nothing remains. */
  failedLists = 0;

  constructor(readonly namespace: string) {}

  add(entry: ReportEntry): void {
    this.summary[entry.result]++;
    if (entry.result === 'error' && entry.object === undefined) this.failedLists++;
    const list = SEVERE.has(entry.result) ? this.severe : this.rest;
    if (list.length < MAX_REPORT_RESULTS) list.push(entry);
    else this.omitted++;
  }

  addObject(audit: ObjectAudit): void {
    for (const r of audit.results) this.add({ ...r, object: audit.object });
  }

  get total(): number {
    return RESULT_STATUSES.reduce((n, s) => n + this.summary[s], 0);
  }

  /** Severe results first; passes and skips fill what room is left. */
  entries(): { kept: ReportEntry[]; omitted: number } {
    const room = Math.max(0, MAX_REPORT_RESULTS - this.severe.length);
    const kept = [...this.severe, ...this.rest.slice(0, room)];
    return { kept, omitted: this.omitted + this.rest.length - Math.min(room, this.rest.length) };
  }
}

export interface RunFacts {
  /** Milliseconds since the epoch. */
  startedAt: number;
  durationMs: number;
  /** The label prefix: the run's annotations are Deed's own. */
  prefix: string;
}

export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The PolicyReport (or Report) of one namespace. */
export function buildReport(api: ReportApi, ns: NamespaceResults, run: RunFacts): Record<string, unknown> {
  const g = REPORT_APIS[api];
  const { kept, omitted } = ns.entries();
  const seconds = Math.floor(run.startedAt / 1000);
  return {
    apiVersion: `${g.group}/${g.version}`,
    kind: g.kind,
    metadata: {
      name: REPORT_NAME,
      namespace: ns.namespace,
      labels: { ...REPORT_LABELS },
      annotations: {
        [`${run.prefix}/audit-started-at`]: rfc3339(run.startedAt),
        [`${run.prefix}/audit-duration-seconds`]: (run.durationMs / 1000).toFixed(3),
        ...(omitted > 0 ? { [`${run.prefix}/audit-results-omitted`]: String(omitted) } : {}),
      },
    },
    summary: { ...ns.summary },
    results: kept.map((e) => ({
      source: REPORT_SOURCE,
      policy: e.policy,
      rule: e.rule,
      result: e.result,
      message: e.message,
      scored: true,
      timestamp: { seconds, nanos: 0 },
      ...(e.object !== undefined ? { resources: [{ ...e.object }] } : {}),
      ...(e.properties !== undefined ? { properties: { ...e.properties } } : {}),
    })),
  };
}

export interface RunSummary extends Summary {
  startedAt: string;
  durationSeconds: number;
  objects: number;
  namespaces: number;
  reportsWritten: number;
  reportsDeleted: number;
  /** Report writes or deletes that failed. */
  reportErrors: number;
}
