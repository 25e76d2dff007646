// Hostile and broken AdmissionReviews, generated and mutated from real fixtures, against
// decide() for every webhook, through fastify's inject, and over a real HTTPS socket.
// Seeded (DEED_FUZZ_SEED overrides; the seed is printed) and bounded in runs and time.
import { entryOf } from '../src/policy/unstructured.js';
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest } from 'node:https';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import type { DestinationStream } from 'pino';
import { decide, HANDLERS, type Decision, type Webhook } from '../src/admission/decide.js';
import { decodeReview, requestUid } from '../src/admission/decode.js';
import type { AdmissionReviewResponse, KubeObject } from '../src/admission/types.js';
import { parseConfig } from '../src/config/load.js';
import type { ConfigInput } from '../src/config/schema.js';
import { createLogger } from '../src/observability/logger.js';

import { verifyObject } from '../src/policy/stamps/key-ring.js';
import { isTrusted } from '../src/policy/requester/principals.js';
import { resolveRequester } from '../src/policy/requester/identity.js';
import { stampedAnnotationKeys, stampedLabelKeys } from '../src/policy/stamps/keys.js';
import { sandboxKind } from '../src/policy/kinds.js';
import { isWellFormedNonce } from '../src/policy/stamps/nonce.js';
import { isRec, recs } from '../src/policy/unstructured.js';
import { isPluginTokenVolume } from '../src/policy/pod/service-account-token.js';
import { buildApp } from '../src/server/app.js';
import { startServer, type RunningServer } from '../src/server/serve.js';
import { decodePatch, FIXTURES, fixture, FIXTURE_POLICY, testContext, TEST_RING, type Review } from './helpers.js';

const SEED = Number(process.env.DEED_FUZZ_SEED ?? 20261129);
const WEBHOOKS = Object.keys(HANDLERS) as Webhook[];

// The fixtures' policy plus two group-mapped environments, so a requester can act for none,
// one, or several (ambiguous) environments.
const POLICY: ConfigInput = {
  ...FIXTURE_POLICY,
  environments: [...FIXTURE_POLICY.environments!, { id: 'gamma', groups: ['fuzz:gamma'] }, { id: 'delta', groups: ['fuzz:delta'] }],
};
const ctx = () => testContext(POLICY);
const { keys } = ctx().policy;

const FIXTURE_NAMES = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
const RUNNER_UID = '144baa57-4863-4fb3-a622-a0c0ecb4a7ff';

// ---- generators ------------------------------------------------------------------------

const oddStrings = fc.constantFrom(
  '',
  '\uD800', // a lone surrogate
  '\uDFFF\uD800',
  'a\u0000b',
  '\u202Eevil\u202C',
  'ｄｅｅｄ.ｄｅｖ/environment',
  'deed.dev/environment',
  'Deed.dev/Environment',
  '__proto__',
  'constructor',
  'prototype',
  '~1/~0',
  '%2F',
  '💥'.repeat(100),
  'system:serviceaccount:sandbox-a:runner',
  'system:serviceaccount:sandbox-a',
  'system:serviceaccount::',
  RUNNER_UID,
  'CREATE',
  'alpha',
);
const hugeString = fc.integer({ min: 3, max: 5 }).map((n) => 'x'.repeat(10 ** n)); // up to 100 KB
const hostileString = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), oddStrings, hugeString);

// Deep nesting is spliced into the JSON text: V8's JSON.stringify and structuredClone
// recurse and overflow near 4,000 levels, while JSON.parse (what the server uses) does not.
class Deep {
  constructor(
    readonly depth: number,
    readonly array: boolean,
  ) {}
  toJSON(): string {
    return `\u0000deep:${this.depth}:${this.array ? 'a' : 'o'}\u0000`;
  }
}
const deep = fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean()).map(([d, a]) => new Deep(d, a));

/** The JSON text a client sends for `value`, deep nesting spliced in. */
function toText(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/"\\u0000deep:(\d+):([ao])\\u0000"/g, (_m, d: string, k: string) =>
    k === 'a' ? `${'['.repeat(Number(d))}"bottom"${']'.repeat(Number(d))}` : `${'{"n":'.repeat(Number(d))}"bottom"${'}'.repeat(Number(d))}`,
  );
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2)) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: deep },
);

