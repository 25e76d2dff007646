// The stamps of a new object (docs/concepts.md, "The mutating webhook"): ownership stamped onto
// a sandbox object at CREATE, into a sandbox pod's ephemeral claim templates (so the claims the
// ephemeral-volume controller makes are its environment's), and service-account token
// automount turned off on sandbox pods that leave it unset, taking out the token the API
// server already mounted; as a patch, or the findings that refuse the object. The doors that
// stamp (src/policy/doors/) call it. Object in, patch and verdict out; no I/O.
import { copyRec, entryOf, isRec } from './unstructured.js';
import jsonpatch from 'fast-json-patch';
import type { AdmissionRequest, KubeObject, OwnerReference } from '../admission/types.js';
import { allowed, patched, type Finding, type PatchOperation, type Verdict } from '../admission/verdict.js';
import { enforce } from './rules/enforcement.js';
import { readStamps } from './stamps/attestation.js';
import { budgetAsLabel, expiresAt, isFreshExpiry, policyDeadline } from './stamps/deadline.js';
import { createIdentity, type CreateGate } from './create-gate.js';
import type { Requester } from './requester/identity.js';
import type { ReviewFacts } from './review-facts.js';
import { signStamps, verifyStamps, type KeyRing } from './stamps/key-ring.js';
import type { StampKeys } from './stamps/keys.js';
import type { StampRow } from './kinds.js';
import { annotationPath, identityStamps, labelPath, sameReference } from './stamps/identity-stamps.js';
import { isWellFormedNonce, mintNonce } from './stamps/nonce.js';
import type { DecisionContext } from './policy.js';
import { RULES } from './rules/catalog.js';
import { tokenVolumeRemoval } from './pod/service-account-token.js';
import { noEnvironmentScope, scopeSelector } from './selector-scope.js';
import { ephemeralStampOps, isOwnTemplateStamps, stampedFor } from './pod/claim-templates.js';
import { noEnvironmentMark } from './rules/no-environment-mark.js';
import { runnerMarkOps } from './pod/runner-mark.js';
import { podAffinityScope } from './rules/affinity-scope.js';
import { keptOnUpdate } from './stamps/kept-stamps.js';

/**
 * The stamping of a door that carries a whole object (a stamped kind's, a default-row kind's):
 * `create`, at the CREATE of the object itself, once its body is of the door's kind.
 */
export function stampAtCreate(facts: ReviewFacts, ctx: DecisionContext, create: (namespace: string | undefined) => Verdict): Verdict {
  const req = facts.request;
  // Stamps are written once, at CREATE; UPDATE and DELETE are the validating side's, but for
  // the scope a selector was stored with, which an apply may drop (selector-scope.ts), and the
  // stamps themselves where a whole object replaces one without any (stamps/kept-stamps.ts).
  const kept = keptOnUpdate(req, ctx, facts.requester);
  if (kept !== undefined) return kept;
  if (req.operation !== 'CREATE' || req.subResource !== undefined) return allowed();
  const mismatch = facts.kindMismatch;
  if (mismatch) return enforce([mismatch], ctx.policy);
  return create(req.namespace);
}

/**
 * The stamps of a new object of `kind`, as a patch, or the findings that refuse it.
 * `given`: the requester's create gate on `obj` (review-facts.ts createGateOf), when the review has it.
 * `base`: the object as it arrived, when `obj` is what Deed stamps in its place (a
 * controller-made object without the stamps it carried).
 */
