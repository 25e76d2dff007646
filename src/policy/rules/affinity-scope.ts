// selector.affinity-scope (docs/security-model.md, "Selectors"): a pod affinity term's
// labelSelector is a pod selector too. kube-scheduler checks every incoming pod against the
// required anti-affinity terms of the pods already on a node (the InterPodAffinity plugin
// is symmetric), and weighs existing pods' other terms in its scoring: so beta's one pod
// whose anti-affinity selects `<prefix>/environment: alpha` over a topology every node
// shares holds every new pod of alpha's off every node, and a positive term co-locates
// beta's pod with alpha's (a side channel). So each term a requester writes selects only
// pods of the environments it acts for, as selector-scope.ts scopes a selector: the mutating
// side adds the scope (an environment's label; for a requester of no environment
// `<prefix>/environment DoesNotExist`, and the runners excluded as a tenant's NetworkPolicy
// excludes them), the validating side holds it there. A term without a labelSelector selects
// no pod and is left alone. A pod's terms are immutable after CREATE; a workload's are judged
// in the pod templates a write changes (workload/kinds.ts podTemplates), so a server-side
// apply that drops what was added gets it back. Controller-made pods copy their template,
// judged when it was written.
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import { allowed, patched, type Finding, type PatchOperation, type Verdict } from '../../admission/verdict.js';
import type { CreatorIdentity } from '../create-gate.js';
import type { DecisionContext, Policy } from '../policy.js';
import { kindRow, workloadKind } from '../kinds.js';
import { podTemplates } from '../workload/kinds.js';
import { affinityTerms, type AffinityTerm } from '../pod/affinity-terms.js';
import type { Requester } from '../requester/identity.js';
import { isManager, isPlatform, isTrusted } from '../requester/principals.js';
import { excludesRunnersOf, judgedFor, LABEL_SELECTOR, namesEnvironment, pointer, requiresEnvironment, runnerExclusion, runnerScope, scopeOf, setOp } from '../selector-scope.js';
import { entryOf, field, isRec, stringMap, valuesAt, type Rec } from '../unstructured.js';
import { enforce } from './enforcement.js';
import { RULES } from './catalog.js';

/**
 * Whom a write's terms are scoped for: an environment, or a requester of none (`bound`: in a
 * namespace bound to an environment, where Deed adds nothing). `within`: only the terms that
 * reach beyond that namespace (a manager's in the namespace bound to its environment, whose
 * pods there are all its environment's).
 */
type Scope = { environment: string; within?: string } | { requester: Requester; bound: boolean };

