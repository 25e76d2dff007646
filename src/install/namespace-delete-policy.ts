// Deleting an opted-in namespace deletes every environment's objects in it: the namespace
// controller removes them all, as a system controller, unreviewed. RBAC lets a Role in
// namespace X authorize DELETE of the Namespace X itself, so a tenant with a namespace-admin
// Role could end every other environment's work there. So the deletion is the platform's,
// guarded in the API server itself as the review scope's switch is (review-scope-policy.ts):
// a ValidatingAdmissionPolicy, evaluated in process (no webhook to be down), lets only the
// policy's platform and break-glass principals delete a Namespace labelled
// deed.dev/sandbox=enabled, and, for a namespace the policy binds to one environment, that
// environment's principals and managers too (no other environment works there). A namespace
// already terminating passes: the namespace controller's own follow-up changes nothing. The
// lists are rendered into the CEL from the policy at install time (docs/security-model.md,
// "What acts on a whole namespace").
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import type { Config } from '../config/schema.js';
import { SANDBOX_LABEL, SANDBOX_LABEL_VALUE } from '../policy/review-scope.js';
import { celLabelIs, celList, celString, denyingPolicy, requesterIsOneOf } from './admission-policy.js';
import { actsForExpression } from './create-stamps-policy.js';
import { scopeAdmins } from './review-scope-policy.js';

export const NAMESPACE_DELETE_POLICY_SUFFIX = 'namespace-delete';


/** The CEL: is the namespace being deleted bound to an environment the requester acts for, or manages. */
export function boundOwnerExpression(config: Config): string {
  const terms = config.environments
    .filter((env) => env.namespaces.length > 0)
    .map((env) => `(request.name in ${celList(env.namespaces)} && (${actsForExpression(env.serviceAccounts, env.groups)} || ${requesterIsOneOf(env.managers.users, env.managers.groups)}))`);
  return terms.length > 0 ? terms.join(' || ') : 'false';
}

export function namespaceDeletePolicy(name: string, config: Config, labels: Record<string, string>): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] {
  const admins = scopeAdmins(config);
  const message = `only the platform and break-glass principals of Deed's policy, and for a namespace the policy binds to one environment that environment's principals and managers, may delete it; ask the platform`;
  return denyingPolicy(`${name}-${NAMESPACE_DELETE_POLICY_SUFFIX}`, labels, {
    matchConstraints: {
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['DELETE'] }],
    },
    variables: [
      { name: 'scopeAdmin', expression: requesterIsOneOf(admins.users, admins.groups) },
      {
        name: 'optedIn',
        expression: `oldObject != null && ${celLabelIs('oldObject', SANDBOX_LABEL, celString(SANDBOX_LABEL_VALUE))}`,
      },
      // The namespace controller's own deletes come after the decision that started them.
      { name: 'terminating', expression: 'oldObject != null && has(oldObject.metadata.deletionTimestamp)' },
      { name: 'boundOwner', expression: boundOwnerExpression(config) },
    ],
    validations: [
      {
        expression: 'variables.scopeAdmin || !variables.optedIn || variables.terminating || variables.boundOwner',
        message: `an opted-in namespace (${SANDBOX_LABEL}=${SANDBOX_LABEL_VALUE}) holds every environment's objects, and deleting it deletes them all: ${message}`,
        messageExpression: `"namespace " + request.name + " is opted in to Deed (${SANDBOX_LABEL}=${SANDBOX_LABEL_VALUE}) and deleting it deletes every environment's objects in it: ${message}"`,
        reason: 'Forbidden',
      },
    ],
  });
}
