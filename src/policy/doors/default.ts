// The default door (doors/door.ts): any other namespaced kind, custom resources included,
// stamped and guarded by the default row (kinds.ts): stamped at CREATE (stamp-create.ts),
// judged on its stamps (stamped-object.ts), its selector and references, and what only the
// platform may write.
import { allowed, denied, type Finding, type Verdict } from '../../admission/verdict.js';
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { DecisionContext } from '../policy.js';
import type { Requester } from '../requester/identity.js';
import { objectReads } from '../reads.js';
import { selectorScope } from '../selector-scope.js';
import { affinityScope, templateAffinityScope, withAffinityScope } from '../rules/affinity-scope.js';
import { enforceCreate } from '../dry-run.js';
import { stampedObjectFindings } from '../stamped-object.js';
import { referenceScope } from '../rules/reference-scope.js';
import { actingFor, adoptionOfUpdate, controllerMadeRow, controllerOf, environmentOfControllerMade, ownerLookupKey } from '../controller-made.js';
import { creatorIdentity } from '../create-gate.js';
import { kindRow } from '../kinds.js';
import { enforce } from '../rules/enforcement.js';
import { judgeControllerWrite, stampControllerMade } from './controller-write.js';
import { copiedMetadataStamps } from '../rules/copied-metadata.js';
import { namespaceWideWrite } from '../rules/namespace-wide.js';
import { serviceExternalIps } from '../rules/external-ips.js';
import { gatewayAddresses } from '../rules/gateway-addresses.js';
import { routeHostnames } from '../rules/route-hostnames.js';
import { mappedAccountWrite } from '../rules/mapped-account.js';
import { unownedOutput } from '../rules/unowned-output.js';
import { operatorIdentity } from '../rules/operator-identity.js';
import { operatorPods } from '../rules/operator-pods.js';
import { stampAtCreate, stampCreate } from '../stamp-create.js';
import { createGateOf } from '../review-facts.js';
import type { DoorFacts, DoorReview } from './door-review.js';
import type { Door } from './door.js';

type DefaultDoor = Extract<Door, { kind: 'default' }>;

/** Whether a workload controller's CREATE through the door is stamped and judged as its controlling owner's (the kind table's `controllerMade`: a pod's ResourceClaim). */
const madeForOwner = (req: AdmissionRequest): boolean => kindRow(req.resource)?.controllerMade === true;

export const DEFAULT_DOOR: DoorReview<DefaultDoor> = {
  // A workload controller's writes are judged here only for the kinds it makes for an owner (`controllerMade`); the object and workload doors judge the rest.
  needs: (read) => {
    const made = madeForOwner(read.req);
    return objectReads(read, () => ({ claims: [], references: [], accounts: [] }), { judged: made, stampsAsOwners: made });
  },
  stamp: (facts, ctx) =>
    withAffinityScope(
      stampAtCreate(facts, ctx, (namespace) => {
        const { request: req, door } = facts;
        return namespace === undefined ? allowed() : stampCreate(req.object!, door.row, namespace, req, ctx, facts.requester, createGateOf(facts, namespace, req.object!, ctx.policy));
      }),
      // A custom resource's pod specs (an Argo Rollout's template), at CREATE and where an UPDATE changes them.
      () => (facts.request.namespace === undefined ? allowed() : templateAffinityScope(facts.request, facts.request.namespace, facts.requester, ctx, facts.identity)),
    ),
  judge(facts, namespace, ctx) {
    const { request: req, door, requester } = facts;
    return enforceCreate(
      [
        ...stampedObjectFindings(req, door.row, namespace, requester, ctx, true, facts.identity),
        ...selectorScope(req, namespace, requester, ctx, facts.identity),
        ...affinityScope(req, namespace, requester, ctx, facts.identity),
        ...referenceScope(req, namespace, requester, ctx),
        ...adoption(req, door.row.kind, namespace, requester, ctx),
        ...copiedMetadataStamps(req, ctx.policy),
        // What acts on the whole namespace, or on other namespaces' traffic, is the platform's.
        ...namespaceWideWrite(req, namespace, requester, ctx.policy),
        ...serviceExternalIps(req, requester, ctx.policy),
        ...gatewayAddresses(req, requester, ctx.policy),
        ...routeHostnames(req, requester, ctx),
        // A service account the policy maps to an environment is that environment's identity.
        ...mappedAccountWrite(req, namespace, requester, ctx.policy),
        // What an environment asks an operator to make must be tied to it by an owner reference.
        ...unownedOutput(req, namespace, requester, ctx.policy),
        // Nor have an operator run its code in pods of no environment.
        ...operatorPods(req, namespace, requester, ctx.policy),
        // Nor authenticate with its own identity, which acts for every environment.
        ...operatorIdentity(req, namespace, requester, ctx.policy),
      ],
      ctx.policy,
      req.dryRun,
    );
  },
  controllerWrite: {
    stamp: (facts, ctx) => stampControllerMade(facts, madeForOwner(facts.request) ? facts.door.row : undefined, ctx),
    judge: (facts, namespace, ctx) => (madeForOwner(facts.request) ? judgeControllerWrite(facts, namespace, ctx, facts.door.row.kind, (obj) => judgeMadeForOwner(facts, obj, namespace, ctx)) : allowed()),
  },
  judgesCreateWhole: true,
  carries: (door) => door.row.kind,
};

/**
 * What a workload controller makes for its controlling owner (a pod's ResourceClaim): judged as
 * that owner's environment would be had it created the object itself, against its stamps as
 * Deed wrote them (no runner, no deadline: controller-made.ts controllerMadeRow).
 */
function judgeMadeForOwner(facts: DoorFacts<DefaultDoor>, obj: KubeObject, namespace: string, ctx: DecisionContext): Verdict {
  if (facts.kindMismatch) return denied([facts.kindMismatch]);
  const made = environmentOfControllerMade(controllerOf(obj), namespace, `the ${facts.door.row.kind} its controller creates`, ctx);
  if ('finding' in made) return enforce([made.finding], ctx.policy);
  const acting = actingFor(facts.requester, made.environment);
  const door = { ...facts.door, row: controllerMadeRow(facts.door.row) };
  return DEFAULT_DOOR.judge!({ ...facts, door, requester: acting, controller: false, identity: creatorIdentity(acting, namespace, ctx.policy), createGate: undefined }, namespace, ctx);
}

/**
 * A change of controller stays within one environment (guard.adoption), as on the object and
 * workload doors; at CREATE the reference is rules/reference-scope.ts's. A controller of a kind
 * Deed does not read (a custom resource) is its operator's to judge, as at CREATE.
 */
function adoption(req: AdmissionRequest, kind: string, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  return ownerLookupKey(controllerOf(req.object), namespace) === undefined ? [] : adoptionOfUpdate(req, kind, namespace, requester, ctx);
}
