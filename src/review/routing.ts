// Whether the API server would call one of Deed's webhooks for a request, by the rules the
// install renders into the webhook configurations. A kind no rule names never reaches Deed,
// so `deed review` says it is not judged instead of reporting it "allowed".
import type { V1RuleWithOperations } from '@kubernetes/client-node';
import type { Webhook } from '../admission/decide.js';
import type { AdmissionRequest } from '../admission/types.js';
import { mutatingRules, validatingRules } from '../install/manifests.js';
import { createJudgedAtMutationRules } from '../install/kind-rules.js';

const RULES: Readonly<Record<Webhook, V1RuleWithOperations[]>> = {
  mutate: mutatingRules(),
  // `deed review` models the two-call pair: its validate step judges the CREATEs the install's mutating webhook judges whole.
  validate: [...validatingRules(), ...createJudgedAtMutationRules()],
  admit: mutatingRules(),
};

function matches(values: string[] | undefined, value: string): boolean {
  return values !== undefined && (values.includes('*') || values.includes(value));
}

/** Versions are not compared: the configurations use `matchPolicy: Equivalent`. */
export function routedTo(webhook: Webhook, req: Pick<AdmissionRequest, 'operation' | 'resource' | 'subResource'>): boolean {
  const { group, resource } = req.resource;
  const sub = req.subResource;
  const names = sub === undefined ? [resource] : [`${resource}/${sub}`, `${resource}/*`, `*/${sub}`];
  return RULES[webhook].some(
    (rule) => matches(rule.operations, req.operation) && matches(rule.apiGroups, group) && (rule.resources ?? []).some((r) => r === '*' ? sub === undefined : names.includes(r)),
  );
}
