// reference.live-reader: an object created under a name a live pod reads is handed to that
// pod by the kubelet (a volume is refreshed from it, `env` is read again when a container
// restarts, a pod waiting for it starts with it); a claim created under the name that a
// claim not yet provisioned clones is what the provisioner copies into it (pod/pod-reads.ts,
// claimReadsOf). Their names are judged when they are written, but nothing holds what they
// name after: its writer may delete it, and another create one under the name. So the
// CREATE of a Secret, ConfigMap, claim, ResourceClaim or ResourceClaimTemplate (the
// resourceclaim controller makes a pod's claim from whatever template stands under the name
// the pod gives) is refused while a reader of the
// name is one the object's writer may not reach: for an environment, a pod or claim of
// another environment (or of none), which would read its object; for a principal of no
// environment (a tenant, a manager), one of an environment it does not act for, whose input
// it would write. The platform's principals, system controllers and break-glass are not
// judged (reference-scope.ts).
// An unstamped Secret or ConfigMap (the platform's, any environment's pods may read it) is
// written in place too: an UPDATE that changes what it holds by a principal of no
// environment is judged as its CREATE would be, since the kubelet hands the live pods that
// read it the new content as it would a new object's (an environment's principal may not
// change one at all: guard.shared-input).
// An Ingress reads the Secrets it names for TLS the same way (the kind table's `readsLive`
// references, cached beside the pods): the ingress controller serves whatever Secret stands
// under the name, so a Secret's CREATE is judged against the Ingresses that name it too; and
// a Gateway or ListenerSet its listeners' certificates, a Gateway the ConfigMap its proxy is
// built from (Istio's parametersRef) and its client CAs, a BackendTLSPolicy the CA ConfigMaps
// it verifies its Service by.
// So too for what a live object of another kind names and is followed by (referrers.ts, the
// kind table's `followsByName`): an EndpointSlice or an Endpoints routes the Service of its
// name, an Ingress publishes the Services it names, an HPA scales the workload it names, each
// whoever created that object. So the CREATE of a Service, Deployment, StatefulSet,
// ReplicaSet or ReplicationController is refused while such a referrer of the name is one its
// writer may not reach, with the same reach as a pod's. An EndpointSlice or Endpoints the
// controllers made for a Service of the name is not skipped: once that Service is deleted
// they are too, and a CREATE in between is refused (fail closed) for no longer than that.
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { ownershipOfFound, type Ownership } from '../ownership.js';
import { POD_READS } from '../pod/pod-reads.js';
import type { Reach } from '../pod/reference-owner.js';
import type { DecisionContext, Policy, Reader, ReaderKind } from '../policy.js';
import { admittedAcross, followsAcross, isReferredTarget, referringKinds } from '../referrers.js';
import { kindRow, kindRows, type LookupResource } from '../kinds.js';
import { readableRow } from '../object-references.js';
import { actsFor, isPlatform, isTrusted } from '../requester/principals.js';
import { isWorkloadController } from '../controller-made.js';
import type { Requester } from '../requester/identity.js';
import { RULES } from './catalog.js';

/**
 * The kind a pod reads by name that `req` creates, and the name, when judged: the CREATE of
 * the object itself (of the core kinds, or of resource.k8s.io's ResourceClaim and ResourceClaimTemplate: a custom
 * resource may share a plural), not a well-known ConfigMap. The name is the object's: under
 * `generateName` the request's is empty, and the object's is empty too before the API server
 * names it (at the mutating webhook); a name it makes up is no pod's to read.
 */
function judged(req: AdmissionRequest, policy: Policy | undefined): { row: (typeof POD_READS)[number]; name: string } | undefined {
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || req.subResource !== undefined) return undefined;
  const name = req.object?.metadata?.name || req.name;
  if (typeof name !== 'string' || name === '') return undefined;
  // The kind the kind table knows under the request's group and plural: a custom resource sharing a plural is none of these.
  const kind = kindRow(req.resource)?.kind;
  const row = POD_READS.find((r) => r.resource === req.resource.resource && r.kind === kind);
  if (row === undefined) return undefined;
  // An UPDATE writes a pod's input where it changes a Secret's or a ConfigMap's content (a claim's is written by the pods that mount it).
  if (req.operation === 'UPDATE' && ((row.field !== 'secrets' && row.field !== 'configMaps') || !changesContent(req.oldObject, req.object))) return undefined;
  // Every pod names these, unjudged; no environment creates one (configmap.well-known).
  if (row.field === 'configMaps' && policy?.config.template.wellKnownConfigMaps.includes(name) === true) return undefined;
  return { row, name };
}

