// Deed's PolicyReports (or openreports Reports) through the custom objects API: find the
// namespaces that hold one of Deed's, replace one, delete one. Every call has a deadline,
// within which a 429 is tried again after its Retry-After (client.ts, withRetries).
// Only reports under Deed's fixed name and labels are ever touched.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { REPORT_APIS, REPORT_NAME, REPORT_SELECTOR, ReportApiNotServed, type ReportApi } from '../audit/report.js';
import { KubeError } from './errors.js';
import { withRetries, type CallExtras } from './client.js';

export interface ReportStore {
  /**
   * The namespaces that hold a report of Deed's (by its labels). Throws ReportApiNotServed
   * when the API server does not serve the report kind.
   */
  namespacesWithReports(): Promise<string[]>;
  /** Creates the namespace's report, or replaces Deed's previous one. */
  write(namespace: string, report: Record<string, unknown>): Promise<'created' | 'replaced'>;
  /** Deletes the namespace's report; false when there was none. */
  remove(namespace: string): Promise<boolean>;
}

type Listed = { items?: Array<{ metadata?: { namespace?: string; name?: string } }>; metadata?: { continue?: string } };

export function createReportStore(kc: KubeConfig, api: ReportApi, timeoutMs: number, extras: CallExtras = {}): ReportStore {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const { group, version, plural, kind } = REPORT_APIS[api];
  const call = <T>(what: string, fn: Parameters<typeof withRetries<T>>[3]) => withRetries<T>(timeoutMs, `${what} ${kind} ${REPORT_NAME}`, undefined, fn, extras);

  return {
    async namespacesWithReports() {
      const out = new Set<string>();
      let next: string | undefined;
      do {
        let page: Listed;
        try {
          page = (await call('list', (o) =>
            custom.listClusterCustomObject({ group, version, plural, labelSelector: REPORT_SELECTOR, limit: 500, ...(next ? { _continue: next } : {}) }, o),
          )) as Listed;
        } catch (err) {
          // A list answered 404 names no object: the resource itself is not served.
          if (err instanceof KubeError && err.status === 404) throw new ReportApiNotServed(api);
          throw err;
        }
        for (const item of page.items ?? []) if (item.metadata?.name === REPORT_NAME && item.metadata.namespace) out.add(item.metadata.namespace);
        next = page.metadata?.continue || undefined;
      } while (next !== undefined);
      return [...out];
    },

    async write(namespace, report) {
      try {
        await call(`create in ${namespace}`, (o) => custom.createNamespacedCustomObject({ group, version, namespace, plural, body: report }, o));
        return 'created';
      } catch (err) {
        // 409 AlreadyExists: Deed's report from the last run is there.
        if (!(err instanceof KubeError && err.status === 409)) throw err;
      }
      // Ours already exists: replace it at the version just read, so a concurrent run's write is not lost silently.
      const current = (await call(`get in ${namespace}`, (o) => custom.getNamespacedCustomObject({ group, version, namespace, plural, name: REPORT_NAME }, o))) as {
        metadata?: { resourceVersion?: string };
      };
      const body = { ...report, metadata: { ...(report.metadata as object), resourceVersion: current.metadata?.resourceVersion } };
      await call(`replace in ${namespace}`, (o) => custom.replaceNamespacedCustomObject({ group, version, namespace, plural, name: REPORT_NAME, body }, o));
      return 'replaced';
    },

    async remove(namespace) {
      try {
        await call(`delete in ${namespace}`, (o) => custom.deleteNamespacedCustomObject({ group, version, namespace, plural, name: REPORT_NAME }, o));
        return true;
      } catch (err) {
        if (err instanceof KubeError && err.reason === 'NotFound') return false;
        throw err;
      }
    },
  };
}
