// Facts about other objects a decision needs: the pod an eviction, a binding or a CONNECT
// (exec, attach, port-forward, proxy) names, the run lease a new object names, the
// controlling owner of what a controller creates, the claims a new pod or a workload's
// template mounts or clones (or a new claim clones), the Secrets and ConfigMaps a pod or a
// template names, the snapshots a claim restores and then their source claims. Which
// objects a review needs is its door's to say (the door reviews' `needs`, door-reviews.ts;
// the keys and their limits in reads.ts), decided here, purely; the server reads them (with a
// deadline) before deciding, so the decision itself stays free of I/O.
import { decodeReview, type Decoded } from '../admission/decode.js';
import type { AdmissionRequest } from '../admission/types.js';
import { doorOf, type Door } from './doors/door.js';
import type { Lookup, ObjectLookup, Policy } from './policy.js';
import { podReadKeys } from './rules/binding-reads.js';
import { kindRows } from './kinds.js';
import { ofUid, ownerLookupKey } from './controller-made.js';
import { madeForPod } from './pod/reference-owner.js';
import type { StampKeys } from './stamps/keys.js';
import { doorReview, judgedWhole, reviewFacts } from './door-reviews.js';
import type { DecodedWithFacts, ReviewFacts } from './review-facts.js';
import { lookupKey, type LookupKey } from './reads.js';

export type { LookupResource } from './kinds.js';
export { gatheredLookup, lookupKey, MAX_CLAIM_LOOKUPS, MAX_CONFIGMAP_LOOKUPS, MAX_SECRET_LOOKUPS, noLookup, type LookupKey } from './reads.js';

/** `admit` reads what `mutate` does, and at the CREATEs it judges whole what `validate` does (create-judgement.ts). */
type LookupWebhook = 'mutate' | 'validate' | 'admit';

/**
 * The objects a review's decision reads besides the request itself (the mutating side reads
 * none for claims, but for the CREATEs `admit` judges whole). `keys`: the policy's stamp keys (the run lease annotation is one).
 * `policy`: the names no rule judges (the well-known ConfigMaps) are not read; without it they are.
 */
export function lookupsNeeded(req: AdmissionRequest, webhook: LookupWebhook, keys: StampKeys, policy?: Policy): LookupKey[] {
  const door = doorOf(req);
  return readsOf(req, door, judgedWhole(req, door), webhook, keys, policy, undefined);
}

/** The reads of a request whose door is known, and whether `admit` judges it whole: its door's (door-reviews.ts); `facts`: the review's, when built (what a new pod names is worked out once, on them). */
function readsOf(req: AdmissionRequest, door: Door, whole: boolean, webhook: LookupWebhook, keys: StampKeys, policy: Policy | undefined, facts: ReviewFacts | undefined): LookupKey[] {
  const namespace = req.namespace;
  if (namespace === undefined) return [];
  const judges = webhook === 'validate' || (webhook === 'admit' && whole);
  return doorReview(door).needs({ req, door, namespace, judges, keys, policy, facts });
}

/**
 * What the first reads make necessary: the source claim of each snapshot read (a claim
 * restored from a snapshot is judged by the claim the snapshot copied), the owner of a
 * controller-made object's owner, and what a pending pod whose binding is judged reads.
 */
export function followUpLookups(read: LookupKey[], found: ObjectLookup, policy?: Policy): LookupKey[] {
  // A fresh read is made even of an object read before from the cache (a claim a pod both
  // mounts and restores a snapshot of): the cache keeps no creation time.
  // And of a uid: the owner a reference names is read again when the first read found another.
  const id = (k: LookupKey) => `${lookupKey(k)}${k.fresh === true ? ' fresh' : ''}${k.uid !== undefined ? ` uid ${k.uid}` : ''}`;
  const known = new Set(read.map(id));
  const out: LookupKey[] = [];
  for (const key of read) {
    const answer = found.get(key.resource, key.namespace, key.name);
    if (answer.state !== 'found') continue;
    for (const next of nextReads(key, answer, policy)) {
      if (known.has(id(next))) continue;
      known.add(id(next));
      out.push(next);
    }
  }
  return out;
}

