// `<prefix>/attestation`: an HMAC-SHA256, under Deed's key, over the stamps that decide
// ownership. It binds them together so that a copied or edited stamp stops verifying;
// the reaper and the validating webhook trust stamps only through it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KubeObject } from '../admission/types.js';
import type { StampKeys } from './keys.js';

const VERSION = 'v1';

/** What the attestation covers. The name and UID are not known at admission (generateName), so they are not in it. */
export interface AttestedStamps {
  kind: string;
  namespace: string;
  environment: string;
  ownerUid?: string | undefined;
  owner?: string | undefined;
  nonce: string;
  expiresAt?: string | undefined;
}

function canonical(s: AttestedStamps): string {
  // A JSON array: unambiguous field boundaries, fixed order.
  return JSON.stringify([VERSION, s.kind, s.namespace, s.environment, s.ownerUid ?? '', s.owner ?? '', s.nonce, s.expiresAt ?? '']);
}

export function signStamps(key: Buffer, stamps: AttestedStamps): string {
  return `${VERSION}:${createHmac('sha256', key).update(canonical(stamps)).digest('base64url')}`;
}

export function verifyStamps(key: Buffer, stamps: AttestedStamps, attestation: string | undefined): boolean {
  if (typeof attestation !== 'string' || !attestation.startsWith(`${VERSION}:`)) return false;
  const expected = Buffer.from(signStamps(key, stamps));
  const given = Buffer.from(attestation);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Reads the attested stamps as they stand on an object (undefined when a required one is missing). */
export function readStamps(obj: KubeObject, keys: StampKeys, kind: string, namespace: string): AttestedStamps | undefined {
  const labels = obj.metadata.labels ?? {};
  const annotations = obj.metadata.annotations ?? {};
  const environment = own(labels, keys.environment);
  const nonce = own(annotations, keys.createNonce);
  if (environment === undefined || nonce === undefined) return undefined;
  return {
    kind,
    namespace,
    environment,
    ownerUid: own(labels, keys.ownerUid),
    owner: own(annotations, keys.owner),
    nonce,
    expiresAt: own(annotations, keys.expiresAt),
  };
}

/** True when the object carries an attestation that verifies over its own stamps. */
export function isAttested(obj: KubeObject, keys: StampKeys, kind: string, namespace: string, key: Buffer): boolean {
  const stamps = readStamps(obj, keys, kind, namespace);
  return stamps !== undefined && verifyStamps(key, stamps, own(obj.metadata.annotations ?? {}, keys.attestation));
}

/** Own-property read: a key such as "constructor" must never reach Object.prototype. */
export function own(map: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}
