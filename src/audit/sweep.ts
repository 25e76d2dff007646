// One audit run: find the namespaces Deed reviews, judge every object of the reaped kinds
// there (pods with their specs, the rest as metadata) and the operator configurations whose
// CRDs are served (with their specs), page by page; find objects that carry Deed's stamps
// elsewhere, and, where the policy declares hostnames, what names them anywhere (routes,
// Ingresses, listeners, Certificates, ACME Orders and Challenges, with their specs); and, with
// a report store, write each namespace's report as soon as its namespace is judged, then
// delete Deed's reports where nothing remains.
// Memory holds one page and one namespace's (bounded) results, whatever the object count.
import type { KubeObject } from '../admission/types.js';
import { REAP_KINDS, type KubeClient, type ReapKind } from '../kube/client.js';
import type { ReportStore } from '../kube/reports.js';
import { lookupPodClock, OwnerFacts } from '../reaper/owner-facts.js';
import { LeaseFacts } from '../reaper/lease-facts.js';
import { leaseHeld } from '../reaper/verdict.js';
import { Clock } from '../reaper/owner-facts.js';
import { Slots } from '../reaper/slots.js';
import { entryOf } from '../policy/unstructured.js';
import { readReviewScope } from '../kube/review-scope.js';
import { judgeHostnames, judgeObject, judgeOperatorConfig, listFailure, readsFor, type AuditContext, type ObjectAudit } from './judge.js';
import { hostnameRows, operatorConfigRows, type KindRow } from '../policy/kinds.js';
import { notServed } from '../kube/api-connection.js';
import type { LeaseLookup, LeaseRef } from './reaper-verdict.js';
import { buildReport, emptySummary, NamespaceResults, ReportApiNotServed, rfc3339, type ReportApi, type RunSummary } from './report.js';

export interface AuditOptions {
  client: KubeClient;
  ctx: Omit<AuditContext, 'now'>;
  now: () => number;
  /** Deed's own namespace: never in the review scope. */
  deedNamespace: string;
  /** Only these namespaces; all otherwise. */
  namespaces: string[];
  /** Each object's results, as soon as it is judged (the CLI prints them). */
  onObject: (audit: ObjectAudit) => void;
  /** Each failure that is not about one object (a list, a report write). */
  onError: (message: string) => void;
  reports?: { store: ReportStore; api: ReportApi };
}

