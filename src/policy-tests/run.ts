// Runs the cases of a `deed test` file through the same path as `deed review`: the
// AdmissionReview the API server would send, the webhooks in process through decide(),
// in the API server's order. Cases run in order, and what an allowed case stores (or
// deletes) is what later cases look up, as if the file were applied to a cluster that
// holds the `existing` objects. Each case's outcome is compared with what it expects.
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../admission/types.js';
import type { Finding } from '../admission/verdict.js';
import { productionContext } from '../admission/production-context.js';
import type { DecisionContext } from '../policy/policy.js';
import { forCreate, forUpdate, InputError, placeInNamespace, requesterFor, stored, withServiceAccountToken } from '../review/build-review.js';
import { dryRunRing } from '../review/dry-run-key.js';
import { ReviewedObjects, reviewObject, type ObjectInput, type ObjectReview } from '../review/run.js';
import type { Expectation, Requester, StoredRef, TestCase, TestFile } from './file.js';

export interface CaseResult {
  file: string;
  case: string;
  passed: boolean;
  /** What differs from the expectation (empty when passed). */
  problems: string[];
  /** What the webhooks answered, whatever was expected. */
  outcome: CaseOutcome;
}

export interface CaseOutcome {
  allowed: boolean;
  /** The findings of the denying webhooks (empty when allowed). */
  denials: Finding[];
  warnings: string[];
}

/** What the file's cluster holds, by kind, namespace and name. */
class Cluster {
  readonly seen = new ReviewedObjects();
  private readonly objects = new Map<string, KubeObject>();

  private static key(kind: string, namespace: string | undefined, name: string | undefined): string {
    return JSON.stringify([kind, namespace ?? 'default', name]);
  }

  remember(review: Pick<ObjectReview, 'stored' | 'deleted'>): void {
    this.seen.remember(review);
    if (review.stored) this.objects.set(Cluster.key(String(review.stored.kind), review.stored.metadata.namespace, review.stored.metadata.name), review.stored);
    if (review.deleted) this.objects.delete(Cluster.key(String(review.deleted.kind), review.deleted.metadata.namespace, review.deleted.metadata.name));
  }

  get(ref: StoredRef, namespace: string | undefined): KubeObject {
    const found = this.objects.get(Cluster.key(ref.kind, ref.namespace ?? namespace, ref.name));
    if (found === undefined) throw new InputError(`no ${ref.kind} ${ref.namespace ?? namespace ?? 'default'}/${ref.name} is stored: an earlier allowed case or existing: must create it`);
    return structuredClone(found);
  }
}

export function runTestFile(t: TestFile): CaseResult[] {
  const cluster = new Cluster();
  const ctx: DecisionContext = { ...productionContext(t.policy, dryRunRing(t.policy)), lookup: cluster.seen.lookup };
  for (const e of t.existing) cluster.remember({ stored: stored(placeInNamespace(e.object, undefined, e.where), e.where, ctx.now(), ctx.randomBytes), deleted: null });
  return t.cases.map((c) => {
    const review = reviewObject(input(c, ctx, cluster), ctx);
    cluster.remember(review);
    const problems = compare(c.expect, review);
    return { file: t.file, case: c.name, passed: problems.length === 0, problems, outcome: outcomeOf(review) };
  });
}

