// Runs the webhooks on one object, in process, through the same `decide()` as the
// server, in the API server's order: for a CREATE or an UPDATE the mutating webhook, its
// patch applied (at CREATE the object given a uid and name as the API server would), then
// the validating webhook on the final object; a DELETE goes to the validating webhook only.
// On UPDATE the mutating side puts back the scope a selector was stored with, where the
// installed configuration sends it UPDATEs.
import jsonpatch from 'fast-json-patch';
import { decide, HANDLERS, type Webhook } from '../admission/decide.js';
import type { AdmissionReviewResponse, KubeObject, UserInfo } from '../admission/types.js';
import type { PatchOperation, Verdict } from '../admission/verdict.js';
import { groupOf, kindRowNamed, type KindRow } from '../policy/kinds.js';
import { followsAcross, isReferredTarget, referrerOf } from '../policy/referrers.js';
import { gatheredLookup, lookupKey, type LookupResource } from '../policy/lookup.js';
import { snapshotClaims } from '../policy/pod/claim-environment.js';
import { readingKinds, readsByName, readsName } from '../policy/pod/pod-reads.js';
import { beyondMetadata } from '../kube/lookup-facts.js';
import type { DecisionContext, Lookup, ObjectLookup, Reader } from '../policy/policy.js';
import { admitted, buildReview, describeObject, uuidFrom, type ReviewOperation } from './build-review.js';
import { excludedNamespaces, inReviewScope, OPTED_IN_SELECTOR, type NamespaceFacts } from '../policy/review-scope.js';
import { allowed as allowedVerdict } from '../admission/verdict.js';
import { routedTo, sentFromKubeSystem } from './routing.js';

export interface Step {
  webhook: Webhook;
  uid: string;
  verdict: Verdict;
  response: AdmissionReviewResponse;
  /** An internal error behind an `internal.error` denial. */
  error?: string;
  /** Whether the installed webhook configurations send this request to this webhook at all. */
  routed: boolean;
  /** The request's resource, `group/resource[/subresource]` (`resource` for the core group). */
  resource: string;
  /** Not routed because its requester is a kube-system service account the install's matchCondition leaves out (routing.ts sentFromKubeSystem). */
  kubeSystem?: true;
}

export interface ObjectReview {
  subject: string;
  operation: ReviewOperation;
  subResource?: string;
  requester: string;
  steps: Step[];
  allowed: boolean;
  /** The mutating webhook's patch (empty when it changed nothing or denied). */
  patch: PatchOperation[];
  /** The object as it would be written: patched, null for DELETE or a denial. */
  result: KubeObject | null;
  /** The object as stored: `result` given a uid and name on CREATE; null for DELETE or a denial. */
  stored: KubeObject | null;
  /** The object removed: the old object of an allowed DELETE. */
  deleted: KubeObject | null;
  /** Why no Deed webhook is called for it (a namespace the webhooks never select, a kind no rule names): it passes as it is. */
  notJudged?: string;
  /** The objects whose referrers the review took to be only those in the files (ReviewedObjects.takeAssumed): the cluster may hold others. */
  assumed?: string[];
}

/** Whether any of Deed's webhooks would be called for the object: else the cluster never asks Deed. */
export function judged(review: ObjectReview): boolean {
  return review.steps.some((step) => step.routed);
}

/** Where the webhooks run: their own namespace is never selected (policy/review-scope.ts). */
export interface ReviewPlace {
  /** Deed's own namespace (`deed review --deed-namespace`). */
  deedNamespace: string;
}

/** Deed's default namespace (the install's): kept here so `deed review` need not load the install. */
export const DEFAULT_DEED_NAMESPACE = 'deed-system';

export interface ObjectInput {
  operation: ReviewOperation;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  userInfo: UserInfo;
  subResource?: string;
}

/** A review Deed cannot complete (a patch that does not apply): not a policy answer, so `deed review` exits 2. */
export class ReviewError extends Error {
  override name = 'ReviewError';
}

export function hasWebhook(name: string): name is Webhook {
  return Object.hasOwn(HANDLERS, name);
}

