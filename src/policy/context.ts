// The production decision context: the real clock and a cryptographic RNG.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/schema.js';
import { compilePolicy, type DecisionContext } from './policy.js';

export function productionContext(config: Config, attestationKey: Buffer): DecisionContext {
  return { policy: compilePolicy(config), attestationKey, now: Date.now, randomBytes };
}
