// The one list of Deed's rules: ids, what each checks, default enforcement mode and an
// example message. Metrics, the docs' rule catalog and policy validation all read it.
import type { EnforcementMode } from '../../config/schema.js';

export interface RuleInfo {
  id: string;
  webhook: 'mutate' | 'validate' | 'both';
  checks: string;
  defaultMode: EnforcementMode;
  /** Integrity rules guard the stamps themselves: relaxing them would make the stamps lie. */
  overridable: boolean;
  example: string;
}

function rule(info: RuleInfo): RuleInfo {
  return info;
}

export const RULES = {
  requestMalformed: rule({
    id: 'request.malformed',
    webhook: 'both',
    checks: 'The AdmissionReview is well formed: v1, a uid, an object where the operation needs one, kind matching resource, no prototype keys.',
    defaultMode: 'deny',
    overridable: false,
    example: 'request.oldObject is required for DELETE',
  }),
  internalError: rule({
    id: 'internal.error',
    webhook: 'both',
    checks: 'Deed itself failed; the request is denied (fail closed).',
    defaultMode: 'deny',
    overridable: false,
    example: 'internal error while reviewing; see the Deed log for request uid 3f69…',
  }),
  internalDeadline: rule({
    id: 'internal.deadline',
    webhook: 'both',
    checks: 'The review is answered within 80% of the webhook timeout (`?timeout=`, 10 s when absent); past that it is denied with code 504 rather than left to time out.',
    defaultMode: 'deny',
    overridable: false,
    example: 'the internal deadline of 4000 ms (80% of the 5000 ms webhook timeout) passed before the review could start (4120 ms); Deed is overloaded, retry',
  }),
  identityAmbiguous: rule({
    id: 'identity.ambiguous',
    webhook: 'both',
    checks: 'The requester acts for at most one environment.',
    defaultMode: 'deny',
    overridable: false,
    example: 'system:serviceaccount:ci:runner acts for several environments (alpha, beta); the policy must map it to one',
  }),
  identityMalformed: rule({
    id: 'identity.malformed',
    webhook: 'both',
    checks: 'Pod-bound token extras (pod-name, pod-uid) are single, well-formed values on a service account.',
    defaultMode: 'deny',
    overridable: false,
    example: 'pod-bound token extras must carry exactly one pod name and one pod uid',
  }),
  stampForged: rule({
    id: 'stamp.forged',
    webhook: 'mutate',
    checks: 'A requester that acts for no environment carries no admission-owned key.',
    defaultMode: 'deny',
    overridable: false,
    example: 'kube-lab-admin acts for no environment and cannot set the admission-owned key deed.dev/environment',
  }),
  stampConflict: rule({
    id: 'stamp.conflict',
    webhook: 'mutate',
    checks: 'A client value for an admission-owned label, annotation or owner reference equals what Deed computes.',
    defaultMode: 'deny',
    overridable: false,
    example: 'deed.dev/environment is admission-owned: given "beta", expected "alpha"',
  }),
  attestationForged: rule({
    id: 'attestation.forged',
    webhook: 'mutate',
    checks: 'No client supplies `<prefix>/attestation` (only Deed signs it; its own value is accepted on reinvocation).',
    defaultMode: 'deny',
    overridable: false,
    example: 'is admission-owned and signed by Deed; a client value is never accepted',
  }),
  nonceMalformed: rule({
    id: 'nonce.malformed',
    webhook: 'mutate',
    checks: 'A client `<prefix>/create-nonce` is 64 lowercase hex characters.',
    defaultMode: 'deny',
    overridable: false,
    example: 'must be 64 lowercase hex characters, got "1234"',
  }),
  budgetInvalid: rule({
    id: 'budget.invalid',
    webhook: 'mutate',
    checks: '`<prefix>/max-duration-seconds` is a positive whole number of seconds.',
    defaultMode: 'deny',
    overridable: false,
    example: 'must be a positive whole number of seconds up to 315360000, got "1h"',
  }),
} as const satisfies Record<string, RuleInfo>;

export const RULE_LIST: readonly RuleInfo[] = Object.values(RULES);
