// claim.at-binding: a claim's data source is judged again when the claim is bound to its
// volume. The provisioner copies the source when it provisions the volume (at once, or at the
// claim's first pod's scheduling under WaitForFirstConsumer, which the claim's writer can
// hold back), and copies whatever stands under the source's name then. The source was judged
// at the claim's CREATE; one made under its name since (its writer deleted it, and another
// environment, a controller for one, or the platform made one) is not what was judged, and
// no admission review sees the copy. What follows it does: the PV controller binds the claim
// to the volume with an UPDATE that sets `spec.volumeName`. So that UPDATE, whoever sends it
// (the PV controller is a system principal), is judged by when the source was made, against
// when it was judged: the claim's CREATE, or for an ephemeral volume's claim (its controller
// makes it unreviewed, as late as it can take the name) its pod's. Before that second, a
// source claim is the one judged (it existed then, and a successor can only be made after);
// in that second it may be a successor, so it must be one the claim's own environment may
// use, as at the CREATE (a manifest that makes a source and its clone together lands here);
// after it, or gone, or unreadable, what was copied cannot be told, whoever's the source is
// now (a successor of the claim's own environment may follow another's that was copied), and
// the binding is refused. A snapshot is taken of whatever claim stands under its source's
// name when it is taken: a restore is judged through it as at the CREATE whenever it was made. Refused,
// the claim stays unbound and the copy is never mounted. The name itself is kept from other
// environments meanwhile (rules/live-readers.ts); this holds where that cannot: a system
// controller's create, and the watch's delay. In a namespace bound to an environment only it
// (and whoever acts for it) writes there: nothing to judge.
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { controllerOf } from '../controller-made.js';
import { claimEnvironment, pvcClaims, type ClaimReference } from '../pod/claim-environment.js';
import { madeForPod, referencedOwnership } from '../pod/reference-owner.js';
import type { DecisionContext, Policy } from '../policy.js';
import type { LookupKey } from '../reads.js';
import type { Requester } from '../requester/identity.js';
import { isRec, text } from '../unstructured.js';
import { isBreakGlassPrincipal } from '../requester/principals.js';
import { RULES } from './catalog.js';

/**
 * The PV controller, as it acts with its own service account (the controller manager's
 * `--use-service-account-credentials`, kubeadm's and the managed offerings' default). Its
 * writes are not sent to Deed, as no kube-system account's are, but for its bindings of a
 * claim (install/manifests.ts, kubeSystemExclusion); it acts for every claim, so a binding of
 * its is judged on the claim's data source alone (doors/object.ts). Without its own account it
 * acts as `system:kube-controller-manager`, a system principal, and every write of its is sent.
 */
export const VOLUME_BINDER = 'system:serviceaccount:kube-system:persistent-volume-binder';

/** Whether `req` is the PV controller's binding of a claim to its volume (VOLUME_BINDER). */
export function isVolumeBinderBinding(req: AdmissionRequest, requester: Requester): boolean {
  return requester.username === VOLUME_BINDER && bindsVolume(req);
}

/** Whether `req` binds a claim to its volume: an UPDATE of the claim itself that sets `spec.volumeName`, empty before. */
function bindsVolume(req: AdmissionRequest): boolean {
  if (req.operation !== 'UPDATE' || req.subResource !== undefined || req.resource.group !== '' || req.resource.resource !== 'persistentvolumeclaims') return false;
  return volumeName(req.oldObject) === '' && volumeName(req.object) !== '';
}

function volumeName(obj: KubeObject | null | undefined): string {
  return isRec(obj?.spec) ? (text(obj.spec, 'volumeName') ?? '') : '';
}

/** Whether a binding of a claim in `namespace` is judged: not in a namespace bound to an environment (only it writes there). */
function judged(req: AdmissionRequest, namespace: string, policy: Policy | undefined): boolean {
  return bindsVolume(req) && policy?.envByBoundNamespace.get(namespace) === undefined;
}

/**
 * What a binding reads: the claim it clones, fresh (its creation time says whether it is the
 * one judged), or the snapshot it restores (always read live, with its own, and then the
 * claim it was taken of); and the pod a claim was made for (an ephemeral volume's), fresh:
 * its creation is when the source was judged, and whose it is may be that pod's.
 */
export function claimBindingKeys(req: AdmissionRequest, namespace: string, policy: Policy | undefined): LookupKey[] {
  if (!judged(req, namespace, policy)) return [];
  const obj = req.object!;
  const keys = pvcClaims(obj).flatMap((ref) => sourceKey(ref, namespace) ?? []);
  const pod = keys.length > 0 ? madeForPod(controllerOf(obj)) : undefined;
  return pod === undefined ? keys : [...keys, { resource: 'pods', namespace, name: pod.name, fresh: true }];
}

/** Where a binding reads a source: a claim fresh (its creation time), a snapshot (always read live, with its own); a populator's is not read. */
function sourceKey(ref: ClaimReference, namespace: string): LookupKey | undefined {
  if ('claim' in ref) return { resource: 'persistentvolumeclaims', namespace, name: ref.claim, fresh: true };
  if ('snapshot' in ref) return { resource: 'volumesnapshots', namespace, name: ref.snapshot };
  return undefined;
}

