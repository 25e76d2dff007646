// A Gateway's `spec.addresses` are the platform's, as a Service's external IPs are
// (external-ips.ts): the gateway controller puts the Gateway on the addresses it asks for.
// Envoy Gateway makes an IPAddress its proxy Service's external IP, which kube-proxy on every
// node serves from every namespace (CVE-2020-8554): beta's Gateway asking for the address
// alpha's sandboxes call takes those calls. Istio binds a Hostname address's Service, and its
// gateway pods, to the Gateway's listeners (manual deployment): beta's Gateway naming alpha's
// gateway Service adds beta's listeners, hostnames and certificates to alpha's gateway pods.
// Which address is whose is not known at admission, so in the review scope only the platform,
// system controllers and break-glass add one. Keeping or removing addresses passes; an
// address the controller assigns (status.addresses) is not asked for.
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { GATEWAY_API } from '../kinds.js';
import { isRec } from '../unstructured.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { addedByNonPlatform } from './platform-additions.js';
import { RULES } from './catalog.js';

/**
 * The addresses a Gateway's spec asks for, as `type:value` (an absent type is IPAddress); one
 * without a value asks the controller to assign any address of its type (reviewer-100 F2), and
 * asks for none; anything else in the list as its JSON.
 */
function addresses(obj: KubeObject | null | undefined): string[] {
  const spec = obj?.spec;
  if (!isRec(spec) || spec.addresses === undefined) return [];
  if (!Array.isArray(spec.addresses)) return [JSON.stringify(spec.addresses)];
  return spec.addresses.flatMap((a) => {
    if (!isRec(a) || !(a.type === undefined || typeof a.type === 'string')) return [JSON.stringify(a)];
    if (a.value === undefined || a.value === '') return [];
    return typeof a.value === 'string' ? [`${a.type ?? 'IPAddress'}:${a.value}`] : [JSON.stringify(a)];
  });
}

export function gatewayAddresses(req: AdmissionRequest, requester: Requester, policy: Policy): Finding[] {
  const added = addedByNonPlatform(req, requester, policy, { group: GATEWAY_API, resource: 'gateways' }, addresses);
  if (added.length === 0) return [];
  return [
    {
      rule: RULES.gatewayAddresses.id,
      path: 'spec.addresses',
      message: `${requester.username} may not set spec.addresses ${JSON.stringify(added.slice(0, 8))}: the gateway controller puts this Gateway on them (Envoy Gateway makes an IP address its proxy Service's external IP, which kube-proxy serves from every namespace, CVE-2020-8554; Istio adds this Gateway's listeners to the gateway pods of a Hostname address's Service); they are the platform's: leave spec.addresses out and let the controller assign one, or ask the platform`,
    },
  ];
}
