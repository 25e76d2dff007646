// Deed's attestation key ring: several keys, each with an id; exactly one signs, all
// verify. Rotation is adding a key (verify only), making it the signing key, then
// retiring the old one once no object carries it (docs/operations.md, "Rotating the attestation key").
// Pure: the key material comes in as bytes; the server hands in an observer that counts
// verifications by key id (a metric), which is the only side effect, and an optional one.
import { entryOf } from '../unstructured.js';
import { timingSafeEqual } from 'node:crypto';
import type { KubeObject } from '../../admission/types.js';
import { KEY_ID_PATTERN, parseAttestation, readStamps, signV1, signV2, type AttestationFormat, type AttestedStamps } from './attestation.js';
import type { StampKeys } from './keys.js';

/** The id of the single key of the pre-ring configuration (`attestation.keyFile`), as its Secret entry is named. */
export const LEGACY_KEY_ID = 'key';

export interface KeyRing {
  /** Key id to key material, in the policy's order. */
  readonly keys: ReadonlyMap<string, Buffer>;
  readonly signingKeyId: string;
  /**
   * What `signStamps` writes: `v2` for a ring (`attestation.keys`); `v1` for the pre-ring
   * `attestation.keyFile`, so that upgrading Deed with an unchanged policy writes nothing
   * an older replica, still serving during the rollout, cannot verify.
   */
  readonly signingFormat: AttestationFormat;
  /** Called with every verification's outcome (the server counts them by key id). */
  readonly observe?: ((v: Verification) => void) | undefined;
}

export type Verification =
  | { ok: true; format: AttestationFormat; keyId: string }
  | {
      ok: false;
      /** `none`: absent, malformed, or stamps missing; nothing could be tried. */
      format: AttestationFormat | 'none';
      /** A v2 attestation's named key, when it is well formed (possibly not in the ring). */
      keyId?: string;
      inRing?: boolean;
      reason: string;
    };

export interface RingKey {
  id: string;
  key: Buffer;
}

export function createKeyRing(keys: RingKey[], signingKeyId: string, signingFormat: AttestationFormat, observe?: (v: Verification) => void): KeyRing {
  const map = new Map<string, Buffer>();
  for (const { id, key } of keys) {
    if (!KEY_ID_PATTERN.test(id)) throw new Error(`attestation key id ${JSON.stringify(id)} is not a valid key id`);
    if (map.has(id)) throw new Error(`attestation key id "${id}" appears twice`);
    for (const [other, material] of map)
      // The same material under two ids would let a "retired" id keep verifying through the other.
      if (material.equals(key)) throw new Error(`attestation keys "${other}" and "${id}" hold the same material; every key must be its own`);
    map.set(id, key);
  }
  if (!map.has(signingKeyId)) throw new Error(`the signing key "${signingKeyId}" is not in the key ring (${[...map.keys()].join(', ')})`);
  return { keys: map, signingKeyId, signingFormat, ...(observe ? { observe } : {}) };
}

/** A one-key ring in the pre-ring form: signs `v1`, as `attestation.keyFile` always did. */
export function singleKeyRing(key: Buffer, id = LEGACY_KEY_ID): KeyRing {
  return createKeyRing([{ id, key }], id, 'v1');
}

export function withObserver(ring: KeyRing, observe: (v: Verification) => void): KeyRing {
  return { ...ring, observe };
}

export function signStamps(ring: KeyRing, stamps: AttestedStamps): string {
  const key = ring.keys.get(ring.signingKeyId)!;
  return ring.signingFormat === 'v1' ? signV1(key, stamps) : signV2(key, ring.signingKeyId, stamps);
}

/** Whether `attestation` is a valid signature over `stamps` under a key of the ring, and which key. */
export function verifyStamps(ring: KeyRing, stamps: AttestedStamps, attestation: string | undefined): Verification {
  const v = verify(ring, stamps, attestation);
  ring.observe?.(v);
  return v;
}

/** Verifies the stamps an object carries under the ring (stamps that are missing never verify). */
export function verifyObject(ring: KeyRing, obj: KubeObject, keys: StampKeys, kind: string, namespace: string): Verification {
  const stamps = readStamps(obj, keys, kind, namespace);
  if (stamps === undefined) {
    const v: Verification = { ok: false, format: 'none', reason: `covers incomplete stamps (no ${keys.environment} or ${keys.createNonce})` };
    ring.observe?.(v);
    return v;
  }
  return verifyStamps(ring, stamps, entryOf(obj.metadata.annotations ?? {}, keys.attestation));
}

function verify(ring: KeyRing, stamps: AttestedStamps, attestation: string | undefined): Verification {
  if (attestation === undefined) return { ok: false, format: 'none', reason: 'is absent' };
  const parsed = parseAttestation(attestation);
  if (parsed === undefined) return { ok: false, format: 'none', reason: 'is not a Deed attestation (v1:MAC or v2:KEY-ID:MAC)' };
  if (parsed.format === 'v1') {
    // v1 names no key: it verifies under whichever key of the ring signed it, if any is still there.
    for (const [keyId, key] of ring.keys) if (same(signV1(key, stamps), attestation)) return { ok: true, format: 'v1', keyId };
    return { ok: false, format: 'v1', reason: 'does not verify over the stamps under any key of the ring (v1): tampered with, or signed by a key no longer in the ring' };
  }
  const { keyId } = parsed;
  const key = ring.keys.get(keyId);
  if (key === undefined)
    return { ok: false, format: 'v2', keyId, inRing: false, reason: `names key "${keyId}", which is not in the key ring (retired or revoked, or never Deed's)` };
  if (!same(signV2(key, keyId, stamps), attestation))
    return { ok: false, format: 'v2', keyId, inRing: true, reason: `does not verify over the stamps under key "${keyId}": tampered with` };
  return { ok: true, format: 'v2', keyId };
}

function same(expected: string, given: string): boolean {
  const [a, b] = [Buffer.from(expected), Buffer.from(given)];
  return a.length === b.length && timingSafeEqual(a, b);
}