/** The terms a write adds or changes: a Pod's at CREATE (immutable after), those of the pod templates a workload's CREATE or UPDATE writes. */
export function writtenTerms(req: AdmissionRequest): AffinityTerm[] {
  const obj = req.object;
  if (!obj || req.subResource !== undefined || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return [];
  const row = kindRow(req.resource);
  if (row?.kind === 'Pod') return req.operation === 'CREATE' ? podTerms(obj) : [];
  const old = req.operation === 'UPDATE' ? (req.oldObject ?? undefined) : undefined;
  if (req.operation === 'UPDATE' && old === undefined) return [];
  // A custom resource's pod specs, which its operator copies as a platform principal: those a write changes.
  if (row?.podSpecs !== undefined)
    return row.podSpecs.flatMap((path) =>
      valuesAt(obj, path).flatMap(({ value: spec, at, keys }) => {
        if (!isRec(spec)) return [];
        const before = old === undefined ? undefined : keys.reduce<unknown>((v, k) => (isRec(v) ? field(v, k) : Array.isArray(v) ? (v as unknown[])[Number(k)] : undefined), old);
        return old === undefined || !isDeepStrictEqual(spec, before) ? affinityTerms(spec, at, keys) : [];
      }),
    );
  const workload = workloadKind(req.resource);
  if (workload === undefined) return [];
  return podTemplates(obj, workload, old).flatMap((t) => (t.hasSpec ? affinityTerms(t.spec, `${t.at}.spec`) : []));
}

/** A door's mutating verdict and the scope of the pod affinity terms its write carries: both, or the first refusal. */
export function withAffinityScope(verdict: Verdict, affinity: () => Verdict): Verdict {
  if (!verdict.allowed) return verdict;
  const scoped = affinity();
  if (!scoped.allowed) return scoped;
  if (scoped.patch === undefined) return verdict;
  return patched([...(verdict.patch ?? []), ...scoped.patch], [...verdict.warnings, ...scoped.warnings], verdict.auditAnnotations);
}

function podTerms(pod: KubeObject): AffinityTerm[] {
  return isRec(pod.spec) ? affinityTerms(pod.spec, 'spec') : [];
}

/** Whom the write's terms are judged for (as its selector is: selector-scope.ts judgedFor); `skip` for break-glass, system principals, and a manager in a namespace bound to its environment. */
function scopeOfWrite(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext, creator: CreatorIdentity | undefined): Scope | 'skip' {
  const { policy } = ctx;
  if (isTrusted(requester, policy)) return 'skip';
  const judged = judgedFor(req, kindRow(req.resource)?.kind ?? '', namespace, requester, ctx, creator);
  if (judged === 'skip') return boundManager(namespace, requester, policy);
  return judged.environment !== undefined ? { environment: judged.environment } : noEnvironment(namespace, requester, policy);
}

function noEnvironment(namespace: string, requester: Requester, policy: Policy): Scope | 'skip' {
  const bound = policy.envByBoundNamespace.get(namespace);
  if (bound !== undefined && isManager(requester, bound, policy)) return boundManager(namespace, requester, policy);
  return { requester, bound: bound !== undefined };
}

/**
 * A manager writing in the namespace bound to its environment: the pods there are all its
 * environment's, but a term with `namespaces` or `namespaceSelector` reaches others' pods in
 * other namespaces, so such a term selects that environment's pods only.
 */
function boundManager(namespace: string, requester: Requester, policy: Policy): Scope | 'skip' {
  const bound = policy.envByBoundNamespace.get(namespace);
  return bound !== undefined && isManager(requester, bound, policy) ? { environment: bound, within: namespace } : 'skip';
}

/** Whether a term selects pods outside `namespace`: any `namespaceSelector` (`{}` is every namespace), or another namespace listed. */
function reachesBeyond(t: AffinityTerm, namespace: string): boolean {
  if (isRec(field(t.term, 'namespaceSelector'))) return true;
  const listed = field(t.term, 'namespaces');
  return Array.isArray(listed) && listed.some((n) => typeof n === 'string' && n !== '' && n !== namespace);
}

/** An environment other than `environment` that the selector requires by `matchLabels` or lists in `In`. */
function otherEnvironment(selector: Rec, environment: string, key: string): string | undefined {
  const pinned = entryOf(stringMap(selector, 'matchLabels'), key);
  if (pinned !== undefined && pinned !== environment) return pinned;
  return scopeOf(selector, LABEL_SELECTOR, key)?.find((e) => e !== environment);
}

const quote = (value: string) => JSON.stringify(value.slice(0, 80));

/** `op`, made at the term, addressed from the object's root. */
function atTerm(t: AffinityTerm, op: PatchOperation | undefined): PatchOperation | undefined {
  return op === undefined ? undefined : { ...op, path: `${pointer(t.keys)}${op.path}` };
}

/** The ops that append `expressions` to the term's labelSelector.matchExpressions (made when absent). */
function expressionOps(t: AffinityTerm, selector: Rec, expressions: Rec[]): PatchOperation[] {
  if (expressions.length === 0) return [];
  const at = `${pointer([...t.keys, 'labelSelector'])}/matchExpressions`;
  return Array.isArray(field(selector, 'matchExpressions')) ? expressions.map((value) => ({ op: 'add' as const, path: `${at}/-`, value })) : [{ op: 'add', path: at, value: expressions }];
}

/** The mutating side for one term: the ops that scope it, or the finding that refuses it (it names another environment). */
function termScope(t: AffinityTerm, scope: Scope, policy: Policy): { ops: PatchOperation[]; findings: Finding[] } {
  const selector = t.labelSelector;
  const key = policy.keys.environment;
  if (selector === undefined) return { ops: [], findings: [] }; // selects no pod
  if ('environment' in scope && scope.within !== undefined && !reachesBeyond(t, scope.within)) return { ops: [], findings: [] };
  if ('environment' in scope) {
    const { environment } = scope;
    if (entryOf(stringMap(selector, 'matchLabels'), key) === environment) return { ops: [], findings: [] };
    const other = otherEnvironment(selector, environment, key);
    if (other !== undefined)
      return {
        ops: [],
        findings: [{ rule: RULES.selectorAffinityScope.id, path: `${t.at}.labelSelector`, message: `selects pods of environment ${quote(other)}; environment "${environment}" selects only its own pods: leave ${key} out (the mutating webhook adds ${key}: ${environment})` }],
      };
    const op = atTerm(t, setOp(t.term, ['labelSelector', 'matchLabels', key], environment));
    return { ops: op === undefined ? [] : [op], findings: [] };
  }
  if (scope.bound) return { ops: [], findings: [] }; // a bound namespace's pods are all its environment's
  const add: Rec[] = [];
  if (!namesEnvironment(selector, LABEL_SELECTOR, key)) add.push({ key, operator: 'DoesNotExist' });
  // Unlike a selector's (selector-scope.ts runnerExclusionDue), a term that requires runners by `Exists` gets it too: it then
  // selects no pod, which holds off or draws no one's pod but its writer's own.
  if (excludesRunnersOf(scope.requester, policy) && runnerScope(selector, policy) === 'open' && !requiresEnvironment(selector, LABEL_SELECTOR, policy)) add.push(runnerExclusion(policy));
  return { ops: expressionOps(t, selector, add), findings: [] };
}

function scopeTerms(terms: AffinityTerm[], scope: Scope, policy: Policy): { ops: PatchOperation[]; findings: Finding[] } {
  const ops: PatchOperation[] = [];
  const findings: Finding[] = [];
  for (const t of terms) {
    const r = termScope(t, scope, policy);
    ops.push(...r.ops);
    findings.push(...r.findings);
  }
  return { ops: findings.length > 0 ? [] : ops, findings };
}

/**
 * The mutating side at a Pod's CREATE (stamp-create.ts), for a requester acting for
 * `environment`, or for none (undefined): the ops that scope its terms, or the findings that
 * refuse them. Not for the pods a controller makes: their template was judged.
 */
export function podAffinityScope(pod: KubeObject, namespace: string, requester: Requester, environment: string | undefined, policy: Policy): { ops: PatchOperation[]; findings: Finding[] } {
  const terms = podTerms(pod);
  if (terms.length === 0) return { ops: [], findings: [] };
  if (environment === undefined && isTrusted(requester, policy)) return { ops: [], findings: [] };
  const scope = environment !== undefined ? { environment } : noEnvironment(namespace, requester, policy);
  return scope === 'skip' ? { ops: [], findings: [] } : scopeTerms(terms, scope, policy);
}

/**
 * The mutating side of a workload's CREATE or UPDATE (doors/workload.ts): the terms of the
 * pod templates it writes, scoped as a Pod's; on UPDATE a changed template's terms are scoped
 * again, so what a server-side apply dropped is put back.
 */
export function templateAffinityScope(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext, creator?: CreatorIdentity): Verdict {
  const terms = writtenTerms(req);
  if (terms.length === 0) return allowed();
  const scope = scopeOfWrite(req, namespace, requester, ctx, creator);
  if (scope === 'skip') return allowed();
  const { ops, findings } = scopeTerms(terms, scope, ctx.policy);
  if (findings.length > 0) return enforce(findings, ctx.policy);
  return ops.length > 0 ? patched(ops) : allowed();
}

/** The validating side: every term a write adds or changes selects only pods of the environments its requester acts for. */
export function affinityScope(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext, creator?: CreatorIdentity): Finding[] {
  const terms = writtenTerms(req).filter((t) => t.labelSelector !== undefined);
  if (terms.length === 0) return [];
  const scope = scopeOfWrite(req, namespace, requester, ctx, creator);
  if (scope === 'skip') return [];
  return terms.flatMap((t) => termFindings(t, t.labelSelector!, scope, ctx.policy));
}

function termFindings(t: AffinityTerm, selector: Rec, scope: Scope, policy: Policy): Finding[] {
  const key = policy.keys.environment;
  const rule = RULES.selectorAffinityScope.id;
  const path = `${t.at}.labelSelector`;
  if ('environment' in scope && scope.within !== undefined && !reachesBeyond(t, scope.within)) return [];
  if ('environment' in scope) {
    const { environment } = scope;
    if (entryOf(stringMap(selector, 'matchLabels'), key) === environment) return [];
    const other = otherEnvironment(selector, environment, key);
    const what = other !== undefined ? `selects pods of environment ${quote(other)}` : 'may select pods of any environment';
    return [{ rule, path, message: `${what}; a pod affinity term of environment "${environment}" selects only its pods: matchLabels["${key}"] must be "${environment}" (the mutating webhook adds it; was it bypassed?)` }];
  }
  const { requester, bound } = scope;
  const findings: Finding[] = [];
  if (namesEnvironment(selector, LABEL_SELECTOR, key)) {
    const environments = scopeOf(selector, LABEL_SELECTOR, key);
    if (!isPlatform(requester, policy) && !(environments !== undefined && environments.every((e) => isManager(requester, e, policy))))
      findings.push({ rule, path, message: `selects pods of environments it does not manage; ${requester.username} acts for no environment here: name none (the mutating webhook adds {key: ${key}, operator: DoesNotExist}) or only environments it manages` });
  } else if (!bound)
    findings.push({ rule, path, message: `may select pods of any environment; ${requester.username} acts for none here: add {key: ${key}, operator: DoesNotExist} (the mutating webhook adds it to a term that names no environment; was it bypassed?) or require ${key}: an environment it manages` });
  // Runners are of no environment too: a tenant's term excludes them, or names only those of environments it manages.
  if (!bound && excludesRunnersOf(requester, policy) && !requiresEnvironment(selector, LABEL_SELECTOR, policy)) {
    const runners = runnerScope(selector, policy);
    if (runners === 'open' || (runners !== 'excluded' && !runners.every((e) => isManager(requester, e, policy)))) {
      const runner = policy.keys.runner;
      findings.push({
        rule,
        path,
        message: `${runners === 'open' ? 'selects runner pods too' : 'selects runner pods of environments it does not manage'}; ${requester.username} acts for no environment here: add {key: ${runner}, operator: DoesNotExist} (the mutating webhook adds it to a term that names no runner; was it bypassed?), or require ${runner}: an environment it manages`,
      });
    }
  }
  return findings;
}
