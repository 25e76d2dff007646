// What the install's ValidatingAdmissionPolicies share: CEL literals, the "is the requester
// one of these principals" test, and the binding that makes a policy deny.
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding, V1ValidatingAdmissionPolicySpec } from '@kubernetes/client-node';

/** A CEL string literal (JSON string escapes are CEL's too). */
export function celString(value: string): string {
  return JSON.stringify(value);
}

/** A CEL list of string literals. */
export function celList(values: readonly string[]): string {
  return `[${values.map(celString).join(', ')}]`;
}

/** The CEL: does `obj` (`oldObject`, `namespaceObject`) carry label `key` with the CEL value `value`. */
export function celLabelIs(obj: string, key: string, value: string): string {
  return `has(${obj}.metadata.labels) && ${celString(key)} in ${obj}.metadata.labels && ${obj}.metadata.labels[${celString(key)}] == ${value}`;
}

/** The CEL: is the requester one of these users, or in one of these groups. Shared with the chart's templates (test/helm-chart.test.ts). */
export function requesterIsOneOf(users: readonly string[], groups: readonly string[]): string {
  return `request.userInfo.username in ${celList(users)} || (has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ${celList(groups)}))`;
}

/** A policy that fails closed (`failurePolicy: Fail`), with its Deny binding. */
export function denyingPolicy(policyName: string, labels: Record<string, string>, spec: Omit<V1ValidatingAdmissionPolicySpec, 'failurePolicy'>): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] {
  return [
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: policyName, labels }, spec: { failurePolicy: 'Fail', ...spec } },
    denyBinding(policyName, labels),
  ];
}

/** The binding of a policy of the same name, everywhere, its refusals denials. */
export function denyBinding(policyName: string, labels: Record<string, string>): V1ValidatingAdmissionPolicyBinding {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policyName, labels },
    spec: { policyName, validationActions: ['Deny'] },
  };
}
