import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { standardOutput } from '../src/observability/logger.js';

const ROOT = join(import.meta.dirname, '..');

describe("deed serve's log destination", () => {
  test('the lines of one turn of the event loop are written together once that turn has run, none held past it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'deed-log-')), 'out.log');
    const fd = openSync(file, 'a');
    try {
      const out = standardOutput(fd);
      for (const uid of ['u-1', 'u-2', 'u-3']) out.write(`${JSON.stringify({ msg: 'review', uid })}\n`);
      assert.equal(readFileSync(file, 'utf8'), '', 'nothing is written while the turn still runs');
      await nextTurn();
      assert.deepEqual(readFileSync(file, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { uid: string }).uid), ['u-1', 'u-2', 'u-3']);
      out.write('{"msg":"review","uid":"u-4"}\n');
      await nextTurn();
      assert.match(readFileSync(file, 'utf8'), /"u-4"/, 'a later turn writes its own line');
    } finally {
      closeSync(fd);
    }
  });

  test('a line written just before process.exit still reaches standard output', () => {
    const script = `import { standardOutput } from ${JSON.stringify(join(ROOT, 'src/observability/logger.ts'))}; standardOutput().write('{"msg":"stopped"}\\n'); process.exit(3);`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(run.status, 3, run.stderr);
    assert.equal(run.stdout, '{"msg":"stopped"}\n');
  });
});
