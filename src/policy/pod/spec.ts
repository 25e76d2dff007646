// Readers over a pod spec, on the defensive readers of ../unstructured.ts.
// A pod spec is judged wherever it stands (a Pod's `spec`, a Deployment's
// `spec.template.spec`): every rule of this folder takes `(spec, at, ...)`, `at` being the
// spec's field path, and names the paths it reports under it.
import { posix } from 'node:path';
import { SNAPSHOT_GROUP } from '../kinds.js';
import { field, isRec, recs, text, type Rec } from '../unstructured.js';

export type ContainerList = 'containers' | 'initContainers' | 'ephemeralContainers';

export interface Container {
  list: ContainerList;
  name: string;
  spec: Rec;
  /** A field path that names the container, not its index. */
  path: string;
}

/** `at`: the field path of `spec` (`spec` for a Pod, `spec.template.spec` for a Deployment). */
export function containers(spec: Rec, at: string, lists: ContainerList[] = ['containers', 'initContainers', 'ephemeralContainers']): Container[] {
  const out: Container[] = [];
  for (const list of lists)
    for (const c of recs(field(spec, list))) {
      const name = text(c, 'name') ?? '';
      out.push({ list, name, spec: c, path: `${at}.${list}[name=${name}]` });
    }
  return out;
}

/** The designated main container among `all` (a regular container of that name): a pod that has it is a sandbox. */
export function mainContainerOf(all: Container[], mainContainer: string): Container | undefined {
  return all.find((c) => c.list === 'containers' && c.name === mainContainer);
}

export interface Mount {
  name: string;
  /** Normalised (normalMountPath), for overlap and prefix tests. */
  mountPath: string;
  /** As given: an exact-path test compares this (`/workspace/` is not exactly `/workspace`). */
  givenPath: string;
  raw: Rec;
  path: string;
  /** A `volumeDevices` entry (a raw block device at `devicePath`): it reaches the volume's data too. */
  device: boolean;
}

/** Every way a container reaches a volume: its volumeMounts and its volumeDevices. */
export function mounts(c: Container): Mount[] {
  const mounted = recs(field(c.spec, 'volumeMounts')).map((m) => {
    const given = text(m, 'mountPath') ?? '';
    return { name: text(m, 'name') ?? '', mountPath: normalMountPath(given), givenPath: given, raw: m, path: `${c.path}.volumeMounts[mountPath=${given}]`, device: false };
  });
  const devices = recs(field(c.spec, 'volumeDevices')).map((d) => {
    const given = text(d, 'devicePath') ?? '';
    return { name: text(d, 'name') ?? '', mountPath: normalMountPath(given), givenPath: given, raw: d, path: `${c.path}.volumeDevices[devicePath=${given}]`, device: true };
  });
  return [...mounted, ...devices];
}

/**
 * The volumes a container reads a variable's value from (`env[].valueFrom.fileKeyRef`): the
 * kubelet reads the file from the pod's volume for it, mounted in that container or not, so
 * it reaches the volume's data as a mount would.
 */
export function fileKeyReads(c: Container): Array<{ name: string; path: string }> {
  return recs(field(c.spec, 'env')).flatMap((e) => {
    const from = field(e, 'valueFrom');
    const ref = isRec(from) ? field(from, 'fileKeyRef') : undefined;
    const name = isRec(ref) ? text(ref, 'volumeName') : undefined;
    return name === undefined || name === '' ? [] : [{ name, path: `${c.path}.env[name=${text(e, 'name') ?? ''}].valueFrom.fileKeyRef.volumeName` }];
  });
}

/** The names of the volumes a container reaches: those it mounts or attaches, and those it reads variables from. */
export function volumesReached(c: Container): string[] {
  return [...new Set([...mounts(c).map((m) => m.name), ...fileKeyReads(c).map((r) => r.name)])];
}

/**
 * A path as the container sees it: `.`, `..`, repeated and trailing slashes resolved, so
 * `/x/../workspace/.git/` is `/workspace/.git` before any comparison. The runtime resolves a
 * relative path from the root, so it is taken as absolute.
 */
export function normalMountPath(path: string): string {
  const normal = posix.normalize(`/${path}`);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/** The source type of a volume: the one key besides `name`. */
export function volumeSource(volume: Rec): string | undefined {
  return Object.keys(volume).find((k) => k !== 'name');
}

/** Splits a path into segments, ignoring empty ones: "/workspace//x/" -> ["workspace", "x"]. */
export function segments(path: string): string[] {
  return path.split('/').filter((s) => s !== '' && s !== '.');
}

type SourceKey = 'dataSourceRef' | 'dataSource';

/**
 * What fills a new PersistentVolumeClaim, by its dataSourceRef and dataSource (the first of
 * each class, dataSourceRef first; the API server usually copies one into the other):
 * - `clone`: a PersistentVolumeClaim of this namespace, whatever its `apiGroup` (the API
 *   server keeps a dataSourceRef of any group, and the CSI external-provisioner clones on the
 *   kind alone, so a group would otherwise hide a clone);
 * - `restore`: a VolumeSnapshot of snapshot.storage.k8s.io in this namespace;
 * - `populator`: anything else, as `Kind.group/name`: a volume populator's custom resource
 *   (KubeVirt CDI's VolumeCloneSource, a backup tool's restore), whose controller fills the
 *   volume from whatever it names, or a source of any kind in another namespace
 *   (CrossNamespaceVolumeDataSource, behind a ReferenceGrant there). Deed reads neither.
 * A source without a kind, or a claim or snapshot without a name, fills nothing.
 */
export interface DataSources {
  clone?: { name: string; key: SourceKey };
  restore?: { name: string; key: SourceKey };
  populator?: { source: string; key: SourceKey };
}

export function dataSources(pvcSpec: Rec): DataSources {
  const out: DataSources = {};
  for (const key of ['dataSourceRef', 'dataSource'] as const) {
    const ref = field(pvcSpec, key);
    if (!isRec(ref)) continue;
    const kind = text(ref, 'kind') ?? '';
    if (kind === '') continue;
    const group = text(ref, 'apiGroup') ?? '';
    const namespace = text(ref, 'namespace') ?? '';
    const name = text(ref, 'name') ?? '';
    const named = `${kind}${group !== '' ? `.${group}` : ''}`;
    if (namespace !== '') out.populator ??= { source: `${named} ${namespace}/${name}`, key };
    else if (kind === 'PersistentVolumeClaim') {
      if (name !== '') out.clone ??= { name, key };
    } else if (kind === 'VolumeSnapshot' && group === SNAPSHOT_GROUP) {
      if (name !== '') out.restore ??= { name, key };
    } else out.populator ??= { source: `${named}/${name}`, key };
  }
  return out;
}

/** The claim template spec of a generic ephemeral volume. */
export function ephemeralClaimSpec(volume: Rec): Rec | undefined {
  const ephemeral = field(volume, 'ephemeral');
  const template = isRec(ephemeral) ? field(ephemeral, 'volumeClaimTemplate') : undefined;
  const spec = isRec(template) ? field(template, 'spec') : undefined;
  return isRec(spec) ? spec : undefined;
}
