// Facts about other objects a decision needs: the pod an eviction or a binding names.
// Which objects a review needs is decided here, purely; the server reads them (with a
// deadline) before deciding, so the decision itself stays free of I/O.
import { decodeReview } from '../admission/decode.js';
import type { AdmissionRequest } from '../admission/types.js';
import { doorOf } from './doors.js';
import type { Lookup, ObjectLookup } from './policy.js';

export type LookupResource = 'pods' | 'persistentvolumeclaims';

export interface LookupKey {
  resource: LookupResource;
  namespace: string;
  name: string;
}

export function lookupKey(k: LookupKey): string {
  return `${k.resource}/${k.namespace}/${k.name}`;
}

/** The objects a review's decision reads besides the request itself. */
export function lookupsNeeded(req: AdmissionRequest): LookupKey[] {
  const door = doorOf(req);
  if (door.kind === 'pod-by-name' && door.pod !== undefined && req.namespace !== undefined) return [{ resource: 'pods', namespace: req.namespace, name: door.pod }];
  return [];
}

/**
 * The lookups for a raw review body, as the server sees it before deciding. Most reviews
 * need none, and are told apart by a glance at two fields, without decoding them twice.
 */
export function lookupsForBody(body: unknown): LookupKey[] {
  const req = (body as { request?: { resource?: { resource?: unknown }; subResource?: unknown } } | null)?.request;
  const mayNeed = req?.resource?.resource === 'bindings' || req?.subResource === 'eviction' || req?.subResource === 'binding';
  if (!mayNeed) return [];
  const decoded = decodeReview(body);
  return decoded.ok ? lookupsNeeded(decoded.request) : [];
}

/** Answers from facts gathered beforehand; anything not gathered is unknown, with `reason`. */
export function gatheredLookup(facts: ReadonlyMap<string, Lookup>, reason: string): ObjectLookup {
  return {
    get(resource, namespace, name) {
      return facts.get(lookupKey({ resource, namespace, name })) ?? { state: 'unknown', reason };
    },
  };
}

/** For decisions made with no cluster to ask (local runs without credentials, tests). */
export function noLookup(reason: string): ObjectLookup {
  return gatheredLookup(new Map(), reason);
}
