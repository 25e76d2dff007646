// The kinds Deed stamps, keyed by the resource the webhook is called for, with what each
// receives (DESIGN.md, "Per kind").
import type { GroupVersionResource } from '../admission/types.js';

/** What a kind's objects are stamped with at CREATE: the sandbox kinds' rows, and the workloads' (workload/stamps.ts). */
export interface StampRow {
  kind: string;
  /** Owner reference to the runner pod (same namespace only). PVCs never: a pod loss must not collect resumable work. */
  ownerReference: boolean;
  /** spec.activeDeadlineSeconds. */
  activeDeadline: boolean;
  /** `<prefix>/expires-at`. */
  expiresAt: boolean;
}

export interface SandboxKind extends StampRow {
  kind: 'Pod' | 'Secret' | 'NetworkPolicy' | 'PersistentVolumeClaim';
}

const KINDS: ReadonlyMap<string, SandboxKind> = new Map([
  ['/pods', { kind: 'Pod', ownerReference: true, activeDeadline: true, expiresAt: true }],
  ['/secrets', { kind: 'Secret', ownerReference: true, activeDeadline: false, expiresAt: true }],
  ['networking.k8s.io/networkpolicies', { kind: 'NetworkPolicy', ownerReference: true, activeDeadline: false, expiresAt: false }],
  ['/persistentvolumeclaims', { kind: 'PersistentVolumeClaim', ownerReference: false, activeDeadline: false, expiresAt: false }],
]);

export function sandboxKind(resource: GroupVersionResource): SandboxKind | undefined {
  return KINDS.get(`${resource.group}/${resource.resource}`);
}

/** The same entries by kind name, for readers of stored objects (the reaper, the audit). */
export function sandboxKindNamed(kind: SandboxKind['kind']): SandboxKind {
  return [...KINDS.values()].find((k) => k.kind === kind)!;
}
