// The whole in-cluster install as Kubernetes objects: a pure function of its options, so
// `deed manifests`, the committed kustomize base and the tests share one source. The Helm
// chart under manifests/helm/deed mirrors these objects by hand, but for its lists of
// kinds, which it includes from the helpers kind-rules.ts generates.
import { createHash } from 'node:crypto';
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1RoleBinding,
  V1ConfigMap,
  V1Container,
  V1CronJob,
  V1Deployment,
  V1MatchCondition,
  V1MutatingWebhookConfiguration,
  V1Namespace,
  V1PodDisruptionBudget,
  V1PodSecurityContext,
  V1SecurityContext,
  V1Service,
  V1ServiceAccount,
  V1ValidatingWebhookConfiguration,
  V1Volume,
  V1NetworkPolicy,
} from '@kubernetes/client-node';
import { isMap, parseDocument } from 'yaml';
import type { UserInfo } from '../admission/types.js';
import { ConfigError, parseConfig } from '../config/load.js';
import { ATTESTATION_KEY_DIR, DEFAULT_WORKLOAD_CONTROLLERS, type Config } from '../config/schema.js';
import { LEGACY_KEY_ID } from '../policy/stamps/key-ring.js';
import { resolveRequester } from '../policy/requester/identity.js';
import { compilePolicy } from '../policy/policy.js';
import { REPORT_APIS, type ReportApi } from '../audit/report.js';
import { policyReportCrd } from './policy-report-crd.js';
import { celList } from './admission-policy.js';
import { auditKindRules, defaultRowExclusion, defaultRowRules, keepStampsCondition, keptStampsRules, mutatingRules, operatorStampsCondition, operatorStampsRules, reaperKindRules, reaperScopeKindRules, validatingRules, webhookLookupRules } from './kind-rules.js';
export { defaultRowExcluded, mutatingRules, validatingRules } from './kind-rules.js';
import { reviewScopePolicy } from './review-scope-policy.js';
import { createStampsPolicy } from './create-stamps-policy.js';
import { namespaceDeletePolicy } from './namespace-delete-policy.js';
import { cronJobActivePolicy } from './cronjob-active-policy.js';
import { hostnamesPolicy } from './hostnames-policy.js';
import { namespaceLabelsPolicy } from './namespace-labels-policy.js';
import { reaperDeletePolicy } from './reaper-delete-policy.js';
import { stampKeys } from '../policy/stamps/keys.js';
import { VOLUME_BINDER } from '../policy/rules/claim-binding.js';
import { tenantClusterRole } from './tenant-role.js';

export const NAME = 'deed';
export const DEFAULT_NAMESPACE = 'deed-system';
export const CONFIG_DIR = '/etc/deed';
export const POLICY_FILE = `${CONFIG_DIR}/policy.yaml`;
export const TLS_CERT_FILE = `${CONFIG_DIR}/tls/tls.crt`;
export const TLS_KEY_FILE = `${CONFIG_DIR}/tls/tls.key`;
export const ATTESTATION_KEY_FILE = `${ATTESTATION_KEY_DIR}/${LEGACY_KEY_ID}`;
/** The Secret (type kubernetes.io/tls) holding the serving certificate; see docs/install.md. */
export const TLS_SECRET = 'deed-tls';
/** The Secret holding the attestation key ring, one entry per key id (`key` before rings); created by the operator, never rendered. */
export const ATTESTATION_SECRET = 'deed-attestation';
import { namespaceSelector } from '../policy/review-scope.js';
export { SANDBOX_LABEL, SANDBOX_LABEL_VALUE, namespaceSelector } from '../policy/review-scope.js';
/** The uid of the `node` user in the official Node images (see Dockerfile). */
export const RUN_AS_USER = 1000;
const PORT = 8443;
/** Probes and metrics, plain HTTP (deed serve --metrics-port): the kubelet and Prometheus need no client certificate. */
export const METRICS_PORT = 8080;

export const DEFAULT_POLICY = `# Deed's policy: see docs/configuration.md. Every service account in an opted-in
# namespace acts for the environment "default"; list your environments instead.
labelPrefix: deed.dev
environments:
  - id: default
    groups: ["system:serviceaccounts"]
`;

