// Frozen stamps: on UPDATE nothing Deed stamped (nor the workspace marker of a claim)
// changes, disappears, or appears on an object admitted without it. The garbage collector may remove the owner reference when
// it orphans a dependent; activeDeadlineSeconds may only go down.
import { entryOf } from '../unstructured.js';
import type { KubeObject, OwnerReference } from '../../admission/types.js';
import { quoted, type Finding } from '../../admission/verdict.js';
import { frozenIntentAnnotationKeys, frozenIntentLabelKeys, stampedAnnotationKeys, stampedLabelKeys, type StampKeys } from '../stamps/keys.js';
import { annotationPath, isManaged, labelPath, sameReference } from '../stamps/identity-stamps.js';
import { RULES } from './catalog.js';

/** Who orphans dependents: the garbage collector, by its own service account or the controller manager's identity. */
export const GARBAGE_COLLECTORS: ReadonlySet<string> = new Set(['system:serviceaccount:kube-system:generic-garbage-collector', 'system:kube-controller-manager']);

/** A pod's runner facts: whether it is a runner (ownership.ts), and the runner mark Deed would write on it now (pod/runner-mark.ts runnerOf; undefined: none). */
export interface RunnerFacts {
  isRunner: boolean;
  due(): string | undefined;
}

const NO_RUNNER: RunnerFacts = { isRunner: false, due: () => undefined };

export function frozenStamps(oldObj: KubeObject, newObj: KubeObject, keys: StampKeys, username: string, runner: RunnerFacts = NO_RUNNER): Finding[] {
  const findings: Finding[] = [];
  const compare = (before: Record<string, string>, after: Record<string, string>, list: string[], path: (k: string) => string) => {
    for (const key of list) {
      const [a, b] = [entryOf(before, key), entryOf(after, key)];
      if (a === b) continue;
      const message =
        a === undefined
          ? `cannot be added to an object admitted without it (got ${quoted(b)})`
          : b === undefined
            ? `is frozen at ${quoted(a)} and cannot be removed`
            : `is frozen at ${quoted(a)}, got ${quoted(b)}`;
      findings.push({ rule: RULES.frozenStamps.id, path: path(key), message });
    }
  };
  const [oldLabels, newLabels] = [oldObj.metadata.labels ?? {}, newObj.metadata.labels ?? {}];
  // An environment's object never gains the mark of pods of no environment (selector-scope.ts); on others it is theirs to keep,
  // but a runner's: its own environment would take it out of the platform's policies that select runners with it.
  const runnerPod = runner.isRunner || entryOf(oldLabels, keys.runner) !== undefined;
  const marks = [...(isManaged(oldObj.metadata.labels, keys) || runnerPod ? [keys.noEnvironment] : []), ...(runnerMarkFrozen(oldLabels, newLabels, keys, runner) ? [keys.runner] : [])];
  compare(oldLabels, newLabels, [...stampedLabelKeys(keys), ...frozenIntentLabelKeys(keys), ...marks], labelPath);
  compare(oldObj.metadata.annotations ?? {}, newObj.metadata.annotations ?? {}, [...stampedAnnotationKeys(keys), ...frozenIntentAnnotationKeys(keys)], annotationPath);

  // The admission-added reference is the Pod reference whose uid the owner-uid label names.
  const ownerUid = entryOf(oldObj.metadata.labels ?? {}, keys.ownerUid);
  if (ownerUid !== undefined) {
    const find = (refs: OwnerReference[] | undefined) => (refs ?? []).find((r) => r.kind === 'Pod' && r.uid === ownerUid);
    const [before, after] = [find(oldObj.metadata.ownerReferences), find(newObj.metadata.ownerReferences)];
    if (before && !after && !GARBAGE_COLLECTORS.has(username))
      findings.push({ rule: RULES.frozenOwnerReference.id, path: 'metadata.ownerReferences', message: `the reference to pod ${before.name} (${before.uid}) was added at admission and cannot be removed` });
    else if (before && after && !sameReference(before, after))
      findings.push({ rule: RULES.frozenOwnerReference.id, path: 'metadata.ownerReferences', message: `the reference to pod ${before.name} (${before.uid}) was added at admission and cannot be changed` });
    else if (!before && after)
      findings.push({ rule: RULES.frozenOwnerReference.id, path: 'metadata.ownerReferences', message: `a reference to the owner pod ${after.name} cannot be added after admission` });
  }

  const [a, b] = [oldObj.spec?.activeDeadlineSeconds, newObj.spec?.activeDeadlineSeconds];
  if (typeof a === 'number' && (typeof b !== 'number' || b > a))
    findings.push({ rule: RULES.frozenActiveDeadline.id, path: 'spec.activeDeadlineSeconds', message: `may only be lowered: ${quoted(a)} -> ${b === undefined ? '(absent)' : quoted(b)}` });
  return findings;
}

/**
 * The runner mark is Deed's, written at CREATE (pod/runner-mark.ts), and then frozen: but a
 * runner created before Deed wrote it may be given the mark Deed would write (re-creating a
 * live runner to mark it would end its run), and a mark a pod would not be given (set before
 * Deed reserved the key, or before the policy stopped mapping its account) may be taken
 * off, or a platform's policy for that environment's runners would cover it.
 */
function runnerMarkFrozen(before: Record<string, string>, after: Record<string, string>, keys: StampKeys, runner: RunnerFacts): boolean {
  const [a, b] = [entryOf(before, keys.runner), entryOf(after, keys.runner)];
  if (a === b) return false;
  const late = a === undefined && runner.isRunner && b === runner.due();
  const unearned = a !== undefined && b === undefined && a !== runner.due();
  return !late && !unearned;
}

/**
 * A Binding's annotations are copied onto the pod it binds (pods/binding and the legacy
 * `bindings` resource): none may carry a key under Deed's prefix, or a binding could
 * rewrite the stamps of a pod no UPDATE review would let change.
 */
export function frozenBindingAnnotations(binding: KubeObject | undefined, keys: StampKeys): Finding[] {
  const annotations = binding?.metadata?.annotations ?? {};
  return Object.keys(annotations)
    .filter((k) => k.startsWith(`${keys.prefix}/`))
    .map((k) => ({ rule: RULES.frozenStamps.id, path: annotationPath(k), message: 'a binding copies its annotations onto the pod; keys under Deed\'s prefix are written at admission only' }));
}
