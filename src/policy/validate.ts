// The validating webhook (docs/concepts.md, "The validating webhook"). It sees the final object:
// checks stamps at CREATE, freezes them on UPDATE, guards every door that can change or
// remove an environment's object (main resource, subresources, evictions, bindings), and
// checks sandbox pod templates, workspace mounts, the environment of the claims, Secrets
// and ConfigMaps a pod names, and what a pod selector selects (selector-scope.ts). The controller doors too: workload
// templates (workload/review.ts), token Secrets and TokenRequests, snapshots. What each door
// judges is its review's (door-reviews.ts, one file per door under doors/). Object in,
// verdict out; no I/O: what it knows of other objects comes from ctx.lookup.
import type { AdmissionRequest } from '../admission/types.js';
import { allowed, denied, type Verdict } from '../admission/verdict.js';
import { forReview } from './ownership.js';
import type { DecisionContext } from './policy.js';
import { RULES } from './rules/catalog.js';
import { outOfScope } from './rules/out-of-scope.js';
import type { ReviewFacts } from './review-facts.js';
import { doorReview, reviewFacts } from './door-reviews.js';

/** `facts`: the review's facts, when the caller has them (review-facts.ts). */
export function validate(req: AdmissionRequest, ctx: DecisionContext, facts?: ReviewFacts): Verdict {
  const outside = outOfScope(req, ctx.scope);
  if (outside) return outside;
  return judgeReview(facts ?? reviewFacts(req, ctx.policy), forReview(ctx));
}

/**
 * The validating webhook's verdict on a review inside the review scope: a door Deed does not
 * review lets it through; any other refuses a review that names no namespace, and judges a
 * workload controller's write as the door's judgement of what controllers make
 * (doors/controller-write.ts; a door without one lets it through), a body of another kind
 * than the door carries as malformed, anything else by its own judgement.
 */
export function judgeReview(facts: ReviewFacts, ctx: DecisionContext): Verdict {
  const { request: req } = facts;
  const review = doorReview(facts.door);
  if (review.judge === undefined) return allowed();
  const namespace = req.namespace;
  if (namespace === undefined) return denied([{ rule: RULES.requestMalformed.id, message: `a ${req.resource.resource} review must name a namespace` }]);
  if (facts.controller) return review.controllerWrite?.judge(facts, namespace, ctx) ?? allowed();
  // A door that carries one kind (its review's `carries`) refuses a body of another.
  if (facts.kindMismatch) return denied([facts.kindMismatch]);
  return review.judge(facts, namespace, ctx);
}
