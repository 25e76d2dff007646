// Runs the `deed` CLI as a child process, as an operator would, and captures its output;
// or one subcommand in this process, where a child's start-up would cost seconds per call.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';

export const ROOT = join(import.meta.dirname, '..');
const EMPTY_HOME = mkdtempSync(join(tmpdir(), 'deed-home-'));

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

export interface InProcessResult {
  error?: Error;
  /** process.exitCode as the command left it (undefined: 0). */
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
}

/**
 * Runs a subcommand through its own registration, as main.ts wires it, with the in-cluster
 * and policy environment variables out of the way; restores the environment and exit code.
 */
export async function runInProcess(register: (program: Command, write: (text: string) => void) => void, args: string[]): Promise<InProcessResult> {
  let stdout = '';
  let stderr = '';
  const saved = { env: { ...process.env }, exitCode: process.exitCode };
  delete process.env.KUBERNETES_SERVICE_HOST;
  delete process.env.DEED_CONFIG;
  // Never a developer's own cluster: no $KUBECONFIG, and a home without ~/.kube/config.
  delete process.env.KUBECONFIG;
  process.env.HOME = EMPTY_HOME;
  process.exitCode = undefined;
  try {
    const program = new Command('deed').exitOverride().configureOutput({ writeErr: (text) => (stderr += text), writeOut: () => {} });
    register(program, (text) => (stdout += text));
    let error: Error | undefined;
    await program.parseAsync(args, { from: 'user' }).catch((e: Error) => (error = e));
    const exitCode = typeof process.exitCode === 'number' ? process.exitCode : undefined;
    return { ...(error ? { error } : {}), exitCode, stdout, stderr };
  } finally {
    process.env = saved.env;
    process.exitCode = saved.exitCode;
  }
}
