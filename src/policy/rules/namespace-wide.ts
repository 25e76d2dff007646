// What acts on a whole shared namespace is the platform's (docs/security-model.md, "What acts
// on a whole namespace"). A ResourceQuota or a LimitRange is no one environment's object: it
// decides what every environment in its namespace may create (a quota of `pods: 0` shuts the
// others out; a limit range caps or defaults their containers), and the API server's quota
// and limit admission enforce it for everyone. So its writes pass for the platform, system
// controllers and break-glass, and for an environment's principals and managers only in a
// namespace bound to that environment, where no other environment works. Which kinds are such
// is a fact of the kind table (`namespaceWide` in kinds.ts); this rule only reads it.
import type { AdmissionRequest } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { isNamespaceWide } from '../kinds.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { isManager, isPlatform, isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';
import { writeVerb, writtenName } from './written-object.js';

export function namespaceWideWrite(req: AdmissionRequest, namespace: string, requester: Requester, policy: Policy): Finding[] {
  const verb = writeVerb(req);
  if (verb === undefined || !isNamespaceWide(req.resource)) return [];
  if (isTrusted(requester, policy) || isPlatform(requester, policy)) return [];
  const bound = policy.envByBoundNamespace.get(namespace);
  const env = requester.environment;
  if (bound !== undefined && ((env.kind === 'one' && env.id === bound) || isManager(requester, bound, policy))) return [];
  const kind = req.kind.kind;
  const name = writtenName(req) ?? (req.object ?? req.oldObject)?.metadata.generateName ?? '';
  const what = `${kind} ${namespace}/${name}${req.subResource !== undefined ? ` (${req.subResource})` : ''}`;
  return [
    {
      rule: RULES.guardNamespaceWide.id,
      message: `${requester.username} may not ${verb} ${what}: a ${kind} acts on every environment's objects in namespace ${namespace}, so it is the platform's; ask the platform to write it, or use a namespace bound to your environment`,
    },
  ];
}
