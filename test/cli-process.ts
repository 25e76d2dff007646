// Runs the `deed` CLI as a child process, as an operator would, and captures its output.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function deed(args: string[]): CliResult {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
