// The kind table: one row per kind Deed knows, with every fact about it that some part of
// Deed needs (docs/development.md, "The kind table"). The doors, both webhooks' rules,
// every RBAC rule the install renders (the webhook's, the reaper's, the audit's, the Helm
// chart's generated copy), the reaper's and the audit's lists, the metrics' kind label, the
// review builder and the test fake are derived from these rows; test/kind-table.test.ts
// fails when a list of kinds is kept anywhere else. Adding a kind is one row here, plus its
// API client binding in src/kube/client.ts when the reaper or the audit lists it.
import type { GroupVersionResource } from '../admission/types.js';

export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';
export const GATEWAY_API = 'gateway.networking.k8s.io';
export const CERT_MANAGER = 'cert-manager.io';
/** cert-manager's ACME kinds. */
export const ACME = 'acme.cert-manager.io';
export const EXTERNAL_SECRETS = 'external-secrets.io';
/** Contour's HTTPProxy. */
export const CONTOUR = 'projectcontour.io';
/** Istio's routing kinds. */
export const ISTIO_NETWORKING = 'networking.istio.io';
/** external-dns's DNSEndpoint. */
export const EXTERNAL_DNS = 'externaldns.k8s.io';

/** How a request to a resource (or one of its subresources) reaches the validating webhook. */
export type DoorKind =
  /** The object itself, or a subresource whose review carries the object (status, ephemeralcontainers, resize). */
  | 'object'
  /** A request that names a pod but carries something else: an Eviction, a Binding. */
  | 'pod-by-name'
  /** A kind whose controller makes pods or claims from its templates, for whoever wrote them. */
  | 'workload'
  /** A TokenRequest: a token of the named service account, handed to the requester. */
  | 'token-request'
  /** A VolumeSnapshot: a copy of the claim it names, which a new claim can restore. */
  | 'snapshot'
  /** A CONNECT into a pod's containers (exec, attach, port-forward, proxy): judged by the pod it names. */
  | 'connect'
  /** A CONNECT through a Service's proxy: it reaches whichever pods the Service selects. */
  | 'service-proxy'
  /** A workload's /scale: the review carries a Scale that names the workload (and holds none of its stamps). */
  | 'workload-scale';

/** What Deed writes on a kind it stamps at CREATE: labels, the owner annotation, the nonce and the attestation always; these vary. */
export interface StampFacts {
  /** Owner reference to the runner pod (same namespace only). PVCs never: a pod loss must not collect resumable work. */
  ownerReference: boolean;
  /** spec.activeDeadlineSeconds. */
  activeDeadline: boolean;
  /** `<prefix>/expires-at`. */
  expiresAt: boolean;
}

/** What a kind's objects are stamped with at CREATE, by kind name: a stamped row's, or the default row's. */
export interface StampRow extends StampFacts {
  kind: string;
}

/** Where a kind that makes pods (or claims) keeps its templates. */
export interface TemplateFacts {
  /** Field paths of its PodTemplateSpecs ({metadata, spec}). */
  pods: readonly string[];
  /** Field paths of its lists of PersistentVolumeClaim templates. */
  claims: readonly string[];
  /** The kind, not the platform, decides its pods' restartPolicy (a Job's are Never or OnFailure). */
  ownsRestartPolicy: boolean;
}

/**
 * Where a kind keeps the selector of the pods it acts on (docs/security-model.md,
 * "Selectors"): a workload adopts and deletes the pods it selects, a PodDisruptionBudget
 * holds up their evictions, a Service routes traffic to them, a NetworkPolicy isolates or
 * opens them. The selector-scope rule (selector-scope.ts) keeps it within the
 * environments its writer acts for.
 */
export interface PodSelectorFacts {
  /** Field path of the selector. */
  path: string;
  /** `label-selector`: matchLabels and matchExpressions; `map`: a plain map of labels, which can require a label but never exclude one. */
  form: 'label-selector' | 'map';
  /**
   * What the selector selects when unset (absent, or for a map, empty): `none` (a
   * PodDisruptionBudget's null selector, a Service without one, whose endpoints someone
   * else manages), or `all` (a NetworkPolicy's podSelector; a workload's, which the API
   * server requires or defaults from the template).
   */
  unset: 'none' | 'all';
  /** The selector is the writer's only when this boolean field is true (a Job's manualSelector; otherwise the API server writes one of the Job's own uid). */
  onlyWhen?: string;
  /**
   * The selector acts on the pods it selects without owning them (a NetworkPolicy opens or
   * isolates them, a PodDisruptionBudget holds up their evictions): a tenant's excludes
   * runner pods (selector-scope.ts). A workload's adopts what it selects, and the adoption of
   * a runner is judged apart (`guard.adoption`).
   */
  excludesRunners?: true;
  /**
   * What the platform writes (a platform, break-glass or system principal) selects as
   * written, every environment's pods included: its default-deny (`{}`) isolates every pod
   * of the namespace. A pod gains from a NetworkPolicy that selects it only isolation and the
   * traffic its rules allow, which an environment may allow its own pods anyway. Elsewhere an
   * environment's pod that joined the platform's selector would take its traffic (a Service),
   * its budget (a PodDisruptionBudget) or its controller (a workload): there the mark of no
   * environment is added to the platform's selector too.
   */
  platformSelectsAll?: true;
}

/**
 * A field of a kind that names another object, and who follows it (docs/security-model.md,
 * "What an object points at"). A controller, the scheduler or kube-proxy acts on the object
 * named, later and unreviewed, for whoever wrote the reference: so a reference may name
 * only what its writer's environment may use (rules/reference-scope.ts).
 */
export interface ReferenceFacts {
  /**
   * Where it stands: a dotted field path, `[]` stepping into each item of a list
   * (`spec.rules[].http.paths[].backend.service.name`); `metadata.name` for an object that
   * names its target by its own name (the Endpoints of a Service).
   */
  path: string;
  /**
   * `name`: the field holds the name of an object of `kind`; `label`: the label `label`
   * holds it (`path` is `metadata.labels`); `object-ref`: the field is a typed reference
   * ({apiVersion or apiGroup, kind, name}) and names its kind itself, or, with `kind`, the
   * group of `kind` when it gives no apiVersion and the kind `kind` when it gives no kind (a
   * KEDA ScaledObject's scaleTargetRef, which KEDA takes for an apps/v1 Deployment so); `gateway-ref`: a
   * Gateway API reference ({group?, kind?, name, namespace?}: a route's backendRef, a
   * listener's certificateRef), whose group and kind default to `kind`'s and whose
   * namespace defaults to the object's own; `local-ref`: a reference always to the object's
   * own namespace ({name, kind?, group?}: cert-manager's issuerRef, KEDA's authenticationRef),
   * an absent or empty group or kind being `kind`'s (cert-manager reads `group: ""` as its own
   * group, not the core group); `issuer-annotations`: cert-manager's ingress-shim annotations (`path` is
   * `metadata.annotations`): `cert-manager.io/issuer` names an Issuer,
   * `cert-manager.io/cluster-issuer` a ClusterIssuer, and `cert-manager.io/issuer-kind` and
   * `cert-manager.io/issuer-group` override the kind and group of either, as the shim reads them;
   * `controller-name`: the name of the object's controlling owner reference (`path` is
   * `metadata.ownerReferences`), whatever kind it gives but `kind`'s own (that one is the
   * object's parent): a controller that takes every object of its namespace whose controller
   * reference carries its name (the cronjob controller's Jobs) follows it;
   * `analysis-ref`: an Argo Rollouts analysis template reference ({templateName, clusterScope?}),
   * an AnalysisTemplate of the object's namespace, or with `clusterScope: true` a
   * ClusterAnalysisTemplate (the platform's); `unlisted-keys`: the field holds an object whose
   * keys choose what the follower does (an External Secrets store's provider), and a key not in
   * `listed` is one whose fields the table does not list, so what it names cannot be known.
   */
  by: 'name' | 'label' | 'object-ref' | 'gateway-ref' | 'local-ref' | 'issuer-annotations' | 'controller-name' | 'analysis-ref' | 'unlisted-keys';
  /** For `unlisted-keys`: the keys whose references the row lists under their own paths. */
  listed?: readonly string[];
  /** The label key, for `label`. */
  label?: string;
  /** The kind named, for `name` and `label` (a kind of this table, in its `group`); for `gateway-ref` and `local-ref` (and `object-ref`, where given), the kind a reference that gives none names. */
  kind?: { group: string; kind: string };
  /** Who acts on the object named, for messages and the docs. */
  follower: string;
  /** The API server refuses any change of it after CREATE (a pod's spec): judged at CREATE only, and an UPDATE plans no read for it. */
  immutable?: boolean;
  /**
   * The follower writes into the object, creating it when none has the name (cert-manager
   * writes a Certificate's key pair into its `secretName`): one that does not exist is
   * admitted; one that exists is judged, and one that carries no stamps outside a bound
   * namespace (the platform's, or what an operator made for an environment, unstamped) is
   * refused but to the platform's principals, as an environment may not write it directly
   * (guard.shared-input) and the follower writes with rights of its own.
   */
  writes?: true;
  /**
   * With `writes`: the follower writes only into one that exists when the field `path` holds
   * one of `values` (an ExternalSecret's `spec.target.creationPolicy: Merge`). A name that does
   * not exist is then refused as any reference's: whoever creates it later would have the
   * follower merge into it.
   */
  mergesWhen?: { path: string; values: readonly string[] };
  /**
   * With `writes`: one the follower creates when absent carries no owner reference (an ACME
   * Issuer's account key), so of no environment, mountable by every environment's pods in a
   * shared namespace. A name that does not exist is then refused as any reference's: the
   * writer creates it first, stamped as its own.
   */
  createsUnowned?: true;
  /** Absent or empty, the field defaults to the object's own name (an ExternalSecret's target Secret). */
  orOwnName?: true;
  /**
   * The follower reads the object named for as long as this one lives, whatever stands under
   * the name then (an Ingress's TLS Secret): the row lists its kind in `readsByName`, and the
   * CREATE of one under the name is judged against this object as against a pod that reads it
   * (rules/live-readers.ts). Absent, the reference is judged only when written.
   */
  readsLive?: true;
  /**
   * It may name one that does not exist (a StatefulSet with no headless Service, which is
   * ordinary): the row follows the kind by name (`followsByName`), so the CREATE of one under the
   * name later is judged against this object (rules/live-readers.ts), read live. Absent, a name
   * that does not exist is refused in a namespace shared with other environments
   * (`reference.absent`). Not for what is held by the lookup cache's index alone (an Ingress's
   * TLS Secret): a CREATE under the name before the watch delivers the object would win.
   */
  mayNameAbsent?: true;
  /**
   * The follower changes the object named, or what it serves: scales it, evicts its pods,
   * takes over its template, routes its Service's traffic, rewrites its Ingress. One that
   * carries no stamps outside a bound namespace is the platform's, which no environment's
   * principal may change itself (guard.shared-input): so none may have the follower change it.
   */
  changes?: true;
  /**
   * `path` holds a label selector choosing objects of `kind` (a PushSecret's stores or
   * Secrets): whose each one is cannot be told at admission, so only the platform's
   * principals may write one.
   */
  selects?: true;
}

/** Where a kind's objects name hostnames (KindRow's `hostnames`). */
export interface HostnamesFact {
  readonly paths: readonly string[];
  readonly follower: string;
  /** A boolean field that, true, has each name at `paths` stand for the wildcard under it (an ACME Challenge's `spec.wildcard`: its `dnsName` is the wildcard's domain). */
  readonly wildcardWhen?: string;
  /** external-dns takes hostnames from its annotations on this kind too (EXTERNAL_DNS_HOSTNAMES, policy/hostnames.ts): a DNS record for each, pointing at the object's addresses. */
  readonly dnsAnnotations?: true;
  /**
   * The names at `paths` are DNS records' its follower writes (a DNSEndpoint's): read as the zone
   * reads them (policy/hostnames.ts dnsRecordNames: a trailing dot is the same name, a record at
   * `_acme-challenge.D` answers an ACME CA's DNS-01 challenge for D and `*.D`), and a record whose sibling
   * `recordType` field is NS delegates the zone at its name, every name under it too.
   */
  readonly dnsRecords?: { readonly recordType: string };
}

