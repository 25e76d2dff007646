// guard.runner-owner: a runner pod (a pod whose service account the policy maps to an
// environment, ownership.ts) is its environment's: deleting it makes the garbage collector
// delete everything Deed stamped with an owner reference to it. Deed guards the pod's DELETE,
// but the garbage collector deletes a dependent when its owner goes, and that DELETE is the
// owner's. So a runner pod's owner references (controller or not: the garbage collector
// follows every one) name only what its environment's guards keep: an object stamped for that
// environment (verifying), one unstamped in a namespace bound to it, or another of its
// runners. One unstamped outside a bound namespace is any principal of no environment's to delete; another
// environment's is theirs; one that cannot be read, does not exist or whose stamps do not
// verify cannot be told (fail closed). Judged whoever writes the pod, the platform and
// managers included (they create runners); system controllers and break-glass pass, as at
// the other runner guards. A kind Deed does not read that is no Kubernetes kind the table
// names in a namespace (a custom resource: ARC's EphemeralRunner owns its runner pods) or a
// cluster-scoped owner is left to RBAC (docs/security-model.md).
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { ownerLookupKey, ownerReferencesOf, type OwnerReference } from '../controller-made.js';
import { groupOf, kindRowNamed } from '../kinds.js';
import type { LookupKey } from '../reads.js';
import { ownershipOfFound } from '../ownership.js';
import type { DecisionContext, Policy } from '../policy.js';
import { runnerOf } from '../pod/runner-mark.js';
import type { Requester } from '../requester/identity.js';
import { isBreakGlassPrincipal, isSystem, isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';

/** At most this many owners of one runner pod are read; past it the rest are refused (their owner cannot be told). */
export const MAX_RUNNER_OWNER_READS = 16;

/** The groups of Kubernetes' own kinds: a namespaced kind of one of them that Deed does not read is no custom resource. */
function isKubernetesGroup(group: string): boolean {
  return group === '' || ['apps', 'batch', 'policy', 'autoscaling'].includes(group) || (group.endsWith('.k8s.io') && !group.endsWith('.x-k8s.io'));
}

/**
 * The owner references of a runner pod a write introduces (all at CREATE; on UPDATE those it
 * adds or changes), but Deed's own to the requester's runner: that pod's token is bound to it,
 * so it runs as an account of the requester's environment, a runner of it.
 */
export function judgedRunnerOwners(req: AdmissionRequest, namespace: string, requester: Requester | undefined, policy: Policy): OwnerReference[] {
  if (req.resource.group !== '' || req.resource.resource !== 'pods' || req.subResource !== undefined) return [];
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return [];
  const obj = req.object;
  if (!obj || runnerOf(obj, namespace, policy) === undefined) return [];
  const id = (r: OwnerReference) => `${r.uid}/${r.apiVersion}/${r.kind}/${r.name}`;
  const kept = new Set(req.operation === 'UPDATE' ? ownerReferencesOf(req.oldObject).map(id) : []);
  const runner = requester?.runner;
  return ownerReferencesOf(obj).filter(
    (r) => !kept.has(id(r)) && !(runner !== undefined && runner.namespace === namespace && r.kind === 'Pod' && groupOf(r.apiVersion) === '' && r.name === runner.name && r.uid === runner.uid),
  );
}

/** Whether the rule judges `requester`'s writes: system controllers and break-glass pass (break-glass is decided again as if it did not). */
export function judgesRunnerOwnersOf(requester: Requester, policy: Policy): boolean {
  return !isTrusted(requester, policy);
}

/** The reads the rule makes (the read plan, reads.ts): the owners of readable kinds a judged write of a runner pod introduces. */
export function runnerOwnerKeys(req: AdmissionRequest, namespace: string, requester: Requester | undefined, policy: Policy): LookupKey[] {
  // A break-glass principal's plan is anyone's: its decision is made again as if it were none.
  if (requester !== undefined && isSystem(requester, policy) && !isBreakGlassPrincipal(requester, policy)) return [];
  const seen = new Set<string>();
  const keys: LookupKey[] = [];
  for (const ref of judgedRunnerOwners(req, namespace, requester, policy)) {
    const key = ownerLookupKey(ref, namespace);
    if (key === undefined || seen.has(`${key.resource}/${key.name}`)) continue;
    seen.add(`${key.resource}/${key.name}`);
    keys.push(key);
  }
  return keys.slice(0, MAX_RUNNER_OWNER_READS);
}

/** The findings of a write of a pod (CREATE, UPDATE of the pod itself) by `requester`. */
export function runnerOwnerFindings(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  const { policy } = ctx;
  if (!judgesRunnerOwnersOf(requester, policy)) return [];
  const owners = judgedRunnerOwners(req, namespace, requester, policy);
  if (owners.length === 0) return [];
  const environment = runnerOf(req.object as KubeObject, namespace, policy)!;
  const fix = `own the runner by an object stamped for its environment (created by one of its principals), by one in a namespace bound to it, by another of its runners, or by a kind tenants cannot delete; or by none`;
  const readable = new Set(runnerOwnerKeys(req, namespace, requester, policy).map((k) => `${k.resource}/${k.name}`));
  const findings: Finding[] = [];
  for (const ref of owners) {
    const path = `metadata.ownerReferences[${ref.index}]`;
    const what = `${ref.kind} ${namespace}/${ref.name}`;
    const refuse = (why: string) => findings.push({ rule: RULES.guardRunnerOwner.id, path, message: `this pod runs as a runner of an environment, and its owner ${what} ${why}: the garbage collector would delete the runner, and all Deed stamped with an owner reference to it, when its owner goes; ${fix}` });
    const key = ownerLookupKey(ref, namespace);
    if (key === undefined) {
      const row = kindRowNamed(groupOf(ref.apiVersion), ref.kind);
      // A Kubernetes kind of a namespace Deed does not read (a NetworkPolicy, an Event) is one tenants may delete;
      // a custom resource is its operator's, whether or not the table names it for its references (a Rollout).
      if ((row?.namespaced ?? true) && isKubernetesGroup(groupOf(ref.apiVersion))) refuse(`is a ${ref.kind} (${ref.apiVersion}), a kind Deed does not read, so whose it is cannot be told`);
      continue;
    }
    if (!readable.has(`${key.resource}/${key.name}`)) {
      refuse(`was not read (Deed reads at most ${MAX_RUNNER_OWNER_READS} owners of one runner), so whose it is cannot be told`);
      continue;
    }
    const found = ctx.lookup.get(key.resource, namespace, ref.name);
    if (found.state === 'unknown') refuse(`cannot be read (${found.reason}), so whose it is cannot be told`);
    else if (found.state === 'absent' || (found.metadata.uid !== undefined && found.metadata.uid !== ref.uid)) refuse('does not exist with the uid the reference names');
    else {
      const row = kindRowNamed(groupOf(ref.apiVersion), ref.kind)!;
      const owner = ownershipOfFound(found, row.kind, namespace, policy, ctx.keyRing);
      if (owner.kind === 'unverifiable') refuse(`carries Deed's stamps but they do not verify (${owner.reason}), so whose it is cannot be told`);
      else if (owner.kind === 'unowned') refuse('carries no stamps outside a namespace bound to an environment, so any principal of no environment (a tenant with edit) may delete it');
      else if (owner.environment !== environment) refuse('belongs to another environment');
    }
  }
  return findings;
}
