// The object door (doors/door.ts): a stamped kind's object itself, or a subresource whose review
// carries it (status, ephemeralcontainers, resize). Stamped at CREATE (stamp-create.ts); judged
// at CREATE on its stamps, its content (object-rules.ts), what it names and what its selector
// selects, and on every change guarded and frozen. A pod a workload controller creates is
// stamped and judged as its controlling owner's environment's (controller-write.ts).
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import { allowed, denied, formatFinding, type Finding, type Verdict } from '../../admission/verdict.js';
import { environmentId, type Requester } from '../requester/identity.js';
import { ownershipOfObject } from '../ownership.js';
import type { DecisionContext, Policy } from '../policy.js';
import { isTrusted } from '../requester/principals.js';
import { enforce } from '../rules/enforcement.js';
import { RULES } from '../rules/catalog.js';
import { stampedWriteFindings } from '../rules/stamped-writes.js';
import { ownerAcrossNamespaces, stampIntegrity } from '../rules/stamp-integrity.js';
import type { PodSpecSubject } from '../pod/sandbox-pod-rules.js';
import type { Facts } from '../rules/rule.js';
import { accountKeys, noLookup, objectReads, type ReadInput } from '../reads.js';
import { claimEnvironment, podClaims, pvcClaims, type ClaimReference } from '../pod/claim-environment.js';
import { ephemeralStampIntegrity, ephemeralTemplates, foreignTemplateStamps, templateTerminalMark } from '../pod/claim-templates.js';
import { borrowedServiceAccount, serviceAccountOf } from '../pod/service-account.js';
import { entryOf, isRec, type Rec } from '../unstructured.js';
import { addedReferences, referenceFindings } from '../pod/named-references.js';
import { boundByScheduler, type NamedReference, type Reach } from '../pod/reference-owner.js';
import { unmarkedWorkspace, workspaceClaims, workspaceMark } from '../pod/workspace-claims.js';
import { selectorScope } from '../selector-scope.js';
import { affinityScope } from '../rules/affinity-scope.js';
import { runnerMarkFindings } from '../pod/runner-mark.js';
import { enforceCreate } from '../dry-run.js';
import { SERVICE_ACCOUNT_NAME, serviceAccountGuard, tokenAccount } from '../rules/service-account-guard.js';
import { adoptionFindings, actingFor, controllerMadeRow, controllerOf, environmentOfControllerMade } from '../controller-made.js';
import { isOperatorMade, workloadKindNamed, type SandboxKind } from '../kinds.js';
import { annotationPath, isManaged } from '../stamps/identity-stamps.js';
import { createIdentity, missingNamespace, type CreateGate } from '../create-gate.js';
import { createGateOf, podNamesOf, type ReviewFacts } from '../review-facts.js';
import { terminalMark } from '../rules/terminal-mark.js';
import { runLeaseFindings } from '../rules/run-lease.js';
import { liveReadsBound, referenceScope } from '../rules/reference-scope.js';
import { liveReaderWriteFindings } from '../rules/live-readers.js';
import { claimBindingFindings, claimBindingKeys, isVolumeBinderBinding } from '../rules/claim-binding.js';
import { runnerOwnerFindings, runnerOwnerKeys } from '../rules/runner-owner.js';
import { stampedAccountGuard } from '../rules/service-account-stamps.js';
import { objectRules, podWorkspace } from '../object-rules.js';
import { stampAtCreate, stampCreate } from '../stamp-create.js';
import { judgeControllerWrite, stampControllerMade } from './controller-write.js';
import { statefulSetTemplateFindings } from '../rules/statefulset-template.js';
import type { DoorFacts, DoorReview } from './door-review.js';
import type { Door } from './door.js';

type ObjectDoor = Extract<Door, { kind: 'object' }>;

/**
 * Of the sandbox kinds, what a listed controller makes is stamped as its owner's: a workload
 * controller's pods (its claims are stamped in the templates), and an operator's Secrets (a
 * Certificate's key pair, an ExternalSecret's target), which it would otherwise write
 * unstamped for every environment's pods to read.
 */
const controllerMadeStamps = (door: ObjectDoor): SandboxKind | undefined => (door.sandboxKind.kind === 'Pod' || isOperatorMade(door.sandboxKind.kind) ? door.sandboxKind : undefined);

