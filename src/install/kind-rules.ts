// The install's lists of kinds, each derived from the kind table (src/policy/kinds.ts): the
// rules of both webhook configurations and the kind rules of every ClusterRole (the
// webhook's lookups, the reaper's, the audit's). `deed manifests` renders them as objects;
// helmKindsTemplate() renders the same lists as the chart's generated helpers
// (manifests/helm/deed/templates/_kinds.tpl), so the chart keeps no copy by hand.
import type { V1NamedRuleWithOperations, V1PolicyRule, V1RuleWithOperations } from '@kubernetes/client-node';
import { DEFAULT_ROW_EXCEPTIONS, isOperatorConfig, kindRows, REFERENCE_GRANTS, type KindRow } from '../policy/kinds.js';
import { DEFAULT_SYSTEM_PRINCIPALS, DEFAULT_WORKLOAD_CONTROLLERS } from '../config/schema.js';
import { HOSTNAMES_NAMED, HOSTNAMES_SPEC_KEPT, HOSTNAMES_TAKEN, hostnamesNamesExpression, hostnamesResourceRules } from './hostnames-policy.js';
import { stampedAnnotationKeys, stampedLabelKeys, stampKeys } from '../policy/stamps/keys.js';
import { celList } from './admission-policy.js';
import { POD_READS } from '../policy/pod/pod-reads.js';

type Entry = { group: string; resource: string };

/** Entries grouped by API group in order of first appearance, each group one webhook rule. */
function webhookRules(operations: string[], entries: Entry[]): V1RuleWithOperations[] {
  return byGroup(entries).map(([group, resources]) => ({ operations, apiGroups: [group], apiVersions: ['v1'], resources, scope: 'Namespaced' }));
}

function byGroup(entries: Entry[]): Array<[string, string[]]> {
  const groups = new Map<string, string[]>();
  for (const { group, resource } of entries) groups.set(group, [...(groups.get(group) ?? []), resource]);
  return [...groups];
}

const rows = (pick: (r: KindRow) => boolean): Entry[] => kindRows().filter(pick).map((r) => ({ group: r.group, resource: r.resource }));
const subresources = (door: string): Entry[] =>
  kindRows().flatMap((r) => Object.entries(r.subresources ?? {}).filter(([, d]) => d === door).map(([sub]) => ({ group: r.group, resource: `${r.resource}/${sub}` })));

/** The stamped kinds' own resources, for `operations`. */
export function stampedKindRules(operations: string[]): V1RuleWithOperations[] {
  return webhookRules(operations, rows((r) => r.stamps !== undefined && r.door === 'object'));
}

/** The kinds that make pods and claims from templates, by API group (CREATE and UPDATE, and DELETE for the validating webhook: workloads are stamped). */
export function workloadRules(operations: string[] = ['CREATE', 'UPDATE']): V1RuleWithOperations[] {
  return webhookRules(operations, rows((r) => r.door === 'workload'));
}

/**
 * The CREATEs the install's mutating webhook judges whole (src/policy/create-judgement.ts):
 * the stamped kinds' and the workloads' own resources (the default row's CREATEs too, by
 * defaultRowRules). The validating webhook's rules leave them out; `deed review`, which
 * models the two-call pair of older installs, adds them back.
 */
export function createJudgedAtMutationRules(): V1RuleWithOperations[] {
  return [...stampedKindRules(['CREATE']), ...workloadRules(['CREATE'])];
}

/** The kinds whose rows stamp them at CREATE: the stamped kinds' and the stamped workloads' own resources. */
const stampedCreates = () => rows((r) => r.stamps !== undefined && (r.door === 'object' || r.door === 'workload'));

/**
 * The same as `group/resource`: the kinds a workload controller's CREATEs of carry Deed's
 * stamps whole (a pod, a ReplicaSet, a claim from a stamped template, a pod's ResourceClaim:
 * the default-row kinds a controller makes for an owner, `controllerMade`). What a controller
 * makes of another default-row kind (a StatefulSet's ControllerRevision, which copies the
 * template's labels) is not stamped, and passes (src/policy/validate.ts).
 */
export function stampedRowResources(): string[] {
  return [...stampedCreates(), ...kindRows().filter((r) => r.controllerMade === true)].map((e) => `${e.group}/${e.resource}`);
}

