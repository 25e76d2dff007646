// The pod affinity terms of a pod spec, each with its place: `spec.affinity.podAffinity` and
// `.podAntiAffinity`, their required terms and their preferred ones' `podAffinityTerm`. Each
// term's labelSelector selects OTHER pods, and the scheduler weighs the existing pods' terms
// against every incoming pod too (required anti-affinity is symmetric), so each is scoped
// like a selector (rules/affinity-scope.ts). Pure: a spec in, its terms out.
import { field, isRec, type Rec } from '../unstructured.js';

export interface AffinityTerm {
  /** Its field path, for findings: `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]`. */
  at: string;
  /** Its path from the object's root, one key or index each (for a JSON pointer). */
  keys: string[];
  term: Rec;
  /** Its labelSelector; undefined when absent (such a term selects no pod). */
  labelSelector: Rec | undefined;
}

const KINDS = ['podAffinity', 'podAntiAffinity'] as const;
const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED = 'preferredDuringSchedulingIgnoredDuringExecution';

/**
 * The pod affinity terms of the pod spec `spec`, which stands at the field path `at` (`spec`,
 * `spec.template.spec`); `base`: its keys from the object's root, where `at` has list indexes.
 */
export function affinityTerms(spec: Rec, at: string, base: readonly string[] = at.split('.')): AffinityTerm[] {
  const affinity = field(spec, 'affinity');
  if (!isRec(affinity)) return [];
  const out: AffinityTerm[] = [];
  const add = (term: unknown, path: string, keys: string[]) => {
    if (!isRec(term)) return;
    const selector = field(term, 'labelSelector');
    out.push({ at: path, keys, term, labelSelector: isRec(selector) ? selector : undefined });
  };
  for (const kind of KINDS) {
    const terms = field(affinity, kind);
    if (!isRec(terms)) continue;
    const required = field(terms, REQUIRED);
    if (Array.isArray(required)) required.forEach((t: unknown, i) => add(t, `${at}.affinity.${kind}.${REQUIRED}[${i}]`, [...base, 'affinity', kind, REQUIRED, String(i)]));
    const preferred = field(terms, PREFERRED);
    if (Array.isArray(preferred))
      preferred.forEach((w: unknown, i) => {
        if (isRec(w)) add(field(w, 'podAffinityTerm'), `${at}.affinity.${kind}.${PREFERRED}[${i}].podAffinityTerm`, [...base, 'affinity', kind, PREFERRED, String(i), 'podAffinityTerm']);
      });
  }
  return out;
}
