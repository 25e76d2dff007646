// What a write does to its object and which object it names, in the words a refusal uses:
// shared by the rules that judge a kind's writes whatever their door (namespace-wide.ts,
// mapped-account.ts, unowned-output.ts, operator-pods.ts).
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';

const VERBS: Readonly<Record<string, string>> = { CREATE: 'create', UPDATE: 'change', DELETE: 'delete' };

/** The verb of a write ("create", "change", "delete"); undefined for anything else (a CONNECT). */
export function writeVerb(req: AdmissionRequest): string | undefined {
  return VERBS[req.operation];
}

/** The name the write's object has: the request's, else the object's (a DELETE carries only the old one); undefined before the API server gives a generateName'd object one. */
export function writtenName(req: AdmissionRequest): string | undefined {
  if (req.name !== undefined && req.name !== '') return req.name;
  const name = (req.object ?? req.oldObject)?.metadata.name;
  return name === '' ? undefined : name;
}

/**
 * An environment's CREATE or UPDATE of an object itself (no subresource) outside a namespace
 * bound to that environment: what the rules on what an environment asks an operator for judge
 * (unowned-output.ts, operator-pods.ts). Undefined for any other write or requester.
 */
export function environmentWriteOutsideBinding(req: AdmissionRequest, namespace: string, requester: Requester, policy: Policy): { object: KubeObject; verb: string; what: string } | undefined {
  const env = requester.environment;
  if (env.kind !== 'one' || req.subResource !== undefined || !req.object || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return undefined;
  if (policy.envByBoundNamespace.get(namespace) === env.id) return undefined;
  return { object: req.object, verb: writeVerb(req)!, what: `${req.kind.kind} ${namespace}/${writtenName(req) ?? req.object.metadata.generateName ?? ''}` };
}
