// The validating webhook (docs/concepts.md, "The validating webhook"). It sees the final object:
// checks stamps at CREATE, freezes them on UPDATE, guards every door that can change or
// remove an environment's object (main resource, subresources, evictions, bindings), and
// checks sandbox pod templates, workspace mounts, the environment of the claims, Secrets
// and ConfigMaps a pod names, and what a pod selector selects (selector-scope.ts). The controller doors too: workload
// templates (workload/review.ts), token Secrets and TokenRequests, snapshots. Object in,
// verdict out; no I/O: what it knows of other objects comes from ctx.lookup.
import { entryOf } from './unstructured.js';
import type { AdmissionRequest, KubeObject } from '../admission/types.js';
import { allowed, denied, formatFinding, type Finding, type Verdict } from '../admission/verdict.js';

import { environmentId, type Requester } from './requester/identity.js';
import { forReview, ownershipOfObject } from './ownership.js';
import type { DecisionContext, Policy } from './policy.js';
import { isTrusted } from './requester/principals.js';
import { RULES } from './rules/catalog.js';
import type { Door } from './doors/door.js';
import { enforce } from './rules/enforcement.js';
import { frozenStamps, frozenBindingAnnotations } from './rules/frozen-stamps.js';
import { guardedWrite } from './rules/guarded-writes.js';
import { ownerAcrossNamespaces, stampIntegrity } from './rules/stamp-integrity.js';
import { sandboxPodFindings, workspaceRule, type PodSpecSubject } from './pod/sandbox-pod-rules.js';
import type { Facts } from './rules/rule.js';
import { noLookup } from './lookup.js';
import { claimEnvironment, podClaims, pvcClaims, snapshotClaims } from './pod/claim-environment.js';
import { ephemeralStampIntegrity, ephemeralTemplates, foreignTemplateStamps } from './pod/claim-templates.js';
import { borrowedServiceAccount } from './pod/service-account.js';
import { isRec, type Rec } from './unstructured.js';
import { addedReferences, referenceFindings } from './pod/named-references.js';
import type { Reach } from './pod/reference-owner.js';
import { unmarkedWorkspace, workspaceClaims, workspaceMark } from './pod/workspace-claims.js';
import { selectorScope } from './selector-scope.js';
import { enforceCreate } from './dry-run.js';
import { SERVICE_ACCOUNT_NAME, SERVICE_ACCOUNT_TOKEN_TYPE, serviceAccountGuard, tokenAccount } from './rules/service-account-guard.js';
import { validateWorkload } from './workload/review.js';
import { scaleFindings, workloadStampFindings, workloadStampRow } from './workload/stamps.js';
import { actingFor, adoptionFindings, controllerMadeRow, controllerOf, environmentOfController } from './controller-made.js';
import { workloadKindNamed, type SandboxKind } from './kinds.js';
import { stampedObjectFindings } from './stamped-object.js';
import { annotationPath, isManaged } from './stamps/identity-stamps.js';
import { ambiguousIdentity, createIdentity, type CreatorIdentity } from './create-gate.js';
import { podNamesOf, reviewFacts, type ReviewFacts } from './review-facts.js';
import { outOfScope } from './rules/out-of-scope.js';
import { namedPodGuard } from './rules/named-pod.js';
import { serviceProxyGuard } from './rules/service-proxy.js';
import { terminalMark } from './rules/terminal-mark.js';
import { runLeaseFindings } from './rules/run-lease.js';
import { referenceScope } from './rules/reference-scope.js';
import { stampedAccountGuard } from './rules/service-account-stamps.js';
import { serviceAccountOf } from './pod/service-account.js';
import { customScaleGuard } from './rules/custom-scale.js';
import { copiedMetadataStamps } from './rules/copied-metadata.js';
import { sharedInputGuard } from './rules/shared-input.js';
import { namespaceWideWrite } from './rules/namespace-wide.js';
import { serviceExternalIps } from './rules/external-ips.js';


