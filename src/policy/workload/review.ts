// The review of workloads: a pod template is judged as the pod its writer would create
// (the runner's service account, other environments' claims, and, for a requester acting
// for an environment, the sandbox template and workspace rules), by the same rules as a
// Pod, at the template's path. Claim templates are judged as the claims they make, and carry
// no owner references (rules/reference-scope.ts, claimTemplateOwners). No
// template carries stamps a client wrote: the controllers copy them unreviewed. The
// mutating side writes the claim stamps of an environment's ephemeral volumes.
import { entryOf } from '../unstructured.js';
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import { allowed, patched, type Finding, type PatchOperation, type Verdict } from '../../admission/verdict.js';

import { createIdentity, type CreatorIdentity } from '../create-gate.js';
import { resolveRequester, type Requester } from '../requester/identity.js';
import { mintNonce } from '../stamps/nonce.js';
import type { StampKeys } from '../stamps/keys.js';
import type { DecisionContext } from '../policy.js';
import { isTrusted } from '../requester/principals.js';
import { RULES } from '../rules/catalog.js';
import { enforce } from '../rules/enforcement.js';
import { noEnvironmentMark } from '../rules/no-environment-mark.js';
import { claimTemplateOwners } from '../rules/reference-scope.js';
import { runnerMarkFindings } from '../pod/runner-mark.js';
import { enforceCreate } from '../dry-run.js';
import { annotationPath, labelPath, presentOwnedKeys } from '../stamps/identity-stamps.js';
import { stampRowNamed } from '../kinds.js';
import { ownershipOfObject } from '../ownership.js';
import { claimEnvironment, claimSpecClaims, podClaims, type ClaimReference } from '../pod/claim-environment.js';
import { ephemeralStampOps, ephemeralTemplates, foreignTemplateStamps, ownedStamps, stampedFor, stampedTemplateMetadata, templateTerminalMark } from '../pod/claim-templates.js';
import { borrowedServiceAccount, serviceAccountOf } from '../pod/service-account.js';
import { stampedAccountGuard } from '../rules/service-account-stamps.js';
import { stringMap } from '../unstructured.js';
import { sandboxPodFindings, templateAutomountOff, workspaceRule, type PodSpecSubject } from '../pod/sandbox-pod-rules.js';
import { podReferences, referenceFindings } from '../pod/named-references.js';
import { boundByScheduler, type NamedReference } from '../pod/reference-owner.js';
import { unmarkedWorkspace, workspaceClaims } from '../pod/workspace-claims.js';
import { claimTemplates, podTemplates, type PodTemplate, type WorkloadKind } from './kinds.js';
import type { PodNames } from '../pod/pod-names.js';
import type { ReviewFacts } from '../review-facts.js';

/** The Secrets and ConfigMaps a workload's (changed) pod templates name: what its review looks up and judges. */
export function workloadReferences(obj: KubeObject, kind: WorkloadKind, old?: KubeObject): NamedReference[] {
  return podTemplates(obj, kind, old).flatMap((t) => podReferences(t.spec, `${t.at}.spec`));
}

/**
 * What a workload's (changed) templates name (the claims they reach, the Secrets and
 * ConfigMaps they name), worked out once per review: by the read plan on the workload as it
 * arrived, then by the judgement, on the same templates or, for the workload as Deed's patch
 * leaves it, on templates whose specs the patch did not touch (it copies what lies along its
 * paths, so an untouched spec is the same object). Without the review's facts, worked out here.
 */
export function workloadNamesOf(facts: ReviewFacts | undefined, obj: KubeObject, kind: WorkloadKind, old?: KubeObject): PodNames {
  const templates = [...podTemplates(obj, kind, old), ...claimTemplates(obj, kind, old)].map((t) => ({ at: t.at, spec: t.spec }));
  const known = facts?.workloadNames;
  if (known !== undefined && known.templates.length === templates.length && known.templates.every((t, i) => t.at === templates[i]!.at && t.spec === templates[i]!.spec)) return known.names;
  const names = { claims: workloadClaims(obj, kind, old), references: workloadReferences(obj, kind, old) };
  if (facts !== undefined) facts.workloadNames = { templates, names };
  return names;
}

