// Sandbox objects as a runner would send them, and checks of what the API server stored.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../../src/admission/types.js';
import { kindRows } from '../../src/policy/kinds.js';
import { signV1 } from '../../src/policy/stamps/attestation.js';
import { singleKeyRing, verifyObject } from '../../src/policy/stamps/key-ring.js';
import { stampKeys } from '../../src/policy/stamps/keys.js';
import { readAttestationKey } from '../../src/server/attestation-key.js';
import type { Suite } from './suite.js';
import type { Identity } from './client.js';

export const KEYS = stampKeys('deed.dev');

/** A set-up write that made its object, or found it there already (409: a case run before). */
export function createdOrThere(what: string, a: { status: number; text: string }): void {
  assert.ok(a.status < 300 || a.status === 409, `${what}: ${a.status} ${a.text}`);
}

/**
 * Namespace `name` opted in to Deed (`deed.dev/sandbox: enabled`), with its default service
 * account (made here: the control plane runs no service-account controller unless asked).
 * Either may stand already.
 */
export async function optedInNamespace(s: Suite, name: string): Promise<void> {
  createdOrThere(`namespace ${name}`, await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'deed.dev/sandbox': 'enabled' } } }));
  createdOrThere(`default service account in ${name}`, await s.api(s.admin, 'POST', `/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'default' } }));
}

/**
 * Creates each `[what, collection path, body]` as `who`, each answered 201 and stamped for
 * `environment`; records each one's uid under its name in `uids`.
 */
export async function createStamped(s: Suite, who: Identity, environment: string, objects: Array<[string, string, { metadata: { name: string }; [field: string]: unknown }]>, uids: Record<string, string>): Promise<void> {
  for (const [what, path, body] of objects) {
    const answer = await s.api(who, 'POST', path, body);
    assert.equal(answer.status, 201, `${environment}'s ${what}: ${answer.text}`);
    assert.equal(label(answer.body as KubeObject, KEYS.environment), environment, `${environment}'s ${what} is stamped for ${environment}`);
    uids[body.metadata.name] = (answer.body as KubeObject).metadata.uid!;
  }
}

/** A 403 whose message names Deed's `rule` (and matches `pattern`, when given). */
export function refusedBy(a: { status: number; text: string; body: { message?: unknown } }, rule: string, pattern?: RegExp): void {
  assert.equal(a.status, 403, a.text);
  assert.ok(String(a.body.message).includes(`[${rule}]`), String(a.body.message));
  if (pattern) assert.match(String(a.body.message), pattern);
}

/** A pod the default template accepts: a main container, no token automount. */
/**
 * A stand-in CRD for a custom kind the suite needs served (the real ones carry full schemas,
 * and the suite installs nothing from the network): namespaced, one version with a status
 * subresource (and `scale` where given), any fields. A kind of a `*.k8s.io` group carries the
 * approval annotation the API server asks of it (`approval`).
 */
export function standInCrd(k: { group: string; version: string; plural: string; kind: string; approval?: string; scale?: Record<string, string> }) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${k.plural}.${k.group}`, ...(k.approval !== undefined ? { annotations: { 'api-approved.kubernetes.io': k.approval } } : {}) },
    spec: {
      group: k.group,
      scope: 'Namespaced',
      names: { plural: k.plural, singular: k.kind.toLowerCase(), kind: k.kind, listKind: `${k.kind}List` },
      versions: [{ name: k.version, served: true, storage: true, subresources: { status: {}, ...(k.scale !== undefined ? { scale: k.scale } : {}) }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

export function sandboxPod(name: string, patch: { annotations?: Record<string, string>; spec?: Record<string, unknown> } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...(name.endsWith('-') ? { generateName: name } : { name }), annotations: patch.annotations ?? {} },
    spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/agent:1' }], ...patch.spec },
  };
}

export function secret(name: string, annotations: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, annotations }, stringData: { token: 'not-a-real-credential' } };
}

/**
 * A leak of alpha's: Secret `name` in sandbox-b, created by a runner pod `runnerPod` of
 * sandbox-a that is then force-deleted. No owner reference reaches across namespaces, so
 * only the reaper cleans it up.
 */
export async function plantLeak(s: Suite, runnerPod: string, name: string): Promise<void> {
  await s.bindSandboxRole('sandbox-b', [['sandbox-a', 'runner']]);
  const leaker = await s.newRunner('sandbox-a', runnerPod);
  const leak = await s.api(leaker.identity, 'POST', PATHS.Secret('sandbox-b'), secret(name));
  if (leak.status !== 201) throw new Error(`the leak ${name}: ${leak.status} ${leak.text}`);
  const gone = await s.kubectl(s.admin, ['delete', 'pod', runnerPod, '-n', 'sandbox-a', '--grace-period=0', '--force']);
  if (gone.code !== 0) throw new Error(`deleting runner ${runnerPod}: ${gone.stderr}`);
}

export function networkPolicy(name: string) {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name }, spec: { podSelector: {}, policyTypes: ['Egress'] } };
}

export function claim(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  };
}

/** A claim marked at creation as an environment's workspace: every pod that mounts it is held to the workspace rules. */
export function workspaceClaim(name: string) {
  const c = claim(name);
  return { ...c, metadata: { ...c.metadata, labels: { [KEYS.workspace]: 'true' } } };
}

export const PATHS = {
  Pod: (ns: string) => `/api/v1/namespaces/${ns}/pods`,
  Secret: (ns: string) => `/api/v1/namespaces/${ns}/secrets`,
  NetworkPolicy: (ns: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`,
  PersistentVolumeClaim: (ns: string) => `/api/v1/namespaces/${ns}/persistentvolumeclaims`,
} as const;

