// Every API path that can change or remove a sandbox object, and how the validating
// webhook reaches it (docs/security-model.md, "Every door"), read from the kind table
// (kinds.ts): a path no row names is unreviewed. pods/log is a read. pods/exec, attach,
// portforward and proxy write nothing but reach into the running containers (every Secret
// and workspace the pod holds), so they are doors too: CONNECTs that name a pod.
import type { AdmissionRequest } from '../../admission/types.js';
import { defaultRowFor, kindRow, sandboxKind, workloadKind, type SandboxKind, type StampRow, type WorkloadKind } from '../kinds.js';

export type Door =
  /** The object itself, or a subresource whose review carries the object (status, ephemeralcontainers, resize). */
  | { kind: 'object'; sandboxKind: SandboxKind }
  /** A request that names a pod but carries something else: an Eviction, a Binding, the options of a CONNECT. */
  | { kind: 'pod-by-name'; action: PodAction; pod: string | undefined }
  /** A CONNECT to a Service's proxy: it reaches whichever pods the Service selects. */
  | { kind: 'service-proxy'; service: string | undefined }
    /** A kind whose controller makes pods or claims from its templates, for whoever wrote them; or its status, which carries the whole object too. */
  | { kind: 'workload'; workload: WorkloadKind }
  /** A workload's /scale: the review carries a Scale that names the workload (and holds none of its stamps). */
  | { kind: 'workload-scale'; workload: WorkloadKind; resource: string; name: string | undefined }
  /** A TokenRequest: a token of the named service account, handed to the requester. */
  | { kind: 'token-request'; serviceAccount: string | undefined }
  /** A VolumeSnapshot: a copy of the claim it names, which a new claim can restore. */
  | { kind: 'snapshot' }
  /** Any other namespaced kind, custom resources included: stamped and guarded by the default row (kinds.ts). */
  | { kind: 'default'; row: StampRow }
  /** A default-row kind's /scale (a custom resource's): the review carries a Scale that names the object, and none of its stamps. */
  | { kind: 'default-scale'; resource: string; name: string | undefined }
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

const named = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export function doorOf(req: AdmissionRequest): Door {
  const row = kindRow(req.resource);
  const sub = req.subResource;
  const door = row === undefined ? undefined : sub === undefined ? row.door : row.subresources?.[sub];
  // A CONNECT reaches only the doors that are CONNECTs, and those only by CONNECT.
  if ((req.operation === 'CONNECT') !== (door === 'connect' || door === 'service-proxy')) return { kind: 'unreviewed' };
  switch (door) {
    case undefined:
      return defaultDoor(req);
    case 'connect': {
      const action = CONNECT_ACTIONS.find((a) => a === sub);
      return action === undefined ? { kind: 'unreviewed' } : { kind: 'pod-by-name', action, pod: action === 'proxy' ? proxiedName(req.name) : named(req.name) };
    }
    case 'service-proxy':
      return { kind: 'service-proxy', service: proxiedName(req.name) };
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
      // A status write changes no template, but may change the workload's metadata.
      return { kind: 'workload', workload: workloadKind(req.resource)! };
    case 'workload-scale':
      // A scale makes or removes pods.
      return { kind: 'workload-scale', workload: workloadKind(req.resource)!, resource: req.resource.resource, name: named(req.name) };
    case 'object':
      // The object-carrying subresources are UPDATE-only in the API; any other operation is judged as on the object itself.
      return objectDoor(req);
  }
}

function objectDoor(req: AdmissionRequest): Door {
  const kind = sandboxKind(req.resource);
  return kind === undefined ? { kind: 'unreviewed' } : { kind: 'object', sandboxKind: kind };
}

/**
 * The default row's door for a request no row's door took: the object itself, or its status
 * (whose review carries the whole object, of the same kind), or its /scale (a Scale that
 * names it). Other subresources are not routed here by the webhooks.
 */
function defaultDoor(req: AdmissionRequest): Door {
  if (req.subResource === 'scale')
    return req.operation === 'UPDATE' && defaultRowFor(req.resource, req.resource.resource) !== undefined ? { kind: 'default-scale', resource: req.resource.resource, name: named(req.name) } : { kind: 'unreviewed' };
  const kind = req.kind.kind;
  if (typeof kind !== 'string' || kind === '') return { kind: 'unreviewed' };
  const onObject = req.subResource === undefined || (req.subResource === 'status' && req.operation === 'UPDATE' && req.object?.kind === kind);
  const row = onObject ? defaultRowFor(req.resource, kind) : undefined;
  return row === undefined ? { kind: 'unreviewed' } : { kind: 'default', row };
}
