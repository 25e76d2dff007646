// guard.operator-pods: a custom resource whose operator makes workloads from a pod template it
// holds (an Argo Rollout's `spec.template`, an Argo Experiment's templates and an analysis's
// job metrics, a KEDA ScaledJob's `spec.jobTargetRef.template`) runs its writer's code in pods
// Deed cannot give the writer's environment: the operator creates the ReplicaSets or Jobs as
// a principal of its own, so nothing the cluster records
// ties them to the environment, and their pods are of no environment. Such pods carry none of
// the environment's restrictions: not its sandbox template (a service account token, any
// command), not the NetworkPolicies that select its label, not the pod rules Deed applies to
// its pods. So an environment may not write such a template outside a namespace bound to it,
// where every pod is of that environment and judged as one. Which kinds do is the kind table's
// `operatorPods` (kinds.ts). A requester of no environment makes pods of no environment
// itself, and is not judged here; a template an UPDATE leaves as it was is not a new one.
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionRequest } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { kindRow } from '../kinds.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { valuesAt } from '../unstructured.js';
import { RULES } from './catalog.js';
import { environmentWriteOutsideBinding } from './written-object.js';

export function operatorPods(req: AdmissionRequest, namespace: string, requester: Requester, policy: Policy): Finding[] {
  const row = kindRow(req.resource);
  const runs = row?.operatorPods;
  const specPaths = row?.podSpecs;
  if (runs === undefined || specPaths === undefined) return [];
  const write = environmentWriteOutsideBinding(req, namespace, requester, policy);
  if (write === undefined) return [];
  return specPaths.flatMap((path) => {
    const specs = valuesAt(write.object, path);
    if (specs.length === 0) return [];
    // The whole template: its metadata (labels, annotations) is the pods' too.
    const template = path.replace(/\.spec$/, '');
    if (req.operation === 'UPDATE' && isDeepStrictEqual(valuesAt(write.object, template).map((s) => s.value), valuesAt(req.oldObject, template).map((s) => s.value))) return [];
    return [
      {
        rule: RULES.guardOperatorPods.id,
        path: specs[0]!.at,
        message: `${requester.username} may not ${write.verb} ${write.what} with a pod spec: ${runs.operator} from it as a principal of its own, so their pods would be of no environment, outside your environment's sandbox template and rules; use ${runs.instead}, whose pods Deed stamps and judges as your environment's, or a namespace bound to your environment`,
      },
    ];
  });
}
