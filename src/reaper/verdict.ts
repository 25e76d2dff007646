// The reaper's verdict on one listed object (docs/operations.md, "The reaper"), from positive facts
// only: stamps for this environment that Deed's attestation vouches for, an owner the API
// server proved gone, a deadline that passed, a PVC the platform marked terminal. Anything
// short of that keeps the object. Pure: the owner lookup, the review scope and the clock
// come in as values.
import { entryOf } from '../policy/unstructured.js';
import type { KubeObject } from '../admission/types.js';
import { readStamps } from '../policy/stamps/attestation.js';
import { verifyStamps, type KeyRing } from '../policy/stamps/key-ring.js';
import type { StampKeys } from '../policy/stamps/keys.js';
import type { SandboxKind } from '../policy/kinds.js';

export type Action = 'reap' | 'keep' | 'skip';

export type VerdictCode =
  // skip: not this environment's to judge, never deleted
  | 'unidentifiable'
  | 'outside-review-scope'
  | 'foreign-environment'
  | 'not-managed'
  | 'stamps-incomplete'
  | 'attestation-invalid'
  // keep
  | 'being-deleted'
  | 'pvc-not-terminal'
  | 'owner-stamp-malformed'
  | 'owner-not-read'
  | 'owner-unreadable'
  | 'owner-running'
  | 'deadline-unreadable'
  | 'deadline-pending'
  | 'no-evidence'
  // reap
  | 'pvc-terminal'
  | 'owner-gone'
  | 'owner-replaced'
  | 'deadline-passed';

export interface ReapVerdict {
  action: Action;
  code: VerdictCode;
  reason: string;
}

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
}