function call(webhook: Webhook, input: ObjectInput, object: KubeObject | null, ctx: DecisionContext, selected: boolean): Step {
  const uid = uuidFrom(ctx.randomBytes); // the API server gives every webhook call a uid of its own
  const body = buildReview({ ...input, uid, object, oldObject: input.oldObject });
  const decision = decide(webhook, body, ctx);
  if (decision.kind === 'bad-request') throw new ReviewError(`the ${webhook} webhook refused the review Deed built: ${decision.message}`);
  const { group, resource } = body.request.resource;
  const path = [...(group === '' ? [] : [group]), resource, ...(input.subResource === undefined ? [] : [input.subResource])].join('/');
  const step: Step = { webhook, uid, verdict: decision.verdict, response: decision.response, routed: selected && routedTo(webhook, body.request, ctx.policy), resource: path };
  if (!sentFromKubeSystem(body.request, ctx.policy)) step.kubeSystem = true;
  // A fault inside Deed: the cluster would deny (fail closed); the detail the server only logs is shown here.
  if (decision.error !== undefined) step.error = decision.error instanceof Error ? decision.error.message : String(decision.error);
  return step;
}

/**
 * The review of one object as the cluster would make it. A webhook the installed
 * configurations do not call for it (its namespace is Deed's own or kube-system, which the
 * namespaceSelector never selects; a cluster-scoped kind or any other no rule names) has no
 * say: the object passes as it is, and the review says why it was not judged.
 */
export function reviewObject(input: ObjectInput, ctx: DecisionContext, place: ReviewPlace = { deedNamespace: DEFAULT_DEED_NAMESPACE }): ObjectReview {
  const subject = describeObject((input.object ?? input.oldObject)!);
  const out: ObjectReview = { subject, operation: input.operation, requester: input.userInfo.username, steps: [], allowed: true, patch: [], result: null, stored: null, deleted: null };
  if (input.subResource !== undefined) out.subResource = input.subResource;
  let final = input.object;
  const namespace = (input.object ?? input.oldObject)!.metadata.namespace;
  const selected = namespace === undefined || !excludedNamespaces(place.deedNamespace).includes(namespace);
  const effective = (step: Step): Verdict => (step.routed ? step.verdict : allowedVerdict());

  if (input.operation === 'CREATE' || input.operation === 'UPDATE') {
    const mutated = call('mutate', input, input.object, ctx, selected);
    out.steps.push(mutated);
    if (!effective(mutated).allowed) return { ...out, allowed: false };
    out.patch = effective(mutated).patch ?? [];
    try {
      // On a copy: the caller's object stays as given. The result is the object as Deed leaves it.
      final = jsonpatch.applyPatch(structuredClone(input.object!), out.patch, true, true, true).newDocument;
    } catch (err) {
      throw new ReviewError(`${subject}: Deed's patch does not apply: ${(err as Error).message}`);
    }
    out.result = final;
  }

  const stored = input.operation === 'CREATE' ? admitted(final!, ctx.now(), ctx.randomBytes) : final;
  const validated = call('validate', input, stored, ctx, selected);
  out.steps.push(validated);
  if (!effective(validated).allowed) return { ...out, allowed: false, result: null };
  if (input.operation === 'DELETE') out.deleted = input.oldObject;
  else out.stored = stored;
  if (!judged(out))
    out.notJudged = !selected
      ? `namespace ${namespace} is ${namespace === place.deedNamespace ? "Deed's own" : 'kube-system'}: the webhooks never select it`
      : validated.kubeSystem === true
        ? `${input.userInfo.username} is a kube-system service account: the webhooks' matchCondition sends them only a listed workload controller's creations and owner-reference changes`
        : `${namespace === undefined ? 'cluster-scoped: ' : ''}no Deed webhook is called for ${input.operation} of ${validated.resource}`;
  return out;
}

/** The kinds the webhook looks up, by `apiVersion/kind`: the kind table's rows with a lookup. */
/**
 * The kind Deed looks objects of `obj`'s group and kind up as, at any version: the webhook
 * reads a kind at whichever version the cluster serves (a Gateway at v1beta1 before Gateway
 * API 1.0), so a file giving that version is the same kind (reviewer-99 F2).
 */
