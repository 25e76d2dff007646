// The key offline reviews sign with when no real one is given (`deed review`, `deed test`).
import type { Config } from '../config/schema.js';
import { createKeyRing, singleKeyRing, type KeyRing } from '../policy/stamps/key-ring.js';

/**
 * Signs attestations when no --attestation-key is given. Fixed and public, so an object
 * reviewed twice gets the same attestation; never a cluster's key, so nothing it signs
 * verifies in a cluster.
 */
export const DRY_RUN_KEY = Buffer.from('deed review DRY-RUN attestation key: public, never valid in a cluster');
export const DRY_RUN_KEY_ID = 'dry-run';

/** The dry-run key, signing in the format the policy's keys would (v2 for a ring, v1 for the pre-ring form). */
export function dryRunRing(config: Config): KeyRing {
  return config.attestation.keys !== undefined ? createKeyRing([{ id: DRY_RUN_KEY_ID, key: DRY_RUN_KEY }], DRY_RUN_KEY_ID, 'v2') : singleKeyRing(DRY_RUN_KEY, DRY_RUN_KEY_ID);
}
