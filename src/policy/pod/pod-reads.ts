// What a pod reads by name: the claims it mounts or its ephemeral volumes clone, the Secrets
// and ConfigMaps it names, the ResourceClaims it names and the ResourceClaimTemplates its
// claims are made from (the resourceclaim controller copies whatever template stands under
// the name when it makes the pod's claim, and again if that claim is gone while the pod has
// not started). A pod's names are judged at its
// CREATE, but nothing holds what they name after: the API server keeps a claim only for a
// scheduled pod (pvc-protection), a Secret or a ConfigMap never. So what its writer deletes
// can be created again under the name by another environment, and the kubelet hands the pod
// that one (or the provisioner copies it): at its binding, and to a running pod at the next
// volume refresh or container restart. So the binding is judged again on these names
// (rules/binding-reads.ts), and the CREATE of an object under a name a live pod reads is
// judged against that pod (rules/live-readers.ts); the lookup cache keeps
// them for every pod, and an index of them by name (kube/name-readers.ts), up to a bound per
// pod (kube/lookup-facts.ts, KEPT_READS_BYTES; past it the names are kept as hashes, and the
// pod itself is read live when looked up).
import { field, isRec, recs, text, type Rec } from '../unstructured.js';
import { dataSources, ephemeralClaimSpec } from './spec.js';
import { podConfigMaps } from './configmap-references.js';
import { podSecrets } from './secret-references.js';
import type { PodReads, ReaderKind } from '../policy.js';
import type { KubeObject } from '../../admission/types.js';
import { objectReferences, readableRow } from '../object-references.js';
import { kindRows, type LookupResource } from '../kinds.js';
import { MAX_CLAIM_LOOKUPS, MAX_CONFIGMAP_LOOKUPS, MAX_SECRET_LOOKUPS } from '../read-bounds.js';

const PODS = { group: '', resource: 'pods' };

export type { PodReads, ReaderKind };

/** What a pod reads, by the kind it is looked up as, and the most of each judged (the read plan's bounds). */
export const POD_READS: ReadonlyArray<{ field: keyof PodReads; resource: LookupResource; kind: string; max: number }> = [
  { field: 'claims', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', max: MAX_CLAIM_LOOKUPS },
  { field: 'secrets', resource: 'secrets', kind: 'Secret', max: MAX_SECRET_LOOKUPS },
  { field: 'configMaps', resource: 'configmaps', kind: 'ConfigMap', max: MAX_CONFIGMAP_LOOKUPS },
  { field: 'resourceClaims', resource: 'resourceclaims', kind: 'ResourceClaim', max: MAX_CLAIM_LOOKUPS },
  { field: 'resourceClaimTemplates', resource: 'resourceclaimtemplates', kind: 'ResourceClaimTemplate', max: MAX_CLAIM_LOOKUPS },
];

/**
 * The names a pod's spec reads; undefined for one that names nothing, and for a pod that has
 * finished (`status.phase` Succeeded or Failed, for good): its containers run no more, so
 * nothing it named is read again, and it holds no name another environment may want.
 */
export function podReadsOf(spec: unknown, status?: unknown): PodReads | undefined {
  // Only a pod's spec lists containers at its top (a workload's is under its template).
  if (!isRec(spec) || !Array.isArray(field(spec, 'containers'))) return undefined;
  const phase = isRec(status) ? field(status, 'phase') : undefined;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const dra = objectReferences(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec } as KubeObject);
  const reads: PodReads = {
    claims: distinct(recs(field(spec, 'volumes')).map((v) => claimName(v))),
    secrets: distinct(podSecrets(spec, 'spec').map((r) => r.name)),
    configMaps: distinct(podConfigMaps(spec, 'spec').map((r) => r.name)),
    // As the kind table names them (a pod's row, `references`): the table's and the binding's cannot part.
    resourceClaims: draNames(dra, 'ResourceClaim'),
    resourceClaimTemplates: draNames(dra, 'ResourceClaimTemplate'),
  };
  return POD_READS.every((r) => reads[r.field].length === 0) ? undefined : reads;
}

/** The kinds whose objects read a name of `resource`, with their resources (the kind table's `readsByName`): pods, and for a claim's name the claims not yet provisioned (claimReadsOf). */
export function readingKinds(resource: LookupResource): ReadonlyArray<readonly [ReaderKind, LookupResource]> {
  let kinds = READING_KINDS.get(resource);
  if (kinds === undefined) READING_KINDS.set(resource, (kinds = kindRows().flatMap((r) => (r.readsByName?.includes(resource) === true ? [[r.kind, r.resource as LookupResource] as const] : []))));
  return kinds;
}
/** readingKinds' answers, per resource: asked on every CREATE of what a pod reads. */
const READING_KINDS = new Map<LookupResource, ReadonlyArray<readonly [ReaderKind, LookupResource]>>();

