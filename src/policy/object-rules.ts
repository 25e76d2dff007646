// Per-kind checks of an object's content (a sandbox pod's spec rules, PVC ownership, token
// Secrets, well-known ConfigMap names): what the object door judges of a stamped object it
// admits (doors/object.ts), and what `deed audit` judges of stored objects (src/audit/judge.ts).
import { entryOf, isRec, type Rec } from './unstructured.js';
import type { KubeObject } from '../admission/types.js';
import type { Finding } from '../admission/verdict.js';
import type { DecisionContext } from './policy.js';
import { RULES } from './rules/catalog.js';
import type { SandboxKind } from './kinds.js';
import type { Facts } from './rules/rule.js';
import { sandboxPodFindings, workspaceRule, type PodSpecSubject } from './pod/sandbox-pod-rules.js';
import { SERVICE_ACCOUNT_NAME, SERVICE_ACCOUNT_TOKEN_TYPE } from './rules/service-account-guard.js';
import { annotationPath } from './stamps/identity-stamps.js';
import { wellKnownConfigMap } from './rules/well-known-configmap.js';

/**
 * Per-kind checks of an object's content: a sandbox pod's spec rules (SANDBOX_POD_RULES),
 * PVC ownership, token Secrets. `deed audit` judges stored objects with them too.
 */
export function objectRules(
  obj: KubeObject,
  kind: SandboxKind,
  ctx: DecisionContext,
  facts: Facts,
  wsClaims: ReadonlySet<string> = new Set(),
  source: PodSpecSubject['source'] = { kind: 'Pod', controller: false, ownsRestartPolicy: false },
): Finding[] {
  if (kind.kind === 'PersistentVolumeClaim') {
    const podOwner = (obj.metadata.ownerReferences ?? []).find((r) => r.kind === 'Pod' && r.apiVersion === 'v1');
    return podOwner
      ? [{ rule: RULES.pvcPodOwner.id, path: 'metadata.ownerReferences', message: `an owner reference to pod ${podOwner.name} would let the garbage collector delete this claim` }]
      : [];
  }
  if (kind.kind === 'Secret') {
    if (obj.type !== SERVICE_ACCOUNT_TOKEN_TYPE) return [];
    const account = entryOf(obj.metadata.annotations ?? {}, SERVICE_ACCOUNT_NAME);
    return [
      {
        rule: RULES.secretServiceAccountToken.id,
        path: 'type',
        message: `a Secret of type ${SERVICE_ACCOUNT_TOKEN_TYPE} would receive a non-expiring token of service account ${account === undefined ? '(none named)' : JSON.stringify(account.slice(0, 80))}`,
      },
    ];
  }
  if (kind.kind === 'ConfigMap') return facts.environment === undefined ? [] : wellKnownConfigMap(obj, facts.environment, ctx.policy);
  if (kind.kind !== 'Pod' || !isRec(obj.spec)) return []; // a hostile body's `spec: null` is no spec, not a crash
  return sandboxPodFindings(podSpecSubject(obj, obj.spec, ctx, wsClaims, source), facts);
}

/** A Pod's own spec as the pod rules judge it. */
function podSpecSubject(
  obj: KubeObject,
  spec: Rec,
  ctx: DecisionContext,
  wsClaims: ReadonlySet<string>,
  source: PodSpecSubject['source'] = { kind: 'Pod', controller: false, ownsRestartPolicy: false },
): PodSpecSubject {
  const { keys } = ctx.policy;
  return {
    spec,
    at: 'spec',
    source,
    podName: obj.metadata.name,
    grants: { value: entryOf(obj.metadata.annotations ?? {}, keys.workspaceGrants), path: annotationPath(keys.workspaceGrants) },
    workspaceClaims: wsClaims,
  };
}

/** The workspace rules alone, for a pod of a requester acting for no environment that mounts a workspace. */
export function podWorkspace(obj: KubeObject, spec: Rec, ctx: DecisionContext, wsClaims: ReadonlySet<string>): Finding[] {
  return workspaceRule.check(podSpecSubject(obj, spec, ctx, wsClaims), { policy: ctx.policy, namespace: obj.metadata.namespace ?? '', environment: undefined });
}
