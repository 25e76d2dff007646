// Every API path that can change or remove a sandbox object, and how the validating
// webhook reaches it (docs/security-model.md, "Every door"). A path not named here cannot write the
// object: pods/log is a read. pods/exec, attach, portforward and proxy write nothing but
// reach into the running containers (every Secret and workspace the pod holds), so they
// are doors too: CONNECTs that name a pod.
import type { AdmissionRequest } from '../admission/types.js';
import { sandboxKind, type SandboxKind } from './kinds.js';
import { SNAPSHOT_GROUP } from './pod/spec.js';
import { workloadKind, type WorkloadKind } from './workload/kinds.js';

export type Door =
  /** The object itself, or a subresource whose review carries the object (status, ephemeralcontainers, resize). */
  | { kind: 'object'; sandboxKind: SandboxKind }
  /** A request that names a pod but carries something else: an Eviction, a Binding, the options of a CONNECT. */
  | { kind: 'pod-by-name'; action: PodAction; pod: string | undefined }
  /** A CONNECT to a Service's proxy: it reaches whichever pods the Service selects. */
  | { kind: 'service-proxy'; service: string | undefined }
  /** A kind whose controller makes pods or claims from its templates, for whoever wrote them. */
  | { kind: 'workload'; workload: WorkloadKind }
  /** A TokenRequest: a token of the named service account, handed to the requester. */
  | { kind: 'token-request'; serviceAccount: string | undefined }
  /** A VolumeSnapshot: a copy of the claim it names, which a new claim can restore. */
  | { kind: 'snapshot' }
  | { kind: 'unreviewed' };

export type PodAction = 'eviction' | 'binding' | ConnectAction;

/** The CONNECTs into a pod's containers, by subresource. */
const CONNECT_ACTIONS = ['exec', 'attach', 'portforward', 'proxy'] as const;
export type ConnectAction = (typeof CONNECT_ACTIONS)[number];

export function isConnectAction(action: PodAction): action is ConnectAction {
  return (CONNECT_ACTIONS as readonly string[]).includes(action);
}

/**
 * The object a proxy names: `[scheme:]name[:port]` (the API server's own split), so
 * `sbx-1:8080` is pod sbx-1. Other CONNECTs name the object alone.
 */
export function proxiedName(name: string | undefined): string | undefined {
  if (name === undefined || name === '') return undefined;
  const parts = name.split(':');
  const bare = parts.length === 1 ? parts[0] : parts.length === 2 ? parts[0] : parts.length === 3 ? parts[1] : undefined;
  return bare === undefined || bare === '' ? undefined : bare;
}

/** Subresources that write the object they belong to, by kind; `status` writes may change metadata too. */
const OBJECT_SUBRESOURCES: Readonly<Record<SandboxKind['kind'], readonly string[]>> = {
  Pod: ['status', 'ephemeralcontainers', 'resize'],
  PersistentVolumeClaim: ['status'],
  Secret: [],
  NetworkPolicy: [],
};

export function doorOf(req: AdmissionRequest): Door {
  const { group, resource } = req.resource;
  const sub = req.subResource;
  if (req.operation === 'CONNECT') return connectDoor(group, resource, sub, req.name);
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
  // Their subresources (status, scale) change no template.
  if (workload !== undefined) return sub === undefined ? { kind: 'workload', workload } : { kind: 'unreviewed' };
  const kind = sandboxKind(req.resource);
  if (kind === undefined) return { kind: 'unreviewed' };
  if (sub === undefined) return { kind: 'object', sandboxKind: kind };
  if (kind.kind === 'Pod' && (sub === 'eviction' || sub === 'binding') && req.operation === 'CREATE')
    return { kind: 'pod-by-name', action: sub, pod: typeof req.name === 'string' && req.name !== '' ? req.name : undefined };
  // These are UPDATE-only in the API; any other operation is judged as on the object itself.
  if (OBJECT_SUBRESOURCES[kind.kind].includes(sub)) return { kind: 'object', sandboxKind: kind };
  return { kind: 'unreviewed' };
}

function connectDoor(group: string, resource: string, sub: string | undefined, name: string | undefined): Door {
  if (group !== '') return { kind: 'unreviewed' };
  const action = CONNECT_ACTIONS.find((a) => a === sub);
  if (resource === 'pods' && action !== undefined) return { kind: 'pod-by-name', action, pod: action === 'proxy' ? proxiedName(name) : name || undefined };
  if (resource === 'services' && sub === 'proxy') return { kind: 'service-proxy', service: proxiedName(name) };
  return { kind: 'unreviewed' };
}
