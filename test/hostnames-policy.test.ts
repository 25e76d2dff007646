// The ValidatingAdmissionPolicy that keeps an environment's hostnames its own outside the
// review scope (src/install/hostnames-policy.ts; reviewer-101 F1): a shared Gateway whose
// listener takes routes from every namespace, or an ingress controller watching every
// namespace, takes a route for alpha's hostname from a namespace Deed does not review. Its CEL
// evaluated here as the API server evaluates it, against rule route.hostnames' own overlap
// test; the chart renders the same objects as `deed manifests`. The API server evaluates it in
// the end-to-end suite (test/e2e/cases/gateway-parents.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { hostnamesOverlap } from '../src/policy/hostnames.js';
import { kindRows } from '../src/policy/kinds.js';
import { assertChartRendersAsOurs, evaluatePolicy, HELM, NAMESPACE_POLICY, renderedPolicy } from './chart-render.js';
import { ROOT } from './cli-process.js';

const CERT_MANAGER = 'system:serviceaccount:cert-manager:cert-manager';
const POLICY = {
  ...NAMESPACE_POLICY,
  environments: [{ ...NAMESPACE_POLICY.environments[0]!, hostnames: ['*.alpha.sandboxes.test', 'alpha.example.com'] }, NAMESPACE_POLICY.environments[1]!],
  workloadControllers: { users: ['system:serviceaccount:kube-system:replicaset-controller', CERT_MANAGER] },
};
const ours = (policy: unknown = POLICY, namespace?: string) => renderedPolicy('deed-hostnames', policy, namespace);

const sa = (ns: string, name: string) => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'] });
const user = (username: string, groups: string[] = []) => ({ username, groups: [...groups, 'system:authenticated'] });
const BETA = sa('sandbox-b', 'admin');
const namespace = (name: string, labels?: Record<string, string>) => ({ metadata: { name, ...(labels ? { labels } : {}) } });
const OWN = namespace('beta-own');
const OPTED_IN = namespace('shared', { 'deed.dev/sandbox': 'enabled' });

const RESOURCES: Record<string, { group: string; resource: string }> = {
  HTTPRoute: { group: 'gateway.networking.k8s.io', resource: 'httproutes' },
  Ingress: { group: 'networking.k8s.io', resource: 'ingresses' },
  Gateway: { group: 'gateway.networking.k8s.io', resource: 'gateways' },
  XListenerSet: { group: 'gateway.networking.x-k8s.io', resource: 'xlistenersets' },
  Certificate: { group: 'cert-manager.io', resource: 'certificates' },
  Order: { group: 'acme.cert-manager.io', resource: 'orders' },
  Challenge: { group: 'acme.cert-manager.io', resource: 'challenges' },
  HTTPProxy: { group: 'projectcontour.io', resource: 'httpproxies' },
  VirtualService: { group: 'networking.istio.io', resource: 'virtualservices' },
  Service: { group: '', resource: 'services' },
  TCPRoute: { group: 'gateway.networking.k8s.io', resource: 'tcproutes' },
  DNSEndpoint: { group: 'externaldns.k8s.io', resource: 'dnsendpoints' },
};
const route = (...hostnames: string[]) => ({ kind: 'HTTPRoute', metadata: { name: 'web' }, spec: { parentRefs: [{ name: 'shared', namespace: 'gateways' }], ...(hostnames.length ? { hostnames } : {}) } });

interface Write {
  object: { kind: string; metadata: object; spec?: object };
  oldObject?: object;
  userInfo?: unknown;
  ns?: object;
}
function answer(policy: V1ValidatingAdmissionPolicy, { object, oldObject, userInfo = BETA, ns = OWN }: Write): { allowed: boolean; message?: string } {
  const request = { operation: oldObject ? 'UPDATE' : 'CREATE', name: 'web', namespace: 'beta-own', resource: { ...RESOURCES[object.kind]!, version: 'v1' }, userInfo };
  return evaluatePolicy(policy, { request, object, oldObject: oldObject ?? null, namespaceObject: ns });
}
const admits = (w: Write, policy = ours()[0]) => answer(policy, w).allowed;