export const OBJECT_DOOR: DoorReview<ObjectDoor> = {
  needs: (read) => [
    ...objectReads(read, () => ({ claims: claimReferences(read), references: referencesNamed(read), accounts: credentialAccountKeys(read), owners: runnerOwnersToRead(read), atOnce: kubeletActsAtOnce(read) }), {
      judged: true,
      stampsAsOwners: controllerMadeStamps(read.door) !== undefined,
      sourcesOfMade: read.door.sandboxKind.kind === 'PersistentVolumeClaim',
    }),
    // A claim's binding to its volume, whoever binds it (not a workload controller's write).
    ...(read.judges && read.facts?.controller !== true ? claimBindingKeys(read.req, read.namespace, read.policy) : []),
  ],
  stamp: (facts, ctx) => stampAtCreate(facts, ctx, (namespace) => stampNewObject(facts, namespace, ctx)),
  judge(facts, namespace, ctx) {
    const { request: req, door, requester } = facts;
    const kind = door.sandboxKind;
    if (req.operation === 'CREATE')
      return validateCreate(req.object!, kind, namespace, requester, ctx, req.dryRun, [...selectorScope(req, namespace, requester, ctx, facts.identity), ...affinityScope(req, namespace, requester, ctx, facts.identity), ...referenceScope(req, namespace, requester, ctx), ...runnerOwnerFindings(req, namespace, requester, ctx)], undefined, false, createGateOf(facts, namespace, req.object!, ctx.policy), facts);
    return validateChange(req, kind, namespace, requester, ctx);
  },
  controllerWrite: {
    stamp: (facts, ctx) => stampControllerMade(facts, controllerMadeStamps(facts.door), ctx),
    judge: (facts, namespace, ctx) =>
      judgeControllerWrite(facts, namespace, ctx, facts.door.sandboxKind.kind, (obj) =>
        controllerMadeStamps(facts.door) !== undefined ? judgeControllerMade(facts, obj, namespace, ctx) : facts.door.sandboxKind.kind === 'PersistentVolumeClaim' ? judgeControllerMadeClaim(facts, obj, namespace, ctx) : allowed(),
      ),
  },
  judgesCreateWhole: true,
  carries: (door) => door.sandboxKind.kind,
};

/** The stamps of a new object of the door's kind; a review that names no namespace is malformed. */
function stampNewObject(facts: DoorFacts<ObjectDoor>, namespace: string | undefined, ctx: DecisionContext): Verdict {
  const { request: req, door } = facts;
  if (namespace === undefined) return missingNamespace(door.sandboxKind);
  return stampCreate(req.object!, door.sandboxKind, namespace, req, ctx, facts.requester, createGateOf(facts, namespace, req.object!, ctx.policy));
}

/** A pod a workload controller creates, a Secret an operator does: judged by the object's rules as for its owner's own (a pod's, as its controlling owner's pods). */
function judgeControllerMade(facts: DoorFacts<ObjectDoor>, obj: KubeObject, namespace: string, ctx: DecisionContext): Verdict {
  const { request: req, door, requester } = facts;
  const ref = controllerOf(obj);
  const mismatch = facts.kindMismatch;
  if (mismatch) return denied([mismatch]);
  const made = environmentOfControllerMade(ref, namespace, `the ${door.sandboxKind.kind} its controller creates`, ctx);
  if ('finding' in made) return enforce([made.finding], ctx.policy);
  // The pod rules as for the owner's own pods: a Job's pods' restartPolicy is the Job's.
  const ownerKind = ref === undefined ? undefined : workloadKindNamed(ref.kind);
  const source = { kind: 'Pod', controller: false, ownsRestartPolicy: ownerKind?.ownsRestartPolicy ?? false };
  const acting = actingFor(requester, made.environment);
  // Its claim templates' claims are its environment's alone, not shared inputs (one squatted under the name is mounted in their place).
  const squatted = ref !== undefined && made.environment !== undefined ? statefulSetTemplateFindings(obj, ref, made.environment, namespace, ctx) : [];
  return validateCreate(obj, controllerMadeRow(door.sandboxKind), namespace, acting, ctx, req.dryRun, [...selectorScope(req, namespace, acting, ctx), ...referenceScope(req, namespace, acting, ctx), ...squatted], source, true, undefined, facts);
}

