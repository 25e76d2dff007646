// The templates of a kind that makes pods (or claims), at the paths its row of the kind
// table (../kinds.ts) names, as Kyverno's auto-generated rules for pod controllers do: one
// rule set judges a pod spec wherever it stands. The controllers
// (kube-system's service accounts, which the install does not send to Deed) create the
// pods and claims later, for whoever wrote the template; so the template is judged as if
// its writer created them.
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../admission/types.js';
import type { WorkloadKind } from '../kinds.js';
import { field, isRec, type Rec } from '../unstructured.js';

export type { WorkloadKind } from '../kinds.js';

function at(obj: KubeObject, path: string): unknown {
  let v: unknown = obj;
  for (const key of path.split('.')) v = isRec(v) ? field(v, key) : undefined;
  return v;
}

export interface PodTemplate {
  /** The PodTemplateSpec's field path: `spec.template`. */
  at: string;
  /** Its JSON pointer (`/spec/template`), of fixed names: nothing a pointer escapes. */
  pointer: string;
  metadata: Rec;
  spec: Rec;
  /** Whether the template has a spec object (`spec` is `{}` when not). */
  hasSpec: boolean;
}

export interface ClaimTemplate {
  /** The claim template's field path: `spec.volumeClaimTemplates[name=data]`. */
  at: string;
  /** Its JSON pointer (`/spec/volumeClaimTemplates/0`), of fixed names: nothing a pointer escapes. */
  pointer: string;
  metadata: Rec;
  spec: Rec;
}

/**
 * The pod templates of a workload, each once; on UPDATE (`old` given) only those that
 * changed: only a changed template makes new pods, and the request's sender is the one
 * who asked for them.
 */
export function podTemplates(obj: KubeObject, kind: WorkloadKind, old?: KubeObject): PodTemplate[] {
  const out: PodTemplate[] = [];
  for (const path of kind.podTemplates) {
    const template = at(obj, path);
    if (!isRec(template)) continue;
    if (old !== undefined && isDeepStrictEqual(template, at(old, path))) continue;
    const metadata = field(template, 'metadata');
    const spec = field(template, 'spec');
    out.push({ at: path, pointer: `/${path.split('.').join('/')}`, metadata: isRec(metadata) ? metadata : {}, spec: isRec(spec) ? spec : {}, hasSpec: isRec(spec) });
  }
  return out;
}

/** The claim templates of a workload; on UPDATE only a list that changed. */
export function claimTemplates(obj: KubeObject, kind: WorkloadKind, old?: KubeObject): ClaimTemplate[] {
  const out: ClaimTemplate[] = [];
  for (const path of kind.claimTemplates) {
    const list = at(obj, path);
    if (old !== undefined && isDeepStrictEqual(list, at(old, path))) continue;
    if (!Array.isArray(list)) continue;
    list.forEach((t: unknown, i) => {
      if (!isRec(t)) return;
      const metadata = field(t, 'metadata');
      const spec = field(t, 'spec');
      const name = isRec(metadata) && typeof metadata.name === 'string' ? metadata.name : '';
      out.push({ at: `${path}[name=${name}]`, pointer: `/${path.split('.').join('/')}/${i}`, metadata: isRec(metadata) ? metadata : {}, spec: isRec(spec) ? spec : {} });
    });
  }
  return out;
}
