// Every form a pod names a ConfigMap in: configMap volumes and projected sources, env
// configMapKeyRef and envFrom configMapRef in every container kind. Judged with the
// Secrets a pod names (named-references.ts); the well-known ConfigMaps a cluster component
// puts in every namespace are exempt by name there (policy template.wellKnownConfigMaps).
import type { Policy } from '../policy.js';
import type { NamedReference } from './reference-owner.js';
import { containers } from './spec.js';
import { field, isRec, recs, text, type Rec } from '../unstructured.js';

/** A ConfigMap every pod may name whoever's it is (`template.wellKnownConfigMaps`): a cluster component keeps it in every namespace. */
export function isWellKnownConfigMap(name: string, policy: Policy): boolean {
  return policy.config.template.wellKnownConfigMaps.includes(name);
}

/** Every ConfigMap a pod spec names; `at` is the spec's field path (`spec` for a Pod). */
export function podConfigMaps(spec: Rec, at: string): NamedReference[] {
  const out: NamedReference[] = [];
  const add = (ref: unknown, path: string, subject: string) => {
    const name = isRec(ref) ? text(ref, 'name') : undefined;
    if (name !== undefined && name !== '') out.push({ kind: 'ConfigMap', name, path, subject });
  };
  for (const v of recs(field(spec, 'volumes'))) {
    const name = text(v, 'name') ?? '';
    const vp = `${at}.volumes[name=${name}]`;
    add(field(v, 'configMap'), `${vp}.configMap.name`, `volume "${name}" mounts`);
    const projected = field(v, 'projected');
    if (isRec(projected)) recs(field(projected, 'sources')).forEach((s, i) => add(field(s, 'configMap'), `${vp}.projected.sources[${i}].configMap.name`, `volume "${name}" projects`));
  }
  for (const c of containers(spec, at)) {
    for (const e of recs(field(c.spec, 'env'))) {
      const from = field(e, 'valueFrom');
      if (isRec(from)) add(field(from, 'configMapKeyRef'), `${c.path}.env[name=${text(e, 'name') ?? ''}].valueFrom.configMapKeyRef.name`, `container "${c.name}" reads`);
    }
    recs(field(c.spec, 'envFrom')).forEach((e, i) => add(field(e, 'configMapRef'), `${c.path}.envFrom[${i}].configMapRef.name`, `container "${c.name}" reads`));
  }
  return out;
}
