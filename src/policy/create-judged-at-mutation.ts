// Which CREATEs the mutating webhook judges whole (create-judgement.ts), apart from it so the
// read plan (lookup.ts) and the install's rules can ask without importing the rules.
import type { AdmissionRequest } from '../admission/types.js';
import { doorOf } from './doors.js';

/**
 * A CREATE of a stamped kind's, a workload's or a default-row kind's own resource; not a
 * subresource: evictions, bindings and token requests stay the validating webhook's. The
 * install leaves exactly these out of the validating webhooks' rules (src/install/kind-rules.ts).
 */
export function isCreateJudgedAtMutation(req: AdmissionRequest): boolean {
  if (req.operation !== 'CREATE' || req.subResource !== undefined) return false;
  const door = doorOf(req).kind;
  return door === 'object' || door === 'workload' || door === 'default';
}
