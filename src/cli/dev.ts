// `deed dev`: the local loop against a cluster. Runs `deed serve` in this process, against
// the current kubeconfig (the lookup cache reads as its user), registers the webhook
// configurations `deed manifests` renders under names of their own, pointed by URL at this
// process, and removes them when it stops (SIGINT, SIGTERM, SIGHUP, npm's exit, a fatal error).
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadConfig } from '../config/load.js';
import { DEFAULT_NAMESPACE } from '../install/manifests.js';
import { DEV_NAME, FAILURE_POLICIES, WEBHOOK_CONFIGURATION_KINDS, devWebhookConfigurations, resourceOf, webhookBaseUrl, type FailurePolicy, type WebhookConfiguration, type WebhookConfigurationKind } from '../install/dev-webhooks.js';
import { excludedNamespaces, OPTED_IN_SELECTOR } from '../policy/review-scope.js';
import type { WebhookRegistry } from '../kube/webhook-registrations.js';
import type { RunningServer } from '../server/serve.js';
import { collect, CONTEXT_HELP, deedNamespaceOption, deprecatedNamespaceOption, KUBECONFIG_HELP, parsePort, parsePositiveSeconds } from './options.js';
import { stopCause, stopEvents } from './stop-events.js';

/** 8443 is `deed serve`'s (and `npm start`'s): a dev loop beside it needs another port. */
export const DEV_PORT = 9443;
/** How long the review scope may take to be known (the lookup cache's first list of namespaces). */
const READY_TIMEOUT_MS = 60_000;
/** After a stop signal: removing the configurations (each call within --timeout) and draining. */
const STOP_GRACE_MS = 30_000;

const both = WEBHOOK_CONFIGURATION_KINDS.map((kind) => `${resourceOf(kind)}/${DEV_NAME}`).join(' and ');

/** What removes a dev loop's configurations when it could not: printed whenever removal fails. */
export const CLEANUP_HINT = `remove them with \`deed dev --cleanup\` or \`kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration ${DEV_NAME}\``;

export function registerDev(program: Command): void {
  const dev = program.command('dev');
  // `deed dev --namespace sandbox-dev` took sandbox-dev out of review: say what it does, and what was meant.
  deprecatedNamespaceOption(dev, ' (to send only some namespaces to this process: --only-namespace)');
  dev
    .description("Run the webhook here against the current kubeconfig's cluster, with webhook configurations of its own pointed at it; removes them on exit")
    .option('--address <host>', 'the address the API server dials to reach this process (kind: the kind network\'s gateway; Docker Desktop: host.docker.internal; k3d: host.k3d.internal)', '127.0.0.1')
    .option('--host <host>', 'address to listen on; --address when it is an IP address, 0.0.0.0 otherwise')
    .option('--port <port>', 'port to listen on and register (0: a free one)', parsePort, DEV_PORT)
    .addOption(new Option('--failure-policy <policy>', 'the webhooks\' failurePolicy: Ignore lets writes through unreviewed while this process is down (a crash leaves its configurations behind); Fail refuses them, as the install does').choices([...FAILURE_POLICIES]).default('Ignore'))
    .option('--only-namespace <name>', 'send only this opted-in namespace to this process (repeatable); every opted-in namespace otherwise', collectNamespace, [])
    .addOption(deedNamespaceOption("Deed's own namespace, excluded from the review scope as in the install", DEFAULT_NAMESPACE))
    .option('--config <file>', 'policy file (YAML); the embedded default otherwise', process.env.DEED_CONFIG)
    .option('--kubeconfig <file>', KUBECONFIG_HELP)
    .option('--context <name>', CONTEXT_HELP)
    .option('--cert-dir <dir>', 'where generated certificates and the local attestation key live (regenerated when they do not cover --address)', 'certs')
    .option('--no-cache-secrets', 'read each Secret a review looks up from the API server instead of keeping Secret metadata in the lookup cache')
    .addOption(new Option('--log-format <format>', 'json: epoch-millisecond time and numeric levels (pino); iso: ISO-8601 time and level names').choices(['json', 'iso']).default('json'))
    .option('--timeout <seconds>', 'deadline of each API call that registers or removes a configuration', parsePositiveSeconds, 10)
    .option('--cleanup', `remove ${both} (a crashed run's) and exit`, false)
    .action(async (o: DevFlags) => {
      // --cleanup needs no policy: a broken one must not keep leftovers in place.
      const config = o.cleanup ? undefined : loadConfig(o.config);
      // Checked before anything starts: a namespace the selector can never match is a usage error.
      for (const ns of o.onlyNamespace)
        if (excludedNamespaces(o.deedNamespace).includes(ns)) throw new Error(`--only-namespace ${ns}: never reviewed (kube-system and Deed's own namespace, --deed-namespace, are excluded)`);
      if (config) devWebhookConfigurations({ namespace: o.deedNamespace, config, baseUrl: webhookBaseUrl(o.address, 1), caPem: '', failurePolicy: o.failurePolicy, onlyNamespaces: o.onlyNamespace });
      // Loaded here: @kubernetes/client-node, fastify and pino take a second or more to load.
      const [{ loadKubeConfig }, { createWebhookRegistry }] = await Promise.all([import('../kube/client.js'), import('../kube/webhook-registrations.js')]);
      const kc = loadKubeConfig({ kubeconfig: o.kubeconfig, context: o.context });
      const registry = createWebhookRegistry(kc, o.timeout * 1000);
      if (config === undefined) {
        const removal = await removeDevWebhooks(registry);
        say(removal.message);
        if (removal.failed.length > 0) process.exitCode = 1;
        return;
      }

      const [{ createLogger }, { startServer }] = await Promise.all([import('../observability/logger.js'), import('../server/serve.js')]);
      const logger = createLogger(undefined, undefined, o.logFormat);
      const server = await startServer({
        config,
        logger,
        host: o.host ?? (isIP(o.address) !== 0 ? o.address : '0.0.0.0'),
        port: o.port,
        certDir: o.certDir,
        // The SAN the API server checks: it dials --address.
        dns: [o.address],
        kubeConfig: kc,
        namespace: o.deedNamespace,
        cacheSecrets: o.cacheSecrets,
      });

      await runDevLoop({
        registry,
        server,
        configurations: (port, caPem) =>
          devWebhookConfigurations({ namespace: o.deedNamespace, config, baseUrl: webhookBaseUrl(o.address, port), caPem, failurePolicy: o.failurePolicy, onlyNamespaces: o.onlyNamespace }),
        readyLine: (port, replaced) => readyLine(webhookBaseUrl(o.address, port), o.failurePolicy, o.onlyNamespace, replaced),
        events: devEvents(),
        exit: (code) => process.exit(code),
        say,
        onFatal: (err) => logger.fatal({ err }, 'fatal error; removing the webhook configurations'),
        onShutdownError: (err) => logger.error({ err }, 'shutdown failed'),
      });
    });
}

