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
import { hostnameRows, type HostnameRow, type HostnamesFact } from '../policy/kinds.js';
import { ACME_CHALLENGE_LABEL, EXTERNAL_DNS_HOSTNAMES, SERVING_ANNOTATIONS } from '../policy/hostnames.js';
import { excludedNamespaces, SANDBOX_LABEL, SANDBOX_LABEL_VALUE } from '../policy/review-scope.js';
import { celLabelIs, celList, celString, denyingPolicy, requesterIsOneOf } from './admission-policy.js';

export const HOSTNAMES_POLICY_SUFFIX = 'hostnames';

/**
 * The CEL: the hostnames at `path` (the kind table's notation) of `object`, lower case, as a
 * list of lists (one per list they stand in), so that each is lowered once, not once per
 * declared hostname: the API server's CEL cost limit bounds what an object may name
 * (bench/hostnames-policy-cost.ts). What the object leaves out names nothing. The shapes the
 * kind table uses: `a.b`, `a.b[]`, `a.b[].c`, `a.b[].c[]`, under any `a.` prefix.
 */
export function celHostLists(path: string, { wildcardWhen, dnsRecords }: Pick<HostnamesFact, 'wildcardWhen' | 'dnsRecords'> = {}): string {
  const m = /^((?:[A-Za-z]+\.)*)([A-Za-z]+)(\[\])?(?:\.([A-Za-z]+)(\[\])?)?$/.exec(path);
  if (m === null || (m[3] === undefined && m[4] !== undefined)) throw new Error(`hostnames path ${path}: not a shape the deed-hostnames policy renders`);
  const prefix = m[1]!.split('.').filter(Boolean);
  const field = `object.${[...prefix, m[2]!].join('.')}`;
  const [list, inner, innerList] = [m[3] !== undefined, m[4], m[5] !== undefined];
  if (dnsRecords !== undefined) {
    // DNS records' names (`list[].name`), as dnsRecordNames reads them; an NS record's also as the wildcard under it, the zone it delegates.
    if (!list || inner === undefined || innerList) throw new Error(`hostnames path ${path}: DNS records stand at list[].name`);
    const type = dnsRecords.recordType;
    return `${present(path.replace(/\[\].*$/, ''))} ? [${celDnsRecordNames(`${field}.filter(v, has(v.${inner})).map(v, v.${inner})`)}, ${celDnsRecordNames(`${field}.filter(v, has(v.${inner}) && has(v.${type}) && v.${type} == "NS").map(v, v.${inner})`, '.map(h, "*." + h)')}] : []`;
  }
  // Where a flag makes each name stand for the wildcard under it (the kind table's `wildcardWhen`).
  const lower = (h: string) => (wildcardWhen === undefined ? `${h}.lowerAscii()` : `(${present(wildcardWhen)} && object.${wildcardWhen} == true ? "*." : "") + ${h}.lowerAscii()`);
  const lists = !list
    ? `[[${lower(field)}]]`
    : inner === undefined
      ? `[${field}.map(h, ${lower('h')})]`
      : innerList
        ? `${field}.map(v, has(v.${inner}) ? v.${inner}.map(h, ${lower('h')}) : [])`
        : `[${field}.filter(v, has(v.${inner})).map(v, ${lower(`v.${inner}`)})]`;
  return `${present(path.replace(/\[\].*$/, ''))} ? ${lists} : []`;
}

/** The CEL: is the field at `path` (no lists) of `object` there, each step guarded with `has()`. */
function present(path: string): string {
  const steps = path.split('.');
  return steps.map((_, i) => `has(object.${steps.slice(0, i + 1).join('.')})`).join(' && ');
}

/**
 * The CEL lists of what the DNS records' names in `source` (a CEL list of strings) take, as
 * src/policy/hostnames.ts's dnsRecordNames reads them, lower case: each name, a challenge's
 * (`_acme-challenge.D`) as D, and the wildcards `*.D` a challenge answers for too. `then` maps
 * each list on (an NS record's delegated zone).
 */
