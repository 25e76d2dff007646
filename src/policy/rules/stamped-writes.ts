// The rules of a write to an object after its CREATE, the same on every kind Deed stamps:
// a Pod, a Secret, a workload, a Service, a custom resource. Every door that carries a
// stamped object (doors/object.ts, stamped-object.ts for the workload and default doors)
// runs this one set, so the guarded writes, the frozen stamps and the terminal mark hold
// on every kind by construction, not by each door remembering them.
import type { GroupVersionResource, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import type { StampRow } from '../kinds.js';
import type { Ownership } from '../ownership.js';
import type { Requester } from '../requester/identity.js';
import { RULES } from './catalog.js';
import { frozenStamps } from './frozen-stamps.js';
import { guardedWrite } from './guarded-writes.js';
import { runRules, type Facts, type Rule } from './rule.js';
import { sharedInputGuard } from './shared-input.js';
import { podPolicyGuard } from './pod-policy-guard.js';
import { terminalMark } from './terminal-mark.js';
import { runnerOf } from '../pod/runner-mark.js';

/** An UPDATE (with the object as it will be) or a DELETE of a stored object, and whose that object is. */
export interface StampedWrite {
  before: KubeObject;
  /** The object as the write leaves it; undefined for a DELETE. */
  after: KubeObject | undefined;
  /** The kind's stamp row: what Deed wrote on it at CREATE. */
  row: StampRow;
  resource: GroupVersionResource;
  /** Whose `before` is, from its verified stamps (ownership.ts). */
  owner: Ownership;
  requester: Requester;
}

/** Only a principal of the object's environment (or its managers, system controllers, break-glass) writes it. */
const guardedWriteRule: Rule<StampedWrite> = {
  info: [RULES.guardCrossEnvironment, RULES.guardUnmapped, RULES.attestationInvalid],
  check: ({ requester, owner }, { policy }) => guardedWrite(requester, owner, policy),
};

/** An unstamped input a pod reads, in a namespace bound to no environment, is the platform's. */
const sharedInputRule: Rule<StampedWrite> = {
  info: [RULES.guardSharedInput],
  check: ({ before, after, row, resource, owner, requester }, { policy, namespace }) => sharedInputGuard(requester, owner, resource, { kind: row.kind, namespace, name: before.metadata.name ?? '' }, policy, { write: { before, after } }),
};

/** An unstamped NetworkPolicy or budget in a shared namespace that reaches environments' pods or runners is the platform's. */
const podPolicyRule: Rule<StampedWrite> = {
  info: [RULES.guardPodPolicy],
  check: ({ before, after, row, resource, owner, requester }, { policy, namespace }) => podPolicyGuard(requester, owner, before, after, resource, { kind: row.kind, namespace, name: before.metadata.name ?? '' }, policy),
};

/** Deed's stamps are written once; a deadline Deed set may only go down (where Deed sets one: a Job's own is its writer's). */
const frozenStampsRule: Rule<StampedWrite> = {
  info: [RULES.frozenStamps, RULES.frozenOwnerReference, RULES.frozenActiveDeadline],
  check: ({ before, after, row, owner, requester }, { policy, namespace }) =>
    after === undefined
      ? []
      : frozenStamps(before, after, policy.keys, requester.username, { isRunner: owner.kind === 'runner', due: () => (row.kind === 'Pod' ? runnerOf(after, namespace, policy) : undefined) }).filter(
          (f) => row.activeDeadline || f.rule !== RULES.frozenActiveDeadline.id,
        ),
};

/** The terminal mark is its environment's to set, once, and never to change or remove. */
const terminalMarkRule: Rule<StampedWrite> = {
  info: [RULES.terminalFrozen, RULES.terminalMalformed, RULES.terminalEnvironment],
  check: ({ before, after, owner, requester }, { policy }) => (after === undefined ? [] : terminalMark(before, after, owner, requester, policy)),
};

/** The stamped-object rules of a write, in the order their findings are reported. */
export const STAMPED_WRITE_RULES: readonly Rule<StampedWrite>[] = [guardedWriteRule, sharedInputRule, podPolicyRule, frozenStampsRule, terminalMarkRule];

export function stampedWriteFindings(write: StampedWrite, facts: Facts): Finding[] {
  return runRules(STAMPED_WRITE_RULES, write, facts);
}
