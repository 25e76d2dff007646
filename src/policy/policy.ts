// A policy compiled once from the validated configuration: lookup tables instead of
// scans on the hot path, and the stamp vocabulary for the configured prefix.
import type { Config } from '../config/schema.js';
import type { KeyRing } from './stamps/key-ring.js';
import { stampKeys, type StampKeys } from './stamps/keys.js';
import type { LookupResource } from './kinds.js';
import type { ReviewScope } from './review-scope.js';

export interface Policy {
  config: Config;
  keys: StampKeys;
  envByServiceAccount: Map<string, string>;
  envByNamespaceWildcard: Map<string, string>;
  envsByGroup: Map<string, string[]>;
  breakGlassUsers: Set<string>;
  breakGlassGroups: Set<string>;
  systemUsers: Set<string>;
  systemGroups: Set<string>;
  /** The workload controllers whose creations are judged as their owner's (controller-made.ts). */
  controllerUsers: Set<string>;
  /** Environment id to the other environments whose stamped claims its pods may mount. */
  claimsFrom: Map<string, Set<string>>;
  /** Namespace -> the environment it is bound to. */
  envByBoundNamespace: Map<string, string>;
  /** Manager user or group -> the environments it manages. */
  managedByUser: Map<string, string[]>;
  managedByGroup: Map<string, string[]>;
}

export function compilePolicy(config: Config): Policy {
  const envByServiceAccount = new Map<string, string>();
  const envByNamespaceWildcard = new Map<string, string>();
  const envsByGroup = new Map<string, string[]>();
  const envByBoundNamespace = new Map<string, string>();
  const managedByUser = new Map<string, string[]>();
  const managedByGroup = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, key: string, id: string) => map.set(key, [...(map.get(key) ?? []), id]);
  for (const env of config.environments) {
    for (const ns of env.namespaces) envByBoundNamespace.set(ns, env.id);
    for (const user of env.managers.users) add(managedByUser, user, env.id);
    for (const group of env.managers.groups) add(managedByGroup, group, env.id);
    for (const sa of env.serviceAccounts) {
      const [ns, name] = sa.split(':') as [string, string];
      if (name === '*') envByNamespaceWildcard.set(ns, env.id);
      else envByServiceAccount.set(sa, env.id);
    }
    for (const group of env.groups) add(envsByGroup, group, env.id);
  }
  return {
    config,
    keys: stampKeys(config.labelPrefix),
    envByServiceAccount,
    envByNamespaceWildcard,
    envsByGroup,
    breakGlassUsers: new Set(config.breakGlass.users),
    breakGlassGroups: new Set(config.breakGlass.groups),
    systemUsers: new Set(config.systemPrincipals.users),
    systemGroups: new Set(config.systemPrincipals.groups),
    controllerUsers: new Set(config.workloadControllers.users),
    claimsFrom: new Map(config.environments.map((env) => [env.id, new Set(env.claimsFrom)])),
    envByBoundNamespace,
    managedByUser,
    managedByGroup,
  };
}

/** An owner reference with `controller: true`, as much of it as says which object it names. */
export interface ControllerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/** What a pod reads by name, in its namespace (pod/pod-reads.ts). */
export interface PodReads {
  claims: string[];
  secrets: string[];
  configMaps: string[];
  resourceClaims: string[];
  /** The ResourceClaimTemplates it names: the resourceclaim controller makes its claims from whatever stands under those names. */
  resourceClaimTemplates: string[];
}

export type Lookup =
  | {
      state: 'found';
      metadata: { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
      /** Pods: spec.serviceAccountName. */
      serviceAccountName?: string;
      /** Pods: what the pod reads by name (pod/pod-reads.ts); judged again at its binding. */
      reads?: PodReads;
      /** VolumeSnapshots: spec.source.persistentVolumeClaimName. */
      sourceClaim?: string;
      /**
       * metadata.creationTimestamp, of what is read live only (a snapshot, and a snapshot's
       * source claim, read `fresh`): the cache keeps no creation time.
       */
      created?: string;
      /** Its controlling owner reference (`controller: true`), if it has one: whose a controller-made object is follows it. */
      controller?: ControllerRef;
      /**
       * Deed's lookup cache verified the attestation of these stamps with this key ring, as
       * this kind in this namespace, when the object reached it, and kept neither the
       * attestation nor the nonce (src/kube/lookup-facts.ts). Never set from anything read live.
       */
      stampsVerified?: true;
    }
  | { state: 'absent' }
  | { state: 'unknown'; reason: string };

/**
 * What reads an object by name in a namespace (pod/pod-reads.ts), whether or not it exists:
 * the live pods, to which the kubelet hands a Secret, ConfigMap, claim or ResourceClaim
 * created under the name, and the claims not yet provisioned that clone a claim of that name,
 * into which the provisioner copies it (rules/live-readers.ts); and for a Service or a
 * workload, the live objects that name it and are followed there (referrers.ts: an
 * EndpointSlice, an Endpoints, an Ingress, a HorizontalPodAutoscaler).
 */
export type Readers = { state: 'known'; readers: ReadonlyArray<Reader> } | { state: 'unknown'; reason: string };
export type Reader = {
  kind: ReaderKind;
  name: string;
  found: Extract<Lookup, { state: 'found' }>;
  /** Where a referrer (the kind table's `followsByName`: an EndpointSlice, an HPA) names the object, and who follows it (referrers.ts); absent for a pod or a claim. */
  reference?: { path: string; follower: string };
  /** Where a referrer stands when not in the named object's namespace (a route in another namespace naming its parent Gateway). */
  namespace?: string;
};
/** A kind whose objects read a name (the kind table's `readsByName`, pod/pod-reads.ts). */
export type ReaderKind = string;

export interface ObjectLookup {
  /** Synchronous: answered from facts gathered before the decision (a cache, or the files given to `deed review`). */
  get(resource: LookupResource, namespace: string, name: string): Lookup;
  /** What reads `resource` `name` in `namespace` (live pods, claims not yet provisioned), as gathered by a key with `readers` (reads.ts). */
  readers(resource: LookupResource, namespace: string, name: string): Readers;
}

/** Everything a decision may depend on besides the request: no I/O behind any of it. */
export interface DecisionContext {
  policy: Policy;
  /** The attestation keys: one signs, all verify. */
  keyRing: KeyRing;
  /** Milliseconds since the epoch. */
  now: () => number;
  randomBytes: (size: number) => Buffer;
  lookup: ObjectLookup;
  /** Which namespaces Deed reviews (from a watch of the namespaces, kept by the server); nothing is decided outside them. */
  scope: ReviewScope;
}
