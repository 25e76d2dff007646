// Every pod selector is scoped (docs/security-model.md, "Selectors"). A selector is an
// authorization input: a ReplicaSet adopts the pods it selects and its controller then
// deletes them, a PodDisruptionBudget holds up their evictions (a node drain stalls), a
// Service routes traffic to them, a NetworkPolicy isolates or opens them. So whatever a
// requester writes selects only pods of the environments it acts for. Where each kind keeps
// its selector is a fact of the kind table (kinds.ts, `podSelector`).
//
// An environment's selector is scoped by the mutating webhook: `<prefix>/environment: <id>`
// (a label Deed stamps on the environment's pods and freezes) is added to it at CREATE, and
// to the labels of the kind's pod templates, which the API server requires the selector to
// match. The validating webhook holds it there at CREATE and on every UPDATE that changes
// the selector. A requester of no environment (a manager, an operator tool) scopes its own:
// a term for an environment it manages, or `<prefix>/environment DoesNotExist` (no
// environment's pods). A plain map (a Service's, a ReplicationController's) can require a
// label but never exclude one. So Deed marks the other side: every pod of no environment
// gets `<prefix>/no-environment: "true"` at CREATE (an environment's object never carries
// it), and a selector of no environment that names no environment gets the same label
// added at CREATE (and its pod templates too): a Helm chart's Service and Deployment keep
// selecting each other's pods, and never an environment's, however its pods are labelled.
// A manager's selector in a namespace bound to its environment, and a break-glass or system
// principal's, may select anything; a platform principal's may name environments. A
// NetworkPolicy the platform writes (a platform, break-glass or system principal) is stored
// as written (kinds.ts `platformSelectsAll`): its default-deny covers every pod.
// A runner pod is of no environment too, and carries the mark; so the LabelSelectors of
// requesters of no environment but the platform's (a tenant's, a manager's), on the kinds
// that act on pods without owning them, get `<prefix>/runner DoesNotExist` beside it
// (pod/runner-mark.ts) unless they name the runners of environments their writer manages:
// a tenant's NetworkPolicy cannot open a runner, its PodDisruptionBudget cannot hold one up.
// A workload's selector adopts, and adopting a runner is refused apart (guard.adoption). A
// plain map cannot exclude a label: a tenant's Service may still route to a runner (its
// NetworkPolicies apply).
import { isDeepStrictEqual } from 'node:util';
import jsonpatch from 'fast-json-patch';
import type { AdmissionRequest, GroupVersionResource, KubeObject } from '../admission/types.js';
import { allowed, patched, quoted, type Finding, type PatchOperation, type Verdict } from '../admission/verdict.js';
import type { DecisionContext, Policy } from './policy.js';
import { createIdentity, type CreatorIdentity } from './create-gate.js';
import { kindRow, type PodSelectorFacts } from './kinds.js';
import { ownershipOfObject } from './ownership.js';
import { environmentId, type Requester } from './requester/identity.js';
import { isManager, isPlatform, isSystem, isTrusted } from './requester/principals.js';
import { runnerMarkOps } from './pod/runner-mark.js';
import { RULES } from './rules/catalog.js';
import { entryOf, field, isRec, recs, stringMap, text, type Rec } from './unstructured.js';

type Resource = Pick<GroupVersionResource, 'group' | 'resource'>;

/** A kind's selector and the pod templates that must match it. */
interface Site extends PodSelectorFacts {
  kind: string;
  templates: readonly string[];
}

/** The form of a LabelSelector written anywhere else (a pod affinity term's: rules/affinity-scope.ts). */
export const LABEL_SELECTOR = { form: 'label-selector' } as const satisfies Pick<Site, 'form'>;

function siteOf(resource: Resource): Site | undefined {
  const row = kindRow(resource);
  return row?.podSelector === undefined ? undefined : { ...row.podSelector, kind: row.kind, templates: row.templates?.pods ?? [] };
}

function valueAt(obj: unknown, path: string): unknown {
  let v = obj;
  for (const key of path.split('.')) v = isRec(v) ? field(v, key) : undefined;
  return v;
}

