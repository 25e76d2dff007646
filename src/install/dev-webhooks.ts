// The webhook configurations of a Deed that runs outside the cluster: the ones `deed manifests`
// renders (same rules, namespaceSelector, matchConditions, timeouts), with clientConfig a URL
// and the CA instead of the in-cluster Service. `deed dev` registers them under names of their
// own, so they never replace or collide with an installed Deed's; the end-to-end suite
// registers the install's own, pointed at its `deed serve` (test/e2e/suite.ts).
import type { KubernetesObject, V1LabelSelector, V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import type { Config } from '../config/schema.js';
import { excludedNamespaces, NAMESPACE_NAME_LABEL } from '../policy/review-scope.js';
import { mutatingWebhooks, NAME, validatingWebhooks } from './manifests.js';

/** The name of both of `deed dev`'s configurations (one mutating, one validating). */
export const DEV_NAME = `${NAME}-dev`;

export type FailurePolicy = 'Fail' | 'Ignore';
export const FAILURE_POLICIES: readonly FailurePolicy[] = ['Fail', 'Ignore'];

export type WebhookConfiguration = V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration;
export type WebhookConfigurationKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
export const WEBHOOK_CONFIGURATION_KINDS: readonly WebhookConfigurationKind[] = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

/** kubectl's name of the resource: what messages name (`mutatingwebhookconfiguration/deed-dev`). */
export function resourceOf(kind: WebhookConfigurationKind): string {
  return kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfiguration' : 'validatingwebhookconfiguration';
}

/** The base URL the API server dials: `https://HOST:PORT`, an IPv6 address in brackets. */
export function webhookBaseUrl(host: string, port: number): string {
  return `https://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/** A rendered webhook configuration changed only in clientConfig: `baseUrl` + each webhook's Service path, and the CA. */
export function pointedAtUrl<T extends KubernetesObject>(o: T, baseUrl: string, caPem: string): T {
  const copy = structuredClone(o) as T & { webhooks?: Array<{ clientConfig: { service?: { path?: string } } & Record<string, unknown> }> };
  for (const w of copy.webhooks ?? []) {
    const path = w.clientConfig.service?.path;
    if (path === undefined) throw new Error(`${o.kind} ${o.metadata?.name}: webhook has no Service path to point at a URL`);
    w.clientConfig = { url: `${baseUrl}${path}`, caBundle: Buffer.from(caPem).toString('base64') };
  }
  return copy;
}

export interface DevWebhookOptions {
  /** Deed's own namespace, excluded from the review scope as in the install. */
  namespace: string;
  config: Config;
  /** `https://HOST:PORT`, what the API server dials (webhookBaseUrl). */
  baseUrl: string;
  /** The PEM CA that signed the serving certificate. */
  caPem: string;
  failurePolicy: FailurePolicy;
  /** When not empty, only these opted-in namespaces are sent to this Deed. */
  onlyNamespaces?: readonly string[];
}

/** `deed dev`'s two configurations, in the order they are registered (mutating first, as the API server calls them). */
export function devWebhookConfigurations(opts: DevWebhookOptions): [V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration] {
  const only = [...new Set(opts.onlyNamespaces ?? [])];
  for (const ns of only) {
    // The install's selector never matches these: a dev loop there would review nothing.
    if (excludedNamespaces(opts.namespace).includes(ns)) throw new Error(`--only-namespace ${ns}: never reviewed (kube-system and Deed's own namespace, --deed-namespace, are excluded)`);
  }
  const controllers = opts.config.workloadControllers.users;
  const adapt = <T extends WebhookConfiguration>(o: T): T => {
    const copy = pointedAtUrl(o, opts.baseUrl, opts.caPem);
    copy.metadata = { ...copy.metadata, name: DEV_NAME, labels: { ...copy.metadata?.labels, 'app.kubernetes.io/instance': DEV_NAME } };
    for (const w of copy.webhooks ?? []) {
      w.failurePolicy = opts.failurePolicy;
      if (only.length > 0) w.namespaceSelector = narrowed(w.namespaceSelector, only);
    }
    return copy;
  };
  return [adapt(mutatingWebhooks(opts.namespace, undefined, controllers, opts.config.labelPrefix)), adapt(validatingWebhooks(opts.namespace, undefined, controllers))];
}

/** The install's selector and, besides, a namespace name among `only` (a label the API server sets; nobody can forge it). */
function narrowed(selector: V1LabelSelector | undefined, only: string[]): V1LabelSelector {
  return { ...selector, matchExpressions: [...(selector?.matchExpressions ?? []), { key: NAMESPACE_NAME_LABEL, operator: 'In', values: only }] };
}