export interface ManifestOptions {
  namespace: string;
  image: string;
  /** Base64 of the PEM CA bundle, for the webhooks' clientConfig.caBundle. */
  caBundle?: string;
  /** The policy file's YAML text; DEFAULT_POLICY otherwise. */
  policy?: string;
  /** One reaper CronJob (and service account) per environment id. */
  reaperEnvironments?: string[];
  /**
   * The namespaces an environment's reaper sweeps and may delete in (RoleBindings there);
   * an environment not named here sweeps every namespace, with a ClusterRoleBinding.
   */
  reaperNamespaces?: Record<string, string[]>;
  reaperSchedule?: string;
  /**
   * A ConfigMap in Deed's namespace holding, under `ca.crt`, the CA of the client
   * certificate the API server presents: the webhook port then requires it (--client-ca).
   */
  clientCaConfigMap?: string;
  /** CIDRs the webhook port admits (the API server's source); from anywhere when empty. */
  webhookFrom?: string[];
  /** The audit CronJob (deed audit --write-reports), its service account and read-only RBAC. */
  audit?: AuditOptions;
  /** Keep Secret metadata in the lookup cache (list and watch on Secrets); true unless false. */
  cacheSecrets?: boolean;
  /** The ClusterRole for tenants of a shared namespace (tenant-role.ts), to bind with RoleBindings. */
  tenantRole?: boolean;
}

export interface AuditOptions {
  schedule?: string;
  reportApi?: ReportApi;
  /** Also the PolicyReport CRD (wgpolicyk8s only): leave it out where Kyverno or Policy Reporter owns it. */
  installCrd?: boolean;
}

export const AUDIT_NAME = `${NAME}-audit`;
export const DEFAULT_AUDIT_SCHEDULE = '17 * * * *';

export function webhookServiceAccount(namespace: string): string {
  return `system:serviceaccount:${namespace}:${NAME}`;
}

export function reaperName(environment: string): string {
  return `${NAME}-reaper-${environment}`;
}

/** What the API server calls a reaper's token. */
export function reaperServiceAccount(namespace: string, environment: string): string {
  return `system:serviceaccount:${namespace}:${reaperName(environment)}`;
}

/** Renders every object of the install, in the order `kubectl apply` should create them. */
export function renderManifests(opts: ManifestOptions): KubernetesObject[] {
  const namespace = opts.namespace;
  const reapers = [...new Set(opts.reaperEnvironments ?? [])];
  for (const env of reapers) {
    // The id becomes part of a CronJob name: a DNS label, and CronJob names stop at 52.
    if (!/^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/.test(env)) throw new ConfigError(`--reaper-environment ${env}: must be a lowercase DNS label of at most 40 characters to name the reaper's CronJob`);
  }
  const policy = clusterPolicy(opts.policy ?? DEFAULT_POLICY, namespace, reapers);
  const config = parseConfig(parseDocument(policy).toJS({ maxAliasCount: 100 }), 'the policy');
  const keyIds = attestationKeyIds(config);
  const objects: KubernetesObject[] = [
    namespaceObject(namespace),
    serviceAccount(NAME, namespace, 'webhook'),
    webhookClusterRole(opts.cacheSecrets ?? true),
    webhookBinding(namespace),
    configMap(namespace, policy),
    deployment(opts.image, namespace, policy, keyIds, opts.cacheSecrets ?? true, opts.clientCaConfigMap),
    podDisruptionBudget(namespace),
    service(namespace),
    networkPolicy(namespace, opts.webhookFrom ?? []),
    mutatingWebhooks(namespace, opts.caBundle, config.workloadControllers.users, config.labelPrefix),
    validatingWebhooks(namespace, opts.caBundle, config.workloadControllers.users),
    ...reviewScopePolicy(NAME, NAME, config, labels('webhook')),
    ...namespaceDeletePolicy(NAME, config, labels('webhook')),
    ...namespaceLabelsPolicy(NAME, webhookServiceAccount(namespace), config, labels('webhook')),
    ...cronJobActivePolicy(NAME, config, labels('webhook')),
    ...hostnamesPolicy(NAME, namespace, config, labels('webhook')),
    ...createStampsPolicy(NAME, namespace, config, matchConditions(namespace, config.workloadControllers.users), labels('webhook')),
  ];
  const scoped = reaperNamespaces(opts.reaperNamespaces ?? {}, reapers);
  if (reapers.length > 0) {
    objects.push(reaperClusterRole());
    if (scoped.size > 0) objects.push(reaperScopeClusterRole());
    // RBAC lets a reaper delete; this holds its deletes to its environment's objects in the review scope.
    const accounts = reapers.map((env) => ({ username: reaperServiceAccount(namespace, env), environment: env }));
    objects.push(...reaperDeletePolicy(NAME, namespace, accounts, stampKeys(config.labelPrefix), labels('reaper')));
    for (const env of reapers) {
      const sweeps = scoped.get(env);
      // Named namespaces: delete only there; owners (get pods) and the review scope (list namespaces) cluster-wide.
      const bindings = sweeps === undefined ? [reaperBinding(env, namespace)] : [reaperBinding(env, namespace, `${NAME}-reaper-scope`), ...sweeps.map((ns) => reaperRoleBinding(env, namespace, ns))];
      objects.push(serviceAccount(reaperName(env), namespace, 'reaper'), ...bindings, reaperCronJob(env, opts.image, namespace, opts.reaperSchedule ?? '*/10 * * * *', keyIds, sweeps ?? []));
    }
  }
  if (opts.audit !== undefined) {
    const api = opts.audit.reportApi ?? 'wgpolicyk8s';
    if (opts.audit.installCrd && api !== 'wgpolicyk8s') throw new ConfigError('the bundled CRD is the wgpolicyk8s PolicyReport; install the openreports CRDs from their project');
    objects.push(
      serviceAccount(AUDIT_NAME, namespace, 'audit'),
      auditClusterRole(api),
      auditBinding(namespace),
      auditCronJob(opts.image, namespace, opts.audit.schedule ?? DEFAULT_AUDIT_SCHEDULE, api, keyIds),
    );
    // A CRD first: the API must exist before anything writes a report.
    if (opts.audit.installCrd) objects.unshift(policyReportCrd());
  }
  if (opts.tenantRole) objects.push(tenantClusterRole(labels('tenant')));
  return objects;
}

