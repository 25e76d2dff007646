// Loads the attestation key ring from the files the policy names, or for local runs
// generates one key beside the certificates.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ringKeyFile, type Config } from '../config/schema.js';
import { cannotRead } from '../errors/file-errors.js';
import { createKeyRing, singleKeyRing, type KeyRing } from '../policy/stamps/key-ring.js';

export const MIN_KEY_BYTES = 32;

export function readAttestationKey(file: string): Buffer {
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch (err) {
    throw new Error(cannotRead('the attestation key', file, err));
  }
  return attestationKeyOf(raw, file);
}

/**
 * Key material from its bytes (a file's, or a Secret entry's): a trailing newline is dropped,
 * and fewer than MIN_KEY_BYTES are refused. `where` names it in the error; never the bytes.
 */
export function attestationKeyOf(raw: Buffer, where: string): Buffer {
  // A trailing newline from `echo` or a Secret literal is not key material.
  const key = Buffer.from(raw.toString('latin1').replace(/\r?\n$/, ''), 'latin1');
  if (key.length < MIN_KEY_BYTES) throw new Error(`the attestation key ${where} holds ${key.length} bytes; at least ${MIN_KEY_BYTES} are required`);
  return key;
}

export function ensureAttestationKey(file: string): Buffer {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return readAttestationKey(file);
}

/**
 * The key ring the policy names: `attestation.keys` (signs v2 with `signingKey`), or the
 * pre-ring `attestation.keyFile` (one key, id `key`, signs v1). With neither, `generateIn`
 * (deed serve's certificate directory) gets a generated key; without it, there is no ring.
 */
export function loadKeyRing(config: Config, generateIn?: string): KeyRing {
  const { keyFile, keys, signingKey } = config.attestation;
  if (keys !== undefined) {
    const ring = keys.map((k) => ({ id: k.id, key: readAttestationKey(ringKeyFile(k)) }));
    return createKeyRing(ring, signingKey ?? keys[0]!.id, 'v2');
  }
  if (keyFile !== undefined) return singleKeyRing(readAttestationKey(keyFile));
  if (generateIn !== undefined) return singleKeyRing(ensureAttestationKey(join(generateIn, 'attestation.key')));
  throw new Error('the policy names no attestation key: set attestation.keys (or attestation.keyFile)');
}
