// One sweep of the reaper: read the review scope, list this environment's stamped objects
// page by page, judge each page with the pure verdict as it arrives, and (with apply)
// delete the reaped ones, a bounded number at a time, each with the UID and resourceVersion
// read as preconditions and its owner's absence read again just before. Memory is flat in
// the number of objects: at most three pages are held (one being read, one judged, the
// deletes of the one before), and every decision goes out through onDecision as it is
// made, never into a list.
import type { KubeObject } from '../admission/types.js';
import { REAP_KINDS, type KubeClient, type ReapKind } from '../kube/client.js';
import { KubeError } from '../kube/errors.js';
import { readReviewScope } from '../kube/review-scope.js';
import type { KeyRing } from '../policy/stamps/key-ring.js';
import type { StampKeys } from '../policy/stamps/keys.js';
import { LeaseFacts } from './lease-facts.js';
import { Clock, lookupPodClock, OwnerFacts } from './owner-facts.js';
import { Slots } from './slots.js';
import { leaseHeld, needs, verdict, type Action, type Needs, type PodClockLookup, type ReapVerdict, type ReaperContext, type VerdictCode } from './verdict.js';

export interface SweepOptions {
  client: KubeClient;
  environment: string;
  keys: StampKeys;
  keyRing: KeyRing;
  /** Deed's own namespace: never in the review scope (policy/review-scope). */
  deedNamespace: string;
  /** Namespaces to sweep; empty means all namespaces. */
  namespaces: string[];
  /** Delete what is reaped; otherwise a dry run. */
  apply: boolean;
  now: () => number;
  /** Policy `reaper.deadlineGraceSeconds` and `reaper.leaseGraceSeconds`. */
  deadlineGraceSeconds: number;
  leaseGraceSeconds: number;
  runLeases: boolean;
  /** Deletes in flight at most (and, apart, owner reads and lease reads in flight at most). */
  concurrency: number;
  /** Distinct run leases read per namespace at most (lease-facts.ts; the default there). */
  maxLeaseReadsPerNamespace?: number;
  /** Stops new deletes (SIGTERM); those in flight finish, what is left is judged next time. */
  signal?: AbortSignal;
  /** Each decision as it is made; a promise holds the sweep back (output backpressure). */
  onDecision?: (d: Decision) => void | Promise<void>;
}

/** What happened to a reaped object. */
export type Outcome = 'would-delete' | 'not-permitted' | 'deleted' | 'already-gone' | 'conflict' | 'failed' | 'stopped';

export interface Decision {
  action: Action | 'error';
  code: VerdictCode | 'list-failed' | 'scope-unreadable';
  kind: ReapKind | 'Namespace';
  /** `*` for a failed list across all namespaces. */
  namespace: string;
  name?: string;
  uid?: string;
  reason: string;
  outcome?: Outcome;
  error?: string;
  /**
   * Counted, not written out: an object of this environment outside the review scope, after
   * the first of its kind and namespace was written. Anyone may label objects there, and every
   * sweep lists them; one line a kind and namespace says so, the summary and the metrics count them all.
   */
  folded?: true;
}

export interface SweepSummary {
  environment: string;
  dryRun: boolean;
  /** False when a stop signal ended the sweep early: what is left is judged next time. */
  complete: boolean;
  /** Objects judged. */
  judged: number;
  /** Deleted (or, in a dry run, would be; or found already gone). */
  reaped: number;
  kept: number;
  /** Never this reaper's to judge: foreign, unattested, outside the review scope. */
  skipped: number;
  /** Deletes refused by a precondition: the object changed since it was read. */
  conflicts: number;
  /** Reaps not attempted because the sweep was stopped first. */
  stopped: number;
  /** Lists and deletes that failed. */
  errors: number;
  /** Counts by verdict, then by reason code. */
  reasons: Partial<Record<Action | 'error', Record<string, number>>>;
  ownerReads: number;
  /** Run leases read by name (once per lease, again only for one that looks over). */
  leaseReads: number;
  /** Of those, reads that failed other than NotFound: their objects kept as lease-unreadable. */
  leaseReadsFailed: number;
  /** Run leases not read because their namespace was past the sweep's bound: their objects kept as lease-bounded. */
  leasesBounded: number;
  durationMs: number;
}

/** The only selector the reaper lists with: it never reads another environment's objects. */
export function reapSelector(keys: StampKeys, environment: string): string {
  return `${keys.managed}=true,${keys.environment}=${environment}`;
}

interface Judged {
  obj: KubeObject;
  reads: Needs;
  /** A pod's own clock, read after it was listed: the delete's resourceVersion precondition holds it to the state listed. */
  pod: PodClockLookup | undefined;
  decision: Decision;
}

