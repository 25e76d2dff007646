// The `deed` command tree, apart from main.ts (which runs it), so the docs generator can
// read every command's flags (scripts/doc-tables.ts). Each subcommand lives in its own module.
import { basename } from 'node:path';
import { Command } from 'commander';
import { VERSION } from '../version.js';
import { registerAudit } from './audit.js';
import { registerCerts } from './certs.js';
import { registerCoverage } from './coverage.js';
import { registerDev } from './dev.js';
import { registerKeys } from './keys.js';
import { registerManifests } from './manifests.js';
import { registerReap } from './reap.js';
import { registerReview } from './review.js';
import { registerServe } from './serve.js';
import { registerTest } from './test.js';
import { registerVersion } from './version.js';
import { registerCompletion } from './completion.js';

/** Printed after a usage error in place of the whole help text: one line of error, one of hint. */
export const USAGE_HINT = '(add --help for usage)';

/** `kubectl deed` when kubectl ran us as its plugin (an executable named kubectl-deed). */
export function programName(executable: string | undefined): string {
  return executable !== undefined && basename(executable).startsWith('kubectl-') ? 'kubectl deed' : 'deed';
}

export function buildProgram(name = 'deed'): Command {
  const program = new Command(name)
    .description('Admission webhook that stamps ownership onto sandbox workloads')
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError(USAGE_HINT)
    .exitOverride();
  registerServe(program);
  registerDev(program);
  registerCerts(program);
  registerManifests(program);
  registerReap(program);
  registerReview(program);
  registerKeys(program);
  registerAudit(program);
  registerTest(program);
  registerCoverage(program);
  registerVersion(program);
  registerCompletion(program);
  return program;
}
