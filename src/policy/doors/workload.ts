// The workload door (doors/door.ts): a kind whose controller makes pods or claims from its
// templates, for whoever wrote them, or its status, which carries the whole object too. A
// workload is stamped like a sandbox object (workload/stamps.ts) and its templates are judged
// as the pods and claims they make (workload/review.ts). A ReplicaSet a Deployment's
// controller creates, or a Job a CronJob's, is stamped and judged as its controlling owner's
// environment's (controller-write.ts).
import { allowed, denied, patched } from '../../admission/verdict.js';
import { enforce } from '../rules/enforcement.js';
import { createIdentity } from '../create-gate.js';
import { accountKeys, objectReads } from '../reads.js';
import { serviceAccountOf } from '../pod/service-account.js';
import { podTemplates } from '../workload/kinds.js';
import { noEnvironmentScope, selectorScope } from '../selector-scope.js';
import { keptOnUpdate } from '../stamps/kept-stamps.js';
import { referenceScope } from '../rules/reference-scope.js';
import { affinityScope, templateAffinityScope, withAffinityScope } from '../rules/affinity-scope.js';
import { mutateWorkload, validateWorkload, workloadNamesOf } from '../workload/review.js';
import { withTemplateOps, workloadStampFindings, workloadStampRow } from '../workload/stamps.js';
import { actingFor, adoptionOfUpdate, controllerMadeRow, controllerOf, environmentOfControllerMade } from '../controller-made.js';
import { stampedObjectFindings } from '../stamped-object.js';
import { stampCreate } from '../stamp-create.js';
import { createGateOf } from '../review-facts.js';
import { judgeControllerWrite, stampControllerMade } from './controller-write.js';
import type { DoorReview } from './door-review.js';
import type { Door } from './door.js';

type WorkloadDoor = Extract<Door, { kind: 'workload' }>;

export const WORKLOAD_DOOR: DoorReview<WorkloadDoor> = {
  needs: (read) =>
    objectReads(read, () => {
      const { req, door } = read;
      if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return { claims: [], references: [], accounts: [] };
      const old = req.operation === 'UPDATE' ? (req.oldObject ?? undefined) : undefined;
      const names = workloadNamesOf(read.facts, req.object!, door.workload, old);
      // The service accounts its (changed) pod templates run as: one stamped for another environment is refused here, not at each pod.
      return { ...names, accounts: podTemplates(req.object!, door.workload, old).flatMap((t) => accountKeys(serviceAccountOf(t.spec), read.namespace)) };
    }, { judged: true, stampsAsOwners: workloadStampRow(read.door.workload) !== undefined }),
  stamp(facts, ctx) {
    const { request: req, door, requester } = facts;
    const mismatch = facts.kindMismatch;
    if (mismatch) return enforce([mismatch], ctx.policy);
    if (req.namespace === undefined) return allowed();
    const templates = withAffinityScope(mutateWorkload(req, door.workload, req.namespace, ctx, requester, facts.identity), () => templateAffinityScope(req, req.namespace!, requester, ctx, facts.identity));
    // A workload is stamped like a sandbox object (workload/stamps.ts); its templates' ephemeral claims too.
    const row = workloadStampRow(door.workload);
    const kept = templates.allowed ? keptOnUpdate(req, ctx, facts.requester) : undefined;
    if (kept !== undefined) return withTemplateOps(kept, templates);
    if (!templates.allowed || row === undefined || req.operation !== 'CREATE' || req.subResource !== undefined) return templates;
    // A requester Deed stamps nothing for (or that may not create here) is the validating side's to refuse, with all its template's findings.
    const gate = createIdentity(requester, req.namespace, {}, {}, ctx.policy, facts.identity);
    if ('verdict' in gate) return gate.verdict.allowed ? withTemplateOps(patched(noEnvironmentScope(req.object!, req.resource, req.namespace, requester, ctx.policy)), templates) : templates;
    return withTemplateOps(stampCreate(req.object!, row, req.namespace, req, ctx, requester, createGateOf(facts, req.namespace, req.object!, ctx.policy)), templates);
  },
  judge(facts, namespace, ctx) {
    const { request: req, door, requester } = facts;
    const own = [
      ...workloadStampFindings(req, door.workload, namespace, requester, ctx, facts.identity),
      // A client's change of a workload's controlling owner (a Deployment adopting a ReplicaSet): within one environment.
      ...adoptionOfUpdate(req, door.workload.kind, namespace, requester, ctx),
      ...selectorScope(req, namespace, requester, ctx, facts.identity),
      ...affinityScope(req, namespace, requester, ctx, facts.identity),
      ...referenceScope(req, namespace, requester, ctx),
    ];
    return validateWorkload(req, door.workload, namespace, requester, ctx, own, facts.identity, facts);
  },
  controllerWrite: {
    stamp: (facts, ctx) => stampControllerMade(facts, workloadStampRow(facts.door.workload), ctx),
    judge: (facts, namespace, ctx) =>
      judgeControllerWrite(facts, namespace, ctx, facts.door.workload.kind, (obj) => {
        const { request: req, door, requester } = facts;
        const ref = controllerOf(obj);
        const row = workloadStampRow(door.workload);
        const mismatch = facts.kindMismatch;
        if (mismatch) return denied([mismatch]);
        if (row === undefined) return allowed();
        const made = environmentOfControllerMade(ref, namespace, `the ${door.workload.kind} its controller creates`, ctx);
        if ('finding' in made) return enforce([made.finding], ctx.policy);
        const acting = actingFor(requester, made.environment);
        return validateWorkload(req, door.workload, namespace, acting, ctx, [...stampedObjectFindings(req, controllerMadeRow(row), namespace, acting, ctx, false), ...selectorScope(req, namespace, acting, ctx)], undefined, facts);
      }),
  },
  judgesCreateWhole: true,
  carries: (door) => door.workload.kind,
};
