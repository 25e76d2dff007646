// Every verdict the reaper can reach, one row each: its code (in the reaper's decision lines
// and summary, its metrics, and `deed audit`'s `reaper.verdict` results) and the action it
// takes. The action comes from the row, never from the call site, so a reason cannot keep
// in one place and reap in another. docs/operations.md ("The verdict") lists every row.

export type Action = 'reap' | 'keep' | 'skip';

interface Row {
  action: Action;
  /** What the code means, for the docs and `--help`-like listings. */
  means: string;
}

export const VERDICTS = {
  // skip: not this environment's to judge, never deleted
  unidentifiable: { action: 'skip', means: 'the object has no namespace, name or uid' },
  'outside-review-scope': { action: 'skip', means: 'its namespace is outside the review scope: anyone can write stamps there' },
  'foreign-environment': { action: 'skip', means: "not stamped for this reaper's environment" },
  'not-managed': { action: 'skip', means: '`<prefix>/managed` is not "true"' },
  'stamps-incomplete': { action: 'skip', means: 'no create nonce: foreign, or not admitted by Deed' },
  'attestation-invalid': { action: 'skip', means: 'the attestation does not verify (copied or edited stamps)' },
  // keep
  'being-deleted': { action: 'keep', means: 'already being deleted' },
  'deletion-stuck': {
    action: 'keep',
    means: 'being deleted for longer than the deadline grace, still held by finalizers: nothing removes it until they go (a controller gone, or one that keeps it); alert on it',
  },
  'pvc-not-terminal': { action: 'keep', means: 'a claim not marked terminal: a workspace outlives its runner' },
  'owner-stamp-malformed': { action: 'keep', means: 'half an owner stamp, or one not written NAMESPACE/NAME' },
  'owner-not-read': { action: 'keep', means: 'the owner pod was not read' },
  'owner-unreadable': { action: 'keep', means: 'reading the owner pod failed (timeout, 5xx, 403, ...)' },
  'owner-running': { action: 'keep', means: 'the owner pod exists with the stamped uid, and nothing else shows the run over' },
  'deadline-unreadable': { action: 'keep', means: 'the attested deadline is not an RFC 3339 time' },
  'deadline-pending': { action: 'keep', means: 'the deadline (or its grace) is still ahead and nothing else shows the run over' },
  'lease-malformed': { action: 'keep', means: 'the run lease annotation is not a Lease name' },
  'lease-not-read': { action: 'keep', means: 'the run lease was not read' },
  'lease-unreadable': { action: 'keep', means: 'reading the run lease failed (timeout, 5xx, 403, ...: anything but NotFound)' },
  'lease-bounded': { action: 'keep', means: 'the run lease was not read: the sweep had read its bound of distinct run leases in that namespace' },
  'lease-foreign': { action: 'keep', means: "an object with no owner stamp and no deadline whose run lease exists but carries stamps that do not verify (tampered, or signed by a key no longer in the ring): no evidence either way" },
  'lease-undated': { action: 'keep', means: 'an object with no owner stamp and no deadline whose run lease has no renewTime or acquireTime, or no leaseDurationSeconds: no evidence either way' },
  'lease-held': { action: 'keep', means: 'the run lease is being renewed, and nothing else shows the run over' },
  'deadline-from-start': {
    action: 'keep',
    means: "a pod whose attested deadline passed, but which started later than it was admitted: the kubelet counts activeDeadlineSeconds from its start, and that time has not run out",
  },
  'pod-clock-unread': { action: 'keep', means: 'a pod whose attested deadline passed could not be read for its start and phase, or is gone or replaced since it was listed' },
  'no-evidence': { action: 'keep', means: 'no owner stamp, no run lease and no deadline: nothing shows it is finished' },
  // reap
  terminal: { action: 'reap', means: 'marked terminal (`<prefix>/terminal: "true"`) by its environment, on any kind' },
  'owner-gone': { action: 'reap', means: 'the owner pod is gone (NotFound), and the deadline, if any, passed' },
  'owner-replaced': { action: 'reap', means: 'the owner pod name now has another uid, and the deadline, if any, passed' },
  'deadline-passed': {
    action: 'reap',
    means: "the attested deadline passed: more than `reaper.deadlineGraceSeconds` ago whatever the runner does, or at all for an object with no owner stamp; for a pod, its own clock too (finished, or `activeDeadlineSeconds` run out since its start)",
  },
  'lease-replaced': {
    action: 'reap',
    means: "the run lease was replaced: a Lease under its name carries none of Deed's stamps, or another environment's that verify (the run's own was deleted)",
  },
  'lease-gone': { action: 'reap', means: 'the run lease is gone (NotFound, read after the object was listed)' },
  'lease-expired': { action: 'reap', means: 'the run lease was not renewed for longer than its leaseDurationSeconds plus `reaper.leaseGraceSeconds`' },
} as const satisfies Record<string, Row>;

export type VerdictCode = keyof typeof VERDICTS;

export const VERDICT_CODES = Object.keys(VERDICTS) as VerdictCode[];

export interface ReapVerdict {
  action: Action;
  code: VerdictCode;
  reason: string;
}

/** A verdict whose action is its row's. */
export function verdictOf(code: VerdictCode, reason: string): ReapVerdict {
  return { action: VERDICTS[code].action, code, reason };
}
