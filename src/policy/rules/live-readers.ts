// reference.live-reader: an object created under a name a live pod reads is handed to that
// pod by the kubelet (a volume is refreshed from it, `env` is read again when a container
// restarts, a pod waiting for it starts with it). A pod's names are judged when the pod is
// written, but nothing holds what they name after: its writer may delete it, and another
// create one under the name. So the CREATE of a Secret, ConfigMap, claim or ResourceClaim is
// refused while a live pod reads the name that the object's writer may not reach: for an
// environment, a pod of another environment (or of none), which would read its object; for
// a principal of no environment (a tenant, a manager), a pod of an environment it does not
// act for, whose input it would write. The platform's principals, system controllers and
// break-glass are not judged (reference-scope.ts).
import type { AdmissionRequest } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { ownershipOfFound } from '../ownership.js';
import { POD_READS } from '../pod/pod-reads.js';
import type { Reach } from '../pod/reference-owner.js';
import type { DecisionContext, Policy } from '../policy.js';
import type { LookupResource } from '../kinds.js';
import { actsFor } from '../requester/principals.js';
import { RULES } from './catalog.js';

/**
 * The kind a pod reads by name that `req` creates, and the name, when judged: the CREATE of
 * the object itself (of the core kinds, or of resource.k8s.io's ResourceClaim: a custom
 * resource may share a plural), not a well-known ConfigMap. The name is the object's: under
 * `generateName` the request's is empty, and the object's is empty too before the API server
 * names it (at the mutating webhook); a name it makes up is no pod's to read.
 */
function judged(req: AdmissionRequest, policy: Policy | undefined): { row: (typeof POD_READS)[number]; name: string } | undefined {
  if (req.operation !== 'CREATE' || req.subResource !== undefined) return undefined;
  const name = req.object?.metadata?.name || req.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const row = POD_READS.find((r) => r.resource === req.resource.resource && req.resource.group === (r.resource === 'resourceclaims' ? 'resource.k8s.io' : ''));
  if (row === undefined) return undefined;
  // Every pod names these, unjudged; no environment creates one (configmap.well-known).
  if (row.field === 'configMaps' && policy?.config.template.wellKnownConfigMaps.includes(name) === true) return undefined;
  return { row, name };
}

/** What the live pods read that `req` creates: the read plan asks for its readers (reads.ts). */
export function liveReaderRead(req: AdmissionRequest, policy: Policy | undefined): { resource: LookupResource; name: string } | undefined {
  const it = judged(req, policy);
  return it === undefined ? undefined : { resource: it.row.resource, name: it.name };
}

/** The findings of a CREATE by `reach`: each live pod that reads the name must be one whose environment the object's writer may reach. */
export function liveReaderFindings(req: AdmissionRequest, namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const it = judged(req, ctx.policy);
  if (it === undefined) return [];
  const { row, name } = it;
  const { environment } = reach;
  const rule = RULES.referenceLiveReader.id;
  const what = `${row.kind} ${name}`;
  const readers = ctx.lookup.readers(row.resource, namespace, name);
  if (readers.state === 'unknown') return [{ rule, path: 'metadata.name', message: `cannot tell whether a live pod of another environment reads ${what} in namespace ${namespace}: ${readers.reason}` }];
  for (const { pod } of readers.pods) {
    const owner = ownershipOfFound(pod, 'Pod', namespace, ctx.policy, ctx.keyRing);
    if (owner.kind === 'unverifiable') return foreign(rule, namespace, what, environment);
    const of = owner.kind === 'unowned' ? undefined : owner.environment;
    if (of === environment) continue;
    // A principal of no environment writes for the pods of those it acts for (a manager's); an environment's claim
    // may be mounted by the pods of environments that list it in `claimsFrom` (as at their binding).
    if (of !== undefined && environment === undefined && actsFor(reach.requester, of, ctx.policy)) continue;
    if (of !== undefined && environment !== undefined && row.field === 'claims' && ctx.policy.claimsFrom.get(of)?.has(environment) === true) continue;
    return foreign(rule, namespace, what, environment);
  }
  return [];
}

/** Which pod reads the name, and whose, is not told: the requester acts for none of them. */
function foreign(rule: string, namespace: string, what: string, environment: string | undefined): Finding[] {
  const whose = environment === undefined ? 'of an environment this requester does not act for' : 'of another environment (or of none)';
  return [
    {
      rule,
      path: 'metadata.name',
      message: `a live pod ${whose} in namespace ${namespace} reads ${what} by name, and the kubelet would hand it this one: choose a name of this run's own, or create it once no such pod is left`,
    },
  ];
}
