// Deed's connection limits with the real API server as the client: strict client
// certificates (the API server presents the one its AdmissionConfiguration names), and a
// flood of connections that never finish beside the API server's own connection.
import assert from 'node:assert/strict';
import { getPlain } from '../../serve-process.js';
import { describe, test } from 'node:test';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { KubeObject } from '../../../src/admission/types.js';
import { KEYS, label, PATHS, secret } from '../objects.js';
import type { Suite } from '../suite.js';

/** What a client without a client certificate gets from Deed's webhook port. */
function withoutCertificate(port: number, ca: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', servername: 'localhost', port, ca });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.on('secureConnect', () => socket.write('GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    socket.on('data', (c: Buffer) => resolve(`answered: ${c.toString('utf8').slice(0, 40)}`));
    socket.on('close', () => resolve('closed without an answer'));
  });
}

/** A TLS connection that sends part of a request header, then nothing; resolves when the server closes it. */
function partialHeader(port: number, ca: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', servername: 'localhost', port, ca, ALPNProtocols: ['http/1.1'] }, () => socket.write('POST /validate HTTP/1.1\r\nHost: x\r\n'));
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
}

async function createSecret(s: Suite, name: string): Promise<KubeObject> {
  const created = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), secret(name));
  assert.equal(created.status, 201, created.text);
  return created.body as KubeObject;
}

export function connectionCases(suite: () => Suite): void {
  describe('connections to Deed', () => {
    test('with --client-ca the API server presents its client certificate and writes are stamped; a client without one never completes a handshake; probes answer on the metrics port', async () => {
      const s = suite();
      try {
        await s.restartDeed(undefined, ['--client-ca', s.cp.webhookClientCaFile, '--metrics-port', '0']);
        const stored = await createSecret(s, 'strict-client-cert');
        assert.equal(label(stored, KEYS.managed), 'true');
        assert.equal(label(stored, KEYS.environment), 'alpha');
        assert.match(await withoutCertificate(s.deed.port, s.deed.ca), /CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE|ECONNRESET|closed without an answer/);
        assert.ok(s.deed.metricsPort);
        assert.equal((await getPlain(s.deed.metricsPort, '/readyz')).status, 200);
        assert.equal((await getPlain(s.deed.metricsPort, '/healthz')).status, 200);
      } finally {
        await s.restartDeed();
      }
    });

    test("with --client-ca, the API server's fresh connection is served while connections that never start TLS hold every slot", async () => {
      const s = suite();
      const flood: Socket[] = [];
      try {
        // Restarted: the API server's next write opens a new connection, into a full house.
        await s.restartDeed(undefined, ['--client-ca', s.cp.webhookClientCaFile, '--metrics-port', '0', '--max-connections', '20']);
        for (let i = 0; i < 40; i++) {
          const socket = netConnect({ host: '127.0.0.1', port: s.deed.port });
          socket.on('error', () => {});
          flood.push(socket);
          await new Promise((resolve) => (socket.once('connect', resolve), socket.once('close', resolve)));
        }
        const stored = await createSecret(s, 'fresh-connection-during-flood');
        assert.equal(label(stored, KEYS.managed), 'true');
        const metrics = (await getPlain(s.deed.metricsPort!, '/metrics')).body;
        assert.ok(Number(/^deed_connections_refused_total\{reason="total"\} (\d+)/m.exec(metrics)?.[1]) >= 20, 'the oldest connections in their handshake were closed to make room');
      } finally {
        for (const socket of flood) socket.destroy();
        await s.restartDeed();
      }
    });

    test("a flood of connections past --max-connections is refused or closed at the headers deadline, while the API server's connection keeps serving writes", async () => {
      const s = suite();
      try {
        await s.restartDeed(undefined, ['--max-connections', '30', '--headers-timeout', '1']);
        await createSecret(s, 'before-the-flood'); // the API server's connection is up
        const flood = Array.from({ length: 100 }, () => partialHeader(s.deed.port, s.deed.ca));
        await new Promise((r) => setTimeout(r, 200));
        const during = await createSecret(s, 'during-the-flood');
        assert.equal(label(during, KEYS.managed), 'true');
        const closedWithin = await Promise.race([Promise.all(flood).then(() => 'all closed'), new Promise((r) => setTimeout(() => r('still open after 15 s'), 15_000))]);
        assert.equal(closedWithin, 'all closed');
        const metrics = await new Promise<string>((resolve) => {
          const req = tlsConnect({ host: '127.0.0.1', servername: 'localhost', port: s.deed.port, ca: s.deed.ca }, () => req.write('GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
          let text = '';
          req.on('data', (c: Buffer) => (text += c.toString('utf8')));
          req.on('close', () => resolve(text));
          req.on('error', () => resolve(text));
        });
        assert.ok(Number(/^deed_connections_refused_total\{reason="total"\} (\d+)/m.exec(metrics)?.[1]) > 0, 'refusals are counted');
        assert.ok(Number(/^deed_connections_timed_out_total\{phase="headers"\} (\d+)/m.exec(metrics)?.[1]) > 0, 'headers deadlines are counted');
      } finally {
        await s.restartDeed();
      }
    });
  });
}
