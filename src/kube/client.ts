// A thin client over @kubernetes/client-node for the calls the reaper makes: list the four
// sandbox kinds by label selector, get a Pod, delete with preconditions. Every call has a
// deadline, and every failure comes out as a classified KubeError. Only metadata leaves
// this module: a Secret's data is dropped as soon as a list page is decoded.
import {
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  Observable,
  type ConfigurationOptions,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
  type V1DeleteOptions,
  type V1ListMeta,
  type V1ObjectMeta,
} from '@kubernetes/client-node';
import type { KubeObject } from '../admission/types.js';
import type { SandboxKind } from '../policy/kinds.js';
import { classify, KubeError } from './errors.js';

export type ReapKind = SandboxKind['kind'];

export const REAP_KINDS: readonly ReapKind[] = ['Pod', 'Secret', 'NetworkPolicy', 'PersistentVolumeClaim'];

export interface Preconditions {
  uid: string;
  resourceVersion?: string;
}

export interface KubeClient {
  /**
   * The objects of `kind` matching `labelSelector`, in `namespace` or (undefined) in all
   * namespaces, one page (`limit`) at a time as the API server answers them: a reader that
   * judges each page before asking for the next holds one page, never the whole list.
   */
  listPages(kind: ReapKind, namespace: string | undefined, labelSelector: string): AsyncIterable<KubeObject[]>;
  /** Every page of listPages() in one array: for small lists only. */
  list(kind: ReapKind, namespace: string | undefined, labelSelector: string): Promise<KubeObject[]>;
  getPod(namespace: string, name: string): Promise<KubeObject>;
  /**
   * The pods of `namespace` with their specs (metadata and spec only; status is dropped), a
   * page at a time: for the rules that read a pod's template. Never for Secrets, whose data
   * is never read.
   */
  listPodSpecPages(namespace: string): AsyncIterable<KubeObject[]>;
  /** Every namespace's name and labels (metadata only). */
  listNamespaces(): Promise<Array<{ name: string; labels: Record<string, string> }>>;
  delete(kind: ReapKind, namespace: string, name: string, preconditions: Preconditions): Promise<void>;
}

export interface KubeClientOptions {
  /** Deadline of each API call, connection to decoded body. */
  timeoutMs: number;
  /** Items per list page (`limit`); the client follows `continue`. */
  pageSize?: number;
}

// A server that keeps answering `continue` would otherwise hold a sweep forever.
const MAX_PAGES = 10_000;

// Ask for metadata only (the API server's PartialObjectMetadata form): the reaper judges by
// labels and annotations, so Secret data and pod specs never cross the wire to it. A server
// without it falls back to full objects, of which only metadata is kept below.
export const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;q=0.9';
export const METADATA_ONE = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;q=0.9';

type Page = { metadata?: V1ListMeta; items: Array<{ metadata?: V1ObjectMeta }> | null };
type PageParams = { limit: number; _continue?: string };
type ListParams = PageParams & { labelSelector: string };

interface KindApi {
  plural: string;
  listNamespaced(namespace: string, p: ListParams, o: ConfigurationOptions): Promise<Page>;
  listAll(p: ListParams, o: ConfigurationOptions): Promise<Page>;
  delete(namespace: string, name: string, body: V1DeleteOptions, o: ConfigurationOptions): Promise<unknown>;
}

