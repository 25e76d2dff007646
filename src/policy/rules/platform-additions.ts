// What acts on other namespaces' traffic is the platform's to add: a Service's external IPs
// (external-ips.ts), a Gateway's addresses (gateway-addresses.ts). Which address is whose is
// not in the cluster, so in the review scope only the platform, system controllers and
// break-glass add one; keeping or removing them passes.
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { isPlatform, isTrusted } from '../requester/principals.js';

/**
 * What a CREATE or UPDATE of an object of `kind` itself (no subresource) adds to the values
 * `valuesOf` reads from it, where its requester is none of the platform's, a system controller
 * or break-glass; empty for any other request.
 */
export function addedByNonPlatform(req: AdmissionRequest, requester: Requester, policy: Policy, kind: { group: string; resource: string }, valuesOf: (obj: KubeObject | null | undefined) => string[]): string[] {
  if (req.resource.group !== kind.group || req.resource.resource !== kind.resource || req.subResource !== undefined) return [];
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return [];
  const before = new Set(req.operation === 'UPDATE' ? valuesOf(req.oldObject) : []);
  const added = valuesOf(req.object).filter((v) => !before.has(v));
  return added.length === 0 || isTrusted(requester, policy) || isPlatform(requester, policy) ? [] : added;
}
