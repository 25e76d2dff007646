// `deed keys usage`: which attestation keys the managed objects in the cluster still
// carry, so the operator knows when a key can leave the ring (docs/operations.md, "Rotating the
// attestation key"). The tally is pure; the listing reads every namespaced kind the API server
// serves (discovery), metadata only and page by page: Deed stamps and signs far more than the
// reaper's kinds (run Leases, workloads, the default row's kinds, custom resources), and a key
// retired while one of those still carries it leaves that object unverifiable for ever.
// Only objects in the review scope count: outside it anyone can write stamps (and get a
// signed patch for them from the webhook port), so a stamp there proves nothing, and
// counting it would let a tenant keep a retired key "in use" for ever.
import { entryOf } from '../policy/unstructured.js';
import type { KubeObject } from '../admission/types.js';
import { KubeError } from '../kube/errors.js';
import type { KubeClient, ServedKindLister, ServedResource } from '../kube/client.js';
import { parseAttestation } from '../policy/stamps/attestation.js';
import { verifyObject, type KeyRing } from '../policy/stamps/key-ring.js';
import type { StampKeys } from '../policy/stamps/keys.js';
import { readReviewScope } from '../kube/review-scope.js';

export type KeyRole = 'signing' | 'verify-only' | 'not-in-ring';

export interface KeyCount {
  key: string;
  role: KeyRole;
  /** Managed objects whose attestation verifies under this key (or, without keys, names it). */
  objects: number;
  /** Of which in the pre-ring v1 format. */
  v1: number;
}

/** Where one object's attestation stands. */
export interface ObjectUsage {
  /** The kind as the attestation covers it (`Lease`). */
  kind: string;
  /** Its API group, when not the core group (`coordination.k8s.io`). */
  group?: string;
  namespace: string;
  name: string;
  uid: string;
  /** The key that verifies it (or that it names); undefined when none does. */
  key?: string;
  format: 'v1' | 'v2' | 'none';
  status: 'verified' | 'named' | 'unverifiable' | 'unattested' | 'outside-scope';
  reason?: string;
}

export interface KeyUsage {
  /** Every ring key (even unused), then ids attestations name that are not in the ring. */
  keys: KeyCount[];
  /** An attestation that verifies under no ring key (retired, revoked, tampered). */
  unverifiable: number;
  /** Managed objects with no attestation, or one that is not Deed's format. */
  unattested: number;
  /** Objects in namespaces outside the review scope: listed, never counted under a key. */
  outsideScope: number;
  /** Lists (or discoveries of a group version's kinds) that failed: the counts are then incomplete. */
  errors: Array<{ kind: string; namespace: string; message: string }>;
  /** Verify-only keys no object carries: safe to retire (only when there were no errors). */
  retirable: string[];
  /** False with --without-keys: counts by the key an attestation names, unverified. */
  verified: boolean;
  objects: ObjectUsage[];
}

export const V1_UNATTRIBUTED = '(v1)';

/** One listed object: its kind (the attestation covers it) and, outside the core group, its group. */
export interface ListedObject {
  kind: string;
  group?: string;
  obj: KubeObject;
}

/**
 * Tallies listed objects. Without a ring (`--without-keys`), by the key id each names.
 * `inScope` says whether Deed reviews every write in a namespace; objects elsewhere are
 * listed as outside the review scope and not counted.
 */
export function tally(objects: Iterable<ListedObject>, keys: StampKeys, ring: KeyRing | undefined, ringIds: string[], signingKey: string | undefined, inScope: (namespace: string) => boolean): KeyUsage {
  const t = new Tally(keys, ring, ringIds, signingKey, inScope, true);
  for (const o of objects) t.add(o);
  return t.usage();
}

/**
 * The tally fed a page at a time, so a listing holds one page, not every object: it keeps
 * the counts, each object's uid (an object served under two groups, as Events are, counts
 * once) and, only when asked (`--show-objects`), each object's line.
 */
export class Tally {
  private readonly counts = new Map<string, KeyCount>();
  private readonly seen = new Set<string>();
  private readonly result: KeyUsage;

