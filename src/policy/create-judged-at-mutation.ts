// Which CREATEs the mutating webhook judges whole (create-judgement.ts), apart from it so the
// read plan (lookup.ts) and the install's rules can ask without importing the rules.
import type { AdmissionRequest } from '../admission/types.js';
import { doorOf, type Door } from './doors/door.js';

/**
 * A CREATE of a stamped kind's, a workload's or a default-row kind's own resource; not a
 * subresource: evictions, bindings and token requests stay the validating webhook's. The
 * install leaves exactly these out of the validating webhooks' rules (src/install/kind-rules.ts).
 */
export function isCreateJudgedAtMutation(req: AdmissionRequest): boolean {
  return judgedAtMutation(req, doorOf(req));
}

/** The same, for a request whose door is known (review-facts.ts). */
export function judgedAtMutation(req: AdmissionRequest, door: Door): boolean {
  return req.operation === 'CREATE' && req.subResource === undefined && (door.kind === 'object' || door.kind === 'workload' || door.kind === 'default');
}
