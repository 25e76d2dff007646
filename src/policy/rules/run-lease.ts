// Run leases (docs/operations.md, "Run leases"): `<prefix>/run-lease` names the
// coordination.k8s.io Lease, in the object's own namespace, that tracks the object's run.
// The reaper counts the run over when the Lease is gone or unrenewed, so the name is
// checked here, covered by the attestation and frozen (frozen-stamps.ts).
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import type { StampKeys } from '../stamps/keys.js';
import { entryOf } from '../unstructured.js';
import { annotationPath } from '../stamps/identity-stamps.js';
import { RULES } from './catalog.js';
import type { Rule } from './rule.js';

// A Lease name is a DNS subdomain.
const LEASE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The run lease an object names, if any. */
export function runLeaseName(obj: KubeObject, keys: StampKeys): string | undefined {
  return entryOf(obj.metadata.annotations ?? {}, keys.runLease);
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
