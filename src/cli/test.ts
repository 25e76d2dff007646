// `deed test FILE|DIR...`: runs declarative policy tests (src/policy-tests), every *.yaml
// file of a directory (not recursively), and prints a table of pass/fail per case.
// Exit status: 0 every case passed, 1 any failed, 2 a file that cannot be read as a test.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../review/build-review.js';
import { describeFileError } from './options.js';
import { loadTestFile } from '../policy-tests/file.js';
import { runTestFile, type CaseResult } from '../policy-tests/run.js';

function testFiles(paths: string[]): string[] {
  return paths.flatMap((path) => {
    let dir: boolean;
    try {
      dir = statSync(path).isDirectory();
    } catch (err) {
      throw new InputError(`cannot read ${path}: ${describeFileError(err)}`);
    }
    if (!dir) return [path];
    const files = readdirSync(path)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()
      .map((f) => join(path, f));
    if (files.length === 0) throw new InputError(`${path}: no *.yaml test files`);
    return files;
  });
}

/** A fixed-width table: FILE, CASE, RESULT, and on failing rows what differed. */
export function formatTable(results: CaseResult[]): string {
  const rows = results.map((r) => [r.file, r.case, r.passed ? 'pass' : 'FAIL', r.problems.join('; ')]);
  const header = ['FILE', 'CASE', 'RESULT', 'DETAIL'];
  const widths = [0, 1, 2].map((i) => Math.max(header[i]!.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c)).join('  ').trimEnd();
  const failed = results.filter((r) => !r.passed).length;
  return [line(header), ...rows.map(line), '', `${results.length - failed} passed, ${failed} failed`].join('\n') + '\n';
}

export function registerTest(program: Command, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  program
    .command('test')
    .description('Run declarative policy tests: each case an object, a requester, an operation and the expected outcome')
    .argument('<path...>', 'test files, or directories of *.yaml test files')
    .action((paths: string[]) => {
      const results = testFiles(paths).flatMap((file) => runTestFile(loadTestFile(file)));
      write(formatTable(results));
      process.exitCode = results.every((r) => r.passed) ? 0 : 1;
    });
}
