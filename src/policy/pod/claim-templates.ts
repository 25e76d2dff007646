// Claim templates: an ephemeral volume's `volumeClaimTemplate` (the ephemeral-volume
// controller creates the claim `<pod>-<volume>` from it, copying its labels and
// annotations) and a StatefulSet's `volumeClaimTemplates`. The controllers act unreviewed,
// so whatever a template's metadata carries, the claim carries: no requester may write
// Deed's stamps there. Deed writes them itself into a sandbox pod's ephemeral templates,
// so the claims its volumes produce belong to the pod's environment. The attestation
// cannot cover the claim's name (the controller picks it); what makes the stamps
// trustworthy is that only Deed writes them, for the environment of the pod's requester.
import type { Finding, PatchOperation } from '../../admission/verdict.js';
import type { RunnerPod } from '../requester/identity.js';
import { signStamps, type KeyRing } from '../stamps/key-ring.js';
import type { StampKeys } from '../stamps/keys.js';
import type { SandboxKind } from '../kinds.js';
import type { Policy } from '../policy.js';
import { ownershipOf } from '../ownership.js';
import { RULES } from '../rules/catalog.js';
import { stampIntegrity } from '../rules/stamp-integrity.js';
import { annotationPath, identityStamps, presentOwnedKeys } from '../stamps/identity-stamps.js';
import { entryOf, field, isRec, stringMap, text, type Rec } from '../unstructured.js';

/** What a claim template's claim is stamped as. */
export const CLAIM_KIND: SandboxKind = { kind: 'PersistentVolumeClaim', ownerReference: false, activeDeadline: false, expiresAt: false };

export interface EphemeralTemplate {
  /** Index in spec.volumes: the mutating side patches by index. */
  index: number;
  volume: string;
  /** The template's metadata, when it has one. */
  metadata: Rec | undefined;
  /** `spec.volumes[name=ws].ephemeral.volumeClaimTemplate`. */
  at: string;
}

export function ephemeralTemplates(spec: Rec, at: string): EphemeralTemplate[] {
  const out: EphemeralTemplate[] = [];
  const volumes = field(spec, 'volumes');
  (Array.isArray(volumes) ? volumes : []).forEach((v: unknown, index) => {
    if (!isRec(v)) return;
    const ephemeral = field(v, 'ephemeral');
    const template = isRec(ephemeral) ? field(ephemeral, 'volumeClaimTemplate') : undefined;
    if (!isRec(template)) return;
    const volume = text(v, 'name') ?? '';
    const metadata = field(template, 'metadata');
    out.push({ index, volume, metadata: isRec(metadata) ? metadata : undefined, at: `${at}.volumes[name=${volume}].ephemeral.volumeClaimTemplate` });
  });
  return out;
}

function asObject(metadata: Rec | undefined) {
  return { metadata: { labels: stringMap(metadata, 'labels'), annotations: stringMap(metadata, 'annotations') } };
}

/** Deed's stamps in a template's metadata (at `at`, the template's path), which Deed did not write: refused from every requester. */
export function foreignTemplateStamps(metadata: Rec | undefined, at: string, keys: StampKeys, why: string): Finding[] {
  const { labels, annotations } = asObject(metadata).metadata;
  return presentOwnedKeys(labels, annotations, keys).map((k) => ({
    rule: RULES.stampTemplate.id,
    path: `${at}.${k.path}`,
    message: `${k.name} is admission-owned; ${why}`,
  }));
}

/**
 * The terminal mark in a template's metadata (a pod template, a claim template, an ephemeral
 * volume's, a ResourceClaimTemplate's), whoever writes it and however the template is
 * stamped: every object made from it would be born finished, and the reaper deletes each as
 * its controller makes it.
 */
export function templateTerminalMark(metadata: Rec | undefined, at: string, keys: StampKeys): Finding[] {
  if (entryOf(stringMap(metadata, 'annotations'), keys.terminal) === undefined) return [];
  return [
    {
      rule: RULES.stampTemplate.id,
      path: `${at}.${annotationPath(keys.terminal)}`,
      message: `${keys.terminal} marks one finished object; in a template every object made from it would be born finished, and the reaper deletes each as it is made: set it on the object, not its template`,
    },
  ];
}

/** The admission-owned keys a template's metadata carries, with their values. */
export function ownedStamps(metadata: Rec | undefined, keys: StampKeys): Record<string, string> {
  const { labels, annotations } = asObject(metadata).metadata;
  const out: Record<string, string> = {};
  for (const k of presentOwnedKeys(labels, annotations, keys)) out[k.path] = k.path.startsWith('metadata.labels') ? labels[k.name]! : annotations[k.name]!;
  return out;
}

/** The environment a sandbox pod's ephemeral claims are stamped for. */
export interface ClaimOwner {
  environment: string;
  runner: RunnerPod | undefined;
  namespace: string;
}

/**
 * Whether a template's stamps are the ones Deed writes for `owner`: they name it and
 * verify as a claim of the namespace. On reinvocation the mutating side finds its own.
 */
