// A CronJob's `status.active` lists the Jobs its controller runs, by namespace, name and uid,
// and the cronjob controller acts on the list as it stands: with `concurrencyPolicy: Replace`
// it deletes every Job listed there at the next scheduled time, looked up by namespace and
// name only (no uid, no owner, no namespace check), as kube-system, which no webhook of Deed's
// is sent. So whoever may write `cronjobs/status` (a namespace-admin Role grants it) could
// have the controller delete any Job in any namespace, another environment's in a namespace
// bound to it included, from a namespace Deed does not review. Nothing but the controller
// writes the list: a ValidatingAdmissionPolicy, evaluated in the API server for every
// namespace, refuses any change of it by anyone else, but break-glass (docs/security-model.md,
// "What a controller acts on later").
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import type { Config } from '../config/schema.js';
import { celString, denyingPolicy, requesterIsOneOf } from './admission-policy.js';

export const CRONJOB_ACTIVE_POLICY_SUFFIX = 'cronjob-active';

/** The cronjob controller's identities: its service account (kube-system's), or the controller manager's own without per-controller credentials. */
const CONTROLLERS_GROUP = 'system:serviceaccounts:kube-system';
const CONTROLLER_MANAGER = 'system:kube-controller-manager';

const active = (obj: string) => `has(${obj}.status) && has(${obj}.status.active) ? ${obj}.status.active : []`;

export function cronJobActivePolicy(name: string, config: Config, labels: Record<string, string>): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] {
  const fix = 'only the cronjob controller (kube-system) and break-glass may change it: leave status.active out of the write';
  return denyingPolicy(`${name}-${CRONJOB_ACTIVE_POLICY_SUFFIX}`, labels, {
    matchConstraints: {
      // The main resource's writes keep the stored status (the API server's update strategy): the status subresource alone writes it.
      resourceRules: [{ apiGroups: ['batch'], apiVersions: ['v1'], resources: ['cronjobs/status'], operations: ['UPDATE'] }],
    },
    variables: [
      {
        name: 'controller',
        expression: `request.userInfo.username == ${celString(CONTROLLER_MANAGER)} || (has(request.userInfo.groups) && ${celString(CONTROLLERS_GROUP)} in request.userInfo.groups)`,
      },
      { name: 'breakGlass', expression: requesterIsOneOf(config.breakGlass.users, config.breakGlass.groups) },
      { name: 'unchanged', expression: `(${active('object')}) == (${active('oldObject')})` },
    ],
    validations: [
      {
        expression: 'variables.controller || variables.breakGlass || variables.unchanged',
        message: `a CronJob's status.active names the Jobs its controller deletes at the next run (concurrencyPolicy Replace), in any namespace and by name alone: ${fix}`,
        messageExpression: `"cronjob " + request.namespace + "/" + request.name + ": status.active names the Jobs its controller deletes at the next run (concurrencyPolicy Replace), in any namespace and by name alone: ${fix}"`,
        reason: 'Forbidden',
      },
    ],
  });
}