function celDnsRecordNames(source: string, then = ''): string {
  const names = `${source}.map(h, h.endsWith(".") ? h.substring(0, size(h) - 1) : h).map(h, h.lowerAscii())`;
  const challenge = JSON.stringify(ACME_CHALLENGE_LABEL);
  const cut = ACME_CHALLENGE_LABEL.length;
  return `${names}.map(h, h.startsWith(${challenge}) ? h.substring(${cut}) : h)${then}, ${names}.filter(h, h.startsWith(${challenge})).map(h, "*." + h.substring(${cut}))${then}`;
}

/**
 * The CEL: the names in external-dns's annotation `key` of `object`, as src/policy/hostnames.ts's
 * dnsAnnotationNames reads them (spaces dropped, the whitespace around the rest trimmed, as
 * external-dns's Go does and the strings extension's trim does, split at commas, each a DNS
 * record's name: celDnsRecordNames), lower case, as a list of lists.
 */
export function celAnnotationHostLists(key: string): string {
  const value = `object.metadata.annotations[${celString(key)}]`;
  return `has(object.metadata.annotations) && ${celString(key)} in object.metadata.annotations ? [${celDnsRecordNames(`${value}.replace(" ", "").trim().split(",")`)}] : []`;
}

/** The CEL of the `names` variable: the hostnames the request's object names, by its kind's paths (and external-dns's annotations where it reads them). The same for every policy (the chart's copy is generated). */
export function hostnamesNamesExpression(): string {
  const byPaths = new Map<string, HostnameRow[]>();
  const key = (row: HostnameRow) => JSON.stringify([row.hostnames.paths, row.hostnames.wildcardWhen ?? null, row.hostnames.dnsAnnotations ?? false, row.hostnames.dnsRecords ?? null]);
  for (const row of hostnameRows()) byPaths.set(key(row), [...(byPaths.get(key(row)) ?? []), row]);
  const lists = (fact: HostnameRow['hostnames']) => [
    ...fact.paths.map((path) => `(${celHostLists(path, fact)})`),
    ...(fact.dnsAnnotations === true ? EXTERNAL_DNS_HOSTNAMES.map((k) => `(${celAnnotationHostLists(k)})`) : []),
  ];
  const branches = [...byPaths.values()].map((rows) => `variables.kind in ${celList(rows.map((r) => `${r.group}/${r.resource}`))} ? ${lists(rows[0]!.hostnames).join(' + ')}`);
  return `${branches.join(' : ')} : []`;
}

/**
 * The CEL of the `named` variable: does the object name a declared hostname. Each name costs a
 * map lookup (the exact ones), a suffix test per declared wildcard, and, for a name that starts
 * with `*` (a wildcard; Istio's `*lpha.domain` or `*`, every name), a test per declared
 * hostname: src/policy/hostnames.ts's hostnamesOverlap.
 */
export const HOSTNAMES_NAMED =
  'variables.names.exists(g, g.exists(h, h in variables.exact || variables.wildcards.exists(w, h.endsWith(w)) || (h.startsWith("*") && variables.declared.exists(d, d.host.endsWith(h.substring(1))))))';

/** The CEL of the `taken` variable, for the refusal's message alone: the declared hostnames the object names. */
export const HOSTNAMES_TAKEN =
  'variables.declared.filter(d, variables.names.exists(g, g.exists(h, h == d.host || (d.suffix != "" && h.endsWith(d.suffix)) || (h.startsWith("*") && d.host.endsWith(h.substring(1))))))';

/** The principals the policy lets name any hostname outside the review scope. */
export function hostnamesExempt(config: Config): { users: string[]; groups: string[] } {
  return {
    users: [...new Set([...config.platform.users, ...config.systemPrincipals.users, ...config.breakGlass.users, ...config.workloadControllers.users])],
    groups: [...new Set([...config.platform.groups, ...config.systemPrincipals.groups, ...config.breakGlass.groups])],
  };
}

