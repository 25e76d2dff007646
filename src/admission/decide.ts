// The single decision path shared by the server, the CLI and the tests:
// parsed body in, wire response out. No exception leaves it: a fault becomes a denial
// that keeps the uid (fail closed).
import { decodeReview, requestUid } from './decode.js';
import type { AdmissionRequest, AdmissionReviewResponse } from './types.js';
import { complete, errored, type Verdict } from './verdict.js';
import type { DecisionContext } from '../policy/policy.js';
import type { DecodedWithFacts, ReviewFacts } from '../policy/review-facts.js';
import { mutate } from '../policy/mutate.js';
import { mutateAndJudge } from '../policy/create-judgement.js';
import { validate } from '../policy/validate.js';
import { RULES } from '../policy/rules/catalog.js';
import { breakGlassOverrides, withBreakGlassNotice } from './break-glass.js';

/**
 * `admit`: the mutating webhook of the install (one call per create: it stamps and makes a
 * stamped object's whole CREATE judgement, src/policy/create-judgement.ts). `mutate` stamps
 * only, for the two-call configurations of older installs, whose validating webhook still
 * judges CREATE; `deed review` models that pair.
 */
export type Webhook = 'mutate' | 'validate' | 'admit';

/** `facts`: the review's facts when the caller built them (review-facts.ts), made with `ctx.policy`. */
export const HANDLERS: Readonly<Record<Webhook, (req: AdmissionRequest, ctx: DecisionContext, facts?: ReviewFacts) => Verdict>> = { mutate, validate, admit: mutateAndJudge };

export type Decision =
  /** A review Deed could read far enough to answer (possibly with a denial). */
  | {
      kind: 'review';
      uid: string;
      request?: AdmissionRequest;
      verdict: Verdict;
      response: AdmissionReviewResponse;
      error?: unknown;
      /** The rules a break-glass principal was allowed past (src/admission/break-glass.ts). */
      breakGlass?: string[];
    }
  /** A body without a usable uid: answered with HTTP 400. */
  | { kind: 'bad-request'; message: string };

/**
 * `decoded`: the body already decoded (the server does, to find the lookups), so it is not
 * done twice; with the review's facts when the plan built them (with `ctx.policy`).
 */
export function decide(webhook: Webhook, body: unknown, ctx: DecisionContext, decoded?: DecodedWithFacts): Decision {
  try {
    decoded ??= decodeReview(body);
  } catch (error) {
    const uid = requestUid(body);
    if (uid === undefined) return { kind: 'bad-request', message: 'the body could not be read as an AdmissionReview' };
    const verdict = errored(500, RULES.internalError.id, `internal error while reading the request; see the Deed log for request uid ${uid}`);
    return { kind: 'review', uid, verdict, response: complete(uid, verdict), error };
  }
  if (!decoded.ok) {
    if (decoded.uid === undefined) return { kind: 'bad-request', message: decoded.message };
    const verdict = errored(400, RULES.requestMalformed.id, decoded.message);
    return { kind: 'review', uid: decoded.uid, verdict, response: complete(decoded.uid, verdict) };
  }
  const { request } = decoded;
  let verdict: Verdict;
  try {
    verdict = HANDLERS[webhook](request, ctx, decoded.facts);
    // The counterfactual's policy differs (no break-glass), and a creator's identity depends on it: its facts are its own.
    const overridden = breakGlassOverrides(request, ctx, verdict, (without) => HANDLERS[webhook](request, without));
    if (overridden.length > 0) {
      verdict = withBreakGlassNotice(verdict, request, overridden);
      return { kind: 'review', uid: request.uid, request, verdict, response: complete(request.uid, verdict), breakGlass: overridden };
    }
  } catch (error) {
    verdict = errored(500, RULES.internalError.id, `internal error while reviewing; see the Deed log for request uid ${request.uid}`);
    return { kind: 'review', uid: request.uid, request, verdict, response: complete(request.uid, verdict), error };
  }
  return { kind: 'review', uid: request.uid, request, verdict, response: complete(request.uid, verdict) };
}
