// reference.*: what an object points at is its writer's to use (docs/security-model.md,
// "What an object points at"). A HorizontalPodAutoscaler's target is scaled by the HPA
// controller, an Ingress backend published by the ingress controller, an EndpointSlice's
// Service routed to by kube-proxy, an object's controller counts, adopts and deletes what
// names it as controller: each acts later, unreviewed, for whoever wrote the reference. So
// every reference the kind table lists (object-references.ts), and the controlling owner
// reference of any object, names only an object of an environment its writer acts for (or
// of none, when it acts for none): judged at CREATE, and on UPDATE for what the UPDATE adds
// or changes (a change of controller is guard.adoption's). Whose the named object is comes
// from its verified stamps, as for the Secrets a pod names (pod/reference-owner.ts).
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { controllerOf, environmentOfController, ownerLookupKey } from '../controller-made.js';
import { changedReferences, MAX_REFERENCE_READS, objectReferences, readableRow, type ObjectReference } from '../object-references.js';
import { judgeReference, whoMayNot, type Reach } from '../pod/reference-owner.js';
import type { DecisionContext, Policy } from '../policy.js';
import { environmentId, type Requester } from '../requester/identity.js';
import { actsFor, isPlatform, isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';

/** Whether the references `requester` writes are judged: the platform's and trusted principals' are not (the read plan asks too). */
export function judgesReferencesOf(requester: Requester, policy: Policy): boolean {
  return !isTrusted(requester, policy) && !isPlatform(requester, policy);
}

/** The findings of a write of an object itself (not a subresource) by `requester`. */
export function referenceScope(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  if (req.subResource !== undefined || !judgesReferencesOf(requester, ctx.policy)) return [];
  const reach: Reach = { requester, environment: environmentId(requester) };
  if (req.operation === 'CREATE') return [...tableReferences(objectReferences(req.resource, req.object), namespace, reach, ctx), ...controllerReference(req.object, namespace, reach, ctx)];
  if (req.operation === 'UPDATE') return tableReferences(changedReferences(req.resource, req.oldObject, req.object), namespace, reach, ctx);
  return [];
}

function tableReferences(refs: ObjectReference[], namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const findings: Finding[] = [];
  const judged = new Set<string>();
  for (const ref of refs) {
    const what = `${ref.kind} ${ref.name}`;
    const key = `${ref.group}/${what}`;
    if (judged.has(key)) continue;
    judged.add(key);
    const row = readableRow(ref.group, ref.kind);
    if (row === undefined) {
      const group = ref.group === '' ? '' : ` (${ref.group})`;
      findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `names ${what}${group}, a kind Deed does not read, so whose it is cannot be known (${ref.follower}); only the platform's principals may write this reference` });
      continue;
    }
    if (judged.size > MAX_REFERENCE_READS) {
      findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `names more than ${MAX_REFERENCE_READS} objects; Deed reads at most that many for one object, so whose ${what} is was not read` });
      continue;
    }
    const verdict = judgeReference(ctx.lookup.get(row.resource as Parameters<DecisionContext['lookup']['get']>[0], namespace, ref.name), row.kind, namespace, reach, ctx);
    if (verdict.kind === 'allowed') continue;
    if (verdict.kind === 'unknown') findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `cannot tell which environment ${what} belongs to: ${verdict.reason}` });
    else if (verdict.kind === 'unverifiable')
      findings.push({ rule: RULES.referenceUnknown.id, path: ref.path, message: `${what} carries Deed's stamps but they do not verify (${verdict.reason}), so its environment is unknown` });
    else if (verdict.kind === 'absent')
      findings.push({ rule: RULES.referenceAbsent.id, path: ref.path, message: `names ${what}, which does not exist; create it first, or one another environment creates under that name later would be acted on (${ref.follower})` });
    else findings.push({ rule: RULES.referenceCrossEnvironment.id, path: ref.path, message: `names ${what}, which belongs to another environment (${ref.follower}); ${whoMayNot(reach)}` });
  }
  return findings;
}

/**
 * The controlling owner reference a client writes at CREATE. One that names no object that
 * exists (gone, or another uid) is left to the garbage collector, which collects the new
 * object; no controller counts it. An owner of a kind Deed does not read (an operator's
 * custom resource, whose operator makes its own pods) is its operator's to judge.
 */
function controllerReference(obj: KubeObject | null | undefined, namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const ref = controllerOf(obj);
  const key = ownerLookupKey(ref, namespace);
  if (ref === undefined || key === undefined) return [];
  const found = ctx.lookup.get(key.resource, namespace, ref.name);
  if (found.state === 'absent' || (found.state === 'found' && found.metadata.uid !== undefined && found.metadata.uid !== ref.uid)) return [];
  const owner = environmentOfController(ref, namespace, 'this object', ctx, RULES.referenceUnknown.id);
  if ('finding' in owner) return [{ ...owner.finding, path: 'metadata.ownerReferences' }];
  const environment = owner.environment;
  if (environment === reach.environment || (environment !== undefined && actsFor(reach.requester, environment, ctx.policy))) return [];
  return [
    {
      rule: RULES.referenceCrossEnvironment.id,
      path: 'metadata.ownerReferences',
      message: `the controller reference names ${ref.kind} ${namespace}/${ref.name}, which belongs to ${environment === undefined ? 'no environment' : 'another environment'} (its controller would count, adopt or delete this object as its own); ${whoMayNot(reach)}; drop the reference`,
    },
  ];
}