/** The selector as written: `off` when it is not the writer's (a Job's generated one), `unset` when absent (or an empty map). */
type Written = { state: 'off' } | { state: 'unset' } | { state: 'set'; selector: Rec };

function written(obj: KubeObject, site: Site): Written {
  if (site.onlyWhen !== undefined && valueAt(obj, site.onlyWhen) !== true) return { state: 'off' };
  const selector = valueAt(obj, site.path);
  if (!isRec(selector) || (site.form === 'map' && Object.keys(selector).length === 0)) return { state: 'unset' };
  return { state: 'set', selector };
}

/** The labels a selector requires by equality: a map's entries, a LabelSelector's matchLabels. */
function required(selector: Rec, site: Pick<Site, 'form'>): Record<string, string> {
  return site.form === 'map' ? stringMap({ selector }, 'selector') : stringMap(selector, 'matchLabels');
}

function pinPath(site: Site, key: string): string {
  return `${site.path}${site.form === 'map' ? '' : '.matchLabels'}[${quoted(key)}]`;
}

/** The environments whose pods the selector is limited to; [] for none; undefined when it may select any pod. */
export function scopeOf(selector: Rec, site: Pick<Site, 'form'>, key: string): string[] | undefined {
  const pinned = entryOf(required(selector, site), key);
  if (pinned !== undefined) return [pinned];
  if (site.form === 'map') return undefined;
  for (const e of recs(field(selector, 'matchExpressions'))) {
    if (text(e, 'key') !== key) continue;
    const op = text(e, 'operator');
    if (op === 'DoesNotExist') return [];
    const values = field(e, 'values');
    if (op === 'In' && Array.isArray(values) && values.every((v) => typeof v === 'string')) return values as string[];
  }
  return undefined;
}

export function pointer(path: readonly string[]): string {
  return `/${path.map(jsonpatch.escapePathComponent).join('/')}`;
}

/** A JSON Patch that sets the value at `path` (existing parents kept, missing ones made); undefined when it is already there. */
export function setOp(obj: unknown, path: readonly string[], value: unknown): PatchOperation | undefined {
  let at: unknown = obj;
  for (let i = 0; i < path.length; i++) {
    const next = isRec(at) ? field(at, path[i]!) : undefined;
    if (i === path.length - 1 ? isDeepStrictEqual(next, value) : isRec(next)) {
      at = next;
      continue;
    }
    const rest = path.slice(i + 1).reduceRight<unknown>((inner, k) => ({ [k]: inner }), value);
    return { op: 'add', path: pointer(path.slice(0, i + 1)), value: rest };
  }
  return undefined;
}

/** The op that makes the selector require `key: value` (an unset one becomes that alone); undefined when it does. */
function requireOp(obj: KubeObject, site: Site, sel: Written, key: string, value: string): PatchOperation | undefined {
  const at = site.path.split('.');
  return sel.state === 'unset'
    ? setOp(obj, at, site.form === 'map' ? { [key]: value } : { matchLabels: { [key]: value } })
    : setOp(obj, [...at, ...(site.form === 'map' ? [] : ['matchLabels']), key], value);
}

/** A pod template's label `key` (undefined: absent). */
function templateLabel(obj: KubeObject, template: string, key: string): string | undefined {
  const metadata = valueAt(obj, `${template}.metadata`);
  return entryOf(stringMap(isRec(metadata) ? metadata : undefined, 'labels'), key);
}

/** The op that gives a pod template the label `key: value`; undefined when it has it. */
function templateLabelOp(obj: KubeObject, template: string, key: string, value: string): PatchOperation | undefined {
  return setOp(obj, [...template.split('.'), 'metadata', 'labels', key], value);
}

/**
 * The mutating side, at CREATE by a requester of `environment`: the patch that adds the
 * environment to the selector and to the labels of the pod templates that must match it,
 * or the findings that refuse it (a selector or template that names another environment).
 */