/** The attestation Secret's entries the pods mount: every key id of the ring (`key` alone before rings). */
export function attestationKeyIds(config: Config): string[] {
  return config.attestation.keys?.map((k) => k.id) ?? [LEGACY_KEY_ID];
}

/**
 * The policy as it runs in the cluster: the attestation keys at their mounted paths, and each
 * reaper's service account acting for its environment (the validating webhook refuses a
 * delete of a managed object by a principal acting for another environment or none).
 * Comments in the operator's file are kept.
 */
export function clusterPolicy(text: string, namespace: string, reapers: string[]): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new ConfigError(`cannot parse the policy as YAML: ${doc.errors[0]!.message}`);
  if (doc.contents === null) doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  if (!isMap(doc.contents)) throw new ConfigError('the policy must be a YAML mapping');
  const keyFile: unknown = doc.getIn(['attestation', 'keyFile']);
  const ring: unknown = doc.getIn(['attestation', 'keys']);
  if (keyFile !== undefined && keyFile !== ATTESTATION_KEY_FILE) {
    throw new ConfigError(`attestation.keyFile: in a cluster the key is mounted at ${ATTESTATION_KEY_FILE} from the Secret ${ATTESTATION_SECRET}; leave it unset or set it to that path`);
  }
  if (ring === undefined) doc.setIn(['attestation', 'keyFile'], ATTESTATION_KEY_FILE);
  else {
    // Each key is the Secret's entry of the same name, mounted under ATTESTATION_KEY_DIR (the default file).
    const parsed = parseConfig(doc.toJS({ maxAliasCount: 100 }), 'the policy');
    parsed.attestation.keys!.forEach((k, i) => {
      if (k.file !== undefined && k.file !== `${ATTESTATION_KEY_DIR}/${k.id}`)
        throw new ConfigError(`attestation.keys.${i}.file: in a cluster key "${k.id}" is the entry "${k.id}" of the Secret ${ATTESTATION_SECRET}, mounted at ${ATTESTATION_KEY_DIR}/${k.id}; leave file unset`);
    });
  }
  const before = parseConfig(doc.toJS({ maxAliasCount: 100 }), 'the policy');
  for (const env of reapers) {
    const i = before.environments.findIndex((e) => e.id === env);
    if (i < 0) throw new ConfigError(`--reaper-environment ${env}: the policy has no environment "${env}"`);
    const account = `${namespace}:${reaperName(env)}`;
    if (!before.environments[i]!.serviceAccounts.includes(account)) {
      if (doc.getIn(['environments', i, 'serviceAccounts']) === undefined) doc.setIn(['environments', i, 'serviceAccounts'], doc.createNode([]));
      doc.addIn(['environments', i, 'serviceAccounts'], account);
    }
  }
  const after = compilePolicy(parseConfig(doc.toJS({ maxAliasCount: 100 }), 'the policy'));
  for (const env of reapers) {
    // What the API server will say about the reaper's token: it must act for its own environment only.
    const username = reaperServiceAccount(namespace, env);
    const groups = ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'];
    const acts = resolveRequester({ username, groups, extra: {} } satisfies UserInfo, after).environment;
    if (acts.kind !== 'one') {
      throw new ConfigError(`--reaper-environment ${env}: ${username} would act for ${acts.kind === 'none' ? 'no environment' : `several environments (${acts.ids.join(', ')})`}; narrow the policy's groups`);
    }
  }
  return doc.toString();
}