const hostileKey = fc.oneof(
  hostileString,
  fc.constantFrom('__proto__', 'constructor', 'prototype', ...stampedLabelKeys(keys), ...stampedAnnotationKeys(keys), keys.maxDuration, 'uid', 'kind'),
);

/** One edit somewhere in the body: a path chosen by walking with `steps`, then replace, delete or insert. */
interface Edit {
  steps: number[];
  action: 'replace' | 'delete' | 'insert';
  key: string;
  value: unknown;
}
const edit: fc.Arbitrary<Edit> = fc.record({
  steps: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
  action: fc.constantFrom('replace', 'delete', 'insert'),
  key: hostileKey,
  value: hostileValue,
});

/** Fields Deed reads, each given a value of the wrong type or shape: the edits a random walk rarely reaches. */
const FIELDS = [
  ['kind'],
  ['apiVersion'],
  ['request', 'uid'],
  ['request', 'kind'],
  ['request', 'kind', 'kind'],
  ['request', 'resource', 'resource'],
  ['request', 'operation'],
  ['request', 'namespace'],
  ['request', 'subResource'],
  ['request', 'dryRun'],
  ['request', 'userInfo', 'username'],
  ['request', 'userInfo', 'groups'],
  ['request', 'userInfo', 'extra'],
  ['request', 'object', 'kind'],
  ['request', 'object', 'metadata'],
  ['request', 'object', 'metadata', 'name'],
  ['request', 'object', 'metadata', 'labels'],
  ['request', 'object', 'metadata', 'annotations'],
  ['request', 'object', 'metadata', 'ownerReferences'],
  ['request', 'object', 'spec'],
  ['request', 'object', 'spec', 'activeDeadlineSeconds'],
  ['request', 'object', 'spec', 'containers'],
  ['request', 'object', 'spec', 'volumes'],
  ['request', 'oldObject'],
  ['request', 'oldObject', 'kind'],
  ['request', 'oldObject', 'metadata', 'labels'],
];
const fieldEdit = fc.record({ path: fc.constantFrom(...FIELDS), value: fc.oneof({ weight: 3, arbitrary: hostileValue }, { weight: 2, arbitrary: deep }) });

function applyFieldEdit(root: Record<string, unknown>, { path, value }: { path: string[]; value: unknown }): void {
  let node: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return;
    node = (node as Record<string, unknown>)[key];
  }
  if (typeof node === 'object' && node !== null) (node as Record<string, unknown>)[path[path.length - 1]!] = value;
}

function applyEdit(root: Record<string, unknown>, e: Edit): void {
  let parent: Record<string, unknown> | unknown[] = root;
  let key: string | number | undefined;
  for (const step of e.steps) {
    const node: unknown = key === undefined ? parent : (parent as Record<string, unknown>)[key as string];
    if (typeof node !== 'object' || node === null) break;
    const children = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    if (children.length === 0) break;
    if (key !== undefined) parent = node as Record<string, unknown>;
    key = children[step % children.length];
  }
  if (key === undefined) return;
  const target = (parent as Record<string, unknown>)[key as string];
  if (e.action === 'replace') (parent as Record<string, unknown>)[key as string] = e.value;
  else if (e.action === 'delete') {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key as string];
  } else if (typeof target === 'object' && target !== null && !Array.isArray(target)) {
    // defineProperty, so `__proto__` becomes an own key, as JSON.parse makes it on the wire.
    Object.defineProperty(target, e.key, { value: e.value, enumerable: true, writable: true, configurable: true });
  } else (parent as Record<string, unknown>)[key as string] = { [e.key]: e.value };
}

