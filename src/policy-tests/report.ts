// What `deed test` prints: a table for people, one JSON document for scripts, or JUnit
// XML for CI systems that chart test results (Jenkins, GitLab, GitHub's test reporters).
// Every format lists the same cases; the summary counts every case that ran selected.
import junitModule, { type Builder } from 'junit-report-builder';
import { formatFinding } from '../admission/verdict.js';
import type { CaseOutcome, CaseResult } from './run.js';

// The package's module.exports is the builder itself, while its types declare an ES default
// export, which NodeNext reads as `{ default: builder }`.
const junit = junitModule as unknown as Builder;

export type TestOutput = 'table' | 'json' | 'junit';

export interface ReportOptions {
  /** The outcome of every listed case (allowed, or the denials with their messages, and warnings), passing ones too. */
  detailed: boolean;
  /** List failing cases only; the summary still counts them all. */
  failOnly: boolean;
}

export interface Summary {
  passed: number;
  failed: number;
}

export function summarize(results: readonly CaseResult[]): Summary {
  const failed = results.filter((r) => !r.passed).length;
  return { passed: results.length - failed, failed };
}

/** One line per denial and per warning: what the webhooks answered. */
export function outcomeLines(o: CaseOutcome): string[] {
  return [...(o.allowed ? ['allowed'] : o.denials.map((f) => `denied ${formatFinding(f)}`)), ...o.warnings.map((w) => `warning: ${w}`)];
}

function listed(results: readonly CaseResult[], o: ReportOptions): CaseResult[] {
  return o.failOnly ? results.filter((r) => !r.passed) : [...results];
}

/** A fixed-width table: FILE, CASE, RESULT, and on failing rows what differed; detailed, each row's outcome under it. */
export function formatTable(results: readonly CaseResult[], o: ReportOptions = { detailed: false, failOnly: false }): string {
  const shown = listed(results, o);
  const rows = shown.map((r) => [r.file, r.case, r.passed ? 'pass' : 'FAIL', r.problems.join('; ')]);
  const header = ['FILE', 'CASE', 'RESULT', 'DETAIL'];
  const widths = [0, 1, 2].map((i) => Math.max(header[i]!.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c)).join('  ').trimEnd();
  const body = rows.flatMap((row, i) => [line(row), ...(o.detailed ? outcomeLines(shown[i]!.outcome).map((l) => `    ${oneLine(l)}`) : [])]);
  const { passed, failed } = summarize(results);
  return [line(header), ...body, '', `${passed} passed, ${failed} failed`].join('\n') + '\n';
}

/** Messages quote values from the objects under test: one outcome, one line. */
function oneLine(text: string): string {
  return text.replace(/\p{Cc}/gu, ' ');
}

export function formatJson(results: readonly CaseResult[], o: ReportOptions = { detailed: false, failOnly: false }): string {
  const cases = listed(results, o).map((r) => ({ file: r.file, case: r.case, result: r.passed ? 'pass' : 'fail', problems: r.problems, outcome: r.outcome }));
  return `${JSON.stringify({ summary: summarize(results), cases }, null, 2)}\n`;
}

/** JUnit XML: one test suite per file, one test case per case, a failure naming what differed. */
export function formatJunit(results: readonly CaseResult[], o: ReportOptions = { detailed: false, failOnly: false }): string {
  const builder = junit.newBuilder().name('deed test');
  const suites = new Map<string, ReturnType<typeof builder.testSuite>>();
  for (const r of listed(results, o)) {
    let suite = suites.get(r.file);
    if (suite === undefined) suites.set(r.file, (suite = builder.testSuite().name(r.file)));
    const tc = suite.testCase().className(r.file).name(r.case).file(r.file);
    if (!r.passed) tc.failure(r.problems.join('; '), 'expectation');
    if (o.detailed) tc.standardOutput(outcomeLines(r.outcome).join('\n'));
  }
  return `${builder.build()}\n`;
}

export function formatResults(results: readonly CaseResult[], output: TestOutput, o: ReportOptions): string {
  switch (output) {
    case 'table':
      return formatTable(results, o);
    case 'json':
      return formatJson(results, o);
    case 'junit':
      return formatJunit(results, o);
  }
}
