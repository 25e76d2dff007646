// guard.unowned-output: what an operator makes for an environment's object is stamped as that
// environment's only through the owner reference that ties it to the object (controller-made.ts:
// a listed operator's Secret is its controlling owner's environment's). An ExternalSecret with
// `creationPolicy: Orphan` has its target written with none, so the Secret, holding what the
// environment fetched, is of no environment: the platform's to every door, and every
// environment's pods in a shared namespace may mount it. So an environment may not ask for such
// output outside a namespace bound to it; which fields and values do is the kind table's
// `unownedOutputWhen` (kinds.ts). A requester of no environment may write unstamped objects
// itself, and is not judged here.
import type { AdmissionRequest } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { unownedOutputOf } from '../kinds.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { valuesAt } from '../unstructured.js';
import { RULES } from './catalog.js';
import { writeVerb, writtenName } from './written-object.js';

export function unownedOutput(req: AdmissionRequest, namespace: string, requester: Requester, policy: Policy): Finding[] {
  const asks = unownedOutputOf(req.resource);
  const env = requester.environment;
  if (asks === undefined || env.kind !== 'one' || req.subResource !== undefined || !req.object) return [];
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return [];
  if (policy.envByBoundNamespace.get(namespace) === env.id) return [];
  const value = (obj: unknown) => valuesAt(obj, asks.path)[0]?.value;
  const asked = value(req.object);
  // An UPDATE that leaves the field as it was (a GitOps re-apply of an object admitted before this rule) is not a new ask.
  if (typeof asked !== 'string' || !asks.values.includes(asked) || (req.operation === 'UPDATE' && value(req.oldObject) === asked)) return [];
  const what = `${req.kind.kind} ${namespace}/${writtenName(req) ?? req.object.metadata.generateName ?? ''}`;
  return [
    {
      rule: RULES.guardUnownedOutput.id,
      path: asks.path,
      message: `${requester.username} may not ${writeVerb(req)} ${what} with ${asks.path} ${asked}: ${asks.output} with no owner reference, so of no environment, for every environment's pods in ${namespace} to read; ${asks.fix}, or use a namespace bound to your environment`,
    },
  ];
}