export function createKubeClient(kc: KubeConfig, options: KubeClientOptions): KubeClient {
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const pageSize = options.pageSize ?? 500;

  const apis: Record<ReapKind, KindApi> = {
    Pod: {
      plural: 'pods',
      listNamespaced: (namespace, p, o) => core.listNamespacedPod({ namespace, ...p }, o),
      listAll: (p, o) => core.listPodForAllNamespaces(p, o),
      delete: (namespace, name, body, o) => core.deleteNamespacedPod({ namespace, name, body }, o),
    },
    Secret: {
      plural: 'secrets',
      listNamespaced: (namespace, p, o) => core.listNamespacedSecret({ namespace, ...p }, o),
      listAll: (p, o) => core.listSecretForAllNamespaces(p, o),
      delete: (namespace, name, body, o) => core.deleteNamespacedSecret({ namespace, name, body }, o),
    },
    NetworkPolicy: {
      plural: 'networkpolicies',
      listNamespaced: (namespace, p, o) => net.listNamespacedNetworkPolicy({ namespace, ...p }, o),
      listAll: (p, o) => net.listNetworkPolicyForAllNamespaces(p, o),
      delete: (namespace, name, body, o) => net.deleteNamespacedNetworkPolicy({ namespace, name, body }, o),
    },
    PersistentVolumeClaim: {
      plural: 'persistentvolumeclaims',
      listNamespaced: (namespace, p, o) => core.listNamespacedPersistentVolumeClaim({ namespace, ...p }, o),
      listAll: (p, o) => core.listPersistentVolumeClaimForAllNamespaces(p, o),
      delete: (namespace, name, body, o) => core.deleteNamespacedPersistentVolumeClaim({ namespace, name, body }, o),
    },
  };

  const call = <T>(what: string, accept: string | undefined, fn: (o: ConfigurationOptions) => Promise<T>) => withDeadline(options.timeoutMs, what, accept, fn);

  /** Follows `continue` from page to page, each page under its own deadline. */
  async function* pages(what: string, accept: string | undefined, fetch: (p: PageParams, o: ConfigurationOptions) => Promise<Page>): AsyncIterable<Page['items'] & object> {
    let next: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params: PageParams = { limit: pageSize, ...(next ? { _continue: next } : {}) };
      const result = await call(what, accept, (o) => fetch(params, o));
      // An empty list of metadata comes back from kube-apiserver as "items": null: a list
      // (it has list metadata) with nothing in it. Anything else without items is not a list.
      const items = result.items ?? (result.metadata !== undefined ? [] : undefined);
      if (!Array.isArray(items)) throw new KubeError('Other', `${what}: the answer carries no items`);
      yield items;
      next = result.metadata?._continue || undefined;
      if (next === undefined) return;
    }
    throw new KubeError('Other', `${what}: more than ${MAX_PAGES} pages`);
  }

  return {
    async *listPages(kind, namespace, labelSelector) {
      const api = apis[kind];
      const what = `list ${api.plural} in ${namespace ?? 'all namespaces'}`;
      for await (const items of pages(what, METADATA_LIST, (p, o) => (namespace === undefined ? api.listAll({ labelSelector, ...p }, o) : api.listNamespaced(namespace, { labelSelector, ...p }, o))))
        yield items.map((item) => metadataOnly(kind, item.metadata));
    },

    async *listPodSpecPages(namespace) {
      for await (const items of pages(`list pods in ${namespace}`, undefined, (p, o) => core.listNamespacedPod({ namespace, ...p }, o) as Promise<Page>))
        yield items.map((item) => ({ ...metadataOnly('Pod', item.metadata), apiVersion: 'v1', spec: (item as { spec?: Record<string, unknown> }).spec ?? {} }));
    },

    async listNamespaces() {
      const out: Array<{ name: string; labels: Record<string, string> }> = [];
      for await (const items of pages('list namespaces', METADATA_LIST, (p, o) => core.listNamespace(p, o)))
        for (const item of items) if (item.metadata?.name) out.push({ name: item.metadata.name, labels: item.metadata.labels ?? {} });
      return out;
    },

    async list(kind, namespace, labelSelector) {
      const out: KubeObject[] = [];
      for await (const page of this.listPages(kind, namespace, labelSelector)) out.push(...page);
      return out;
    },

    async getPod(namespace, name) {
      const pod = await call(`get pod ${namespace}/${name}`, METADATA_ONE, (o) => core.readNamespacedPod({ namespace, name }, o));
      return metadataOnly('Pod', pod.metadata);
    },

    async delete(kind, namespace, name, preconditions) {
      const api = apis[kind];
      const body: V1DeleteOptions = { preconditions: { ...preconditions } };
      await call(`delete ${api.plural} ${namespace}/${name}`, undefined, (o) => api.delete(namespace, name, body, o));
    },
  };
}

/** Runs one API call under a deadline: the request is aborted and the call fails with a Timeout. */
export async function withDeadline<T>(timeoutMs: number, what: string, accept: string | undefined, fn: (o: ConfigurationOptions) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new KubeError('Timeout', `${what}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    // The race also covers what the signal cannot: credential plugins and body decoding.
    const middleware = [perCall(controller.signal, accept)];
    return await Promise.race([fn({ middleware, middlewareMergeStrategy: 'append' }), deadline]);
  } catch (err) {
    throw classify(err, what);
  } finally {
    clearTimeout(timer);
  }
}

/** Per call: the deadline's abort signal, and the Accept header when one is wanted. */
function perCall(signal: AbortSignal, accept: string | undefined): ObservableMiddleware {
  return {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(signal);
      if (accept !== undefined) ctx.setHeaderParam('Accept', accept);
      return new Observable(Promise.resolve(ctx));
    },
    post: (ctx: ResponseContext) => new Observable(Promise.resolve(ctx)),
  };
}

function metadataOnly(kind: ReapKind, m: V1ObjectMeta | undefined): KubeObject {
  return {
    kind,
    metadata: {
      name: m?.name,
      namespace: m?.namespace,
      uid: m?.uid,
      resourceVersion: m?.resourceVersion,
      labels: m?.labels,
      annotations: m?.annotations,
      // Whose object it is by reference (a PVC must have no pod owner); names and uids only.
      ownerReferences: m?.ownerReferences?.map((r) => ({ apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid })),
      deletionTimestamp: m?.deletionTimestamp ? new Date(m.deletionTimestamp).toISOString() : undefined,
    },
  };
}

/** `--kubeconfig FILE`, or the in-cluster service account. Never a guessed default such as localhost:8080. */
export function loadKubeConfig(file?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file !== undefined && file !== '') {
    try {
      kc.loadFromFile(file);
    } catch (err) {
      throw new Error(`cannot load kubeconfig ${file}: ${(err as Error).message}`);
    }
  } else {
    if (!process.env.KUBERNETES_SERVICE_HOST) throw new Error('not running in a cluster (KUBERNETES_SERVICE_HOST is unset); pass --kubeconfig FILE');
    kc.loadFromCluster();
  }
  if (!kc.getCurrentCluster()) throw new Error(`no current cluster in ${file ?? 'the in-cluster configuration'}`);
  return kc;
}
