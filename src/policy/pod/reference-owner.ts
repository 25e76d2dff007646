// Whether a pod may reach an object it names (a claim it mounts, a Secret or a ConfigMap it
// reads), shared by the claim rules and the rules of named references. The object's environment is read as guarded writes
// read it: from stamps that verify, a namespace binding for an unstamped object; never from
// a bare label. An object that does not exist is refused where the pod would take whatever
// is created under that name later, by anyone: a pod that names its node itself
// (`spec.nodeName`), which no binding follows. A pod the scheduler binds may name what does
// not exist yet (a manifest's Deployment before its ConfigMap): whoever creates it while the
// pod lives is judged against the pod (reference.live-reader), and the binding is judged
// again on what the pod reads (reference.at-binding). So is one in a namespace bound to an
// environment the requester acts for, where no other environment can create it.
import type { Requester } from '../requester/identity.js';
import { ownershipOfFound, type Ownership } from '../ownership.js';
import type { ControllerRef, DecisionContext, Lookup } from '../policy.js';
import { actsFor } from '../requester/principals.js';

/** The kinds a pod names by reference whose data the kubelet hands to it (named-references.ts). */
export type ReferencedKind = 'Secret' | 'ConfigMap';

/** One place a pod spec names a Secret or a ConfigMap. */
export interface NamedReference {
  kind: ReferencedKind;
  name: string;
  /** The field that names it. */
  path: string;
  /** What the reference does, for messages: `volume "creds" mounts`. */
  subject: string;
}

/** Who is reaching: the requester, and the environment its object is stamped for (undefined: none). */
export interface Reach {
  requester: Requester;
  environment: string | undefined;
  /** Environments whose objects it may also reach (a claim's `claimsFrom`). */
  alsoFrom?: ReadonlySet<string>;
  /** The pod that names it is bound through the API (boundByScheduler): what does not exist yet is judged later. */
  boundLater?: boolean;
}

export type ReferenceVerdict =
  // `unstamped`: the object itself carries no stamps (whatever the pod it was made for says),
  // which a reference whose follower writes into or changes its target must know.
  | { kind: 'allowed'; unstamped?: true }
  | { kind: 'unknown'; reason: string }
  | { kind: 'absent' }
  | { kind: 'unverifiable'; reason: string }
  | { kind: 'foreign'; environment: string };

export function judgeReference(found: Lookup, kind: string, namespace: string, reach: Reach, ctx: DecisionContext): ReferenceVerdict {
  const { policy } = ctx;
  if (found.state === 'unknown') return { kind: 'unknown', reason: found.reason };
  if (found.state === 'absent') return absentAllowed(namespace, reach, ctx) ? { kind: 'allowed' } : { kind: 'absent' };
  const own = ownershipOfFound(found, kind, namespace, policy, ctx.keyRing);
  const owner = referencedOwnership(found, kind, namespace, ctx, own);
  if (owner.kind === 'unknown') return { kind: 'unknown', reason: owner.reason };
  const allowed: ReferenceVerdict = own.kind === 'unowned' ? { kind: 'allowed', unstamped: true } : { kind: 'allowed' };
  // Unmanaged, outside a bound namespace: usable by all (a runner pod itself, named: the platform's).
  if (owner.kind === 'unowned' || owner.kind === 'runner') return allowed;
  if (owner.kind === 'unverifiable') return { kind: 'unverifiable', reason: owner.reason };
  const environment = owner.environment;
  if (environment === reach.environment || reach.alsoFrom?.has(environment) || actsFor(reach.requester, environment, policy)) return allowed;
  return { kind: 'foreign', environment };
}

/**
 * The pod a controller made this object for: its controlling owner reference names a Pod (the
 * resourceclaim controller's claim from the pod's ResourceClaimTemplate, the ephemeral volume
 * controller's claim). Unstamped, since Deed does not stamp what those controllers create, it is
 * still that pod's alone: another pod naming it would share its devices or mount its data.
 */
export function madeForPod(controller: ControllerRef | undefined): ControllerRef | undefined {
  return controller !== undefined && controller.kind === 'Pod' && controller.apiVersion === 'v1' ? controller : undefined;
}

/**
 * Whose an object a pod names is, as `kind` in `namespace`: its verified stamps or its
 * namespace's binding (ownership.ts), or, unstamped and made by a controller for one pod,
 * that pod's environment (a runner's: its service account's). A pod it was made for that is
 * gone, replaced or unreadable leaves it unknown.
 */
export function referencedOwnership(found: Extract<Lookup, { state: 'found' }>, kind: string, namespace: string, ctx: DecisionContext, owner: Ownership = ownershipOfFound(found, kind, namespace, ctx.policy, ctx.keyRing)): Ownership | { kind: 'unknown'; reason: string } {
  const pod = owner.kind === 'unowned' ? madeForPod(found.controller) : undefined;
  if (pod === undefined) return owner;
  const podFound = ctx.lookup.get('pods', namespace, pod.name);
  if (podFound.state === 'unknown') return { kind: 'unknown', reason: `it was made for pod ${pod.name}, and whose that pod is cannot be told: ${podFound.reason}` };
  // Gone (the garbage collector deletes what it made), or another pod under its name: no one's to hand on.
  if (podFound.state === 'absent' || podFound.metadata.uid !== pod.uid) return { kind: 'unknown', reason: `it was made for pod ${pod.name} (uid ${pod.uid}), which is gone` };
  const made = ownershipOfFound(podFound, 'Pod', namespace, ctx.policy, ctx.keyRing);
  // Made for a runner: its environment's, as what the runner's own stamps would say.
  return made.kind === 'runner' ? { kind: 'stamped', environment: made.environment } : made;
}

/** In a namespace bound to an environment the requester acts for, no other environment can create what is missing. */
export function absentAllowed(namespace: string, reach: Reach, ctx: DecisionContext): boolean {
  if (reach.boundLater === true) return true;
  const bound = ctx.policy.envByBoundNamespace.get(namespace);
  return bound !== undefined && actsFor(reach.requester, bound, ctx.policy);
}

/**
 * Whether a pod of this spec (or made from this template) is bound through the API: no
 * `spec.nodeName`, so the scheduler's `pods/binding` follows, which Deed judges again on what
 * the pod reads (rules/binding-reads.ts).
 */
export function boundByScheduler(spec: unknown): boolean {
  const node = typeof spec === 'object' && spec !== null ? (spec as { nodeName?: unknown }).nodeName : undefined;
  return node === undefined || node === null || node === '';
}

/** The words for who may not reach it, in a refusal. */
export function whoMayNot(reach: Reach): string {
  return reach.environment === undefined ? `${reach.requester.username} acts for no environment and may not` : `environment "${reach.environment}" may not`;
}
