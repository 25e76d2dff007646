// The validating side's rules of an object's own stamps, for any kind stamped by a row of
// its own (a workload, workload/stamps.ts) or by the default row (default-row.ts): at
// CREATE the stamps Deed wrote for this requester (and the run lease it names), or none from a requester it stamps
// nothing for; after, guarded (one environment's principals, its managers, system
// controllers, break-glass) and frozen.
import type { AdmissionRequest } from '../admission/types.js';
import type { Finding } from '../admission/verdict.js';
import type { StampRow } from './kinds.js';
import type { Requester } from './requester/identity.js';
import type { DecisionContext } from './policy.js';
import { createIdentity, type CreatorIdentity } from './create-gate.js';
import { ownershipOfObject } from './ownership.js';
import { ownerAcrossNamespaces, stampIntegrity } from './rules/stamp-integrity.js';
import { RULES } from './rules/catalog.js';
import { runLeaseFindings } from './rules/run-lease.js';
import { stampedWriteFindings } from './rules/stamped-writes.js';
import { terminalMark } from './rules/terminal-mark.js';

/**
 * For a request on the object itself, or on a subresource whose review carries the whole
 * object (status). `gate`: whether who may not create here at all is reported here (false
 * where another review, the template one, reports it). `creator`: the requester's creator
 * identity (create-gate.ts), when the review has it.
 */
export function stampedObjectFindings(req: AdmissionRequest, row: StampRow, namespace: string, requester: Requester, ctx: DecisionContext, gate = true, creator?: CreatorIdentity): Finding[] {
  const { policy } = ctx;
  if (req.operation === 'CREATE') {
    const obj = req.object;
    if (!obj) return [];
    const identity = createIdentity(requester, namespace, obj.metadata.labels ?? {}, obj.metadata.annotations ?? {}, policy, creator);
    if ('environment' in identity)
      return [
        ...stampIntegrity(obj, row, namespace, identity.environment, requester.runner, policy, ctx.keyRing, ctx.now()),
        ...ownerAcrossNamespaces(obj, requester.runner, namespace),
        // The mutating side attests a run lease on every stamped kind: it is checked on every one.
        ...runLeaseFindings(obj, namespace, identity.environment, ctx),
        // The terminal mark holds on every kind, as the reaper reads it on every kind.
        ...terminalMark(undefined, obj, undefined, requester, policy),
      ];
    // No stamps are Deed's for this requester: a client's are forged.
    return gate ? identity.verdict.findings : identity.verdict.findings.filter((f) => f.rule === RULES.stampForged.id);
  }
  const old = req.oldObject;
  if (!old || (req.operation !== 'UPDATE' && req.operation !== 'DELETE')) return [];
  const owner = ownershipOfObject(old, row.kind, namespace, policy, ctx.keyRing);
  // The rules of a write to any stamped object, as on the object door (rules/stamped-writes.ts).
  const after = req.operation === 'UPDATE' && req.object ? req.object : undefined;
  return stampedWriteFindings({ before: old, after, row, resource: req.resource, owner, requester }, { policy, namespace, environment: 'environment' in owner ? owner.environment : undefined });
}
