// Builds the AdmissionReview the API server would send for an object on disk, so that
// `deed review` runs the webhooks on exactly what they see in a cluster: for a CREATE,
// the mutating side gets no uid and an unresolved generateName, the validating side the
// final object. Pure: the clock and the random source come in through the context.
import { kindRowNamed } from '../policy/kinds.js';
import type { AdmissionRequest, KubeObject, UserInfo } from '../admission/types.js';
import { POD_NAME_EXTRA, POD_UID_EXTRA, parseServiceAccount } from '../policy/requester/identity.js';
import { field, isRec, recs, text } from '../policy/unstructured.js';
import { pluginTokenVolume, TOKEN_MOUNT_PATH, TOKEN_VOLUME_PREFIX } from '../policy/pod/service-account-token.js';

export type ReviewOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** Bad input (a file, a flag): `deed review` exits 2 with the message. */
export class InputError extends Error {
  override name = 'InputError';
}

/** Wire form of a review request: what `decide()` is given, as the API server sends it. */
export interface ReviewBody {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request: Omit<AdmissionRequest, 'object' | 'oldObject'> & {
    requestKind: AdmissionRequest['kind'];
    requestResource: AdmissionRequest['resource'];
    object: KubeObject | null;
    oldObject: KubeObject | null;
    options: Record<string, unknown>;
  };
}

interface ResourceInfo {
  resource: string;
  namespaced: boolean;
}

// Kinds of the kind table (src/policy/kinds.ts) are addressed as its rows say. Others fall
// back to the API server's naming convention (lower-case plural), namespaced: Deed lets them pass.
function resourceInfo(group: string, kind: string): ResourceInfo {
  const known = kindRowNamed(group, kind);
  if (known) return { resource: known.resource, namespaced: known.namespaced };
  const lower = kind.toLowerCase();
  const plural = /(s|x|z|ch|sh)$/.test(lower) ? `${lower}es` : /[^aeiou]y$/.test(lower) ? `${lower.slice(0, -1)}ies` : `${lower}s`;
  return { resource: plural, namespaced: true };
}

export function groupVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function describeObject(obj: KubeObject): string {
  const meta = obj.metadata;
  const name = meta.name ?? (meta.generateName !== undefined ? `${meta.generateName}*` : '(unnamed)');
  return `${String(obj.kind)} ${meta.namespace !== undefined ? `${meta.namespace}/` : ''}${name}`;
}

export interface RequesterFlags {
  /** `--as`: a username; `system:serviceaccount:NS:NAME` for a service account. */
  as?: string;
  groups: string[];
  podName?: string;
  podUid?: string;
}

/**
 * The userInfo the API server would attach. Without `--as`, the requester is the
 * `default` service account of the object's namespace: under the embedded default
 * policy every service account acts for environment `default`, so the stamps show.
 * Service accounts get the groups the API server adds (`system:serviceaccounts`,
 * `system:serviceaccounts:NS`); everyone gets `system:authenticated`.
 */
export function requesterFor(flags: RequesterFlags, namespace: string | undefined): UserInfo {
  const username = flags.as ?? `system:serviceaccount:${namespace ?? 'default'}:default`;
  const sa = parseServiceAccount(username);
  if ((flags.podName === undefined) !== (flags.podUid === undefined))
    throw new InputError('--pod-name and --pod-uid go together: a pod-bound token carries both');
  if (flags.podName !== undefined && !sa) throw new InputError(`--pod-name and --pod-uid need a service-account requester (--as system:serviceaccount:NS:NAME), got ${username}`);
  const groups = [...(sa ? ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`] : []), ...flags.groups, 'system:authenticated'];
  const extra: Record<string, string[]> = {};
  if (flags.podName !== undefined && flags.podUid !== undefined) {
    extra[POD_NAME_EXTRA] = [flags.podName];
    extra[POD_UID_EXTRA] = [flags.podUid];
  }
  return { username, groups: [...new Set(groups)], extra };
}

function checkShape(obj: KubeObject, where: string): { group: string; version: string; kind: string; info: ResourceInfo } {
  if (typeof obj.apiVersion !== 'string' || obj.apiVersion === '') throw new InputError(`${where}: apiVersion is required`);
  if (typeof obj.kind !== 'string' || obj.kind === '') throw new InputError(`${where}: kind is required`);
  const { group, version } = groupVersion(obj.apiVersion);
  return { group, version, kind: obj.kind, info: resourceInfo(group, obj.kind) };
}

/** Puts the object in its namespace as the API server would: `--namespace` for objects without one, a mismatch is an error (as with kubectl). */
export function placeInNamespace(obj: KubeObject, flagNamespace: string | undefined, where: string): KubeObject {
  const { info } = checkShape(obj, where);
  const out = structuredClone(obj);
  if (!info.namespaced) {
    delete out.metadata.namespace;
    return out;
  }
  const own = obj.metadata.namespace;
  if (own !== undefined && flagNamespace !== undefined && own !== flagNamespace)
    throw new InputError(`${where}: the object's namespace ${own} does not match --namespace ${flagNamespace}`);
  out.metadata.namespace = own ?? flagNamespace ?? 'default';
  return out;
}

// Fields the API server sets itself; a create cannot carry them (and `kubectl get -o
// yaml` output does), so they are dropped before the mutating webhook sees the object.
const SERVER_SET_FIELDS = ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'generation'];

/** The object as the mutating webhook sees it on CREATE: no uid, generateName unresolved. */
export function forCreate(obj: KubeObject, where: string): KubeObject {
  if (obj.metadata.name === undefined && obj.metadata.generateName === undefined)
    throw new InputError(`${where}: metadata.name or metadata.generateName is required to create ${String(obj.kind)}`);
  const out = structuredClone(obj);
  for (const field of SERVER_SET_FIELDS) delete out.metadata[field];
  return out;
}

// The API server's name-suffix alphabet (k8s.io/apimachinery/pkg/util/rand): no vowels,
// no look-alike characters, so a generated name never spells a word.
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function nameSuffix(randomBytes: (n: number) => Buffer): string {
  return [...randomBytes(5)].map((b) => SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length]).join('');
}

