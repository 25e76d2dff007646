// Verdicts are values built by small constructors; `complete` alone turns one into the
// wire response, so no handler builds the AdmissionReview format by hand.
import type { Operation as PatchOperation } from 'fast-json-patch';
import type { AdmissionReviewResponse, AdmissionResponse } from './types.js';

export type { PatchOperation };

/** One problem a rule found, tied to a field path. */
export interface Finding {
  rule: string;
  path?: string;
  message: string;
}

export interface Verdict {
  allowed: boolean;
  code: number;
  reason?: string;
  message?: string;
  patch?: PatchOperation[];
  warnings: string[];
  auditAnnotations: Record<string, string>;
  /** Findings that denied the request (empty when allowed). */
  findings: Finding[];
}

export function allowed(warnings: string[] = [], auditAnnotations: Record<string, string> = {}): Verdict {
  return { allowed: true, code: 200, warnings, auditAnnotations, findings: [] };
}

export function patched(patch: PatchOperation[], warnings: string[] = [], auditAnnotations: Record<string, string> = {}): Verdict {
  return { ...allowed(warnings, auditAnnotations), ...(patch.length > 0 ? { patch } : {}) };
}

export function denied(findings: Finding[], warnings: string[] = [], auditAnnotations: Record<string, string> = {}): Verdict {
  return {
    allowed: false,
    code: 403,
    reason: 'Forbidden',
    message: `Deed denied this request: ${denialText(findings)}`,
    warnings,
    auditAnnotations,
    findings,
  };
}

/** Bad input or an internal fault: never allowed (fail closed), with the reason spelled out. */
export function errored(code: 400 | 500 | 504, rule: string, message: string): Verdict {
  return {
    allowed: false,
    code,
    reason: code === 400 ? 'BadRequest' : code === 504 ? 'Timeout' : 'InternalError',
    message: `Deed could not review this request: ${message}`,
    warnings: [],
    auditAnnotations: {},
    findings: [{ rule, message }],
  };
}

/** `text` in at most `max` characters, the last three `...` when it was cut. */
function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/**
 * A client value as a message quotes it: never the whole value, which may be megabytes long
 * or nested thousands deep (JSON.stringify of either would copy it into the answer and the
 * log line, or throw).
 */
export function quoted(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(cut(v, 80));
  if (v !== null && typeof v === 'object') {
    const what = Array.isArray(v) ? 'a list' : 'an object';
    try {
      const json = JSON.stringify(v);
      return json.length > 80 ? `${what} (${json.slice(0, 60)}...)` : json;
    } catch {
      return what; // nested too deep to write out
    }
  }
  return typeof v === 'number' || typeof v === 'boolean' || v === null ? String(v) : typeof v;
}

/** Bounds on a denial's text: a finding that quotes a client value at length, or very many findings, stay short in the answer and the log line. */
export const MAX_FINDING_LENGTH = 1024;
const MAX_DENIAL_LENGTH = 16 * 1024;

export function formatFinding(f: Finding): string {
  const text = f.path !== undefined ? `[${f.rule}] ${f.path}: ${f.message}` : `[${f.rule}] ${f.message}`;
  return cut(text, MAX_FINDING_LENGTH);
}

/** The findings of a denial as one text, each bounded, and no more of them than fit. */
function denialText(findings: Finding[]): string {
  let text = '';
  for (let i = 0; i < findings.length; i++) {
    const next = formatFinding(findings[i]!);
    if (text.length + next.length > MAX_DENIAL_LENGTH) return `${text}; and ${findings.length - i} more`;
    text = i === 0 ? next : `${text}; ${next}`;
  }
  return text;
}

/**
 * The API server shows warnings to users; the webhook keeps each one short on the wire
 * (kubectl prints them on one line). A verdict holds them whole, as `deed review` and
 * `deed test` print them.
 */
export const MAX_WARNING_LENGTH = 119;

/** A warning as the webhook sends it: the message first, so when the line is cut the field path goes, not the reason. */
export function wireWarning(text: string): string {
  return cut(text, MAX_WARNING_LENGTH);
}

export function complete(uid: string, v: Verdict): AdmissionReviewResponse {
  const response: AdmissionResponse = { uid, allowed: v.allowed };
  if (!v.allowed) response.status = { code: v.code, message: v.message ?? 'denied', ...(v.reason ? { reason: v.reason } : {}) };
  if (v.patch !== undefined && v.patch.length > 0) {
    response.patch = Buffer.from(JSON.stringify(v.patch)).toString('base64');
    response.patchType = 'JSONPatch';
  }
  if (v.warnings.length > 0) response.warnings = v.warnings.map(wireWarning);
  if (Object.keys(v.auditAnnotations).length > 0) response.auditAnnotations = v.auditAnnotations;
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}