/** The process's stop requests (stop-events.ts) and its uncaught exceptions. */
function devEvents(): DevLoop['events'] {
  const stops = stopEvents(['SIGINT', 'SIGTERM', 'SIGHUP']);
  // After SIGHUP the terminal is gone: a failed write of the log or a message is no fatal error.
  stops.once('SIGHUP', () => {
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  });
  return {
    on: (event, listener) => (event === 'uncaughtException' ? process.on(event, listener) : stops.on(event, listener)),
  };
}

function say(line: string): void {
  process.stderr.write(`deed dev: ${line}\n`);
}

export interface DevLoop {
  registry: WebhookRegistry;
  server: Pick<RunningServer, 'url' | 'caFile' | 'isReady' | 'shutdown'>;
  /** The configurations for the port the server listens on, with its CA. */
  configurations(port: number, caPem: string): WebhookConfiguration[];
  readyLine(port: number, replacedLeftover: boolean): string;
  /** Where stop requests (signals; under npm, its exit) and fatal errors come from: the process (stop-events.ts). */
  events: { on(event: DevStopEvent | 'uncaughtException', listener: (err: Error) => void): unknown };
  exit(code: number): void;
  say(line: string): void;
  onFatal(err: Error): void;
  onShutdownError(err: unknown): void;
  readyTimeoutMs?: number;
  stopGraceMs?: number;
}

/**
 * What stops the loop and removes its configurations: Ctrl-C, SIGTERM, the terminal closing
 * (SIGHUP), and npm exiting when npm runs it (`npx deed dev`): left behind with
 * failurePolicy Fail, they would refuse every write in the opted-in namespaces.
 */
export const DEV_STOP_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'parent-exit'] as const;
export type DevStopEvent = (typeof DEV_STOP_EVENTS)[number];

/**
 * The loop once the server listens: wait until it knows its review scope, register, print
 * the ready line; on a stop request (exit 0) or a fatal error (exit 1) remove both
 * configurations, then stop the server. Resolves once ready, or once a failed start is
 * cleaned up.
 */
