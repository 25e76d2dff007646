// A request Node's HTTP parser refuses never reaches a route: the line written for it must not
// carry the bytes read so far (Node's err.rawPacket), which fastify's default handler logged (rev-90).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { buildApp } from '../src/server/app.js';
import { createLogger } from '../src/observability/logger.js';
import { fixture, testContext } from './helpers.js';

const TOKEN = 'rev90-webhook-client-bearer-7d1e3a';
const DATA = Buffer.from('rev90-secret-data-in-a-broken-chunk-b44f').toString('base64');

/** Sends raw bytes on a fresh HTTP/1.1 connection and waits for the server to close it; what it answered. */
async function send(port: number, bytes: string): Promise<string> {
  return new Promise<string>((resolve) => {
    let answer = '';
    const s = connect(port, '127.0.0.1', () => s.write(bytes));
    s.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    s.on('close', () => resolve(answer));
    s.on('error', () => resolve(answer));
  });
}

describe('nothing secret reaches a log line: requests the HTTP parser refuses', () => {
  test('a Secret review cut by a bad chunk size is answered 400 and logged by its error code: neither its Authorization header nor its Secret data reaches a line', async () => {
    const lines: string[] = [];
    // trace: the most verbose level the operator can pick, as test/log-secrets.test.ts runs it.
    const logger = createLogger({ write: (l: string) => void lines.push(l) }, 'trace');
    const { app } = buildApp({ ctx: testContext(), logger });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    try {
      const review = fixture('mutate-create-secret-by-runner.json');
      review.request.object.data = { password: DATA };
      const body = JSON.stringify(review);
      const cut = body.indexOf(DATA) + DATA.length;
      // The first chunk carries the Secret's data; the next chunk size is not hex.
      const answer = await send(
        port,
        `POST /mutate?timeout=10s HTTP/1.1\r\nHost: deed\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `${cut.toString(16)}\r\n${body.slice(0, cut)}\r\nZZ\r\n${body.slice(cut)}\r\n0\r\n\r\n`,
      );
      assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(answer, /"message":"Client Error"/);
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await app.close();
    }
    const logged = lines.filter((l) => l.includes('client error'));
    assert.equal(logged.length, 1, 'the parser refused the request');
    assert.match(logged[0]!, /"code":"HPE_INVALID_CHUNK_SIZE"/);
    // A Buffer is logged as {"type":"Buffer","data":[bytes...]}: decode every such array in every line.
    const decoded = lines.map((l) => l + JSON.stringify(l.match(/"data":\[[0-9,]*\]/g)?.map((m) => Buffer.from(JSON.parse(m.slice(7)) as number[]).toString('latin1'))));
    assert.deepEqual(decoded.filter((l) => l.includes(TOKEN)).length, 0, 'no line carries the bearer token');
    assert.deepEqual(decoded.filter((l) => l.includes(DATA)).length, 0, "no line carries the Secret's data");
  });
});
