// An environment's hostnames outside the review scope (reviewer-101 F1). Rule route.hostnames
// judges the routes, Ingresses, listeners and Certificates written in the namespaces Deed
// reviews; a shared Gateway's listener that takes routes from every namespace, or an ingress
// controller that watches every namespace, takes them from anywhere else too, where no
// webhook of Deed's is sent the write. A ValidatingAdmissionPolicy, evaluated in the API server
// for every namespace, refuses there what names a hostname the policy declares for an
// environment, but to the principals the rule exempts (the platform, system controllers,
// break-glass) and the listed operators (cert-manager's solver routes answer challenges for the
// Certificates it was given). Nobody outside the review scope acts for an environment; inside
// it, the policy leaves the judgement to the webhook, which knows who does. Rendered only where
// some environment declares hostnames; the kinds and their hostname paths are the kind table's.
import type { V1NamedRuleWithOperations, V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import type { Config } from '../config/schema.js';
import { kindRows, type KindRow } from '../policy/kinds.js';
import { excludedNamespaces, SANDBOX_LABEL, SANDBOX_LABEL_VALUE } from '../policy/review-scope.js';
import { celLabelIs, celList, celString, denyingPolicy, requesterIsOneOf } from './admission-policy.js';

export const HOSTNAMES_POLICY_SUFFIX = 'hostnames';

/** The rows whose objects name hostnames (the kind table's `hostnames`), in table order. */
function hostnameRows(): KindRow[] {
  return kindRows().filter((row) => row.hostnames !== undefined);
}

/**
 * The CEL: does some hostname at `path` (the kind table's notation, `spec.rules[].host`) of
 * `object` satisfy `test` (CEL over a string expression). Each step is guarded with `has()`:
 * what the object leaves out names nothing.
 */
export function celSomeAt(path: string, test: (host: string) => string, base = 'object', depth = 0): string {
  const [step, ...rest] = path.split('.');
  const list = step!.endsWith('[]');
  const field = `${base}.${list ? step!.slice(0, -2) : step!}`;
  const inner = (value: string) => (rest.length === 0 ? test(value) : celSomeAt(rest.join('.'), test, value, depth + 1));
  if (!list) return `has(${field}) && (${inner(field)})`;
  const item = `v${depth}`;
  return `has(${field}) && ${field}.exists(${item}, ${inner(item)})`;
}

/** The CEL: does hostname `host` (any case) overlap pattern `pattern` (a declared one, lower case): src/policy/hostnames.ts's hostnamesOverlap. */
function celOverlap(host: string, pattern: string): string {
  const h = `${host}.lowerAscii()`;
  return `${h} == ${pattern} || (${pattern}.startsWith("*.") && ${h}.endsWith(${pattern}.substring(1))) || (${h}.startsWith("*.") && ${pattern}.endsWith(${h}.substring(1)))`;
}

/** The CEL: does the request's object name a hostname that overlaps `pattern`, per its kind's paths. */
function celNames(pattern: string): string {
  const byPaths = new Map<string, KindRow[]>();
  for (const row of hostnameRows()) byPaths.set(JSON.stringify(row.hostnames!.paths), [...(byPaths.get(JSON.stringify(row.hostnames!.paths)) ?? []), row]);
  const branches = [...byPaths.values()].map((rows) => {
    const kinds = rows.map((r) => `${r.group}/${r.resource}`);
    const names = rows[0]!.hostnames!.paths.map((path) => `(${celSomeAt(path, (host) => celOverlap(host, pattern))})`).join(' || ');
    return `variables.kind in ${celList(kinds)} ? (${names})`;
  });
  return `${branches.join(' : ')} : false`;
}

/** The principals the policy lets name any hostname outside the review scope. */
export function hostnamesExempt(config: Config): { users: string[]; groups: string[] } {
  return {
    users: [...new Set([...config.platform.users, ...config.systemPrincipals.users, ...config.breakGlass.users, ...config.workloadControllers.users])],
    groups: [...new Set([...config.platform.groups, ...config.systemPrincipals.groups, ...config.breakGlass.groups])],
  };
}

/** The policy's match: CREATE and UPDATE of the main resource of every kind that names hostnames (a status write names none the controller acts on). */
export function hostnamesResourceRules(): V1NamedRuleWithOperations[] {
  const rows = hostnameRows();
  return [...new Set(rows.map((r) => r.group))].map((group) => ({
    apiGroups: [group],
    apiVersions: ['*'],
    resources: rows.filter((r) => r.group === group).map((r) => r.resource),
    operations: ['CREATE', 'UPDATE'],
  }));
}

/** The CEL of the `taken` variable: the declared hostnames (`variables.declared`) the request's object names. The same for every policy (the chart's copy is generated). */
export function hostnamesTakenExpression(): string {
  return `variables.declared.filter(d, ${celNames('d.host')})`;
}

export function hostnamesPolicy(name: string, deedNamespace: string, config: Config, labels: Record<string, string>): [V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding] | [] {
  const declared = config.environments.flatMap((e) => e.hostnames.map((host) => ({ env: e.id, host })));
  if (declared.length === 0) return [];
  const exempt = hostnamesExempt(config);
  const fix = "name a hostname no environment declares, or write it in a namespace of that environment's in Deed's review scope, as the environment";
  return denyingPolicy(`${name}-${HOSTNAMES_POLICY_SUFFIX}`, labels, {
    matchConstraints: { resourceRules: hostnamesResourceRules() },
    variables: [
      // Deed's webhooks review this namespace (src/policy/review-scope.ts): the rule judges there, knowing who acts for whom.
      { name: 'inScope', expression: `namespaceObject != null && ${celLabelIs('namespaceObject', SANDBOX_LABEL, celString(SANDBOX_LABEL_VALUE))} && !(namespaceObject.metadata.name in ${celList(excludedNamespaces(deedNamespace))})` },
      { name: 'exempt', expression: requesterIsOneOf(exempt.users, exempt.groups) },
      // An UPDATE that leaves the spec as it was names nothing new (labels, finalizers: a route stored before the policy stays deletable).
      { name: 'specKept', expression: 'request.operation == "UPDATE" && has(object.spec) == has(oldObject.spec) && (!has(object.spec) || object.spec == oldObject.spec)' },
      { name: 'kind', expression: 'request.resource.group + "/" + request.resource.resource' },
      { name: 'declared', expression: `[${declared.map((d) => `{"env": ${celString(d.env)}, "host": ${celString(d.host)}}`).join(', ')}]` },
      { name: 'taken', expression: hostnamesTakenExpression() },
    ],
    validations: [
      {
        expression: 'variables.inScope || variables.exempt || variables.specKept || size(variables.taken) == 0',
        message: `this names a hostname Deed's policy declares for an environment, outside Deed's review scope, where only the platform, system controllers, listed operators and break-glass may: ${fix}`,
        messageExpression: `request.resource.resource + " " + request.namespace + "/" + request.name + ": " + variables.taken[0].host + " is environment " + variables.taken[0].env + "'s hostname, and this namespace is outside Deed's review scope, where only the platform, system controllers, listed operators and break-glass may name it: ${fix}"`,
        reason: 'Forbidden',
      },
    ],
  });
}

