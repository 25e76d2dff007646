// Shared test helpers: fixtures, a deterministic decision context, and Kubernetes' own
// JSON Patch implementation (kubectl patch --local) to apply what Deed returns.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config/load.js';
import type { ConfigInput } from '../src/config/schema.js';
import { signStamps, singleKeyRing, type KeyRing } from '../src/policy/stamps/key-ring.js';
import { compilePolicy, type DecisionContext, type ObjectLookup, type Readers } from '../src/policy/policy.js';
import { noLookup } from '../src/policy/lookup.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { EVERY_NAMESPACE } from '../src/policy/review-scope.js';
import type { AdmissionReviewResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { PatchOperation } from '../src/admission/verdict.js';

/** A lookup's answer where no live pod reads the name asked for (unit tests that do not judge reference.live-reader). */
export const NO_READERS = (): Readers => ({ state: 'known', readers: [] });

export const FIXTURES = join(import.meta.dirname, 'fixtures', 'admission');

/** The policy the fixtures README describes: sandbox-a:runner acts for alpha, sandbox-b:* for beta. */
export const FIXTURE_POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  // The captured admin (kube-lab-admin, system:masters) stands for a principal of no
  // environment: these tests name no break-glass (test/break-glass.test.ts tests the default).
  breakGlass: { groups: [] },
};

/** The fixture policy's stamp keys (its default prefix, deed.dev). */
export const FIXTURE_KEYS = stampKeys('deed.dev');

export const NOW = Date.parse('2026-11-29T15:24:34Z');
export const TEST_KEY = Buffer.from('deed-test-attestation-key-0123456789abcdef');
/** The pre-ring form (attestation.keyFile): TEST_KEY, id `key`, signing v1. */
export const TEST_RING = singleKeyRing(TEST_KEY);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Review = { apiVersion: string; kind: string; request: any };

/** A kube-system controller's service account, as the API server names it in a review. */
export function kubeSystem(name: string): UserInfo {
  return { username: `system:serviceaccount:kube-system:${name}`, groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} };
}

export function fixture(name: string): Review {
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Review;
}

/** The metadata of a claim Deed stamped for `environment` (signed by `ring`, so it verifies there). */
export function claimOf(environment: string, namespace = 'sandbox-a', nonce = 'a'.repeat(64), ring: KeyRing = TEST_RING): KubeObject {
  return stampedMetadata('PersistentVolumeClaim', environment, namespace, nonce, ring);
}

/** The metadata of an object of `kind` stamped for `environment` (no runner), as a lookup reads it. */
export function stampedMetadata(kind: string, environment: string, namespace: string, nonce = 'a'.repeat(64), ring: KeyRing = TEST_RING): KubeObject {
  return {
    metadata: {
      labels: { 'app.kubernetes.io/managed-by': 'deed', 'deed.dev/managed': 'true', 'deed.dev/environment': environment },
      annotations: { 'deed.dev/create-nonce': nonce, 'deed.dev/attestation': signStamps(ring, { kind, namespace, environment, nonce }) },
    },
  };
}

/**
 * A table-driven lookup of claims: `namespace/name` to the claim (its metadata), null for
 * one known to be absent, or a string: unknown, for that reason. Claims not listed are
 * absent; pods are unknown (no cluster in unit tests), as with no lookup at all.
 */
export function claimLookup(claims: Record<string, KubeObject | null | string>): ObjectLookup {
  const none = noLookup('no cluster in unit tests');
  return {
    readers: NO_READERS,
    get: (resource, namespace, name) => {
      if (resource !== 'persistentvolumeclaims') return none.get(resource, namespace, name);
      const value = Object.hasOwn(claims, `${namespace}/${name}`) ? claims[`${namespace}/${name}`] : null;
      if (typeof value === 'string') return { state: 'unknown', reason: value };
      if (value === null || value === undefined) return { state: 'absent' };
      const { uid, labels, annotations } = value.metadata;
      return { state: 'found', metadata: { ...(uid !== undefined ? { uid } : {}), ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
    },
  };
}

/** A claim Deed stamped for `environment` and marked at creation as a workspace (`deed.dev/workspace: "true"`). */
export function workspaceClaimOf(environment: string, namespace = 'sandbox-a', nonce = 'a'.repeat(64), ring: KeyRing = TEST_RING): KubeObject {
  const claim = claimOf(environment, namespace, nonce, ring);
  claim.metadata.labels = { ...claim.metadata.labels, 'deed.dev/workspace': 'true' };
  return claim;
}

/** The claims the fixtures mount: sbx-1's workspace, stamped alpha under the context's ring. */
export function fixtureClaims(ring: KeyRing = TEST_RING): Record<string, KubeObject | null | string> {
  return { 'sandbox-a/sbx-1-workspace': workspaceClaimOf('alpha', 'sandbox-a', 'a'.repeat(64), ring) };
}

/** A context with a fixed clock and a counter-driven RNG: every run gives the same bytes. */
export function testContext(config: ConfigInput = FIXTURE_POLICY, now = NOW, keyRing: KeyRing = TEST_RING, lookup: ObjectLookup = claimLookup(fixtureClaims(keyRing))): DecisionContext {
  let counter = 0;
  return {
    lookup,
    scope: EVERY_NAMESPACE,
    policy: compilePolicy(parseConfig(config)),
    keyRing,
    now: () => now,
    randomBytes: (size: number) => {
      const out = Buffer.alloc(size);
      for (let off = 0; off < size; off += 32) createHash('sha256').update(`rng-${counter++}`).digest().copy(out, off);
      return out;
    },
  };
}

export function decodePatch(response: AdmissionReviewResponse): PatchOperation[] {
  const patch = response.response.patch;
  return patch === undefined ? [] : (JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as PatchOperation[]);
}

const workdir = mkdtempSync(join(tmpdir(), 'deed-kubectl-'));
let fileCounter = 0;

/** Applies a JSON Patch with Kubernetes' own implementation. */
export function kubectlPatch(obj: KubeObject, ops: PatchOperation[]): KubeObject {
  if (ops.length === 0) return structuredClone(obj);
  const file = join(workdir, `obj-${fileCounter++}.json`);
  writeFileSync(file, JSON.stringify(obj));
  const out = execFileSync('kubectl', ['patch', '--local', '-f', file, '--type=json', '-p', JSON.stringify(ops), '-o', 'json'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out) as KubeObject;
}

/** A review of `obj` as `template` was, for a second pass or a variant. */
/** The AdmissionReview of a CREATE of `object` (of `resource` in its API group) by `user`, as the API server sends it. */
export function createReview(object: KubeObject, resource: string, user: UserInfo, uid: string): Review {
  const apiVersion = object.apiVersion ?? 'v1';
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
  const name = object.metadata.name;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group, version: 'v1', kind: object.kind },
      resource: { group, version: 'v1', resource },
      name,
      namespace: object.metadata.namespace,
      operation: 'CREATE',
      userInfo: user,
      object,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  } as Review;
}

export function withObject(template: Review, obj: KubeObject | null, patch: Partial<Review['request']> = {}): Review {
  return { ...template, request: { ...template.request, object: obj, ...patch } };
}

/** A value as CEL evaluates it (@bufbuild/cel): maps, not plain objects. */
export function toCel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object') return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  return value;
}

/** Polls until `check` holds, for what a server or a controller does in its own time. */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