/** Whether an UPDATE changes what a Secret or ConfigMap holds (`stringData` is written into `data` before admission). */
function changesContent(before: KubeObject | null | undefined, after: KubeObject | null | undefined): boolean {
  const content = (o: KubeObject | null | undefined) => [o?.data, o?.binaryData, o?.stringData];
  return !isDeepStrictEqual(content(before), content(after));
}

/**
 * What the live pods read that `req` creates or rewrites: the read plan asks for its readers
 * (reads.ts). `requester`, when the plan knows it: an UPDATE is judged for a principal of
 * no environment only (liveReaderWriteFindings).
 */
export function liveReaderRead(req: AdmissionRequest, policy: Policy | undefined, requester?: Requester): { resource: LookupResource; name: string; across?: string[] } | undefined {
  const target = referredTarget(req);
  // `across` only where a kind names it from another namespace (a Gateway, a ListenerSet): a Service's key is as it was.
  if (target !== undefined) return { resource: target.resource, name: target.name, ...(referringKinds(target.resource).some((r) => followsAcross(r, target.resource)) ? { across: target.across } : {}) };
  if (req.operation === 'UPDATE' && requester !== undefined && policy !== undefined && !rewritesFor(requester, policy)) return undefined;
  const it = judged(req, policy);
  return it === undefined ? undefined : { resource: it.row.resource, name: it.name };
}

/** Whose rewrite of an unstamped input is judged: a principal of no environment's, not the platform's, a system controller's or break-glass'. */
function rewritesFor(requester: Requester, policy: Policy): boolean {
  return requester.environment.kind === 'none' && !isTrusted(requester, policy) && !isPlatform(requester, policy);
}

/**
 * The findings of an UPDATE of a stored Secret or ConfigMap whose `owner` it is: one of no
 * environment's stamps (unowned: the platform's, anyone's pods may read it) rewritten by a
 * principal of no environment is judged against the live pods that read it, as its CREATE.
 */
export function liveReaderWriteFindings(req: AdmissionRequest, namespace: string, requester: Requester, owner: Ownership, ctx: DecisionContext): Finding[] {
  if (req.operation !== 'UPDATE' || owner.kind !== 'unowned' || !rewritesFor(requester, ctx.policy)) return [];
  return liveReaderFindings(req, namespace, { requester, environment: undefined }, ctx);
}

/** What `req` creates, or widens, that live referrers name: the read plan asks for its referrers. */
interface ReferredTarget {
  resource: LookupResource;
  name: string;
  /** The referring kinds (resources) read from every namespace (referrers.ts, admittedAcross); the others in the object's own. */
  across: string[];
  /** An UPDATE that widens `across` (a Gateway's listeners taking routes from every namespace): only what it newly admits is judged. */
  widens?: true;
}

/**
 * The kind that a live referrer names that `req` creates, and the name, when judged: the
 * CREATE of the object itself (a Service, a workload: referrers.ts), of the kind table's row
 * under the request's group (a custom resource may share a plural); named as judged() names.
 * And the UPDATE of a Gateway or ListenerSet whose listeners (or allowed ListenerSets) come to
 * admit another kind from every namespace: the routes elsewhere that name it attach as it is
 * stored, as at a CREATE that admitted them.
 */
function referredTarget(req: AdmissionRequest): ReferredTarget | undefined {
  if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || req.subResource !== undefined || !isReferredTarget(req.resource.resource) || kindRow(req.resource) === undefined) return undefined;
  const name = req.object?.metadata?.name || req.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const across = admittedAcross(req.resource.resource, req.object);
  if (req.operation === 'CREATE') return { resource: req.resource.resource, name, across };
  const before = admittedAcross(req.resource.resource, req.oldObject);
  const widened = across.filter((r) => !before.includes(r));
  return widened.length === 0 ? undefined : { resource: req.resource.resource, name, across: widened, widens: true };
}

/**
 * The findings of an UPDATE by `reach` of a Gateway or ListenerSet that admits from every
 * namespace a kind it did not (referredTarget): each live referrer of that kind in another
 * namespace must be one whose environment the writer may reach, as at a CREATE.
 */
export function widenedReferrerFindings(req: AdmissionRequest, namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const target = req.operation === 'UPDATE' ? referredTarget(req) : undefined;
  return target === undefined ? [] : referrerFindings(req, target, namespace, reach, ctx);
}