/**
 * A claim a workload controller makes from a claim template (the statefulset controller's, per
 * replica, whenever it scales up): filled from its data source when its volume is provisioned,
 * so that source must be one the claim's environment may use now, not only when the template
 * was written: a source deleted since and made again under its name by another environment
 * would be copied. Its environment is what its own stamps say (copied from the template Deed
 * stamped); unstamped, it is no environment's. A claim that cannot be made stops its workload
 * at that replica, as a squatted one does (rules/statefulset-template.ts).
 */
function judgeControllerMadeClaim(facts: DoorFacts<ObjectDoor>, obj: KubeObject, namespace: string, ctx: DecisionContext): Verdict {
  const sources = pvcClaims(obj);
  if (sources.length === 0) return allowed();
  const owner = ownershipOfObject(obj, 'PersistentVolumeClaim', namespace, ctx.policy, ctx.keyRing);
  if (owner.kind === 'unverifiable')
    return enforce(
      [{ rule: RULES.claimUnknown.id, path: 'metadata', message: `this claim carries Deed's stamps but they do not verify (${owner.reason}), so whose data it may be filled from cannot be told; its workload's claim template was stamped with them: keep the key that signed it in the ring until the workload is replaced (deed keys usage)` }],
      ctx.policy,
    );
  const environment = owner.kind === 'unowned' ? undefined : owner.environment;
  const findings = claimEnvironment(sources, namespace, { requester: actingFor(facts.requester, environment), environment }, ctx);
  // The controller retries; only its workload's writer can change what it makes.
  return enforce(findings.map((f) => ({ ...f, message: `${f.message}. ${facts.requester.username} makes this claim from its workload's claim template, which cannot change: create the workload again with a source of its own environment` })), ctx.policy);
}

