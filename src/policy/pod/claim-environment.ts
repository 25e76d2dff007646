// Claims across environments: a pod may mount (or clone, through an ephemeral volume)
// only claims of its own environment, or of one its policy entry lists in `claimsFrom`;
// a PersistentVolumeClaim may clone only such claims too. A claim's environment is read
// from stamps that verify, never from a bare label, and knowing them needs a lookup: when
// Deed cannot know, it refuses and says why. A claim that does not exist is refused too,
// whoever asks: the pod would bind to whatever is created under that name later, by anyone
// (reference-owner.ts says where that cannot happen).
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { clonedClaim, ephemeralClaimSpec, field, isRec, recs, text, type Rec } from './spec.js';
import type { DecisionContext } from '../policy.js';
import { RULES } from '../rules/catalog.js';
import { judgeReference, type Reach } from './reference-owner.js';

export interface ClaimReference {
  claim: string;
  /** The field that names the claim, by volume name. */
  path: string;
  /** What the reference does, for messages: `volume "ws" mounts`. */
  subject: string;
}

/** Claims a pod mounts (persistentVolumeClaim volumes) or clones (ephemeral volumes with a PVC data source). */
export function podClaims(spec: Rec): ClaimReference[] {
  const out: ClaimReference[] = [];
  for (const v of recs(field(spec, 'volumes'))) {
    const name = text(v, 'name') ?? '';
    const pvc = field(v, 'persistentVolumeClaim');
    const claim = isRec(pvc) ? text(pvc, 'claimName') : undefined;
    if (claim !== undefined && claim !== '') out.push({ claim, path: `spec.volumes[name=${name}].persistentVolumeClaim.claimName`, subject: `volume "${name}" mounts` });
    const template = ephemeralClaimSpec(v);
    const source = template === undefined ? undefined : clonedClaim(template);
    if (source !== undefined) out.push({ claim: source.name, path: `spec.volumes[name=${name}].ephemeral.volumeClaimTemplate.spec.${source.key}`, subject: `volume "${name}" clones` });
  }
  return out;
}

/** The claim a PersistentVolumeClaim clones, if any. */
export function pvcClaims(obj: KubeObject): ClaimReference[] {
  const source = isRec(obj.spec) ? clonedClaim(obj.spec) : undefined;
  return source === undefined ? [] : [{ claim: source.name, path: `spec.${source.key}`, subject: 'this claim clones' }];
}

/** Every claim the pod (or claim) names must be one `reach` may use; see reference-owner.ts. */
export function claimEnvironment(refs: ClaimReference[], namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const alsoFrom = (reach.environment !== undefined ? ctx.policy.claimsFrom.get(reach.environment) : undefined) ?? new Set<string>();
  const findings: Finding[] = [];
  for (const ref of refs) {
    const verdict = judgeReference(ctx.lookup.get('persistentvolumeclaims', namespace, ref.claim), 'PersistentVolumeClaim', namespace, { ...reach, alsoFrom }, ctx);
    if (verdict.kind === 'allowed') continue;
    if (verdict.kind === 'unknown')
      findings.push({ rule: RULES.claimUnknown.id, path: ref.path, message: `cannot tell which environment claim ${ref.claim} belongs to: ${verdict.reason}` });
    else if (verdict.kind === 'absent')
      findings.push({
        rule: RULES.claimAbsent.id,
        path: ref.path,
        message: `claim ${ref.claim} does not exist; create it first, or a claim another environment creates under that name later would be used`,
      });
    else if (verdict.kind === 'unverifiable')
      findings.push({
        rule: RULES.claimUnknown.id,
        path: ref.path,
        message: `claim ${ref.claim} carries Deed's stamps but they do not verify (${verdict.reason}), so its environment is unknown`,
      });
    else
      findings.push({
        rule: RULES.claimCrossEnvironment.id,
        path: ref.path,
        message:
          reach.environment === undefined
            ? `${ref.subject} claim ${ref.claim} of environment "${verdict.environment}"; a requester acting for no environment may not`
            : `${ref.subject} claim ${ref.claim} of environment "${verdict.environment}"; environment "${reach.environment}" may not (policy: environments[].claimsFrom)`,
      });
  }
  return findings;
}
