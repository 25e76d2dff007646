// Whether the API server would call one of Deed's webhooks for a request, by the rules the
// install renders into the webhook configurations. A kind no rule names never reaches Deed,
// so `deed review` says it is not judged instead of reporting it "allowed".
import { isDeepStrictEqual } from 'node:util';
import type { V1RuleWithOperations } from '@kubernetes/client-node';
import type { Webhook } from '../admission/decide.js';
import type { AdmissionRequest } from '../admission/types.js';
import { createJudgedAtMutationRules, defaultRowExcluded, defaultRowRules, keptStampsRules, mutatingRules, operatorStampsRules, validatingRules } from '../install/kind-rules.js';
import type { Policy } from '../policy/policy.js';
import { dropsEveryStamp } from '../policy/stamps/kept-stamps.js';
import { VOLUME_BINDER } from '../policy/rules/claim-binding.js';
import { entryOf, isRec, text } from '../policy/unstructured.js';

// `deed review` models the two-call pair: its validate step judges the CREATEs the install's mutating webhooks judge whole.
const FIRST_PAIR: Readonly<Record<Webhook, V1RuleWithOperations[]>> = {
  mutate: mutatingRules(),
  validate: [...validatingRules(), ...createJudgedAtMutationRules()],
  admit: mutatingRules(),
};

// The default row's pair (`default.*.deed.dev`), whose matchCondition leaves out the first pair's kinds and the exceptions.
const DEFAULT_ROW: Readonly<Record<Webhook, V1RuleWithOperations[]>> = {
  mutate: defaultRowRules('mutating'),
  validate: [...defaultRowRules('mutating'), ...defaultRowRules('validating')],
  admit: defaultRowRules('mutating'),
};
const DEFAULT_ROW_EXCLUDED = new Set(defaultRowExcluded());

function matches(values: string[] | undefined, value: string): boolean {
  return values !== undefined && (values.includes('*') || values.includes(value));
}

function named(rules: V1RuleWithOperations[], req: Pick<AdmissionRequest, 'operation' | 'resource' | 'subResource'>): boolean {
  const { group, resource } = req.resource;
  const sub = req.subResource;
  const names = sub === undefined ? [resource] : [`${resource}/${sub}`, `${resource}/*`, `*/${sub}`];
  return rules.some(
    (rule) => matches(rule.operations, req.operation) && matches(rule.apiGroups, group) && (rule.resources ?? []).some((r) => (r === '*' ? sub === undefined : names.includes(r))),
  );
}

type Routed = Pick<AdmissionRequest, 'operation' | 'resource' | 'subResource' | 'namespace' | 'object' | 'oldObject' | 'userInfo'>;

/**
 * The mutating webhooks that see only some UPDATEs of an environment's object, by their
 * matchConditions (install/manifests.ts): `stamps.mutate.deed.dev` one that drops every stamp
 * (`kubectl replace -f`), `operator-stamps.mutate.deed.dev` a listed controller's of what it made.
 */
function keptStampsRouted(req: Routed, policy: Policy): boolean {
  const { oldObject: old, object } = req;
  if (req.operation !== 'UPDATE' || req.namespace === undefined || !old || !object) return false;
  if (named(keptStampsRules(), req) && dropsEveryStamp(old, object, policy.keys)) return true;
  return policy.controllerUsers.has(req.userInfo.username) && named(operatorStampsRules(), req) && entryOf(old.metadata.labels ?? {}, policy.keys.managed) !== undefined;
}

/**
 * Every webhook's matchCondition `exclude-kube-system-service-accounts` (install/manifests.ts
 * kubeSystemExclusion): kube-system's service accounts reach Deed only for the listed workload
 * controllers' creations and changes of owner references, and the volume binder's binding of
 * a claim filled from a data source.
 */
export function sentFromKubeSystem(req: Routed, policy: Policy): boolean {
  if (!req.userInfo.groups.includes('system:serviceaccounts:kube-system')) return true;
  const onObject = req.subResource === undefined || req.subResource === '';
  const refs = (o: Routed['object']) => o?.metadata.ownerReferences ?? [];
  if (policy.controllerUsers.has(req.userInfo.username) && onObject && (req.operation === 'CREATE' || (req.operation === 'UPDATE' && !isDeepStrictEqual(refs(req.object), refs(req.oldObject))))) return true;
  const spec = (o: Routed['object']) => (isRec(o?.spec) ? o.spec : {});
  const { object, oldObject } = req;
  return (
    req.userInfo.username === VOLUME_BINDER &&
    req.resource.group === '' &&
    req.resource.resource === 'persistentvolumeclaims' &&
    req.operation === 'UPDATE' &&
    onObject &&
    (spec(object).dataSource !== undefined || spec(object).dataSourceRef !== undefined) &&
    (text(spec(object), 'volumeName') ?? '') !== '' &&
    (text(spec(oldObject), 'volumeName') ?? '') === ''
  );
}

/** Versions are not compared: the configurations use `matchPolicy: Equivalent`. The default row's rules are `scope: Namespaced`. */
export function routedTo(webhook: Webhook, req: Routed, policy: Policy): boolean {
  if (!sentFromKubeSystem(req, policy)) return false;
  if (named(FIRST_PAIR[webhook], req)) return true;
  if (webhook !== 'validate' && keptStampsRouted(req, policy)) return true;
  return req.namespace !== undefined && !DEFAULT_ROW_EXCLUDED.has(`${req.resource.group}/${req.resource.resource}`) && named(DEFAULT_ROW[webhook], req);
}
