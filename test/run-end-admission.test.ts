// The admission side of a run's end: terminal marks (only the object's own environment sets
// one; no one takes it back) and the run-lease annotation (a Lease name, attested, frozen).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../src/admission/types.js';
import { verifyObject } from '../src/policy/stamps/key-ring.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { fixture, FIXTURE_POLICY, TEST_RING } from './helpers.js';
import { ADMIN, allows, denies, GC, RUNNER_A, RUNNER_B, stamped, update } from './validate-helpers.js';

const KEYS = stampKeys('deed.dev');
const TERMINAL = 'deed.dev/terminal';
const LEASE = 'deed.dev/run-lease';
const BREAK_GLASS = { ...FIXTURE_POLICY, breakGlass: { groups: ['system:masters'] } };

const mark = (value = 'true') => (o: KubeObject) => void ((o.metadata.annotations ??= {})[TERMINAL] = value);
const unmark = (o: KubeObject) => void delete o.metadata.annotations![TERMINAL];

describe('terminal marks at admission', () => {
  test("a principal of the object's own environment marks it terminal", () => {
    allows(update(mark()));
  });

  test('another environment cannot mark it terminal, and is told why', () => {
    const message = denies(update(mark(), RUNNER_B), 'terminal.environment');
    assert.match(message, /only a principal of the environment this object belongs to may mark it terminal/);
  });

  test('break-glass may change the object but not write its environment\'s mark', () => {
    allows(update((o) => (o.metadata.labels!.note = 'x'), ADMIN), BREAK_GLASS);
    assert.match(denies(update(mark(), ADMIN), 'terminal.environment', BREAK_GLASS), /acts for no environment/);
  });

  test('once set, the mark cannot be removed, even by its own environment or break-glass', () => {
    assert.match(denies(update(unmark, RUNNER_A, mark()), 'terminal.frozen'), /cannot be changed or removed/);
    denies(update(unmark, ADMIN, mark()), 'terminal.frozen', BREAK_GLASS);
  });

  test('once set, the mark cannot be changed', () => {
    denies(update(mark('false'), RUNNER_A, mark()), 'terminal.frozen');
  });

  test('a mark other than "true" is refused: frozen, it could never be corrected', () => {
    assert.match(denies(update(mark('yes')), 'terminal.malformed'), /must be "true", got "yes"/);
  });

  test('the garbage collector orphaning a marked object is not refused for the mark', () => {
    allows(update((o) => delete o.metadata.ownerReferences, GC, mark()));
  });

  test('a sandbox created already marked terminal must carry "true"', () => {
    const body = fixture('validate-create-pod-by-runner.json');
    body.request.object = stamped(body, { ...body.request.object, metadata: { ...body.request.object.metadata, annotations: { ...body.request.object.metadata.annotations, [TERMINAL]: 'done' } } });
    denies(body, 'terminal.malformed');
  });
});

describe('the run-lease annotation at admission', () => {
  const created = (lease: string) => {
    const body = fixture('validate-create-pod-by-runner.json');
    const obj = body.request.object as KubeObject;
    body.request.object = stamped(body, { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, [LEASE]: lease } } });
    return body;
  };

  test('the lease name is covered by the attestation the mutating webhook signs', () => {
    const body = created('run-42');
    const obj = body.request.object as KubeObject;
    assert.ok(verifyObject(TEST_RING, obj, KEYS, 'Pod', 'sandbox-a').ok);
    const edited = structuredClone(obj);
    edited.metadata.annotations![LEASE] = 'run-43';
    assert.equal(verifyObject(TEST_RING, edited, KEYS, 'Pod', 'sandbox-a').ok, false);
    const removed = structuredClone(obj);
    delete removed.metadata.annotations![LEASE];
    assert.equal(verifyObject(TEST_RING, removed, KEYS, 'Pod', 'sandbox-a').ok, false);
  });

  test('a run lease that is not a Lease name is refused', () => {
    assert.match(denies(created('Run_42'), 'run-lease.malformed'), /is not a Lease name/);
  });

  test('the run lease is frozen: it cannot be changed, removed or added after admission', () => {
    denies(update((o) => (o.metadata.annotations![LEASE] = 'other'), RUNNER_A, (o) => void (o.metadata.annotations![LEASE] = 'run-42')), 'frozen.stamps');
    denies(update((o) => void delete o.metadata.annotations![LEASE], RUNNER_A, (o) => void (o.metadata.annotations![LEASE] = 'run-42')), 'frozen.stamps');
    denies(update((o) => (o.metadata.annotations![LEASE] = 'late')), 'frozen.stamps');
  });
});
