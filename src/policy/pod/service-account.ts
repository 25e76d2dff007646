// The service account a pod runs as: a pod-bound token of a runner's account acts for the
// runner's environment, so only who acts for it may create a pod, or a pod template, that
// runs as it.
import type { Requester } from '../requester/identity.js';
import type { Policy } from '../policy.js';
import { serviceAccountGuard } from '../rules/service-account-guard.js';
import { text, type Rec } from '../unstructured.js';

/** spec.serviceAccountName, else the deprecated spec.serviceAccount, else "default" (as the API server reads them). */
export function serviceAccountOf(spec: Rec): string {
  const name = text(spec, 'serviceAccountName');
  if (name !== undefined && name !== '') return name;
  const deprecated = text(spec, 'serviceAccount');
  return deprecated !== undefined && deprecated !== '' ? deprecated : 'default';
}

export function borrowedServiceAccount(spec: Rec, at: string, namespace: string, requester: Requester, policy: Policy, what = 'a pod'): ReturnType<typeof serviceAccountGuard> {
  return serviceAccountGuard(namespace, serviceAccountOf(spec), requester, policy, `${at}.serviceAccountName`, `create ${what} that runs as it`);
}
