// A Service's external IPs are the platform's (CVE-2020-8554): kube-proxy on every node
// sends traffic for a Service's `spec.externalIPs` to that Service's pods, whichever
// namespace the caller is in, and nothing checks that the Service's writer owns the address.
// In a shared cluster beta's Service naming an address alpha's sandboxes call takes those
// calls. Kubernetes' own answer is the DenyServiceExternalIPs admission plugin (all or
// nothing, cluster-wide); Deed's is narrower: in the review scope only the platform, system
// controllers and break-glass add an address. Keeping or removing addresses passes, so a
// Service the platform gave external IPs stays editable by its environment.
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { isRec } from '../unstructured.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { addedByNonPlatform } from './platform-additions.js';
import { RULES } from './catalog.js';

/** The addresses a Service's spec names; anything but a list of strings reads as the strings it holds. */
function externalIps(obj: KubeObject | null | undefined): string[] {
  const spec = obj?.spec;
  if (!isRec(spec) || !Array.isArray(spec.externalIPs)) return [];
  return spec.externalIPs.filter((ip): ip is string => typeof ip === 'string');
}

export function serviceExternalIps(req: AdmissionRequest, requester: Requester, policy: Policy): Finding[] {
  const added = addedByNonPlatform(req, requester, policy, { group: '', resource: 'services' }, externalIps);
  if (added.length === 0) return [];
  return [
    {
      rule: RULES.serviceExternalIps.id,
      path: 'spec.externalIPs',
      message: `${requester.username} may not set spec.externalIPs ${JSON.stringify(added.slice(0, 8))}: kube-proxy would send traffic for those addresses, from every namespace, to this Service (CVE-2020-8554); they are the platform's: ask the platform, or turn external IPs off with Kubernetes' DenyServiceExternalIPs admission plugin`,
    },
  ];
}
