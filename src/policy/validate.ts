// The validating webhook (DESIGN.md, "The validating side"). It sees the final object:
// checks stamps at CREATE, freezes them on UPDATE, guards UPDATE and DELETE across
// environments, and checks sandbox pod templates, workspace mounts and the environment
// of the claims a pod mounts. Object in, verdict out; no I/O (other objects are known
// through the context's lookup).
import type { AdmissionRequest, KubeObject } from '../admission/types.js';
import { allowed, denied, formatFinding, type Finding, type Verdict } from '../admission/verdict.js';
import { own, readStamps, verifyStamps } from './attestation.js';
import { resolveRequester, type Requester } from './identity.js';
import { sandboxKind, type SandboxKind } from './kinds.js';
import type { DecisionContext } from './policy.js';
import { RULES } from './rules/catalog.js';
import { enforce } from './rules/enforcement.js';
import { frozenStamps } from './rules/frozen-stamps.js';
import { guardedWrite } from './rules/guarded-writes.js';
import { stampIntegrity } from './rules/stamp-integrity.js';
import { templateCollisions } from './rules/template-collisions.js';
import { claimEnvironment, podClaims, pvcClaims } from './rules/claim-environment.js';
import { isRec } from './pod.js';
import { workspaceMounts } from './rules/workspace-mounts.js';
import { annotationPath, isManaged } from './stamps.js';
import { createIdentity, kindMismatch, missingNamespace } from './create-gate.js';

/** Secrets of this type are filled with a token of the service account they name, by the token controller. */
const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';

/** Subresources Deed reviews; any other (status, eviction, binding...) is not a write of the object's own fields. */
const REVIEWED_SUBRESOURCES = new Set(['ephemeralcontainers']);

export function validate(req: AdmissionRequest, ctx: DecisionContext): Verdict {
  const kind = sandboxKind(req.resource);
  if (kind === undefined || req.operation === 'CONNECT') return allowed();
  if (req.subResource !== undefined && !(kind.kind === 'Pod' && REVIEWED_SUBRESOURCES.has(req.subResource))) return allowed();
  const namespace = req.namespace;
  if (namespace === undefined) return missingNamespace(kind);
  const mismatch = kindMismatch(req, kind);
  if (mismatch) return denied([mismatch]);

  const requester = resolveRequester(req.userInfo, ctx.policy);
  if (req.operation === 'CREATE') return validateCreate(req.object!, kind, namespace, requester, ctx);
  return validateChange(req, kind, namespace, requester, ctx);
}

function validateCreate(obj: KubeObject, kind: SandboxKind, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  const { policy } = ctx;
  const identity = createIdentity(requester, obj.metadata.labels ?? {}, obj.metadata.annotations ?? {}, policy.keys);
  if ('verdict' in identity) return identity.verdict;

  const findings = stampIntegrity(obj, kind, namespace, identity.environment, requester.runner, policy, ctx.attestationKey);
  findings.push(...objectRules(obj, kind, ctx));
  // Volumes and data sources are immutable once created: the claims they name are checked here only.
  const claims = kind.kind === 'Pod' && isRec(obj.spec) ? podClaims(obj.spec) : kind.kind === 'PersistentVolumeClaim' ? pvcClaims(obj) : [];
  findings.push(...claimEnvironment(claims, namespace, identity.environment, ctx));
  return enforce(findings, policy);
}

function validateChange(req: AdmissionRequest, kind: SandboxKind, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  const { policy } = ctx;
  const oldObj = req.oldObject!;
  const findings: Finding[] = [];
  if (isManaged(oldObj.metadata.labels, policy.keys)) {
    const objectEnv = own(oldObj.metadata.labels ?? {}, policy.keys.environment) ?? '(none)';
    findings.push(...guardedWrite(requester, objectEnv, policy));
    if (req.operation === 'UPDATE') {
      const stamps = readStamps(oldObj, policy.keys, kind.kind, namespace);
      if (stamps === undefined || !verifyStamps(ctx.attestationKey, stamps, own(oldObj.metadata.annotations ?? {}, policy.keys.attestation)))
        findings.push({
          rule: RULES.attestationInvalid.id,
          path: annotationPath(policy.keys.attestation),
          message: 'the stored attestation does not verify over the stamps; the object was tampered with or signed by another key',
        });
    }
  }
  if (req.operation === 'UPDATE') {
    const newObj = req.object!;
    findings.push(...frozenStamps(oldObj, newObj, policy.keys, requester.username));
    if (isManaged(newObj.metadata.labels, policy.keys)) findings.push(...introduced(objectRules(oldObj, kind, ctx), objectRules(newObj, kind, ctx)));
  }
  return enforce(findings, policy);
}

/** Per-kind checks of an object's content: pod templates and workspace mounts, PVC ownership. */
function objectRules(obj: KubeObject, kind: SandboxKind, ctx: DecisionContext): Finding[] {
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
