import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config/load.js';
import { loadKeyRing } from '../src/server/attestation-key.js';
import { parseAttestation, signV1, signV2, type AttestedStamps } from '../src/policy/stamps/attestation.js';
import { createKeyRing, signStamps, singleKeyRing, verifyStamps, type KeyRing, type Verification } from '../src/policy/stamps/key-ring.js';

const OLD = Buffer.from('old-attestation-key-0123456789abcdef-old');
const NEW = Buffer.from('new-attestation-key-0123456789abcdef-new');
const STRANGER = Buffer.from('a key that was never in any of the rings!');

const STAMPS: AttestedStamps = {
  kind: 'Pod',
  namespace: 'sandbox-a',
  environment: 'alpha',
  ownerUid: '144baa57-4863-4fb3-a622-a0c0ecb4a7ff',
  owner: 'sandbox-a/runner-0',
  nonce: 'a'.repeat(64),
  expiresAt: '2026-11-29T17:00:00Z',
};

/** The three steps of a rotation from `old` to `new`. */
const withNewVerifyOnly = createKeyRing([{ id: 'old', key: OLD }, { id: 'new', key: NEW }], 'old', 'v2');
const withNewSigning = createKeyRing([{ id: 'old', key: OLD }, { id: 'new', key: NEW }], 'new', 'v2');
const oldRetired = createKeyRing([{ id: 'new', key: NEW }], 'new', 'v2');

function verifies(ring: KeyRing, attestation: string, stamps = STAMPS): Verification {
  return verifyStamps(ring, stamps, attestation);
}

describe('the attestation format', () => {
  test('a ring signs v2, naming the signing key', () => {
    assert.match(signStamps(withNewVerifyOnly, STAMPS), /^v2:old:[A-Za-z0-9_-]{43}$/);
    assert.match(signStamps(withNewSigning, STAMPS), /^v2:new:[A-Za-z0-9_-]{43}$/);
  });

  test('the pre-ring form (keyFile) still signs v1, byte for byte as before rings', () => {
    const ring = singleKeyRing(OLD);
    assert.equal(signStamps(ring, STAMPS), signV1(OLD, STAMPS));
    assert.match(signStamps(ring, STAMPS), /^v1:[A-Za-z0-9_-]{43}$/);
  });

  test('parsing knows both formats and refuses anything else', () => {
    assert.deepEqual(parseAttestation(signV1(OLD, STAMPS)), { format: 'v1' });
    assert.deepEqual(parseAttestation(signV2(OLD, 'k-2026.12', STAMPS)), { format: 'v2', keyId: 'k-2026.12' });
    for (const bad of ['', 'v1:', 'v1:short', 'v2::AAAA', `v2:${'x'.repeat(64)}:${'A'.repeat(43)}`, `v2:a:b:${'A'.repeat(43)}`, `v3:${'A'.repeat(43)}`, `v2:.hidden:${'A'.repeat(43)}`])
      assert.equal(parseAttestation(bad), undefined, bad);
  });

  test('v2 distinguishes an absent stamp from an empty one', () => {
    const absent = { ...STAMPS, ownerUid: undefined, owner: undefined, expiresAt: undefined };
    const value = signStamps(withNewSigning, absent);
    assert.ok(verifies(withNewSigning, value, absent).ok);
    assert.ok(!verifies(withNewSigning, value, { ...absent, ownerUid: '' }).ok, 'owner-uid ""');
    assert.ok(!verifies(withNewSigning, value, { ...absent, expiresAt: '' }).ok, 'expires-at ""');
    assert.ok(!verifies(withNewSigning, value, { ...absent, owner: '' }).ok, 'owner ""');
  });

  test('v1 keeps its old canonical form, in which an empty stamp verifies like an absent one', () => {
    const absent = { ...STAMPS, ownerUid: undefined, expiresAt: undefined };
    const value = signV1(OLD, absent);
    assert.ok(verifies(singleKeyRing(OLD), value, { ...absent, ownerUid: '', expiresAt: '' }).ok);
  });

  test('the key id is covered by the mac: the same key under another id gives another mac', () => {
    const mac = (id: string) => signV2(OLD, id, STAMPS).split(':')[2];
    assert.notEqual(mac('old'), mac('new'));
  });
});

