// What asks a long-running command (`deed serve`, `deed dev`) to stop: its signals, and, when
// npm started it (`npm start`, `npx deed ...`), npm going away. npm passes SIGTERM and SIGINT
// only to the shell it runs the command with (`sh -c`), and that shell dies without passing
// them on: the command, reparented, would serve on with nobody to stop it. So under npm a
// change of parent process is a stop request too.
import { EventEmitter } from 'node:events';

/** The parent this process started under, read when the CLI's modules load. */
const STARTED_UNDER = process.ppid;

export type StopEvent = NodeJS.Signals | 'parent-exit';

/** What a stop request is called in a message. */
export function stopCause(event: StopEvent): string {
  const words: Partial<Record<StopEvent, string>> = { SIGINT: 'interrupted', SIGTERM: 'terminated', SIGHUP: 'hung up', 'parent-exit': 'the npm that started it exited' };
  return words[event] ?? event;
}

/** npm runs this process (a package script, or `npm exec`/npx): it sets npm_lifecycle_event for what it runs. */
export function runByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.npm_lifecycle_event ?? '') !== '';
}

export interface StopEventOptions {
  /** Watch for the parent's exit (default: when npm runs this process). */
  watchParent?: boolean;
  /** How often the parent is checked. */
  pollMs?: number;
  /** The parent now, and the one at start (tests). */
  ppid?: () => number;
  startedUnder?: number;
}

export interface StopEvents extends EventEmitter {
  /** Stops listening: the signals get their default action again. */
  close(): void;
}

/**
 * An emitter of the `signals` the process receives, each under its name, and of
 * `parent-exit` once the parent it started under is gone (under npm). Every signal is
 * emitted as it comes: what a second one means is the command's to say.
 */
export function stopEvents(signals: readonly NodeJS.Signals[], o: StopEventOptions = {}): StopEvents {
  const events = new EventEmitter() as StopEvents;
  const relays = signals.map((signal) => {
    const relay = () => void events.emit(signal);
    process.on(signal, relay);
    return () => process.off(signal, relay);
  });
  const ppid = o.ppid ?? (() => process.ppid);
  const startedUnder = o.startedUnder ?? STARTED_UNDER;
  const watch =
    (o.watchParent ?? runByNpm())
      ? setInterval(() => {
          if (ppid() === startedUnder) return;
          clearInterval(watch);
          events.emit('parent-exit');
        }, o.pollMs ?? 250).unref()
      : undefined;
  events.close = () => {
    clearInterval(watch);
    for (const off of relays) off();
  };
  return events;
}
