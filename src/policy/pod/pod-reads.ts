// What a pod not yet bound to a node will read once it is: the claims it mounts, the Secrets
// and ConfigMaps it names, the ResourceClaims it names. A pod's names are judged at its
// CREATE, but until it is bound nothing holds them: the API server keeps a claim only for a
// scheduled pod (pvc-protection), a Secret or a ConfigMap never, so what its writer deletes
// meanwhile can be created again under that name by another environment, and the kubelet
// hands the pod that one. The binding is judged again on these names (rules/binding-reads.ts),
// read from the lookup cache, which keeps them for pending pods only (a bound pod is bound
// for good), so they cost memory only while a pod waits.
import { field, isRec, recs, text, type Rec } from '../unstructured.js';
import { podConfigMaps } from './configmap-references.js';
import { podSecrets } from './secret-references.js';
import type { PodReads } from '../policy.js';
import type { KubeObject } from '../../admission/types.js';
import { objectReferences } from '../object-references.js';

const PODS = { group: '', resource: 'pods' };

export type { PodReads };

/** The names a pod's spec reads once bound; undefined for a pod already bound (`spec.nodeName`), or one that names nothing. */
export function podReadsOf(spec: unknown): PodReads | undefined {
  // Only a pod's spec lists containers at its top (a workload's is under its template).
  if (!isRec(spec) || !Array.isArray(field(spec, 'containers'))) return undefined;
  const node = field(spec, 'nodeName');
  if (typeof node === 'string' && node !== '') return undefined;
  const reads: PodReads = {
    claims: distinct(recs(field(spec, 'volumes')).map((v) => claimName(v))),
    secrets: distinct(podSecrets(spec, 'spec').map((r) => r.name)),
    configMaps: distinct(podConfigMaps(spec, 'spec').map((r) => r.name)),
    // As the kind table names them (a pod's row, `references`): the table's and the binding's cannot part.
    resourceClaims: distinct(objectReferences(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec } as KubeObject).filter((r) => r.group === 'resource.k8s.io' && r.kind === 'ResourceClaim').map((r) => r.name)),
  };
  return reads.claims.length + reads.secrets.length + reads.configMaps.length + reads.resourceClaims.length === 0 ? undefined : reads;
}

/** A volume's claim by name (an ephemeral volume's claim is made for the pod, owned by it, by the ephemeral-volume controller). */
function claimName(volume: Rec): string | undefined {
  const pvc = field(volume, 'persistentVolumeClaim');
  return isRec(pvc) ? text(pvc, 'claimName') : undefined;
}

function distinct(names: Array<string | undefined>): string[] {
  return [...new Set(names.filter((n): n is string => n !== undefined && n !== ''))];
}
