// claim.statefulset-template: the statefulset controller makes pod `<set>-<ordinal>` with a
// volume per claim template, named after it, mounting claim `<template>-<pod>`; it creates
// that claim from the template (with the stamps Deed wrote there) only when no claim of that
// name exists. So a claim someone made under the name first is mounted in its place, unreviewed:
// an unstamped one (which guard.shared-input lets any pod use) gives its maker the pod's data,
// another environment's refuses the pod. A pod of an environment's StatefulSet mounts under
// those names only claims of its own environment, as the templates stamp them; a StatefulSet
// of no environment (a Helm chart's) mounts what it mounted before.
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { groupOf } from '../kinds.js';
import { ownershipOfFound } from '../ownership.js';
import type { ControllerRef, DecisionContext } from '../policy.js';
import { field, isRec, recs, text } from '../unstructured.js';
import { RULES } from './catalog.js';

/** A claim a StatefulSet's pod mounts from a claim template, and where. */
export interface TemplateClaim {
  claim: string;
  volume: string;
  path: string;
}

/**
 * The claims of a StatefulSet's pod that come from its claim templates: a volume `data`
 * mounting `data-<pod>`, as the controller writes them (a template volume of the same name
 * is replaced by it). Empty for a pod whose controller is not a StatefulSet.
 */
export function statefulSetTemplateClaims(pod: KubeObject, controller: ControllerRef | undefined): TemplateClaim[] {
  const name = pod.metadata.name;
  if (controller?.kind !== 'StatefulSet' || groupOf(controller.apiVersion) !== 'apps' || name === undefined || !isRec(pod.spec)) return [];
  const out: TemplateClaim[] = [];
  for (const v of recs(field(pod.spec, 'volumes'))) {
    const volume = text(v, 'name') ?? '';
    const pvc = field(v, 'persistentVolumeClaim');
    const claim = isRec(pvc) ? text(pvc, 'claimName') : undefined;
    if (claim === `${volume}-${name}`) out.push({ claim, volume, path: `spec.volumes[name=${volume}].persistentVolumeClaim.claimName` });
  }
  return out;
}

/**
 * Each template claim of a pod of `environment`'s StatefulSet is a claim of that environment
 * (verified stamps, or an unstamped claim of a namespace bound to it). A claim Deed cannot
 * read, that does not exist or whose stamps do not verify is the claim.* rules' to refuse.
 */
export function statefulSetTemplateFindings(pod: KubeObject, controller: ControllerRef, environment: string, namespace: string, ctx: DecisionContext): Finding[] {
  const findings: Finding[] = [];
  for (const ref of statefulSetTemplateClaims(pod, controller)) {
    const found = ctx.lookup.get('persistentvolumeclaims', namespace, ref.claim);
    if (found.state !== 'found') continue;
    const owner = ownershipOfFound(found, 'PersistentVolumeClaim', namespace, ctx.policy, ctx.keyRing);
    if (owner.kind === 'unverifiable' || ('environment' in owner && owner.environment === environment)) continue;
    // Never which environment: the refusal reaches the StatefulSet's events, which its own environment reads.
    const whose = owner.kind === 'unowned' ? 'carries no stamps (not made from the template)' : 'belongs to another environment';
    const who = owner.kind === 'unowned' ? 'the platform (a principal of no environment; environments may not delete an unstamped claim)' : 'its environment or the platform';
    findings.push({
      rule: RULES.claimStatefulSetTemplate.id,
      path: ref.path,
      message: `StatefulSet ${namespace}/${controller.name}'s claim template "${ref.volume}" names claim ${ref.claim} for pod ${pod.metadata.name ?? ''}, but claim ${ref.claim} already exists and ${whose}: the controller would mount it instead of making environment "${environment}"'s, and whoever made it reads what the pod writes; ${who} must delete claim ${ref.claim}, then the controller makes the StatefulSet's own`,
    });
  }
  return findings;
}