function labels(component: string): Record<string, string> {
  return { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/instance': NAME, 'app.kubernetes.io/component': component };
}

function metadata(name: string, namespace: string | undefined, component: string) {
  return { name, ...(namespace ? { namespace } : {}), labels: labels(component) };
}

function namespaceObject(namespace: string): V1Namespace {
  // Restricted Pod Security: Deed's pods need nothing more.
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace, labels: { ...labels('webhook'), 'pod-security.kubernetes.io/enforce': 'restricted' } },
  };
}

function serviceAccount(name: string, namespace: string, component: string): V1ServiceAccount {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata(name, namespace, component), automountServiceAccountToken: false };
}

function configMap(namespace: string, policy: string): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: metadata(`${NAME}-policy`, namespace, 'webhook'), data: { 'policy.yaml': policy } };
}

const podSecurityContext: V1PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: RUN_AS_USER,
  runAsGroup: RUN_AS_USER,
  fsGroup: RUN_AS_USER,
  seccompProfile: { type: 'RuntimeDefault' },
};

const containerSecurityContext: V1SecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

/**
 * One projected volume at /etc/deed: the policy, the serving certificate and the
 * attestation keys (one file per key id under attestation/). Projected (not subPath) so Secret and ConfigMap updates reach the
 * running pods, which reload the certificate without a restart.
 */
export const CLIENT_CA_FILE = `${CONFIG_DIR}/client-ca/ca.crt`;

function configVolume(withTls: boolean, keyIds: string[], clientCaConfigMap?: string): V1Volume {
  return {
    name: 'config',
    projected: {
      defaultMode: 0o440,
      sources: [
        { configMap: { name: `${NAME}-policy`, items: [{ key: 'policy.yaml', path: 'policy.yaml' }] } },
        ...(withTls
          ? [{ secret: { name: TLS_SECRET, items: [{ key: 'tls.crt', path: 'tls/tls.crt' }, { key: 'tls.key', path: 'tls/tls.key' }] } }]
          : []),
        // Listed entries only: a key the policy names but the Secret lacks keeps the new pod from
        // starting (the rollout stalls with the old pods serving) instead of starting without it.
        { secret: { name: ATTESTATION_SECRET, items: keyIds.map((id) => ({ key: id, path: `attestation/${id}` })) } },
        ...(clientCaConfigMap !== undefined ? [{ configMap: { name: clientCaConfigMap, items: [{ key: 'ca.crt', path: 'client-ca/ca.crt' }] } }] : []),
      ],
    },
  };
}

export const SERVE_ARGS = [
  'serve',
  '--host', '0.0.0.0',
  '--port', String(PORT),
  '--metrics-port', String(METRICS_PORT),
  '--config', POLICY_FILE,
  '--tls-cert', TLS_CERT_FILE,
  '--tls-key', TLS_KEY_FILE,
  '--shutdown-delay', '5',
];

