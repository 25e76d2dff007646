// What Deed keeps of another object it may look up: its uid, the labels and annotations
// under Deed's prefix, a pod's service account, its controlling owner reference, and
// whether it is being deleted. The same projection serves cached and live answers, so a
// decision cannot depend on which one it got. Nothing else is kept: another annotation
// may be large (kubectl's last-applied-configuration holds a Secret's data in full).
import type { ControllerRef, Lookup } from '../policy/policy.js';
import { controllerRefOf } from '../policy/controller-made.js';

export interface ObjectFacts {
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Pods only: spec.serviceAccountName (immutable for the pod's life). */
  serviceAccountName?: string;
  /** The owner reference with `controller: true`: whose an object a controller made is follows it. */
  controller?: ControllerRef;
  /** metadata.deletionTimestamp is set: the object may be gone at any moment. */
  deleting: boolean;
}

interface Meta {
  uid?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
  deletionTimestamp?: unknown;
  ownerReferences?: unknown;
}

/** The facts of one object as the API server sent it (a list item, a watch event's object, a GET). */
export function factsOf(obj: { metadata?: Meta | undefined; spec?: unknown }, prefix: string): ObjectFacts {
  const m = obj.metadata ?? {};
  const labels = ours(m.labels, prefix);
  const annotations = ours(m.annotations, prefix);
  const spec = obj.spec as { serviceAccountName?: unknown } | undefined;
  const sa = typeof spec?.serviceAccountName === 'string' && spec.serviceAccountName !== '' ? spec.serviceAccountName : undefined;
  const controller = controllerRefOf(m.ownerReferences);
  return {
    ...(typeof m.uid === 'string' ? { uid: m.uid } : {}),
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
    ...(sa ? { serviceAccountName: sa } : {}),
    ...(controller ? { controller } : {}),
    deleting: m.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
  };
}

/** A found object as the policy reads it. */
export function foundLookup(f: ObjectFacts): Extract<Lookup, { state: 'found' }> {
  return {
    state: 'found',
    metadata: { ...(f.uid ? { uid: f.uid } : {}), ...(f.labels ? { labels: f.labels } : {}), ...(f.annotations ? { annotations: f.annotations } : {}) },
    ...(f.serviceAccountName ? { serviceAccountName: f.serviceAccountName } : {}),
    ...(f.controller ? { controller: f.controller } : {}),
  };
}


function ours(map: Record<string, string> | undefined, prefix: string): Record<string, string> | undefined {
  if (map === undefined || map === null) return undefined;
  let out: Record<string, string> | undefined;
  for (const [key, value] of Object.entries(map)) {
    if (!key.startsWith(`${prefix}/`)) continue;
    (out ??= {})[key] = value;
  }
  return out;
}