/** Every namespaced resource of every group and version (not their subresources), for `operations`. */
const everyResource = (operations: string[], resources = ['*']): V1RuleWithOperations => ({ operations, apiGroups: ['*'], apiVersions: ['*'], resources, scope: 'Namespaced' });

/**
 * The CREATEs Deed stamps, which the install's create-stamps policy checks after every
 * mutator (src/install/create-stamps-policy.ts): the stamped kinds' and workloads', and the
 * default row's, which is every other namespaced kind. So: every namespaced CREATE but those
 * of the rows with a door of their own that Deed does not stamp (bindings, snapshots, the
 * workloads without stamps) and the default row's exceptions.
 */
export function stampedCreateMatch(): { resourceRules: V1RuleWithOperations[]; excludeResourceRules: V1NamedRuleWithOperations[] } {
  const stamped = new Set(stampedRowResources());
  const unstamped = defaultRowExcludedEntries().filter((e) => !stamped.has(`${e.group}/${e.resource}`));
  // Every version, as the default row's matchCondition: a policy tool's reports are v1alpha2.
  const excludeResourceRules = webhookRules(['CREATE'], unstamped).map((r) => ({ ...r, apiVersions: ['*'] }));
  return { resourceRules: [everyResource(['CREATE'])], excludeResourceRules };
}

/**
 * The default row's rules (docs/security-model.md, "The default row"), every namespaced kind
 * (its webhooks' matchCondition leaves out the first pair's and the exceptions): the
 * mutating webhook stamps and judges a CREATE whole (one call, as for the stamped kinds),
 * the validating webhook every later write, its status, and its scale (guard.custom-scale).
 */
export function defaultRowRules(webhook: 'mutating' | 'validating'): V1RuleWithOperations[] {
  // The mutating webhook sees its selectors' UPDATEs too: it keeps their scope (selector-scope.ts, keepSelectorScope),
  // and a custom resource's pod specs' affinity terms (rules/affinity-scope.ts), which its operator copies.
  return webhook === 'mutating'
    ? // Any version: custom resources serve their own (argoproj.io/v1alpha1), and a rule of v1 alone matches none of them.
      [everyResource(['CREATE']), ...webhookRules(['UPDATE'], rows((r) => (r.podSelector !== undefined || r.podSpecs !== undefined) && r.door === undefined)).map((r) => ({ ...r, apiVersions: ['*'] }))]
    : [everyResource(['UPDATE', 'DELETE']), everyResource(['UPDATE'], ['*/status', '*/scale'])];
}

/**
 * The mutating webhook stamps (and judges) at CREATE; everything after is the validating
 * webhook's. CREATE of the stamped kinds, and templates too: the ephemeral claims of an
 * environment's workloads get its stamps. And the UPDATEs of what has a pod selector, whose
 * scope it keeps where a server-side apply drops what the webhook added.
 */
export function mutatingRules(): V1RuleWithOperations[] {
  return [...stampedKindRules(['CREATE']), ...webhookRules(['UPDATE'], rows((r) => r.podSelector !== undefined && r.door === 'object')), ...workloadRules()];
}

/**
 * Every door to the stamped kinds (docs/security-model.md, "Every door"): the objects
 * themselves; the subresources that write them (`kubectl debug` adds ephemeral containers
 * only through pods/ephemeralcontainers; status writes keep label and annotation changes);
 * evictions (the pod is deleted inside the API server, no DELETE review follows); and
 * bindings, whose annotations the API server copies onto the pod; the CONNECTs into a
 * pod's containers and a Service's proxy. And the controller
 * doors: the templates kube-system's controllers make pods and claims from, tokens of a
 * service account (the token controller fills a token Secret, reviewed with Secrets), and
 * snapshots of a claim, their status and their deletion (a rule for a CRD that is not
 * installed matches nothing).
 */
