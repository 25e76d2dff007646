// `npm test` (scripts/test-all.ts) never looks green by accident: its last line says whether
// the end-to-end suite ran, and under CI a run without it fails.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from './cli-process.js';

const PASSES = 'test/fixtures/test-runner/passes.test.ts';

function runner(env: NodeJS.ProcessEnv, files = [PASSES, 'test/e2e/e2e.test.ts']): Promise<{ code: number | null; lastLine: string }> {
  const clean = { ...process.env };
  // NODE_TEST_CONTEXT: set by this test's own runner, it would make the inner one report to it instead of printing.
  for (const k of ['CI', 'DEED_REQUIRE_E2E', 'KUBEBUILDER_ASSETS', 'NODE_TEST_CONTEXT']) delete clean[k];
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/test-all.ts'), ...files], { cwd: ROOT, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.resume();
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, lastLine: out.trimEnd().split('\n').at(-1) ?? '' })));
}

describe('npm test without the end-to-end suite', () => {
  test('says so in capitals in its last line, with the reason and the counts, and passes outside CI', async () => {
    const run = await runner({});
    assert.equal(run.code, 0);
    assert.match(run.lastLine, /^npm test: passed; tests 1, pass 1, fail 0, skipped 0; THE END-TO-END SUITE DID NOT RUN \(KUBEBUILDER_ASSETS is not set; /);
  });

  test('fails under CI=true, and under DEED_REQUIRE_E2E=1 (.ci/run)', async () => {
    for (const env of [{ CI: 'true' }, { DEED_REQUIRE_E2E: '1' }]) {
      const run = await runner(env);
      assert.equal(run.code, 1, JSON.stringify(env));
      assert.match(run.lastLine, /THE END-TO-END SUITE DID NOT RUN .*CI requires it, so this run FAILS$/);
    }
  });

  test('names a KUBEBUILDER_ASSETS folder without the binaries', async () => {
    const run = await runner({ KUBEBUILDER_ASSETS: '/nonexistent-envtest' });
    assert.match(run.lastLine, /DID NOT RUN \(KUBEBUILDER_ASSETS=\/nonexistent-envtest has no etcd;/);
  });
});

describe('the test command', () => {
  test('npm test runs the unit and end-to-end files through scripts/test-all.ts, and .ci/run requires the end-to-end suite while running the README\'s command', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts['test:all'], 'tsx scripts/test-all.ts test/*.test.ts test/e2e/*.test.ts');
    assert.match(pkg.scripts.test!, /npm run test:all$/);
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    assert.match(ci, /^export DEED_REQUIRE_E2E=1$/m);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const command = /```sh\n(npm ci && KUBEBUILDER_ASSETS=\$\(\.\.\/shared\/envtest\/install\.sh\) npm test)\n```/.exec(readme)?.[1];
    assert.ok(command, "the README's test command");
    assert.match(ci, /npm ci --no-audit --no-fund\n.*npm test\n/);
  });
});
