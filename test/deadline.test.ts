import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { DestinationStream } from 'pino';
import type { AdmissionReviewResponse } from '../src/admission/types.js';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import { decideWithin, parseGoDuration, reviewDeadline } from '../src/server/deadline.js';
import { decodePatch, fixture, testContext } from './helpers.js';

/** A clock that returns the given readings in turn, then keeps returning the last one. */
function scripted(...readings: number[]): () => number {
  let i = 0;
  return () => readings[Math.min(i++, readings.length - 1)]!;
}

const RUNNER_POD = 'mutate-create-pod-by-runner.json';
const UID = '3f697299-374d-4b34-a6a3-76107eae9203';

describe('Go durations from the API server timeout query', () => {
  const cases: Array<[string, number | undefined]> = [
    ['5s', 5000],
    ['10s', 10_000],
    ['500ms', 500],
    ['1m', 60_000],
    ['1m30s', 90_000],
    ['1.5s', 1500],
    ['250000us', 250],
    ['250000µs', 250],
    ['1000000ns', 1],
    ['1h', 3_600_000],
    ['0', 0],
    ['', undefined],
    ['5', undefined],
    ['-5s', undefined],
    ['5 s', undefined],
    ['5sec', undefined],
    ['s', undefined],
    ['1e3s', undefined],
  ];
  for (const [text, ms] of cases)
    test(`${JSON.stringify(text)} is ${ms === undefined ? 'refused' : `${ms} ms`}`, () => assert.equal(parseGoDuration(text), ms));
});

describe('the review budget', () => {
  const cases: Array<[string, unknown, number]> = [
    ['is 80% of a 5s timeout', '5s', 4000],
    ['is 80% of the 10 s default when the query is absent', undefined, 8000],
    ['falls back to the default for an unreadable timeout', 'soon', 8000],
    ['falls back to the default for a zero timeout', '0s', 8000],
    ['falls back to the default for a repeated query parameter', ['1s', '2s'], 8000],
    ['caps a timeout above the API server maximum of 30 s', '1h', 24_000],
    ['follows a short timeout', '1s', 800],
  ];
  for (const [name, query, budget] of cases) test(name, () => assert.equal(reviewDeadline(query, 0).budgetMs, budget));
});

describe('decide under a deadline', () => {
  test('a review that waited past its budget is denied with 504 and its uid, without being decided', () => {
    const deadline = reviewDeadline('5s', 1000);
    const decision = decideWithin('mutate', fixture(RUNNER_POD), testContext(), deadline, scripted(5001, 5002));
    assert.equal(decision.kind, 'review');
    if (decision.kind !== 'review') return;
    const { response } = decision.response;
    assert.equal(response.uid, UID);
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 504);
    assert.equal(response.status?.reason, 'Timeout');
    assert.match(response.status?.message ?? '', /internal deadline of 4000 ms .* before the review could start \(4001 ms\)/);
    assert.equal(response.patch, undefined);
    assert.deepEqual(decision.verdict.findings.map((f) => f.rule), ['internal.deadline']);
    assert.equal(decision.request, undefined, 'not decoded: the review never started');
  });

  test('a review whose decision ended past its budget is denied rather than sent late', () => {
    const deadline = reviewDeadline('5s', 0);
    const decision = decideWithin('mutate', fixture(RUNNER_POD), testContext(), deadline, scripted(10, 4010));
    assert.equal(decision.kind, 'review');
    if (decision.kind !== 'review') return;
    assert.equal(decision.response.response.allowed, false);
    assert.equal(decision.response.response.status?.code, 504);
    assert.match(decision.response.response.status?.message ?? '', /while reviewing \(4010 ms\)/);
    assert.equal(decision.request?.uid, UID, 'the decoded request is kept for the log line');
  });

  test('a review answered exactly at its budget is stamped as usual', () => {
    const deadline = reviewDeadline('5s', 0);
    const decision = decideWithin('mutate', fixture(RUNNER_POD), testContext(), deadline, scripted(3000, 4000));
    assert.equal(decision.kind, 'review');
    if (decision.kind !== 'review') return;
    assert.equal(decision.response.response.allowed, true);
    assert.ok(decodePatch(decision.response).length > 0);
  });

  test('a late body without a uid is refused as a bad request, since there is no uid to answer', () => {
    const decision = decideWithin('mutate', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }, testContext(), reviewDeadline('1s', 0), scripted(900));
    assert.equal(decision.kind, 'bad-request');
  });
});

describe('the deadline through the HTTP transport', () => {
  function app(clock: () => number) {
    const lines: string[] = [];
    const logger = createLogger({ write: (line: string) => void lines.push(line) } as DestinationStream);
    return { lines, ...buildApp({ ctx: testContext(), logger, clock }) };
  }

  test('the timeout query sets the budget: 4.5 s after arrival is too late for timeout=5s', async () => {
    const { app: server, lines } = app(scripted(0, 4500, 4501));
    const res = await server.inject({ method: 'POST', url: '/mutate?timeout=5s', payload: fixture(RUNNER_POD) });
    assert.equal(res.statusCode, 200);
    const review = res.json<AdmissionReviewResponse>();
    assert.equal(review.response.uid, UID);
    assert.equal(review.response.allowed, false);
    assert.equal(review.response.status?.code, 504);
    const line = JSON.parse(lines.find((l) => l.includes('"msg":"review"'))!) as { decision: string; rules: string[] };
    assert.equal(line.decision, 'errored');
    assert.deepEqual(line.rules, ['internal.deadline']);
    await server.close();
  });

  test('the same 4.5 s is within budget for timeout=10s', async () => {
    const { app: server } = app(scripted(0, 4500, 4501));
    const res = await server.inject({ method: 'POST', url: '/mutate?timeout=10s', payload: fixture(RUNNER_POD) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json<AdmissionReviewResponse>().response.allowed, true);
    await server.close();
  });
});