export async function sweep(o: SweepOptions): Promise<SweepSummary> {
  const started = performance.now();
  const tally = new Tally(o);
  const emit = async (d: Decision) => {
    tally.add(d);
    await o.onDecision?.(d);
  };
  const clock = new Clock();
  const deletes = new Slots(o.concurrency);
  const owners = new OwnerFacts(o.client, new Slots(o.concurrency), clock);
  const podReads = new Slots(o.concurrency);
  const leases = new LeaseFacts(o.client, new Slots(o.concurrency), clock, o.now, (lease, readAt, ref) => leaseHeld(lease, readAt, ref, o), o.maxLeaseReadsPerNamespace);
  let interrupted = false;
  const stopping = () => {
    if (o.signal?.aborted) interrupted = true;
    return interrupted;
  };
  const finish = () => tally.summary(!interrupted, owners.reads, leases, performance.now() - started);

  let scope: Set<string>;
  try {
    scope = await readReviewScope(o.client, o.deedNamespace);
  } catch (err) {
    await emit({
      action: 'error',
      code: 'scope-unreadable',
      kind: 'Namespace',
      namespace: '*',
      reason: `could not read the review scope (${(err as Error).message}): no stamp can be trusted, nothing judged`,
    });
    stopping();
    return finish();
  }
  const base: Omit<ReaperContext, 'now'> = {
    environment: o.environment,
    keys: o.keys,
    keyRing: o.keyRing,
    inReviewScope: (ns) => scope.has(ns),
    deadlineGraceSeconds: o.deadlineGraceSeconds,
    leaseGraceSeconds: o.leaseGraceSeconds,
    runLeases: o.runLeases,
  };
  const context = (): ReaperContext => ({ ...base, now: o.now() });

  const judge = async (obj: KubeObject, kind: ReapKind, seenAt: number): Promise<Judged | undefined> => {
    const reads = needs(obj, kind, context());
    const pod = reads.pod;
    const [owner, lease, podClock] = await Promise.all([
      reads.owner && owners.read(reads.owner, seenAt),
      reads.lease && leases.read(reads.lease, seenAt, o.environment),
      pod && podReads.run(() => lookupPodClock(o.client, pod)),
    ]);
    // The clock is read after the reads: a deadline is judged as of the latest fact.
    const v = verdict(obj, kind, context(), owner, lease, podClock);
    const decision = describe(obj, kind, v);
    if (v.action === 'reap') return { obj, reads, pod: podClock, decision };
    if (v.code === 'outside-review-scope') await emit(foldOutside(decision));
    else await emit(decision);
    return undefined;
  };
  // The kinds and namespaces outside the review scope whose first object was written out (one entry each).
  const outsideWritten = new Set<string>();
  const foldOutside = (d: Decision): Decision => {
    const key = `${d.kind}/${d.namespace}`;
    if (outsideWritten.has(key)) return { ...d, folded: true };
    outsideWritten.add(key);
    return { ...d, reason: `${d.reason} (the rest of this environment's ${d.kind}s there are counted in the summary, not listed)` };
  };

  const remove = async (j: Judged, decidedAt: number): Promise<void> => {
    if (stopping()) return emit({ ...j.decision, outcome: 'stopped', reason: `${j.decision.reason}; not deleted: the sweep was stopped first` });
    const kind = j.decision.kind as ReapKind;
    if (j.reads.owner !== undefined || j.reads.lease !== undefined) {
      // The object's UID precondition protects its identity, not its run's end: the owner's
      // absence and the lease's are read again, after the verdict, before the delete.
      const [owner, lease] = await Promise.all([j.reads.owner && owners.read(j.reads.owner, decidedAt), j.reads.lease && leases.read(j.reads.lease, decidedAt, o.environment)]);
      const again = verdict(j.obj, kind, context(), owner, lease, j.pod);
      if (again.action !== 'reap') return emit({ ...describe(j.obj, kind, again), reason: `${again.reason} (read again before the delete)` });
    }
    const { namespace = '', name, uid, resourceVersion } = j.obj.metadata;
    // The uid holds the delete to the object judged. What else the verdict read of it the
    // webhook does not let anyone turn back (the stamps are frozen, the terminal mark set for
    // good, a deadline only lowered), so a write since (an annotation touched in a loop by the
    // leak's own environment) must not stop the delete of a leaked Secret. Held to the state
    // listed as well: a pod judged by its own clock (its phase, its start), and a claim, whose
    // data nothing brings back should its mark have been taken off where the webhook did not see.
    const held = (j.pod !== undefined || kind === 'PersistentVolumeClaim') && resourceVersion ? { resourceVersion } : {};
    try {
      // Both are set: the verdict skips objects without a uid.
      await o.client.delete(kind, namespace, name!, { uid: uid!, ...held });
      return emit({ ...j.decision, outcome: 'deleted' });
    } catch (err) {
      const e = err as Error;
      if (err instanceof KubeError && err.reason === 'NotFound') return emit({ ...j.decision, outcome: 'already-gone' });
      // A conflict means the object changed or was replaced since it was read: the verdict no
      // longer applies, and the next sweep judges what is there now.
      if (err instanceof KubeError && err.reason === 'Conflict') return emit({ ...j.decision, outcome: 'conflict', error: e.message });
      if (stopping()) return emit({ ...j.decision, outcome: 'stopped', error: e.message });
      return emit({ ...j.decision, outcome: 'failed', error: e.message });
    }
  };
  // A dry run promises a delete only if this identity could make it: RBAC is asked once per
  // kind and namespace (SelfSubjectAccessReview). The webhook's guarded writes are not
  // asked; the reaper's account acts for its environment (docs/operations.md).
  const access = new Map<string, Promise<{ allowed: boolean; reason?: string } | { error: string }>>();
  const mayDelete = (kind: ReapKind, namespace: string) => {
    const key = `${kind}/${namespace}`;
    let answer = access.get(key);
    if (answer === undefined) access.set(key, (answer = o.client.canDelete(kind, namespace).catch((err: unknown) => ({ error: (err as Error).message }))));
    return answer;
  };
  const promise = async (j: Judged): Promise<void> => {
    const kind = j.decision.kind as ReapKind;
    const answer = await mayDelete(kind, j.decision.namespace);
    if ('error' in answer) return emit({ ...j.decision, outcome: 'would-delete', error: `could not ask whether this identity may delete it (${answer.error})` });
    if (!answer.allowed)
      return emit({ ...j.decision, outcome: 'not-permitted', error: `this identity may not delete ${kind} objects in ${j.decision.namespace} (RBAC${answer.reason ? `: ${answer.reason}` : ''}); --apply would fail` });
    return emit({ ...j.decision, outcome: 'would-delete' });
  };
  const settle = (j: Judged, decidedAt: number): Promise<void> => (o.apply ? deletes.run(() => remove(j, decidedAt)) : promise(j));

  const sweepList = async (kind: ReapKind, namespace: string | undefined) => {
    const pages = o.client.listPages(kind, namespace, reapSelector(o.keys, o.environment))[Symbol.asyncIterator]();
    // "Seen" is ticked when a page arrives: its objects existed before any read sent later.
    const read = () => {
      const p = pages.next().then((r) => ({ r, seenAt: clock.tick() }));
      p.catch(() => {});
      return p;
    };
    let next = read();
    // The deletes of the page before this one: a page is judged while they finish, so the
    // deletes never wait on a list or an owner read; at most two pages' deletes are pending.
    let settling: Promise<unknown> = Promise.resolve();
    try {
      for (;;) {
        let page;
        try {
          page = await next;
        } catch (err) {
          await emit({
            action: 'error',
            code: 'list-failed',
            kind,
            namespace: namespace ?? '*',
            reason: `could not list (${(err as Error).message}); the rest of this kind here is judged next sweep`,
          });
          return;
        }
        if (page.r.done || stopping()) return;
        // The next page is read while this one is judged and its deletes run.
        next = read();
        const judged = (await Promise.all(page.r.value.map((obj) => judge(obj, kind, page.seenAt)))).filter((j) => j !== undefined);
        const decidedAt = clock.tick();
        const previous = settling;
        settling = Promise.all(judged.map((j) => settle(j, decidedAt)));
        await previous;
        // A dry run's settling is its output (after one cached access review): out before the next page.
        if (!o.apply) await settling;
      }
    } finally {
      await settling;
    }
  };

  scopes: for (const namespace of o.namespaces.length > 0 ? o.namespaces : [undefined]) {
    for (const kind of REAP_KINDS) {
      if (stopping()) break scopes;
      await sweepList(kind, namespace);
    }
  }
  return finish();
}

