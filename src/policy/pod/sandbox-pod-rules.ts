// The rules of a sandbox pod's spec, wherever it stands: a Pod's `spec`, every pod template
// of a kind in the kind table (src/policy/kinds.ts), and the pods `deed audit` reads back.
// A rule added to SANDBOX_POD_RULES reaches all of them, and `deed review` and `deed test`
// (which call the same webhooks), with no other edit.
import type { Finding } from '../../admission/verdict.js';
import { field, type Rec } from '../unstructured.js';
import type { Config } from '../../config/schema.js';
import { templateCollisions } from './template-collisions.js';
import { workspaceMounts } from './workspace-mounts.js';
import { RULES, type RuleInfo } from '../rules/catalog.js';
import { runRules, type Facts, type Rule } from '../rules/rule.js';

/** A pod spec, where it stands, and what its pod declares beside it. */
export interface PodSpecSubject {
  spec: Rec;
  /** The spec's field path: `spec`, `spec.template.spec`. */
  at: string;
  /** Where it comes from: the Pod itself, or a kind whose controller makes pods from it. */
  source: { kind: string; controller: boolean; ownsRestartPolicy: boolean };
  /** The pod's name, when it has one yet (a template's pods do not). */
  podName: string | undefined;
  /** The pod's workspace grants annotation, and its field path. */
  grants: { value: string | undefined; path: string };
  /** The claims it mounts that are workspaces (read before the rules run). */
  workspaceClaims: ReadonlySet<string>;
}

const TEMPLATE_RULES: readonly RuleInfo[] = [
  RULES.templateMainMissing,
  RULES.templateMainContainer,
  RULES.templateReservedEnv,
  RULES.templateReservedVolume,
  RULES.templateReservedMount,
  RULES.templateRestartPolicy,
  RULES.templateServiceAccountToken,
  RULES.templateScheduling,
  RULES.templatePrivileged,
  RULES.templateHostAccess,
];

const WORKSPACE_RULES: readonly RuleInfo[] = [
  RULES.workspaceGrantMalformed,
  RULES.workspaceUndeclaredMount,
  RULES.workspaceUnusedGrant,
  RULES.workspaceMountPath,
  RULES.workspaceSubpath,
  RULES.workspacePropagation,
  RULES.workspaceRecursiveReadOnly,
  RULES.workspaceReadOnly,
  RULES.workspaceOverlap,
  RULES.workspaceInitOrEphemeral,
];

/** Platform-owned fields are absent or equal to the owned value; a kind that decides its pods' restartPolicy keeps it. */
export const templateCollisionRule: Rule<PodSpecSubject> = {
  info: TEMPLATE_RULES,
  check: ({ spec, at, source }, { policy }) =>
    templateCollisions(spec, at, policy.config).filter((f) => !(source.ownsRestartPolicy && f.rule === RULES.templateRestartPolicy.id)),
};

/** Only the main container mounts the workspace, but for the containers the pod grants it to. */
export const workspaceRule: Rule<PodSpecSubject> = {
  info: WORKSPACE_RULES,
  check: (s, { policy }) => workspaceMounts(s.spec, s.at, s.podName, s.grants.value, s.grants.path, policy.config, s.workspaceClaims),
};

/**
 * Whether Deed writes `automountServiceAccountToken: false` into a workload's pod template
 * (at CREATE, and on an UPDATE that changes the template): only where the controller
 * manager runs without per-controller credentials (policy
 * `workloadControllers.perControllerCredentials: false`). Its controllers then all create as
 * `system:kube-controller-manager`, a system principal Deed never judges, so the pods they
 * make get no mutation and "automount off" must be in the template they copy. With
 * per-controller credentials (the default) each pod is reviewed when its controller makes
 * it, and the mutating side turns automount off there (mutate.ts), as for any sandbox pod.
 */
export function templateAutomountOff(spec: Rec, config: Config): boolean {
  return !config.workloadControllers.perControllerCredentials && !config.template.automountServiceAccountToken && field(spec, 'automountServiceAccountToken') === undefined;
}

/**
 * The same, on the validating side: a template the mutating side should have made say false
 * and that still leaves it unset (a later mutator took it out). Never fires with
 * per-controller credentials: a template may leave the field unset.
 */
export const controllerTokenRule: Rule<PodSpecSubject> = {
  info: [RULES.templateServiceAccountToken],
  check: ({ spec, at, source }, { policy }) =>
    source.controller && templateAutomountOff(spec, policy.config)
      ? [
          {
            rule: RULES.templateServiceAccountToken.id,
            path: `${at}.automountServiceAccountToken`,
            message: `must be false: the controller manager runs without per-controller credentials (workloadControllers.perControllerCredentials: false), so the ${source.kind}'s pods are created unreviewed; Deed writes false here when the template is written`,
          },
        ]
      : [],
};

/** Host networking is a grant of the environment (`environments[].grants.hostNetwork`), refused without it. */
export const hostNetworkRule: Rule<PodSpecSubject> = {
  info: [RULES.templateHostNetwork],
  when: (facts) => facts.environment !== undefined,
  check: ({ spec, at }, { policy, environment }) => {
    if (field(spec, 'hostNetwork') !== true) return [];
    if (policy.config.environments.find((e) => e.id === environment)?.grants.hostNetwork === true) return [];
    return [{ rule: RULES.templateHostNetwork.id, path: `${at}.hostNetwork`, message: `environment "${environment}" is not granted host networking (environments[].grants.hostNetwork)` }];
  },
};

/** Every rule of a sandbox pod's spec, in the order their findings are reported. */
export const SANDBOX_POD_RULES: readonly Rule<PodSpecSubject>[] = [templateCollisionRule, workspaceRule, controllerTokenRule, hostNetworkRule];

/** The findings of SANDBOX_POD_RULES on one pod spec. */
export function sandboxPodFindings(subject: PodSpecSubject, facts: Facts): Finding[] {
  return runRules(SANDBOX_POD_RULES, subject, facts);
}