/** The claims a workload's (changed) templates reach: what its review looks up and judges. */
export function workloadClaims(obj: KubeObject, kind: WorkloadKind, old?: KubeObject): ClaimReference[] {
  return [
    ...podTemplates(obj, kind, old).flatMap((t) => podClaims(t.spec, `${t.at}.spec`)),
    ...claimTemplates(obj, kind, old).flatMap((t) => claimSpecClaims(t.spec, `${t.at}.spec`, `claim template "${String(t.metadata.name ?? '')}"`)),
  ];
}

/**
 * The mutating side: the ephemeral volumes in the (changed) pod templates of a requester
 * acting for an environment get that environment's claim stamps, as a sandbox pod's do, so
 * the claims the controllers make from them are the environment's. The validating side
 * judges everything else.
 */
export function mutateWorkload(
  req: AdmissionRequest,
  kind: WorkloadKind,
  namespace: string,
  ctx: DecisionContext,
  requester: Requester = resolveRequester(req.userInfo, ctx.policy),
  creator?: CreatorIdentity,
): Verdict {
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return allowed();
  const { policy, keyRing } = ctx;
  const gate = createIdentity(requester, namespace, {}, {}, policy, creator);
  if ('verdict' in gate) return allowed();
  const { environment } = gate;
  const owner = { environment, runner: requester.runner, namespace };
  const ops: PatchOperation[] = [];
  const findings: Finding[] = [];
  for (const t of podTemplates(req.object, kind, req.operation === 'UPDATE' ? (req.oldObject ?? undefined) : undefined)) {
    const r = ephemeralStampOps(t.spec, `${t.at}.spec`, owner, (m) => stampedFor(m, environment, namespace, policy, keyRing), policy.keys, keyRing, () => mintNonce(ctx.randomBytes));
    ops.push(...r.ops);
    findings.push(...r.findings);
    // Without per-controller credentials the pods are made unreviewed: "automount off" goes into the template.
    if (t.hasSpec && templateAutomountOff(t.spec, policy.config)) ops.push({ op: 'add', path: `${t.pointer}/spec/automountServiceAccountToken`, value: false });
  }
  // A StatefulSet's claims are made by its controller from these templates (which cannot
  // change after CREATE), carrying their metadata: they are the environment's, with no
  // runner (a lab's claims outlive the runner that created the StatefulSet).
  if (req.operation === 'CREATE')
    for (const c of claimTemplates(req.object, kind)) {
      if (presentOwnedKeys(stringMap(c.metadata, 'labels'), stringMap(c.metadata, 'annotations'), policy.keys).length > 0) continue; // the validating side judges them
      const stamped = stampedTemplateMetadata(c.metadata, { environment, runner: undefined, namespace }, policy.keys, keyRing, mintNonce(ctx.randomBytes));
      ops.push({ op: 'test', path: `${c.pointer}/metadata/name`, value: c.metadata.name }, { op: 'add', path: `${c.pointer}/metadata/labels`, value: stamped.labels }, { op: 'add', path: `${c.pointer}/metadata/annotations`, value: stamped.annotations });
    }
  // Without a finding there is nothing to enforce: the templates' findings are the validating side's (once, for /admit).
  const enforced = findings.length === 0 ? allowed() : enforce(findings, policy);
  if (!enforced.allowed) return enforced;
  return ops.length > 0 ? patched(ops, enforced.warnings, enforced.auditAnnotations) : enforced;
}

/**
 * `own`: the findings of the workload's own metadata (stamps.ts), judged with its templates.
 * `creator`: the requester's creator identity (create-gate.ts), when the review has it.
 * `facts`: the review's facts, whose object `req.object` is (what its templates name is worked out once).
 */
