// The webhook's own path to the API server: the few GETs, lists and watches `deed serve`
// makes (the lookup cache, live reads), over node's http(s) with one kept-alive agent. It
// loads no @kubernetes/client-node: that package costs 28 MB of heap and 70 MB of RSS once
// imported, more than everything else the webhook holds, and a webhook that runs out of
// memory blocks every write. The kubeconfig forms a webhook meets (in-cluster service
// account, client certificate, bearer token) are read here; any other form (an exec
// plugin, an auth provider, several merged files, a proxy) falls back to client-node's
// loader, and the connection then asks it for each request's options.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { classifyAnswer, KubeError, classify } from './errors.js';
import { retriedWithin } from './retries.js';
import type { RetryNotice } from './retry-notice.js';

export interface ApiConnection {
  /** The API server's URL (for log lines and request URLs). */
  readonly server: string;
  /** One request's TLS, agent and headers; credentials as they are now (a rotated token is read again). */
  requestOptions(): Promise<RequestOptions>;
}

/** What reads of Deed's take: a connection, or a client-node KubeConfig a caller already has. */
export type ApiSource = ApiConnection | KubeConfig;

export function toConnection(source: ApiSource): ApiConnection {
  return 'requestOptions' in source ? source : connectionOf(source);
}

/** A connection through a loaded client-node KubeConfig (every auth form it knows, exec plugins included). */
export function connectionOf(kc: KubeConfig): ApiConnection {
  const agents = new KeptAlive();
  return {
    server: kc.getCurrentCluster()?.server ?? '',
    async requestOptions() {
      const o: RequestOptions & { agent?: HttpAgent } = {};
      await kc.applyToHTTPSOptions(o as never);
      const agent = agents.reuse(o.agent);
      return { ...o, ...(agent ? { agent } : {}) };
    },
  };
}

/**
 * client-node makes a new Agent for every call, so every call opens a new TLS connection:
 * at thousands of calls a sweep spends its time and much of its memory on handshakes.
 * One kept-alive agent per TLS configuration instead (a proxy's agent is left alone).
 */
export class KeptAlive {
  private current: { key: string; agent: HttpAgent } | undefined;

  reuse(made: HttpAgent | HttpsAgent | undefined): HttpAgent | HttpsAgent | undefined {
    if (made === undefined || (made.constructor !== HttpsAgent && made.constructor !== HttpAgent)) return made;
    const o = (made as HttpsAgent).options ?? {};
    const hash = createHash('sha256');
    for (const part of [o.ca, o.cert, o.key, o.pfx, o.passphrase, o.servername, String(o.rejectUnauthorized)]) hash.update(`${JSON.stringify(part ?? null)}\n`);
    const key = `${made.constructor === HttpsAgent ? 'https' : 'http'}:${hash.digest('hex')}`;
    if (this.current?.key !== key) {
      this.current?.agent.destroy();
      const agent = made.constructor === HttpsAgent ? new HttpsAgent({ ...o, keepAlive: true }) : new HttpAgent({ keepAlive: true });
      this.current = { key, agent };
    }
    return this.current.agent;
  }
}

// ---- Loading: kubectl's order (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster) ----