export function scopeSelector(obj: KubeObject, resource: Resource, environment: string, policy: Policy): { ops: PatchOperation[]; findings: Finding[] } {
  const site = siteOf(resource);
  if (site === undefined) return { ops: [], findings: [] };
  const sel = written(obj, site);
  if (sel.state === 'off' || (sel.state === 'unset' && site.unset === 'none')) return { ops: [], findings: [] };
  const key = policy.keys.environment;
  const given = sel.state === 'set' ? entryOf(required(sel.selector, site), key) : undefined;
  if (given !== undefined && given !== environment)
    return {
      ops: [],
      findings: [{ rule: RULES.selectorScope.id, path: pinPath(site, key), message: `selects pods of environment ${JSON.stringify(given.slice(0, 80))}; environment "${environment}" selects only its own pods (${key}: ${environment})` }],
    };
  const findings: Finding[] = [];
  const ops: PatchOperation[] = [];
  // An unset selector that selects all becomes the environment's own.
  const op = requireOp(obj, site, sel, key, environment);
  if (op !== undefined) ops.push(op);
  for (const template of site.templates) {
    if (!isRec(valueAt(obj, template))) continue; // the API server refuses a workload without one
    const label = templateLabel(obj, template, key);
    if (label !== undefined && label !== environment) {
      findings.push({ rule: RULES.stampTemplate.id, path: `${template}.metadata.labels[${JSON.stringify(key)}]`, message: `${key} is admission-owned; the pods of a workload of environment "${environment}" carry ${JSON.stringify(environment)}` });
      continue;
    }
    const labelOp = templateLabelOp(obj, template, key, environment);
    if (labelOp !== undefined) ops.push(labelOp);
  }
  return { ops: findings.length > 0 ? [] : ops, findings };
}

/** Whether the selector has a term on the environment key (any operator): it names environments. */
export function namesEnvironment(selector: Rec, site: Pick<Site, 'form'>, key: string): boolean {
  if (entryOf(required(selector, site), key) !== undefined) return true;
  return site.form !== 'map' && recs(field(selector, 'matchExpressions')).some((e) => text(e, 'key') === key);
}

/**
 * The mutating side, at CREATE by a requester acting for no environment (system principals
 * excepted: what they create is the cluster's), outside namespaces bound to an environment: a pod gets `<prefix>/no-environment: "true"`;
 * a selector that names no environment gets it too, and so do the labels of the pod
 * templates that must match it. So the selector selects pods of no environment only, and no
 * environment's pod can join it (it can never carry the label).
 */
export function noEnvironmentScope(obj: KubeObject, resource: Resource, namespace: string, requester: Requester, policy: Policy): PatchOperation[] {
  const { noEnvironment: mark, environment: key } = policy.keys;
  if (kindRow(resource)?.kind === 'Pod') {
    // A bound namespace's pods are all its environment's; what system principals create is the cluster's.
    const op = isSystem(requester, policy) || policy.envByBoundNamespace.has(namespace) ? undefined : setOp(obj, ['metadata', 'labels', mark], 'true');
    // The runner mark's op comes after the mark's, which may create the labels.
    return op === undefined ? runnerMarkOps(obj, namespace, policy) : [op, ...runnerMarkOps(withLabel(obj, mark), namespace, policy)];
  }
  // A bound namespace's pods are all its environment's; its managers' selectors may select them all.
  if (isSystem(requester, policy) || policy.envByBoundNamespace.has(namespace)) return [];
  const site = siteOf(resource);
  if (site === undefined || selectsAsWritten(site, requester, policy)) return [];
  const sel = written(obj, site);
  if (sel.state === 'off' || (sel.state === 'unset' && site.unset === 'none')) return [];
  const exclude = site.excludesRunners === true && excludesRunnersOf(requester, policy);
  if (sel.state === 'unset') {
    const selector = site.form === 'map' ? { [mark]: 'true' } : { matchLabels: { [mark]: 'true' }, ...(exclude ? { matchExpressions: [runnerExclusion(policy)] } : {}) };
    const ops = [setOp(obj, site.path.split('.'), selector)];
    for (const template of site.templates) if (isRec(valueAt(obj, template))) ops.push(templateLabelOp(obj, template, mark, 'true'));
    return ops.filter((op) => op !== undefined);
  }
  const ops: Array<PatchOperation | undefined> = [];
  // One that requires the runner mark selects runners only, which are of no environment: it needs no mark.
  if (!namesEnvironment(sel.selector, site, key) && !(site.excludesRunners === true && requiresRunners(sel.selector, policy))) {
    ops.push(requireOp(obj, site, sel, mark, 'true'));
    for (const template of site.templates) if (isRec(valueAt(obj, template))) ops.push(templateLabelOp(obj, template, mark, 'true'));
  }
  if (exclude && runnerExclusionDue(sel.selector, site, policy)) ops.push(exclusionOp(site, sel.selector, policy));
  return ops.filter((op) => op !== undefined);
}