export interface KindRow {
  kind: string;
  group: string;
  version: string;
  /** The plural resource name the API serves it under. */
  resource: string;
  namespaced: boolean;
  /** How a write of the resource itself reaches Deed; absent: it never does. */
  door?: DoorKind;
  /** Subresources that reach Deed, by the door they open; a subresource not named is unreviewed. */
  subresources?: Readonly<Record<string, 'object' | 'pod-by-name' | 'token-request' | 'connect' | 'service-proxy' | 'workload' | 'workload-scale' | 'snapshot'>>;
  /** Present: Deed stamps it at CREATE, guards its writes, and (with `reaped`, `audited`) reads it back. */
  stamps?: StampFacts;
  /** Present: its controller makes pods (and claims) from these templates. */
  templates?: TemplateFacts;
  /**
   * A custom resource's pod specs (dotted paths) that its operator copies into the workloads or
   * pods it makes, as a platform principal Deed does not judge: their pod affinity terms are
   * scoped where they are written (rules/affinity-scope.ts).
   */
  podSpecs?: readonly string[];
  /**
   * With `podSpecs`: its operator makes workloads from them (ReplicaSets, Jobs) as a principal of
   * its own, so their pods are of no environment: an environment may write such pod specs only
   * in a namespace bound to it (rules/operator-pods.ts). `operator` says what the operator makes,
   * `instead` what the environment may use in their place; both for the refusal.
   */
  operatorPods?: { operator: string; instead: string };
  /** Present: it acts on the pods this selector selects; with `templates`, the pods its controller makes must match it. */
  podSelector?: PodSelectorFacts;
  /**
   * The webhook reads it for a decision: `cache` (list and watch, get on a miss), `cache-optional`
   * (cached unless the install turns the cache off: RBAC cannot grant metadata only), `get`.
   */
  lookup?: 'cache' | 'cache-optional' | 'get';
  /**
   * Read only as what a reference names (a route's parent Gateway): as an owner it stays what an
   * unread custom resource is, its operator's (a gateway controller owns the proxies it deploys
   * by the Gateway), so reading it for routes refuses none of its operator's writes.
   */
  readAsTargetOnly?: true;
  /**
   * As a reference's target, beside what its stamps say: `nothing`, naming one hands the
   * referrer nothing of another environment's (a Password generator holds no credentials), so
   * it is not read and may not exist yet; `referrer-namespace`, cluster-scoped (the platform's)
   * but its operator reads the Secrets it names in the referrer's namespace (a ClusterGenerator,
   * a ClusterAnalysisTemplate), where one may be another environment's: named only in a
   * namespace bound to the requester's environment (rules/reference-scope.ts).
   */
  asTarget?: 'nothing' | 'referrer-namespace';
  /**
   * An operator listed in `workloadControllers` makes it for the resource it reconciles (a
   * Certificate's Secret, an ExternalSecret's): stamped as its controlling owner's environment
   * (doors/object.ts), and its stamps kept as stored on the operator's later writes.
   */
  operatorMade?: true;
  /**
   * A default-row kind a workload controller listed in `workloadControllers` makes for its
   * controlling owner (the resourceclaim controller, a pod's ResourceClaim from the template it
   * names): stamped and judged at CREATE as that owner's environment's (doors/default.ts), so
   * whose it is does not rest on an owner reference anyone who may write the object can drop.
   */
  controllerMade?: true;
  /** The reaper lists, gets and deletes it. */
  reaped?: boolean;
  /**
   * The audit lists it (metadata only; pods with their specs); `getsOne`: and gets one by
   * name (an owner pod); `judgesContent`: and runs the content rules on it as stored (a
   * Secret is read as metadata only, a NetworkPolicy has no content rule).
   */
  audited?: { getsOne?: boolean; judgesContent?: boolean };
  /**
   * A run lease (docs/operations.md, "Run leases"): the reaper and the audit get it by the
   * name an object gives it, to know whether a run is over. Never listed, deleted or written by them.
   */
  runLease?: boolean;
  /** The fields of its objects that name other objects, each judged by reference-scope.ts at CREATE and UPDATE. */
  references?: readonly ReferenceFacts[];
  /**
   * Paths of the ObjectMeta its controller copies onto the objects it makes (a
   * ResourceClaimTemplate's `spec.metadata`, copied by the resourceclaim controller, which
   * Deed does not review): Deed's stamps there would make a copy verify as whoever's they
   * were copied from, so they are refused (rules/copied-metadata.ts).
   */
  metadataTemplates?: readonly string[];
  /**
   * A pod reads it (a Secret, a ConfigMap, a claim, a ResourceClaimTemplate, a ServiceAccount,
   * whose imagePullSecrets the API server copies into its pods): an unstamped one in a shared namespace
   * is the platform's, and no environment may rewrite what another's pods run
   * (rules/shared-input.ts).
   */
  podInput?: boolean;
  /**
   * Its objects read these kinds by name while they live (pod/pod-reads.ts): a pod what it
   * mounts and names, a claim not yet provisioned the claim it clones, an Ingress, Gateway or
   * ListenerSet the Secrets (a Gateway, a BackendTLSPolicy the ConfigMaps) its `readsLive` references name. The CREATE of one
   * under such a name is judged against them (rules/live-readers.ts); so its store keeps what
   * each reads, indexed by name (kube/name-readers.ts), and it is listed and read whole.
   */
  readsByName?: readonly string[];
  /**
   * Where its objects name the hostnames they take traffic for (a route's `hostnames`, an
   * Ingress's hosts, a listener's hostname) or a certificate is issued for (a Certificate's
   * dnsNames), and what its follower does for a hostname named there: one that an environment
   * declares its own is named by that environment's principals alone (rules/route-hostnames.ts).
   */
  hostnames?: HostnamesFact;
  /**
   * Its references (above) name objects of these resources, and their follower acts, for as
   * long as it lives, on whatever stands under the name, whoever created it: kube-proxy routes a
   * Service by the EndpointSlices labelled with its name, the HPA controller scales the workload
   * its scaleTargetRef names. Judged when written, but nothing holds the target after: its
   * writer may delete it and another environment create one under the name. So the CREATE of
   * one under a name that a live object of this kind names is judged against it
   * (rules/live-readers.ts); they are listed live from the API server, one list of this kind
   * per such CREATE (kube/object-reader.ts), never cached, so Deed's RBAC lists this kind.
   * Only the targets listed here are judged this way: the Secrets an Ingress or a Gateway names
   * for TLS are held by `readsByName` instead (cached: listing them at every Secret CREATE in a
   * namespace would cost a list each), and what an operator's custom resources name is not. A
   * kind not served (a custom resource not installed) is read as none.
   */
  followsByName?: readonly string[];
  /**
   * Of `followsByName`, the targets its objects name from any namespace with no consent the
   * target's namespace writes before (a route's or ListenerSet's parent Gateway: the Gateway's
   * own `allowedRoutes` and `allowedListeners` consent, and a Gateway made under the name later
   * writes its own): their referrers are listed across the cluster at the target's CREATE, not
   * in its namespace only.
   */
  followsAcrossNamespaces?: readonly string[];
  /**
   * Of `followsByName`, the targets its objects name in another namespace where a
   * ReferenceGrant there consents (a route's backend Service): the referrers of the namespaces
   * the target namespace's grants admit are listed too at the target's CREATE (REFERENCE_GRANTS).
   */
  followsByGrant?: readonly string[];
  /**
   * Its objects act on every object of the namespace, whoever's they are (a quota that
   * admits no pods, a limit range that caps every container): in a namespace several
   * environments share they are the platform's (rules/namespace-wide.ts).
   */
  namespaceWide?: boolean;
  /**
   * Values of a field under which its operator makes what it writes with no owner reference
   * (an ExternalSecret's `spec.target.creationPolicy: Orphan`): nothing the cluster records
   * then ties the output to the environment that asked, so no door stamps it as that
   * environment's, and in a shared namespace every environment's pods may read it
   * (rules/unowned-output.ts). An ACME Issuer without `disableAccountKeyGeneration: true` has
   * cert-manager create its account key Secret, ownerless, whenever that Secret is missing (after
   * it is deleted, too). `fix` is what the refusal asks for instead.
   */
  unownedOutputWhen?: {
    /** Where the operator's output is asked for at all (an Issuer's `spec.acme`); absent: always. */
    within?: string;
    path: string;
    /** The values (undefined: the field absent) under which the output has no owner reference. */
    values: readonly unknown[];
    output: string;
    fix: string;
  };
  /**
   * Configurations under which its operator authenticates with its own identity (its service
   * account token, its cloud role), for whoever wrote the object (rules/operator-identity.ts).
   */
  operatorIdentity?: readonly OperatorIdentityUse[];
}

/** One configuration an operator authenticates for with its own identity: `within` is present, `when` holds, and none of `unless` is set. */
export interface OperatorIdentityUse {
  /** The configuration (a provider's auth block); the rule applies only where it is present. */
  within: string;
  /** Only when this field under `within` holds one of `values` (undefined: the field absent). */
  when?: { path: string; values: readonly unknown[] };
  /** Fields under `within` that name a credential of the writer's own: any one set, the operator uses it instead. */
  unless?: readonly string[];
  /** What the operator then uses, and where it goes, for the refusal. */
  identity: string;
  /** What to write instead. */
  fix: string;
}

const POD_TEMPLATE = ['spec.template'];
const SELECTOR = { path: 'spec.selector', form: 'label-selector', unset: 'all' } as const;

/**
 * Workloads are stamped kinds (docs/security-model.md, "Controller doors"): frozen after
 * CREATE, and every door that can change or remove one is guarded: UPDATE (rollbacks and
 * rollout restarts are UPDATEs), DELETE, `/status` (it carries the whole object) and
 * `/scale` (it carries a Scale: whose the workload is comes from a lookup of it). Owner
 * reference to the runner pod: a Job's only, a per-run workload that ends with its run;
 * every other kind is a lab or a service that outlives the pod that created it, and a
 * rollout of the runners must not delete it.
 */
const WORKLOAD_STAMPS = { ownerReference: false, activeDeadline: false, expiresAt: false } as const;
const WITH_STATUS = { status: 'workload' } as const;
const WITH_STATUS_AND_SCALE = { status: 'workload', scale: 'workload-scale' } as const;

const GATEWAY_SERVICE = { group: '', kind: 'Service' } as const;
/**
 * A KEDA trigger's authenticationRef (`{name, kind?}`, a TriggerAuthentication of the object's
 * namespace by default): the operator hands the scaler the credentials it holds, and the
 * scaler sends them where the trigger's metadata says (a metrics-api trigger's URL).
 */
const KEDA_AUTHENTICATION = { path: 'spec.triggers[].authenticationRef', by: 'local-ref', kind: { group: 'keda.sh', kind: 'TriggerAuthentication' }, follower: "the KEDA operator hands the credentials it holds to the trigger's scaler, which sends them where the trigger says" } as const;
export const GATEWAY_API_EXPERIMENTAL = 'gateway.networking.x-k8s.io';
/** Where a Gateway's client-certificate validation names its CA certificates (ConfigMaps, by default). */
const GATEWAY_CLIENT_CAS = ['spec.tls.frontend.default.validation.caCertificateRefs[]', 'spec.tls.frontend.perPort[].tls.validation.caCertificateRefs[]', 'spec.listeners[].tls.frontendValidation.caCertificateRefs[]'] as const;
/** The hostname a listener, of a Gateway or a ListenerSet, takes traffic for. */
const LISTENER_HOSTNAMES = { paths: ['spec.listeners[].hostname'], follower: "the gateway controller would take its connections on this listener, with this listener's certificate" } as const;
/** The hostnames a route takes on its parents' listeners; external-dns publishes them, and its annotations' (TCPRoute and UDPRoute take ports, and only the annotations' names). */
const ROUTE_HOSTNAMES = { paths: ['spec.hostnames[]'], follower: "the gateway controller would send its requests that this route matches best to this route's backends", dnsAnnotations: true } as const;
/** What external-dns publishes for an object that names no hostname in its spec (a Service, a TCPRoute): its annotations' names. */
const DNS_ANNOTATION_HOSTNAMES = { paths: [], follower: "external-dns would point the name's DNS record at this object's addresses", dnsAnnotations: true } as const;
/** A listener's TLS certificates, on a Gateway or a ListenerSet: served as the listener's own. */
const LISTENER_CERTIFICATES = { path: 'spec.listeners[].tls.certificateRefs[]', by: 'gateway-ref', kind: { group: '', kind: 'Secret' }, follower: "the gateway controller serves the Secret's certificate and key on the listener", readsLive: true } as const;
/**
 * A ListenerSet's (Gateway API v1.5) references: its parent Gateway, to which the gateway
 * controller adds the set's listeners (hostnames, ports) where the Gateway's `allowedListeners`
 * takes the set's namespace, and its listeners' certificates. Read when a route names one as
 * its parent, as a Gateway is. The experimental channel's XListenerSet has the same shape.
 */
const LISTENER_SET = {
  namespaced: true,
  hostnames: LISTENER_HOSTNAMES,
  // Cached, as a Gateway is: read when a route names one as its parent, and the Secrets its
  // listeners name for TLS are held for it (readsByName) as an Ingress's are.
  lookup: 'cache',
  readAsTargetOnly: true,
  readsByName: ['secrets'],
  references: [
    { path: 'spec.parentRef', by: 'gateway-ref', kind: { group: GATEWAY_API, kind: 'Gateway' }, follower: "the gateway controller adds the set's listeners to the parent Gateway" },
    LISTENER_CERTIFICATES,
  ],
  // Its parent, for as long as it lives, from any namespace: a Gateway created under the name
  // later serves its listeners, with their certificates.
  followsByName: ['gateways'],
  followsAcrossNamespaces: ['gateways'],
} as const;
/**
 * Every route's parents and backends. A parent is a Gateway (a listener's default
 * `allowedRoutes` accepts every route of its namespace: another environment's route would
 * take over or add to the Gateway's hostnames) or, in mesh mode (GAMMA), a Service given as
 * `{group: "", kind: Service}`, whose clients' requests the route then steers.
 */
const ROUTE_REFERENCES = [
  { path: 'spec.parentRefs[]', by: 'gateway-ref', kind: { group: GATEWAY_API, kind: 'Gateway' }, follower: "the gateway controller serves the route on the parent Gateway's listeners (for a Service parent, the mesh steers the Service's clients by it)" },
  { path: 'spec.rules[].backendRefs[]', by: 'gateway-ref', kind: GATEWAY_SERVICE, follower: "the gateway controller sends the route's traffic to the backend, on the hostnames of the Gateways it attaches to" },
] as const;
/**
 * What a route names and its gateway controller follows for as long as it lives: a Service
 * made under a backend's name later gets the route's traffic; a Gateway or ListenerSet made
 * under a parent's name serves the route (on its own listeners, hostnames and certificates).
 */
const ROUTE_FOLLOWS = ['services', 'gateways', 'listenersets', 'xlistenersets'] as const;
/** A route's parents, named from any namespace (ROUTE_FOLLOWS). */
const ROUTE_PARENTS = ['gateways', 'listenersets', 'xlistenersets'] as const;
/** A route's backends, named in another namespace where a ReferenceGrant there consents (ROUTE_FOLLOWS). */
const ROUTE_BACKENDS = ['services'] as const;
/**
 * Gateway API's ReferenceGrant: the consent, written in a namespace, for objects of the kinds and
 * namespaces it lists (`spec.from`) to name its objects of the kinds and names it lists
 * (`spec.to`). Listed (never watched) where the target of a `followsByGrant` row is created.
 */