function webhookContainer(image: string, cacheSecrets: boolean, clientCa: boolean): V1Container {
  // On their own port: at the bound on webhook connections (--max-connections) a probe to
  // the webhook port would be refused and take the replica out of service; and with
  // --client-ca the kubelet, which presents no client certificate, could not connect.
  const probe = (path: string, periodSeconds: number) => ({
    httpGet: { path, port: 'metrics', scheme: 'HTTP' },
    periodSeconds,
    timeoutSeconds: 2,
    failureThreshold: 3,
  });
  return {
    name: 'webhook',
    image,
    imagePullPolicy: 'IfNotPresent',
    args: [...SERVE_ARGS, ...(cacheSecrets ? [] : ['--no-cache-secrets']), ...(clientCa ? ['--client-ca', CLIENT_CA_FILE] : [])],
    ports: [
      { name: 'https', containerPort: PORT, protocol: 'TCP' },
      { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
    ],
    env: [
      { name: 'DEED_LOG_LEVEL', value: 'info' },
      // Its own namespace, which the webhooks exclude from the review scope (deed serve --deed-namespace).
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ],
    livenessProbe: { ...probe('/healthz', 10), initialDelaySeconds: 5 },
    readinessProbe: probe('/readyz', 5),
    // Admission latency is on every sandbox write: a request high enough that the pod is
    // not starved, a memory limit since an UPDATE review can carry two 3 MiB objects.
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '256Mi' } },
    securityContext: containerSecurityContext,
    volumeMounts: [
      { name: 'config', mountPath: CONFIG_DIR, readOnly: true },
      { name: 'tmp', mountPath: '/tmp' },
    ],
  };
}

function deployment(image: string, namespace: string, policy: string, keyIds: string[], cacheSecrets: boolean, clientCaConfigMap: string | undefined): V1Deployment {
  const selector = labels('webhook');
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(NAME, namespace, 'webhook'),
    spec: {
      replicas: 2,
      revisionHistoryLimit: 3,
      selector: { matchLabels: selector },
      // Never drop below one ready replica while rolling: failurePolicy Fail blocks writes.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        // The policy is read at start: a changed policy rolls the pods.
        metadata: { labels: selector, annotations: { 'checksum/policy': createHash('sha256').update(policy).digest('hex') } },
        spec: {
          serviceAccountName: NAME,
          // Its token watches what lookups need (lookup cache) and reads what the cache misses.
          automountServiceAccountToken: true,
          securityContext: podSecurityContext,
          // deed serve exits by itself within --grace-period (25 s from SIGTERM, the 5 s
          // --shutdown-delay included), before the kubelet's SIGKILL at 30 s.
          terminationGracePeriodSeconds: 30,
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } },
            { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } },
          ],
          containers: [webhookContainer(image, cacheSecrets, clientCaConfigMap !== undefined)],
          volumes: [configVolume(true, keyIds, clientCaConfigMap), { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } }],
        },
      },
    },
  };
}

function podDisruptionBudget(namespace: string): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: metadata(NAME, namespace, 'webhook'),
    spec: { minAvailable: 1, selector: { matchLabels: labels('webhook') } },
  };
}

function service(namespace: string): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(NAME, namespace, 'webhook'),
    spec: {
      type: 'ClusterIP',
      selector: labels('webhook'),
      ports: [
        { name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' },
        // For a ServiceMonitor; the NetworkPolicy decides who may scrape.
        { name: 'metrics', port: METRICS_PORT, targetPort: 'metrics', protocol: 'TCP' },
      ],
    },
  };
}

/**
 * Ingress to Deed's pods. The webhook port is open unless `webhookFrom` lists CIDRs: the
 * API server reaches it from an address that differs per cluster (a node, a control-plane
 * host outside the pod network, a konnectivity agent), and a rule that misses it fails
 * every matching write. The
 * metrics and probe port is listed nowhere, so only the node reaches it (Kubernetes
 * always allows traffic from a pod's own node: the kubelet's probes); an overlay or the
 * chart's networkPolicy values add Prometheus. No egress rule: Deed calls nothing.
 */
function networkPolicy(namespace: string, webhookFrom: string[]): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: metadata(NAME, namespace, 'webhook'),
    spec: {
      podSelector: { matchLabels: labels('webhook') },
      policyTypes: ['Ingress'],
      ingress: [{ ports: [{ port: PORT, protocol: 'TCP' }], ...(webhookFrom.length > 0 ? { from: webhookFrom.map((cidr) => ({ ipBlock: { cidr } })) } : {}) }],
    },
  };
}

/** CEL over the authenticated requester, which the client cannot choose (unlike labels). */
export function matchConditions(namespace: string, controllers: readonly string[] = DEFAULT_WORKLOAD_CONTROLLERS): V1MatchCondition[] {
  return [
    { name: 'exclude-deed-itself', expression: `request.userInfo.username != '${webhookServiceAccount(namespace)}'` },
    { name: 'exclude-kube-system-service-accounts', expression: kubeSystemExclusion(controllers) },
  ];
}

