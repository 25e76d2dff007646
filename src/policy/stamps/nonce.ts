// `<prefix>/create-nonce`: 32 random bytes as 64 lowercase hex characters. Names are
// reused; UID plus this nonce is what identifies one object across its life.

export const NONCE_PATTERN = /^[0-9a-f]{64}$/;

export function isWellFormedNonce(value: string): boolean {
  return NONCE_PATTERN.test(value);
}

export function mintNonce(randomBytes: (size: number) => Buffer): string {
  return randomBytes(32).toString('hex');
}
