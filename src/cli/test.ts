// `deed test FILE|DIR...`: runs declarative policy tests (src/policy-tests), every *.yaml
// file of a directory (of its subdirectories too with -R), and prints a table, JSON or
// JUnit XML of pass/fail per case (policy-tests/report.ts).
// Exit status: 0 every selected case passed, 1 any failed, 2 a file that cannot be read
// as a test, or a --case that selects nothing.
import type { Command } from 'commander';
import picomatch from 'picomatch';
import { InputError } from '../review/build-review.js';
import { collect, expandFiles, outputOption } from './options.js';
import { loadTestFile } from '../policy-tests/file.js';
import type { TestOutput } from '../policy-tests/report.js';
import { runTestFile } from '../policy-tests/run.js';

interface TestFlags {
  recursive: boolean;
  output: Exclude<TestOutput, 'table'> | 'text';
  detailedResults: boolean;
  failOnly: boolean;
  case?: string[];
}

/** Whether a case is selected: its name matches one of the --case globs (every case without one). */
function caseSelector(globs: string[] | undefined): (name: string) => boolean {
  if (globs === undefined) return () => true;
  const matchers = globs.map((g) => picomatch(g, { dot: true, bash: true }));
  return (name) => matchers.some((m) => m(name));
}

export function registerTest(program: Command, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  program
    .command('test')
    .description('Run declarative policy tests: each case an object, a requester, an operation and the expected outcome')
    .argument('<path...>', 'test files, or directories of *.yaml test files')
    .option('-R, --recursive', 'with a directory, also the test files of its subdirectories', false)
    .addOption(outputOption(['text', 'json', 'junit'], 'text', 'a table, one JSON document, or JUnit XML (table: the old name of text)', { table: 'text' }))
    .option('--detailed-results', "list each case's outcome, passing ones too: allowed, or each denial's rule, field and message, and the warnings", false)
    .option('--fail-only', 'list the failing cases only (the summary still counts every case)', false)
    .option('--case <glob>', 'run and report only the cases whose name matches (exact, or a glob: "beta*"; repeatable); earlier cases of a file still run, for what they store', collect)
    .action(async (paths: string[], o: TestFlags) => {
      const selected = caseSelector(o.case);
      const files = expandFiles(paths, o.recursive, (m) => new InputError(m), /\.ya?ml$/);
      const results = files.flatMap((file) => {
        const t = loadTestFile(file);
        // A later case can look up what an earlier one stored: run up to the last selected one.
        const last = t.cases.findLastIndex((c) => selected(c.name));
        return last < 0 ? [] : runTestFile({ ...t, cases: t.cases.slice(0, last + 1) }).filter((r) => selected(r.case));
      });
      if (results.length === 0) throw new InputError(`no case of ${files.join(', ')} matches --case ${o.case!.join(', --case ')}`);
      // Loaded here, not with the command table: its JUnit builder costs every command, deed
      // serve included, about 6.5 MiB of RSS.
      const { formatResults } = await import('../policy-tests/report.js');
      write(formatResults(results, o.output === 'text' ? 'table' : o.output, { detailed: o.detailedResults, failOnly: o.failOnly }));
      process.exitCode = results.every((r) => r.passed) ? 0 : 1;
    });
}
