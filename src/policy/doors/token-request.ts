// The token-request door (doors/door.ts): a TokenRequest, a token of the named service
// account handed to the requester; the account's stamps say whose it is.
import { allowed, denied, type Verdict } from '../../admission/verdict.js';
import type { Requester } from '../requester/identity.js';
import type { DecisionContext } from '../policy.js';
import { RULES } from '../rules/catalog.js';
import { enforce } from '../rules/enforcement.js';
import { serviceAccountGuard } from '../rules/service-account-guard.js';
import { boundPodGuard, boundPodOf, stampedAccountGuard } from '../rules/service-account-stamps.js';
import { isTrusted } from '../requester/principals.js';
import { accountKeys } from '../reads.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

export const TOKEN_REQUEST_DOOR: DoorReview<Extract<Door, { kind: 'token-request' }>> = {
  // A TokenRequest hands out a token of the account it names, whose stamps say whose it is.
  // A token is handed out at once: the account is read from the API server (one deleted and
  // made again by another environment within the watch's delay would be judged as the one
  // before) for a requester its stamps judge, and for a token bound to a pod, which the
  // bound pod judges: the kubelet's, for a pod that runs as the name another environment
  // has just taken. Only a trusted requester's unbound token is the cache's. The bound pod
  // is the one of the token's uid.
  needs: ({ req, door, namespace, judges, policy, facts }) => {
    if (!judges) return [];
    const pod = boundPodOf(req.object);
    const judged = facts === undefined || policy === undefined || !isTrusted(facts.requester, policy);
    const account = accountKeys(door.serviceAccount, namespace).map((k) => (judged || pod !== undefined ? { ...k, fresh: true as const } : k));
    return account.length > 0 && pod !== undefined ? [...account, { resource: 'pods', namespace, ...pod }] : account;
  },
  stamp: () => allowed(),
  judge: (facts, namespace, ctx) => validateTokenRequest(facts.door.serviceAccount, boundPodOf(facts.request.object)?.name, namespace, facts.requester, ctx),
  judgesCreateWhole: false,
};

/** A TokenRequest hands out a token of the account it names, to the requester and, when bound to one, to a pod. */
function validateTokenRequest(account: string | undefined, pod: string | undefined, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  if (account === undefined) return denied([{ rule: RULES.requestMalformed.id, message: 'the token request names no service account' }]);
  const byPolicy = serviceAccountGuard(namespace, account, requester, ctx.policy, undefined, 'request a token of it');
  if (byPolicy.length > 0) return enforce(byPolicy, ctx.policy);
  const byStamps = stampedAccountGuard(namespace, account, requester, ctx, undefined, 'request a token of it');
  return enforce(byStamps.length > 0 || pod === undefined ? byStamps : boundPodGuard(namespace, account, pod, ctx), ctx.policy);
}
