// What must hold after every mutating admission step at the CREATE of an object Deed stamps,
// the default row's included (docs/security-model.md, "One call per create"): a ValidatingAdmissionPolicy, evaluated by
// the API server after all mutation, including a mutating webhook that runs after Deed's
// reinvocation, which Deed never sees. Deed's mutating webhook makes the CREATE judgement
// itself; this policy checks what CEL can tell from the request alone: Deed's stamps are
// whole, they name the requester's environment and runner pod, and a principal of no
// environment carries none. The attestation's HMAC is beyond CEL: an object whose stamps a
// later mutator broke fails to verify, so no door and no reaper treats it as any
// environment's. The requester-to-environment mapping is rendered into the CEL from the
// policy at install time, as the review-scope policy's lists are (review-scope-policy.ts).
import type { V1MatchCondition, V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import type { Config } from '../config/schema.js';
import { stampedAnnotationKeys, stampedLabelKeys, stampKeys } from '../policy/stamps/keys.js';
import { POD_UID_EXTRA } from '../policy/requester/identity.js';
import { RULES } from '../policy/rules/catalog.js';
import { modeOf } from '../policy/rules/enforcement.js';
import { compilePolicy } from '../policy/policy.js';
import { namespaceSelector } from '../policy/review-scope.js';
import { stampedCreateMatch, stampedRowResources } from './kind-rules.js';
import { celList, celString, denyingPolicy, requesterIsOneOf } from './admission-policy.js';

export const CREATE_STAMPS_POLICY_SUFFIX = 'create-stamps';

const SA_PREFIX = 'system:serviceaccount:';

/** The CEL: does the requester act for the environment (by service account, exact or `ns:*`, or by group): requester/identity.ts. */
export function actsForExpression(serviceAccounts: readonly string[], groups: readonly string[]): string {
  const exact = serviceAccounts.filter((sa) => !sa.endsWith(':*')).map((sa) => `${SA_PREFIX}${sa}`);
  const wildcards = serviceAccounts.filter((sa) => sa.endsWith(':*')).map((sa) => `${SA_PREFIX}${sa.slice(0, -1)}`);
  const terms = [
    ...(exact.length > 0 ? [`request.userInfo.username in ${celList(exact)}`] : []),
    ...wildcards.map((prefix) => `request.userInfo.username.startsWith(${celString(prefix)})`),
    ...(groups.length > 0 ? [`(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ${celList(groups)}))`] : []),
  ];
  return terms.length > 0 ? terms.join(' || ') : 'false';
}

/** The CEL list of the environments the requester acts for: one for a stamped create. */
export function environmentsExpression(config: Config): string {
  const parts = config.environments.map((env) => `((${actsForExpression(env.serviceAccounts, env.groups)}) ? [${celString(env.id)}] : [])`);
  return parts.length > 0 ? parts.join(' + ') : '[]';
}

/** The CEL of a new pod's service account (pod/service-account.ts serviceAccountOf); "" for any other kind. */
function podAccountExpression(): string {
  const named = (f: string) => `has(object.spec) && has(object.spec.${f}) && object.spec.${f} != ""`;
  return `request.resource.group == "" && request.resource.resource == "pods" ? (${named('serviceAccountName')} ? object.spec.serviceAccountName : ${named('serviceAccount')} ? object.spec.serviceAccount : "default") : ""`;
}

/** A CEL map of the policy's service accounts (`ns:name`) or namespace wildcards (`ns`) to their environments, sorted as the chart renders a Helm dict. */
function runnerMap(m: ReadonlyMap<string, string>): string {
  return `{${[...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${celString(k)}: ${celString(v)}`).join(', ')}}`;
}

/**
 * The CEL of the environment the policy maps the new pod's service account to
 * (requester/identity.ts serviceAccountEnvironment): "" for none, and for an account its
 * exact name and its namespace's wildcard map to different environments.
 */
const RUNNER_EXPRESSION =
  'variables.podAccount == "" ? "" : (request.namespace + ":" + variables.podAccount) in variables.runnerAccounts ? ' +
  '(request.namespace in variables.runnerNamespaces && variables.runnerNamespaces[request.namespace] != variables.runnerAccounts[request.namespace + ":" + variables.podAccount] ? "" : variables.runnerAccounts[request.namespace + ":" + variables.podAccount]) : ' +
  'request.namespace in variables.runnerNamespaces ? variables.runnerNamespaces[request.namespace] : ""';

const has = (field: 'labels' | 'annotations', key: string) => `(has(object.metadata.${field}) && ${celString(key)} in object.metadata.${field})`;
const value = (field: 'labels' | 'annotations', key: string) => `(${has(field, key)} ? object.metadata.${field}[${celString(key)}] : "")`;

export function createStampsPolicy(name: string, deedNamespace: string, config: Config, matchConditions: V1MatchCondition[], labels: Record<string, string>): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] {
  const policyName = `${name}-${CREATE_STAMPS_POLICY_SUFFIX}`;
  const keys = stampKeys(config.labelPrefix);
  const bound = config.environments.flatMap((env) => env.namespaces.map((ns) => ({ ns, id: env.id })));
  const owned = [...stampedLabelKeys(keys).map((k) => has('labels', k)), ...stampedAnnotationKeys(keys).map((k) => has('annotations', k))].join(' || ');
  const compiled = compilePolicy(config);
  // Refused here only where Deed refuses it: the rule's mode may be warn or audit.
  const forgedIsDenied = modeOf(RULES.stampForged.id, compiled) === 'deny';
  return denyingPolicy(policyName, labels, {
    matchConstraints: { namespaceSelector: namespaceSelector(deedNamespace), ...stampedCreateMatch() },
    // The requests Deed's webhooks judge, no others (src/install/manifests.ts, matchConditions).
    matchConditions,
    variables: [
      { name: 'environments', expression: environmentsExpression(config) },
      { name: 'controller', expression: `request.userInfo.username in ${celList(config.workloadControllers.users)}` },
      // What a controller makes of these kinds Deed stamps whole; of the default row's (a StatefulSet's ControllerRevision, with its template's labels), nothing.
      { name: 'stampedRow', expression: `(request.resource.group + "/" + request.resource.resource) in ${celList(stampedRowResources())}` },
      { name: 'breakGlass', expression: requesterIsOneOf(config.breakGlass.users, config.breakGlass.groups) },
      { name: 'environment', expression: value('labels', keys.environment) },
      { name: 'runnerUid', expression: `has(request.userInfo.extra) && ${celString(POD_UID_EXTRA)} in request.userInfo.extra && size(request.userInfo.extra[${celString(POD_UID_EXTRA)}]) == 1 ? request.userInfo.extra[${celString(POD_UID_EXTRA)}][0] : ""` },
      // A new pod's service account, and the environment it is mapped to (a runner's, pod/runner-mark.ts): "" for none.
      { name: 'podAccount', expression: podAccountExpression() },
      // Each map written once: a policy of many environments stays under the API server's size limit for one expression.
      { name: 'runnerAccounts', expression: runnerMap(compiled.envByServiceAccount) },
      { name: 'runnerNamespaces', expression: runnerMap(compiled.envByNamespaceWildcard) },
      { name: 'runner', expression: RUNNER_EXPRESSION },
      { name: 'runnerMark', expression: value('labels', keys.runner) },
      // A namespace bound to another environment takes no creates of this one's (Deed refuses them, or lets them pass unstamped where that rule only warns).
      { name: 'boundElsewhere', expression: `size(variables.environments) == 1 && request.namespace in ${celList(bound.map((b) => b.ns))} && !((request.namespace + "/" + variables.environments[0]) in ${celList(bound.map((b) => `${b.ns}/${b.id}`))})` },
    ],
    validations: [
      {
        expression: `(variables.controller && !variables.stampedRow) || variables.environment == "" || (${value('labels', keys.managed)} == "true" && ${has('annotations', keys.createNonce)} && ${has('annotations', keys.attestation)})`,
        message: `Deed stamps a new object whole (${keys.managed}, ${keys.environment}, ${keys.createNonce}, ${keys.attestation}); a mutating admission step after Deed removed part of them`,
        reason: 'Forbidden',
      },
      {
        expression: `variables.controller || size(variables.environments) != 1 || variables.boundElsewhere || (variables.environment == variables.environments[0] && (variables.runnerUid == "" ? !${has('labels', keys.ownerUid)} : ${value('labels', keys.ownerUid)} == variables.runnerUid))`,
        messageExpression: `"Deed stamps a new object with its requester's environment \\"" + variables.environments[0] + "\\" and runner pod; a mutating admission step after Deed changed or removed ${keys.environment} or ${keys.ownerUid}"`,
        reason: 'Forbidden',
      },
      {
        // An environment's pod never carries the runner mark; a pod of no environment carries its service account's environment, or none.
        expression: `variables.podAccount == "" || (variables.environment != "" ? !${has('labels', keys.runner)} : (size(variables.environments) != 0 || variables.runnerMark == variables.runner))`,
        messageExpression: `"Deed marks a runner pod with the environment its service account is mapped to (${keys.runner}: \\"" + variables.runner + "\\"), and no other pod; a mutating admission step after Deed changed, added or removed it"`,
        reason: 'Forbidden',
      },
      ...(forgedIsDenied
        ? [
            {
              expression: `variables.controller || size(variables.environments) != 0 || variables.breakGlass || !(${owned})`,
              message: `[${RULES.stampForged.id}] a requester that acts for no environment cannot set Deed's admission-owned keys (${[...stampedLabelKeys(keys), ...stampedAnnotationKeys(keys)].join(', ')})`,
              reason: 'Forbidden' as const,
            },
          ]
        : []),
    ],
  });
}