export function validatingRules(): V1RuleWithOperations[] {
  const byName = kindRows().flatMap((r): Entry[] => [
    ...Object.entries(r.subresources ?? {})
      .filter(([, d]) => d === 'pod-by-name' || d === 'token-request')
      .map(([sub]) => ({ group: r.group, resource: `${r.resource}/${sub}` })),
    ...(r.door === 'pod-by-name' ? [{ group: r.group, resource: r.resource }] : []),
  ]);
  return [
    // Their CREATE is the mutating webhook's whole (createJudgedAtMutationRules).
    ...stampedKindRules(['UPDATE', 'DELETE']),
    ...webhookRules(['UPDATE'], subresources('object')),
    ...webhookRules(['CREATE'], byName),
    // The CONNECTs into a pod's containers and through a Service's proxy: they write nothing,
    // but reach every Secret and workspace a pod holds.
    ...webhookRules(['CONNECT'], [...subresources('connect'), ...subresources('service-proxy')]),
    ...workloadRules(['UPDATE', 'DELETE']),
    // The stamped workloads' status writes and scales: each can change or empty another environment's lab.
    ...webhookRules(['UPDATE'], kindRows().flatMap((r) => Object.entries(r.subresources ?? {}).filter(([, d]) => d === 'workload' || d === 'workload-scale').map(([sub]) => ({ group: r.group, resource: `${r.resource}/${sub}` })))),
    // Snapshots: what a new one copies, and every later write of a stored one (its status names
    // the content a restore reads) and its deletion, guarded as a write of the claim it copied.
    ...webhookRules(['CREATE', 'UPDATE', 'DELETE'], rows((r) => r.door === 'snapshot')),
    ...webhookRules(['UPDATE'], subresources('snapshot')),
  ];
}

/**
 * The default row's webhooks leave out what the first pair reviews and the default row's
 * exceptions (src/policy/kinds.ts gives each reason): `group/resource`, sorted.
 */
export function defaultRowExcluded(): string[] {
  return defaultRowExcludedEntries().map((e) => `${e.group}/${e.resource}`);
}

/** The same as entries, in the same order (sorted by `group/resource`). */
function defaultRowExcludedEntries(): Entry[] {
  const named = validatingRules().flatMap((r) => (r.apiGroups ?? []).flatMap((group) => (r.resources ?? []).filter((res) => !res.includes('/')).map((resource) => ({ group, resource }))));
  const byName = new Map([...named, ...DEFAULT_ROW_EXCEPTIONS].map((e) => [`${e.group}/${e.resource}`, { group: e.group, resource: e.resource }]));
  return [...byName.keys()].sort().map((k) => byName.get(k)!);
}

/** The same as one CEL membership test, the default row's webhooks' matchCondition. */
export function defaultRowExclusion(): string {
  return `!((request.resource.group + '/' + request.resource.resource) in [${defaultRowExcluded().map((r) => `'${r}'`).join(', ')}])`;
}

/**
 * The UPDATEs that reach `stamps.mutate.deed.dev`: of every namespaced kind, the object
 * itself. Its matchCondition (keepStampsCondition) lets through only a write that drops every
 * one of Deed's stamps from an environment's object, whose stamps the webhook keeps
 * (src/policy/stamps/kept-stamps.ts); no other UPDATE is sent.
 */
