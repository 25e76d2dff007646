// What every pod rule judges: a pod spec, wherever it stands (pod/sandbox-pod-rules.ts).
import type { Rec } from '../unstructured.js';

/** A pod spec, where it stands, and what its pod declares beside it. */
export interface PodSpecSubject {
  spec: Rec;
  /** The spec's field path: `spec`, `spec.template.spec`. */
  at: string;
  /** Where it comes from: the Pod itself, or a kind whose controller makes pods from it. */
  source: { kind: string; controller: boolean; ownsRestartPolicy: boolean };
  /** The pod's name, when it has one yet (a template's pods do not). */
  podName: string | undefined;
  /** The pod's workspace grants annotation, and its field path. */
  grants: { value: string | undefined; path: string };
  /** The claims it mounts that are workspaces (read before the rules run). */
  workspaceClaims: ReadonlySet<string>;
}