export async function audit(o: AuditOptions): Promise<RunSummary> {
  const startedAt = o.now();
  const totals = emptySummary();
  let objects = 0;
  let reportsWritten = 0;
  let reportsDeleted = 0;
  let reportErrors = 0;
  const ctx = (): AuditContext => ({ ...o.ctx, now: o.now() });
  const wanted = (ns: string) => o.namespaces.length === 0 || o.namespaces.includes(ns);

  // Owners and run leases read for the reaper's verdict, as the reaper reads them
  // (reaper/owner-facts.ts): a fact answers only for objects listed before its read was sent,
  // so a runner recreated under its name while the audit runs is read again, not reported gone.
  const clock = new Clock();
  const owners = new OwnerFacts(o.client, new Slots(1), clock);

  // The bound is per namespace and environment: one environment's objects naming many leases cannot leave another's unjudged.
  const judged = { keys: o.ctx.policy.keys, keyRing: o.ctx.keyRing, leaseGraceSeconds: o.ctx.policy.config.reaper.leaseGraceSeconds };
  const leases = new LeaseFacts(o.client, new Slots(1), clock, o.now, (lease, readAt, ref, environment) => leaseHeld(lease, readAt, ref, { ...judged, environment }));
  const readLease = (ref: LeaseRef, obj: KubeObject, seenAt: number): Promise<LeaseLookup> => {
    const environment = entryOf(obj.metadata.labels ?? {}, o.ctx.policy.keys.environment) ?? '';
    return leases.read(ref, seenAt, environment, `${ref.namespace}/${environment}`);
  };

  /** One object judged: counted, and its results (if any) added to its namespace's and told to the caller. */
  const record = (result: ObjectAudit | undefined, into: NamespaceResults) => {
    objects++;
    if (result === undefined) return;
    into.addObject(result);
    o.onObject(result);
  };

  /** `seenAt`: the tick at which the object's page arrived. */
  const judge = async (obj: KubeObject, kind: ReapKind, inScope: boolean, into: NamespaceResults, seenAt: number) => {
    const c = ctx();
    const reads = readsFor(obj, kind, inScope, c);
    const [owner, lease, pod] = await Promise.all([reads.owner && owners.read(reads.owner, seenAt), reads.lease && readLease(reads.lease, obj, seenAt), reads.pod && lookupPodClock(o.client, reads.pod)]);
    record(judgeObject(obj, kind, inScope, c, owner, lease, pod), into);
  };

  const finish = async (ns: NamespaceResults, hadReport: boolean) => {
    for (const s of Object.keys(totals) as Array<keyof typeof totals>) totals[s] += ns.summary[s];
    if (!o.reports) return;
    try {
      if (ns.total > 0) {
        await o.reports.store.write(ns.namespace, buildReport(o.reports.api, ns, { startedAt, durationMs: o.now() - startedAt, prefix: o.ctx.policy.keys.prefix }));
        reportsWritten++;
      } else if (hadReport && (await o.reports.store.remove(ns.namespace))) {
        reportsDeleted++;
      }
    } catch (err) {
      reportErrors++;
      o.onError(`report in ${ns.namespace}: ${(err as Error).message}`);
    }
  };

  const summary = (namespaces: number): RunSummary => ({
    ...totals,
    startedAt: rfc3339(startedAt),
    durationSeconds: Number(((o.now() - startedAt) / 1000).toFixed(3)),
    objects,
    namespaces,
    reportsWritten,
    reportsDeleted,
    reportErrors,
  });

  let inScope: string[];
  try {
    inScope = [...(await readReviewScope(o.client, o.deedNamespace))].filter(wanted);
  } catch (err) {
    // Without the scope nothing can be judged (an object's results depend on it): a failed
    // run, said once, as a failed list is said, not a crash.
    o.onError(`the review scope (the opted-in namespaces): ${(err as Error).message}`);
    totals.error++;
    return summary(0);
  }
  const scoped = new Set(inScope);
  // Operators' configurations (stores, TriggerAuthentications, analyses), where their CRDs are served.
  const configRows = operatorConfigRows();
  // Routes, Ingresses, listeners and Certificates, where an environment declares hostnames: one stored before names them still.
  const hostRows = o.ctx.policy.config.environments.some((e) => e.hostnames.length > 0) ? hostnameRows() : [];
  /** Kinds found not served (their CRDs not installed; the API server answers an unknown group's path with a plain 404): not asked again this run. */
  const unserved = new Set<KindRow>();
  const foundUnserved = (err: unknown, row: KindRow): boolean => {
    if (!notServed(err)) return false;
    unserved.add(row);
    return true;
  };
  const existing = new Set<string>();
  if (o.reports) {
    try {
      for (const ns of await o.reports.store.namespacesWithReports()) if (wanted(ns)) existing.add(ns);
    } catch (err) {
      // No report kind, no report: one error that says how to install it, not one per namespace after a whole sweep.
      if (err instanceof ReportApiNotServed) {
        o.onError(err.message);
        return { ...summary(0), reportErrors: 1 };
      }
      // Reports are still written; only the stale ones elsewhere stay until a later run can list them.
      reportErrors++;
      o.onError(`listing Deed's reports: ${(err as Error).message}`);
    }
  }

  // Outside the scope, only objects carrying Deed's managed label are read: stamps there prove nothing.
  const outside = new Map<string, NamespaceResults>();
  const outsideOf = (ns: string) => outside.get(ns) ?? outside.set(ns, new NamespaceResults(ns)).get(ns)!;
  let outsideComplete = true;
  for (const kind of REAP_KINDS) {
    try {
      for await (const page of o.client.listPages(kind, undefined, o.ctx.policy.keys.managed)) {
        const seenAt = clock.tick();
        for (const obj of page) {
          const ns = obj.metadata.namespace ?? '';
          if (!scoped.has(ns) && wanted(ns)) await judge(obj, kind, false, outsideOf(ns), seenAt);
        }
      }
    } catch (err) {
      o.onError(`objects carrying ${o.ctx.policy.keys.managed} outside the review scope, ${kind}: ${(err as Error).message}`);
      totals.error++;
      outsideComplete = false;
    }
  }
  // Outside the scope every object of them is read: the hostnames are refused there to all but the platform.
  for (const row of hostRows) {
    try {
      for await (const page of o.client.listSpecPages(row)) {
        for (const obj of page) {
          const ns = obj.metadata.namespace ?? '';
          if (!scoped.has(ns) && wanted(ns)) record(judgeHostnames(obj, row, false, ctx()), outsideOf(ns));
        }
      }
    } catch (err) {
      if (foundUnserved(err, row)) continue;
      o.onError(`${row.kind} objects outside the review scope: ${(err as Error).message}`);
      totals.error++;
      outsideComplete = false;
    }
  }

  for (const namespace of inScope) {
    const results = new NamespaceResults(namespace);
    for (const kind of REAP_KINDS) {
      try {
        const pages = kind === 'Pod' ? o.client.listPodSpecPages(namespace) : o.client.listPages(kind, namespace, '');
        for await (const page of pages) {
          const seenAt = clock.tick();
          for (const obj of page) await judge(obj, kind, true, results, seenAt);
        }
      } catch (err) {
        const message = (err as Error).message;
        results.add(listFailure(kind, namespace, message));
        o.onError(message);
      }
    }
    const judges = [...configRows.map((row) => ({ row, judge: (obj: KubeObject) => judgeOperatorConfig(obj, row, ctx()) })), ...hostRows.map((row) => ({ row, judge: (obj: KubeObject) => judgeHostnames(obj, row, true, ctx()) }))];
    for (const { row, judge } of judges) {
      if (unserved.has(row)) continue;
      try {
        for await (const page of o.client.listSpecPages(row, namespace)) for (const obj of page) record(judge(obj), results);
      } catch (err) {
        if (foundUnserved(err, row)) continue;
        const message = (err as Error).message;
        results.add(listFailure(row.kind, namespace, message));
        o.onError(message);
      }
    }
    await finish(results, existing.delete(namespace));
  }
  for (const results of outside.values()) await finish(results, existing.delete(results.namespace));
  // Deed's reports where nothing of Deed's remains: the namespace left the scope, or was
  // deleted. Not after a failed list outside the scope: an empty answer there proves nothing.
  if (outsideComplete) for (const namespace of existing) await finish(new NamespaceResults(namespace), true);

  return summary(inScope.length);
}
