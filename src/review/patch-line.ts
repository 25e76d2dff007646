// `deed review -o patch`: one JSON object per line, naming the object the patch is for
// (apiVersion, kind, namespace, and name or, for an object the API server will name,
// generateName) beside the JSON Patch itself, so a stream of many objects' patches can be
// told apart and fed one by one to `kubectl patch --type=json -p "$(jq -c .patch)"`.
import type { AdmissionRequest } from '../admission/types.js';
import type { PatchOperation } from '../admission/verdict.js';

export interface PatchTarget {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
  generateName?: string | undefined;
}

interface Named {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: string | undefined; generateName?: string | undefined; namespace?: string | undefined } | undefined;
}

/** Who a patch is for, from the object as sent: its name, else the generateName it will be named from. */
export function patchTarget(obj: Named | null | undefined): PatchTarget {
  const m = obj?.metadata ?? {};
  return {
    apiVersion: typeof obj?.apiVersion === 'string' ? obj.apiVersion : undefined,
    kind: typeof obj?.kind === 'string' ? obj.kind : undefined,
    namespace: m.namespace,
    ...(m.name !== undefined ? { name: m.name } : { generateName: m.generateName }),
  };
}

/** A replayed request names what its object may not: the namespace of the URL, a name already given. */
export function requestTarget(r: AdmissionRequest | null | undefined): PatchTarget {
  const target = patchTarget(r?.object ?? r?.oldObject);
  if (!r) return target;
  return { ...target, namespace: r.namespace || target.namespace, ...(r.name ? { name: r.name, generateName: undefined } : {}) };
}

export function patchLine(target: PatchTarget, patch: readonly PatchOperation[]): string {
  return `${JSON.stringify({ ...target, patch })}\n`;
}
