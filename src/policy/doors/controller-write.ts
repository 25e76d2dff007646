// A workload controller's write (controller-made.ts) through the doors that carry what
// controllers make: a pod (object.ts), a Deployment's ReplicaSet or a CronJob's Job
// (workload.ts). What each of those doors judges of a controller's CREATE is its own; the
// stamping, and what a controller's other writes are, is the same through both.
import type { KubeObject } from '../../admission/types.js';
import { allowed, patched, type Verdict } from '../../admission/verdict.js';
import { isOperatorMade, type StampRow } from '../kinds.js';
import type { DecisionContext } from '../policy.js';
import { enforce } from '../rules/enforcement.js';
import { keptOperatorStamps } from '../stamps/kept-stamps.js';
import { frozenStamps } from '../rules/frozen-stamps.js';
import { stampCreate, stampPatch } from '../stamp-create.js';
import { actingFor, addedOwnerFindings, adoptionFindings, controllerMadeRow, controllerOf, environmentOfControllerMade, withoutStamps } from '../controller-made.js';
import type { DoorFacts } from './door-review.js';
import type { Door } from './door.js';
import { runnerMarkFindings, runnerOf } from '../pod/runner-mark.js';
import { entryOf } from '../unstructured.js';

/**
 * What a workload controller creates (controller-made.ts): a pod, a Deployment's ReplicaSet, a
 * CronJob's Job, an operator's Secret is stamped as its controlling owner's environment's, in
 * place of whatever stamps it arrived with; an owner of no environment, or of a kind Deed does
 * not read (an operator's own resource), makes an unstamped one. An operator's later write of
 * what it made keeps its stamps. Anything else a controller writes is not Deed's to stamp.
 * `row`: the stamps of what the door carries, undefined where the door's controller-made
 * objects are not stamped.
 */
export function stampControllerMade(facts: DoorFacts<Door>, row: StampRow | undefined, ctx: DecisionContext): Verdict {
  const { request: req, requester } = facts;
  const namespace = req.namespace;
  if (row === undefined || req.subResource !== undefined || namespace === undefined || !req.object) return allowed();
  // An operator's later write of what it made keeps the stamps it was made with (frozen.stamps holds it on the validating side).
  if (req.operation === 'UPDATE') return req.oldObject && isOperatorMade(row.kind) ? keptOperatorStamps(req.oldObject, req.object, ctx.policy.keys) : allowed();
  if (req.operation !== 'CREATE') return allowed();
  const mismatch = facts.kindMismatch;
  if (mismatch) return enforce([mismatch], ctx.policy);
  const obj = req.object;
  const made = environmentOfControllerMade(controllerOf(obj), namespace, `the ${row.kind} its controller creates`, ctx);
  if ('finding' in made) return enforce([made.finding], ctx.policy);
  const bare = withoutStamps(obj, ctx.policy);
  if (made.environment === undefined) {
    // A pod of no environment is marked as such (selector-scope.ts), whatever its template
    // says, and a runner as its environment's (pod/runner-mark.ts): a template's other runner
    // mark is refused, not rewritten, or the pod would not match its controller's selector.
    const pod = row.kind === 'Pod';
    const misMarked = pod && entryOf(bare.metadata.labels ?? {}, ctx.policy.keys.runner) !== undefined ? runnerMarkFindings(bare, namespace, ctx.policy) : [];
    if (misMarked.length > 0) return enforce(misMarked, ctx.policy);
    const marked = pod && !ctx.policy.envByBoundNamespace.has(namespace);
    const runner = pod ? runnerOf(bare, namespace, ctx.policy) : undefined;
    const labels = { ...bare.metadata.labels, ...(marked ? { [ctx.policy.keys.noEnvironment]: 'true' } : {}), ...(runner !== undefined ? { [ctx.policy.keys.runner]: runner } : {}) };
    return patched(stampPatch(obj, labels, bare.metadata.annotations ?? {}, obj.metadata.ownerReferences ?? [], {}));
  }
  return stampCreate(bare, controllerMadeRow(row), namespace, req, ctx, actingFor(requester, made.environment), undefined, obj, true);
}

/**
 * A workload controller's write (controller-made.ts): what it creates is judged as an object
 * of its controlling owner's environment, by the same rules as if that environment had
 * created it, against what exists now (`create`, the door's); a change of an object's
 * controller, or an owner it adds, stays within one environment. Its other writes (status,
 * scale bookkeeping) are a system controller's. `kind`: the kind the door carries.
 */
export function judgeControllerWrite(facts: DoorFacts<Door>, namespace: string, ctx: DecisionContext, kind: string, create: (obj: KubeObject) => Verdict): Verdict {
  const { request: req, requester } = facts;
  const obj = req.object;
  if (req.subResource !== undefined || !obj) return allowed();
  if (req.operation === 'UPDATE') {
    if (!req.oldObject) return allowed();
    // An operator rewrites its Secrets' labels and annotations from a template (a Certificate's
    // secretTemplate) on every update: the stamps it made the Secret with stay as they are.
    const frozen = isOperatorMade(kind) ? frozenStamps(req.oldObject, obj, ctx.policy.keys, requester.username) : [];
    // A plain owner it adds too: the garbage collector deletes the object with its owners (reviewer-104 F1).
    return enforce([...adoptionFindings(req.oldObject, obj, kind, namespace, requester, ctx), ...addedOwnerFindings(req.oldObject, obj, kind, namespace, requester, ctx), ...frozen], ctx.policy);
  }
  if (req.operation !== 'CREATE') return allowed();
  return create(obj);
}
