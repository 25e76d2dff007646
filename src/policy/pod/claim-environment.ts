// Claims across environments: a pod may mount (or clone, through an ephemeral volume)
// only claims of its own environment, or of one its policy entry lists in `claimsFrom`;
// a PersistentVolumeClaim may clone only such claims too. A claim's environment is read
// from stamps that verify, never from a bare label, and knowing them needs a lookup: when
// Deed cannot know, it refuses and says why. A claim that does not exist is refused too,
// whoever asks: the pod would bind to whatever is created under that name later, by anyone
// (reference-owner.ts says where that cannot happen).
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { dataSources, ephemeralClaimSpec } from './spec.js';
import { isWorkloadController } from '../controller-made.js';
import { actsFor, isPlatform, isTrusted } from '../requester/principals.js';
import { field, isRec, recs, text, type Rec } from '../unstructured.js';
import type { DecisionContext } from '../policy.js';
import { RULES } from '../rules/catalog.js';
import { absentAllowed, judgeReference, type Reach } from './reference-owner.js';

/**
 * A claim reached by name, or through a VolumeSnapshot of it (judged by the snapshot's
 * source claim, which a second lookup reads).
 */
export type ClaimReference = ({ claim: string } | { snapshot: string } | { populator: string }) & {
  /** The field that names the claim or snapshot, by volume name. */
  path: string;
  /** What the reference does, for messages: `volume "ws" mounts`. */
  subject: string;
  /**
   * A new claim's data source: what it is filled from when its volume is provisioned, which
   * may be long after (the ephemeral volume controller makes a pod's claim at once; the
   * statefulset controller makes a claim per replica, whenever it scales up). No binding
   * judges it again, so one that does not exist yet is never left for later.
   */
  fills?: true;
};

/** Claims a pod mounts (persistentVolumeClaim volumes) or clones or restores (ephemeral volumes with a data source). */
export function podClaims(spec: Rec, at: string): ClaimReference[] {
  const out: ClaimReference[] = [];
  for (const v of recs(field(spec, 'volumes'))) {
    const name = text(v, 'name') ?? '';
    const pvc = field(v, 'persistentVolumeClaim');
    const claim = isRec(pvc) ? text(pvc, 'claimName') : undefined;
    if (claim !== undefined && claim !== '') out.push({ claim, path: `${at}.volumes[name=${name}].persistentVolumeClaim.claimName`, subject: `volume "${name}" mounts` });
    const template = ephemeralClaimSpec(v);
    if (template !== undefined) out.push(...claimSpecClaims(template, `${at}.volumes[name=${name}].ephemeral.volumeClaimTemplate.spec`, `volume "${name}"`));
  }
  return out;
}

/** The claim a PersistentVolumeClaim spec (at `at`) clones, or the snapshot it restores. */
export function claimSpecClaims(spec: Rec, at: string, who: string): ClaimReference[] {
  const out: ClaimReference[] = [];
  const { clone, restore, populator } = dataSources(spec);
  if (clone !== undefined) out.push({ claim: clone.name, path: `${at}.${clone.key}`, subject: `${who} clones`, fills: true });
  if (restore !== undefined) out.push({ snapshot: restore.name, path: `${at}.${restore.key}`, subject: `${who} restores`, fills: true });
  if (populator !== undefined) out.push({ populator: populator.source, path: `${at}.${populator.key}`, subject: `${who} is filled from` });
  return out;
}

/** The claim a PersistentVolumeClaim clones or restores from a snapshot, if any. */
export function pvcClaims(obj: KubeObject): ClaimReference[] {
  return isRec(obj.spec) ? claimSpecClaims(obj.spec, 'spec', 'this claim') : [];
}

/** The claim a VolumeSnapshot copies. */
export function snapshotClaims(obj: KubeObject): ClaimReference[] {
  const source = isRec(obj.spec) ? field(obj.spec, 'source') : undefined;
  const claim = isRec(source) ? text(source, 'persistentVolumeClaimName') : undefined;
  return claim === undefined || claim === '' ? [] : [{ claim, path: 'spec.source.persistentVolumeClaimName', subject: 'this snapshot copies' }];
}

/** The names a review reads: claims, and snapshots (whose source claims are read next). */
export function referencedNames(refs: ClaimReference[]): { claims: string[]; snapshots: string[] } {
  const claims = new Set<string>();
  const snapshots = new Set<string>();
  for (const r of refs) if ('claim' in r) claims.add(r.claim);
  else if ('snapshot' in r) snapshots.add(r.snapshot);
  return { claims: [...claims], snapshots: [...snapshots] };
}

