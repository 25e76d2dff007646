// How Deed knows a claim is an environment's workspace, in any pod: the claim says so from
// its creation. A client label `<prefix>/workspace: "true"` on a PersistentVolumeClaim is
// accepted at CREATE in that form only and frozen after (frozen-stamps.ts), and it counts
// only on a claim that is an environment's (stamps that verify, or unstamped in a bound
// namespace): so the mark is as trustworthy as the claim's ownership. A pod that mounts an
// environment's claim as its workspace volume must find it marked, so that no workspace
// goes unmarked and a second pod cannot mount it under another name, free of the rules.
import { entryOf } from '../unstructured.js';
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';

import { ownershipOfFound } from '../ownership.js';
import type { DecisionContext } from '../policy.js';
import { RULES } from '../rules/catalog.js';
import { labelPath } from '../stamps/identity-stamps.js';
import type { ClaimReference } from './claim-environment.js';
import { volumeSource } from './spec.js';
import { field, isRec, recs, text, type Rec } from '../unstructured.js';

export const WORKSPACE_MARK = 'true';

/** The mark on a new claim, if given, is "true". */
export function workspaceMark(obj: KubeObject, ctx: DecisionContext): Finding[] {
  const key = ctx.policy.keys.workspace;
  const value = entryOf(obj.metadata.labels ?? {}, key);
  if (value === undefined || value === WORKSPACE_MARK) return [];
  return [{ rule: RULES.workspaceClaimMarker.id, path: labelPath(key), message: `must be ${JSON.stringify(WORKSPACE_MARK)} (this claim is a workspace) or absent, got ${JSON.stringify(value.slice(0, 80))}` }];
}

type Marked = 'workspace' | 'not-workspace' | 'unmarked-environment-claim' | 'unknown';

function marked(claim: string, namespace: string, ctx: DecisionContext): Marked {
  const found = ctx.lookup.get('persistentvolumeclaims', namespace, claim);
  if (found.state === 'unknown') return 'unknown';
  if (found.state === 'absent') return 'not-workspace';
  const owner = ownershipOfFound(found, 'PersistentVolumeClaim', namespace, ctx.policy, ctx.keyRing);
  if (owner.kind !== 'stamped' && owner.kind !== 'bound') return 'not-workspace';
  return entryOf(found.metadata.labels ?? {}, ctx.policy.keys.workspace) === WORKSPACE_MARK ? 'workspace' : 'unmarked-environment-claim';
}

/**
 * The claims among `refs` that are an environment's workspace. `unknownIsWorkspace`: where
 * a claim could not be read and nothing else refuses for it (an ephemeral container added
 * later), it is held to the workspace rules: fail closed.
 */
export function workspaceClaims(refs: ClaimReference[], namespace: string, ctx: DecisionContext, unknownIsWorkspace: boolean): Set<string> {
  const out = new Set<string>();
  for (const ref of refs) {
    if (!('claim' in ref)) continue; // a snapshot is restored into a new claim, not mounted
    const m = marked(ref.claim, namespace, ctx);
    if (m === 'workspace' || (m === 'unknown' && unknownIsWorkspace)) out.add(ref.claim);
  }
  return out;
}

/** The claim a pod's workspace volume mounts, when it is an environment's, must be marked. */
export function unmarkedWorkspace(spec: Rec, at: string, namespace: string, ctx: DecisionContext): Finding[] {
  const ws = ctx.policy.config.template.volumes.workspace;
  const volume = recs(field(spec, 'volumes')).find((v) => text(v, 'name') === ws.name);
  const pvc = volume !== undefined && volumeSource(volume) === 'persistentVolumeClaim' ? field(volume, 'persistentVolumeClaim') : undefined;
  const claim = isRec(pvc) ? text(pvc, 'claimName') : undefined;
  if (claim === undefined || claim === '' || marked(claim, namespace, ctx) !== 'unmarked-environment-claim') return [];
  const key = ctx.policy.keys.workspace;
  return [
    {
      rule: RULES.workspaceClaimMarker.id,
      path: `${at}.volumes[name=${ws.name}].persistentVolumeClaim.claimName`,
      message: `claim ${claim} is mounted as the workspace but is not marked ${key}: "${WORKSPACE_MARK}"; mark it when creating it, so every pod that mounts it is held to the workspace rules`,
    },
  ];
}
