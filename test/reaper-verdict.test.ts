import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject } from '../src/admission/types.js';
import type { SandboxKind } from '../src/policy/kinds.js';
import { ownerToRead, verdict, type Action, type OwnerLookup, type VerdictCode } from '../src/reaper/verdict.js';
import { NOW } from './helpers.js';
import { iso, KEYS, reaperContext, RUNNER, stamped } from './reaper-helpers.js';

const OTHER_KEY = Buffer.from('not-deeds-key-but-long-enough-0123456789abcdef');
const REPLACEMENT_UID = 'a9d2f0c4-0b1e-4c55-9d3a-6f7e8a9b0c1d';

const present: OwnerLookup = { state: 'present', uid: RUNNER.uid };
const absent: OwnerLookup = { state: 'absent' };
const replaced: OwnerLookup = { state: 'present', uid: REPLACEMENT_UID };
const unreadable: OwnerLookup = { state: 'error', message: 'get pod sandbox-a/runner-0: HTTP 500: etcdserver: request timed out' };

function edit(obj: KubeObject, change: (o: KubeObject) => void): KubeObject {
  const copy = structuredClone(obj);
  change(copy);
  return copy;
}

interface Case {
  name: string;
  kind?: SandboxKind['kind'];
  obj: KubeObject;
  owner?: OwnerLookup;
  action: Action;
  code: VerdictCode;
  /** What the reason must say, where the case is about it. */
  reason?: RegExp;
}

const pod = (o: Partial<Parameters<typeof stamped>[0]> = {}) => stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-60), ...o });