  constructor(
    private readonly keys: StampKeys,
    private readonly ring: KeyRing | undefined,
    private readonly ringIds: string[],
    signingKey: string | undefined,
    private readonly inScope: (namespace: string) => boolean,
    private readonly keepObjects: boolean,
  ) {
    for (const id of ringIds) this.counts.set(id, { key: id, role: id === signingKey ? 'signing' : 'verify-only', objects: 0, v1: 0 });
    this.result = { keys: [], unverifiable: 0, unattested: 0, outsideScope: 0, errors: [], retirable: [], verified: ring !== undefined, objects: [] };
  }

  private count(id: string, v1: boolean): void {
    let c = this.counts.get(id);
    if (c === undefined) this.counts.set(id, (c = { key: id, role: 'not-in-ring', objects: 0, v1: 0 }));
    c.objects++;
    if (v1) c.v1++;
  }

  private push(o: ObjectUsage): void {
    if (this.keepObjects) this.result.objects.push(o);
  }

  add({ kind, group, obj }: ListedObject): void {
    const { keys, ring, ringIds, result: usage } = this;
    const m = obj.metadata;
    if (m.uid) {
      if (this.seen.has(m.uid)) return;
      this.seen.add(m.uid);
    }
    const attestation = entryOf(m.annotations ?? {}, keys.attestation);
    const parsed = attestation === undefined ? undefined : parseAttestation(attestation);
    const base = { kind, ...(group ? { group } : {}), namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '' };
    if (!this.inScope(base.namespace)) {
      usage.outsideScope++;
      this.push({
        ...base,
        ...(parsed?.format === 'v2' ? { key: parsed.keyId } : {}),
        format: parsed?.format ?? 'none',
        status: 'outside-scope',
        reason: `namespace ${base.namespace} is outside the review scope: Deed does not review writes there, so anyone can write stamps`,
      });
      return;
    }
    if (parsed === undefined) {
      usage.unattested++;
      this.push({ ...base, format: 'none', status: 'unattested', reason: attestation === undefined ? 'no attestation' : 'not a Deed attestation' });
      return;
    }
    if (ring === undefined) {
      // Unverified: v1 names no key, so it is counted under "(v1)" (never a key id).
      const key = parsed.format === 'v2' ? parsed.keyId : V1_UNATTRIBUTED;
      this.count(key, parsed.format === 'v1');
      this.push({ ...base, key, format: parsed.format, status: 'named' });
      return;
    }
    const v = verifyObject(ring, obj, keys, kind, base.namespace);
    if (v.ok) {
      this.count(v.keyId, v.format === 'v1');
      this.push({ ...base, key: v.keyId, format: v.format, status: 'verified' });
    } else {
      usage.unverifiable++;
      // A v2 attestation naming a key outside the ring: listed under that id, so a retired key shows what still carries it.
      if (v.keyId !== undefined && !ringIds.includes(v.keyId)) this.count(v.keyId, false);
      this.push({ ...base, ...(v.keyId !== undefined ? { key: v.keyId } : {}), format: parsed.format, status: 'unverifiable', reason: v.reason });
    }
  }

  usage(): KeyUsage {
    const rows = [...this.counts.values()];
    this.result.keys = [...rows.filter((k) => k.role !== 'not-in-ring'), ...rows.filter((k) => k.role === 'not-in-ring').sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))];
    return this.result;
  }
}

/** How a kind is named in the output: `Pod` in the core group, `Lease.coordination.k8s.io` elsewhere (kubectl's form). */
export function kindName(o: { kind: string; group?: string | undefined }): string {
  return o.group ? `${o.kind}.${o.group}` : o.kind;
}

/**
 * Lists every managed object of every namespaced kind the API server serves (metadata only,
 * page by page) and tallies their keys. A kind that cannot be listed, or a group version whose
 * kinds cannot be discovered, is an error: the counts are incomplete and no key is retirable.
 */
