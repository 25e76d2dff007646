import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { DestinationStream } from 'pino';
import { createLogger, type LogFormat } from '../src/observability/logger.js';
import { fixture } from './helpers.js';
import { post, startServe } from './serve-process.js';

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function oneLine(format: LogFormat): Record<string, unknown> {
  const lines: string[] = [];
  createLogger({ write: (line: string) => void lines.push(line) } as DestinationStream, 'info', format).warn({ uid: 'u-1', secret: { data: 'c2VjcmV0' } }, 'a review');
  assert.equal(lines.length, 1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('--log-format', () => {
  test('json, the default, keeps pino lines: epoch milliseconds and numeric levels', () => {
    const line = oneLine('json');
    assert.equal(typeof line.time, 'number');
    assert.equal(line.level, 40);
  });

  test('iso writes an ISO-8601 UTC time and the level by name, and still redacts', () => {
    const line = oneLine('iso');
    assert.match(String(line.time), ISO_8601);
    assert.ok(Math.abs(Date.parse(String(line.time)) - Date.now()) < 60_000, 'the time is now');
    assert.equal(line.level, 'warn');
    assert.equal(line.uid, 'u-1');
    assert.deepEqual(line.secret, { data: '[redacted]' });
  });

  test('deed serve --log-format iso logs each review with an ISO-8601 time and a level name', async () => {
    const server = await startServe(['--log-format', 'iso']);
    try {
      const body = fixture('mutate-create-pod-by-runner.json');
      body.request.uid = 'iso-log-uid';
      assert.equal((await post(server, '/mutate', JSON.stringify(body))).status, 200);
      let line: Record<string, unknown> | undefined;
      for (let i = 0; i < 50 && !line; i++) {
        line = server.logs().find((l) => l.uid === 'iso-log-uid');
        if (!line) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(line, 'the review was logged');
      assert.match(String(line.time), ISO_8601);
      assert.equal(line.level, 'info');
    } finally {
      await server.stop();
    }
  });
});
