// The review scope's switch, guarded in the API server itself: a ValidatingAdmissionPolicy
// (evaluated in process: no webhook to be down, and it sees the UPDATE that removes a
// namespace's opt-in label, which a webhook's namespaceSelector never does). Whoever can
// change that label can take a namespace out of Deed's sight, write stamps there, and put
// it back; a namespaced wildcard Role covers the Namespace object itself. So the label, and
// Deed's own webhook configurations, change only for the principals the policy names
// (platform, break-glass). The lists are rendered into the CEL from the policy at install
// time (docs/security-model.md, "The review scope's switch"). The API server never applies
// admission policies to ValidatingAdmissionPolicies and their bindings (no lockout), so
// this policy itself is RBAC's to protect: whoever may delete it is a cluster admin.
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import type { Config } from '../config/schema.js';
import { SANDBOX_LABEL } from '../policy/review-scope.js';
import { celList, celString, denyingPolicy, requesterIsOneOf } from './admission-policy.js';

export const REVIEW_SCOPE_POLICY_SUFFIX = 'review-scope';

/** The principals who may switch the scope: platform and break-glass, users and groups. */
export function scopeAdmins(config: Config): { users: string[]; groups: string[] } {
  return {
    users: [...new Set([...config.platform.users, ...config.breakGlass.users])],
    groups: [...new Set([...config.platform.groups, ...config.breakGlass.groups])],
  };
}

/** cert-manager's cainjector as its chart installs it: it writes caBundle into the webhook configurations it is asked to. */
export const CERT_MANAGER_CAINJECTOR = 'system:serviceaccount:cert-manager:cert-manager-cainjector';

/** The CEL of the `caInjector` variable: whether the requester is one of `users` (the cert-manager component and chart mode patch or render it). */
export function caInjectorExpression(users: string[]): string {
  return `request.userInfo.username in ${celList(users)}`;
}

const label = (obj: string) => `has(${obj}.metadata.labels) && ${celString(SANDBOX_LABEL)} in ${obj}.metadata.labels ? ${obj}.metadata.labels[${celString(SANDBOX_LABEL)}] : "<absent>"`;

/**
 * `caInjectors`: principals that may also UPDATE (never DELETE) Deed's webhook configurations,
 * to write their caBundle: cert-manager's cainjector where it issues Deed's certificate.
 */
export function reviewScopePolicy(name: string, webhookConfiguration: string, config: Config, labels: Record<string, string>, caInjectors: string[] = []): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] {
  const policyName = `${name}-${REVIEW_SCOPE_POLICY_SUFFIX}`;
  const admins = scopeAdmins(config);
  return denyingPolicy(policyName, labels, {
    matchConstraints: {
      resourceRules: [
        // Status and finalize writes keep label changes.
        { apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces', 'namespaces/status', 'namespaces/finalize'], operations: ['UPDATE'] },
        // Every configuration, Deed's told apart by name in CEL: `resourceNames` never matches a
        // deletecollection, whose request names no object (each item is admitted as oldObject).
        { apiGroups: ['admissionregistration.k8s.io'], apiVersions: ['*'], resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'], operations: ['UPDATE', 'DELETE'] },
      ],
    },
    variables: [
      { name: 'scopeAdmin', expression: requesterIsOneOf(admins.users, admins.groups) },
      { name: 'isNamespace', expression: `request.resource.group == "" && request.resource.resource == "namespaces"` },
      { name: 'deedConfiguration', expression: `!variables.isNamespace && (oldObject != null ? oldObject.metadata.name : request.name) == ${celString(webhookConfiguration)}` },
      { name: 'caInjector', expression: caInjectorExpression(caInjectors) },
    ],
    validations: [
      {
        expression: `variables.scopeAdmin || !variables.isNamespace || (${label('object')}) == (${label('oldObject')})`,
        message: `the label ${SANDBOX_LABEL} puts a namespace in Deed's review scope; only the platform and break-glass principals of Deed's policy may add, change or remove it`,
        reason: 'Forbidden',
      },
      {
        expression: 'variables.scopeAdmin || !variables.deedConfiguration || (variables.caInjector && request.operation == "UPDATE")',
        message: "Deed's webhook configurations change only by the platform and break-glass principals of Deed's policy",
        reason: 'Forbidden',
      },
    ],
  });
}