/** The runner pod an object's owner stamp names. */
export interface OwnerRef {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * What reading the owner pod by name gave: only `absent` is the API server's NotFound. A read
 * answers for uids, not for the name: `absent`, or `present` with another uid, proves gone
 * only the uids that existed before the read was sent (the caller's business: an object
 * listed after the read needs a fresh one).
 */
export type OwnerLookup = { state: 'present'; uid: string } | { state: 'absent' } | { state: 'error'; message: string };

type Assessment = { verdict: ReapVerdict } | { owner: OwnerRef; expiresAt: string | undefined };

const skip = (code: VerdictCode, reason: string): ReapVerdict => ({ action: 'skip', code, reason });
const keep = (code: VerdictCode, reason: string): ReapVerdict => ({ action: 'keep', code, reason });
const reap = (code: VerdictCode, reason: string): ReapVerdict => ({ action: 'reap', code, reason });

// RFC 3339, as Deed writes `expires-at`; anything else is not a deadline Deed set.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const OWNER = /^([^/]+)\/([^/]+)$/;

/** The owner pod the verdict on `obj` depends on, or undefined when no lookup can change it. */
export function ownerToRead(obj: KubeObject, kind: SandboxKind['kind'], ctx: ReaperContext): OwnerRef | undefined {
  const a = assess(obj, kind, ctx);
  return 'owner' in a ? a.owner : undefined;
}

export function verdict(obj: KubeObject, kind: SandboxKind['kind'], ctx: ReaperContext, owner?: OwnerLookup): ReapVerdict {
  const a = assess(obj, kind, ctx);
  if ('verdict' in a) return a.verdict;
  const named = `owner ${a.owner.namespace}/${a.owner.name}`;
  if (owner === undefined) return keep('owner-not-read', `${named} was not read`);
  if (owner.state === 'error') return keep('owner-unreadable', `could not read ${named} (${owner.message}); kept, retried next sweep`);
  if (owner.state === 'present' && owner.uid === a.owner.uid) return keep('owner-running', `${named} still exists with uid ${a.owner.uid}`);
  const gone: ReapVerdict =
    owner.state === 'absent'
      ? reap('owner-gone', `${named} (uid ${a.owner.uid}) is gone (NotFound)`)
      : reap('owner-replaced', `${named} was replaced: uid ${owner.uid}, not ${a.owner.uid}`);
  if (a.expiresAt === undefined) return gone;
  const deadline = deadlineState(a.expiresAt, ctx.now);
  if (deadline !== 'passed') return keep(deadline.code, `${gone.reason}, but ${deadline.reason}`);
  return { ...gone, reason: `${gone.reason}, and its deadline ${a.expiresAt} passed` };
}

function assess(obj: KubeObject, kind: SandboxKind['kind'], ctx: ReaperContext): Assessment {
  const { keys } = ctx;
  const meta = obj.metadata;
  const labels = meta.labels ?? {};
  const annotations = meta.annotations ?? {};
  const namespace = meta.namespace;
  if (!namespace || !meta.name || !meta.uid) return { verdict: skip('unidentifiable', 'the object has no namespace, name or uid') };
  if (!ctx.inReviewScope(namespace))
    return { verdict: skip('outside-review-scope', `namespace ${namespace} is outside the review scope: Deed does not review its writes, so its stamps prove nothing`) };

  // Listing by selector already filters; this holds even against a server that ignored it.
  const environment = entryOf(labels, keys.environment);
  if (environment !== ctx.environment)
    return {
      verdict: skip(
        'foreign-environment',
        environment === undefined ? `not stamped with ${keys.environment}` : `stamped for environment ${JSON.stringify(environment)}, not ${JSON.stringify(ctx.environment)}`,
      ),
    };
  if (entryOf(labels, keys.managed) !== 'true') return { verdict: skip('not-managed', `${keys.managed} is not "true"`) };

  // Labels can be copied: only an attestation under Deed's key makes the stamps evidence.
  const stamps = readStamps(obj, keys, kind, namespace);
  if (stamps === undefined) return { verdict: skip('stamps-incomplete', `no ${keys.createNonce}: foreign, or not admitted by Deed`) };
  const verification = verifyStamps(ctx.keyRing, stamps, entryOf(annotations, keys.attestation));
  if (!verification.ok) return { verdict: skip('attestation-invalid', `${keys.attestation} ${verification.reason}`) };

  if (meta.deletionTimestamp) return { verdict: keep('being-deleted', `already being deleted since ${meta.deletionTimestamp}`) };

  // A PVC holds resumable work and outlives its runner: only the platform's mark ends it.
  if (kind === 'PersistentVolumeClaim') {
    const terminal = entryOf(annotations, keys.terminal);
    return {
      verdict:
        terminal === 'true'
          ? reap('pvc-terminal', `marked terminal (${keys.terminal}=true)`)
          : keep('pvc-not-terminal', `not marked terminal (${keys.terminal}=true)`),
    };
  }

  if (stamps.owner === undefined && stamps.ownerUid === undefined) {
    if (stamps.expiresAt === undefined) return { verdict: keep('no-evidence', 'no owner stamp and no deadline: nothing shows it is finished') };
    const deadline = deadlineState(stamps.expiresAt, ctx.now);
    if (deadline !== 'passed') return { verdict: keep(deadline.code, `no owner stamp, and ${deadline.reason}`) };
    return { verdict: reap('deadline-passed', `no owner stamp, and its deadline ${stamps.expiresAt} passed`) };
  }
  const match = stamps.owner === undefined ? null : OWNER.exec(stamps.owner);
  if (match === null || stamps.ownerUid === undefined)
    return { verdict: keep('owner-stamp-malformed', `the owner stamp (${keys.owner}, ${keys.ownerUid}) is incomplete or malformed`) };
  return { owner: { namespace: match[1]!, name: match[2]!, uid: stamps.ownerUid }, expiresAt: stamps.expiresAt };
}

function deadlineState(expiresAt: string, now: number): 'passed' | { code: VerdictCode; reason: string } {
  const at = RFC3339.test(expiresAt) ? Date.parse(expiresAt) : NaN;
  if (Number.isNaN(at)) return { code: 'deadline-unreadable', reason: `its deadline ${JSON.stringify(expiresAt)} is not an RFC 3339 time` };
  if (now < at) return { code: 'deadline-pending', reason: `its deadline ${expiresAt} has not passed` };
  return 'passed';
}
