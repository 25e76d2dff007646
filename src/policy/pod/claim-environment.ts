// Claims across environments: a pod may mount (or clone, through an ephemeral volume)
// only claims of its own environment, or of one its policy entry lists in `claimsFrom`;
// a PersistentVolumeClaim may clone only such claims too. A claim's environment is read
// from stamps that verify, never from a bare label, and knowing them needs a lookup: when
// Deed cannot know, it refuses and says why. A claim that does not exist is refused too:
// the pod would bind to whatever is created under that name later, by anyone.
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { ownershipOf } from '../ownership.js';
import { clonedClaim, ephemeralClaimSpec, field, isRec, recs, text, type Rec } from './spec.js';
import type { DecisionContext } from '../policy.js';
import { RULES } from '../rules/catalog.js';

export interface ClaimReference {
  claim: string;
  /** The field that names the claim, by volume name. */
  path: string;
  /** What the reference does, for messages: `volume "ws" mounts`. */
  subject: string;
}

/** Claims a pod mounts (persistentVolumeClaim volumes) or clones (ephemeral volumes with a PVC data source). */
export function podClaims(spec: Rec, at: string): ClaimReference[] {
  const out: ClaimReference[] = [];
  for (const v of recs(field(spec, 'volumes'))) {
    const name = text(v, 'name') ?? '';
    const pvc = field(v, 'persistentVolumeClaim');
    const claim = isRec(pvc) ? text(pvc, 'claimName') : undefined;
    if (claim !== undefined && claim !== '') out.push({ claim, path: `${at}.volumes[name=${name}].persistentVolumeClaim.claimName`, subject: `volume "${name}" mounts` });
    const template = ephemeralClaimSpec(v);
    const source = template === undefined ? undefined : clonedClaim(template);
    if (source !== undefined) out.push({ claim: source.name, path: `${at}.volumes[name=${name}].ephemeral.volumeClaimTemplate.spec.${source.key}`, subject: `volume "${name}" clones` });
  }
  return out;
}

/** The claim a PersistentVolumeClaim clones, if any. */
export function pvcClaims(obj: KubeObject): ClaimReference[] {
  const source = isRec(obj.spec) ? clonedClaim(obj.spec) : undefined;
  return source === undefined ? [] : [{ claim: source.name, path: `spec.${source.key}`, subject: 'this claim clones' }];
}

/** `environment` undefined: a requester that acts for none, which may reach no environment's claim. */
export function claimEnvironment(refs: ClaimReference[], namespace: string, environment: string | undefined, ctx: DecisionContext): Finding[] {
  const allowedFrom = (environment !== undefined ? ctx.policy.claimsFrom.get(environment) : undefined) ?? new Set<string>();
  const findings: Finding[] = [];
  for (const ref of refs) {
    const found = ctx.lookup.get('persistentvolumeclaims', namespace, ref.claim);
    if (found.state === 'unknown') {
      findings.push({ rule: RULES.claimUnknown.id, path: ref.path, message: `cannot tell which environment claim ${ref.claim} belongs to: ${found.reason}` });
      continue;
    }
    // A requester of no environment creates no sandbox claims to wait for: a missing claim is its own affair.
    if (found.state === 'absent' && environment === undefined) continue;
    if (found.state === 'absent') {
      findings.push({
        rule: RULES.claimAbsent.id,
        path: ref.path,
        message: `claim ${ref.claim} does not exist; create it first, or a claim another environment creates under that name later would be used`,
      });
      continue;
    }
    // Whose the claim is, read as guarded writes read it: from stamps that verify under the ring.
    const owner = ownershipOf({ kind: 'PersistentVolumeClaim', namespace, metadata: found.metadata }, ctx.policy, ctx.keyRing);
    if (owner.kind === 'unowned' || owner.kind === 'runner') continue; // an unmanaged claim: not Deed's to assign
    if (owner.kind === 'unverifiable') {
      findings.push({
        rule: RULES.claimUnknown.id,
        path: ref.path,
        message: `claim ${ref.claim} carries Deed's stamps but they do not verify (${owner.reason}), so its environment is unknown`,
      });
      continue;
    }
    const stamps = { environment: owner.environment };
    if (stamps.environment === environment || allowedFrom.has(stamps.environment)) continue;
    findings.push({
      rule: RULES.claimCrossEnvironment.id,
      path: ref.path,
      message:
        environment === undefined
          ? `${ref.subject} claim ${ref.claim} of environment "${stamps.environment}"; a requester acting for no environment may not`
          : `${ref.subject} claim ${ref.claim} of environment "${stamps.environment}"; environment "${environment}" may not (policy: environments[].claimsFrom)`,
    });
  }
  return findings;
}
