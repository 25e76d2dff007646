// What the reaper knows about run leases during one sweep: one list per namespace, never
// one read per object (100,000 objects name a few hundred leases, in a few namespaces).
// Like an owner read, a list answers only for what existed before it was sent: "not in the
// list" proves gone, and "not renewed for too long" proves over, only for objects listed
// before it went out, so those get a fresh list of the namespace when the cached one is
// older. A lease present and not lapsed only ever keeps, so that is reused whatever its age.
import type { KubeClient } from '../kube/client.js';
import type { Clock } from './owner-facts.js';
import type { Slots } from './slots.js';
import type { LeaseLookup, LeaseRecord, LeaseRef } from './verdict.js';

type Listed = { state: 'listed'; leases: Map<string, LeaseRecord>; readAt: number } | { state: 'error'; message: string };

interface Fact {
  sentAt: number;
  listed: Promise<Listed>;
}

// Namespaces remembered at once, the oldest dropped first: the sweep's memory stays flat in
// the number of namespaces too.
const MAX_NAMESPACES = 256;
// A namespace with more Leases than this is not judged by lease (an error keeps): one
// list must not grow the sweep's memory without bound.
export const MAX_LEASES_PER_NAMESPACE = 20_000;

export class LeaseFacts {
  private readonly facts = new Map<string, Fact>();
  /** How many lease lists were sent. */
  lists = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly slots: Slots,
    private readonly clock: Clock,
    private readonly wallClock: () => number,
    /** Whether a listed lease shows its run over (verdict.leaseLapsed): only then is an older list not enough. */
    private readonly lapsed: (lease: LeaseRecord, readAt: number) => boolean,
  ) {}

  /** The lease's state, from a list sent after tick `seenAt` (or one that shows it held). */
  async read(ref: LeaseRef, seenAt: number): Promise<LeaseLookup> {
    const known = this.facts.get(ref.namespace);
    if (known !== undefined) {
      if (known.sentAt > seenAt) return answer(await known.listed, ref.name);
      const old = answer(await known.listed, ref.name);
      if (old.state === 'present' && !this.lapsed(old.lease, old.readAt)) return old;
      const latest = this.facts.get(ref.namespace);
      if (latest !== undefined && latest.sentAt > seenAt) return answer(await latest.listed, ref.name);
    }
    const fact: Fact = { sentAt: Number.NaN, listed: Promise.resolve({ state: 'error', message: 'not sent' }) };
    fact.listed = this.slots.run(() => {
      fact.sentAt = this.clock.tick();
      this.lists++;
      return listLeases(this.client, ref.namespace, this.wallClock());
    });
    fact.sentAt = this.clock.tick();
    this.facts.delete(ref.namespace);
    this.facts.set(ref.namespace, fact);
    if (this.facts.size > MAX_NAMESPACES) this.facts.delete(this.facts.keys().next().value!);
    return answer(await fact.listed, ref.name);
  }
}

function answer(listed: Listed, name: string): LeaseLookup {
  if (listed.state === 'error') return listed;
  const lease = listed.leases.get(name);
  return lease === undefined ? { state: 'absent', readAt: listed.readAt } : { state: 'present', lease, readAt: listed.readAt };
}

/** Every Lease of the namespace, or an error: a list that did not complete proves nothing absent. */
export async function listLeases(client: KubeClient, namespace: string, sentAt: number): Promise<Listed> {
  const leases = new Map<string, LeaseRecord>();
  try {
    for await (const page of client.listLeasePages(namespace)) {
      for (const { name, lease } of page) leases.set(name, lease);
      if (leases.size > MAX_LEASES_PER_NAMESPACE) return { state: 'error', message: `more than ${MAX_LEASES_PER_NAMESPACE} Leases in ${namespace}` };
    }
  } catch (err) {
    return { state: 'error', message: (err as Error).message };
  }
  return { state: 'listed', leases, readAt: sentAt };
}
