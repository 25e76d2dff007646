// A kind Deed has never heard of is no way around it (docs/security-model.md, "The default
// row"): every namespaced kind written in the review scope that has no row of its own (a
// lab's KubeVirt VirtualMachine, a Tekton PipelineRun, a Service, a ConfigMap) gets the
// environment's stamps at CREATE from one default row (no owner reference: whether an
// unknown kind may be collected with a runner pod is not Deed's to guess; no deadline), and
// its UPDATE, DELETE and status writes are guarded and its stamps frozen, as for the four
// kinds. The exceptions are few, each with its reason; the install's second pair of
// webhooks (`default.*.deed.dev`) is built from them.
import type { AdmissionRequest } from '../admission/types.js';
import type { StampRow } from './kinds.js';

export interface DefaultRowException {
  group: string;
  resource: string;
  reason: string;
}

/** What the default row leaves alone. Writes by kube-system's controllers never reach Deed at all (the webhooks' matchConditions). */
export const DEFAULT_ROW_EXCEPTIONS: readonly DefaultRowException[] = [
  { group: '', resource: 'events', reason: 'written by every component, many a second, and stored only for an hour: a record, not a lab; a stalled event write slows its writer' },
  { group: 'events.k8s.io', resource: 'events', reason: 'the same events through their own API group' },
  { group: 'coordination.k8s.io', resource: 'leases', reason: 'leader election and heartbeats of controllers and agents, renewed every few seconds: a lease held up by a webhook makes its holder give up leadership' },
  { group: 'authorization.k8s.io', resource: 'localsubjectaccessreviews', reason: 'a question to the authorizer, never stored' },
  // `deed audit --write-reports` replaces one report per namespace, bound namespaces included, as a principal of no environment.
  { group: 'wgpolicyk8s.io', resource: 'policyreports', reason: "findings written by policy tools (Deed's own audit among them): a record of the namespace, not a lab" },
  { group: 'openreports.io', resource: 'reports', reason: 'the same reports through the openreports API' },
];

/** The row of a kind that has none of its own: stamped and guarded, never owned by the runner pod. */
export function defaultRow(kind: string): StampRow {
  return { kind, ownerReference: false, activeDeadline: false, expiresAt: false };
}

/**
 * The default row's door for a request that no other door took: the object itself, or its
 * status (whose review carries the whole object, of the same kind). Another subresource
 * (a custom resource's /scale carries a Scale, without the object's stamps) is not judged:
 * the webhooks do not route it here.
 */
export function defaultRowDoor(req: AdmissionRequest): StampRow | undefined {
  if (isException(req.resource.group, req.resource.resource)) return undefined;
  const kind = req.kind.kind;
  if (typeof kind !== 'string' || kind === '') return undefined;
  if (req.subResource === undefined) return defaultRow(kind);
  if (req.subResource === 'status' && req.operation === 'UPDATE' && req.object?.kind === kind) return defaultRow(kind);
  return undefined;
}

export function isException(group: string, resource: string): boolean {
  return DEFAULT_ROW_EXCEPTIONS.some((e) => e.group === group && e.resource === resource);
}
