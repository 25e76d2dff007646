// Deed's PolicyReports (or openreports Reports) through the custom objects API: find the
// namespaces that hold one of Deed's, replace one, delete one. Every call has a deadline,
// within which a 429 is tried again after its Retry-After (client.ts, withRetries).
// Only reports under Deed's fixed name and labels are ever touched: a report of that name
// without Deed's labels is someone else's and is never replaced, and a delete names the uid
// of the report the run listed, so a report put in its place since is never deleted.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { REPORT_APIS, REPORT_LABELS, REPORT_NAME, REPORT_SELECTOR, ReportApiNotServed, type ReportApi } from '../audit/report.js';
import { KubeError } from './errors.js';
import { withRetries, type CallExtras } from './client.js';

export interface ReportStore {
  /**
   * The namespaces that hold a report of Deed's (by its labels). Throws ReportApiNotServed
   * when the API server does not serve the report kind.
   */
  namespacesWithReports(): Promise<string[]>;
  /**
   * Creates the namespace's report, or replaces Deed's previous one. An object under the
   * report's name without Deed's labels is not Deed's: it is left as it is, and the write fails.
   */
  write(namespace: string, report: Record<string, unknown>): Promise<'created' | 'replaced'>;
  /**
   * Deletes the report namespacesWithReports() found in the namespace, by its uid: false when
   * it is gone; an error when none was listed there, or the object now under its name is another.
   */
  remove(namespace: string): Promise<boolean>;
}

type Metadata = { namespace?: string; name?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> };
type Listed = { items?: Array<{ metadata?: Metadata }>; metadata?: { continue?: string } };

/** Whether an object's labels mark it as Deed's report (audit/report.ts, REPORT_LABELS). */
function isDeeds(metadata: Metadata | undefined): boolean {
  return Object.entries(REPORT_LABELS).every(([k, v]) => metadata?.labels?.[k] === v);
}

export function createReportStore(kc: KubeConfig, api: ReportApi, timeoutMs: number, extras: CallExtras = {}): ReportStore {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const { group, version, plural, kind } = REPORT_APIS[api];
  const call = <T>(what: string, fn: Parameters<typeof withRetries<T>>[3]) => withRetries<T>(timeoutMs, `${what} ${kind} ${REPORT_NAME}`, undefined, fn, extras);

  /** The uid of Deed's report in each namespace, as the run's list found it: the only object remove() deletes. */
  const listedUids = new Map<string, string>();

  return {
    async namespacesWithReports() {
      const out = new Set<string>();
      listedUids.clear();
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
        for (const item of page.items ?? [])
          if (item.metadata?.name === REPORT_NAME && item.metadata.namespace && isDeeds(item.metadata)) {
            out.add(item.metadata.namespace);
            if (item.metadata.uid) listedUids.set(item.metadata.namespace, item.metadata.uid);
          }
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
      // Something is there under the name: replace it only when it is Deed's (its labels), at
      // the version just read, so a concurrent run's write is not lost silently.
      const current = (await call(`get in ${namespace}`, (o) => custom.getNamespacedCustomObject({ group, version, namespace, plural, name: REPORT_NAME }, o))) as {
        metadata?: Metadata;
      };
      if (!isDeeds(current.metadata))
        throw new Error(
          `${kind} ${namespace}/${REPORT_NAME} exists and is not Deed's (it does not carry the labels ${REPORT_SELECTOR}): left as it is, and no report written in ${namespace}`,
        );
      const body = { ...report, metadata: { ...(report.metadata as object), resourceVersion: current.metadata?.resourceVersion } };
      await call(`replace in ${namespace}`, (o) => custom.replaceNamespacedCustomObject({ group, version, namespace, plural, name: REPORT_NAME, body }, o));
      return 'replaced';
    },

    async remove(namespace) {
      // Only the report the run listed: the name alone may by now be another object's.
      const uid = listedUids.get(namespace);
      if (uid === undefined) throw new Error(`no report of Deed's was listed in ${namespace}: ${kind} ${namespace}/${REPORT_NAME} not deleted`);
      try {
        await call(`delete in ${namespace}`, (o) => custom.deleteNamespacedCustomObject({ group, version, namespace, plural, name: REPORT_NAME, body: { preconditions: { uid } } }, o));
        listedUids.delete(namespace);
        return true;
      } catch (err) {
        if (err instanceof KubeError && err.reason === 'NotFound') return false;
        if (err instanceof KubeError && err.reason === 'Conflict')
          throw new Error(`${kind} ${namespace}/${REPORT_NAME} is no longer the report this run listed (uid ${uid}): left as it is`, { cause: err });
        throw err;
      }
    },
  };
}