export interface KubeConfigSource {
  /** `--kubeconfig FILE`: this file only. */
  kubeconfig?: string | undefined;
  /** `--context NAME`: this context of the loaded configuration, not its current-context. */
  context?: string | undefined;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** A projected token is rotated by the kubelet well before it expires; it is read again after this long (client-go: 1 minute). */
const TOKEN_REREAD_MS = 60_000;

interface Named<T> {
  name?: string;
  cluster?: T;
  user?: T;
  context?: T;
}
type Rec = Record<string, unknown>;

/**
 * The API server and credentials, found as kubectl finds them (client.ts, loadKubeConfig,
 * says the order). Forms this module does not read itself are loaded by client-node.
 */
export async function loadConnection(source: KubeConfigSource = {}, env: NodeJS.ProcessEnv = process.env, home: string = homedir(), serviceAccountDir = SERVICE_ACCOUNT_DIR): Promise<ApiConnection> {
  const thin = thinConnection(source, env, home, serviceAccountDir);
  if (thin !== undefined) return thin;
  const { loadKubeConfig } = await import('./client.js');
  return connectionOf(loadKubeConfig(source, env, home));
}

function thinConnection(source: KubeConfigSource, env: NodeJS.ProcessEnv, home: string, serviceAccountDir: string): ApiConnection | undefined {
  const envFiles = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
  const homeFile = join(home, '.kube', 'config');
  let file: string | undefined;
  if (source.kubeconfig) file = source.kubeconfig;
  else if (envFiles.length > 0) {
    const present = envFiles.filter((f) => existsSync(f));
    if (present.length !== 1) return undefined; // several files merge by kubectl's rules: client-node's loader
    file = present[0];
  } else if (existsSync(homeFile)) file = homeFile;
  if (file === undefined) return env.KUBERNETES_SERVICE_HOST && source.context === undefined ? inCluster(env, serviceAccountDir) : undefined;
  try {
    return fromFile(file, source.context);
  } catch {
    return undefined; // client-node's loader says what is wrong with it
  }
}

function inCluster(env: NodeJS.ProcessEnv, dir: string): ApiConnection | undefined {
  const host = env.KUBERNETES_SERVICE_HOST!;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  const tokenFile = join(dir, 'token');
  const caFile = join(dir, 'ca.crt');
  if (!existsSync(tokenFile) || !existsSync(caFile)) return undefined;
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return tlsConnection(server, { ca: readFileSync(caFile) }, tokenFromFile(tokenFile));
}

function fromFile(file: string, context: string | undefined): ApiConnection | undefined {
  const doc = parse(readFileSync(file, 'utf8')) as Rec | null;
  if (doc === null || typeof doc !== 'object') return undefined;
  const pick = <T extends Rec>(list: unknown, name: unknown, field: 'cluster' | 'user' | 'context'): T | undefined =>
    Array.isArray(list) ? ((list as Named<T>[]).find((e) => e?.name === name)?.[field] as T | undefined) : undefined;
  const ctx = pick<Rec>(doc.contexts, context ?? doc['current-context'], 'context');
  if (ctx === undefined) return undefined;
  const cluster = pick<Rec>(doc.clusters, ctx.cluster, 'cluster');
  const user = pick<Rec>(doc.users, ctx.user, 'user') ?? {};
  const server = cluster?.server;
  if (cluster === undefined || typeof server !== 'string' || server === '' || cluster['proxy-url'] !== undefined) return undefined;
  const known = new Set(['client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'token', 'tokenFile']);
  if (Object.keys(user).some((k) => !known.has(k))) return undefined; // exec, auth-provider, username, impersonation: client-node's
  const root = dirname(file);
  const bytes = (path: unknown, data: unknown): Buffer | undefined =>
    typeof data === 'string' && data !== '' ? Buffer.from(data, 'base64') : typeof path === 'string' && path !== '' ? readFileSync(isAbsolute(path) ? path : join(root, path)) : undefined;
  const tls = {
    ca: bytes(cluster['certificate-authority'], cluster['certificate-authority-data']),
    cert: bytes(user['client-certificate'], user['client-certificate-data']),
    key: bytes(user['client-key'], user['client-key-data']),
    ...(cluster['insecure-skip-tls-verify'] === true ? { rejectUnauthorized: false } : {}),
    ...(typeof cluster['tls-server-name'] === 'string' ? { servername: cluster['tls-server-name'] } : {}),
  };
  const token = typeof user.token === 'string' && user.token !== '' ? () => user.token as string : typeof user.tokenFile === 'string' ? tokenFromFile(user.tokenFile) : undefined;
  return tlsConnection(server, tls, token);
}

function tokenFromFile(file: string): () => string {
  let read: { token: string; at: number; mtimeMs: number } | undefined;
  return () => {
    const now = Date.now();
    if (read === undefined || now - read.at > TOKEN_REREAD_MS) {
      const mtimeMs = statSync(file).mtimeMs;
      read = { token: read?.mtimeMs === mtimeMs ? read.token : readFileSync(file, 'utf8').trim(), at: now, mtimeMs };
    }
    return read.token;
  };
}

function tlsConnection(server: string, tls: { ca?: Buffer | undefined; cert?: Buffer | undefined; key?: Buffer | undefined; rejectUnauthorized?: boolean; servername?: string }, token: (() => string) | undefined): ApiConnection {
  const https = server.startsWith('https:');
  const defined = Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined));
  const agent = https ? new HttpsAgent({ ...defined, keepAlive: true }) : new HttpAgent({ keepAlive: true });
  return {
    server,
    requestOptions: () => Promise.resolve({ agent, ...(token ? { headers: { Authorization: `Bearer ${token()}` } } : {}) }),
  };
}

// ---- Calls ----

// Ask for metadata only (the API server's PartialObjectMetadata form): the reaper judges by
// labels and annotations, so Secret data and pod specs never cross the wire to it. A server
// without it falls back to full objects, of which only metadata is kept below.
export const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;q=0.9';
export const METADATA_ONE = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;q=0.9';

export interface GetOptions {
  /** Names the call in errors ("get pods sandbox-a/runner"). */
  what: string;
  accept?: string | undefined;
  query?: Record<string, string | number | boolean | undefined>;
  timeoutMs: number;
  impersonate?: string | undefined;
  onRetry?: ((retry: RetryNotice) => void) | undefined;
  /** Told the length of the answer's text before it is parsed (a list sizes its next page by it). */
  onText?: ((chars: number) => void) | undefined;
  /** The most bytes the answer may hold: past it the read stops (AnswerTooLarge), before the rest is in memory. */
  maxBytes?: number | undefined;
}

/** An answer longer than the caller's `maxBytes`: cut off, not parsed (a list asks again for fewer objects). */
export class AnswerTooLarge extends KubeError {
  constructor(what: string, maxBytes: number) {
    super('Other', `${what}: the answer is longer than ${maxBytes} bytes`);
  }
}

/** A 404 to a list or a group's discovery: the API server serves no such resource there (a Status NotFound, or its plain 404 for a path it does not route). */
export function notServed(err: unknown): boolean {
  return err instanceof KubeError && err.status === 404;
}

/** Whether a kind of `group` may be served at another version than the one asked, or at none: any group but the core one, which every API server serves at v1. */
export function groupMayBeUnserved(group: string): boolean {
  return group !== '';
}

/** The path of a kind's objects, across namespaces or (given) in `namespace`: `/api/v1/...` for the core group, `/apis/GROUP/VERSION/...` otherwise. */
export function collectionPath(kind: { group: string; version: string; resource: string }, namespace?: string): string {
  const base = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  return namespace === undefined ? `${base}/${kind.resource}` : `${base}/namespaces/${encodeURIComponent(namespace)}/${kind.resource}`;
}

/**
 * One list page read with `read(limit)` (a GET bounded by `maxBytes`): an answer past its bound
 * is asked again, from the same place, for an eighth as many objects, down to one; one object
 * past it fails the list. Sizing a page from the last one cannot know the next page's objects
 * (a tenant pads its own to 256 KiB of annotations, a pod to 1.5 MiB). Returns the page and
 * the limit it was read with.
 */
export async function boundedPage<T>(limit: number, read: (limit: number) => Promise<T>): Promise<{ page: T; limit: number }> {
  for (;;) {
    try {
      return { page: await read(limit), limit };
    } catch (err) {
      if (!(err instanceof AnswerTooLarge) || limit === 1) throw err;
      limit = Math.max(1, Math.floor(limit / 8));
    }
  }
}

/** The URL of `path` under the server's (which may carry a path prefix), with its query (undefined values left out). */
function urlOf(conn: ApiConnection, path: string, query: GetOptions['query']): URL {
  const url = new URL(`${conn.server.replace(/\/+$/, '')}${path}`);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

async function open(conn: ApiConnection, path: string, o: Omit<GetOptions, 'timeoutMs' | 'onRetry'>, signal: AbortSignal): Promise<IncomingMessage> {
  const base = await conn.requestOptions();
  const url = urlOf(conn, path, o.query);
  const headers = { ...(base.headers as Record<string, string> | undefined), Accept: o.accept ?? 'application/json', ...(o.impersonate ? { 'Impersonate-User': o.impersonate } : {}) };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { ...base, method: 'GET', headers, signal }, resolve);
    req.once('error', reject);
    req.end();
  });
}

