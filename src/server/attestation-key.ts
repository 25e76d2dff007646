// Loads the attestation key, or for local runs generates one beside the certificates.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const MIN_KEY_BYTES = 32;

export function readAttestationKey(file: string): Buffer {
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read the attestation key ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // A trailing newline from `echo` or a Secret literal is not key material.
  const key = Buffer.from(raw.toString('latin1').replace(/\r?\n$/, ''), 'latin1');
  if (key.length < MIN_KEY_BYTES) throw new Error(`the attestation key ${file} holds ${key.length} bytes; at least ${MIN_KEY_BYTES} are required`);
  return key;
}

export function ensureAttestationKey(file: string): Buffer {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return readAttestationKey(file);
}
