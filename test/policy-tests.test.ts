// `deed test`: the repository's own policy tests (examples/policy-tests) pass, so CI keeps
// the examples true; and a wrong expectation, an unknown rule id or a missing stored
// object is reported, not passed over.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
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
    assert.match(run.error?.message ?? '', /typo\.yaml:\d+:\d+: cases\.0\.expect\.rules\.0: template\.restart-polcy is not one of Deed's rule ids \(did you mean template\.restart-policy\?\)/);
  });

  test('an old object that no earlier case stored is an input error', async () => {
    const bad = file('stored.yaml', `policy: ${POLICY}\ncases:\n  - name: delete what is not there\n    operation: DELETE\n    oldObject: { stored: { kind: Secret, namespace: sandbox-a, name: nothing } }\n    expect: { allowed: true }\n`);
    const run = await runInProcess(registerTest, ['test', bad]);
    assert.match(run.error?.message ?? '', /no Secret sandbox-a\/nothing is stored/);
  });

  describe('the conventions of kyverno test', () => {
    // Three cases in one file: the first passes, the second fails, the third passes; the
    // third deletes what the first stored, so it needs the first to have run.
    const threeCases = () =>
      file(
        'three.yaml',
        `policy: ${POLICY}
cases:
  - name: alpha's runner creates a pod${RUNNER_POD}
    expect: { allowed: true }
  - name: "beta <expects> & \\"fails\\" ]]>"${RUNNER_POD.replace('agent-1', 'agent-2')}
    expect: { allowed: false, rules: [guard.cross-environment] }
  - name: beta's janitor may not delete alpha's pod
    operation: DELETE
    requester: { serviceAccount: sandbox-b:janitor }
    oldObject: { stored: { kind: Pod, namespace: sandbox-a, name: agent-1 } }
    expect: { allowed: false, rules: [guard.cross-environment] }
`,
      );

    test('-o json is one document: the summary, and each case with its result, what differed and what the webhooks answered', async () => {
      const path = threeCases();
      const run = await runInProcess(registerTest, ['test', path, '-o', 'json']);
      assert.equal(run.error, undefined);
      assert.equal(run.exitCode, 1);
      const doc = JSON.parse(run.stdout) as { summary: { passed: number; failed: number }; cases: Array<{ file: string; case: string; result: string; problems: string[]; outcome: { allowed: boolean; denials: Array<{ rule: string }>; warnings: string[] } }> };
      assert.deepEqual(doc.summary, { passed: 2, failed: 1 });
      assert.deepEqual(
        doc.cases.map((c) => [c.file, c.result, c.outcome.allowed]),
        [
          [path, 'pass', true],
          [path, 'fail', true],
          [path, 'pass', false],
        ],
      );
      assert.match(doc.cases[1]!.problems.join('; '), /expected denied, got allowed/);
      assert.deepEqual(doc.cases[2]!.outcome.denials.map((d) => d.rule), ['guard.cross-environment']);
    });

    test('-o junit is well-formed JUnit XML: a suite per file, a case per case, a failure naming what differed, names escaped', async () => {
      const path = threeCases();
      const run = await runInProcess(registerTest, ['test', path, EXAMPLES, '-o', 'junit']);
      assert.equal(run.exitCode, 1);
      assert.equal(XMLValidator.validate(run.stdout), true);
      const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testsuite' || name === 'testcase' }).parse(run.stdout) as {
        testsuites: { tests: string; failures: string; testsuite: Array<{ name: string; tests: string; failures: string; testcase: Array<{ name: string; classname: string; failure?: { message: string } }> }> };
      };
      const suite = xml.testsuites.testsuite.find((s) => s.name === path)!;
      assert.deepEqual([suite.tests, suite.failures], ['3', '1']);
      assert.equal(suite.testcase[1]!.name, 'beta <expects> & "fails" ]]>');
      assert.match(suite.testcase[1]!.failure!.message, /expected denied, got allowed/);
      assert.equal(suite.testcase[0]!.failure, undefined);
      assert.ok(xml.testsuites.testsuite.some((s) => s.name.endsWith('runner-pod.yaml')));
      assert.equal(xml.testsuites.failures, '1');
    });

    test("--fail-only lists the failing cases alone, and the summary still counts them all", async () => {
      const run = await runInProcess(registerTest, ['test', threeCases(), '--fail-only']);
      const rows = run.stdout.split('\n').filter((l) => /\s(pass|FAIL)(\s|$)/.test(l));
      assert.equal(rows.length, 1, run.stdout);
      assert.match(rows[0]!, /beta <expects>.*FAIL/);
      assert.match(run.stdout, /2 passed, 1 failed/);
    });

    test("--detailed-results shows each case's outcome under its row, passing ones too: allowed, or the denial's rule, field and message", async () => {
      const run = await runInProcess(registerTest, ['test', join(EXAMPLES, 'host-network.yaml'), '--detailed-results']);
      assert.equal(run.exitCode ?? 0, 0, run.stdout);
      assert.match(run.stdout, /may not create a pod on the host network\s+pass\n {4}denied \[template\.host-network\] spec\.hostNetwork: environment "alpha" is not granted host networking/);
      assert.match(run.stdout, /gets the Deployment\s+pass\n {4}allowed\n/);
      const plain = await runInProcess(registerTest, ['test', join(EXAMPLES, 'host-network.yaml')]);
      assert.doesNotMatch(plain.stdout, /^ {4}/m);
      // An allowed case's warnings, each on its own line under it.
      const warned = file('warned.yaml', `policy: ${POLICY}\ncases:\n  - name: a sandbox pod in the host PID namespace${RUNNER_POD.replace('spec:\n', 'spec:\n        hostPID: true\n')}\n    expect: { allowed: true, warnings: [template.host-access] }\n`);
      const detailed = await runInProcess(registerTest, ['test', warned, '--detailed-results']);
      assert.equal(detailed.exitCode ?? 0, 0, detailed.stdout);
      assert.match(detailed.stdout, /host PID namespace\s+pass\n {4}allowed\n {4}warning: deed template\.host-access: uses the host pid namespace/);
    });

    test('--case selects cases by exact name or glob; the earlier cases of a file still run for what they store, unreported', async () => {
      const path = threeCases();
      const exact = await runInProcess(registerTest, ['test', path, '--case', "beta's janitor may not delete alpha's pod", '-o', 'json']);
      assert.equal(exact.error, undefined);
      assert.equal(exact.exitCode ?? 0, 0, exact.stdout);
      const doc = JSON.parse(exact.stdout) as { summary: object; cases: Array<{ case: string }> };
      assert.deepEqual(doc.cases.map((c) => c.case), ["beta's janitor may not delete alpha's pod"]);
      assert.deepEqual(doc.summary, { passed: 1, failed: 0 });
      const glob = await runInProcess(registerTest, ['test', path, '--case', 'beta*', '--case', 'alpha*']);
      assert.equal(glob.exitCode, 1);
      assert.match(glob.stdout, /2 passed, 1 failed/);
    });

    test('a --case that selects nothing is an input error, not a green run of no cases', async () => {
      const run = await runInProcess(registerTest, ['test', threeCases(), '--case', 'gamma*']);
      assert.match(run.error?.message ?? '', /no case of .*three\.yaml matches --case gamma\*/);
    });

    test('a directory is its own test files; -R adds those of its subdirectories', async () => {
      const tree = join(dir, 'tree');
      mkdirSync(join(tree, 'nested'), { recursive: true });
      writeFileSync(join(tree, 'top.yaml'), `policy: ${POLICY}\ncases:\n  - name: top case${RUNNER_POD}\n    expect: { allowed: true }\n`);
      writeFileSync(join(tree, 'nested', 'deep.yaml'), `policy: ${POLICY}\ncases:\n  - name: deep case${RUNNER_POD}\n    expect: { allowed: true }\n`);
      const flat = await runInProcess(registerTest, ['test', tree]);
      assert.match(flat.stdout, /top case/);
      assert.doesNotMatch(flat.stdout, /deep case/);
      const deep = await runInProcess(registerTest, ['test', tree, '-R']);
      assert.match(deep.stdout, /nested\/deep\.yaml\s+deep case\s+pass/);
      assert.match(deep.stdout, /2 passed, 0 failed/);
    });
  });
});