function input(c: TestCase, ctx: DecisionContext, cluster: Cluster): ObjectInput {
  const place = (s: { object: KubeObject; where: string }) => placeInNamespace(s.object, c.namespace, s.where);
  const oldObject = c.oldObject !== undefined && 'stored' in c.oldObject ? { object: cluster.get(c.oldObject.stored, c.namespace), where: `stored ${c.oldObject.stored.kind} ${c.oldObject.stored.name}` } : c.oldObject;
  const subject = c.object ?? oldObject;
  if (subject === undefined) throw new InputError(`case "${c.name}": give the object (object:, or oldObject: for DELETE)`);
  const r: Partial<Requester> = c.requester ?? {};
  const as = r.user ?? (r.serviceAccount !== undefined ? `system:serviceaccount:${r.serviceAccount}` : undefined);
  const who = (obj: KubeObject) =>
    requesterFor({ groups: r.groups ?? [], ...(as !== undefined ? { as } : {}), ...(r.pod ? { podName: r.pod.name, podUid: r.pod.uid } : {}) }, obj.metadata.namespace);
  const sub = c.subresource !== undefined ? { subResource: c.subresource } : {};
  switch (c.operation) {
    case 'CREATE': {
      if (c.object === undefined || oldObject !== undefined) throw new InputError(`case "${c.name}": a CREATE takes object: only`);
      const object = withServiceAccountToken(forCreate(place(c.object), c.object.where), ctx.randomBytes);
      return { operation: 'CREATE', object, oldObject: null, userInfo: who(object), ...sub };
    }
    case 'UPDATE': {
      if (c.object === undefined || oldObject === undefined) throw new InputError(`case "${c.name}": an UPDATE takes object: and oldObject:`);
      const old = stored(place(oldObject), oldObject.where, ctx.now(), ctx.randomBytes);
      const object = forUpdate(place(c.object), old, c.object.where);
      return { operation: 'UPDATE', object, oldObject: old, userInfo: who(object), ...sub };
    }
    case 'DELETE': {
      const old = stored(place(subject), subject.where, ctx.now(), ctx.randomBytes);
      return { operation: 'DELETE', object: null, oldObject: old, userInfo: who(old), ...sub };
    }
  }
}

function outcomeOf(r: ObjectReview): CaseOutcome {
  return {
    allowed: r.allowed,
    denials: r.steps.flatMap((s) => (s.verdict.allowed ? [] : s.verdict.findings)),
    warnings: r.steps.flatMap((s) => s.verdict.warnings),
  };
}

const ANY = '*';

function compare(e: Expectation, r: ObjectReview): string[] {
  const problems: string[] = [];
  const denials = [...new Set(r.steps.flatMap((s) => (s.verdict.allowed ? [] : s.verdict.findings.map((f) => f.rule))))].sort();
  const warnings = r.steps.flatMap((s) => s.verdict.warnings);
  if (r.allowed !== e.allowed) problems.push(`expected ${e.allowed ? 'allowed' : 'denied'}, got ${r.allowed ? 'allowed' : `denied by ${denials.join(', ')}`}`);
  if (e.rules !== undefined) {
    const want = [...new Set(e.rules)].sort();
    if (!isDeepStrictEqual(want, denials)) problems.push(`expected denial rules [${want.join(', ')}], got [${denials.join(', ')}]`);
  }
  for (const w of e.warnings ?? []) if (!warnings.some((got) => got.includes(w))) problems.push(`expected a warning containing ${JSON.stringify(w)}, got ${JSON.stringify(warnings)}`);
  if (e.stamped !== undefined) {
    const obj = r.result;
    if (obj === null) return [...problems, 'expected stamped fields, but nothing was written'];
    const check = (what: string, map: Record<string, string> | undefined, want: Record<string, string | null>) => {
      for (const [key, value] of Object.entries(want)) {
        const got = map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
        if (value === null ? got !== undefined : value === ANY ? got === undefined : got !== value)
          problems.push(`${what} ${key}: expected ${value === null ? 'absent' : value === ANY ? 'present' : JSON.stringify(value)}, got ${got === undefined ? 'absent' : JSON.stringify(got)}`);
      }
    };
    check('label', obj.metadata.labels, e.stamped.labels ?? {});
    check('annotation', obj.metadata.annotations, e.stamped.annotations ?? {});
    for (const [path, value] of Object.entries(e.stamped.fields ?? {})) {
      const got = path.split('.').reduce<unknown>((node, part) => (node !== null && typeof node === 'object' && Object.hasOwn(node, part) ? (node as Record<string, unknown>)[part] : undefined), obj);
      if (!isDeepStrictEqual(got, value)) problems.push(`${path}: expected ${JSON.stringify(value)}, got ${got === undefined ? 'absent' : JSON.stringify(got)}`);
    }
  }
  return problems;
}