describe('verifying through the ring', () => {
  test('every key of the ring verifies what it signed, and says which key it was', () => {
    const byOld = signStamps(withNewVerifyOnly, STAMPS);
    const byNew = signStamps(withNewSigning, STAMPS);
    for (const ring of [withNewVerifyOnly, withNewSigning]) {
      assert.deepEqual(verifies(ring, byOld), { ok: true, format: 'v2', keyId: 'old' });
      assert.deepEqual(verifies(ring, byNew), { ok: true, format: 'v2', keyId: 'new' });
    }
  });

  test('a v1 attestation verifies under whichever ring key signed it, and is attributed to that key', () => {
    const v1 = signV1(OLD, STAMPS);
    assert.deepEqual(verifies(withNewSigning, v1), { ok: true, format: 'v1', keyId: 'old' });
    assert.deepEqual(verifies(createKeyRing([{ id: 'key', key: OLD }], 'key', 'v2'), v1), { ok: true, format: 'v1', keyId: 'key' });
  });

  test('once the old key is retired, what it signed no longer verifies, v1 or v2, and the reason names the key', () => {
    const v2 = verifies(oldRetired, signV2(OLD, 'old', STAMPS));
    assert.equal(v2.ok, false);
    assert.match(!v2.ok ? v2.reason : '', /names key "old", which is not in the key ring/);
    const v1 = verifies(oldRetired, signV1(OLD, STAMPS));
    assert.equal(v1.ok, false);
    assert.match(!v1.ok ? v1.reason : '', /under any key of the ring/);
  });

  test('edited stamps do not verify under the key the attestation names', () => {
    const value = signStamps(withNewSigning, STAMPS);
    const v = verifies(withNewSigning, value, { ...STAMPS, environment: 'beta' });
    assert.equal(v.ok, false);
    assert.match(!v.ok ? v.reason : '', /does not verify over the stamps under key "new"/);
  });

  test('a key outside the ring that signs under a ring id does not verify', () => {
    assert.ok(!verifies(withNewSigning, signV2(STRANGER, 'new', STAMPS)).ok);
    assert.ok(!verifies(withNewSigning, signV1(STRANGER, STAMPS)).ok);
  });

  test('absent and malformed attestations fail with a reason, never an exception', () => {
    assert.deepEqual(verifyStamps(withNewSigning, STAMPS, undefined), { ok: false, format: 'none', reason: 'is absent' });
    for (const bad of ['', 'v2:new:', 'garbage', 'v2:new:' + 'A'.repeat(42), 'v1:' + '='.repeat(43)]) assert.equal(verifies(withNewSigning, bad).ok, false);
  });

  test('the observer sees every verification, successful or not', () => {
    const seen: Verification[] = [];
    const ring: KeyRing = { ...withNewSigning, observe: (v) => seen.push(v) };
    verifyStamps(ring, STAMPS, signStamps(ring, STAMPS));
    verifyStamps(ring, STAMPS, signV2(OLD, 'gone', STAMPS));
    assert.deepEqual(
      seen.map((v) => [v.ok, v.keyId]),
      [
        [true, 'new'],
        [false, 'gone'],
      ],
    );
  });
});

describe('the last MAC, remembered between signing and verifying the same stamps', () => {
  test('verifying right after signing answers as a fresh computation does, for the same, edited and other-key stamps', () => {
    const ring = singleKeyRing(OLD);
    const attestation = signStamps(ring, STAMPS);
    assert.equal(verifies(ring, attestation).ok, true);
    // The remembered MAC is for one key and one text: edited stamps, or another key, compute their own.
    assert.equal(verifies(ring, attestation, { ...STAMPS, environment: 'beta' }).ok, false);
    assert.equal(verifies(singleKeyRing(STRANGER), attestation).ok, false);
    const other = Buffer.from(OLD); // same material, another buffer: still the same MAC
    assert.equal(verifies(singleKeyRing(other), attestation).ok, true);
    assert.equal(signV1(NEW, STAMPS), signV1(NEW, STAMPS));
    assert.notEqual(signV1(NEW, STAMPS), signV1(OLD, STAMPS));
  });
});

