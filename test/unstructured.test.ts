import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyRec, stringMap } from '../src/policy/unstructured.js';

test('copyRec copies own entries, a __proto__ key as an entry, never as the prototype', () => {
  const given = JSON.parse('{"a":"1","__proto__":{"polluted":"yes"},"b":{"c":2}}') as Record<string, unknown>;
  const copy = copyRec(given);
  assert.notEqual(copy, given);
  assert.deepEqual(Object.keys(copy), ['a', '__proto__', 'b']);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.equal((copy as { polluted?: string }).polluted, undefined);
  assert.deepEqual(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { polluted: 'yes' });
  assert.equal(copy.b, given.b); // shallow
});

test('stringMap keeps string entries only, a __proto__ key as an entry', () => {
  const obj = JSON.parse('{"labels":{"x":"1","n":2,"__proto__":"p","y":null}}') as Record<string, unknown>;
  const map = stringMap(obj, 'labels');
  assert.deepEqual(Object.entries(map), [['x', '1'], ['__proto__', 'p']]);
  assert.equal(Object.getPrototypeOf(map), Object.prototype);
  assert.deepEqual(stringMap(obj, 'missing'), {});
  assert.deepEqual(stringMap({ labels: ['a'] }, 'labels'), {});
});
