// What a review is about, computed once per review (issue 37; built by door-reviews.ts) and
// handed to the read plan (lookup.ts), the stamping and the judgement (the door reviews,
// doors/), where each used to compute it again: the door the request comes through, who asks,
// whether that is a workload controller, whether its body's kind is the kind its resource
// carries, and who the requester is as a creator in the namespace.
import type { Decoded } from '../admission/decode.js';
import type { AdmissionRequest, KubeObject } from '../admission/types.js';
import type { Finding } from '../admission/verdict.js';
import type { Door } from './doors/door.js';
import type { Requester } from './requester/identity.js';
import { createIdentity, type CreateGate, type CreatorIdentity } from './create-gate.js';
import type { Policy } from './policy.js';
import { namesAfter, podNames, type PodNames } from './pod/pod-names.js';
import type { Rec } from './unstructured.js';

export interface ReviewFacts {
  request: AdmissionRequest;
  door: Door;
  requester: Requester;
  /** The requester is a workload controller (`workloadControllers`): what it creates is judged as its controlling owner's (controller-made.ts). */
  controller: boolean;
  /** For a door that carries an object of one kind (a stamped kind, a workload, a default-row kind): a body of another kind, refused. */
  kindMismatch: Finding | undefined;
  /** Who the requester is as a creator in the request's namespace (create-gate.ts); undefined for a request naming no namespace. */
  identity: CreatorIdentity | undefined;
  /** A CREATE the mutating webhook judges whole (door-reviews.ts, judgedWhole). */
  judgedAtMutation: boolean;
  /** The requester's create gate on the request's object (`createGateOf`), once something asked. */
  createGate?: CreateGate;
  /** What the request's pod spec names, once something asked (`podNamesOf`): the spec it was worked out on, and the names. */
  podNames?: { spec: Rec; names: PodNames };
  /** What a workload's (changed) templates name, once something asked (workload/review.ts `workloadNamesOf`): the templates' specs it was worked out on, and the names. */
  workloadNames?: { templates: Array<{ at: string; spec: Rec }>; names: PodNames };
}

/**
 * The same review's facts for the object as the mutating webhook's patch leaves it (what the
 * validating side judges, create-judgement.ts): the patch writes stamps, a deadline and the
 * token automount, never the kind, the name or who asks, so every fact stands.
 */
export function withObject(facts: ReviewFacts, request: AdmissionRequest): ReviewFacts {
  return { ...facts, request };
}

/** A decoded body with its review's facts, when whoever decoded it (the read plan) built them: decide() uses both. */
export type DecodedWithFacts = Decoded & { facts?: ReviewFacts };

/**
 * What a new pod's spec names (pod/pod-names.ts), worked out once per review: by the read
 * plan on the pod as it arrived, then, for the pod as Deed's patch leaves it (`withObject`),
 * derived from that. Without the review's facts (a caller that has none), worked out here.
 */
export function podNamesOf(facts: ReviewFacts | undefined, spec: Rec): PodNames {
  const known = facts?.podNames;
  if (known?.spec === spec) return known.names;
  const names = (known === undefined ? undefined : namesAfter(known.spec, known.names, spec)) ?? podNames(spec);
  if (facts !== undefined) facts.podNames = { spec, names };
  return names;
}

/**
 * The requester's create gate on the request's object (create-gate.ts createIdentity), worked
 * out once per review: by the stamping on the object as it arrived, or by the judgement. It
 * holds for the object as Deed's patch leaves it (`withObject`) too: the gate reads the
 * object only for a requester Deed stamps nothing for, and Deed's patch adds no
 * admission-owned key to such a requester's object.
 */
export function createGateOf(facts: ReviewFacts, namespace: string, obj: KubeObject, policy: Policy): CreateGate {
  return (facts.createGate ??= createIdentity(facts.requester, namespace, obj.metadata.labels ?? {}, obj.metadata.annotations ?? {}, policy, facts.identity));
}
