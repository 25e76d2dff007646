// One sweep of the reaper: list this environment's stamped objects, judge each with the
// pure verdict, and (with apply) delete the reaped ones with the UID and resourceVersion
// read as preconditions, so a same-name replacement or a changed object is never hit.
import type { KubeObject } from '../admission/types.js';
import { REAP_KINDS, type KubeClient, type ReapKind } from '../kube/client.js';
import { KubeError } from '../kube/errors.js';
import type { KeyRing } from '../policy/stamps/key-ring.js';
import type { StampKeys } from '../policy/stamps/keys.js';
import { ownerToRead, verdict, type Action, type OwnerLookup, type OwnerRef, type ReaperContext, type VerdictCode } from './verdict.js';

export interface SweepOptions {
  client: KubeClient;
  environment: string;
  keys: StampKeys;
  keyRing: KeyRing;
  /** Namespaces to sweep; empty means all namespaces. */
  namespaces: string[];
  /** Delete what is reaped; otherwise a dry run. */
  apply: boolean;
  now: () => number;
  /** Stops the sweep between objects (SIGTERM); what is left is judged next time. */
  signal?: AbortSignal;
}

/** What happened to a reaped object. */
export type Outcome = 'would-delete' | 'deleted' | 'already-gone' | 'conflict' | 'failed';

export interface Decision {
  action: Action | 'error';
  code: VerdictCode | 'list-failed';
  kind: ReapKind;
  /** `*` for a failed list across all namespaces. */
  namespace: string;
  name?: string;
  uid?: string;
  reason: string;
  outcome?: Outcome;
  error?: string;
}

export interface SweepSummary {
  environment: string;
  dryRun: boolean;
  /** Deleted (or, in a dry run, would be). */
  reaped: number;
  kept: number;
  skippedForeign: number;
  /** Deletes refused by a precondition: the object changed since it was read. */
  conflicts: number;
  /** Lists and deletes that failed. */
  errors: number;
  /** Set when a stop signal ended the sweep early. */
  interrupted?: boolean;
}

export interface SweepResult {
  decisions: Decision[];
  summary: SweepSummary;
}

/** The only selector the reaper lists with: it never reads another environment's objects. */
export function reapSelector(keys: StampKeys, environment: string): string {
  return `${keys.managed}=true,${keys.environment}=${environment}`;
}

export async function sweep(o: SweepOptions): Promise<SweepResult> {
  const selector = reapSelector(o.keys, o.environment);
  const decisions: Decision[] = [];
  const owners = new Map<string, Promise<OwnerLookup>>();
  const readOwner = (ref: OwnerRef): Promise<OwnerLookup> => {
    const key = `${ref.namespace}/${ref.name}`;
    let lookup = owners.get(key);
    if (lookup === undefined) owners.set(key, (lookup = lookupOwner(o.client, ref)));
    return lookup;
  };
  let interrupted = false;

  scopes: for (const namespace of o.namespaces.length > 0 ? o.namespaces : [undefined]) {
    for (const kind of REAP_KINDS) {
      if (o.signal?.aborted) {
        interrupted = true;
        break scopes;
      }
      let items: KubeObject[];
      try {
        items = await o.client.list(kind, namespace, selector);
      } catch (err) {
        decisions.push({
          action: 'error',
          code: 'list-failed',
          kind,
          namespace: namespace ?? '*',
          reason: `could not list (${(err as Error).message}); nothing of this kind judged here this sweep`,
        });
        continue;
      }
      for (const obj of items) {
        if (o.signal?.aborted) {
          interrupted = true;
          break scopes;
        }
        decisions.push(await judge(o, obj, kind, readOwner));
      }
    }
  }
  return { decisions, summary: summarise(o, decisions, interrupted) };
}

async function judge(o: SweepOptions, obj: KubeObject, kind: ReapKind, readOwner: (ref: OwnerRef) => Promise<OwnerLookup>): Promise<Decision> {
  const ctx: ReaperContext = { environment: o.environment, keys: o.keys, keyRing: o.keyRing, now: o.now() };
  const ref = ownerToRead(obj, kind, ctx);
  const v = verdict(obj, kind, ctx, ref ? await readOwner(ref) : undefined);
  const { namespace = '', name, uid, resourceVersion } = obj.metadata;
  const decision: Decision = { action: v.action, code: v.code, kind, namespace, name, uid, reason: v.reason };
  if (v.action !== 'reap') return decision;
  if (!o.apply) return { ...decision, outcome: 'would-delete' };
  try {
    // Both are set: the verdict skips objects without a uid.
    await o.client.delete(kind, namespace, name!, { uid: uid!, ...(resourceVersion ? { resourceVersion } : {}) });
    return { ...decision, outcome: 'deleted' };
  } catch (err) {
    const e = err as Error;
    if (err instanceof KubeError && err.reason === 'NotFound') return { ...decision, outcome: 'already-gone' };
    // A conflict means the object changed or was replaced since it was read: the verdict no
    // longer applies, and the next sweep judges what is there now.
    if (err instanceof KubeError && err.reason === 'Conflict') return { ...decision, outcome: 'conflict', error: e.message };
    return { ...decision, outcome: 'failed', error: e.message };
  }
}

/** Reads the owner pod: only the API server's NotFound is `absent`. */
export async function lookupOwner(client: KubeClient, ref: OwnerRef): Promise<OwnerLookup> {
  try {
    const pod = await client.getPod(ref.namespace, ref.name);
    const uid = pod.metadata.uid;
    return uid ? { state: 'present', uid } : { state: 'error', message: 'the owner pod came back without a uid' };
  } catch (err) {
    if (err instanceof KubeError && err.reason === 'NotFound') return { state: 'absent' };
    return { state: 'error', message: (err as Error).message };
  }
}

function summarise(o: SweepOptions, decisions: Decision[], interrupted: boolean): SweepSummary {
  const summary: SweepSummary = { environment: o.environment, dryRun: !o.apply, reaped: 0, kept: 0, skippedForeign: 0, conflicts: 0, errors: 0 };
  for (const d of decisions) {
    if (d.action === 'error' || d.outcome === 'failed') summary.errors++;
    else if (d.outcome === 'conflict') summary.conflicts++;
    else if (d.action === 'reap') summary.reaped++;
    else if (d.action === 'keep') summary.kept++;
    else summary.skippedForeign++;
  }
  if (interrupted) summary.interrupted = true;
  return summary;
}