export function stampCreate(
  obj: KubeObject,
  kind: StampRow,
  namespace: string,
  req: AdmissionRequest,
  ctx: DecisionContext,
  requester: Requester,
  given: CreateGate | undefined,
  base: KubeObject = obj,
  controllerMade = false,
): Verdict {
  const { keys } = ctx.policy;
  const labels = obj.metadata.labels ?? {};
  const annotations = obj.metadata.annotations ?? {};

  // Every finding goes through the rules' modes, here as on the validating side: a gate
  // rule set to warn lets the object through, unstamped (it acts for no environment here).
  const gate = given ?? createIdentity(requester, namespace, labels, annotations, ctx.policy);
  if ('verdict' in gate) {
    const verdict = enforce(gate.verdict.findings, ctx.policy, gate.verdict.warnings);
    // Allowed, it acts for no environment here: its pods and selectors are marked as such.
    if (!verdict.allowed || controllerMade) return verdict;
    // A pod's affinity terms select pods of no environment only (rules/affinity-scope.ts).
    const affinity = kind.kind === 'Pod' ? podAffinityScope(obj, namespace, requester, undefined, ctx.policy).ops : [];
    if (requester.environment.kind === 'none') return patched([...noEnvironmentScope(obj, req.resource, namespace, requester, ctx.policy), ...affinity], verdict.warnings, verdict.auditAnnotations);
    // An environment's pod let through unstamped (a gate rule that only warns) that runs as a mapped account is a runner all the same.
    return kind.kind === 'Pod' ? patched([...runnerMarkOps(obj, namespace, ctx.policy), ...affinity], verdict.warnings, verdict.auditAnnotations) : verdict;
  }
  const { environment } = gate;

  const findings: Finding[] = [];
  const warnings: string[] = [];
  const runner = requester.runner;
  findings.push(...noEnvironmentMark(labels, '', keys, RULES.stampConflict.id, `an object of environment "${environment}" never carries it`));

  // Deadline from the client budget, the margin and the cap.
  const deadline = policyDeadline(entryOf(annotations, keys.maxDuration), ctx.policy.config.deadline);
  if (!deadline.ok) findings.push({ rule: RULES.budgetInvalid.id, path: annotationPath(keys.maxDuration), message: deadline.message });
  if (entryOf(labels, keys.maxDuration) !== undefined) findings.push({ rule: RULES.budgetInvalid.id, path: labelPath(keys.maxDuration), message: budgetAsLabel(keys.maxDuration) });
  let seconds = deadline.ok ? deadline.seconds : undefined;
  let activeDeadlineSeconds: number | undefined;
  if (kind.activeDeadline && seconds !== undefined) {
    const client = obj.spec?.activeDeadlineSeconds;
    if (typeof client === 'number' && Number.isInteger(client) && client > 0 && client <= seconds) {
      seconds = client; // a lower client value stands
    } else if (typeof client === 'number' && client > seconds) {
      warnings.push(`Deed lowered spec.activeDeadlineSeconds from ${client} to ${seconds} (budget + margin, capped by policy)`);
    }
    activeDeadlineSeconds = seconds;
  }

  // An attestation is accepted only when it is Deed's own, on reinvocation: it verifies
  // over the stamps the object carries, they name this requester, and they are what this
  // admission would write (a fresh expiry). A copy of another object's stamps carries an
  // older expiry, so its stamps are client values: conflicts, and a forged attestation.
  const expiryDue = kind.expiresAt && seconds !== undefined ? seconds : undefined;
  const givenAttestation = entryOf(annotations, keys.attestation);
  const ours =
    givenAttestation !== undefined &&
    isOwnReinvocation(obj, keys, kind, namespace, environment, requester, ctx.keyRing, givenAttestation, expiryDue, ctx.now());
  if (givenAttestation !== undefined && !ours)
    findings.push({ rule: RULES.attestationForged.id, path: annotationPath(keys.attestation), message: 'is admission-owned and signed by Deed; a client value is never accepted' });

  const givenNonce = entryOf(annotations, keys.createNonce);
  if (givenNonce !== undefined && !isWellFormedNonce(givenNonce))
    findings.push({ rule: RULES.nonceMalformed.id, path: annotationPath(keys.createNonce), message: `must be 64 lowercase hex characters, got ${quote(givenNonce)}` });
  const nonce = givenNonce !== undefined && isWellFormedNonce(givenNonce) ? givenNonce : mintNonce(ctx.randomBytes);

  const identity = identityStamps(keys, environment, runner, kind, namespace);
  const wantLabels = identity.labels;
  const givenExpiry = entryOf(annotations, keys.expiresAt);
  const expiry = expiryDue === undefined ? undefined : ours && givenExpiry !== undefined ? givenExpiry : expiresAt(ctx.now(), expiryDue);
  const wantAnnotations: Record<string, string | undefined> = {
    [keys.owner]: identity.owner,
    [keys.expiresAt]: expiry,
  };
  for (const [key, want] of Object.entries(wantLabels)) checkOwned(findings, labelPath(key), key, entryOf(labels, key), want);
  for (const [key, want] of Object.entries(wantAnnotations)) checkOwned(findings, annotationPath(key), key, entryOf(annotations, key), want);

  const ownerRef = identity.ownerReference;
  const refs = obj.metadata.ownerReferences ?? [];
  const sameUid = ownerRef ? refs.find((r) => r.uid === ownerRef.uid) : undefined;
  if (ownerRef && sameUid && !sameReference(sameUid, ownerRef))
    findings.push({
      rule: RULES.stampConflict.id,
      path: 'metadata.ownerReferences',
      message: `the reference with uid ${ownerRef.uid} must be ${JSON.stringify(ownerRef)}, got ${JSON.stringify({ apiVersion: sameUid.apiVersion, kind: sameUid.kind, name: sameUid.name, uid: sameUid.uid })}`, // only the compared fields: the rest may be huge
    });

  // The claims a sandbox pod's ephemeral volumes produce are its environment's.
  const ephemeral =
    kind.kind === 'Pod' && isRec(obj.spec)
      ? ephemeralStampOps(
          obj.spec,
          'spec',
          { environment, runner, namespace },
          (m) =>
            isOwnTemplateStamps(m, { environment, runner, namespace }, ctx.policy, ctx.keyRing, ctx.now()) ||
            (controllerMade && stampedFor(m, environment, namespace, ctx.policy, ctx.keyRing)),
          keys,
          ctx.keyRing,
          () => mintNonce(ctx.randomBytes),
        )
      : { ops: [], findings: [] };
  findings.push(...ephemeral.findings);
  // An environment's selectors select only its own pods (selector-scope.ts).
  const scoped = scopeSelector(obj, req.resource, environment, ctx.policy);
  findings.push(...scoped.findings);
  // And so do a pod's affinity terms (rules/affinity-scope.ts); a controller-made pod's are its template's, judged when written.
  const affinity = kind.kind === 'Pod' && !controllerMade ? podAffinityScope(obj, namespace, requester, environment, ctx.policy) : { ops: [], findings: [] };
  findings.push(...affinity.findings);

  // The stamping's findings are conflicts with what Deed writes; an object stamped without
  // one has nothing to enforce here but Deed's own warnings, and its findings as stamped are
  // the judgement's to enforce (once, for /admit: create-judgement.ts).
  const enforced = findings.length === 0 ? allowed(warnings) : enforce(findings, ctx.policy, warnings);
  if (!enforced.allowed) return enforced;

  // Deed's own reinvocation keeps its attestation: it may come from a replica that still
  // signs with the previous key of a rotation, and re-signing would only churn the object.
  const attestation = ours ? givenAttestation : signStamps(ctx.keyRing, {
    kind: kind.kind,
    namespace,
    environment,
    ownerUid: runner?.uid,
    owner: identity.owner,
    nonce,
    expiresAt: expiry,
    runLease: entryOf(annotations, keys.runLease),
  });
  const newLabels = withValues(labels, wantLabels);
  const newAnnotations = withValues(annotations, wantAnnotations, { [keys.createNonce]: nonce, [keys.attestation]: attestation });
  const newRefs = ownerRef && !sameUid ? [...refs, ownerRef] : refs;
  const spec: Record<string, unknown> = {};
  if (kind.activeDeadline && activeDeadlineSeconds !== undefined) spec.activeDeadlineSeconds = activeDeadlineSeconds;
  // "Automount off" made true: a pod that leaves the field unset already carries the
  // ServiceAccount plugin's token volume and mounts. They come out and the field is set,
  // so the stored pod is what it would have been had the client said false.
  const automountOff = kind.kind === 'Pod' && isRec(obj.spec) && !ctx.policy.config.template.automountServiceAccountToken && !Object.hasOwn(obj.spec, 'automountServiceAccountToken');
  if (automountOff) spec.automountServiceAccountToken = false;
  const tokenOps = automountOff ? tokenVolumeRemoval(obj.spec!).ops : [];
  // The template ops first: they address volumes by their index before the token volume comes out.
  return patched([...ephemeral.ops, ...tokenOps, ...scoped.ops, ...affinity.ops, ...stampPatch(base, newLabels, newAnnotations, newRefs, spec)], enforced.warnings, enforced.auditAnnotations);
}

