// The command line follows kubectl's habits: repeatable -f, directories and -R; a usage
// error is one line and a hint, not the whole help; file errors are words, not errno names;
// one flag has one meaning across every command (-n/--namespace and -A the namespaces a
// command works on, --deed-namespace Deed's own, --context wherever --kubeconfig is, the same
// -o names for the same output), checked on the command tree itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Command } from 'commander';
import { completionScript } from '../src/cli/completion.js';
import { buildProgram } from '../src/cli/program.js';
import { VERSION } from '../src/version.js';
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

/** Every command of the tree that runs something (no subcommands), with its path. */
function leaves(): Array<{ path: string; cmd: Command }> {
  const out: Array<{ path: string; cmd: Command }> = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      if (sub.commands.length > 0) walk(sub, [...path, sub.name()]);
      else out.push({ path: [...path, sub.name()].join(' '), cmd: sub });
    }
  };
  walk(buildProgram(), []);
  return out;
}
const option = (cmd: Command, long: string) => cmd.options.find((o) => o.long === long);

describe('one flag, one meaning, across every command (kubectl\'s where kubectl has one)', () => {
  const commands = leaves();

  test('the tree has every command, version and completion included', () => {
    assert.deepEqual(commands.map((c) => c.path).sort(), ['audit', 'certs', 'completion', 'coverage', 'dev', 'keys usage', 'manifests', 'reap', 'review', 'serve', 'test', 'version']);
  });

  test('a short flag means the same long flag everywhere: -n --namespace, -A --all-namespaces, -o --output, -f --filename, -R --recursive', () => {
    const meaning = new Map<string, Set<string>>();
    for (const { cmd } of commands) for (const o of cmd.options) if (o.short) meaning.set(o.short, (meaning.get(o.short) ?? new Set()).add(o.long!));
    for (const [short, longs] of meaning) assert.equal(longs.size, 1, `${short} means ${[...longs].join(' and ')}`);
    assert.deepEqual(Object.fromEntries([...meaning].map(([s, l]) => [s, [...l][0]])), { '-n': '--namespace', '-A': '--all-namespaces', '-o': '--output', '-f': '--filename', '-R': '--recursive' });
  });

  test('--namespace, where it shows, is -n and names the namespaces the command works on; the commands that sweep the cluster also take -A', () => {
    for (const { path, cmd } of commands) {
      const ns = option(cmd, '--namespace');
      if (ns && !ns.hidden) {
        assert.equal(ns.short, '-n', path);
        assert.doesNotMatch(ns.description, /Deed's own/, path);
      }
      const all = option(cmd, '--all-namespaces');
      if (all) assert.ok(ns && !ns.hidden && all.short === '-A', `${path}: -A goes with -n`);
    }
    for (const path of ['audit', 'reap', 'keys usage']) {
      const cmd = commands.find((c) => c.path === path)!.cmd;
      assert.ok(option(cmd, '--namespace')?.variadic === false && option(cmd, '--all-namespaces'), path);
    }
  });

  test("Deed's own namespace is --deed-namespace on every command that needs it; --namespace in that meaning is hidden and deprecated", () => {
    const own = commands.filter(({ cmd }) => cmd.options.some((o) => !o.hidden && /Deed's own namespace/.test(o.description)));
    for (const { path, cmd } of own) assert.deepEqual(cmd.options.filter((o) => !o.hidden && /Deed's own namespace/.test(o.description)).map((o) => o.long), ['--deed-namespace'], path);
    assert.deepEqual(own.map((c) => c.path).sort(), ['audit', 'dev', 'keys usage', 'manifests', 'reap', 'review', 'serve']);
    for (const path of ['serve', 'dev', 'manifests']) assert.ok(option(commands.find((c) => c.path === path)!.cmd, '--namespace')?.hidden, path);
  });

  test('every command that reads a kubeconfig takes --context too', () => {
    const withKubeconfig = commands.filter(({ cmd }) => option(cmd, '--kubeconfig'));
    assert.deepEqual(withKubeconfig.map((c) => c.path).sort(), ['audit', 'coverage', 'dev', 'keys usage', 'reap', 'serve']);
    for (const { path, cmd } of withKubeconfig) assert.ok(option(cmd, '--context'), path);
  });

  test('-o takes the same names for the same output: text for people, json and yaml for programs; a command\'s own output keeps its own name', () => {
    const outputs = commands.filter(({ cmd }) => option(cmd, '--output'));
    for (const { path, cmd } of outputs) {
      const o = option(cmd, '--output')!;
      assert.equal(o.short, '-o', path);
      assert.ok(o.argChoices?.includes('json'), `${path}: json`);
      for (const format of o.argChoices!) assert.ok(['text', 'json', 'yaml', 'wide', 'patch', 'junit'].includes(format), `${path}: ${format}`);
    }
  });
});

describe('the old spellings still work, saying what to use instead', () => {
  /** Parses as main.ts would, with each command's action replaced by one that records its options. */
  function parsed(args: string[]): { options: Record<string, unknown>; stderr: string } {
    const program = buildProgram().configureOutput({ writeErr: () => {} });
    let options: Record<string, unknown> = {};
    const record = (cmd: Command) => {
      cmd.action(function (this: Command) {
        options = this.opts();
      });
      cmd.commands.forEach(record);
    };
    program.commands.forEach(record);
    let stderr = '';
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => ((stderr += chunk), true)) as typeof process.stderr.write;
    try {
      program.parse(args, { from: 'user' });
    } finally {
      process.stderr.write = write;
    }
    return { options, stderr };
  }

  for (const command of ['serve', 'dev', 'manifests']) {
    test(`deed ${command} --namespace NS is --deed-namespace NS, with a warning that names --deed-namespace`, () => {
      const run = parsed([command, '--namespace', 'sandbox-dev']);
      assert.equal(run.options.deedNamespace, 'sandbox-dev');
      assert.match(run.stderr, new RegExp(`^deed ${command}: warning: --namespace is deprecated here and will be removed: it names Deed's own namespace, which is excluded from review; use --deed-namespace sandbox-dev`));
      assert.equal(run.stderr.split('\n').length, 2, 'one line');
      assert.equal(parsed([command, '--deed-namespace', 'sandbox-dev']).stderr, '', 'no warning for the new spelling');
    });
  }

  test('deed dev --namespace also says how to send only some namespaces to the loop', () => {
    assert.match(parsed(['dev', '--namespace', 'sandbox-dev']).stderr, /\(to send only some namespaces to this process: --only-namespace\)/);
  });

  test('--namespace and --deed-namespace together are a usage error', () => {
    const run = deed(['manifests', '--namespace', 'a', '--deed-namespace', 'b']);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /^error: option '--namespace <ns>' cannot be used with option '--deed-namespace <ns>'$/m);
  });

  test('-n and -A together are a usage error; -n is repeatable and checked as a namespace name', () => {
    assert.match(deed(['audit', '-n', 'a', '-A']).stderr, /^error: option '-A, --all-namespaces' cannot be used with option '-n, --namespace <ns>'$/m);
    assert.deepEqual(parsed(['keys', 'usage', '-n', 'a', '--namespace', 'b', '-n', 'a']).options.namespace, ['a', 'b']);
    assert.deepEqual(parsed(['reap', '--environment', 'alpha', '-A']).options.namespace, []);
    assert.match(deed(['reap', '--environment', 'alpha', '-n', 'Not_A_Namespace']).stderr, /argument 'Not_A_Namespace' is invalid\. must be a namespace name/);
  });

  test("deed test -o table is -o text; an unknown format names the choices", () => {
    assert.equal(parsed(['test', 'x.yaml', '-o', 'table']).options.output, 'text');
    const run = deed(['test', 'x.yaml', '-o', 'xml']);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /^error: option '-o, --output <format>' argument 'xml' is invalid\. Allowed choices are text, json, junit\.$/m);
  });

  test('deed serve --context is read with the kubeconfig as kubectl finds it', () => {
    const run = deed(['serve', '--context', 'nowhere', '--kubeconfig', '/nonexistent/kubeconfig', '--port', '0']);
    assert.equal(run.status, 2);
    assert.equal(run.stderr, 'deed: cannot read kubeconfig /nonexistent/kubeconfig: no such file or directory\n');
  });
});

describe('deed version and deed completion', () => {
  test('deed version prints what --version prints; -o json an object with the version and node', () => {
    const plain = deed(['version']);
    assert.equal(plain.status, 0);
    assert.equal(plain.stdout, deed(['--version']).stdout);
    assert.equal(plain.stdout, `${VERSION}\n`);
    const json = deed(['version', '-o', 'json']);
    assert.deepEqual(JSON.parse(json.stdout), { version: VERSION, node: process.version });
  });

  test('an unknown shell is a usage error naming the three', () => {
    const run = deed(['completion', 'tcsh']);
    assert.equal(run.status, 2);
    assert.equal(run.stderr, "error: command-argument value 'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.\n(add --help for usage)\n");
  });

  /** What bash completes for the words typed so far (the last one being completed). */
  function bashCompletes(script: string, words: string[]): string[] {
    const file = join(mkdtempSync(join(tmpdir(), 'deed-completion-')), 'deed.bash');
    writeFileSync(file, script);
    const run = spawnSync('bash', ['-c', `source "${file}"; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _deed_completion; printf '%s\\n' "\${COMPREPLY[@]}"`, 'bash', ...words], { encoding: 'utf8', cwd: dir });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout.split('\n').filter((l) => l !== '');
  }

  test('bash: every command, subcommand, flag and choice of the tree completes, taken from the tree itself', () => {
    const script = completionScript(buildProgram(), 'bash');
    const root = bashCompletes(script, ['deed', '']);
    assert.deepEqual(root, leaves().map((c) => c.path.split(' ')[0]).filter((n, i, all) => all.indexOf(n) === i));
    assert.deepEqual(bashCompletes(script, ['deed', 'keys', 'us']), ['usage']);
    for (const { path, cmd } of leaves()) {
      const words = ['deed', ...path.split(' ')];
      const flags = bashCompletes(script, [...words, '-']);
      for (const o of cmd.options.filter((o) => !o.hidden)) {
        assert.ok(flags.includes(o.long!), `${path} ${o.long}`);
        if (o.argChoices) assert.deepEqual(bashCompletes(script, [...words, o.long!, '']), o.argChoices, `${path} ${o.long}`);
      }
      assert.ok(!flags.includes('--namespace') || !option(cmd, '--namespace')!.hidden, `${path}: a hidden flag is not offered`);
    }
    assert.deepEqual(bashCompletes(script, ['deed', 'completion', '']), ['bash', 'zsh', 'fish']);
    assert.deepEqual(bashCompletes(script, ['deed', 'review', '-f', 'a.y']), ['a.yaml'], 'a file for a flag that takes one');
    // Another command's flag is not offered.
    assert.deepEqual(bashCompletes(script, ['deed', 'certs', '--deed']), []);
  });

  test('zsh runs the same function through bashcompinit; fish gets each command, flag and choice with its description', () => {
    const zsh = completionScript(buildProgram(), 'zsh');
    assert.match(zsh, /^#compdef deed kubectl-deed\n/);
    assert.ok(zsh.includes('autoload -U +X bashcompinit && bashcompinit\n_deed_completion() {'));
    const fish = completionScript(buildProgram(), 'fish');
    assert.ok(fish.includes("complete -c deed -n '__fish_seen_subcommand_from keys; and not __fish_seen_subcommand_from usage' -a usage -d 'Count, per attestation key id,"));
    assert.ok(fish.includes("complete -c deed -n '__fish_seen_subcommand_from audit' -s o -l output -x -a 'text json yaml'"));
    assert.ok(fish.includes("complete -c deed -n '__fish_seen_subcommand_from reap' -s n -l namespace -r -F"));
    for (const { path } of leaves()) assert.ok(fish.includes(` -a ${path.split(' ').at(-1)} -d `), path);
    for (const shell of ['zsh', 'fish'] as const) {
      const found = spawnSync(shell, ['-c', 'true']);
      if (found.error) continue; // not installed here
      const file = join(mkdtempSync(join(tmpdir(), 'deed-completion-')), `deed.${shell}`);
      writeFileSync(file, completionScript(buildProgram(), shell));
      const check = spawnSync(shell, shell === 'fish' ? ['--no-execute', file] : ['-n', file], { encoding: 'utf8' });
      assert.equal(check.status, 0, `${shell}: ${check.stderr}`);
    }
  });
});

describe('an error names the command that hit it, and stands alone', () => {
  // Without any policy file the commands read the installed one (test/from-cluster.test.ts).
  const keyless = join(dir, 'keyless-policy.yaml');
  writeFileSync(keyless, 'environments:\n  - id: default\n    groups: ["system:serviceaccounts"]\n');
  for (const [command, args] of [['audit', ['audit']], ['keys usage', ['keys', 'usage']], ['reap', ['reap', '--environment', 'default']]] as const) {
    test(`deed ${command} with a policy file that names no attestation key says that ${command} needs one`, () => {
      const run = deed([...args, '--config', keyless, '--kubeconfig', '/nonexistent/kubeconfig']);
      assert.equal(run.status, 2);
      assert.equal(run.stderr, `deed: ${command} needs the attestation key ring: set attestation.keys (or attestation.keyFile) in --config, or pass --attestation-key FILE\n`);
    });
  }

  test('deed review: an input error is not preceded by the dry-run key warning; a review that ran with that key says so once, before its report', () => {
    for (const args of [['review', '-f', join(dir, 'nope.yaml')], ['review', '--operation', 'UPDATE', '-f', join(dir, 'a.yaml')], ['review', '--review', join(dir, 'nope.json'), '--webhook', 'mutate']]) {
      const run = deed(args);
      assert.equal(run.status, 2);
      assert.equal(run.stderr.split('\n').length, 2, `one line: ${run.stderr}`);
      assert.doesNotMatch(run.stderr, /dry-run key/);
    }
    const ran = deed(['review', '-f', join(dir, 'a.yaml')]);
    assert.equal(ran.status, 0);
    assert.deepEqual(ran.stderr.split('\n').slice(0, 2), [
      "deed review: attestations are signed with the fixed dry-run key, not your cluster's; pass --policy-keys or --attestation-key FILE to use real ones",
      'Pod sandbox-a/a (CREATE by system:serviceaccount:sandbox-a:default): allowed',
    ]);
    const key = join(dir, 'review.key');
    writeFileSync(key, 'k'.repeat(40));
    assert.doesNotMatch(deed(['review', '-f', join(dir, 'a.yaml'), '--attestation-key', key]).stderr, /dry-run key/, 'not with a key of its own');
  });

  test('deed test: a mistyped rule id is named with its file, line and column, and the id probably meant', () => {
    const file = join(dir, 'typo-rule.yaml');
    writeFileSync(
      file,
      'name: a typo\ncases:\n  - name: restart policy\n    requester: { user: x }\n    object: { apiVersion: v1, kind: ConfigMap, metadata: { name: c, namespace: n } }\n    expect:\n      allowed: false\n      rules:\n        - template.restart-policy\n        - template.restart-polcy\n',
    );
    const run = deed(['test', file]);
    assert.equal(run.status, 2);
    assert.equal(run.stderr, `deed: ${file}:10:11: cases.0.expect.rules.1: template.restart-polcy is not one of Deed's rule ids (did you mean template.restart-policy?); they are listed in docs/rules.md\n`);
  });
});