async function bodyOf(res: IncomingMessage, what: string, maxBytes = Infinity): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res) {
    bytes += (chunk as Buffer).length;
    if (bytes > maxBytes) {
      res.destroy();
      throw new AnswerTooLarge(what, maxBytes);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function headersOf(res: IncomingMessage): Record<string, string> {
  return Object.fromEntries(Object.entries(res.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : Array.isArray(v) ? [[k, v.join(', ')]] : [])));
}

/** One GET under a deadline, its JSON answer parsed; any other answer is a classified KubeError. */
export async function getJson<T>(conn: ApiConnection, path: string, o: GetOptions): Promise<T> {
  return retriedWithin(o.timeoutMs, o.what, (remainingMs) => getJsonOnce<T>(conn, path, { ...o, timeoutMs: remainingMs }), o.onRetry);
}

/**
 * The versions the API server serves of API group `group` (its discovery document, `/apis/GROUP`);
 * none when it serves no such group (a 404). The lookup cache's reflectors and the live reads
 * both ask it of a custom resource's group that answered a list 404 (the Gateway API not installed).
 */
export async function groupVersions(conn: ApiConnection, group: string, o: Omit<GetOptions, 'what' | 'accept' | 'query'>): Promise<string[]> {
  try {
    const found = await getJson<{ versions?: Array<{ version?: unknown }> }>(conn, `/apis/${encodeURIComponent(group)}`, { ...o, what: `get the versions of ${group}` });
    return (found.versions ?? []).flatMap((v) => (typeof v.version === 'string' && v.version !== '' ? [v.version] : []));
  } catch (err) {
    if (notServed(err)) return [];
    throw err;
  }
}

/**
 * One try of getJson: a 429 comes back as a TooManyRequests KubeError, not sent again. For a
 * caller that paces its own retries (the reaper's throttle holds every call back, not one).
 */
export async function getJsonOnce<T>(conn: ApiConnection, path: string, o: Omit<GetOptions, 'onRetry'>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), o.timeoutMs);
  try {
    const res = await open(conn, path, o, controller.signal);
    const text = await bodyOf(res, o.what, o.maxBytes);
    const code = res.statusCode ?? 0;
    if (code < 200 || code > 299) throw classifyAnswer(code, text, headersOf(res), o.what);
    o.onText?.(text.length);
    return JSON.parse(text) as T;
  } catch (err) {
    if (controller.signal.aborted) throw new KubeError('Timeout', `${o.what}: no answer within ${o.timeoutMs} ms`);
    throw classify(err, o.what);
  } finally {
    clearTimeout(timer);
  }
}

