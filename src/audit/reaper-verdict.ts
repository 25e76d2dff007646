// The audit asks the reaper's pure verdict what it would do with an object, through this
// one adapter: the reaper is judged per environment, so the object's own (stamped)
// environment is the one it is asked for. A change of the verdict's signature is a fix here.
import { entryOf } from '../policy/unstructured.js';
import type { KubeObject } from '../admission/types.js';

import type { KeyRing } from '../policy/stamps/key-ring.js';
import type { StampKeys } from '../policy/stamps/keys.js';
import type { SandboxKind } from '../policy/kinds.js';
import { needs, verdict, type LeaseLookup, type LeaseRef, type Needs, type OwnerLookup, type OwnerRef, type PodClockLookup, type PodRef, type ReaperContext, type ReapVerdict } from '../reaper/verdict.js';

export type { LeaseLookup, LeaseRef, Needs, OwnerLookup, OwnerRef, PodClockLookup, PodRef, ReapVerdict };

export interface ReaperFacts {
  keys: StampKeys;
  keyRing: KeyRing;
  /** Milliseconds since the epoch. */
  now: number;
  /** The policy's `reaper` section. */
  deadlineGraceSeconds: number;
  leaseGraceSeconds: number;
  runLeases: boolean;
}

function context(obj: KubeObject, facts: ReaperFacts): ReaperContext {
  // No environment stamp: the verdict skips it as foreign, which is what the reaper of any environment would do.
  const environment = entryOf(obj.metadata.labels ?? {}, facts.keys.environment) ?? '';
  // The audit asks for the reaper's verdict only on objects inside the review scope; outside
  // it, it reports the scope instead (scope.outside-review).
  return {
    environment,
    keys: facts.keys,
    keyRing: facts.keyRing,
    now: facts.now,
    inReviewScope: () => true,
    deadlineGraceSeconds: facts.deadlineGraceSeconds,
    leaseGraceSeconds: facts.leaseGraceSeconds,
    runLeases: facts.runLeases,
  };
}

/** The runner pod, the run lease and the pod's own clock the verdict on `obj` depends on, if any. */
export function reaperNeeds(obj: KubeObject, kind: SandboxKind['kind'], facts: ReaperFacts): Needs {
  return needs(obj, kind, context(obj, facts));
}

/** The runner pod whose existence the verdict on `obj` depends on, if any. */
export function reaperOwner(obj: KubeObject, kind: SandboxKind['kind'], facts: ReaperFacts): OwnerRef | undefined {
  return reaperNeeds(obj, kind, facts).owner;
}

export function reaperVerdict(obj: KubeObject, kind: SandboxKind['kind'], facts: ReaperFacts, owner: OwnerLookup | undefined, lease?: LeaseLookup, pod?: PodClockLookup): ReapVerdict {
  return verdict(obj, kind, context(obj, facts), owner, lease, pod);
}
