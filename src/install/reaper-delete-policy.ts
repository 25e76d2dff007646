// A reaper's token may delete what RBAC grants it: with the default ClusterRoleBinding, the
// reaped kinds in every namespace, kube-system's included. The reaper itself deletes only
// its own environment's objects inside the review scope (it lists by its environment's
// selector and skips namespaces outside the scope, reaper/verdict.ts), but until now only
// its own code held it there: a bug, or its token taken from its pod, could delete any pod
// or Secret of the cluster, and outside the scope no webhook reviews the delete. This
// ValidatingAdmissionPolicy, evaluated in the API server (no webhook to be down), holds every
// reaper account to what the reaper does: a DELETE (each item of a deletecollection too)
// only in a namespace of the review scope, and only of an object carrying its own
// environment's managed and environment labels, which inside the scope only Deed writes.
// Reads are RBAC's alone (admission never sees them): docs/security-model.md.
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import type { StampKeys } from '../policy/stamps/keys.js';
import { excludedNamespaces, SANDBOX_LABEL, SANDBOX_LABEL_VALUE } from '../policy/review-scope.js';
import { celLabelIs as labelIs, celList, celString, denyingPolicy } from './admission-policy.js';

export const REAPER_DELETE_POLICY_SUFFIX = 'reaper-delete';

/** A reaper's account as the API server names its token: `system:serviceaccount:NS:NAME`. */
export interface ReaperAccount {
  username: string;
  environment: string;
}

/** A CEL map from each reaper's username to its environment, keys in order (as the chart's toJson writes them). */
export function reaperAccountsMap(accounts: readonly ReaperAccount[]): string {
  const sorted = [...accounts].sort((a, b) => (a.username < b.username ? -1 : a.username > b.username ? 1 : 0));
  return `{${sorted.map((a) => `${celString(a.username)}:${celString(a.environment)}`).join(',')}}`;
}

export function reaperDeletePolicy(name: string, deedNamespace: string, accounts: readonly ReaperAccount[], keys: Pick<StampKeys, 'managed' | 'environment'>, labels: Record<string, string>): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] {
  const reapers = reaperAccountsMap(accounts);
  const excluded = excludedNamespaces(deedNamespace);
  const scope = `${SANDBOX_LABEL}=${SANDBOX_LABEL_VALUE}, not ${excluded.join(' nor ')}`;
  return denyingPolicy(`${name}-${REAPER_DELETE_POLICY_SUFFIX}`, labels, {
    matchConstraints: {
      // Every kind and subresource, so a ClusterRole widened by hand gains the reaper nothing either.
      resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], operations: ['DELETE'] }],
    },
    // A map's `in` tests its keys: only the reapers' own deletes are evaluated.
    matchConditions: [{ name: 'reaper', expression: `request.userInfo.username in ${reapers}` }],
    variables: [
      { name: 'environment', expression: `${reapers}[request.userInfo.username]` },
      // A cluster-scoped object has no namespaceObject: never a reaper's.
      {
        name: 'inScope',
        expression: `namespaceObject != null && ${labelIs('namespaceObject', SANDBOX_LABEL, celString(SANDBOX_LABEL_VALUE))} && !(namespaceObject.metadata.name in ${celList(excluded)})`,
      },
      { name: 'ownStamps', expression: `oldObject != null && ${labelIs('oldObject', keys.managed, '"true"')} && ${labelIs('oldObject', keys.environment, 'variables.environment')}` },
    ],
    validations: [
      {
        expression: 'variables.inScope',
        message: `Deed's reaper deletes only in the review scope (namespaces labelled ${scope}); delete this object as its owner or the platform`,
        messageExpression: `"Deed's reaper for environment " + variables.environment + " deletes only in the review scope (namespaces labelled ${scope}): " + (request.namespace == "" ? "this object is cluster-scoped" : "namespace " + request.namespace + " is outside it") + "; delete it as its owner or the platform"`,
        reason: 'Forbidden',
      },
      {
        expression: 'variables.ownStamps',
        message: `Deed's reaper deletes only objects stamped for its own environment (${keys.managed}=true and its ${keys.environment}); delete this object as its owner or the platform`,
        messageExpression: `"Deed's reaper for environment " + variables.environment + " deletes only objects stamped for it (${keys.managed}=true, ${keys.environment}=" + variables.environment + "); " + request.name + " is not; delete it as its owner or the platform"`,
        reason: 'Forbidden',
      },
    ],
  });
}
