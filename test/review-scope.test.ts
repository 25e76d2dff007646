import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inReviewScope, namespaceSelector, scopeAnswer, type ReviewScope, type ScopeAnswer } from '../src/policy/review-scope.js';
import { decide } from '../src/admission/decide.js';
import type { ObjectLookup } from '../src/policy/policy.js';
import { fixture, testContext, NO_READERS } from './helpers.js';

test('an opted-in namespace is in the review scope', () => {
  assert.equal(inReviewScope({ name: 'sandbox-a', labels: { 'deed.dev/sandbox': 'enabled' } }, 'deed-system'), true);
});

test('a namespace without the opt-in label, or with another value, is outside it', () => {
  assert.equal(inReviewScope({ name: 'sandbox-a', labels: {} }, 'deed-system'), false);
  assert.equal(inReviewScope({ name: 'sandbox-a' }, 'deed-system'), false);
  assert.equal(inReviewScope({ name: 'sandbox-a', labels: { 'deed.dev/sandbox': 'true' } }, 'deed-system'), false);
});

test("kube-system and Deed's own namespace are outside it even when labelled", () => {
  const labels = { 'deed.dev/sandbox': 'enabled' };
  assert.equal(inReviewScope({ name: 'kube-system', labels }, 'deed-system'), false);
  assert.equal(inReviewScope({ name: 'deed-system', labels }, 'deed-system'), false);
  assert.equal(inReviewScope({ name: 'deed-system', labels }, 'other'), true);
});

test('the webhooks select exactly the namespaces inReviewScope accepts', () => {
  const selector = namespaceSelector('deed-system');
  const matches = (name: string, labels: Record<string, string>) =>
    (selector.matchExpressions ?? []).every((e) => {
      const value = { ...labels, 'kubernetes.io/metadata.name': name }[e.key];
      return e.operator === 'In' ? value !== undefined && (e.values ?? []).includes(value) : value === undefined || !(e.values ?? []).includes(value);
    });
  for (const [name, labels] of [
    ['a', { 'deed.dev/sandbox': 'enabled' }],
    ['a', {}],
    ['kube-system', { 'deed.dev/sandbox': 'enabled' }],
    ['deed-system', { 'deed.dev/sandbox': 'enabled' }],
    ['b', { 'deed.dev/sandbox': 'disabled' }],
  ] as Array<[string, Record<string, string>]>)
    assert.equal(matches(name, labels), inReviewScope({ name, labels }, 'deed-system'), `${name} ${JSON.stringify(labels)}`);
});

describe('reviews outside the review scope', () => {
  const scoped = (answers: Record<string, ScopeAnswer>): ReviewScope => ({ of: (ns) => answers[ns] ?? { state: 'out', why: 'not labelled deed.dev/sandbox=enabled' } });
  const optedIn = scoped({ 'sandbox-a': { state: 'in' } });

  test('a forged create for a namespace outside the scope gets no patch, only request.out-of-scope', () => {
    const review = fixture('mutate-create-pod-by-runner.json');
    review.request.namespace = 'plain';
    review.request.object.metadata.namespace = 'plain';
    const decision = decide('mutate', review, { ...testContext(), scope: optedIn });
    assert.equal(decision.kind, 'review');
    if (decision.kind !== 'review') return;
    assert.equal(decision.response.response.allowed, false);
    assert.equal(decision.response.response.patch, undefined);
    assert.deepEqual(decision.verdict.findings.map((f) => f.rule), ['request.out-of-scope']);
    assert.match(decision.verdict.message ?? '', /namespace plain is outside the review scope \(not labelled deed\.dev\/sandbox=enabled\)/);
  });

  test('the same create inside the scope is stamped', () => {
    const decision = decide('mutate', fixture('mutate-create-pod-by-runner.json'), { ...testContext(), scope: optedIn });
    assert.ok(decision.kind === 'review' && decision.response.response.patch !== undefined);
  });

  test('a validating review outside the scope is refused before any lookup is consulted', () => {
    const review = fixture('validate-create-pod-by-runner.json');
    review.request.namespace = 'plain';
    review.request.object.metadata.namespace = 'plain';
    const consulted: string[] = [];
    const lookup: ObjectLookup = { readers: NO_READERS, get: (resource, namespace, name) => (consulted.push(`${resource}/${namespace}/${name}`), { state: 'absent' }) };
    const decision = decide('validate', review, { ...testContext(), lookup, scope: optedIn });
    assert.ok(decision.kind === 'review');
    assert.deepEqual(decision.verdict.findings.map((f) => f.rule), ['request.out-of-scope']);
    assert.deepEqual(consulted, []);
  });

  test('before Deed knows its scope, every review is refused and says why', () => {
    const unknown: ReviewScope = { of: () => ({ state: 'unknown', reason: 'the namespaces have not been listed yet' }) };
    const decision = decide('mutate', fixture('mutate-create-pod-by-runner.json'), { ...testContext(), scope: unknown });
    assert.ok(decision.kind === 'review' && !decision.verdict.allowed);
    assert.match(decision.verdict.message ?? '', /does not know yet whether namespace sandbox-a is in its review scope \(the namespaces have not been listed yet\)/);
  });

  test('scopeAnswer names why a namespace is out', () => {
    assert.deepEqual(scopeAnswer({ name: 'kube-system', labels: { 'deed.dev/sandbox': 'enabled' } }, 'deed-system'), { state: 'out', why: "excluded from the webhooks (kube-system and Deed's own namespace)" });
    assert.deepEqual(scopeAnswer(undefined, 'deed-system'), { state: 'out', why: 'not labelled deed.dev/sandbox=enabled' });
    assert.deepEqual(scopeAnswer({ name: 'a', labels: { 'deed.dev/sandbox': 'enabled' } }, 'deed-system'), { state: 'in' });
  });
});
