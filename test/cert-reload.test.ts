import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { generateCertificates } from '../src/server/certificates.js';
import { FIXTURES } from './helpers.js';
import { get, postH2, startServe } from './serve-process.js';

interface Issued {
  cert: string;
  key: string;
  ca: string;
  fingerprint: string;
  notAfter: number;
}

async function issue(validDays: number): Promise<Issued> {
  const dir = mkdtempSync(join(tmpdir(), 'deed-issue-'));
  const files = await generateCertificates(dir, ['localhost', '127.0.0.1'], validDays);
  const cert = readFileSync(files.certFile, 'utf8');
  const x = new X509Certificate(cert);
  return { cert, key: readFileSync(files.keyFile, 'utf8'), ca: readFileSync(files.caFile, 'utf8'), fingerprint: x.fingerprint256, notAfter: Date.parse(x.validTo) / 1000 };
}

/**
 * The fingerprint of the certificate a brand-new TLS connection is served. Not verified
 * against a CA (both test CAs share a subject name); the handshake still proves the
 * server holds the matching key, and the fingerprint names the exact certificate.
 */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch((err: unknown) => err as T);
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${String(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How a mounted certificate gets replaced. */
interface Layout {
  name: string;
  /** Writes the first pair and returns the paths deed serve is given. */
  install(dir: string, pair: Issued): { certFile: string; keyFile: string };
  replace(dir: string, pair: Issued): void;
}

const layouts: Layout[] = [
  {
    name: 'new files written beside the old ones, then renamed over them',
    install(dir, pair) {
      writeFileSync(join(dir, 'tls.crt'), pair.cert);
      writeFileSync(join(dir, 'tls.key'), pair.key);
      return { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
    },
    replace(dir, pair) {
      writeFileSync(join(dir, '.tls.crt.new'), pair.cert);
      writeFileSync(join(dir, '.tls.key.new'), pair.key);
      renameSync(join(dir, '.tls.key.new'), join(dir, 'tls.key'));
      renameSync(join(dir, '.tls.crt.new'), join(dir, 'tls.crt'));
    },
  },
  {
    name: 'a Secret volume update: the kubelet swaps the ..data symlink to a new directory',
    install(dir, pair) {
      mkdirSync(join(dir, '..v1'));
      writeFileSync(join(dir, '..v1', 'tls.crt'), pair.cert);
      writeFileSync(join(dir, '..v1', 'tls.key'), pair.key);
      symlinkSync('..v1', join(dir, '..data'));
      symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
      symlinkSync('..data/tls.key', join(dir, 'tls.key'));
      return { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
    },
    replace(dir, pair) {
      mkdirSync(join(dir, '..v2'));
      writeFileSync(join(dir, '..v2', 'tls.crt'), pair.cert);
      writeFileSync(join(dir, '..v2', 'tls.key'), pair.key);
      symlinkSync('..v2', join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    },
  },
];

describe('serving certificates replaced on disk are picked up without a restart', () => {
  for (const layout of layouts) {
    test(`new connections get the new certificate after ${layout.name}`, async () => {
      const [first, second] = await Promise.all([issue(30), issue(90)]);
      const mount = mkdtempSync(join(tmpdir(), 'deed-tls-'));
      const { certFile, keyFile } = layout.install(mount, first);
      const server = await startServe(['--tls-cert', certFile, '--tls-key', keyFile, '--cert-poll-seconds', '1']);
      try {
        assert.equal(await servedFingerprint(server.port), first.fingerprint, 'the first certificate is served');
        const pid = server.child.pid;

        layout.replace(mount, second);
        await until('the new certificate', () => servedFingerprint(server.port), (f) => f === second.fingerprint);

        assert.equal(server.child.pid, pid);
        assert.equal(server.child.exitCode, null, 'the same process, never restarted');
        await until('the reload log line', async () => server.logs(), (logs) => logs.some((l) => l.msg === 'serving certificate reloaded'));
        // The reloaded context still offers HTTP/2 and answers reviews, verified by the new CA only.
        const answer = await postH2({ port: server.port, ca: second.ca }, '/mutate', readFileSync(join(FIXTURES, 'mutate-create-pod-by-runner.json'), 'utf8'));
        assert.equal(answer.alpn, 'h2');
        assert.equal(answer.status, 200);
        const metrics = await get({ port: server.port, ca: second.ca }, '/metrics');
        const expiry = /^deed_certificate_expiry_timestamp_seconds (\S+)$/m.exec(metrics.body);
        assert.ok(expiry, 'the expiry gauge is exported');
        assert.equal(Number(expiry[1]), second.notAfter, 'and follows the reloaded certificate');
      } finally {
        assert.equal(await server.stop(), 0);
      }
    });
  }

  test('a half-replaced pair (new certificate, old key) keeps the old certificate serving', async () => {
    const [first, second] = await Promise.all([issue(30), issue(90)]);
    const mount = mkdtempSync(join(tmpdir(), 'deed-tls-'));
    const { certFile, keyFile } = layouts[0]!.install(mount, first);
    const server = await startServe(['--tls-cert', certFile, '--tls-key', keyFile, '--cert-poll-seconds', '1']);
    try {
      writeFileSync(join(mount, '.tls.crt.new'), second.cert);
      renameSync(join(mount, '.tls.crt.new'), certFile);
      await until('a logged reload failure', async () => server.logs(), (logs) => logs.some((l) => String(l.msg).startsWith('certificate reload failed')));
      assert.equal(await servedFingerprint(server.port), first.fingerprint, 'still the first certificate');

      writeFileSync(join(mount, '.tls.key.new'), second.key);
      renameSync(join(mount, '.tls.key.new'), keyFile);
      await until('the new certificate once the key follows', () => servedFingerprint(server.port), (f) => f === second.fingerprint);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});
