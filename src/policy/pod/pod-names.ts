// What a pod's spec names, worked out once per review (issue 37): the claims it mounts,
// clones or restores (claim-environment.ts) and the Secrets and ConfigMaps it names
// (named-references.ts). The read plan asks for them on the pod as it arrived; the judgement
// of a CREATE the mutating webhook judges whole asks on the pod as Deed's patch leaves it,
// which differs only in what names nothing (stamps, a deadline, the token automount) and in
// the service-account token volumes it takes out (pod/service-account-token.ts): the
// judged pod's names are the arrived pod's but those volumes', derived, not walked again.
import { podClaims, type ClaimReference } from './claim-environment.js';
import { podReferences } from './named-references.js';
import type { NamedReference } from './reference-owner.js';
import { field, isRec, text, type Rec } from '../unstructured.js';

export interface PodNames {
  claims: ClaimReference[];
  references: NamedReference[];
}

/** The names a pod spec (at `spec`) gives. */
export function podNames(spec: Rec): PodNames {
  return { claims: podClaims(spec, 'spec'), references: podReferences(spec, 'spec') };
}

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

/**
 * The names of `after`, a spec made from `before` (whose names are `names`) by taking some of
 * its volumes out and copying what lies along the way, derived from `names`; undefined when
 * `after` differs in anything else a name is read from, or when which names a taken-out
 * volume gave cannot be told by their paths (then the caller walks `after`).
 */
export function namesAfter(before: Rec, names: PodNames, after: Rec): PodNames | undefined {
  if (field(before, 'imagePullSecrets') !== field(after, 'imagePullSecrets')) return undefined;
  // The containers: the same, or copies with the same name, env and envFrom (a mount taken out).
  for (const list of CONTAINER_LISTS) {
    const was = field(before, list);
    const is = field(after, list);
    if (was === is) continue;
    if (!Array.isArray(was) || !Array.isArray(is) || was.length !== is.length) return undefined;
    for (let i = 0; i < was.length; i++) {
      const a: unknown = was[i];
      const b: unknown = is[i];
      if (a === b) continue;
      if (!isRec(a) || !isRec(b) || (['name', 'env', 'envFrom'] as const).some((k) => field(a, k) !== field(b, k))) return undefined;
    }
  }
  const was = field(before, 'volumes');
  const is = field(after, 'volumes');
  if (was === is) return names;
  if (!Array.isArray(was) || !(Array.isArray(is) || is === undefined)) return undefined;
  // The volumes: `before`'s in order, some taken out, none changed.
  const kept = new Set<unknown>(is ?? []);
  let at = 0;
  for (const v of was) if (at < (is?.length ?? 0) && is![at] === v) at++;
  if (at !== (is?.length ?? 0)) return undefined;
  const volumeNames = was.map((v: unknown) => (isRec(v) ? (text(v, 'name') ?? '') : undefined));
  const prefixes: string[] = [];
  for (const [i, v] of was.entries()) {
    if (kept.has(v)) continue;
    const name = volumeNames[i];
    if (name === undefined) continue; // not a volume: it named nothing
    // Its names are told by their path only if no other volume's path begins the same.
    const prefix = `spec.volumes[name=${name}].`;
    if (volumeNames.some((other, j) => j !== i && other !== undefined && `spec.volumes[name=${other}].`.startsWith(prefix))) return undefined;
    prefixes.push(prefix);
  }
  const stays = (r: { path: string }) => !prefixes.some((p) => r.path.startsWith(p));
  return { claims: names.claims.filter(stays), references: names.references.filter(stays) };
}
