import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deed, type CliResult } from './cli-process.js';

const NAMES = ['deed.deed-system.svc', 'deed.deed-system.svc.cluster.local'];

/** A TLS handshake against the generated pair, verified as the API server would: by the CA and the name. */
async function handshake(dir: string, ca: string, servername: string): Promise<Error | undefined> {
  const server = createServer({ cert: readFileSync(join(dir, 'tls.crt')), key: readFileSync(join(dir, 'tls.key')) }, (s) => s.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<Error | undefined>((resolve) => {
      const socket: TLSSocket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ca, servername }, () => {
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

  test('without a --dns name it exits 2 and says what name the API server uses', () => {
    const none = deed(['certs', '--out', join(dir, 'none')]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /SERVICE\.NAMESPACE\.svc/);
  });
});