function lookupResourceOf(obj: KubeObject): LookupResource | undefined {
  const row = kindRowNamed(groupOf(String(obj.apiVersion ?? '')), String(obj.kind));
  return row?.lookup === undefined ? undefined : (row.resource as LookupResource);
}

/**
 * Lookups for `deed review`: the objects reviewed so far, as the cluster would hold them,
 * and those given with --existing. Anything else is unknown: the files are not the
 * cluster, and there is none to ask.
 */
export class ReviewedObjects {
  readonly facts = new Map<string, Lookup>();
  private readonly gathered = gatheredLookup(
    this.facts,
    'it is not among the objects reviewed before this one or given with --existing, and deed review has no cluster to ask; give it first in the same file, or with --existing',
  );
  /** What reads an object is what was reviewed or given that names it (pods, claims not yet provisioned): the files are all deed review knows of the cluster. */
  /** The objects reviewed or given that are followed by what they name (an EndpointSlice, an HPA: policy/referrers.ts), by `resource/namespace/name`. */
  private readonly referrers = new Map<string, { row: KindRow; object: KubeObject; found: Extract<Lookup, { state: 'found' }> }>();
  /** What the webhook would look up live readers or referrers of, since the last takeAssumed(): deed review answers from the files alone. */
  private readonly asked = new Set<string>();
  readonly lookup: ObjectLookup = {
    get: (resource, namespace, name) => this.gathered.get(resource, namespace, name),
    readers: (resource, namespace, name) => {
      this.asked.add(`${resource} ${namespace}/${name}`);
      const readers: Reader[] = [];
      if (isReferredTarget(resource)) {
        for (const { row, object, found } of this.referrers.values()) {
          // In the named object's namespace, or (a route's parent Gateway) any.
          const at = object.metadata.namespace;
          const referrer = at !== undefined && (at === namespace || followsAcross(row, resource)) ? referrerOf(row, object, at, { resource, namespace, name }) : undefined;
          if (referrer !== undefined) readers.push({ ...referrer, found });
        }
        return { state: 'known', readers };
      }
      for (const [kind, by] of readingKinds(resource)) {
        const prefix = lookupKey({ resource: by, namespace, name: '' });
        for (const [key, found] of this.facts)
          if (key.startsWith(prefix) && !key.slice(prefix.length).includes('/') && found.state === 'found' && readsName(found.reads, resource, name)) readers.push({ kind, name: key.slice(prefix.length), found });
      }
      return { state: 'known', readers };
    },
  };

  /**
   * The objects whose readers and referrers the last review asked of (a Secret's live
   * readers, a Service's referrers), now forgotten: the webhook reads them from the cluster
   * and refuses a name another environment's live pod or referrer names
   * (`reference.live-reader`); deed review knows only the files and --existing.
   */
  takeAssumed(): string[] {
    const asked = [...this.asked];
    this.asked.clear();
    return asked;
  }

  /**
   * Records objects already in the cluster (--existing). Their stamps count only in the
   * review scope: outside it anyone can write stamps, so there Deed cannot tell whose an
   * object is. Namespace objects among them say which namespaces are in it; an object
   * whose Namespace is not given, or is outside, is looked up as unknown. Returns a line
   * for each such object.
   */
  rememberExisting(objects: KubeObject[], deedNamespace: string): string[] {
    const isNamespace = (obj: KubeObject) => obj.apiVersion === 'v1' && obj.kind === 'Namespace';
    const namespaces = new Map<string, NamespaceFacts>();
    for (const obj of objects.filter(isNamespace)) if (obj.metadata.name !== undefined) namespaces.set(obj.metadata.name, { name: obj.metadata.name, labels: obj.metadata.labels });
    const lines: string[] = [];
    for (const obj of objects) {
      if (isNamespace(obj)) continue;
      const ns = obj.metadata.namespace ?? '';
      const facts = namespaces.get(ns);
      if (facts !== undefined && inReviewScope(facts, deedNamespace)) {
        this.remember({ stored: obj, deleted: null });
        continue;
      }
      const why =
        facts === undefined
          ? `its Namespace ${ns} is not given with --existing, so Deed cannot tell whether its webhooks review writes there (give it: kubectl get namespace ${ns} -o yaml)`
          : `namespace ${ns} is outside the review scope (not ${OPTED_IN_SELECTOR}, or Deed's own or kube-system): Deed does not review writes there, so anyone can write stamps`;
      lines.push(`existing ${describeObject(obj)}: stamps not trusted: ${why}`);
      const resource = lookupResourceOf(obj);
      if (resource !== undefined && obj.metadata.name !== undefined)
        this.facts.set(lookupKey({ resource, namespace: ns, name: obj.metadata.name }), { state: 'unknown', reason: `it is given with --existing, but ${why}` });
    }
    return lines;
  }

