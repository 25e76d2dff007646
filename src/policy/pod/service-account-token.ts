// The service-account token the API server's ServiceAccount admission plugin mounts into
// a pod that does not set spec.automountServiceAccountToken (and whose service account
// does not either). It runs before any webhook, so "automount off" is something Deed's
// mutating side must make true: set the field to false and take out exactly what the
// plugin added (plugin/pkg/admission/serviceaccount/admission.go, mountServiceAccountToken
// and TokenVolumeSource):
// - a volume named "kube-api-access-" + 5 characters of the API server's name-suffix
//   alphabet, a projected volume of the token (expirationSeconds 3607, path "token"),
//   the kube-root-ca.crt ConfigMap (ca.crt) and the namespace from the downward API
//   (OpenShift's build adds its service CA ConfigMap as a fourth source); the API server
//   defaults defaultMode to 420 before a webhook sees it;
// - a read-only mount of it at /var/run/secrets/kubernetes.io/serviceaccount in every
//   init and ordinary container that has nothing mounted there yet.
// A volume that differs in any way (another name, a source more or less, an audience)
// is the client's own and is left alone; the validating side judges it.
import { isDeepStrictEqual } from 'node:util';
import type { PatchOperation } from '../../admission/verdict.js';
import { type ContainerList } from './spec.js';
import { field, isRec, recs, text, type Rec } from '../unstructured.js';

export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The plugin's token lifetime (serviceaccount.WarnOnlyBoundTokenExpirationSeconds: 1 h + 7 s). */
export const TOKEN_EXPIRATION_SECONDS = 3607;
/** k8s.io/apimachinery/pkg/util/rand: the alphabet of generated name suffixes. */
const SUFFIX = '[bcdfghjklmnpqrstvwxz2456789]{5}';
const TOKEN_VOLUME_NAME = new RegExp(`^${TOKEN_VOLUME_PREFIX}${SUFFIX}$`);

/** The sources of the plugin's projected volume, as a webhook receives them. */
export function pluginTokenSources(): Rec[] {
  return [
    { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
    { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
  ];
}

const OPENSHIFT_SERVICE_CA: Rec = { configMap: { name: 'openshift-service-ca.crt', items: [{ key: 'service-ca.crt', path: 'service-ca.crt' }] } };
const PLUGIN_SOURCES = [pluginTokenSources(), [...pluginTokenSources(), OPENSHIFT_SERVICE_CA]];

/** The volume the plugin adds, with the defaultMode the API server fills in. */
export function pluginTokenVolume(name: string): Rec {
  return { name, projected: { sources: pluginTokenSources(), defaultMode: 420 } };
}

/** Exactly what the plugin adds: its name pattern and its projected sources, nothing more. */
export function isPluginTokenVolume(volume: Rec): boolean {
  const name = text(volume, 'name');
  if (name === undefined || !TOKEN_VOLUME_NAME.test(name)) return false;
  if (Object.keys(volume).some((k) => k !== 'name' && k !== 'projected')) return false;
  const projected = field(volume, 'projected');
  if (!isRec(projected)) return false;
  const { sources, defaultMode, ...rest } = projected;
  if (Object.keys(rest).length > 0 || (defaultMode !== undefined && defaultMode !== 420)) return false;
  return PLUGIN_SOURCES.some((want) => isDeepStrictEqual(sources, want));
}

const LISTS: ContainerList[] = ['initContainers', 'containers', 'ephemeralContainers'];

/**
 * The JSON Patch that takes the plugin's volumes and every mount of them out of `spec`
 * (at `/spec`). Within each array, elements go from the highest index down, each after a
 * `test` of its name, so no removal shifts another and a patch applied to a different
 * object fails instead of removing the wrong element.
 */
export function tokenVolumeRemoval(spec: Rec): { ops: PatchOperation[]; removed: string[] } {
  const given = field(spec, 'volumes');
  const volumes: unknown[] = Array.isArray(given) ? given : [];
  const indices: number[] = [];
  volumes.forEach((v, i) => {
    if (isRec(v) && isPluginTokenVolume(v)) indices.push(i);
  });
  const removed = indices.map((i) => text(volumes[i] as Rec, 'name')!);
  if (removed.length === 0) return { ops: [], removed };
  const names = new Set(removed);
  const ops: PatchOperation[] = [];
  const removeAt = (path: string, name: string) => ops.push({ op: 'test', path: `${path}/name`, value: name }, { op: 'remove', path });
  for (const list of LISTS) {
    const containers = field(spec, list);
    if (!Array.isArray(containers)) continue;
    containers.forEach((c: unknown, ci) => {
      if (!isRec(c)) return;
      const mounts = field(c, 'volumeMounts');
      if (!Array.isArray(mounts)) return;
      for (let mi = mounts.length - 1; mi >= 0; mi--) {
        const m: unknown = mounts[mi];
        const name = isRec(m) ? text(m, 'name') : undefined;
        if (name !== undefined && names.has(name)) removeAt(`/spec/${list}/${ci}/volumeMounts/${mi}`, name);
      }
    });
  }
  for (const i of [...indices].reverse()) removeAt(`/spec/volumes/${i}`, removed[indices.indexOf(i)]!);
  return { ops, removed };
}

/** A projected volume source that hands out a service-account token, with its audience. */
export interface TokenSource {
  volume: string;
  audience: string | undefined;
}

/** Every source of the pod's projected volumes, with its volume's name and place. */
function projectedSources(spec: Rec): Array<{ volume: string; index: number; source: Rec }> {
  return recs(field(spec, 'volumes')).flatMap((v, index) => {
    const projected = field(v, 'projected');
    return isRec(projected) ? recs(field(projected, 'sources')).map((source) => ({ volume: text(v, 'name') ?? '', index, source })) : [];
  });
}

/** The signer whose pod certificates the API server accepts as the pod's service account (Kubernetes 1.35+, PodCertificateRequest). */
export const API_CLIENT_POD_SIGNER = 'kubernetes.io/kube-apiserver-client-pod';

/** The volumes with a projected `podCertificate` from API_CLIENT_POD_SIGNER: the kubelet writes the pod a client credential of its service account. */
export function apiClientCertificateVolumes(spec: Rec): string[] {
  const volumes = projectedSources(spec).filter(({ source }) => {
    const cert = field(source, 'podCertificate');
    return isRec(cert) && text(cert, 'signerName') === API_CLIENT_POD_SIGNER;
  });
  // Each volume once, however many of its sources ask.
  return volumes.filter((s, i) => i === 0 || volumes[i - 1]!.index !== s.index).map((s) => s.volume);
}

/** Every projected serviceAccountToken source in the pod's volumes. */
export function tokenSources(spec: Rec): TokenSource[] {
  return projectedSources(spec).flatMap(({ volume, source }) => {
    const token = field(source, 'serviceAccountToken');
    if (token === undefined || token === null) return [];
    const audience = isRec(token) ? text(token, 'audience') : undefined;
    return [{ volume, audience: audience === '' ? undefined : audience }];
  });
}
