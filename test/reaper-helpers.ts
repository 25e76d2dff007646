// Sandbox objects as the mutating webhook leaves them, signed with the real signStamps, for
// the reaper's tests.
import { createHash, randomUUID } from 'node:crypto';
import type { KubeObject } from '../src/admission/types.js';
import { signV1, type AttestedStamps } from '../src/policy/stamps/attestation.js';
import { TEST_RING } from './helpers.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import type { SandboxKind } from '../src/policy/kinds.js';
import type { ReaperContext } from '../src/reaper/verdict.js';
import { NOW, TEST_KEY } from './helpers.js';

export const KEYS = stampKeys('deed.dev');
export const ENV = 'alpha';

/** The namespaces the tests' webhooks review: the sandboxes, never "plain". */
export const IN_SCOPE = (namespace: string): boolean => namespace.startsWith('sandbox-');

/** The policy's default graces (config/schema.ts, `reaper`). */
export const GRACE = { deadline: 900, lease: 300 };

export function reaperContext(now = NOW): ReaperContext {
  return { environment: ENV, keys: KEYS, keyRing: TEST_RING, inReviewScope: IN_SCOPE, now, deadlineGraceSeconds: GRACE.deadline, leaseGraceSeconds: GRACE.lease, runLeases: true };
}

export function iso(offsetSeconds: number, from = NOW): string {
  return new Date(from + offsetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface Owner {
  namespace: string;
  name: string;
  uid: string;
}

export interface StampOptions {
  kind: SandboxKind['kind'];
  namespace?: string;
  name: string;
  uid?: string;
  environment?: string;
  /** The runner; null for an object created without a pod-bound token. */
  owner?: Owner | null;
  expiresAt?: string;
  terminal?: string;
  /** `<prefix>/run-lease`, attested. */
  runLease?: string;
  /** The key the attestation is signed with; Deed's test key by default. */
  signingKey?: Buffer;
  /** Signs the attestation instead (say in the v2 format); signingKey is then unused. */
  attest?: (stamps: AttestedStamps) => string;
}

export const RUNNER: Owner = { namespace: 'sandbox-a', name: 'runner-0', uid: '144baa57-4863-4fb3-a622-a0c0ecb4a7ff' };

/** An object carrying Deed's stamps, attested over exactly what it carries. */
export function stamped(o: StampOptions): KubeObject {
  const namespace = o.namespace ?? 'sandbox-a';
  const environment = o.environment ?? ENV;
  const owner = o.owner === undefined ? RUNNER : o.owner;
  const nonce = createHash('sha256').update(`nonce-${o.kind}-${namespace}-${o.name}`).digest('hex');
  const labels: Record<string, string> = {
    'deed.dev/run-id': 'run-42',
    // Objects stamped before 0.2.0 carry it; it is no stamp, and nothing reads it.
    'app.kubernetes.io/managed-by': 'deed',
    [KEYS.managed]: 'true',
    [KEYS.environment]: environment,
  };
  const annotations: Record<string, string> = { [KEYS.createNonce]: nonce };
  if (owner) {
    labels[KEYS.ownerUid] = owner.uid;
    annotations[KEYS.owner] = `${owner.namespace}/${owner.name}`;
  }
  if (o.expiresAt !== undefined) annotations[KEYS.expiresAt] = o.expiresAt;
  if (o.runLease !== undefined) annotations[KEYS.runLease] = o.runLease;
  const stamps: AttestedStamps = {
    kind: o.kind,
    namespace,
    environment,
    ownerUid: owner?.uid,
    owner: owner ? `${owner.namespace}/${owner.name}` : undefined,
    nonce,
    expiresAt: o.expiresAt,
    runLease: o.runLease,
  };
  annotations[KEYS.attestation] = o.attest ? o.attest(stamps) : signV1(o.signingKey ?? TEST_KEY, stamps);
  if (o.terminal !== undefined) annotations[KEYS.terminal] = o.terminal;
  return { metadata: { name: o.name, namespace, uid: o.uid ?? randomUUID(), resourceVersion: '1', labels, annotations } };
}

/** The runner pod itself, as a bare Pod (runners are not Deed-managed). */
export function runnerPod(owner: Owner = RUNNER): KubeObject {
  return { metadata: { name: owner.name, namespace: owner.namespace, uid: owner.uid, labels: { app: 'runner' } }, spec: { containers: [{ name: 'runner', image: 'runner:1' }] } };
}

/** A run Lease as Deed stamps it for an environment (no owner: the platform's control plane may hold it), renewed at `renewTime`. */
export function stampedLease(name: string, o: { namespace?: string; environment?: string; renewTime?: string; durationSeconds?: number; signingKey?: Buffer } = {}): KubeObject {
  const namespace = o.namespace ?? 'sandbox-a';
  const environment = o.environment ?? ENV;
  const nonce = createHash('sha256').update(`nonce-Lease-${namespace}-${name}`).digest('hex');
  const attestation = signV1(o.signingKey ?? TEST_KEY, { kind: 'Lease', namespace, environment, nonce });
  return {
    metadata: {
      name,
      namespace,
      uid: randomUUID(),
      labels: { [KEYS.managed]: 'true', [KEYS.environment]: environment },
      annotations: { [KEYS.createNonce]: nonce, [KEYS.attestation]: attestation },
    },
    spec: { holderIdentity: 'platform', leaseDurationSeconds: o.durationSeconds ?? 40, ...(o.renewTime !== undefined ? { renewTime: o.renewTime } : {}) },
  };
}