/** The findings of a CREATE (or a widening UPDATE) by `reach`: each live referrer that names it, where the object admits it, must be one whose environment the object's writer may reach. */
function referrerFindings(req: AdmissionRequest, target: ReferredTarget, namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const rule = RULES.referenceLiveReader.id;
  const kind = kindRow(req.resource)?.kind ?? target.resource;
  const what = `${kind} ${target.name}`;
  const whose = reach.environment === undefined ? 'of an environment this requester does not act for' : 'of another environment (or of none)';
  const path = target.widens === true ? 'spec' : 'metadata.name';
  const referrers = ctx.lookup.readers(target.resource, namespace, target.name);
  if (referrers.state === 'unknown') {
    const kinds = referringKinds(target.resource).map((r) => r.kind).join(', ');
    return [{ rule, path, message: `cannot tell whether an object ${whose} in namespace ${namespace}${target.across.length > 0 ? ' or another' : ''} (${kinds}) names ${what}: ${referrers.reason}` }];
  }
  // A referrer in another namespace of a kind that names a parent from any namespace (a route) counts where the
  // object admits its kind from there (`deed review` gives every one it was given); one a ReferenceGrant admits counts.
  const rows = referringKinds(target.resource);
  const admitted = (r: Reader) => {
    if (r.namespace === undefined || r.namespace === namespace) return target.widens !== true;
    const row = rows.find((k) => k.kind === r.kind);
    return row === undefined || !followsAcross(row, target.resource) ? target.widens !== true : target.across.includes(row.resource);
  };
  for (const referrer of referrers.readers) {
    if (!admitted(referrer) || mayReach(referrer, namespace, reach, ctx)) continue;
    const where = referrer.reference === undefined ? '' : ` (${placeOf(referrer.reference.path)})`;
    if (target.widens === true)
      return [
        {
          rule,
          path,
          message: `${referrer.kind} ${referrer.namespace ?? namespace}/${referrer.name} ${whose} names ${what}${where}, and once this one admits its namespace ${referrer.reference?.follower ?? 'it is followed'}: keep the listeners' allowedRoutes (and allowedListeners) to this namespace (namespaces.from: Same), or widen them once that ${referrer.kind} is deleted`,
        },
      ];
    const follows = referrer.reference === undefined ? '' : `, and once this one stands ${referrer.reference.follower}`;
    return [
      {
        rule,
        path,
        message: `${referrer.kind} ${referrer.namespace ?? namespace}/${referrer.name} ${whose} names ${what}${where}${follows}: choose a name of this run's own, or create it once that ${referrer.kind} is deleted`,
      },
    ];
  }
  return [];
}

/** Where a reference stands, as a person reads it: a label by its key, a field by its path. */
function placeOf(path: string): string {
  const label = /^metadata\.labels\["(.*)"\]$/.exec(path);
  return label !== null ? `label ${label[1]}` : path === 'metadata.name' ? 'its own name' : path;
}

/** Whether the writer (`reach`) may create what `reader` reads or names: it is the writer's environment's, or, for a principal of no environment, one it acts for. */
function mayReach(reader: Reader, namespace: string, reach: Reach, ctx: DecisionContext): boolean {
  // Whose it is in its own namespace (bound to an environment, or not).
  const owner = ownershipOfFound(reader.found, reader.kind, reader.namespace ?? namespace, ctx.policy, ctx.keyRing);
  if (owner.kind === 'unverifiable') return false;
  const of = owner.kind === 'unowned' ? undefined : owner.environment;
  if (of === reach.environment) return true;
  return of !== undefined && reach.environment === undefined && actsFor(reach.requester, of, ctx.policy);
}

/** The findings of a CREATE by `reach`: each live pod that reads the name must be one whose environment the object's writer may reach. */
export function liveReaderFindings(req: AdmissionRequest, namespace: string, reach: Reach, ctx: DecisionContext): Finding[] {
  const target = referredTarget(req);
  if (target !== undefined) return referrerFindings(req, target, namespace, reach, ctx);
  const it = judged(req, ctx.policy);
  if (it === undefined) return [];
  const { row, name } = it;
  const { environment } = reach;
  const rule = RULES.referenceLiveReader.id;
  const what = `${row.kind} ${name}`;
  const readers = ctx.lookup.readers(row.resource, namespace, name);
  if (readers.state === 'unknown') return [{ rule, path: req.operation === 'UPDATE' ? 'data' : 'metadata.name', message: `cannot tell whether a live pod of another environment reads ${what} in namespace ${namespace}: ${readers.reason}` }];
  for (const reader of readers.readers) {
    const owner = ownershipOfFound(reader.found, reader.kind, namespace, ctx.policy, ctx.keyRing);
    if (owner.kind === 'unverifiable') return foreign(rule, namespace, what, environment, reader.kind, row, req.operation === 'UPDATE');
    const of = owner.kind === 'unowned' ? undefined : owner.environment;
    if (of === environment) continue;
    // A principal of no environment writes for the pods of those it acts for (a manager's); an environment's claim
    // may be mounted by the pods of environments that list it in `claimsFrom` (as at their binding).
    if (of !== undefined && environment === undefined && actsFor(reach.requester, of, ctx.policy)) continue;
    if (of !== undefined && environment !== undefined && row.field === 'claims' && ctx.policy.claimsFrom.get(of)?.has(environment) === true) continue;
    const refused = foreign(rule, namespace, what, environment, reader.kind, row, req.operation === 'UPDATE');
    return row.field === 'secrets' ? byOperator(refused, reach, ctx) : refused;
  }
  return [];
}