export function keptStampsRules(): V1RuleWithOperations[] {
  return [{ operations: ['UPDATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Namespaced' }];
}

/**
 * The CEL of kept-stamps.ts dropsEveryStamp, under the label prefix `prefix`: the stored
 * object carries `<prefix>/managed`, the written one none of the labels and annotations Deed
 * stamps. The chart renders it with its `policy.labelPrefix` in place of `prefix`.
 */
export function keepStampsCondition(prefix: string): string {
  const keys = stampKeys(prefix);
  const none = (field: 'labels' | 'annotations', list: string[]) => `!(has(object.metadata.${field}) && [${list.map((k) => `'${k}'`).join(', ')}].exists(k, k in object.metadata.${field}))`;
  return `has(oldObject.metadata.labels) && '${keys.managed}' in oldObject.metadata.labels && ${none('labels', stampedLabelKeys(keys))} && ${none('annotations', stampedAnnotationKeys(keys))}`;
}

/**
 * The UPDATEs that reach `operator-stamps.mutate.deed.dev`: of the Secrets a listed operator
 * makes (doors/object.ts controllerMadeStamps). Its matchCondition (operatorStampsCondition)
 * lets through only a listed controller's write of an environment's object, whose stamps the
 * webhook puts back as stored (src/policy/stamps/kept-stamps.ts keptOperatorStamps).
 */
export function operatorStampsRules(): V1RuleWithOperations[] {
  return webhookRules(['UPDATE'], rows((r) => r.operatorMade === true && r.door === 'object'));
}

/**
 * The CEL that sends `operator-stamps.mutate.deed.dev` a listed controller's UPDATE of an
 * environment's object: an operator rewrites its Secrets' labels and annotations from what it
 * reconciles (External Secrets merges the ExternalSecret's own, Deed's stamps for it included).
 */
export function operatorStampsCondition(prefix: string, controllers: readonly string[]): string {
  return `request.userInfo.username in ${celList(controllers)} && has(oldObject.metadata.labels) && '${stampKeys(prefix).managed}' in oldObject.metadata.labels`;
}

/** A kind a pod names (pod-reads.ts): a ResourceClaim, a ResourceClaimTemplate. */
const podReads = (r: KindRow) => POD_READS.some((p) => p.resource === r.resource && p.kind === r.kind);

function policyRules(verbs: string[], entries: Entry[]): V1PolicyRule[] {
  return byGroup(entries).map(([group, resources]) => ({ apiGroups: [group], resources, verbs }));
}

/**
 * The webhook's reads: a cache kept by list and watch (get on a miss); Secrets cached only
 * when `cacheSecrets` (RBAC cannot grant metadata only: list and watch on Secrets can read
 * their data), get alone otherwise. `namespaces` is the review scope, not a kind it judges.
 * The kinds a pod names that are read by get are listed too: what a pod names past a
 * review's gets is read by one list of each kind (object-reader.ts, readListed). The kinds
 * whose live objects are followed by name (`followsByName`) are listed, never watched (but
 * an Ingress, cached for the Secrets it names: rules/live-readers.ts).
 */
export function webhookLookupRules(cacheSecrets: boolean): V1PolicyRule[] {
  return [
    ...policyRules(['get', 'list', 'watch'], [...rows((r) => r.lookup === 'cache'), ...(cacheSecrets ? rows((r) => r.lookup === 'cache-optional') : [])]),
    ...(cacheSecrets ? [] : policyRules(['get'], rows((r) => r.lookup === 'cache-optional'))),
    { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
    // Snapshots first, then the workloads a scale names (their metadata: the stamps decide whose a workload is).
    ...policyRules(['get'], rows((r) => r.lookup === 'get' && r.door === 'snapshot')),
    ...policyRules(['get'], rows((r) => r.lookup === 'get' && r.door !== 'snapshot' && !podReads(r))),
    ...policyRules(['get', 'list'], rows((r) => r.lookup === 'get' && podReads(r))),
    // What names a Service or a workload and is followed there (an EndpointSlice, an HPA), listed at the CREATE of one (policy/referrers.ts).
    ...policyRules(['list'], rows((r) => r.followsByName !== undefined && r.lookup !== 'cache')),
    // The ReferenceGrants of a namespace where such a target is created: which other namespaces' referrers may name it.
    ...(kindRows().some((r) => r.followsByGrant !== undefined) ? [{ apiGroups: [REFERENCE_GRANTS.group], resources: [REFERENCE_GRANTS.resource], verbs: ['list'] }] : []),
  ];
}

/** List to find candidates, get to check an owner, delete to reap; get the run leases objects name. */
export function reaperKindRules(): V1PolicyRule[] {
  return [...policyRules(['get', 'list', 'delete'], rows((r) => r.reaped === true)), ...runLeaseRules()];
}

/**
 * What a reaper confined to named namespaces (RoleBindings of reaperKindRules there) needs
 * everywhere: to get an owner, which may stand in another namespace. No list, no delete.
 */
export function reaperScopeKindRules(): V1PolicyRule[] {
  return policyRules(['get'], rows((r) => r.audited?.getsOne === true));
}

/**
 * The audit lists the kinds it judges (metadata only) and gets an owner pod; it gets run
 * leases for the reaper's verdict; it lists operators' configurations (which name
 * credentials, never hold them) where their CRDs are served, and what names hostnames (routes,
 * Ingresses, listeners, Certificates), in every namespace, where the policy declares some.
 */
export function auditKindRules(): V1PolicyRule[] {
  return [
    ...policyRules(['get', 'list'], rows((r) => r.audited?.getsOne === true)),
    ...policyRules(['list'], rows((r) => (r.audited !== undefined && r.audited.getsOne !== true) || isOperatorConfig(r) || r.hostnames !== undefined)),
    ...runLeaseRules(),
  ];
}

/** A run lease is read by the name an object gives it, never listed: no list of a namespace a flood can fail. */
function runLeaseRules(): V1PolicyRule[] {
  return policyRules(['get'], rows((r) => r.runLease === true));
}

/** What the chart's templates replace with `policy.labelPrefix`. */
const PREFIX_PLACEHOLDER = 'LABEL-PREFIX';

/** Where `npm run manifests` writes helmKindsTemplate(). */
export const HELM_KINDS_TEMPLATE = 'manifests/helm/deed/templates/_kinds.tpl';

const list = (values: readonly string[]) => `[${values.map((v) => JSON.stringify(v)).join(', ')}]`;

function webhookRulesYaml(rules: V1RuleWithOperations[]): string {
  return rules
    .map((r) => `- operations: ${list(r.operations!)}\n  apiGroups: ${list(r.apiGroups!)}\n  apiVersions: ${list(r.apiVersions!)}\n  resources: ${list(r.resources!)}\n  scope: ${r.scope}`)
    .join('\n');
}

/** RBAC rules as the chart's YAML, one flow list per field. */
export function policyRulesYaml(rules: V1PolicyRule[]): string {
  return rules.map((r) => `- apiGroups: ${list(r.apiGroups!)}\n  resources: ${list(r.resources!)}\n  verbs: ${list(r.verbs)}`).join('\n');
}

/**
 * The chart's lists of kinds as named templates, the same rules `deed manifests` renders.
 * `deed.lookupRules` takes the root context (it reads `.Values.lookupCache.secrets`).
 */
export function helmKindsTemplate(): string {
  const define = (name: string, body: string) => `{{- define "${name}" -}}\n${body}\n{{- end -}}\n`;
  return [
    '{{/* Generated by `npm run manifests` from src/policy/kinds.ts (src/install/kind-rules.ts): do not edit. */}}\n',
    define('deed.mutatingRules', webhookRulesYaml(mutatingRules())),
    define('deed.validatingRules', webhookRulesYaml(validatingRules())),
    define('deed.defaultRowMutatingRules', webhookRulesYaml(defaultRowRules('mutating'))),
    define('deed.defaultRowValidatingRules', webhookRulesYaml(defaultRowRules('validating'))),
    define('deed.createStampsResourceRules', webhookRulesYaml(stampedCreateMatch().resourceRules)),
    define('deed.createStampsExcludeResourceRules', webhookRulesYaml(stampedCreateMatch().excludeResourceRules)),
    define('deed.stampedRowResources', list(stampedRowResources())),
    define('deed.lookupRules', `{{- if .Values.lookupCache.secrets -}}\n${policyRulesYaml(webhookLookupRules(true))}\n{{- else -}}\n${policyRulesYaml(webhookLookupRules(false))}\n{{- end -}}`),
    define('deed.reaperKindRules', policyRulesYaml(reaperKindRules())),
    define('deed.reaperScopeKindRules', policyRulesYaml(reaperScopeKindRules())),
    define('deed.auditKindRules', policyRulesYaml(auditKindRules())),
    define('deed.defaultRowExclusion', defaultRowExclusion()),
    define('deed.keptStampsRules', webhookRulesYaml(keptStampsRules())),
    define('deed.operatorStampsRules', webhookRulesYaml(operatorStampsRules())),
    // Rendered with the chart's label prefix (a DNS subdomain: nothing in it needs escaping in CEL).
    define('deed.keepStampsCondition', `{{- \`${keepStampsCondition(PREFIX_PLACEHOLDER)}\` | replace ${JSON.stringify(PREFIX_PLACEHOLDER)} .Values.policy.labelPrefix -}}`),
    define('deed.defaultWorkloadControllers', JSON.stringify(DEFAULT_WORKLOAD_CONTROLLERS)),
    define('deed.defaultSystemPrincipals', JSON.stringify(DEFAULT_SYSTEM_PRINCIPALS)),
    define('deed.hostnamesResourceRules', hostnamesResourceRules().map((r) => `- apiGroups: ${list(r.apiGroups!)}\n  apiVersions: ${list(r.apiVersions!)}\n  resources: ${list(r.resources!)}\n  operations: ${list(r.operations!)}`).join('\n')),
    // Go raw strings: the CEL holds no backquote.
    define('deed.hostnamesSpecKept', `{{- \`${HOSTNAMES_SPEC_KEPT}\` -}}`),
    define('deed.hostnamesNames', `{{- \`${hostnamesNamesExpression()}\` -}}`),
    define('deed.hostnamesNamed', `{{- \`${HOSTNAMES_NAMED}\` -}}`),
    define('deed.hostnamesTaken', `{{- \`${HOSTNAMES_TAKEN}\` -}}`),
  ].join('\n');
}
