// The validating webhook (DESIGN.md, "The validating side"). It sees the final object:
// checks stamps at CREATE, freezes them on UPDATE, guards every door that can change or
// remove an environment's object (main resource, subresources, evictions, bindings), and
// checks sandbox pod templates, workspace mounts and the environment of the claims a pod
// mounts. Object in, verdict out; no I/O: what it knows of other objects comes from
// ctx.lookup.
import type { AdmissionRequest, KubeObject } from '../admission/types.js';
import { allowed, denied, formatFinding, type Finding, type Verdict } from '../admission/verdict.js';
import { own } from './attestation.js';
import { resolveRequester, serviceAccountEnvironment, type Requester } from './identity.js';
import type { SandboxKind } from './kinds.js';
import { ownershipOf, ownershipOfObject } from './ownership.js';
import type { DecisionContext, Policy } from './policy.js';
import { actsFor, isTrusted } from './principals.js';
import { RULES } from './rules/catalog.js';
import { doorOf, type Door } from './doors.js';
import { enforce } from './rules/enforcement.js';
import { frozenStamps, frozenBindingAnnotations } from './rules/frozen-stamps.js';
import { guardedWrite } from './rules/guarded-writes.js';
import { stampIntegrity } from './rules/stamp-integrity.js';
import { templateCollisions } from './pod/template-collisions.js';
import { claimEnvironment, podClaims, pvcClaims } from './pod/claim-environment.js';
import { isRec } from './pod/spec.js';
import { workspaceMounts } from './pod/workspace-mounts.js';
import { annotationPath, isManaged } from './stamps.js';
import { createIdentity, kindMismatch } from './create-gate.js';

/** Secrets of this type are filled with a token of the service account they name, by the token controller. */
const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';

export function validate(req: AdmissionRequest, ctx: DecisionContext): Verdict {
  const door = doorOf(req);
  if (door.kind === 'unreviewed') return allowed();
  const namespace = req.namespace;
  if (namespace === undefined) return denied([{ rule: RULES.requestMalformed.id, message: `a ${req.resource.resource} review must name a namespace` }]);
  const requester = resolveRequester(req.userInfo, ctx.policy);
  if (door.kind === 'pod-by-name') return validatePodByName(req, door, namespace, requester, ctx);

  const kind = door.sandboxKind;
  const mismatch = kindMismatch(req, kind);
  if (mismatch) return denied([mismatch]);
  if (req.operation === 'CREATE') return validateCreate(req.object!, kind, namespace, requester, ctx);
  return validateChange(req, kind, namespace, requester, ctx);
}

function validateCreate(obj: KubeObject, kind: SandboxKind, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  const { policy } = ctx;
  const identity = createIdentity(requester, namespace, obj.metadata.labels ?? {}, obj.metadata.annotations ?? {}, policy);
  // Volumes and data sources are immutable once created: the claims they name are checked here only.
  const claims = kind.kind === 'Pod' && isRec(obj.spec) ? podClaims(obj.spec) : kind.kind === 'PersistentVolumeClaim' ? pvcClaims(obj) : [];
  if ('verdict' in identity) {
    if (!identity.verdict.allowed || isTrusted(requester, policy)) return identity.verdict;
    // Acting for no environment, the requester gets no stamps; but what its object reaches
    // (another environment's claim, a runner's service account) is still guarded.
    return enforce([...borrowedServiceAccount(obj, kind, namespace, requester, policy), ...claimEnvironment(claims, namespace, undefined, ctx)], policy);
  }

  const findings = stampIntegrity(obj, kind, namespace, identity.environment, requester.runner, policy, ctx.keyRing, ctx.now());
  const runner = requester.runner;
  if (runner !== undefined && runner.namespace !== namespace) {
    const ref = (obj.metadata.ownerReferences ?? []).find((r) => r.uid === runner.uid);
    if (ref !== undefined)
      findings.push({
        rule: RULES.ownerCrossNamespace.id,
        path: 'metadata.ownerReferences',
        message: `the owner reference to pod ${ref.name} (${runner.namespace}) cannot resolve in namespace ${namespace}; the garbage collector would delete this object`,
      });
  }
  findings.push(...objectRules(obj, kind, ctx));
  if (!isTrusted(requester, policy)) findings.push(...borrowedServiceAccount(obj, kind, namespace, requester, policy));
  findings.push(...claimEnvironment(claims, namespace, identity.environment, ctx));
  return enforce(findings, policy);
}

