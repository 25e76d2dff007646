// The mutating side of frozen stamps (rules/frozen-stamps.ts), on an UPDATE that carries
// none of Deed's stamps: a whole object written as its author wrote it (`kubectl replace
// -f`, an Argo CD `Replace=true` sync, a client that PUTs what it built), which never named
// what admission added. Deed's stamps, the intents frozen with them, the terminal mark and
// the owner reference admission added are put back as they were stored, with a warning; the
// validating side then judges the write as any other (another environment's is still
// refused, guard.cross-environment). A write that keeps some of them and drops others is
// not one: it is judged, and refused, as it is. The install sends Deed these UPDATEs only
// (src/install/manifests.ts, keepStampsCondition).
import jsonpatch from 'fast-json-patch';
import type { AdmissionRequest, KubeObject, OwnerReference } from '../../admission/types.js';
import { allowed, patched, type PatchOperation, type Verdict } from '../../admission/verdict.js';
import { entryOf } from '../unstructured.js';
import type { DecisionContext } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { keptScope } from '../selector-scope.js';
import { frozenIntentAnnotationKeys, frozenIntentLabelKeys, stampedAnnotationKeys, stampedLabelKeys, type StampKeys } from './keys.js';

export const KEPT_STAMPS_WARNING = "Deed kept its stamps as stored: this write carried none, and they are frozen (docs/concepts.md)";

/** Whether `obj` replaces `old`, an environment's object, without any of Deed's stamps: the writes whose stamps are kept. */
export function dropsEveryStamp(old: KubeObject, obj: KubeObject, keys: StampKeys): boolean {
  if (entryOf(old.metadata.labels ?? {}, keys.managed) === undefined) return false;
  const [labels, annotations] = [obj.metadata.labels ?? {}, obj.metadata.annotations ?? {}];
  return stampedLabelKeys(keys).every((k) => entryOf(labels, k) === undefined) && stampedAnnotationKeys(keys).every((k) => entryOf(annotations, k) === undefined);
}

/** The keys a kept write gets back as stored: Deed's stamps, the intents frozen with them, and the terminal mark. */
function keptKeys(keys: StampKeys): { labels: string[]; annotations: string[] } {
  return { labels: [...stampedLabelKeys(keys), ...frozenIntentLabelKeys(keys)], annotations: [...stampedAnnotationKeys(keys), ...frozenIntentAnnotationKeys(keys), keys.terminal] };
}

/** What an UPDATE that drops every stamp keeps of `old`: the patch and its warning; allowed unchanged for any other write. */
export function keptStamps(old: KubeObject, obj: KubeObject, keys: StampKeys): Verdict {
  if (!dropsEveryStamp(old, obj, keys)) return allowed();
  const ops: PatchOperation[] = [];
  /** The keys of `list` that `before` has and `after` lacks, added at `at` (the whole map where the write has none). */
  const keep = (at: string, before: Record<string, string>, after: Record<string, string> | undefined, list: string[]) => {
    const back: Record<string, string> = {};
    for (const key of list) {
      const value = entryOf(before, key);
      if (value !== undefined && entryOf(after ?? {}, key) === undefined) back[key] = value;
    }
    if (Object.keys(back).length === 0) return;
    if (after === undefined) ops.push({ op: 'add', path: at, value: back });
    else for (const [key, value] of Object.entries(back)) ops.push({ op: 'add', path: `${at}/${jsonpatch.escapePathComponent(key)}`, value });
  };
  const kept = keptKeys(keys);
  keep('/metadata/labels', old.metadata.labels ?? {}, obj.metadata.labels, kept.labels);
  keep('/metadata/annotations', old.metadata.annotations ?? {}, obj.metadata.annotations, kept.annotations);
  // The reference admission added is the Pod reference whose uid the owner-uid label names (frozen-stamps.ts).
  const ownerUid = entryOf(old.metadata.labels ?? {}, keys.ownerUid);
  const ownRef = (refs: OwnerReference[] | undefined) => (refs ?? []).find((r) => r.kind === 'Pod' && r.uid === ownerUid);
  const ref = ownerUid === undefined || ownRef(obj.metadata.ownerReferences) !== undefined ? undefined : ownRef(old.metadata.ownerReferences);
  if (ref !== undefined) {
    ops.push(obj.metadata.ownerReferences === undefined ? { op: 'add', path: '/metadata/ownerReferences', value: [ref] } : { op: 'add', path: '/metadata/ownerReferences/-', value: ref });
  }
  // A warning is cut at MAX_WARNING_LENGTH: it says what happened, not the keys.
  return patched(ops, [KEPT_STAMPS_WARNING]);
}

/**
 * What a listed operator's UPDATE of an environment's object it made keeps (doors/
 * controller-write.ts): Deed's stamps and the intents frozen with them as stored, whatever the
 * write carries in their place. External Secrets merges the ExternalSecret's own labels and
 * annotations into its Secret on every refresh (Deed's stamps for the ExternalSecret among
 * them), or drops the keys its field manager owns, which include the stamps the webhook added
 * at its CREATE. The install sends these UPDATEs (operatorStampsCondition).
 */
export function keptOperatorStamps(old: KubeObject, obj: KubeObject, keys: StampKeys): Verdict {
  if (entryOf(old.metadata.labels ?? {}, keys.managed) === undefined) return allowed();
  const ops: PatchOperation[] = [];
  const restore = (at: string, before: Record<string, string>, after: Record<string, string> | undefined, list: string[]) => {
    const wanted: Record<string, string> = {};
    for (const key of list) {
      const value = entryOf(before, key);
      if (value !== undefined) wanted[key] = value;
    }
    if (after === undefined) {
      if (Object.keys(wanted).length > 0) ops.push({ op: 'add', path: at, value: wanted });
      return;
    }
    for (const key of list) {
      const [was, is] = [wanted[key], entryOf(after, key)];
      if (was === is) continue;
      const path = `${at}/${jsonpatch.escapePathComponent(key)}`;
      ops.push(was === undefined ? { op: 'remove', path } : { op: 'add', path, value: was });
    }
  };
  const kept = keptKeys(keys);
  restore('/metadata/labels', old.metadata.labels ?? {}, obj.metadata.labels, kept.labels);
  restore('/metadata/annotations', old.metadata.annotations ?? {}, obj.metadata.annotations, kept.annotations);
  return ops.length === 0 ? allowed() : patched(ops);
}

/**
 * What the mutating side keeps on an UPDATE of a stamped object itself (undefined for any
 * other request): the scope its selector was stored with (selector-scope.ts), and Deed's
 * stamps where the write dropped every one. The object, workload and default doors' stamping.
 */
export function keptOnUpdate(req: AdmissionRequest, ctx: DecisionContext, requester: Requester): Verdict | undefined {
  const kept = keptScope(req, ctx, requester);
  return kept === undefined ? undefined : withKeptStamps(req, kept, ctx.policy.keys);
}

/** `verdict` on an UPDATE of the object itself, and the stamps kept where the write dropped every one. */
function withKeptStamps(req: AdmissionRequest, verdict: Verdict, keys: StampKeys): Verdict {
  if (!verdict.allowed || req.operation !== 'UPDATE' || req.subResource !== undefined || !req.oldObject || !req.object) return verdict;
  const stamps = keptStamps(req.oldObject, req.object, keys);
  if (stamps.patch === undefined) return verdict;
  return patched([...(verdict.patch ?? []), ...stamps.patch], [...verdict.warnings, ...stamps.warnings], verdict.auditAnnotations);
}
