// A Service's external IPs are the platform's (rules/external-ips.ts, CVE-2020-8554): a
// CREATE or UPDATE that adds an address to spec.externalIPs passes only for the policy's
// platform, system controllers and break-glass; everyday Services, and keeping or removing
// addresses, pass. In a real API server: test/e2e/cases/namespace-wide.ts.
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
const JANITOR_B = sa('sandbox-b', 'janitor');
const DEPLOYER = sa('platform', 'deployer');
const ONCALL: UserInfo = { username: 'oncall', groups: ['system:authenticated'], extra: {} };
const NOBODY = fixture('mutate-create-pod-by-admin.json').request.userInfo as UserInfo;
const SERVICE = { group: '', version: 'v1', resource: 'services', kind: 'Service' };

function service(namespace: string, externalIPs?: unknown): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace }, spec: { ports: [{ port: 80 }], ...(externalIPs === undefined ? {} : { externalIPs }) } } as KubeObject;
}

function answer(webhook: Webhook, userInfo: UserInfo, namespace: string, more: Record<string, unknown>, policy: ConfigInput = POLICY): AdmissionResponse {
  const body: Review = fixture('validate-create-pod-by-runner.json');
  body.request = { ...body.request, kind: { group: '', version: 'v1', kind: 'Service' }, resource: SERVICE, requestKind: undefined, requestResource: undefined, name: 'web', namespace, userInfo, subResource: undefined, ...more };
  const d = decide(webhook, body, testContext(policy));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

const create = (who: UserInfo, ns: string, ips?: unknown, policy?: ConfigInput) => answer('admit', who, ns, { operation: 'CREATE', object: service(ns, ips), oldObject: null }, policy);
const update = (who: UserInfo, ns: string, before: unknown, after: unknown) => answer('validate', who, ns, { operation: 'UPDATE', object: service(ns, after), oldObject: service(ns, before) });

describe("a Service's external IPs", () => {
  const refused: Array<{ who: string; user: UserInfo; ns: string }> = [
    { who: "beta's principal", user: JANITOR_B, ns: 'shared' },
    { who: "alpha's runner, even in its bound namespace", user: RUNNER_A, ns: 'sandbox-a' },
    { who: 'a principal of no environment', user: NOBODY, ns: 'shared' },
  ];
  for (const { who, user, ns } of refused) {
    test(`${who} may not create a Service with external IPs, nor add one to a Service, and is told the fix`, () => {
      for (const a of [create(user, ns, ['203.0.113.7']), update(user, ns, undefined, ['203.0.113.7']), update(user, ns, ['198.51.100.1'], ['198.51.100.1', '203.0.113.7'])]) {
        assert.equal(a.allowed, false);
        assert.match(a.status?.message ?? '', new RegExp(`\\[service\\.external-ips\\] spec\\.externalIPs: ${user.username} may not set spec\\.externalIPs \\["203\\.0\\.113\\.7"\\]`));
        assert.match(a.status?.message ?? '', /CVE-2020-8554\); they are the platform's: ask the platform, or turn external IPs off with Kubernetes' DenyServiceExternalIPs admission plugin/);
      }
    });
  }

  for (const { who, user } of [
    { who: 'the platform', user: DEPLOYER },
    { who: 'a break-glass principal', user: ONCALL },
  ]) {
    test(`${who} sets and changes them`, () => {
      assert.equal(create(user, 'shared', ['203.0.113.7']).allowed, true);
      assert.equal(update(user, 'shared', ['203.0.113.7'], ['203.0.113.8']).allowed, true);
    });
  }

  test('everyday Services pass: none, an empty list, and changes that keep, reorder or remove the platform\'s addresses', () => {
    assert.equal(create(RUNNER_A, 'sandbox-a').allowed, true);
    assert.equal(create(JANITOR_B, 'shared', []).allowed, true);
    // The platform's unstamped Service is no environment's to change (guard.shared-input): a principal of no environment changes it here.
    assert.equal(update(NOBODY, 'shared', ['198.51.100.1', '198.51.100.2'], ['198.51.100.2', '198.51.100.1']).allowed, true);
    assert.equal(update(NOBODY, 'shared', ['198.51.100.1', '198.51.100.2'], ['198.51.100.1']).allowed, true);
    assert.equal(update(NOBODY, 'shared', ['198.51.100.1'], undefined).allowed, true);
  });

  test('in warn mode the Service passes with a warning naming the rule', () => {
    const a = create(JANITOR_B, 'shared', ['203.0.113.7'], { ...POLICY, rules: { 'service.external-ips': 'warn' } });
    assert.equal(a.allowed, true);
    assert.ok(a.warnings?.some((w) => w.includes('service.external-ips')), JSON.stringify(a.warnings));
  });

  test('a list the message would make long is cut to its first eight addresses', () => {
    const many = Array.from({ length: 20 }, (_, i) => `203.0.113.${i}`);
    const message = create(JANITOR_B, 'shared', many).status?.message ?? '';
    assert.match(message, /"203\.0\.113\.7"\]/);
    assert.doesNotMatch(message, /203\.0\.113\.8"/);
  });
});
