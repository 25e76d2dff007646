// Facts about other objects a decision needs: the pod an eviction or a binding names, the
// claims a new pod mounts or clones (or a new claim clones). Which objects a review needs
// is decided here, purely; the server reads them (with a deadline) before deciding, so the
// decision itself stays free of I/O.
import { decodeReview, type Decoded } from '../admission/decode.js';
import type { AdmissionRequest } from '../admission/types.js';
import { doorOf } from './doors.js';
import { isRec } from './pod/spec.js';
import { podClaims, pvcClaims } from './pod/claim-environment.js';
import type { Lookup, ObjectLookup } from './policy.js';

export type LookupResource = 'pods' | 'persistentvolumeclaims' | 'secrets';

export interface LookupKey {
  resource: LookupResource;
  namespace: string;
  name: string;
}

export function lookupKey(k: LookupKey): string {
  return `${k.resource}/${k.namespace}/${k.name}`;
}

/**
 * At most this many claims are read for one review: a pod that names more is refused for
 * the rest (their environment stays unknown) rather than fanning out without bound.
 */
export const MAX_CLAIM_LOOKUPS = 32;

/** The objects a review's decision reads besides the request itself (the mutating side reads none for claims). */
export function lookupsNeeded(req: AdmissionRequest, webhook: 'mutate' | 'validate' = 'validate'): LookupKey[] {
  const door = doorOf(req);
  const namespace = req.namespace;
  if (namespace === undefined) return [];
  if (door.kind === 'pod-by-name' && door.pod !== undefined) return [{ resource: 'pods', namespace, name: door.pod }];
  // Volumes and data sources are fixed at CREATE: only then are the claims they name judged.
  if (webhook === 'validate' && door.kind === 'object' && req.operation === 'CREATE' && req.subResource === undefined && req.object) {
    const kind = door.sandboxKind.kind;
    const refs = kind === 'Pod' && isRec(req.object.spec) ? podClaims(req.object.spec) : kind === 'PersistentVolumeClaim' ? pvcClaims(req.object) : [];
    return [...new Set(refs.map((r) => r.claim))].slice(0, MAX_CLAIM_LOOKUPS).map((name) => ({ resource: 'persistentvolumeclaims', namespace, name }));
  }
  return [];
}

/**
 * The lookups for a raw review body, as the server sees it before deciding, and the body
 * decoded when that took decoding (decide() then reuses it). Most reviews need none, and
 * are told apart by a glance at a few fields, without decoding.
 */
export function planLookups(body: unknown, webhook: 'mutate' | 'validate' = 'validate'): { lookups: LookupKey[]; decoded?: Decoded } {
  const req = (body as { request?: { resource?: { resource?: unknown }; subResource?: unknown; operation?: unknown } } | null)?.request;
  const resource = req?.resource?.resource;
  const mayNeed =
    resource === 'bindings' ||
    req?.subResource === 'eviction' ||
    req?.subResource === 'binding' ||
    (webhook === 'validate' && req?.operation === 'CREATE' && req.subResource === undefined && (resource === 'pods' || resource === 'persistentvolumeclaims'));
  if (!mayNeed) return { lookups: [] };
  let decoded: Decoded;
  try {
    decoded = decodeReview(body);
  } catch {
    return { lookups: [] }; // decide() decodes again and answers the fault with the uid
  }
  return { lookups: decoded.ok ? lookupsNeeded(decoded.request, webhook) : [], decoded };
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
