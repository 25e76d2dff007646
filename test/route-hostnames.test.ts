// route.hostnames (rules/route-hostnames.ts): a hostname an environment declares its own is
// named by it alone, in a route's hostnames, an Ingress's hosts, a listener's hostname. In a
// real API server: test/e2e/cases/gateway-parents.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import { parseConfigText } from '../src/config/load.js';
import type { ConfigInput } from '../src/config/schema.js';
import { hostnamesOverlap } from '../src/policy/hostnames.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { planLookups } from '../src/policy/lookup.js';
import { FIXTURE_KEYS, fixture, stampedMetadata, testContext, type Review } from './helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'], hostnames: ['*.alpha.sandboxes.example.com', 'alpha.example.org'], managers: { users: ['system:serviceaccount:platform:alpha-manager'] } },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  platform: { users: ['system:serviceaccount:platform:deployer'], groups: [] },
};

const sa = (ns: string, name: string): UserInfo => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'], extra: {} });
const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;
const LAB_B = sa('sandbox-b', 'lab');
const G = 'gateway.networking.k8s.io';

type Kind = 'HTTPRoute' | 'GRPCRoute' | 'TLSRoute' | 'Ingress' | 'Gateway' | 'ListenerSet' | 'TCPRoute' | 'Certificate' | 'Order' | 'Challenge' | 'HTTPProxy' | 'VirtualService' | 'ServiceEntry' | 'Service' | 'UDPRoute' | 'DNSEndpoint';
const RESOURCES: Record<Kind, { group: string; version: string; resource: string }> = {
  HTTPRoute: { group: G, version: 'v1', resource: 'httproutes' },
  GRPCRoute: { group: G, version: 'v1', resource: 'grpcroutes' },
  TLSRoute: { group: G, version: 'v1alpha2', resource: 'tlsroutes' },
  TCPRoute: { group: G, version: 'v1alpha2', resource: 'tcproutes' },
  Ingress: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
  Gateway: { group: G, version: 'v1', resource: 'gateways' },
  ListenerSet: { group: G, version: 'v1', resource: 'listenersets' },
  Certificate: { group: 'cert-manager.io', version: 'v1', resource: 'certificates' },
  Order: { group: 'acme.cert-manager.io', version: 'v1', resource: 'orders' },
  Challenge: { group: 'acme.cert-manager.io', version: 'v1', resource: 'challenges' },
  HTTPProxy: { group: 'projectcontour.io', version: 'v1', resource: 'httpproxies' },
  VirtualService: { group: 'networking.istio.io', version: 'v1beta1', resource: 'virtualservices' },
  ServiceEntry: { group: 'networking.istio.io', version: 'v1', resource: 'serviceentries' },
  Service: { group: '', version: 'v1', resource: 'services' },
  UDPRoute: { group: G, version: 'v1alpha2', resource: 'udproutes' },
  DNSEndpoint: { group: 'externaldns.k8s.io', version: 'v1alpha1', resource: 'dnsendpoints' },
};

