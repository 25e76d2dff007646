// The webhook's read path to other objects a decision needs (the pod an eviction or a
// binding names, the claims, Secrets, ConfigMaps and snapshots a new object reaches, the run lease it
// names, a controller-made object's owner, the Service or workload a reference names, the
// service account a token is asked for): one GET per object, under the review's own
// deadline, answered as a Lookup (past a review's GETs, what a pod names is read by one list
// of each kind in its namespace: readListed). Only a Status with reason NotFound is "absent" (for a
// snapshot, also when the snapshot CRD is not installed); any other failure is "unknown",
// and the policy refuses what it cannot judge. Pods are read whole (their service account
// decides whose a runner is), claims too (the claim one not yet provisioned clones), and
// snapshots (their source claim); Secrets, ConfigMaps, Leases and workloads (the one a scale
// names, a controller-made object's owner) as metadata only. Nothing read is kept here: the
// cache in front of it (cached-reader.ts) answers what it can first. What names a new Service
// or workload and is followed there (an EndpointSlice, an Endpoints, an Ingress, an HPA:
// policy/referrers.ts) is listed whole, a kind at a time, and only ever here.
import { gatheredLookup, lookupKey, type LookupKey } from '../policy/lookup.js';
import { kindRows, REFERENCE_GRANTS, SNAPSHOT_GROUP, type KindRow } from '../policy/kinds.js';
import type { KubeObject } from '../admission/types.js';
import { followsAcross, followsByGrant, grantedNamespaces, isReferredTarget, referrerOf, referringKinds } from '../policy/referrers.js';
import { controllerRefOf } from '../policy/controller-made.js';
import type { ControllerRef, Lookup, ObjectLookup, Reader, ReaderKind, Readers } from '../policy/policy.js';
import { boundedPage, collectionPath, getJson, groupMayBeUnserved, groupVersions, METADATA_LIST, METADATA_ONE, notServed, toConnection, type ApiSource } from './api-connection.js';
import { MAX_PAGE_BYTES, nextPageSize } from './reflector.js';
import { KeyedSlots, Slots } from './slots.js';
import type { CallExtras } from './client.js';
import { KubeError } from './errors.js';
import { POD_READS, readingKinds, readsByName, readsName } from '../policy/pod/pod-reads.js';
import { beyondMetadata } from './lookup-facts.js';

/**
 * A Secret's metadata and nothing else: no fallback to the whole object, so its data never
 * reaches Deed (a server that cannot answer this way fails the read: unknown, refused).
 */
const SECRET_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
/** A list of Secrets' metadata and nothing else, likewise. */
const SECRET_METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

export interface ObjectReader {
  /** Reads every key at once; each read gets at most `timeoutMs`. */
  read(keys: LookupKey[], timeoutMs: number): Promise<ObjectLookup>;
  /**
   * Reads keys of LISTED_RESOURCES by one list of each kind and namespace they name (bounded:
   * MAX_LISTED_OBJECTS, MAX_LISTS_IN_FLIGHT), with the same answers as `read`'s. A reader
   * without it answers them unknown.
   */
  readListed?(keys: LookupKey[], timeoutMs: number): Promise<ObjectLookup>;
}

type Meta = { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: unknown; creationTimestamp?: unknown };
type Read = { metadata?: Meta; spec?: { source?: { persistentVolumeClaimName?: unknown } }; status?: unknown };

/** Where objects of `resource` are read, and in which form: whole, or their metadata only. */
function readPlan(resource: string): { collection: (namespace: string) => string; accept: string | undefined; controller?: true } | undefined {
  const at = (groupVersion: string) => (namespace: string) => `${groupVersion === 'v1' ? '/api/v1' : `/apis/${groupVersion}`}/namespaces/${encodeURIComponent(namespace)}/${resource}`;
  switch (resource) {
    // A pod whole: its service account decides whose a runner is. A snapshot whole: its source claim.
    case 'pods':
      return { collection: at('v1'), accept: undefined, controller: true };
    case 'volumesnapshots':
      return { collection: at(`${SNAPSHOT_GROUP}/v1`), accept: undefined };
    // The run lease a new object names: whose it is is in its stamps (metadata only).
    case 'leases':
      return { collection: at('coordination.k8s.io/v1'), accept: METADATA_ONE };
    // Metadata only: a Secret's data never crosses the wire to Deed.
    case 'secrets':
      return { collection: at('v1'), accept: SECRET_METADATA };
    // A claim whole: the claim it clones until provisioned, as the cache keeps it; and its controlling
    // owner: one the ephemeral volume controller made for a pod is that pod's.
    case 'persistentvolumeclaims':
      return { collection: at('v1'), accept: undefined, controller: true };
    case 'configmaps':
    case 'services':
    case 'serviceaccounts':
      return { collection: at('v1'), accept: METADATA_ONE };
  }
  // A workload (a scale names it, a controller-made object's owner is one), or another kind
  // of an API group a reference names (a DRA ResourceClaim): its stamps and its own
  // controlling owner are in its metadata.
  const row = kindRows().find((r) => r.resource === resource && r.lookup !== undefined && (r.templates !== undefined || r.group !== ''));
  return row === undefined ? undefined : { collection: at(row.group === '' ? 'v1' : `${row.group}/${row.version}`), accept: METADATA_ONE, controller: true };
}

