// route.hostnames: a hostname an environment declares its own (`environments[].hostnames`) is
// named by that environment alone. Where several environments' routes attach to one Gateway
// (the platform's, its listener `*.sandboxes.example.com` taking routes from their
// namespaces), or their Ingresses to one ingress controller, the controller sends a request
// to whichever route matches it best: beta's HTTPRoute naming alpha's hostname with a longer
// path (`/login`) takes alpha's users' logins, and beta's ListenerSet listener for it takes
// the connections, with beta's certificate; beta's Certificate for it has an ACME CA issue
// beta a certificate for alpha's name (cert-manager's solver answers the challenge on the
// shared Gateway). Which hostnames are whose is not in the cluster,
// so the policy says it; a route, an Ingress or a listener of anyone but the environment, its
// managers, the platform, system controllers and break-glass that names one, or a wildcard
// over one, is refused. An environment's own routes are not limited to its hostnames, and a
// route that names none (it takes its listener's) ranks below any that names one. What an
// UPDATE keeps is not judged again.
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { hostnamesOverlap } from '../hostnames.js';
import { kindRow } from '../kinds.js';
import type { Policy } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { actsFor, isPlatform, isTrusted } from '../requester/principals.js';
import { valuesAt } from '../unstructured.js';
import { RULES } from './catalog.js';

/** The hostnames `obj` names at `paths` (the kind table's `hostnames`), each with where it stands; what is not a string routes nothing. */
function hostnamesOf(paths: readonly string[], obj: KubeObject | null | undefined): Array<{ host: string; at: string }> {
  return paths.flatMap((path) => valuesAt(obj, path).flatMap(({ value, at }) => (typeof value === 'string' && value !== '' ? [{ host: value, at }] : [])));
}

export function routeHostnames(req: AdmissionRequest, requester: Requester, policy: Policy): Finding[] {
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || req.subResource !== undefined) return [];
  const row = kindRow(req.resource);
  if (row?.hostnames === undefined) return [];
  const declared = policy.config.environments.filter((e) => e.hostnames.length > 0);
  if (declared.length === 0 || isTrusted(requester, policy) || isPlatform(requester, policy)) return [];
  const before = new Set(req.operation === 'UPDATE' ? hostnamesOf(row.hostnames.paths, req.oldObject).map((h) => h.host.toLowerCase()) : []);
  for (const { host, at } of hostnamesOf(row.hostnames.paths, req.object)) {
    if (before.has(host.toLowerCase())) continue;
    const owner = declared.find((e) => !actsFor(requester, e.id, policy) && e.hostnames.some((h) => hostnamesOverlap(host, h)));
    if (owner === undefined) continue;
    const theirs = owner.hostnames.find((h) => hostnamesOverlap(host, h))!;
    return [
      {
        rule: RULES.routeHostnames.id,
        path: at,
        message: `${host} is environment ${owner.id}'s hostname (${theirs}), and ${requester.username} does not act for it: ${row.hostnames.follower}; name a hostname of this environment's own`,
      },
    ];
  }
  return [];
}
