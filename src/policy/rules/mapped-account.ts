// guard.mapped-account: a service account the policy maps to an environment
// (`environments[].serviceAccounts`, `sandbox-b:*` included) is that environment's
// identity: its runner's pods run as it, and every token of it acts for the environment.
// The account object itself is a door to that identity: deleting it revokes every token
// bound to it (the runner stops), its image pull secrets go into the pods that run as it,
// and whoever creates it first under the mapped name decides what it holds. So it is
// created, changed and deleted only by that environment's principals and managers, the
// platform (which installs runners' accounts), system controllers and break-glass; not by
// another environment nor a tenant of no environment that holds `edit` in the namespace.
// (The service-account controller, which makes every namespace's `default` account, is in
// kube-system and is not sent to Deed.)
import type { AdmissionRequest } from '../../admission/types.js';
import { quoted, type Finding } from '../../admission/verdict.js';
import type { Policy } from '../policy.js';
import { serviceAccountEnvironment, type Requester } from '../requester/identity.js';
import { actsFor, isPlatform } from '../requester/principals.js';
import { RULES } from './catalog.js';
import { writeVerb, writtenName } from './written-object.js';

export function mappedAccountWrite(req: AdmissionRequest, namespace: string, requester: Requester, policy: Policy): Finding[] {
  const verb = writeVerb(req);
  if (verb === undefined || req.resource.group !== '' || req.resource.resource !== 'serviceaccounts' || req.subResource !== undefined) return [];
  const name = writtenName(req);
  // A generateName'd account has no name to map until the API server gives it one; mapping is by exact name or namespace.
  const environment = serviceAccountEnvironment(namespace, name ?? '', policy);
  if (environment === undefined || actsFor(requester, environment, policy) || isPlatform(requester, policy)) return [];
  return [
    {
      rule: RULES.guardMappedAccount.id,
      // Like every refusal to who does not act for the environment, it names none (docs/security-model.md, "What a refusal tells").
      message: `service account ${namespace}:${name ?? `(generateName ${quoted((req.object ?? req.oldObject)?.metadata.generateName ?? '')})`} is an environment's identity (policy: environments[].serviceAccounts), and ${requester.username} does not act for that environment: only its principals and managers, the platform, system controllers and break-glass may ${verb} it; a deployer that installs runners' accounts belongs in the policy's platform principals`,
    },
  ];
}
