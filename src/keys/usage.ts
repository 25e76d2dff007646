// `deed keys usage`: which attestation keys the managed objects in the cluster still
// carry, so the operator knows when a key can leave the ring (docs/operations.md, "Rotating the
// attestation key"). The tally is pure; the listing is the reaper's metadata-only list.
// Only objects in the review scope count: outside it anyone can write stamps (and get a
// signed patch for them from the webhook port), so a stamp there proves nothing, and
// counting it would let a tenant keep a retired key "in use" for ever.
import { entryOf } from '../policy/unstructured.js';
import type { KubeObject } from '../admission/types.js';
import { KubeError } from '../kube/errors.js';
import { REAP_KINDS, type KubeClient, type ReapKind } from '../kube/client.js';
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
  kind: ReapKind;
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
  /** Lists that failed: the counts are then incomplete. */
  errors: Array<{ kind: ReapKind | 'Namespace'; namespace: string; message: string }>;
  /** Verify-only keys no object carries: safe to retire (only when there were no errors). */
  retirable: string[];
  /** False with --without-keys: counts by the key an attestation names, unverified. */
  verified: boolean;
  objects: ObjectUsage[];
}

export const V1_UNATTRIBUTED = '(v1)';

/**
 * Tallies listed objects. Without a ring (`--without-keys`), by the key id each names.
 * `inScope` says whether Deed reviews every write in a namespace; objects elsewhere are
 * listed as outside the review scope and not counted.
 */
export function tally(
  objects: Array<{ kind: ReapKind; obj: KubeObject }>,
  keys: StampKeys,
  ring: KeyRing | undefined,
  ringIds: string[],
  signingKey: string | undefined,
  inScope: (namespace: string) => boolean,
): KeyUsage {
  const counts = new Map<string, KeyCount>();
  for (const id of ringIds) counts.set(id, { key: id, role: id === signingKey ? 'signing' : 'verify-only', objects: 0, v1: 0 });
  const count = (id: string, v1: boolean) => {
    let c = counts.get(id);
    if (c === undefined) counts.set(id, (c = { key: id, role: 'not-in-ring', objects: 0, v1: 0 }));
    c.objects++;
    if (v1) c.v1++;
  };
  const usage: KeyUsage = { keys: [], unverifiable: 0, unattested: 0, outsideScope: 0, errors: [], retirable: [], verified: ring !== undefined, objects: [] };
  for (const { kind, obj } of objects) {
    const m = obj.metadata;
    const attestation = entryOf(m.annotations ?? {}, keys.attestation);
    const parsed = attestation === undefined ? undefined : parseAttestation(attestation);
    const base = { kind, namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '' };
    if (!inScope(base.namespace)) {
      usage.outsideScope++;
      usage.objects.push({
        ...base,
        ...(parsed?.format === 'v2' ? { key: parsed.keyId } : {}),
        format: parsed?.format ?? 'none',
        status: 'outside-scope',
        reason: `namespace ${base.namespace} is outside the review scope: Deed does not review writes there, so anyone can write stamps`,
      });
      continue;
    }
    if (parsed === undefined) {
      usage.unattested++;
      usage.objects.push({ ...base, format: 'none', status: 'unattested', reason: attestation === undefined ? 'no attestation' : 'not a Deed attestation' });
      continue;
    }
    if (ring === undefined) {
      // Unverified: v1 names no key, so it is counted under "(v1)" (never a key id).
      const key = parsed.format === 'v2' ? parsed.keyId : V1_UNATTRIBUTED;
      count(key, parsed.format === 'v1');
      usage.objects.push({ ...base, key, format: parsed.format, status: 'named' });
      continue;
    }
    const v = verifyObject(ring, obj, keys, kind, base.namespace);
    if (v.ok) {
      count(v.keyId, v.format === 'v1');
      usage.objects.push({ ...base, key: v.keyId, format: v.format, status: 'verified' });
    } else {
      usage.unverifiable++;
      // A v2 attestation naming a key outside the ring: listed under that id, so a retired key shows what still carries it.
      if (v.keyId !== undefined && !ringIds.includes(v.keyId)) count(v.keyId, false);
      usage.objects.push({ ...base, ...(v.keyId !== undefined ? { key: v.keyId } : {}), format: parsed.format, status: 'unverifiable', reason: v.reason });
    }
  }
  const rows = [...counts.values()];
  usage.keys = [...rows.filter((k) => k.role !== 'not-in-ring'), ...rows.filter((k) => k.role === 'not-in-ring').sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))];
  return usage;
}

/** Lists every managed object (metadata only) and tallies their keys. */
export async function keyUsage(o: {
  client: KubeClient;
  keys: StampKeys;
  ring: KeyRing | undefined;
  ringIds: string[];
  signingKey: string | undefined;
  namespaces: string[];
  /** Deed's own namespace, which the webhooks never select. */
  deedNamespace: string;
}): Promise<KeyUsage> {
  const listed: Array<{ kind: ReapKind; obj: KubeObject }> = [];
  const errors: KeyUsage['errors'] = [];
  // The scope first: when it cannot be read, no object counts (fail closed) and the counts are incomplete.
  let inScope = new Set<string>();
  try {
    inScope = await readReviewScope(o.client, o.deedNamespace);
  } catch (err) {
    errors.push({ kind: 'Namespace', namespace: 'the cluster', message: err instanceof KubeError ? err.message : (err as Error).message });
  }
  // All environments: a key is retirable only when no environment's object carries it.
  const selector = `${o.keys.managed}=true`;
  for (const namespace of o.namespaces.length > 0 ? o.namespaces : [undefined]) {
    for (const kind of REAP_KINDS) {
      try {
        for (const obj of await o.client.list(kind, namespace, selector)) listed.push({ kind, obj });
      } catch (err) {
        errors.push({ kind, namespace: namespace ?? '*', message: err instanceof KubeError ? err.message : (err as Error).message });
      }
    }
  }
  const usage = tally(listed, o.keys, o.ring, o.ringIds, o.signingKey, (ns) => inScope.has(ns));
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
      lines.push(`${obj.status} ${obj.kind} ${obj.namespace}/${obj.name} ${obj.uid} key=${obj.key ?? '-'} format=${obj.format}${obj.reason ? ` (${obj.reason})` : ''}`);
  return `${lines.join('\n')}\n`;
}
