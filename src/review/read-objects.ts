// Reads the objects `deed review` is given: YAML or JSON, several documents, and
// `kind: List` (or `PodList` and the like from `kubectl get -o yaml`) expanded into
// its items, each reviewed on its own.
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../admission/types.js';
import { InputError } from './build-review.js';
import { parseProblem } from '../errors/file-errors.js';

export interface SourcedObject {
  object: KubeObject;
  /** Where it came from, for messages: `pods.yaml#2` or `pods.yaml#1.items[3]`. */
  where: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isList(v: Record<string, unknown>): boolean {
  return typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items);
}

function asObject(v: unknown, where: string): KubeObject {
  if (!isRecord(v)) throw new InputError(`${where}: expected a Kubernetes object, got ${Array.isArray(v) ? 'a list' : typeof v}`);
  if (v.metadata === undefined || v.metadata === null) v.metadata = {};
  if (!isRecord(v.metadata)) throw new InputError(`${where}: metadata must be an object`);
  if (typeof v.apiVersion !== 'string' || v.apiVersion === '') throw new InputError(`${where}: apiVersion is required`);
  if (typeof v.kind !== 'string' || v.kind === '') throw new InputError(`${where}: kind is required`);
  return v as KubeObject;
}

export function readObjects(text: string, source: string): SourcedObject[] {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new InputError(`${source}: not a YAML stream`);
  const out: SourcedObject[] = [];
  docs.forEach((doc, i) => {
    const where = `${source}#${i + 1}`;
    if (doc.errors.length > 0) throw new InputError(`${where}: cannot parse as YAML: ${parseProblem(doc.errors[0])}`);
    let value: unknown;
    try {
      // The alias cap stops a "billion laughs" document from expanding without bound.
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      throw new InputError(`${where}: ${parseProblem(err)}`);
    }
    if (value === null || value === undefined) return; // an empty document, as `---` at the end leaves
    if (isRecord(value) && isList(value)) (value.items as unknown[]).forEach((item, j) => out.push({ object: asObject(item, `${where}.items[${j}]`), where: `${where}.items[${j}]` }));
    else out.push({ object: asObject(value, where), where });
  });
  if (out.length === 0) throw new InputError(`${source}: no objects found`);
  return out;
}
