// The production decision context: the real clock, a cryptographic RNG and a lookup.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/schema.js';
import { noLookup } from './lookup.js';
import { compilePolicy, type DecisionContext, type ObjectLookup } from './policy.js';

/** `lookup` answers what the decision needs to know of other objects; without one, every such rule fails closed. */
export function productionContext(config: Config, attestationKey: Buffer, lookup: ObjectLookup = noLookup): DecisionContext {
  return { policy: compilePolicy(config), attestationKey, now: Date.now, randomBytes, lookup };
}
