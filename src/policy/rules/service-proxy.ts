// A Service's proxy (services/proxy) reaches whichever pods the Service selects, and a
// selector is labels anyone with the right to write Services chooses: Deed cannot tell at
// admission whose pods it reaches (it reads no Services and no Endpoints), so in the
// review scope only system controllers and break-glass pass. Tenants reach their own pods
// through pods/portforward and pods/proxy, which are judged by the pod (rules/named-pod.ts).
import type { Finding } from '../../admission/verdict.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';

export function serviceProxyGuard(requester: Requester, namespace: string, service: string | undefined, policy: Policy): Finding[] {
  if (isTrusted(requester, policy)) return [];
  const what = service === undefined ? 'a Service' : `Service ${namespace}/${service}`;
  return [
    {
      rule: RULES.guardServiceProxy.id,
      message: `${requester.username} may not proxy to ${what}: a Service's proxy reaches whichever pods it selects; use pods/portforward or pods/proxy on a pod of your environment`,
    },
  ];
}
