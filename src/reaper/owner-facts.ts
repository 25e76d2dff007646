// What the reaper knows about owner pods during one sweep. A read of a pod by name answers
// for uids, never for the name: NotFound (or another uid under the name) proves gone only
// the uids that existed before the read was sent, and a later pod of the same name is a new
// owner. So each fact carries the tick it was sent at, and an object may use it only if it
// was seen (listed) before that tick; anything seen later gets a fresh read. "Present with
// the object's uid" only ever keeps, so it is reused whatever its age.
import type { KubeClient } from '../kube/client.js';
import { KubeError } from '../kube/errors.js';
import type { OwnerLookup, OwnerRef, PodClockLookup, PodRef } from './verdict.js';
import type { Slots } from './slots.js';

interface Fact {
  sentAt: number;
  lookup: Promise<OwnerLookup>;
}

// One entry per owner name, the oldest dropped first: a cluster with more runners than this
// re-reads some, and the sweep's memory stays flat in the number of owners too.
const MAX_FACTS = 20_000;

export class OwnerFacts {
  private readonly facts = new Map<string, Fact>();
  /** How many owner reads were sent. */
  reads = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly slots: Slots,
    private readonly clock: Clock,
  ) {}

  /** The owner's state, from a read sent after tick `seenAt` (or one that shows the owner running). */
  async read(ref: OwnerRef, seenAt: number): Promise<OwnerLookup> {
    const key = `${ref.namespace}/${ref.name}`;
    const known = this.facts.get(key);
    if (known !== undefined) {
      if (known.sentAt > seenAt) return known.lookup;
      const lookup = await known.lookup;
      if (lookup.state === 'present' && lookup.uid === ref.uid) return lookup;
      // The entry may have been replaced by a newer read while this one was awaited.
      const latest = this.facts.get(key);
      if (latest !== undefined && latest.sentAt > seenAt) return latest.lookup;
    }
    const fact: Fact = { sentAt: Number.NaN, lookup: Promise.resolve({ state: 'absent' }) };
    fact.lookup = this.slots.run(() => {
      // Ticked when the request goes out, not when it was queued: that is what it answers for.
      fact.sentAt = this.clock.tick();
      this.reads++;
      return lookupOwner(this.client, ref);
    });
    // Until it is sent, a queued read answers for nothing seen before the queueing either.
    fact.sentAt = this.clock.tick();
    this.facts.delete(key);
    this.facts.set(key, fact);
    if (this.facts.size > MAX_FACTS) this.facts.delete(this.facts.keys().next().value!);
    return fact.lookup;
  }
}

/** A counter, not wall time: it orders "seen" and "sent" within one process exactly. */
export class Clock {
  private t = 0;
  tick(): number {
    return ++this.t;
  }
}

/** One read of the runner pod by name: present with its uid, absent only on NotFound, an error otherwise. */
export async function lookupOwner(client: KubeClient, ref: OwnerRef): Promise<OwnerLookup> {
  try {
    const pod = await client.getPod(ref.namespace, ref.name);
    const uid = pod.metadata.uid;
    return uid ? { state: 'present', uid } : { state: 'error', message: 'the owner pod came back without a uid' };
  } catch (err) {
    if (err instanceof KubeError && err.reason === 'NotFound') return { state: 'absent' };
    return { state: 'error', message: (err as Error).message };
  }
}

/** One read of a pod whose attested deadline passed, for its own clock: absent only on NotFound, an error otherwise. */
export async function lookupPodClock(client: KubeClient, ref: PodRef): Promise<PodClockLookup> {
  try {
    const pod = await client.getPodClock(ref.namespace, ref.name);
    if (!pod.uid) return { state: 'error', message: 'the pod came back without a uid' };
    return { state: 'found', ...pod, uid: pod.uid };
  } catch (err) {
    if (err instanceof KubeError && err.reason === 'NotFound') return { state: 'absent' };
    return { state: 'error', message: (err as Error).message };
  }
}
