// What the validating tests share: the captured requesters, a stamped object as Deed's
// mutating webhook would leave it, and verdict assertions.
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import type { ObjectLookup } from '../src/policy/policy.js';
import { decodePatch, fixture, FIXTURE_POLICY, NOW, testContext, type Review } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test edits reach deep into pod specs
export type Pod = KubeObject & { spec: Record<string, any> };

export const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo;
export const RUNNER_B = fixture('mutate-create-pod-by-other-namespace-runner.json').request.userInfo;
export const ADMIN = fixture('mutate-create-pod-by-admin.json').request.userInfo;
export const GC = fixture('validate-delete-secret-by-garbage-collector.json').request.userInfo;
export const POLICY_WITH_COMMAND: ConfigInput = { ...FIXTURE_POLICY, template: { command: ['/opt/agentctl', 'serve'] } };

/** What Deed's mutating webhook would have made of `obj`, created by `userInfo` (default: sandbox-a runner-0). */
export function stamped(body: Review, obj: KubeObject, userInfo = RUNNER_A, config: ConfigInput = FIXTURE_POLICY): KubeObject {
  const { uid: _uid, ...metadata } = obj.metadata;
  const review = { ...body, request: { ...body.request, operation: 'CREATE', subResource: undefined, userInfo, object: { ...obj, metadata }, oldObject: null, options: null } };
  const d = decide('mutate', review, testContext(config));
  assert.ok(d.kind === 'review' && d.response.response.allowed, d.kind === 'review' ? d.response.response.status?.message : d.message);
  const out = jsonpatch.applyPatch(structuredClone(obj), decodePatch(d.response)).newDocument;
  return out;
}

export function validate(body: Review, config: ConfigInput = FIXTURE_POLICY, lookup?: ObjectLookup): AdmissionResponse {
  const d = decide('validate', body, testContext(config, NOW, undefined, lookup));
  assert.equal(d.kind, 'review');
  if (d.kind !== 'review') throw new Error('unreachable');
  assert.equal(d.response.response.uid, body.request.uid);
  for (const w of d.response.response.warnings ?? []) assert.ok(w.length < 120, `warning under 120 characters: ${w}`);
  return d.response.response;
}

export function denies(body: Review, rule: string | RegExp, config?: ConfigInput, lookup?: ObjectLookup): string {
  const r = validate(body, config, lookup);
  assert.equal(r.allowed, false, `expected a denial for ${String(rule)}`);
  const message = r.status?.message ?? '';
  assert.match(message, typeof rule === 'string' ? new RegExp(`\\[${rule.replace(/\./g, '\\.')}\\]`) : rule);
  return message;
}

export function allows(body: Review, config?: ConfigInput, lookup?: ObjectLookup): AdmissionResponse {
  const r = validate(body, config, lookup);
  assert.equal(r.allowed, true, r.status?.message);
  return r;
}

/** An UPDATE of alpha's stamped pod by `userInfo`: `oldChange` shapes the stored pod, `change` the new one. */
export function update(change: (o: Pod) => void, userInfo = RUNNER_A, oldChange: (o: KubeObject) => void = () => {}): Review {
  const body = fixture('validate-update-pod-label-by-runner.json');
  body.request.oldObject = stamped(body, body.request.oldObject);
  oldChange(body.request.oldObject);
  body.request.object = structuredClone(body.request.oldObject);
  body.request.userInfo = userInfo;
  change(body.request.object);
  return body;
}