function validateCreate(
  obj: KubeObject,
  kind: SandboxKind,
  namespace: string,
  requester: Requester,
  ctx: DecisionContext,
  dryRun: boolean,
  /** What the object's pod selector may select (selector-scope.ts), what its references name (rules/reference-scope.ts), a StatefulSet pod's squatted claims. */
  selectors: Finding[],
  source: PodSpecSubject['source'] = { kind: 'Pod', controller: false, ownsRestartPolicy: false },
  controllerMade = false,
  /** The requester's create gate on `obj` (review-facts.ts createGateOf), when the review has it. */
  given?: CreateGate,
  /** The review's facts, whose object `obj` is: what it names is worked out once in the review (review-facts.ts). */
  facts?: ReviewFacts,
): Verdict {
  const { policy } = ctx;
  const identity = given ?? createIdentity(requester, namespace, obj.metadata.labels ?? {}, obj.metadata.annotations ?? {}, policy);
  const spec = kind.kind === 'Pod' && isRec(obj.spec) ? obj.spec : undefined;
  // Volumes and data sources are immutable once created: the claims they name are checked here only.
  const names = spec !== undefined ? podNamesOf(facts, spec) : undefined;
  const claims = names !== undefined ? names.claims : kind.kind === 'PersistentVolumeClaim' ? pvcClaims(obj) : [];
  // A pod the scheduler binds may name what does not exist yet: it is judged again at its binding (pod/reference-owner.ts).
  const boundLater = spec !== undefined && boundByScheduler(spec);
  const references = (given: Reach) => {
    const reach = { ...given, boundLater };
    return [...claimEnvironment(claims, namespace, reach, ctx), ...(names !== undefined ? referenceFindings(names.references, namespace, reach, ctx) : [])];
  };
  const wsClaims = spec !== undefined ? workspaceClaims(claims, namespace, ctx, false) : new Set<string>();
  if ('verdict' in identity) {
    // A gate rule set to warn or audit lets the object through as one of no environment's.
    const gate = identity.verdict.findings;
    const gated = enforce(gate, policy);
    if (!gated.allowed) return gated;
    // Deed stamps the ephemeral claims of an environment's pods only; no one else's.
    // The runner mark is Deed's, from everyone: it says which environment's runner a pod is.
    const foreign = [...gate, ...(kind.kind === 'Pod' && isRec(obj.spec) ? [...foreignEphemeralStamps(obj.spec, policy), ...runnerMarkFindings(obj, namespace, policy)] : [])];
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
  // The PV controller acts for every claim it binds: its binding is judged on what the claim is filled from alone.
  if (isVolumeBinderBinding(req, requester)) return enforce(claimBindingFindings(req, namespace, requester, ctx), policy);
  const oldObj = req.oldObject!;
  const newObj = req.operation === 'UPDATE' ? req.object! : undefined;
  const findings: Finding[] = [];
  // Status writes are guarded too: a terminal phase or a false condition written by another
  // environment cannot be taken back. The kubelet and the scheduler are system principals;
  // a status writer outside kube-system (a CSI resizer) is listed in systemPrincipals.
  const owner = ownershipOfObject(oldObj, kind.kind, namespace, policy, ctx.keyRing);
  // The rules of a write to any stamped object, as on the workload and default doors.
  const environment = 'environment' in owner ? owner.environment : undefined;
  findings.push(...stampedWriteFindings({ before: oldObj, after: newObj, row: kind, resource: req.resource, owner, requester }, { policy, namespace, environment }));
  // An unstamped pod input rewritten in place by a principal of no environment, against the live pods that read it.
  findings.push(...liveReaderWriteFindings(req, namespace, requester, owner, ctx));
  if (newObj !== undefined) {
    findings.push(...adoptionFindings(oldObj, newObj, kind.kind, namespace, requester, ctx));
    // A token Secret renamed to another account would be filled with that account's token.
    if (kind.kind === 'Secret' && !isTrusted(requester, policy) && tokenAccount(newObj) !== tokenAccount(oldObj))
      findings.push(...borrowedCredential(newObj, kind, namespace, requester, ctx));
    // Claims a pod mounts are read only for the door that can add containers: elsewhere an
    // unread claim counts as a workspace, the same before and after (fail closed).
    const spec = kind.kind === 'Pod' && isRec(newObj.spec) ? newObj.spec : undefined;
    // The read plan (lookup.ts) names them for that door only: elsewhere none is read here.
    const claimCtx = req.subResource === 'ephemeralcontainers' ? ctx : { ...ctx, lookup: noLookup('claims a pod mounts are read only for pods/ephemeralcontainers') };
    // A write that leaves what the pod rules read as it was (a label's, an annotation's) can
    // introduce none of their findings: they are not run on both sides of it.
    if (!(spec !== undefined && podRuleInputsKept(oldObj, newObj, policy))) {
      const wsClaims = spec !== undefined ? workspaceClaims(podClaims(spec, 'spec'), namespace, claimCtx, true) : new Set<string>();
      if (isManaged(newObj.metadata.labels, policy.keys)) {
        const facts: Facts = { policy, namespace, environment };
        findings.push(...introduced(objectRules(oldObj, kind, ctx, facts, wsClaims), objectRules(newObj, kind, ctx, facts, wsClaims)));
      } else if (spec !== undefined && wsClaims.size > 0 && isRec(oldObj.spec)) findings.push(...introduced(podWorkspace(oldObj, oldObj.spec, ctx, wsClaims), podWorkspace(newObj, spec, ctx, wsClaims)));
    }
    if (spec !== undefined && req.subResource === 'ephemeralcontainers') {
      findings.push(...referenceFindings(addedReferences(oldObj.spec, spec), namespace, { requester, environment: environmentId(requester), boundLater: boundByScheduler(spec) }, ctx));
      // And the whole pod: ephemeral containers are only ever added, each write a bounded number of names.
      findings.push(...liveReadsBound(req));
    }
    findings.push(...selectorScope(req, namespace, requester, ctx), ...referenceScope(req, namespace, requester, ctx), ...runnerOwnerFindings(req, namespace, requester, ctx));
    findings.push(...claimBindingFindings(req, namespace, requester, ctx));
  }
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

/** Deed's stamps in a pod's ephemeral claim templates, where Deed did not write them. */
function foreignEphemeralStamps(spec: Rec, policy: Policy): Finding[] {
  return ephemeralTemplates(spec, 'spec').flatMap((t) => [
    ...foreignTemplateStamps(t.metadata, t.at, policy.keys, 'Deed writes it only into the ephemeral volumes of a pod whose requester acts for an environment'),
    ...templateTerminalMark(t.metadata, t.at, policy.keys),
  ]);
}

/**
 * An UPDATE is judged on what it introduces: a finding the stored object already had
 * (admitted under an older policy) does not block, say, the removal of a finalizer.
 */
/** Whether a pod's write keeps all the pod rules read (object-rules.ts, podSpecSubject): its spec, its name and its workspace grants. */
function podRuleInputsKept(before: KubeObject, after: KubeObject, policy: Policy): boolean {
  const grants = policy.keys.workspaceGrants;
  if (before.metadata.name !== after.metadata.name || entryOf(before.metadata.annotations ?? {}, grants) !== entryOf(after.metadata.annotations ?? {}, grants)) return false;
  try {
    return isDeepStrictEqual(before.spec, after.spec);
  } catch {
    return false; // nested past the comparison's stack (a hostile body): judged as before, rule by rule
  }
}

function introduced(before: Finding[], after: Finding[]): Finding[] {
  const seen = new Set(before.map(formatFinding));
  return after.filter((f) => !seen.has(formatFinding(f)));
}

/** The claims a judged request through the door names (and their snapshots). */
function claimReferences({ req, door, facts }: ReadInput<ObjectDoor>): ClaimReference[] {
  const obj = req.object!;
  // A pod's volumes and a claim's data source are fixed at CREATE: only then are the claims they name judged.
  if (req.operation === 'CREATE' && req.subResource === undefined) {
    const kind = door.sandboxKind.kind;
    return kind === 'Pod' && isRec(obj.spec) ? podNamesOf(facts, obj.spec).claims : kind === 'PersistentVolumeClaim' ? pvcClaims(obj) : [];
  }
  // An ephemeral container may mount a volume on a claim that is a workspace.
  if (isEphemeralContainerWrite(req, door) && isRec(obj.spec)) return podClaims(obj.spec, 'spec');
  return [];
}

/** A pod created on its node (no binding follows to judge what it reads again), or an ephemeral container added to a pod: the kubelet acts at once. */
function kubeletActsAtOnce({ req, door }: ReadInput<ObjectDoor>): boolean {
  const obj = req.object!;
  if (door.sandboxKind.kind !== 'Pod' || !isRec(obj.spec)) return false;
  return (req.operation === 'CREATE' && req.subResource === undefined && !boundByScheduler(obj.spec)) || isEphemeralContainerWrite(req, door);
}

function isEphemeralContainerWrite(req: AdmissionRequest, door: ObjectDoor): boolean {
  return door.sandboxKind.kind === 'Pod' && req.operation === 'UPDATE' && req.subResource === 'ephemeralcontainers';
}

/** The Secrets and ConfigMaps a judged request through the door names: a new pod's, those an ephemeral container adds. */
function referencesNamed({ req, door, facts }: ReadInput<ObjectDoor>): NamedReference[] {
  const obj = req.object!;
  if (door.sandboxKind.kind !== 'Pod' || !isRec(obj.spec)) return [];
  if (req.operation === 'CREATE' && req.subResource === undefined) return podNamesOf(facts, obj.spec).references;
  if (isEphemeralContainerWrite(req, door)) return addedReferences(req.oldObject?.spec, obj.spec);
  return [];
}

/** The owners a write of a runner pod gives it (rules/runner-owner.ts); who asks is known once the review's facts are (with the policy). */
function runnerOwnersToRead({ req, namespace, policy, facts }: ReadInput<ObjectDoor>): ReturnType<typeof runnerOwnerKeys> {
  return policy === undefined ? [] : runnerOwnerKeys(req, namespace, facts?.requester, policy);
}

/** The account a new pod runs as, and the one a token Secret names: their stamps say whose credential it is (rules/service-account-stamps.ts). */
function credentialAccountKeys({ req, door, namespace }: ReadInput<ObjectDoor>): ReturnType<typeof accountKeys> {
  const obj = req.object;
  if (req.subResource !== undefined || !obj) return [];
  if (door.sandboxKind.kind === 'Pod') return req.operation === 'CREATE' && isRec(obj.spec) ? accountKeys(serviceAccountOf(obj.spec), namespace) : [];
  if (door.sandboxKind.kind === 'Secret') return accountKeys(tokenAccount(obj), namespace);
  return [];
}
