// A small stand-in for kube-apiserver over node:http on 127.0.0.1, speaking its wire format
// for the calls the reaper makes: lists by label selector (a `PodList` with
// `metadata.resourceVersion`, items without kind or apiVersion, `limit`/`continue`; or a
// `PartialObjectMetadataList` when the Accept header asks for one), a get,
// and a delete honouring DeleteOptions preconditions (409 Conflict `Status` on a UID or
// resourceVersion mismatch, 404 NotFound `Status`); namespaces listed by label selector
// (the review scope). Faults script 500s, 403s, 429s with Retry-After, undecodable bodies
// and answers slower than the client's deadline; webhook configurations created, replaced
// and deleted (`deed dev`). Every request is recorded, and the
// requests in flight are counted.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { KubeObject } from '../src/admission/types.js';
import { apiVersionOf, kindRowNamed, kindRows, REAPED_KINDS, stampedRow, type KIND_TABLE } from '../src/policy/kinds.js';

/**
 * What it serves: the kinds the reaper lists, the run leases it reads, the kinds that read
 * others by name (from the kind table), namespaces (the review scope), and one custom resource
 * no table knows (`widgets.example.com`, which the default row stamps), each also in discovery
 * (/api, /api/v1, /apis, /apis/GROUP/VERSION).
 */
export type Resource = Extract<(typeof KIND_TABLE)[number], { reaped: true } | { runLease: true } | { readsByName: readonly string[] }>['resource'] | 'namespaces' | 'widgets';

/** A CRD's kind, served as kube-apiserver serves one: namespaced, every verb. */
export const WIDGETS = { kind: 'Widget', group: 'example.com', version: 'v1', resource: 'widgets', namespaced: true } as const;

const SERVED: ReadonlyArray<{ kind: string; group: string; version: string; resource: string; namespaced: boolean }> = [
  ...REAPED_KINDS.map(stampedRow),
  ...kindRows().filter((r) => r.runLease === true),
  // The kinds that read by name (Ingresses), but not the Gateway API's: a cluster without it, as most are.
  ...kindRows().filter((r) => r.readsByName !== undefined && r.reaped !== true && !r.group.startsWith('gateway.networking.')),
  kindRowNamed('', 'Namespace')!,
  WIDGETS,
];
const RESOURCES = Object.fromEntries(SERVED.map((r) => [r.resource, { kind: r.kind, apiVersion: apiVersionOf(r) }])) as Record<Resource, { kind: string; apiVersion: string }>;

export const RESOURCE_OF_KIND: Record<string, Resource> = Object.fromEntries(REAPED_KINDS.map((k) => [k, stampedRow(k).resource as Resource]));

const API_PATHS = [...new Set(SERVED.map((r) => (r.group === '' ? `api/${r.version}` : `apis/${r.group}/${r.version}`).replaceAll('.', '\\.').replaceAll('/', '\\/')))].join('|');
const NAMESPACED = new RegExp(`^\\/(?:${API_PATHS})\\/namespaces\\/([^/]+)\\/([a-z]+)(?:\\/([^/]+))?$`);
const WEBHOOK_CONFIGURATIONS = /^\/apis\/admissionregistration\.k8s\.io\/v1\/(mutatingwebhookconfigurations|validatingwebhookconfigurations)(?:\/([^/]+))?$/;
const CLUSTER_WIDE = new RegExp(`^\\/(?:${API_PATHS})\\/([a-z]+)$`);

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  accept: string;
  /** `Impersonate-User`, when the client sent one (kubectl's --as). */
  impersonate?: string;
  body?: unknown;
}

export type FaultAnswer =
  | { status: number; reason: string; message: string; headers?: Record<string, string> }
  | { status: number; raw: string; contentType?: string }
  | { delayMs: number };

export interface Fault {
  method?: string;
  path: RegExp;
  /** How many requests it applies to; unlimited when unset. */
  times?: number;
  answer: FaultAnswer;
}

export function statusBody(code: number, reason: string, message: string, details?: Record<string, unknown>) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

