// The Secrets and ConfigMaps a pod names, judged alike: the kubelet hands either's data to
// any pod that names it, whoever created the pod, so a pod may name only what its
// requester's environment may reach (reference-owner.ts). A Secret holds credentials; a
// ConfigMap holds the scripts and settings a sandbox runs, which another environment's pod
// must neither read nor take over by name. The forms each is named in are listed in
// secret-references.ts and configmap-references.ts.
//
// `optional: true` changes nothing here: it tells the kubelet to start the container
// without the object, and take it when it appears (a volume is refreshed), so an optional
// reference to another environment's object reads it all the same, and one to an object
// that does not exist yet takes whatever is created under that name later.
import type { Finding } from '../../admission/verdict.js';
import type { LookupResource } from '../kinds.js';
import type { DecisionContext, Policy } from '../policy.js';
import { MAX_CONFIGMAP_LOOKUPS, MAX_SECRET_LOOKUPS } from '../read-bounds.js';
import { RULES } from '../rules/catalog.js';
import { isWellKnownConfigMap, podConfigMaps } from './configmap-references.js';
import { judgeReference, whoMayNot, type NamedReference, type Reach, type ReferencedKind } from './reference-owner.js';
import { podSecrets } from './secret-references.js';
import { isRec, type Rec } from '../unstructured.js';

interface ReferencedRow {
  resource: LookupResource;
  /** The most distinct names of one pod the read plan reads (reads.ts): past them the rest cannot be told. */
  max: number;
  rules: { crossEnvironment: string; unknown: string; absent: string };
  /** A name every pod may use whoever's it is (a ConfigMap a cluster component puts in every namespace). */
  exempt(name: string, policy: Policy): boolean;
}

const REFERENCED: Readonly<Record<ReferencedKind, ReferencedRow>> = {
  Secret: {
    resource: 'secrets',
    max: MAX_SECRET_LOOKUPS,
    rules: { crossEnvironment: RULES.secretRefCrossEnvironment.id, unknown: RULES.secretRefUnknown.id, absent: RULES.secretRefAbsent.id },
    exempt: () => false,
  },
  ConfigMap: {
    resource: 'configmaps',
    max: MAX_CONFIGMAP_LOOKUPS,
    rules: { crossEnvironment: RULES.configMapRefCrossEnvironment.id, unknown: RULES.configMapRefUnknown.id, absent: RULES.configMapRefAbsent.id },
    exempt: isWellKnownConfigMap,
  },
};

/** The resource a referenced kind is looked up as. */
export function referencedResource(kind: ReferencedKind): LookupResource {
  return REFERENCED[kind].resource;
}

/** A name no rule judges (a well-known ConfigMap): nothing is read for it. */
export function isExemptReference(kind: ReferencedKind, name: string, policy: Policy): boolean {
  return REFERENCED[kind].exempt(name, policy);
}

/** Every Secret and ConfigMap a pod spec names; `at` is the spec's field path (`spec` for a Pod). */
export function podReferences(spec: Rec, at: string): NamedReference[] {
  return [...podSecrets(spec, at), ...podConfigMaps(spec, at)];
}

const objectKey = (r: Pick<NamedReference, 'kind' | 'name'>) => `${r.kind}/${r.name}`;

/** The distinct names of one kind, in first-seen order. */
export function referencedNamesOf(refs: NamedReference[], kind: ReferencedKind): string[] {
  return [...new Set(refs.filter((r) => r.kind === kind).map((r) => r.name))];
}

/** The references of the new spec to objects the old one did not name (an ephemeral container added). */
export function addedReferences(oldSpec: unknown, newSpec: unknown): NamedReference[] {
  const before = new Set(isRec(oldSpec) ? podReferences(oldSpec, 'spec').map(objectKey) : []);
  return isRec(newSpec) ? podReferences(newSpec, 'spec').filter((r) => !before.has(objectKey(r))) : [];
}

/**
 * Each object named once: the first reference to it speaks for all (one lookup, one finding).
 * Past the names of a kind the read plan reads (`max`), the rest are one finding: a pod naming
 * thousands would otherwise cost a judgement and a message each, and every review behind it
 * would wait (a 1.7 MiB pod naming 50,000 took some 700 ms of the event loop).
 */
export function referenceFindings(refs: NamedReference[], namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const findings: Finding[] = [];
  const judged = new Set<string>();
  const counted: Record<ReferencedKind, number> = { Secret: 0, ConfigMap: 0 };
  const past: Partial<Record<ReferencedKind, NamedReference>> = {};
  for (const ref of refs) {
    // Past its kind's bound, a name is not looked at: a pod's Secrets come before its ConfigMaps, thousands of each.
    if (past[ref.kind] !== undefined) continue;
    const key = objectKey(ref);
    if (judged.has(key)) continue;
    judged.add(key);
    const row = REFERENCED[ref.kind];
    if (row.exempt(ref.name, ctx.policy)) continue;
    if (++counted[ref.kind] > row.max) {
      past[ref.kind] = ref;
      continue;
    }
    const what = `${ref.kind} ${ref.name}`;
    const verdict = judgeReference(ctx.lookup.get(row.resource, namespace, ref.name), ref.kind, namespace, reach, ctx);
    if (verdict.kind === 'allowed') continue;
    if (verdict.kind === 'unknown') findings.push({ rule: row.rules.unknown, path: ref.path, message: `cannot tell which environment ${what} belongs to: ${verdict.reason}` });
    else if (verdict.kind === 'unverifiable')
      findings.push({ rule: row.rules.unknown, path: ref.path, message: `${what} carries Deed's stamps but they do not verify (${verdict.reason}), so its environment is unknown` });
    else if (verdict.kind === 'absent')
      findings.push({
        rule: row.rules.absent,
        path: ref.path,
        message: `${what} does not exist; create it first, or a ${ref.kind} another environment creates under that name later would be used`,
      });
    else findings.push({ rule: row.rules.crossEnvironment, path: ref.path, message: `${ref.subject} ${what}, which belongs to another environment; ${whoMayNot(reach)}` });
  }
  for (const [kind, first] of Object.entries(past) as Array<[ReferencedKind, NamedReference]>) {
    const { max, rules } = REFERENCED[kind];
    findings.push({ rule: rules.unknown, path: first.path, message: `this names more than ${max} ${kind}s, and Deed reads at most ${max} for one object, so which environment the rest belong to cannot be told (${kind} ${first.name} the first of them): name at most ${max}` });
  }
  return findings;
}
