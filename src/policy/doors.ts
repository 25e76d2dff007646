// Every API path that can change or remove a sandbox object, and how the validating
// webhook reaches it (docs/security-model.md, "Every door"). A path not named here cannot write the
// object: pods/exec, attach, portforward and proxy are CONNECTs to the running
// containers, pods/log is a read.
import type { AdmissionRequest } from '../admission/types.js';
import { sandboxKind, type SandboxKind, type StampRow } from './kinds.js';
import { defaultRowDoor } from './default-row.js';
import { SNAPSHOT_GROUP } from './pod/spec.js';
import { workloadKind, type WorkloadKind } from './workload/kinds.js';

export type Door =
  /** The object itself, or a subresource whose review carries the object (status, ephemeralcontainers, resize). */
  | { kind: 'object'; sandboxKind: SandboxKind }
  /** A request that names a pod but carries something else: an Eviction, a Binding. */
  | { kind: 'pod-by-name'; action: 'eviction' | 'binding'; pod: string | undefined }
  /** A kind whose controller makes pods or claims from its templates, for whoever wrote them; or its status, which carries the whole object too. */
  | { kind: 'workload'; workload: WorkloadKind }
  /** A workload's /scale: the review carries a Scale that names the workload (and holds none of its stamps). */
  | { kind: 'workload-scale'; workload: WorkloadKind; resource: string; name: string | undefined }
  /** A TokenRequest: a token of the named service account, handed to the requester. */
  | { kind: 'token-request'; serviceAccount: string | undefined }
  /** A VolumeSnapshot: a copy of the claim it names, which a new claim can restore. */
  | { kind: 'snapshot' }
  /** Any other namespaced kind, custom resources included: stamped and guarded by the default row (default-row.ts). */
  | { kind: 'default'; row: StampRow }
  | { kind: 'unreviewed' };

/** Subresources that write the object they belong to, by kind; `status` writes may change metadata too. */
const OBJECT_SUBRESOURCES: Readonly<Record<SandboxKind['kind'], readonly string[]>> = {
  Pod: ['status', 'ephemeralcontainers', 'resize'],
  PersistentVolumeClaim: ['status'],
  Secret: [],
  NetworkPolicy: [],
};

export function doorOf(req: AdmissionRequest): Door {
  if (req.operation === 'CONNECT') return { kind: 'unreviewed' };
  const { group, resource } = req.resource;
  const sub = req.subResource;
  // The legacy `bindings` resource binds the pod named by the Binding (and copies the
  // Binding's annotations onto it), like pods/binding.
  if (group === '' && resource === 'bindings' && sub === undefined && req.operation === 'CREATE') {
    const name = req.object?.metadata?.name;
    return { kind: 'pod-by-name', action: 'binding', pod: typeof name === 'string' && name !== '' ? name : undefined };
  }
  if (group === '' && resource === 'serviceaccounts' && sub === 'token' && req.operation === 'CREATE')
    return { kind: 'token-request', serviceAccount: typeof req.name === 'string' && req.name !== '' ? req.name : undefined };
  if (group === SNAPSHOT_GROUP && resource === 'volumesnapshots' && sub === undefined) return { kind: 'snapshot' };
  const workload = workloadKind(req.resource);
  if (workload !== undefined) {
    // A status write changes no template, but may change the workload's metadata; a scale makes or removes pods.
    if (sub === undefined || sub === 'status') return { kind: 'workload', workload };
    if (sub === 'scale') return { kind: 'workload-scale', workload, resource, name: typeof req.name === 'string' && req.name !== '' ? req.name : undefined };
    return { kind: 'unreviewed' };
  }
  const kind = sandboxKind(req.resource);
  if (kind === undefined) {
    const row = defaultRowDoor(req);
    return row === undefined ? { kind: 'unreviewed' } : { kind: 'default', row };
  }
  if (sub === undefined) return { kind: 'object', sandboxKind: kind };
  if (kind.kind === 'Pod' && (sub === 'eviction' || sub === 'binding') && req.operation === 'CREATE')
    return { kind: 'pod-by-name', action: sub, pod: typeof req.name === 'string' && req.name !== '' ? req.name : undefined };
  // These are UPDATE-only in the API; any other operation is judged as on the object itself.
  if (OBJECT_SUBRESOURCES[kind.kind].includes(sub)) return { kind: 'object', sandboxKind: kind };
  return { kind: 'unreviewed' };
}