/**
 * The patch: only the fields Deed stamps, built from what changes in them, so nothing else
 * is ever touched. The operations are what a diff of those fields gives (a map the object
 * lacks is added whole, a key added, replaced or removed, a reference appended at its
 * index), without copying and diffing the maps each review; the library escapes pointers.
 */
export function stampPatch(obj: KubeObject, labels: Record<string, string>, annotations: Record<string, string>, refs: OwnerReference[], spec: Record<string, unknown>): PatchOperation[] {
  const ops: PatchOperation[] = [];
  mapOps(ops, '/metadata/labels', obj.metadata.labels, labels);
  mapOps(ops, '/metadata/annotations', obj.metadata.annotations, annotations);
  const before = obj.metadata.ownerReferences;
  if (before === undefined) {
    if (refs.length > 0) ops.push({ op: 'add', path: '/metadata/ownerReferences', value: refs });
  } else if (refs.length === 0) ops.push({ op: 'remove', path: '/metadata/ownerReferences' }); // an empty list is dropped
  else {
    // Deed appends its reference; a list that differs otherwise is patched index by index.
    const common = Math.min(before.length, refs.length);
    for (let i = 0; i < common; i++) if (before[i] !== refs[i]) ops.push({ op: 'replace', path: `/metadata/ownerReferences/${i}`, value: refs[i] });
    for (let i = before.length - 1; i >= refs.length; i--) ops.push({ op: 'remove', path: `/metadata/ownerReferences/${i}` });
    for (let i = before.length; i < refs.length; i++) ops.push({ op: 'add', path: `/metadata/ownerReferences/${i}`, value: refs[i] });
  }
  if (Object.keys(spec).length > 0) {
    if (obj.spec === undefined) ops.push({ op: 'add', path: '/spec', value: spec });
    else mapOps(ops, '/spec', obj.spec, spec, false);
  }
  return ops;
}