/**
 * The hostname kinds whose status subresource stores a change of the object's annotations (the
 * API server's Service and Ingress status strategies keep metadata; a custom resource's status
 * resets it): an external-dns annotation written through `services/status` is published as one
 * written to the Service (reviewer-105 F4).
 */
export const STATUS_KEEPS_ANNOTATIONS: ReadonlySet<string> = new Set(['/services', 'networking.k8s.io/ingresses']);

/** The policy's match: CREATE and UPDATE of the main resource of every kind that names hostnames, and the status writes that may change its annotations (STATUS_KEEPS_ANNOTATIONS). */
export function hostnamesResourceRules(): V1NamedRuleWithOperations[] {
  const rows = hostnameRows();
  return [...new Set(rows.map((r) => r.group))].map((group) => ({
    apiGroups: [group],
    apiVersions: ['*'],
    resources: rows.filter((r) => r.group === group).flatMap((r) => (STATUS_KEEPS_ANNOTATIONS.has(`${r.group}/${r.resource}`) ? [r.resource, `${r.resource}/status`] : [r.resource])),
    operations: ['CREATE', 'UPDATE'],
  }));
}

const annotation = (obj: string, key: string) => `(has(${obj}.metadata.annotations) && ${celString(key)} in ${obj}.metadata.annotations ? ${obj}.metadata.annotations[${celString(key)}] : "")`;

/** The CEL of the `specKept` variable: an UPDATE that leaves the spec, and the annotations that choose the serving controller, as they were. */
export const HOSTNAMES_SPEC_KEPT = [
  'request.operation == "UPDATE" && has(object.spec) == has(oldObject.spec) && (!has(object.spec) || object.spec == oldObject.spec)',
  ...SERVING_ANNOTATIONS.map((k) => `${annotation('object', k)} == ${annotation('oldObject', k)}`),
].join(' && ');

/** A declared wildcard's suffix (`*.domain`: `.domain`); "" for an exact hostname. */
const suffixOf = (host: string) => (host.startsWith('*.') ? host.slice(1) : '');

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
      { name: 'specKept', expression: HOSTNAMES_SPEC_KEPT },
      { name: 'kind', expression: 'request.resource.group + "/" + request.resource.resource' },
      { name: 'names', expression: hostnamesNamesExpression() },
      // The declared hostnames three ways: each with its environment and its wildcard's suffix (`.domain`; "" for an exact one), the exact ones by name, the wildcards' suffixes.
      { name: 'declared', expression: `[${declared.map((d) => `{"env": ${celString(d.env)}, "host": ${celString(d.host)}, "suffix": ${celString(suffixOf(d.host))}}`).join(', ')}]` },
      { name: 'exact', expression: `{${declared.filter((d) => suffixOf(d.host) === '').map((d) => `${celString(d.host)}: ${celString(d.env)}`).join(', ')}}` },
      { name: 'wildcards', expression: celList(declared.filter((d) => suffixOf(d.host) !== '').map((d) => suffixOf(d.host))) },
      { name: 'named', expression: HOSTNAMES_NAMED },
      { name: 'taken', expression: HOSTNAMES_TAKEN },
    ],
    validations: [
      {
        expression: 'variables.inScope || variables.exempt || variables.specKept || !variables.named',
        message: `this names a hostname Deed's policy declares for an environment, outside Deed's review scope, where only the platform, system controllers, listed operators and break-glass may: ${fix}`,
        messageExpression: `request.resource.resource + " " + request.namespace + "/" + request.name + ": " + variables.taken[0].host + " is environment " + variables.taken[0].env + "'s hostname, and this namespace is outside Deed's review scope, where only the platform, system controllers, listed operators and break-glass may name it: ${fix}"`,
        reason: 'Forbidden',
      },
    ],
  });
}