export async function keyUsage(o: {
  client: KubeClient & ServedKindLister;
  keys: StampKeys;
  ring: KeyRing | undefined;
  ringIds: string[];
  signingKey: string | undefined;
  namespaces: string[];
  /** Deed's own namespace, which the webhooks never select. */
  deedNamespace: string;
  /** Keep each object's line (`--show-objects`); otherwise only the counts are held. Default true. */
  keepObjects?: boolean;
}): Promise<KeyUsage> {
  const errors: KeyUsage['errors'] = [];
  const message = (err: unknown) => (err instanceof KubeError ? err.message : (err as Error).message);
  // The scope first: when it cannot be read, no object counts (fail closed) and the counts are incomplete.
  let inScope = new Set<string>();
  try {
    inScope = await readReviewScope(o.client, o.deedNamespace);
  } catch (err) {
    errors.push({ kind: 'Namespace', namespace: 'the cluster', message: message(err) });
  }
  const t = new Tally(o.keys, o.ring, o.ringIds, o.signingKey, (ns) => inScope.has(ns), o.keepObjects ?? true);
  // Every kind Deed may have stamped: whatever is served and listable, not a list kept here.
  let resources: ServedResource[] = [];
  try {
    const served = await o.client.listableResources();
    resources = served.resources;
    for (const e of served.errors) errors.push({ kind: `the kinds of ${e.groupVersion}`, namespace: 'the cluster', message: e.message });
  } catch (err) {
    errors.push({ kind: 'the served kinds (discovery)', namespace: 'the cluster', message: message(err) });
  }
  // All environments: a key is retirable only when no environment's object carries it.
  const selector = `${o.keys.managed}=true`;
  for (const namespace of o.namespaces.length > 0 ? o.namespaces : [undefined]) {
    for (const resource of resources) {
      const group = resource.group || undefined;
      try {
        for await (const page of o.client.listMetadataPages(resource, namespace, selector)) for (const obj of page) t.add({ kind: resource.kind, ...(group ? { group } : {}), obj });
      } catch (err) {
        errors.push({ kind: kindName({ kind: resource.kind, group }), namespace: namespace ?? '*', message: message(err) });
      }
    }
  }
  const usage = t.usage();
  usage.errors = errors;
  // Without keys, v1 objects cannot be attributed: while there are any, no key is provably unused.
  const unattributed = usage.keys.some((k) => k.key === V1_UNATTRIBUTED);
  usage.retirable = errors.length > 0 || unattributed ? [] : usage.keys.filter((k) => k.role === 'verify-only' && k.objects === 0).map((k) => k.key);
  return usage;
}

export function formatUsage(u: KeyUsage, output: 'text' | 'json', showObjects: boolean): string {
  if (output === 'json') {
    const { objects: _objects, ...summary } = u;
    return `${JSON.stringify(showObjects ? u : summary)}\n`;
  }
  const lines: string[] = [];
  const header = ['KEY', 'ROLE', u.verified ? 'OBJECTS' : 'OBJECTS (named, unverified)', 'OF WHICH V1'];
  const rows = u.keys.map((k) => [k.key, k.role, String(k.objects), String(k.v1)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [header, ...rows]) lines.push(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  if (u.verified) lines.push(`unverifiable: ${u.unverifiable} (an attestation no ring key verifies: retired, revoked or tampered)`);
  lines.push(`unattested: ${u.unattested} (managed, without a Deed attestation)`);
  lines.push(`outside the review scope: ${u.outsideScope} (stamped objects in namespaces Deed does not review, where anyone can write stamps: not counted)`);
  for (const e of u.errors) lines.push(`error: could not list ${e.kind} in ${e.namespace}: ${e.message}; the counts are incomplete`);
  if (u.errors.length === 0)
    lines.push(u.retirable.length > 0 ? `retirable: ${u.retirable.join(', ')} (verify-only, carried by no managed object)` : 'retirable: none');
  if (showObjects)
    for (const obj of u.objects)
      lines.push(`${obj.status} ${kindName(obj)} ${obj.namespace}/${obj.name} ${obj.uid} key=${obj.key ?? '-'} format=${obj.format}${obj.reason ? ` (${obj.reason})` : ''}`);
  return `${lines.join('\n')}\n`;
}