export function validateWorkload(req: AdmissionRequest, kind: WorkloadKind, namespace: string, requester: Requester, ctx: DecisionContext, own: Finding[] = [], creator?: CreatorIdentity, facts?: ReviewFacts): Verdict {
  const { policy } = ctx;
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || req.object === undefined || req.object === null) return enforce(own, policy);
  const obj = req.object;
  const old = req.operation === 'UPDATE' ? (req.oldObject ?? undefined) : undefined;
  const pods = podTemplates(obj, kind, old);
  const claims = claimTemplates(obj, kind, old);
  if (pods.length === 0 && claims.length === 0) return enforceCreate(own, policy, req.dryRun); // no template changed: no new pod or claim comes of it
  const gate = createIdentity(requester, namespace, {}, {}, policy, creator);
  const environment = 'environment' in gate ? gate.environment : undefined;

  // Client stamps in a template are refused from everyone: no review follows the copy. But
  // one: the environment label of the workload's own environment, which its selector
  // requires (selector-scope.ts writes both).
  const findings: Finding[] = [...own];
  const workloadEnvironment = ownEnvironment(req, kind, namespace, environment, ctx);
  for (const t of pods) {
    const label = entryOf(stringMap(t.metadata, 'labels'), policy.keys.environment);
    const allowedPath = workloadEnvironment !== undefined && label === workloadEnvironment ? `${t.at}.${labelPath(policy.keys.environment)}` : undefined;
    findings.push(...foreignTemplateStamps(t.metadata, t.at, policy.keys, `the ${kind.kind}'s pods would carry it unreviewed`).filter((f) => f.path !== allowedPath), ...templateTerminalMark(t.metadata, t.at, policy.keys));
    if (workloadEnvironment !== undefined)
      findings.push(...noEnvironmentMark(stringMap(t.metadata, 'labels'), t.at, policy.keys, RULES.stampTemplate.id, `the pods of a ${kind.kind} of environment "${workloadEnvironment}" never carry it`));
    // A runner mark in a template of no environment is its pods' to carry only if they are that environment's runners.
    else if (entryOf(stringMap(t.metadata, 'labels'), policy.keys.runner) !== undefined)
      findings.push(...runnerMarkFindings({ metadata: { labels: stringMap(t.metadata, 'labels') }, spec: t.spec } as KubeObject, namespace, policy).map((f) => ({ ...f, rule: RULES.stampTemplate.id, path: `${t.at}.${f.path ?? ''}` })));
    findings.push(...ephemeralClaimStamps(t, old === undefined ? undefined : podTemplates(old, kind).find((o) => o.at === t.at), namespace, environment, ctx));
  }
  // Deed's own stamps for the workload's environment (the mutating side writes them) pass;
  // any other stamp in a claim template is refused.
  for (const c of claims) {
    findings.push(...templateTerminalMark(c.metadata, c.at, policy.keys));
    if (workloadEnvironment === undefined || !stampedFor(c.metadata, workloadEnvironment, namespace, policy, ctx.keyRing))
      findings.push(...foreignTemplateStamps(c.metadata, c.at, policy.keys, 'the claims the StatefulSet controller makes would carry it unreviewed'));
  }
  if (isTrusted(requester, policy)) return enforce(findings, policy);
  for (const c of claims) findings.push(...claimTemplateOwners(c.metadata, c.at, requester, policy));

  // The rest as for a pod this requester creates: which environment it acts for decides.
  if ('verdict' in gate) findings.push(...gate.verdict.findings);
  for (const t of pods) {
    const at = `${t.at}.spec`;
    // An account the policy maps to an environment, or one stamped for an environment (read): as at a pod's CREATE.
    const borrowed = borrowedServiceAccount(t.spec, at, namespace, requester, policy, `a ${kind.kind} pod template`);
    findings.push(...(borrowed.length > 0 ? borrowed : stampedAccountGuard(namespace, serviceAccountOf(t.spec), requester, ctx, `${at}.serviceAccountName`, `make pods that run as it from a ${kind.kind} template`)));
    const wsClaims = workspaceClaims(podClaims(t.spec, at), namespace, ctx, false);
    const subject = templateSubject(t, kind, policy.keys, wsClaims);
    // A requester acting for an environment makes sandbox pods: every pod rule holds in its templates too.
    if (environment !== undefined) findings.push(...sandboxPodFindings(subject, { policy, namespace, environment }), ...unmarkedWorkspace(t.spec, at, namespace, ctx));
    else if (wsClaims.size > 0) findings.push(...workspaceRule.check(subject, { policy, namespace, environment }));
  }
  // Pods made from templates that name no node are bound by the scheduler: what they name may not exist yet (pod/reference-owner.ts).
  const reach = { requester, environment, boundLater: pods.every((t) => boundByScheduler(t.spec)) };
  const names = workloadNamesOf(facts, obj, kind, old);
  findings.push(...claimEnvironment(names.claims, namespace, reach, ctx));
  findings.push(...referenceFindings(names.references, namespace, reach, ctx));
  return enforceCreate(findings, policy, req.dryRun);
}

