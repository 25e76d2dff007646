// What `deed coverage` cannot derive from the kind table (src/policy/kinds.ts), in one
// place, each entry with the reason a security reviewer would accept: the subresources no
// row routes to Deed, the cluster-scoped kinds that matter, and every field that names
// another object and is not one of the table's `references`. Anything discovery or the
// OpenAPI schemas show that neither the table nor this file places is unclassified, and
// `deed coverage` exits 1 (docs/security-model.md, "After a Kubernetes upgrade").

/** How Deed handles a resource, a subresource or a field. */
export type CoverageClass =
  /** A door of the kind table: reviewed by the first pair of webhooks. */
  | 'guarded'
  /** The default row: stamped at CREATE, guarded and frozen after (the second pair). */
  | 'stamped'
  /** A field judged by a rule whenever the object (or a pod it becomes) is written. */
  | 'judged'
  /** Never sent to admission, or outside the review scope: RBAC's (and the platform's) alone. */
  | 'rbac'
  /** Deed leaves it alone, for the reason given. */
  | 'exempt'
  /** A known gap: a reference Deed does not judge, for the reason given. */
  | 'unjudged'
  /** Nothing places it: a new kind, subresource or field to classify. */
  | 'unclassified';

export interface Classified {
  class: CoverageClass;
  /** Why, in words; the rule ids for `judged`. */
  reason: string;
}

const judged = (rule: string, reason: string): Classified => ({ class: 'judged', reason: `${rule}: ${reason}` });
const exempt = (reason: string): Classified => ({ class: 'exempt', reason });
const rbac = (reason: string): Classified => ({ class: 'rbac', reason });
const unjudged = (reason: string): Classified => ({ class: 'unjudged', reason });

/** The verbs admission never sees. */
export const READ_VERBS: readonly string[] = ['get', 'list', 'watch'];

/**
 * Subresources no row of the kind table routes to Deed, by `resource/subresource` (core
 * group unprefixed, others `group/resource/subresource`). The default row's status and
 * scale subresources are routed (kind-rules.ts, defaultRowRules) and need no entry; a
 * subresource whose only verbs are reads needs none either.
 */
export const SUBRESOURCES: Readonly<Record<string, Classified>> = {
  'pods/log': rbac('a read (GET): never sent to admission; the tenant role keeps it, as view does (docs/security-model.md, "What Deed cannot guard: reads")'),
};

/**
 * Cluster-scoped kinds that bear on Deed, by `group/resource` (the core group's with a
 * leading slash):
 * every cluster-scoped kind is outside the review scope (a namespaceSelector selects
 * namespaced objects only) and RBAC's; these say what guards them besides.
 */
export const CLUSTER_SCOPED: Readonly<Record<string, string>> = {
  '/namespaces': "the review scope's switch: its opt-in label is guarded in the API server by the ValidatingAdmissionPolicy deed-review-scope (status and finalize too); an opted-in namespace's other labels and annotations by deed-namespace-labels, its deletion by deed-namespace-delete",
  'admissionregistration.k8s.io/validatingwebhookconfigurations': "Deed's own webhooks: their UPDATE and DELETE are guarded by the ValidatingAdmissionPolicy deed-review-scope",
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': "Deed's own webhooks: their UPDATE and DELETE are guarded by the ValidatingAdmissionPolicy deed-review-scope",
  'admissionregistration.k8s.io/validatingadmissionpolicies': 'deed-review-scope itself: the platform\'s, by RBAC',
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': 'the binding of deed-review-scope: the platform\'s, by RBAC',
  '/nodes': 'a pod names its node (spec.nodeName) and the scheduler binds it (pods/binding, guarded); nodes themselves are the kubelet\'s and the platform\'s',
  '/persistentvolumes': "a claim binds one by name (spec.volumeName); the platform's storage, by RBAC",
  'rbac.authorization.k8s.io/clusterroles': 'the tenant role deed-sandbox-tenant is one: RBAC\'s escalation check guards who binds it',
  'rbac.authorization.k8s.io/clusterrolebindings': "RBAC's escalation check: no binding grants more than its writer holds",
  'apiextensions.k8s.io/customresourcedefinitions': 'a CRD adds a namespaced kind: the default row stamps and guards it without a row of its own',
};

