// template.host-network: host networking is a grant of the environment
// (`environments[].grants.hostNetwork`), refused without it, wherever a pod spec stands.
import { field } from '../unstructured.js';
import { rule } from '../rules/rule-info.js';
import type { Rule } from '../rules/rule.js';
import type { PodSpecSubject } from './pod-spec-subject.js';

export const TEMPLATE_HOST_NETWORK = rule({
    id: 'template.host-network',
    webhook: 'validate',
    checks:
      "A sandbox pod (or a workload's pod template) uses the host network namespace only when its environment is granted it (`environments[].grants.hostNetwork`, default false). Judged wherever a pod spec stands: pods, every workload template, and `deed audit`.",
    defaultMode: 'deny',
    overridable: true,
    example: 'environment "alpha" is not granted host networking (environments[].grants.hostNetwork)',
  });

export const hostNetworkRule: Rule<PodSpecSubject> = {
  info: [TEMPLATE_HOST_NETWORK],
  when: (facts) => facts.environment !== undefined,
  check: ({ spec, at }, { policy, environment }) => {
    if (field(spec, 'hostNetwork') !== true) return [];
    if (policy.config.environments.find((e) => e.id === environment)?.grants.hostNetwork === true) return [];
    return [{ rule: TEMPLATE_HOST_NETWORK.id, path: `${at}.hostNetwork`, message: `environment "${environment}" is not granted host networking (environments[].grants.hostNetwork)` }];
  },
};
