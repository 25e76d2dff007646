// guard.shared-input: what a sandbox's pod reads is code it runs. An unstamped Secret,
// ConfigMap, claim or service account (the `default` one, whose image pull secrets go into
// every pod that runs as it; one the policy maps is its environment's) in a namespace bound to no environment is the platform's
// (unowned, so any environment's pod may name it: a shared pull secret, a shared settings file), and an
// environment that could rewrite it would rewrite what another environment's pods run. So
// an environment's principal may neither change nor delete one; principals of no
// environment (the platform's deployers), managers, the platform, system controllers and
// break-glass may. Kinds are the kind table's `podInput` rows.
import type { Finding } from '../../admission/verdict.js';
import { kindRow } from '../kinds.js';
import type { Ownership } from '../ownership.js';
import type { Policy } from '../policy.js';
import { serviceAccountEnvironment, type Requester } from '../requester/identity.js';
import { isPlatform, isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';

export function sharedInputGuard(requester: Requester, owner: Ownership, resource: { group: string; resource: string }, object: { kind: string; namespace: string; name: string }, policy: Policy): Finding[] {
  const row = kindRow(resource);
  if (owner.kind !== 'unowned' || row?.podInput !== true) return [];
  const env = requester.environment;
  if (env.kind !== 'one' || isTrusted(requester, policy) || isPlatform(requester, policy)) return [];
  // A service account the policy maps to an environment (`sandbox-b:*`, its `default` too) is
  // that environment's identity, not a shared input: rules/mapped-account.ts judges its writes.
  if (row.kind === 'ServiceAccount' && serviceAccountEnvironment(object.namespace, object.name, policy) !== undefined) return [];
  return [
    {
      rule: RULES.guardSharedInput.id,
      message: `${object.kind} ${object.namespace}/${object.name} carries no stamps: it is the platform's, and any environment's pods may read it; ${requester.username} acts for "${env.id}" and may not change or delete it (create your own, which is stamped for your environment)`,
    },
  ];
}