function validateChange(req: AdmissionRequest, kind: SandboxKind, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  const { policy } = ctx;
  const oldObj = req.oldObject!;
  const newObj = req.operation === 'UPDATE' ? req.object! : undefined;
  const findings: Finding[] = [];
  // Status writes are guarded too: a terminal phase or a false condition written by another
  // environment cannot be taken back. The kubelet and the scheduler are system principals;
  // a status writer outside kube-system (a CSI resizer) is listed in systemPrincipals.
  findings.push(...guardedWrite(requester, ownershipOfObject(oldObj, kind.kind, namespace, policy, ctx.keyRing), policy));
  if (newObj !== undefined) {
    findings.push(...frozenStamps(oldObj, newObj, policy.keys, requester.username));
    if (isManaged(newObj.metadata.labels, policy.keys)) findings.push(...introduced(objectRules(oldObj, kind, ctx), objectRules(newObj, kind, ctx)));
  }
  return enforce(findings, policy);
}

/**
 * An eviction or a binding: the review carries an Eviction or a Binding that names the
 * pod, so whose the pod is comes from a lookup. When Deed cannot know, it refuses.
 */
function validatePodByName(req: AdmissionRequest, door: Extract<Door, { kind: 'pod-by-name' }>, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  const { policy } = ctx;
  const findings: Finding[] = door.action === 'binding' ? frozenBindingAnnotations(req.object ?? undefined, policy.keys) : [];
  if (door.pod === undefined) return denied([{ rule: RULES.requestMalformed.id, message: `the ${door.action} names no pod` }]);
  if (!isTrusted(requester, policy)) {
    const pod = ctx.lookup.get('pods', namespace, door.pod);
    if (pod.state === 'found') {
      const owner = ownershipOf({ kind: 'Pod', namespace, metadata: pod.metadata, serviceAccountName: pod.serviceAccountName }, policy, ctx.keyRing);
      findings.push(...guardedWrite(requester, owner, policy));
    } else {
      // Absent too: the API server reads the pod only after admission, so one created under
      // that name meanwhile would be evicted or bound without having been judged.
      const why = pod.state === 'unknown' ? pod.reason : 'it does not exist (yet)';
      findings.push({ rule: RULES.guardOwnerUnknown.id, message: `cannot tell whose pod ${namespace}/${door.pod} is (${why}); refusing the ${door.action}` });
    }
  }
  return enforce(findings, policy);
}

/**
 * A pod runs as its service account, and a pod-bound token of a runner's service account
 * acts for the runner's environment: only who acts for that environment may create a pod
 * that runs as it.
 */
function borrowedServiceAccount(obj: KubeObject, kind: SandboxKind, namespace: string, requester: Requester, policy: Policy): Finding[] {
  if (kind.kind !== 'Pod') return [];
  const given = obj.spec?.serviceAccountName;
  const sa = typeof given === 'string' && given !== '' ? given : 'default';
  const environment = serviceAccountEnvironment(namespace, sa, policy);
  if (environment === undefined || actsFor(requester, environment, policy)) return [];
  return [{ rule: RULES.guardServiceAccount.id, path: 'spec.serviceAccountName', message: `service account ${namespace}:${sa} acts for environment "${environment}"; ${requester.username} does not, and may not create a pod that runs as it` }];
}

/** Per-kind checks of an object's content: pod templates and workspace mounts, PVC ownership. `deed audit` judges stored objects with them too. */
export function objectRules(obj: KubeObject, kind: SandboxKind, ctx: DecisionContext): Finding[] {
  const { config, keys } = ctx.policy;
  if (kind.kind === 'PersistentVolumeClaim') {
    const podOwner = (obj.metadata.ownerReferences ?? []).find((r) => r.kind === 'Pod' && r.apiVersion === 'v1');
    return podOwner
      ? [{ rule: RULES.pvcPodOwner.id, path: 'metadata.ownerReferences', message: `an owner reference to pod ${podOwner.name} would let the garbage collector delete this claim` }]
      : [];
  }
  if (kind.kind === 'Secret') {
    if (obj.type !== SERVICE_ACCOUNT_TOKEN_TYPE) return [];
    const account = own(obj.metadata.annotations ?? {}, 'kubernetes.io/service-account.name');
    return [
      {
        rule: RULES.secretServiceAccountToken.id,
        path: 'type',
        message: `a Secret of type ${SERVICE_ACCOUNT_TOKEN_TYPE} would receive a non-expiring token of service account ${account === undefined ? '(none named)' : JSON.stringify(account.slice(0, 80))}`,
      },
    ];
  }
  if (kind.kind !== 'Pod' || obj.spec === undefined) return [];
  return [
    ...templateCollisions(obj.spec, config),
    ...workspaceMounts(obj.spec, obj.metadata.name, own(obj.metadata.annotations ?? {}, keys.workspaceGrants), annotationPath(keys.workspaceGrants), config),
  ];
}

/**
 * An UPDATE is judged on what it introduces: a finding the stored object already had
 * (admitted under an older policy) does not block, say, the removal of a finalizer.
 */
function introduced(before: Finding[], after: Finding[]): Finding[] {
  const seen = new Set(before.map(formatFinding));
  return after.filter((f) => !seen.has(formatFinding(f)));
}