/**
 * The environment a stamped workload is its own: the requester's at CREATE (Deed stamps it
 * for that environment), its verified stamps' after. Undefined for a kind Deed does not
 * stamp (a PodTemplate) and for a workload of no environment.
 */
function ownEnvironment(req: AdmissionRequest, kind: WorkloadKind, namespace: string, requesterEnvironment: string | undefined, ctx: DecisionContext): string | undefined {
  const row = stampRowNamed(kind.kind);
  if (row === undefined) return undefined;
  if (req.operation === 'CREATE') return requesterEnvironment;
  const owner = req.oldObject ? ownershipOfObject(req.oldObject, row.kind, namespace, ctx.policy, ctx.keyRing) : undefined;
  return owner?.kind === 'stamped' ? owner.environment : undefined;
}

/** A pod template's spec as the pod rules judge it; `wsClaims`: the claims it mounts that are workspaces. */
function templateSubject(t: PodTemplate, kind: WorkloadKind, keys: StampKeys, wsClaims: ReadonlySet<string>): PodSpecSubject {
  return {
    spec: t.spec,
    at: `${t.at}.spec`,
    source: { kind: kind.kind, controller: true, ownsRestartPolicy: kind.ownsRestartPolicy },
    podName: undefined,
    grants: { value: entryOf(stringMap(t.metadata, 'annotations'), keys.workspaceGrants), path: `${t.at}.${annotationPath(keys.workspaceGrants)}` },
    workspaceClaims: wsClaims,
  };
}

/**
 * The ephemeral claim templates of a pod template: Deed's stamps for the requester's
 * environment (written by the mutating side), or, from anyone else, none but those the
 * template already had (a manager restarting an environment's Deployment keeps them).
 */
function ephemeralClaimStamps(t: PodTemplate, before: PodTemplate | undefined, namespace: string, environment: string | undefined, ctx: DecisionContext): Finding[] {
  const { keys } = ctx.policy;
  const kept = new Map(before === undefined ? [] : ephemeralTemplates(before.spec, `${before.at}.spec`).map((e) => [e.volume, ownedStamps(e.metadata, keys)]));
  const findings: Finding[] = [];
  for (const e of ephemeralTemplates(t.spec, `${t.at}.spec`)) {
    findings.push(...templateTerminalMark(e.metadata, e.at, keys));
    const stamps = ownedStamps(e.metadata, keys);
    const present = Object.keys(stamps).length > 0;
    if (environment !== undefined) {
      if (!present)
        findings.push({ rule: RULES.stampMissing.id, path: `${e.at}.metadata`, message: `carries no claim stamps of environment "${environment}"; was the mutating webhook bypassed?` });
      else if (!stampedFor(e.metadata, environment, namespace, ctx.policy, ctx.keyRing))
        findings.push(...foreignTemplateStamps(e.metadata, e.at, keys, `they are not Deed's stamps of a claim of environment "${environment}" in ${namespace}`));
    } else if (present && !isDeepStrictEqual(stamps, kept.get(e.volume))) {
      findings.push(...foreignTemplateStamps(e.metadata, e.at, keys, 'the claim the ephemeral-volume controller makes would carry it unreviewed'));
    }
  }
  return findings;
}
