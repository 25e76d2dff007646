// The fields of a kind that name another object, found in the API server's own OpenAPI v3
// schemas (docs/security-model.md, "What an object points at"). Pure: schemas in, fields
// out. A field is found by its shape, not by a list of names, so a field a Kubernetes
// upgrade adds is found too:
// - an object (or a list of them) with a string `name` and a `kind`, `apiGroup` or
//   `apiVersion` beside it (ObjectReference, TypedLocalObjectReference, OwnerReference,
//   CrossVersionObjectReference), or whose type or field is called a reference, a key
//   selector, an env source, a projection, a volume source or a backend
//   (LocalObjectReference, SecretKeySelector, ConfigMapVolumeSource, IngressServiceBackend);
// - a string (or a list of them) whose field name ends in `Name` or `Names` (claimName,
//   secretName, serviceAccountName, storageClassName, nodeName).
// Each is reported with the kind and the field path it stands at, and keyed by the schema
// type that declares it (`core.SecretVolumeSource.secretName`), so a type shared by many
// kinds (a PodSpec in every workload) is classified once.
import type { OpenApiDocument, Schema } from './documents.js';

export interface FoundField {
  group: string;
  version: string;
  kind: string;
  /** The field path from the object's root, `[]` stepping into each item of a list. */
  path: string;
  /** The declaring schema type and the path within it: `core.SecretVolumeSource.secretName`; a custom resource's inline schema: `<group>/<Kind>.spec.x`. */
  key: string;
  /** How it was found. */
  shape: 'object-reference' | 'name';
  /** It is declared by a custom resource's own schema (not a built-in type it embeds). */
  custom: boolean;
}

/** Where a kind's schema is, and which resource serves it. */
export interface KindToWalk {
  group: string;
  version: string;
  kind: string;
}

const REFERENCE_TYPE = /(Reference|Ref|KeySelector|EnvSource|Projection|VolumeSource|Backend)$/;
const REFERENCE_FIELD = /(Ref|Reference|Refs|References)$/;
const NAME_FIELD = /[a-z0-9](Name|Names)$/;
const VERSION = /^v\d+((alpha|beta)\d+)?$/;
/** Deeper than any built-in kind's schema: a recursive inline schema stops here. */
const MAX_DEPTH = 40;

/** `io.k8s.api.core.v1.SecretVolumeSource` as `core.SecretVolumeSource`; `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` as `meta.ObjectMeta`. */
export function typeKey(id: string): string {
  const parts = id.split('.');
  const type = parts.at(-1)!;
  const before = parts.at(-2);
  const group = before !== undefined && VERSION.test(before) ? parts.at(-3) : before;
  return group === undefined ? type : `${group}.${type}`;
}

const SCHEMA_PREFIX = '#/components/schemas/';

/** A schema of Kubernetes' own types (a custom resource's is named after its group). */
export const isBuiltIn = (id: string) => id.startsWith('io.k8s.');

interface Resolved {
  id?: string;
  schema: Schema;
}

function resolve(schema: Schema, schemas: Record<string, Schema>): Resolved {
  const ref = schema.$ref ?? (schema.allOf?.length === 1 ? schema.allOf[0]!.$ref : undefined);
  if (ref === undefined || !ref.startsWith(SCHEMA_PREFIX)) return { schema };
  const id = ref.slice(SCHEMA_PREFIX.length);
  return { id, schema: schemas[id] ?? {} };
}

const isType = (s: Schema, type: string) => s.type === type || (Array.isArray(s.type) && s.type.includes(type));

function isObjectReference(s: Schema, id: string | undefined, field: string): boolean {
  const props = s.properties;
  if (props === undefined || props.name === undefined || !isType(props.name, 'string')) return false;
  if (props.kind !== undefined || props.apiGroup !== undefined || props.apiVersion !== undefined) return true;
  return (id !== undefined && REFERENCE_TYPE.test(typeKey(id))) || REFERENCE_FIELD.test(field);
}

/** The schema of each kind, by its x-kubernetes-group-version-kind, over every document. */
export function kindSchemas(docs: Record<string, OpenApiDocument>): Map<string, { id: string; schemas: Record<string, Schema> }> {
  const out = new Map<string, { id: string; schemas: Record<string, Schema> }>();
  for (const doc of Object.values(docs)) {
    const schemas = doc.components?.schemas ?? {};
    for (const [id, s] of Object.entries(schemas))
      for (const gvk of s['x-kubernetes-group-version-kind'] ?? []) {
        const k = `${gvk.group}/${gvk.version}/${gvk.kind}`;
        if (!out.has(k)) out.set(k, { id, schemas });
      }
  }
  return out;
}

export const gvkKey = (k: KindToWalk) => `${k.group}/${k.version}/${k.kind}`;

/**
 * The reference fields of one kind's schema. No `status` is walked (the object's, or a
 * template's, which the API server drops): the kind's controller or the kubelet reports
 * there, and what it names is a report, not an instruction a controller follows for the
 * writer. Undefined: the documents have no schema for the kind.
 */
export function referenceFields(kind: KindToWalk, docs: Record<string, OpenApiDocument>, index = kindSchemas(docs)): FoundField[] | undefined {
  const found = index.get(gvkKey(kind));
  if (found === undefined) return undefined;
  const { schemas } = found;
  const out: FoundField[] = [];
  // A built-in kind's own fields are keyed by its type; a custom resource's inline schema by its group and kind.
  const rootKey = isBuiltIn(found.id) ? typeKey(found.id) : `${kind.group}/${kind.kind}`;
  const walk = (schema: Schema, path: string, owner: string, custom: boolean, rel: string, stack: readonly string[], depth: number) => {
    if (depth > MAX_DEPTH) return;
    const { id, schema: s } = resolve(schema, schemas);
    if (id !== undefined) {
      if (stack.includes(id)) return;
      // A named type starts its own key: the field is classified once, wherever the type is used.
      if (depth > 0) {
        owner = typeKey(id);
        custom = !isBuiltIn(id);
        rel = '';
      }
      stack = [...stack, id];
    }
    if (s.items !== undefined) return walk(s.items, `${path}[]`, owner, custom, `${rel}[]`, stack, depth + 1);
    if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${path}[*]`, owner, custom, `${rel}[*]`, stack, depth + 1);
    for (const [field, value] of Object.entries(s.properties ?? {})) {
      if (field === 'status') continue;
      const fieldPath = path === '' ? field : `${path}.${field}`;
      const fieldRel = rel === '' ? field : `${rel}.${field}`;
      const key = `${owner}.${fieldRel}`;
      // A list of references is one field: its items.
      const item = resolve(value, schemas).schema.items ?? value;
      const target = resolve(item, schemas);
      const listed = item !== value ? '[]' : '';
      if (isObjectReference(target.schema, target.id, field)) {
        out.push({ ...kind, path: `${fieldPath}${listed}`, key: `${key}${listed}`, shape: 'object-reference', custom });
        continue;
      }
      if (NAME_FIELD.test(field) && isType(target.schema, 'string')) {
        out.push({ ...kind, path: `${fieldPath}${listed}`, key: `${key}${listed}`, shape: 'name', custom });
        continue;
      }
      walk(value, fieldPath, owner, custom, fieldRel, stack, depth + 1);
    }
  };
  walk({ $ref: `${SCHEMA_PREFIX}${found.id}` }, '', rootKey, !isBuiltIn(found.id), '', [], 0);
  return out;
}
