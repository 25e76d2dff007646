// `deed coverage`'s report: every resource, subresource and verb the API server's discovery
// lists, and every field of a reviewed kind that names another object (fields.ts), each with
// how Deed handles it. Pure: the documents in, the report out. What it derives comes from the
// kind table (src/policy/kinds.ts): the doors, the default row and its exceptions, the
// `references`, the workloads' templates; what it cannot derive, from classifications.ts.
// Anything neither places is unclassified.
import { DEFAULT_ROW_EXCEPTIONS, defaultRowFor, kindRow, kindRowNamed, type KindRow } from '../policy/kinds.js';
import { CLUSTER_SCOPED, CUSTOM_RESOURCE_FIELD, READ_VERBS, REFERENCE_FIELDS, SUBRESOURCES, type Classified, type CoverageClass } from './classifications.js';
import type { AggregatedDiscovery, CoverageDocuments, DiscoveredResource } from './documents.js';
import { kindSchemas, referenceFields, type FoundField } from './fields.js';

export interface ResourceEntry {
  group: string;
  /** The versions that serve it. */
  versions: string[];
  /** `pods`, `pods/exec`. */
  resource: string;
  kind: string;
  namespaced: boolean;
  /** The verbs this entry covers: a resource's writes and its reads are two entries. */
  verbs: string[];
  class: CoverageClass;
  reason: string;
}

export interface FieldEntry {
  /** The declaring schema type and field (`core.SecretVolumeSource.secretName`). */
  field: string;
  class: CoverageClass;
  reason: string;
  /** Every kind and path it stands at. */
  at: Array<{ group: string; kind: string; path: string }>;
}

export interface CoverageReport {
  resources: ResourceEntry[];
  fields: FieldEntry[];
  summary: { resources: Partial<Record<CoverageClass, number>>; fields: Partial<Record<CoverageClass, number>>; unclassified: string[] };
}

interface Served {
  group: string;
  versions: string[];
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  /** The kind of the resource's own objects (the parent's, for a subresource). */
  objectKind: string;
  objectVersion: string;
}

/** Every resource and subresource, once per group (the versions that serve it merged). */
export function servedResources(discovery: { api: AggregatedDiscovery; apis: AggregatedDiscovery }): Served[] {
  const out = new Map<string, Served>();
  const add = (group: string, version: string, resource: string, kind: string, namespaced: boolean, verbs: string[], objectKind: string) => {
    const k = `${group}/${resource}`;
    const seen = out.get(k);
    if (seen === undefined) out.set(k, { group, versions: [version], resource, kind, namespaced, verbs: [...verbs].sort(), objectKind, objectVersion: version });
    else {
      seen.versions.push(version);
      seen.verbs = [...new Set([...seen.verbs, ...verbs])].sort();
    }
  };
  for (const doc of [discovery.api, discovery.apis])
    for (const g of doc.items ?? [])
      for (const v of g.versions ?? [])
        for (const r of v.resources ?? []) {
          const group = g.metadata?.name ?? '';
          const namespaced = r.scope === 'Namespaced';
          const kind = r.responseKind?.kind ?? '';
          add(group, v.version, r.resource, kind, namespaced, r.verbs ?? [], kind);
          for (const s of r.subresources ?? []) add(group, v.version, `${r.resource}/${s.subresource}`, s.responseKind?.kind ?? '', namespaced, s.verbs ?? [], kind);
        }
  return [...out.values()];
}

const qualified = (group: string, resource: string) => (group === '' ? resource : `${group}/${resource}`);
const DOORS_OF_CONNECT = new Set(['connect', 'service-proxy']);

