// The unreviewed door (doors/door.ts): a path no row of the kind table names. Neither webhook
// reviews it: nothing is read or judged, and it is stamped with nothing but the scope a
// selector was stored with, kept on an UPDATE.
import { allowed } from '../../admission/verdict.js';
import { keptScope } from '../selector-scope.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

export const UNREVIEWED_DOOR: DoorReview<Extract<Door, { kind: 'unreviewed' }>> = {
  needs: () => [],
  stamp: (facts, ctx) => keptScope(facts.request, ctx, facts.requester) ?? allowed(),
  judgesCreateWhole: false,
};
