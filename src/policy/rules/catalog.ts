// The one list of Deed's rules: ids, what each checks, default enforcement mode and an
// example message. Metrics, the docs' rule catalog and policy validation all read it.
// The entries of the rules that are files of their own (the pod spec's) come from those
// files, with the rule objects: the rule sets by subject (POD_SPEC_RULES) are built here.
import { ENFORCEMENT_MODES, rule, type EnforcementMode, type RuleInfo } from './rule-info.js';
import type { Rule } from './rule.js';
import type { PodSpecSubject } from '../pod/pod-spec-subject.js';
import { TEMPLATE_COLLISION_RULES, templateCollisionRule, controllerTokenRule } from '../pod/template-collisions.js';
import { WORKSPACE_MOUNT_RULES, workspaceRule } from '../pod/workspace-mounts.js';
import { TEMPLATE_HOST_NETWORK, hostNetworkRule } from '../pod/host-network.js';
import { TEMPLATE_PROCESS_NAMESPACE, processNamespaceRule } from '../pod/process-namespace.js';
import { TEMPLATE_PRIORITY_CLASS, priorityClassRule } from '../pod/priority-class.js';

export { ENFORCEMENT_MODES, type EnforcementMode, type RuleInfo };

export const RULES = {
  requestMalformed: rule({
    id: 'request.malformed',
    webhook: 'both',
    checks: 'The AdmissionReview is well formed: v1, a uid, an object where the operation needs one, kind matching resource, no prototype keys.',
    defaultMode: 'deny',
    overridable: false,
    example: 'request.oldObject is required for DELETE',
  }),
  requestOutOfScope: rule({
    id: 'request.out-of-scope',
    webhook: 'both',
    checks:
      "The review is for a namespace the installed webhooks select (the review scope). The API server never sends another; a review for a namespace outside it, or before Deed knows its scope, is refused without reading anything and gets no stamps: outside the scope anyone can write stamps, so Deed signs none there.",
    defaultMode: 'deny',
    overridable: false,
    example: 'namespace plain is outside the review scope (not labelled deed.dev/sandbox=enabled); the API server sends no reviews for it, so Deed answers none',
  }),
  internalError: rule({
    id: 'internal.error',
    webhook: 'both',
    checks: 'Deed itself failed; the request is denied (fail closed).',
    defaultMode: 'deny',
    overridable: false,
    example: 'internal error while reviewing; see the Deed log for request uid 3f69…',
  }),
  internalDeadline: rule({
    id: 'internal.deadline',
    webhook: 'both',
    checks: 'The review is answered within 80% of the webhook timeout (`?timeout=`, 10 s when absent); past that it is denied with code 504 rather than left to time out.',
    defaultMode: 'deny',
    overridable: false,
    example: 'the internal deadline of 4000 ms (80% of the 5000 ms webhook timeout) passed before the review could start (4120 ms); Deed is overloaded, retry',
  }),
  identityAmbiguous: rule({
    id: 'identity.ambiguous',
    webhook: 'both',
    checks: 'The requester acts for at most one environment.',
    defaultMode: 'deny',
    overridable: false,
    example: 'system:serviceaccount:ci:runner acts for several environments (alpha, beta); the policy must map it to one',
  }),
  guardNamespaceWide: rule({
    id: 'guard.namespace-wide',
    webhook: 'both',
    checks:
      "Writes (CREATE, UPDATE, status, DELETE) of kinds that act on every object of their namespace (the kind table's `namespaceWide` rows: ResourceQuota, LimitRange) are the platform's: they pass for the policy's `platform` principals, system controllers and break-glass, and for an environment's principals and managers only in a namespace bound to that environment. In a shared namespace one environment's quota of `pods: 0` would shut every other out.",
    defaultMode: 'deny',
    overridable: true,
    example:
      'system:serviceaccount:sandbox-b:janitor may not create ResourceQuota shared/freeze: a ResourceQuota acts on every environment\'s objects in namespace shared, so it is the platform\'s; ask the platform to write it, or use a namespace bound to your environment',
  }),
  guardUnownedOutput: rule({
    id: 'guard.unowned-output',
    webhook: 'both',
    checks:
      "An environment's object may not ask its operator to make what it writes with no owner reference (the kind table's `unownedOutputWhen`: an External Secrets ExternalSecret's `spec.target.creationPolicy: Orphan`; a cert-manager ACME Issuer without `spec.acme.disableAccountKeyGeneration: true`, whose account key cert-manager creates whenever it is missing), at CREATE or by an UPDATE that changes its spec, except in a namespace bound to that environment. With no owner reference nothing ties the output to the environment, so it is written unstamped, as the platform's, and every environment's pods in the namespace may mount it.",
    defaultMode: 'deny',
    overridable: true,
    example:
      "system:serviceaccount:sandbox-b:lab may not create ExternalSecret shared/db with spec.target.creationPolicy Orphan: the External Secrets operator would write its target Secret with no owner reference, so of no environment, for every environment's pods in shared to read; leave creationPolicy unset (Owner, the default) so the Secret is stamped as your environment's, or use a namespace bound to your environment",
  }),
  guardOperatorIdentity: rule({
    id: 'guard.operator-identity',
    webhook: 'both',
    checks:
      "An object may not have its operator authenticate with the operator's own identity (the kind table's `operatorIdentity`): an External Secrets SecretStore's Vault `auth.kubernetes` without `serviceAccountRef` or `secretRef` (the controller sends its own service account token to the store's server), Vault `auth.iam` or `auth.gcp` without a credential, an AWS provider without `auth.jwt` or `auth.secretRef`, a GCP provider without a key, a workload identity or a federation's service account, an Azure provider with `authType: ManagedIdentity` or `WorkloadIdentity` without `serviceAccountRef`, a Kubernetes or CRD provider's `authRef` kubeconfig (its `tokenFile` may name the controller's token, its `exec` plugin run in the controller's pod; Deed does not read Secrets' data), Infisical's Kubernetes and cloud logins, IBM's `containerAuth`, Oracle's instance principal or a workload principal without `serviceAccountRef`, Volcengine without `auth.secretRef`; the same in the ECR, STS, GCR, ACR and VaultDynamicSecret generators; a KEDA TriggerAuthentication's `hashiCorpVault` with `authentication: kubernetes` and no `credential.serviceAccountName` (KEDA sends its own token to the `address`) or `token` and no `credential.token`, its `podIdentity` of `gcp` or `azure-workload` (KEDA's cloud token goes to the trigger's server) and a secret manager's `podIdentity`; an Argo Rollouts analysis's Datadog metric without `secretRef.namespaced: true`, New Relic, Wavefront, InfluxDB and CloudWatch metrics and a SigV4 Prometheus (the controller's credentials). At CREATE, or by an UPDATE that changes that configuration, from anyone but the platform's principals, system controllers and break-glass, in any namespace: the operator's identity acts for every environment and the platform. Fix: name a credential of your own (a service account of your namespace, a Secret), or have the platform provide a ClusterSecretStore or ClusterTriggerAuthentication.",
    defaultMode: 'deny',
    overridable: true,
    example:
      "system:serviceaccount:sandbox-b:lab may not create SecretStore shared/vault with spec.provider.vault.auth.kubernetes as written: the External Secrets controller would send its own service account token to the Vault server, which acts for every environment and the platform; name a service account (serviceAccountRef) or a token Secret (secretRef) of your own (only the platform's principals may have the operator use its own)",
  }),
  guardOperatorPods: rule({
    id: 'guard.operator-pods',
    webhook: 'both',
    checks:
      "An environment's custom resource may not carry a pod spec its operator makes workloads from (the kind table's `operatorPods`: an Argo Rollout's `spec.template`, an Argo Experiment's `spec.templates[].template`, an Argo AnalysisTemplate's or AnalysisRun's job metrics, a KEDA ScaledJob's `spec.jobTargetRef.template`), at CREATE or by an UPDATE that changes it, except in a namespace bound to that environment. The operator creates the ReplicaSets or Jobs as a principal of its own, so their pods are of no environment: outside the environment's sandbox template (a service account token, any command), the NetworkPolicies that select its label and its pod rules.",
    defaultMode: 'deny',
    overridable: true,
    example:
      "system:serviceaccount:sandbox-b:lab may not create Rollout shared/web with a pod spec: the Argo Rollouts controller makes its ReplicaSets from it as a principal of its own, so their pods would be of no environment, outside your environment's sandbox template and rules; use a Deployment, whose pods Deed stamps and judges as your environment's, or a namespace bound to your environment",
  }),
  serviceExternalIps: rule({
    id: 'service.external-ips',
    webhook: 'both',
    checks:
      "A Service's `spec.externalIPs` are the platform's: kube-proxy on every node sends traffic for those addresses to the Service's pods, so a tenant's Service could take the calls other environments' sandboxes make to that address (CVE-2020-8554). A CREATE or UPDATE that adds an address passes only for the policy's `platform` principals, system controllers and break-glass; keeping or removing addresses passes.",
    defaultMode: 'deny',
    overridable: true,
    example:
      'system:serviceaccount:sandbox-b:janitor may not set spec.externalIPs ["203.0.113.7"]: kube-proxy would send traffic for those addresses, from every namespace, to this Service (CVE-2020-8554); they are the platform\'s: ask the platform, or turn external IPs off with Kubernetes\' DenyServiceExternalIPs admission plugin',
  }),
  gatewayAddresses: rule({
    id: 'gateway.addresses',
    webhook: 'both',
    checks:
      "A Gateway API Gateway's `spec.addresses` are the platform's, as a Service's external IPs are: the gateway controller puts the Gateway on the addresses it asks for. Envoy Gateway makes an IP address its proxy Service's external IP, which kube-proxy on every node serves from every namespace (CVE-2020-8554), so a tenant's Gateway could take the calls other environments' sandboxes make to that address; Istio adds the Gateway's listeners, hostnames and certificates to the gateway pods of a Hostname address's Service, another environment's among them. A CREATE or UPDATE that adds an address passes only for the policy's `platform` principals, system controllers and break-glass; keeping or removing addresses passes, and an address the controller assigns (`status.addresses`) is not asked for.",
    defaultMode: 'deny',
    overridable: true,
    example:
      'system:serviceaccount:sandbox-b:lab may not set spec.addresses ["IPAddress:203.0.113.7"]: the gateway controller puts this Gateway on them (Envoy Gateway makes an IP address its proxy Service\'s external IP, which kube-proxy serves from every namespace, CVE-2020-8554; Istio adds this Gateway\'s listeners to the gateway pods of a Hostname address\'s Service); they are the platform\'s: leave spec.addresses out and let the controller assign one, or ask the platform',
  }),
  routeHostnames: rule({
    id: 'route.hostnames',
    webhook: 'both',
    checks:
      "A hostname an environment declares its own (`environments[].hostnames`, exact or `*.domain`) is named only by that environment's principals, its managers, the platform, system controllers and break-glass: in a Gateway API route's `spec.hostnames` (HTTPRoute, GRPCRoute, TLSRoute), an Ingress's `spec.rules[].host` or `spec.tls[].hosts`, a Gateway's or ListenerSet's listener `hostname`, a cert-manager Certificate's `spec.dnsNames` or `spec.commonName`, an ACME Order's (`spec.dnsNames`, `spec.commonName`) or Challenge's (`spec.dnsName`, the wildcard under it where `spec.wildcard`), a Contour HTTPProxy's `spec.virtualhost.fqdn`, an Istio VirtualService's `spec.hosts` (where `*` takes every name), or external-dns's `hostname` and `internal-hostname` annotations (either prefix; comma-separated, read as external-dns reads them) on a Service, an Ingress, a Gateway API route, an HTTPProxy or a VirtualService, which publish a DNS record for the name pointing at the object's addresses, or an external-dns DNSEndpoint's `spec.endpoints[].dnsName` (a trailing dot the same name), itself or a wildcard over it. Where environments' routes share a Gateway (or an ingress controller), the controller sends each request to the route that matches it best, so another environment's route naming the hostname with a longer path, or its listener for it, would take that environment's requests; and an ACME CA issues a certificate for a name to whoever's challenge is answered there, which cert-manager's solver route on the shared Gateway does. A CREATE, or an UPDATE that changes the spec, an ingress class annotation (`kubernetes.io/ingress.class`, Contour's) or an external-dns hostname annotation, naming such a hostname is refused (one stored before it was declared takes no new path or backend, nor a controller); an UPDATE of other metadata is not judged. A route that names no hostname takes every hostname of the listeners it attaches to, so it may name none only where each Gateway or ListenerSet parent is of an environment its writer acts for (or not there yet). Without declared hostnames nothing is judged. Outside the review scope the install's ValidatingAdmissionPolicy `deed-hostnames` refuses the same names to all but the platform, system controllers, listed operators and break-glass; a route naming none is not judged there (keep each environment's listeners' `allowedRoutes` selecting its namespaces). `deed audit` reports what names them already.",
    defaultMode: 'deny',
    overridable: true,
    example:
      "run-7.alpha.sandboxes.example.com is environment alpha's hostname (*.alpha.sandboxes.example.com), and system:serviceaccount:sandbox-b:lab does not act for it: the gateway controller would send its requests that this route matches best to this route's backends; name a hostname of this environment's own",
  }),
  identityMalformed: rule({
    id: 'identity.malformed',
    webhook: 'both',
    checks: 'Pod-bound token extras (pod-name, pod-uid) are single, well-formed values on a service account.',
    defaultMode: 'deny',
    overridable: false,
    example: 'pod-bound token extras must carry exactly one pod name and one pod uid',
  }),
  stampForged: rule({
    id: 'stamp.forged',
    webhook: 'mutate',
    checks: 'A requester that acts for no environment carries no admission-owned key.',
    defaultMode: 'deny',
    overridable: false,
    example: 'kube-lab-admin acts for no environment and cannot set the admission-owned key deed.dev/environment',
  }),
  stampTemplate: rule({
    id: 'stamp.template',
    webhook: 'both',
    checks:
      "Pod templates (of Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, ReplicationControllers, PodTemplates) and claim templates (a pod's ephemeral `volumeClaimTemplate`, a StatefulSet's `volumeClaimTemplates`), and the metadata templates controllers and operators copy onto what they make (a ResourceClaimTemplate's `spec.metadata`, a cert-manager Certificate's `spec.secretTemplate`, an External Secrets ExternalSecret's `spec.target.template.metadata`), carry no admission-owned key Deed did not write: their controllers copy the template's metadata unreviewed. Deed writes a sandbox pod's ephemeral claim stamps itself, and the environment label into the pod templates of an environment's workload (its scoped selector requires it, `selector.scope`): that label, of the workload's own environment, is the one a pod template may carry.",
    defaultMode: 'deny',
    overridable: false,
    example: 'deed.dev/environment is admission-owned; the ephemeral-volume controller would copy it onto the claim unreviewed',
  }),
  stampConflict: rule({
    id: 'stamp.conflict',
    webhook: 'mutate',
    checks:
      "A client value for an admission-owned label, annotation or owner reference equals what Deed computes. The runner mark `<prefix>/runner` is Deed's: on a pod of no environment it is the environment the pod's service account is mapped to (Deed writes it), or absent; an environment's object and its pod templates never carry it.",
    defaultMode: 'deny',
    overridable: false,
    example: 'deed.dev/environment is admission-owned: given "beta", expected "alpha"',
  }),
  attestationForged: rule({
    id: 'attestation.forged',
    webhook: 'mutate',
    checks: 'No client supplies `<prefix>/attestation` (only Deed signs it; its own value is accepted on reinvocation).',
    defaultMode: 'deny',
    overridable: false,
    example: 'is admission-owned and signed by Deed; a client value is never accepted',
  }),
  nonceMalformed: rule({
    id: 'nonce.malformed',
    webhook: 'mutate',
    checks: 'A client `<prefix>/create-nonce` is 64 lowercase hex characters.',
    defaultMode: 'deny',
    overridable: false,
    example: 'must be 64 lowercase hex characters, got "1234"',
  }),
  budgetInvalid: rule({
    id: 'budget.invalid',
    webhook: 'mutate',
    checks: '`<prefix>/max-duration-seconds` is an annotation (a label of that key is refused, not ignored) holding a positive whole number of seconds.',
    defaultMode: 'deny',
    overridable: false,
    example: 'must be a positive whole number of seconds up to 315360000, got "1h"',
  }),
  // --- validating webhook ---
  stampMissing: rule({
    id: 'stamp.missing',
    webhook: 'validate',
    checks: 'A CREATE by a requester that acts for an environment arrives with Deed\'s stamps present, matching the requester, and attested (the mutating webhook was not bypassed or undone).',
    defaultMode: 'deny',
    overridable: false,
    example: 'metadata.labels["deed.dev/environment"]: is (absent), expected "alpha"; was the mutating webhook bypassed?',
  }),
  attestationInvalid: rule({
    id: 'attestation.invalid',
    webhook: 'validate',
    checks:
      'An object carrying Deed\'s stamps that do not verify under a key of the ring belongs to no environment: only system controllers and break-glass principals may update, delete, evict or bind it, on every door. Rotate keys through the ring (docs/operations.md); overridable as a last resort only.',
    defaultMode: 'deny',
    overridable: true,
    example:
      'the object\'s stamps do not verify (the stored attestation names key "k-2026-06", which is not in the key ring), so it belongs to no environment; only system controllers and break-glass principals may change or delete it',
  }),
  frozenStamps: rule({
    id: 'frozen.stamps',
    webhook: 'validate',
    checks: 'On UPDATE, admission-owned labels and annotations are not changed, removed, or added to an object admitted without them.',
    defaultMode: 'deny',
    overridable: false,
    example: 'deed.dev/environment is frozen at "alpha", got "beta"',
  }),
  frozenOwnerReference: rule({
    id: 'frozen.owner-reference',
    webhook: 'validate',
    checks: 'On UPDATE, the owner reference Deed added stays (only the garbage collector may remove it when orphaning).',
    defaultMode: 'deny',
    overridable: false,
    example: 'the owner reference to pod runner-0 (144baa57-…) was added at admission and cannot be removed or changed',
  }),
  frozenActiveDeadline: rule({
    id: 'frozen.active-deadline',
    webhook: 'validate',
    checks: 'On UPDATE, spec.activeDeadlineSeconds is only ever lowered (the API server has the same rule; Deed says why first).',
    defaultMode: 'deny',
    overridable: false,
    example: 'may only be lowered: 5400 -> 9000',
  }),
  guardCrossEnvironment: rule({
    id: 'guard.cross-environment',
    webhook: 'validate',
    checks: "UPDATE, DELETE, eviction or binding of an environment's object (stamps that verify, or a runner pod whose service account acts for it) by a principal that acts for another environment is refused (confused deputy).",
    defaultMode: 'deny',
    overridable: true,
    example: 'system:serviceaccount:sandbox-b:janitor acts for "beta", and this object belongs to another environment; only that environment\'s principals, its managers, system controllers and break-glass may change or delete it',
  }),
  guardOwnerUnknown: rule({
    id: 'guard.owner-unknown',
    webhook: 'validate',
    checks: 'An eviction or binding names a pod Deed must read to know whose it is; when the read fails or times out, the request is refused (fail closed) and the reason given.',
    defaultMode: 'deny',
    overridable: true,
    example: 'cannot tell whose pod sandbox-a/sbx-1 is (get pods: timed out after 2000 ms); refusing the eviction',
  }),
  guardControllerOwner: rule({
    id: 'guard.controller-owner',
    webhook: 'both',
    checks: "An object a workload controller creates (a ReplicaSet's pod, a Deployment's ReplicaSet, a CronJob's Job) belongs to the environment of its controlling owner, read from that owner's stamps (up the chain: Deployment, ReplicaSet, pod). When the owner cannot be read, does not exist, is not the object the reference names (another uid), or carries stamps that do not verify, the creation is refused (fail closed) and the controller retries.",
    defaultMode: 'deny',
    overridable: false,
    example: 'cannot tell whose ReplicaSet sandbox-a/lab-7d9 is (get replicasets: timed out after 2000 ms); refusing the pod its controller creates',
  }),
  guardAdoption: rule({
    id: 'guard.adoption',
    webhook: 'validate',
    checks: "A change of an object's controlling owner reference (a controller adopting an orphan by its selector, or a client writing the reference; one that keeps the owner's uid but names another kind, name or group is a change too, since controllers compare uids) stays within one environment: the new controlling owner is of the object's own environment, or the object is of none, and a client's own write names only an owner of an environment it acts for. A plain owner reference a workload controller adds is judged the same way, since the garbage collector deletes the object once its owners are gone (the statefulset controller of Kubernetes 1.28 to 1.30 writes its StatefulSet as a plain owner onto whatever claim stands under a claim template's name).",
    defaultMode: 'deny',
    overridable: false,
    example: 'pod sandbox-a/sbx-1 is not of the environment of ReplicaSet sandbox-a/sweep (acting for another environment); it may not become its controller',
  }),
  guardConnect: rule({
    id: 'guard.connect',
    webhook: 'validate',
    checks:
      "A CONNECT into a pod (pods/exec, pods/attach, pods/portforward, pods/proxy) reaches its containers, and with them every Secret and workspace the pod holds: it passes only for the pod's environment, its managers, system controllers and break-glass (the pod's environment read as for guarded writes). A pod that does not exist is refused like another environment's; one Deed cannot read is refused (`guard.owner-unknown`).",
    defaultMode: 'deny',
    overridable: true,
    example: 'system:serviceaccount:sandbox-b:janitor acts for "beta"; pod sandbox-a/sbx-1 is not one of its environment\'s, so it may not exec into it',
  }),
  guardServiceProxy: rule({
    id: 'guard.service-proxy',
    webhook: 'validate',
    checks:
      "A CONNECT to a Service's proxy (services/proxy) reaches whichever pods the Service selects, which Deed cannot see at admission: in the review scope it passes only for system controllers and break-glass. Tenants reach their own pods through pods/portforward or pods/proxy, which are judged by the pod.",
    defaultMode: 'deny',
    overridable: true,
    example: 'system:serviceaccount:sandbox-b:janitor may not proxy to Service sandbox-a/web: a Service\'s proxy reaches whichever pods it selects; use pods/portforward or pods/proxy on a pod of your environment',
  }),
  guardSnapshotSource: rule({
    id: 'guard.snapshot-source',
    webhook: 'validate',
    checks:
      "A VolumeSnapshot belongs to the environment of the claim it copies (its source claim, read fresh: only one made no later than the snapshot is the one it copied), and an UPDATE, a status write or a DELETE of it is guarded as a write of that claim (`guard.cross-environment`). When the source claim is gone, or was made again under its name since, whose data the snapshot holds cannot be told: outside a namespace bound to an environment (whose it then is), only the platform, system controllers and break-glass may change or delete it, so that no one can delete an environment's snapshot and take its name for a restore that environment has pending.",
    defaultMode: 'deny',
    overridable: true,
    example:
      'system:serviceaccount:sandbox-b:janitor may not delete snapshot shared/checkpoint: it was taken of claim ws-a, which no longer exists, so whose data it holds cannot be told; only the platform, system controllers and break-glass may delete it. Ask the platform, and delete a claim\'s snapshots before the claim',
  }),
  guardServiceAccount: rule({
    id: 'guard.service-account',
    webhook: 'validate',
    checks:
      "A service account acting for an environment (a runner's) is that environment's credential: a pod or pod template that runs as it, a Secret of type `kubernetes.io/service-account-token` naming it, and a TokenRequest (`serviceaccounts/token`) for it come only from that environment's principals and managers, system controllers and break-glass. One that carries no stamps (but the namespace's `default`, and one the policy maps to an environment) in a namespace bound to no environment is the platform's identity: its token acts for no environment, which may change the platform's objects, so no environment's principal runs a pod as it, makes a template that does, or asks for its token.",
    defaultMode: 'deny',
    overridable: true,
    example: 'service account sandbox-b:runner acts for environment "beta"; alice does not, and may not create a pod that runs as it',
  }),
  guardNamespaceBinding: rule({
    id: 'guard.namespace-binding',
    webhook: 'both',
    checks: "In a namespace bound to an environment (policy `environments[].namespaces`), only that environment's principals and managers, system controllers and break-glass create sandbox objects.",
    defaultMode: 'deny',
    overridable: true,
    example: 'namespace sandbox-a is bound to environment "alpha"; system:serviceaccount:sandbox-b:janitor acts for "beta" and may not create sandbox objects in it',
  }),
  ownerCrossNamespace: rule({
    id: 'owner.cross-namespace',
    webhook: 'validate',
    checks: "At CREATE, no owner reference names the requester's runner pod when it lives in another namespace: the garbage collector cannot resolve it there and would delete the object.",
    defaultMode: 'deny',
    overridable: false,
    example: 'the owner reference to pod runner-0 (sandbox-b) cannot resolve in namespace sandbox-a; the garbage collector would delete this object',
  }),
  guardUnmapped: rule({
    id: 'guard.unmapped',
    webhook: 'validate',
    checks: "UPDATE, DELETE, eviction or binding of an environment's object by a principal that acts for no environment is refused, except its managers, system controllers and break-glass principals.",
    defaultMode: 'deny',
    overridable: true,
    example: 'kube-lab-admin acts for no environment and is not a system controller or break-glass principal',
  }),
  ...TEMPLATE_COLLISION_RULES,
  templateHostNetwork: TEMPLATE_HOST_NETWORK,
  templateProcessNamespace: TEMPLATE_PROCESS_NAMESPACE,
  templatePriorityClass: TEMPLATE_PRIORITY_CLASS,
  ...WORKSPACE_MOUNT_RULES,
  workspaceClaimMarker: rule({
    id: 'workspace.claim-marker',
    webhook: 'validate',
    checks:
      'A claim marked `<prefix>/workspace` carries "true" (set at CREATE only, then frozen); a claim of an environment that a pod mounts as its workspace volume is so marked, so every pod that mounts it later gets the workspace rules, under any volume name.',
    defaultMode: 'deny',
    overridable: true,
    example: 'claim sbx-1-workspace of environment "alpha" is mounted as the workspace but is not marked deed.dev/workspace: "true"; mark it when creating it',
  }),
  claimCrossEnvironment: rule({
    id: 'claim.cross-environment',
    webhook: 'validate',
    checks:
      'A pod or pod template mounts, and a pod\'s ephemeral volume, a claim template or a PersistentVolumeClaim clones or restores (from a VolumeSnapshot, judged by the snapshot\'s source claim), only claims stamped (with a verifying attestation) for its own environment or one its environment lists in `claimsFrom`; a VolumeSnapshot copies only such claims. Unmanaged claims are allowed.',
    defaultMode: 'deny',
    overridable: true,
    example: 'volume "ws" mounts claim sbx-1-workspace, which belongs to another environment; environment "beta" may not (policy: environments[].claimsFrom)',
  }),
  claimUnknown: rule({
    id: 'claim.unknown',
    webhook: 'validate',
    checks:
      'The environment of every claim a pod mounts or clones (or a snapshot copied) can be known: Deed could look it up (a snapshot whose source claim is gone, or was made again under its name since the snapshot, by its creation time, cannot tell), and a claim carrying Deed\'s stamps has an attestation that verifies (fail closed). A claim filled by a volume populator (a `dataSourceRef` or `dataSource` of another kind than a claim or a snapshot.storage.k8s.io VolumeSnapshot, such as KubeVirt CDI\'s VolumeCloneSource), or from a source in another namespace, copies what Deed does not read: only the platform\'s principals, system and workload controllers, or an environment in its bound namespace name one.',
    defaultMode: 'deny',
    overridable: true,
    example: 'cannot tell which environment claim sbx-1-workspace belongs to: no cluster is available to look up persistentvolumeclaims sandbox-a/sbx-1-workspace',
  }),
  claimStatefulSetTemplate: rule({
    id: 'claim.statefulset-template',
    webhook: 'validate',
    checks:
      "A pod the statefulset controller makes for a StatefulSet of an environment mounts, under its claim templates' names (volume `data` mounting claim `data-<pod>`), only claims of that environment, stamped as the templates stamp them: the controller makes such a claim only when none of that name exists, so a claim someone else made first (unstamped, or another environment's) would be mounted in its place. The squatted claim must be deleted by whoever may (the platform for an unstamped one); the controller then makes the StatefulSet's own. Pods of a StatefulSet of no environment are not concerned.",
    defaultMode: 'deny',
    overridable: true,
    example: 'StatefulSet shared/db\'s claim template "data" names claim data-db-0 for pod db-0, but claim data-db-0 already exists and carries no stamps (not made from the template): the controller would mount it instead of making environment "alpha"\'s, and whoever made it reads what the pod writes; the platform (a principal of no environment; environments may not delete an unstamped claim) must delete claim data-db-0, then the controller makes the StatefulSet\'s own',
  }),
  claimAbsent: rule({
    id: 'claim.absent',
    webhook: 'validate',
    checks:
      'Every claim a pod that names its node (`spec.nodeName`: no binding follows) mounts or clones, and every claim a new claim clones, exists, whoever the requester (one of no environment too): a reference to a claim that does not exist yet would take whatever another environment later creates under that name. Allowed in a namespace bound to an environment the requester acts for (no other can create it there); on a dry run a warning: the real create needs the claim first. A pod the scheduler binds (no `spec.nodeName`, as the pods of a workload) may mount one that does not exist yet, as a manifest that lists the pod first does: its binding is judged again on what it reads (`reference.at-binding`), and whoever creates it while the pod lives is judged against the pod (`reference.live-reader`). What a claim is filled from (the claim or VolumeSnapshot an ephemeral volume or a StatefulSet claim template clones or restores) must exist whatever the scheduling: its controller makes the claim without a review of the pod, and no binding judges it; a claim the statefulset controller makes from a template is judged again on its source, for its own environment, whenever it is made (a scale-up long after the StatefulSet).',
    defaultMode: 'deny',
    overridable: true,
    example: 'claim sbx-1-workspace does not exist; create it first, or a claim another environment creates under that name later would be used',
  }),
  claimAtBinding: rule({
    id: 'claim.at-binding',
    webhook: 'validate',
    checks:
      "A claim's binding to its volume (the UPDATE that sets `spec.volumeName`, whoever sends it: the PV controller's is sent to Deed, alone of its writes, for a claim filled from a data source) is judged again on what the claim is filled from (the claim it clones, the VolumeSnapshot it restores): the provisioner copies whatever stands under that name when it provisions the volume, as late as the claim's first pod's scheduling, and the source judged at the claim's CREATE may have been deleted and made again since, by another environment or a controller for one. A source claim made before the claim's second (for an ephemeral volume's claim, which its controller makes unreviewed and as late as it can take the name: its pod's, whose CREATE judged the source) is the one judged then; one made in that second must be one the claim's own environment may use, as at the CREATE; one made after it, or gone, or unreadable, is refused whoever's it is now: what was copied cannot be told. A snapshot is taken of whatever claim stands under its source's name when it is taken, so a restore is judged through it as at the CREATE (its claim made no later than it, and the claim's environment's) whenever it was made, and refused if it was made after the claim. Refused, the claim stays unbound and the copy is never mounted. Not judged in a namespace bound to an environment, for a break-glass principal, nor for a volume populator's source (judged at the CREATE only).",
    defaultMode: 'deny',
    overridable: true,
    example:
      'claim data, which this claim is filled from, was made after the claim (2026-12-06T06:00:00Z; the claim 2026-12-06T05:00:00Z): it was deleted and made again under its name since the claim was judged, and the provisioner copied whatever stood there then, which cannot be told. Delete this claim and create it again from a source that stays until the claim is bound',
  }),
  secretRefCrossEnvironment: rule({
    id: 'secret-ref.cross-environment',
    webhook: 'validate',
    checks:
      'A pod (and a pod added an ephemeral container) names only Secrets its requester may reach, in every form: secret, projected, CSI and in-tree volume secretRefs, env secretKeyRef, envFrom secretRef (every container kind), imagePullSecrets; `optional: true` included. A Secret stamped (verifying) for another environment, or unstamped in a namespace bound to another, is refused; an unstamped Secret elsewhere (a shared pull secret) is usable by all.',
    defaultMode: 'deny',
    overridable: true,
    example: 'volume "creds" mounts Secret runner-config, which belongs to another environment; environment "beta" may not',
  }),
  secretRefUnknown: rule({
    id: 'secret-ref.unknown',
    webhook: 'validate',
    checks: 'The environment of every Secret a pod names can be known: Deed could read its metadata, and Deed\'s stamps on it verify (fail closed).',
    defaultMode: 'deny',
    overridable: true,
    example: 'cannot tell which environment Secret runner-config belongs to: get secrets shared/runner-config: timed out after 2000 ms',
  }),
  secretRefAbsent: rule({
    id: 'secret-ref.absent',
    webhook: 'validate',
    checks:
      'Every Secret a pod that names its node (`spec.nodeName`) names exists, whoever creates the pod (optional references included), except in a namespace bound to an environment the requester acts for. On a dry run it is a warning: the real create needs the Secret first. A pod the scheduler binds (no `spec.nodeName`, as the pods of a workload) may name one that does not exist yet, as a manifest that lists the pod first does: its binding is judged again on what it reads (`reference.at-binding`), and whoever creates it while the pod lives is judged against the pod (`reference.live-reader`).',
    defaultMode: 'deny',
    overridable: true,
    example: 'Secret alpha-next does not exist; create it first, or a Secret another environment creates under that name later would be used',
  }),
  configMapRefCrossEnvironment: rule({
    id: 'configmap-ref.cross-environment',
    webhook: 'validate',
    checks:
      'A pod (and a pod added an ephemeral container) names only ConfigMaps its requester may reach, in every form: configMap volumes and projected sources, env configMapKeyRef, envFrom configMapRef (every container kind); `optional: true` included. Judged as Secret references are: a ConfigMap stamped (verifying) for another environment, or unstamped in a namespace bound to another, is refused; an unstamped ConfigMap elsewhere is usable by all. The well-known ConfigMaps (`template.wellKnownConfigMaps`) are not judged.',
    defaultMode: 'deny',
    overridable: true,
    example: 'volume "scripts" mounts ConfigMap run-script, which belongs to another environment; environment "beta" may not',
  }),
  configMapRefUnknown: rule({
    id: 'configmap-ref.unknown',
    webhook: 'validate',
    checks: "The environment of every ConfigMap a pod names can be known: Deed could read its metadata, and Deed's stamps on it verify (fail closed).",
    defaultMode: 'deny',
    overridable: true,
    example: 'cannot tell which environment ConfigMap run-script belongs to: get configmaps shared/run-script: timed out after 2000 ms',
  }),
  configMapRefAbsent: rule({
    id: 'configmap-ref.absent',
    webhook: 'validate',
    checks:
      'Every ConfigMap a pod that names its node (`spec.nodeName`) names exists, whoever creates the pod (optional references included), except in a namespace bound to an environment the requester acts for, and except the well-known ConfigMaps. On a dry run it is a warning: the real create needs the ConfigMap first. A pod the scheduler binds (no `spec.nodeName`, as the pods of a workload) may name one that does not exist yet, as a manifest that lists the pod first does: its binding is judged again on what it reads (`reference.at-binding`), and whoever creates it while the pod lives is judged against the pod (`reference.live-reader`).',
    defaultMode: 'deny',
    overridable: true,
    example: 'ConfigMap alpha-next does not exist; create it first, or a ConfigMap another environment creates under that name later would be used',
  }),
  selectorScope: rule({
    id: 'selector.scope',
    webhook: 'both',
    checks:
      "Every pod selector a requester writes selects only pods of environments it acts for (docs/security-model.md, \"Selectors\"): a workload's `spec.selector` (a Job's only with `manualSelector`, a CronJob's job template's likewise), a PodDisruptionBudget's and a Service's `spec.selector`, a NetworkPolicy's `spec.podSelector`. An environment's selector gets `<prefix>/environment: <id>` added at CREATE (and its pod templates the same label), frozen on UPDATE. A requester of no environment's selector that names no environment gets `<prefix>/no-environment: \"true\"` added at CREATE (and its pod templates the same label), the label Deed writes on every pod of no environment and on no environment's pod: it selects pods of no environment only, a Service's plain map included; the mark is kept on UPDATE. One that names environments names only environments it manages, or says `<prefix>/environment DoesNotExist`; a platform principal's may name any. A runner pod is of no environment too: a NetworkPolicy's or PodDisruptionBudget's selector of no environment written by anyone but a platform principal gets `<prefix>/runner DoesNotExist` at CREATE (and on an UPDATE that changes it) unless it requires `<prefix>/runner` of environments its writer manages, kept on UPDATE, so it never selects another's runner (a workload's adopts, and adopting a runner is `guard.adoption`'s; a Service's plain map cannot exclude a label). Except a manager's in a namespace bound to its environment and break-glass or system principals'. A NetworkPolicy a platform, break-glass or system principal writes is stored as written: its `podSelector: {}` (a default-deny) isolates every pod of the namespace, every environment's included. A NetworkPolicy's peer selectors (from, to) are not scoped: they only widen what the selected pods allow.",
    defaultMode: 'deny',
    overridable: true,
    example: 'spec.selector.matchLabels["deed.dev/environment"]: selects pods of environment "alpha"; environment "beta" selects only its own pods (deed.dev/environment: beta)',
  }),
  selectorAffinityScope: rule({
    id: 'selector.affinity-scope',
    webhook: 'both',
    checks:
      "Every pod affinity term a requester writes (`spec.affinity.podAffinity` and `.podAntiAffinity`, required and preferred, in a Pod, in every pod template of a workload, and in the pod templates of custom resources whose operators copy them: an Argo Rollout's, a KEDA ScaledJob's, an ACME Issuer's HTTP01 solver's) selects only pods of environments it acts for, as a selector does (`selector.scope`): kube-scheduler holds every incoming pod off the nodes of the existing pods whose required anti-affinity selects it, so one pod of beta's selecting alpha's pods would keep alpha's off every node. An environment's term gets `<prefix>/environment: <id>` added to its labelSelector's matchLabels at CREATE (a changed pod template's terms again on UPDATE); one that requires or `In`-lists another environment is refused. A requester of no environment's term that names no environment gets `{key: <prefix>/environment, operator: DoesNotExist}`, and, but a platform principal's, `{key: <prefix>/runner, operator: DoesNotExist}` unless it requires `<prefix>/runner` of environments its writer manages; one that names environments names only environments it manages (a platform principal's may name any). A term without a labelSelector selects no pod and is left alone. Except break-glass and system principals' terms, and a manager's in a namespace bound to its environment that does not reach other namespaces (one with `namespaces` or `namespaceSelector` selects that environment's pods only). Fix: leave the environment out of the term (Deed adds it), or name only your own environments.",
    defaultMode: 'deny',
    overridable: true,
    example:
      'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: selects pods of environment "alpha"; environment "beta" selects only its own pods: leave deed.dev/environment out (the mutating webhook adds deed.dev/environment: beta)',
  }),
  secretServiceAccountToken: rule({
    id: 'secret.service-account-token',
    webhook: 'validate',
    checks:
      'A sandbox Secret is never of type `kubernetes.io/service-account-token`: the token controller would fill it with a non-expiring token of the service account it names, for any pod to mount.',
    defaultMode: 'deny',
    overridable: true,
    example: 'a Secret of type kubernetes.io/service-account-token would receive a non-expiring token of service account "runner"',
  }),
  configMapWellKnown: rule({
    id: 'configmap.well-known',
    webhook: 'validate',
    checks:
      "No environment creates a ConfigMap under a name of `template.wellKnownConfigMaps`: those every pod may name unjudged, since a system controller keeps them in every namespace. Where none keeps one (OpenShift's service CA elsewhere), another environment's pods that name it would read what this environment wrote.",
    defaultMode: 'deny',
    overridable: true,
    example: 'ConfigMap openshift-service-ca.crt is one every pod may name unjudged (template.wellKnownConfigMaps), kept by a system controller; environment "beta" may not create one: choose another name, or remove it from template.wellKnownConfigMaps where no controller keeps it',
  }),
  pvcPodOwner: rule({
    id: 'pvc.pod-owner',
    webhook: 'validate',
    checks: 'A PersistentVolumeClaim is never owned by a Pod: a pod loss would garbage-collect resumable work.',
    defaultMode: 'deny',
    overridable: true,
    example: 'an owner reference to pod runner-0 would let the garbage collector delete this claim',
  }),
  // A run's end, as the reaper reads it (docs/operations.md, "The reaper").
  terminalFrozen: rule({
    id: 'terminal.frozen',
    webhook: 'validate',
    checks: 'Once an object carries `<prefix>/terminal`, the mark is never changed or removed, by anyone: the reaper may already have judged the run over.',
    defaultMode: 'deny',
    overridable: false,
    example: 'deed.dev/terminal was set to "true" and cannot be changed or removed: the run it marks is over',
  }),
  terminalEnvironment: rule({
    id: 'terminal.environment',
    webhook: 'validate',
    checks: "Only a principal of the object's own environment (or one of its managers) sets `<prefix>/terminal`: not another environment, not break-glass or system principals, not on an object whose stamps do not verify.",
    defaultMode: 'deny',
    overridable: false,
    example: 'only a principal of the environment this object belongs to may mark it terminal; system:serviceaccount:ops:janitor acts for no environment',
  }),
  terminalMalformed: rule({
    id: 'terminal.malformed',
    webhook: 'validate',
    checks: '`<prefix>/terminal`, where set, is exactly "true": any other value could never be corrected (the mark is frozen).',
    defaultMode: 'deny',
    overridable: false,
    example: 'deed.dev/terminal must be "true", got "yes"',
  }),
  runLeaseMalformed: rule({
    id: 'run-lease.malformed',
    webhook: 'validate',
    checks: '`<prefix>/run-lease`, where set at CREATE, is a Lease name (a DNS subdomain); it is attested and frozen.',
    defaultMode: 'deny',
    overridable: false,
    example: 'deed.dev/run-lease "Run_1" is not a Lease name (a DNS subdomain)',
  }),
  runLeaseAbsent: rule({
    id: 'run-lease.absent',
    webhook: 'validate',
    checks:
      'The Lease `<prefix>/run-lease` names exists in the object\'s namespace when the object is created: the reaper counts a run whose Lease is gone as over, and a Lease created under that name later could be anyone\'s. On a dry run a warning: the real create needs the Lease first.',
    defaultMode: 'deny',
    overridable: false,
    example: 'run lease sandbox-a/run-42 does not exist; create it first (as a principal of environment "alpha"), or the reaper would count the run over at once',
  }),
  runLeaseEnvironment: rule({
    id: 'run-lease.environment',
    webhook: 'validate',
    checks:
      "The Lease `<prefix>/run-lease` names is stamped by Deed (an attestation that verifies) for the object's own environment: only then are its renewals and its delete guarded to that environment. holderIdentity decides nothing; an unstamped Lease (an administrator's, one created before Deed reviewed Leases) or another environment's is refused.",
    defaultMode: 'deny',
    overridable: false,
    example: 'run lease sandbox-a/run-42 is not stamped for environment "alpha": it belongs to another environment',
  }),
  runLeaseUnknown: rule({
    id: 'run-lease.unknown',
    webhook: 'validate',
    checks: 'Deed could read the Lease `<prefix>/run-lease` names (a get under the review\'s deadline): a Lease it cannot read is refused (fail closed).',
    defaultMode: 'deny',
    overridable: false,
    example: 'cannot tell whether run lease sandbox-a/run-42 is environment "alpha"\'s: get leases sandbox-a/run-42: timed out after 2000 ms',
  }),
  referenceCrossEnvironment: rule({
    id: 'reference.cross-environment',
    webhook: 'validate',
    checks:
      "What an object points at is its writer's to use (docs/security-model.md, \"What an object points at\"): every field the kind table lists as naming another object (a pod's ResourceClaims and ResourceClaimTemplates, `spec.resourceClaims[]`: the DRA driver gives the pod a claim's devices, and the resourceclaim controller makes the pod's claim from a template's devices, their configuration and its metadata; a HorizontalPodAutoscaler's scaleTargetRef, a VerticalPodAutoscaler's targetRef, a KEDA ScaledObject's scaleTargetRef (without apiVersion of group apps, without kind a Deployment, as KEDA reads it) and an Argo Rollout's workloadRef, the AnalysisTemplates an Argo Rollout's or Experiment's analyses name and the Secrets an analysis's arguments read, an Ingress backend's Service or resource and its TLS Secret, a Gateway API route's parentRefs (the Gateway whose listeners it joins, or in mesh mode the Service whose clients it steers), backendRefs and requestMirror backends (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute), an HTTPRoute's externalAuth backends, a Gateway's and a ListenerSet's TLS certificateRefs, a Gateway's backend client certificate, a ListenerSet's parent Gateway (whose listeners it adds to), a Gateway's client-validation CA ConfigMaps, and a BackendTLSPolicy's target Services and CA ConfigMaps, judged in the namespace they name (one outside the review scope is the platform's, and only a ReferenceGrant there, or for a parent its listeners' allowedRoutes, lets the gateway controller follow them), a cert-manager Certificate's or CertificateRequest's issuerRef (an Issuer of its namespace, which signs for whoever names it; a ClusterIssuer is the platform's), the same issuer named by an Ingress's or a Gateway's `cert-manager.io/issuer` or `cert-manager.io/cluster-issuer` annotation (cert-manager's ingress-shim makes the Certificate), a Certificate's secretName (cert-manager overwrites that Secret with the issued key pair; one that does not exist yet is cert-manager's to create, and one that carries no stamps outside a bound namespace, the platform's or an operator's output, only the platform may name there, as for every Secret an operator writes into), the Secrets an Issuer signs or authenticates with (its CA key, ACME account key, DNS01, Vault and Venafi credentials) and where its HTTP01 solver publishes (the Gateway its challenge route attaches to, the Ingress it edits), a KEDA trigger's authenticationRef (a TriggerAuthentication, whose credentials the operator hands the trigger's scaler) and the Secrets and ConfigMaps a TriggerAuthentication names (its cloud secret managers' credentials included), an External Secrets ExternalSecret's or PushSecret's SecretStore (whose credentials the operator fetches or pushes with), an ExternalSecret's generator (`sourceRef.generatorRef`, run with its credentials) and a generator's credential Secrets, an ExternalSecret's target Secret (its own name without `target.name`; one not there yet is the operator's to create) and its template's Secrets and ConfigMaps, a PushSecret's Secret and a SecretStore's credential Secrets, an EndpointSlice's `kubernetes.io/service-name` label, an Endpoints' own name), the controlling owner reference of any object and any owner reference with `blockOwnerDeletion` (which holds its owner's foreground deletion; by the owner's own uid, whatever kind it gives: drop `blockOwnerDeletion` or the reference), at CREATE, and each reference an UPDATE adds or changes, through the object's `/status` too (the API server keeps a status write's metadata changes: owner references, labels, annotations) (every reference it keeps too, where it changes more than the metadata of an object that carries no stamps outside a bound namespace: the platform's references would act for the change), names only an object of an environment the requester acts for, one of no environment when it acts for none, or an unstamped object outside a bound namespace; but an unstamped object there whose follower changes it or what it serves (an autoscaler's, a VPA's, a KEDA ScaledObject's or a Rollout's workload, an EndpointSlice's or Endpoints' Service, a BackendTLSPolicy's Service, an HTTP01 solver's Ingress) is the platform's, and no environment's principal may have it changed, as it may not change it itself (`guard.shared-input`). A controller (the HPA controller, the VPA updater and admission controller, the KEDA operator, the Argo Rollouts controller, kube-proxy, the ingress and gateway controllers, cert-manager, the job and cronjob controllers) acts on what is named later, for whoever wrote the reference. An unstamped claim a controller made for one pod (a ResourceClaim from the pod's ResourceClaimTemplate, an ephemeral volume's PersistentVolumeClaim: its controlling owner reference names the pod) is that pod's environment's; one whose pod is gone, or cannot be read, is unknown (refused).",
    defaultMode: 'deny',
    overridable: true,
    example: 'spec.scaleTargetRef names Deployment lab, which belongs to another environment (the horizontal-pod-autoscaler controller writes the target\'s /scale); environment "beta" may not',
  }),
  referenceUnknown: rule({
    id: 'reference.unknown',
    webhook: 'validate',
    checks:
      "Whose every object a reference names can be known: Deed could read it and its stamps verify (fail closed). A reference to a kind Deed does not read (a custom resource as the target of an HPA, a VPA, a ScaledObject or a Rollout's workloadRef, an Ingress resource backend, a Gateway API backendRef or an external issuer's kind in a cert-manager issuerRef, a PushSecret's stores or Secrets chosen by label selector, a SecretStore provider the kind table does not list (but in a namespace bound to the writer's environment), an owner reference with `blockOwnerDeletion` of any kind Deed does not read, the controller's too: the garbage collector finds the owner by uid alone and never deletes a dependent whose owner's kind it cannot resolve) comes only from the platform's principals, system controllers and break-glass; a blocking owner reference names its owner's own uid (drop `blockOwnerDeletion`, or name the owner's uid). A StatefulSet's claim templates carry no owner references (the statefulset controller copies them onto its claims; drop them). A controller reference names its owner's own uid, and a kind Kubernetes serves in its workload groups (core, `apps`, `batch`); a pod carries the labels a Job's generated selector matches (`batch.kubernetes.io/controller-uid`, `controller-uid`) only under a controller reference to that Job: the job controller counts a pod by uid alone. Judged at CREATE, on UPDATE and on writes through `/status` (whose metadata changes the API server keeps).",
    defaultMode: 'deny',
    overridable: true,
    example: 'spec.scaleTargetRef names Rollout web (argoproj.io), a kind Deed does not read, so whose it is cannot be known; only the platform may create this reference',
  }),
  referenceAbsent: rule({
    id: 'reference.absent',
    webhook: 'validate',
    checks:
      "Every object a reference names exists when the reference is written, except in a namespace bound to an environment the requester acts for: an object another environment creates under that name later would be acted on. What the follower itself creates when absent (a cert-manager Certificate's Secret) may not exist yet; what it only merges into (an ExternalSecret's target with `creationPolicy: Merge`), or creates with no owner reference (an ACME Issuer's account key, which would be of no environment), must. On a dry run it is a warning.",
    defaultMode: 'deny',
    overridable: true,
    example: 'spec.rules[0].http.paths[0].backend.service.name names Service web, which does not exist; create the Service first, or one another environment creates under that name later would be published',
  }),
  referenceAtBinding: rule({
    id: 'reference.at-binding',
    webhook: 'validate',
    checks:
      "A pod is bound to a node (pods/binding, by the scheduler or anyone) only if every claim (one its ephemeral volumes clone too), Secret, ConfigMap, ResourceClaim and ResourceClaimTemplate it names is, at that moment, one its own environment may use (its own, one its environment lists in `claimsFrom` for a claim, or unstamped outside a bound namespace), or, for a pod of no environment, of no environment. A pod keeps the names it was created with, and until it is bound nothing keeps what they name (the API server holds a claim only for a scheduled pod): what was deleted since can be made again under the name by another environment, and the kubelet would hand that to the pod. Each is read from the API server, not the lookup cache (the kubelet acts on the binding at once): by GET, and past the review's 32 GETs by one list of each kind in the pod's namespace (the well-known ConfigMaps are not read); what a list cannot answer (a namespace holding more than 5,000 of the kind, Secrets under `--no-cache-secrets`) is refused. What cannot be told (not readable, stamps that do not verify) is refused (fail closed). What no longer exists is not refused here.",
    defaultMode: 'deny',
    overridable: true,
    example:
      'pod shared/job-7 (environment "beta") names Secret creds, which now belongs to another environment: once bound, the kubelet would hand it to this pod. Delete the pod and create it again with names of its own run\'s objects',
  }),
  referenceLiveReader: rule({
    id: 'reference.live-reader',
    webhook: 'validate',
    checks:
      "A Secret, ConfigMap, PersistentVolumeClaim, ResourceClaim or ResourceClaimTemplate an environment creates takes no name a live pod of another environment, or of none, reads in the namespace (a volume, `env`, `envFrom`, a claim, the claim an ephemeral volume clones, a ResourceClaim by name, the ResourceClaimTemplate the resourceclaim controller makes the pod's claim from); a pod that has finished (Succeeded, Failed) reads nothing again. Nor a Secret's name that a live Ingress of another environment (or of none) names for TLS (`spec.tls[].secretName`): the ingress controller would serve this Secret's certificate and key for that Ingress's hosts; nor one such a Gateway or ListenerSet names in its namespace for a listener's certificate (`spec.listeners[].tls.certificateRefs[]`) or a Gateway for its backend client certificate, nor a ConfigMap's name such a Gateway gives for the CA certificates it admits clients by (`spec.tls.frontend`) or in its `spec.infrastructure.parametersRef` (Istio builds the Gateway's proxy Deployment from its overlays), nor one a BackendTLSPolicy's `spec.validation.caCertificateRefs[]` gives (the gateway verifies the Service's certificate by it). Nor a claim's name that a claim of another environment (or of none) not yet provisioned clones (no `spec.volumeName`; a standalone claim, one the statefulset controller made, an ephemeral claim that outlived its pod): the provisioner copies whatever stands under the name when it provisions the volume. The pod's names were judged when it was written, but nothing holds what they name: once its writer deletes the object, the kubelet hands the pod whatever is made under the name next (a volume is refreshed, `env` is read again at a container restart, a waiting pod starts with it), so this environment's object would reach that pod, or this environment would write that pod's input. A claim of an environment the pod's lists in `claimsFrom` may be made. A principal of no environment (a tenant, a manager) may not create one under a name a live pod of an environment it does not act for reads: it would write that pod's input; nor change what an unstamped Secret or ConfigMap (the platform's) holds while such a pod reads it, for the same reason (its labels and annotations it may change). So too a Service an environment creates takes no name that a live EndpointSlice (`kubernetes.io/service-name`), Endpoints (its own name), Ingress (a backend's Service), Gateway API route (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute: a backend, a mirror, a Service parent; in another namespace, where a ReferenceGrant of the Service's namespace admits it) or StatefulSet (its governing `spec.serviceName`: the set's pods' stable DNS names) of another environment, or of none, names, and a Deployment, StatefulSet, ReplicaSet or ReplicationController none that such a HorizontalPodAutoscaler's `scaleTargetRef` names, and a Gateway or ListenerSet none that such a route names as its parent, in its namespace or in another its listeners take routes from (`allowedRoutes.namespaces.from`: `All`, `Selector`), nor a Gateway one a ListenerSet names in its namespace or in another its `allowedListeners` take ListenerSets from (the gateway controller would serve the route, or the set's listeners with their certificates, on it; in its own namespace whatever its listeners or `allowedListeners` admit, so widening them there is covered by the CREATE; an UPDATE that has a Gateway or ListenerSet take them from every namespace is judged for what it newly admits), and a CronJob none that a live Job's controller reference carries (of a kind other than CronJob: the cronjob controller counts Jobs by that name alone and deletes the finished ones): once its writer deleted the one it named, kube-proxy would send this Service's traffic to that slice's endpoints, the ingress or gateway controller would send its route's traffic to it, the HPA controller would scale this workload. These referrers are listed live from the API server at the CREATE (what each names as the kind table's references read it); those the controllers made for a Service of the name are not skipped (they go with it). Not judged this way: operators' kinds, and a Gateway's certificate in another namespace. The platform's principals, system controllers and break-glass are not judged. What cannot be told (the pods or referrers not readable) is refused (fail closed).",
    defaultMode: 'deny',
    overridable: true,
    example:
      "a live pod of another environment (or of none) in namespace shared reads Secret creds by name, and the kubelet would hand it this one: choose a name of this run's own, or create it once no such pod is left",
  }),
  guardMappedAccount: rule({
    id: 'guard.mapped-account',
    webhook: 'both',
    checks:
      "A service account the policy maps to an environment (`environments[].serviceAccounts`, a namespace's `*` included) is that environment's identity: deleting it revokes every token of it (its runner stops), its image pull secrets go into the pods that run as it, and whoever creates it first decides what it holds. It is created, changed and deleted only by that environment's principals and managers, the policy's `platform` principals, system controllers and break-glass: not by another environment, nor by a principal of no environment that holds `edit` in the namespace.",
    defaultMode: 'deny',
    overridable: true,
    example:
      'service account shared:runner-alpha is an environment\'s identity (policy: environments[].serviceAccounts), and stranger does not act for that environment: only its principals and managers, the platform, system controllers and break-glass may delete it; a deployer that installs runners\' accounts belongs in the policy\'s platform principals',
  }),
  guardRunnerOwner: rule({
    id: 'guard.runner-owner',
    webhook: 'validate',
    checks:
      "A runner pod (one whose service account the policy maps to an environment) is its environment's, and the garbage collector deletes it, and all Deed stamped with an owner reference to it, when any of its owners is deleted. So its owner references (controller or not, at CREATE and each one an UPDATE adds or changes) name only what that environment's guards keep: an object stamped for the environment (its stamps verifying), one unstamped in a namespace bound to it, or another of its runners; not one unstamped outside a bound namespace (any principal of no environment, a tenant with edit, may delete it), another environment's, one that does not exist, cannot be read or whose stamps do not verify, nor a namespaced Kubernetes kind Deed does not read. Judged whoever writes the pod, the platform and managers included; system controllers and break-glass pass. Custom resources (ARC's EphemeralRunner) and cluster-scoped owners are left to RBAC: tenants must not be able to delete them.",
    defaultMode: 'deny',
    overridable: true,
    example:
      'this pod runs as a runner of an environment, and its owner Lease shared/runner-owner carries no stamps outside a namespace bound to an environment, so any principal of no environment (a tenant with edit) may delete it: the garbage collector would delete the runner, and all Deed stamped with an owner reference to it, when its owner goes; own the runner by an object stamped for its environment (created by one of its principals), by one in a namespace bound to it, by another of its runners, or by a kind tenants cannot delete; or by none',
  }),
  guardSharedInput: rule({
    id: 'guard.shared-input',
    webhook: 'validate',
    checks:
      "An input a pod reads (a Secret, a ConfigMap, a PersistentVolumeClaim, a ResourceClaim or its template, a ServiceAccount, whose image pull secrets the API server copies into the pods that run as it; one the policy maps to an environment is that environment's, `guard.mapped-account`) that carries no stamps, in a namespace bound to no environment, is the platform's: any environment's pods may name it, so no environment's principal may change or delete it (what a sandbox's pod runs would be someone else's code). Principals of no environment, managers, the platform, system controllers and break-glass may; but a principal of no environment that is not the platform's changes no service account's image pull secrets (every environment's pods that run as it get them: another environment's Secret there would get their pods refused), and no content a live pod of an environment it does not act for reads (`reference.live-reader`). Every other object that carries no stamps in a namespace bound to no environment is the platform's too (what it runs, serves or routes reaches every environment: its Deployment's image behind its Service, that Service's selector, its Ingress): no environment's principal may change or delete it, nor scale it (a workload's `/scale`), nor evict, exec, attach, port-forward or proxy into it (a pod); principals of no environment may.",
    defaultMode: 'deny',
    overridable: true,
    example: 'ConfigMap shared/settings carries no stamps: it is the platform\'s, and any environment\'s pods may read it; system:serviceaccount:sandbox-b:janitor acts for "beta" and may not change or delete it (create your own, which is stamped for your environment)',
  }),
  guardPodPolicy: rule({
    id: 'guard.pod-policy',
    webhook: 'validate',
    checks:
      "A NetworkPolicy or PodDisruptionBudget that carries no stamps, in a namespace bound to no environment, whose selector may select an environment's pods or runner pods (it names environments, requires `<prefix>/runner`, or neither excludes runners nor requires the mark of no environment) isolates or protects them: only the platform, managers of every environment it reaches, system controllers and break-glass change its spec or owner references, or delete it (its labels, annotations and finalizers stay anyone's that RBAC lets). A tenant's own, which excludes runners (`selector.scope`), reaches none.",
    defaultMode: 'deny',
    overridable: true,
    example: 'NetworkPolicy shared/runner-egress carries no stamps and its selector reaches the pods or runners of environments "alpha": it is the platform\'s, and only the platform, their managers, system controllers and break-glass may change or delete it (write your own, scoped to your pods)',
  }),
  guardCustomScale: rule({
    id: 'guard.custom-scale',
    webhook: 'validate',
    checks:
      "A /scale of a kind without a row of its own (a custom resource) carries a Scale, not the object, and Deed does not read custom resources: outside a namespace bound to the requester's environment it comes only from system controllers (the HPA controller), the platform and break-glass. The object's own UPDATE of its replicas is judged as any write of it is.",
    defaultMode: 'deny',
    overridable: true,
    example: 'cannot tell whose VirtualMachine shared-labs/lab-vm is (a /scale carries no stamps, and Deed does not read VirtualMachine objects); change spec.replicas with an UPDATE of the object instead',
  }),
} as const satisfies Record<string, RuleInfo>;

/** Rule ids that were renamed, with their new id: a policy naming the old one is refused, with the new name, rather than silently widened. */
export const RENAMED_RULES: ReadonlyMap<string, string> = new Map([['networkpolicy.scope', 'selector.scope']]);

export const RULE_LIST: readonly RuleInfo[] = Object.values(RULES);

export const RULES_BY_ID: ReadonlyMap<string, RuleInfo> = new Map(RULE_LIST.map((r) => [r.id, r]));

/**
 * The rules of a sandbox pod's spec, wherever one stands (pod/sandbox-pod-rules.ts): a Pod's
 * `spec`, every pod template of a kind in the kind table, the pods `deed audit` reads back,
 * in the order their findings are reported. A new pod rule is its file (its catalogue
 * entry and its check) and one line here.
 */
export const POD_SPEC_RULES: readonly Rule<PodSpecSubject>[] = [templateCollisionRule, workspaceRule, controllerTokenRule, hostNetworkRule, processNamespaceRule, priorityClassRule];