/** How Deed handles the writes of a resource or subresource (the verbs that are not reads). */
export function classifyWrites(r: Pick<Served, 'group' | 'resource' | 'namespaced' | 'kind'>): Classified {
  const [base, sub] = r.resource.split('/') as [string, string | undefined];
  const row = kindRow({ group: r.group, resource: base });
  if (!r.namespaced) {
    const note = CLUSTER_SCOPED[`${r.group}/${base}`];
    return { class: 'rbac', reason: `cluster-scoped: outside the review scope, RBAC's${note === undefined ? '' : `; ${note}`}` };
  }
  if (row !== undefined && !row.namespaced) return { class: 'unclassified', reason: 'the kind table says cluster-scoped, discovery says namespaced' };
  if (sub !== undefined) {
    const door = row?.subresources?.[sub];
    if (door !== undefined) return { class: 'guarded', reason: `door ${door}` };
    const entry = SUBRESOURCES[qualified(r.group, r.resource)];
    if (entry !== undefined) return entry;
    if ((sub === 'status' || sub === 'scale') && defaultRowFor({ group: r.group, resource: base }, r.kind) !== undefined)
      return sub === 'status'
        ? { class: 'stamped', reason: "default row: its review carries the object (guarded, stamps frozen)" }
        : { class: 'stamped', reason: 'default row: a Scale that names the object, refused but for the platform (guard.custom-scale)' };
    return { class: 'unclassified', reason: `a subresource no row routes to Deed${row?.door !== undefined ? ` (its kind's door is ${row.door})` : ''}` };
  }
  if (row?.door !== undefined) return { class: 'guarded', reason: `door ${row.door}` };
  const exception = DEFAULT_ROW_EXCEPTIONS.find((e) => e.group === r.group && e.resource === base);
  if (exception !== undefined) return { class: 'exempt', reason: `default row's exception: ${exception.reason}` };
  if (defaultRowFor({ group: r.group, resource: base }, r.kind) !== undefined)
    return { class: 'stamped', reason: row === undefined ? 'default row (not in the kind table)' : 'default row (a kind table row without a door)' };
  return { class: 'unclassified', reason: 'nothing places it' };
}

const READ: Classified = { class: 'rbac', reason: "a read: never sent to admission (What Deed cannot guard: reads)" };

/** The entries of one served resource: its writes, and its reads. A CONNECT door's GET is a CONNECT, not a read. */
function resourceEntries(r: Served): ResourceEntry[] {
  const [base, sub] = r.resource.split('/') as [string, string | undefined];
  const connect = sub !== undefined && DOORS_OF_CONNECT.has(kindRow({ group: r.group, resource: base })?.subresources?.[sub] ?? '');
  const reads = connect ? [] : r.verbs.filter((v) => READ_VERBS.includes(v));
  const writes = connect ? r.verbs : r.verbs.filter((v) => !READ_VERBS.includes(v));
  const entry = (verbs: string[], c: Classified): ResourceEntry => ({ group: r.group, versions: r.versions, resource: r.resource, kind: r.kind, namespaced: r.namespaced, verbs, class: c.class, reason: c.reason });
  const out: ResourceEntry[] = [];
  if (writes.length > 0) out.push(entry(writes, classifyWrites(r)));
  if (reads.length > 0) out.push(entry(reads, SUBRESOURCES[qualified(r.group, r.resource)] ?? READ));
  return out;
}

/** How Deed handles one found field. */
export function classifyField(f: FoundField): Classified {
  const row = kindRowNamed(f.group, f.kind);
  const direct = referenceAt(row, f.path);
  if (direct !== undefined) return { class: 'judged', reason: `reference.* (the kind table's references): ${direct}` };
  // A custom resource's field the kind table names (a Gateway API route's backendRefs) is judged above; its others are its operator's.
  if (f.custom) return CUSTOM_RESOURCE_FIELD;
  // A workload's pod template: the pods its controller makes are judged as pods when made.
  for (const template of row?.templates?.pods ?? []) {
    if (!f.path.startsWith(`${template}.spec.`)) continue;
    const onPod = referenceAt(kindRowNamed('', 'Pod'), `spec.${f.path.slice(template.length + '.spec.'.length)}`);
    if (onPod !== undefined) return { class: 'judged', reason: `reference.* on each pod its controller makes (the Pod's references): ${onPod}` };
  }
  return REFERENCE_FIELDS[f.key] ?? { class: 'unclassified', reason: 'a field that names another object, in neither the kind table nor classifications.ts' };
}

/** The follower of the kind table's reference at `path` (the field, or the object holding its `name`). */
function referenceAt(row: KindRow | undefined, path: string): string | undefined {
  return row?.references?.find((ref) => ref.path === path || ref.path === `${path}.name`)?.follower;
}

const count = (classes: CoverageClass[]) => classes.reduce<Partial<Record<CoverageClass, number>>>((acc, c) => ({ ...acc, [c]: (acc[c] ?? 0) + 1 }), {});

/** The report of a set of documents. */
export function coverage(docs: CoverageDocuments): CoverageReport {
  const served = servedResources(docs.discovery);
  const resources = served.flatMap(resourceEntries).sort((a, b) => `${a.group}/${a.resource}`.localeCompare(`${b.group}/${b.resource}`));
  const fields = new Map<string, FieldEntry>();
  const index = kindSchemas(docs.openapi);
  const missing: ResourceEntry[] = [];
  // The fields of every kind whose writes are reviewed (a door, the default row).
  for (const r of served.filter((x) => !x.resource.includes('/') && x.namespaced)) {
    const c = classifyWrites(r);
    if (c.class !== 'guarded' && c.class !== 'stamped') continue;
    const found = referenceFields({ group: r.group, version: r.objectVersion, kind: r.objectKind }, docs.openapi, index);
    if (found === undefined) {
      missing.push({ group: r.group, versions: r.versions, resource: r.resource, kind: r.kind, namespaced: true, verbs: [], class: 'unclassified', reason: `no OpenAPI schema for ${qualified(r.group, r.objectVersion)} ${r.objectKind}: its fields cannot be read` });
      continue;
    }
    for (const f of found) {
      const c2 = classifyField(f);
      const k = `${f.key}\n${c2.class}\n${c2.reason}`;
      const entry = fields.get(k) ?? { field: f.key, class: c2.class, reason: c2.reason, at: [] };
      if (!entry.at.some((a) => a.group === f.group && a.kind === f.kind && a.path === f.path)) entry.at.push({ group: f.group, kind: f.kind, path: f.path });
      fields.set(k, entry);
    }
  }
  const allResources = [...resources, ...missing];
  const fieldList = [...fields.values()].sort((a, b) => a.field.localeCompare(b.field) || a.class.localeCompare(b.class));
  const unclassified = [
    ...allResources.filter((r) => r.class === 'unclassified').map((r) => qualified(r.group, r.resource)),
    ...fieldList.filter((f) => f.class === 'unclassified').map((f) => `${f.field} (${f.at[0]!.kind} ${f.at[0]!.path})`),
  ];
  return { resources: allResources, fields: fieldList, summary: { resources: count(allResources.map((r) => r.class)), fields: count(fieldList.map((f) => f.class)), unclassified } };
}

export type { DiscoveredResource };