/**
 * kube-system's service accounts are not sent to Deed, but for the workload controllers'
 * creations (judged as their owner's environment's) and their changes of owner references
 * (adoption and release): docs/security-model.md, "Controller doors". The ownerReferences
 * comparison reads the objects, so it is evaluated only for those controllers' UPDATEs. The
 * request of a write to the object itself has no subResource key at all.
 */
export function kubeSystemExclusion(controllers: readonly string[]): string {
  const excluded = `!('system:serviceaccounts:kube-system' in request.userInfo.groups) || ${VOLUME_BINDING}`;
  if (controllers.length === 0) return excluded;
  const refs = (o: string) => `(has(${o}.metadata.ownerReferences) ? ${o}.metadata.ownerReferences : [])`;
  return (
    `${excluded} || ` +
    `(request.userInfo.username in ${celList(controllers)} && (!has(request.subResource) || request.subResource == '') && ` +
    `(request.operation == 'CREATE' || (request.operation == 'UPDATE' && ${refs('object')} != ${refs('oldObject')})))`
  );
}

/**
 * The PV controller's binding of a claim filled from a data source to its volume
 * (rules/claim-binding.ts): an UPDATE of the claim itself that sets `spec.volumeName`, empty
 * before. Once in such a claim's life; the bindings of every other claim are not sent, so
 * they do not wait for Deed.
 */
const VOLUME_BINDING =
  `(request.userInfo.username == '${VOLUME_BINDER}' && request.resource.group == '' && request.resource.resource == 'persistentvolumeclaims' && request.operation == 'UPDATE' && (!has(request.subResource) || request.subResource == '') && ` +
  "(has(object.spec.dataSource) || has(object.spec.dataSourceRef)) && has(object.spec.volumeName) && object.spec.volumeName != '' && (!has(oldObject.spec.volumeName) || oldObject.spec.volumeName == ''))";

function webhookCommon(namespace: string, path: string, caBundle: string | undefined, controllers: readonly string[]) {
  return {
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    // Well under the API server's 10 s default and cap (30 s): a slow webhook blocks writes.
    timeoutSeconds: 5,
    matchPolicy: 'Equivalent',
    namespaceSelector: namespaceSelector(namespace),
    matchConditions: matchConditions(namespace, controllers),
    clientConfig: { service: { namespace, name: NAME, path, port: 443 }, ...(caBundle ? { caBundle } : {}) },
  };
}

export function mutatingWebhooks(namespace: string, caBundle: string | undefined, controllers: readonly string[], labelPrefix: string): V1MutatingWebhookConfiguration {
  const common = webhookCommon(namespace, '/admit', caBundle, controllers);
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: metadata(NAME, undefined, 'webhook'),
    webhooks: [
      {
        name: 'mutate.deed.dev',
        // /admit stamps and judges a CREATE whole: one call per create (docs/security-model.md, "One call per create").
        ...webhookCommon(namespace, '/admit', caBundle, controllers),
        rules: mutatingRules(),
        // Called again when a later mutating webhook changes the object: Deed keeps its own
        // stamps and judges the object as changed (src/policy/create-judgement.ts).
        reinvocationPolicy: 'IfNeeded',
      },
      {
        name: 'default.mutate.deed.dev',
        // One call per create here too: /admit stamps and judges the CREATE whole.
        ...defaultRowCommon(namespace, '/admit', caBundle, controllers),
        rules: defaultRowRules('mutating'),
        reinvocationPolicy: 'IfNeeded',
      },
      {
        name: 'stamps.mutate.deed.dev',
        // Only an UPDATE that drops every one of Deed's stamps from an environment's object (a
        // whole object replaced as its author wrote it, `kubectl replace -f`): Deed keeps them
        // as stored. No other UPDATE is sent (src/policy/stamps/kept-stamps.ts).
        ...common,
        matchConditions: [...common.matchConditions, { name: 'drops-every-stamp', expression: keepStampsCondition(labelPrefix) }],
        rules: keptStampsRules(),
      },
      // Only a listed controller's UPDATE of an environment's Secret it made (an operator's
      // refresh, which rewrites labels and annotations): Deed keeps its stamps as stored.
      ...(controllers.length === 0
        ? []
        : [{ name: 'operator-stamps.mutate.deed.dev', ...common, matchConditions: [...common.matchConditions, { name: 'listed-operator', expression: operatorStampsCondition(labelPrefix, controllers) }], rules: operatorStampsRules() }]),
    ],
  };
}

