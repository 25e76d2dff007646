// The documents `deed coverage` reads from the API server, as the API server serves them:
// aggregated discovery (apidiscovery.k8s.io/v2) of /api and /apis, and the OpenAPI v3
// document of each group-version (/openapi/v3/<path>). Kept as they come, so a saved set
// (`deed coverage --save DIR`) is read back by `--discovery DIR` exactly as a live one.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cannotRead, jsonProblem } from '../errors/file-errors.js';

/** One resource or subresource of an aggregated discovery document. */
export interface DiscoveredSubresource {
  subresource: string;
  responseKind?: { group?: string; version?: string; kind?: string };
  verbs?: string[];
}
export interface DiscoveredResource {
  resource: string;
  responseKind?: { group?: string; version?: string; kind?: string };
  scope?: 'Namespaced' | 'Cluster';
  verbs?: string[];
  subresources?: DiscoveredSubresource[] | null;
}
/** apidiscovery.k8s.io/v2 APIGroupDiscoveryList. */
export interface AggregatedDiscovery {
  kind?: string;
  items?: Array<{ metadata?: { name?: string }; versions?: Array<{ version: string; resources?: DiscoveredResource[] | null }> }>;
}

/** An OpenAPI v3 schema, as far as the walk reads it. */
export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  allOf?: Schema[];
  $ref?: string;
  'x-kubernetes-group-version-kind'?: Array<{ group: string; version: string; kind: string }>;
  [extension: string]: unknown;
}
export interface OpenApiDocument {
  components?: { schemas?: Record<string, Schema> };
}

export interface CoverageDocuments {
  /** Aggregated discovery of the core group (/api) and the named groups (/apis). */
  discovery: { api: AggregatedDiscovery; apis: AggregatedDiscovery };
  /** The OpenAPI v3 document of each group-version, by its path under /openapi/v3 (`api/v1`, `apis/apps/v1`). */
  openapi: Record<string, OpenApiDocument>;
}

const FILES = { api: 'api.json', apis: 'apis.json', openapi: 'openapi' } as const;
const fileOf = (path: string) => `${path.replaceAll('/', '__')}.json`;
const pathOf = (file: string) => file.replace(/\.json$/, '').replaceAll('__', '/');

/** Reads a saved set: api.json, apis.json, and openapi/<path with / as __>.json. */
export function readDocuments(dir: string): CoverageDocuments {
  const read = (file: string): unknown => {
    let text: string;
    try {
      text = readFileSync(join(dir, file), 'utf8');
    } catch (err) {
      throw new Error(cannotRead('discovery document', join(dir, file), err));
    }
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new Error(`${join(dir, file)} is not JSON: ${jsonProblem(err)}`);
    }
  };
  const openapi: Record<string, OpenApiDocument> = {};
  let files: string[];
  try {
    files = readdirSync(join(dir, FILES.openapi));
  } catch (err) {
    throw new Error(cannotRead('OpenAPI folder', join(dir, FILES.openapi), err));
  }
  for (const file of files.filter((f) => f.endsWith('.json')).sort()) openapi[pathOf(file)] = read(join(FILES.openapi, file)) as OpenApiDocument;
  return { discovery: { api: read(FILES.api) as AggregatedDiscovery, apis: read(FILES.apis) as AggregatedDiscovery }, openapi };
}

/** Writes a set as readDocuments() reads it. */
export function writeDocuments(dir: string, docs: CoverageDocuments): void {
  mkdirSync(join(dir, FILES.openapi), { recursive: true });
  writeFileSync(join(dir, FILES.api), `${JSON.stringify(docs.discovery.api)}\n`);
  writeFileSync(join(dir, FILES.apis), `${JSON.stringify(docs.discovery.apis)}\n`);
  for (const [path, doc] of Object.entries(docs.openapi)) writeFileSync(join(dir, FILES.openapi, fileOf(path)), `${JSON.stringify(doc)}\n`);
}