/** A list's form for an object's (readPlan's `accept`): whole stays whole, metadata only stays metadata only, a Secret's with no fallback. */
const LIST_FORM: ReadonlyMap<string | undefined, string | undefined> = new Map([
  [undefined, undefined],
  [METADATA_ONE, METADATA_LIST],
  [SECRET_METADATA, SECRET_METADATA_LIST],
]);

/**
 * The kinds a pod names that are listed, a namespace's at a time, once a review has used its
 * GETs (cached-reader.ts): what a binding hands its pod is read from the API server, and a
 * pod may name more objects than a review GETs.
 */
export const LISTED_RESOURCES: ReadonlySet<string> = new Set(POD_READS.map((r) => r.resource));
/** Objects a list for one review goes through, per kind and namespace, before its names are answered unknown (refused). */
export const MAX_LISTED_OBJECTS = 5_000;
/** Lists for reviews in flight at once, process-wide: more wait their turn within their review's time, then are refused. */
export const MAX_LISTS_IN_FLIGHT = 2;

/**
 * `extras.onRetry` hears of each read sent again after a 429. `listSecrets`: whether Secrets
 * may be listed (`--cache-secrets`: without it Deed's RBAC grants get alone on Secrets, since
 * a list of them can read their data); when not, a Secret past the gets is unknown.
 */
