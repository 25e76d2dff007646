// A Namespace's labels and annotations act on every object in it, and some beyond it: Pod
// Security admission reads `pod-security.kubernetes.io/enforce` to decide whether anyone's
// privileged pod is refused there, and the API server lets any claim in a namespace labelled
// `resource.kubernetes.io/admin-access: "true"` ask for admin access to devices, which ignores
// every ordinary claim to them: another environment's GPU or NIC in use. RBAC lets a Role in
// namespace X authorize writes to the Namespace X itself, so a tenant with a namespace-admin
// Role could relabel a namespace it shares with other environments. So, in an opted-in
// namespace, they are the platform's, guarded in the API server itself as the review scope's
// switch and the namespace's deletion are (review-scope-policy.ts, namespace-delete-policy.ts):
// a ValidatingAdmissionPolicy lets only the policy's platform and break-glass principals add,
// change or remove a label or annotation of a Namespace labelled deed.dev/sandbox=enabled. In a
// namespace the policy binds to one environment (no other environment works there), that
// environment's principals and managers may write them too, but for the keys of
// PLATFORM_NAMESPACE_KEYS, which act beyond that environment's own objects. kube-system's
// service accounts (the system controllers) and Deed's own pass; so does every write that
// changes neither labels nor annotations. Deed's own opt-in label stays deed-review-scope's.
// The lists are rendered into the CEL from the policy at install time (docs/security-model.md,
// "What acts on a whole namespace").
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import type { Config } from '../config/schema.js';
import { SANDBOX_LABEL, SANDBOX_LABEL_VALUE } from '../policy/review-scope.js';
import { celLabelIs, celList, celString, denyingPolicy, requesterIsOneOf } from './admission-policy.js';
import { boundOwnerExpression } from './namespace-delete-policy.js';
import { scopeAdmins } from './review-scope-policy.js';

export const NAMESPACE_LABELS_POLICY_SUFFIX = 'namespace-labels';

/**
 * The Namespace labels and annotations that stay the platform's even in a namespace bound to
 * one environment: each acts beyond that environment's own objects. A key ending in `/` is a
 * prefix. Rendered into the CEL here and, as the same list, into the chart's template
 * (manifests/helm/deed/templates/namespace-labels-policy.yaml; test/namespace-labels-policy.test.ts
 * checks both render alike).
 */
export const PLATFORM_NAMESPACE_KEYS: ReadonlyArray<{ key: string; why: string }> = [
  {
    key: 'pod-security.kubernetes.io/',
    why: "Pod Security admission's level for the namespace (enforce, audit, warn and their versions): `enforce=privileged` lets a privileged or host pod run, and from the node it reaches every environment's pods",
  },
  {
    key: 'resource.kubernetes.io/admin-access',
    why: 'DRA: a claim may set adminAccess only in a namespace labelled so, and an admin-access claim ignores every ordinary claim to its device, cluster-wide: a GPU or NIC another environment has in use',
  },
  {
    key: 'scheduler.alpha.kubernetes.io/node-selector',
    why: "the PodNodeSelector admission plugin's node selector for the namespace: the platform's fence around the nodes its pods may share",
  },
  {
    key: 'scheduler.alpha.kubernetes.io/defaultTolerations',
    why: "the PodTolerationRestriction admission plugin's tolerations for the namespace: they take its pods onto nodes tainted for others",
  },
  {
    key: 'scheduler.alpha.kubernetes.io/tolerationsWhitelist',
    why: "the PodTolerationRestriction admission plugin's list of tolerations a pod of the namespace may carry: it replaces the cluster's",
  },
];

/** The CEL: is the key `k` one of PLATFORM_NAMESPACE_KEYS (a key ending in `/` a prefix). */
export function platformKeyExpression(k: string): string {
  const prefixes = PLATFORM_NAMESPACE_KEYS.map((p) => p.key).filter((key) => key.endsWith('/'));
  const exact = PLATFORM_NAMESPACE_KEYS.map((p) => p.key).filter((key) => !key.endsWith('/'));
  return [...prefixes.map((p) => `${k}.startsWith(${celString(p)})`), `${k} in ${celList(exact)}`].join(' || ');
}

