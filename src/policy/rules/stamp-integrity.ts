// At CREATE the validating webhook sees the final object, after every mutating webhook:
// Deed's stamps must be there, name this requester, and verify. A requester that acts
// for an environment but arrives without them bypassed the mutating webhook, or another
// mutator changed them.
import { entryOf } from '../unstructured.js';
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';

import { expiresAt, isFreshExpiry, policyDeadline } from '../stamps/deadline.js';
import type { RunnerPod } from '../requester/identity.js';
import { verifyObject, type KeyRing } from '../stamps/key-ring.js';
import type { StampRow } from '../kinds.js';
import { isWellFormedNonce } from '../stamps/nonce.js';
import type { Policy } from '../policy.js';
import { annotationPath, identityStamps, labelPath, sameReference } from '../stamps/identity-stamps.js';
import { RULES } from './catalog.js';
import { noEnvironmentMark } from './no-environment-mark.js';

const HINT = 'was the mutating webhook bypassed?';

export function stampIntegrity(obj: KubeObject, kind: StampRow, namespace: string, environment: string, runner: RunnerPod | undefined, policy: Policy, ring: KeyRing, nowMs: number): Finding[] {
  const { keys } = policy;
  const rule = RULES.stampMissing.id;
  const labels = obj.metadata.labels ?? {};
  const annotations = obj.metadata.annotations ?? {};
  const want = identityStamps(keys, environment, runner, kind, namespace);
  const findings: Finding[] = [];

  for (const [k, v] of Object.entries(want.labels)) {
    const got = entryOf(labels, k);
    if (got !== v) findings.push({ rule, path: labelPath(k), message: `is ${describe(got)}, expected ${describe(v)}; ${HINT}` });
  }
  findings.push(...noEnvironmentMark(labels, '', keys, RULES.stampConflict.id, `an object of environment "${environment}" never carries it`));
  const owner = entryOf(annotations, keys.owner);
  if (owner !== want.owner) findings.push({ rule, path: annotationPath(keys.owner), message: `is ${describe(owner)}, expected ${describe(want.owner)}; ${HINT}` });
  const nonce = entryOf(annotations, keys.createNonce);
  if (nonce === undefined || !isWellFormedNonce(nonce)) findings.push({ rule, path: annotationPath(keys.createNonce), message: `is ${describe(nonce)}, expected 64 lowercase hex characters; ${HINT}` });
  if (want.ownerReference && !(obj.metadata.ownerReferences ?? []).some((r) => sameReference(r, want.ownerReference!)))
    findings.push({ rule, path: 'metadata.ownerReferences', message: `lacks the reference to pod ${want.ownerReference.name} (${want.ownerReference.uid}); ${HINT}` });

  const deadline = policyDeadline(entryOf(annotations, keys.maxDuration), policy.config.deadline);
  let seconds = deadline.ok ? deadline.seconds : undefined;
  if (seconds !== undefined && kind.activeDeadline) {
    const ads = obj.spec?.activeDeadlineSeconds;
    if (typeof ads !== 'number' || ads > seconds)
      findings.push({ rule, path: 'spec.activeDeadlineSeconds', message: `is ${describe(ads)}, expected at most ${seconds}; ${HINT}` });
    else if (Number.isInteger(ads) && ads > 0) seconds = ads; // a lower client value stands, and the expiry follows it
  }
  const expiry = entryOf(annotations, keys.expiresAt);
  if (seconds !== undefined && kind.expiresAt && expiry === undefined)
    findings.push({ rule, path: annotationPath(keys.expiresAt), message: `is absent though a deadline of ${seconds}s applies; ${HINT}` });
  else if (seconds !== undefined && kind.expiresAt && !isFreshExpiry(expiry!, nowMs, seconds))
    // Written by this admission, or copied from another object (whose deadline may have passed).
    findings.push({ rule, path: annotationPath(keys.expiresAt), message: `is ${describe(expiry)}, not the expiry this admission writes (about ${expiresAt(nowMs, seconds)}); copied stamps?` });

  if (findings.length === 0) {
    const verification = verifyObject(ring, obj, keys, kind.kind, namespace);
    if (!verification.ok) findings.push({ rule, path: annotationPath(keys.attestation), message: `${verification.reason}; ${HINT}` });
  }
  return findings;
}

/** A reference to a runner in another namespace cannot resolve: the garbage collector would delete the object. */
export function ownerAcrossNamespaces(obj: KubeObject, runner: RunnerPod | undefined, namespace: string): Finding[] {
  if (runner === undefined || runner.namespace === namespace) return [];
  const ref = (obj.metadata.ownerReferences ?? []).find((r) => r.uid === runner.uid);
  if (ref === undefined) return [];
  return [
    {
      rule: RULES.ownerCrossNamespace.id,
      path: 'metadata.ownerReferences',
      message: `the owner reference to pod ${ref.name} (${runner.namespace}) cannot resolve in namespace ${namespace}; the garbage collector would delete this object`,
    },
  ];
}

function describe(v: unknown): string {
  return v === undefined ? '(absent)' : JSON.stringify(v);
}
