// `--from-cluster` (deed reap, audit, keys usage): the policy and attestation key ring the
// install runs, read from the cluster instead of from files: the policy ConfigMap
// (`<name>-policy`, entry policy.yaml) and the key Secret (`<name>-attestation`, one entry per
// key id) in Deed's namespace, as the Helm chart and `deed manifests` render them and as the
// webhook and the reaper's CronJob mount them. The ConfigMap is found by the labels every
// install puts on it (app.kubernetes.io/name=deed, component=webhook; instance=RELEASE with
// --release), so a release of any name, or with a fullnameOverride, is found.
//
// Both are read as the kubeconfig's own identity, never as --as: the reaper's CronJob gets
// them from its mounted volume, not through the API (a reaper confined to namespaces has no
// read of Deed's namespace at all), so a dry run --as the reaper's service account reads them
// as the administrator who runs it and sweeps as the reaper. Key material never leaves this module but as a KeyRing: no message
// quotes it.
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { parseConfigText } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { KubeError } from '../kube/errors.js';
import { withRetries, type RetryNotice } from '../kube/client.js';
import { createKeyRing, LEGACY_KEY_ID, singleKeyRing, type KeyRing } from '../policy/stamps/key-ring.js';
import { attestationKeyOf } from '../server/attestation-key.js';

/** The labels on every install's policy ConfigMap (src/install/manifests.ts, the chart's deed.labels). */
export const POLICY_SELECTOR = 'app.kubernetes.io/name=deed,app.kubernetes.io/component=webhook';
const POLICY_ENTRY = 'policy.yaml';
const POLICY_SUFFIX = '-policy';
const SECRET_SUFFIX = '-attestation';

export interface InstalledSource {
  /** Deed's namespace (--deed-namespace). */
  deedNamespace: string;
  /** --release: the Helm release (the app.kubernetes.io/instance label); any single install when unset. */
  release?: string | undefined;
  /** --attestation-secret: the key Secret's name, when it is not `<name>-attestation` (the chart's attestation.existingSecret). */
  attestationSecret?: string | undefined;
  /** Read the key Secret too (not for keys usage --without-keys, nor with --attestation-key). */
  withKeys: boolean;
  timeoutMs: number;
  onRetry?: ((retry: RetryNotice) => void) | undefined;
  /** Run on the policy before the Secret is read: a refusal reads no key material. */
  checkPolicy?: ((config: Config, source: string) => void) | undefined;
}

export interface Installed {
  config: Config;
  /** Present when `withKeys` was asked for. */
  keyRing?: KeyRing;
  /** "ConfigMap deed-system/deed-policy", for messages. */
  policySource: string;
}

/** Where to look, and what to pass instead, for the end of a message. */
function hint(o: InstalledSource): string {
  return `pass --deed-namespace with the namespace Deed is installed in${o.release === undefined ? ' (and --release NAME)' : ''}, or --config FILE with the policy file`;
}

function forbidden(err: unknown, what: string, instead: string): Error {
  if (err instanceof KubeError && err.status === 403)
    return new Error(`cannot read ${what}: ${err.message}; it is read as the kubeconfig's own identity, not as --as: grant that identity the read, or ${instead}`);
  return new Error(`cannot read ${what}: ${err instanceof Error ? err.message : String(err)}`);
}

export async function readInstalled(kc: KubeConfig, o: InstalledSource): Promise<Installed> {
  const core = kc.makeApiClient(CoreV1Api);
  // No impersonation: the caller's own identity reads (see the top of this file).
  const extras = { onRetry: o.onRetry };
  const namespace = o.deedNamespace;
  const labelSelector = o.release === undefined ? POLICY_SELECTOR : `${POLICY_SELECTOR},app.kubernetes.io/instance=${o.release}`;

  let found: V1ConfigMap[];
  try {
    const list = await withRetries(o.timeoutMs, `list configmaps in ${namespace}`, undefined, (c) => core.listNamespacedConfigMap({ namespace, labelSelector }, c), extras);
    found = (list.items ?? []).filter((cm) => typeof cm.data?.[POLICY_ENTRY] === 'string');
  } catch (err) {
    throw forbidden(err, `Deed's installed policy (the ConfigMap labelled ${labelSelector} in ${namespace})`, 'pass --config FILE with the policy file');
  }
  if (found.length === 0)
    throw new Error(`no installed Deed policy in namespace ${namespace}: no ConfigMap there labelled ${labelSelector} holds ${POLICY_ENTRY}; ${hint(o)}`);
  if (found.length > 1) {
    const names = found.map((cm) => `${cm.metadata?.name} (release ${cm.metadata?.labels?.['app.kubernetes.io/instance'] ?? 'unnamed'})`).sort();
    throw new Error(`several Deed installs in namespace ${namespace} hold a policy: ${names.join(', ')}; pass --release NAME`);
  }
  const cm = found[0]!;
  const cmName = cm.metadata?.name ?? '';
  const policySource = `ConfigMap ${namespace}/${cmName}`;
  const config = parseConfigText(cm.data![POLICY_ENTRY]!, policySource);
  o.checkPolicy?.(config, policySource);
  if (!o.withKeys) return { config, policySource };

  let secretName = o.attestationSecret;
  if (secretName === undefined) {
    if (!cmName.endsWith(POLICY_SUFFIX)) throw new Error(`${policySource} is not named <name>${POLICY_SUFFIX}, so its key Secret's name is unknown: pass --attestation-secret NAME, or --attestation-key FILE`);
    secretName = `${cmName.slice(0, -POLICY_SUFFIX.length)}${SECRET_SUFFIX}`;
  }
  const secretSource = `Secret ${namespace}/${secretName}`;
  let data: Record<string, string>;
  try {
    const secret = await withRetries(o.timeoutMs, `get secret ${namespace}/${secretName}`, undefined, (c) => core.readNamespacedSecret({ namespace, name: secretName }, c), extras);
    data = secret.data ?? {};
  } catch (err) {
    if (err instanceof KubeError && err.reason === 'NotFound')
      throw new Error(
        `the attestation key ring of ${policySource} is not there: no ${secretSource}; pass --attestation-secret NAME if the install names another (the chart's attestation.existingSecret), or --attestation-key FILE`,
      );
    throw forbidden(err, `the attestation key ring (${secretSource})`, 'pass --attestation-key FILE (or --without-keys, for keys usage)');
  }
  const entry = (id: string): Buffer => {
    const value = data[id];
    if (value === undefined) throw new Error(`${secretSource} has no entry "${id}", a key of the ring ${policySource} names`);
    return attestationKeyOf(Buffer.from(value, 'base64'), `"${id}" of ${secretSource}`);
  };
  // In a cluster each key is the Secret's entry of its id, mounted at /etc/deed/attestation/ID
  // (the pre-ring keyFile: the entry `key`); both installs refuse any other layout.
  const { keys, keyFile, signingKey } = config.attestation;
  let keyRing: KeyRing;
  if (keys !== undefined) keyRing = createKeyRing(keys.map((k) => ({ id: k.id, key: entry(k.id) })), signingKey ?? keys[0]!.id, 'v2');
  else if (keyFile !== undefined) keyRing = singleKeyRing(entry(LEGACY_KEY_ID));
  else throw new Error(`${policySource} names no attestation key (attestation.keys or attestation.keyFile); pass --attestation-key FILE`);
  return { config, keyRing, policySource };
}