/** How the keys read in a message: `pod-security.kubernetes.io/*, resource.kubernetes.io/admin-access, ...`. */
export function platformKeysText(): string {
  return PLATFORM_NAMESPACE_KEYS.map((p) => (p.key.endsWith('/') ? `${p.key}*` : p.key)).join(', ');
}

/** The CEL list of the keys of a map added, changed or removed between `old` and `now` (variable names). */
const changedKeys = (old: string, now: string) => `variables.${now}.filter(k, !(k in variables.${old}) || variables.${old}[k] != variables.${now}[k]) + variables.${old}.filter(k, !(k in variables.${now}))`;
const map = (obj: string, field: 'labels' | 'annotations') => `has(${obj}.metadata.${field}) ? ${obj}.metadata.${field} : {}`;

export function namespaceLabelsPolicy(name: string, deedServiceAccount: string, config: Config, labels: Record<string, string>): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] {
  const admins = scopeAdmins(config);
  const optIn = `${SANDBOX_LABEL}=${SANDBOX_LABEL_VALUE}`;
  const keys = platformKeysText();
  const shared = `only the platform and break-glass principals of Deed's policy may add, change or remove them: ask the platform to label or annotate the namespace. In a namespace the policy binds to one environment, that environment's principals and managers may write any but ${keys}`;
  const bound = `they are the platform's even in a namespace bound to your environment: ask the platform to write them`;
  return denyingPolicy(`${name}-${NAMESPACE_LABELS_POLICY_SUFFIX}`, labels, {
    matchConstraints: {
      // Status and finalize writes keep metadata changes.
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces', 'namespaces/status', 'namespaces/finalize'], operations: ['UPDATE'] }],
    },
    variables: [
      { name: 'scopeAdmin', expression: requesterIsOneOf(admins.users, admins.groups) },
      // The system controllers (kube-system's service accounts, which Deed's webhooks are not sent either) and Deed itself.
      { name: 'exempt', expression: `request.userInfo.username == ${celString(deedServiceAccount)} || (has(request.userInfo.groups) && "system:serviceaccounts:kube-system" in request.userInfo.groups)` },
      { name: 'optedIn', expression: `oldObject != null && ${celLabelIs('oldObject', SANDBOX_LABEL, celString(SANDBOX_LABEL_VALUE))}` },
      { name: 'oldLabels', expression: map('oldObject', 'labels') },
      { name: 'newLabels', expression: map('object', 'labels') },
      { name: 'oldAnnotations', expression: map('oldObject', 'annotations') },
      { name: 'newAnnotations', expression: map('object', 'annotations') },
      // The keys added, changed or removed, labels and annotations alike; the opt-in label is deed-review-scope's alone.
      { name: 'changed', expression: `variables.optedIn ? (${changedKeys('oldLabels', 'newLabels')}).filter(k, k != ${celString(SANDBOX_LABEL)}) + ${changedKeys('oldAnnotations', 'newAnnotations')} : []` },
      { name: 'platformKeys', expression: `variables.changed.filter(k, ${platformKeyExpression('k')})` },
      { name: 'boundOwner', expression: boundOwnerExpression(config) },
    ],
    validations: [
      {
        expression: 'variables.scopeAdmin || variables.exempt || size(variables.changed) == 0 || variables.boundOwner',
        message: `an opted-in namespace's (${optIn}) labels and annotations act on every environment's objects in it: ${shared}`,
        messageExpression: `"namespace " + request.name + " is opted in to Deed (${optIn}) and its labels and annotations act on every environment's objects in it (here " + variables.changed[0] + "): ${shared}"`,
        reason: 'Forbidden',
      },
      {
        expression: 'variables.scopeAdmin || variables.exempt || size(variables.platformKeys) == 0',
        message: `the namespace labels and annotations ${keys} act beyond one environment's objects: ${bound}`,
        messageExpression: `"namespace " + request.name + ": " + variables.platformKeys[0] + " acts beyond one environment's objects (as do ${keys}): ${bound}"`,
        reason: 'Forbidden',
      },
    ],
  });
}