const USERS = [
  // mapped: alpha through the exact service account, with a pod-bound token
  { username: 'system:serviceaccount:sandbox-a:runner', groups: ['system:serviceaccounts'], extra: { 'authentication.kubernetes.io/pod-name': ['runner-0'], 'authentication.kubernetes.io/pod-uid': [RUNNER_UID] } },
  { username: 'system:serviceaccount:sandbox-a:runner', groups: [], extra: {} },
  // mapped: beta through the namespace wildcard, runner in another namespace than sandbox-a objects
  { username: 'system:serviceaccount:sandbox-b:runner', groups: [], extra: { 'authentication.kubernetes.io/pod-name': ['runner-0'], 'authentication.kubernetes.io/pod-uid': ['d33085f3-2ede-4348-92f9-44817b50c45d'] } },
  { username: 'jane', groups: ['fuzz:gamma'], extra: {} },
  // ambiguous
  { username: 'system:serviceaccount:sandbox-a:runner', groups: ['fuzz:delta'], extra: {} },
  { username: 'joe', groups: ['fuzz:gamma', 'fuzz:delta'], extra: {} },
  // none
  { username: 'kube-lab-admin', groups: ['system:masters'], extra: {} },
  { username: 'system:serviceaccount:other:runner', groups: [], extra: { 'authentication.kubernetes.io/pod-name': ['runner-0'], 'authentication.kubernetes.io/pod-uid': [RUNNER_UID] } },
  // malformed pod-bound extras on a mapped service account
  { username: 'system:serviceaccount:sandbox-a:runner', groups: [], extra: { 'authentication.kubernetes.io/pod-name': ['runner-0', 'runner-1'], 'authentication.kubernetes.io/pod-uid': [RUNNER_UID] } },
  { username: 'system:serviceaccount:sandbox-a:runner', groups: [], extra: { 'authentication.kubernetes.io/pod-name': ['Runner_0'], 'authentication.kubernetes.io/pod-uid': ['not-a-uid'] } },
];

const ownedValue = fc.oneof(fc.constantFrom('alpha', 'beta', 'gamma', 'deed', 'true', RUNNER_UID, 'sandbox-a/runner-0', 'a'.repeat(64), 'v1:AAAA', 'helm'), hostileString);

/** A real fixture with a chosen requester, operation, client-set stamps, and a few edits anywhere. */
const mutatedFixture: fc.Arbitrary<string> = fc
  .record({
    name: fc.constantFrom(...FIXTURE_NAMES),
    user: fc.option(fc.constantFrom(...USERS), { nil: undefined }),
    operation: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT') }),
    // Half the cases keep the body intact apart from the requester, so the policy is reached.
    labels: fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom(...stampedLabelKeys(keys), keys.terminal, 'run-id'), ownedValue, { maxKeys: 3 })),
    annotations: fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom(...stampedAnnotationKeys(keys), keys.maxDuration, keys.workspaceGrants), ownedValue, { maxKeys: 3 })),
    // Owned keys changed on the new object only: what frozen stamps must refuse on UPDATE.
    drift: fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom(...stampedLabelKeys(keys), ...stampedAnnotationKeys(keys)), fc.option(ownedValue), { minKeys: 1, maxKeys: 2 })),
    edits: fc.oneof(fc.constant([]), fc.array(edit, { minLength: 1, maxLength: 3 })),
    fields: fc.oneof(fc.constant([]), fc.array(fieldEdit, { minLength: 1, maxLength: 2 })),
  })
  .map(({ name, user, operation, labels, annotations, drift, edits, fields }) => {
    const body = fixture(name);
    const r = body.request;
    if (user !== undefined) r.userInfo = structuredClone(user);
    if (operation !== undefined) r.operation = operation;
    for (const obj of [r.object, r.oldObject]) {
      if (obj?.metadata === undefined || obj.metadata === null) continue;
      obj.metadata.labels = { ...obj.metadata.labels, ...labels };
      obj.metadata.annotations = { ...obj.metadata.annotations, ...annotations };
    }
    const obj = r.object as KubeObject | null;
    if (obj?.metadata) {
      for (const [key, value] of Object.entries(drift)) {
        const map = (stampedLabelKeys(keys).includes(key) ? (obj.metadata.labels ??= {}) : (obj.metadata.annotations ??= {})) as Record<string, string>;
        if (value === null) delete map[key];
        else map[key] = value;
      }
    }
    for (const e of edits) applyEdit(body as unknown as Record<string, unknown>, e);
    for (const f of fields) applyFieldEdit(body as unknown as Record<string, unknown>, f);
    return toText(body);
  });

const CREATE_FIXTURES = FIXTURE_NAMES.filter((f) => f.startsWith('mutate-create-'));

/**
 * What the validating webhook sees behind Deed's mutating one: a CREATE fixture stamped by
 * decide('mutate') for a chosen requester, then perhaps edited (a later mutator, an attacker).
 */
