// template.priority-class: a pod's PriorityClass decides whom the scheduler evicts to place it
// (preemption deletes lower-priority pods on a full node, another environment's runner and
// sandboxes included, and the garbage collector then deletes what they own), and a class of
// the `system-` range makes it a critical pod the kubelet evicts others for. Naming a class
// needs no RBAC, and critical classes are admitted in every namespace. So a sandbox pod (or a
// workload's template) names a class only when the platform allows it.
import { field } from '../unstructured.js';
import { rule } from '../rules/rule-info.js';
import type { Rule } from '../rules/rule.js';
import type { PodSpecSubject } from './pod-spec-subject.js';

export const TEMPLATE_PRIORITY_CLASS = rule({
  id: 'template.priority-class',
  webhook: 'validate',
  checks:
    "A sandbox pod (or a workload's pod template) names a PriorityClass (`spec.priorityClassName`) only when the policy allows it: one listed in `template.priorityClasses` (any environment's) or in its environment's `environments[].grants.priorityClasses`; none by default. A class of higher priority lets the scheduler preempt (delete) lower-priority pods to place it, another environment's runner and sandboxes included, and a `system-` class makes it a critical pod the kubelet evicts others for; naming a class needs no RBAC. Unset, the pod takes the cluster's default. Judged wherever a pod spec stands: pods, every workload template, and `deed audit`.",
  defaultMode: 'deny',
  overridable: true,
  example:
    'priority class "system-cluster-critical" is not allowed for environment "beta": the scheduler would preempt lower-priority pods to place it, other environments\' included; leave priorityClassName unset, or list it in template.priorityClasses or environments[].grants.priorityClasses',
});

export const priorityClassRule: Rule<PodSpecSubject> = {
  info: [TEMPLATE_PRIORITY_CLASS],
  when: (facts) => facts.environment !== undefined,
  check: ({ spec, at }, { policy, environment }) => {
    const name = field(spec, 'priorityClassName');
    if (name === undefined || name === null || name === '') return [];
    const allowed = [...policy.config.template.priorityClasses, ...(policy.config.environments.find((e) => e.id === environment)?.grants.priorityClasses ?? [])];
    if (typeof name === 'string' && allowed.includes(name)) return [];
    return [
      {
        rule: TEMPLATE_PRIORITY_CLASS.id,
        path: `${at}.priorityClassName`,
        message: `priority class ${JSON.stringify(typeof name === 'string' ? name.slice(0, 253) : name)} is not allowed for environment "${environment}": the scheduler would preempt lower-priority pods to place it, other environments' included; leave priorityClassName unset, or list it in template.priorityClasses or environments[].grants.priorityClasses`,
      },
    ];
  },
};