/** Whether a LabelSelector is what Deed makes of a tenant's `{}`: the mark of no environment, and at most the runner exclusion. */
function selectsEveryPodOfNoEnvironment(selector: Rec, site: Pick<Site, 'form'>, policy: Policy): boolean {
  const labels = required(selector, site);
  const expressions = recs(field(selector, 'matchExpressions'));
  return Object.keys(labels).length === 1 && entryOf(labels, policy.keys.noEnvironment) === 'true' && expressions.every((e) => text(e, 'key') === policy.keys.runner && text(e, 'operator') === 'DoesNotExist');
}

/** Whether `requester`'s selector on this kind is stored as written: the platform's NetworkPolicy (kinds.ts `platformSelectsAll`). */
function selectsAsWritten(site: Pick<Site, 'platformSelectsAll'>, requester: Requester, policy: Policy): boolean {
  return site.platformSelectsAll === true && (isTrusted(requester, policy) || isPlatform(requester, policy));
}

/** A shallow copy of `obj` with the label `key: "true"`. */
function withLabel(obj: KubeObject, key: string): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, [key]: 'true' } } };
}

/** Whose LabelSelectors of no environment exclude runners (or name only the runners of environments it manages): any but a trusted or platform principal's. */
export function excludesRunnersOf(requester: Requester, policy: Policy): boolean {
  return !isTrusted(requester, policy) && !isPlatform(requester, policy);
}

/**
 * Which runners a LabelSelector may select: none (`excluded`, `<prefix>/runner
 * DoesNotExist`), those of the environments it requires by equality or `In`, or any (`open`).
 */
export function runnerScope(selector: Rec, policy: Policy): 'excluded' | string[] | 'open' {
  if (excludesRunners(selector, policy)) return 'excluded';
  const key = policy.keys.runner;
  const pinned = entryOf(stringMap(selector, 'matchLabels'), key);
  if (pinned !== undefined) return [pinned];
  for (const e of recs(field(selector, 'matchExpressions'))) {
    const values = field(e, 'values');
    if (text(e, 'key') === key && text(e, 'operator') === 'In' && Array.isArray(values) && values.every((v) => typeof v === 'string')) return values as string[];
  }
  return 'open';
}

export function runnerExclusion(policy: Policy): Rec {
  return { key: policy.keys.runner, operator: 'DoesNotExist' };
}

/** Whether a LabelSelector excludes runner pods (`<prefix>/runner DoesNotExist`). */
export function excludesRunners(selector: Rec, policy: Policy): boolean {
  return recs(field(selector, 'matchExpressions')).some((e) => text(e, 'key') === policy.keys.runner && text(e, 'operator') === 'DoesNotExist');
}

/** The op that adds the runner exclusion to a written LabelSelector; undefined when it has it. */
function exclusionOp(site: Site, selector: Rec, policy: Policy): PatchOperation | undefined {
  if (excludesRunners(selector, policy)) return undefined;
  const at = pointer(site.path.split('.'));
  return Array.isArray(field(selector, 'matchExpressions'))
    ? { op: 'add', path: `${at}/matchExpressions/-`, value: runnerExclusion(policy) }
    : { op: 'add', path: `${at}/matchExpressions`, value: [runnerExclusion(policy)] };
}