const CASES: Case[] = [
  // Closed world: only this environment's attested objects are judged at all.
  {
    name: 'an object with no Deed stamps is skipped as foreign, never reaped',
    obj: { metadata: { name: 'web-0', namespace: 'sandbox-a', uid: 'u-1', labels: { app: 'web' } } },
    owner: absent,
    action: 'skip',
    code: 'foreign-environment',
  },
  {
    name: 'an object validly stamped for another environment is skipped, even with its owner gone',
    obj: pod({ environment: 'beta' }),
    owner: absent,
    action: 'skip',
    code: 'foreign-environment',
  },
  {
    name: 'an object whose managed label is not "true" is skipped',
    obj: edit(pod(), (o) => (o.metadata.labels![KEYS.managed] = 'false')),
    owner: absent,
    action: 'skip',
    code: 'not-managed',
  },
  {
    name: 'an object without a uid is skipped: it could not be deleted by precondition',
    obj: edit(pod(), (o) => delete o.metadata.uid),
    owner: absent,
    action: 'skip',
    code: 'unidentifiable',
  },
  // Copied labels: stamps without Deed's attestation are not evidence.
  {
    name: 'copied Deed labels and annotations without an attestation are skipped as foreign or tampered',
    obj: edit(pod(), (o) => delete o.metadata.annotations![KEYS.attestation]),
    owner: absent,
    action: 'skip',
    code: 'attestation-invalid',
  },
  {
    name: 'copied Deed labels without a create nonce are skipped',
    obj: edit(pod(), (o) => delete o.metadata.annotations![KEYS.createNonce]),
    owner: absent,
    action: 'skip',
    code: 'stamps-incomplete',
  },
  {
    name: "a Pod's stamps and attestation copied onto a Secret are skipped (the kind is attested)",
    kind: 'Secret',
    obj: pod(),
    owner: absent,
    action: 'skip',
    code: 'attestation-invalid',
  },
  {
    name: 'stamps and attestation copied into another namespace are skipped (the namespace is attested)',
    obj: edit(pod(), (o) => (o.metadata.namespace = 'sandbox-b')),
    owner: absent,
    action: 'skip',
    code: 'attestation-invalid',
  },
  {
    name: 'an attestation signed with a key other than Deed’s is skipped',
    obj: pod({ signingKey: OTHER_KEY }),
    owner: absent,
    action: 'skip',
    code: 'attestation-invalid',
  },
  {
    name: 'an owner-uid label re-aimed at a gone pod breaks the attestation and is skipped',
    obj: edit(pod(), (o) => (o.metadata.labels![KEYS.ownerUid] = REPLACEMENT_UID)),
    owner: absent,
    action: 'skip',
    code: 'attestation-invalid',
  },
  {
    name: 'an expires-at pulled into the past breaks the attestation and is skipped',
    obj: edit(pod({ expiresAt: iso(3600) }), (o) => (o.metadata.annotations![KEYS.expiresAt] = iso(-3600))),
    owner: absent,
    action: 'skip',
    code: 'attestation-invalid',
  },
  // Owner liveness: only NotFound or another UID proves it gone; errors keep.
  {
    name: 'an object whose owner still runs with the stamped uid is kept, though its deadline passed',
    obj: pod(),
    owner: present,
    action: 'keep',
    code: 'owner-running',
  },
  {
    name: 'an object whose owner could not be read (5xx, timeout, 403) is kept',
    obj: pod(),
    owner: unreadable,
    action: 'keep',
    code: 'owner-unreadable',
  },
  {
    name: 'an object judged without an owner lookup is kept',
    obj: pod(),
    action: 'keep',
    code: 'owner-not-read',
  },
  {
    name: 'an object whose owner is NotFound and whose deadline passed is reaped (killed runner)',
    obj: pod(),
    owner: absent,
    action: 'reap',
    code: 'owner-gone',
  },
  {
    name: 'an object whose owner name now belongs to another uid is reaped (owner recreated)',
    obj: pod(),
    owner: replaced,
    action: 'reap',
    code: 'owner-replaced',
  },
  {
    name: 'an object whose owner is gone but whose deadline is still ahead is kept',
    obj: pod({ expiresAt: iso(60) }),
    owner: absent,
    action: 'keep',
    code: 'deadline-pending',
  },
  {
    name: 'a deadline that falls exactly now has passed',
    obj: pod({ expiresAt: iso(0) }),
    owner: absent,
    action: 'reap',
    code: 'owner-gone',
  },
  {
    name: 'a NetworkPolicy (no deadline) whose owner is gone is reaped',
    kind: 'NetworkPolicy',
    obj: stamped({ kind: 'NetworkPolicy', name: 'sbx-1-egress' }),
    owner: absent,
    action: 'reap',
    code: 'owner-gone',
  },
  {
    name: 'an attested deadline that is not an RFC 3339 time is kept',
    obj: pod({ expiresAt: 'tomorrow' }),
    owner: absent,
    action: 'keep',
    code: 'deadline-unreadable',
  },
  {
    name: 'an attested owner annotation without a namespace is kept',
    obj: stamped({ kind: 'Pod', name: 'sbx-1', owner: { ...RUNNER, namespace: '' } }),
    owner: absent,
    action: 'keep',
    code: 'owner-stamp-malformed',
  },
  // Without an owner stamp only the deadline speaks.
  {
    name: 'an object without an owner stamp whose deadline passed is reaped',
    kind: 'Secret',
    obj: stamped({ kind: 'Secret', name: 'sbx-1-token', owner: null, expiresAt: iso(-1) }),
    action: 'reap',
    code: 'deadline-passed',
  },
  {
    name: 'an object without an owner stamp whose deadline is ahead is kept',
    kind: 'Secret',
    obj: stamped({ kind: 'Secret', name: 'sbx-1-token', owner: null, expiresAt: iso(1) }),
    action: 'keep',
    code: 'deadline-pending',
  },
  {
    name: 'an object with neither an owner stamp nor a deadline is kept',
    kind: 'NetworkPolicy',
    obj: stamped({ kind: 'NetworkPolicy', name: 'sbx-1-egress', owner: null }),
    action: 'keep',
    code: 'no-evidence',
  },
  {
    name: 'an object already being deleted is kept, not deleted again',
    obj: edit(pod(), (o) => (o.metadata.deletionTimestamp = '2026-11-29T15:20:00Z')),
    owner: absent,
    action: 'keep',
    code: 'being-deleted',
  },
  {
    name: 'one held by finalizers, but within the deadline grace of its deletion, is being deleted',
    obj: edit(pod(), (o) => {
      o.metadata.deletionTimestamp = '2026-11-29T15:20:00Z';
      o.metadata.finalizers = ['example.com/never'];
    }),
    owner: absent,
    action: 'keep',
    code: 'being-deleted',
  },
  {
    name: 'one still held by finalizers past the deadline grace is stuck (rev-87: an environment may add any finalizer to its own leak): kept, under a code an alert can watch',
    obj: edit(pod(), (o) => {
      o.metadata.deletionTimestamp = '2026-11-29T14:00:00Z';
      o.metadata.finalizers = ['example.com/never', 'x'.repeat(300), 'c', 'd', 'e', 'f'];
    }),
    owner: absent,
    action: 'keep',
    code: 'deletion-stuck',
    reason: /being deleted since 2026-11-29T14:00:00Z, more than 900 s \(reaper\.deadlineGraceSeconds\), and still held by finalizers "example\.com\/never", "x{64}…", "c", "d" and 2 more: whatever should remove them is gone or keeps the object/,
  },
  // PVCs: only the platform's terminal mark ends a workspace.
  {
    name: 'a PVC whose owner is gone but which is not marked terminal is kept',
    kind: 'PersistentVolumeClaim',
    obj: stamped({ kind: 'PersistentVolumeClaim', name: 'workspace' }),
    owner: absent,
    action: 'keep',
    code: 'pvc-not-terminal',
  },
  {
    name: 'a PVC marked terminal "True" (not exactly "true") is kept',
    kind: 'PersistentVolumeClaim',
    obj: stamped({ kind: 'PersistentVolumeClaim', name: 'workspace', terminal: 'True' }),
    owner: absent,
    action: 'keep',
    code: 'pvc-not-terminal',
  },
  {
    name: 'a PVC marked terminal is reaped, whatever its runner does',
    kind: 'PersistentVolumeClaim',
    obj: stamped({ kind: 'PersistentVolumeClaim', name: 'workspace', terminal: 'true' }),
    owner: present,
    action: 'reap',
    code: 'terminal',
  },
  {
    name: 'a PVC marked terminal but stamped for another environment is skipped',
    kind: 'PersistentVolumeClaim',
    obj: stamped({ kind: 'PersistentVolumeClaim', name: 'workspace', terminal: 'true', environment: 'beta' }),
    action: 'skip',
    code: 'foreign-environment',
  },
  {
    name: 'a PVC marked terminal without a valid attestation is skipped',
    kind: 'PersistentVolumeClaim',
    obj: stamped({ kind: 'PersistentVolumeClaim', name: 'workspace', terminal: 'true', signingKey: OTHER_KEY }),
    action: 'skip',
    code: 'attestation-invalid',
  },
];

