// The webhook's read path to other objects a decision needs (the pod an eviction or a
// binding names, the claims, Secrets, ConfigMaps and snapshots a new object reaches, the run lease it
// names, a controller-made object's owner, the Service or workload a reference names, the
// service account a token is asked for): one GET per object, under the review's own
// deadline, answered as a Lookup. Only a Status with reason NotFound is "absent" (for a
// snapshot, also when the snapshot CRD is not installed); any other failure is "unknown",
// and the policy refuses what it cannot judge. Pods are read whole (their service account
// decides whose a runner is), claims too (the claim one not yet provisioned clones), and
// snapshots (their source claim); Secrets, ConfigMaps, Leases and workloads (the one a scale
// names, a controller-made object's owner) as metadata only. Nothing read is kept here: the
// cache in front of it (cached-reader.ts) answers what it can first.
import { gatheredLookup, lookupKey, type LookupKey } from '../policy/lookup.js';
import { kindRows, SNAPSHOT_GROUP } from '../policy/kinds.js';
import { controllerRefOf } from '../policy/controller-made.js';
import type { ControllerRef, Lookup, ObjectLookup, Reader, ReaderKind, Readers } from '../policy/policy.js';
import { boundedPage, collectionPath, getJson, METADATA_ONE, toConnection, type ApiSource } from './api-connection.js';
import { MAX_PAGE_BYTES } from './reflector.js';
import type { CallExtras } from './client.js';
import { KubeError } from './errors.js';
import { POD_READS, readingKinds, readsByName, readsName } from '../policy/pod/pod-reads.js';
import { beyondMetadata } from './lookup-facts.js';

/**
 * A Secret's metadata and nothing else: no fallback to the whole object, so its data never
 * reaches Deed (a server that cannot answer this way fails the read: unknown, refused).
 */
const SECRET_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

export interface ObjectReader {
  /** Reads every key at once; each read gets at most `timeoutMs`. */
  read(keys: LookupKey[], timeoutMs: number): Promise<ObjectLookup>;
}

type Meta = { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: unknown; creationTimestamp?: unknown };
type Read = { metadata?: Meta; spec?: { source?: { persistentVolumeClaimName?: unknown } }; status?: unknown };

/** Where one object of `resource` is read, and in which form: whole, or its metadata only. */
function readPlan(key: LookupKey): { path: string; accept: string | undefined; controller?: true } | undefined {
  const at = (groupVersion: string) => `${groupVersion === 'v1' ? '/api/v1' : `/apis/${groupVersion}`}/namespaces/${encodeURIComponent(key.namespace)}/${key.resource}/${encodeURIComponent(key.name)}`;
  switch (key.resource) {
    // A pod whole: its service account decides whose a runner is. A snapshot whole: its source claim.
    case 'pods':
      return { path: at('v1'), accept: undefined, controller: true };
    case 'volumesnapshots':
      return { path: at(`${SNAPSHOT_GROUP}/v1`), accept: undefined };
    // The run lease a new object names: whose it is is in its stamps (metadata only).
    case 'leases':
      return { path: at('coordination.k8s.io/v1'), accept: METADATA_ONE };
    // Metadata only: a Secret's data never crosses the wire to Deed.
    case 'secrets':
      return { path: at('v1'), accept: SECRET_METADATA };
    // A claim whole: the claim it clones until provisioned, as the cache keeps it; and its controlling
    // owner: one the ephemeral volume controller made for a pod is that pod's.
    case 'persistentvolumeclaims':
      return { path: at('v1'), accept: undefined, controller: true };
    case 'configmaps':
    case 'services':
    case 'serviceaccounts':
      return { path: at('v1'), accept: METADATA_ONE };
  }
  // A workload (a scale names it, a controller-made object's owner is one), or another kind
  // of an API group a reference names (a DRA ResourceClaim): its stamps and its own
  // controlling owner are in its metadata.
  const row = kindRows().find((r) => r.resource === key.resource && r.lookup !== undefined && (r.templates !== undefined || r.group !== ''));
  return row === undefined ? undefined : { path: at(row.group === '' ? 'v1' : `${row.group}/${row.version}`), accept: METADATA_ONE, controller: true };
}

