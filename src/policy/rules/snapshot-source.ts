// Guarded writes of a VolumeSnapshot (docs/security-model.md, "Every door"). A snapshot is not
// stamped: it belongs to the environment of the claim it copies, so who may change it (labels,
// finalizers, spec), write its status (which names the content a restore reads) or delete it
// is who may write that claim: its environment's principals and managers, the platform, system
// controllers (the snapshot controller) and break-glass. Deleting one and taking its name would
// hand an environment's pending restore another environment's data.
//
// Only a source claim made no later than the snapshot is the one it copied (read fresh, with
// its creation time, as for a restore). When the claim is gone, or was made again under its
// name since, nothing tells whose the data is: in a namespace bound to an environment it is
// that environment's; elsewhere only the platform, system controllers and break-glass may
// change or delete it (guard.snapshot-source), since a missing row is never permission to
// delete. An environment deletes its snapshots before the claim they copy.
import type { AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { madeBefore, snapshotClaims } from '../pod/claim-environment.js';
import type { Ownership } from '../ownership.js';
import { referencedOwnership } from '../pod/reference-owner.js';
import type { DecisionContext } from '../policy.js';
import type { LookupKey } from '../reads.js';
import type { Requester } from '../requester/identity.js';
import { isPlatform, isTrusted } from '../requester/principals.js';
import { RULES } from './catalog.js';
import { guardedWrite } from './guarded-writes.js';
import { writeVerb, writtenName } from './written-object.js';

/** The source claim of a stored snapshot, read fresh: its creation time tells whether it is the claim the snapshot copied. */
export function snapshotSourceKeys(old: KubeObject | null | undefined, namespace: string): LookupKey[] {
  const source = old ? snapshotClaims(old)[0] : undefined;
  return source === undefined || !('claim' in source) ? [] : [{ resource: 'persistentvolumeclaims', namespace, name: source.claim, fresh: true }];
}

/** Whose a stored snapshot is: its source claim's ownership, a bound namespace's, or why it cannot be told. */
type SnapshotOwner = { kind: 'owner'; owner: Ownership } | { kind: 'unread'; reason: string } | { kind: 'untold'; reason: string };

function snapshotOwner(old: KubeObject, namespace: string, ctx: DecisionContext): SnapshotOwner {
  const bound = ctx.policy.envByBoundNamespace.get(namespace);
  const fallback = (reason: string): SnapshotOwner => (bound !== undefined ? { kind: 'owner', owner: { kind: 'bound', environment: bound } } : { kind: 'untold', reason });
  const source = snapshotClaims(old)[0];
  // Bound to pre-provisioned content (no source claim): an administrator's, no environment's claim.
  if (source === undefined || !('claim' in source)) return { kind: 'owner', owner: bound !== undefined ? { kind: 'bound', environment: bound } : { kind: 'unowned' } };
  const claim = source.claim;
  const found = ctx.lookup.get('persistentvolumeclaims', namespace, claim);
  if (found.state === 'unknown') return { kind: 'unread', reason: `cannot read its source claim ${claim}: ${found.reason}` };
  if (found.state === 'absent') return fallback(`it was taken of claim ${claim}, which no longer exists`);
  const created = typeof old.metadata.creationTimestamp === 'string' ? old.metadata.creationTimestamp : undefined;
  if (!madeBefore(found.created, created)) return fallback(`claim ${claim} was made after it (deleted and made again since), or when either was made is not known`);
  // A claim made for a pod (an ephemeral volume's) is that pod's: read after the claim.
  const owner = referencedOwnership(found, 'PersistentVolumeClaim', namespace, ctx);
  if (owner.kind === 'unknown') return { kind: 'unread', reason: `cannot tell whose its source claim ${claim} is: ${owner.reason}` };
  // A claim whose stamps do not verify tells no environment either.
  if (owner.kind === 'unverifiable') return fallback(`the stamps of its source claim ${claim} do not verify (${owner.reason})`);
  return { kind: 'owner', owner };
}

/**
 * An UPDATE (the snapshot or its status) or DELETE (a `deletecollection` is one per item) of a
 * stored snapshot: only by who may write its source claim's environment's objects.
 */
export function snapshotWrite(req: AdmissionRequest, namespace: string, requester: Requester, ctx: DecisionContext): Finding[] {
  const old = req.oldObject;
  const verb = writeVerb(req);
  if (!old || verb === undefined || req.operation === 'CREATE') return [];
  // The platform cleans up what no environment can be shown to own.
  if (isTrusted(requester, ctx.policy) || isPlatform(requester, ctx.policy)) return [];
  const what = `snapshot ${namespace}/${writtenName(req) ?? ''}${req.subResource !== undefined ? ` (${req.subResource})` : ''}`;
  const owner = snapshotOwner(old, namespace, ctx);
  switch (owner.kind) {
    case 'owner':
      return guardedWrite(requester, owner.owner, ctx.policy);
    case 'unread':
      return [{ rule: RULES.guardOwnerUnknown.id, message: `cannot tell whose ${what} is (${owner.reason}); refusing to ${verb} it` }];
    case 'untold':
      return [
        {
          rule: RULES.guardSnapshotSource.id,
          message: `${requester.username} may not ${verb} ${what}: ${owner.reason}, so whose data it holds cannot be told; only the platform, system controllers and break-glass may ${verb} it. Ask the platform, and delete a claim's snapshots before the claim`,
        },
      ];
  }
}
