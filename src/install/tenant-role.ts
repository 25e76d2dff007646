// The ClusterRole a shared namespace's tenants should be bound to (docs/security-model.md,
// "What Deed cannot guard: reads"), with a RoleBinding in each namespace they share. An
// admission webhook is called for writes and CONNECTs, never for get, list or watch: in a
// namespace several environments share, whoever may read Secrets reads every environment's,
// whatever Deed does. So this is Kubernetes' own `edit` role (its aggregated rules as of
// Kubernetes 1.36, system:aggregate-to-edit and system:aggregate-to-view), less:
// - get, list and watch on Secrets: the one read Deed cannot guard that hands out credentials;
// - create on serviceaccounts/token: a token of any account in the namespace. Deed refuses one
//   of an account that acts for an environment, but lets through accounts of none, and such an
//   account (a platform deployer, a manager, an app's) may hold rights over every environment's
//   objects: RBAC alone closes that. Pods get their tokens from the kubelet, not from tenants;
// - impersonate on service accounts: an impersonated runner account acts for its environment,
//   and admission sees only the identity impersonated;
// - services/proxy: it reaches whichever pods a Service selects, and Deed refuses it to all
//   but break-glass;
// - the `extensions` group, which no supported API server serves.
// It keeps pods/exec, attach, portforward and proxy, which Deed guards (the pod's own
// environment only), and every write, each guarded by Deed in the review scope.
import type { V1ClusterRole, V1PolicyRule } from '@kubernetes/client-node';
import { policyRulesYaml } from './kind-rules.js';

export const TENANT_ROLE = 'deed-sandbox-tenant';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

const rule = (apiGroups: string[], resources: string[], verbs: string[]): V1PolicyRule => ({ apiGroups, resources, verbs });

/** The rules, grouped as Kubernetes' bootstrap policy groups them. */
export function tenantRules(): V1PolicyRule[] {
  return [
    // Reads, as the `view` role gives them: everything of the namespace but Secrets.
    rule([''], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status'], READ),
    rule([''], ['bindings', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status'], READ),
    rule([''], ['namespaces'], READ),
    rule(['', 'events.k8s.io'], ['events'], READ),
    rule(['discovery.k8s.io'], ['endpointslices'], READ),
    rule(['apps'], ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status'], READ),
    rule(['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], READ),
    rule(['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], READ),
    rule(['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status'], READ),
    rule(['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies'], READ),
    rule(['resource.k8s.io'], ['resourceclaims', 'resourceclaims/status', 'resourceclaimtemplates'], READ),
    // Into a running pod: CONNECTs Deed admits for the pod's own environment only (WebSocket
    // upgrades ask for get, newer kubectl for create).
    rule([''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'], [...READ, ...WRITE]),
    // Writes, as `edit` gives them; Secrets may be written (a sandbox's own credentials), not read.
    rule([''], ['pods'], WRITE),
    rule([''], ['pods/eviction'], ['create']),
    rule([''], ['configmaps', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services'], WRITE),
    rule(['', 'events.k8s.io'], ['events'], WRITE),
    rule(['apps'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'], WRITE),
    rule(['autoscaling'], ['horizontalpodautoscalers'], WRITE),
    rule(['batch'], ['cronjobs', 'jobs'], WRITE),
    rule(['policy'], ['poddisruptionbudgets'], WRITE),
    rule(['networking.k8s.io'], ['ingresses', 'networkpolicies'], WRITE),
    rule(['coordination.k8s.io'], ['leases'], [...READ, ...WRITE]),
    rule(['resource.k8s.io'], ['resourceclaims', 'resourceclaimtemplates'], WRITE),
  ];
}

export function tenantClusterRole(labels: Record<string, string>): V1ClusterRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: TENANT_ROLE,
      labels,
      annotations: {
        'deed.dev/description':
          "Kubernetes' edit role without reads of Secrets, service-account tokens, impersonation or services/proxy: bind it with a RoleBinding in a namespace several environments share (docs/install.md, \"Tenants of a shared namespace\").",
      },
    },
    rules: tenantRules(),
  };
}

/** Where `npm run manifests` writes helmTenantTemplate(). */
export const HELM_TENANT_TEMPLATE = 'manifests/helm/deed/templates/_tenant.tpl';

/** The rules as the chart's generated helper, the same `deed manifests --tenant-role` renders. */
export function helmTenantTemplate(): string {
  return `{{/* Generated by \`npm run manifests\` from src/install/tenant-role.ts: do not edit. */}}\n{{- define "deed.tenantRules" -}}\n${policyRulesYaml(tenantRules())}\n{{- end -}}\n`;
}
