// The documents `deed coverage` reads (src/coverage/documents.ts), fetched from the API
// server with the kubeconfig's credentials and TLS: aggregated discovery of /api and /apis,
// the OpenAPI v3 index, and the document of each group-version it lists. A thin layer: GETs
// under one deadline each, JSON in; every failure is an Error that says which call.
import { request, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import type { AggregatedDiscovery, CoverageDocuments, OpenApiDocument } from '../coverage/documents.js';

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** Only the group-versions' documents (`api/v1`, `apis/apps/v1`), not the group or version-less ones. */
const GROUP_VERSION = /^(api\/v1|apis\/[^/]+\/[^/]+)$/;

export interface FetchOptions {
  timeoutMs: number;
  /** `--as USER`. */
  impersonate?: string | undefined;
}

export async function fetchDocuments(kc: KubeConfig, options: FetchOptions): Promise<CoverageDocuments> {
  const get = (path: string, accept = 'application/json') => getJson(kc, path, accept, options);
  const [api, apis, index] = await Promise.all([
    get('/api', AGGREGATED) as Promise<AggregatedDiscovery>,
    get('/apis', AGGREGATED) as Promise<AggregatedDiscovery>,
    get('/openapi/v3') as Promise<{ paths?: Record<string, { serverRelativeURL?: string }> }>,
  ]);
  for (const [path, doc] of [['/api', api], ['/apis', apis]] as const)
    if (doc.kind !== 'APIGroupDiscoveryList') throw new Error(`GET ${path}: the API server does not serve aggregated discovery (apidiscovery.k8s.io/v2; Kubernetes 1.30 or later)`);
  const openapi: Record<string, OpenApiDocument> = {};
  const paths = Object.entries(index.paths ?? {}).filter(([path]) => GROUP_VERSION.test(path));
  // A few at a time: the documents are large (the core group's is over a megabyte).
  for (let i = 0; i < paths.length; i += 4)
    await Promise.all(paths.slice(i, i + 4).map(async ([path, ref]) => (openapi[path] = (await get(ref.serverRelativeURL ?? `/openapi/v3/${path}`)) as OpenApiDocument)));
  return { discovery: { api, apis }, openapi };
}

async function getJson(kc: KubeConfig, path: string, accept: string, options: FetchOptions): Promise<unknown> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  // The server's own path prefix (a proxy's) stays in front of ours; the query (the OpenAPI documents' hash) too.
  const url = new URL(`${cluster.server.replace(/\/+$/, '')}${path}`);
  const opts: RequestOptions = { method: 'GET', headers: { Accept: accept } };
  await kc.applyToHTTPSOptions(opts);
  if (options.impersonate !== undefined) opts.headers = { ...opts.headers, 'Impersonate-User': options.impersonate };
  const send = url.protocol === 'http:' ? httpRequest : request;
  return new Promise((resolve, reject) => {
    const req = send(url, { ...opts, timeout: options.timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => reject(new Error(`GET ${path}: ${err.message}`)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`GET ${path}: HTTP ${res.statusCode}${statusMessage(text)}`));
        try {
          resolve(JSON.parse(text));
        } catch (err) {
          reject(new Error(`GET ${path}: not JSON: ${(err as Error).message}`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`GET ${path} from ${cluster.server}: ${err.message}`)));
    req.end();
  });
}

function statusMessage(text: string): string {
  try {
    const s = JSON.parse(text) as { message?: string };
    return typeof s.message === 'string' ? `: ${s.message}` : '';
  } catch {
    return '';
  }
}