/**
 * The mutating side, on UPDATE: the scope a selector was stored with (its environment's
 * label, or the mark of no environment), put back where the write dropped it, and into the
 * pod templates that must match. A server-side apply whose configuration never named what
 * the webhook added removes it on the next apply (the applier owns the fields admission
 * wrote): an immutable selector would then refuse the apply, a mutable one leave its scope.
 * A value changed to another stays: the validating side judges it.
 */
export function keepSelectorScope(old: KubeObject, obj: KubeObject, resource: Resource, policy: Policy, requester?: Requester): Verdict {
  const site = siteOf(resource);
  if (site === undefined) return allowed();
  const [before, after] = [written(old, site), written(obj, site)];
  if (before.state !== 'set' || after.state !== 'set') return allowed();
  const ops: Array<PatchOperation | undefined> = [];
  const kept: string[] = [];
  // The platform's NetworkPolicy may drop the mark and the runner exclusion it was stored with (one stored before it
  // was written as given, or one a tenant created under the name the platform applies).
  const asWritten = requester !== undefined && selectsAsWritten(site, requester, policy);
  const marks = asWritten ? [policy.keys.environment] : [policy.keys.environment, policy.keys.noEnvironment];
  for (const key of marks) {
    const value = entryOf(required(before.selector, site), key);
    if (value === undefined || entryOf(required(after.selector, site), key) !== undefined) continue;
    kept.push(`${key}: ${JSON.stringify(value)}`);
    ops.push(requireOp(obj, site, after, key, value));
    for (const template of site.templates)
      if (isRec(valueAt(obj, template)) && templateLabel(obj, template, key) === undefined) ops.push(templateLabelOp(obj, template, key, value));
  }
  // The runner exclusion stays where it was stored, and a tenant's changed selector gets it
  // (one stored before the exclusion was written; outside bound namespaces, as at CREATE).
  if (site.excludesRunners === true && !asWritten && !excludesRunners(after.selector, policy)) {
    const stored = excludesRunners(before.selector, policy);
    const tenant =
      requester !== undefined &&
      requester.environment.kind === 'none' &&
      excludesRunnersOf(requester, policy) &&
      !policy.envByBoundNamespace.has(obj.metadata.namespace ?? old.metadata.namespace ?? '') &&
      !isDeepStrictEqual(before, after);
    // A selector changed to name runners (or an environment) is the validating side's to judge.
    const open = runnerExclusionDue(after.selector, site, policy);
    if (stored && open) kept.push(`${policy.keys.runner} DoesNotExist`);
    if ((stored || tenant) && open) ops.push(exclusionOp(site, after.selector, policy));
  }
  const warnings = kept.length === 0 ? [] : [`Deed kept ${kept.join(', ')} in ${site.path}: the scope a selector was stored with stays (docs/security-model.md, "Selectors")`];
  // A patch (kubectl apply) of the platform's default-deny over one a tenant created under its name leaves the tenant's scope.
  if (asWritten && !isSystem(requester, policy) && selectsEveryPodOfNoEnvironment(after.selector, site, policy))
    // The API server takes warnings of at most 120 characters (admission/verdict.ts): docs/security-model.md says the rest.
    warnings.push(`${site.path} keeps a tenant's scope: it selects no environment's pod; kubectl replace it (or delete and apply)`);
  return patched(ops.filter((op) => op !== undefined), warnings);
}

/**
 * On an UPDATE of the object itself: the scope its selector was stored with, kept (the
 * mutating side of every door that carries a whole object). `requester`: the writer, when
 * the door has one to judge (a tenant's changed selector gets the runner exclusion).
 */
export function keptScope(req: AdmissionRequest, ctx: DecisionContext, requester?: Requester): Verdict | undefined {
  if (req.operation !== 'UPDATE' || req.subResource !== undefined || !req.oldObject || !req.object) return undefined;
  return keepSelectorScope(req.oldObject, req.object, req.resource, ctx.policy, requester);
}

