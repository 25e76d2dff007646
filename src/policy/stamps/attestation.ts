// `<prefix>/attestation`: an HMAC-SHA256, under a key of Deed's key ring, over the stamps
// that decide ownership. It binds them together so that a copied or edited stamp stops
// verifying; the reaper and the validating webhook trust stamps only through it.
//
// Two formats:
// - `v1:<mac>`: the format before key rings. It names no key; an absent stamp and an
//   empty one canonicalise alike. Still verified (against every key of the ring) so that
//   objects admitted before the upgrade keep verifying under the key that signed them.
// - `v2:<key id>:<mac>`: names the key that signed it, and canonicalises an absent stamp
//   as null, so `owner-uid: ""` no longer verifies like an absent owner-uid.
import { entryOf } from '../unstructured.js';
import { createHmac } from 'node:crypto';
import type { KubeObject } from '../../admission/types.js';
import type { StampKeys } from './keys.js';

export type AttestationFormat = 'v1' | 'v2';

/**
 * A key id: a label value (it becomes a metric label and a Secret entry name), with no
 * `:` (the format's separator) and no leading dot (the kubelet's own files in a Secret
 * volume start with `..`).
 */
export const KEY_ID_PATTERN = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** What the attestation covers. The name and UID are not known at admission (generateName), so they are not in it. */
export interface AttestedStamps {
  kind: string;
  namespace: string;
  environment: string;
  ownerUid?: string | undefined;
  owner?: string | undefined;
  nonce: string;
  expiresAt?: string | undefined;
  /** The run lease the object names (`<prefix>/run-lease`). */
  runLease?: string | undefined;
}

// JSON arrays: unambiguous field boundaries, fixed order. Fields added later (the run lease)
// are appended only when present, so every attestation signed before them still verifies,
// and an array one longer can never canonicalise like one without it.
function canonicalV1(s: AttestedStamps): string {
  return JSON.stringify(['v1', s.kind, s.namespace, s.environment, s.ownerUid ?? '', s.owner ?? '', s.nonce, s.expiresAt ?? '', ...later(s)]);
}

function canonicalV2(keyId: string, s: AttestedStamps): string {
  return JSON.stringify(['v2', keyId, s.kind, s.namespace, s.environment, s.ownerUid ?? null, s.owner ?? null, s.nonce, s.expiresAt ?? null, ...later(s)]);
}

function later(s: AttestedStamps): string[] {
  return s.runLease === undefined ? [] : [s.runLease];
}

/** `v1:<mac>`: only the pre-ring configuration (`attestation.keyFile`) still signs it. */
export function signV1(key: Buffer, stamps: AttestedStamps): string {
  return `v1:${mac(key, canonicalV1(stamps))}`;
}

/** `v2:<keyId>:<mac>`. */
export function signV2(key: Buffer, keyId: string, stamps: AttestedStamps): string {
  return `v2:${keyId}:${mac(key, canonicalV2(keyId, stamps))}`;
}

// The last MAC computed, by key and text: the one-call CREATE signs the stamps and then its
// validating judgement verifies the same stamps under the same key, which is the same HMAC.
let last: { key: Buffer; text: string; mac: string } | undefined;

function mac(key: Buffer, text: string): string {
  if (last !== undefined && last.key === key && last.text === text) return last.mac;
  const computed = createHmac('sha256', key).update(text).digest('base64url');
  last = { key, text, mac: computed };
  return computed;
}

export type ParsedAttestation = { format: 'v1' } | { format: 'v2'; keyId: string };

// A base64url HMAC-SHA256 is 43 characters.
const V1 = /^v1:[A-Za-z0-9_-]{43}$/;
const V2 = /^v2:([^:]*):[A-Za-z0-9_-]{43}$/;

/** The format and named key of an attestation; undefined when it is neither format (or names no valid key id). */
export function parseAttestation(value: string): ParsedAttestation | undefined {
  if (V1.test(value)) return { format: 'v1' };
  const m = V2.exec(value);
  return m !== null && KEY_ID_PATTERN.test(m[1]!) ? { format: 'v2', keyId: m[1]! } : undefined;
}

/** Reads the attested stamps as they stand on an object (undefined when a required one is missing). */
export function readStamps(obj: KubeObject, keys: StampKeys, kind: string, namespace: string): AttestedStamps | undefined {
  const labels = obj.metadata.labels ?? {};
  const annotations = obj.metadata.annotations ?? {};
  const environment = entryOf(labels, keys.environment);
  const nonce = entryOf(annotations, keys.createNonce);
  if (environment === undefined || nonce === undefined) return undefined;
  return {
    kind,
    namespace,
    environment,
    ownerUid: entryOf(labels, keys.ownerUid),
    owner: entryOf(annotations, keys.owner),
    nonce,
    expiresAt: entryOf(annotations, keys.expiresAt),
    runLease: entryOf(annotations, keys.runLease),
  };
}