/** `after` over `before` at `at`; keys of `before` that `after` lacks are removed when `removes`. */
function mapOps(ops: PatchOperation[], at: string, before: Record<string, unknown> | undefined, after: Record<string, unknown>, removes = true): void {
  if (before === undefined) {
    ops.push({ op: 'add', path: at, value: after });
    return;
  }
  if (removes) for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) ops.push({ op: 'remove', path: `${at}/${jsonpatch.escapePathComponent(key)}` });
  for (const key of Object.keys(after)) {
    const value = after[key];
    if (!Object.hasOwn(before, key)) ops.push({ op: 'add', path: `${at}/${jsonpatch.escapePathComponent(key)}`, value });
    else if (before[key] !== value) ops.push({ op: 'replace', path: `${at}/${jsonpatch.escapePathComponent(key)}`, value });
  }
}

/** `base` with each of `layers` written over it in turn (an undefined value writes nothing); not spread into one literal, which made old-generation garbage per review. */
function withValues(base: Record<string, string>, ...layers: Array<Record<string, string | undefined>>): Record<string, string> {
  const out = copyRec(base);
  for (const values of layers) for (const [key, value] of Object.entries(values)) if (value !== undefined) out[key] = value;
  return out;
}

function checkOwned(findings: Finding[], path: string, key: string, given: string | undefined, want: string | undefined): void {
  if (given === undefined || given === want) return;
  findings.push({
    rule: RULES.stampConflict.id,
    path,
    message: `${key} is admission-owned: given ${quote(given)}, expected ${want === undefined ? '(absent)' : quote(want)}`,
  });
}

function isOwnReinvocation(
  obj: KubeObject,
  keys: StampKeys,
  kind: StampRow,
  namespace: string,
  environment: string,
  requester: Requester,
  ring: KeyRing,
  attestation: string,
  expirySeconds: number | undefined,
  nowMs: number,
): boolean {
  const stamps = readStamps(obj, keys, kind.kind, namespace);
  if (stamps === undefined || stamps.environment !== environment || stamps.ownerUid !== requester.runner?.uid) return false;
  const fresh = expirySeconds === undefined ? stamps.expiresAt === undefined : stamps.expiresAt !== undefined && isFreshExpiry(stamps.expiresAt, nowMs, expirySeconds);
  // Any key of the ring: during a rotation the first pass may have run on a replica that still signs with the previous key.
  return fresh && verifyStamps(ring, stamps, attestation).ok;
}

function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
}
