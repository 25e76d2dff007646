// What the stamps of an object should be, from the requester's identity alone. Shared
// by the mutating side (which writes them) and the validating side (which checks them).
import { entryOf } from '../unstructured.js';
import type { OwnerReference } from '../../admission/types.js';

import type { RunnerPod } from '../requester/identity.js';
import { MANAGED_BY_VALUE, stampedAnnotationKeys, stampedLabelKeys, type StampKeys } from './keys.js';
import type { SandboxKind } from '../kinds.js';

export interface IdentityStamps {
  /** Label key to value; undefined means the label must be absent. */
  labels: Record<string, string | undefined>;
  /** `<prefix>/owner`, or undefined when there is no runner pod. */
  owner: string | undefined;
  /** The owner reference Deed adds: same namespace only, never on a PVC. */
  ownerReference: OwnerReference | undefined;
}

export function identityStamps(keys: StampKeys, environment: string, runner: RunnerPod | undefined, kind: SandboxKind, namespace: string): IdentityStamps {
  return {
    labels: {
      [keys.managedBy]: MANAGED_BY_VALUE,
      [keys.managed]: 'true',
      [keys.environment]: environment,
      [keys.ownerUid]: runner?.uid,
    },
    owner: runner ? `${runner.namespace}/${runner.name}` : undefined,
    ownerReference:
      runner && kind.ownerReference && runner.namespace === namespace ? { apiVersion: 'v1', kind: 'Pod', name: runner.name, uid: runner.uid } : undefined,
  };
}

export function sameReference(a: OwnerReference, b: OwnerReference): boolean {
  return a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && a.uid === b.uid;
}

export function labelPath(key: string): string {
  return `metadata.labels[${JSON.stringify(key)}]`;
}

export function annotationPath(key: string): string {
  return `metadata.annotations[${JSON.stringify(key)}]`;
}

/** Admission-owned keys present on an object (a claim, when its requester acts for no environment). */
export function presentOwnedKeys(labels: Record<string, string>, annotations: Record<string, string>, keys: StampKeys): Array<{ name: string; path: string }> {
  const found: Array<{ name: string; path: string }> = [];
  for (const key of stampedLabelKeys(keys)) {
    const value = entryOf(labels, key);
    // app.kubernetes.io/managed-by is shared with other tools: only Deed's own value is a claim.
    if (value !== undefined && (key !== keys.managedBy || value === MANAGED_BY_VALUE)) found.push({ name: key, path: labelPath(key) });
  }
  for (const key of stampedAnnotationKeys(keys)) if (entryOf(annotations, key) !== undefined) found.push({ name: key, path: annotationPath(key) });
  return found;
}

/** A managed object: one Deed stamped (its own `<prefix>/managed` label says so). */
export function isManaged(labels: Record<string, string> | undefined, keys: StampKeys): boolean {
  return labels !== undefined && (entryOf(labels, keys.managed) !== undefined || entryOf(labels, keys.environment) !== undefined);
}
