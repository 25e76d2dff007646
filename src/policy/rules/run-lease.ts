// Run leases (docs/operations.md, "Run leases"): `<prefix>/run-lease` names the
// coordination.k8s.io Lease, in the object's own namespace, that tracks the object's run.
// The reaper counts the run over when the Lease is gone or unrenewed, so the name is
// checked here, covered by the attestation and frozen (frozen-stamps.ts). And at CREATE the
// Lease must already be the object's environment's: stamped for it by Deed (a Lease is a
// stamped kind, its renewals and its delete guarded to its environment), read under the
// review's deadline. holderIdentity is client-written and proves nothing, so it decides
// nothing. A Lease Deed cannot read is refused (fail closed).
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import type { StampKeys } from '../stamps/keys.js';
import type { DecisionContext } from '../policy.js';
import { ownershipOfFound } from '../ownership.js';
import { entryOf } from '../unstructured.js';
import { annotationPath } from '../stamps/identity-stamps.js';
import { RULES } from './catalog.js';
import { runRules, type Rule } from './rule.js';

// A Lease name is a DNS subdomain.
const LEASE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The run lease an object names, if any. */
export function runLeaseName(obj: KubeObject, keys: StampKeys): string | undefined {
  return entryOf(obj.metadata.annotations ?? {}, keys.runLease);
}

/** The Lease an object's annotation names, when it is a name the API server could hold (what the read plan reads). */
export function runLeaseToRead(obj: KubeObject | null | undefined, keys: StampKeys): string | undefined {
  const name = obj?.metadata === undefined || obj.metadata === null ? undefined : runLeaseName(obj, keys);
  return name !== undefined && LEASE_NAME.test(name) ? name : undefined;
}

/** The name an object's run lease annotation gives, at CREATE (frozen after). */
export const RUN_LEASE_FORMAT: Rule<KubeObject> = {
  info: [RULES.runLeaseMalformed],
  check(obj, { policy: { keys } }): Finding[] {
    const name = runLeaseName(obj, keys);
    if (name === undefined || LEASE_NAME.test(name)) return [];
    return [{ rule: RULES.runLeaseMalformed.id, path: annotationPath(keys.runLease), message: `${keys.runLease} ${JSON.stringify(name.slice(0, 80))} is not a Lease name (a DNS subdomain)` }];
  },
};

/**
 * At CREATE of an object stamped for `environment`: the annotation's form, then the Lease it
 * names. A refusal says only that the Lease is not this environment's, never whose it is
 * (docs/security-model.md, "What a refusal tells").
 */
export function runLeaseFindings(obj: KubeObject, namespace: string, environment: string, ctx: DecisionContext): Finding[] {
  const { policy } = ctx;
  const { keys } = policy;
  const malformed = runRules([RUN_LEASE_FORMAT], obj, { policy, namespace, environment });
  const name = runLeaseToRead(obj, keys);
  if (malformed.length > 0 || name === undefined) return malformed;
  const path = annotationPath(keys.runLease);
  const lease = `${namespace}/${name}`;
  const found = ctx.lookup.get('leases', namespace, name);
  if (found.state === 'unknown') return [{ rule: RULES.runLeaseUnknown.id, path, message: `cannot tell whether run lease ${lease} is environment "${environment}"'s: ${found.reason}` }];
  if (found.state === 'absent')
    return [{ rule: RULES.runLeaseAbsent.id, path, message: `run lease ${lease} does not exist; create it first (as a principal of environment "${environment}"), or the reaper would count the run over at once` }];
  const owner = ownershipOfFound(found, 'Lease', namespace, policy, ctx.keyRing);
  if (owner.kind === 'stamped' && owner.environment === environment) return [];
  const why =
    owner.kind === 'unverifiable'
      ? `its stamps do not verify (${owner.reason})`
      : owner.kind === 'stamped'
        ? 'it belongs to another environment'
        : `Deed did not stamp it (it was not created by a principal of environment "${environment}")`;
  return [{ rule: RULES.runLeaseEnvironment.id, path, message: `run lease ${lease} is not stamped for environment "${environment}": ${why}` }];
}
