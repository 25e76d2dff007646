// The server parses bodies with parseBody, which lets decode skip the walk for prototype
// keys when the JSON text cannot spell one. Every way a text can spell one must still be
// refused, over the server's own parser, with the uid.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { DestinationStream } from 'pino';
import { decide } from '../src/admission/decide.js';
import { mayHoldPrototypeKey, parseBody } from '../src/admission/decode.js';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import { fixture, testContext } from './helpers.js';

const text = JSON.stringify(fixture('mutate-create-pod-by-runner.json'));
const withKey = (rawKey: string) => text.replace('"labels":{', `"labels":{"${rawKey}":{"polluted":"yes"},`);

// Each spells a key that JSON.parse makes `__proto__`, `constructor` or `prototype`.
const SPELLINGS = ['__proto__', '\\u005f_proto__', '__pr\\u006fto__', '\\u005F\\u005Fproto\\u005F\\u005F', 'constructor', 'constr\\u0075ctor', 'prototype', '\\u0070rototype'];

describe('screening a body text for prototype keys', () => {
  test('a pod review spelling none of the keys needs no walk', () => {
    assert.equal(mayHoldPrototypeKey(text), false);
  });

  for (const spelling of SPELLINGS) {
    test(`a text spelling a key as ${spelling} may hold one, and the review is refused with its uid`, () => {
      const raw = withKey(spelling);
      assert.equal(mayHoldPrototypeKey(raw), true);
      const d = decide('mutate', parseBody(raw), testContext());
      assert.equal(d.kind, 'review');
      if (d.kind !== 'review') return;
      assert.equal(d.uid, fixture('mutate-create-pod-by-runner.json').request.uid);
      assert.equal(d.response.response.allowed, false);
      assert.match(d.response.response.status?.message ?? '', /prototype-pollution guard/);
    });
  }

  test('a text with an escaped key that is not a prototype key is walked and allowed', () => {
    const raw = text.replace('"labels":{', '"labels":{"\\u0061pp":"x",');
    assert.equal(mayHoldPrototypeKey(raw), true);
    const d = decide('mutate', parseBody(raw), testContext());
    assert.equal(d.kind === 'review' && d.response.response.allowed, true);
  });

  test('the server refuses an escaped __proto__ key sent over its parser', async () => {
    const lines: string[] = [];
    const { app } = buildApp({ ctx: testContext(), logger: createLogger({ write: (l: string) => void lines.push(l) } as DestinationStream) });
    const res = await app.inject({ method: 'POST', url: '/mutate', payload: withKey('\\u005f_proto__'), headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200);
    const answer = (res.json() as { response: { allowed: boolean; status?: { message?: string } } }).response;
    assert.equal(answer.allowed, false);
    assert.match(answer.status?.message ?? '', /prototype-pollution guard/);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    await app.close();
  });
});
