// Workspace mounts (docs/concepts.md, "The validating webhook"): only the main container mounts
// the workspace by default; another ordinary container may only with a grant naming it,
// at exactly /workspace, without subPath, propagation or recursive read-only, readOnly
// matching the grant. Grants and mounts are compared both ways. Init and ephemeral
// containers never receive the workspace, runtime or auth volumes, nor does an ephemeral
// container join the processes of a container that has them (targetContainerName).
// The workspace is its claim, not its volume name: every volume that reaches the claim's
// data (another volume on the same claimName, an ephemeral volume cloning it) is held to
// the same rules, so a second name is no back door; and so is a volume of any pod on a
// claim marked as a workspace (`<prefix>/workspace: "true"`, see workspace-claims.ts).
// volumeDevices reach a volume as mounts do, and paths are compared normalised.
import { quoted, type Finding } from '../../admission/verdict.js';
import type { Config } from '../../config/schema.js';
import { containers, dataSources, ephemeralClaimSpec, fileKeyReads, mainContainerOf, mounts, segments, volumeSource, volumesReached } from './spec.js';
import { field, isRec, recs, text, type Rec } from '../unstructured.js';
import { rule } from '../rules/rule-info.js';
import type { Rule } from '../rules/rule.js';
import type { PodSpecSubject } from './pod-spec-subject.js';

/** The catalogue entries of the workspace mount rules (rules/catalog.ts gathers them). */
export const WORKSPACE_MOUNT_RULES = {
  workspaceGrantMalformed: rule({
    id: 'workspace.grant-malformed',
    webhook: 'validate',
    checks: '`<prefix>/workspace-grants` is a JSON object from container name to "ro" or "rw", not naming the main container.',
    defaultMode: 'deny',
    overridable: false,
    example: 'must be a JSON object of container name to "ro" or "rw"',
  }),
  workspaceUndeclaredMount: rule({
    id: 'workspace.undeclared-mount',
    webhook: 'validate',
    checks: 'A container other than main mounts the workspace only with a grant naming it.',
    defaultMode: 'deny',
    overridable: true,
    example: 'container "sidecar" mounts the workspace without a grant',
  }),
  workspaceUnusedGrant: rule({
    id: 'workspace.unused-grant',
    webhook: 'validate',
    checks: 'Every grant names an ordinary container that mounts the workspace.',
    defaultMode: 'deny',
    overridable: true,
    example: 'grant for "indexer" but no such container mounts the workspace',
  }),
  workspaceMountPath: rule({
    id: 'workspace.mount-path',
    webhook: 'validate',
    checks: 'The workspace is mounted at exactly /workspace, once per container.',
    defaultMode: 'deny',
    overridable: true,
    example: 'must be exactly "/workspace", got "/workspace/sub"',
  }),
  workspaceSubpath: rule({
    id: 'workspace.subpath',
    webhook: 'validate',
    checks: 'No subPath or subPathExpr on a workspace mount.',
    defaultMode: 'deny',
    overridable: true,
    example: 'subPath is not allowed on the workspace',
  }),
  workspacePropagation: rule({
    id: 'workspace.propagation',
    webhook: 'validate',
    checks: 'mountPropagation on a workspace mount is absent or None.',
    defaultMode: 'deny',
    overridable: true,
    example: 'must be None, got "Bidirectional"',
  }),
  workspaceRecursiveReadOnly: rule({
    id: 'workspace.recursive-read-only',
    webhook: 'validate',
    checks: 'recursiveReadOnly on a workspace mount is absent or Disabled.',
    defaultMode: 'deny',
    overridable: true,
    example: 'must be Disabled, got "Enabled"',
  }),
  workspaceReadOnly: rule({
    id: 'workspace.read-only',
    webhook: 'validate',
    checks: 'A workspace mount is read-only exactly when its grant is "ro".',
    defaultMode: 'deny',
    overridable: true,
    example: 'container "indexer" is granted "ro" but mounts the workspace read-write',
  }),
  workspaceOverlap: rule({
    id: 'workspace.overlap',
    webhook: 'validate',
    checks: 'In a pod that has the workspace (the main container, or a volume of the workspace claim or name), no other volume is mounted at /workspace, inside it, or at an ancestor of it (compared by path segment: /work does not overlap). An ordinary build pod\'s own /workspace (kaniko, Tekton: an emptyDir) is not judged.',
    defaultMode: 'deny',
    overridable: true,
    example: 'volume "cache" mounted at "/workspace/cache" overlaps the workspace',
  }),
  workspaceInitOrEphemeral: rule({
    id: 'workspace.init-or-ephemeral',
    webhook: 'validate',
    checks:
      "Init and ephemeral containers never mount the workspace, runtime or auth volumes (pods/ephemeralcontainers included) nor read a variable from one (`env[].valueFrom.fileKeyRef`), nor does an ephemeral container target (`targetContainerName`, `kubectl debug --target`) the main container or a container that mounts one: it would share that container's processes and read its files, those volumes and the main container's environment, through /proc/<pid>/root.",
    defaultMode: 'deny',
    overridable: true,
    example: 'ephemeral container "dbg" may not mount the auth volume',
  }),
} as const;


