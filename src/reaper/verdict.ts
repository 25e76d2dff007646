// The reaper's verdict on one listed object (docs/operations.md, "The verdict"), from
// positive facts only: stamps for this environment that Deed's attestation vouches for,
// and evidence that the run is over: a terminal mark its environment wrote, a deadline
// long passed, a run lease gone or no longer renewed, an owner the API server proved gone.
// Anything short of that keeps the object. Pure: the owner and lease reads, the review
// scope and the clock come in as values; every code is a row of verdicts.ts.
import { entryOf } from '../policy/unstructured.js';
import type { KubeObject } from '../admission/types.js';
import { readStamps } from '../policy/stamps/attestation.js';
import { presentOwnedKeys } from '../policy/stamps/identity-stamps.js';
import { verifyStamps, type KeyRing } from '../policy/stamps/key-ring.js';
import type { StampKeys } from '../policy/stamps/keys.js';
import type { SandboxKind } from '../policy/kinds.js';
import { verdictOf, type ReapVerdict, type VerdictCode } from './verdicts.js';

export { VERDICTS, VERDICT_CODES, type Action, type ReapVerdict, type VerdictCode } from './verdicts.js';

export interface ReaperContext {
  /** The one environment this reaper acts for. */
  environment: string;
  keys: StampKeys;
  /** The same key ring the webhook verifies with. */
  keyRing: KeyRing;
  /**
   * Whether the installed webhooks review every write in this namespace (policy/review-scope):
   * outside it anyone can write stamps, so none is evidence.
   */
  inReviewScope: (namespace: string) => boolean;
  /** Milliseconds since the epoch. */
  now: number;
  /** Policy `reaper.deadlineGraceSeconds`: a deadline this long past ends the run whatever its runner does. */
  deadlineGraceSeconds: number;
  /** Policy `reaper.leaseGraceSeconds`: how long past its duration a run lease may go unrenewed. */
  leaseGraceSeconds: number;
  /** Policy `reaper.runLeases`: whether run leases are evidence at all (off: ignored). */
  runLeases: boolean;
}

/** The runner pod an object's owner stamp names. */
export interface OwnerRef {
  namespace: string;
  name: string;
  uid: string;
}

/** The run lease an object names: a Lease in the object's own namespace. */
export interface LeaseRef {
  namespace: string;
  name: string;
}

/**
 * What reading the owner pod by name gave: only `absent` is the API server's NotFound. A read
 * answers for uids, not for the name: `absent`, or `present` with another uid, proves gone
 * only the uids that existed before the read was sent (the caller's business: an object
 * listed after the read needs a fresh one).
 */
export type OwnerLookup = { state: 'present'; uid: string } | { state: 'absent' } | { state: 'error'; message: string };

/** What the reaper keeps of a Lease: Deed's stamps and the times that say whether it is renewed. */
export interface LeaseRecord {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** spec.renewTime, else spec.acquireTime, as sent (MicroTime). */
  renewedAt?: string;
  leaseDurationSeconds?: number;
}

/**
 * What reading the Lease by name gave, and when that read was sent (`readAt`, ms since the
 * epoch): only `absent` is the API server's NotFound, the proof of gone, and a lease is judged
 * as of that read, never as of a later clock. As with owners, a read answers only for objects
 * listed before it was sent (the caller's business). `bounded`: not read, because the sweep
 * already read its bound of leases in that namespace.
 */
export type LeaseLookup =
  | { state: 'present'; lease: LeaseRecord; readAt: number }
  | { state: 'absent'; readAt: number }
  | { state: 'error'; message: string }
  | { state: 'bounded'; limit: number };