/** Every claim (or snapshot's source claim) the object names must be one `reach` may use; see reference-owner.ts. */
export function claimEnvironment(refs: ClaimReference[], namespace: string, given: Reach, ctx: DecisionContext): Finding[] {
  const findings: Finding[] = [];
  for (const ref of refs) {
    // A pod's binding judges again what it mounts, not what its claims are filled from.
    const reach = ref.fills === true && given.boundLater === true ? { ...given, boundLater: false } : given;
    if ('claim' in ref) {
      findings.push(...judgeClaim(ref.claim, ref, namespace, reach, ctx, undefined));
      continue;
    }
    if ('populator' in ref) {
      findings.push(...populatedFrom(ref.populator, ref, namespace, reach, ctx));
      continue;
    }
    const found = ctx.lookup.get('volumesnapshots', namespace, ref.snapshot);
    if (found.state === 'unknown') {
      findings.push({ rule: RULES.claimUnknown.id, path: ref.path, message: `cannot tell which claim snapshot ${ref.snapshot} copies: ${found.reason}` });
    } else if (found.state === 'absent') {
      if (!absentAllowed(namespace, reach, ctx))
        findings.push({ rule: RULES.claimAbsent.id, path: ref.path, message: `snapshot ${ref.snapshot} does not exist; create it first, or one another environment creates under that name later would be used` });
    } else if (found.sourceClaim !== undefined) {
      // A snapshot bound to pre-provisioned content (no source claim) was made by an administrator: no environment's claim.
      findings.push(...judgeClaim(found.sourceClaim, { ...ref, subject: `${ref.subject} snapshot ${ref.snapshot} of` }, namespace, reach, ctx, { name: ref.snapshot, created: found.created }));
    }
  }
  return findings;
}

/**
 * A volume populator fills the claim from what its custom resource names (a VolumeCloneSource's
 * claim, a backup), with the populator's rights, and Deed does not read those kinds, nor a
 * source in another namespace: whose data it copies cannot be told. So only where no other environment's data can be named, as for any
 * reference to a kind Deed does not read: the platform's principals and system controllers, a
 * workload controller making what a template judged here already named, and a namespace bound
 * to an environment the requester acts for.
 */
function populatedFrom(source: string, ref: { path: string; subject: string }, namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const { requester } = reach;
  const bound = ctx.policy.envByBoundNamespace.get(namespace);
  if (isPlatform(requester, ctx.policy) || isTrusted(requester, ctx.policy) || isWorkloadController(requester, ctx.policy) || (bound !== undefined && actsFor(requester, bound, ctx.policy))) return [];
  return [
    {
      rule: RULES.claimUnknown.id,
      path: ref.path,
      message: `${ref.subject} ${source}, which Deed does not read (a volume populator's source, or another namespace's), so whose data the claim would hold cannot be told; clone a claim or restore a VolumeSnapshot of this namespace instead, or fill it in a namespace bound to your environment`,
    },
  ];
}

/**
 * `snapshot`: the claim is a snapshot's source, which may be gone though its data lives on in
 * the snapshot, or gone and made again under its name, by anyone: only a claim made before
 * the snapshot can be the one it copied.
 */
function judgeClaim(claim: string, ref: { path: string; subject: string }, namespace: string, reach: Reach, ctx: DecisionContext, snapshot: { name: string; created: string | undefined } | undefined): Finding[] {
  const alsoFrom = reach.environment !== undefined ? ctx.policy.claimsFrom.get(reach.environment) : undefined;
  const found = ctx.lookup.get('persistentvolumeclaims', namespace, claim);
  if (found.state === 'absent' && snapshot !== undefined)
    return [{ rule: RULES.claimUnknown.id, path: ref.path, message: `snapshot ${snapshot.name} was taken of claim ${claim}, which no longer exists, so whose data it holds cannot be told` }];
  if (found.state === 'found' && snapshot !== undefined && !madeBefore(found.created, snapshot.created))
    return [
      {
        rule: RULES.claimUnknown.id,
        path: ref.path,
        message:
          found.created === undefined || snapshot.created === undefined
            ? `cannot tell whether claim ${claim} is the one snapshot ${snapshot.name} was taken of (when either was made is not known), so whose data it holds cannot be told`
            : `snapshot ${snapshot.name} was taken of claim ${claim}, which has since been deleted and made again (created ${found.created}, after the snapshot's ${snapshot.created}), so whose data it holds cannot be told`,
      },
    ];
  const verdict = judgeReference(found, 'PersistentVolumeClaim', namespace, { ...reach, ...(alsoFrom !== undefined ? { alsoFrom } : {}) }, ctx);
  switch (verdict.kind) {
    case 'allowed':
      return [];
    case 'unknown':
      return [{ rule: RULES.claimUnknown.id, path: ref.path, message: `cannot tell which environment claim ${claim} belongs to: ${verdict.reason}` }];
    case 'absent':
      return [{ rule: RULES.claimAbsent.id, path: ref.path, message: `claim ${claim} does not exist; create it first, or a claim another environment creates under that name later would be used` }];
    case 'unverifiable':
      return [{ rule: RULES.claimUnknown.id, path: ref.path, message: `claim ${claim} carries Deed's stamps but they do not verify (${verdict.reason}), so its environment is unknown` }];
    case 'foreign':
      return [
        {
          rule: RULES.claimCrossEnvironment.id,
          path: ref.path,
          message:
            reach.environment === undefined
              ? `${ref.subject} claim ${claim}, which belongs to another environment; a requester acting for no environment may not`
              : `${ref.subject} claim ${claim}, which belongs to another environment; environment "${reach.environment}" may not (policy: environments[].claimsFrom)`,
        },
      ];
  }
}

/**
 * Whether a claim was made no later than a snapshot of it: RFC 3339 times of one API server, to
 * the second. A claim made in the snapshot's second passes: its predecessor under that name would
 * have to be snapshotted, deleted (which the snapshot controller's finalizer holds back until the
 * snapshot is taken) and made again within that second.
 */
export function madeBefore(claim: string | undefined, snapshot: string | undefined): boolean {
  if (claim === undefined || snapshot === undefined) return false;
  const [c, s] = [Date.parse(claim), Date.parse(snapshot)];
  return Number.isFinite(c) && Number.isFinite(s) && c <= s;
}