describe('building a ring', () => {
  test('the signing key must be in the ring', () => {
    assert.throws(() => createKeyRing([{ id: 'old', key: OLD }], 'new', 'v2'), /signing key "new" is not in the key ring \(old\)/);
  });

  test('ids are unique and valid', () => {
    assert.throws(() => createKeyRing([{ id: 'a', key: OLD }, { id: 'a', key: NEW }], 'a', 'v2'), /appears twice/);
    assert.throws(() => createKeyRing([{ id: 'a:b', key: OLD }], 'a:b', 'v2'), /not a valid key id/);
  });

  test('the same material under two ids is refused: retiring one id would not retire the key', () => {
    assert.throws(() => createKeyRing([{ id: 'a', key: OLD }, { id: 'b', key: Buffer.from(OLD) }], 'a', 'v2'), /"a" and "b" hold the same material/);
  });
});

describe("the policy's key ring", () => {
  const dir = mkdtempSync(join(tmpdir(), 'deed-ring-'));
  const file = (name: string, key: Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, `${key.toString('latin1')}\n`);
    return path;
  };
  const oldFile = file('old', OLD);
  const newFile = file('new', NEW);

  test('attestation.keys with a signingKey loads a v2 ring from the files', () => {
    const ring = loadKeyRing(parseConfig({ attestation: { keys: [{ id: 'old', file: oldFile }, { id: 'new', file: newFile }], signingKey: 'new' } }));
    assert.deepEqual([...ring.keys.keys()], ['old', 'new']);
    assert.equal(ring.signingKeyId, 'new');
    assert.equal(ring.signingFormat, 'v2');
    assert.ok(ring.keys.get('old')!.equals(OLD), 'the trailing newline is not key material');
  });

  test('a ring of one key needs no signingKey', () => {
    const ring = loadKeyRing(parseConfig({ attestation: { keys: [{ id: 'only', file: oldFile }] } }));
    assert.equal(ring.signingKeyId, 'only');
  });

  test('keyFile is a one-key ring, id "key", signing v1', () => {
    const ring = loadKeyRing(parseConfig({ attestation: { keyFile: oldFile } }));
    assert.deepEqual([...ring.keys.keys()], ['key']);
    assert.equal(ring.signingFormat, 'v1');
  });

  test('a key without a file is read from the Secret mount, and a missing file names it', () => {
    assert.throws(() => loadKeyRing(parseConfig({ attestation: { keys: [{ id: 'k2' }] } })), /\/etc\/deed\/attestation\/k2/);
  });

  test('no key at all: the server generates one, other commands are refused', () => {
    const certDir = mkdtempSync(join(tmpdir(), 'deed-ring-gen-'));
    assert.equal(loadKeyRing(parseConfig({}), certDir).signingFormat, 'v1');
    assert.throws(() => loadKeyRing(parseConfig({})), /names no attestation key/);
  });

  for (const [name, attestation, error] of [
    ['keyFile and keys together', { keyFile: '/k', keys: [{ id: 'a' }] }, /attestation\.keyFile: give either keyFile/],
    ['two keys and no signing key', { keys: [{ id: 'a' }, { id: 'b' }] }, /attestation\.signingKey: must name the key that signs \(one of a, b\)/],
    ['a signing key outside the ring', { keys: [{ id: 'a' }], signingKey: 'b' }, /attestation\.signingKey: "b" is not in attestation\.keys/],
    ['a signing key without a ring', { keyFile: '/k', signingKey: 'a' }, /attestation\.signingKey: names a key of attestation\.keys/],
    ['a duplicate id', { keys: [{ id: 'a' }, { id: 'a' }], signingKey: 'a' }, /attestation\.keys\.1\.id: duplicate key id "a"/],
    ['an id with a colon', { keys: [{ id: 'a:b' }] }, /attestation\.keys\.0\.id: must be a key id/],
    ['an empty ring', { keys: [] }, /attestation\.keys/],
  ] as const) {
    test(`the policy is refused with ${name}`, () => {
      assert.throws(() => parseConfig({ attestation }), error);
    });
  }
});
