// The stamp vocabulary (docs/concepts.md, "The mutating webhook"), built once per policy from the label prefix.

// Deed's marker is `<prefix>/managed` alone. `app.kubernetes.io/managed-by` belongs to
// whichever tool applies an object (Helm writes "Helm" on every object of a release), so
// Deed neither writes nor reads it (docs/concepts.md, "The stamps").

export interface StampKeys {
  prefix: string;
  // Admission-owned: only Deed writes these.
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
  /**
   * Annotation the platform sets (its own environment only) to mark an object finished, on
   * any kind: once set it cannot be changed or removed (rules/terminal-mark.ts).
   */
  terminal: string;
  /** Annotation naming the coordination.k8s.io Lease, in the object's namespace, that tracks its run: set at CREATE only, attested, frozen. */
  runLease: string;
  /**
   * Label `"true"` Deed writes on every pod of no environment, and into the pod selectors (and
   * their templates) of requesters acting for none, so those select no environment's pods
   * (selector-scope.ts). An environment's object never carries it.
   */
  noEnvironment: string;
  /**
   * Label Deed writes on a runner pod (unstamped, its service account mapped to an
   * environment) with that environment's id: a requester of no environment's selectors
   * exclude it, so they select no environment's runner (selector-scope.ts). Only Deed writes
   * it, and only on a runner; frozen.
   */
  runner: string;
}

export function stampKeys(prefix: string): StampKeys {
  return {
    prefix,
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
    runLease: `${prefix}/run-lease`,
    noEnvironment: `${prefix}/no-environment`,
    runner: `${prefix}/runner`,
  };
}

/** Labels Deed stamps. */
export function stampedLabelKeys(k: StampKeys): string[] {
  return [k.managed, k.environment, k.ownerUid];
}

/** Client labels accepted at CREATE only, in validated form, then frozen like stamps. */
export function frozenIntentLabelKeys(k: StampKeys): string[] {
  return [k.workspace];
}

/** Client annotations accepted at CREATE only, in validated form, then frozen like stamps. */
export function frozenIntentAnnotationKeys(k: StampKeys): string[] {
  return [k.runLease];
}

/** Annotations Deed stamps. */
export function stampedAnnotationKeys(k: StampKeys): string[] {
  return [k.owner, k.createNonce, k.expiresAt, k.attestation];
}
