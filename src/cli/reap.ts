// `deed reap`: the janitor. Dry run unless --apply; one sweep (--once, the default, for a
// CronJob) or a loop (--interval) that sweeps at start. SIGTERM or SIGINT (a CronJob's
// deadline sends SIGTERM) stops new deletes, lets those in flight finish, prints the
// summary and exits 3: the sweep was incomplete.
import { once as eventOnce } from 'node:events';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { stampKeys } from '../policy/stamps/keys.js';
import { formatDecision, formatSummary, Progress, type OutputFormat } from '../reaper/report.js';
import type { SweepOptions, SweepSummary } from '../reaper/sweep.js';
import type { Config } from '../config/schema.js';
import { addFromClusterOptions, loadPolicyInputs, type PolicySourceFlags } from './policy-source.js';
import { allNamespacesOption, AS_HELP, CONTEXT_HELP, deedNamespaceOption, KUBECONFIG_HELP, lazyKubeConfig, logRetries, namespaceOption, outputOption, parseCount, parseSeconds } from './options.js';
import { DEFAULT_NAMESPACE } from '../install/manifests.js';

export { collectNamespace } from './options.js';
export { reaperKeyRing } from './policy-source.js';

/** Exit status of a sweep that was stopped before it finished (SIGTERM, the CronJob deadline). */
export const EXIT_INCOMPLETE = 3;
// Deletes in flight: a plain client's throughput at a fraction of the API server's default
// max-requests-inflight (400), well inside an API Priority and Fairness level's share.
const DEFAULT_CONCURRENCY = 16;
const PROGRESS_EVERY_MS = 1000;

// The environment id goes into a label selector: anything but a label value could add terms.
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
function parseEnvironment(value: string): string {
  if (!LABEL_VALUE.test(value)) throw new InvalidArgumentError('must be an environment id (a Kubernetes label value)');
  return value;
}

export function parsePositiveSeconds(value: string): number {
  const n = parseSeconds(value);
  if (n <= 0) throw new InvalidArgumentError('must be more than 0 seconds');
  return n;
}

interface ReapFlags extends PolicySourceFlags {
  environment: string;
  namespace: string[];
  kubeconfig?: string;
  context?: string;
  as?: string;
  deedNamespace: string;
  concurrency: number;
  apply: boolean;
  once?: boolean;
  interval?: number;
  timeout: number;
  output: OutputFormat;
  metricsFile?: string;
}

/** Where the lines go: a promise holds the sweep back until the reader has caught up. */
export type Write = (text: string) => void | Promise<void>;

/**
 * stdout, honouring backpressure: a slow reader (a pipe, a log shipper) never makes output
 * pile up in memory. Lines written in the same turn of the event loop go out in one write.
 */
let pending: string[] = [];
let flushing: Promise<void> | undefined;
const toStdout: Write = (text) => {
  pending.push(text);
  flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
    while (pending.length > 0) {
      const chunk = pending.join('');
      pending = [];
      if (!process.stdout.write(chunk)) await eventOnce(process.stdout, 'drain');
    }
    flushing = undefined;
  });
  return flushing;
};

