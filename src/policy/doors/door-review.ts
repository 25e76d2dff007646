// One door's review (issue 37): what a request through the door reads besides itself, what
// the mutating webhook stamps, what the validating webhook judges, and whether `/admit` judges
// its CREATE whole. One file per door beside this one; the table of them is
// ../door-reviews.ts, where the webhooks (mutate.ts, validate.ts, create-judgement.ts) and the
// read plan (lookup.ts) look a door up, so `/admit`, `/mutate`, `/validate`, `deed review`,
// `deed test` and `deed audit` run the same door reviews.
import type { Verdict } from '../../admission/verdict.js';
import type { DecisionContext } from '../policy.js';
import type { LookupKey, ReadInput } from '../reads.js';
import type { ReviewFacts } from '../review-facts.js';
import type { Door } from './door.js';

/** A review's facts, its door known to be `D`. */
export type DoorFacts<D extends Door> = ReviewFacts & { door: D };

export interface DoorReview<D extends Door> {
  /** The objects a review through the door reads besides the request (the read plan, lookup.ts). */
  needs(read: ReadInput<D>): LookupKey[];
  /** The mutating webhook's verdict on a review inside the review scope. */
  stamp(facts: DoorFacts<D>, ctx: DecisionContext): Verdict;
  /**
   * The validating webhook's verdict on a review inside the review scope that names a
   * namespace. Absent for the door Deed does not review: every request through it is let
   * through, with a namespace or none.
   */
  judge?(facts: DoorFacts<D>, namespace: string, ctx: DecisionContext): Verdict;
  /**
   * A workload controller's write through the door (controller-made.ts), in place of `stamp`
   * and `judge`; a door without it lets a controller's writes through.
   */
  controllerWrite?: {
    stamp(facts: DoorFacts<D>, ctx: DecisionContext): Verdict;
    judge(facts: DoorFacts<D>, namespace: string, ctx: DecisionContext): Verdict;
  };
  /** Whether `/admit` judges a CREATE of the door's own resource whole (create-judgement.ts). */
  judgesCreateWhole: boolean;
  /** For a door that carries an object of one kind: that kind (a body of another is refused, create-gate.ts kindMismatch). */
  carries?(door: D): string;
}