/**
 * The environments whose pods or runners a stored object's selector may select ('all':
 * any), on the kinds whose selectors exclude runners (a NetworkPolicy's, a budget's): a
 * selector requiring an environment's label reaches that environment's pods and no runner
 * (runners carry none); one requiring the mark of no environment or `<prefix>/environment
 * DoesNotExist` reaches no environment's pods; runners are reached unless excluded, or
 * those of the environments it requires by `<prefix>/runner`.
 */
export function selectorReach(obj: KubeObject, resource: Resource, policy: Policy): 'all' | string[] {
  const site = siteOf(resource);
  if (site?.excludesRunners !== true) return [];
  const sel = written(obj, site);
  if (sel.state === 'off' || sel.state === 'unset') return sel.state === 'unset' && site.unset === 'all' ? 'all' : [];
  const environments = scopeOf(sel.selector, site, policy.keys.environment);
  if (environments !== undefined && environments.length > 0) return environments;
  const marked = entryOf(required(sel.selector, site), policy.keys.noEnvironment) === 'true';
  const runners = runnerScope(sel.selector, policy);
  // Runners only: those it names, or every environment's.
  if (requiresRunners(sel.selector, policy)) return Array.isArray(runners) ? runners : 'all';
  if (environments === undefined && !marked) return 'all';
  return runners === 'excluded' ? [] : runners === 'open' ? 'all' : runners;
}

/**
 * Whether the mutating side adds the runner exclusion to a written LabelSelector: it may
 * select runners and names none (one that names runners is the validating side's to judge:
 * an exclusion beside `Exists` would select nothing, silently); one that requires an
 * environment's label selects no runner.
 */
function runnerExclusionDue(selector: Rec, site: Site, policy: Policy): boolean {
  return runnerScope(selector, policy) === 'open' && !requiresRunners(selector, policy) && !requiresEnvironment(selector, site, policy);
}

/** Whether a selector requires an environment's label (by equality or `In`): it selects that environment's pods, and no runner (runners carry none). */
export function requiresEnvironment(selector: Rec, site: Pick<Site, 'form'>, policy: Policy): boolean {
  const environments = scopeOf(selector, site, policy.keys.environment);
  return environments !== undefined && environments.length > 0;
}

/** Whether a LabelSelector selects runner pods only: it requires `<prefix>/runner` (by equality, `In` or `Exists`). */
export function requiresRunners(selector: Rec, policy: Policy): boolean {
  const key = policy.keys.runner;
  return entryOf(stringMap(selector, 'matchLabels'), key) !== undefined || recs(field(selector, 'matchExpressions')).some((e) => text(e, 'key') === key && (text(e, 'operator') === 'In' || text(e, 'operator') === 'Exists'));
}

/** A selector that may select runners of environments `requester` does not manage. */
function runnerFindings(selector: Rec, site: Site, requester: Requester, policy: Policy): Finding[] {
  if (requiresEnvironment(selector, site, policy)) return [];
  const scope = runnerScope(selector, policy);
  if (scope === 'excluded' || (scope !== 'open' && scope.every((env) => isManager(requester, env, policy)))) return [];
  const key = policy.keys.runner;
  return [
    {
      rule: RULES.selectorScope.id,
      path: `${site.path}.matchExpressions`,
      message: `${scope === 'open' ? 'selects runner pods too' : 'selects runner pods of environments it does not manage'}; ${requester.username} acts for no environment here: add {key: ${key}, operator: DoesNotExist} (the mutating webhook adds it to a selector that names no runner; was it bypassed?), or require ${key}: an environment it manages`,
    },
  ];
}

/**
 * The environment a write's selector is judged for: the requester's at CREATE (undefined:
 * none), the object's stamps' on UPDATE (else the requester's); `skip` where the object is
 * no one's (stamps that do not verify: only trusted principals may change it) or the
 * namespace's (unstamped in a namespace bound to one environment, whose pods are all its own).
 */
