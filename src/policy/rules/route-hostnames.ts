// route.hostnames: a hostname an environment declares its own (`environments[].hostnames`) is
// named by that environment alone. Where several environments' routes attach to one Gateway
// (the platform's, its listener `*.sandboxes.example.com` taking routes from their
// namespaces), or their Ingresses to one ingress controller, the controller sends a request
// to whichever route matches it best: beta's HTTPRoute naming alpha's hostname with a longer
// path (`/login`) takes alpha's users' logins, and beta's ListenerSet listener for it takes
// the connections, with beta's certificate; beta's Certificate for it has an ACME CA issue
// beta a certificate for alpha's name (cert-manager's solver answers the challenge on the
// shared Gateway); beta's Service annotated for external-dns with alpha's name has alpha's DNS
// record point at beta's address. Which hostnames are whose is not in the cluster, so the
// policy says it; an object of a kind the kind table says names hostnames (`hostnames`, its
// external-dns annotations included) of anyone but the environment, its managers, the
// platform, system controllers and break-glass that names one, or a wildcard over one, is
// refused. A route whose spec names none takes its listeners' hostnames, so it names none only
// on a Gateway of its own environment's. An environment's own routes are not limited to its
// hostnames. An UPDATE that changes the spec is judged whole: a hostname stored before it was
// declared carries no new path or backend, nor a controller; one that changes only metadata but
// the serving annotations (policy/hostnames.ts) is not judged.
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { isWorkloadController } from '../controller-made.js';
import { declaredHostnameOf, hostnamesOf, keepsWhatServes, specHostnamesOf } from '../hostnames.js';
import { kindRow, type KindRow, type LookupResource } from '../kinds.js';
import { objectReferences, readableRow } from '../object-references.js';
import { environmentOfOwnership, ownershipOfFound } from '../ownership.js';
import type { DecisionContext } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { actsFor, isPlatform, isTrusted } from '../requester/principals.js';
import { isRec } from '../unstructured.js';
import { RULES } from './catalog.js';


/** The parents a route takes listeners' hostnames from: Gateways and ListenerSets (a Service parent, in mesh mode, has none). */
const LISTENER_PARENTS: ReadonlySet<string> = new Set(['gateways', 'listenersets', 'xlistenersets']);

/**
 * Whether `req` writes a route that names no hostname and so takes every hostname of the
 * listeners it attaches to (reviewer-101 F2): at CREATE, and at an UPDATE that removes its last
 * or changes its parents. Its parents are read then (reads.ts), to tell whose listeners they are.
 */
export function takesListenerHostnames(req: AdmissionRequest): boolean {
  const row = kindRow(req.resource);
  if (row?.hostnames === undefined || !row.hostnames.paths.includes('spec.hostnames[]') || req.subResource !== undefined) return false;
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return false;
  // The names in its spec alone: external-dns's annotations publish names, but the gateway routes by the spec's.
  if (specHostnamesOf(row.hostnames, req.object).length > 0) return false;
  const parents = (o: KubeObject | null | undefined) => JSON.stringify(isRec(o?.spec) ? o.spec.parentRefs : undefined);
  return req.operation === 'CREATE' || specHostnamesOf(row.hostnames, req.oldObject).length > 0 || parents(req.oldObject) !== parents(req.object);
}

export function routeHostnames(req: AdmissionRequest, requester: Requester, ctx: DecisionContext): Finding[] {
  const { policy } = ctx;
  // A status write too, which keeps the spec but may change the annotations where the kind's status stores them (a
  // Service's external-dns hostname, reviewer-105 F4): judged below as an UPDATE that changes what serves.
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || (req.subResource !== undefined && req.subResource !== 'status')) return [];
  const row = kindRow(req.resource);
  if (row?.hostnames === undefined) return [];
  const declared = policy.config.environments.filter((e) => e.hostnames.length > 0);
  if (declared.length === 0 || isTrusted(requester, policy) || isPlatform(requester, policy)) return [];
  // What a listed operator makes for an object of no environment (the platform's Certificate's
  // Order) passes, as it does outside the review scope; for an environment's, it is judged as
  // that environment's (doors/default.ts judgeMadeForOwner).
  if (requester.environment.kind === 'none' && isWorkloadController(requester, policy)) return [];
  // An UPDATE that changes the spec is judged on every hostname it names: one stored before the policy declared it (or
  // moved from an Ingress's TLS hosts to a rule's host) must not carry new paths or backends (reviewer-101 F5); one that
  // leaves the spec as it was (labels, annotations but the ingress class) names nothing new.
  if (req.operation === 'UPDATE' && keepsWhatServes(req.oldObject, req.object)) return [];
  const others = declared.filter((e) => !actsFor(requester, e.id, policy));
  for (const { host, at, follower } of hostnamesOf(row.hostnames, req.object)) {
    const taken = declaredHostnameOf(host, others);
    if (taken === undefined) continue;
    const { environment: owner, pattern: theirs } = taken;
    return [
      {
        rule: RULES.routeHostnames.id,
        path: at,
        message: `${host} is environment ${owner}'s hostname (${theirs}), and ${requester.username} does not act for it: ${follower}; name a hostname of this environment's own`,
      },
    ];
  }
  return takesListenerHostnames(req) ? listenerHostnames(req, row, requester, ctx) : [];
}

/**
 * A route that names no hostname takes those of the listeners it attaches to: on a Gateway of
 * the platform's a listener for another environment's hostnames (`sectionName` picks it), so
 * its longer paths would take that environment's requests. It may name none only where each
 * Gateway or ListenerSet parent is one of an environment its writer acts for; a parent not
 * there yet is held for the route's environment (reference.live-reader), one that cannot be
 * read is refused.
 */
function listenerHostnames(req: AdmissionRequest, row: KindRow, requester: Requester, ctx: DecisionContext): Finding[] {
  const namespace = req.namespace ?? '';
  for (const ref of objectReferences(req.resource, req.object)) {
    const parent = ref.path.startsWith('spec.parentRefs[') ? readableRow(ref.group, ref.kind) : undefined;
    if (parent === undefined || !LISTENER_PARENTS.has(parent.resource)) continue;
    const at = ref.namespace ?? namespace;
    const found = ctx.lookup.get(parent.resource as LookupResource, at, ref.name);
    if (found.state === 'absent') continue;
    const environment = found.state === 'found' ? environmentOfOwnership(ownershipOfFound(found, parent.kind, at, ctx.policy, ctx.keyRing)) : undefined;
    if (environment !== undefined && actsFor(requester, environment, ctx.policy)) continue;
    const whose = found.state === 'unknown' ? `whose listeners they are cannot be told (${found.reason})` : `its listeners are ${environment === undefined ? "the platform's (or no environment's)" : `environment ${environment}'s`}, and may be for another environment's hostnames`;
    return [
      {
        rule: RULES.routeHostnames.id,
        path: 'spec.hostnames',
        message: `this ${row.kind} names no hostnames, so it takes every hostname of the listeners of ${parent.kind} ${at}/${ref.name} it attaches to (${ref.path}): ${whose}; name the hostnames this route serves, of this environment's own`,
      },
    ];
  }
  return [];
}
