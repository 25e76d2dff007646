// Reads node's TAP output line by line and keeps each failed test: its suites, its name and
// its diagnostic block (error, expected, actual, location). A suite that failed only because
// a test in it did is left out, so each failure is named once.
const INDENT = 4;
const MAX_FAILURES = 20;
const MAX_BLOCK_LINES = 60;
const STACK_FRAMES = 2;

interface Failure {
  path: string[];
  block: string[];
}

export class FailedTests {
  private readonly suites: string[] = [];
  private readonly failures: Failure[] = [];
  private count = 0;
  private open: { failure: Failure; indent: number } | undefined;

  read(line: string): void {
    if (this.open !== undefined) {
      const { failure, indent } = this.open;
      const body = line.slice(indent + 2);
      if (!line.startsWith(' '.repeat(indent + 2))) {
        this.open = undefined;
      } else if (body === '...') {
        this.open = undefined;
        this.keep(failure);
        return;
      } else {
        if (body !== '---' && failure.block.length < MAX_BLOCK_LINES) failure.block.push(body);
        return;
      }
    }
    const subtest = /^( *)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      const depth = subtest[1]!.length / INDENT;
      this.suites.length = depth;
      this.suites[depth] = subtest[2]!;
      return;
    }
    const notOk = /^( *)not ok \d+ - (.*?)(?: # .*)?$/.exec(line);
    if (notOk) {
      const indent = notOk[1]!.length;
      const depth = indent / INDENT;
      const path = [...this.suites.slice(0, depth), notOk[2]!];
      this.open = { failure: { path, block: [] }, indent };
    }
  }

  private keep(failure: Failure): void {
    if (failure.block.some((l) => l.startsWith("failureType: 'subtestsFailed'"))) return;
    this.count += 1;
    if (this.failures.length < MAX_FAILURES) this.failures.push(failure);
  }

  /** Every failure kept, for the end of the log; '' when none failed. */
  report(): string {
    if (this.count === 0) return '';
    const out = [`failed tests (${this.count}):`];
    for (const { path, block } of this.failures) {
      out.push(`- ${path.join(' > ')}`);
      let stackLines = -1;
      for (const l of block) {
        if (l.startsWith('duration_ms:') || l.startsWith("type: '")) continue;
        // The first frames of a stack name the test's line; the runner's own frames follow.
        if (l.startsWith('stack:')) stackLines = 0;
        else if (stackLines >= 0 && l.startsWith('  ')) stackLines += 1;
        else stackLines = -1;
        if (stackLines <= STACK_FRAMES) out.push(`    ${l}`);
      }
    }
    if (this.count > this.failures.length) out.push(`… and ${this.count - this.failures.length} more: search the log for "not ok"`);
    return `${out.join('\n')}\n`;
  }
}
