#!/usr/bin/env node
// The `deed` command line: runs the command tree of program.ts, and turns what escapes it
// into one line on stderr and exit status 2.
import { CommanderError } from 'commander';
import { ConfigError } from '../config/load.js';
import { buildProgram, programName } from './program.js';

export { buildProgram, programName } from './program.js';

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
