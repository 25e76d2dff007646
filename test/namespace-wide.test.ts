// What acts on a whole shared namespace is the platform's (rules/namespace-wide.ts): the
// writes of a ResourceQuota or a LimitRange (the kind table's `namespaceWide` rows) pass for
// the policy's platform, system controllers and break-glass, and for an environment only in
// a namespace bound to it. CREATE is judged whole at /admit, UPDATE, status and DELETE at
// the default row's /validate. In a real API server: test/e2e/cases/namespace-wide.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { defaultRowFor, isNamespaceWide, kindRows } from '../src/policy/kinds.js';
import { fixture, testContext, type Review } from './helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'], managers: { users: ['system:serviceaccount:platform:runner-controller'] } },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  platform: { users: ['system:serviceaccount:platform:deployer'], groups: [] },
  breakGlass: { users: ['oncall'], groups: [] },
};

const sa = (ns: string, name: string): UserInfo => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'], extra: {} });
const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;
const JANITOR_B = sa('sandbox-b', 'janitor');
const MANAGER_A = sa('platform', 'runner-controller');
const DEPLOYER = sa('platform', 'deployer');
const ONCALL: UserInfo = { username: 'oncall', groups: ['system:authenticated'], extra: {} };
// system:masters is the default platform group; this policy names another platform, so the captured admin is no one's.
const NOBODY = fixture('mutate-create-pod-by-admin.json').request.userInfo as UserInfo;
const GC = sa('kube-system', 'generic-garbage-collector');

const QUOTA = { group: '', version: 'v1', resource: 'resourcequotas', kind: 'ResourceQuota' };
const LIMITS = { group: '', version: 'v1', resource: 'limitranges', kind: 'LimitRange' };
type Resource = typeof QUOTA;

function object(r: Resource, namespace: string): KubeObject {
  const spec = r.kind === 'ResourceQuota' ? { hard: { pods: '0', secrets: '0' } } : { limits: [{ type: 'Container', max: { memory: '1Mi' } }] };
  return { apiVersion: 'v1', kind: r.kind, metadata: { name: 'freeze', namespace }, spec } as KubeObject;
}

function review(userInfo: UserInfo, r: Resource, namespace: string, more: Record<string, unknown>): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  body.request = {
    ...body.request,
    kind: { group: r.group, version: r.version, kind: r.kind },
    resource: { group: r.group, version: r.version, resource: r.resource },
    requestKind: undefined,
    requestResource: undefined,
    name: 'freeze',
    namespace,
    userInfo,
    subResource: undefined,
    ...more,
  };
  return body;
}

