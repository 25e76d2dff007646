// The production decision context: the real clock, a cryptographic RNG and a lookup. It
// lives beside decide() and outside src/policy, whose code takes them as values and does no I/O.
import type { Config } from '../config/schema.js';
import type { KeyRing } from '../policy/stamps/key-ring.js';
import { noLookup } from '../policy/lookup.js';
import { compilePolicy, type DecisionContext } from '../policy/policy.js';
import { EVERY_NAMESPACE, type ReviewScope } from '../policy/review-scope.js';
import { randomPool } from './random-pool.js';

/**
 * The server replaces `lookup` per review with what it read from the API server. `scope`
 * is every namespace only where no cluster says which are opted in (a local run, `deed review`).
 */
export function productionContext(config: Config, keyRing: KeyRing, scope: ReviewScope = EVERY_NAMESPACE): DecisionContext {
  return { policy: compilePolicy(config), keyRing, now: Date.now, randomBytes: randomPool(), lookup: noLookup('Deed has no access to the API server (deed serve --kubeconfig, or in-cluster credentials)'), scope };
}
