// Who is asking, from request.userInfo only: the API server sets it and a client cannot
// forge it. Maps the requester to the environment it acts for, and finds the runner pod
// behind a pod-bound service-account token.
import type { UserInfo } from '../../admission/types.js';
import type { Policy } from '../policy.js';

export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';
export const POD_UID_EXTRA = 'authentication.kubernetes.io/pod-uid';
const SA_PREFIX = 'system:serviceaccount:';

export interface RunnerPod {
  namespace: string;
  name: string;
  uid: string;
}

export type Environment =
  | { kind: 'none' }
  | { kind: 'one'; id: string }
  | { kind: 'ambiguous'; ids: string[] };

export interface Requester {
  username: string;
  groups: string[];
  serviceAccount?: { namespace: string; name: string };
  environment: Environment;
  runner?: RunnerPod;
  /** Set when the token claims a pod but the claim cannot be read: fail closed on it. */
  runnerError?: string;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
// Pod UIDs are UUIDs; anything else cannot be a label value Deed is willing to stamp.
const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function parseServiceAccount(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const parts = username.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  return { namespace: parts[0]!, name: parts[1]! };
}

/**
 * The environment a service account acts for by the policy's service-account patterns
 * (not by group). The schema allows a pattern in one environment only; an exact entry
 * and another environment's wildcard can still both match, which is no one environment.
 */
export function serviceAccountEnvironment(namespace: string, name: string, policy: Policy): string | undefined {
  const exact = policy.envByServiceAccount.get(`${namespace}:${name}`);
  const wildcard = policy.envByNamespaceWildcard.get(namespace);
  if (exact !== undefined && wildcard !== undefined && exact !== wildcard) return undefined;
  return exact ?? wildcard;
}

export function resolveRequester(userInfo: UserInfo, policy: Policy): Requester {
  const serviceAccount = parseServiceAccount(userInfo.username);
  const ids = new Set<string>();
  if (serviceAccount) {
    const exact = policy.envByServiceAccount.get(`${serviceAccount.namespace}:${serviceAccount.name}`);
    if (exact !== undefined) ids.add(exact);
    const wildcard = policy.envByNamespaceWildcard.get(serviceAccount.namespace);
    if (wildcard !== undefined) ids.add(wildcard);
  }
  for (const group of userInfo.groups) for (const id of policy.envsByGroup.get(group) ?? []) ids.add(id);

  const environment: Environment =
    ids.size === 0 ? { kind: 'none' } : ids.size === 1 ? { kind: 'one', id: [...ids][0]! } : { kind: 'ambiguous', ids: [...ids].sort() };

  const requester: Requester = { username: userInfo.username, groups: userInfo.groups, environment };
  if (serviceAccount) requester.serviceAccount = serviceAccount;

  const podNames = ownValues(userInfo.extra, POD_NAME_EXTRA);
  const podUids = ownValues(userInfo.extra, POD_UID_EXTRA);
  if (podNames === undefined && podUids === undefined) return requester;
  if (!serviceAccount) {
    requester.runnerError = 'pod-bound token extras on a requester that is not a service account';
  } else if (podNames?.length !== 1 || podUids?.length !== 1) {
    requester.runnerError = 'pod-bound token extras must carry exactly one pod name and one pod uid';
  } else if (!DNS_SUBDOMAIN.test(podNames[0]!) || !UID.test(podUids[0]!)) {
    requester.runnerError = 'pod-bound token extras carry a malformed pod name or uid';
  } else {
    requester.runner = { namespace: serviceAccount.namespace, name: podNames[0]!, uid: podUids[0]! };
  }
  return requester;
}

function ownValues(extra: Record<string, string[]>, key: string): string[] | undefined {
  return Object.hasOwn(extra, key) ? extra[key] : undefined;
}

export function environmentId(requester: Requester): string | undefined {
  return requester.environment.kind === 'one' ? requester.environment.id : undefined;
}