export const REFERENCE_GRANTS = { group: GATEWAY_API, version: 'v1beta1', resource: 'referencegrants' } as const;
/** An HTTPRoute's or GRPCRoute's RequestMirror filters, of a rule or of one backend: a copy of every request goes there. */
const ROUTE_MIRRORS = [
  { path: 'spec.rules[].filters[].requestMirror.backendRef', by: 'gateway-ref', kind: GATEWAY_SERVICE, follower: "the gateway controller mirrors the route's requests to the backend" },
  { path: 'spec.rules[].backendRefs[].filters[].requestMirror.backendRef', by: 'gateway-ref', kind: GATEWAY_SERVICE, follower: "the gateway controller mirrors the route's requests to the backend" },
] as const;
/**
 * An HTTPRoute's ExternalAuth filters (Gateway API v1.3, experimental): the gateway sends every
 * request's headers (its credentials) to the backend and lets it decide, as it sends a backend traffic.
 */
const ROUTE_EXTERNAL_AUTH = [
  { path: 'spec.rules[].filters[].externalAuth.backendRef', by: 'gateway-ref', kind: GATEWAY_SERVICE, follower: "the gateway controller sends the route's requests to the backend to authorize them" },
  { path: 'spec.rules[].backendRefs[].filters[].externalAuth.backendRef', by: 'gateway-ref', kind: GATEWAY_SERVICE, follower: "the gateway controller sends the route's requests to the backend to authorize them" },
] as const;

/**
 * What an Issuer signs or authenticates with, and where its HTTP01 solver publishes: cert-manager
 * reads each Secret with its own rights and acts with it for whoever names the Issuer. A CA Issuer naming another
 * environment's CA key signs with it; an ACME, Vault or Venafi Issuer naming another's
 * credentials acts (solves DNS challenges, asks Vault or Venafi) as that environment. An ACME
 * account key that does not exist yet cert-manager creates with no owner reference, so it must
 * exist: its writer creates it first.
 */
const ISSUER_SECRET = { group: '', kind: 'Secret' } as const;
/** An ACME Issuer that lets cert-manager generate its account key (rules/unowned-output.ts). */
const ACME_ACCOUNT_KEY = {
  within: 'spec.acme',
  path: 'spec.acme.disableAccountKeyGeneration',
  values: [undefined, false],
  output: 'cert-manager would create its ACME account key Secret (spec.acme.privateKeySecretRef), whenever it is missing,',
  fix: 'create the account key Secret yourself (a PEM private key under tls.key) and set disableAccountKeyGeneration: true',
} as const;
const issuerSecret = (path: string, follower: string, writes?: { writes: true; createsUnowned: true }) => ({ path, by: 'name', kind: ISSUER_SECRET, follower, ...writes }) as const;
const DNS01_CREDENTIALS = 'cert-manager solves ACME challenges with the credentials in the Secret, for whoever names the Issuer';
const ISSUER_REFERENCES = [
  issuerSecret('spec.ca.secretName', "cert-manager signs every Certificate that names the Issuer with the Secret's CA key"),
  issuerSecret('spec.acme.privateKeySecretRef.name', 'cert-manager registers and acts as the ACME account whose key the Secret holds, and creates one that does not exist with no owner reference, of no environment', { writes: true, createsUnowned: true }),
  issuerSecret('spec.acme.externalAccountBinding.keySecretRef.name', "cert-manager binds the ACME account to the external account whose key the Secret holds"),
  ...['cloudflare.apiTokenSecretRef', 'cloudflare.apiKeySecretRef', 'route53.accessKeyIDSecretRef', 'route53.secretAccessKeySecretRef', 'cloudDNS.serviceAccountSecretRef', 'azureDNS.clientSecretSecretRef', 'digitalocean.tokenSecretRef', 'rfc2136.tsigSecretSecretRef', 'acmeDNS.accountSecretRef', 'akamai.clientTokenSecretRef', 'akamai.clientSecretSecretRef', 'akamai.accessTokenSecretRef'].map((at) =>
    issuerSecret(`spec.acme.solvers[].dns01.${at}.name`, DNS01_CREDENTIALS),
  ),
  ...['auth.tokenSecretRef', 'auth.appRole.secretRef', 'auth.kubernetes.secretRef', 'auth.clientCertificate.secretName', 'caBundleSecretRef', 'clientCertSecretRef', 'clientKeySecretRef'].map((at) =>
    issuerSecret(`spec.vault.${at}${at.endsWith('secretName') ? '' : '.name'}`, "cert-manager authenticates to Vault with the Secret's credentials, for whoever names the Issuer"),
  ),
  issuerSecret('spec.venafi.tpp.credentialsRef.name', "cert-manager authenticates to Venafi with the Secret's credentials, for whoever names the Issuer"),
  issuerSecret('spec.venafi.cloud.apiTokenSecretRef.name', "cert-manager authenticates to Venafi with the Secret's credentials, for whoever names the Issuer"),
  // An HTTP01 solver publishes the challenge on the Gateway it attaches its route to, or in the Ingress it edits: a
  // public CA then issues for whatever hostnames that Gateway or Ingress serves.
  { path: 'spec.acme.solvers[].http01.gatewayHTTPRoute.parentRefs[]', by: 'gateway-ref', kind: { group: GATEWAY_API, kind: 'Gateway' }, follower: "cert-manager attaches its challenge route to the Gateway, and the ACME CA issues for the Gateway's hostnames" },
  { path: 'spec.acme.solvers[].http01.ingress.name', by: 'name', kind: { group: 'networking.k8s.io', kind: 'Ingress' }, follower: "cert-manager adds its challenge path to the Ingress, and the ACME CA issues for the Ingress's hostnames", changes: true },
] as const;

/**
 * External Secrets Operator: an ExternalSecret or a PushSecret names the SecretStore it fetches
 * from or pushes to (`{name, kind?}`, a SecretStore of its namespace by default; a
 * ClusterSecretStore is the platform's). The operator uses the store's credentials for
 * whoever names it: another environment's store would fetch that environment's secrets into
 * the writer's Secret.
 */
const ESO_STORE = { group: EXTERNAL_SECRETS, kind: 'SecretStore' } as const;
const ESO_FETCH = 'the External Secrets operator fetches with the store\'s credentials and writes what it fetches into the ExternalSecret\'s target Secret';
/** AWS static keys, under a provider's or a generator's `auth`: an access key id, its secret, a session token. */
const AWS_KEY_SECRETS = ['secretRef.accessKeyIDSecretRef', 'secretRef.secretAccessKeySecretRef', 'secretRef.sessionTokenSecretRef'];
const AWS_AUTH_SECRETS = AWS_KEY_SECRETS.map((at) => `auth.${at}`);
/** The webhook provider's and the Webhook generator's Secrets: it templates each one's keys into its requests, to the URL it gives. */
const WEBHOOK_SECRETS = ['auth.ntlm.usernameSecret', 'auth.ntlm.passwordSecret', 'secrets[].secretRef'];
/** What names a Google credential of the writer's own, under a provider's or a GCR generator's `auth` parent: without one, the controller's own is used. */
const GCP_OWN_CREDENTIALS = ['auth.secretRef', 'auth.workloadIdentity', 'auth.workloadIdentityFederation.serviceAccountRef', 'auth.workloadIdentityFederation.awsSecurityCredentials'];
/**
 * The Secrets a Vault provider (a SecretStore's, a VaultDynamicSecret generator's) authenticates
 * with or sends: an AppRole's role id and an IAM access key id go to the server as they are,
 * so a server of the writer's choosing would receive whatever key of whatever Secret they name.
 */
const VAULT_AUTH_SECRETS = [
  'auth.tokenSecretRef',
  'auth.appRole.secretRef',
  'auth.appRole.roleRef',
  'auth.kubernetes.secretRef',
  'auth.ldap.secretRef',
  'auth.userPass.secretRef',
  'auth.jwt.secretRef',
  'auth.cert.clientCert',
  'auth.cert.secretRef',
  ...AWS_KEY_SECRETS.map((at) => `auth.iam.${at}`),
  'auth.gcp.secretRef.secretAccessKeySecretRef',
  'tls.certSecretRef',
  'tls.keySecretRef',
];
/**
 * The Secrets a SecretStore authenticates with or sends, for every provider of External Secrets'
 * v1 API (read at its commit cc5bfbc, 2026-08-08): the operator reads each with its own rights
 * and fetches with it for every ExternalSecret that names the store, from a server the store
 * chooses. A provider this list does not know (a later release's) names what cannot be found:
 * `ESO_PROVIDERS`.
 */
const ESO_STORE_SECRETS = [
  ...VAULT_AUTH_SECRETS.map((at) => `vault.${at}`),
  ...['auth.appRole.roleRef', 'auth.appRole.secretRef', 'auth.tokenSecretRef', 'auth.userPass.secretRef'].map((at) => `openBao.${at}`),
  ...AWS_AUTH_SECRETS.map((at) => `aws.${at}`),
  ...['clientId', 'tenantId', 'clientSecret', 'clientCertificate'].map((at) => `azurekv.authSecretRef.${at}`),
  ...['secretRef.accessID', 'secretRef.accessType', 'secretRef.accessTypeParam', 'kubernetesAuth.secretRef'].map((at) => `akeyless.authSecretRef.${at}`),
  'bitwardensecretsmanager.auth.secretRef.credentials',
  ...['mtls.certSecretRef', 'mtls.keySecretRef', 'token.tokenSecretRef'].map((at) => `ovh.auth.${at}`),
  'gcpsm.auth.secretRef.secretAccessKeySecretRef',
  'gcpsm.auth.workloadIdentityFederation.awsSecurityCredentials.awsCredentialsSecretRef',
  ...['privatekey', 'fingerprint'].map((at) => `oracle.auth.secretRef.${at}`),
  'ibm.auth.secretRef.secretApiKeySecretRef',
  ...['yandexcertificatemanager', 'yandexlockbox'].flatMap((p) => [`${p}.auth.authorizedKeySecretRef`, `${p}.caProvider.certSecretRef`]),
  'github.auth.privateKey',
  'gitlab.auth.SecretRef.accessToken',
  'onepassword.auth.secretRef.connectTokenSecretRef',
  'onepasswordSDK.auth.serviceAccountSecretRef',
  ...WEBHOOK_SECRETS.map((at) => `webhook.${at}`),
  ...['kubernetes', 'crd'].flatMap((p) => ['auth.cert.clientCert', 'auth.cert.clientKey', 'auth.token.bearerToken', 'authRef'].map((at) => `${p}.${at}`)),
  'senhasegura.auth.clientSecretSecretRef',
  ...['accessKey.secretRef', 'secretKey.secretRef'].map((at) => `scaleway.${at}`),
  'doppler.auth.secretRef.dopplerToken',
  'previder.auth.secretRef.accessToken',
  ...['apiKeyRef', 'passcodeRef'].map((at) => `onboardbase.auth.${at}`),
  'keepersecurity.authRef',
  ...['apikey.userRef', 'apikey.apiKeyRef', 'jwt.secretRef', 'cert.clientCertRef', 'cert.clientKeyRef'].map((at) => `conjur.auth.${at}`),
  ...['clientId.secretRef', 'clientSecret.secretRef'].map((at) => `delinea.${at}`),
  ...['username.secretRef', 'password.secretRef', 'token.secretRef'].map((at) => `secretserver.${at}`),
  'chef.auth.secretRef.privateKeySecretRef',
  ...['auth.accessToken.secretRef', 'accessToken.secretRef'].map((at) => `pulumi.${at}`),
  'fortanix.apiKey.secretRef',
  'passworddepot.auth.secretRef.credentials',
  ...['passwordSecretRef', 'privateKeySecretRef'].map((at) => `passbolt.auth.${at}`),
  ...['appId', 'appSecret'].map((at) => `dvls.auth.secretRef.${at}`),
  ...[
    'universalAuthCredentials.clientId',
    'universalAuthCredentials.clientSecret',
    'azureAuthCredentials.identityId',
    'azureAuthCredentials.resource',
    'gcpIdTokenAuthCredentials.identityId',
    'gcpIamAuthCredentials.identityId',
    'gcpIamAuthCredentials.serviceAccountKeyFilePath',
    'jwtAuthCredentials.identityId',
    'jwtAuthCredentials.jwt',
    'ldapAuthCredentials.identityId',
    'ldapAuthCredentials.ldapPassword',
    'ldapAuthCredentials.ldapUsername',
    ...['identityId', 'privateKey', 'privateKeyPassphrase', 'fingerprint', 'userId', 'tenancyId', 'region'].map((at) => `ociAuthCredentials.${at}`),
    'kubernetesAuthCredentials.identityId',
    'kubernetesAuthCredentials.serviceAccountTokenPath',
    'awsAuthCredentials.identityId',
    'tokenAuthCredentials.accessToken',
  ].map((at) => `infisical.auth.${at}`),
  ...['apiKey', 'clientId', 'clientSecret', 'certificate', 'certificateKey'].map((at) => `beyondtrust.auth.${at}.secretRef`),
  'beyondtrustworkloadcredentials.auth.apikey.token',
  ...['accessKeyIDSecretRef', 'accessKeySecretSecretRef'].map((at) => `cloudrusm.auth.secretRef.${at}`),
  ...['accessKeyID', 'secretAccessKey', 'token'].map((at) => `volcengine.auth.secretRef.${at}`),
  'ngrok.auth.apiKey.secretRef',
  ...['username.secretRef', 'password.secretRef'].map((at) => `barbican.auth.${at}`),
  ...['auth.serviceAccountCredsSecretRef', 'auth.tokenSecretRef', 'caProvider.certSecretRef'].map((at) => `nebiusmysterybox.${at}`),
].map((at) => ({ path: `spec.provider.${at}.name`, by: 'name', kind: { group: '', kind: 'Secret' }, follower: "the External Secrets operator authenticates with the Secret's credentials, for every ExternalSecret that names the store" }) as const);
/** The providers whose Secrets `ESO_STORE_SECRETS` lists (and `fake`, which names none). */
const ESO_PROVIDERS = [...new Set(ESO_STORE_SECRETS.map((r) => r.path.split('.')[2]!)), 'fake'];
const ESO_UNLISTED_PROVIDER = { path: 'spec.provider', by: 'unlisted-keys', listed: ESO_PROVIDERS, kind: { group: '', kind: 'Secret' }, follower: 'the External Secrets operator authenticates with what the provider names, for every ExternalSecret that names the store' } as const;

