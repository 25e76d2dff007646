// The CREATE of a stamped object or a workload is judged whole in one call, by the mutating
// webhook (docs/security-model.md, "One call per create"): it computes the stamps, applies
// them to the object, and judges the result with the validating side's rules, lookups and
// messages. The API server calls it again when a later mutating webhook changes the object
// (reinvocationPolicy IfNeeded): the stamps it wrote verify and are kept (mutate.ts), and the
// object as that webhook left it is judged again. What must hold after every mutator is the
// install's ValidatingAdmissionPolicy's (src/install/create-stamps-policy.ts). Object in,
// patch and verdict out; no I/O.
import jsonpatch from 'fast-json-patch';
import type { AdmissionRequest, KubeObject } from '../admission/types.js';
import type { PatchOperation, Verdict } from '../admission/verdict.js';
import { stampReview } from './mutate.js';
import type { DecisionContext } from './policy.js';
import { forReview } from './ownership.js';
import { withObject, type ReviewFacts } from './review-facts.js';
import { reviewFacts } from './door-reviews.js';
import { outOfScope } from './rules/out-of-scope.js';
import { judgeReview } from './validate.js';
import { copyRec, isRec, type Rec } from './unstructured.js';

/**
 * The mutating webhook's verdict, with the CREATE-time validating judgement where it moved
 * here. `facts`: the review's facts, when the caller has them (review-facts.ts); both sides
 * use the same, after one scope check.
 */
export function mutateAndJudge(req: AdmissionRequest, ctx: DecisionContext, facts?: ReviewFacts): Verdict {
  const outside = outOfScope(req, ctx.scope);
  if (outside) return outside;
  facts ??= reviewFacts(req, ctx.policy);
  ctx = forReview(ctx); // the stamping and the judgement are one review
  const stamped = stampReview(facts, ctx);
  if (!stamped.allowed || !facts.judgedAtMutation || !req.object) return stamped;
  // The object as the API server will hold it after this patch: what the validating webhook saw.
  const object = stamped.patch === undefined ? req.object : patchedCopy(req.object, stamped.patch);
  const judged = judgeReview(withObject(facts, { ...req, object: asStored(object) }), ctx);
  const warnings = [...new Set([...stamped.warnings, ...judged.warnings])];
  const auditAnnotations = { ...stamped.auditAnnotations, ...judged.auditAnnotations };
  if (!judged.allowed) return { ...judged, warnings, auditAnnotations };
  return { ...stamped, warnings, auditAnnotations };
}

/**
 * What the API server's registry does to the object between the mutating and the validating
 * webhooks, where it changes what a rule reads: a claim's `dataSource` and `dataSourceRef`
 * are made to name the same source (Kubernetes' NormalizeDataSources, at PrepareForCreate),
 * so a finding names the field the validating webhook saw. The generated name is not known.
 */
function asStored(obj: KubeObject): KubeObject {
  if (obj.kind !== 'PersistentVolumeClaim' || !isRec(obj.spec)) return obj;
  const { dataSource, dataSourceRef } = obj.spec;
  const copy = (from: Rec) => ({ ...(from.apiGroup !== undefined ? { apiGroup: from.apiGroup } : {}), kind: from.kind, name: from.name });
  if (isRec(dataSource) && (dataSourceRef === undefined || dataSourceRef === null)) return { ...obj, spec: { ...obj.spec, dataSourceRef: copy(dataSource) } };
  if (isRec(dataSourceRef) && (dataSource === undefined || dataSource === null) && (dataSourceRef.namespace === undefined || dataSourceRef.namespace === '')) return { ...obj, spec: { ...obj.spec, dataSource: copy(dataSourceRef) } };
  return obj;
}

/**
 * The object with Deed's patch applied, the request's own left as it was. Only the containers
 * along each operation's path are copied, each once (the patch's operations share their
 * parents: a pod's are a dozen under /metadata/labels and /metadata/annotations): a hostile
 * body can nest deeper than a whole-object clone recurses (the fuzz test's).
 */
function patchedCopy(obj: KubeObject, ops: PatchOperation[]): KubeObject {
  let doc: Rec = copyRec(obj as unknown as Rec);
  const copies = new Set<unknown>([doc]);
  for (const op of ops) {
    for (const pointer of 'from' in op ? [op.path, op.from] : [op.path]) copyAlong(doc, pointer, copies);
    doc = jsonpatch.applyOperation(doc, op, true, true).newDocument as Rec;
    copies.add(doc);
  }
  return doc as KubeObject;
}

/** Replaces each container on the way to `pointer`'s parent by a copy, unless it is one (`copies`). */
function copyAlong(root: Rec, pointer: string, copies: Set<unknown>): void {
  let node: Rec | unknown[] = root;
  for (const raw of pointer.split('/').slice(1, -1)) {
    const key = jsonpatch.unescapePathComponent(raw);
    const child: unknown = Array.isArray(node) ? node[Number(key)] : node[key];
    if (child === null || typeof child !== 'object') return;
    let copy = child as Rec | unknown[];
    if (!copies.has(child)) {
      copy = Array.isArray(child) ? [...(child as unknown[])] : copyRec(child as Rec);
      copies.add(copy);
      if (Array.isArray(node)) node[Number(key)] = copy;
      else node[key] = copy;
    }
    node = copy;
  }
}