/**
 * What the API server's ServiceAccount admission plugin does to a pod before any webhook
 * sees it, as far as the token goes: when the pod leaves automountServiceAccountToken
 * unset, it mounts a `kube-api-access-*` projected token volume read-only at
 * /var/run/secrets/kubernetes.io/serviceaccount in every init and ordinary container that
 * has nothing there yet (reusing a volume already named `kube-api-access-*`). Offline, the
 * service account is assumed not to turn automount off itself, as is the default; so the
 * mutating webhook is shown the pod it would get in a cluster, and the dry run shows what
 * Deed then removes.
 */
export function withServiceAccountToken(obj: KubeObject, randomBytes: (n: number) => Buffer): KubeObject {
  if (obj.kind !== 'Pod' || obj.apiVersion !== 'v1' || !isRec(obj.spec) || Object.hasOwn(obj.spec, 'automountServiceAccountToken')) return obj;
  const out = structuredClone(obj);
  const spec = out.spec!;
  const volumes = Array.isArray(spec.volumes) ? (spec.volumes as unknown[]) : [];
  const existing = recs(volumes).map((v) => text(v, 'name')).find((n) => n?.startsWith(TOKEN_VOLUME_PREFIX));
  const name = existing ?? `${TOKEN_VOLUME_PREFIX}${nameSuffix(randomBytes)}`;
  let mounted = false;
  for (const list of ['initContainers', 'containers']) {
    for (const c of recs(field(spec, list))) {
      const mounts = Array.isArray(c.volumeMounts) ? (c.volumeMounts as unknown[]) : [];
      if (recs(mounts).some((m) => text(m, 'mountPath') === TOKEN_MOUNT_PATH)) continue;
      c.volumeMounts = [...mounts, { name, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
      mounted = true;
    }
  }
  if (mounted && existing === undefined) spec.volumes = [...volumes, pluginTokenVolume(name)];
  return out;
}

/** A random RFC 4122 version 4 UUID from the context's random source. */
export function uuidFrom(randomBytes: (n: number) => Buffer): string {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The object as stored after CREATE, as the validating webhook sees it: a uid, a creation time, generateName resolved. */
export function admitted(obj: KubeObject, now: number, randomBytes: (n: number) => Buffer): KubeObject {
  const out = structuredClone(obj);
  if (out.metadata.name === undefined && out.metadata.generateName !== undefined)
    out.metadata.name = out.metadata.generateName + nameSuffix(randomBytes);
  out.metadata.uid = uuidFrom(randomBytes);
  out.metadata.creationTimestamp = rfc3339(now);
  return out;
}

/** An object already stored (the old side of an UPDATE or DELETE): given a uid and creation time when the file has none. */
export function stored(obj: KubeObject, where: string, now: number, randomBytes: (n: number) => Buffer): KubeObject {
  if (obj.metadata.name === undefined) throw new InputError(`${where}: a stored object needs metadata.name`);
  const out = structuredClone(obj);
  out.metadata.uid ??= uuidFrom(randomBytes);
  out.metadata.creationTimestamp ??= rfc3339(now);
  return out;
}

/** The new side of an UPDATE: the same object as `old`, with the fields the API server keeps from it. */
export function forUpdate(obj: KubeObject, old: KubeObject, where: string): KubeObject {
  const a = checkShape(obj, where);
  const b = checkShape(old, `${where} (--old)`);
  const same = a.group === b.group && a.kind === b.kind && obj.metadata.namespace === old.metadata.namespace && obj.metadata.name === old.metadata.name;
  if (!same) throw new InputError(`${where}: an UPDATE needs the same object on both sides, got ${describeObject(obj)} and ${describeObject(old)} (--old)`);
  const out = structuredClone(obj);
  for (const field of ['uid', 'creationTimestamp', 'resourceVersion']) if (out.metadata[field] === undefined && old.metadata[field] !== undefined) out.metadata[field] = old.metadata[field];
  return out;
}

export interface ReviewSpec {
  uid: string;
  operation: ReviewOperation;
  /** The new object (CREATE, UPDATE); null for DELETE. */
  object: KubeObject | null;
  /** The stored object (UPDATE, DELETE); null for CREATE. */
  oldObject: KubeObject | null;
  userInfo: UserInfo;
  subResource?: string;
}

const OPTIONS: Record<ReviewOperation, Record<string, unknown>> = {
  CREATE: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
  UPDATE: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
  DELETE: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', propagationPolicy: 'Background' },
};

/** The AdmissionReview for one webhook call. */
export function buildReview(spec: ReviewSpec): ReviewBody {
  const subject = spec.object ?? spec.oldObject;
  if (subject === null) throw new InputError('a review needs an object');
  const { group, version, kind, info } = checkShape(subject, describeObject(subject));
  const gvk = { group, version, kind };
  const gvr = { group, version, resource: info.resource };
  const request: ReviewBody['request'] = {
    uid: spec.uid,
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    operation: spec.operation,
    userInfo: spec.userInfo,
    object: spec.object,
    oldObject: spec.oldObject,
    dryRun: false,
    options: OPTIONS[spec.operation],
  };
  if (spec.subResource) request.subResource = spec.subResource;
  if (subject.metadata.name !== undefined) request.name = subject.metadata.name;
  if (subject.metadata.namespace !== undefined) request.namespace = subject.metadata.namespace;
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
}
