// Child processes the end-to-end suite owns. Each runs in a process group of its own, its
// output in a log file beside it; whatever is still running when the test process ends
// (a failed test, an interrupt, an uncaught error) is killed with its group, so no etcd or
// API server outlives the run.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync, closeSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Process {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** Polls `ready` until it answers true; fails early, with the log's tail, if the process dies. */
  waitUntil(ready: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
  exited(): boolean;
  log(): string;
}

// Children to kill on exit, with whether they lead a process group of their own.
const running = new Map<ChildProcess, boolean>();

const scratch = new Set<string>();

function killAll(): void {
  for (const [child, group] of running) {
    try {
      process.kill(group ? -child.pid! : child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  scratch.clear();
}

/** A folder of the run's own (data, keys, logs), removed when the run ends however it ends. */
export function removeOnExit(dir: string): () => void {
  scratch.add(dir);
  return () => {
    scratch.delete(dir);
    rmSync(dir, { recursive: true, force: true });
  };
}

/** Kills `child` with the suite if it is still running then (a process started elsewhere). */
export function adopt(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  running.set(child, false);
  child.once('exit', () => running.delete(child));
}

process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
  });
}

export function startProcess(name: string, command: string, args: string[], dir: string, env: NodeJS.ProcessEnv = process.env): Process {
  const logFile = join(dir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(command, args, { cwd: dir, env, detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  running.set(child, true);
  let done = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      done = true;
      running.delete(child);
      resolve();
    }),
  );
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  return {
    name,
    child,
    logFile,
    exited: () => done,
    log,
    async waitUntil(ready, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (done) throw new Error(`${name} exited (code ${child.exitCode}) before it was ready; log tail:\n${log().slice(-3000)}`);
        if (await ready()) return;
        if (Date.now() > deadline) throw new Error(`${name} not ready after ${timeoutMs} ms; log tail:\n${log().slice(-3000)}`);
        await sleep(100);
      }
    },
    async stop(graceMs = 5000) {
      if (done) return;
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }, graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** A port the kernel just handed out on the loopback; free unless someone races for it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