const stampedCreate: fc.Arbitrary<string> = fc
  .record({ name: fc.constantFrom(...CREATE_FIXTURES), user: fc.constantFrom(...USERS), edits: fc.oneof(fc.constant([]), fc.array(edit, { minLength: 1, maxLength: 2 })) })
  .map(({ name, user, edits }) => {
    const body = fixture(name);
    body.request.userInfo = structuredClone(user);
    const stamped = decide('mutate', body, ctx());
    if (stamped.kind === 'review' && stamped.response.response.patch)
      body.request.object = jsonpatch.applyPatch(body.request.object, decodePatch(stamped.response), false, false).newDocument;
    for (const e of edits) applyEdit(body as unknown as Record<string, unknown>, e);
    return toText(body);
  });

/** An AdmissionReview-shaped body whose every field may be missing or of the wrong type. */
const shapedReview = fc
  .record(
    {
      apiVersion: fc.oneof(fc.constant('admission.k8s.io/v1'), hostileValue),
      kind: fc.oneof(fc.constant('AdmissionReview'), hostileValue),
      request: fc.record(
        {
          uid: fc.oneof(fc.uuid(), hostileValue),
          kind: fc.oneof(fc.record({ group: fc.constantFrom('', 'networking.k8s.io'), version: fc.constant('v1'), kind: fc.constantFrom('Pod', 'Secret', 'NetworkPolicy', 'PersistentVolumeClaim') }), hostileValue),
          resource: fc.oneof(fc.record({ group: fc.constantFrom('', 'networking.k8s.io'), version: fc.constant('v1'), resource: fc.constantFrom('pods', 'secrets', 'networkpolicies', 'persistentvolumeclaims') }), hostileValue),
          operation: fc.oneof(fc.constantFrom('CREATE', 'UPDATE', 'DELETE'), hostileValue),
          namespace: fc.oneof(fc.constant('sandbox-a'), hostileValue),
          userInfo: fc.oneof(fc.constantFrom(...USERS), hostileValue),
          object: fc.oneof(fc.record({ metadata: fc.record({ labels: fc.oneof(fc.dictionary(hostileKey, hostileString, { maxKeys: 4 }), hostileValue), annotations: hostileValue }, { requiredKeys: [] }), spec: hostileValue }, { requiredKeys: [] }), hostileValue),
          oldObject: hostileValue,
          dryRun: fc.oneof(fc.boolean(), hostileValue),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  )
  .map(toText);

/** JSON text of a review: mostly mutated fixtures, some shaped from scratch, some any JSON at all. */
const anyBody = fc.oneof(
  { weight: 5, arbitrary: mutatedFixture },
  { weight: 2, arbitrary: stampedCreate },
  { weight: 2, arbitrary: shapedReview },
  { weight: 1, arbitrary: fc.jsonValue().map(toText) },
);

// ---- invariants ------------------------------------------------------------------------

const stats = new Map<string, number>();
const count = (what: string): void => void stats.set(what, (stats.get(what) ?? 0) + 1);

/** Properties every answer to every webhook has, whatever the body. */
function checkAnswer(webhook: Webhook, body: unknown, decision: Decision): void {
  const uid = requestUid(body);
  if (uid === undefined) {
    assert.equal(decision.kind, 'bad-request', 'a body without a usable uid is a bad request');
    if (decision.kind === 'bad-request') assert.ok(decision.message.length > 0);
    count(`${webhook}: bad request`);
    return;
  }
  assert.equal(decision.kind, 'review', 'a body with a uid gets an AdmissionReview');
  if (decision.kind !== 'review') return;
  assert.equal(decision.error, undefined, `no handler exception: ${String(decision.error)}`);
  const { response } = decision;
  assert.equal(response.apiVersion, 'admission.k8s.io/v1');
  assert.equal(response.kind, 'AdmissionReview');
  assert.equal(response.response.uid, uid, 'the uid is echoed');
  JSON.stringify(response); // serialisable
  if (response.response.allowed) {
    assert.equal(response.response.status, undefined);
    count(`${webhook}: allowed${response.response.patch ? ' with a patch' : ''}`);
  } else {
    assert.ok([400, 403, 500, 504].includes(response.response.status?.code ?? 0), `denial code ${response.response.status?.code}`);
    assert.ok((response.response.status?.message ?? '').length > 0, 'a denial says why');
    assert.equal(response.response.patch, undefined, 'a denial carries no patch');
    count(`${webhook}: denied ${decision.verdict.findings.map((f) => f.rule).join(',')}`);
  }
}

/** Mutate-side policy: who gets stamped with what, and who is refused. */
function checkMutatePolicy(text: string, body: unknown, decision: Decision): void {
  if (decision.kind !== 'review') return;
  const decoded = decodeReview(body);
  if (!decoded.ok) {
    assert.equal(decision.response.response.allowed, false, 'an undecodable review is never allowed');
    return;
  }
  const req = decoded.request;
  const answer = decision.response.response;
  const kind = sandboxKind(req.resource);
  const ops = decodePatch(decision.response);
  const stampable = req.operation === 'CREATE' && req.subResource === undefined && kind !== undefined;
  if (!stampable) {
    assert.equal(answer.patch, undefined, 'only a CREATE of a sandbox kind is ever patched');
    return;
  }
  const requester = resolveRequester(req.userInfo, ctx().policy);
  const obj = req.object!;
  if (requester.environment.kind === 'ambiguous') {
    assert.equal(answer.allowed, false, 'a requester acting for several environments is refused');
    return count('mutate: ambiguous requester refused');
  }
  if (requester.environment.kind === 'none') {
    if (presentOwned(obj)) {
      assert.equal(answer.allowed, false, 'a requester acting for no environment never passes an admission-owned key');
      count('mutate: unmapped requester with an owned key refused');
    }
    // Never stamped: the one thing written is the mark of pods of no environment, on the pod or in a selector and the templates it matches,
    // a runner's mark on a pod whose service account is mapped, and the exclusion of runners from a selector.
    const ops = answer.patch === undefined ? [] : (JSON.parse(Buffer.from(answer.patch, 'base64').toString('utf8')) as Array<{ path: string; value: unknown }>);
    const marks = (op: { path: string; value: unknown }) =>
      op.path.endsWith('/deed.dev~1no-environment') ||
      JSON.stringify(op.value).includes('"deed.dev/no-environment":"true"') ||
      (op.path === '/metadata/labels/deed.dev~1runner' && typeof op.value === 'string') ||
      (op.path === '/metadata/labels' && JSON.stringify(Object.keys(op.value as object)) === '["deed.dev/runner"]') ||
      /^\/spec\/(podSelector|selector)\/matchExpressions(\/-)?$/.test(op.path) && JSON.stringify(op.value).includes('{"key":"deed.dev/runner","operator":"DoesNotExist"}');
    for (const op of ops) assert.ok(marks(op), `a requester acting for no environment is never stamped: ${op.path}`);
    if (ops.length > 0) count('mutate: unmapped requester marked, not stamped');
    return;
  }
  if (!answer.allowed) return;
  // Allowed for a mapped requester. The patch only adds stamps (a client value that
  // differs is a conflict, not a default) and may lower activeDeadlineSeconds.
  // Besides, on a pod that leaves automountServiceAccountToken unset, it sets it to false
  // and removes (after a test of the name) only the ServiceAccount plugin's token volumes
  // and the mounts of them.
  const spec = obj.spec as Record<string, unknown> | undefined;
  const tokenVolumes = new Set<string>();
  for (const op of ops) {
    const stampField = /^\/metadata\/(labels|annotations|ownerReferences)(\/|$)/.test(op.path);
    const deadlineField = op.path === '/spec/activeDeadlineSeconds' || (op.path === '/spec' && obj.spec === undefined);
    // An environment's NetworkPolicy is scoped to its pods: one label added to its pod selector.
    const scopeField = obj.kind === 'NetworkPolicy' && op.op === 'add' && /^\/spec\/podSelector(\/matchLabels(\/deed\.dev~1environment)?)?$/.test(op.path);
    const automountField = op.path === '/spec/automountServiceAccountToken' && op.op === 'add' && op.value === false && spec !== undefined && !Object.hasOwn(spec, 'automountServiceAccountToken');
    const volume = /^\/spec\/volumes\/(\d+)(\/name)?$/.exec(op.path);
    const mount = /^\/spec\/(initContainers|containers|ephemeralContainers)\/(\d+)\/volumeMounts\/(\d+)(\/name)?$/.exec(op.path);
    if (volume && op.op === 'test') {
      const target = (spec!.volumes as Record<string, unknown>[])[Number(volume[1])]!;
      assert.ok(isPluginTokenVolume(target), `only the plugin's token volume is removed, not ${JSON.stringify(target).slice(0, 200)}`);
      tokenVolumes.add(target.name as string);
      continue;
    }
    if (mount && op.op === 'test') continue; // checked below: it names a removed token volume
    if ((volume || mount) && op.op === 'remove') {
      const previous = ops[ops.indexOf(op) - 1];
      assert.ok(previous?.op === 'test' && previous.path === `${op.path}/name`, `a removal follows a test of the name: ${op.path}`);
      continue;
    }
    assert.ok(
      (stampField && op.op === 'add') || (deadlineField && (op.op === 'add' || op.op === 'replace')) || automountField || scopeField,
      `the patch touches only stamps, the deadline, the token and a NetworkPolicy's scope: ${op.op} ${op.path}`,
    );
  }
  for (const op of ops)
    if (op.op === 'test' && /volumeMounts\/\d+\/name$/.test(op.path)) assert.ok(tokenVolumes.has(op.value as string), `a removed mount names a removed token volume: ${op.path}`);
  // Patch a second copy of the body in place (deep bodies cannot be cloned), then check every stamp.
  const second = JSON.parse(text) as Review;
  const out = jsonpatch.applyPatch(second.request.object as KubeObject, ops, true, true, true).newDocument;
  const labels = out.metadata.labels ?? {};
  const annotations = out.metadata.annotations ?? {};
  const env = requester.environment.id;
  assert.equal(entryOf(labels, keys.managed), 'true');
  assert.equal(entryOf(labels, keys.environment), env, 'the environment is the requester’s');
  assert.ok(isWellFormedNonce(entryOf(annotations, keys.createNonce) ?? ''), 'a well-formed nonce');
  assert.ok(verifyObject(TEST_RING, out, keys, kind.kind, req.namespace!).ok, 'the attestation verifies over the stamps');
  const runner = requester.runner;
  assert.equal(entryOf(labels, keys.ownerUid), runner?.uid);
  assert.equal(entryOf(annotations, keys.owner), runner ? `${runner.namespace}/${runner.name}` : undefined);
  if (runner && kind.ownerReference && runner.namespace === req.namespace)
    assert.equal((out.metadata.ownerReferences ?? []).filter((r) => r.uid === runner.uid).length, 1, 'the runner is the owner');
  else assert.ok(!ops.some((op) => op.path.startsWith('/metadata/ownerReferences')), 'no owner reference across namespaces, on a PVC, or without a runner');
  // Reinvocation: the stamped object passes again unchanged.
  const again = decide('mutate', second, ctx());
  assert.ok(again.kind === 'review' && again.response.response.allowed && again.response.response.patch === undefined, 'a second pass gives no patch');
  if (kind.kind === 'Pod' && isRec(spec) && !Object.hasOwn(spec, 'automountServiceAccountToken') && isRec(out.spec)) {
    assert.equal(out.spec.automountServiceAccountToken, false, 'automount is set off');
    assert.ok(!recs(out.spec.volumes).some(isPluginTokenVolume), 'no token volume of the plugin is left');
    if (tokenVolumes.size > 0) count('mutate: token volume removed');
  }
  count('mutate: mapped requester stamped and verified');
}

const REVIEWED_SUBRESOURCES = new Set([undefined, 'ephemeralcontainers']);

/** Validate-side policy: forged and missing stamps at CREATE, frozen stamps, guarded writes. */
function checkValidatePolicy(body: unknown, decision: Decision): void {
  if (decision.kind !== 'review') return;
  const decoded = decodeReview(body);
  if (!decoded.ok) return assert.equal(decision.response.response.allowed, false, 'an undecodable review is never allowed');
  const req = decoded.request;
  const kind = sandboxKind(req.resource);
  const { allowed } = decision.response.response;
  assert.equal(decision.response.response.patch, undefined, 'the validating webhook never patches');
  if (kind === undefined || !REVIEWED_SUBRESOURCES.has(req.subResource) || (req.subResource !== undefined && kind.kind !== 'Pod')) return;
  const requester = resolveRequester(req.userInfo, ctx().policy);
  const env = requester.environment;
  if (req.operation === 'CREATE') {
    const obj = req.object!;
    if (env.kind === 'ambiguous') assert.equal(allowed, false, 'a requester acting for several environments is refused');
    if (env.kind === 'none' && presentOwned(obj)) {
      assert.equal(allowed, false, 'a requester acting for no environment never carries an admission-owned key');
      count('validate: unmapped create with an owned key refused');
    }
    if (env.kind === 'one' && allowed) {
      // Allowed for a mapped requester: the final object carries its stamps, and they verify.
      assert.equal(entryOf(obj.metadata.labels ?? {}, keys.environment), env.id, 'stamped with the requester’s environment');
      assert.ok(verifyObject(TEST_RING, obj, keys, kind.kind, req.namespace!).ok, 'the attestation verifies');
      count('validate: mapped create allowed, stamps verified');
    }
    return;
  }
  if (req.operation !== 'UPDATE' && req.operation !== 'DELETE') return;
  const oldLabels = req.oldObject!.metadata.labels ?? {};
  const objectEnv = entryOf(oldLabels, keys.environment);
  const managed = entryOf(oldLabels, keys.managed) !== undefined || objectEnv !== undefined;
  if (managed && env.kind === 'one' && env.id !== objectEnv) {
    assert.equal(allowed, false, 'a principal of another environment never updates or deletes a managed object');
    count('validate: cross-environment write refused');
  }
  const trusted = isTrusted(requester, ctx().policy);
  if (managed && !trusted && !verifyObject(TEST_RING, req.oldObject!, keys, kind.kind, req.namespace!).ok) {
    assert.equal(allowed, false, 'an object whose stamps do not verify is changed or deleted by system controllers and break-glass only');
    count('validate: write to an unverifiable object refused');
  }
  if (req.operation === 'UPDATE') {
    const before = req.oldObject!.metadata, after = req.object!.metadata;
    const stampChanged = (a: string | undefined, b: string | undefined) => a !== b;
    const changed =
      stampedLabelKeys(keys).some((k) => stampChanged(entryOf(before.labels ?? {}, k), entryOf(after.labels ?? {}, k))) ||
      stampedAnnotationKeys(keys).some((k) => stampChanged(entryOf(before.annotations ?? {}, k), entryOf(after.annotations ?? {}, k)));
    if (changed) {
      assert.equal(allowed, false, 'a stamp is never changed, removed or added on UPDATE');
      count('validate: changed stamp refused');
    }
  }
}

function presentOwned(obj: KubeObject): boolean {
  const labels = obj.metadata.labels ?? {};
  const annotations = obj.metadata.annotations ?? {};
  return (
    stampedLabelKeys(keys).some((k) => entryOf(labels, k) !== undefined) ||
    stampedAnnotationKeys(keys).some((k) => entryOf(annotations, k) !== undefined)
  );
}

function property(webhook: Webhook) {
  const context = ctx();
  return fc.property(anyBody, (text) => {
    const body: unknown = JSON.parse(text);
    const decision = decide(webhook, body, context);
    checkAnswer(webhook, body, decision);
    if (webhook === 'mutate') checkMutatePolicy(text, body, decision);
    if (webhook === 'validate') checkValidatePolicy(body, decision);
  });
}

function run<T extends unknown[]>(name: string, prop: fc.IProperty<T> | fc.IAsyncProperty<T>, numRuns: number, timeMs: number, seed: number) {
  return async (t: { diagnostic(msg: string): void }) => {
    const details = await fc.check(prop, { seed, numRuns, plugins: [fc.interruptAfterTimeLimit(timeMs)] });
    t.diagnostic(`${name}: seed ${seed}, ${details.numRuns} runs${details.interrupted ? ' (time limit reached)' : ''}`);
    if (details.failed) {
      // The counterexample can be megabytes (deep nesting, huge strings): show its start.
      const example = JSON.stringify(details.counterexample) ?? '';
      throw new Error(
        `${name} failed: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n` +
          `replay with DEED_FUZZ_SEED=${SEED} (run seed ${details.seed}, path ${details.counterexamplePath})\n` +
          `counterexample (${example.length} chars): ${example.slice(0, 1500)}${example.length > 1500 ? '…' : ''}`,
      );
    }
    assert.ok(details.numRuns >= Math.min(numRuns, 100), `at least 100 runs within ${timeMs} ms`);
  };
}

// ---- the tests ---------------------------------------------------------------------------

describe(`fuzzing with seed ${SEED}`, () => {
  for (const webhook of WEBHOOKS)
    test(`decide('${webhook}') answers thousands of hostile reviews and never allows what policy forbids`, run(`decide ${webhook}`, property(webhook), 2500, 60_000, SEED));

  test('the generators reached the policy, not just the decoder', (t) => {
    for (const [what, n] of [...stats].sort()) t.diagnostic(`${String(n).padStart(5)}  ${what}`);
    const expected = [
      'mutate: mapped requester stamped and verified',
      'mutate: unmapped requester with an owned key refused',
      'mutate: ambiguous requester refused',
      'mutate: bad request',
      'validate: mapped create allowed, stamps verified',
      'validate: unmapped create with an owned key refused',
      'validate: cross-environment write refused',
      'validate: write to an unverifiable object refused',
      'validate: changed stamp refused',
    ];
    for (const what of expected)
      assert.ok((stats.get(what) ?? 0) >= 10, `${what}: ${stats.get(what) ?? 0} cases`);
    // Rarer: only a few fixtures carry the ServiceAccount plugin's volume, and most mutations spoil them.
    assert.ok((stats.get('mutate: token volume removed') ?? 0) >= 1, 'mutate: token volume removed: no case');
  });

  test('the HTTP transport (inject) answers every body with a review, or a 400, 413 or 415 with a message', async (t) => {
    const logger = createLogger({ write: () => {} } as unknown as DestinationStream);
    const { app } = buildApp({ ctx: ctx(), logger, bodyLimit: 256 * 1024 });
    const rawBody = fc.oneof(
      { weight: 6, arbitrary: anyBody },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
      { weight: 1, arbitrary: mutatedFixture.map((b) => b.slice(0, -7)) }, // truncated
      { weight: 1, arbitrary: fc.constant('x'.repeat(300 * 1024)) }, // over this app's body limit
    );
    const prop = fc.asyncProperty(rawBody, fc.constantFrom(...WEBHOOKS), fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded'), fc.constantFrom('', '?timeout=5s', '?timeout=banana'), async (payload, webhook, contentType, query) => {
      const res = await app.inject({ method: 'POST', url: `/${webhook}${query}`, payload, headers: { 'content-type': contentType } });
      checkHttp(payload, contentType, res.statusCode, res.body);
    });
    await run('inject', prop, 600, 5000, SEED + 1)(t);
    await app.close();
  });
});

/** 200 with the body's uid echoed, or a refusal with a message; never a 5xx. */
function checkHttp(payload: string, contentType: string, status: number, text: string): void {
  if (status === 200) {
    const review = JSON.parse(text) as AdmissionReviewResponse;
    assert.equal(review.kind, 'AdmissionReview');
    assert.equal(review.response.uid, requestUid(JSON.parse(payload)));
    return;
  }
  assert.ok([400, 413, 415].includes(status), `status ${status}: ${text.slice(0, 200)}`);
  assert.ok((JSON.parse(text) as { message: string }).message.length > 0, 'a refusal carries a message');
  if (status === 415) assert.ok(!contentType.startsWith('application/json'));
}

describe('fuzzing over a real HTTPS socket', () => {
  let server: RunningServer;
  let agent: Agent;
  before(async () => {
    server = await startServer({
      config: parseConfig(POLICY),
      logger: createLogger({ write: () => {} } as unknown as DestinationStream),
      host: '127.0.0.1',
      port: 0,
      certDir: mkdtempSync(join(tmpdir(), 'deed-fuzz-')),
      dns: [],
    });
    agent = new Agent({ keepAlive: true, maxSockets: 4, ca: readFileSync(server.caFile!) });
  });
  after(async () => {
    agent.destroy();
    await server.shutdown();
  });

  function send(path: string, payload: string): Promise<{ status: number; body: string }> {
    const url = new URL(server.url);
    return new Promise((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', servername: 'localhost', port: url.port, path, method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  test('a few hundred hostile bodies over keep-alive connections all get complete answers', async (t) => {
    const rawBody = fc.oneof({ weight: 8, arbitrary: anyBody }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) });
    const prop = fc.asyncProperty(fc.array(rawBody, { minLength: 4, maxLength: 4 }), fc.constantFrom(...WEBHOOKS), async (payloads, webhook) => {
      // Four at once, so requests overlap on the connections.
      const answers = await Promise.all(payloads.map((p) => send(`/${webhook}?timeout=10s`, p)));
      answers.forEach((a, i) => checkHttp(payloads[i]!, 'application/json', a.status, a.body));
    });
    await run('https', prop, 75, 6000, SEED + 2)(t);
    const health = await new Promise<number>((resolve, reject) => {
      const url = new URL(server.url);
      httpsRequest({ host: '127.0.0.1', servername: 'localhost', port: url.port, path: '/healthz', agent }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    assert.equal(health, 200, 'the server is still up');
  });
});
