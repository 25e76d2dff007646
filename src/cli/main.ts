#!/usr/bin/env node
// The `deed` command line. Each subcommand lives in its own module.
import { basename } from 'node:path';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/load.js';
import { registerAudit } from './audit.js';
import { VERSION } from '../version.js';
import { registerCerts } from './certs.js';
import { registerKeys } from './keys.js';
import { registerManifests } from './manifests.js';
import { registerReap } from './reap.js';
import { registerServe } from './serve.js';
import { registerReview } from './review.js';
import { registerTest } from './test.js';

/** `kubectl deed` when kubectl ran us as its plugin (an executable named kubectl-deed). */
export function programName(executable: string | undefined): string {
  return executable !== undefined && basename(executable).startsWith('kubectl-') ? 'kubectl deed' : 'deed';
}

export function buildProgram(name = 'deed'): Command {
  const program = new Command(name)
    .description('Admission webhook that stamps ownership onto sandbox workloads')
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError()
    .exitOverride();
  registerServe(program);
  registerCerts(program);
  registerManifests(program);
  registerReap(program);
  registerReview(program);
  registerKeys(program);
  registerAudit(program);
  registerTest(program);
  return program;
}

async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram(programName(argv[1])).parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
    const message = err instanceof ConfigError ? err.message : `deed: ${(err as Error).message}`;
    process.stderr.write(`${message}\n`);
    process.exit(2);
  }
}

await main(process.argv);
