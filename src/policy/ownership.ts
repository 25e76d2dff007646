// Whose an existing object is, for guarded writes. Read from stamps that verify, never from
// a bare label: a label anyone could have written through a door Deed did not see is not
// evidence. A runner pod (unstamped, created by the platform) belongs to the environment
// its service account acts for, since deleting it makes the garbage collector delete every
// object Deed stamped with an owner reference to it. In a namespace bound to an
// environment, an object without stamps (a manager's, a controller's, an admin's) is that
// environment's: only that environment creates sandbox objects there, so the binding
// holds on every later door too, not only at CREATE.
import { entryOf } from './unstructured.js';
import type { KubeObject } from '../admission/types.js';

import { verifyObject, type KeyRing, type Verification } from './stamps/key-ring.js';
import type { StampKeys } from './stamps/keys.js';
import { serviceAccountEnvironment } from './requester/identity.js';
import type { DecisionContext, Lookup, ObjectLookup, Policy } from './policy.js';

export type Ownership =
  | { kind: 'stamped'; environment: string }
  | { kind: 'runner'; environment: string; serviceAccount: string }
  /** Unstamped, in a namespace bound to `environment` (policy `environments[].namespaces`). */
  | { kind: 'bound'; environment: string }
  /** Carries Deed's stamps (or some of them) that do not verify: tampered, or signed by a key no longer in the ring. */
  | { kind: 'unverifiable'; label: string | undefined; reason: string }
  | { kind: 'unowned' };

/** The environment an ownership names (stamped, a runner's, a bound namespace's); undefined for one unowned, unverifiable or not known. */
export function environmentOfOwnership(owner: Ownership | { kind: 'unknown' }): string | undefined {
  return owner.kind === 'stamped' || owner.kind === 'runner' || owner.kind === 'bound' ? owner.environment : undefined;
}

export interface OwnershipFacts {
  kind: string;
  namespace: string;
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  /** Pods only: spec.serviceAccountName. */
  serviceAccountName?: string | undefined;
  /** The lookup cache verified the stamps with this ring, as this kind in this namespace (Lookup's `stampsVerified`). */
  stampsVerified?: true | undefined;
}

/**
 * Whether an existing object's stamps verify as `kind` in `namespace`: what ownershipOf
 * relies on, and what the lookup cache checks once when an object arrives (its verdict
 * then travels as `stampsVerified`).
 */
export function verifyStoredStamps(kind: string, namespace: string, metadata: OwnershipFacts['metadata'], keys: StampKeys, ring: KeyRing): Verification {
  return verifyObject(ring, { kind, metadata } as KubeObject, keys, kind, namespace);
}

export function ownershipOf(facts: OwnershipFacts, policy: Policy, ring: KeyRing): Ownership {
  const { keys } = policy;
  const labels = facts.metadata.labels ?? {};
  const annotations = facts.metadata.annotations ?? {};
  const claimed = entryOf(labels, keys.environment);
  const stamped = claimed !== undefined || entryOf(labels, keys.managed) !== undefined || entryOf(annotations, keys.attestation) !== undefined;
  if (stamped) {
    if (facts.stampsVerified === true && claimed !== undefined) return { kind: 'stamped', environment: claimed };
    const verified = verifyStoredStamps(facts.kind, facts.namespace, { labels, annotations }, keys, ring);
    if (verified.ok && claimed !== undefined) return { kind: 'stamped', environment: claimed };
    return { kind: 'unverifiable', label: claimed, reason: verified.ok ? `carries no ${keys.environment}` : `the stored attestation ${verified.reason}` };
  }
  if (facts.kind === 'Pod') {
    const sa = facts.serviceAccountName || 'default';
    const environment = serviceAccountEnvironment(facts.namespace, sa, policy);
    if (environment !== undefined) return { kind: 'runner', environment, serviceAccount: `${facts.namespace}:${sa}` };
  }
  const bound = policy.envByBoundNamespace.get(facts.namespace);
  return bound !== undefined ? { kind: 'bound', environment: bound } : { kind: 'unowned' };
}

/** Whose an object a lookup found is, as `kind` in `namespace`; once per review for an answer of the review's lookup (`forReview`). */
export function ownershipOfFound(found: Extract<Lookup, { state: 'found' }>, kind: string, namespace: string, policy: Policy, ring: KeyRing): Ownership {
  const known = (found as Partial<Reviewed>)[OWNERS];
  const key = `${kind}/${namespace}`;
  const owner = known?.get(key) ?? ownershipOf({ kind, namespace, metadata: found.metadata, serviceAccountName: found.serviceAccountName, stampsVerified: found.stampsVerified }, policy, ring);
  known?.set(key, owner);
  return owner;
}

/**
 * A found answer a review's lookup handed out carries whose it is as each kind in each
 * namespace asked (the review's policy and ring), under a symbol no rule reads. It lives
 * and dies with the review's copy of the answer: kept in a WeakMap keyed by that copy, it
 * was kept alive past young-generation collections (an old table's entries are roots
 * there) and every review's answers went to the old generation.
 */
const OWNERS = Symbol('owners');
type Reviewed = { [OWNERS]: Map<string, Ownership> };

/**
 * The context of one review (issue 37: a review computes its facts once): its lookup answers
 * each object with the same answer every time, an answer of the review's own (a copy), so
 * whose a found object is, and so the verification of its stamps, is worked out once
 * however many rules ask (a claim: its environment, whether it is a workspace, twice over).
 * The answers themselves are the lookup's: no decision changes.
 */
export function forReview(ctx: DecisionContext): DecisionContext {
  return { ...ctx, lookup: reviewLookup(ctx.lookup) };
}

function reviewLookup(lookup: ObjectLookup): ObjectLookup {
  const answers = new Map<string, Lookup>();
  return {
    get(resource, namespace, name) {
      const key = `${resource}/${namespace}/${name}`;
      let answer = answers.get(key);
      if (answer === undefined) {
        answer = lookup.get(resource, namespace, name);
        if (answer.state === 'found') {
          answer = Object.assign({ [OWNERS]: new Map() }, answer);
        }
        answers.set(key, answer);
      }
      return answer;
    },
    readers: (resource, namespace, name) => lookup.readers(resource, namespace, name),
  };
}

export function ownershipOfObject(obj: KubeObject, kind: string, namespace: string, policy: Policy, ring: KeyRing): Ownership {
  const sa = kind === 'Pod' ? obj.spec?.serviceAccountName : undefined;
  return ownershipOf({ kind, namespace, metadata: obj.metadata, serviceAccountName: typeof sa === 'string' ? sa : undefined }, policy, ring);
}