export function validatingWebhooks(namespace: string, caBundle: string | undefined, controllers: readonly string[]): V1ValidatingWebhookConfiguration {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: metadata(NAME, undefined, 'webhook'),
    webhooks: [
      {
        name: 'validate.deed.dev',
        ...webhookCommon(namespace, '/validate', caBundle, controllers),
        rules: validatingRules(),
      },
      {
        name: 'default.validate.deed.dev',
        ...defaultRowCommon(namespace, '/validate', caBundle, controllers),
        rules: defaultRowRules('validating'),
      },
    ],
  };
}

/**
 * The default row's webhooks (docs/security-model.md, "The default row"): every namespaced
 * kind the first pair does not name, custom resources included, but the default row's
 * exceptions (events, leases: src/policy/kinds.ts gives each reason).
 */
function defaultRowCommon(namespace: string, path: string, caBundle: string | undefined, controllers: readonly string[]) {
  // The workload controllers' writes reach it too (one matchCondition for both pairs); what they make there (ControllerRevisions) passes.
  const common = webhookCommon(namespace, path, caBundle, controllers);
  return { ...common, matchConditions: [...common.matchConditions, { name: 'exclude-own-rows-and-exceptions', expression: defaultRowExclusion() }] };
}

/**
 * The webhook looks up the pod an eviction or binding names and the claims and Secrets a
 * pod or template names, from a cache kept by list and watch, read with get on a miss;
 * the snapshots a claim restores with get. It watches the opted-in namespaces for its
 * review scope. RBAC cannot grant metadata only: list and watch on Secrets can read their
 * data, so caching them is a choice (cacheSecrets).
 */
function webhookClusterRole(cacheSecrets: boolean): V1ClusterRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: metadata(NAME, undefined, 'webhook'),
    rules: webhookLookupRules(cacheSecrets),
  };
}

function webhookBinding(namespace: string): V1ClusterRoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: metadata(NAME, undefined, 'webhook'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: NAME },
    subjects: [{ kind: 'ServiceAccount', name: NAME, namespace }],
  };
}

function reaperClusterRole(): V1ClusterRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: metadata(`${NAME}-reaper`, undefined, 'reaper'),
    // List to find candidates, get to check an owner, delete to reap, list namespaces to know
    // the review scope (stamps count only where Deed reviews), list run leases to know whether
    // one is renewed. No create, update, patch or watch.
    rules: [...reaperKindRules(), { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }],
  };
}

function reaperBinding(environment: string, namespace: string, role = `${NAME}-reaper`): V1ClusterRoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: metadata(reaperName(environment), undefined, 'reaper'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: reaperName(environment), namespace }],
  };
}

/** What a reaper confined to some namespaces needs everywhere: its owners' pods (get) and the review scope (list namespaces). No delete. */
function reaperScopeClusterRole(): V1ClusterRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: metadata(`${NAME}-reaper-scope`, undefined, 'reaper'),
    rules: [...reaperScopeKindRules(), { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }],
  };
}