function describe(obj: KubeObject, kind: ReapKind, v: ReapVerdict): Decision {
  const { namespace = '', name, uid } = obj.metadata;
  return { action: v.action, code: v.code, kind, namespace, name, uid, reason: v.reason };
}

/** Counts, not decisions: the summary costs the same for ten objects or a million. */
class Tally {
  private readonly s: SweepSummary;
  constructor(o: SweepOptions) {
    this.s = {
      environment: o.environment,
      dryRun: !o.apply,
      complete: true,
      judged: 0,
      reaped: 0,
      kept: 0,
      skipped: 0,
      conflicts: 0,
      stopped: 0,
      errors: 0,
      reasons: {},
      ownerReads: 0,
      leaseReads: 0,
      leaseReadsFailed: 0,
      leasesBounded: 0,
      durationMs: 0,
    };
  }

  add(d: Decision): void {
    const s = this.s;
    const byCode = (s.reasons[d.action] ??= {});
    byCode[d.code] = (byCode[d.code] ?? 0) + 1;
    if (d.action !== 'error') s.judged++;
    if (d.action === 'error' || d.outcome === 'failed' || d.outcome === 'not-permitted') s.errors++;
    else if (d.outcome === 'conflict') s.conflicts++;
    else if (d.outcome === 'stopped') s.stopped++;
    else if (d.action === 'reap') s.reaped++;
    else if (d.action === 'keep') s.kept++;
    else s.skipped++;
  }

  summary(complete: boolean, ownerReads: number, leases: { reads: number; failed: number; bounded: number }, durationMs: number): SweepSummary {
    return {
      ...this.s,
      reasons: structuredClone(this.s.reasons),
      complete,
      ownerReads,
      leaseReads: leases.reads,
      leaseReadsFailed: leases.failed,
      leasesBounded: leases.bounded,
      durationMs: Math.round(durationMs),
    };
  }
}