/** `facts`: the review's facts, when the caller has them (review-facts.ts). */
export function validate(req: AdmissionRequest, ctx: DecisionContext, facts?: ReviewFacts): Verdict {
  const outside = outOfScope(req, ctx.scope);
  if (outside) return outside;
  return judgeReview(facts ?? reviewFacts(req, ctx.policy), forReview(ctx));
}

/** The validating webhook's verdict on a review inside the review scope. */
export function judgeReview(facts: ReviewFacts, ctx: DecisionContext): Verdict {
  const { request: req, door, requester } = facts;
  if (door.kind === 'unreviewed') return allowed();
  const namespace = req.namespace;
  if (namespace === undefined) return denied([{ rule: RULES.requestMalformed.id, message: `a ${req.resource.resource} review must name a namespace` }]);
  if (facts.controller) return validateControllerWrite(req, door, namespace, requester, ctx, facts.kindMismatch, facts);
  if (door.kind === 'pod-by-name') return validatePodByName(req, door, namespace, requester, ctx);
  if (door.kind === 'service-proxy') return enforce(serviceProxyGuard(requester, namespace, door.service, ctx.policy), ctx.policy);
  if (door.kind === 'token-request') return validateTokenRequest(door.serviceAccount, namespace, requester, ctx);
  if (door.kind === 'snapshot') return validateSnapshot(req, namespace, requester, ctx);
  if (door.kind === 'workload') {
    const mismatch = facts.kindMismatch;
    if (mismatch) return denied([mismatch]);
    const own = [
      ...workloadStampFindings(req, door.workload, namespace, requester, ctx, facts.identity),
      ...workloadAdoption(req, door.workload.kind, namespace, requester, ctx),
      ...selectorScope(req, namespace, requester, ctx, facts.identity),
      ...referenceScope(req, namespace, requester, ctx),
    ];
    return validateWorkload(req, door.workload, namespace, requester, ctx, own, facts.identity);
  }
  if (door.kind === 'workload-scale') return enforce(scaleFindings(door.workload, door.resource, door.name, namespace, requester, ctx), ctx.policy);
  if (door.kind === 'default') {
    const mismatch = facts.kindMismatch;
    // What acts on the whole namespace, or on other namespaces' traffic, is the platform's.
    const platformOwned = [...namespaceWideWrite(req, namespace, requester, ctx.policy), ...serviceExternalIps(req, requester, ctx.policy)];
    return mismatch
      ? denied([mismatch])
      : enforceCreate(
          [
            ...stampedObjectFindings(req, door.row, namespace, requester, ctx, true, facts.identity),
            ...selectorScope(req, namespace, requester, ctx, facts.identity),
            ...referenceScope(req, namespace, requester, ctx),
            ...copiedMetadataStamps(req, ctx.policy),
            ...platformOwned,
          ],
          ctx.policy,
          req.dryRun,
        );
  }
  if (door.kind === 'default-scale') return enforce(customScaleGuard(door, namespace, requester, ctx), ctx.policy);

  const kind = door.sandboxKind;
  const mismatch = facts.kindMismatch;
  if (mismatch) return denied([mismatch]);
  if (req.operation === 'CREATE')
    return validateCreate(req.object!, kind, namespace, requester, ctx, req.dryRun, [...selectorScope(req, namespace, requester, ctx, facts.identity), ...referenceScope(req, namespace, requester, ctx)], undefined, false, facts.identity, facts);
  return validateChange(req, kind, namespace, requester, ctx);
}

/**
 * A workload controller's write (controller-made.ts): what it creates is judged as an object
 * of its controlling owner's environment, by the same rules as if that environment had
 * created it, against what exists now; a change of an object's controller stays within one
 * environment. Its other writes (status, scale bookkeeping) are a system controller's.
 */