/**
 * A listed operator's refusal of a Secret says how it becomes the reader's environment's: what
 * it makes is that environment's only under a controlling owner reference to a resource of it
 * (controller-made.ts), which cert-manager writes only when asked to.
 */
function byOperator(findings: Finding[], reach: Reach, ctx: DecisionContext): Finding[] {
  if (reach.environment !== undefined || !isWorkloadController(reach.requester, ctx.policy)) return findings;
  const how = `; ${reach.requester.username} made it for no environment: a listed operator's object is an environment's when its controlling owner reference names that environment's resource (cert-manager writes one, to the environment's Certificate or the one its ingress-shim or gateway-shim makes for the environment's Ingress or Gateway, when run with --enable-certificate-owner-ref)`;
  return findings.map((f) => ({ ...f, message: f.message + how }));
}

/**
 * Where a reader of `kind` names `resource`'s objects by a kind-table reference it is read by
 * (`readsLive`: an Ingress's TLS Secrets), and who follows it; undefined for a pod or a claim,
 * which read by their specs. The index keeps names, not where they stood: a kind that reads
 * `resource` by several references (a Gateway's listener and backend client certificates) is
 * said to name it by any of them.
 */
function namingReference(kind: ReaderKind, resource: LookupResource): { path: string; follower: string } | undefined {
  const row = kindRows().find((r) => r.kind === kind && r.readsByName?.includes(resource) === true);
  const refs = (row?.references ?? []).filter((r) => r.readsLive === true && r.kind !== undefined && readableRow(r.kind.group, r.kind.kind)?.resource === resource);
  if (refs.length === 0) return undefined;
  const paths = refs.map((r) => r.path);
  const followers = [...new Set(refs.map((r) => r.follower))];
  return { path: paths.length === 1 ? paths[0]! : `${paths.slice(0, -1).join(', ')} or ${paths.at(-1)!}`, follower: followers.join(', or ') };
}

/** Which pod or claim reads the name, and whose, is not told: the requester acts for none of them. */
function foreign(rule: string, namespace: string, what: string, environment: string | undefined, by: ReaderKind, row: (typeof POD_READS)[number], rewrite: boolean): Finding[] {
  const whose = environment === undefined ? 'of an environment this requester does not act for' : 'of another environment (or of none)';
  const named = namingReference(by, row.resource);
  const template = row.field === 'resourceClaimTemplates';
  if (named !== undefined)
    return [
      rewrite
        ? { rule, path: 'data', message: `a live ${by} ${whose} in namespace ${namespace} names ${what} (${named.path}), and ${named.follower}: its content is changed by the platform (a principal in platform) or that environment's manager, or once no such ${by} is left` }
        : { rule, path: 'metadata.name', message: `a live ${by} ${whose} in namespace ${namespace} names ${what} (${named.path}), and once this one stands ${named.follower}: choose a name of this run's own, or create it once no such ${by} is left` },
    ];
  if (by === 'PersistentVolumeClaim')
    return [
      {
        rule,
        path: 'metadata.name',
        message: `a claim ${whose} in namespace ${namespace} clones ${what} and is not provisioned yet, so its provisioner would copy this one: choose a name of this run's own, or create it once that claim is provisioned or deleted`,
      },
    ];
  return [
    rewrite
      ? {
          rule,
          path: 'data',
          message: `a live pod ${whose} in namespace ${namespace} reads ${what}, and the kubelet would hand it what this write puts there: its content is changed by the platform (a principal in platform) or that environment's manager, or once no such pod is left`,
        }
      : {
          rule,
          path: 'metadata.name',
          message: `a live pod ${whose} in namespace ${namespace} reads ${what} by name, and ${template ? "the resourceclaim controller would make that pod's claim from this one (its devices, their configuration, its metadata)" : 'the kubelet would hand it this one'}: choose a name of this run's own, or create it once no such pod is left`,
        },
  ];
}