describe('the hostnames policy (an environment\'s hostnames outside the review scope)', () => {
  test('it matches CREATE and UPDATE of every kind the kind table says names hostnames, fails closed and is bound with Deny; without declared hostnames it is not rendered', () => {
    const [policy, binding] = ours();
    const matched = policy.spec!.matchConstraints!.resourceRules!.flatMap((r) => r.resources!.map((res) => `${r.apiGroups![0]}/${res}`)).sort();
    // And the status writes that store a change of annotations (an external-dns hostname, reviewer-105 F4).
    assert.deepEqual(matched, [...kindRows().filter((r) => r.hostnames !== undefined).map((r) => `${r.group}/${r.resource}`), '/services/status', 'networking.k8s.io/ingresses/status'].sort());
    for (const r of policy.spec!.matchConstraints!.resourceRules!) assert.deepEqual(r.operations, ['CREATE', 'UPDATE']);
    assert.equal(policy.spec!.matchConstraints!.namespaceSelector, undefined, 'every namespace: the CEL leaves the review scope to the webhook');
    assert.equal(policy.spec!.failurePolicy, 'Fail');
    assert.deepEqual(binding.spec!.validationActions, ['Deny']);
    assert.deepEqual(ours(NAMESPACE_POLICY), [undefined, undefined]);
  });

  test("beta's route, Ingress, listener or Certificate that names alpha's hostname, or a wildcard over it, in a namespace Deed does not review is refused, and the refusal names the hostname and the fix", () => {
    const refusals: Array<[string, Write['object']]> = [
      ['a route', route('login.alpha.sandboxes.test')],
      ['a route, in capitals', route('Login.Alpha.Sandboxes.Test')],
      ['a route, a wildcard over alpha\'s', route('*.sandboxes.test')],
      ['a route, alpha\'s exact name', route('docs.example.com', 'alpha.example.com')],
      ['an Ingress rule', { kind: 'Ingress', metadata: {}, spec: { rules: [{ http: {} }, { host: 'login.alpha.sandboxes.test' }] } }],
      ['an Ingress TLS host', { kind: 'Ingress', metadata: {}, spec: { tls: [{ secretName: 'x' }, { hosts: ['docs.example.com', 'a.b.alpha.sandboxes.test'] }] } }],
      ['a Gateway listener', { kind: 'Gateway', metadata: {}, spec: { listeners: [{ name: 'any', port: 80 }, { name: 'a', port: 443, hostname: '*.alpha.sandboxes.test' }] } }],
      ['an XListenerSet listener', { kind: 'XListenerSet', metadata: {}, spec: { listeners: [{ name: 'a', port: 443, hostname: 'x.alpha.sandboxes.test' }] } }],
      ['a Certificate dnsName', { kind: 'Certificate', metadata: {}, spec: { secretName: 's', dnsNames: ['alpha.example.com'] } }],
      ['a Certificate commonName', { kind: 'Certificate', metadata: {}, spec: { secretName: 's', commonName: 'login.alpha.sandboxes.test' } }],
      ['an ACME Order', { kind: 'Order', metadata: {}, spec: { request: 'LS0t', dnsNames: ['www.example.com', 'Alpha.Example.com'] } }],
      ['an ACME Challenge', { kind: 'Challenge', metadata: {}, spec: { dnsName: 'login.alpha.sandboxes.test', type: 'HTTP-01' } }],
      ['an ACME Challenge for the wildcard under a domain', { kind: 'Challenge', metadata: {}, spec: { dnsName: 'alpha.sandboxes.test', wildcard: true, type: 'DNS-01' } }],
      ['a Contour HTTPProxy', { kind: 'HTTPProxy', metadata: {}, spec: { virtualhost: { fqdn: 'Login.alpha.sandboxes.test' }, routes: [] } }],
      ['an Istio VirtualService', { kind: 'VirtualService', metadata: {}, spec: { hosts: ['web', 'alpha.example.com'], gateways: ['istio-system/shared'] } }],
      ["an Istio VirtualService's every-name host", { kind: 'VirtualService', metadata: {}, spec: { hosts: ['*'], gateways: ['istio-system/shared'] } }],
      ["a Service's external-dns hostname annotation, read as external-dns reads it", { kind: 'Service', metadata: { annotations: { 'external-dns.alpha.kubernetes.io/hostname': 'docs.example.com, Alpha.Example.COM.' } }, spec: { type: 'LoadBalancer' } }],
      ["a Service's external-dns internal hostname, a space inside the name", { kind: 'Service', metadata: { annotations: { 'external-dns.kubernetes.io/internal-hostname': 'login.alpha .sandboxes.test' } }, spec: {} }],
      ["an Ingress's external-dns hostname annotation", { kind: 'Ingress', metadata: { annotations: { 'external-dns.kubernetes.io/hostname': '*.sandboxes.test' } }, spec: { rules: [{ host: 'docs.example.com' }] } }],
      ["an external-dns DNSEndpoint's record, a trailing dot and capitals", { kind: 'DNSEndpoint', metadata: {}, spec: { endpoints: [{ dnsName: 'docs.example.com' }, { dnsName: 'Login.alpha.sandboxes.test.', targets: ['203.0.113.9'] }] } }],
      ["a DNSEndpoint's record at _acme-challenge of alpha's name (reviewer-106 F2)", { kind: 'DNSEndpoint', metadata: {}, spec: { endpoints: [{ dnsName: '_acme-challenge.alpha.example.com.', recordType: 'CNAME', targets: ['x.beta.example.net'] }] } }],
      ["a DNSEndpoint's NS record delegating the zone of alpha's wildcard (reviewer-106 F2)", { kind: 'DNSEndpoint', metadata: {}, spec: { endpoints: [{ dnsName: 'alpha.sandboxes.test', recordType: 'NS', targets: ['ns1.beta.example.net'] }] } }],
      ["an external-dns annotation at _acme-challenge of alpha's name", { kind: 'Service', metadata: { annotations: { 'external-dns.kubernetes.io/hostname': '_acme-challenge.alpha.example.com' } }, spec: { type: 'ExternalName' } }],
      ["a DNSEndpoint's record at _acme-challenge of alpha's wildcard's base, a wildcard certificate's challenge (reviewer-107 F2)", { kind: 'DNSEndpoint', metadata: {}, spec: { endpoints: [{ dnsName: '_ACME-Challenge.alpha.sandboxes.test', recordType: 'CNAME', targets: ['x.beta.example.net'] }] } }],
      ["an external-dns annotation at _acme-challenge of alpha's wildcard's base", { kind: 'Service', metadata: { annotations: { 'external-dns.kubernetes.io/hostname': 'docs.example.com,_acme-challenge.alpha.sandboxes.test.' } }, spec: { type: 'ExternalName' } }],
      ["a TCPRoute's external-dns hostname annotation", { kind: 'TCPRoute', metadata: { annotations: { 'external-dns.alpha.kubernetes.io/hostname': 'db.alpha.sandboxes.test' } }, spec: { parentRefs: [{ name: 'shared' }] } }],
    ];
    for (const [what, object] of refusals) {
      const a = answer(ours()[0], { object });
      assert.equal(a.allowed, false, what);
      assert.match(a.message!, /is environment alpha's hostname, and this namespace is outside Deed's review scope, where only the platform, system controllers, listed operators and break-glass may name it: name a hostname no environment declares, or write it in a namespace of that environment's in Deed's review scope, as the environment$/, what);
    }
    assert.match(answer(ours()[0], { object: route('login.alpha.sandboxes.test') }).message!, /^httproutes beta-own\/web: \*\.alpha\.sandboxes\.test is environment alpha's hostname/);
  });

  test('what names no declared hostname passes: other names, the wildcard\'s apex, no hostnames at all, hostless listeners', () => {
    assert.equal(admits({ object: route('docs.example.com', 'alpha.sandboxes.test', 'example.com') }), true);
    assert.equal(admits({ object: route() }), true);
    assert.equal(admits({ object: { kind: 'Gateway', metadata: {}, spec: { listeners: [{ name: 'any', port: 80 }] } } }), true);
    assert.equal(admits({ object: { kind: 'Ingress', metadata: {}, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } } }), true);
    assert.equal(admits({ object: { kind: 'Certificate', metadata: {}, spec: { secretName: 's', dnsNames: ['www.example.com'] } } }), true);
    assert.equal(admits({ object: { kind: 'Challenge', metadata: {}, spec: { dnsName: 'alpha.sandboxes.test', wildcard: false, type: 'DNS-01' } } }), true, "the domain itself is not alpha's");
    assert.equal(admits({ object: { kind: 'VirtualService', metadata: {}, spec: { hosts: ['web', 'web.beta-own.svc.cluster.local'] } } }), true, 'mesh-internal short names');
    assert.equal(admits({ object: { kind: 'HTTPProxy', metadata: {}, spec: { routes: [] } } }), true, 'an HTTPProxy a root includes has no virtual host');
    assert.equal(admits({ object: { kind: 'Service', metadata: { annotations: { 'external-dns.alpha.kubernetes.io/hostname': 'docs.example.com,,api.example.com.', other: 'alpha.example.com' } }, spec: {} } }), true, 'names of no environment, and other annotations');
    assert.equal(admits({ object: { kind: 'Service', metadata: {}, spec: { type: 'ClusterIP' } } }), true, 'a Service with no annotations');
    assert.equal(admits({ object: { kind: 'DNSEndpoint', metadata: {}, spec: { endpoints: [{ dnsName: 'docs.example.com.' }, { recordType: 'A' }, { dnsName: '.' }] } } }), true, "names of no environment, an endpoint without one, the root's dot");
    assert.equal(admits({ object: { kind: 'DNSEndpoint', metadata: {}, spec: { endpoints: [{ dnsName: 'sandboxes.test', recordType: 'A' }, { dnsName: '_acme-challenge.docs.example.com', recordType: 'TXT' }, { dnsName: '_acme-challenge.', recordType: 'TXT' }, { dnsName: '_acme-challenge', recordType: 'TXT' }] } } }), true, "an A record above alpha's wildcard, a challenge of no environment's name, bare challenge labels");
  });

  test('the CEL takes the hostnames rule route.hostnames takes: hostnamesOverlap, pair by pair', () => {
    const hosts = ['*', 'a.alpha.sandboxes.test', 'A.ALPHA.sandboxes.test', 'alpha.sandboxes.test', '*.alpha.sandboxes.test', '*.sandboxes.test', '*.test', 'x.a.alpha.sandboxes.test', 'balpha.sandboxes.test', 'alpha.example.com', '*.example.com', 'www.alpha.example.com', '*.alpha.example.com', 'example.com'];
    const patterns = ['*.alpha.sandboxes.test', 'alpha.example.com'];
    const [policy] = ours();
    for (const host of hosts) {
      const expected = patterns.some((p) => hostnamesOverlap(host, p));
      assert.equal(admits({ object: route(host) }, policy), !expected, host);
    }
  });

  test('in a namespace Deed reviews the webhook judges (it knows who acts for alpha); kube-system and Deed\'s namespace are never in it, whatever their labels', () => {
    assert.equal(admits({ object: route('login.alpha.sandboxes.test'), ns: OPTED_IN }), true);
    assert.equal(admits({ object: route('login.alpha.sandboxes.test'), ns: namespace('deed-system', { 'deed.dev/sandbox': 'enabled' }) }), false);
    assert.equal(admits({ object: route('login.alpha.sandboxes.test'), ns: namespace('kube-system', { 'deed.dev/sandbox': 'enabled' }) }), false);
    assert.equal(admits({ object: route('login.alpha.sandboxes.test'), ns: namespace('other', { 'deed.dev/sandbox': 'disabled' }) }), false);
    assert.equal(admits({ object: route('login.alpha.sandboxes.test'), ns: namespace('deed', { 'deed.dev/sandbox': 'enabled' }) }, ours(POLICY, 'deed')[0]), false, "Deed's own namespace, as installed");
  });

  test('the platform, system controllers, break-glass and the listed operators (cert-manager\'s solver routes) may name it', () => {
    const object = route('login.alpha.sandboxes.test');
    assert.equal(admits({ object, userInfo: user('argocd') }), true, 'a platform user');
    assert.equal(admits({ object, userInfo: user('jo', ['platform-admins']) }), true, 'a platform group');
    assert.equal(admits({ object, userInfo: user('oncall') }), true, 'break-glass');
    assert.equal(admits({ object, userInfo: user('system:kube-controller-manager') }), true, 'a system principal');
    assert.equal(admits({ object, userInfo: sa('cert-manager', 'cert-manager') }), true, 'a listed operator');
    assert.equal(admits({ object, userInfo: user('kube-lab-admin', ['system:masters']) }), false, 'not platform or break-glass in a policy that names its own');
    assert.equal(admits({ object, userInfo: user('kube-lab-admin', ['system:masters']) }, ours({ environments: POLICY.environments })[0]), true, 'system:masters, the default platform and break-glass group');
    assert.equal(admits({ object, userInfo: sa('sandbox-a', 'runner') }), false, "alpha's own runner: outside the review scope nobody acts for alpha");
  });

  test('an UPDATE that keeps the spec and the ingress class passes (labels, finalizers: a route stored before it stays deletable); one that changes either is judged whole', () => {
    const stored = route('login.alpha.sandboxes.test');
    assert.equal(admits({ oldObject: stored, object: { ...stored, metadata: { name: 'web', finalizers: [] } } }), true);
    assert.equal(admits({ oldObject: stored, object: { ...stored, spec: { ...stored.spec, rules: [{ backendRefs: [{ name: 'beta-web', port: 80 }] }] } } }), false);
    assert.equal(admits({ oldObject: stored, object: route('docs.example.com') }), true, 'dropping the hostname');
    // An Ingress idle under a class no controller serves goes live when the class annotation changes (reviewer-102 F5).
    const idle = (cls?: string) => ({ kind: 'Ingress', metadata: { name: 'web', ...(cls ? { annotations: { 'kubernetes.io/ingress.class': cls, note: 'x' } } : {}) }, spec: { rules: [{ host: 'login.alpha.sandboxes.test' }] } });
    assert.equal(admits({ oldObject: idle('parked'), object: idle('shared') }), false);
    assert.equal(admits({ oldObject: idle(), object: idle('shared') }), false);
    assert.equal(admits({ oldObject: idle('parked'), object: { ...idle('parked'), metadata: { ...idle('parked').metadata, labels: { team: 'b' } } } }), true);
    const contour = (cls: string) => ({ kind: 'Ingress', metadata: { name: 'web', annotations: { 'projectcontour.io/ingress.class': cls } }, spec: { rules: [{ host: 'login.alpha.sandboxes.test' }] } });
    assert.equal(admits({ oldObject: contour('parked'), object: contour('contour') }), false, "Contour's class annotation (reviewer-103 F3)");
    // external-dns publishes the names its annotation gains (reviewer-101 F3).
    const published = (names?: string) => ({ kind: 'Service', metadata: { name: 'web', ...(names ? { annotations: { 'external-dns.alpha.kubernetes.io/hostname': names } } : {}) }, spec: { type: 'LoadBalancer' } });
    assert.equal(admits({ oldObject: published(), object: published('alpha.example.com') }), false, 'an annotation added');
    assert.equal(admits({ oldObject: published('alpha.example.com'), object: { ...published('alpha.example.com'), metadata: { ...published('alpha.example.com').metadata, labels: { team: 'b' } } } }), true, 'kept');
  });

  test('the chart renders the same objects as deed manifests, and none where no environment declares hostnames', { skip: existsSync(HELM) ? false : 'no helm in KUBEBUILDER_ASSETS' }, () => {
    const variants = [
      POLICY,
      { environments: POLICY.environments },
      { ...POLICY, systemPrincipals: { users: ['ops-controller'], groups: [] }, breakGlass: { users: ['x'] }, platform: { users: [] } },
      { environments: [{ id: 'a', hostnames: ['a.example.com'] }, { id: 'b', hostnames: ['*.b.example.com'] }], workloadControllers: { users: [] } },
    ];
    assertChartRendersAsOurs('hostnames-policy.yaml', variants, (policy) => ours(policy) as never);
    const dir = mkdtempSync(join(tmpdir(), 'deed-hostnames-'));
    for (const policy of [NAMESPACE_POLICY, {}]) {
      writeFileSync(join(dir, 'values.yaml'), stringify({ policy }));
      const out = execFileSync(HELM, ['template', 'deed', join(ROOT, 'manifests/helm/deed'), '-n', 'deed-system', '-f', join(dir, 'values.yaml')], { encoding: 'utf8' });
      assert.ok(out.includes('name: deed-cronjob-active'), 'the chart rendered');
      assert.ok(!out.includes('deed-hostnames'), JSON.stringify(policy));
    }
  });
});

