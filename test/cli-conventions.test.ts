// The command line follows kubectl's habits: repeatable -f, directories and -R; a usage
// error is one line and a hint, not the whole help; file errors are words, not errno names.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { cannotRead, describeFileError } from '../src/errors/file-errors.js';
import { deed } from './cli-process.js';

const pod = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: sandbox-a
spec:
  automountServiceAccountToken: false
  containers:
    - name: main
      image: busybox
`;

const dir = mkdtempSync(join(tmpdir(), 'deed-cli-'));
const tree = join(dir, 'tree');
mkdirSync(join(tree, 'nested'), { recursive: true });
writeFileSync(join(dir, 'a.yaml'), pod('a'));
writeFileSync(join(dir, 'b.yaml'), pod('b'));
writeFileSync(join(tree, 'c.yaml'), pod('c'));
writeFileSync(join(tree, 'd.json'), JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'd', namespace: 'sandbox-a' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'busybox' }] } }));
writeFileSync(join(tree, 'notes.txt'), 'not an object');
writeFileSync(join(tree, 'nested', 'e.yaml'), pod('e'));

const reviewed = (stderr: string) => [...stderr.matchAll(/^Pod sandbox-a\/(\S+) /gm)].map((m) => m[1]);

describe('deed review -f', () => {
  test('is repeatable: every file is reviewed, in the order given', () => {
    const run = deed(['review', '-f', join(dir, 'b.yaml'), '-f', join(dir, 'a.yaml')]);
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(reviewed(run.stderr), ['b', 'a']);
    assert.match(run.stderr, /^2 objects: 2 allowed, 0 denied, 0 warnings$/m);
  });

  test('takes a directory: its YAML and JSON files in name order, not its subdirectories; -R adds them', () => {
    const flat = deed(['review', '-f', tree]);
    assert.equal(flat.status, 0, flat.stderr);
    assert.deepEqual(reviewed(flat.stderr), ['c', 'd']);
    const deep = deed(['review', '-R', '-f', tree]);
    assert.deepEqual(reviewed(deep.stderr), ['c', 'd', 'e']);
  });

  test('a directory with no objects says so, and how to reach its subdirectories', () => {
    const empty = join(dir, 'empty');
    mkdirSync(join(empty, 'sub'), { recursive: true });
    const none = deed(['review', '-f', empty]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /empty: no \*\.yaml, \*\.yml or \*\.json files \(add -R for its subdirectories\)/);
  });

  test('a missing file is named in words, not by its errno name', () => {
    const run = deed(['review', '-f', join(dir, 'nope.yaml')]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /cannot read .*nope\.yaml: no such file or directory$/m);
    assert.doesNotMatch(run.stderr, /ENOENT/);
  });
});

describe('usage errors', () => {
  test('an unknown flag is one line and a hint, exit status 2, not the whole help text', () => {
    const run = deed(['review', '--filenme', 'x.yaml']);
    assert.equal(run.status, 2);
    assert.deepEqual(run.stderr.trimEnd().split('\n'), ["error: unknown option '--filenme'", '(Did you mean --filename?)', '(add --help for usage)']);
    assert.doesNotMatch(run.stderr, /Usage:/);
  });

  test('a missing argument is one line and the hint too', () => {
    const run = deed(['test']);
    assert.equal(run.status, 2);
    assert.deepEqual(run.stderr.trimEnd().split('\n'), ["error: missing required argument 'path'", '(add --help for usage)']);
  });
});

describe('a file that cannot be read is one line in words, naming the file, from every command', () => {
  const files = mkdtempSync(join(tmpdir(), 'deed-files-'));
  const missing = join(files, 'missing.yaml');
  const folder = join(files, 'folder');
  mkdirSync(folder);
  const key = join(files, 'key');
  writeFileSync(key, 'k'.repeat(40));
  writeFileSync(join(files, 'policy-gone.yaml'), 'name: names a policy that is not there\npolicy: gone-policy.yaml\ncases: [{ name: c, requester: { user: x }, object: { apiVersion: v1, kind: ConfigMap, metadata: { name: c, namespace: n } }, expect: { allowed: true } }]\n');
  writeFileSync(join(files, 'object-gone.yaml'), 'name: names an object file that is not there\ncases: [{ name: c, requester: { user: x }, object: { file: gone-object.yaml }, expect: { allowed: true } }]\n');
  writeFileSync(join(files, 'object-folder.yaml'), 'name: names a directory as its object\ncases: [{ name: c, requester: { user: x }, object: { file: folder }, expect: { allowed: true } }]\n');

  const cases: Array<[string, string[], string]> = [
    ['deed review --config, missing', ['review', '--config', missing, '-f', join(dir, 'a.yaml')], `cannot read policy file ${missing}: no such file or directory`],
    ['deed serve --config, a directory', ['serve', '--config', folder, '--port', '0'], `cannot read policy file ${folder}: is a directory`],
    ['deed serve --tls-cert, missing', ['serve', '--tls-cert', missing, '--tls-key', missing, '--port', '0'], `deed: cannot read the serving certificate ${missing}: no such file or directory`],
    ['deed test, a policy its test file names, missing', ['test', join(files, 'policy-gone.yaml')], `deed: ${join(files, 'policy-gone.yaml')}: policy: cannot read ${join(files, 'gone-policy.yaml')}: no such file or directory`],
    ['deed test, an object file its test file names, missing', ['test', join(files, 'object-gone.yaml')], `deed: ${join(files, 'object-gone.yaml')}: cases.0.object: cannot read ${join(files, 'gone-object.yaml')}: no such file or directory`],
    ['deed test, an object file that is a directory', ['test', join(files, 'object-folder.yaml')], `deed: ${join(files, 'object-folder.yaml')}: cases.0.object: cannot read ${folder}: is a directory`],
    ['deed manifests --config, missing', ['manifests', '--config', missing], `cannot read policy file ${missing}: no such file or directory`],
    ['deed manifests --ca-bundle, a directory', ['manifests', '--ca-bundle', folder], `deed: cannot read the CA bundle (--ca-bundle) ${folder}: is a directory`],
    ['deed audit --kubeconfig, missing', ['audit', '--attestation-key', key, '--kubeconfig', missing], `deed: cannot read kubeconfig ${missing}: no such file or directory`],
    ['deed reap --kubeconfig, a directory', ['reap', '--environment', 'default', '--attestation-key', key, '--kubeconfig', folder], `deed: cannot read kubeconfig ${folder}: is a directory`],
    ['deed keys usage --attestation-key, missing', ['keys', 'usage', '--attestation-key', missing], `deed: cannot read the attestation key ${missing}: no such file or directory`],
  ];
  for (const [name, args, line] of cases) {
    test(`${name}: exit status 2 and the line "${line.replaceAll(files, 'DIR')}"`, () => {
      const run = deed(args);
      assert.equal(run.status, 2, run.stderr);
      // deed serve logs its start (JSON lines) before it reads the certificate: the error is the last line.
      assert.equal(run.stderr.trimEnd().split('\n').filter((l) => !l.startsWith('{')).join('\n'), line);
      assert.doesNotMatch(run.stderr + run.stdout, /\bE(NOENT|ISDIR|ACCES|PERM|NOTDIR)\b/);
    });
  }

  test('the words of each errno a read can meet, and the message without its errno name otherwise', () => {
    const errno = (code: string, message = `${code}: whatever, open '/x'`) => Object.assign(new Error(message), { code });
    assert.equal(describeFileError(errno('ENOENT')), 'no such file or directory');
    assert.equal(describeFileError(errno('EISDIR')), 'is a directory');
    assert.equal(describeFileError(errno('EACCES')), 'permission denied');
    assert.equal(describeFileError(errno('ENOTDIR')), 'a part of the path is not a directory');
    assert.equal(describeFileError(errno('EIO', "EIO: i/o error, read '/x'")), 'i/o error');
    assert.equal(cannotRead('policy file', 'p.yaml', errno('EACCES')), 'cannot read policy file p.yaml: permission denied');
  });
});
