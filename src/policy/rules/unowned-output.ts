// guard.unowned-output: what an operator makes for an environment's object is stamped as that
// environment's only through the owner reference that ties it to the object (controller-made.ts:
// a listed operator's Secret is its controlling owner's environment's). An ExternalSecret with
// `creationPolicy: Orphan` has its target written with none, and an ACME Issuer that lets
// cert-manager generate its account key has that key written with none, so the Secret, holding
// what the environment fetched or its ACME account, is of no environment: the platform's to
// every door, and every environment's pods in a shared namespace may mount it. So an
// environment may not ask for such output outside a namespace bound to it; which fields and
// values do is the kind table's `unownedOutputWhen` (kinds.ts). An UPDATE that changes no spec
// asks for nothing new. A requester of no environment may write unstamped objects itself, and
// is not judged here.
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionRequest } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { unownedOutputOf } from '../kinds.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { valuesAt } from '../unstructured.js';
import { RULES } from './catalog.js';
import { environmentWriteOutsideBinding } from './written-object.js';

export function unownedOutput(req: AdmissionRequest, namespace: string, requester: Requester, policy: Policy): Finding[] {
  const asks = unownedOutputOf(req.resource);
  if (asks === undefined) return [];
  const write = environmentWriteOutsideBinding(req, namespace, requester, policy);
  if (write === undefined) return [];
  if (asks.within !== undefined && valuesAt(write.object, asks.within).length === 0) return [];
  const asked = valuesAt(write.object, asks.path)[0]?.value;
  if (!asks.values.includes(asked)) return [];
  // An UPDATE that leaves the spec as it was (a GitOps re-apply, a label change of an object admitted before this rule) asks for nothing new.
  if (req.operation === 'UPDATE' && isDeepStrictEqual(write.object.spec, req.oldObject?.spec)) return [];
  return [
    {
      rule: RULES.guardUnownedOutput.id,
      path: asks.path,
      message: `${requester.username} may not ${write.verb} ${write.what} with ${asks.path} ${asked === undefined ? 'unset' : String(asked)}: ${asks.output} with no owner reference, so of no environment, for every environment's pods in ${namespace} to read; ${asks.fix}, or use a namespace bound to your environment`,
    },
  ];
}
