import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FailedTests } from '../scripts/failed-tests.js';

// What node's test runner prints (TAP) for a suite with one failing test and one passing.
const TAP = `TAP version 13
# Subtest: outer
    # Subtest: inner
        # Subtest: passes
        ok 1 - passes
          ---
          duration_ms: 0.1
          type: 'test'
          ...
        # Subtest: fails here
        not ok 2 - fails here
          ---
          duration_ms: 0.9
          type: 'test'
          location: '/x.test.ts:6:5'
          failureType: 'testCodeFailure'
          error: |-
            Expected values to be strictly equal:
            1 !== 2
          code: 'ERR_ASSERTION'
          stack: |-
            TestContext.<anonymous> (/x.test.ts:6:37)
            Test.runInAsyncScope (node:async_hooks:206:9)
            Test.run (node:internal/test_runner/test:796:25)
            Suite.processPendingSubtests (node:internal/test_runner/test:526:18)
          ...
        1..2
    not ok 1 - inner
      ---
      duration_ms: 1.2
      type: 'suite'
      location: '/x.test.ts:4:3'
      failureType: 'subtestsFailed'
      error: '1 subtest failed'
      code: 'ERR_TEST_FAILURE'
      ...
    1..1
not ok 1 - outer
  ---
  duration_ms: 1.5
  type: 'suite'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  ...
# Subtest: top
ok 2 - top
  ---
  duration_ms: 0.1
  ...
1..2
# tests 2
# fail 1`;

function read(tap: string): string {
  const failed = new FailedTests();
  for (const line of tap.split('\n')) failed.read(line);
  return failed.report();
}

describe('the failed tests repeated at the end of npm test', () => {
  it('names each failed test once, under its suites, with its error and the first frames of its stack', () => {
    assert.equal(
      read(TAP),
      [
        'failed tests (1):',
        '- outer > inner > fails here',
        "    location: '/x.test.ts:6:5'",
        "    failureType: 'testCodeFailure'",
        '    error: |-',
        '      Expected values to be strictly equal:',
        '      1 !== 2',
        "    code: 'ERR_ASSERTION'",
        '    stack: |-',
        '      TestContext.<anonymous> (/x.test.ts:6:37)',
        '      Test.runInAsyncScope (node:async_hooks:206:9)',
        '',
      ].join('\n'),
    );
  });

  it('says nothing when every test passed', () => {
    assert.equal(read(TAP.replace('not ok 2 - fails here', 'ok 2 - fails here').replace(/failureType: 'testCodeFailure'/, '')), '');
  });

  it('counts past its limit and says where the rest are', () => {
    const many = Array.from({ length: 25 }, (_, i) => `# Subtest: t${i}\nnot ok ${i + 1} - t${i}\n  ---\n  error: 'e${i}'\n  ...`).join('\n');
    const report = read(many);
    assert.match(report, /^failed tests \(25\):/);
    assert.equal(report.match(/^- t\d+$/gm)?.length, 20);
    assert.match(report, /… and 5 more: search the log for "not ok"/);
  });
});
