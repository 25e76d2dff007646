// reference.at-binding: a pod's binding is judged again on what the pod reads once bound
// (pod/pod-reads.ts). The names were judged at the pod's CREATE, for its creator; what
// they name may have been deleted since and made again by another environment, and nothing
// held it meanwhile (a claim is kept for a scheduled pod only, a Secret or ConfigMap never).
// Judged here by whose the pod is, not by who binds it (the scheduler, a system principal,
// acts for everyone). What is gone is not refused: the kubelet waits for it, and a bound pod
// would take what is made under the name later all the same (docs/security-model.md).
import type { Finding } from '../../admission/verdict.js';
import { ownershipOfFound } from '../ownership.js';
import { referencedOwnership } from '../pod/reference-owner.js';
import { POD_READS, type PodReads } from '../pod/pod-reads.js';
import type { DecisionContext, Lookup, Policy } from '../policy.js';
import { isWellKnownConfigMap } from '../pod/configmap-references.js';
import type { LookupKey } from '../reads.js';
import { RULES } from './catalog.js';

/**
 * The reads that follow a pending pod's, when its binding is judged (lookup.ts,
 * followUpLookups): from the API server. The kubelet acts on the binding at once, and an
 * object deleted and made again under its name by another environment within the watch's
 * delay would be judged as the one before. Never from the cache: past the review's GETs the
 * rest are listed (object-reader.ts, readListed) or unknown, and answered from the cache, 32
 * names of the pod's own choosing would put the one it targets there. What is not judged
 * (notJudged) is not read.
 */
export function podReadKeys(pending: PodReads | undefined, namespace: string, policy: Policy | undefined): LookupKey[] {
  if (pending === undefined) return [];
  return POD_READS.flatMap((r) =>
    pending[r.field]
      .slice(0, r.max)
      .filter((name) => policy === undefined || !notJudged(r, name, policy))
      .map((name) => ({ resource: r.resource, namespace, name, fresh: true as const })),
  );
}

/** A name every pod may read whoever's it is (a well-known ConfigMap): neither read nor judged at binding. */
function notJudged(r: (typeof POD_READS)[number], name: string, policy: Policy): boolean {
  return r.field === 'configMaps' && isWellKnownConfigMap(name, policy);
}

/** The findings of a binding of `pod`, as the lookup found it: each object it reads once bound must be one its environment may use. */
export function bindingReads(pod: Lookup, podName: string, namespace: string, ctx: DecisionContext): Finding[] {
  if (pod.state !== 'found' || pod.reads === undefined) return [];
  const { policy, keyRing } = ctx;
  const pending = pod.reads;
  const rule = RULES.referenceAtBinding.id;
  const podOwner = ownershipOfFound(pod, 'Pod', namespace, policy, keyRing);
  if (podOwner.kind === 'unverifiable')
    return [{ rule, message: `pod ${namespace}/${podName} carries Deed's stamps but they do not verify (${podOwner.reason}), so whose the objects it reads once bound may be cannot be told` }];
  const environment = podOwner.kind === 'unowned' ? undefined : podOwner.environment;
  const whose = environment === undefined ? 'of no environment' : `environment "${environment}"`;
  const alsoFrom = environment !== undefined ? policy.claimsFrom.get(environment) : undefined;
  const findings: Finding[] = [];
  for (const r of POD_READS) {
    for (const [i, name] of pending[r.field].entries()) {
      if (notJudged(r, name, policy)) continue;
      if (i >= r.max) {
        // Not read (podReadKeys reads as many): what it is cannot be told, as at the pod's CREATE.
        findings.push({ rule, message: `cannot tell which environment ${r.kind} ${name}, which pod ${namespace}/${podName} reads once bound, belongs to: Deed reads at most ${r.max} ${r.kind} names of one pod` });
        continue;
      }
      const found = ctx.lookup.get(r.resource, namespace, name);
      const what = `${r.kind} ${name}`;
      if (found.state === 'unknown') {
        findings.push({ rule, message: `cannot tell which environment ${what}, which pod ${namespace}/${podName} reads once bound, belongs to: ${found.reason}` });
        continue;
      }
      if (found.state === 'absent') continue;
      const owner = referencedOwnership(found, r.kind, namespace, ctx);
      if (owner.kind === 'unknown') {
        findings.push({ rule, message: `cannot tell which environment ${what}, which pod ${namespace}/${podName} reads once bound, belongs to: ${owner.reason}` });
        continue;
      }
      if (owner.kind === 'unowned' || owner.kind === 'runner') continue;
      if (owner.kind === 'unverifiable') {
        findings.push({ rule, message: `${what}, which pod ${namespace}/${podName} reads once bound, carries Deed's stamps but they do not verify (${owner.reason}), so its environment is unknown` });
        continue;
      }
      if (owner.environment === environment || (r.field === 'claims' && alsoFrom?.has(owner.environment) === true)) continue;
      findings.push({
        rule,
        message: `pod ${namespace}/${podName} (${whose}) names ${what}, which belongs to another environment: ${r.field === 'resourceClaimTemplates' ? "the resourceclaim controller would make this pod's claim from it" : `once bound, the kubelet would hand it to this pod${r.field === 'claims' ? ' (or, for the claim an ephemeral volume clones, the provisioner would copy it into the pod\'s claim)' : ''}`}. Delete the pod and create it again naming its own run's objects`,
      });
    }
  }
  return findings;
}