/**
 * Every field that names another object and is not one of the kind table's `references`,
 * by the schema type that declares it (`core.SecretVolumeSource.secretName`; fields.ts,
 * typeKey). A PodSpec's fields are judged wherever the spec stands: a pod's, a workload's
 * template (the template review) and the pods a controller makes (Controller doors).
 */
export const REFERENCE_FIELDS: Readonly<Record<string, Classified>> = {
  // The Secrets a pod names, in every form (src/policy/pod/secret-references.ts).
  'core.SecretVolumeSource.secretName': judged('secret-ref.*', 'the kubelet mounts the Secret\'s data into the pod'),
  'core.AzureFileVolumeSource.secretName': judged('secret-ref.*', 'the volume plugin reads the Secret\'s credentials for the pod'),
  'core.CSIVolumeSource.nodePublishSecretRef': judged('secret-ref.*', 'the CSI driver gets the Secret\'s data to mount the pod\'s volume'),
  'core.CephFSVolumeSource.secretRef': judged('secret-ref.*', 'the volume plugin reads the Secret\'s credentials for the pod'),
  'core.CinderVolumeSource.secretRef': judged('secret-ref.*', 'the volume plugin reads the Secret\'s credentials for the pod'),
  'core.FlexVolumeSource.secretRef': judged('secret-ref.*', 'the volume plugin reads the Secret\'s credentials for the pod'),
  'core.ISCSIVolumeSource.secretRef': judged('secret-ref.*', 'the volume plugin reads the Secret\'s credentials for the pod'),
  'core.RBDVolumeSource.secretRef': judged('secret-ref.*', 'the volume plugin reads the Secret\'s credentials for the pod'),
  'core.ScaleIOVolumeSource.secretRef': judged('secret-ref.*', 'the volume plugin reads the Secret\'s credentials for the pod'),
  'core.StorageOSVolumeSource.secretRef': judged('secret-ref.*', 'the volume plugin reads the Secret\'s credentials for the pod'),
  'core.VolumeProjection.secret': judged('secret-ref.*', 'the kubelet projects the Secret\'s data into the pod'),
  'core.EnvVarSource.secretKeyRef': judged('secret-ref.*', 'the kubelet puts the Secret\'s value in the container\'s environment'),
  'core.EnvFromSource.secretRef': judged('secret-ref.*', 'the kubelet puts the Secret\'s data in the container\'s environment'),
  'core.PodSpec.imagePullSecrets[]': judged('secret-ref.*', 'the kubelet pulls the pod\'s images with the Secret\'s credentials'),
  'core.ServiceAccount.imagePullSecrets[]': judged(
    'secret-ref.*',
    "the ServiceAccount admission plugin copies them into each pod that runs as the account before Deed reviews the pod, which is judged with them (a controller's pods when made)",
  ),
  // The ConfigMaps a pod names (src/policy/pod/configmap-references.ts).
  'core.Volume.configMap': judged('configmap-ref.*', 'the kubelet mounts the ConfigMap into the pod'),
  'core.VolumeProjection.configMap': judged('configmap-ref.*', 'the kubelet projects the ConfigMap into the pod'),
  'core.EnvVarSource.configMapKeyRef': judged('configmap-ref.*', "the kubelet puts the ConfigMap's value in the container's environment"),
  'core.EnvFromSource.configMapRef': judged('configmap-ref.*', "the kubelet puts the ConfigMap's data in the container's environment"),
  // Claims (src/policy/pod/claim-environment.ts).
  'core.PersistentVolumeClaimVolumeSource.claimName': judged('claim.*', 'the kubelet mounts the claim\'s volume into the pod'),
  'core.PersistentVolumeClaimSpec.dataSource': judged('claim.*', 'the provisioner clones the claim (or restores the VolumeSnapshot) it names'),
  'core.PersistentVolumeClaimSpec.dataSourceRef': judged('claim.*', 'the provisioner clones the claim (or restores the VolumeSnapshot) it names'),
  'core.PodSpec.serviceAccountName': judged('guard.service-account', 'the pod gets a token of the account, which acts for the account\'s environment'),
  'meta.ObjectMeta.ownerReferences[]': judged(
    'reference.*, guard.adoption',
    "the controlling owner's controller counts, adopts or deletes the object: judged at CREATE, and a change of controller is an adoption; an owner reference without controller only makes the garbage collector delete the writer's own object with its owner",
  ),
  // Cluster-scoped targets: the platform's, by RBAC; a tenant cannot make one another's.
  'core.PodSpec.nodeName': rbac('a Node (cluster-scoped): the scheduler\'s and the platform\'s'),
  'core.PodSpec.priorityClassName': judged('template.priority-class', 'a PriorityClass (cluster-scoped, the platform\'s) that no RBAC guards naming: the scheduler preempts lower-priority pods, another environment\'s included, to place the pod, so a sandbox pod names only a class the policy allows; for principals of no environment a ResourceQuota scope (the API server\'s limitedResources) limits who uses which'),
  'core.PodSpec.runtimeClassName': rbac('a RuntimeClass (cluster-scoped): the platform\'s'),
  'core.PodSpec.schedulerName': rbac('a scheduler the platform runs, not an object'),
  'core.PersistentVolumeClaimSpec.storageClassName': rbac('a StorageClass (cluster-scoped): the platform\'s'),
  'core.PersistentVolumeClaimSpec.volumeAttributesClassName': rbac('a VolumeAttributesClass (cluster-scoped): the platform\'s'),
  'core.PersistentVolumeClaimSpec.volumeName': judged('claim.at-binding', 'setting it binds the claim to the volume provisioned (and copied) for it: what the claim is filled from is judged again; the PersistentVolume it names is the platform\'s storage (cluster-scoped, by RBAC), bound to one claim'),
  'core.EndpointAddress.nodeName': rbac('a Node (cluster-scoped): a topology hint for kube-proxy'),
  'discovery.Endpoint.nodeName': rbac('a Node (cluster-scoped): a topology hint for kube-proxy'),
  'core.Binding.target': rbac('the Node the pod is bound to (cluster-scoped); the Binding itself is a door (pod-by-name)'),
  'core.PodCertificateProjection.signerName': judged('template.service-account-token', 'a certificate signer: the kubelet asks it for the pod, as the node, so no RBAC of the pod\'s writer decides; the API server\'s client signer (kubernetes.io/kube-apiserver-client-pod) issues a credential of the pod\'s service account and is refused in a sandbox pod as a token is; another signer is the platform\'s to run'),
  'core.VolumeProjection.clusterTrustBundle': rbac('a ClusterTrustBundle (cluster-scoped): public trust anchors, the platform\'s'),
  'core.WindowsSecurityContextOptions.gmsaCredentialSpecName': rbac('a GMSA credential spec (cluster-scoped), whose use its webhook and RBAC authorise'),
  'networking.IngressSpec.ingressClassName': rbac('an IngressClass (cluster-scoped): the platform\'s'),
  'resource.ExactDeviceRequest.deviceClassName': rbac('a DeviceClass (cluster-scoped): the platform\'s'),
  'resource.DeviceSubRequest.deviceClassName': rbac('a DeviceClass (cluster-scoped): the platform\'s'),
  'storage.CSIStorageCapacity.storageClassName': rbac('a StorageClass (cluster-scoped); CSIStorageCapacity is the CSI driver\'s report'),
  'rbac.RoleBinding.roleRef': rbac("RBAC's escalation check: a binding grants no more than its writer holds (or may bind)"),
  'rbac.RoleBinding.subjects[]': rbac("RBAC's escalation check: a binding grants no more than its writer holds (or may bind)"),
  'rbac.PolicyRule.resourceNames[]': rbac('names what a Role grants: RBAC\'s escalation check'),
  // Names that are not objects of the API.
  'meta.ObjectMeta.generateName': exempt("a prefix of the object's own name"),
  'core.ContainerResizePolicy.resourceName': exempt('a compute resource (cpu, memory), not an object'),
  'core.EphemeralContainer.targetContainerName': judged('workspace.init-or-ephemeral', "a container of the same pod, whose processes (and through /proc its files) the ephemeral container shares: never the main container, nor one that mounts the workspace, runtime or auth volume"),
  'core.ResourceFieldSelector.containerName': exempt('a container of the same pod'),
  'batch.PodFailurePolicyOnExitCodesRequirement.containerName': exempt("a container of the Job's own pods"),
  'core.FileKeySelector.volumeName': judged('template.reserved-mount, workspace.init-or-ephemeral', 'a variable read from a file of the pod\'s volume reaches it as a mount does'),
  'core.ScopedResourceSelectorRequirement.scopeName': exempt('a quota scope, not an object'),
  'core.ServiceSpec.externalName': exempt('a DNS name the cluster DNS answers with a CNAME; anyone may resolve any name'),
  'core.WindowsSecurityContextOptions.runAsUserName': exempt('a Windows user inside the container'),
  'core.AzureDiskVolumeSource.diskName': exempt('storage outside Kubernetes, named to an in-tree volume plugin: Pod Security restricted forbids the volume type'),
  'core.AzureFileVolumeSource.shareName': exempt('storage outside Kubernetes, named to an in-tree volume plugin: Pod Security restricted forbids the volume type'),
  'core.FlockerVolumeSource.datasetName': exempt('storage outside Kubernetes, named to an in-tree volume plugin: Pod Security restricted forbids the volume type'),
  'core.GCEPersistentDiskVolumeSource.pdName': exempt('storage outside Kubernetes, named to an in-tree volume plugin: Pod Security restricted forbids the volume type'),
  'core.ISCSIVolumeSource.initiatorName': exempt('an iSCSI initiator name, not an object'),
  'core.ScaleIOVolumeSource.volumeName': exempt('storage outside Kubernetes, named to an in-tree volume plugin: Pod Security restricted forbids the volume type'),
  'core.StorageOSVolumeSource.volumeName': exempt('storage outside Kubernetes, named to an in-tree volume plugin: Pod Security restricted forbids the volume type'),
  'core.VsphereVirtualDiskVolumeSource.storagePolicyName': exempt('a vSphere storage policy, not an object'),
  // References nothing acts on for the writer.
  'core.EndpointAddress.targetRef': exempt('names the pod behind an address, for readers; kube-proxy routes by the address (the Endpoints is judged by the Service it names)'),
  'discovery.Endpoint.targetRef': exempt('names the pod behind an address, for readers; kube-proxy routes by the address (the slice is judged by the Service it names)'),
  'autoscaling.ObjectMetricSource.describedObject': exempt('the metrics adapter reads a metric about it; nothing is written to it (the HPA writes only its scaleTargetRef\'s /scale, judged)'),
  'core.ServiceAccount.secrets[]': exempt('the legacy token controller\'s bookkeeping: since bound tokens nothing mounts from it; a token Secret naming an account is judged (guard.service-account)'),
  // Known gaps: references Deed does not judge yet.
  'core.PodSchedulingGroup.podGroupName': unjudged('the scheduler places the pod with its group; another environment\'s group could be joined (alpha scheduling API, not served by default)'),
};

/** A custom resource's fields are its operator's: Deed reads no custom resource and cannot tell which of its fields are followed. */
export const CUSTOM_RESOURCE_FIELD = unjudged("a custom resource's field: its operator follows it, which Deed does not know; the object itself is the default row's (stamped, guarded)");
