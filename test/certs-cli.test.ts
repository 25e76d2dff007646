import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificates } from '../src/server/certificates.js';
import { deed, type CliResult } from './cli-process.js';

const NAMES = ['deed.deed-system.svc', 'deed.deed-system.svc.cluster.local'];

/** A TLS handshake against the generated pair, verified as the API server would: by the CA and the name (no name: by the address it connects to). */
async function handshake(dir: string, ca: string, servername: string | undefined): Promise<Error | undefined> {
  const server = createServer({ cert: readFileSync(join(dir, 'tls.crt')), key: readFileSync(join(dir, 'tls.key')) }, (s) => s.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<Error | undefined>((resolve) => {
      const socket: TLSSocket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ca, ...(servername === undefined ? {} : { servername }) }, () => {
        socket.end();
        resolve(undefined);
      });
      socket.on('error', (err) => resolve(err));
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('deed certs', () => {
  let dir: string;
  let out: CliResult;
  let ca: string;

  before(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'deed-certs-')), 'out');
    out = deed(['certs', '--out', dir, ...NAMES.flatMap((n) => ['--dns', n])]);
    assert.equal(out.status, 0, out.stderr);
    ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  });

  test('prints the CA bundle in base64, exactly the PEM it wrote', () => {
    assert.match(out.stdout, /^[A-Za-z0-9+/]+=*\n$/);
    assert.equal(Buffer.from(out.stdout.trim(), 'base64').toString('utf8'), ca);
  });

  test('the CA is a CA and signed the serving certificate', () => {
    const caCert = new X509Certificate(ca);
    const serving = new X509Certificate(readFileSync(join(dir, 'tls.crt')));
    assert.equal(caCert.ca, true);
    assert.equal(serving.ca, false);
    assert.ok(serving.checkIssued(caCert));
    assert.ok(serving.verify(caCert.publicKey));
    for (const name of NAMES) assert.equal(serving.checkHost(name), name);
    assert.equal(serving.checkHost('deed.other.svc'), undefined);
  });

  for (const name of NAMES) {
    test(`a TLS client trusting only the CA accepts the serving certificate for ${name}`, async () => {
      assert.equal(await handshake(dir, ca, name), undefined);
    });
  }

  test('a TLS client refuses the certificate for a name that was not requested', async () => {
    const err = await handshake(dir, ca, 'deed.elsewhere.svc');
    assert.ok(err);
    assert.match(err.message, /altnames|Hostname/i);
  });

  test('private keys are readable by their owner only', () => {
    for (const key of ['ca.key', 'tls.key']) assert.equal(statSync(join(dir, key)).mode & 0o077, 0, key);
  });

  test('refuses to replace an existing CA without --force, and replaces it with', () => {
    const again = deed(['certs', '--out', dir, '--dns', NAMES[0]!]);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /--force/);
    assert.equal(readFileSync(join(dir, 'ca.crt'), 'utf8'), ca);
    const forced = deed(['certs', '--out', dir, '--dns', NAMES[0]!, '--force']);
    assert.equal(forced.status, 0, forced.stderr);
    assert.notEqual(readFileSync(join(dir, 'ca.crt'), 'utf8'), ca);
  });

  test('--dns localhost also names the loopback addresses in IP SANs: a webhook registered by URL at 127.0.0.1 verifies', async () => {
    const local = join(dir, 'local');
    const run = deed(['certs', '--out', local, '--dns', 'localhost']);
    assert.equal(run.status, 0, run.stderr);
    const serving = new X509Certificate(readFileSync(join(local, 'tls.crt')));
    assert.equal(serving.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    assert.equal(await handshake(local, readFileSync(join(local, 'ca.crt'), 'utf8'), undefined), undefined);

    const serviceOnly = join(dir, 'service-only');
    assert.equal(deed(['certs', '--out', serviceOnly, '--dns', NAMES[0]!]).status, 0);
    const refused = await handshake(serviceOnly, readFileSync(join(serviceOnly, 'ca.crt'), 'utf8'), undefined);
    assert.match(refused?.message ?? '', /IP: 127\.0\.0\.1 is not in the cert's list/, 'without localhost, a client connecting to 127.0.0.1 refuses it');
  });

  test('--ip puts an address in an IP SAN, and refuses what is not an address', () => {
    const byIp = join(dir, 'by-ip');
    const run = deed(['certs', '--out', byIp, '--dns', NAMES[0]!, '--ip', '10.96.0.10', '--ip', 'fd00::10']);
    assert.equal(run.status, 0, run.stderr);
    const serving = new X509Certificate(readFileSync(join(byIp, 'tls.crt')));
    assert.equal(serving.checkIP('10.96.0.10'), '10.96.0.10');
    assert.equal(serving.checkIP('fd00::10'), 'fd00::10');
    assert.equal(serving.checkHost('10.96.0.10'), undefined, 'an address is not a DNS name');
    const bad = deed(['certs', '--out', join(dir, 'bad-ip'), '--ip', 'deed.local']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /must be an IPv4 or IPv6 address/);
  });

  test('without a --dns name it exits 2 and says what name the API server uses', () => {
    const none = deed(['certs', '--out', join(dir, 'none')]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /SERVICE\.NAMESPACE\.svc/);
  });
});

// writeFileSync's mode applies only to a file it creates: keys written over earlier files kept their mode, and a symlink at the name was followed (rev-89).
describe('deed certs and deed serve write private keys owner-only, whatever stood at their names', () => {
  const mode = (f: string) => (statSync(f).mode & 0o777).toString(8);

  test('deed certs --force over earlier world-readable files leaves both private keys 0600, and no temporary file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-certs-over-'));
    for (const f of ['ca.crt', 'ca.key', 'tls.crt', 'tls.key']) {
      writeFileSync(join(dir, f), 'old');
      chmodSync(join(dir, f), 0o644);
    }
    const run = deed(['certs', '--out', dir, '--dns', NAMES[0]!, '--force']);
    assert.equal(run.status, 0, run.stderr);
    assert.match(readFileSync(join(dir, 'tls.key'), 'utf8'), /PRIVATE KEY/);
    assert.equal(mode(join(dir, 'ca.key')), '600', 'the CA key');
    assert.equal(mode(join(dir, 'tls.key')), '600', 'the serving key');
    assert.equal(mode(join(dir, 'tls.crt')), '644');
    assert.deepEqual(readdirSync(dir).sort(), ['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
  });

  test('a symlink planted at tls.key is replaced, not written through', () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-certs-link-'));
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'deed-certs-elsewhere-')), 'collected.txt');
    writeFileSync(elsewhere, '');
    symlinkSync(elsewhere, join(dir, 'tls.key'));
    const run = deed(['certs', '--out', dir, '--dns', NAMES[0]!]);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(readFileSync(elsewhere, 'utf8'), '', "the link's target is untouched");
    assert.equal(lstatSync(join(dir, 'tls.key')).isSymbolicLink(), false);
    assert.equal(mode(join(dir, 'tls.key')), '600');
  });

  test("deed serve's own regeneration over an earlier group-writable key leaves it 0600", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-serve-keys-'));
    writeFileSync(join(dir, 'tls.key'), 'old');
    chmodSync(join(dir, 'tls.key'), 0o664);
    await generateCertificates(dir, ['localhost']);
    assert.equal(mode(join(dir, 'tls.key')), '600');
  });
});