function validateControllerWrite(req: AdmissionRequest, door: Door, namespace: string, requester: Requester, ctx: DecisionContext, mismatch: Finding | undefined, facts: ReviewFacts): Verdict {
  const obj = req.object;
  if (req.subResource !== undefined || !obj) return allowed();
  if (req.operation === 'UPDATE') {
    const kind = door.kind === 'workload' ? door.workload.kind : door.kind === 'object' ? door.sandboxKind.kind : undefined;
    return kind === undefined || !req.oldObject ? allowed() : enforce(adoptionFindings(req.oldObject, obj, kind, namespace, requester, ctx), ctx.policy);
  }
  if (req.operation !== 'CREATE') return allowed();
  const ref = controllerOf(obj);
  if (door.kind === 'object' && door.sandboxKind.kind === 'Pod') {
    if (mismatch) return denied([mismatch]);
    const made = environmentOfController(ref, namespace, 'the Pod its controller creates', ctx);
    if ('finding' in made) return enforce([made.finding], ctx.policy);
    // The pod rules as for the owner's own pods: a Job's pods' restartPolicy is the Job's.
    const ownerKind = ref === undefined ? undefined : workloadKindNamed(ref.kind);
    const source = { kind: 'Pod', controller: false, ownsRestartPolicy: ownerKind?.ownsRestartPolicy ?? false };
    const acting = actingFor(requester, made.environment);
    return validateCreate(obj, controllerMadeRow(door.sandboxKind), namespace, acting, ctx, req.dryRun, [...selectorScope(req, namespace, acting, ctx), ...referenceScope(req, namespace, acting, ctx)], source, true, undefined, facts);
  }
  if (door.kind === 'workload') {
    const row = workloadStampRow(door.workload);
    if (mismatch) return denied([mismatch]);
    if (row === undefined) return allowed();
    const made = environmentOfController(ref, namespace, `the ${door.workload.kind} its controller creates`, ctx);
    if ('finding' in made) return enforce([made.finding], ctx.policy);
    const acting = actingFor(requester, made.environment);
    return validateWorkload(req, door.workload, namespace, acting, ctx, [...stampedObjectFindings(req, controllerMadeRow(row), namespace, acting, ctx, false), ...selectorScope(req, namespace, acting, ctx)]);
  }
  return allowed();
}

/** A client's change of a workload's controlling owner (a Deployment adopting a ReplicaSet): within one environment. */
function workloadAdoption(req: AdmissionRequest, kind: string, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  return req.operation === 'UPDATE' && req.subResource === undefined && req.object && req.oldObject ? adoptionFindings(req.oldObject, req.object, kind, namespace, requester, ctx) : [];
}

