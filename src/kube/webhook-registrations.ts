// Webhook configurations in the API server, for `deed dev`: create one, or replace the one of
// the same name (a crashed run's leftover, pointed at a port and CA that are gone), and
// delete it. Every call has a deadline, within which a 429 is tried again after its
// Retry-After (client.ts, withRetries).
import { AdmissionregistrationV1Api, type ConfigurationOptions, type KubeConfig } from '@kubernetes/client-node';
import { resourceOf, type WebhookConfiguration, type WebhookConfigurationKind } from '../install/dev-webhooks.js';
import { KubeError } from './errors.js';
import { withRetries } from './client.js';

export interface WebhookRegistry {
  /** Creates the configuration, or replaces the one of the same name. */
  apply(o: WebhookConfiguration): Promise<'created' | 'replaced'>;
  /** Deletes the configuration; false when there was none. */
  remove(kind: WebhookConfigurationKind, name: string): Promise<boolean>;
}

export function createWebhookRegistry(kc: KubeConfig, timeoutMs: number): WebhookRegistry {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const call = <T>(what: string, fn: (o: ConfigurationOptions) => Promise<T>) => withRetries<T>(timeoutMs, what, undefined, fn);
  // One binding per kind: the generated client has a method per resource.
  const ops = {
    MutatingWebhookConfiguration: {
      create: (body: WebhookConfiguration, o: ConfigurationOptions) => api.createMutatingWebhookConfiguration({ body }, o),
      read: (name: string, o: ConfigurationOptions) => api.readMutatingWebhookConfiguration({ name }, o),
      replace: (name: string, body: WebhookConfiguration, o: ConfigurationOptions) => api.replaceMutatingWebhookConfiguration({ name, body }, o),
      delete: (name: string, o: ConfigurationOptions) => api.deleteMutatingWebhookConfiguration({ name }, o),
    },
    ValidatingWebhookConfiguration: {
      create: (body: WebhookConfiguration, o: ConfigurationOptions) => api.createValidatingWebhookConfiguration({ body }, o),
      read: (name: string, o: ConfigurationOptions) => api.readValidatingWebhookConfiguration({ name }, o),
      replace: (name: string, body: WebhookConfiguration, o: ConfigurationOptions) => api.replaceValidatingWebhookConfiguration({ name, body }, o),
      delete: (name: string, o: ConfigurationOptions) => api.deleteValidatingWebhookConfiguration({ name }, o),
    },
  };

  return {
    async apply(o) {
      const kind = o.kind as WebhookConfigurationKind;
      const name = o.metadata!.name!;
      const what = `${resourceOf(kind)} ${name}`;
      try {
        await call(`create ${what}`, (opts) => ops[kind].create(o, opts));
        return 'created';
      } catch (err) {
        if (!(err instanceof KubeError && err.status === 409)) throw err;
      }
      // Replaced at the version just read: the whole object is ours, so nothing of the leftover stays.
      const current = await call(`get ${what}`, (opts) => ops[kind].read(name, opts));
      await call(`replace ${what}`, (opts) => ops[kind].replace(name, { ...o, metadata: { ...o.metadata, resourceVersion: current.metadata?.resourceVersion } }, opts));
      return 'replaced';
    },

    async remove(kind, name) {
      try {
        await call(`delete ${resourceOf(kind)} ${name}`, (opts) => ops[kind].delete(name, opts));
        return true;
      } catch (err) {
        if (err instanceof KubeError && err.reason === 'NotFound') return false;
        throw err;
      }
    },
  };
}
