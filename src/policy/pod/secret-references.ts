// Every form a pod names a Secret in: secret and projected volumes, CSI and the in-tree
// volume plugins' secretRefs, env secretKeyRef and envFrom secretRef in every container
// kind, imagePullSecrets. Judged with the ConfigMaps a pod names (named-references.ts).
import type { NamedReference } from './reference-owner.js';
import { containers } from './spec.js';
import { field, isRec, recs, text, type Rec } from '../unstructured.js';

/** In-tree volume sources that name a Secret of the pod's namespace, and the field that does. */
const VOLUME_SECRET_REFS: ReadonlyArray<readonly [source: string, field: string, nested: boolean]> = [
  ['secret', 'secretName', false],
  ['csi', 'nodePublishSecretRef', true],
  ['azureFile', 'secretName', false],
  ['cephfs', 'secretRef', true],
  ['cinder', 'secretRef', true],
  ['flexVolume', 'secretRef', true],
  ['iscsi', 'secretRef', true],
  ['rbd', 'secretRef', true],
  ['scaleIO', 'secretRef', true],
  ['storageos', 'secretRef', true],
];

/** Every Secret a pod spec names; `at` is the spec's field path (`spec` for a Pod). */
export function podSecrets(spec: Rec, at: string): NamedReference[] {
  const out: NamedReference[] = [];
  const add = (name: string | undefined, path: string, subject: string) => {
    if (name !== undefined && name !== '') out.push({ kind: 'Secret', name, path, subject });
  };
  for (const v of recs(field(spec, 'volumes'))) {
    const name = text(v, 'name') ?? '';
    const vp = `${at}.volumes[name=${name}]`;
    for (const [source, key, nested] of VOLUME_SECRET_REFS) {
      const src = field(v, source);
      if (!isRec(src)) continue;
      const ref = field(src, key);
      add(nested ? (isRec(ref) ? text(ref, 'name') : undefined) : typeof ref === 'string' ? ref : undefined, `${vp}.${source}.${key}${nested ? '.name' : ''}`, `volume "${name}" mounts`);
    }
    const projected = field(v, 'projected');
    if (isRec(projected))
      recs(field(projected, 'sources')).forEach((s, i) => {
        const secret = field(s, 'secret');
        if (isRec(secret)) add(text(secret, 'name'), `${vp}.projected.sources[${i}].secret.name`, `volume "${name}" projects`);
      });
  }
  for (const c of containers(spec, at)) {
    const cp = c.path;
    for (const e of recs(field(c.spec, 'env'))) {
      const from = field(e, 'valueFrom');
      const ref = isRec(from) ? field(from, 'secretKeyRef') : undefined;
      if (isRec(ref)) add(text(ref, 'name'), `${cp}.env[name=${text(e, 'name') ?? ''}].valueFrom.secretKeyRef.name`, `container "${c.name}" reads`);
    }
    recs(field(c.spec, 'envFrom')).forEach((e, i) => {
      const ref = field(e, 'secretRef');
      if (isRec(ref)) add(text(ref, 'name'), `${cp}.envFrom[${i}].secretRef.name`, `container "${c.name}" reads`);
    });
  }
  recs(field(spec, 'imagePullSecrets')).forEach((s, i) => add(text(s, 'name'), `${at}.imagePullSecrets[${i}].name`, 'the pod pulls its images with'));
  return out;
}