function validateCreate(
  obj: KubeObject,
  kind: SandboxKind,
  namespace: string,
  requester: Requester,
  ctx: DecisionContext,
  dryRun: boolean,
  /** What the object's pod selector may select (selector-scope.ts) and what its references name (rules/reference-scope.ts). */
  selectors: Finding[],
  source: PodSpecSubject['source'] = { kind: 'Pod', controller: false, ownsRestartPolicy: false },
  controllerMade = false,
  /** The requester's creator identity (create-gate.ts), when the review has it. */
  creator?: CreatorIdentity,
  /** The review's facts, whose object `obj` is: what it names is worked out once in the review (review-facts.ts). */
  facts?: ReviewFacts,
): Verdict {
  const { policy } = ctx;
  const identity = createIdentity(requester, namespace, obj.metadata.labels ?? {}, obj.metadata.annotations ?? {}, policy, creator);
  const spec = kind.kind === 'Pod' && isRec(obj.spec) ? obj.spec : undefined;
  // Volumes and data sources are immutable once created: the claims they name are checked here only.
  const names = spec !== undefined ? podNamesOf(facts, spec) : undefined;
  const claims = names !== undefined ? names.claims : kind.kind === 'PersistentVolumeClaim' ? pvcClaims(obj) : [];
  const references = (reach: Reach) => [...claimEnvironment(claims, namespace, reach, ctx), ...(names !== undefined ? referenceFindings(names.references, namespace, reach, ctx) : [])];
  const wsClaims = spec !== undefined ? workspaceClaims(claims, namespace, ctx, false) : new Set<string>();
  if ('verdict' in identity) {
    // A gate rule set to warn or audit lets the object through as one of no environment's.
    const gate = identity.verdict.findings;
    const gated = enforce(gate, policy);
    if (!gated.allowed) return gated;
    // Deed stamps the ephemeral claims of an environment's pods only; no one else's.
    const foreign = [...gate, ...(kind.kind === 'Pod' && isRec(obj.spec) ? foreignEphemeralStamps(obj.spec, policy) : [])];
    if (isTrusted(requester, policy)) return enforce(foreign, policy);
    // Acting for no environment, the requester gets no stamps; but what its object reaches
    // (another environment's claim or Secret, a runner's service account or its token, an
    // environment's workspace, another environment's pods by selector) is still guarded.
    const findings = [...foreign, ...borrowedCredential(obj, kind, namespace, requester, ctx), ...references({ requester, environment: undefined })];
    if (spec !== undefined && wsClaims.size > 0) findings.push(...podWorkspace(obj, spec, ctx, wsClaims));
    findings.push(...selectors);
    return enforceCreate(findings, policy, dryRun);
  }

  const findings = stampIntegrity(obj, kind, namespace, identity.environment, requester.runner, policy, ctx.keyRing, ctx.now());
  findings.push(...terminalMark(undefined, obj, undefined, requester, policy), ...runLeaseFindings(obj, namespace, identity.environment, ctx));
  const runner = requester.runner;
  findings.push(...ownerAcrossNamespaces(obj, runner, namespace));
  findings.push(...objectRules(obj, kind, ctx, { policy, namespace, environment: identity.environment }, wsClaims, source));
  if (spec !== undefined) {
    findings.push(...ephemeralStampIntegrity(spec, 'spec', { environment: identity.environment, runner, namespace }, policy, ctx.keyRing, ctx.now(), controllerMade));
    findings.push(...unmarkedWorkspace(spec, 'spec', namespace, ctx));
  }
  if (kind.kind === 'PersistentVolumeClaim') findings.push(...workspaceMark(obj, ctx));
  findings.push(...selectors);
  if (!isTrusted(requester, policy)) findings.push(...borrowedCredential(obj, kind, namespace, requester, ctx));
  findings.push(...references({ requester, environment: identity.environment }));
  return enforceCreate(findings, policy, dryRun);
}

function validateChange(req: AdmissionRequest, kind: SandboxKind, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  const { policy } = ctx;
  const oldObj = req.oldObject!;
  const newObj = req.operation === 'UPDATE' ? req.object! : undefined;
  const findings: Finding[] = [];
  // Status writes are guarded too: a terminal phase or a false condition written by another
  // environment cannot be taken back. The kubelet and the scheduler are system principals;
  // a status writer outside kube-system (a CSI resizer) is listed in systemPrincipals.
  const owner = ownershipOfObject(oldObj, kind.kind, namespace, policy, ctx.keyRing);
  findings.push(...guardedWrite(requester, owner, policy), ...sharedInputGuard(requester, owner, req.resource, `${kind.kind} ${namespace}/${oldObj.metadata.name ?? ''}`, policy));
  if (newObj !== undefined) {
    if (req.subResource === undefined) findings.push(...adoptionFindings(oldObj, newObj, kind.kind, namespace, requester, ctx));
    // A token Secret renamed to another account would be filled with that account's token.
    if (kind.kind === 'Secret' && !isTrusted(requester, policy) && tokenAccount(newObj) !== tokenAccount(oldObj))
      findings.push(...borrowedCredential(newObj, kind, namespace, requester, ctx));
    findings.push(...frozenStamps(oldObj, newObj, policy.keys, requester.username));
    findings.push(...terminalMark(oldObj, newObj, owner, requester, policy));
    // Claims a pod mounts are read only for the door that can add containers: elsewhere an
    // unread claim counts as a workspace, the same before and after (fail closed).
    const spec = kind.kind === 'Pod' && isRec(newObj.spec) ? newObj.spec : undefined;
    // The read plan (lookup.ts) names them for that door only: elsewhere none is read here.
    const claimCtx = req.subResource === 'ephemeralcontainers' ? ctx : { ...ctx, lookup: noLookup('claims a pod mounts are read only for pods/ephemeralcontainers') };
    const wsClaims = spec !== undefined ? workspaceClaims(podClaims(spec, 'spec'), namespace, claimCtx, true) : new Set<string>();
    if (isManaged(newObj.metadata.labels, policy.keys)) {
      const facts: Facts = { policy, namespace, environment: 'environment' in owner ? owner.environment : undefined };
      findings.push(...introduced(objectRules(oldObj, kind, ctx, facts, wsClaims), objectRules(newObj, kind, ctx, facts, wsClaims)));
    }
    else if (spec !== undefined && wsClaims.size > 0 && isRec(oldObj.spec)) findings.push(...introduced(podWorkspace(oldObj, oldObj.spec, ctx, wsClaims), podWorkspace(newObj, spec, ctx, wsClaims)));
    if (spec !== undefined && req.subResource === 'ephemeralcontainers') {
      findings.push(...referenceFindings(addedReferences(oldObj.spec, spec), namespace, { requester, environment: environmentId(requester) }, ctx));
    }
    findings.push(...selectorScope(req, namespace, requester, ctx), ...referenceScope(req, namespace, requester, ctx));
  }
  return enforce(findings, policy);
}

