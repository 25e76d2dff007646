// `npm test`'s last step: the unit and end-to-end suites in one run of node's test runner,
// then one last line that says whether the end-to-end suite ran. A run without it is not
// green by accident: the line says so in capitals, and under CI (CI=true, or
// DEED_REQUIRE_E2E=1, which .ci/run sets) the run fails.
//   tsx scripts/test-all.ts FILE...
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { assets } from '../test/e2e/control-plane.js';
import { FailedTests } from './failed-tests.js';

const files = process.argv.slice(2);
const required = process.env.CI === 'true' || process.env.CI === '1' || process.env.DEED_REQUIRE_E2E === '1';
const found = assets();
const e2eIncluded = files.some((f) => f.includes('test/e2e/'));

const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...files], { stdio: ['ignore', 'pipe', 'inherit'] });
// The runner's own totals (TAP "# pass 3", spec "ℹ pass 3"), repeated in the last line.
const totals = new Map<string, number>();
// Each failed test with its suites and its diagnostic block, repeated before the last line:
// a CI log that keeps only its tail still names what failed and why.
const failures = new FailedTests();
const lines = createInterface({ input: child.stdout });
lines.on('line', (line) => {
  process.stdout.write(`${line}\n`);
  failures.read(line);
  const m = /^(?:# |ℹ )(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(line);
  if (m) totals.set(m[1]!, Number(m[2]));
});
const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('close', (c, s) => resolve([c, s])));

const counts = ['tests', 'pass', 'fail', 'skipped'].map((k) => `${k} ${totals.get(k) ?? '?'}`).join(', ');
let exit = code ?? 1;
let verdict: string;
if ('missing' in found || !e2eIncluded) {
  const why = 'missing' in found ? `${found.missing}; export KUBEBUILDER_ASSETS=$(../shared/envtest/install.sh), or see test/e2e/README.md` : 'not among the files';
  verdict = `THE END-TO-END SUITE DID NOT RUN (${why}): unit tests only`;
  if (required) {
    verdict += '; CI requires it, so this run FAILS';
    if (exit === 0) exit = 1;
  }
} else {
  const without = [!found.controllers && 'kube-controller-manager', !found.helm && 'helm'].filter(Boolean);
  verdict = `unit and end-to-end suites ran${without.length > 0 ? ` (without ${without.join(' and ')}: the tests that need them were skipped)` : ''}`;
}
const failed = failures.report();
if (failed !== '') process.stdout.write(`\n${failed}`);
const outcome = signal !== null ? `stopped by ${signal}` : code === 0 ? 'passed' : 'FAILED';
process.stdout.write(`\nnpm test: ${outcome}; ${counts}; ${verdict}\n`);
process.exit(exit);
