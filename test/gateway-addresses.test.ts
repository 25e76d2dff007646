// A Gateway's `spec.addresses` are the platform's (rules/gateway-addresses.ts): Envoy Gateway
// makes an IP address its proxy Service's external IP (CVE-2020-8554), Istio binds a Hostname
// address's Service and its gateway pods to the Gateway. A CREATE or UPDATE that adds one
// passes only for the platform, system controllers and break-glass; a Gateway without, and
// keeping or removing addresses, pass. In a real API server: test/e2e/cases/gateway-parents.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { fixture, testContext, type Review } from './helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  platform: { users: ['system:serviceaccount:platform:deployer'], groups: [] },
  breakGlass: { users: ['oncall'], groups: [] },
};

const sa = (ns: string, name: string): UserInfo => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'], extra: {} });
const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;
const LAB_B = sa('sandbox-b', 'lab');
const DEPLOYER = sa('platform', 'deployer');
const ONCALL: UserInfo = { username: 'oncall', groups: ['system:authenticated'], extra: {} };
const NOBODY = fixture('mutate-create-pod-by-admin.json').request.userInfo as UserInfo;
const GATEWAYS = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' };

function gateway(namespace: string, addresses?: unknown): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'edge', namespace },
    spec: { gatewayClassName: 'eg', listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }], ...(addresses === undefined ? {} : { addresses }) },
  } as KubeObject;
}

function answer(webhook: Webhook, userInfo: UserInfo, namespace: string, more: Record<string, unknown>, policy: ConfigInput = POLICY): AdmissionResponse {
  const body: Review = fixture('validate-create-pod-by-runner.json');
  body.request = { ...body.request, kind: { group: GATEWAYS.group, version: 'v1', kind: 'Gateway' }, resource: GATEWAYS, requestKind: undefined, requestResource: undefined, name: 'edge', namespace, userInfo, subResource: undefined, ...more };
  const d = decide(webhook, body, testContext(policy));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

const create = (who: UserInfo, ns: string, addresses?: unknown, policy?: ConfigInput) => answer('admit', who, ns, { operation: 'CREATE', object: gateway(ns, addresses), oldObject: null }, policy);
const update = (who: UserInfo, ns: string, before: unknown, after: unknown, subResource?: string) => answer('validate', who, ns, { operation: 'UPDATE', object: gateway(ns, after), oldObject: gateway(ns, before), ...(subResource !== undefined ? { subResource } : {}) });
const IP = [{ type: 'IPAddress', value: '203.0.113.7' }];
const HOSTNAME = [{ type: 'Hostname', value: 'alpha-gateway.sandbox-a.svc.cluster.local' }];

describe("a Gateway's spec.addresses", () => {
  for (const { who, user, ns } of [
    { who: "beta's principal", user: LAB_B, ns: 'shared' },
    { who: "alpha's runner, even in its bound namespace", user: RUNNER_A, ns: 'sandbox-a' },
    { who: 'a principal of no environment', user: NOBODY, ns: 'shared' },
  ]) {
    test(`${who} may not create a Gateway asking for an address (an IP, an untyped value, another's gateway Service), nor add one, and is told the fix`, () => {
      const cases: Array<[AdmissionResponse, string]> = [
        [create(user, ns, IP), '"IPAddress:203\\.0\\.113\\.7"'],
        [create(user, ns, [{ value: '203.0.113.7' }]), '"IPAddress:203\\.0\\.113\\.7"'],
        [create(user, ns, HOSTNAME), '"Hostname:alpha-gateway\\.sandbox-a\\.svc\\.cluster\\.local"'],
        [update(user, ns, undefined, IP), '"IPAddress:203\\.0\\.113\\.7"'],
        [update(user, ns, HOSTNAME, [...HOSTNAME, ...IP]), '"IPAddress:203\\.0\\.113\\.7"'],
      ];
      for (const [a, named] of cases) {
        assert.equal(a.allowed, false);
        assert.match(a.status?.message ?? '', new RegExp(`\\[gateway\\.addresses\\] spec\\.addresses: ${user.username} may not set spec\\.addresses \\[${named}\\]`));
        assert.match(a.status?.message ?? '', /CVE-2020-8554; Istio adds this Gateway's listeners to the gateway pods of a Hostname address's Service\); they are the platform's: leave spec\.addresses out and let the controller assign one, or ask the platform/);
      }
    });
  }

  test('what Deed cannot read as an address counts as one added', () => {
    for (const hostile of ['203.0.113.7', [null], [{ value: 7 }], [{ type: 3, value: 'x' }], [{ type: 3 }], {}]) assert.equal(create(LAB_B, 'shared', hostile).allowed, false, JSON.stringify(hostile));
  });

  for (const { who, user } of [
    { who: 'the platform', user: DEPLOYER },
    { who: 'a break-glass principal', user: ONCALL },
  ]) {
    test(`${who} sets and changes them`, () => {
      assert.equal(create(user, 'shared', IP).allowed, true);
      assert.equal(update(user, 'shared', IP, HOSTNAME).allowed, true);
    });
  }

  test("everyday Gateways pass: none, an empty list, and changes that keep, reorder or remove the platform's addresses; a status write is the controller's", () => {
    assert.equal(create(RUNNER_A, 'sandbox-a').allowed, true);
    assert.equal(create(LAB_B, 'shared', []).allowed, true);
    // An address of a type with no value asks the controller to assign one (reviewer-100 F2).
    assert.equal(create(LAB_B, 'shared', [{ type: 'IPAddress' }, { type: 'Hostname', value: '' }]).allowed, true);
    assert.equal(update(NOBODY, 'shared', [...IP, ...HOSTNAME], [...HOSTNAME, ...IP]).allowed, true);
    assert.equal(update(NOBODY, 'shared', [...IP, ...HOSTNAME], IP).allowed, true);
    assert.equal(update(NOBODY, 'shared', IP, undefined).allowed, true);
    // Through /status the API server keeps no spec change: what the controller reports is not asked for.
    assert.doesNotMatch(update(NOBODY, 'shared', undefined, IP, 'status').status?.message ?? '', /gateway\.addresses/);
  });

  test('in warn mode the Gateway passes with a warning naming the rule', () => {
    const a = create(LAB_B, 'shared', IP, { ...POLICY, rules: { 'gateway.addresses': 'warn' } });
    assert.equal(a.allowed, true);
    assert.ok(a.warnings?.some((w) => w.includes('gateway.addresses')), JSON.stringify(a.warnings));
  });
});