/**
 * An eviction, a binding or a CONNECT into a pod: the review names the pod, so whose it is
 * comes from a lookup (rules/named-pod.ts). When Deed cannot know, it refuses.
 */
function validatePodByName(req: AdmissionRequest, door: Extract<Door, { kind: 'pod-by-name' }>, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  const { policy } = ctx;
  const findings: Finding[] = door.action === 'binding' ? frozenBindingAnnotations(req.object ?? undefined, policy.keys) : [];
  if (door.pod === undefined) return denied([{ rule: RULES.requestMalformed.id, message: `the ${door.action} names no pod` }]);
  findings.push(...namedPodGuard(requester, door.action, namespace, door.pod, ctx));
  return enforce(findings, policy);
}

/**
 * A runner's service account is its environment's credential: a pod that runs as it, or a
 * Secret the token controller fills with its token, acts for the environment.
 */
function borrowedCredential(obj: KubeObject, kind: SandboxKind, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  const { policy } = ctx;
  if (kind.kind === 'Pod') {
    if (!isRec(obj.spec)) return [];
    const byPolicy = borrowedServiceAccount(obj.spec, 'spec', namespace, requester, policy);
    return byPolicy.length > 0 ? byPolicy : stampedAccountGuard(namespace, serviceAccountOf(obj.spec), requester, ctx, 'spec.serviceAccountName', 'create a pod that runs as it');
  }
  const account = kind.kind === 'Secret' ? tokenAccount(obj) : undefined;
  if (account === undefined) return [];
  const doing = 'create a Secret the token controller fills with its token';
  const byPolicy = serviceAccountGuard(namespace, account, requester, policy, annotationPath(SERVICE_ACCOUNT_NAME), doing);
  return byPolicy.length > 0 ? byPolicy : stampedAccountGuard(namespace, account, requester, ctx, annotationPath(SERVICE_ACCOUNT_NAME), doing);
}

/** A TokenRequest hands out a token of the account it names. */
function validateTokenRequest(account: string | undefined, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  if (account === undefined) return denied([{ rule: RULES.requestMalformed.id, message: 'the token request names no service account' }]);
  const byPolicy = serviceAccountGuard(namespace, account, requester, ctx.policy, undefined, 'request a token of it');
  return enforce(byPolicy.length > 0 ? byPolicy : stampedAccountGuard(namespace, account, requester, ctx, undefined, 'request a token of it'), ctx.policy);
}

