// A file that does not parse is named with the parser's problem and where, never with the lines
// the parser quotes after it: a kubeconfig's hold tokens and keys, a test file's a Secret's data (rev-90).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { jsonProblem, parseProblem } from '../src/errors/file-errors.js';
import { readObjects } from '../src/review/read-objects.js';
import { buildApp } from '../src/server/app.js';
import { createLogger } from '../src/observability/logger.js';
import { testContext } from './helpers.js';
import { ROOT } from './serve-process.js';

const dir = mkdtempSync(join(tmpdir(), 'deed-parse-errors-'));

function deed(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, DEED_CONFIG: '', ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
    child.stdin!.end('');
  });
}

const TOKEN = 'sha256~deed-parse-errors-bearer-token-5c1d9e';
const KEY_DATA = 'cmV2OTAtY2xpZW50LWtleS1kYXRh';
// One misindented line under the user: kubectl itself refuses it ("error converting YAML to JSON"), without echoing the file.
const BAD_KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
users:
- name: u
  user:
    token: ${TOKEN}
     client-key-data: ${KEY_DATA}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`;

describe('a malformed input file never has its secrets printed back', { concurrency: 4 }, () => {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, BAD_KUBECONFIG);
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, 'environments: [{id: alpha, serviceAccounts: ["sandbox-a:runner"]}]\n');
  const key = join(dir, 'key');
  writeFileSync(key, 'deed-parse-errors-attestation-key-0123456789');

  for (const [name, args, env] of [
    ['deed audit --kubeconfig', ['audit', '--kubeconfig', kubeconfig, '--config', policy, '--attestation-key', key], {}],
    ['deed reap --kubeconfig', ['reap', '--kubeconfig', kubeconfig, '--config', policy, '--attestation-key', key, '--environment', 'alpha'], {}],
    ['deed keys usage via $KUBECONFIG', ['keys', 'usage', '--config', policy, '--attestation-key', key], { KUBECONFIG: kubeconfig }],
    ['deed serve --kubeconfig', ['serve', '--kubeconfig', kubeconfig, '--deed-namespace', 'deed-system', '--cert-dir', join(dir, 'certs'), '--port', '0'], {}],
  ] as Array<[string, string[], NodeJS.ProcessEnv]>) {
    test(`${name}: a kubeconfig that does not parse is named with the problem and where, not its bearer token or client key`, async () => {
      const run = await deed(args, env);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr + run.stdout, /cannot load kubeconfig .*: bad indentation of a mapping entry \(11:\d+\)/);
      assert.ok(!(run.stderr + run.stdout).includes(TOKEN), `the bearer token is printed:\n${run.stderr}${run.stdout}`);
      assert.ok(!(run.stderr + run.stdout).includes(KEY_DATA), 'the client key is printed');
    });
  }

  test('deed test and deed review: a file that does not parse is named with the problem and where, not the Secret it holds', async () => {
    const PASSWORD = 'deed-parse-errors-password-8e2f';
    const file = join(dir, 'secret-test.yaml');
    writeFileSync(
      file,
      `name: t\ncases:\n- name: alpha writes its db Secret\n  object:\n    apiVersion: v1\n    kind: Secret\n    metadata: {name: db, namespace: sandbox-a}\n    stringData:\n      password: ${PASSWORD}\n       user: admin\n  expect: {allowed: true}\n`,
    );
    const run = await deed(['test', file]);
    assert.equal(run.code, 2);
    assert.ok(!(run.stderr + run.stdout).includes(PASSWORD), `the Secret's stringData is printed:\n${run.stderr}`);
    assert.match(run.stderr, /secret-test\.yaml: not YAML: block as implicit key at line 9, column 17\n/);
    // deed review on the same Secret as a manifest keeps it out:
    const manifest = join(dir, 'secret.yaml');
    writeFileSync(manifest, `apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: sandbox-a}\nstringData:\n  password: ${PASSWORD}\n   user: admin\n`);
    const review = await deed(['review', '-f', manifest]);
    assert.equal(review.code, 2);
    assert.ok(!review.stderr.includes(PASSWORD));
  });
});

describe("a parser's error names the problem and where, never the input (rev-91)", () => {
  const PASSWORD = 'deed-parse-errors-s3cret-4f1c';

  test("the yaml package's first line can quote the source: its errors are named by code and position", () => {
    // The value on the block scalar indicator's line, a common slip: "Not a YAML token: <value>".
    const secret = `apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: sandbox-a}\nstringData:\n  password: | ${PASSWORD}\n`;
    const [doc] = parseAllDocuments(secret) as unknown as Array<{ errors: Error[] }>;
    assert.match(doc!.errors[0]!.message, new RegExp(PASSWORD), 'the parser quotes it');
    assert.equal(parseProblem(doc!.errors[0]), 'unexpected token at line 5, column 15');
    assert.throws(() => readObjects(secret, 'secret.yaml'), { message: 'secret.yaml#1: cannot parse as YAML: unexpected token at line 5, column 15' });
  });

  test("JSON.parse's errors keep their position and drop the input V8 quotes (Node 21 and later)", () => {
    assert.equal(jsonProblem(new SyntaxError(`Unexpected token 'c', ..."password":c2VjcmV0}}" is not valid JSON`)), 'Unexpected token');
    assert.equal(jsonProblem(new SyntaxError('Unexpected token c in JSON at position 20')), 'Unexpected token at position 20');
    assert.equal(jsonProblem(new SyntaxError("Expected ',' or '}' after property value in JSON at position 30 (line 1 column 31)")), "Expected ',' or '}' after property value in JSON at position 30 (line 1 column 31)");
    assert.equal(jsonProblem(new SyntaxError('Unexpected end of JSON input')), 'Unexpected end of JSON input');
    assert.equal(jsonProblem(new SyntaxError(`Unterminated string in JSON at position 9: "${PASSWORD}`)), 'not valid JSON');
    // Whatever this Node says:
    let thrown: unknown;
    try {
      JSON.parse(`{"data":{"password":${PASSWORD}}}`);
    } catch (err) {
      thrown = err;
    }
    assert.doesNotMatch(jsonProblem(thrown), /s3cret/);
  });

  test('a review body that is not JSON is answered 400 with the problem, not the Secret data around it', async () => {
    const lines: string[] = [];
    const { app } = buildApp({ ctx: testContext(), logger: createLogger({ write: (l: string) => void lines.push(l) }, 'trace') });
    try {
      const res = await app.inject({ method: 'POST', url: '/validate?timeout=5s', headers: { 'content-type': 'application/json' }, payload: `{"request":{"object":{"kind":"Secret","data":{"password":${PASSWORD}}}}}` });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /the body is not valid JSON: /);
      assert.doesNotMatch(res.body + lines.join('\n'), /s3cret/);
    } finally {
      await app.close();
    }
  });
});
