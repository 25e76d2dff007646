// What the reaper knows about run leases during one sweep: each Lease an object names is read
// by name (GET), never by listing its namespace, so no number of other Leases there (another
// environment's flood, a tenant's leader elections) changes what is read or whether it can be.
// Like an owner read, a GET answers only for what existed before it was sent: NotFound proves
// gone, and "not renewed for too long" proves over, only for objects listed before it went out
// (a Lease deleted and recreated under the name since is another run's), so those get a fresh
// read when the cached one is older. Only the run's own lease, held (stamped for the objects'
// environment, verified, not lapsed), only ever keeps, so only that is reused whatever its age:
// one read as replaced (another environment's, or unstamped) may since have been deleted and
// made again by the run's environment for a live run. The first reads of distinct leases are bounded per namespace and
// sweep: past the bound an object is kept (`bounded`) and counted, and a later sweep reads it.
import type { KubeClient } from '../kube/client.js';
import { KubeError } from '../kube/errors.js';
import type { Clock } from './owner-facts.js';
import type { Slots } from './slots.js';
import type { LeaseLookup, LeaseRecord, LeaseRef } from './verdict.js';

interface Fact {
  sentAt: number;
  lookup: Promise<LeaseLookup>;
}

// One entry per lease, the oldest dropped first: the sweep's memory stays flat in the number
// of leases (one dropped and needed again is read again, and counts against the bound again).
const MAX_FACTS = 20_000;
/**
 * Distinct Leases first read in one namespace in one sweep at most: a namespace whose objects
 * name more is judged by lease up to the bound, the rest kept and read by a later sweep. Only
 * this environment's attested objects name leases the reaper reads, so no other environment
 * can spend it.
 */
export const MAX_LEASE_READS_PER_NAMESPACE = 10_000;

export class LeaseFacts {
  private readonly facts = new Map<string, Fact>();
  /** Leases first read this sweep, by budget (a namespace): one number each. */
  private readonly firstReads = new Map<string, number>();
  /** How many Lease GETs were sent. */
  reads = 0;
  /** GETs that failed other than NotFound (the objects naming them kept as lease-unreadable). */
  failed = 0;
  /** Distinct leases not read because their namespace was past the bound. */
  bounded = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly slots: Slots,
    private readonly clock: Clock,
    private readonly wallClock: () => number,
    /** Whether a lease read shows the run's own lease held for `environment`'s objects (verdict.leaseHeld): only such a read is reused for objects seen after it. */
    private readonly held: (lease: LeaseRecord, readAt: number, ref: LeaseRef, environment: string) => boolean,
    private readonly maxPerNamespace = MAX_LEASE_READS_PER_NAMESPACE,
  ) {}

  /**
   * The lease's state, from a read sent after tick `seenAt` (or one that shows it held for
   * `environment`, whose object names it). `budget`: whose bound a first read spends, by
   * default its namespace's.
   */
  async read(ref: LeaseRef, seenAt: number, environment: string, budget = ref.namespace): Promise<LeaseLookup> {
    const key = `${ref.namespace}/${ref.name}`;
    const known = this.facts.get(key);
    if (known !== undefined) {
      if (known.sentAt > seenAt) return known.lookup;
      const old = await known.lookup;
      // A bound answers for the whole sweep: the namespace's budget does not come back.
      if (old.state === 'bounded' || (old.state === 'present' && this.held(old.lease, old.readAt, ref, environment))) return old;
      // The entry may have been replaced by a newer read while this one was awaited.
      const latest = this.facts.get(key);
      if (latest !== undefined && latest.sentAt > seenAt) return latest.lookup;
    } else {
      const first = this.firstReads.get(budget) ?? 0;
      if (first >= this.maxPerNamespace) {
        this.bounded++;
        const lookup: LeaseLookup = { state: 'bounded', limit: this.maxPerNamespace };
        this.remember(key, { sentAt: Number.POSITIVE_INFINITY, lookup: Promise.resolve(lookup) });
        return lookup;
      }
      this.firstReads.set(budget, first + 1);
    }
    const fact: Fact = { sentAt: Number.NaN, lookup: Promise.resolve({ state: 'error', message: 'not sent' }) };
    fact.lookup = this.slots.run(async () => {
      // Ticked when the request goes out, not when it was queued: that is what it answers for.
      fact.sentAt = this.clock.tick();
      this.reads++;
      const lookup = await lookupLease(this.client, ref, this.wallClock());
      if (lookup.state === 'error') this.failed++;
      return lookup;
    });
    // Until it is sent, a queued read answers for nothing seen before the queueing either.
    fact.sentAt = this.clock.tick();
    this.remember(key, fact);
    return fact.lookup;
  }

  private remember(key: string, fact: Fact): void {
    this.facts.delete(key);
    this.facts.set(key, fact);
    if (this.facts.size > MAX_FACTS) this.facts.delete(this.facts.keys().next().value!);
  }
}

/**
 * One read of the Lease by name, judged as of `sentAt` (ms since the epoch, taken before it
 * was sent): present, absent only on NotFound, an error otherwise.
 */
export async function lookupLease(client: KubeClient, ref: LeaseRef, sentAt: number): Promise<LeaseLookup> {
  try {
    return { state: 'present', lease: await client.getLease(ref.namespace, ref.name), readAt: sentAt };
  } catch (err) {
    if (err instanceof KubeError && err.reason === 'NotFound') return { state: 'absent', readAt: sentAt };
    return { state: 'error', message: (err as Error).message };
  }
}