describe("names Istio and external-dns read as alpha's, outside the review scope (reviewer-105)", () => {
  test("F1: an external-dns annotation with alpha's name and whitespace around the value (external-dns trims it: a YAML block scalar's newline, a tab, a no-break space) is refused", () => {
    for (const value of ['alpha.example.com\n', '\talpha.example.com', '\u00a0login.alpha.sandboxes.test', 'docs.example.com,login.alpha.sandboxes.test\r\n'])
      assert.equal(admits({ object: { kind: 'Service', metadata: { annotations: { 'external-dns.kubernetes.io/hostname': value } }, spec: { type: 'LoadBalancer' } } }), false, JSON.stringify(value));
    assert.equal(admits({ object: { kind: 'Service', metadata: { annotations: { 'external-dns.kubernetes.io/hostname': 'docs.example.com\n' } }, spec: {} } }), true, 'a name of no environment, from a block scalar');
  });

  test("F2: an Istio host whose first label is `*` and label characters (`*lpha.example.com`), which Istio and Envoy match as a suffix, is refused", () => {
    for (const host of ['*lpha.example.com', '*alpha.sandboxes.test', '*s.test', '*-1.alpha.sandboxes.test'])
      assert.equal(admits({ object: { kind: 'VirtualService', metadata: {}, spec: { hosts: [host], gateways: ['istio-system/shared'] } } }), false, host);
    assert.equal(admits({ object: { kind: 'VirtualService', metadata: {}, spec: { hosts: ['*beta.example.net'], gateways: ['istio-system/shared'] } } }), true);
  });

  test("F4: a Service's status write that changes its external-dns annotation is judged (the Service status strategy keeps metadata); one that keeps them passes", () => {
    const svc = (names?: string) => ({ kind: 'Service', metadata: { name: 'web', ...(names ? { annotations: { 'external-dns.kubernetes.io/hostname': names } } : {}) }, spec: { type: 'LoadBalancer' } });
    const status = (object: object, oldObject: object) => evaluatePolicy(ours()[0], { request: { operation: 'UPDATE', name: 'web', namespace: 'beta-own', resource: { group: '', version: 'v1', resource: 'services' }, subResource: 'status', userInfo: BETA }, object, oldObject, namespaceObject: OWN }).allowed;
    assert.equal(status(svc('alpha.example.com'), svc()), false);
    assert.equal(status({ ...svc('alpha.example.com'), status: { loadBalancer: { ingress: [{ ip: '203.0.113.9' }] } } }, svc('alpha.example.com')), true, 'a load balancer status write of a Service stored before');
  });
});