export class FakeApiServer {
  readonly requests: RecordedRequest[] = [];
  readonly faults: Fault[] = [];
  /** `verb resource namespace` triples RBAC refuses, for SelfSubjectAccessReviews. */
  readonly forbidden = new Set<string>();
  /** Run on each request before it is answered (after faults are looked up). */
  readonly hooks: Array<(req: RecordedRequest) => void> = [];
  /** Largest page the server hands out, like an API server with a smaller chunk size; `limit` lowers it. */
  maxPage = Infinity;
  /** Answer lists as if the selector were not there: a broken or hostile server. */
  ignoreSelector = false;
  /** Honour `Accept: ...;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1` (API servers do since 1.15). */
  servesMetadataOnly = true;
  /**
   * Namespaces and their labels, for the review scope: the sandboxes opt in
   * (deed.dev/sandbox=enabled), "plain" does not, as in the end-to-end suite.
   */
  readonly namespaces = new Map<string, Record<string, string>>([
    ['sandbox-a', { 'deed.dev/sandbox': 'enabled' }],
    ['sandbox-b', { 'deed.dev/sandbox': 'enabled' }],
    ['sandbox-c', { 'deed.dev/sandbox': 'enabled' }],
    ['plain', {}],
  ]);
  /** Requests received and not yet answered, by method; and the most at once. */
  readonly inFlight = new Map<string, number>();
  readonly maxInFlight = new Map<string, number>();
  /** Webhook configurations (`deed dev` registers and removes them), by `resource/name`. */
  readonly webhookConfigurations = new Map<string, KubeObject>();
  private readonly objects = new Map<string, { resource: Resource; obj: KubeObject }>();
  private revision = 1000;
  private server: Server | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'reaper', token: 'reaper-test-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'reaper' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** Writes a kubeconfig file for the CLI. */
  writeKubeConfig(file: string): void {
    writeFileSync(
      file,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'fake', cluster: { server: this.url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'reaper', user: { token: 'reaper-test-token' } }],
        contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'reaper' } }],
        'current-context': 'fake',
      }),
    );
  }

  /** Stores an object as the API server would: a uid if it has none, a fresh resourceVersion. */
  put(resource: Resource, obj: KubeObject): KubeObject {
    const stored = structuredClone(obj);
    stored.metadata.uid ??= randomUUID();
    stored.metadata.resourceVersion = String(++this.revision);
    stored.metadata.creationTimestamp ??= '2026-11-29T15:00:00Z';
    this.objects.set(this.key(resource, stored.metadata.namespace!, stored.metadata.name!), { resource, obj: stored });
    return structuredClone(stored);
  }

  /** A namespace (cluster-scoped), with the label the API server sets from its name. */
  putNamespace(name: string, labels: Record<string, string> = {}): void {
    this.namespaces.set(name, labels);
  }

  get(resource: Resource, namespace: string, name: string): KubeObject | undefined {
    const entry = this.objects.get(this.key(resource, namespace, name));
    return entry ? structuredClone(entry.obj) : undefined;
  }

  remove(resource: Resource, namespace: string, name: string): void {
    this.objects.delete(this.key(resource, namespace, name));
  }

  /** Deletes and recreates under the same name: another UID, as a real replacement gets. */
  replace(resource: Resource, namespace: string, name: string, change: (o: KubeObject) => void = () => {}): KubeObject {
    const current = this.get(resource, namespace, name)!;
    delete current.metadata.uid;
    change(current);
    return this.put(resource, current);
  }

  deletes(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === 'DELETE');
  }

  private key(resource: Resource, namespace: string, name: string): string {
    return `${resource}/${namespace}/${name}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      accept: req.headers.accept ?? '',
      ...(typeof req.headers['impersonate-user'] === 'string' ? { impersonate: req.headers['impersonate-user'] } : {}),
      ...(text ? { body: JSON.parse(text) } : {}),
    };
    this.requests.push(recorded);
    const method = recorded.method;
    this.inFlight.set(method, (this.inFlight.get(method) ?? 0) + 1);
    this.maxInFlight.set(method, Math.max(this.maxInFlight.get(method) ?? 0, this.inFlight.get(method)!));
    res.once('close', () => this.inFlight.set(method, this.inFlight.get(method)! - 1));

    const fault = this.faults.find((f) => (f.method === undefined || f.method === recorded.method) && f.path.test(recorded.path) && (f.times === undefined || f.times > 0));
    if (fault?.times !== undefined) fault.times--;
    for (const hook of this.hooks) hook(recorded);
    if (fault && 'delayMs' in fault.answer) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!res.destroyed) this.route(recorded, res);
      }, fault.answer.delayMs);
      this.timers.add(timer);
      return;
    }
    if (fault && 'raw' in fault.answer) {
      res.writeHead(fault.answer.status, { 'content-type': fault.answer.contentType ?? 'application/json' }).end(fault.answer.raw);
      return;
    }
    if (fault && 'reason' in fault.answer) {
      send(res, fault.answer.status, statusBody(fault.answer.status, fault.answer.reason, fault.answer.message), 'application/json', fault.answer.headers);
      return;
    }
    this.route(recorded, res);
  }

  private route(req: RecordedRequest, res: ServerResponse): void {
    if (req.method === 'GET' && this.discovery(req.path, res)) return;
    if (req.path === '/api/v1/namespaces' && req.method === 'GET') return this.listNamespaces(res, req.query);
    // The PolicyReport CRD installed and no report stored: what `deed audit` lists first.
    if (req.path === '/apis/wgpolicyk8s.io/v1alpha2/policyreports' && req.method === 'GET')
      return send(res, 200, { apiVersion: 'wgpolicyk8s.io/v1alpha2', kind: 'PolicyReportList', metadata: { resourceVersion: String(this.revision) }, items: [] });
    if (req.path === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews' && req.method === 'POST') return this.accessReview(res, req.body);
    const webhooks = WEBHOOK_CONFIGURATIONS.exec(req.path);
    if (webhooks) return this.webhookConfiguration(res, req, webhooks[1]!, webhooks[2]);
    const one = NAMESPACED.exec(req.path);
    const all = one ? null : CLUSTER_WIDE.exec(req.path);
    const resource = (one?.[2] ?? all?.[1]) as Resource | undefined;
    if (resource === undefined || !Object.hasOwn(RESOURCES, resource)) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    const namespace = one?.[1];
    const name = one?.[3];
    if (name === undefined && req.method === 'GET') return this.list(res, resource, namespace, req.query, this.wantsMetadata(req, 'PartialObjectMetadataList'));
    if (name !== undefined && namespace !== undefined && req.method === 'GET') return this.read(res, resource, namespace, name, this.wantsMetadata(req, 'PartialObjectMetadata'));
    if (name !== undefined && namespace !== undefined && req.method === 'DELETE') return this.delete(res, resource, namespace, name, req.body);
    send(res, 405, statusBody(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`));
  }

  /** Legacy discovery of what it serves, each group at one (preferred) version; pods' status subresource too, as the API server lists it. */
  private discovery(path: string, res: ServerResponse): boolean {
    const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
    const resources = (group: string, version: string) =>
      SERVED.filter((r) => r.group === group && r.version === version).flatMap((r) => [
        { name: r.resource, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs },
        ...(r.resource === 'pods' ? [{ name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] }] : []),
      ]);
    if (path === '/api') {
      send(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
      return true;
    }
    if (path === '/api/v1') {
      send(res, 200, { kind: 'APIResourceList', groupVersion: 'v1', resources: resources('', 'v1') });
      return true;
    }
    const groups = [...new Map(SERVED.filter((r) => r.group !== '').map((r) => [r.group, r.version])).entries()];
    if (path === '/apis') {
      const gv = (group: string, version: string) => ({ groupVersion: `${group}/${version}`, version });
      send(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(([name, version]) => ({ name, versions: [gv(name, version)], preferredVersion: gv(name, version) })) });
      return true;
    }
    const one = groups.find(([group, version]) => path === `/apis/${group}/${version}`);
    if (one === undefined) return false;
    send(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${one[0]}/${one[1]}`, resources: resources(one[0], one[1]) });
    return true;
  }

  /** Create, get, replace and delete of a (mutating or validating) webhook configuration. */
  private webhookConfiguration(res: ServerResponse, req: RecordedRequest, resource: string, name: string | undefined): void {
    const body = req.body as KubeObject | undefined;
    const key = `${resource}/${name ?? body?.metadata?.name}`;
    const stored = this.webhookConfigurations.get(key);
    const notFound = () => send(res, 404, statusBody(404, 'NotFound', `${resource}.admissionregistration.k8s.io "${name}" not found`, { name, group: 'admissionregistration.k8s.io', kind: resource }));
    if (name === undefined && req.method === 'POST') {
      if (stored) return send(res, 409, statusBody(409, 'AlreadyExists', `${resource}.admissionregistration.k8s.io "${body!.metadata.name}" already exists`));
      const created = { ...body!, metadata: { ...body!.metadata, uid: randomUUID(), resourceVersion: String(++this.revision) } };
      this.webhookConfigurations.set(key, created);
      return send(res, 201, created);
    }
    if (name === undefined) return send(res, 405, statusBody(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'));
    if (stored === undefined) return notFound();
    if (req.method === 'GET') return send(res, 200, stored);
    if (req.method === 'PUT') {
      const replaced = { ...body!, metadata: { ...body!.metadata, uid: stored.metadata.uid, resourceVersion: String(++this.revision) } };
      this.webhookConfigurations.set(key, replaced);
      return send(res, 200, replaced);
    }
    if (req.method === 'DELETE') {
      this.webhookConfigurations.delete(key);
      return send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: 'admissionregistration.k8s.io', kind: resource, uid: stored.metadata.uid } });
    }
    send(res, 405, statusBody(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'));
  }

  /** A SelfSubjectAccessReview: allowed unless `forbidden` names `verb resource namespace`. */
  private accessReview(res: ServerResponse, body: unknown): void {
    const spec = (body as { spec?: { resourceAttributes?: { verb?: string; resource?: string; namespace?: string } } } | undefined)?.spec?.resourceAttributes ?? {};
    const denied = this.forbidden.has(`${spec.verb} ${spec.resource} ${spec.namespace}`);
    send(res, 201, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: spec }, status: { allowed: !denied, ...(denied ? { reason: 'no RBAC policy matched' } : {}) } });
  }

  private wantsMetadata(req: RecordedRequest, as: string): boolean {
    return this.servesMetadataOnly && req.accept.split(',').some((t) => t.trim().startsWith(`application/json;as=${as};g=meta.k8s.io;v=v1`));
  }

  private list(res: ServerResponse, resource: Resource, namespace: string | undefined, query: URLSearchParams, metadataOnly: boolean): void {
    const selector = parseSelector(query.get('labelSelector') ?? '');
    if (selector === undefined) return send(res, 400, statusBody(400, 'BadRequest', `unable to parse requirement: ${query.get('labelSelector')}`));
    const matching = [...this.objects.values()]
      .filter((e) => e.resource === resource && (namespace === undefined || e.obj.metadata.namespace === namespace))
      .filter((e) => this.ignoreSelector || selector(e.obj.metadata.labels ?? {}))
      .map((e) => e.obj)
      .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
    const offset = query.has('continue') ? Number(Buffer.from(query.get('continue')!, 'base64url').toString('utf8')) : 0;
    const limit = Math.min(query.has('limit') ? Number(query.get('limit')) || Infinity : Infinity, this.maxPage);
    const page = matching.slice(offset, offset + limit);
    const more = offset + page.length < matching.length;
    const { kind, apiVersion } = RESOURCES[resource];
    const metadata = { resourceVersion: String(this.revision), ...(more ? { continue: Buffer.from(String(offset + page.length)).toString('base64url') } : {}) };
    if (metadataOnly)
      return send(
        res,
        200,
        {
          kind: 'PartialObjectMetadataList',
          apiVersion: 'meta.k8s.io/v1',
          metadata,
          // kube-apiserver v1.36 answers an empty metadata list with "items": null, not [].
          items: page.length === 0 ? null : page.map((o) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata })),
        },
        'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
      );
    send(res, 200, {
      kind: `${kind}List`,
      apiVersion,
      metadata,
      // The API server omits kind and apiVersion on list items.
      items: page.map((o) => {
        const item = structuredClone(o);
        delete item.kind;
        delete item.apiVersion;
        return item;
      }),
    });
  }

  private listNamespaces(res: ServerResponse, query: URLSearchParams): void {
    const selector = parseSelector(query.get('labelSelector') ?? '');
    if (selector === undefined) return send(res, 400, statusBody(400, 'BadRequest', `unable to parse requirement: ${query.get('labelSelector')}`));
    const items = [...this.namespaces]
      .filter(([name, labels]) => selector({ ...labels, 'kubernetes.io/metadata.name': name }))
      .map(([name, labels]) => ({ metadata: { name, labels: { ...labels, 'kubernetes.io/metadata.name': name } } }));
    send(res, 200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: String(this.revision) }, items });
  }

  private read(res: ServerResponse, resource: Resource, namespace: string, name: string, metadataOnly: boolean): void {
    const obj = this.get(resource, namespace, name);
    if (obj === undefined) return send(res, 404, statusBody(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource }));
    if (metadataOnly)
      return send(res, 200, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata }, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1');
    send(res, 200, { kind: RESOURCES[resource].kind, apiVersion: RESOURCES[resource].apiVersion, ...obj });
  }

  private delete(res: ServerResponse, resource: Resource, namespace: string, name: string, body: unknown): void {
    const obj = this.get(resource, namespace, name);
    if (obj === undefined) return send(res, 404, statusBody(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource }));
    const pre = (body as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)?.preconditions ?? {};
    const conflict = (what: string, want: string, have: string) =>
      send(
        res,
        409,
        statusBody(409, 'Conflict', `Operation cannot be fulfilled on ${resource} "${name}": Precondition failed: ${what} in precondition: ${want}, ${what} in object meta: ${have}`, {
          name,
          kind: resource,
        }),
      );
    if (pre.uid !== undefined && pre.uid !== obj.metadata.uid) return conflict('UID', pre.uid, obj.metadata.uid!);
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== obj.metadata.resourceVersion)
      return conflict('ResourceVersion', pre.resourceVersion, obj.metadata.resourceVersion!);
    this.remove(resource, namespace, name);
    const { kind, apiVersion } = RESOURCES[resource];
    if (resource === 'secrets' || resource === 'networkpolicies')
      return send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, kind: resource, uid: obj.metadata.uid } });
    send(res, 200, { kind, apiVersion, ...obj, metadata: { ...obj.metadata, deletionTimestamp: '2026-11-29T16:00:00Z', deletionGracePeriodSeconds: 0 } });
  }
}

function send(res: ServerResponse, status: number, body: unknown, contentType = 'application/json', headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': contentType }).end(JSON.stringify(body));
}

/** Equality-based selectors (`k=v`, `k==v`, `k!=v`, `k`, `!k`), comma-joined, as the API server reads them. */
export function parseSelector(text: string): ((labels: Record<string, string>) => boolean) | undefined {
  if (text === '') return () => true;
  const terms: Array<(labels: Record<string, string>) => boolean> = [];
  for (const term of text.split(',')) {
    const m = /^(!?)([A-Za-z0-9][-A-Za-z0-9_./]*)(?:(!=|==|=)([-A-Za-z0-9_.]*))?$/.exec(term);
    if (m === null) return undefined;
    const [, not, key, op, value] = m as unknown as [string, string, string, string | undefined, string | undefined];
    if (not && op) return undefined;
    if (not) terms.push((l) => !Object.hasOwn(l, key));
    else if (op === undefined) terms.push((l) => Object.hasOwn(l, key));
    else if (op === '!=') terms.push((l) => l[key] !== value);
    else terms.push((l) => Object.hasOwn(l, key) && l[key] === value);
  }
  return (labels) => terms.every((t) => t(labels));
}