/** Where External Secrets' Vault client signs in as the controller itself (`prefix`: a store's `spec.provider.vault`, a VaultDynamicSecret's `spec.provider`). */
const esoVaultIdentity = (prefix: string): OperatorIdentityUse[] => [
  { within: `${prefix}.auth.kubernetes`, unless: ['serviceAccountRef', 'secretRef'], identity: "the External Secrets controller would send its own service account token to the Vault server", fix: 'name a service account (serviceAccountRef) or a token Secret (secretRef) of your own' },
  { within: `${prefix}.auth.iam`, unless: ['jwt', 'secretRef'], identity: "the External Secrets controller would sign in to the Vault server with its own AWS identity", fix: 'name a service account (jwt.serviceAccountRef) or access keys (secretRef) of your own' },
  { within: `${prefix}.auth.gcp`, unless: ['secretRef', 'workloadIdentity', 'serviceAccountRef'], identity: "the External Secrets controller would sign in to the Vault server with its own Google credentials", fix: 'name a service account (serviceAccountRef, workloadIdentity) or a key Secret (secretRef) of your own' },
];
/** The AWS SDK's default chain, where `auth` names neither a service account nor keys (a store's provider, an ECR or STS generator). */
const esoAwsIdentity = (within: string): OperatorIdentityUse => ({ within, unless: ['auth.jwt', 'auth.secretRef'], identity: "the External Secrets controller would fetch with its own AWS identity (its IRSA or Pod Identity role, or the node's)", fix: 'name a service account (auth.jwt.serviceAccountRef) or access keys (auth.secretRef) of your own' });
/** Where a store's provider signs in as the controller: its cloud identity, or its token sent to the store's server. */
const ESO_STORE_IDENTITY: readonly OperatorIdentityUse[] = [
  ...esoVaultIdentity('spec.provider.vault'),
  esoAwsIdentity('spec.provider.aws'),
  {
    within: 'spec.provider.gcpsm',
    unless: GCP_OWN_CREDENTIALS,
    identity: "the External Secrets controller would fetch with its own Google credentials (its Application Default Credentials, or its token through a credential configuration)",
    fix: 'name a service account (auth.workloadIdentity, auth.workloadIdentityFederation.serviceAccountRef) or a key Secret (auth.secretRef) of your own',
  },
  { within: 'spec.provider.azurekv', when: { path: 'authType', values: ['ManagedIdentity'] }, identity: "the External Secrets controller would fetch with its own (or its node's) managed identity", fix: 'use authType ServicePrincipal with a Secret of your own, or WorkloadIdentity with a serviceAccountRef' },
  { within: 'spec.provider.azurekv', when: { path: 'authType', values: ['WorkloadIdentity'] }, unless: ['serviceAccountRef'], identity: "the External Secrets controller would fetch with its own federated token", fix: 'name a service account of your own (serviceAccountRef)' },
  // Infisical's cloud and Kubernetes logins take the controller's own token or cloud identity (its token path, from the Secret, is read in the controller's pod) and send it to hostAPI.
  ...['kubernetesAuthCredentials', 'azureAuthCredentials', 'awsAuthCredentials', 'gcpIdTokenAuthCredentials', 'gcpIamAuthCredentials'].map((at) => ({
    within: `spec.provider.infisical.auth.${at}`,
    identity: "the External Secrets controller would sign in to the store's Infisical server with its own service account token or cloud identity",
    fix: 'use auth.universalAuthCredentials or auth.tokenAuthCredentials with Secrets of your own',
  })),
  { within: 'spec.provider.ibm.auth.containerAuth', identity: "the External Secrets controller would read a token file of its own pod (tokenLocation) and send it to the store's IAM endpoint", fix: 'use auth.secretRef with an API key Secret of your own' },
  { within: 'spec.provider.oracle', when: { path: 'principalType', values: ['InstancePrincipal'] }, identity: "the External Secrets controller would fetch as its node's instance principal", fix: 'use principalType UserPrincipal with auth of your own, or Workload with a serviceAccountRef' },
  { within: 'spec.provider.oracle', when: { path: 'principalType', values: [undefined, ''] }, unless: ['auth'], identity: "the External Secrets controller would fetch as its node's instance principal", fix: 'give auth of your own (or principalType Workload with a serviceAccountRef)' },
  { within: 'spec.provider.oracle', when: { path: 'principalType', values: ['Workload'] }, unless: ['serviceAccountRef'], identity: "the External Secrets controller would fetch with its own pod's service account", fix: 'name a service account of your own (serviceAccountRef)' },
  { within: 'spec.provider.volcengine', unless: ['auth.secretRef'], identity: "the External Secrets controller would fetch with its own OIDC identity", fix: 'name access keys of your own (auth.secretRef)' },
  // A kubeconfig is read whole by client-go: its tokenFile may name the controller's own token, its exec plugin run a command in the controller's pod. Deed does not read Secrets' data.
  ...['kubernetes', 'crd'].map((p) => ({
    within: `spec.provider.${p}.authRef`,
    identity: "the External Secrets controller would use the kubeconfig in the Secret as written, whose tokenFile may name its own service account token (sent to the kubeconfig's server) and whose exec plugin would run in its pod",
    fix: 'use auth.token or auth.cert with Secrets of your own',
  })),
];
/**
 * Argo Rollouts' analysis: a job metric's Job (`spec.metrics[].provider.job`) is made by the
 * controller from the pod template it holds, and an argument's `valueFrom.secretKeyRef` is read
 * by the controller, with its own rights, and handed to the metric's provider (a web metric's
 * URL or headers, a job's arguments).
 */
const ARGO_JOB_POD = 'spec.metrics[].provider.job.spec.template.spec';
const ARGO_JOBS = { operator: 'the Argo Rollouts controller makes its job metrics\' Jobs', instead: 'a metric of another provider, or a Job of your own' } as const;
/**
 * The analysis templates a Rollout's or an Experiment's analysis runs: the controller makes an
 * AnalysisRun of the template's metrics, with the arguments the template's `secretKeyRef`s
 * read and the ones the referrer passes (a web metric's URL among them), for whoever names it.
 */
const ARGO_ANALYSIS = "the Argo Rollouts controller runs the template's metrics for the referrer, with the Secrets its arguments read and the arguments the referrer passes";
const argoAnalyses = (paths: readonly string[]) => paths.map((path) => ({ path, by: 'analysis-ref', follower: ARGO_ANALYSIS }) as const);
/**
 * An analysis's metric providers that query with the Argo Rollouts controller's own credentials
 * (read at argo-rollouts 9f8d111): Datadog without a Secret of the analysis's namespace, New
 * Relic, Wavefront and InfluxDB (Secrets of the controller's namespace), CloudWatch and an
 * Amazon Managed Prometheus (its AWS identity). The query is the writer's, and its results land
 * in the writer's AnalysisRun.
 */
const ARGO_METRIC = 'spec.metrics[].provider';
const ARGO_IDENTITY: readonly OperatorIdentityUse[] = [
  { within: `${ARGO_METRIC}.datadog`, when: { path: 'secretRef.namespaced', values: [undefined, false] }, identity: "the Argo Rollouts controller would query Datadog with its own credentials (its namespace's Secret, or its environment)", fix: 'name a Secret of your namespace with secretRef.namespaced: true' },
  ...(['newRelic', 'wavefront', 'influxdb'] as const).map((p) => ({ within: `${ARGO_METRIC}.${p}`, identity: `the Argo Rollouts controller would query with its own credentials (a Secret of its namespace)`, fix: 'use a web metric with headers from a Secret of your own (args valueFrom.secretKeyRef), or a Datadog metric with secretRef.namespaced: true' })),
  { within: `${ARGO_METRIC}.cloudWatch`, identity: 'the Argo Rollouts controller would query CloudWatch with its own AWS identity', fix: 'use a metric with credentials of your own' },
  { within: `${ARGO_METRIC}.prometheus.authentication.sigv4`, identity: 'the Argo Rollouts controller would sign its queries with its own AWS identity', fix: 'use a Prometheus without sigv4, or a metric with credentials of your own' },
];
const ARGO_DATADOG_SECRET = { path: `${ARGO_METRIC}.datadog.secretRef.name`, by: 'name', kind: { group: '', kind: 'Secret' }, follower: "the Argo Rollouts controller queries Datadog with the Secret's keys (with secretRef.namespaced, a Secret of the analysis's namespace) and writes the results into the AnalysisRun" } as const;
const ARGO_SECRET_ARGS = { path: 'spec.args[].valueFrom.secretKeyRef.name', by: 'name', kind: { group: '', kind: 'Secret' }, follower: "the Argo Rollouts controller reads the Secret's key and hands it to the analysis's metrics (a web metric's URL or headers, a job's arguments)" } as const;

/**
 * External Secrets generators (`generators.external-secrets.io`): an ExternalSecret's
 * `dataFrom[].sourceRef.generatorRef` has the operator run one and write what it generates (a
 * registry or API token made with the generator's credentials, a dynamic Vault secret, a
 * password) into the ExternalSecret's target. A generator authenticates with the Secrets it
 * names, for every ExternalSecret that names it; each is read (metadata only) when an
 * ExternalSecret names it. A kind not listed here is refused as any unread kind's reference
 * (`reference.unknown`); a ClusterGenerator reads what it names in the referrer's namespace
 * (`asTarget`). Service accounts a generator
 * asks tokens for are judged at the operator's TokenRequest (`guard.service-account`).
 */
const ESO_GENERATORS = 'generators.external-secrets.io';
const ESO_RUN_GENERATOR = "the External Secrets operator runs the generator, with the credentials it names, and writes what it generates into the ExternalSecret's target";
const GENERATE = "the External Secrets operator generates with the Secret's credentials, for every ExternalSecret that names the generator, and writes what it generates into that ExternalSecret's target";
const generatorRow = <K extends string, R extends string>(kind: K, resource: R, secrets: readonly string[] = [], operatorIdentity?: readonly OperatorIdentityUse[]) =>
  ({
    ...(operatorIdentity !== undefined ? { operatorIdentity } : {}),
    kind,
    group: ESO_GENERATORS,
    version: 'v1alpha1',
    resource,
    namespaced: true,
    lookup: 'get',
    readAsTargetOnly: true,
    references: secrets.map((at) => ({ path: `spec.${at}.name`, by: 'name', kind: { group: '', kind: 'Secret' }, follower: GENERATE }) as const),
  }) as const;

/**
 * cert-manager's ingress-shim makes a Certificate for an Ingress or a Gateway that names an
 * issuer in these annotations, owned by it, as cert-manager's own principal (whose writes
 * are the platform's): so the annotation is judged where it is written, as the Certificate's
 * issuerRef would be (its TLS Secret is the Ingress's or the listener's, judged already).
 */
const ISSUER_ANNOTATIONS = {
  path: 'metadata.annotations',
  by: 'issuer-annotations',
  follower: "cert-manager's ingress-shim makes a Certificate that the issuer signs, for the object's hosts",
} as const;

/**
 * The rows, in the order the install renders them. `as const` keeps each row's `kind` a
 * literal: the union of the stamped kinds' names is derived below, so a new stamped row
 * makes the compiler ask for its API client binding.
 */
