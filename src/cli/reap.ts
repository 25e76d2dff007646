// `deed reap`: the janitor. Dry run unless --apply; one sweep (--once, the default, for a
// CronJob) or a loop (--interval) that sweeps at start and stops on SIGTERM or SIGINT.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadConfig } from '../config/load.js';
import { stampKeys } from '../policy/stamps/keys.js';
import { formatDecision, formatSummary, type OutputFormat } from '../reaper/report.js';
import type { SweepOptions } from '../reaper/sweep.js';
import type { Config } from '../config/schema.js';
import { singleKeyRing, type KeyRing } from '../policy/stamps/key-ring.js';
import { loadKeyRing, readAttestationKey } from '../server/attestation-key.js';
import { parseSeconds } from './options.js';

// The environment id goes into a label selector: anything but a label value could add terms.
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function parseEnvironment(value: string): string {
  if (!LABEL_VALUE.test(value)) throw new InvalidArgumentError('must be an environment id (a Kubernetes label value)');
  return value;
}

export function collectNamespace(value: string, previous: string[]): string[] {
  if (!NAMESPACE.test(value)) throw new InvalidArgumentError('must be a namespace name');
  return previous.includes(value) ? previous : [...previous, value];
}

export function parsePositiveSeconds(value: string): number {
  const n = parseSeconds(value);
  if (n <= 0) throw new InvalidArgumentError('must be more than 0 seconds');
  return n;
}

interface ReapFlags {
  environment: string;
  namespace: string[];
  kubeconfig?: string;
  config?: string;
  attestationKey?: string;
  apply: boolean;
  once?: boolean;
  interval?: number;
  timeout: number;
  output: OutputFormat;
}

/** `write` receives the output lines (stdout by default; tests capture them). */
export function registerReap(program: Command, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  program
    .command('reap')
    .description("Delete one environment's leaked sandbox objects on positive evidence only (a dry run unless --apply)")
    .requiredOption('--environment <id>', 'the environment whose objects are judged; no other is ever listed', parseEnvironment)
    .option('--namespace <ns>', 'namespace to sweep (repeatable); all namespaces otherwise', collectNamespace, [])
    .option('--kubeconfig <file>', 'kubeconfig file; the in-cluster service account otherwise')
    .option('--config <file>', 'policy file (label prefix, attestation key ring); the embedded default otherwise', process.env.DEED_CONFIG)
    .option('--attestation-key <file>', 'one attestation key file, in place of the policy\'s key ring')
    .option('--apply', 'delete what is reaped; without it, print what would be', false)
    .addOption(new Option('--once', 'run one sweep and exit (the default)').conflicts('interval'))
    .addOption(new Option('--interval <seconds>', 'sweep at start, then again SECONDS after each sweep ends, until SIGTERM').argParser(parsePositiveSeconds))
    .option('--timeout <seconds>', 'deadline of each API call', parsePositiveSeconds, 10)
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (o: ReapFlags) => {
      const config = loadConfig(o.config);
      // A mistyped id would select nothing and report a clean sweep every time, while the
      // environment's leaks pile up: refuse it instead.
      if (!config.environments.some((e) => e.id === o.environment))
        throw new Error(
          `environment "${o.environment}" is not in the policy (${config.environments.map((e) => e.id).join(', ') || 'it defines none'}); pass --config with the policy the webhook runs`,
        );
      const keyRing = reaperKeyRing(config, o.attestationKey);
      // Loaded here, not at the top: @kubernetes/client-node takes a second or more to
      // load, which every other deed command would pay.
      const [{ createKubeClient, loadKubeConfig }, { sweep }] = await Promise.all([import('../kube/client.js'), import('../reaper/sweep.js')]);
      const client = createKubeClient(loadKubeConfig(o.kubeconfig), { timeoutMs: o.timeout * 1000 });

      const stop = new AbortController();
      const options: SweepOptions = {
        client,
        environment: o.environment,
        keys: stampKeys(config.labelPrefix),
        keyRing,
        namespaces: o.namespace,
        apply: o.apply,
        now: Date.now,
        signal: stop.signal,
      };
      const once = async () => {
        const result = await sweep(options);
        for (const d of result.decisions) write(`${formatDecision(d, o.output)}\n`);
        write(`${formatSummary(result.summary, o.output)}\n`);
        return result.summary.errors;
      };

      if (o.interval === undefined) {
        if ((await once()) > 0) process.exitCode = 1;
        return;
      }
      const interval = o.interval;
      const onSignal = () => stop.abort();
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      while (!stop.signal.aborted) {
        await once();
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
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    });
}

/** The ring the webhook verifies with (the policy's), or the one key --attestation-key names. */
export function reaperKeyRing(config: Config, keyFile: string | undefined): KeyRing {
  if (keyFile !== undefined) return singleKeyRing(readAttestationKey(keyFile));
  if (config.attestation.keys === undefined && config.attestation.keyFile === undefined)
    throw new Error('reap needs the attestation key ring: set attestation.keys (or attestation.keyFile) in --config, or pass --attestation-key FILE');
  return loadKeyRing(config);
}
