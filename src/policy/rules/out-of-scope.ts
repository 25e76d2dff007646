// A review for a namespace outside the review scope comes from no API server: the
// webhooks' namespaceSelector keeps every such write away from Deed. Whoever sent it
// could reach the webhook port, and answering would sign stamps (a patch whose
// attestation verifies under the cluster key) or read objects for them. So it is refused
// first, by both webhooks, before any stamp is computed or any object looked up.
import type { AdmissionRequest } from '../../admission/types.js';
import { denied, type Verdict } from '../../admission/verdict.js';
import type { ReviewScope } from '../review-scope.js';
import { RULES } from './catalog.js';

/** The refusal for a review outside the scope, or undefined for one inside it (or naming no namespace: judged as malformed later). */
export function outOfScope(req: AdmissionRequest, scope: ReviewScope): Verdict | undefined {
  const namespace = req.namespace;
  if (namespace === undefined) return undefined;
  const answer = scope.of(namespace);
  if (answer.state === 'in') return undefined;
  const message =
    answer.state === 'out'
      ? `namespace ${namespace} is outside the review scope (${answer.why}); the API server sends no reviews for it, so Deed answers none`
      : `Deed does not know yet whether namespace ${namespace} is in its review scope (${answer.reason}); refusing until it does`;
  return denied([{ rule: RULES.requestOutOfScope.id, message }]);
}
