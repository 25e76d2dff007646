// The webhook's read path to other objects a decision needs (the pod an eviction or a
// binding names, the claims, Secrets, ConfigMaps and snapshots a new object reaches, the run lease it
// names, a controller-made object's owner, the Service or workload a reference names, the
// service account a token is asked for): one GET per object, under the review's own
// deadline, answered as a Lookup. Only a Status with reason NotFound is "absent" (for a
// snapshot, also when the snapshot CRD is not installed); any other failure is "unknown",
// and the policy refuses what it cannot judge. Pods are read whole (their service account
// decides whose a runner is), snapshots too (their source claim); claims, Secrets, ConfigMaps,
// Leases and workloads (the one a scale names, a controller-made object's owner) as metadata
// only. Nothing read is kept here: the cache in front of it (cached-reader.ts) answers what
// it can first.
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1ObjectMeta } from '@kubernetes/client-node';
import { gatheredLookup, lookupKey, type LookupKey } from '../policy/lookup.js';
import { kindRows, SNAPSHOT_GROUP } from '../policy/kinds.js';
import { controllerRefOf } from '../policy/controller-made.js';
import type { ControllerRef, Lookup, ObjectLookup } from '../policy/policy.js';
import { METADATA_ONE, withRetries as retried, type CallExtras } from './client.js';
import { KubeError } from './errors.js';

/**
 * A Secret's metadata and nothing else: no fallback to the whole object, so its data never
 * reaches Deed (a server that cannot answer this way fails the read: unknown, refused).
 */
const SECRET_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

export interface ObjectReader {
  /** Reads every key at once; each read gets at most `timeoutMs`. */
  read(keys: LookupKey[], timeoutMs: number): Promise<ObjectLookup>;
}

/** `extras.onRetry` hears of each read sent again after a 429. */
export function createObjectReader(kc: KubeConfig, extras: CallExtras = {}): ObjectReader {
  const withRetries: typeof retried = (deadlineMs, what, accept, fn) => retried(deadlineMs, what, accept, fn, extras);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const coordination = kc.makeApiClient(CoordinationV1Api);
  const readOne = async (key: LookupKey, timeoutMs: number): Promise<Lookup> => {
    const what = `get ${key.resource} ${key.namespace}/${key.name}`;
    try {
      if (key.resource === 'pods') {
        const pod = await withRetries(timeoutMs, what, undefined, (o) => core.readNamespacedPod({ namespace: key.namespace, name: key.name }, o));
        return { state: 'found', metadata: metadataOf(pod.metadata), ...controllerOfMeta(pod.metadata), ...(pod.spec?.serviceAccountName ? { serviceAccountName: pod.spec.serviceAccountName } : {}) };
      }
      if (key.resource === 'volumesnapshots') {
        const snapshot = (await withRetries(timeoutMs, what, undefined, (o) =>
          custom.getNamespacedCustomObject({ group: SNAPSHOT_GROUP, version: 'v1', plural: 'volumesnapshots', namespace: key.namespace, name: key.name }, o),
        )) as { metadata?: Parameters<typeof metadataOf>[0]; spec?: { source?: { persistentVolumeClaimName?: unknown } } };
        const source = snapshot.spec?.source?.persistentVolumeClaimName;
        return { state: 'found', metadata: metadataOf(snapshot.metadata), ...(typeof source === 'string' && source !== '' ? { sourceClaim: source } : {}) };
      }
      if (key.resource === 'leases') {
        // The run lease a new object names: whose it is is in its stamps (metadata only).
        const lease = await withRetries(timeoutMs, what, METADATA_ONE, (o) => coordination.readNamespacedLease({ namespace: key.namespace, name: key.name }, o));
        return { state: 'found', metadata: metadataOf(lease.metadata) };
      }
      if (key.resource !== 'secrets' && key.resource !== 'persistentvolumeclaims' && key.resource !== 'configmaps' && key.resource !== 'services' && key.resource !== 'serviceaccounts') {
        // A workload (a scale names it, a controller-made object's owner is one): its stamps
        // and its own controlling owner are in its metadata.
        // A workload (a scale names it, a controller-made object's owner is one), or another
        // kind of an API group a reference names (a DRA ResourceClaim).
        const row = kindRows().find((r) => r.resource === key.resource && r.lookup !== undefined && (r.templates !== undefined || r.group !== ''));
        if (row === undefined) return { state: 'unknown', reason: `Deed does not read ${key.resource}` };
        const params = { namespace: key.namespace, name: key.name };
        const read = (o: Parameters<typeof core.readNamespacedReplicationController>[1]): Promise<{ metadata?: V1ObjectMeta }> =>
          row.group === ''
            ? core.readNamespacedReplicationController(params, o)
            : (custom.getNamespacedCustomObject({ group: row.group, version: row.version, plural: row.resource, ...params }, o) as Promise<{ metadata?: V1ObjectMeta }>);
        const workload = await withRetries(timeoutMs, what, METADATA_ONE, read);
        return { state: 'found', metadata: metadataOf(workload.metadata), ...controllerOfMeta(workload.metadata) };
      }
      // Metadata only: a Secret's data never crosses the wire to Deed.
      const params = { namespace: key.namespace, name: key.name };
      const object = await withRetries(timeoutMs, what, key.resource === 'secrets' ? SECRET_METADATA : METADATA_ONE, (o): Promise<{ metadata?: V1ObjectMeta }> =>
        key.resource === 'secrets'
          ? core.readNamespacedSecret(params, o)
          : key.resource === 'configmaps'
            ? core.readNamespacedConfigMap(params, o)
            : key.resource === 'services'
              ? core.readNamespacedService(params, o)
              : key.resource === 'serviceaccounts'
                ? core.readNamespacedServiceAccount(params, o)
                : core.readNamespacedPersistentVolumeClaim(params, o),
      );
      return { state: 'found', metadata: metadataOf(object.metadata) };
    } catch (err) {
      if (err instanceof KubeError && err.reason === 'NotFound') return { state: 'absent' };
      return { state: 'unknown', reason: err instanceof Error ? err.message : String(err) };
    }
  };
  return {
    async read(keys, timeoutMs) {
      const answers = await Promise.all(keys.map(async (k) => [lookupKey(k), await readOne(k, timeoutMs)] as const));
      return gatheredLookup(new Map(answers), 'not read before the decision');
    },
  };
}

function metadataOf(m: { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> } | undefined) {
  return { ...(m?.uid ? { uid: m.uid } : {}), ...(m?.labels ? { labels: m.labels } : {}), ...(m?.annotations ? { annotations: m.annotations } : {}) };
}

/** The controlling owner reference, beside the metadata: whose a controller-made object is follows it. */
function controllerOfMeta(m: { ownerReferences?: unknown } | undefined): { controller?: ControllerRef } {
  const controller = controllerRefOf(m?.ownerReferences);
  return controller ? { controller } : {};
}