export function judgedFor(req: AdmissionRequest, kind: string, namespace: string, requester: Requester, ctx: DecisionContext, creator: CreatorIdentity | undefined): { environment: string | undefined } | 'skip' {
  const { policy } = ctx;
  if (req.operation === 'CREATE') {
    const obj = req.object!;
    const identity = createIdentity(requester, namespace, obj.metadata.labels ?? {}, obj.metadata.annotations ?? {}, policy, creator);
    return { environment: 'environment' in identity ? identity.environment : undefined };
  }
  const owner = ownershipOfObject(req.oldObject!, kind, namespace, policy, ctx.keyRing);
  if (owner.kind === 'bound' || owner.kind === 'unverifiable') return 'skip';
  return { environment: owner.kind === 'stamped' ? owner.environment : environmentId(requester) };
}

/**
 * The validating side: whether the selector a CREATE or UPDATE writes stays within what its
 * requester may select. On UPDATE only a changed selector is judged: once scoped, the
 * environment's requirement is frozen, and a selector admitted before the rule stands until
 * it is changed.
 */
/** `creator`: the requester's creator identity (create-gate.ts), when the review has it. */
export function selectorScope(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext, creator?: CreatorIdentity): Finding[] {
  const { policy } = ctx;
  const site = siteOf(req.resource);
  const obj = req.object;
  if (site === undefined || !obj || (req.operation !== 'CREATE' && req.operation !== 'UPDATE') || isTrusted(requester, policy)) return [];
  const sel = written(obj, site);
  if (req.operation === 'UPDATE' && (!req.oldObject || isDeepStrictEqual(sel, written(req.oldObject, site)))) return [];
  if (sel.state === 'off' || (sel.state === 'unset' && site.unset === 'none')) return [];
  const judged = judgedFor(req, site.kind, namespace, requester, ctx, creator);
  if (judged === 'skip') return [];
  const { environment } = judged;
  const key = policy.keys.environment;
  const selector = sel.state === 'set' ? sel.selector : {};
  if (environment !== undefined) {
    if (entryOf(required(selector, site), key) === environment) return [];
    return [
      {
        rule: RULES.selectorScope.id,
        path: pinPath(site, key),
        message: `a ${site.kind} of environment "${environment}" selects only its pods: ${key} must be ${JSON.stringify(environment)} (${req.operation === 'CREATE' ? 'the mutating webhook adds it; was it bypassed?' : 'it is frozen after CREATE'})`,
      },
    ];
  }
  const bound = policy.envByBoundNamespace.get(namespace);
  if ((bound !== undefined && isManager(requester, bound, policy)) || selectsAsWritten(site, requester, policy)) return [];
  // A selector of no environment excludes runners, which are of no environment too, or names only runners of environments its writer manages.
  const runners = site.excludesRunners === true && excludesRunnersOf(requester, policy) ? runnerFindings(selector, site, requester, policy) : [];
  // Pods of no environment only: no environment's pod carries the mark.
  if (entryOf(required(selector, site), policy.keys.noEnvironment) === 'true') return runners;
  // Runners only (no environment's pod carries their mark): the platform's, or a manager's of its own environments' runners.
  if (site.excludesRunners === true && requiresRunners(selector, policy)) return isPlatform(requester, policy) ? [] : runners;
  if (isPlatform(requester, policy) && namesEnvironment(selector, site, key)) return [];
  const scope = scopeOf(selector, site, key);
  if (scope !== undefined && scope.every((env) => isManager(requester, env, policy))) return runners;
  const mark = `${policy.keys.noEnvironment}: "true"`;
  const what =
    req.operation === 'CREATE'
      ? `require ${mark} (the mutating webhook adds it when the selector names no environment; was it bypassed?) or ${key}: an environment it manages`
      : `keep ${mark}, which selects pods of no environment only, or require ${key}: an environment it manages`;
  return [{ rule: RULES.selectorScope.id, path: site.path, message: `may select pods of any environment; ${requester.username} acts for none here: ${what}` }];
}