/** The reaper's list and delete rights in one namespace it sweeps. */
function reaperRoleBinding(environment: string, namespace: string, sweeps: string): V1RoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: metadata(reaperName(environment), sweeps, 'reaper'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${NAME}-reaper` },
    subjects: [{ kind: 'ServiceAccount', name: reaperName(environment), namespace }],
  };
}

const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function reaperNamespaces(given: Record<string, string[]>, reapers: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [env, namespaces] of Object.entries(given)) {
    if (!reapers.includes(env)) throw new ConfigError(`--reaper-namespace ${env}=...: no reaper for environment "${env}" (add --reaper-environment ${env})`);
    for (const ns of namespaces) if (!NAMESPACE_NAME.test(ns)) throw new ConfigError(`--reaper-namespace ${env}=${ns}: not a namespace name`);
    if (namespaces.length > 0) out.set(env, [...new Set(namespaces)]);
  }
  return out;
}

/**
 * A sweep's live heap is small and flat (a few list pages); left alone, V8 lets the young
 * generation and the old one grow by tens of MiB before collecting. These bounds keep the
 * peak near what is live (docs/performance.md, the reaper) at no measurable cost in speed.
 * The audit's CronJob runs with them too: with Node's default heap it peaked past its 256 MiB
 * limit, and a container killed for memory writes no report.
 */
export const REAPER_NODE_OPTIONS = '--max-semi-space-size=1 --max-old-space-size=96';

function reaperCronJob(environment: string, image: string, namespace: string, schedule: string, keyIds: string[], sweeps: string[]): V1CronJob {
  return commandCronJob({
    name: reaperName(environment),
    component: 'reaper',
    namespace,
    schedule,
    deadlineSeconds: 600,
    keyIds,
    container: {
      name: 'reaper',
      image,
      args: ['reap', '--environment', environment, '--once', '--apply', '--deed-namespace', namespace, '--config', POLICY_FILE, ...sweeps.flatMap((ns) => ['--namespace', ns])],
      env: [{ name: 'NODE_OPTIONS', value: REAPER_NODE_OPTIONS }],
    },
    // The deadline ends the pod with SIGTERM: the sweep stops new deletes, lets those in
    // flight finish (each within --timeout) and prints its summary before this runs out.
    terminationGracePeriodSeconds: 30,
  });
}

/**
 * A CronJob that runs one `deed` command with the policy mounted: the reaper's and the
 * audit's. Each runs as its own service account and talks to the API server, so only
 * these pods get a token. A run holds a few list pages, not every object: its peak is
 * flat in their number (docs/performance.md), with room to spare in the limit.
 */
function commandCronJob(o: {
  name: string;
  component: 'reaper' | 'audit';
  namespace: string;
  schedule: string;
  deadlineSeconds: number;
  keyIds: string[];
  container: Pick<V1Container, 'name' | 'image' | 'args' | 'env'>;
  terminationGracePeriodSeconds?: number;
}): V1CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: metadata(o.name, o.namespace, o.component),
    spec: {
      schedule: o.schedule,
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: 1,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        spec: {
          backoffLimit: 0,
          activeDeadlineSeconds: o.deadlineSeconds,
          template: {
            metadata: { labels: labels(o.component) },
            spec: {
              serviceAccountName: o.name,
              automountServiceAccountToken: true,
              restartPolicy: 'Never',
              ...(o.terminationGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds: o.terminationGracePeriodSeconds } : {}),
              securityContext: podSecurityContext,
              containers: [
                {
                  name: o.container.name,
                  image: o.container.image,
                  imagePullPolicy: 'IfNotPresent',
                  args: o.container.args,
                  ...(o.container.env ? { env: o.container.env } : {}),
                  resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
                  securityContext: containerSecurityContext,
                  volumeMounts: [{ name: 'config', mountPath: CONFIG_DIR, readOnly: true }],
                },
              ],
              volumes: [configVolume(false, o.keyIds)],
            },
          },
        },
      },
    },
  };
}

/**
 * The audit reads (list the reaped kinds and namespaces, get an owner pod) and writes only
 * its reports. A list of Secrets carries their data in RBAC's eyes: the audit asks for
 * metadata only, and never reads a Secret's data.
 */
function auditClusterRole(api: ReportApi): V1ClusterRole {
  const g = REPORT_APIS[api];
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: metadata(AUDIT_NAME, undefined, 'audit'),
    rules: [
      ...auditKindRules(),
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] },
      { apiGroups: [g.group], resources: [g.plural], verbs: ['get', 'list', 'create', 'update', 'delete'] },
    ],
  };
}

function auditBinding(namespace: string): V1ClusterRoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: metadata(AUDIT_NAME, undefined, 'audit'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: AUDIT_NAME },
    subjects: [{ kind: 'ServiceAccount', name: AUDIT_NAME, namespace }],
  };
}

export function auditArgs(namespace: string, api: ReportApi): string[] {
  return ['audit', '--write-reports', '--report-api', api, '--deed-namespace', namespace, '--config', POLICY_FILE, '--quiet'];
}

function auditCronJob(image: string, namespace: string, schedule: string, api: ReportApi, keyIds: string[]): V1CronJob {
  return commandCronJob({
    name: AUDIT_NAME,
    component: 'audit',
    namespace,
    schedule,
    deadlineSeconds: 1800,
    keyIds,
    container: { name: 'audit', image, args: auditArgs(namespace, api), env: [{ name: 'NODE_OPTIONS', value: REAPER_NODE_OPTIONS }] },
  });
}
