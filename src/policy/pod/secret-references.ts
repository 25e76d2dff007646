// Secrets by reference, guarded like claims: the kubelet hands a Secret's data to any pod
// that names it, whoever created the pod, so a pod may name only Secrets its requester's
// environment may reach (reference-owner.ts). Every form a pod names a Secret in: secret
// and projected volumes, CSI and the in-tree volume plugins' secretRefs, env secretKeyRef
// and envFrom secretRef in every container kind, imagePullSecrets.
//
// `optional: true` changes nothing here: it tells the kubelet to start the container
// without the Secret, and take it when it appears (a volume is refreshed), so an optional
// reference to another environment's Secret reads it all the same, and one to a Secret
// that does not exist yet takes whatever is created under that name later.
import type { Finding } from '../../admission/verdict.js';
import type { DecisionContext } from '../policy.js';
import { RULES } from '../rules/catalog.js';
import { judgeReference, whoMayNot, type Reach } from './reference-owner.js';
import { containers } from './spec.js';
import { field, isRec, recs, text, type Rec } from '../unstructured.js';

export interface SecretReference {
  secret: string;
  /** The field that names the Secret. */
  path: string;
  /** What the reference does, for messages: `volume "creds" mounts`. */
  subject: string;
}

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
export function podSecrets(spec: Rec, at: string): SecretReference[] {
  const out: SecretReference[] = [];
  const add = (secret: string | undefined, path: string, subject: string) => {
    if (secret !== undefined && secret !== '') out.push({ secret, path, subject });
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

/** The distinct Secret names, in first-seen order. */
export function secretNames(refs: SecretReference[]): string[] {
  return [...new Set(refs.map((r) => r.secret))];
}

/** Secrets the new spec names that the old one did not (an ephemeral container added). */
export function addedSecrets(oldSpec: unknown, newSpec: unknown): string[] {
  const before = new Set(isRec(oldSpec) ? podSecrets(oldSpec, 'spec').map((r) => r.secret) : []);
  return isRec(newSpec) ? secretNames(podSecrets(newSpec, 'spec')).filter((s) => !before.has(s)) : [];
}

/** Each Secret named once: the first reference to it speaks for all (one lookup, one finding). */
export function secretReferences(refs: SecretReference[], namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const findings: Finding[] = [];
  const judged = new Set<string>();
  for (const ref of refs) {
    if (judged.has(ref.secret)) continue;
    judged.add(ref.secret);
    const verdict = judgeReference(ctx.lookup.get('secrets', namespace, ref.secret), 'Secret', namespace, reach, ctx);
    if (verdict.kind === 'allowed') continue;
    if (verdict.kind === 'unknown')
      findings.push({ rule: RULES.secretRefUnknown.id, path: ref.path, message: `cannot tell which environment Secret ${ref.secret} belongs to: ${verdict.reason}` });
    else if (verdict.kind === 'unverifiable')
      findings.push({ rule: RULES.secretRefUnknown.id, path: ref.path, message: `Secret ${ref.secret} carries Deed's stamps but they do not verify (${verdict.reason}), so its environment is unknown` });
    else if (verdict.kind === 'absent')
      findings.push({
        rule: RULES.secretRefAbsent.id,
        path: ref.path,
        message: `Secret ${ref.secret} does not exist; create it first, or a Secret another environment creates under that name later would be used`,
      });
    else findings.push({ rule: RULES.secretRefCrossEnvironment.id, path: ref.path, message: `${ref.subject} Secret ${ref.secret} of environment "${verdict.environment}"; ${whoMayNot(reach)}` });
  }
  return findings;
}
