// guard.service-account, from the account's own stamps: a ServiceAccount an environment
// created in the review scope is stamped for it (the default row), and is its credential as
// surely as one the policy maps to it. A TokenRequest for it, a token Secret naming it and
// a pod that runs as it hand out its token, so they come only from who acts for that
// environment (besides what the policy's mapping says: both must allow, service-account-guard.ts).
// An account Deed cannot read, or whose stamps do not verify, is refused (fail closed). An
// unstamped one (but the namespace's default) in a namespace bound to no environment is the
// platform's identity: no environment's principal hands its token to a pod.
import type { Finding } from '../../admission/verdict.js';
import { environmentOfOwnership, ownershipOfFound, type Ownership } from '../ownership.js';
import type { DecisionContext } from '../policy.js';
import { serviceAccountEnvironment, type Requester } from '../requester/identity.js';
import { actsFor, isPlatform, isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';

/**
 * The account every namespace gets from the service-account controller (kube-system, whose
 * writes Deed does not review): never created through Deed, so never stamped, and no read is
 * spent on it for every pod.
 */
export const NAMESPACE_DEFAULT_ACCOUNT = 'default';

/** Whether a request naming `account` needs its stamps read. */
export function readsAccountStamps(account: string): boolean {
  return account !== NAMESPACE_DEFAULT_ACCOUNT && account !== '';
}

/**
 * Whose an account is by its stamps; undefined for one never read (the namespace's default) and
 * one that does not exist (the API server itself refuses a token, a pod or a token Secret of it).
 */
function accountOwner(namespace: string, account: string, ctx: DecisionContext): Ownership | { kind: 'unread'; reason: string } | undefined {
  if (!readsAccountStamps(account)) return undefined;
  const found = ctx.lookup.get('serviceaccounts', namespace, account);
  if (found.state === 'absent') return undefined;
  if (found.state === 'unknown') return { kind: 'unread', reason: found.reason };
  return ownershipOfFound(found, 'ServiceAccount', namespace, ctx.policy, ctx.keyRing);
}

/** `doing`: what the request would do with the account, for the message ("request a token of it"). */
export function stampedAccountGuard(namespace: string, account: string, requester: Requester, ctx: DecisionContext, path: string | undefined, doing: string): Finding[] {
  if (isTrusted(requester, ctx.policy)) return [];
  const owner = accountOwner(namespace, account, ctx);
  if (owner === undefined) return [];
  const at = path !== undefined ? { path } : {};
  const name = `service account ${namespace}:${account}`;
  if (owner.kind === 'unread') return [{ rule: RULES.guardServiceAccount.id, ...at, message: `cannot tell whose ${name} is (${owner.reason}); refusing to ${doing}` }];
  if (owner.kind === 'unverifiable') return [{ rule: RULES.guardServiceAccount.id, ...at, message: `${name} carries Deed's stamps but they do not verify (${owner.reason}); refusing to ${doing}` }];
  // The platform's own identity: its token acts for no environment, which may change the
  // platform's objects (guard.shared-input); an environment's pod that ran as it would hold that token.
  // (One the policy maps to an environment is that environment's identity: service-account-guard.ts judges it.)
  if (owner.kind === 'unowned') {
    if (serviceAccountEnvironment(namespace, account, ctx.policy) !== undefined) return [];
    return requester.environment.kind === 'one' && !isPlatform(requester, ctx.policy) ? [platformAccount(name, requester.username, requester.environment.id, at, doing)] : [];
  }
  if (owner.kind !== 'stamped' || actsFor(requester, owner.environment, ctx.policy)) return [];
  return [{ rule: RULES.guardServiceAccount.id, ...at, message: `${name} is stamped for environment "${owner.environment}"; ${requester.username} does not act for it, and may not ${doing}` }];
}

function platformAccount(name: string, username: string, environment: string, at: { path?: string }, doing: string): Finding {
  return {
    rule: RULES.guardServiceAccount.id,
    ...at,
    message: `${name} carries no stamps in a namespace bound to no environment: it is the platform's identity, and its token acts for no environment, which may change the platform's objects; ${username} acts for "${environment}" and may not ${doing} (create your own service account, which is stamped for your environment, or run as the namespace's default)`,
  };
}

/**
 * The pod a token is bound to (a TokenRequest's `spec.boundObjectRef`), when that is a pod:
 * the kubelet asks for each running pod's token, and refreshes it, as a system principal
 * whom the guard above trusts. A pod keeps its account's name for life, so one that ran as
 * an account of that name before an environment created its own (the name deleted and taken)
 * would get the environment's credential at its next refresh. So a stamped account's token is
 * bound only to a pod of its environment, whoever asks.
 */
export function boundPodOf(tokenRequest: unknown): { name: string; uid?: string } | undefined {
  const ref = (tokenRequest as { spec?: { boundObjectRef?: { kind?: unknown; name?: unknown; uid?: unknown } } } | undefined)?.spec?.boundObjectRef;
  if (ref?.kind !== 'Pod' || typeof ref.name !== 'string' || ref.name === '') return undefined;
  // The uid, when the request gives one (the kubelet's does).
  return typeof ref.uid === 'string' && ref.uid !== '' ? { name: ref.name, uid: ref.uid } : { name: ref.name };
}

export function boundPodGuard(namespace: string, account: string, pod: string, ctx: DecisionContext): Finding[] {
  const owner = accountOwner(namespace, account, ctx);
  const name = `service account ${namespace}:${account}`;
  if (owner?.kind === 'unread') return [{ rule: RULES.guardServiceAccount.id, message: `cannot tell whose ${name} is (${owner.reason}); refusing a token of it bound to pod ${pod}` }];
  if (owner?.kind !== 'stamped') return [];
  const target = ctx.lookup.get('pods', namespace, pod);
  // The API server refuses a token bound to a pod that does not exist.
  if (target.state === 'absent') return [];
  if (target.state === 'unknown') return [{ rule: RULES.guardServiceAccount.id, message: `cannot tell whose pod ${namespace}/${pod} is (${target.reason}); refusing it a token of ${name}, which is environment "${owner.environment}"'s` }];
  const holder = ownershipOfFound(target, 'Pod', namespace, ctx.policy, ctx.keyRing);
  const holderEnv = environmentOfOwnership(holder);
  if (holderEnv === owner.environment) return [];
  return [
    {
      rule: RULES.guardServiceAccount.id,
      message: `${name} is stamped for environment "${owner.environment}"; pod ${pod} is ${holderEnv !== undefined ? `environment "${holderEnv}"'s` : 'of no environment'} and gets no token of it (a pod keeps its account's name: one that ran as an account deleted and re-created under this name must be deleted)`,
    },
  ];
}
