// `deed test`: the repository's own policy tests (examples/policy-tests) pass, so CI keeps
// the examples true; and a wrong expectation, an unknown rule id or a missing stored
// object is reported, not passed over.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerTest } from '../src/cli/test.js';
import { ROOT, runInProcess } from './cli-process.js';

const EXAMPLES = join(ROOT, 'examples/policy-tests');
const POLICY = join(EXAMPLES, 'fixtures/policy.yaml');

const RUNNER_POD = `
    requester:
      serviceAccount: sandbox-a:runner
      pod: { name: runner-0, uid: 6f1c2a7e-1b2c-4d3e-8f90-0123456789ab }
    object:
      apiVersion: v1
      kind: Pod
      metadata: { name: agent-1, namespace: sandbox-a }
      spec:
        containers: [{ name: main, image: registry.example/agent:1 }]`;

describe('deed test', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'deed-test-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  test('every case of the shipped examples passes, and the table names each one', async () => {
    const run = await runInProcess(registerTest, ['test', EXAMPLES]);
    assert.equal(run.error, undefined);
    assert.equal(run.exitCode ?? 0, 0, run.stdout);
    const rows = run.stdout.split('\n').filter((l) => l.startsWith(EXAMPLES) || l.includes('examples/policy-tests/'));
    assert.ok(rows.length >= 10, run.stdout);
    assert.ok(rows.every((r) => /\spass$/.test(r)), run.stdout);
    for (const example of ['runner-pod', 'janitor-delete', 'workspace-grant', 'template-collision']) assert.ok(rows.some((r) => r.includes(`${example}.yaml`)), example);
    assert.match(run.stdout, /\d+ passed, 0 failed/);
  });

  test('a wrong expectation fails the run, and the row says what differed', async () => {
    const wrong = file('wrong.yaml', `policy: ${POLICY}\ncases:\n  - name: expects a denial that does not come${RUNNER_POD}\n    expect:\n      allowed: false\n      rules: [template.restart-policy]\n`);
    const run = await runInProcess(registerTest, ['test', wrong]);
    assert.equal(run.exitCode, 1);
    assert.match(run.stdout, /expects a denial that does not come\s+FAIL\s+expected denied, got allowed; expected denial rules \[template\.restart-policy\], got \[\]/);
    assert.match(run.stdout, /0 passed, 1 failed/);
  });

  test('a stamped field that differs fails the case', async () => {
    const wrong = file('stamp.yaml', `policy: ${POLICY}\ncases:\n  - name: expects another environment${RUNNER_POD}\n    expect:\n      allowed: true\n      stamped:\n        labels: { deed.dev/environment: beta }\n`);
    const run = await runInProcess(registerTest, ['test', wrong]);
    assert.equal(run.exitCode, 1);
    assert.match(run.stdout, /label deed\.dev\/environment: expected "beta", got "alpha"/);
  });

  test('a rule id Deed does not have is an input error, not a silent pass', async () => {
    const bad = file('typo.yaml', `policy: ${POLICY}\ncases:\n  - name: typo${RUNNER_POD}\n    expect:\n      allowed: false\n      rules: [template.restart-polcy]\n`);
    const run = await runInProcess(registerTest, ['test', bad]);
    assert.match(run.error?.message ?? '', /template\.restart-polcy is not one of Deed's rule ids/);
  });

  test('an old object that no earlier case stored is an input error', async () => {
    const bad = file('stored.yaml', `policy: ${POLICY}\ncases:\n  - name: delete what is not there\n    operation: DELETE\n    oldObject: { stored: { kind: Secret, namespace: sandbox-a, name: nothing } }\n    expect: { allowed: true }\n`);
    const run = await runInProcess(registerTest, ['test', bad]);
    assert.match(run.error?.message ?? '', /no Secret sandbox-a\/nothing is stored/);
  });
});
