// Every API path that can change or remove a sandbox object, and how the validating
// webhook reaches it (docs/security-model.md, "Every door"), read from the kind table
// (kinds.ts): a path no row names cannot write the object. pods/exec, attach, portforward
// and proxy are CONNECTs to the running containers, pods/log is a read.
import type { AdmissionRequest } from '../admission/types.js';
import { kindRow, sandboxKind, workloadKind, type SandboxKind, type WorkloadKind } from './kinds.js';

export type Door =
  /** The object itself, or a subresource whose review carries the object (status, ephemeralcontainers, resize). */
  | { kind: 'object'; sandboxKind: SandboxKind }
  /** A request that names a pod but carries something else: an Eviction, a Binding. */
  | { kind: 'pod-by-name'; action: 'eviction' | 'binding'; pod: string | undefined }
  /** A kind whose controller makes pods or claims from its templates, for whoever wrote them. */
  | { kind: 'workload'; workload: WorkloadKind }
  /** A TokenRequest: a token of the named service account, handed to the requester. */
  | { kind: 'token-request'; serviceAccount: string | undefined }
  /** A VolumeSnapshot: a copy of the claim it names, which a new claim can restore. */
  | { kind: 'snapshot' }
  | { kind: 'unreviewed' };

const named = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export function doorOf(req: AdmissionRequest): Door {
  if (req.operation === 'CONNECT') return { kind: 'unreviewed' };
  const row = kindRow(req.resource);
  if (row === undefined) return { kind: 'unreviewed' };
  const sub = req.subResource;
  const door = sub === undefined ? row.door : row.subresources?.[sub];
  switch (door) {
    case undefined:
      return { kind: 'unreviewed' };
    case 'pod-by-name':
      // A Binding (pods/binding, or the legacy `bindings` resource, which names the pod in
      // its own name) and an Eviction exist only as CREATEs.
      if (req.operation !== 'CREATE') return { kind: 'unreviewed' };
      if (sub === undefined) return { kind: 'pod-by-name', action: 'binding', pod: named(req.object?.metadata?.name) };
      return { kind: 'pod-by-name', action: sub === 'eviction' ? 'eviction' : 'binding', pod: named(req.name) };
    case 'token-request':
      return req.operation === 'CREATE' ? { kind: 'token-request', serviceAccount: named(req.name) } : { kind: 'unreviewed' };
    case 'snapshot':
      return { kind: 'snapshot' };
    case 'workload':
      return { kind: 'workload', workload: workloadKind(req.resource)! };
    case 'object':
      // The object-carrying subresources are UPDATE-only in the API; any other operation is judged as on the object itself.
      return objectDoor(req);
  }
}

function objectDoor(req: AdmissionRequest): Door {
  const kind = sandboxKind(req.resource);
  return kind === undefined ? { kind: 'unreviewed' } : { kind: 'object', sandboxKind: kind };
}