export function isOwnTemplateStamps(metadata: Rec | undefined, owner: ClaimOwner, policy: Policy, ring: KeyRing, nowMs: number): boolean {
  return stampIntegrity(asObject(metadata), CLAIM_KIND, owner.namespace, owner.environment, owner.runner, policy, ring, nowMs).length === 0;
}


/**
 * At the validating side: every ephemeral template of an environment's pod carries
 * exactly the stamps Deed writes for it (absent: the mutating webhook was bypassed).
 * `anyRunner`: a controller-made pod's, whose templates keep the stamps Deed wrote at the
 * workload's door, for its environment and the runner that created the workload.
 */
export function ephemeralStampIntegrity(spec: Rec, at: string, owner: ClaimOwner, policy: Policy, ring: KeyRing, nowMs: number, anyRunner = false): Finding[] {
  return ephemeralTemplates(spec, at).flatMap((t) => [
    ...templateTerminalMark(t.metadata, t.at, policy.keys),
    ...(anyRunner && stampedFor(t.metadata, owner.environment, owner.namespace, policy, ring)
      ? []
      : stampIntegrity(asObject(t.metadata), CLAIM_KIND, owner.namespace, owner.environment, owner.runner, policy, ring, nowMs).map((f) => ({
          ...f,
          path: f.path === undefined ? `${t.at}.metadata` : `${t.at}.${f.path}`,
        }))),
  ]);
}

/** The metadata Deed writes into an ephemeral template: the given labels and annotations plus the claim's stamps. */
export function stampedTemplateMetadata(metadata: Rec | undefined, owner: ClaimOwner, keys: StampKeys, ring: KeyRing, nonce: string): { labels: Record<string, string>; annotations: Record<string, string> } {
  const identity = identityStamps(keys, owner.environment, owner.runner, CLAIM_KIND, owner.namespace);
  const labels = stringMap(metadata, 'labels');
  for (const [k, v] of Object.entries(identity.labels)) if (v !== undefined) labels[k] = v;
  const annotations = stringMap(metadata, 'annotations'); // a fresh map of its own
  annotations[keys.createNonce] = nonce;
  if (identity.owner !== undefined) annotations[keys.owner] = identity.owner;
  annotations[keys.attestation] = signStamps(ring, {
    kind: CLAIM_KIND.kind,
    namespace: owner.namespace,
    environment: owner.environment,
    ownerUid: owner.runner?.uid,
    owner: identity.owner,
    nonce,
  });
  return { labels, annotations };
}

/**
 * Whether a template's stamps are Deed's for a claim of `environment` in the namespace
 * (any principal of it: a workload's template is stamped by whoever last wrote it).
 */
export function stampedFor(metadata: Rec | undefined, environment: string, namespace: string, policy: Policy, ring: KeyRing): boolean {
  const owner = ownershipOf({ kind: CLAIM_KIND.kind, namespace, metadata: asObject(metadata).metadata }, policy, ring);
  return owner.kind === 'stamped' && owner.environment === environment;
}

/**
 * The mutating side: Deed's stamps written into each ephemeral template of the pod spec
 * at `at` (`spec`, `spec.template.spec`), a fresh nonce each, as JSON Patch ops; a
 * template whose stamps `keep` accepts as Deed's own (a reinvocation) is left alone; any
 * other stamp in a template is the client's, refused.
 */
export function ephemeralStampOps(
  spec: Rec,
  at: string,
  owner: ClaimOwner,
  keep: (metadata: Rec | undefined) => boolean,
  keys: StampKeys,
  ring: KeyRing,
  mintNonce: () => string,
): { ops: PatchOperation[]; findings: Finding[] } {
  const ops: PatchOperation[] = [];
  const findings: Finding[] = [];
  // A field path of fixed names (spec.template.spec): no character a pointer escapes.
  const pointer = `/${at.split('.').join('/')}`;
  for (const t of ephemeralTemplates(spec, at)) {
    const { labels, annotations } = asObject(t.metadata).metadata;
    if (presentOwnedKeys(labels, annotations, keys).length > 0) {
      if (!keep(t.metadata)) findings.push(...foreignTemplateStamps(t.metadata, t.at, keys, 'Deed writes the stamps of an ephemeral claim itself'));
      continue;
    }
    const stamped = stampedTemplateMetadata(t.metadata, owner, keys, ring, mintNonce());
    const base = `${pointer}/volumes/${t.index}`;
    ops.push({ op: 'test', path: `${base}/name`, value: t.volume });
    const metadata = `${base}/ephemeral/volumeClaimTemplate/metadata`;
    if (t.metadata === undefined) ops.push({ op: 'add', path: metadata, value: stamped });
    else ops.push({ op: 'add', path: `${metadata}/labels`, value: stamped.labels }, { op: 'add', path: `${metadata}/annotations`, value: stamped.annotations });
  }
  return { ops, findings };
}
