// The stamp vocabulary (docs/concepts.md, "The mutating webhook"), built once per policy from the label prefix.

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'deed';

export interface StampKeys {
  prefix: string;
  // Admission-owned: only Deed writes these.
  managedBy: string;
  managed: string;
  environment: string;
  ownerUid: string;
  owner: string;
  createNonce: string;
  expiresAt: string;
  attestation: string;
  // Client-declared intent, accepted in validated form only.
  maxDuration: string;
  workspaceGrants: string;
  /** Label on a PersistentVolumeClaim: "true" marks an environment's workspace, at creation only (frozen). */
  workspace: string;
  // Written by the platform (its own environment) to mark a PVC finished.
  terminal: string;
}

export function stampKeys(prefix: string): StampKeys {
  return {
    prefix,
    managedBy: MANAGED_BY_LABEL,
    managed: `${prefix}/managed`,
    environment: `${prefix}/environment`,
    ownerUid: `${prefix}/owner-uid`,
    owner: `${prefix}/owner`,
    createNonce: `${prefix}/create-nonce`,
    expiresAt: `${prefix}/expires-at`,
    attestation: `${prefix}/attestation`,
    maxDuration: `${prefix}/max-duration-seconds`,
    workspaceGrants: `${prefix}/workspace-grants`,
    workspace: `${prefix}/workspace`,
    terminal: `${prefix}/terminal`,
  };
}

/** Labels Deed stamps. */
export function stampedLabelKeys(k: StampKeys): string[] {
  return [k.managedBy, k.managed, k.environment, k.ownerUid];
}

/** Client labels accepted at CREATE only, in validated form, then frozen like stamps. */
export function frozenIntentLabelKeys(k: StampKeys): string[] {
  return [k.workspace];
}

/** Annotations Deed stamps. */
export function stampedAnnotationKeys(k: StampKeys): string[] {
  return [k.owner, k.createNonce, k.expiresAt, k.attestation];
}