/** A VolumeSnapshot copies a claim: judged as a clone of it. */
function validateSnapshot(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object || isTrusted(requester, ctx.policy)) return allowed();
  if (requester.environment.kind === 'ambiguous') return denied([ambiguousIdentity(requester, requester.environment.ids)]);
  const refs = snapshotClaims(req.object);
  if (req.operation === 'UPDATE' && req.oldObject && JSON.stringify(snapshotClaims(req.oldObject)) === JSON.stringify(refs)) return allowed();
  return enforce(claimEnvironment(refs, namespace, { requester, environment: environmentId(requester) }, ctx), ctx.policy);
}

/** Deed's stamps in a pod's ephemeral claim templates, where Deed did not write them. */
function foreignEphemeralStamps(spec: Rec, policy: Policy): Finding[] {
  return ephemeralTemplates(spec, 'spec').flatMap((t) =>
    foreignTemplateStamps(t.metadata, t.at, policy.keys, 'Deed writes it only into the ephemeral volumes of a pod whose requester acts for an environment'),
  );
}

/**
 * Per-kind checks of an object's content: a sandbox pod's spec rules (SANDBOX_POD_RULES),
 * PVC ownership, token Secrets. `deed audit` judges stored objects with them too.
 */
export function objectRules(
  obj: KubeObject,
  kind: SandboxKind,
  ctx: DecisionContext,
  facts: Facts,
  wsClaims: ReadonlySet<string> = new Set(),
  source: PodSpecSubject['source'] = { kind: 'Pod', controller: false, ownsRestartPolicy: false },
): Finding[] {
  if (kind.kind === 'PersistentVolumeClaim') {
    const podOwner = (obj.metadata.ownerReferences ?? []).find((r) => r.kind === 'Pod' && r.apiVersion === 'v1');
    return podOwner
      ? [{ rule: RULES.pvcPodOwner.id, path: 'metadata.ownerReferences', message: `an owner reference to pod ${podOwner.name} would let the garbage collector delete this claim` }]
      : [];
  }
  if (kind.kind === 'Secret') {
    if (obj.type !== SERVICE_ACCOUNT_TOKEN_TYPE) return [];
    const account = entryOf(obj.metadata.annotations ?? {}, SERVICE_ACCOUNT_NAME);
    return [
      {
        rule: RULES.secretServiceAccountToken.id,
        path: 'type',
        message: `a Secret of type ${SERVICE_ACCOUNT_TOKEN_TYPE} would receive a non-expiring token of service account ${account === undefined ? '(none named)' : JSON.stringify(account.slice(0, 80))}`,
      },
    ];
  }
  if (kind.kind !== 'Pod' || !isRec(obj.spec)) return []; // a hostile body's `spec: null` is no spec, not a crash
  return sandboxPodFindings(podSpecSubject(obj, obj.spec, ctx, wsClaims, source), facts);
}

/** A Pod's own spec as the pod rules judge it. */
function podSpecSubject(
  obj: KubeObject,
  spec: Rec,
  ctx: DecisionContext,
  wsClaims: ReadonlySet<string>,
  source: PodSpecSubject['source'] = { kind: 'Pod', controller: false, ownsRestartPolicy: false },
): PodSpecSubject {
  const { keys } = ctx.policy;
  return {
    spec,
    at: 'spec',
    source,
    podName: obj.metadata.name,
    grants: { value: entryOf(obj.metadata.annotations ?? {}, keys.workspaceGrants), path: annotationPath(keys.workspaceGrants) },
    workspaceClaims: wsClaims,
  };
}

/** The workspace rules alone, for a pod of a requester acting for no environment that mounts a workspace. */
function podWorkspace(obj: KubeObject, spec: Rec, ctx: DecisionContext, wsClaims: ReadonlySet<string>): Finding[] {
  return workspaceRule.check(podSpecSubject(obj, spec, ctx, wsClaims), { policy: ctx.policy, namespace: obj.metadata.namespace ?? '', environment: undefined });
}

/**
 * An UPDATE is judged on what it introduces: a finding the stored object already had
 * (admitted under an older policy) does not block, say, the removal of a finalizer.
 */
function introduced(before: Finding[], after: Finding[]): Finding[] {
  const seen = new Set(before.map(formatFinding));
  return after.filter((f) => !seen.has(formatFinding(f)));
}
