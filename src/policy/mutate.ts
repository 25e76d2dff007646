// The mutating webhook: stamps ownership onto sandbox objects at CREATE (docs/concepts.md,
// "The mutating webhook"), and into a sandbox pod's ephemeral claim templates (so the claims the
// ephemeral-volume controller makes are its environment's), and turns service-account token
// automount off on sandbox pods that leave it unset, taking out the token the API server
// already mounted (stamp-create.ts). What each door stamps is its review's (door-reviews.ts).
// Object in, patch and verdict out; no I/O.
import type { AdmissionRequest } from '../admission/types.js';
import { allowed, type Verdict } from '../admission/verdict.js';
import type { DecisionContext } from './policy.js';
import { outOfScope } from './rules/out-of-scope.js';
import type { ReviewFacts } from './review-facts.js';
import { doorReview, reviewFacts } from './door-reviews.js';
import { forReview } from './ownership.js';

/** `facts`: the review's facts, when the caller has them (review-facts.ts). */
export function mutate(req: AdmissionRequest, ctx: DecisionContext, facts?: ReviewFacts): Verdict {
  const outside = outOfScope(req, ctx.scope);
  if (outside) return outside;
  return stampReview(facts ?? reviewFacts(req, ctx.policy), forReview(ctx));
}

/**
 * The mutating webhook's verdict on a review inside the review scope: its door's stamping, or
 * for a workload controller's write, the door's stamping of what controllers make
 * (doors/controller-write.ts; a door without one stamps nothing of a controller's).
 */
export function stampReview(facts: ReviewFacts, ctx: DecisionContext): Verdict {
  const review = doorReview(facts.door);
  if (facts.controller) return review.controllerWrite?.stamp(facts, ctx) ?? allowed();
  return review.stamp(facts, ctx);
}