export function createObjectReader(source: ApiSource, extras: CallExtras & { listSecrets?: boolean } = {}): ObjectReader {
  const conn = toConnection(source);
  const listable = (resource: string) => LISTED_RESOURCES.has(resource) && (resource !== 'secrets' || extras.listSecrets !== false);
  /** A read object's facts, as `key` asks for them and as the cache keeps them (lookup-facts.ts). */
  const foundOf = (key: LookupKey, read: Read, controller: boolean): Lookup => {
    const source = key.resource === 'volumesnapshots' ? read.spec?.source?.persistentVolumeClaimName : undefined;
    // When it was made: a snapshot's, and its source claim's (read fresh), tell whether that claim is the one it copied.
    const created = key.resource === 'volumesnapshots' || key.fresh === true ? read.metadata?.creationTimestamp : undefined;
    return {
      state: 'found',
      metadata: metadataOf(read.metadata),
      // A pod: its account, what it reads and its controller; a claim: what it clones and its controller.
      ...(readsByName(key.resource) ? beyondMetadata(read, key.resource) : controller ? controllerOfMeta(read.metadata) : {}),
      ...(typeof source === 'string' && source !== '' ? { sourceClaim: source } : {}),
      ...(typeof created === 'string' && created !== '' ? { created } : {}),
    };
  };
  const readOne = async (key: LookupKey, timeoutMs: number): Promise<Lookup> => {
    const what = `get ${key.resource} ${key.namespace}/${key.name}`;
    const plan = readPlan(key.resource);
    if (plan === undefined) return { state: 'unknown', reason: `Deed does not read ${key.resource}` };
    try {
      const read = await getJson<Read>(conn, `${plan.collection(key.namespace)}/${encodeURIComponent(key.name)}`, { what, accept: plan.accept, timeoutMs, impersonate: extras.impersonate, onRetry: extras.onRetry });
      return foundOf(key, read, plan.controller === true);
    } catch (err) {
      if (err instanceof KubeError && err.reason === 'NotFound') return { state: 'absent' };
      return { state: 'unknown', reason: err instanceof Error ? err.message : String(err) };
    }
  };
  /**
   * `path` listed a page at a time, each page bounded in bytes and the next sized from the
   * last's objects (reflector.ts, nextPageSize: a few large objects cost a few small pages, not
   * every page after them), each handed to `take` before the next is read. At most `most`
   * objects: answers false when more remained past them.
   */
  const listPages = async (path: string, what: string, accept: string | undefined, deadline: number, take: (items: ListItem[]) => void, most = Infinity, selectors: Selectors = {}): Promise<boolean> => {
    let next: string | undefined;
    let limit = READER_PAGE;
    let chars = 0;
    let seen = 0;
    do {
      if (seen >= most) return false;
      const cont = next;
      const read = await boundedPage(Math.min(limit, most - seen), (l) =>
        getJson<ObjectList>(conn, path, { what, accept, query: { ...selectors, limit: l, continue: cont }, timeoutMs: Math.max(1, deadline - Date.now()), maxBytes: MAX_PAGE_BYTES, onText: (n) => (chars = n), impersonate: extras.impersonate, onRetry: extras.onRetry }),
      );
      const items = read.page.items ?? [];
      seen += items.length;
      limit = nextPageSize(chars, items.length, read.limit);
      take(items);
      next = read.page.metadata?.continue || undefined;
    } while (next !== undefined);
    return true;
  };
  // Lists for reviews: a few at once process-wide, and one at a time per namespace, so one
  // namespace's slow lists (a tenant's large objects) do not hold every turn.
  const lists = new Slots(MAX_LISTS_IN_FLIGHT);
  const namespaceLists = new KeyedSlots();
  /**
   * `keys` (one kind, one namespace) answered by one list of that kind in that namespace, only
   * the named objects kept. A list is read from the API server as a GET is, so a name it does
   * not hold is absent. Past MAX_LISTED_OBJECTS, or when no turn comes within the time, every
   * name is unknown.
   */
  const listNamed = async (keys: LookupKey[], timeoutMs: number): Promise<Array<readonly [string, Lookup]>> => {
    const { resource, namespace } = keys[0]!;
    const plan = readPlan(resource);
    const unknown = (reason: string) => keys.map((k) => [lookupKey(k), { state: 'unknown', reason } as Lookup] as const);
    if (plan === undefined || !listable(resource) || !LIST_FORM.has(plan.accept)) return unknown(`Deed reads no more ${resource} for one review: it has used its gets, and does not list ${resource}${resource === 'secrets' ? ' (--cache-secrets=false)' : ''}`);
    const deadline = Date.now() + timeoutMs;
    const busy = `Deed was listing ${resource} for other reviews for as long as this one could wait`;
    const inNamespace = await namespaceLists.take(namespace, timeoutMs);
    if (inNamespace === undefined) return unknown(busy);
    const release = await lists.take(Math.max(0, deadline - Date.now()));
    if (release === undefined) {
      inNamespace();
      return unknown(busy);
    }
    try {
      const wanted = new Map(keys.map((k) => [k.name, k]));
      const found = new Map<string, Lookup>();
      const whole = await listPages(
        plan.collection(namespace),
        `list ${resource} in ${namespace}`,
        LIST_FORM.get(plan.accept),
        deadline,
        (items) => {
          for (const item of items) {
            const key = item.metadata?.name === undefined ? undefined : wanted.get(item.metadata.name);
            if (key !== undefined) found.set(key.name, foundOf(key, item as Read, plan.controller === true));
          }
        },
        MAX_LISTED_OBJECTS,
      );
      if (!whole) return unknown(`Deed lists at most ${MAX_LISTED_OBJECTS} ${resource} of a namespace for one review, and ${namespace} holds more`);
      return keys.map((k) => [lookupKey(k), found.get(k.name) ?? { state: 'absent' }] as const);
    } catch (err) {
      return unknown(err instanceof Error ? err.message : String(err));
    } finally {
      release();
      inNamespace();
    }
  };
  /**
   * Lists of a kind, where the API server may not serve it at the row's version (a custom
   * resource not installed, the Gateway API's routes in most clusters, or installed at another
   * version of its group): it answers 404, and the kind is listed at each version its group
   * serves; where it is served at none, no object of it exists to name or read anything. The
   * group's versions are asked once for one read (the five route kinds share one). Not for the
   * core group, which is always served.
   */
  const servedWithin = (deadline: number) => {
    /** The versions the API server serves of `group` (its discovery document); none when it serves no such group. */
    const groups = new Map<string, Promise<string[]>>();
    const servedVersions = (group: string): Promise<string[]> => {
      let versions = groups.get(group);
      if (versions === undefined) groups.set(group, (versions = discoverVersions(group)));
      return versions;
    };
    const discoverVersions = (group: string): Promise<string[]> => groupVersions(conn, group, { timeoutMs: Math.max(1, deadline - Date.now()), impersonate: extras.impersonate, onRetry: extras.onRetry });
    const served = async <T>(kind: { group: string; version: string }, list: (version: string) => Promise<T[]>, discoverFirst = false): Promise<T[]> => {
      // Where the kind is read because the cache found it served nowhere: one discovery request tells for its whole group.
      if (discoverFirst && groupMayBeUnserved(kind.group) && (await servedVersions(kind.group)).length === 0) return [];
      try {
        return await list(kind.version);
      } catch (err) {
        if (!notServed(err) || !groupMayBeUnserved(kind.group)) throw err;
      }
      for (const version of (await servedVersions(kind.group)).filter((v) => v !== kind.version)) {
        try {
          return await list(version);
        } catch (err) {
          if (!notServed(err)) throw err;
        }
      }
      return [];
    };
    return served;
  };
  /**
   * What reads `key`'s object by name in its namespace (readingKinds: the pods, and for a
   * claim the claims not yet provisioned): each kind listed a page at a time (whole: what an
   * object reads is in its spec), each page bounded in bytes, the rest of each object dropped
   * as its page is read. Read when the cache cannot answer.
   */
  const readersOf = async (key: LookupKey, timeoutMs: number): Promise<Readers> => {
    if (isReferredTarget(key.resource)) return referrersOf(key, timeoutMs);
    if (!POD_READS.some((r) => r.resource === key.resource)) return { state: 'unknown', reason: `no pod reads ${key.resource} by name` };
    const deadline = Date.now() + timeoutMs;
    const served = servedWithin(deadline);
    // Each reading kind listed at once: the review waits for the longer list, not for both.
    const readersAs = async (kind: ReaderKind, resource: string): Promise<Reader[]> => {
      const row = kindRows().find((r) => r.resource === resource && r.readsByName !== undefined)!;
      // A Gateway where the Gateway API is not installed: none reads anything. A kind the cache could not answer
      // (`readerKinds`: most often one it found served nowhere) has its group's discovery asked first.
      return served(row, async (version) => {
        const readers: Reader[] = [];
        await listPages(collectionPath({ group: row.group, version, resource }, key.namespace), `list ${resource} in ${key.namespace}`, undefined, deadline, (items) => {
          for (const item of items) {
            const name = item.metadata?.name;
            const beyond = beyondMetadata(item, resource);
            if (name !== undefined && readsName(beyond.reads, key.resource, key.name)) readers.push({ kind, name, found: { state: 'found', metadata: metadataOf(item.metadata), ...beyond } });
          }
        });
        return readers;
      }, key.readerKinds !== undefined);
    };
    try {
      const kinds = readingKinds(key.resource).filter(([, resource]) => key.readerKinds === undefined || key.readerKinds.includes(resource));
      const perKind = await Promise.all(kinds.map(([kind, resource]) => readersAs(kind, resource)));
      return { state: 'known', readers: perKind.flat() };
    } catch (err) {
      return { state: 'unknown', reason: err instanceof Error ? err.message : String(err) };
    }
  };
  /**
   * What names `key`'s object and is followed there (referrers.ts: the EndpointSlices,
   * Endpoints, Ingresses, Gateway API routes and StatefulSets that name a Service, the routes and
   * ListenerSets that name a Gateway, the HPAs that name a workload, the Jobs whose controller
   * reference carries a CronJob's name), in its namespace, across the cluster, or in the
   * namespaces its namespace's ReferenceGrants admit, as the kind table says: each
   * referring kind listed a page at a time, whole where what it names is in its spec, as
   * metadata only where every reference of its row is in its metadata (a slice's label, a Job's
   * controller reference), each page bounded in bytes, only the metadata of the objects that name it kept.
   * Never answered from the lookup cache: the follower acts on a referrer at once, and a watch may be behind.
   */
  const referrersOf = async (key: LookupKey, timeoutMs: number): Promise<Readers> => {
    const deadline = Date.now() + timeoutMs;
    const served = servedWithin(deadline);
    /** `row`'s objects in `namespace` (every namespace where undefined) at `version`: those that name `key`'s object, each with where it stands. */
    const referrersAt = async (row: KindRow, version: string, namespace: string | undefined): Promise<Reader[]> => {
      const readers: Reader[] = [];
      // A kind whose references all stand in its metadata (an EndpointSlice's label, a Job's controller reference) is listed as metadata only.
      const accept = (row.references ?? []).every((f) => f.path.startsWith('metadata.')) ? METADATA_LIST : undefined;
      const kind = { group: row.group, version, resource: row.resource };
      await listPages(collectionPath(kind, namespace), `list ${row.resource} in ${namespace ?? 'every namespace'}`, accept, deadline, (items) => {
        for (const item of items) {
          const at = item.metadata?.namespace ?? namespace;
          const referrer = at === undefined ? undefined : referrerOf(row, item as KubeObject, at, key);
          if (referrer !== undefined) readers.push({ ...referrer, found: { state: 'found', metadata: metadataOf(item.metadata) } });
        }
      }, Infinity, selectorsOf(row, key.name));
      return readers;
    };
    // In the object's namespace; a route's parent Gateway from every namespace where the
    // Gateway's listeners admit routes from there (the key's `across`: most take only their own
    // namespace's, and a cluster's routes cost seconds to list); a route's backend Service also
    // from the namespaces the ReferenceGrants of the Service's namespace admit.
    const referrersAs = async (row: KindRow): Promise<Reader[]> => {
      const here = await served(row, (version) => referrersAt(row, version, followsAcross(row, key.resource, key.across) ? undefined : key.namespace));
      if (!followsByGrant(row, key.resource)) return here;
      const target = kindRows().find((r) => r.resource === key.resource && r.lookup !== undefined);
      const granted = target === undefined ? [] : grantedNamespaces(await grantsHere(), row, target, key.name).filter((ns) => ns !== key.namespace);
      const there = await Promise.all(granted.map((ns) => served(row, (version) => referrersAt(row, version, ns))));
      return [...here, ...there.flat()];
    };
    /** The ReferenceGrants of the object's namespace, listed once for this read. */
    let grants: Promise<unknown[]> | undefined;
    const grantsHere = () =>
      (grants ??= served(REFERENCE_GRANTS, async (version) => {
        const items: unknown[] = [];
        await listPages(collectionPath({ ...REFERENCE_GRANTS, version }, key.namespace), `list referencegrants in ${key.namespace}`, undefined, deadline, (page) => items.push(...page));
        return items;
      }));
    try {
      const perKind = await Promise.all(referringKinds(key.resource).map((row) => referrersAs(row)));
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
    async readListed(keys, timeoutMs) {
      const groups = new Map<string, LookupKey[]>();
      for (const k of keys) {
        const group = `${k.resource}/${k.namespace}`;
        const same = groups.get(group);
        if (same === undefined) groups.set(group, [k]);
        else same.push(k);
      }
      const answers = await Promise.all([...groups.values()].map((group) => listNamed(group, timeoutMs)));
      return gatheredLookup(new Map(answers.flat()), 'not read before the decision', new Map());
    },
  };
}

/** What a list asks the API server to filter by. */
type Selectors = { labelSelector?: string; fieldSelector?: string };

/** A label value as the API server takes one in a selector (63 characters, alphanumeric at both ends). */
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/**
 * The selectors that let the API server list only the referrers of `name`, where every
 * reference of the row names it by one label (an EndpointSlice's `kubernetes.io/service-name`)
 * or by the referrer's own name (an Endpoints'): one Service's slices, not the namespace's. What
 * the list returns is still matched by the row's references (referenceNaming), as without.
 */
function selectorsOf(row: KindRow, name: string): Selectors {
  const refs = row.references ?? [];
  const label = refs[0]?.by === 'label' ? refs[0].label : undefined;
  if (refs.length > 0 && label !== undefined && refs.every((r) => r.by === 'label' && r.label === label) && LABEL_VALUE.test(name)) return { labelSelector: `${label}=${name}` };
  if (refs.length > 0 && refs.every((r) => r.by === 'name' && r.path === 'metadata.name')) return { fieldSelector: `metadata.name=${name}` };
  return {};
}

/** Objects on the first page of a live list (each page bounded in bytes besides; the next sized from it). */
const READER_PAGE = 250;

type ListItem = { metadata?: Meta & { name?: string; namespace?: string }; spec?: unknown; status?: unknown };
type ObjectList = { metadata?: { continue?: string }; items?: ListItem[] | null };

function metadataOf(m: { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> } | undefined) {
  return { ...(m?.uid ? { uid: m.uid } : {}), ...(m?.labels ? { labels: m.labels } : {}), ...(m?.annotations ? { annotations: m.annotations } : {}) };
}

/** The controlling owner reference, beside the metadata: whose a controller-made object is follows it. */
function controllerOfMeta(m: { ownerReferences?: unknown } | undefined): { controller?: ControllerRef } {
  const controller = controllerRefOf(m?.ownerReferences);
  return controller ? { controller } : {};
}
