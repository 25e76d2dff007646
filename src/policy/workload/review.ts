// The validating side of workloads: a pod template is judged as the pod its writer would
// create (the runner's service account, other environments' claims, and, for a requester
// acting for an environment, the sandbox template and workspace rules), by the same rules
// as a Pod, at the template's path. Claim templates are judged as the claims they make.
// No template carries Deed's stamps: the controllers copy them unreviewed.
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import { allowed, type Finding, type Verdict } from '../../admission/verdict.js';
import type { Config } from '../../config/schema.js';
import { own } from '../stamps/attestation.js';
import { createIdentity } from '../create-gate.js';
import type { Requester } from '../requester/identity.js';
import type { StampKeys } from '../stamps/keys.js';
import type { DecisionContext } from '../policy.js';
import { isTrusted } from '../requester/principals.js';
import { RULES } from '../rules/catalog.js';
import { enforce } from '../rules/enforcement.js';
import { annotationPath } from '../stamps/identity-stamps.js';
import { claimEnvironment, claimSpecClaims, podClaims, type ClaimReference } from '../pod/claim-environment.js';
import { ephemeralTemplates, foreignTemplateStamps } from '../pod/claim-templates.js';
import { borrowedServiceAccount } from '../pod/service-account.js';
import { field, stringMap } from '../pod/spec.js';
import { templateCollisions } from '../pod/template-collisions.js';
import { workspaceMounts } from '../pod/workspace-mounts.js';
import { claimTemplates, podTemplates, type PodTemplate, type WorkloadKind } from './kinds.js';

/** The claims a workload's (changed) templates reach: what its review looks up and judges. */
export function workloadClaims(obj: KubeObject, kind: WorkloadKind, old?: KubeObject): ClaimReference[] {
  return [
    ...podTemplates(obj, kind, old).flatMap((t) => podClaims(t.spec, `${t.at}.spec`)),
    ...claimTemplates(obj, kind, old).flatMap((t) => claimSpecClaims(t.spec, `${t.at}.spec`, `claim template "${String(t.metadata.name ?? '')}"`)),
  ];
}

export function validateWorkload(req: AdmissionRequest, kind: WorkloadKind, namespace: string, requester: Requester, ctx: DecisionContext): Verdict {
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || req.object === undefined || req.object === null) return allowed();
  const { policy } = ctx;
  const obj = req.object;
  const old = req.operation === 'UPDATE' ? (req.oldObject ?? undefined) : undefined;
  const pods = podTemplates(obj, kind, old);
  const claims = claimTemplates(obj, kind, old);
  if (pods.length === 0 && claims.length === 0) return allowed(); // no template changed: no new pod or claim comes of it

  // Stamps in a template are refused from everyone: no review follows the copy.
  const findings: Finding[] = [];
  for (const t of pods) {
    findings.push(...foreignTemplateStamps(t.metadata, t.at, policy.keys, `the ${kind.kind}'s pods would carry it unreviewed`));
    for (const e of ephemeralTemplates(t.spec, `${t.at}.spec`))
      findings.push(...foreignTemplateStamps(e.metadata, e.at, policy.keys, 'the claim the ephemeral-volume controller makes would carry it unreviewed'));
  }
  for (const c of claims) findings.push(...foreignTemplateStamps(c.metadata, c.at, policy.keys, 'the claims the StatefulSet controller makes would carry it unreviewed'));
  if (isTrusted(requester, policy)) return enforce(findings, policy);

  // The rest as for a pod this requester creates: which environment it acts for decides.
  const gate = createIdentity(requester, namespace, {}, {}, policy);
  if ('verdict' in gate) findings.push(...gate.verdict.findings);
  const environment = 'environment' in gate ? gate.environment : undefined;
  for (const t of pods) {
    findings.push(...borrowedServiceAccount(t.spec, `${t.at}.spec`, namespace, requester, policy, `a ${kind.kind} pod template`));
    if (environment !== undefined) findings.push(...sandboxTemplateRules(t, kind, policy.config, policy.keys));
  }
  findings.push(...claimEnvironment(workloadClaims(obj, kind, old), namespace, environment, ctx));
  return enforce(findings, policy);
}

/**
 * A requester acting for an environment makes sandbox pods: the template and workspace
 * rules hold in its templates too. One more: the controller's pod gets no mutation, so
 * "automount off" cannot be made true for it and must be written in the template.
 */
function sandboxTemplateRules(t: PodTemplate, kind: WorkloadKind, config: Config, keys: StampKeys): Finding[] {
  const at = `${t.at}.spec`;
  const findings = [
    ...templateCollisions(t.spec, at, config).filter((f) => !(kind.ownsRestartPolicy && f.rule === RULES.templateRestartPolicy.id)),
    ...workspaceMounts(t.spec, at, undefined, own(stringMap(t.metadata, 'annotations'), keys.workspaceGrants), `${t.at}.${annotationPath(keys.workspaceGrants)}`, config),
  ];
  if (!config.template.automountServiceAccountToken && field(t.spec, 'automountServiceAccountToken') === undefined)
    findings.push({
      rule: RULES.templateServiceAccountToken.id,
      path: `${at}.automountServiceAccountToken`,
      message: `must be false: the ${kind.kind}'s pods are created by its controller, unreviewed, and the API server would mount a service-account token into them`,
    });
  return findings;
}
