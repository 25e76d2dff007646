// The production decision context: the real clock and a cryptographic RNG.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/schema.js';
import type { KeyRing } from './key-ring.js';
import { compilePolicy, type DecisionContext } from './policy.js';

export function productionContext(config: Config, keyRing: KeyRing): DecisionContext {
  return { policy: compilePolicy(config), keyRing, now: Date.now, randomBytes };
}
