// Cryptographic random bytes drawn from a pool filled by the system's CSPRNG a few KiB at a
// time: every stamped create mints a 32-byte nonce, and one randomFillSync call per nonce
// was 3% of the webhook's busy time in the chain benchmark (bench/MEASUREMENTS.md). The bytes
// are the same CSPRNG's; each is handed out once, then overwritten by the next fill.
import { randomFillSync } from 'node:crypto';

export function randomPool(size = 4096): (n: number) => Buffer {
  const pool = Buffer.alloc(size);
  let used = size;
  return (n) => {
    if (n > size) return randomFillSync(Buffer.alloc(n));
    if (used + n > size) {
      randomFillSync(pool);
      used = 0;
    }
    const out = Buffer.from(pool.subarray(used, used + n));
    pool.fill(0, used, used + n); // not kept once handed out
    used += n;
    return out;
  };
}