export const KIND_TABLE = [
  {
    kind: 'Pod',
    group: '',
    version: 'v1',
    resource: 'pods',
    namespaced: true,
    door: 'object',
    readsByName: ['persistentvolumeclaims', 'secrets', 'configmaps', 'resourceclaims', 'resourceclaimtemplates'],
    // status writes may change metadata too; ephemeralcontainers adds containers (kubectl debug).
    subresources: {
      ephemeralcontainers: 'object',
      status: 'object',
      resize: 'object',
      eviction: 'pod-by-name',
      binding: 'pod-by-name',
      exec: 'connect',
      attach: 'connect',
      portforward: 'connect',
      proxy: 'connect',
    },
    stamps: { ownerReference: true, activeDeadline: true, expiresAt: true },
    lookup: 'cache',
    reaped: true,
    audited: { getsOne: true, judgesContent: true },
    references: [
      {
        path: 'spec.resourceClaims[].resourceClaimName',
        by: 'name',
        kind: { group: 'resource.k8s.io', kind: 'ResourceClaim' },
        follower: "the scheduler and the DRA driver give the pod the claim's allocated devices",
        immutable: true,
      },
      {
        path: 'spec.resourceClaims[].resourceClaimTemplateName',
        by: 'name',
        kind: { group: 'resource.k8s.io', kind: 'ResourceClaimTemplate' },
        follower: "the resourceclaim controller makes the pod's claim from whatever template stands under the name: its devices, their configuration and its metadata",
        immutable: true,
      },
    ],
  },
  {
    kind: 'Secret',
    group: '',
    version: 'v1',
    resource: 'secrets',
    namespaced: true,
    door: 'object',
    stamps: { ownerReference: true, activeDeadline: false, expiresAt: true },
    operatorMade: true,
    lookup: 'cache-optional',
    reaped: true,
    podInput: true,
    audited: {},
  },
  // A sandbox's scripts and settings, stamped as a Secret is: a pod runs what its ConfigMap
  // holds. Cached always (metadata only): a ConfigMap holds no credential by Kubernetes' contract.
  {
    kind: 'ConfigMap',
    group: '',
    version: 'v1',
    resource: 'configmaps',
    namespaced: true,
    door: 'object',
    stamps: { ownerReference: true, activeDeadline: false, expiresAt: true },
    lookup: 'cache',
    reaped: true,
    podInput: true,
    audited: {},
  },
  {
    kind: 'NetworkPolicy',
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'networkpolicies',
    namespaced: true,
    door: 'object',
    stamps: { ownerReference: true, activeDeadline: false, expiresAt: false },
    // Only the pods it applies to: its peers' selectors widen what they allow, never what another's pods accept.
    podSelector: { path: 'spec.podSelector', form: 'label-selector', unset: 'all', excludesRunners: true, platformSelectsAll: true },
    reaped: true,
    audited: {},
  },
  {
    kind: 'PersistentVolumeClaim',
    group: '',
    version: 'v1',
    resource: 'persistentvolumeclaims',
    namespaced: true,
    door: 'object',
    subresources: { status: 'object' },
    stamps: { ownerReference: false, activeDeadline: false, expiresAt: false },
    lookup: 'cache',
    reaped: true,
    podInput: true,
    readsByName: ['persistentvolumeclaims'],
    audited: { judgesContent: true },
  },
  // The legacy `bindings` resource binds the pod named by the Binding (and copies the
  // Binding's annotations onto it), like pods/binding.
  { kind: 'Binding', group: '', version: 'v1', resource: 'bindings', namespaced: true, door: 'pod-by-name' },
  // A TokenRequest hands out a token of the account it names. Its own writes are the default
  // row's (stamped, guarded); it is cached (metadata only) because its verified stamps say
  // whose credential it is: for a TokenRequest, a token Secret and every pod that runs as it.
  {
    kind: 'ServiceAccount',
    group: '',
    version: 'v1',
    resource: 'serviceaccounts',
    namespaced: true,
    subresources: { token: 'token-request' },
    lookup: 'cache',
    podInput: true,
    // What an operator that authenticates as the account reads with its own rights (External Secrets' Akeyless and Vault
    // providers read the token key of each Secret it lists). Its imagePullSecrets are not: the ServiceAccount admission
    // plugin copies them into each pod that runs as it before Deed sees the pod, which judges them as its own.
    references: [
      { path: 'secrets[].name', by: 'name', kind: { group: '', kind: 'Secret' }, follower: "an operator that authenticates as the account (External Secrets' Akeyless and Vault providers) reads the token in the Secret with its own rights and sends it to its server" },
    ],
  },
  // Workloads: stamped (WORKLOAD_STAMPS above), with their templates.
  {
    kind: 'Deployment',
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    namespaced: true,
    door: 'workload',
    subresources: WITH_STATUS_AND_SCALE,
    stamps: WORKLOAD_STAMPS,
    templates: { pods: POD_TEMPLATE, claims: [], ownsRestartPolicy: false },
    podSelector: SELECTOR,
    lookup: 'cache',
  },
  {
    kind: 'ReplicaSet',
    group: 'apps',
    version: 'v1',
    resource: 'replicasets',
    namespaced: true,
    door: 'workload',
    subresources: WITH_STATUS_AND_SCALE,
    stamps: WORKLOAD_STAMPS,
    templates: { pods: POD_TEMPLATE, claims: [], ownsRestartPolicy: false },
    podSelector: SELECTOR,
    lookup: 'cache',
  },
  {
    kind: 'StatefulSet',
    group: 'apps',
    version: 'v1',
    resource: 'statefulsets',
    namespaced: true,
    door: 'workload',
    subresources: WITH_STATUS_AND_SCALE,
    stamps: WORKLOAD_STAMPS,
    templates: { pods: POD_TEMPLATE, claims: ['spec.volumeClaimTemplates'], ownsRestartPolicy: false },
    podSelector: SELECTOR,
    lookup: 'cache',
    // Its governing Service: the EndpointSlice controller publishes the hostname of each pod
    // whose subdomain is the Service's name, so whoever's Service stands under the name serves
    // the set's pods' stable DNS names (`db-0.db-hl`), and its pods' hostnames are the set's to
    // choose. Immutable; followed for as long as the set lives (a Service CREATE under the name is judged against it).
    references: [
      { path: 'spec.serviceName', by: 'name', kind: { group: '', kind: 'Service' }, follower: "the EndpointSlice controller publishes the Service's pods under the set's stable DNS names (<pod>.<service>)", immutable: true, mayNameAbsent: true },
    ],
    followsByName: ['services'],
  },
  {
    kind: 'DaemonSet',
    group: 'apps',
    version: 'v1',
    resource: 'daemonsets',
    namespaced: true,
    door: 'workload',
    subresources: WITH_STATUS,
    stamps: WORKLOAD_STAMPS,
    templates: { pods: POD_TEMPLATE, claims: [], ownsRestartPolicy: false },
    podSelector: SELECTOR,
    lookup: 'cache',
  },
  {
    kind: 'Job',
    group: 'batch',
    version: 'v1',
    resource: 'jobs',
    namespaced: true,
    door: 'workload',
    subresources: WITH_STATUS,
    stamps: { ...WORKLOAD_STAMPS, ownerReference: true },
    templates: { pods: POD_TEMPLATE, claims: [], ownsRestartPolicy: true },
    podSelector: { ...SELECTOR, onlyWhen: 'spec.manualSelector' },
    lookup: 'cache',
    // The cronjob controller takes every Job of its namespace whose controller reference carries
    // its name, whatever the kind, and deletes the finished ones past its history limits: a Job
    // controlled by alpha's ConfigMap `train` is the Jobs of whoever's CronJob `train` stands.
    references: [
      {
        path: 'metadata.ownerReferences',
        by: 'controller-name',
        kind: { group: 'batch', kind: 'CronJob' },
        follower: 'the cronjob controller of a CronJob of that name counts the Job as its own and deletes it once finished, past its history limits',
        mayNameAbsent: true,
      },
    ],
    followsByName: ['cronjobs'],
  },
  {
    kind: 'CronJob',
    group: 'batch',
    version: 'v1',
    resource: 'cronjobs',
    namespaced: true,
    door: 'workload',
    subresources: WITH_STATUS,
    stamps: WORKLOAD_STAMPS,
    templates: { pods: ['spec.jobTemplate.spec.template'], claims: [], ownsRestartPolicy: true },
    podSelector: { ...SELECTOR, path: 'spec.jobTemplate.spec.selector', onlyWhen: 'spec.jobTemplate.spec.manualSelector' },
    lookup: 'cache',
  },
  {
    kind: 'ReplicationController',
    group: '',
    version: 'v1',
    resource: 'replicationcontrollers',
    namespaced: true,
    door: 'workload',
    subresources: WITH_STATUS_AND_SCALE,
    stamps: WORKLOAD_STAMPS,
    templates: { pods: POD_TEMPLATE, claims: [], ownsRestartPolicy: false },
    // A plain map, defaulted from the template's labels when empty.
    podSelector: { path: 'spec.selector', form: 'map', unset: 'all' },
    lookup: 'cache',
  },
  // A PodTemplate is not stamped: no controller makes anything of it by itself.
  { kind: 'PodTemplate', group: '', version: 'v1', resource: 'podtemplates', namespaced: true, door: 'workload', templates: { pods: ['template'], claims: [], ownsRestartPolicy: false } },
  // A run lease (docs/operations.md, "Run leases"): stamped for the environment that creates
  // it, so that its renewals and its delete are guarded to that environment, and an object
  // may name it only when it is its own environment's (looked up at that object's CREATE).
  // No owner reference: the platform's control plane may hold it, and a runner's restart
  // must not end its runs; no deadline: its renewals say how long the run lives.
  {
    kind: 'Lease',
    group: 'coordination.k8s.io',
    version: 'v1',
    resource: 'leases',
    namespaced: true,
    door: 'object',
    stamps: { ownerReference: false, activeDeadline: false, expiresAt: false },
    lookup: 'get',
    runLease: true,
  },
  // A rule for a CRD that is not installed matches nothing.
  // Its status names the content a restore reads (status.boundVolumeSnapshotContentName): status writes come through the same door.
  { kind: 'VolumeSnapshot', group: SNAPSHOT_GROUP, version: 'v1', resource: 'volumesnapshots', namespaced: true, door: 'snapshot', subresources: { status: 'snapshot' }, lookup: 'get' },
  // Kinds Deed does not review, named so that `deed review` addresses them as the API server does.
  // Stamped by the default row; its selector is a plain map, and without one its endpoints are someone else's to manage.
  {
    kind: 'Service',
    group: '',
    version: 'v1',
    resource: 'services',
    namespaced: true,
    subresources: { proxy: 'service-proxy' },
    podSelector: { path: 'spec.selector', form: 'map', unset: 'none' },
    hostnames: DNS_ANNOTATION_HOSTNAMES,
    // Read (metadata only) when an Ingress, an Endpoints or an EndpointSlice names one.
    lookup: 'get',
  },
  // Stamped by the default row; it holds up evictions (node drains) of the pods it selects. A null selector selects none.
  { kind: 'PodDisruptionBudget', group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', namespaced: true, podSelector: { path: 'spec.selector', form: 'label-selector', unset: 'none', excludesRunners: true } },
  // A Service's endpoints by the Service's own name: the endpointslice-mirroring controller
  // copies a selectorless Service's Endpoints into the slices kube-proxy routes it by.
  {
    kind: 'Endpoints',
    group: '',
    version: 'v1',
    resource: 'endpoints',
    namespaced: true,
    references: [{ path: 'metadata.name', by: 'name', kind: { group: '', kind: 'Service' }, follower: 'kube-proxy, through the endpointslice-mirroring controller, sends the Service\'s traffic to its addresses', changes: true }],

    followsByName: ['services'],
  },
  {
    kind: 'EndpointSlice',
    group: 'discovery.k8s.io',
    version: 'v1',
    resource: 'endpointslices',
    namespaced: true,
    references: [{ path: 'metadata.labels', by: 'label', label: 'kubernetes.io/service-name', kind: { group: '', kind: 'Service' }, follower: "kube-proxy sends the Service's traffic to its endpoints", changes: true }],

    followsByName: ['services'],
  },
  // Dynamic resource allocation: a pod shares the devices of the claims it names; the
  // resourceclaim controller makes claims from a template's spec.metadata and spec.spec.
  { kind: 'ResourceClaim', group: 'resource.k8s.io', version: 'v1', resource: 'resourceclaims', namespaced: true, lookup: 'get', podInput: true, controllerMade: true },
  // Read (metadata only) when a pod names one: its claim is made from it, devices, configuration and metadata.
  { kind: 'ResourceClaimTemplate', group: 'resource.k8s.io', version: 'v1', resource: 'resourceclaimtemplates', namespaced: true, lookup: 'get', metadataTemplates: ['spec.metadata'], podInput: true },
  {
    kind: 'HorizontalPodAutoscaler',
    group: 'autoscaling',
    version: 'v2',
    resource: 'horizontalpodautoscalers',
    namespaced: true,
    references: [{ path: 'spec.scaleTargetRef', by: 'object-ref', follower: "the horizontal-pod-autoscaler controller writes the target's /scale", changes: true }],

    followsByName: ['deployments', 'statefulsets', 'replicasets', 'replicationcontrollers'],
  },
  // The autoscalers and rollout controllers clusters commonly run (custom resources, installed or
  // not): each acts on the workload it names, as the HPA controller does. The rows add no webhook
  // rule and no read of their own (the default row reviews them; their targets are workloads).
  {
    kind: 'VerticalPodAutoscaler',
    group: 'autoscaling.k8s.io',
    version: 'v1',
    resource: 'verticalpodautoscalers',
    namespaced: true,
    references: [{ path: 'spec.targetRef', by: 'object-ref', follower: "the VPA updater evicts the target's pods and the VPA admission controller rewrites their resource requests", changes: true }],
  },
  {
    kind: 'ScaledObject',
    group: 'keda.sh',
    version: 'v1alpha1',
    resource: 'scaledobjects',
    namespaced: true,
    // KEDA takes a target without apiVersion as of group apps, one without kind as a Deployment.
    references: [{ path: 'spec.scaleTargetRef', by: 'object-ref', kind: { group: 'apps', kind: 'Deployment' }, follower: 'the KEDA operator scales the target, to zero when idle, itself and through the HPA it creates', changes: true }, KEDA_AUTHENTICATION],
  },
  {
    kind: 'ScaledJob',
    group: 'keda.sh',
    version: 'v1alpha1',
    resource: 'scaledjobs',
    namespaced: true,
    references: [KEDA_AUTHENTICATION],
    podSpecs: ['spec.jobTargetRef.template.spec'],
    operatorPods: { operator: 'the KEDA operator makes its Jobs', instead: 'a Job, or a ScaledObject that scales your own Deployment' },
  },
  // Read (metadata only) when a trigger names one: its stamps say whose credentials it hands the operator.
  {
    kind: 'TriggerAuthentication',
    group: 'keda.sh',
    version: 'v1alpha1',
    resource: 'triggerauthentications',
    namespaced: true,
    lookup: 'get',
    readAsTargetOnly: true,
    // Kubernetes auth to Vault without a service account of the namespace sends the KEDA operator's own token (a file of its pod) to `address`.
    operatorIdentity: [
      {
        within: 'spec.hashiCorpVault',
        when: { path: 'authentication', values: ['kubernetes'] },
        unless: ['credential.serviceAccountName'],
        identity: "the KEDA operator would send its own service account token (credential.serviceAccount, a file of its pod, by default its token) to the Vault address",
        fix: 'name a service account of your namespace in credential.serviceAccountName',
      },
      // Without a token of the writer's, the Vault client takes the operator's own (VAULT_TOKEN in its environment).
      { within: 'spec.hashiCorpVault', when: { path: 'authentication', values: ['token'] }, unless: ['credential.token'], identity: "the KEDA operator would send its own Vault token (its environment's) to the Vault address", fix: 'give the token in credential.token' },
      // KEDA's own cloud identity: the gcp and azure-workload tokens go to the trigger's server as bearer tokens; the secret managers fetch with it.
      { within: 'spec.podIdentity', when: { path: 'provider', values: ['gcp', 'azure-workload'] }, identity: "the KEDA operator would hand its own cloud token to the trigger's scaler, which sends it to the trigger's server", fix: 'use a Secret of your own (secretTargetRef)' },
      ...['awsSecretManager', 'azureKeyVault', 'gcpSecretManager'].map((at) => ({
        within: `spec.${at}.podIdentity`,
        when: { path: 'provider', values: ['aws', 'aws-eks', 'aws-kiam', 'azure-workload', 'gcp'] },
        identity: "the KEDA operator would fetch the secrets with its own cloud identity and hand them to the trigger's scaler",
        fix: `sign in with credentials of your own (${at}.credentials)`,
      })),
    ],
    references: [
      { path: 'spec.secretTargetRef[].name', by: 'name', kind: { group: '', kind: 'Secret' }, follower: "the KEDA operator reads the Secret's key and hands it to the scaler of every trigger that names the TriggerAuthentication" },
      { path: 'spec.configMapTargetRef[].name', by: 'name', kind: { group: '', kind: 'ConfigMap' }, follower: "the KEDA operator reads the ConfigMap's key and hands it to the scaler of every trigger that names the TriggerAuthentication" },
      // An OAuth2 client secret: sent, with the trigger's client id, to the tokenUrl the TriggerAuthentication gives.
      { path: 'spec.oauth2.clientSecret.valueFrom.secretKeyRef.name', by: 'name', kind: { group: '', kind: 'Secret' }, follower: "the KEDA operator reads the Secret's key and sends it as the OAuth2 client secret to the TriggerAuthentication's tokenUrl" },
      // The cloud secret managers' credentials: the operator signs in with them and fetches what the TriggerAuthentication asks.
      ...['azureKeyVault.credentials.clientSecret', 'gcpSecretManager.credentials.clientSecret', 'awsSecretManager.credentials.accessKey', 'awsSecretManager.credentials.accessSecretKey', 'awsSecretManager.credentials.accessToken'].map(
        (at) => ({ path: `spec.${at}.valueFrom.secretKeyRef.name`, by: 'name', kind: { group: '', kind: 'Secret' }, follower: "the KEDA operator signs in to the secret manager with the Secret's credentials and hands what it fetches to the trigger's scaler" }) as const,
      ),
    ],
  },
  // External Secrets Operator (custom resources, installed or not).
  {
    kind: 'ExternalSecret',
    group: EXTERNAL_SECRETS,
    version: 'v1',
    resource: 'externalsecrets',
    namespaced: true,
    // Read (metadata only) as the controlling owner of the Secret the operator makes for it.
    lookup: 'get',
    // Copied onto its target Secret by the operator.
    metadataTemplates: ['spec.target.template.metadata'],
    // Orphan: the operator writes the target with no owner reference (Owner, the default, makes the ExternalSecret its controller).
    unownedOutputWhen: { path: 'spec.target.creationPolicy', values: ['Orphan'], output: 'the External Secrets operator would write its target Secret', fix: 'leave creationPolicy unset (Owner, the default) so the Secret is stamped as your environment\'s' },
    references: [
      { path: 'spec.secretStoreRef', by: 'local-ref', kind: ESO_STORE, follower: ESO_FETCH },
      { path: 'spec.data[].sourceRef.storeRef', by: 'local-ref', kind: ESO_STORE, follower: ESO_FETCH },
      { path: 'spec.dataFrom[].sourceRef.storeRef', by: 'local-ref', kind: ESO_STORE, follower: ESO_FETCH },
      ...['spec.dataFrom[]', 'spec.data[]'].map((at) => ({ path: `${at}.sourceRef.generatorRef`, by: 'object-ref', follower: ESO_RUN_GENERATOR }) as const),
      // Created by the operator when absent (the ordinary case); one that exists would be written over, or merged into.
      // A template's sources: the operator reads them and writes what they hold into the target.
      { path: 'spec.target.template.templateFrom[].secret.name', by: 'name', kind: { group: '', kind: 'Secret' }, follower: "the External Secrets operator reads the Secret and writes what it holds into the ExternalSecret's target" },
      { path: 'spec.target.template.templateFrom[].configMap.name', by: 'name', kind: { group: '', kind: 'ConfigMap' }, follower: "the External Secrets operator reads the ConfigMap and writes what it holds into the ExternalSecret's target" },
      {
        path: 'spec.target.name',
        by: 'name',
        kind: { group: '', kind: 'Secret' },
        writes: true,
        mergesWhen: { path: 'spec.target.creationPolicy', values: ['Merge'] },
        orOwnName: true,
        follower: 'the External Secrets operator writes what it fetches into the Secret (without target.name, the one named as the ExternalSecret)',
      },
    ],
  },
  {
    kind: 'PushSecret',
    group: EXTERNAL_SECRETS,
    version: 'v1alpha1',
    resource: 'pushsecrets',
    namespaced: true,
    references: [
      { path: 'spec.secretStoreRefs[]', by: 'local-ref', kind: ESO_STORE, follower: "the External Secrets operator pushes the Secret's data to the store, with the store's credentials" },
      { path: 'spec.secretStoreRefs[].labelSelector', by: 'name', kind: ESO_STORE, selects: true, follower: "the External Secrets operator pushes the Secret's data to every store the selector chooses, with their credentials" },
      { path: 'spec.dataTo[].storeRef', by: 'local-ref', kind: ESO_STORE, follower: "the External Secrets operator pushes the Secret's data to the store, with the store's credentials" },
      { path: 'spec.selector.secret.name', by: 'name', kind: { group: '', kind: 'Secret' }, follower: "the External Secrets operator reads the Secret and pushes its data to the PushSecret's stores" },
      { path: 'spec.selector.secret.selector', by: 'name', kind: { group: '', kind: 'Secret' }, selects: true, follower: "the External Secrets operator reads every Secret the selector chooses and pushes its data to the PushSecret's stores" },
      { path: 'spec.selector.generatorRef', by: 'object-ref', follower: "the External Secrets operator runs the generator, with the credentials it names, and pushes what it generates to the PushSecret's stores" },
    ],
  },
  // Read (metadata only) when an ExternalSecret or a PushSecret names one: its stamps say whose credentials it holds.
  { kind: 'SecretStore', group: EXTERNAL_SECRETS, version: 'v1', resource: 'secretstores', namespaced: true, lookup: 'get', readAsTargetOnly: true, references: [...ESO_STORE_SECRETS, ESO_UNLISTED_PROVIDER], operatorIdentity: ESO_STORE_IDENTITY },
  generatorRow('ACRAccessToken', 'acraccesstokens', ['auth.servicePrincipal.secretRef.clientId', 'auth.servicePrincipal.secretRef.clientSecret'], [
    { within: 'spec.auth.managedIdentity', identity: "the External Secrets controller would sign in to the registry with its own (or its node's) managed identity", fix: 'use auth.servicePrincipal with a Secret of your own, or auth.workloadIdentity with a serviceAccountRef' },
    { within: 'spec.auth.workloadIdentity', unless: ['serviceAccountRef'], identity: 'the External Secrets controller would sign in to the registry with its own federated token', fix: 'name a service account of your own (serviceAccountRef)' },
  ]),
  generatorRow('ECRAuthorizationToken', 'ecrauthorizationtokens', AWS_AUTH_SECRETS, [esoAwsIdentity('spec')]),
  generatorRow('STSSessionToken', 'stssessiontokens', AWS_AUTH_SECRETS, [esoAwsIdentity('spec')]),
  generatorRow('GCRAccessToken', 'gcraccesstokens', ['auth.secretRef.secretAccessKeySecretRef'], [
    { within: 'spec', unless: GCP_OWN_CREDENTIALS, identity: 'the External Secrets controller would sign in to the registry with its own Google credentials', fix: 'name a service account (auth.workloadIdentity) or a key Secret (auth.secretRef) of your own' },
  ]),
  generatorRow('GithubAccessToken', 'githubaccesstokens', ['auth.privateKey.secretRef']),
  generatorRow('GitlabDeployToken', 'gitlabdeploytokens', ['auth.token.secretRef']),
  generatorRow('VaultDynamicSecret', 'vaultdynamicsecrets', VAULT_AUTH_SECRETS.map((at) => `provider.${at}`), esoVaultIdentity('spec.provider')),
  generatorRow('Webhook', 'webhooks', WEBHOOK_SECRETS),
  generatorRow('Grafana', 'grafanas', ['auth.token', 'auth.basic.password']),
  generatorRow('MFA', 'mfas', ['secret']),
  generatorRow('QuayAccessToken', 'quayaccesstokens'),
  generatorRow('CloudsmithAccessToken', 'cloudsmithaccesstokens'),
  // They hold no credentials: not read, and a chart may create them after the ExternalSecret.
  ...(['Password', 'UUID', 'SSHKey', 'Fake'] as const).map((kind) => ({ kind, group: ESO_GENERATORS, version: 'v1alpha1', resource: `${kind.toLowerCase()}s`, namespaced: true, asTarget: 'nothing' }) as const),
  // Cluster-scoped, the platform's; the operator resolves what it names in the ExternalSecret's namespace.
  { kind: 'ClusterGenerator', group: ESO_GENERATORS, version: 'v1alpha1', resource: 'clustergenerators', namespaced: false, asTarget: 'referrer-namespace' },
  // Cluster-scoped: the platform's.
  { kind: 'ClusterSecretStore', group: EXTERNAL_SECRETS, version: 'v1', resource: 'clustersecretstores', namespaced: false },
  // Cluster-scoped: the platform's.
  { kind: 'ClusterTriggerAuthentication', group: 'keda.sh', version: 'v1alpha1', resource: 'clustertriggerauthentications', namespaced: false },
  // Argo Rollouts' analysis and experiments: the controller runs a job metric's Job, and an
  // experiment's ReplicaSets, from pod templates they hold, and reads an argument's Secret.
  // Read (metadata only) when a Rollout's or an Experiment's analysis names one.
  { kind: 'AnalysisTemplate', group: 'argoproj.io', version: 'v1alpha1', resource: 'analysistemplates', namespaced: true, lookup: 'get', readAsTargetOnly: true, references: [ARGO_SECRET_ARGS, ARGO_DATADOG_SECRET], podSpecs: [ARGO_JOB_POD], operatorPods: ARGO_JOBS, operatorIdentity: ARGO_IDENTITY },
  { kind: 'AnalysisRun', group: 'argoproj.io', version: 'v1alpha1', resource: 'analysisruns', namespaced: true, references: [ARGO_SECRET_ARGS, ARGO_DATADOG_SECRET], podSpecs: [ARGO_JOB_POD], operatorPods: ARGO_JOBS, operatorIdentity: ARGO_IDENTITY },
  {
    kind: 'Experiment',
    group: 'argoproj.io',
    version: 'v1alpha1',
    resource: 'experiments',
    namespaced: true,
    references: [{ ...ARGO_SECRET_ARGS, path: 'spec.analyses[].args[].valueFrom.secretKeyRef.name' }, ...argoAnalyses(['spec.analyses[]'])],
    podSpecs: ['spec.templates[].template.spec'],
    operatorPods: { operator: 'the Argo Rollouts controller makes its ReplicaSets', instead: 'a Deployment' },
  },
  // Cluster-scoped, the platform's; the controller reads its arguments' Secrets in the AnalysisRun's namespace.
  { kind: 'ClusterAnalysisTemplate', group: 'argoproj.io', version: 'v1alpha1', resource: 'clusteranalysistemplates', namespaced: false, asTarget: 'referrer-namespace' },
  {
    kind: 'Rollout',
    group: 'argoproj.io',
    version: 'v1alpha1',
    resource: 'rollouts',
    namespaced: true,
    references: [
      { path: 'spec.workloadRef', by: 'object-ref', follower: "the Argo Rollouts controller runs the Deployment's pod template as the Rollout's and, with scaleDown, scales the Deployment to zero", changes: true },
      ...argoAnalyses([
        'spec.strategy.canary.analysis.templates[]',
        'spec.strategy.canary.steps[].analysis.templates[]',
        'spec.strategy.canary.steps[].experiment.analyses[]',
        'spec.strategy.blueGreen.prePromotionAnalysis.templates[]',
        'spec.strategy.blueGreen.postPromotionAnalysis.templates[]',
      ]),
    ],
    podSpecs: ['spec.template.spec'],
    operatorPods: { operator: 'the Argo Rollouts controller makes its ReplicaSets', instead: 'a Deployment' },
  },
  { kind: 'PersistentVolume', group: '', version: 'v1', resource: 'persistentvolumes', namespaced: false },
  { kind: 'Namespace', group: '', version: 'v1', resource: 'namespaces', namespaced: false },
  { kind: 'Node', group: '', version: 'v1', resource: 'nodes', namespaced: false },
  // Stamped by the default row, and the platform's in a shared namespace: one environment's
  // quota of `pods: 0` shuts every other out, its limit range caps their containers.
  { kind: 'ResourceQuota', group: '', version: 'v1', resource: 'resourcequotas', namespaced: true, namespaceWide: true },
  { kind: 'LimitRange', group: '', version: 'v1', resource: 'limitranges', namespaced: true, namespaceWide: true },
  {
    kind: 'Ingress',
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'ingresses',
    namespaced: true,
    hostnames: { paths: ['spec.rules[].host', 'spec.tls[].hosts[]'], follower: "the ingress controller would send its requests that this Ingress matches best to this Ingress's backends", dnsAnnotations: true },
    references: [
      { path: 'spec.defaultBackend.service.name', by: 'name', kind: { group: '', kind: 'Service' }, follower: 'the ingress controller publishes the Service on its routes' },
      { path: 'spec.defaultBackend.resource', by: 'object-ref', follower: 'the ingress controller publishes the object on its routes' },
      { path: 'spec.rules[].http.paths[].backend.service.name', by: 'name', kind: { group: '', kind: 'Service' }, follower: 'the ingress controller publishes the Service on its routes' },
      { path: 'spec.rules[].http.paths[].backend.resource', by: 'object-ref', follower: 'the ingress controller publishes the object on its routes' },
      { path: 'spec.tls[].secretName', by: 'name', kind: { group: '', kind: 'Secret' }, follower: "the ingress controller serves the Secret's certificate and key for its hosts", readsLive: true },
      ISSUER_ANNOTATIONS,
    ],
    // The Secrets it names for TLS, read as a pod's are (readsByName): a Secret CREATE is judged
    // against the cached Ingresses that name it, as against the pods; kept as facts (the names).
    lookup: 'cache',
    readsByName: ['secrets'],
    // Its Services (followsByName above): listed live at a Service's CREATE.
    followsByName: ['services'],
  },
  // Gateway API, the Ingress's successor (custom resources, installed or not: the rows add no
  // webhook rule, they say what the routes and Gateways name; a Gateway is read when a route names it).
  // A route's Services and parents, as an Ingress's Services (followsByName): listed live at the
  // CREATE of a Service, Gateway or ListenerSet, at whichever version the cluster serves, none
  // where the kind is not installed.
  { kind: 'HTTPRoute', group: GATEWAY_API, version: 'v1', resource: 'httproutes', namespaced: true, hostnames: ROUTE_HOSTNAMES, references: [...ROUTE_REFERENCES, ...ROUTE_MIRRORS, ...ROUTE_EXTERNAL_AUTH], followsByName: ROUTE_FOLLOWS, followsAcrossNamespaces: ROUTE_PARENTS, followsByGrant: ROUTE_BACKENDS },
  { kind: 'GRPCRoute', group: GATEWAY_API, version: 'v1', resource: 'grpcroutes', namespaced: true, hostnames: ROUTE_HOSTNAMES, references: [...ROUTE_REFERENCES, ...ROUTE_MIRRORS], followsByName: ROUTE_FOLLOWS, followsAcrossNamespaces: ROUTE_PARENTS, followsByGrant: ROUTE_BACKENDS },
  { kind: 'TLSRoute', group: GATEWAY_API, version: 'v1alpha2', resource: 'tlsroutes', namespaced: true, hostnames: ROUTE_HOSTNAMES, references: ROUTE_REFERENCES, followsByName: ROUTE_FOLLOWS, followsAcrossNamespaces: ROUTE_PARENTS, followsByGrant: ROUTE_BACKENDS },
  { kind: 'TCPRoute', group: GATEWAY_API, version: 'v1alpha2', resource: 'tcproutes', namespaced: true, hostnames: DNS_ANNOTATION_HOSTNAMES, references: ROUTE_REFERENCES, followsByName: ROUTE_FOLLOWS, followsAcrossNamespaces: ROUTE_PARENTS, followsByGrant: ROUTE_BACKENDS },
  { kind: 'UDPRoute', group: GATEWAY_API, version: 'v1alpha2', resource: 'udproutes', namespaced: true, hostnames: DNS_ANNOTATION_HOSTNAMES, references: ROUTE_REFERENCES, followsByName: ROUTE_FOLLOWS, followsAcrossNamespaces: ROUTE_PARENTS, followsByGrant: ROUTE_BACKENDS },
  {
    kind: 'Gateway',
    group: GATEWAY_API,
    version: 'v1',
    resource: 'gateways',
    namespaced: true,
    hostnames: LISTENER_HOSTNAMES,
    // Cached: read when a route names one as its parent (its stamps say whose listeners they
    // are), and what it reads by name for as long as it lives (its listeners' and backends'
    // certificates, its infrastructure's ConfigMap) is held for it against other environments'
    // CREATEs (readsByName), as an Ingress's TLS Secrets are. A cluster without the Gateway API
    // serves none: the store is empty, and looked for again (reflector.ts, mayBeUnserved).
    lookup: 'cache',
    readAsTargetOnly: true,
    readsByName: ['secrets', 'configmaps'],
    references: [
      LISTENER_CERTIFICATES,
      // Where a Gateway's TLS client certificate for its backends stands (v1.4, and the experimental field before it).
      { path: 'spec.tls.backend.clientCertificateRef', by: 'gateway-ref', kind: { group: '', kind: 'Secret' }, follower: "the gateway controller presents the Secret's certificate and key to backends as its own", readsLive: true },
      { path: 'spec.backendTLS.clientCertificateRef', by: 'gateway-ref', kind: { group: '', kind: 'Secret' }, follower: "the gateway controller presents the Secret's certificate and key to backends as its own", readsLive: true },
      // The CA certificates it authenticates clients' certificates by (v1.4's frontend validation, default and per port, and the experimental listener field before it).
      ...GATEWAY_CLIENT_CAS.map((path) => ({ path, by: 'gateway-ref', kind: { group: '', kind: 'ConfigMap' }, follower: "the gateway controller admits clients whose certificates the ConfigMap's CA certificates sign", readsLive: true }) as const),
      // Its infrastructure's parameters (v1.3): Istio's ConfigMap of overlays onto the proxy
      // Deployment (its image, containers, volumes), an implementation's own kind (Envoy
      // Gateway's EnvoyProxy), of the Gateway's namespace.
      { path: 'spec.infrastructure.parametersRef', by: 'local-ref', kind: { group: '', kind: 'ConfigMap' }, follower: "the gateway controller builds the Gateway's proxy Deployment and Service from the parameters, and the proxy serves its listeners' certificates and traffic", readsLive: true },
      ISSUER_ANNOTATIONS,
    ],
  },
  { kind: 'ListenerSet', group: GATEWAY_API, version: 'v1', resource: 'listenersets', ...LISTENER_SET },
  { kind: 'XListenerSet', group: GATEWAY_API_EXPERIMENTAL, version: 'v1alpha1', resource: 'xlistenersets', ...LISTENER_SET },
  // Its target Service is connected to with its TLS settings (CA, hostname), by every route's gateway.
  {
    kind: 'BackendTLSPolicy',
    group: GATEWAY_API,
    version: 'v1',
    resource: 'backendtlspolicies',
    namespaced: true,
    // Cached, as a Gateway is: the CA ConfigMaps it names are held for it (readsByName).
    lookup: 'cache',
    readAsTargetOnly: true,
    readsByName: ['configmaps'],
    references: [
      { path: 'spec.targetRefs[]', by: 'gateway-ref', kind: GATEWAY_SERVICE, follower: "the gateway controller connects to the Service with the policy's TLS settings, for every route that sends traffic to it", changes: true },
      // The CA certificates the backend's certificate is verified by, whatever stands under the name for as long as the policy lives.
      { path: 'spec.validation.caCertificateRefs[]', by: 'gateway-ref', kind: { group: '', kind: 'ConfigMap' }, follower: "the gateway controller trusts the ConfigMap's CA certificates to verify the Service's certificate", readsLive: true },
    ],
  },
  // cert-manager (custom resources, installed or not). Its controller acts on what a
  // Certificate or a CertificateRequest names, for whoever wrote it: the issuer signs (its
  // approver approves every request), and a Certificate's key pair is written into its Secret.
  {
    kind: 'Certificate',
    group: CERT_MANAGER,
    version: 'v1',
    resource: 'certificates',
    namespaced: true,
    // Not controllerMade, as an Order is: cert-manager's ingress-shim copies its Ingress's labels
    // onto the Certificate on every sync, Deed's among them, which would break stamps Deed wrote
    // for it (reviewer-107 F1); its Orders are followed to the Ingress no further than one owner.
    // An ACME CA issues for a name whoever answers its challenge there (cert-manager's solver route on a shared Gateway).
    hostnames: { paths: ['spec.dnsNames[]', 'spec.commonName'], follower: "cert-manager would have a certificate for it issued into this Certificate's Secret (an ACME CA asks only that a challenge be answered on it, which cert-manager's solver does)" },
    // Read (metadata only) as the controlling owner of what cert-manager makes for it: its next
    // private key, and its Secret with --enable-certificate-owner-ref.
    lookup: 'get',
    // Copied onto its Secret's labels and annotations by cert-manager.
    metadataTemplates: ['spec.secretTemplate'],
    references: [
      { path: 'spec.issuerRef', by: 'local-ref', kind: { group: CERT_MANAGER, kind: 'Issuer' }, follower: "cert-manager has the issuer sign the Certificate's key, and the Certificate's holder can then pass as whoever the issuer's certificates vouch for" },
      // Created by cert-manager when absent (the ordinary case); one that exists would be overwritten with this Certificate's key pair.
      { path: 'spec.secretName', by: 'name', kind: { group: '', kind: 'Secret' }, writes: true, follower: 'cert-manager writes the issued certificate and private key into the Secret, overwriting what it holds' },
      ...['jks', 'pkcs12'].map(
        (store) => ({ path: `spec.keystores.${store}.passwordSecretRef.name`, by: 'name', kind: { group: '', kind: 'Secret' }, follower: "cert-manager encrypts the keystore it writes into the Certificate's Secret with the Secret's password, which whoever reads that Secret can then guess at offline" }) as const,
      ),
    ],
  },
  {
    kind: 'CertificateRequest',
    group: CERT_MANAGER,
    version: 'v1',
    resource: 'certificaterequests',
    namespaced: true,
    // Read (metadata only) as the controlling owner of the ACME Order cert-manager makes for it.
    lookup: 'get',
    references: [{ path: 'spec.issuerRef', by: 'local-ref', kind: { group: CERT_MANAGER, kind: 'Issuer' }, follower: "cert-manager approves the request and has the issuer sign it, for whoever holds the request's key" }],
  },
  // cert-manager makes these for a CertificateRequest of an ACME issuer; its aggregated `edit`
  // role lets a tenant write them too (reviewer-103 F2), with a key authorization of its own
  // ACME account and a solver of its choosing (the shared Gateway, the platform's DNS zone).
  // cert-manager's own Order for a CertificateRequest is judged as the request's environment's
  // (controllerMade): a request's names stand in its CSR, which nothing reads, so beta's own
  // CertificateRequest for alpha's name through an ACME issuer is refused at its Order
  // (reviewer-102 F2).
  {
    kind: 'Order',
    group: ACME,
    version: 'v1',
    resource: 'orders',
    namespaced: true,
    controllerMade: true,
    hostnames: { paths: ['spec.dnsNames[]', 'spec.commonName'], follower: "cert-manager would have the ACME CA issue a certificate for it to the Order's account" },
  },
  {
    kind: 'Challenge',
    group: ACME,
    version: 'v1',
    resource: 'challenges',
    namespaced: true,
    hostnames: { paths: ['spec.dnsName'], wildcardWhen: 'spec.wildcard', follower: "cert-manager would answer the ACME CA's challenge for it (a route on the solver's Gateway or Ingress, a TXT record in the solver's DNS zone), and the CA would issue it to whoever holds the challenge's account" },
  },
  // Ingress controllers' and meshes' own routing kinds name hostnames as an Ingress does
  // (reviewer-101 F3): a tenant's HTTPProxy or VirtualService for alpha's name takes alpha's
  // requests on the shared proxy, or every mesh pod's calls to it. Contour's wildcard fqdn and
  // Istio's `*` host (every name) are wildcards (policy/hostnames.ts). An Istio Gateway's
  // `namespace/host` servers are the platform's, as a Gateway's addresses are. A ServiceEntry
  // is not: naming an outside host is how a mesh that allows only known hosts lets a pod call
  // it, and only its endpoints, not its hosts, say whether it answers for the name instead.
  {
    kind: 'HTTPProxy',
    group: CONTOUR,
    version: 'v1',
    resource: 'httpproxies',
    namespaced: true,
    hostnames: { paths: ['spec.virtualhost.fqdn'], follower: "Contour would send the requests for it to this HTTPProxy's routes, and those of the proxies it includes", dnsAnnotations: true },
  },
  {
    kind: 'VirtualService',
    group: ISTIO_NETWORKING,
    version: 'v1',
    resource: 'virtualservices',
    namespaced: true,
    hostnames: { paths: ['spec.hosts[]'], follower: "Istio's gateways and sidecars would send the requests for it that this VirtualService matches to its destinations", dnsAnnotations: true },
  },
  // external-dns's CRD source: each endpoint a DNS record it writes, to targets of the writer's
  // choosing, whatever serves the name (reviewer-101 F3).
  {
    kind: 'DNSEndpoint',
    group: EXTERNAL_DNS,
    version: 'v1alpha1',
    resource: 'dnsendpoints',
    namespaced: true,
    hostnames: { paths: ['spec.endpoints[].dnsName'], dnsRecords: { recordType: 'recordType' }, follower: "external-dns would write the DNS record this DNSEndpoint lists for it, pointing at the targets it names" },
  },
  // Read (metadata only) when a Certificate, a CertificateRequest or an annotation names one:
  // its stamps say whose CA (or account) signs. As an owner it stays its operator's.
  // Its ACME HTTP01 solver's pod template goes into the solver pods cert-manager makes.
  { kind: 'Issuer', group: CERT_MANAGER, version: 'v1', resource: 'issuers', namespaced: true, lookup: 'get', readAsTargetOnly: true, references: ISSUER_REFERENCES,
    unownedOutputWhen: ACME_ACCOUNT_KEY, podSpecs: ['spec.acme.solvers[].http01.ingress.podTemplate.spec', 'spec.acme.solvers[].http01.gatewayHTTPRoute.podTemplate.spec'] },
  // Cluster-scoped: the platform's (Deed stamps no cluster-scoped object), so a reference to one is admitted unread.
  { kind: 'ClusterIssuer', group: CERT_MANAGER, version: 'v1', resource: 'clusterissuers', namespaced: false },
  { kind: 'Role', group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', namespaced: true },
  { kind: 'RoleBinding', group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', namespaced: true },
  { kind: 'ClusterRole', group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespaced: false },
  { kind: 'ClusterRoleBinding', group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', namespaced: false },
  // Cluster-scoped kinds a repository's manifests hold (a chart's PriorityClass, its webhook
  // configurations and admission policies): named so that `deed review` addresses them as the
  // API server does, without a namespace, and says no webhook judges them (none is namespaced).
  { kind: 'PriorityClass', group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses', namespaced: false },
  { kind: 'StorageClass', group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses', namespaced: false },
  { kind: 'CSIDriver', group: 'storage.k8s.io', version: 'v1', resource: 'csidrivers', namespaced: false },
  { kind: 'VolumeAttachment', group: 'storage.k8s.io', version: 'v1', resource: 'volumeattachments', namespaced: false },
  { kind: 'IngressClass', group: 'networking.k8s.io', version: 'v1', resource: 'ingressclasses', namespaced: false },
  { kind: 'RuntimeClass', group: 'node.k8s.io', version: 'v1', resource: 'runtimeclasses', namespaced: false },
  { kind: 'ValidatingWebhookConfiguration', group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', namespaced: false },
  { kind: 'MutatingWebhookConfiguration', group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations', namespaced: false },
  { kind: 'ValidatingAdmissionPolicy', group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicies', namespaced: false },
  { kind: 'ValidatingAdmissionPolicyBinding', group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicybindings', namespaced: false },
  { kind: 'MutatingAdmissionPolicy', group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingadmissionpolicies', namespaced: false },
  { kind: 'MutatingAdmissionPolicyBinding', group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingadmissionpolicybindings', namespaced: false },
  { kind: 'CustomResourceDefinition', group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', namespaced: false },
  { kind: 'APIService', group: 'apiregistration.k8s.io', version: 'v1', resource: 'apiservices', namespaced: false },
  { kind: 'CertificateSigningRequest', group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests', namespaced: false },
  { kind: 'FlowSchema', group: 'flowcontrol.apiserver.k8s.io', version: 'v1', resource: 'flowschemas', namespaced: false },
  { kind: 'PriorityLevelConfiguration', group: 'flowcontrol.apiserver.k8s.io', version: 'v1', resource: 'prioritylevelconfigurations', namespaced: false },
  { kind: 'VolumeSnapshotClass', group: SNAPSHOT_GROUP, version: 'v1', resource: 'volumesnapshotclasses', namespaced: false },
] as const satisfies readonly KindRow[];

type Row = (typeof KIND_TABLE)[number];
/** The names of the kinds Deed stamps: the metrics' kinds. */
export type StampedKindName = Extract<Row, { stamps: StampFacts }>['kind'];
/** The stamped kinds whose door is the object itself (Pod, Secret, ConfigMap, NetworkPolicy, PersistentVolumeClaim). */
export type SandboxKindName = Extract<Row, { stamps: StampFacts; door: 'object' }>['kind'];
/** The kinds the reaper lists, gets and deletes, and the audit lists. */
export type ReapedKindName = Extract<Row, { reaped: true }>['kind'];
/** The resources the webhook reads for a decision. */
export type LookupResource = Extract<Row, { lookup: string }>['resource'];
/** Those it keeps in its lookup cache (list and watch). */
export type CachedLookupResource = Extract<Row, { lookup: 'cache' | 'cache-optional' }>['resource'];

/** A stamped kind, as the webhooks and readers of stored objects use it. */
export interface SandboxKind extends StampRow {
  kind: SandboxKindName;
}

/** A kind whose controller makes pods or claims from its templates. */
export interface WorkloadKind {
  kind: string;
  /** Field paths of its PodTemplateSpecs ({metadata, spec}). */
  podTemplates: readonly string[];
  /** Field paths of its lists of PersistentVolumeClaim templates. */
  claimTemplates: readonly string[];
  /** The kind, not the platform, decides its pods' restartPolicy (a Job's are Never or OnFailure). */
  ownsRestartPolicy: boolean;
}

const ROWS: readonly KindRow[] = KIND_TABLE;
const key = (group: string, resource: string) => `${group}/${resource}`;
const BY_RESOURCE: ReadonlyMap<string, KindRow> = new Map(ROWS.map((r) => [key(r.group, r.resource), r]));
const BY_GROUP_KIND: ReadonlyMap<string, KindRow> = new Map(ROWS.map((r) => [key(r.group, r.kind), r]));

const SANDBOX: ReadonlyMap<string, SandboxKind> = new Map(
  ROWS.filter((r) => r.stamps !== undefined && r.door === 'object').map((r) => [key(r.group, r.resource), { kind: r.kind as SandboxKindName, ...r.stamps! }]),
);
const STAMPED: ReadonlyMap<string, StampRow> = new Map(ROWS.filter((r) => r.stamps !== undefined).map((r) => [r.kind, { kind: r.kind, ...r.stamps! }]));
const WORKLOADS: ReadonlyMap<string, WorkloadKind> = new Map(
  ROWS.filter((r) => r.templates !== undefined).map((r) => [
    key(r.group, r.resource),
    { kind: r.kind, podTemplates: r.templates!.pods, claimTemplates: r.templates!.claims, ownsRestartPolicy: r.templates!.ownsRestartPolicy },
  ]),
);

/** Every row, in table order. */
export function kindRows(): readonly KindRow[] {
  return ROWS;
}

/** The row of a resource (group and plural), if Deed knows it. */
export function kindRow(resource: Pick<GroupVersionResource, 'group' | 'resource'>): KindRow | undefined {
  return BY_RESOURCE.get(key(resource.group, resource.resource));
}

/** The stamped kinds a listed operator makes for what it reconciles (`operatorMade`): stamped as their controlling owner's, their stamps kept on its later writes. */
const OPERATOR_MADE: ReadonlySet<string> = new Set(ROWS.filter((r) => r.operatorMade === true && r.door === 'object').map((r) => r.kind));

export function isOperatorMade(kind: string): boolean {
  return OPERATOR_MADE.has(kind);
}

/** The row of a kind by API group and kind name, if Deed knows it. */
export function kindRowNamed(group: string, kind: string): KindRow | undefined {
  return BY_GROUP_KIND.get(key(group, kind));
}

/** The stamped kind of a resource the webhook is called for. */
export function sandboxKind(resource: GroupVersionResource): SandboxKind | undefined {
  return SANDBOX.get(key(resource.group, resource.resource));
}

/** The same entries by kind name, for readers of stored objects (the reaper, the audit). */
export function sandboxKindNamed(kind: SandboxKindName): SandboxKind {
  return [...SANDBOX.values()].find((k) => k.kind === kind)!;
}

/** The kind that makes pods or claims from templates, for a resource. */
export function workloadKind(resource: GroupVersionResource): WorkloadKind | undefined {
  return WORKLOADS.get(key(resource.group, resource.resource));
}

/** The kind that makes pods or claims from templates, by kind name (a controller reference names its owner so). */
export function workloadKindNamed(kind: string): WorkloadKind | undefined {
  return [...WORKLOADS.values()].find((w) => w.kind === kind);
}

/** The stamped rows, in table order. */
export function stampedRows(): KindRow[] {
  return ROWS.filter((r) => r.stamps !== undefined);
}

/** The names of the stamped kinds, in table order. */
export const STAMPED_KINDS: readonly StampedKindName[] = stampedRows().map((r) => r.kind as StampedKindName);

/** The kinds the reaper lists, gets and deletes. */
export const REAPED_KINDS: readonly ReapedKindName[] = ROWS.filter((r) => r.reaped === true).map((r) => r.kind as ReapedKindName);

/**
 * The sandbox kinds (the reaped ones) in prose, as every page that lists them says it:
 * "Pods, Secrets, ConfigMaps, NetworkPolicies and PersistentVolumeClaims" (test/docs.test.ts).
 */
export function sandboxKindsProse(): string {
  const plural = REAPED_KINDS.map((k) => (k.endsWith('y') ? `${k.slice(0, -1)}ies` : `${k}s`));
  return `${plural.slice(0, -1).join(', ')} and ${plural.at(-1)!}`;
}

/** The kinds the audit lists. */
export const AUDITED_KINDS: readonly ReapedKindName[] = ROWS.filter((r) => r.audited !== undefined).map((r) => r.kind as ReapedKindName);

/** The kinds whose configuration may have their operator sign in as itself: the audit lists them, where served, to report the ones stored before Deed refused that. */
export function operatorConfigRows(): ReadonlyArray<OperatorConfigRow> {
  return ROWS.filter(isOperatorConfig);
}

export type OperatorConfigRow = KindRow & { operatorIdentity: readonly OperatorIdentityUse[] };

/** A namespaced kind whose objects name hostnames a gateway or ingress controller routes (rule route.hostnames). */
export type HostnameRow = KindRow & { hostnames: NonNullable<KindRow['hostnames']> };

/** The kinds that name hostnames: the audit lists them where the policy declares some. */
export function hostnameRows(): ReadonlyArray<HostnameRow> {
  return ROWS.filter((r): r is HostnameRow => r.hostnames !== undefined && r.namespaced);
}

export function isOperatorConfig(row: KindRow): row is OperatorConfigRow {
  return row.operatorIdentity !== undefined && row.namespaced;
}

/** Whether the audit runs the content rules on a stored object of this kind. */
export function auditJudgesContent(kind: ReapedKindName): boolean {
  return stampedRow(kind).audited?.judgesContent === true;
}

/** The apiVersion of a row (`v1`, `networking.k8s.io/v1`). */
export function apiVersionOf(row: Pick<KindRow, 'group' | 'version'>): string {
  return row.group === '' ? row.version : `${row.group}/${row.version}`;
}

/** The API group of an `apiVersion` (`apps/v1` is `apps`, `v1` the core group ''): apiVersionOf's inverse. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** The row of a stamped kind by name. */
export function stampedRow(kind: StampedKindName): KindRow {
  return ROWS.find((r) => r.kind === kind && r.stamps !== undefined)!;
}

/** The stamps a kind of its own row gets at CREATE (a workload's), by kind name; undefined: not stamped. */
export function stampRowNamed(kind: string): StampRow | undefined {
  return STAMPED.get(kind);
}

/** Where a resource's pod selector stands, if it has one (a custom resource's is not known). */
export function podSelectorOf(resource: Pick<GroupVersionResource, 'group' | 'resource'>): PodSelectorFacts | undefined {
  return kindRow(resource)?.podSelector;
}

/** Whether a resource's objects act on a whole namespace (the `namespaceWide` facet). */
export function isNamespaceWide(resource: Pick<GroupVersionResource, 'group' | 'resource'>): boolean {
  return kindRow(resource)?.namespaceWide === true;
}

/** What an object of this kind may ask its operator to make with no owner reference (rules/unowned-output.ts). */
export function unownedOutputOf(resource: Pick<GroupVersionResource, 'group' | 'resource'>): KindRow['unownedOutputWhen'] {
  return kindRow(resource)?.unownedOutputWhen;
}

/** The workloads a /scale names (rows with a `workload-scale` subresource): the webhook looks each up. */
export const SCALED_RESOURCES: readonly string[] = ROWS.filter((r) => Object.values(r.subresources ?? {}).includes('workload-scale')).map((r) => r.resource);

/**
 * The default row (docs/security-model.md, "The default row"): a kind Deed has never heard
 * of is no way around it. Every namespaced kind written in the review scope that has no door
 * of its own (a lab's KubeVirt VirtualMachine, a Tekton PipelineRun, a Service, an Ingress)
 * gets the environment's stamps at CREATE, and its UPDATE, DELETE and status writes are
 * guarded and its stamps frozen, as for the stamped kinds. No owner reference: whether an
 * unknown kind may be collected with a runner pod is not Deed's to guess; no deadline.
 */
export const DEFAULT_ROW_STAMPS: StampFacts = { ownerReference: false, activeDeadline: false, expiresAt: false };

export interface DefaultRowException {
  group: string;
  resource: string;
  reason: string;
}

/**
 * What the default row leaves alone, each with its reason; the install's second pair of
 * webhooks (`default.*.deed.dev`) leaves them out. Writes by kube-system's controllers never
 * reach Deed at all (the webhooks' matchConditions).
 */
export const DEFAULT_ROW_EXCEPTIONS: readonly DefaultRowException[] = [
  { group: '', resource: 'events', reason: 'written by every component, many a second, and stored only for an hour: a record, not a lab; a stalled event write slows its writer' },
  { group: 'events.k8s.io', resource: 'events', reason: 'the same events through their own API group' },
  { group: 'authorization.k8s.io', resource: 'localsubjectaccessreviews', reason: 'a question to the authorizer, never stored' },
  // `deed audit --write-reports` replaces one report per namespace, bound namespaces included, as a principal of no environment.
  { group: 'wgpolicyk8s.io', resource: 'policyreports', reason: "findings written by policy tools (Deed's own audit among them): a record of the namespace, not a lab" },
  { group: 'openreports.io', resource: 'reports', reason: 'the same reports through the openreports API' },
];

/** Whether a resource is one of the default row's exceptions. */
export function isDefaultRowException(group: string, resource: string): boolean {
  return DEFAULT_ROW_EXCEPTIONS.some((e) => e.group === group && e.resource === resource);
}

/**
 * The default row's stamps for a resource: one the table names without a door of its own
 * (a Service, an Ingress, a ServiceAccount's own writes), or one it does not name at all
 * (a custom resource); undefined for a row with a door of its own, a cluster-scoped row, and
 * the exceptions.
 */
export function defaultRowFor(resource: Pick<GroupVersionResource, 'group' | 'resource'>, kind: string): StampRow | undefined {
  const row = kindRow(resource);
  if (row !== undefined && (row.door !== undefined || !row.namespaced)) return undefined;
  if (isDefaultRowException(resource.group, resource.resource)) return undefined;
  return { kind, ...DEFAULT_ROW_STAMPS };
}