function answer(webhook: Webhook, body: Review, policy: ConfigInput = POLICY): AdmissionResponse {
  const d = decide(webhook, body, testContext(policy));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** A write as the API server sends it: CREATE to /admit (judged whole), the rest to /validate. */
function write(who: UserInfo, r: Resource, namespace: string, op: 'CREATE' | 'UPDATE' | 'STATUS' | 'DELETE', policy: ConfigInput = POLICY): AdmissionResponse {
  const obj = object(r, namespace);
  const changed = { ...structuredClone(obj), spec: r.kind === 'ResourceQuota' ? { hard: { pods: '10' } } : { limits: [] } } as KubeObject;
  if (op === 'CREATE') return answer('admit', review(who, r, namespace, { operation: 'CREATE', object: obj, oldObject: null }), policy);
  if (op === 'DELETE') return answer('validate', review(who, r, namespace, { operation: 'DELETE', object: null, oldObject: obj }), policy);
  return answer('validate', review(who, r, namespace, { operation: 'UPDATE', subResource: op === 'STATUS' ? 'status' : undefined, object: changed, oldObject: obj }), policy);
}

const OPS = ['CREATE', 'UPDATE', 'STATUS', 'DELETE'] as const;

describe('what acts on a whole shared namespace', () => {
  test('ResourceQuota and LimitRange are the kind table\'s namespace-wide rows, and stay stamped by the default row', () => {
    assert.deepEqual(kindRows().filter((r) => r.namespaceWide === true).map((r) => r.kind), ['ResourceQuota', 'LimitRange']);
    for (const r of [QUOTA, LIMITS]) {
      assert.ok(isNamespaceWide(r));
      assert.deepEqual(defaultRowFor(r, r.kind), { kind: r.kind, ownerReference: false, activeDeadline: false, expiresAt: false });
    }
    assert.equal(isNamespaceWide({ group: '', resource: 'services' }), false);
  });

  const refused: Array<{ who: string; user: UserInfo; namespace: string }> = [
    { who: "beta's principal", user: JANITOR_B, namespace: 'shared' },
    { who: "alpha's own runner", user: RUNNER_A, namespace: 'shared' },
    { who: "alpha's manager", user: MANAGER_A, namespace: 'shared' },
    { who: 'a principal of no environment', user: NOBODY, namespace: 'shared' },
  ];
  for (const { who, user, namespace } of refused) {
    for (const r of [QUOTA, LIMITS]) {
      test(`${who} may not create, change, write the status of or delete a ${r.kind} in namespace ${namespace}, and is told to ask the platform`, () => {
        for (const op of OPS) {
          const a = write(user, r, namespace, op);
          assert.equal(a.allowed, false, op);
          assert.match(a.status?.message ?? '', new RegExp(`\\[guard\\.namespace-wide\\] ${user.username} may not \\w+ ${r.kind} ${namespace}/freeze`), op);
          assert.match(a.status?.message ?? '', /acts on every environment's objects in namespace .*, so it is the platform's; ask the platform to write it, or use a namespace bound to your environment/, op);
        }
      });
    }
  }

  test("in alpha's bound namespace beta's and no one's quotas are refused at CREATE as any object is (guard.namespace-binding), and their changes by this rule", () => {
    for (const user of [JANITOR_B, NOBODY]) {
      assert.match(write(user, QUOTA, 'sandbox-a', 'CREATE').status?.message ?? '', /\[guard\.namespace-binding\]/);
      for (const op of ['UPDATE', 'STATUS', 'DELETE'] as const) assert.match(write(user, QUOTA, 'sandbox-a', op).status?.message ?? '', /\[guard\.namespace-wide\]/, op);
    }
  });

  const admitted: Array<{ who: string; user: UserInfo; namespace: string }> = [
    { who: 'the platform', user: DEPLOYER, namespace: 'shared' },
    { who: 'a break-glass principal', user: ONCALL, namespace: 'shared' },
    { who: 'the garbage collector (a system principal)', user: GC, namespace: 'shared' },
    { who: "alpha's runner in alpha's bound namespace", user: RUNNER_A, namespace: 'sandbox-a' },
    { who: "alpha's manager in alpha's bound namespace", user: MANAGER_A, namespace: 'sandbox-a' },
  ];
  for (const { who, user, namespace } of admitted) {
    test(`${who} writes quotas and limit ranges in namespace ${namespace}`, () => {
      for (const r of [QUOTA, LIMITS]) for (const op of OPS) assert.equal(write(user, r, namespace, op).allowed, true, `${r.kind} ${op}: ${write(user, r, namespace, op).status?.message}`);
    });
  }

  test("alpha's quota in its bound namespace is stamped as alpha's, as every default-row kind is", () => {
    const a = write(RUNNER_A, QUOTA, 'sandbox-a', 'CREATE');
    assert.equal(a.patchType, 'JSONPatch');
    assert.match(Buffer.from(a.patch ?? '', 'base64').toString(), /"deed\.dev\/environment":"alpha"/);
  });

  test('system:masters is the platform by default: a cluster administrator writes quotas in a shared namespace', () => {
    const policy = { ...POLICY, platform: undefined, breakGlass: { groups: [] } };
    assert.equal(write(NOBODY, QUOTA, 'shared', 'CREATE', policy).allowed, true);
  });

  test('in warn mode the write passes with a warning naming the rule', () => {
    const a = write(JANITOR_B, QUOTA, 'shared', 'CREATE', { ...POLICY, rules: { 'guard.namespace-wide': 'warn' } });
    assert.equal(a.allowed, true);
    assert.ok(a.warnings?.some((w) => w.includes('guard.namespace-wide')), JSON.stringify(a.warnings));
  });

  test("other default-row kinds are not judged by it: beta's Service in a shared namespace passes", () => {
    const service = { group: '', version: 'v1', resource: 'services', kind: 'Service' };
    const obj = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'freeze', namespace: 'shared' }, spec: { ports: [{ port: 80 }] } };
    assert.equal(answer('admit', review(JANITOR_B, service, 'shared', { operation: 'CREATE', object: obj, oldObject: null })).allowed, true);
  });
});