/** The API server's own limit on an object is 1.5 MiB in etcd; an event far past it is no event. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

export interface WatchHandle {
  /** Ends the watch (no error is reported). */
  abort(): void;
}

/**
 * A watch: each line of the answer is one event, handed over as it arrives (never the
 * whole stream in memory). `done` is called once: with an error for a failed request or a
 * broken stream, without one when the server ended the watch (its timeoutSeconds) or it was aborted.
 * `opened` is called when the server has answered 200: the watch is open.
 */
export function watch(
  conn: ApiConnection,
  path: string,
  o: { what: string; accept?: string | undefined; query: Record<string, string | number | boolean | undefined> },
  onEvent: (type: string, object: Rec) => void,
  done: (err?: unknown) => void,
  opened?: () => void,
): WatchHandle {
  const controller = new AbortController();
  let finished = false;
  const finish = (err?: unknown) => {
    if (finished) return;
    finished = true;
    done(controller.signal.aborted ? undefined : err);
  };
  void (async () => {
    const res = await open(conn, path, { ...o, query: { ...o.query, watch: 'true' } }, controller.signal);
    const code = res.statusCode ?? 0;
    if (code < 200 || code > 299) throw classifyAnswer(code, await bodyOf(res, o.what, MAX_EVENT_CHARS), headersOf(res), o.what);
    if (!finished) opened?.();
    res.setEncoding('utf8'); // a character split across chunks is joined before it is decoded
    let buffered = '';
    for await (const chunk of res) {
      buffered += chunk as string;
      if (buffered.length > MAX_EVENT_CHARS) throw new KubeError('Other', `${o.what}: an event longer than ${MAX_EVENT_CHARS} characters`);
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line === '') continue;
        const event = JSON.parse(line) as { type?: unknown; object?: unknown };
        if (typeof event.type !== 'string' || typeof event.object !== 'object' || event.object === null) throw new KubeError('Other', `${o.what}: an event without a type or an object`);
        if (finished) return;
        onEvent(event.type, event.object as Rec);
      }
    }
  })().then(
    () => finish(),
    (err: unknown) => finish(err),
  );
  return {
    abort() {
      controller.abort();
      finish();
    },
  };
}