  /** Keeps (or forgets, `gone`) an object of a kind followed by what it names (`followsByName`): what names a Service or a workload created later in the run. */
  private rememberReferrer(obj: KubeObject | null | undefined, gone: boolean): void {
    // By group and kind, any version (an HPA of autoscaling/v1 names its target as one of v2 does).
    const row = obj ? kindRowNamed(groupOf(String(obj.apiVersion ?? '')), String(obj.kind)) : undefined;
    if (!obj || row?.followsByName === undefined || obj.metadata.namespace === undefined || obj.metadata.name === undefined) return;
    const key = `${row.resource}/${obj.metadata.namespace}/${obj.metadata.name}`;
    if (gone) {
      this.referrers.delete(key);
      return;
    }
    const { uid, labels, annotations } = obj.metadata;
    const found = { state: 'found' as const, metadata: { ...(uid !== undefined ? { uid } : {}), ...(labels ? { labels: { ...labels } } : {}), ...(annotations ? { annotations: { ...annotations } } : {}) } };
    this.referrers.set(key, { row, object: obj, found });
  }

  /** Records what a review stored or deleted, so later reviews in the same run can look it up. */
  remember<R extends Pick<ObjectReview, 'stored' | 'deleted'>>(review: R): R {
    for (const [obj, gone] of [
      [review.stored, false],
      [review.deleted, true],
    ] as const) {
      this.rememberReferrer(obj, gone);
      const resource = obj ? lookupResourceOf(obj) : undefined;
      if (!obj || !resource || obj.metadata.namespace === undefined || obj.metadata.name === undefined) continue;
      const { uid, labels, annotations, creationTimestamp } = obj.metadata;
      // A snapshot answers with the claim it copied: a restore from it is judged by that claim,
      // if that claim was made before it (as `kubectl get` gives it, or as this run stored it).
      const source = resource === 'volumesnapshots' ? snapshotClaims(obj)[0] : undefined;
      const created = typeof creationTimestamp === 'string' ? creationTimestamp : undefined;
      // What the webhook's lookups give besides metadata, as they give it (kube/lookup-facts.ts): a
      // pod's account (whose runner it is) and what it reads, the claim a claim not yet provisioned clones; any object's controller.
      const { serviceAccountName, reads, controller } = beyondMetadata(obj, resource);
      const found: Lookup = {
        state: 'found',
        metadata: { ...(uid !== undefined ? { uid } : {}), ...(labels ? { labels: { ...labels } } : {}), ...(annotations ? { annotations: { ...annotations } } : {}) },
        ...(resource === 'pods' && serviceAccountName !== undefined ? { serviceAccountName } : {}),
        ...(readsByName(resource) && reads !== undefined ? { reads } : {}),
        ...(controller !== undefined ? { controller } : {}),
        ...(source !== undefined && 'claim' in source ? { sourceClaim: source.claim } : {}),
        ...(created !== undefined ? { created } : {}),
      };
      this.facts.set(lookupKey({ resource, namespace: obj.metadata.namespace, name: obj.metadata.name }), gone ? { state: 'absent' } : found);
    }
    return review;
  }
}