export async function runDevLoop(loop: DevLoop): Promise<void> {
  const graceMs = loop.stopGraceMs ?? STOP_GRACE_MS;
  let registering: Promise<unknown> = Promise.resolve();
  let stopping = false;
  const stop = async (why: string, code: number) => {
    // A second signal changes nothing: Ctrl-C reaches the whole process group, and a
    // wrapper (npx, tsx) relays it once more; the grace timer bounds the stop instead.
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      loop.say(`stopping took longer than ${graceMs / 1000} s; exiting; ${CLEANUP_HINT}`);
      loop.exit(1);
    }, graceMs).unref();
    // A registration in flight lands first, so the removal cannot run ahead of it.
    await registering.catch(() => undefined);
    const removal = await removeDevWebhooks(loop.registry);
    loop.say(`${why}: ${removal.message}`);
    await loop.server.shutdown().catch((err: unknown) => loop.onShutdownError(err));
    loop.exit(removal.failed.length > 0 ? 1 : code);
  };
  for (const event of DEV_STOP_EVENTS) loop.events.on(event, () => void stop(stopCause(event), 0));
  // A fatal error still removes the configurations: with Fail they would refuse every write.
  loop.events.on('uncaughtException', (err) => {
    // Logging must not stand in the removal's way (a closed terminal fails its writes).
    try {
      loop.onFatal(err);
    } catch {
      // the removal below still runs
    }
    void stop(`fatal error (${err.message})`, 1);
  });

  try {
    await untilReady(loop.server.isReady, loop.readyTimeoutMs ?? READY_TIMEOUT_MS, () => stopping);
    if (stopping) return;
    const port = Number(new URL(loop.server.url).port);
    const registration = registerDevWebhooks(loop.registry, loop.configurations(port, readFileSync(loop.server.caFile!, 'utf8')));
    registering = registration;
    const replaced = (await registration).some((r) => r.outcome === 'replaced');
    if (stopping) return;
    loop.say(loop.readyLine(port, replaced));
  } catch (err) {
    if (stopping) return;
    loop.say(`cannot start: ${(err as Error).message}`);
    await stop('not started', 1);
  }
}

/** The one line printed when the loop is ready: what it registered, where it calls, how to stop it. */
export function readyLine(baseUrl: string, failurePolicy: FailurePolicy, only: readonly string[], replacedLeftover: boolean): string {
  const scope = only.length > 0 ? `namespace${only.length > 1 ? 's' : ''} ${only.join(', ')} (when labelled ${OPTED_IN_SELECTOR})` : `namespaces labelled ${OPTED_IN_SELECTOR}`;
  return (
    `ready: registered ${both}${replacedLeftover ? ' (replacing a previous run\'s)' : ''}, calling ${baseUrl} for writes in ${scope}, failurePolicy ${failurePolicy}; ` +
    'Ctrl-C (or SIGTERM) removes them and stops'
  );
}

/** Registers each configuration in turn; if one fails, those already registered are removed again and the error stands. */
export async function registerDevWebhooks(registry: WebhookRegistry, configs: readonly WebhookConfiguration[]): Promise<Array<{ kind: WebhookConfigurationKind; outcome: 'created' | 'replaced' }>> {
  const done: Array<{ kind: WebhookConfigurationKind; outcome: 'created' | 'replaced' }> = [];
  try {
    for (const c of configs) done.push({ kind: c.kind as WebhookConfigurationKind, outcome: await registry.apply(c) });
    return done;
  } catch (err) {
    const removal = await removeDevWebhooks(registry);
    throw new Error(`${(err as Error).message}${removal.failed.length > 0 ? `; ${removal.message}` : ''}`, { cause: err });
  }
}

export interface Removal {
  removed: string[];
  /** There was none to remove. */
  absent: string[];
  failed: Array<{ what: string; error: string }>;
  /** One sentence for the operator, with the cleanup hint when something is left. */
  message: string;
}

/** Removes both of `deed dev`'s configurations, each whatever became of the other; NotFound counts as removed. */
export async function removeDevWebhooks(registry: WebhookRegistry): Promise<Removal> {
  const out: Omit<Removal, 'message'> = { removed: [], absent: [], failed: [] };
  for (const kind of WEBHOOK_CONFIGURATION_KINDS) {
    const what = `${resourceOf(kind)}/${DEV_NAME}`;
    try {
      (await registry.remove(kind, DEV_NAME) ? out.removed : out.absent).push(what);
    } catch (err) {
      out.failed.push({ what, error: (err as Error).message });
    }
  }
  const parts = [
    ...(out.removed.length > 0 ? [`removed ${out.removed.join(' and ')}`] : []),
    ...(out.absent.length > 0 ? [`no ${out.absent.join(' or ')} to remove`] : []),
    ...(out.failed.length > 0 ? [`could not remove ${out.failed.map((f) => `${f.what} (${f.error})`).join(' nor ')}; ${CLEANUP_HINT}`] : []),
  ];
  return { ...out, message: parts.join('; ') };
}

async function untilReady(isReady: () => boolean, timeoutMs: number, stopping: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!isReady() && !stopping()) {
    if (Date.now() > deadline) throw new Error(`the review scope is not known after ${timeoutMs / 1000} s: the kubeconfig's user must list and watch namespaces and the kinds Deed looks up (see the log)`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function collectNamespace(value: string, previous: string[]): string[] {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value)) throw new InvalidArgumentError('must be a namespace name');
  return collect(value, previous);
}

interface DevFlags {
  address: string;
  host?: string;
  port: number;
  failurePolicy: FailurePolicy;
  onlyNamespace: string[];
  deedNamespace: string;
  config?: string;
  kubeconfig?: string;
  context?: string;
  certDir: string;
  cacheSecrets: boolean;
  logFormat: 'json' | 'iso';
  timeout: number;
  cleanup: boolean;
}