/** `write` receives the output lines (stdout by default; tests capture them); `progress` the progress line (stderr on a terminal). */
export function registerReap(program: Command, write: Write = toStdout, progress: NodeJS.WriteStream | undefined = process.stderr.isTTY ? process.stderr : undefined): void {
  const command = program
    .command('reap')
    .description("Delete one environment's leaked sandbox objects on positive evidence only (a dry run unless --apply)")
    .requiredOption('--environment <id>', 'the environment whose objects are judged; no other is ever listed', parseEnvironment)
    .addOption(namespaceOption('sweep'))
    .addOption(allNamespacesOption('sweep'))
    .option('--kubeconfig <file>', KUBECONFIG_HELP)
    .option('--context <name>', CONTEXT_HELP)
    .option('--as <user>', AS_HELP)
    .addOption(deedNamespaceOption("Deed's own namespace, never in the review scope", DEFAULT_NAMESPACE))
    .option('--concurrency <n>', 'deletes in flight at most (and, apart, owner reads)', parseCount, DEFAULT_CONCURRENCY)
    .option('--config <file>', 'policy file (label prefix, attestation key ring); the embedded default otherwise', process.env.DEED_CONFIG)
    .option('--attestation-key <file>', 'one attestation key file, in place of the policy\'s key ring');
  addFromClusterOptions(command)
    .option('--apply', 'delete what is reaped; without it, print what would be', false)
    .addOption(new Option('--once', 'run one sweep and exit (the default)').conflicts('interval'))
    .addOption(new Option('--interval <seconds>', 'sweep at start, then again SECONDS after each sweep ends, until SIGTERM').argParser(parsePositiveSeconds))
    .option('--timeout <seconds>', 'deadline of each API call', parsePositiveSeconds, 10)
    .addOption(outputOption(['text', 'json'], 'text', 'one line per decision, then the summary: as text, or one JSON object each'))
    .option('--metrics-file <file>', 'after each sweep, write its metrics (Prometheus text format) to FILE, for a textfile collector or a push sidecar')
    .action(async (o: ReapFlags) => {
      // Loaded here, not at the top: @kubernetes/client-node takes a second or more to
      // load, which every other deed command would pay.
      const loadKube = lazyKubeConfig(o);
      const { config, keyRing } = await loadPolicyInputs(o, {
        command: 'reap',
        withKeys: true,
        deedNamespace: o.deedNamespace,
        timeoutMs: o.timeout * 1000,
        kubeConfig: loadKube,
        onRetry: logRetries('reap'),
        checkPolicy: (policy, source, fromCluster) => checkEnvironment(policy, o.environment, source, fromCluster),
      });
      const [{ createKubeClient }, { sweep }] = await Promise.all([import('../kube/client.js'), import('../reaper/sweep.js')]);
      const kc = await loadKube();
      const stop = new AbortController();
      const client = createKubeClient(kc, { timeoutMs: o.timeout * 1000, signal: stop.signal, impersonate: o.as, labelPrefix: config.labelPrefix, onRetry: logRetries('reap') });
      const { ReaperMetrics } = await import('../reaper/metrics.js');
      const metrics = new ReaperMetrics(o.environment);
      const onSignal = () => stop.abort();
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);

      const options: Omit<SweepOptions, 'onDecision'> = {
        client,
        environment: o.environment,
        keys: stampKeys(config.labelPrefix),
        keyRing: keyRing!,
        deedNamespace: o.deedNamespace,
        namespaces: o.namespace,
        apply: o.apply,
        now: Date.now,
        deadlineGraceSeconds: config.reaper.deadlineGraceSeconds,
        leaseGraceSeconds: config.reaper.leaseGraceSeconds,
        runLeases: config.reaper.runLeases,
        concurrency: o.concurrency,
        signal: stop.signal,
      };
      const once = async (): Promise<SweepSummary> => {
        const counts = new Progress();
        const show = () => progress?.write(`\r\x1b[2K${counts.line(!o.apply)}`);
        const timer = progress ? setInterval(show, PROGRESS_EVERY_MS) : undefined;
        try {
          const summary = await sweep({
            ...options,
            onDecision: (d) => {
              counts.add(d);
              metrics.add(d);
              return d.folded ? undefined : write(`${formatDecision(d, o.output)}\n`);
            },
          });
          if (progress) progress.write(`\r\x1b[2K${counts.line(!o.apply)}\n`);
          metrics.finish(summary);
          if (o.metricsFile !== undefined) await metrics.writeTo(o.metricsFile);
          await write(`${formatSummary(summary, o.output)}\n`);
          return summary;
        } finally {
          clearInterval(timer);
        }
      };

      try {
        if (o.interval === undefined) {
          const status = exitStatus(await once());
          if (status !== 0) process.exitCode = status;
          return;
        }
        const interval = o.interval;
        while (!stop.signal.aborted) {
          const summary = await once();
          if (!summary.complete) {
            process.exitCode = EXIT_INCOMPLETE;
            return;
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, interval * 1000);
            stop.signal.addEventListener('abort', done, { once: true });
            function done() {
              clearTimeout(timer);
              stop.signal.removeEventListener('abort', done);
              resolve();
            }
          });
        }
      } finally {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
      }
    });
}

/** 0: complete and clean; 1: complete with errors; 3: stopped before the end. */
export function exitStatus(s: SweepSummary): number {
  if (!s.complete) return EXIT_INCOMPLETE;
  return s.errors > 0 ? 1 : 0;
}

/**
 * A mistyped id would select nothing and report a clean sweep every time, while the
 * environment's leaks pile up: refuse it, naming the policy it is not in.
 */
function checkEnvironment(config: Config, environment: string, source: string, fromCluster: boolean): void {
  if (config.environments.some((e) => e.id === environment)) return;
  const ids = config.environments.map((e) => e.id).join(', ') || 'it defines none';
  const next = fromCluster
    ? 'pass --release NAME or --deed-namespace NS for another install, or --config with the policy the webhook runs'
    : 'pass --config with the policy the webhook runs, or leave out --config and --attestation-key to read the installed one (--from-cluster)';
  throw new Error(`environment "${environment}" is not in the policy (${ids}), read from ${source}; ${next}`);
}
