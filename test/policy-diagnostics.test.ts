// A policy typo is named as a compiler names it: the file, line and column of the key or
// value, the field, and the key or value that was probably meant. Real typos, in real
// files, through the same readers `deed serve`, `deed review` and `deed test` use.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { didYouMean, keysAt } from '../src/config/diagnostics.js';
import { loadConfig, parseConfig } from '../src/config/load.js';
import { configSchema } from '../src/config/schema.js';
import { registerTest } from '../src/cli/test.js';
import { deed, ROOT, runInProcess } from './cli-process.js';

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    return (err as Error).message.split('\n').slice(1).map((l) => l.trim());
  }
  assert.fail('expected the policy to be refused');
}

describe('policy errors name the file, line and column, and what was meant', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'deed-diag-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  test('a misspelt key is named at the key, with the key the schema has there', () => {
    const path = file('env-typo.yaml', ['labelPrefix: deed.dev', 'environments:', '  - id: alpha', '    serviceAcounts: ["sandbox-a:runner"]', ''].join('\n'));
    assert.deepEqual(problemsOf(() => loadConfig(path)), [`${path}:4:5: environments.0.serviceAcounts: unknown key (did you mean serviceAccounts?)`]);
  });

  test('an empty policy file (or one of comments only) is refused: it would stamp nothing; `environments: []` says so on purpose', () => {
    for (const [name, text] of [['empty.yaml', ''], ['comments.yaml', '# mounted from a ConfigMap\n']] as const) {
      const path = file(name, text);
      assert.throws(() => loadConfig(path), (err: Error) => err.message === `policy file ${path} is empty: write the policy, or \`environments: []\` for one that maps no environment`);
    }
    assert.deepEqual(loadConfig(file('none.yaml', 'environments: []\n')).environments, []);
  });

  test('service accounts are mapped by serviceAccounts: a namespace\'s group is refused with its pattern, a catch-all group only in a policy of one environment', () => {
    const path = file('sa-groups.yaml', ['environments:', '  - id: gamma', '    groups: ["system:serviceaccounts:sandbox-g", "team-g"]', '  - id: alpha', '    groups: ["system:serviceaccounts"]', ''].join('\n'));
    assert.deepEqual(problemsOf(() => loadConfig(path)), [
      `${path}:3:14: environments.0.groups.0: maps the service accounts of namespace "sandbox-g" by group: write serviceAccounts: ["sandbox-g:*"] instead (an environment's runner pods, accounts and tokens are guarded as its own only when serviceAccounts maps them)`,
      `${path}:5:14: environments.1.groups.0: "system:serviceaccounts" maps every service account to "alpha", which makes every other environment's principals ambiguous: only a policy of one environment may; map each environment's accounts with serviceAccounts`,
    ]);
    assert.deepEqual(loadConfig(file('one.yaml', 'environments:\n  - id: default\n    groups: ["system:serviceaccounts"]\n')).environments[0]!.groups, ['system:serviceaccounts'], 'the embedded default, one environment');
  });

  test('a top-level typo and one in a nested object are each found, in one run', () => {
    const path = file('two-typos.yaml', ['breakGlas:', '  groups: [admins]', 'deadline:', '  marginSecond: 60', ''].join('\n'));
    const problems = problemsOf(() => loadConfig(path));
    assert.ok(problems.includes(`${path}:1:1: breakGlas: unknown key (did you mean breakGlass?)`), problems.join('\n'));
    assert.ok(problems.includes(`${path}:4:3: deadline.marginSecond: unknown key (did you mean marginSeconds?)`), problems.join('\n'));
  });

  test('a value of the wrong type is named at the value', () => {
    const path = file('type.yaml', ['environments:', '  - id: alpha', '    grants: { hostNetwork: "yes" }', ''].join('\n'));
    assert.deepEqual(problemsOf(() => loadConfig(path)), [`${path}:3:28: environments.0.grants.hostNetwork: Invalid input: expected boolean, received string`]);
  });

  test('a mode outside the choices suggests the closest one', () => {
    const path = file('mode.yaml', 'rules:\n  template.restart-policy: wran\n');
    const [problem] = problemsOf(() => loadConfig(path));
    assert.match(problem!, new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:28: rules\\.template\\.restart-policy: .*\\(did you mean warn\\?\\)$`));
  });

  test("a misspelt rule id suggests Deed's rule id", () => {
    const path = file('rule.yaml', 'rules:\n  guard.conect: warn\n');
    assert.deepEqual(problemsOf(() => loadConfig(path)), [`${path}:2:17: rules.guard.conect: unknown rule id "guard.conect" (did you mean guard.connect?)`]);
  });

  test('a key nothing resembles lists the keys known there, rather than guessing', () => {
    const path = file('nothing-like.yaml', 'deadline:\n  zzzzzz: 1\n');
    assert.deepEqual(problemsOf(() => loadConfig(path)), [`${path}:2:3: deadline.zzzzzz: unknown key (known here: marginSeconds, capSeconds)`]);
  });

  test('a policy given as a value, not read from a file, names the field only, as before', () => {
    assert.deepEqual(problemsOf(() => parseConfig({ breakGlas: {} }, 'the value')), ['breakGlas: unknown key (did you mean breakGlass?)']);
  });

  test('the valid keys come from the schema: through arrays, defaults and optional fields', () => {
    assert.ok(keysAt(configSchema, ['environments', 0]).includes('claimsFrom'));
    assert.deepEqual(keysAt(configSchema, ['environments', 0, 'grants']), ['hostNetwork', 'priorityClasses']);
    assert.ok(keysAt(configSchema, ['attestation', 'keys', 0]).includes('file'));
    assert.deepEqual(keysAt(configSchema, ['labelPrefix']), []);
  });

  test('a suggestion is offered only when close: case, a letter or two, not an unrelated word', () => {
    assert.equal(didYouMean('labelprefix', ['labelPrefix', 'rules']), 'labelPrefix');
    assert.equal(didYouMean('grnats', ['grants', 'groups']), 'grants');
    assert.equal(didYouMean('enviroments', ['environments', 'rules']), 'environments');
    assert.equal(didYouMean('image', ['environments', 'rules']), undefined);
    assert.equal(didYouMean('x', []), undefined);
  });

  test('deed review names the line of a policy typo, on one line of stderr, exit status 2', () => {
    const path = file('review.yaml', 'environments:\n  - id: alpha\n    namespace: [sandbox-a]\n');
    const run = deed(['review', '--config', path, '-f', join(ROOT, 'examples/policy-tests/fixtures/alpha-secret.yaml')]);
    assert.equal(run.status, 2);
    assert.ok(run.stderr.includes(`${path}:3:5: environments.0.namespace: unknown key (did you mean namespaces?)`), run.stderr);
  });

  describe('in deed test files', () => {
    const POD = '\n    object: { apiVersion: v1, kind: Pod, metadata: { name: p, namespace: sandbox-a }, spec: { containers: [{ name: c, image: i }] } }';

    test("a misspelt case key is named in the test file, at its line", async () => {
      const path = file('case-typo.yaml', `cases:\n  - name: a case${POD}\n    expct: { allowed: true }\n`);
      const run = await runInProcess(registerTest, ['test', path]);
      const message = run.error?.message ?? '';
      assert.ok(message.includes(`${path}:4:5: cases.0.expct: unknown key (did you mean expect?)`), message);
    });

    test('a typo in an inline policy is located in the test file', async () => {
      const path = file('inline.yaml', `policy:\n  environments:\n    - id: alpha\n      grnats: { hostNetwork: true }\ncases:\n  - name: a case${POD}\n    expect: { allowed: true }\n`);
      const run = await runInProcess(registerTest, ['test', path]);
      const message = run.error?.message ?? '';
      assert.ok(message.includes(`${path}:4:7: environments.0.grnats: unknown key (did you mean grants?)`), message);
    });

    test('a typo in the policy file a test names is located in that file', async () => {
      const policy = file('named-policy.yaml', 'labelPrefix: deed.dev\nbreakglass: {}\n');
      const path = file('names-policy.yaml', `policy: named-policy.yaml\ncases:\n  - name: a case${POD}\n    expect: { allowed: true }\n`);
      const run = await runInProcess(registerTest, ['test', path]);
      const message = run.error?.message ?? '';
      assert.ok(message.includes(`${policy}:2:1: breakglass: unknown key (did you mean breakGlass?)`), message);
    });
  });
});