/** A pod whose attested deadline passed: the verdict needs its clock (its start and phase). */
export interface PodRef {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * What reading the pod itself gave, when its attested deadline passed. Deed attests the
 * deadline from the pod's admission, but the kubelet counts `activeDeadlineSeconds` from the
 * pod's start (`status.startTime`): a pod that waited to be scheduled runs past its attested
 * deadline, and only its own clock says when it is over.
 */
export type PodClockLookup =
  | { state: 'found'; uid: string; phase?: string; startTime?: string; activeDeadlineSeconds?: number }
  | { state: 'absent' }
  | { state: 'error'; message: string };

/** The reads the verdict on an object depends on. */
export interface Needs {
  owner?: OwnerRef;
  lease?: LeaseRef;
  pod?: PodRef;
}

interface Pending {
  owner: OwnerRef | undefined;
  lease: LeaseRef | undefined;
  expiresAt: string | undefined;
  /** A Pod whose attested deadline passed (at all): its own clock is read. */
  pod: PodRef | undefined;
  /** A Pod whose attested deadline passed more than the grace ago: over, if its own clock agrees. */
  deadlineEnds: boolean;
}

type Assessment = { verdict: ReapVerdict } | Pending;

const v = verdictOf;

// RFC 3339, as Deed writes `expires-at`; anything else is not a deadline Deed set.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const OWNER = /^([^/]+)\/([^/]+)$/;
// A Lease name is a DNS subdomain.
const LEASE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The reads the verdict on `obj` depends on (none when no read can change it). */
export function needs(obj: KubeObject, kind: SandboxKind['kind'], ctx: ReaperContext): Needs {
  const a = assess(obj, kind, ctx);
  if ('verdict' in a) return {};
  return { ...(a.owner ? { owner: a.owner } : {}), ...(a.lease ? { lease: a.lease } : {}), ...(a.pod ? { pod: a.pod } : {}) };
}

/** The owner pod the verdict on `obj` depends on, or undefined when no lookup can change it. */
export function ownerToRead(obj: KubeObject, kind: SandboxKind['kind'], ctx: ReaperContext): OwnerRef | undefined {
  return needs(obj, kind, ctx).owner;
}

export function verdict(obj: KubeObject, kind: SandboxKind['kind'], ctx: ReaperContext, owner?: OwnerLookup, lease?: LeaseLookup, pod?: PodClockLookup): ReapVerdict {
  const a = assess(obj, kind, ctx);
  if ('verdict' in a) return a.verdict;
  // A pod's deadline long past ends its run whatever its runner does, once its own clock
  // agrees: judged before the lease, as an object's passed deadline is (assess), so no doubt
  // about the lease (unreadable, past the sweep's bound, signed by a retired key) keeps it.
  const clock = a.pod === undefined ? undefined : podClock(a.pod, pod);
  if (a.deadlineEnds && clock !== undefined && clock.endedAt !== undefined && ctx.now >= clock.endedAt + ctx.deadlineGraceSeconds * 1000)
    return v('deadline-passed', `its deadline ${a.expiresAt} passed more than ${ctx.deadlineGraceSeconds} s ago (reaper.deadlineGraceSeconds), whatever its runner does, and ${clock.reason}`);
  // Any doubt about the lease keeps what nothing else ends: an error reading it is never
  // evidence of an end. An owner proven gone still ends the run, as it does past a lease
  // still renewed, so a doubt (a lease past the sweep's bound) cannot keep a leak for ever.
  let leaseDoubt: ReapVerdict | undefined;
  let leaseHeld: string | undefined;
  // A Lease that says nothing (no time, or stamps that do not verify) is no evidence either
  // way: it keeps what nothing else ends, but an owner proven gone still ends the run, as it
  // does past a lease still renewed.
  let leaseMute: ReapVerdict | undefined;
  if (a.lease !== undefined) {
    const named = `run lease ${a.lease.namespace}/${a.lease.name}`;
    if (lease === undefined) leaseDoubt = v('lease-not-read', `${named} was not read`);
    else if (lease.state === 'error') leaseDoubt = v('lease-unreadable', `could not read ${named} (${lease.message}); kept, retried next sweep`);
    else if (lease.state === 'bounded')
      leaseDoubt = v('lease-bounded', `${named} was not read: this sweep already read ${lease.limit} run leases in ${a.lease.namespace}, its bound; kept, retried next sweep`);
    else if (lease.state === 'absent') return v('lease-gone', `${named} is gone (NotFound, read at ${new Date(lease.readAt).toISOString()})`);
    else {
      const held = leaseState(lease.lease, lease.readAt, a.lease, ctx);
      if (held.verdict) return held.verdict;
      if (held.mute) leaseMute = held.mute;
      else leaseHeld = held.reason;
    }
  }
  if (a.owner === undefined) {
    if (leaseDoubt !== undefined) return leaseDoubt;
    if (a.expiresAt === undefined)
      return leaseHeld !== undefined ? v('lease-held', `${leaseHeld}, and no owner stamp or deadline`) : leaseMute !== undefined ? { ...leaseMute, reason: `${leaseMute.reason}, and no owner stamp or deadline` } : v('no-evidence', 'no owner stamp, no run lease and no deadline: nothing shows it is finished');
    const deadline = deadlineState(a.expiresAt, ctx.now, 0);
    if (deadline !== 'passed') return leaseHeld !== undefined && deadline.code === 'deadline-pending' ? v('lease-held', `${leaseHeld}, and ${deadline.reason}`) : v(deadline.code, `no owner stamp, and ${deadline.reason}`);
    if (clock !== undefined) return clock.endedAt !== undefined && ctx.now >= clock.endedAt ? v('deadline-passed', `no owner stamp, its deadline ${a.expiresAt} passed, and ${clock.reason}`) : clock.keep(`no owner stamp, and its deadline ${a.expiresAt} passed`);
    return v('deadline-passed', `no owner stamp, and its deadline ${a.expiresAt} passed`);
  }
  const named = `owner ${a.owner.namespace}/${a.owner.name}`;
  const ownerGone = owner !== undefined && (owner.state === 'absent' || (owner.state === 'present' && owner.uid !== a.owner.uid));
  if (leaseDoubt !== undefined && !ownerGone) return leaseDoubt;
  if (owner === undefined) return v('owner-not-read', `${named} was not read`);
  if (owner.state === 'error') return v('owner-unreadable', `could not read ${named} (${owner.message}); kept, retried next sweep`);
  if (owner.state === 'present' && owner.uid === a.owner.uid) {
    if (a.deadlineEnds && clock !== undefined) return clock.keep(`its deadline ${a.expiresAt} passed, and ${named} still exists with uid ${a.owner.uid}`);
    return v('owner-running', `${named} still exists with uid ${a.owner.uid}${leaseHeld !== undefined ? `, and ${leaseHeld}` : leaseMute !== undefined ? `; ${leaseMute.reason}` : ''}`);
  }
  const gone: ReapVerdict =
    owner.state === 'absent'
      ? v('owner-gone', `${named} (uid ${a.owner.uid}) is gone (NotFound)`)
      : v('owner-replaced', `${named} was replaced: uid ${owner.uid}, not ${a.owner.uid}`);
  if (a.expiresAt === undefined) return gone;
  const deadline = deadlineState(a.expiresAt, ctx.now, 0);
  if (deadline !== 'passed') return v(deadline.code, `${gone.reason}, but ${deadline.reason}`);
  return { ...gone, reason: `${gone.reason}, and its deadline ${a.expiresAt} passed` };
}

function assess(obj: KubeObject, kind: SandboxKind['kind'], ctx: ReaperContext): Assessment {
  const { keys } = ctx;
  const meta = obj.metadata;
  const labels = meta.labels ?? {};
  const annotations = meta.annotations ?? {};
  const namespace = meta.namespace;
  if (!namespace || !meta.name || !meta.uid) return { verdict: v('unidentifiable', 'the object has no namespace, name or uid') };
  if (!ctx.inReviewScope(namespace))
    return { verdict: v('outside-review-scope', `namespace ${namespace} is outside the review scope: Deed does not review its writes, so its stamps prove nothing`) };

  // Listing by selector already filters; this holds even against a server that ignored it.
  const environment = entryOf(labels, keys.environment);
  if (environment !== ctx.environment)
    return {
      verdict: v(
        'foreign-environment',
        environment === undefined ? `not stamped with ${keys.environment}` : `stamped for environment ${JSON.stringify(environment)}, not ${JSON.stringify(ctx.environment)}`,
      ),
    };
  if (entryOf(labels, keys.managed) !== 'true') return { verdict: v('not-managed', `${keys.managed} is not "true"`) };

  // Labels can be copied: only an attestation under Deed's key makes the stamps evidence.
  const stamps = readStamps(obj, keys, kind, namespace);
  if (stamps === undefined) return { verdict: v('stamps-incomplete', `no ${keys.createNonce}: foreign, or not admitted by Deed`) };
  const verification = verifyStamps(ctx.keyRing, stamps, entryOf(annotations, keys.attestation));
  if (!verification.ok) return { verdict: v('attestation-invalid', `${keys.attestation} ${verification.reason}`) };

  if (meta.deletionTimestamp) return { verdict: deletion(meta.deletionTimestamp, meta.finalizers, ctx) };

  // Only the object's own environment can write the mark, and no one can take it back
  // (rules/terminal-mark.ts): the platform's word that this run is over, on any kind.
  if (entryOf(annotations, keys.terminal) === 'true') return { verdict: v('terminal', `marked terminal (${keys.terminal}=true)`) };

  // A PVC holds resumable work and outlives its runner: only the platform's mark ends it.
  if (kind === 'PersistentVolumeClaim') return { verdict: v('pvc-not-terminal', `not marked terminal (${keys.terminal}=true)`) };

  // A deadline long past ends the run whatever its runner does: a runner killed in place
  // keeps its pod (and uid) and forgets its sandboxes. Deed writes expires-at only from a
  // budget or a policy cap, so an object with neither never ends this way. A pod's own clock
  // starts later than its admission (the kubelet counts from its start), so a pod whose
  // attested deadline passed is read, and its own clock decides (podClock).
  const deadlineEnds = stamps.expiresAt !== undefined && deadlineState(stamps.expiresAt, ctx.now, ctx.deadlineGraceSeconds) === 'passed';
  if (deadlineEnds && kind !== 'Pod')
    return { verdict: v('deadline-passed', `its deadline ${stamps.expiresAt} passed more than ${ctx.deadlineGraceSeconds} s ago (reaper.deadlineGraceSeconds), whatever its runner does`) };
  const pod: PodRef | undefined = kind === 'Pod' && stamps.expiresAt !== undefined && deadlineState(stamps.expiresAt, ctx.now, 0) === 'passed' ? { namespace, name: meta.name, uid: meta.uid } : undefined;

  let lease: LeaseRef | undefined;
  // Off by policy, a run lease is neither evidence nor a reason to keep: owner and deadline decide.
  if (stamps.runLease !== undefined && ctx.runLeases) {
    if (!LEASE_NAME.test(stamps.runLease)) return { verdict: v('lease-malformed', `${keys.runLease} ${JSON.stringify(stamps.runLease.slice(0, 80))} is not a Lease name`) };
    lease = { namespace, name: stamps.runLease };
  }

  if (stamps.owner === undefined && stamps.ownerUid === undefined) return { owner: undefined, lease, expiresAt: stamps.expiresAt, pod, deadlineEnds };
  const match = stamps.owner === undefined ? null : OWNER.exec(stamps.owner);
  if (match === null || stamps.ownerUid === undefined)
    return { verdict: v('owner-stamp-malformed', `the owner stamp (${keys.owner}, ${keys.ownerUid}) is incomplete or malformed`) };
  return { owner: { namespace: match[1]!, name: match[2]!, uid: stamps.ownerUid }, lease, expiresAt: stamps.expiresAt, pod, deadlineEnds };
}

/**
 * Whether a Lease that exists tracks this object's run and says it is over. Its stamps
 * must verify for this environment: only then are its deletes and renewals guarded to the
 * environment's own principals. holderIdentity is client-written and decides nothing.
 */
function leaseState(
  lease: LeaseRecord,
  readAt: number,
  ref: LeaseRef,
  ctx: LeaseJudge,
): { verdict: ReapVerdict; reason?: never; mute?: never } | { verdict?: never; reason: string; mute?: never } | { verdict?: never; reason?: never; mute: ReapVerdict } {
  const named = `run lease ${ref.namespace}/${ref.name}`;
  const obj: KubeObject = { metadata: { labels: lease.labels ?? {}, annotations: lease.annotations ?? {} } };
  const stamps = readStamps(obj, ctx.keys, 'Lease', ref.namespace);
  const environment = entryOf(lease.labels ?? {}, ctx.keys.environment);
  const verification = stamps === undefined ? undefined : verifyStamps(ctx.keyRing, stamps, entryOf(lease.annotations ?? {}, ctx.keys.attestation));
  if (stamps === undefined || environment !== ctx.environment) {
    // The object was admitted naming a Lease stamped for this environment, and a Lease's
    // stamps can be neither changed nor removed: one under that name that carries none of
    // Deed's stamps, or another environment's that verify, is another Lease. The run's was
    // deleted, which only its own environment, its managers, system principals and
    // break-glass may do. Anyone else must not be able to keep the run's objects alive by
    // recreating the name.
    if (presentOwnedKeys(lease.labels ?? {}, lease.annotations ?? {}, ctx.keys).length === 0 || verification?.ok === true)
      return { verdict: v('lease-replaced', `${named} was replaced: the Lease under that name is not the run's (${environment === undefined ? 'it carries no stamps' : 'it is another environment\'s'})`) };
    return { mute: v('lease-foreign', `${named} exists but is not stamped for environment ${JSON.stringify(ctx.environment)}, and its stamps do not verify`) };
  }
  if (!verification!.ok) return { mute: v('lease-foreign', `${named} exists but its ${ctx.keys.attestation} ${verification!.reason}`) };
  const lapse = lapsesAt(lease, ctx.leaseGraceSeconds);
  if (lapse === undefined) return { mute: v('lease-undated', `${named} has no renewTime or acquireTime, or no leaseDurationSeconds: nothing says when it lapses`) };
  const when = lease.renewedAt!;
  if (readAt > lapse)
    return { verdict: v('lease-expired', `${named} was last renewed at ${when}: not renewed for more than its ${lease.leaseDurationSeconds} s plus ${ctx.leaseGraceSeconds} s (reaper.leaseGraceSeconds)`) };
  return { reason: `${named} was renewed at ${when}` };
}

/** Finalizer names shown in a verdict at most, each clipped: they are whatever the object's writer chose. */
const SHOWN_FINALIZERS = 4;

/**
 * An object already being deleted is not deleted again. One still held by finalizers past the
 * deadline grace is stuck: whatever should remove them is gone, or keeps the object (an
 * environment may add any finalizer to its own), and no sweep will end it. Kept, and said so
 * under a code of its own, for an alert.
 */
function deletion(since: string, finalizers: unknown, ctx: ReaperContext): ReapVerdict {
  const names = Array.isArray(finalizers) ? finalizers.filter((f): f is string => typeof f === 'string') : [];
  const at = RFC3339.test(since) ? Date.parse(since) : NaN;
  if (names.length === 0 || Number.isNaN(at) || ctx.now < at + ctx.deadlineGraceSeconds * 1000) return v('being-deleted', `already being deleted since ${since}`);
  const shown = names.slice(0, SHOWN_FINALIZERS).map((f) => JSON.stringify(f.length > 64 ? `${f.slice(0, 64)}…` : f));
  const more = names.length > SHOWN_FINALIZERS ? ` and ${names.length - SHOWN_FINALIZERS} more` : '';
  return v(
    'deletion-stuck',
    `being deleted since ${since}, more than ${ctx.deadlineGraceSeconds} s (reaper.deadlineGraceSeconds), and still held by finalizers ${shown.join(', ')}${more}: whatever should remove them is gone or keeps the object; find out which, then remove them`,
  );
}

/** When a lease's run counts as over if nothing renews it (ms since the epoch); undefined when it carries no such time. */
function lapsesAt(lease: LeaseRecord, graceSeconds: number): number | undefined {
  const renewed = lease.renewedAt === undefined ? NaN : Date.parse(lease.renewedAt);
  const duration = lease.leaseDurationSeconds;
  if (Number.isNaN(renewed) || duration === undefined || !Number.isInteger(duration) || duration < 0) return undefined;
  return renewed + (duration + graceSeconds) * 1000;
}

/** What judging a Lease read takes from the reaper's context. */
export type LeaseJudge = Pick<ReaperContext, 'environment' | 'keys' | 'keyRing' | 'leaseGraceSeconds'>;

/**
 * Whether a read sent at `readAt` shows the run's own lease held (stamped for `ctx.environment`,
 * verified, not lapsed). Only such a read can only ever keep, so only it may answer for objects
 * listed after it was sent: a Lease read as another environment's or unstamped (replaced),
 * lapsed, or whose stamps do not verify may since have been deleted and made again by the run's
 * own environment, and a newer read is asked for.
 */
export function leaseHeld(lease: LeaseRecord, readAt: number, ref: LeaseRef, ctx: LeaseJudge): boolean {
  return leaseState(lease, readAt, ref, ctx).reason !== undefined;
}

/**
 * When a pod's own clock ran out (ms since the epoch; undefined: not known to have), and the
 * verdict to keep it with otherwise. A pod that finished (Succeeded, Failed) ran out when it
 * was read; one that started runs `activeDeadlineSeconds` from its start, as the kubelet
 * counts; one not started by then never ran, and its deadline stands. A read
 * that failed, or found the pod gone or replaced since it was listed, keeps it until the next
 * sweep's list.
 */
function podClock(ref: PodRef, read: PodClockLookup | undefined): { endedAt: number | undefined; reason: string; keep: (why: string) => ReapVerdict } {
  const named = `pod ${ref.namespace}/${ref.name}`;
  const unread = (reason: string) => ({ endedAt: undefined, reason, keep: (why: string) => v('pod-clock-unread', `${why}, but ${reason}; kept, read again next sweep`) });
  if (read === undefined) return unread(`${named} was not read`);
  if (read.state === 'error') return unread(`could not read ${named} (${read.message})`);
  if (read.state === 'absent' || read.uid !== ref.uid) return unread(`${named} is gone or replaced since it was listed`);
  // Its own clock has nothing to add: the attested deadline decides (endedAt 0, long ago).
  const over = (reason: string) => ({ endedAt: 0, reason, keep: (why: string) => v('deadline-passed', `${why}, and ${reason}`) });
  if (read.phase === 'Succeeded' || read.phase === 'Failed') return over(`it has finished (phase ${read.phase})`);
  const started = read.startTime === undefined || !RFC3339.test(read.startTime) ? NaN : Date.parse(read.startTime);
  const running = (reason: string, endedAt?: number) => ({ endedAt, reason, keep: (why: string) => v('deadline-from-start', `${why}, but ${reason}`) });
  // Never started by its deadline: it ran nothing, so ending it loses no work, and a sandbox
  // nobody will schedule must not hold its quota for ever.
  if (Number.isNaN(started)) return over('it has not started (nothing ran)');
  const seconds = read.activeDeadlineSeconds;
  if (seconds === undefined || !Number.isInteger(seconds) || seconds < 0) return over(`it started at ${read.startTime} and has no activeDeadlineSeconds to run out`);
  const endedAt = started + seconds * 1000;
  return running(`it started at ${read.startTime}, and the kubelet counts its activeDeadlineSeconds (${seconds} s) from there, to ${new Date(endedAt).toISOString()}`, endedAt);
}

function deadlineState(expiresAt: string, now: number, graceSeconds: number): 'passed' | { code: VerdictCode; reason: string } {
  const at = RFC3339.test(expiresAt) ? Date.parse(expiresAt) : NaN;
  if (Number.isNaN(at)) return { code: 'deadline-unreadable', reason: `its deadline ${JSON.stringify(expiresAt)} is not an RFC 3339 time` };
  if (now < at + graceSeconds * 1000) return { code: 'deadline-pending', reason: `its deadline ${expiresAt} has not passed` };
  return 'passed';
}