type Grant = 'ro' | 'rw';

export function parseGrants(value: string | undefined, mainContainer: string): { grants: Map<string, Grant>; error?: string } {
  const grants = new Map<string, Grant>();
  if (value === undefined) return { grants };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { grants, error: 'must be a JSON object of container name to "ro" or "rw"; it is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { grants, error: 'must be a JSON object of container name to "ro" or "rw"' };
  for (const [name, mode] of Object.entries(parsed as Rec)) {
    if (mode !== 'ro' && mode !== 'rw') return { grants, error: `grant for ${quoted(name)} must be "ro" or "rw", got ${quoted(mode)}` };
    if (name === mainContainer) return { grants, error: `the main container "${mainContainer}" is granted implicitly; do not list it` };
    grants.set(name, mode);
  }
  return { grants };
}

/** Same path, an ancestor, or a descendant, segment by segment: "/work" does not overlap "/workspace". */
export function overlaps(a: string, b: string): boolean {
  const [x, y] = [segments(a), segments(b)];
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** The claim a generic ephemeral volume creates: `<pod name>-<volume name>`. */
function ephemeralClaimName(podName: string | undefined, volume: string): string | undefined {
  return podName === undefined ? undefined : `${podName}-${volume}`;
}

/**
 * The volumes that hold what the platform gives a sandbox's main container (the runtime and
 * auth volumes by their reserved names, and every volume that reaches the workspace, `workspace`
 * as workspaceVolumes finds them), each with the words a message names it by.
 */
export function platformVolumesOf(workspace: ReadonlyMap<string, string>, config: Config): Map<string, string> {
  const t = config.template;
  return new Map([
    [t.volumes.runtime.name, 'the runtime volume'],
    [t.volumes.auth.name, 'the auth volume'],
    ...[...workspace].map(([name, how]) => [name, how === 'the workspace volume' ? how : `the workspace (${how})`] as const),
  ]);
}

/**
 * Every volume that reaches the workspace's data, by name, with how: the workspace volume
 * itself, another volume on its claim, an ephemeral volume cloning it; and in any pod, a
 * volume on (or cloning) a claim known to be an environment's workspace (`workspaceClaims`,
 * the claims marked as one at creation), whatever the volume is called.
 */
export function workspaceVolumes(spec: Rec, podName: string | undefined, config: Config, workspaceClaims: ReadonlySet<string> = new Set()): Map<string, string> {
  const ws = config.template.volumes.workspace;
  const volumes = recs(field(spec, 'volumes'));
  const out = new Map<string, string>();
  const claims = new Set(workspaceClaims);
  const own = volumes.find((v) => text(v, 'name') === ws.name);
  if (own !== undefined) {
    out.set(ws.name, 'the workspace volume');
    const source = volumeSource(own);
    const pvc = field(own, 'persistentVolumeClaim');
    const claim = source === 'persistentVolumeClaim' && isRec(pvc) ? text(pvc, 'claimName') : source === 'ephemeral' ? ephemeralClaimName(podName, ws.name) : undefined;
    if (claim !== undefined && claim !== '') claims.add(claim);
  }
  for (const v of volumes) {
    const name = text(v, 'name');
    if (name === undefined || name === ws.name) continue;
    const other = field(v, 'persistentVolumeClaim');
    const mounted = isRec(other) ? text(other, 'claimName') : undefined;
    const cloned = clonedClaimOf(v);
    if (mounted !== undefined && claims.has(mounted)) out.set(name, `volume "${name}" on the workspace claim ${mounted}`);
    else if (cloned !== undefined && claims.has(cloned)) out.set(name, `volume "${name}", a clone of the workspace claim ${cloned}`);
  }
  return out;
}

function clonedClaimOf(volume: Rec): string | undefined {
  const spec = ephemeralClaimSpec(volume);
  return spec === undefined ? undefined : dataSources(spec).clone?.name;
}

export function workspaceMounts(
  spec: Rec,
  at: string,
  podName: string | undefined,
  grantsAnnotation: string | undefined,
  grantsPath: string,
  config: Config,
  workspaceClaims: ReadonlySet<string> = new Set(),
): Finding[] {
  const t = config.template;
  const ws = t.volumes.workspace;
  const findings: Finding[] = [];
  const { grants, error } = parseGrants(grantsAnnotation, t.mainContainer);
  if (error !== undefined) findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceGrantMalformed.id, path: grantsPath, message: error });

  const workspace = workspaceVolumes(spec, podName, config, workspaceClaims);
  const label = (volume: string) => (volume === ws.name ? 'the workspace' : `the workspace (as volume "${volume}")`);
  const platformVolumes = platformVolumesOf(workspace, config);
  const mounting = new Set<string>();
  const all = containers(spec, at);
  // A path overlaps the workspace only where there is one: a pod with the main container (which
  // mounts it), or one that holds the workspace. An ordinary build pod's own /workspace (kaniko's
  // and Tekton's convention, an emptyDir) shadows nothing.
  const hasWorkspace = workspace.size > 0 || mainContainerOf(all, t.mainContainer) !== undefined;
  for (const c of all) {
    for (const m of mounts(c)) {
      const role = platformVolumes.get(m.name);
      if (c.list !== 'containers') {
        if (role !== undefined)
          findings.push({
            rule: WORKSPACE_MOUNT_RULES.workspaceInitOrEphemeral.id,
            path: m.path,
            message: `${c.list === 'initContainers' ? 'init' : 'ephemeral'} container "${c.name}" may not mount ${role}`,
          });
      } else if (workspace.has(m.name)) {
        mounting.add(c.name);
      }
      if (hasWorkspace && !workspace.has(m.name) && overlaps(m.mountPath, ws.mountPath))
        findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceOverlap.id, path: m.path, message: `volume "${m.name}" mounted at "${m.mountPath}" overlaps the workspace at "${ws.mountPath}"` });
    }
    // A variable read from a file of the volume (fileKeyRef) reaches it without a mount.
    if (c.list !== 'containers')
      for (const r of fileKeyReads(c)) {
        const role = platformVolumes.get(r.name);
        if (role !== undefined)
          findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceInitOrEphemeral.id, path: r.path, message: `${c.list === 'initContainers' ? 'init' : 'ephemeral'} container "${c.name}" may not read ${role} (a variable's value, through fileKeyRef)` });
      }
  }

  // An ephemeral container that targets a container shares its process namespace: /proc/<pid>/root
  // is that container's filesystem, its mounts included, and /proc/<pid>/environ its environment.
  const holding = new Map(containers(spec, at, ['containers', 'initContainers']).map((c) => [c.name, c] as const));
  for (const c of containers(spec, at, ['ephemeralContainers'])) {
    const target = text(c.spec, 'targetContainerName');
    const held = target === undefined ? undefined : holding.get(target);
    if (held === undefined) continue;
    const reached = [...new Set(volumesReached(held).flatMap((name) => platformVolumes.get(name) ?? []))];
    if (held.list === 'containers' && target === t.mainContainer) reached.unshift("the main container's environment");
    if (reached.length > 0)
      findings.push({
        rule: WORKSPACE_MOUNT_RULES.workspaceInitOrEphemeral.id,
        path: `${c.path}.targetContainerName`,
        message: `ephemeral container "${c.name}" targets container "${target}": sharing its processes, it would read ${reached.join(', ')} through /proc; leave targetContainerName out (kubectl debug without --target)`,
      });
  }

  for (const c of containers(spec, at, ['containers'])) {
    const own = mounts(c).filter((m) => workspace.has(m.name));
    if (own.length === 0) continue;
    const isMain = c.name === t.mainContainer;
    const grant = isMain ? undefined : grants.get(c.name);
    if (!isMain && grant === undefined) {
      findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceUndeclaredMount.id, path: own[0]!.path, message: `container "${c.name}" mounts ${label(own[0]!.name)} without a grant` });
      continue;
    }
    if (own.length > 1)
      findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceMountPath.id, path: `${c.path}.volumeMounts`, message: `container "${c.name}" mounts the workspace ${own.length} times; once only` });
    for (const m of own) {
      if (m.device) {
        findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceMountPath.id, path: m.path, message: `container "${c.name}" attaches ${label(m.name)} as a block device; it is mounted at "${ws.mountPath}" only` });
        continue;
      }
      if (m.givenPath !== ws.mountPath)
        findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceMountPath.id, path: m.path, message: `must be exactly "${ws.mountPath}", got ${quoted(m.givenPath)}` });
      for (const key of ['subPath', 'subPathExpr'])
        if ((text(m.raw, key) ?? '') !== '') findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceSubpath.id, path: `${m.path}.${key}`, message: `${key} is not allowed on the workspace` });
      const propagation = field(m.raw, 'mountPropagation');
      if (propagation !== undefined && propagation !== 'None')
        findings.push({ rule: WORKSPACE_MOUNT_RULES.workspacePropagation.id, path: `${m.path}.mountPropagation`, message: `must be None, got ${quoted(propagation)}` });
      const rro = field(m.raw, 'recursiveReadOnly');
      if (rro !== undefined && rro !== 'Disabled')
        findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceRecursiveReadOnly.id, path: `${m.path}.recursiveReadOnly`, message: `must be Disabled, got ${quoted(rro)}` });
      const readOnly = field(m.raw, 'readOnly') === true;
      if (grant === 'ro' && !readOnly)
        findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceReadOnly.id, path: m.path, message: `container "${c.name}" is granted "ro" but mounts ${label(m.name)} read-write` });
      if (grant === 'rw' && readOnly)
        findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceReadOnly.id, path: m.path, message: `container "${c.name}" is granted "rw" but mounts ${label(m.name)} read-only` });
    }
  }

  for (const [name] of grants)
    if (!mounting.has(name))
      findings.push({ rule: WORKSPACE_MOUNT_RULES.workspaceUnusedGrant.id, path: grantsPath, message: `grant for "${name}" but no ordinary container of that name mounts the workspace` });
  return findings;
}

/** Only the main container mounts the workspace, but for the containers the pod grants it to. */
export const workspaceRule: Rule<PodSpecSubject> = {
  info: Object.values(WORKSPACE_MOUNT_RULES),
  check: (s, { policy }) => workspaceMounts(s.spec, s.at, s.podName, s.grants.value, s.grants.path, policy.config, s.workspaceClaims),
};
