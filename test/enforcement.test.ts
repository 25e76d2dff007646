// Enforcement modes hold on both webhooks: a finding of an overridable rule is denied,
// warned about or only recorded by its mode, at mutation as at validation; integrity
// rules deny whatever the policy says.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { decodePatch, fixture, FIXTURE_POLICY, testContext, type Review } from './helpers.js';
import { RUNNER_A, RUNNER_B } from './validate-helpers.js';

const policy = (rules: Record<string, string>): ConfigInput => ({ ...FIXTURE_POLICY, rules } as ConfigInput);

/** Environment beta's NetworkPolicy in sandbox-b, selecting environment alpha's pods. */
function foreignSelector(): Review {
  const body = fixture('mutate-create-networkpolicy-by-runner.json');
  body.request.userInfo = RUNNER_B;
  body.request.namespace = 'sandbox-b';
  body.request.object.metadata.namespace = 'sandbox-b';
  body.request.object.spec.podSelector = { matchLabels: { 'deed.dev/environment': 'alpha' } };
  return body;
}

function answer(webhook: Webhook, body: Review, config: ConfigInput): AdmissionResponse {
  const d = decide(webhook, body, testContext(config));
  assert.ok(d.kind === 'review');
  return d.response.response;
}

/** The object the mutating webhook's answer makes, as the validating webhook then sees it. */
function mutated(body: Review, config: ConfigInput): Review {
  const d = decide('mutate', body, testContext(config));
  assert.ok(d.kind === 'review' && d.response.response.allowed, d.kind === 'review' ? d.response.response.status?.message : d.message);
  const object = jsonpatch.applyPatch(structuredClone(body.request.object as KubeObject), decodePatch(d.response)).newDocument;
  return { ...body, request: { ...body.request, object } };
}

describe('enforcement modes on both webhooks', () => {
  test('by default a NetworkPolicy selecting another environment is denied at mutation', () => {
    const r = answer('mutate', foreignSelector(), FIXTURE_POLICY);
    assert.equal(r.allowed, false);
    assert.match(r.status!.message!, /\[selector\.scope\]/);
  });

  test('with selector.scope set to warn, both webhooks admit it with the warning, and the mutating one still stamps it', () => {
    const config = policy({ 'selector.scope': 'warn' });
    const m = answer('mutate', foreignSelector(), config);
    assert.equal(m.allowed, true, m.status?.message);
    assert.ok(m.warnings?.some((w) => w.startsWith('deed selector.scope: ')), JSON.stringify(m.warnings));
    const stored = mutated(foreignSelector(), config);
    assert.equal(stored.request.object.metadata.labels['deed.dev/environment'], 'beta');
    assert.deepEqual(stored.request.object.spec.podSelector, { matchLabels: { 'deed.dev/environment': 'alpha' } }, 'the selector is left as given');
    const v = answer('validate', stored, config);
    assert.equal(v.allowed, true, v.status?.message);
    assert.ok(v.warnings?.some((w) => w.startsWith('deed selector.scope: ')), JSON.stringify(v.warnings));
  });

  test('with selector.scope set to audit, both webhooks admit it and record the finding as an audit annotation only', () => {
    const config = policy({ 'selector.scope': 'audit' });
    const m = answer('mutate', foreignSelector(), config);
    assert.equal(m.allowed, true, m.status?.message);
    assert.equal(m.warnings, undefined);
    assert.match(m.auditAnnotations?.['selector.scope'] ?? '', /selects pods of environment "alpha"/);
    const v = answer('validate', mutated(foreignSelector(), config), config);
    assert.equal(v.allowed, true, v.status?.message);
    assert.match(v.auditAnnotations?.['selector.scope'] ?? '', /selects only its pods/);
  });

  test('an integrity rule denies at mutation whatever another rule is set to', () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    body.request.object.metadata.labels = { ...body.request.object.metadata.labels, 'deed.dev/environment': 'beta' };
    const r = answer('mutate', body, policy({ 'selector.scope': 'warn' }));
    assert.equal(r.allowed, false);
    assert.match(r.status!.message!, /\[stamp\.conflict\]/);
    assert.throws(() => testContext(policy({ 'stamp.conflict': 'warn' })), /stamp\.conflict/);
  });

  test('with guard.namespace-binding set to warn, a pod of another environment in a bound namespace passes both webhooks unstamped, with the warning', () => {
    const config: ConfigInput = { ...FIXTURE_POLICY, environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'], namespaces: ['sandbox-a'] }], rules: { 'guard.namespace-binding': 'warn' } } as ConfigInput;
    const body = fixture('mutate-create-pod-by-runner.json');
    body.request.userInfo = RUNNER_A;
    const m = answer('mutate', body, config);
    assert.equal(m.allowed, true, m.status?.message);
    assert.equal(m.patch, undefined, 'no stamps: it is not admitted as alpha\'s');
    assert.ok(m.warnings?.some((w) => w.startsWith('deed guard.namespace-binding: ')), JSON.stringify(m.warnings));
    const v = answer('validate', { ...body, request: { ...body.request } }, config);
    assert.equal(v.allowed, true, v.status?.message);
    assert.ok(v.warnings?.some((w) => w.startsWith('deed guard.namespace-binding: ')), JSON.stringify(v.warnings));
  });
});
