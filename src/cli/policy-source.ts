// Where deed reap, audit and keys usage get the policy they judge with and the attestation
// key ring they verify with: local files (--config, --attestation-key), or the install in
// the cluster (--from-cluster, and the default when neither file is given: from-cluster.ts).
// Light on purpose: @kubernetes/client-node is loaded only when the cluster is read.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { singleKeyRing, type KeyRing } from '../policy/stamps/key-ring.js';
import { loadKeyRing, readAttestationKey } from '../server/attestation-key.js';
import type { RetryNotice } from '../kube/retry-notice.js';

/** The flags a command takes for where its policy and keys come from. */
export interface PolicySourceFlags {
  config?: string | undefined;
  attestationKey?: string | undefined;
  fromCluster?: boolean | undefined;
  release?: string | undefined;
  attestationSecret?: string | undefined;
}

// A Helm release name is a DNS label; a Secret's name a DNS subdomain. Both go into a
// selector or a path: nothing else may.
const RELEASE = /^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$/;
const SECRET = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function parseRelease(value: string): string {
  if (!RELEASE.test(value)) throw new InvalidArgumentError('must be a Helm release name (a DNS label of at most 53 characters)');
  return value;
}

function parseSecretName(value: string): string {
  if (!SECRET.test(value)) throw new InvalidArgumentError('must be a Secret name');
  return value;
}

/**
 * `--from-cluster`, `--release` and `--attestation-secret`, after a command's `--config` and
 * `--attestation-key`. A policy file and the cluster's policy cannot go together; a key file
 * with --from-cluster verifies in place of the installed Secret.
 */
export function addFromClusterOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--from-cluster', "read the policy and key ring the install runs (its ConfigMap and Secret in --deed-namespace), as the kubeconfig's own identity, not --as; the default without --config and --attestation-key").conflicts('config'),
    )
    .addOption(new Option('--release <name>', "with --from-cluster, the install's Helm release (its app.kubernetes.io/instance label), where a namespace holds several").argParser(parseRelease).conflicts('config'))
    .addOption(
      new Option('--attestation-secret <name>', "with --from-cluster, the key Secret, when it is not NAME-attestation beside the policy ConfigMap NAME-policy (the chart's attestation.existingSecret)")
        .argParser(parseSecretName)
        .conflicts(['config', 'attestationKey']),
    );
}

/**
 * Whether the policy comes from the cluster: --from-cluster (or --release or
 * --attestation-secret, which mean it), or no policy file and no key file at all, as the
 * chart's NOTES print the reaper's dry run. A policy file (--config or $DEED_CONFIG) wins.
 */
export function readsFromCluster(o: PolicySourceFlags): boolean {
  if (o.fromCluster === true || o.release !== undefined || o.attestationSecret !== undefined) return true;
  return (o.config === undefined || o.config === '') && o.attestationKey === undefined;
}

/** The ring the webhook verifies with (the policy's), or the one key --attestation-key names; `command` is named when there is neither. */
export function reaperKeyRing(config: Config, keyFile: string | undefined, command = 'reap'): KeyRing {
  if (keyFile !== undefined) return singleKeyRing(readAttestationKey(keyFile));
  if (config.attestation.keys === undefined && config.attestation.keyFile === undefined)
    throw new Error(`${command} needs the attestation key ring: set attestation.keys (or attestation.keyFile) in --config, or pass --attestation-key FILE`);
  return loadKeyRing(config);
}

export interface PolicyInputs {
  config: Config;
  /** Present when asked for. */
  keyRing?: KeyRing;
  /** Where the policy came from ("policy.yaml", "the embedded default", "ConfigMap deed-system/deed-policy"), for messages. */
  policySource: string;
  /** Whether it came from the cluster. */
  fromCluster: boolean;
}

export interface PolicyInputContext {
  /** `reap`, `audit`, `keys usage`: named in errors. */
  command: string;
  withKeys: boolean;
  deedNamespace: string;
  timeoutMs: number;
  /** The kubeconfig the command uses (--kubeconfig, --context): loaded only when the cluster is read. */
  kubeConfig: () => Promise<KubeConfig>;
  onRetry?: ((retry: RetryNotice) => void) | undefined;
  /** Checks the policy before any key is read (reap: the environment is in it); throws to refuse. */
  checkPolicy?: (config: Config, source: string, fromCluster: boolean) => void;
}

/** The policy and (with `withKeys`) the key ring, from the files given or from the cluster. */
export async function loadPolicyInputs(o: PolicySourceFlags, ctx: PolicyInputContext): Promise<PolicyInputs> {
  if (!readsFromCluster(o)) {
    const config = loadConfig(o.config);
    const policySource = o.config === undefined || o.config === '' ? 'the embedded default' : o.config;
    ctx.checkPolicy?.(config, policySource, false);
    return { config, ...(ctx.withKeys ? { keyRing: reaperKeyRing(config, o.attestationKey, ctx.command) } : {}), policySource, fromCluster: false };
  }
  // A key file given with --from-cluster is read first: a wrong path fails before any call.
  const keyFromFile = ctx.withKeys && o.attestationKey !== undefined ? singleKeyRing(readAttestationKey(o.attestationKey)) : undefined;
  const kc = await ctx.kubeConfig();
  const { readInstalled } = await import('./from-cluster.js');
  const installed = await readInstalled(kc, {
    deedNamespace: ctx.deedNamespace,
    release: o.release,
    attestationSecret: o.attestationSecret,
    withKeys: ctx.withKeys && keyFromFile === undefined,
    timeoutMs: ctx.timeoutMs,
    onRetry: ctx.onRetry,
    checkPolicy: ctx.checkPolicy === undefined ? undefined : (config, source) => ctx.checkPolicy!(config, source, true),
  });
  const keyRing = keyFromFile ?? installed.keyRing;
  return { config: installed.config, ...(keyRing ? { keyRing } : {}), policySource: installed.policySource, fromCluster: true };
}