/** An object of `kind` naming `hosts` where that kind names hostnames. */
function named(kind: Kind, hosts: string[]): KubeObject {
  const { group, version } = RESOURCES[kind];
  const spec =
    kind === 'Ingress'
      ? { rules: hosts.map((host) => ({ host, http: { paths: [{ path: '/login', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } })) }
      : kind === 'Gateway' || kind === 'ListenerSet'
        ? { ...(kind === 'Gateway' ? { gatewayClassName: 'shared' } : { parentRef: { name: 'shared', namespace: 'infra' } }), listeners: hosts.map((hostname, i) => ({ name: `l${i}`, protocol: 'HTTPS', port: 443, hostname })) }
        : { parentRefs: [{ name: 'shared', namespace: 'infra' }], hostnames: hosts, rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] };
  return { apiVersion: group === '' ? version : `${group}/${version}`, kind, metadata: { name: 'front', namespace: 'shared' }, spec } as KubeObject;
}

/** The route.hostnames findings of the validating review, each as `path: message` (the other rules need a cluster). */
function answer(kind: Kind, userInfo: UserInfo, more: Record<string, unknown>, policy: ConfigInput = POLICY, lookup?: ObjectLookup): { found: string; warnings: string[] } {
  const body: Review = fixture('validate-create-pod-by-runner.json');
  const { group, version, resource } = RESOURCES[kind];
  body.request = { ...body.request, kind: { group, version, kind }, resource: { group, version, resource }, requestKind: undefined, requestResource: undefined, name: 'front', namespace: 'shared', userInfo, subResource: undefined, ...more };
  const context = testContext(policy);
  const d = decide('validate', body, lookup === undefined ? context : { ...context, lookup });
  if (d.kind !== 'review') throw new Error(d.message);
  const found = d.verdict.findings.filter((f) => f.rule === 'route.hostnames');
  return { found: found.map((f) => `[${f.rule}] ${f.path}: ${f.message}`).join('; '), warnings: d.response.response.warnings ?? [] };
}
const create = (kind: Kind, who: UserInfo, hosts: string[], policy?: ConfigInput) => answer(kind, who, { operation: 'CREATE', object: named(kind, hosts), oldObject: null }, policy);
const update = (kind: Kind, who: UserInfo, before: string[], after: string[]) => answer(kind, who, { operation: 'UPDATE', object: named(kind, after), oldObject: named(kind, before) });
const refusal = (a: { found: string }) => a.found;

describe('route.hostnames: a hostname an environment declares is named by it alone', () => {
  test("beta's route, Ingress or listener naming alpha's hostname, or a wildcard over it, is refused, saying whose it is and what to do", () => {
    for (const kind of ['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'Ingress', 'Gateway', 'ListenerSet'] as const)
      for (const host of ['run-7.alpha.sandboxes.example.com', 'a.b.alpha.sandboxes.example.com', '*.alpha.sandboxes.example.com', '*.sandboxes.example.com', '*.example.com', 'ALPHA.example.org', '*.example.org']) {
        const message = refusal(create(kind, LAB_B, ['beta.example.net', host]));
        const follower = kind === 'Ingress' ? "the ingress controller would send its requests that this Ingress matches best to this Ingress's backends" : kind === 'Gateway' || kind === 'ListenerSet' ? "the gateway controller would take its connections on this listener, with this listener's certificate" : "the gateway controller would send its requests that this route matches best to this route's backends";
        assert.match(message, new RegExp(`\\[route\\.hostnames\\] spec\\.\\S+\\[1\\]\\S*: ${host.replace(/[.*]/g, (c) => `\\${c}`)} is environment alpha's hostname \\((\\*\\.alpha\\.sandboxes\\.example\\.com|alpha\\.example\\.org)\\), and system:serviceaccount:sandbox-b:lab does not act for it: ${follower.replace(/[.'()]/g, (c) => `\\${c}`)}; name a hostname of this environment's own$`), `${kind} ${host}: ${message}`);
      }
    // An Ingress's TLS hosts too; and a principal of no environment.
    const tls = { ...named('Ingress', []), spec: { tls: [{ hosts: ['x.alpha.sandboxes.example.com'], secretName: 'c' }] } };
    assert.match(refusal(answer('Ingress', LAB_B, { operation: 'CREATE', object: tls, oldObject: null })), /spec\.tls\[0\]\.hosts\[0\]: x\.alpha\.sandboxes\.example\.com is environment alpha's/);
    assert.match(refusal(create('HTTPRoute', sa('plain', 'stranger'), ['run-7.alpha.sandboxes.example.com'])), /route\.hostnames/);
    // A cert-manager Certificate for it: an ACME CA would issue beta a certificate for alpha's name.
    const certificate = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'front', namespace: 'shared' }, spec: { secretName: 'front-tls', commonName: 'run-7.alpha.sandboxes.example.com', dnsNames: ['beta.example.net', 'run-7.alpha.sandboxes.example.com'], issuerRef: { name: 'acme' } } };
    const issued = answer('Certificate', LAB_B, { operation: 'CREATE', object: certificate, oldObject: null }).found;
    assert.match(issued, /^\[route\.hostnames\] spec\.dnsNames\[1\]: run-7\.alpha\.sandboxes\.example\.com is environment alpha's hostname .*: cert-manager would have a certificate for it issued into this Certificate's Secret/);
  });

  test("beta's own hostnames, and names that only look alike, pass; so does a TCPRoute (ports, no hostnames)", () => {
    for (const host of ['beta.example.net', 'alpha.sandboxes.example.com', 'xalpha.sandboxes.example.com', 'alpha.example.org.evil.net', '*.beta.sandboxes.example.com', 'example.org']) assert.equal(refusal(create('HTTPRoute', LAB_B, [host])), '', host);
    assert.equal(refusal(answer('TCPRoute', LAB_B, { operation: 'CREATE', object: { ...named('TCPRoute', []), spec: { parentRefs: [{ name: 'shared' }], hostnames: ['run-7.alpha.sandboxes.example.com'] } }, oldObject: null })), '');
  });

  test("alpha, its manager, the platform and break-glass name alpha's hostnames", () => {
    for (const who of [RUNNER_A, sa('platform', 'alpha-manager'), sa('platform', 'deployer'), fixture('mutate-create-pod-by-admin.json').request.userInfo as UserInfo]) assert.equal(refusal(create('HTTPRoute', who, ['run-7.alpha.sandboxes.example.com', '*.alpha.sandboxes.example.com'])), '', who.username);
  });

  test("an UPDATE that changes the spec is judged on every hostname it names, one stored before alpha declared it too (reviewer-101 F5); one that changes only metadata, or drops the hostname, is not refused", () => {
    assert.match(refusal(update('HTTPRoute', LAB_B, ['beta.example.net'], ['beta.example.net', 'run-8.alpha.sandboxes.example.com'])), /run-8\.alpha\.sandboxes\.example\.com is environment alpha's/);
    // Stored before the policy declared alpha's hostnames: beta adds a path, or another hostname, and is refused.
    assert.match(refusal(update('HTTPRoute', LAB_B, ['run-7.alpha.sandboxes.example.com'], ['run-7.alpha.sandboxes.example.com', 'beta.example.net'])), /run-7\.alpha\.sandboxes\.example\.com is environment alpha's/);
    const before = named('HTTPRoute', ['run-7.alpha.sandboxes.example.com']);
    const relabelled = { ...before, metadata: { ...before.metadata, labels: { team: 'b' } } };
    assert.equal(answer('HTTPRoute', LAB_B, { operation: 'UPDATE', object: relabelled, oldObject: before }).found, '');
    assert.equal(refusal(update('HTTPRoute', LAB_B, ['run-7.alpha.sandboxes.example.com', 'beta.example.net'], ['beta.example.net'])), '');
  });

  test("beta's own ACME Order or Challenge for alpha's hostname (cert-manager's edit role lets a tenant write them, with its own account's key authorization and a solver on the shared Gateway or the platform's DNS zone) is refused; a Challenge for the wildcard under a domain counts as the wildcard (reviewer-103 F2)", () => {
    const order = (dnsNames: string[], commonName?: string) => ({ apiVersion: 'acme.cert-manager.io/v1', kind: 'Order', metadata: { name: 'front', namespace: 'shared' }, spec: { request: 'LS0t', issuerRef: { name: 'acme' }, dnsNames, ...(commonName ? { commonName } : {}) } });
    const challenge = (dnsName: string, wildcard?: boolean) => ({ apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', metadata: { name: 'front', namespace: 'shared' }, spec: { url: 'https://acme.example/chall/1', authorizationURL: 'https://acme.example/authz/1', dnsName, ...(wildcard === undefined ? {} : { wildcard }), type: 'HTTP-01', token: 't', key: 'k', solver: { http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'shared', namespace: 'infra' }] } } }, issuerRef: { name: 'acme' } } });
    const judged = (kind: Kind, object: KubeObject, who = LAB_B) => answer(kind, who, { operation: 'CREATE', object, oldObject: null }).found;
    assert.match(judged('Order', order(['beta.example.net', 'run-7.alpha.sandboxes.example.com']) as KubeObject), /spec\.dnsNames\[1\]: run-7\.alpha\.sandboxes\.example\.com is environment alpha's hostname .*the ACME CA issue a certificate for it to the Order's account/);
    assert.match(judged('Order', order([], 'ALPHA.example.org') as KubeObject), /spec\.commonName: ALPHA\.example\.org is environment alpha's hostname/);
    assert.match(judged('Challenge', challenge('run-7.alpha.sandboxes.example.com') as KubeObject), /spec\.dnsName: run-7\.alpha\.sandboxes\.example\.com is environment alpha's hostname .*cert-manager would answer the ACME CA's challenge for it/);
    assert.match(judged('Challenge', challenge('alpha.sandboxes.example.com', true) as KubeObject), /spec\.dnsName: \*\.alpha\.sandboxes\.example\.com is environment alpha's hostname/);
    assert.equal(judged('Challenge', challenge('alpha.sandboxes.example.com', false) as KubeObject), '', "the domain itself is not alpha's");
    assert.equal(judged('Challenge', challenge('beta.example.net', true) as KubeObject), '');
    assert.equal(judged('Order', order(['run-7.alpha.sandboxes.example.com']) as KubeObject, RUNNER_A), '', "alpha's own");
  });

  test("beta's Contour HTTPProxy or Istio VirtualService (any served version) for alpha's hostname, or Istio's `*` host (every name), is refused: the shared proxy or every mesh sidecar would send alpha's requests to beta (reviewer-101 F3); a ServiceEntry, a mesh's allowance to call a name, is not judged", () => {
    const proxy = (fqdn: string) => ({ apiVersion: 'projectcontour.io/v1', kind: 'HTTPProxy', metadata: { name: 'front', namespace: 'shared' }, spec: { virtualhost: { fqdn }, routes: [{ conditions: [{ prefix: '/login' }], services: [{ name: 'web', port: 80 }] }] } });
    const virtualService = (hosts: string[]) => ({ apiVersion: 'networking.istio.io/v1beta1', kind: 'VirtualService', metadata: { name: 'front', namespace: 'shared' }, spec: { hosts, gateways: ['istio-system/shared'], http: [{ route: [{ destination: { host: 'web' } }] }] } });
    const entry = (hosts: string[]) => ({ apiVersion: 'networking.istio.io/v1', kind: 'ServiceEntry', metadata: { name: 'front', namespace: 'shared' }, spec: { hosts, location: 'MESH_EXTERNAL', resolution: 'STATIC', ports: [{ number: 443, name: 'https', protocol: 'TLS' }], endpoints: [{ address: '203.0.113.9' }] } });
    const judged = (kind: Kind, object: object, who = LAB_B) => answer(kind, who, { operation: 'CREATE', object: object as KubeObject, oldObject: null }).found;
    assert.match(judged('HTTPProxy', proxy('Run-7.alpha.sandboxes.example.com')), /^\[route\.hostnames\] spec\.virtualhost\.fqdn: Run-7\.alpha\.sandboxes\.example\.com is environment alpha's hostname .*: Contour would send the requests for it to this HTTPProxy's routes, and those of the proxies it includes; name a hostname of this environment's own$/);
    assert.match(judged('HTTPProxy', proxy('*.sandboxes.example.com')), /spec\.virtualhost\.fqdn: \*\.sandboxes\.example\.com is environment alpha's hostname/);
    assert.match(judged('VirtualService', virtualService(['web', 'alpha.example.org'])), /spec\.hosts\[1\]: alpha\.example\.org is environment alpha's hostname .*Istio's gateways and sidecars would send the requests for it that this VirtualService matches to its destinations/);
    assert.match(judged('VirtualService', virtualService(['*'])), /spec\.hosts\[0\]: \* is environment alpha's hostname/);
    assert.equal(judged('ServiceEntry', { ...entry(['run-7.alpha.sandboxes.example.com']), spec: { hosts: ['run-7.alpha.sandboxes.example.com'], location: 'MESH_EXTERNAL', resolution: 'DNS', ports: [{ number: 443, name: 'https', protocol: 'TLS' }] } }), '', "beta's pods may call alpha's name through a mesh that allows only known hosts");
    // Beta's own names, mesh-internal short names and an HTTPProxy with no virtual host (included by a root) pass; alpha's own too.
    assert.equal(judged('VirtualService', virtualService(['web', 'web.shared.svc.cluster.local', 'beta.example.net'])), '');
    assert.equal(judged('HTTPProxy', { ...proxy('x'), spec: { routes: [] } }), '');
    assert.equal(judged('VirtualService', virtualService(['*', 'run-7.alpha.sandboxes.example.com']), RUNNER_A), '', "alpha's own");
    assert.ok(hostnamesOverlap('*', 'alpha.example.org') && hostnamesOverlap('*.alpha.sandboxes.example.com', '*'));
  });

  test("the ACME Order cert-manager makes for a CertificateRequest is judged as the request's environment's: for beta's request naming alpha's hostname refused (the names stand in its CSR, which nothing reads), for alpha's, for a Certificate's request of beta's own names and for the platform's passes (reviewer-102 F2)", () => {
    const CERT_MANAGER = sa('cert-manager', 'cert-manager');
    const policy: ConfigInput = { ...POLICY, workloadControllers: { users: [CERT_MANAGER.username] } };
    const request = (name: string, uid: string) => ({ apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', name, uid, controller: true, blockOwnerDeletion: true });
    const order = (owner: ReturnType<typeof request>, dnsNames: string[]): KubeObject => ({ apiVersion: 'acme.cert-manager.io/v1', kind: 'Order', metadata: { name: `${owner.name}-1`, namespace: 'shared', ownerReferences: [owner] }, spec: { request: 'LS0t', issuerRef: { name: 'acme' }, dnsNames } }) as unknown as KubeObject;
    const world: ObjectLookup = {
      readers: () => ({ state: 'known', readers: [] }),
      get: (resource, _namespace, name) => {
        const stamped = (kind: string, env: string, uid: string, controller?: { apiVersion: string; kind: string; name: string; uid: string }): Lookup => ({ state: 'found', metadata: { ...stampedMetadata(kind, env, 'shared').metadata, uid }, ...(controller ? { controller } : {}) });
        if (resource === 'certificaterequests' && name === 'beta-req') return stamped('CertificateRequest', 'beta', 'cr-b');
        if (resource === 'certificaterequests' && name === 'alpha-req') return stamped('CertificateRequest', 'alpha', 'cr-a');
        // A request cert-manager made for beta's Certificate (unstamped): of the Certificate's environment.
        if (resource === 'certificaterequests' && name === 'web-1') return { state: 'found', metadata: { uid: 'cr-w' }, controller: { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'web', uid: 'cert-w' } };
        if (resource === 'certificates' && name === 'web') return stamped('Certificate', 'beta', 'cert-w');
        // The platform's request, of no environment.
        if (resource === 'certificaterequests' && name === 'platform-req') return { state: 'found', metadata: { uid: 'cr-p' } };
        return { state: 'absent' };
      },
    };
    const made = (owner: ReturnType<typeof request>, dnsNames: string[]) => answer('Order', CERT_MANAGER, { operation: 'CREATE', object: order(owner, dnsNames), oldObject: null }, policy, world).found;
    assert.match(made(request('beta-req', 'cr-b'), ['beta.example.net', 'run-7.alpha.sandboxes.example.com']), /^\[route\.hostnames\] spec\.dnsNames\[1\]: run-7\.alpha\.sandboxes\.example\.com is environment alpha's hostname \(\*\.alpha\.sandboxes\.example\.com\), and system:serviceaccount:cert-manager:cert-manager does not act for it: cert-manager would have the ACME CA issue a certificate for it to the Order's account; name a hostname of this environment's own$/);
    assert.equal(made(request('alpha-req', 'cr-a'), ['run-7.alpha.sandboxes.example.com']), '');
    assert.equal(made(request('web-1', 'cr-w'), ['beta.example.net']), '');
    assert.match(made(request('web-1', 'cr-w'), ['alpha.example.org']), /alpha\.example\.org is environment alpha's hostname/);
    assert.equal(made(request('platform-req', 'cr-p'), ['run-7.alpha.sandboxes.example.com']), '', "the platform's, as outside the review scope");
  });

  test("an Ingress stored before, idle under a class no controller serves, that an UPDATE of its class annotation alone puts on the shared controller is judged as a change of spec (reviewer-102 F5)", () => {
    const idle = named('Ingress', ['run-7.alpha.sandboxes.example.com']);
    const classed = (cls: string) => ({ ...idle, metadata: { ...idle.metadata, annotations: { 'kubernetes.io/ingress.class': cls } } });
    assert.match(answer('Ingress', LAB_B, { operation: 'UPDATE', object: classed('shared'), oldObject: classed('parked') }).found, /run-7\.alpha\.sandboxes\.example\.com is environment alpha's/);
    assert.match(answer('Ingress', LAB_B, { operation: 'UPDATE', object: classed('shared'), oldObject: idle }).found, /is environment alpha's/);
    assert.equal(answer('Ingress', LAB_B, { operation: 'UPDATE', object: { ...classed('parked'), metadata: { ...classed('parked').metadata, labels: { team: 'b' } } }, oldObject: classed('parked') }).found, '');
    // Contour's own class annotation too (reviewer-103 F3).
    const contour = (cls: string) => ({ ...idle, metadata: { ...idle.metadata, annotations: { 'projectcontour.io/ingress.class': cls } } });
    assert.match(answer('Ingress', LAB_B, { operation: 'UPDATE', object: contour('contour'), oldObject: contour('parked') }).found, /is environment alpha's/);
  });

  test('without declared hostnames nothing is judged; in warn mode the route passes with a warning', () => {
    const bare: ConfigInput = { ...POLICY, environments: POLICY.environments!.map((e) => ({ ...e, hostnames: [] })) };
    assert.equal(refusal(create('HTTPRoute', LAB_B, ['run-7.alpha.sandboxes.example.com'], bare)), '');
    const warned = create('HTTPRoute', LAB_B, ['run-7.alpha.sandboxes.example.com'], { ...POLICY, rules: { 'route.hostnames': 'warn' } });
    assert.ok(warned.warnings.some((w) => w.includes('route.hostnames')), JSON.stringify(warned.warnings));
  });

  test("a route that names no hostname takes its listeners': it may on a Gateway of its writer's environment, or one not there yet, not on the platform's or another environment's, nor one that cannot be read (reviewer-101 F2)", () => {
    const gatewayIs = (state: Lookup): ObjectLookup => ({ get: (resource, namespace, name) => (resource === 'gateways' && namespace === 'infra' && name === 'shared' ? state : { state: 'absent' }), readers: () => ({ state: 'known', readers: [] }) });
    const hostless = (who: UserInfo, state: Lookup) => answer('HTTPRoute', who, { operation: 'CREATE', object: named('HTTPRoute', []), oldObject: null }, POLICY, gatewayIs(state)).found;
    const platform: Lookup = { state: 'found', metadata: { uid: 'gw' } };
    assert.match(hostless(LAB_B, platform), /^\[route\.hostnames\] spec\.hostnames: this HTTPRoute names no hostnames, so it takes every hostname of the listeners of Gateway infra\/shared it attaches to \(spec\.parentRefs\[0\]\): its listeners are the platform's \(or no environment's\), and may be for another environment's hostnames; name the hostnames this route serves, of this environment's own$/);
    assert.match(hostless(LAB_B, { state: 'found', metadata: { ...stampedMetadata('Gateway', 'alpha', 'infra').metadata, uid: 'gw' } }), /its listeners are environment alpha's/);
    assert.match(hostless(LAB_B, { state: 'unknown', reason: 'the API server did not answer' }), /whose listeners they are cannot be told \(the API server did not answer\)/);
    assert.equal(hostless(LAB_B, { state: 'found', metadata: { ...stampedMetadata('Gateway', 'beta', 'infra').metadata, uid: 'gw' } }), '');
    assert.equal(hostless(LAB_B, { state: 'absent' }), '');
    // Alpha's own runner, on alpha's Gateway; the platform on its own.
    assert.equal(hostless(RUNNER_A, { state: 'found', metadata: { ...stampedMetadata('Gateway', 'alpha', 'infra').metadata, uid: 'gw' } }), '');
    assert.equal(hostless(sa('platform', 'deployer'), platform), '');
    // A mesh route (its parent a Service) attaches to no listener.
    const mesh = { ...named('HTTPRoute', []), spec: { parentRefs: [{ group: '', kind: 'Service', name: 'web' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] } };
    assert.equal(answer('HTTPRoute', LAB_B, { operation: 'CREATE', object: mesh, oldObject: null }, POLICY, gatewayIs(platform)).found, '');
    // Without declared hostnames, not judged.
    const bare: ConfigInput = { ...POLICY, environments: POLICY.environments!.map((e) => ({ ...e, hostnames: [] })) };
    assert.equal(answer('HTTPRoute', LAB_B, { operation: 'CREATE', object: named('HTTPRoute', []), oldObject: null }, bare, gatewayIs(platform)).found, '');
  });

  test('an UPDATE that removes a route\'s last hostname, or moves a hostless route to other parents, is judged so, and its parents are read; one that keeps it hostless where it was is not', () => {
    const platform: ObjectLookup = { get: (resource) => (resource === 'gateways' ? { state: 'found', metadata: { uid: 'gw' } } : { state: 'absent' }), readers: () => ({ state: 'known', readers: [] }) };
    const updated = (before: KubeObject, after: KubeObject) => ({ operation: 'UPDATE', object: after, oldObject: before });
    const other = { ...named('HTTPRoute', []), spec: { ...named('HTTPRoute', []).spec, parentRefs: [{ name: 'other', namespace: 'infra' }] } };
    assert.match(answer('HTTPRoute', LAB_B, updated(named('HTTPRoute', ['beta.example.net']), named('HTTPRoute', [])), POLICY, platform).found, /names no hostnames/);
    assert.match(answer('HTTPRoute', LAB_B, updated(named('HTTPRoute', []), other), POLICY, platform).found, /listeners of Gateway infra\/other/);
    assert.equal(answer('HTTPRoute', LAB_B, updated(named('HTTPRoute', []), { ...named('HTTPRoute', []), metadata: { ...named('HTTPRoute', []).metadata, labels: { a: 'b' } } }), POLICY, platform).found, '');
    // The read plan reads the parents of the route that comes to name none.
    const body: Review = fixture('validate-create-pod-by-runner.json');
    body.request = { ...body.request, kind: { group: G, version: 'v1', kind: 'HTTPRoute' }, resource: { group: G, version: 'v1', resource: 'httproutes' }, requestKind: undefined, requestResource: undefined, name: 'front', namespace: 'shared', userInfo: LAB_B, subResource: undefined, operation: 'UPDATE', object: named('HTTPRoute', []), oldObject: named('HTTPRoute', ['beta.example.net']) };
    assert.ok(planLookups(body, 'validate', FIXTURE_KEYS).lookups.some((k) => k.resource === 'gateways' && k.namespace === 'infra' && k.name === 'shared'));
  });

  test("external-dns's hostname annotations on beta's Service, Ingress, route or UDPRoute publish a DNS record for alpha's name pointing at beta's addresses: refused, read as external-dns reads them (spaces dropped, a trailing dot trimmed, either prefix), and an UPDATE that adds one is judged (reviewer-101 F3)", () => {
    const DNS = 'external-dns.alpha.kubernetes.io/hostname';
    const annotated = (kind: Kind, annotations: Record<string, string>, base: KubeObject = kind === 'Service' ? ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'front', namespace: 'shared' }, spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 443 }] } } as KubeObject) : named(kind, ['beta.example.net'])) => ({ ...base, metadata: { ...base.metadata, annotations } }) as KubeObject;
    const judged = (kind: Kind, annotations: Record<string, string>, who = LAB_B) => answer(kind, who, { operation: 'CREATE', object: annotated(kind, annotations), oldObject: null }).found;
    const follower = "external-dns would point the name's DNS record at this object's addresses; name a hostname of this environment's own";
    assert.equal(judged('Service', { [DNS]: 'beta.example.net, Run-7.alpha.sandboxes.example.com.' }), `[route.hostnames] metadata.annotations["${DNS}"]: Run-7.alpha.sandboxes.example.com is environment alpha's hostname (*.alpha.sandboxes.example.com), and system:serviceaccount:sandbox-b:lab does not act for it: ${follower}`);
    assert.match(judged('Service', { 'external-dns.kubernetes.io/internal-hostname': 'alpha. example.org' }), /metadata\.annotations\["external-dns\.kubernetes\.io\/internal-hostname"\]: alpha\.example\.org is environment alpha's hostname \(alpha\.example\.org\)/);
    assert.match(judged('Ingress', { 'external-dns.kubernetes.io/hostname': '*.sandboxes.example.com' }), /metadata\.annotations\["external-dns\.kubernetes\.io\/hostname"\]: \*\.sandboxes\.example\.com is environment alpha's hostname .*external-dns would point/);
    assert.match(judged('HTTPRoute', { [DNS]: 'alpha.example.org' }), /external-dns would point/);
    assert.match(judged('UDPRoute', { [DNS]: 'x.alpha.sandboxes.example.com' }), /external-dns would point/);
    // Beta's own names, other annotations, and alpha's own Service pass.
    assert.equal(judged('Service', { [DNS]: 'beta.example.net,,api.beta.example.net' }), '');
    assert.equal(judged('Service', { 'example.com/hostname': 'alpha.example.org' }), '');
    assert.equal(judged('Service', { [DNS]: 'alpha.example.org' }, RUNNER_A), '');
    // external-dns's DNSEndpoint writes its records as listed, a name's trailing dot the same name.
    const endpoint = (dnsName: string): KubeObject => ({ apiVersion: 'externaldns.k8s.io/v1alpha1', kind: 'DNSEndpoint', metadata: { name: 'front', namespace: 'shared' }, spec: { endpoints: [{ dnsName: 'beta.example.net', recordType: 'A', targets: ['203.0.113.9'] }, { dnsName, recordType: 'A', targets: ['203.0.113.9'] }] } }) as KubeObject;
    assert.match(answer('DNSEndpoint', LAB_B, { operation: 'CREATE', object: endpoint('Alpha.Example.ORG.'), oldObject: null }).found, /^\[route\.hostnames\] spec\.endpoints\[1\]\.dnsName: Alpha\.Example\.ORG is environment alpha's hostname \(alpha\.example\.org\), .*: external-dns would write the DNS record this DNSEndpoint lists for it, pointing at the targets it names;/);
    assert.equal(answer('DNSEndpoint', LAB_B, { operation: 'CREATE', object: endpoint('api.beta.example.net.'), oldObject: null }).found, '');
    // An UPDATE that changes only the annotation publishes a name: judged; one that keeps it (a label) is not.
    const before = annotated('Service', {});
    assert.match(answer('Service', LAB_B, { operation: 'UPDATE', object: annotated('Service', { [DNS]: 'alpha.example.org' }), oldObject: before }).found, /alpha\.example\.org is environment alpha's/);
    const kept = annotated('Service', { [DNS]: 'alpha.example.org' });
    assert.equal(answer('Service', LAB_B, { operation: 'UPDATE', object: { ...kept, metadata: { ...kept.metadata, labels: { a: 'b' } } }, oldObject: kept }).found, '');
    // A route whose spec names no hostname takes its listeners' whatever its annotations publish.
    const platform: ObjectLookup = { get: (resource) => (resource === 'gateways' ? { state: 'found', metadata: { uid: 'gw' } } : { state: 'absent' }), readers: () => ({ state: 'known', readers: [] }) };
    assert.match(answer('HTTPRoute', LAB_B, { operation: 'CREATE', object: annotated('HTTPRoute', { [DNS]: 'beta.example.net' }, named('HTTPRoute', [])), oldObject: null }, POLICY, platform).found, /this HTTPRoute names no hostnames, so it takes every hostname of the listeners/);
  });

  test("a hostname moved from an Ingress's TLS hosts (which route nothing) to a rule's host is judged as added (reviewer-101 F5)", () => {
    const tlsOnly = { ...named('Ingress', []), spec: { tls: [{ hosts: ['run-7.alpha.sandboxes.example.com'], secretName: 'c' }] } };
    const ruled = { ...named('Ingress', ['run-7.alpha.sandboxes.example.com']), spec: { ...named('Ingress', ['run-7.alpha.sandboxes.example.com']).spec, tls: [{ hosts: ['run-7.alpha.sandboxes.example.com'], secretName: 'c' }] } };
    assert.match(answer('Ingress', LAB_B, { operation: 'UPDATE', object: ruled, oldObject: tlsOnly }).found, /spec\.rules\[0\]\.host: run-7\.alpha\.sandboxes\.example\.com is environment alpha's/);
  });

  test('hostnames overlap as the controllers match them: equal, under a wildcard, or wildcards one within the other', () => {
    const cases: Array<[string, string, boolean]> = [
      ['a.example.com', 'A.EXAMPLE.COM', true],
      ['a.example.com', '*.example.com', true],
      ['x.a.example.com', '*.example.com', true],
      ['example.com', '*.example.com', false],
      ['*.a.example.com', '*.example.com', true],
      ['*.example.com', 'a.example.com', true],
      ['*.example.com', '*.example.org', false],
      ['bexample.com', '*.example.com', false],
      ['a.example.com', 'b.example.com', false],
    ];
    for (const [a, b, overlap] of cases) {
      assert.equal(hostnamesOverlap(a, b), overlap, `${a} ${b}`);
      assert.equal(hostnamesOverlap(b, a), overlap, `${b} ${a}`);
    }
  });

  test('a policy where two environments declare overlapping hostnames, or a malformed one, is refused when loaded', () => {
    const text = (alpha: string, beta: string) => `environments:\n  - id: alpha\n    serviceAccounts: ["a:runner"]\n    hostnames: ["${alpha}"]\n  - id: beta\n    serviceAccounts: ["b:runner"]\n    hostnames: ["${beta}"]\n`;
    assert.throws(() => parseConfigText(text('*.sandboxes.example.com', 'run.beta.sandboxes.example.com')), /environments\.1\.hostnames\.0.*overlaps environment "alpha"'s hostnames/s);
    assert.throws(() => parseConfigText(text('*.alpha.example.com', 'Bad_Host')), /must be a lower-case hostname/);
    assert.doesNotThrow(() => parseConfigText(text('*.alpha.example.com', '*.beta.example.com')));
  });
});

describe("names Istio and external-dns read as alpha's (reviewer-105)", () => {
  test("F1: external-dns trims the whitespace around the whole annotation value (Go's strings.TrimSpace), so a newline, tab, no-break space or U+0085 around alpha's name is alpha's name", () => {
    const DNS = 'external-dns.alpha.kubernetes.io/hostname';
    const svc = (value: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'front', namespace: 'shared', annotations: { [DNS]: value } }, spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 443 }] } }) as KubeObject;
    // The YAML block scalar `hostname: |` gives the trailing newline on its own.
    for (const value of ['alpha.example.org\n', '\talpha.example.org', 'alpha.example.org\r\n', '\u00a0run-7.alpha.sandboxes.example.com', 'beta.example.net,run-7.alpha.sandboxes.example.com\n', 'alpha.example.org\u0085'])
      assert.match(answer('Service', LAB_B, { operation: 'CREATE', object: svc(value), oldObject: null }).found, /route\.hostnames/, JSON.stringify(value));
    assert.equal(answer('Service', LAB_B, { operation: 'CREATE', object: svc('beta.example.net\n'), oldObject: null }).found, '');
  });

  test("F2: an Istio host's first label may be `*` and label characters (`*lpha.example.org`); Istio and Envoy match it as a suffix, so it takes alpha's names", () => {
    const vs = (hosts: string[]) => ({ apiVersion: 'networking.istio.io/v1beta1', kind: 'VirtualService', metadata: { name: 'front', namespace: 'shared' }, spec: { hosts, gateways: ['istio-system/shared'], http: [{ route: [{ destination: { host: 'web' } }] }] } }) as KubeObject;
    for (const host of ['*lpha.example.org', '*alpha.sandboxes.example.com', '*s.example.com', '*-7.alpha.sandboxes.example.com'])
      assert.match(answer('VirtualService', LAB_B, { operation: 'CREATE', object: vs([host]), oldObject: null }).found, /route\.hostnames/, host);
    assert.equal(answer('VirtualService', LAB_B, { operation: 'CREATE', object: vs(['*beta.example.net']), oldObject: null }).found, '');
    assert.equal(hostnamesOverlap('*lpha.example.org', 'alpha.example.org'), true);
    assert.equal(hostnamesOverlap('*lpha.sandboxes.example.com', '*.alpha.sandboxes.example.com'), true);
  });

  test("F4: a Service's status write that adds an external-dns hostname (its status strategy keeps metadata) is judged; one that keeps its annotations is not", () => {
    const DNS = 'external-dns.kubernetes.io/hostname';
    const svc = (annotations: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'front', namespace: 'shared', annotations }, spec: { type: 'LoadBalancer', ports: [{ port: 443 }] } }) as KubeObject;
    assert.match(answer('Service', LAB_B, { operation: 'UPDATE', subResource: 'status', object: svc({ [DNS]: 'alpha.example.org' }), oldObject: svc() }).found, /alpha\.example\.org is environment alpha's hostname/);
    assert.equal(answer('Service', LAB_B, { operation: 'UPDATE', subResource: 'status', object: { ...svc({ [DNS]: 'alpha.example.org' }), status: { loadBalancer: {} } } as KubeObject, oldObject: svc({ [DNS]: 'alpha.example.org' }) }).found, '');
  });
});

describe("what takes a declared name without naming it (reviewer-106, reviewer-107)", () => {
  test("F1: beta's Ingress stored before alpha declared its hostname, given cert-manager's issuer annotation alone (the ingress-shim then has the name certified, whatever the class), is judged as a change of what serves", () => {
    const stored = { ...named('Ingress', []), spec: { tls: [{ hosts: ['run-7.alpha.sandboxes.example.com'], secretName: 'front-tls' }] } };
    for (const annotations of [{ 'cert-manager.io/issuer': 'beta-acme' }, { 'cert-manager.io/cluster-issuer': 'letsencrypt' }, { 'kubernetes.io/tls-acme': 'true' }])
      assert.match(answer('Ingress', LAB_B, { operation: 'UPDATE', object: { ...stored, metadata: { ...stored.metadata, annotations } }, oldObject: stored }).found, /run-7\.alpha\.sandboxes\.example\.com is environment alpha's hostname/, JSON.stringify(annotations));
  });

  test("F2: a DNSEndpoint's NS record at or above a declared name delegates it, and a record at _acme-challenge of one (a CNAME into beta's zone, a TXT) answers an ACME CA's DNS-01 challenge for it: refused; beta's own are not", () => {
    const endpoint = (dnsName: string, recordType: string, targets: string[]): KubeObject => ({ apiVersion: 'externaldns.k8s.io/v1alpha1', kind: 'DNSEndpoint', metadata: { name: 'front', namespace: 'shared' }, spec: { endpoints: [{ dnsName, recordType, targets }] } }) as KubeObject;
    const made = (o: KubeObject) => answer('DNSEndpoint', LAB_B, { operation: 'CREATE', object: o, oldObject: null }).found;
    assert.match(made(endpoint('alpha.sandboxes.example.com', 'NS', ['ns1.beta.example.net'])), /spec\.endpoints\[0\]\.dnsName: \*\.alpha\.sandboxes\.example\.com is environment alpha's hostname/);
    assert.match(made(endpoint('example.org.', 'NS', ['ns1.beta.example.net'])), /is environment alpha's hostname \(alpha\.example\.org\)/);
    assert.match(made(endpoint('_acme-challenge.alpha.example.org', 'CNAME', ['_acme-challenge.beta-owned.example.net'])), /spec\.endpoints\[0\]\.dnsName: alpha\.example\.org is environment alpha's hostname/);
    assert.match(made(endpoint('_ACME-Challenge.alpha.example.org.', 'TXT', ['"digest"'])), /alpha\.example\.org is environment alpha's hostname/);
    assert.equal(made(endpoint('example.org', 'A', ['203.0.113.9'])), '', "an A record at the apex takes none of alpha's names");
    assert.equal(made(endpoint('_acme-challenge.beta.example.net', 'CNAME', ['x.beta.example.net'])), '');
    // The challenge for a wildcard *.D stands at _acme-challenge.D too (RFC 8555): the base of alpha's wildcard (reviewer-107 F2).
    assert.match(made(endpoint('_acme-challenge.alpha.sandboxes.example.com', 'CNAME', ['x.beta.example.net'])), /spec\.endpoints\[0\]\.dnsName: \*\.alpha\.sandboxes\.example\.com is environment alpha's hostname/);
    // external-dns's annotations too (an ExternalName Service is a CNAME).
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'front', namespace: 'shared', annotations: { 'external-dns.alpha.kubernetes.io/hostname': '_acme-challenge.alpha.example.org' } }, spec: { type: 'ExternalName', externalName: 'x.beta.example.net' } } as KubeObject;
    assert.match(answer('Service', LAB_B, { operation: 'CREATE', object: svc, oldObject: null }).found, /alpha\.example\.org is environment alpha's hostname/);
    const wildcardBase = { ...svc, metadata: { ...svc.metadata, annotations: { 'external-dns.alpha.kubernetes.io/hostname': '_acme-challenge.alpha.sandboxes.example.com' } } } as KubeObject;
    assert.match(answer('Service', LAB_B, { operation: 'CREATE', object: wildcardBase, oldObject: null }).found, /\*\.alpha\.sandboxes\.example\.com is environment alpha's hostname/);
  });
});
