// The token-request door (doors/door.ts): a TokenRequest, a token of the named service
// account handed to the requester; the account's stamps say whose it is.
import { allowed, denied, type Verdict } from '../../admission/verdict.js';
import type { Requester } from '../requester/identity.js';
import type { DecisionContext } from '../policy.js';
import { RULES } from '../rules/catalog.js';
import { enforce } from '../rules/enforcement.js';
import { serviceAccountGuard } from '../rules/service-account-guard.js';
import { stampedAccountGuard } from '../rules/service-account-stamps.js';
import { accountKeys } from '../reads.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

export const TOKEN_REQUEST_DOOR: DoorReview<Extract<Door, { kind: 'token-request' }>> = {
  // A TokenRequest hands out a token of the account it names, whose stamps say whose it is.
  needs: ({ door, namespace, judges }) => (judges ? accountKeys(door.serviceAccount, namespace) : []),
  stamp: () => allowed(),
  judge: (facts, namespace, ctx) => validateTokenRequest(facts.door.serviceAccount, namespace, facts.requester, ctx),
  judgesCreateWhole: false,
};

/** A TokenRequest hands out a token of the account it names. */
function validateTokenRequest(account: string | undefined, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  if (account === undefined) return denied([{ rule: RULES.requestMalformed.id, message: 'the token request names no service account' }]);
  const byPolicy = serviceAccountGuard(namespace, account, requester, ctx.policy, undefined, 'request a token of it');
  return enforce(byPolicy.length > 0 ? byPolicy : stampedAccountGuard(namespace, account, requester, ctx, undefined, 'request a token of it'), ctx.policy);
}