export const LEASES = (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;

/**
 * A Secret carrying stamps signed with Deed's key, as an admin (or anyone, outside the review
 * scope) writes it with no webhook in the way: what Deed would have stamped for `owner`.
 */
type SignedOptions = { namespace: string; name: string; environment: string; owner: { namespace: string; name: string; uid: string }; expiresAt?: string; runLease?: string };

/** The metadata Deed stamps on an object of `kind`, signed with Deed's key: for objects written behind the webhooks. */
function signedMetadata(key: Buffer, kind: string, o: SignedOptions) {
  const nonce = randomBytes(32).toString('hex');
  const owner = `${o.owner.namespace}/${o.owner.name}`;
  const attestation = signV1(key, { kind, namespace: o.namespace, environment: o.environment, ownerUid: o.owner.uid, owner, nonce, expiresAt: o.expiresAt, runLease: o.runLease });
  return {
    name: o.name,
    namespace: o.namespace,
    labels: { 'app.kubernetes.io/managed-by': 'deed', [KEYS.managed]: 'true', [KEYS.environment]: o.environment, [KEYS.ownerUid]: o.owner.uid },
    annotations: { [KEYS.owner]: owner, [KEYS.createNonce]: nonce, [KEYS.attestation]: attestation, ...(o.expiresAt !== undefined ? { [KEYS.expiresAt]: o.expiresAt } : {}), ...(o.runLease !== undefined ? { [KEYS.runLease]: o.runLease } : {}) },
  };
}

export function signedSecret(key: Buffer, o: SignedOptions) {
  return { apiVersion: 'v1', kind: 'Secret', metadata: signedMetadata(key, 'Secret', o), stringData: { token: 'not-a-real-credential' } };
}

/** A sandbox pod as Deed stamps one, with `activeDeadlineSeconds`, signed with Deed's key. */
export function signedPod(key: Buffer, o: SignedOptions & { activeDeadlineSeconds: number }) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: signedMetadata(key, 'Pod', o), spec: { activeDeadlineSeconds: o.activeDeadlineSeconds, containers: [{ name: 'main', image: 'registry.example/agent:1' }] } };
}

/**
 * A coordination.k8s.io Lease carrying Deed's stamps for `environment`, signed with Deed's
 * key, renewed at `renewTime`: for bulk data written behind the webhooks (bench/reaper.ts);
 * through them, a client's stamps are refused and Deed stamps the Lease itself (runLease).
 */
export function signedLease(key: Buffer, o: { namespace: string; name: string; environment: string; renewTime: Date; durationSeconds?: number }) {
  const nonce = randomBytes(32).toString('hex');
  const attestation = signV1(key, { kind: 'Lease', namespace: o.namespace, environment: o.environment, nonce });
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'deed', [KEYS.managed]: 'true', [KEYS.environment]: o.environment },
      annotations: { [KEYS.createNonce]: nonce, [KEYS.attestation]: attestation },
    },
    spec: { holderIdentity: 'platform-control-plane', leaseDurationSeconds: o.durationSeconds ?? 20, renewTime: microTime(o.renewTime), acquireTime: microTime(o.renewTime) },
  };
}

/** A run Lease as the platform sends it, renewed at `renewTime`: Deed stamps it for whoever creates it. */
export function runLease(o: { name: string; renewTime: Date; durationSeconds?: number; holder?: string }) {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: o.name },
    spec: { holderIdentity: o.holder ?? 'platform-control-plane', leaseDurationSeconds: o.durationSeconds ?? 20, renewTime: microTime(o.renewTime), acquireTime: microTime(o.renewTime) },
  };
}

/** A MicroTime as the API server wants it: RFC 3339 with microseconds. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Does the stored object's attestation verify under the suite's key? */
export function attested(suite: Suite, obj: KubeObject): boolean {
  return verifyObject(singleKeyRing(readAttestationKey(suite.keyFile)), obj, KEYS, obj.kind!, obj.metadata.namespace!).ok;
}

export function label(obj: KubeObject, key: string): string | undefined {
  return obj.metadata.labels?.[key];
}

export function annotation(obj: KubeObject, key: string): string | undefined {
  return obj.metadata.annotations?.[key];
}

export { eventually } from '../helpers.js';

/** The collection path of a kind of the kind table in a namespace, as the API server serves it. */
export function collectionPath(kind: string, namespace: string): string {
  const row = kindRows().find((r) => r.kind === kind);
  if (row === undefined) throw new Error(`${kind} is not a row of the kind table`);
  return `${row.group === '' ? `/api/${row.version}` : `/apis/${row.group}/${row.version}`}/namespaces/${namespace}/${row.resource}`;
}

/**
 * Every verb on every resource of `namespace` for these service accounts (`[namespace, name]`),
 * bound as `binding`: the tenant role (Kubernetes' edit) grants no custom resources, so a case
 * that writes them gives its identities a namespace-admin Role instead.
 */
export async function namespaceAdmins(s: Suite, namespace: string, binding: string, accounts: ReadonlyArray<readonly [string, string]>): Promise<void> {
  createdOrThere(`namespace-admin role in ${namespace}`, await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, { metadata: { name: 'namespace-admin' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] }));
  createdOrThere(
    `namespace admins in ${namespace}`,
    await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
      metadata: { name: binding },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'namespace-admin' },
      subjects: accounts.map(([ns, name]) => ({ kind: 'ServiceAccount', namespace: ns, name })),
    }),
  );
}

/** `collectionPath` for each of these kinds, by kind. */
export function collectionPaths<K extends string>(kinds: readonly K[]): Record<K, (namespace: string) => string> {
  return Object.fromEntries(kinds.map((k) => [k, (namespace: string) => collectionPath(k, namespace)])) as Record<K, (namespace: string) => string>;
}