/** `extras.onRetry` hears of each read sent again after a 429. */
export function createObjectReader(source: ApiSource, extras: CallExtras = {}): ObjectReader {
  const conn = toConnection(source);
  const readOne = async (key: LookupKey, timeoutMs: number): Promise<Lookup> => {
    const what = `get ${key.resource} ${key.namespace}/${key.name}`;
    const plan = readPlan(key);
    if (plan === undefined) return { state: 'unknown', reason: `Deed does not read ${key.resource}` };
    try {
      const read = await getJson<Read>(conn, plan.path, { what, accept: plan.accept, timeoutMs, impersonate: extras.impersonate, onRetry: extras.onRetry });
      const source = key.resource === 'volumesnapshots' ? read.spec?.source?.persistentVolumeClaimName : undefined;
      // When it was made: a snapshot's, and its source claim's (read fresh), tell whether that claim is the one it copied.
      const created = key.resource === 'volumesnapshots' || key.fresh === true ? read.metadata?.creationTimestamp : undefined;
      return {
        state: 'found',
        metadata: metadataOf(read.metadata),
        // A pod: its account, what it reads and its controller; a claim: what it clones and its controller; as the cache keeps them (lookup-facts.ts).
        ...(readsByName(key.resource) ? beyondMetadata(read) : plan.controller ? controllerOfMeta(read.metadata) : {}),
        ...(typeof source === 'string' && source !== '' ? { sourceClaim: source } : {}),
        ...(typeof created === 'string' && created !== '' ? { created } : {}),
      };
    } catch (err) {
      if (err instanceof KubeError && err.reason === 'NotFound') return { state: 'absent' };
      return { state: 'unknown', reason: err instanceof Error ? err.message : String(err) };
    }
  };
  /**
   * What reads `key`'s object by name in its namespace (readingKinds: the pods, and for a
   * claim the claims not yet provisioned): each kind listed a page at a time (whole: what an
   * object reads is in its spec), each page bounded in bytes, the rest of each object dropped
   * as its page is read. Read when the cache cannot answer.
   */
  const readersOf = async (key: LookupKey, timeoutMs: number): Promise<Readers> => {
    if (!POD_READS.some((r) => r.resource === key.resource)) return { state: 'unknown', reason: `no pod reads ${key.resource} by name` };
    const deadline = Date.now() + timeoutMs;
    // Each reading kind listed at once: the review waits for the longer list, not for both.
    const readersAs = async (kind: ReaderKind, resource: string): Promise<Reader[]> => {
      const readers: Reader[] = [];
      const path = collectionPath({ group: '', version: 'v1', resource }, key.namespace);
      let next: string | undefined;
      let limit = READER_PAGE;
      do {
        const cont = next;
        const read = await boundedPage(limit, (l) =>
          getJson<ObjectList>(conn, path, { what: `list ${resource} in ${key.namespace}`, query: { limit: l, continue: cont }, timeoutMs: Math.max(1, deadline - Date.now()), maxBytes: MAX_PAGE_BYTES, impersonate: extras.impersonate, onRetry: extras.onRetry }),
        );
        limit = read.limit;
        for (const item of read.page.items ?? []) {
          const name = item.metadata?.name;
          const beyond = beyondMetadata(item);
          if (name !== undefined && readsName(beyond.reads, key.resource, key.name)) readers.push({ kind, name, found: { state: 'found', metadata: metadataOf(item.metadata), ...beyond } });
        }
        next = read.page.metadata?.continue || undefined;
      } while (next !== undefined);
      return readers;
    };
    try {
      const perKind = await Promise.all(readingKinds(key.resource).map(([kind, resource]) => readersAs(kind, resource)));
      return { state: 'known', readers: perKind.flat() };
    } catch (err) {
      return { state: 'unknown', reason: err instanceof Error ? err.message : String(err) };
    }
  };
  return {
    async read(keys, timeoutMs) {
      const answers = await Promise.all(keys.filter((k) => k.readers !== true).map(async (k) => [lookupKey(k), await readOne(k, timeoutMs)] as const));
      const readers = await Promise.all(keys.filter((k) => k.readers === true).map(async (k) => [lookupKey(k), await readersOf(k, timeoutMs)] as const));
      return gatheredLookup(new Map(answers), 'not read before the decision', new Map(readers));
    },
  };
}

/** Objects per page of a live list of a namespace's pods or claims (each page bounded in bytes besides). */
const READER_PAGE = 250;

type ObjectList = { metadata?: { continue?: string }; items?: Array<{ metadata?: Meta & { name?: string }; spec?: unknown; status?: unknown }> | null };

function metadataOf(m: { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> } | undefined) {
  return { ...(m?.uid ? { uid: m.uid } : {}), ...(m?.labels ? { labels: m.labels } : {}), ...(m?.annotations ? { annotations: m.annotations } : {}) };
}

/** The controlling owner reference, beside the metadata: whose a controller-made object is follows it. */
function controllerOfMeta(m: { ownerReferences?: unknown } | undefined): { controller?: ControllerRef } {
  const controller = controllerRefOf(m?.ownerReferences);
  return controller ? { controller } : {};
}