/** Whether a kind's objects read others by name (the kind table's `readsByName`): they are kept, listed and read whole. */
export function readsByName(resource: string): boolean {
  return kindRows().some((r) => r.resource === resource && r.readsByName !== undefined);
}

/**
 * What a claim not yet provisioned reads by name: the claim it clones. The provisioner copies
 * whatever stands under that name when it provisions the claim's volume, as late as its first
 * pod's scheduling (WaitForFirstConsumer), and nothing holds the name until then: its writer
 * may delete it, and another environment create one under the name. So such a claim reads
 * its source as a pod reads what it mounts (rules/live-readers.ts). Once provisioned
 * (`spec.volumeName`, never unset) it reads nothing again; undefined too for a spec that is a
 * pod's, or clones nothing (a restore's snapshot and a populator's source are not kept).
 */
export function claimReadsOf(spec: unknown): PodReads | undefined {
  if (!isRec(spec) || Array.isArray(field(spec, 'containers'))) return undefined;
  if ((text(spec, 'volumeName') ?? '') !== '') return undefined;
  const clone = dataSources(spec).clone?.name;
  return clone === undefined ? undefined : { ...noReads(), claims: [clone] };
}

/**
 * What an object reads by the kind table's references that say so (`readsLive`: an Ingress,
 * the Secrets it names for TLS), in its own namespace, read as where its writes are judged
 * (rules/reference-scope.ts). Undefined for a kind with none (a pod's and a claim's reads are
 * podReadsOf's and claimReadsOf's), and for an object that names nothing.
 */
export function referencedReadsOf(resource: string, obj: unknown): PodReads | undefined {
  let row = READS_LIVE_ROWS.get(resource);
  if (row === undefined) READS_LIVE_ROWS.set(resource, (row = kindRows().find((r) => r.resource === resource && r.references?.some((ref) => ref.readsLive === true) === true) ?? null));
  if (row === null || !isRec(obj)) return undefined;
  const reads = noReads();
  const own = isRec(obj.metadata) ? obj.metadata.namespace : undefined;
  for (const ref of objectReferences(row, obj as unknown as KubeObject)) {
    // One in another namespace (a Gateway's certificate a ReferenceGrant there admits) is not held: the index is per namespace.
    const read = ref.readsLive !== true || (ref.namespace !== undefined && ref.namespace !== own) ? undefined : readableRow(ref.group, ref.kind);
    const at = read === undefined || row.readsByName?.includes(read.resource) !== true ? undefined : POD_READS.find((p) => p.resource === read.resource);
    if (at !== undefined && !reads[at.field].includes(ref.name)) reads[at.field].push(ref.name);
  }
  return POD_READS.every((r) => reads[r.field].length === 0) ? undefined : reads;
}

/** referencedReadsOf's row per resource (null: none): asked for every object the lookup cache stores, of every kind. */
const READS_LIVE_ROWS = new Map<string, ReturnType<typeof kindRows>[number] | null>();

/** Whether a pod that reads `reads` names `resource` `name` (the live readers of an object, listed or remembered). */
export function readsName(reads: PodReads | undefined, resource: LookupResource, name: string): boolean {
  const row = POD_READS.find((r) => r.resource === resource);
  return row !== undefined && reads?.[row.field].includes(name) === true;
}

/**
 * The claim a volume reads by name: the one it mounts, or the one an ephemeral volume's claim
 * (made for the pod, owned by it, by the ephemeral-volume controller) clones. That copy is made
 * when the claim's volume is provisioned, as late as the pod's scheduling: until then whatever
 * stands under the name is what it copies.
 */
function claimName(volume: Rec): string | undefined {
  const pvc = field(volume, 'persistentVolumeClaim');
  if (isRec(pvc)) return text(pvc, 'claimName');
  const template = ephemeralClaimSpec(volume);
  return template === undefined ? undefined : dataSources(template).clone?.name;
}

/** Reads of no name, one empty list per kind of POD_READS. */
function noReads(): PodReads {
  return Object.fromEntries(POD_READS.map((r) => [r.field, []])) as unknown as PodReads;
}

/** The names of `kind` (of resource.k8s.io) among a pod's references. */
function draNames(refs: ReturnType<typeof objectReferences>, kind: 'ResourceClaim' | 'ResourceClaimTemplate'): string[] {
  return distinct(refs.filter((r) => r.group === 'resource.k8s.io' && r.kind === kind).map((r) => r.name));
}

function distinct(names: Array<string | undefined>): string[] {
  return [...new Set(names.filter((n): n is string => n !== undefined && n !== ''))];
}