describe('reaper verdict', () => {
  for (const c of CASES) {
    test(c.name, () => {
      const v = verdict(c.obj, c.kind ?? 'Pod', reaperContext(), c.owner);
      assert.equal(v.action, c.action, v.reason);
      assert.equal(v.code, c.code, v.reason);
      assert.ok(v.reason.length > 0);
      if (c.reason) assert.match(v.reason, c.reason);
    });
  }

  test('the owner to read is the stamped runner for an attested Pod of this environment', () => {
    assert.deepEqual(ownerToRead(pod(), 'Pod', reaperContext()), RUNNER);
  });

  test('no owner is read for foreign, tampered, ownerless or PVC objects', () => {
    const ctx = reaperContext();
    assert.equal(ownerToRead(pod({ environment: 'beta' }), 'Pod', ctx), undefined);
    assert.equal(ownerToRead(pod({ signingKey: OTHER_KEY }), 'Pod', ctx), undefined);
    assert.equal(ownerToRead(stamped({ kind: 'Secret', name: 's', owner: null, expiresAt: iso(-1) }), 'Secret', ctx), undefined);
    assert.equal(ownerToRead(stamped({ kind: 'PersistentVolumeClaim', name: 'w' }), 'PersistentVolumeClaim', ctx), undefined);
  });

  test('the verdict uses the clock it is given: the same object is kept before its deadline and reaped after', () => {
    const obj = pod({ expiresAt: iso(600) });
    assert.equal(verdict(obj, 'Pod', reaperContext(NOW), absent).action, 'keep');
    assert.equal(verdict(obj, 'Pod', reaperContext(NOW + 600_000), absent).action, 'reap');
  });

  test('a validly stamped orphan in a namespace outside the review scope is skipped, and its owner is not read', () => {
    const planted = stamped({ kind: 'Secret', name: 'planted', namespace: 'plain', owner: { ...RUNNER, namespace: 'plain' }, expiresAt: iso(-60) });
    const v = verdict(planted, 'Secret', reaperContext(), absent);
    assert.equal(v.action, 'skip', v.reason);
    assert.equal(v.code, 'outside-review-scope');
    assert.match(v.reason, /namespace plain is outside the review scope/);
    assert.equal(ownerToRead(planted, 'Secret', reaperContext()), undefined);
    // The same object, had its namespace been in the scope, would be reaped: the scope alone decides.
    assert.equal(verdict(planted, 'Secret', { ...reaperContext(), inReviewScope: () => true }, absent).action, 'reap');
  });

  test('an alpha object is foreign to a reaper acting for beta', () => {
    assert.equal(verdict(pod(), 'Pod', { ...reaperContext(), environment: 'beta' }, absent).code, 'foreign-environment');
  });

  test('any change to an attested stamp of a reapable object makes it unreapable', () => {
    const base = pod();
    assert.equal(verdict(base, 'Pod', reaperContext(), absent).action, 'reap');
    const where = [
      ['labels', KEYS.environment],
      ['labels', KEYS.ownerUid],
      ['annotations', KEYS.owner],
      ['annotations', KEYS.createNonce],
      ['annotations', KEYS.expiresAt],
      ['annotations', KEYS.attestation],
    ] as const;
    fc.assert(
      fc.property(fc.constantFrom(...where), fc.string({ maxLength: 80 }), ([field, key], value) => {
        fc.pre(value !== base.metadata[field]![key]);
        const changed = edit(base, (o) => (o.metadata[field]![key] = value));
        assert.notEqual(verdict(changed, 'Pod', reaperContext(), absent).action, 'reap');
      }),
      { numRuns: 300 },
    );
  });
});
