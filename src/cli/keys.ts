// `deed keys usage`: per attestation key id, how many managed objects in the cluster still
// carry it; a verify-only key that none carries can be retired from the ring. Objects in
// namespaces outside the review scope are listed, never counted (src/keys/usage.ts).
// Exit status: 0 when every list succeeded, 1 when one failed (counts incomplete), 2 for a usage error.
import type { Command } from 'commander';
import { stampKeys } from '../policy/stamps/keys.js';
import { LEGACY_KEY_ID } from '../policy/stamps/key-ring.js';
import { allNamespacesOption, AS_HELP, CONTEXT_HELP, deedNamespaceOption, KUBECONFIG_HELP, lazyKubeConfig, logRetries, namespaceOption, outputOption } from './options.js';
import { parsePositiveSeconds } from './reap.js';
import { addFromClusterOptions, loadPolicyInputs, type PolicySourceFlags } from './policy-source.js';
import { DEFAULT_NAMESPACE } from '../install/manifests.js';

interface UsageFlags extends PolicySourceFlags {
  namespace: string[];
  deedNamespace: string;
  kubeconfig?: string;
  context?: string;
  as?: string;
  withoutKeys: boolean;
  showObjects: boolean;
  timeout: number;
  output: 'text' | 'json';
}

export function registerKeys(program: Command, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  const keys = program.command('keys').description('Attestation key ring tools');
  const usage = keys
    .command('usage')
    .description('Count, per attestation key id, the managed objects in the cluster that still carry it (metadata only)')
    .addOption(namespaceOption('count'))
    .addOption(allNamespacesOption('count'))
    .addOption(deedNamespaceOption("Deed's own namespace, which the webhooks never select (with the opt-in label, it decides the review scope)", DEFAULT_NAMESPACE))
    .option('--kubeconfig <file>', KUBECONFIG_HELP)
    .option('--context <name>', CONTEXT_HELP)
    .option('--as <user>', AS_HELP)
    .option('--config <file>', 'policy file (label prefix, attestation key ring); the embedded default otherwise', process.env.DEED_CONFIG)
    .option('--attestation-key <file>', "one attestation key file, in place of the policy's key ring");
  addFromClusterOptions(usage)
    .option('--without-keys', 'count by the key id each v2 attestation names, unverified, without reading key material (v1 ones are counted as "(v1)")', false)
    .option('--show-objects', 'also list each object, its key and whether it verifies', false)
    .option('--timeout <seconds>', 'deadline of each API call', parsePositiveSeconds, 10)
    .addOption(outputOption(['text', 'json'], 'text', 'a table, or one JSON object'))
    .action(async (o: UsageFlags) => {
      const onRetry = logRetries('keys');
      const loadKube = lazyKubeConfig(o);
      // --without-keys reads no key material: from the cluster, the policy's ConfigMap only.
      const { config, keyRing: ring } = await loadPolicyInputs(o, { command: 'keys usage', withKeys: !o.withoutKeys, deedNamespace: o.deedNamespace, timeoutMs: o.timeout * 1000, kubeConfig: loadKube, onRetry });
      const a = config.attestation;
      const ringIds = o.attestationKey !== undefined ? [LEGACY_KEY_ID] : a.keys !== undefined ? a.keys.map((k) => k.id) : a.keyFile !== undefined ? [LEGACY_KEY_ID] : [];
      const signingKey = o.attestationKey !== undefined || a.keys === undefined ? ringIds[0] : (a.signingKey ?? ringIds[0]);
      const [{ createKubeClient }, { keyUsage, formatUsage }] = await Promise.all([import('../kube/client.js'), import('../keys/usage.js')]);
      const client = createKubeClient(await loadKube(), { timeoutMs: o.timeout * 1000, impersonate: o.as, labelPrefix: config.labelPrefix, onRetry });
      const usage = await keyUsage({ client, keys: stampKeys(config.labelPrefix), ring, ringIds, signingKey, namespaces: o.namespace, deedNamespace: o.deedNamespace, keepObjects: o.showObjects });
      write(formatUsage(usage, o.output, o.showObjects));
      if (usage.errors.length > 0) process.exitCode = 1;
    });
}
