// reference.live-reader: an object created under a name a live pod reads is handed to that
// pod by the kubelet (a volume is refreshed from it, `env` is read again when a container
// restarts, a pod waiting for it starts with it). A pod's names are judged when the pod is
// written, but nothing holds what they name after: its writer may delete it, and another
// environment create one under the name. So the CREATE of a Secret, ConfigMap, claim or
// ResourceClaim for an environment is refused while a live pod of another environment (or
// of none) reads the name: it would read this environment's object, or this environment
// would write that pod's input. Creates of no environment (the platform's shared inputs)
// are not judged: any environment's pod may read those.
import type { AdmissionRequest } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { ownershipOfFound } from '../ownership.js';
import { POD_READS } from '../pod/pod-reads.js';
import type { DecisionContext, Policy } from '../policy.js';
import type { LookupResource } from '../kinds.js';
import { RULES } from './catalog.js';

/**
 * The kind a pod reads by name that `req` creates, and the name, when judged: an
 * environment's CREATE of the object itself, not a well-known ConfigMap. The name is the
 * object's: under `generateName` the request's is empty, and the object's is empty too before
 * the API server names it (at the mutating webhook); a name it makes up is no pod's to read.
 */
function judged(req: AdmissionRequest, environment: string | undefined, policy: Policy | undefined): { row: (typeof POD_READS)[number]; name: string } | undefined {
  if (environment === undefined || req.operation !== 'CREATE' || req.subResource !== undefined) return undefined;
  const name = req.object?.metadata?.name || req.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const row = POD_READS.find((r) => r.resource === req.resource.resource && (req.resource.group === 'resource.k8s.io') === (r.resource === 'resourceclaims'));
  if (row === undefined) return undefined;
  // Every pod names these, unjudged; no environment creates one (configmap.well-known).
  if (row.field === 'configMaps' && policy?.config.template.wellKnownConfigMaps.includes(name) === true) return undefined;
  return { row, name };
}

/** What the live pods read that `req` creates, for a requester acting for `environment`: the read plan asks for its readers (reads.ts). */
export function liveReaderRead(req: AdmissionRequest, environment: string | undefined, policy: Policy | undefined): { resource: LookupResource; name: string } | undefined {
  const it = judged(req, environment, policy);
  return it === undefined ? undefined : { resource: it.row.resource, name: it.name };
}

/** The findings of a CREATE for `environment`: each live pod that reads the name must be one `environment`'s object may reach. */
export function liveReaderFindings(req: AdmissionRequest, namespace: string, environment: string | undefined, ctx: DecisionContext): Finding[] {
  const it = judged(req, environment, ctx.policy);
  if (it === undefined || environment === undefined) return [];
  const { row, name } = it;
  const rule = RULES.referenceLiveReader.id;
  const what = `${row.kind} ${name}`;
  const readers = ctx.lookup.readers(row.resource, namespace, name);
  if (readers.state === 'unknown') return [{ rule, path: 'metadata.name', message: `cannot tell whether a live pod of another environment reads ${what} in namespace ${namespace}: ${readers.reason}` }];
  for (const { pod } of readers.pods) {
    const owner = ownershipOfFound(pod, 'Pod', namespace, ctx.policy, ctx.keyRing);
    if (owner.kind === 'unverifiable' || owner.kind === 'unowned') return foreign(rule, namespace, what);
    // A claim of an environment the pod's lists in `claimsFrom` is one it may mount (as at its binding).
    if (owner.environment === environment || (row.field === 'claims' && ctx.policy.claimsFrom.get(owner.environment)?.has(environment) === true)) continue;
    return foreign(rule, namespace, what);
  }
  return [];
}

/** Which pod reads the name, and whose, is not told: the requester acts for none of them. */
function foreign(rule: string, namespace: string, what: string): Finding[] {
  return [
    {
      rule,
      path: 'metadata.name',
      message: `a live pod of another environment (or of none) in namespace ${namespace} reads ${what} by name, and the kubelet would hand it this one: choose a name of this run's own, or create it once no such pod is left`,
    },
  ];
}
