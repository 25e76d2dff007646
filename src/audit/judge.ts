// The audit's verdict on one stored object, under the current policy: do Deed's stamps
// verify (and under which key), does a sandbox pod still pass the template and workspace
// rules (a pod admitted under an older policy shows what the current one says), what
// would the reaper do, and does the object carry Deed's stamps where Deed does not review
// (there they prove nothing). Pure: the owner lookup and the clock come in as values.
import { runnerOf } from '../policy/pod/runner-mark.js';
import { jobUidClaims } from '../policy/rules/reference-scope.js';
import { quoted } from '../admission/verdict.js';
import type { KubeObject } from '../admission/types.js';
import { verifyObject, type KeyRing } from '../policy/stamps/key-ring.js';
import { apiVersionOf, auditJudgesContent, sandboxKindNamed, stampedRow, type HostnameRow, type OperatorConfigRow, type ReapedKindName } from '../policy/kinds.js';
import { declaredHostnameOf, hostnamesOf } from '../policy/hostnames.js';
import { operatorIdentityUses } from '../policy/rules/operator-identity.js';
import { RULES } from '../policy/rules/catalog.js';
import { noLookup } from '../policy/lookup.js';
import { EVERY_NAMESPACE } from '../policy/review-scope.js';
import type { DecisionContext, Policy } from '../policy/policy.js';
import { modeOf } from '../policy/rules/enforcement.js';
import { presentOwnedKeys } from '../policy/stamps/identity-stamps.js';
import { entryOf } from '../policy/unstructured.js';
import { objectRules } from '../policy/object-rules.js';
import { ownershipOf, ownershipOfObject } from '../policy/ownership.js';
import { reaperNeeds, reaperVerdict, type LeaseLookup, type Needs, type OwnerLookup, type OwnerRef, type PodClockLookup, type ReaperFacts } from './reaper-verdict.js';
import { isWellKnownConfigMap } from '../policy/pod/configmap-references.js';

/** The results a PolicyReport knows. */
export type ResultStatus = 'pass' | 'fail' | 'warn' | 'error' | 'skip';
export const RESULT_STATUSES: readonly ResultStatus[] = ['pass', 'fail', 'warn', 'error', 'skip'];

/** What each result is about; a report groups its results by these. */
export const AUDIT_POLICIES = {
  scope: 'deed-scope',
  stamps: 'deed-stamps',
  rules: 'deed-rules',
  reaper: 'deed-reaper',
  audit: 'deed-audit',
} as const;
export type AuditPolicy = (typeof AUDIT_POLICIES)[keyof typeof AUDIT_POLICIES];

/**
 * The audit's own checks. Findings of the admission rules keep their catalogue ids
 * (template.*, workspace.*, pvc.pod-owner); these name what only a reader of stored
 * objects can ask.
 */
export const AUDIT_CHECKS = {
  outsideReview: 'scope.outside-review',
  attestation: 'stamps.attestation',
  environment: 'stamps.environment',
  runnerMark: 'stamps.runner-mark',
  jobClaim: 'rules.job-claim',
  contentRules: 'rules.content',
  reaper: 'reaper.verdict',
  operatorConfig: 'rules.operator-config',
  listFailed: 'audit.list',
} as const;

export interface AuditResult {
  policy: AuditPolicy;
  rule: string;
  result: ResultStatus;
  message: string;
  /** Strings only, as PolicyReport properties are. */
  properties?: Record<string, string>;
}

