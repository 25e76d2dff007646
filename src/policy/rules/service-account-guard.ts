// A service account that acts for an environment is that environment's credential: a
// pod that runs as it, a Secret the token controller fills with its token, and a
// TokenRequest for it all hand out a token that acts for the environment. Only who acts
// for that environment may ask for one (guard.service-account).
import type { Finding } from '../../admission/verdict.js';
import { serviceAccountEnvironment, type Requester } from '../requester/identity.js';
import type { Policy } from '../policy.js';
import { actsFor } from '../requester/principals.js';
import { RULES } from './catalog.js';
import type { KubeObject } from '../../admission/types.js';
import { entryOf } from '../unstructured.js';

/** Secrets of this type are filled with a token of the service account they name, by the token controller. */
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const SERVICE_ACCOUNT_NAME = 'kubernetes.io/service-account.name';

/** The service account a token Secret names (undefined for any other Secret). */
export function tokenAccount(obj: KubeObject): string | undefined {
  return obj.type === SERVICE_ACCOUNT_TOKEN_TYPE ? (entryOf(obj.metadata.annotations ?? {}, SERVICE_ACCOUNT_NAME) ?? '') : undefined;
}

/** `doing`: what the request would do with the account, for the message ("create a pod that runs as it"). */
export function serviceAccountGuard(namespace: string, account: string, requester: Requester, policy: Policy, path: string | undefined, doing: string): Finding[] {
  const environment = serviceAccountEnvironment(namespace, account, policy);
  if (environment === undefined || actsFor(requester, environment, policy)) return [];
  return [
    {
      rule: RULES.guardServiceAccount.id,
      ...(path !== undefined ? { path } : {}),
      message: `service account ${namespace}:${account} acts for environment "${environment}"; ${requester.username} does not, and may not ${doing}`,
    },
  ];
}
