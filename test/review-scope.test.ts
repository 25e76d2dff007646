import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inReviewScope, namespaceSelector } from '../src/policy/review-scope.js';

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
