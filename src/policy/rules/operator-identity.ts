// guard.operator-identity: an operator that authenticates for the objects it reconciles falls
// back to its own identity where the object names no credential: External Secrets' Vault
// Kubernetes auth reads the controller's own service account token and sends it to the store's
// server, its AWS, GCP and Azure providers sign in as the controller (its IRSA or Pod Identity
// role, its Application Default Credentials, its managed identity), KEDA's HashiCorp Vault
// authentication sends the KEDA operator's own token to the TriggerAuthentication's address,
// and an Argo Rollouts analysis's New Relic or CloudWatch metric queries with the controller's
// credentials. That identity is the operator's, granted for every environment and the
// platform: a server of the writer's choosing receives a token that acts as the operator, and
// a cloud secret manager or metrics account hands over whatever the operator may read. So only
// the platform's principals may write such a configuration; everyone else names a credential
// of their own (a service account of the namespace, a Secret). Which configurations fall
// back is the kind table's `operatorIdentity` (kinds.ts). A configuration an UPDATE leaves as it
// was is not a new one (an object stored before this rule keeps passing until it changes).
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { kindRow, type OperatorIdentityUse } from '../kinds.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { isPlatform, isTrusted } from '../requester/principals.js';
import { valuesAt } from '../unstructured.js';
import { RULES } from './catalog.js';
import { writeVerb, writtenName } from './written-object.js';

export function operatorIdentity(req: AdmissionRequest, namespace: string, requester: Requester, policy: Policy): Finding[] {
  const uses = kindRow(req.resource)?.operatorIdentity;
  if (uses === undefined || req.subResource !== undefined || !req.object || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return [];
  if (isPlatform(requester, policy) || isTrusted(requester, policy)) return [];
  // A GitOps re-apply, or a label change of an object stored before this rule, asks for nothing new.
  const stored = req.operation === 'UPDATE' ? (req.oldObject ?? undefined) : undefined;
  return operatorIdentityUses(req.object, uses, stored).map(({ at, use }) => ({
    rule: RULES.guardOperatorIdentity.id,
    path: at,
    message: `${requester.username} may not ${writeVerb(req)} ${req.kind.kind} ${namespace}/${writtenName(req) ?? req.object!.metadata.generateName ?? ''} with ${at} as written: ${use.identity}, which acts for every environment and the platform; ${use.fix} (only the platform's principals may have the operator use its own)`,
  }));
}

/**
 * Each place in `object` where a configuration of `uses` has the operator sign in as itself
 * (every one of an analysis's metrics), but those `stored` holds as they are: what the rule
 * refuses at a write, and what `deed audit` reports on an object stored before it.
 */
export function operatorIdentityUses(object: KubeObject, uses: readonly OperatorIdentityUse[], stored?: KubeObject): Array<{ at: string; use: OperatorIdentityUse }> {
  const found: Array<{ at: string; use: OperatorIdentityUse }> = [];
  for (const use of uses) {
    const before = stored !== undefined ? new Map(valuesAt(stored, use.within).map((v) => [v.at, v.value])) : undefined;
    for (const { value, at } of valuesAt(object, use.within)) {
      if (value === null) continue; // null is absent to the operator (a nil pointer)
      if (use.when !== undefined && !use.when.values.includes(valuesAt(value, use.when.path)[0]?.value)) continue;
      if (use.unless?.some((path) => valuesAt(value, path).some((v) => given(v.value))) === true) continue;
      if (before !== undefined && isDeepStrictEqual(before.get(at), value)) continue;
      found.push({ at, use });
    }
  }
  return found;
}

/** Whether a credential field names something: an empty string or object is as good as absent (KEDA takes `serviceAccountName: ""` for unset, and falls back). */
function given(value: unknown): boolean {
  if (typeof value === 'string') return value !== '';
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === 'object') return Object.keys(value).length > 0;
  return value !== undefined && value !== null && value !== false;
}