function nextReads(key: LookupKey, answer: Extract<Lookup, { state: 'found' }>, policy: Policy | undefined): LookupKey[] {
  const namespace = key.namespace;
  if (key.resource === 'volumesnapshots')
    // Fresh: whether it is the claim the snapshot copied, or one made under its name since, is in its creation time.
    return answer.sourceClaim === undefined ? [] : [{ resource: 'persistentvolumeclaims', namespace, name: answer.sourceClaim, fresh: true }];
  if (key.resource === 'pods') return key.withReads === true ? podReadKeys(answer.reads, namespace, policy) : [];
  // A claim a controller made for one pod (a ResourceClaim from the pod's template, an
  // ephemeral volume's PVC) is that pod's: whose the pod is decides whose the claim is.
  if (POD_MADE_RESOURCES.has(key.resource)) {
    const pod = madeForPod(answer.controller);
    return pod === undefined ? [] : [{ resource: 'pods', namespace, name: pod.name, ...ofUid(pod.uid) }];
  }
  // A controller-made object's owner, whose own stamps may not verify (a ReplicaSet
  // carrying its Deployment's copied annotations): its owner too. So too an owner that
  // carries no stamps, read as an owner (the reference's uid names it): what a listed operator
  // made for an environment's object (cert-manager's ingress-shim's Certificate for an
  // Ingress) is of its owner's environment (controller-made.ts environmentOfController). One
  // with Deed's labels but no attestation is such an object too: the ingress-shim copies its
  // Ingress's labels onto the Certificate, Deed's among them (reviewer-107).
  const unstampedOwner = key.uid !== undefined && (policy === undefined || answer.metadata.labels?.[policy.keys.managed] === undefined || answer.metadata.annotations?.[policy.keys.attestation] === undefined);
  const owner = OWNER_RESOURCES.has(key.resource) || unstampedOwner ? ownerLookupKey(answer.controller, namespace) : undefined;
  return owner === undefined ? [] : [owner];
}

/**
 * How many rounds of reads a review makes: what it names, what those answers make necessary,
 * and theirs (a pending pod's binding reads the pod, then the claims it names, then the pod a
 * claim was made for; a restore reads the snapshot, its source claim, then that claim's pod).
 */
export const LOOKUP_ROUNDS = 3;

/** Reads `needed`, then each round's follow-ups (followUpLookups), at most LOOKUP_ROUNDS rounds: `read` does the I/O. With the policy, what no rule judges is not read. */
export async function gatherLookups(needed: LookupKey[], read: (keys: LookupKey[]) => Promise<ObjectLookup>, policy?: Policy): Promise<ObjectLookup> {
  let asked = needed;
  let found = await read(needed);
  for (let round = 1; round < LOOKUP_ROUNDS; round++) {
    const next = followUpLookups(asked, found, policy);
    if (next.length === 0) break;
    found = combinedLookup(found, await read(next));
    asked = [...asked, ...next];
  }
  return found;
}

/** Answers from the follow-up reads (`second`: a fresh read of an object the first read too wins), and from the first what they did not read. */
export function combinedLookup(first: ObjectLookup, second: ObjectLookup): ObjectLookup {
  return {
    get(resource, namespace, name) {
      const b = second.get(resource, namespace, name);
      if (b.state !== 'unknown') return b;
      // Unknown to both: the follow-up's reason (it was asked for), not the first's "not read".
      const a = first.get(resource, namespace, name);
      return a.state === 'unknown' ? b : a;
    },
    // No follow-up asks for readers.
    readers: (resource, namespace, name) => first.readers(resource, namespace, name),
  };
}

/** What a controller makes for one pod, whose pod is read after it (pod/reference-owner.ts, referencedOwnership). */
const POD_MADE_RESOURCES = new Set<string>(['resourceclaims', 'persistentvolumeclaims']);
/** The workloads whose own controlling owner is followed (controller-made.ts). */
const OWNER_RESOURCES = new Set<string>(kindRows().filter((r) => r.templates !== undefined && r.lookup !== undefined).map((r) => r.resource));

export interface ReadPlan {
  lookups: LookupKey[];
  decoded?: DecodedWithFacts;
  /** What went wrong working out the reads (a bug): the server logs and counts it. */
  fault?: unknown;
}

/**
 * The lookups for a raw review body, as the server sees it before deciding: exactly what its
 * door's review needs (door-reviews.ts), so a read no door declared cannot happen and none it
 * declared is skipped. The body decoded and, when `policy` is given, the review's facts come
 * back with them; decide() reuses both, so a review is decoded and its facts built once
 * whether it reads anything or not.
 */
export function planLookups(body: unknown, webhook: LookupWebhook, keys: StampKeys, policy?: Policy): ReadPlan {
  let decoded: Decoded;
  try {
    decoded = decodeReview(body);
  } catch {
    return { lookups: [] }; // decide() decodes again and answers the fault with the uid
  }
  if (!decoded.ok) return { lookups: [], decoded };
  try {
    if (policy === undefined) return { lookups: lookupsNeeded(decoded.request, webhook, keys), decoded };
    const facts = reviewFacts(decoded.request, policy);
    return { lookups: readsOf(facts.request, facts.door, facts.judgedAtMutation, webhook, keys, policy, facts), decoded: { ...decoded, facts } };
  } catch (fault) {
    // Nothing is read, so what the review needed is unknown to its rules, which refuse (fail
    // closed); decide() builds the facts again, where a fault of theirs is answered with the uid.
    return { lookups: [], decoded, fault };
  }
}
