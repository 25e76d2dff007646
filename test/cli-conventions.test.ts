// The command line follows kubectl's habits: repeatable -f, directories and -R; a usage
// error is one line and a hint, not the whole help; file errors are words, not errno names.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
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
