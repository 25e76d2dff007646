// template.process-namespace: a pod whose containers share one process namespace
// (spec.shareProcessNamespace) lets each read the others' files through /proc/<pid>/root
// and their environment through /proc/<pid>/environ. In a sandbox pod that hands every
// container what the workspace and template rules keep for the main container (and the
// containers granted the workspace): the workspace, the runtime and auth volumes, the
// reserved variables. Judged where there is something to reach: a pod with the main
// container, or one mounting the workspace (under any volume name), runtime or auth volume.
// An ordinary pod that shares its processes (a config reloader signalling its server) is not judged.
import { field } from '../unstructured.js';
import { rule } from '../rules/rule-info.js';
import type { Rule } from '../rules/rule.js';
import { containers, mainContainerOf, volumesReached } from './spec.js';
import { platformVolumesOf, workspaceVolumes } from './workspace-mounts.js';
import type { PodSpecSubject } from './pod-spec-subject.js';

export const TEMPLATE_PROCESS_NAMESPACE = rule({
  id: 'template.process-namespace',
  webhook: 'validate',
  checks:
    "A sandbox pod (one with the designated main container, or one that mounts the workspace, runtime or auth volume; a workload's pod template too) does not set `spec.shareProcessNamespace: true`: every container could read the others' files through /proc/<pid>/root, and with them the workspace, runtime and auth volumes and the main container's reserved variables, which the `template.*` and `workspace.*` rules keep from them. Judged wherever a pod spec stands: pods, every workload template, and `deed audit`. An ephemeral container that targets such a container is `workspace.init-or-ephemeral`'s.",
  defaultMode: 'deny',
  overridable: true,
  example: "shares one process namespace among its containers: each could read through /proc what the others hold (the main container's files, the workspace volume, the auth volume); leave shareProcessNamespace unset",
});

export const processNamespaceRule: Rule<PodSpecSubject> = {
  info: [TEMPLATE_PROCESS_NAMESPACE],
  check: ({ spec, at, podName, workspaceClaims }, { policy }) => {
    if (field(spec, 'shareProcessNamespace') !== true) return [];
    const t = policy.config.template;
    const all = containers(spec, at);
    const held = platformVolumesOf(workspaceVolumes(spec, podName, policy.config, workspaceClaims), policy.config);
    const reached = [...new Set(all.flatMap((c) => volumesReached(c).flatMap((name) => held.get(name) ?? [])))];
    if (mainContainerOf(all, t.mainContainer) !== undefined) reached.unshift("the main container's files");
    if (reached.length === 0) return [];
    return [
      {
        rule: TEMPLATE_PROCESS_NAMESPACE.id,
        path: `${at}.shareProcessNamespace`,
        message: `shares one process namespace among its containers: each could read through /proc what the others hold (${reached.join(', ')}); leave shareProcessNamespace unset`,
      },
    ];
  },
};
