// Requests that name a pod but carry something else: an eviction (the pod is deleted
// inside the API server), a binding, and the CONNECTs into its containers (exec, attach,
// port-forward, proxy: whoever gets in reads every Secret and workspace the pod holds).
// Whose the pod is comes from a lookup, read as guarded writes read an object. An unstamped
// pod in a namespace bound to no environment is the platform's (rules/shared-input.ts): no
// environment's principal evicts it or gets into it.
//
// The refusal must not tell a requester more than the API server would
// (docs/security-model.md, "What a refusal tells"): whether the pod is absent, another
// environment's, or carries stamps that do not verify, one who does not act for it gets
// the same answer, naming no other environment, runner or service account. A pod that
// does not exist is refused too: the API server reads it only after admission, so one
// created under that name meanwhile would be reached without having been judged.
import type { Finding } from '../../admission/verdict.js';
import { isConnectAction, type PodAction } from '../doors/door.js';
import { ownershipOfFound } from '../ownership.js';
import type { DecisionContext } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { actsFor, isTrusted } from '../requester/principals.js';
import { ambiguousIdentity } from '../create-gate.js';
import { RULES } from './catalog.js';
import { sharedInputGuard } from './shared-input.js';

const POD_RESOURCE = { group: '', resource: 'pods' };

const VERB: Readonly<Record<PodAction, string>> = {
  eviction: 'evict',
  binding: 'bind',
  exec: 'exec into',
  attach: 'attach to',
  portforward: 'port-forward to',
  proxy: 'proxy to',
};

export function namedPodGuard(requester: Requester, action: PodAction, namespace: string, pod: string, ctx: DecisionContext): Finding[] {
  const { policy } = ctx;
  if (isTrusted(requester, policy)) return [];
  const found = ctx.lookup.get('pods', namespace, pod);
  // Deed's own failure to read, not a fact about the pod: the operator needs the reason.
  if (found.state === 'unknown')
    return [{ rule: RULES.guardOwnerUnknown.id, message: `cannot read pod ${namespace}/${pod} to tell whose it is (${found.reason}); refusing to ${VERB[action]} it` }];
  if (found.state === 'found') {
    const owner = ownershipOfFound(found, 'Pod', namespace, policy, ctx.keyRing);
    // The platform's (or a tenant of no environment's) pod in a namespace bound to none.
    if (owner.kind === 'unowned') return sharedInputGuard(requester, owner, POD_RESOURCE, { kind: 'Pod', namespace, name: pod }, policy, { doing: VERB[action] });
    if (owner.kind !== 'unverifiable' && actsFor(requester, owner.environment, policy)) return [];
  }
  return [notKnownToBeYours(requester, action, namespace, pod)];
}

/** One answer for absent, another environment's and unverifiable alike. */
function notKnownToBeYours(requester: Requester, action: PodAction, namespace: string, pod: string): Finding {
  const env = requester.environment;
  if (env.kind === 'ambiguous') return ambiguousIdentity(requester, env.ids);
  const connect = isConnectAction(action);
  const who = env.kind === 'one' ? `${requester.username} acts for "${env.id}"` : `${requester.username} acts for no environment and is not a manager, system controller or break-glass principal`;
  const rule = connect ? RULES.guardConnect.id : env.kind === 'one' ? RULES.guardCrossEnvironment.id : RULES.guardUnmapped.id;
  const whose = env.kind === 'one' ? `one of "${env.id}"'s` : "one of an environment it manages";
  return { rule, message: `${who}; pod ${namespace}/${pod} is not known to be ${whose} (or does not exist), so it may not ${VERB[action]} it` };
}
