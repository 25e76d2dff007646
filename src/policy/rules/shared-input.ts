// guard.shared-input: what a sandbox's pod reads is code it runs. An unstamped Secret,
// ConfigMap, claim or service account (the `default` one, whose image pull secrets go into
// every pod that runs as it; one the policy maps is its environment's) in a namespace bound to no environment is the platform's
// (unowned, so any environment's pod may name it: a shared pull secret, a shared settings file), and an
// environment that could rewrite it would rewrite what another environment's pods run. So
// an environment's principal may neither change nor delete one; principals of no
// environment (the platform's deployers), managers, the platform, system controllers and
// break-glass may, but for a service account's image pull secrets, which only the platform
// (and system principals, break-glass) changes: they go into every environment's pods that
// run as it. (A Secret's or ConfigMap's content a live pod reads: rules/live-readers.ts.)
// Those kinds are the kind table's `podInput` rows. Every other unstamped object there is the
// platform's as well: what it runs, serves or routes (its Deployment behind its Service, that
// Service, its Ingress) reaches every environment's sandboxes, and an environment that
// rewrote the image would receive the Service's callers; no environment's principal changes
// or deletes one either (the pull-secret carve-out is a service account's alone), nor
// reaches it through a door that carries no object: a workload's /scale, a pod's eviction,
// an exec, attach, port-forward or proxy into the pod (rules/named-pod.ts, workload/stamps.ts).
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { kindRow } from '../kinds.js';
import type { Ownership } from '../ownership.js';
import type { Policy } from '../policy.js';
import { serviceAccountEnvironment, type Requester } from '../requester/identity.js';
import { isPlatform, isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';

export function sharedInputGuard(
  requester: Requester,
  owner: Ownership,
  resource: { group: string; resource: string },
  object: { kind: string; namespace: string; name: string },
  policy: Policy,
  /** The write's two sides (`after` undefined for a DELETE), or, for a door that carries no object (a /scale, an eviction, a CONNECT), what the request does to it. */
  act: { write: { before: KubeObject; after: KubeObject | undefined } } | { doing: string },
): Finding[] {
  const write = 'write' in act ? act.write : undefined;
  const doing = 'doing' in act ? act.doing : 'change or delete';
  const row = kindRow(resource);
  if (owner.kind !== 'unowned') return [];
  const env = requester.environment;
  if (isTrusted(requester, policy) || isPlatform(requester, policy)) return [];
  // Any other kind: what the platform runs, serves or routes (its Deployment behind its Service,
  // that Service, its Ingress), whose callers include every environment's sandboxes.
  if (row?.podInput !== true)
    return env.kind === 'one'
      ? [
          {
            rule: RULES.guardSharedInput.id,
            message: `${object.kind} ${object.namespace}/${object.name} carries no stamps: it is the platform's, and what it runs, serves or routes reaches every environment; ${requester.username} acts for "${env.id}" and may not ${doing} it (create your own, which is stamped for your environment)`,
          },
        ]
      : [];
  // A service account the policy maps to an environment (`sandbox-b:*`, its `default` too) is
  // that environment's identity, not a shared input: rules/mapped-account.ts judges its writes.
  if (row.kind === 'ServiceAccount' && serviceAccountEnvironment(object.namespace, object.name, policy) !== undefined) return [];
  if (env.kind !== 'one') return row.kind === 'ServiceAccount' && write !== undefined ? pullSecretsChanged(requester, object, write) : [];
  return [
    {
      rule: RULES.guardSharedInput.id,
      message: `${object.kind} ${object.namespace}/${object.name} carries no stamps: it is the platform's, and any environment's pods may read it; ${requester.username} acts for "${env.id}" and may not ${doing} it (create your own, which is stamped for your environment)`,
    },
  ];
}

/**
 * A principal of no environment that is not the platform's (a tenant with `edit`) may change
 * an unstamped service account but for the image pull secrets the API server copies into
 * every pod that runs as it (the `default` one: every pod that names none): another
 * environment's Secret there gets every environment's pods refused (`secret-ref.*`), and one
 * of its own would be used by them. Its other changes are its own (a chart's account).
 */
function pullSecretsChanged(requester: Requester, object: { kind: string; namespace: string; name: string }, write: { before: KubeObject; after: KubeObject | undefined }): Finding[] {
  if (write.after === undefined) return [];
  const pulls = (o: KubeObject) => (o as { imagePullSecrets?: unknown }).imagePullSecrets ?? [];
  if (isDeepStrictEqual(pulls(write.before), pulls(write.after))) return [];
  return [
    {
      rule: RULES.guardSharedInput.id,
      path: 'imagePullSecrets',
      message: `${object.kind} ${object.namespace}/${object.name} carries no stamps: it is the platform's, and the API server copies its image pull secrets into every pod that runs as it, any environment's; ${requester.username} acts for no environment and may not change them (the platform does, a principal in platform)`,
    },
  ];
}