export interface ObjectRef {
  apiVersion: string;
  /** A reaped kind, or an operator configuration's (a SecretStore, a TriggerAuthentication). */
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

export interface ObjectAudit {
  object: ObjectRef;
  results: AuditResult[];
}

export interface AuditContext {
  policy: Policy;
  keyRing: KeyRing;
  /** Milliseconds since the epoch. */
  now: number;
}

/** Whether the object carries any key only Deed writes (a claim that Deed stamped it). */
export function carriesStamps(obj: KubeObject, ctx: AuditContext): boolean {
  return presentOwnedKeys(obj.metadata.labels ?? {}, obj.metadata.annotations ?? {}, ctx.policy.keys).length > 0;
}

function reaperFacts(ctx: AuditContext): ReaperFacts {
  const { deadlineGraceSeconds, leaseGraceSeconds, runLeases } = ctx.policy.config.reaper;
  return { keys: ctx.policy.keys, keyRing: ctx.keyRing, now: ctx.now, deadlineGraceSeconds, leaseGraceSeconds, runLeases };
}

/** The owner pod the reaper's verdict on this object depends on: read it before judging. */
export function ownerToLookUp(obj: KubeObject, kind: ReapedKindName, inScope: boolean, ctx: AuditContext): OwnerRef | undefined {
  return readsFor(obj, kind, inScope, ctx).owner;
}

/** The owner pod and run lease the reaper's verdict on this object depends on. */
export function readsFor(obj: KubeObject, kind: ReapedKindName, inScope: boolean, ctx: AuditContext): Needs {
  if (!inScope || !carriesStamps(obj, ctx)) return {};
  return reaperNeeds(obj, kind, reaperFacts(ctx));
}

/**
 * The results for one object, or undefined when there is nothing to say: an object
 * outside the review scope that carries no stamps is none of Deed's business.
 */
export function judgeObject(obj: KubeObject, kind: ReapedKindName, inScope: boolean, ctx: AuditContext, owner?: OwnerLookup, lease?: LeaseLookup, pod?: PodClockLookup): ObjectAudit | undefined {
  const meta = obj.metadata;
  const ref: ObjectRef = { apiVersion: apiVersionOf(stampedRow(kind)), kind, namespace: meta.namespace ?? '', name: meta.name ?? '', uid: meta.uid ?? '' };
  const stamped = carriesStamps(obj, ctx);
  if (!inScope) {
    if (!stamped) return undefined;
    return {
      object: ref,
      results: [
        {
          policy: AUDIT_POLICIES.scope,
          rule: AUDIT_CHECKS.outsideReview,
          result: 'warn',
          // Once the namespace is back in the scope its stamps verify again, whoever wrote them
          // meanwhile: the audit says what opting it back in takes (docs/operations.md).
          message: `carries Deed's stamps in namespace ${ref.namespace}, where Deed does not review writes (not opted in, or excluded): anyone could have written them, and no reader trusts them. Before the namespace is opted in (again), delete this object or have its environment re-create it: back in the scope, its stamps would verify as if Deed had written them`,
        },
      ],
    };
  }
  // The well-known ConfigMaps (kube-root-ca.crt) are in every namespace, kept by a cluster component: no sandbox's.
  if (!stamped && kind === 'ConfigMap' && isWellKnownConfigMap(ref.name, ctx.policy)) return undefined;
  if (!stamped)
    return {
      object: ref,
      results: [
        { policy: AUDIT_POLICIES.stamps, rule: AUDIT_CHECKS.attestation, result: 'skip', message: 'carries no Deed stamps: not a sandbox object Deed admitted' },
        ...(kind === 'Pod' ? [...runnerMarkResults(obj, ref, ctx), ...jobClaimResults(obj, ref)] : []),
      ],
    };
  return { object: ref, results: [stampResult(obj, ref, ctx), ...retiredEnvironmentResults(obj, ctx), ...contentResults(obj, kind, ctx), ...(kind === 'Pod' ? jobClaimResults(obj, ref) : []), reaperResult(obj, kind, ctx, owner, lease, pod)] };
}

/**
 * A pod stored before Deed judged the labels a Job's selector matches (rules/reference-scope.ts):
 * one whose controller reference gives a Job's uid to another kind is counted by that Job as its
 * own (its controller deletes and completes with it). Orphans are not reported: no controller
 * may adopt one into another environment's Job now (guard.adoption), and a deleted Job's uid
 * is never a Job's again.
 */
function jobClaimResults(obj: KubeObject, ref: ObjectRef): AuditResult[] {
  return jobUidClaims(obj)
    .filter((c) => !c.orphan)
    .map(({ key, value }) => ({
      policy: AUDIT_POLICIES.rules,
      rule: AUDIT_CHECKS.jobClaim,
      result: 'fail' as const,
      message: `its controller reference gives the uid of a Job (${quoted(value)}, label ${key}) to another kind: the job controller counts it as that Job's own, deletes that Job's pods as surplus and completes the Job with it; delete it (\`kubectl delete pod -n ${ref.namespace} ${ref.name}\`)`,
      properties: { jobUid: typeof value === 'string' ? value.slice(0, 80) : '' },
    }));
}

/**
 * A pod of no environment and the runner mark (pod/runner-mark.ts): a runner created before
 * Deed wrote it lacks it, so a tenant's policy stored before, or one that says
 * `<prefix>/environment DoesNotExist`, may still select it; a pod that is no runner may
 * carry one from before Deed reserved the key, and a platform's policy for that
 * environment's runners covers it. Each says who fixes it, and how.
 */
function runnerMarkResults(obj: KubeObject, ref: ObjectRef, ctx: AuditContext): AuditResult[] {
  const key = ctx.policy.keys.runner;
  const given = entryOf(obj.metadata.labels ?? {}, key);
  const runner = runnerOf(obj, ref.namespace, ctx.policy);
  const at = `-n ${ref.namespace} ${ref.name}`;
  const result = (status: ResultStatus, message: string): AuditResult[] => [{ policy: AUDIT_POLICIES.stamps, rule: AUDIT_CHECKS.runnerMark, result: status, message, properties: { ...(runner !== undefined ? { environment: runner } : {}) } }];
  if (given === runner) return runner === undefined ? [] : result('pass', `the runner mark says environment "${runner}", whose service account it runs as`);
  if (given === undefined)
    return result('warn', `a runner of environment "${runner}" without ${key} (created before Deed wrote it): a tenant's policy may still select it; its manager marks it with \`kubectl label pod ${at} ${key}=${runner}\`, or re-create it`);
  if (runner === undefined)
    return result('fail', `carries ${key}=${JSON.stringify(given)} but is no runner, so a platform's policy for that environment's runners covers it: take it off with \`kubectl label pod ${at} ${key}-\``);
  return result('fail', `carries ${key}=${JSON.stringify(given)}, but its service account is environment "${runner}"'s: re-create it`);
}

function stampResult(obj: KubeObject, ref: ObjectRef, ctx: AuditContext): AuditResult {
  const v = verifyObject(ctx.keyRing, obj, ctx.policy.keys, ref.kind, ref.namespace);
  if (v.ok)
    return {
      policy: AUDIT_POLICIES.stamps,
      rule: AUDIT_CHECKS.attestation,
      result: 'pass',
      message: `the stamps verify under key "${v.keyId}" (${v.format})`,
      properties: { keyId: v.keyId, format: v.format },
    };
  return {
    policy: AUDIT_POLICIES.stamps,
    rule: AUDIT_CHECKS.attestation,
    result: 'fail',
    message: `the stamps do not verify: the attestation ${v.reason}; the object belongs to no environment`,
    properties: { format: v.format, ...(v.keyId !== undefined ? { keyId: v.keyId } : {}) },
  };
}

/**
 * An object stamped for an environment the policy no longer defines (retired, renamed): the
 * webhook refuses every write of it by a principal of no environment but break-glass and
 * system controllers (guard.unmapped), no runner acts for it, and `deed reap` sweeps no
 * environment the policy does not define. Nothing for any other object.
 */
function retiredEnvironmentResults(obj: KubeObject, ctx: AuditContext): AuditResult[] {
  const environment = entryOf(obj.metadata.labels ?? {}, ctx.policy.keys.environment);
  if (environment === undefined || ctx.policy.config.environments.some((e) => e.id === environment)) return [];
  return [
    {
      policy: AUDIT_POLICIES.stamps,
      rule: AUDIT_CHECKS.environment,
      result: 'fail',
      message: `is stamped for environment ${JSON.stringify(environment.slice(0, 63))}, which the policy does not define (retired or renamed): no runner acts for it, deed reap does not sweep it, and only break-glass and system controllers may change or delete it. Delete it as break-glass, or put the environment back in the policy and let its reaper sweep it`,
      properties: { environment: environment.slice(0, 63) },
    },
  ];
}

/**
 * The admission rules on the object's content as stored. A rule in `deny` or `audit` mode
 * fails (audit mode is there to show who would fail before it is enforced); `warn` warns.
 * Secrets are read as metadata only, so their content rules are not judged here.
 */
function contentResults(obj: KubeObject, kind: ReapedKindName, ctx: AuditContext): AuditResult[] {
  if (!auditJudgesContent(kind)) return [];
  const decision: DecisionContext = {
    policy: ctx.policy,
    keyRing: ctx.keyRing,
    now: () => ctx.now,
    randomBytes: () => {
      throw new Error('the audit mints nothing');
    },
    lookup: noLookup('the audit judges stored objects on their own'),
    // The caller knows the object's namespace is in scope; content rules do not ask.
    scope: EVERY_NAMESPACE,
  };
  // Judged for the environment its stamps name (they verified, or the stamp result says not).
  const namespace = obj.metadata.namespace ?? '';
  const owner = ownershipOfObject(obj, kind, namespace, ctx.policy, ctx.keyRing);
  const findings = objectRules(obj, sandboxKindNamed(kind), decision, { policy: ctx.policy, namespace, environment: owner.kind === 'stamped' ? owner.environment : undefined });
  if (findings.length === 0)
    return [{ policy: AUDIT_POLICIES.rules, rule: AUDIT_CHECKS.contentRules, result: 'pass', message: kind === 'Pod' ? 'the pod passes the template and workspace rules' : 'the claim has no pod owner' }];
  return findings.map((f) => {
    const mode = modeOf(f.rule, ctx.policy);
    return {
      policy: AUDIT_POLICIES.rules,
      rule: f.rule,
      result: mode === 'warn' ? 'warn' : 'fail',
      message: `${f.path !== undefined ? `${f.path}: ` : ''}${f.message}`,
      properties: { mode, ...(f.path !== undefined ? { path: f.path } : {}) },
    };
  });
}

function reaperResult(obj: KubeObject, kind: ReapedKindName, ctx: AuditContext, owner: OwnerLookup | undefined, lease: LeaseLookup | undefined, pod: PodClockLookup | undefined): AuditResult {
  const v = reaperVerdict(obj, kind, reaperFacts(ctx), owner, lease, pod);
  // Reap: a leak the reaper of its environment will delete. Keep: in use. Skip: the reaper never touches it.
  const result: ResultStatus = v.action === 'reap' ? 'warn' : v.action === 'keep' ? 'pass' : 'skip';
  return { policy: AUDIT_POLICIES.reaper, rule: AUDIT_CHECKS.reaper, result, message: `${v.action}: ${v.reason}`, properties: { action: v.action, code: v.code } };
}

/**
 * An operator configuration stored in the review scope (a SecretStore, a generator, a
 * TriggerAuthentication, an analysis), judged as `guard.operator-identity` judges a write of
 * it: each place the operator would sign in as itself for whoever wrote the object. Admission
 * let an object stored before that rule keep it (an UPDATE that leaves it passes), so the
 * audit is where it shows. The writer is not known here: an object an environment's
 * stamps claim was written for that environment, and fails; an unstamped one may be the
 * platform's own (which the rule lets through), and warns.
 */
export function judgeOperatorConfig(obj: KubeObject, row: OperatorConfigRow, ctx: AuditContext): ObjectAudit {
  const meta = obj.metadata;
  const ref: ObjectRef = { apiVersion: apiVersionOf(row), kind: row.kind, namespace: meta.namespace ?? '', name: meta.name ?? '', uid: meta.uid ?? '' };
  const uses = operatorIdentityUses(obj, row.operatorIdentity);
  if (uses.length === 0)
    return { object: ref, results: [{ policy: AUDIT_POLICIES.rules, rule: AUDIT_CHECKS.operatorConfig, result: 'pass', message: 'no configuration has the operator sign in as itself' }] };
  const owner = ownershipOf({ kind: row.kind, namespace: ref.namespace, metadata: meta }, ctx.policy, ctx.keyRing);
  const mode = modeOf(RULES.guardOperatorIdentity.id, ctx.policy);
  const environment = owner.kind === 'stamped' ? owner.environment : undefined;
  return {
    object: ref,
    results: uses.map(({ at, use }) => ({
      policy: AUDIT_POLICIES.rules,
      rule: RULES.guardOperatorIdentity.id,
      result: environment !== undefined && mode !== 'warn' ? 'fail' : 'warn',
      message:
        `${at}: ${use.identity}, which acts for every environment and the platform; ${use.fix}. ` +
        (environment !== undefined
          ? `Stamped for environment "${environment}": written for a sandbox, stored before Deed refused this`
          : `Carries no environment's stamps: if the platform did not write it, it was stored before Deed refused this to everyone else`),
      properties: { mode, path: at, ...(environment !== undefined ? { environment } : {}) },
    })),
  };
}

/**
 * An object that names a hostname the policy declares for an environment (rule
 * route.hostnames; outside the review scope the install's deed-hostnames admission policy),
 * stored before it was declared or before Deed refused it: the gateway or ingress controller
 * still sends that environment's requests there. `fail` when it is stamped for another
 * environment, `warn` when no stamps say whose it is (the platform may name any, and stamps
 * outside the review scope prove nothing), and in the rule's `warn` mode; `pass` when it is
 * the environment's own. Undefined when it names no declared hostname.
 */
export function judgeHostnames(obj: KubeObject, row: HostnameRow, inScope: boolean, ctx: AuditContext): ObjectAudit | undefined {
  const environments = ctx.policy.config.environments;
  const names = hostnamesOf(row.hostnames, obj);
  if (!names.some(({ host }) => declaredHostnameOf(host, environments) !== undefined)) return undefined;
  const meta = obj.metadata;
  const ref: ObjectRef = { apiVersion: apiVersionOf(row), kind: row.kind, namespace: meta.namespace ?? '', name: meta.name ?? '', uid: meta.uid ?? '' };
  const owner = inScope ? ownershipOf({ kind: row.kind, namespace: ref.namespace, metadata: meta }, ctx.policy, ctx.keyRing) : undefined;
  const stampedFor = owner?.kind === 'stamped' ? owner.environment : undefined;
  const mode = modeOf(RULES.routeHostnames.id, ctx.policy);
  // Each name against the environments the object is not stamped for, as the rule asks of its writer: a wildcard over
  // two environments' names is another's even where its first match is the object's own (reviewer-103 F1).
  const others = environments.filter((e) => e.id !== stampedFor);
  const results = names
    .flatMap(({ host, at, follower }) => {
      const taken = declaredHostnameOf(host, others);
      return taken === undefined ? [] : [{ host, at, follower, ...taken }];
    })
    .map(({ host, at, follower, environment, pattern }): AuditResult => ({
      policy: AUDIT_POLICIES.rules,
      rule: RULES.routeHostnames.id,
      result: stampedFor !== undefined && mode !== 'warn' ? 'fail' : 'warn',
      message:
        `${at}: ${host} is environment "${environment}"'s hostname (${pattern}): ${follower}; remove it, or have the platform or that environment write the object. ` +
        (stampedFor !== undefined
          ? `Stamped for environment "${stampedFor}": stored before the hostname was declared, or before Deed refused this`
          : inScope
            ? `Carries no environment's stamps: if the platform did not write it, it was stored before Deed refused this to everyone else`
            : `In namespace ${ref.namespace}, outside the review scope: if the platform did not write it, it was stored before the hostname was declared`),
      properties: { mode, path: at, environment, ...(stampedFor !== undefined ? { stampedFor } : {}) },
    }));
  if (results.length > 0) return { object: ref, results };
  return { object: ref, results: [{ policy: AUDIT_POLICIES.rules, rule: RULES.routeHostnames.id, result: 'pass', message: `names only hostnames of environment "${stampedFor}", whose stamps verify on it`, properties: { mode, environment: stampedFor! } }] };
}

/** A list that failed: nothing of this kind was judged in the namespace. */
export function listFailure(kind: string, namespace: string, message: string): AuditResult {
  return { policy: AUDIT_POLICIES.audit, rule: AUDIT_CHECKS.listFailed, result: 'error', message: `could not list ${kind} objects in ${namespace} (${message}); none were judged this run`, properties: { kind } };
}