/** The findings of a binding of a claim to its volume by `requester` (see the top of this file); a break-glass principal's are not judged. */
export function claimBindingFindings(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  if (!judged(req, namespace, ctx.policy) || isBreakGlassPrincipal(requester, ctx.policy)) return [];
  const obj = req.object!;
  const rule = RULES.claimAtBinding.id;
  const name = obj.metadata.name ?? req.name ?? '';
  const sources = pvcClaims(obj).flatMap((ref) => {
    const key = sourceKey(ref, namespace);
    return key === undefined ? [] : [{ ref, key, what: 'claim' in ref ? `claim ${ref.claim}` : `snapshot ${key.name}` }];
  });
  if (sources.length === 0) return [];
  const judgedAt = whenJudged(obj, namespace, ctx);
  if ('reason' in judgedAt) return [{ rule, path: 'spec.volumeName', message: `claim ${namespace}/${name} is being bound to the volume provisioned from its data source, and when that source was judged cannot be told (${judgedAt.reason}), so neither can whether it was copied from the one judged` }];
  const findings: Finding[] = [];
  let whose: ReturnType<typeof claimEnvironmentOf> | undefined;
  for (const { ref, key, what } of sources) {
    const found = ctx.lookup.get(key.resource, namespace, key.name);
    if (found.state === 'unknown') {
      findings.push({ rule, path: ref.path, message: `cannot tell whether ${what}, which this claim is filled from, is the one judged when ${judgedAt.what} was made: ${found.reason}` });
      continue;
    }
    if (found.state === 'absent') {
      findings.push({ rule, path: ref.path, message: `${what}, which this claim is filled from, no longer exists, so what the provisioner copied into its volume cannot be told: delete this claim and create it again from a source that stays until the claim is bound` });
      continue;
    }
    const made = secondOf(found.created);
    const since = secondOf(judgedAt.time);
    if (made === undefined || since === undefined || made > since) {
      findings.push({
        rule,
        path: ref.path,
        message: `${what}, which this claim is filled from, was made after ${judgedAt.what} (${found.created ?? 'when is not known'}; ${judgedAt.what} ${judgedAt.time ?? 'when is not known'}): it was deleted and made again under its name since it was judged, and the provisioner copied whatever stood there then, which cannot be told. Delete this claim and create it again from a source that stays until the claim is bound`,
      });
      continue;
    }
    // Made before that second, a claim is the one judged. A snapshot is taken of whatever
    // claim stands under its source's name when it is taken: judged through it, as at the
    // CREATE, whenever it was made; and so is a source made in that second, which may be a successor.
    if (made < since && 'claim' in ref) continue;
    whose ??= claimEnvironmentOf(obj, namespace, ctx);
    if ('reason' in whose) {
      findings.push({ rule, path: ref.path, message: `whose this claim is cannot be told (${whose.reason}), so neither can whether it may hold what ${what} copies` });
      continue;
    }
    const reach = { requester: claimItself(name, namespace, whose.environment), environment: whose.environment };
    const why = made === since ? `was made in the same second as ${judgedAt.what}, so it may have been deleted and made again under its name since it was judged` : 'copies whatever claim stands under its source\'s name when it is taken';
    for (const f of claimEnvironment([ref], namespace, reach, ctx))
      findings.push({
        rule,
        path: f.path ?? ref.path,
        message: `${what}, which this claim is filled from, ${why}, and the provisioner copied it into the volume this binding would hand over: ${f.message}. Delete this claim and create it again from a source of its own environment`,
      });
  }
  return findings;
}

/**
 * When a claim's source was judged: at the claim's CREATE, or, for a claim made for a pod
 * (an ephemeral volume's, which its controller makes unreviewed, as late as it can take the
 * name), at that pod's (read fresh, and the same pod by uid).
 */
function whenJudged(obj: KubeObject, namespace: string, ctx: DecisionContext): { what: string; time: string | undefined } | { reason: string } {
  const pod = madeForPod(controllerOf(obj));
  const own = obj.metadata.creationTimestamp;
  if (pod === undefined) return { what: 'the claim', time: typeof own === 'string' ? own : undefined };
  const found = ctx.lookup.get('pods', namespace, pod.name);
  if (found.state === 'unknown') return { reason: `it was made for pod ${pod.name}, which cannot be read: ${found.reason}` };
  if (found.state === 'absent' || found.metadata.uid !== pod.uid) return { reason: `it was made for pod ${pod.name} (uid ${pod.uid}), which is gone` };
  return { what: `pod ${pod.name}`, time: found.created };
}

/** An RFC 3339 time of the API server's, to the second (creation times carry no finer part). */
function secondOf(time: string | undefined): number | undefined {
  const ms = time === undefined ? NaN : Date.parse(time);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

/**
 * Whose a claim being bound is, as whose a claim a pod names is (reference-owner.ts,
 * referencedOwnership): its stamps, or, unstamped and made for a pod (an ephemeral volume's
 * claim), that pod's.
 */
function claimEnvironmentOf(obj: KubeObject, namespace: string, ctx: DecisionContext): { environment: string | undefined } | { reason: string } {
  const { uid, labels, annotations } = obj.metadata;
  const controller = controllerOf(obj);
  const found = { state: 'found' as const, metadata: { ...(uid ? { uid } : {}), ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) }, ...(controller ? { controller } : {}) };
  const owner = referencedOwnership(found, 'PersistentVolumeClaim', namespace, ctx);
  if (owner.kind === 'unknown' || owner.kind === 'unverifiable') return { reason: owner.reason };
  return { environment: owner.kind === 'unowned' ? undefined : owner.environment };
}

/**
 * The claim itself as the one whose source is judged: of its environment, and no principal the
 * policy names (whoever binds it, the PV controller, is a system principal that acts for all).
 */
function claimItself(name: string, namespace: string, environment: string | undefined): Requester {
  return { username: `persistentvolumeclaim:${namespace}:${name}`, groups: [], environment: environment === undefined ? { kind: 'none' } : { kind: 'one', id: environment } };
}
