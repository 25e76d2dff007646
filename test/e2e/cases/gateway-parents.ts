// A route's or ListenerSet's parent Gateway named from another namespace (`namespace:`; the
// Gateway's own allowedRoutes and allowedListeners consent) is held for it as one in its own
// namespace is (reviewer 98, F1): once alpha deleted its Gateway in a namespace alpha and beta
// share, beta's Gateway under the name (taking routes from every namespace) would serve alpha's
// route, or alpha's listeners with alpha's certificate and key. The CREATE of a Gateway lists
// the routes and ListenerSets across the cluster where its listeners (its allowedListeners)
// take them from every namespace (kinds.ts `followsAcrossNamespaces`, referrers.ts
// admittedAcross), and an UPDATE that has them do so lists what it newly takes. A route's
// backend Service in another namespace, which a ReferenceGrant there admits, is held likewise:
// a Service's CREATE lists the routes of the namespaces its namespace's grants admit
// (`followsByGrant`).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Identity } from '../client.js';
import { createdOrThere as ok, eventually, namespaceAdmins, optedInNamespace, PATHS, refusedBy as refused, secret, standInCrd } from '../objects.js';
import type { Suite } from '../suite.js';

const G = 'gateway.networking.k8s.io';
const FRONT = 'gw-front'; // where the routes and ListenerSets stand (alpha and beta share it)
const EDGE = 'gw-edge'; // where the Gateways and Services they name stand (shared too)
const ROUTES = (ns: string) => `/apis/${G}/v1/namespaces/${ns}/httproutes`;
const GATEWAYS = (ns: string) => `/apis/${G}/v1/namespaces/${ns}/gateways`;
const LISTENER_SETS = (ns: string) => `/apis/${G}/v1/namespaces/${ns}/listenersets`;
const SERVICES = (ns: string) => `/api/v1/namespaces/${ns}/services`;
const CONFIG_MAPS = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const GRANTS = (ns: string) => `/apis/${G}/v1/namespaces/${ns}/referencegrants`;
const INFRA = 'gw-infra';
const PROXIES = (ns: string) => `/apis/projectcontour.io/v1/namespaces/${ns}/httpproxies`;
const VIRTUAL_SERVICES = (ns: string) => `/apis/networking.istio.io/v1/namespaces/${ns}/virtualservices`;
/** Contour's HTTPProxy and Istio's VirtualService for `hosts` on the shared proxy, sending /login to beta's Service. */
const proxy = (name: string, fqdn: string) => ({ apiVersion: 'projectcontour.io/v1', kind: 'HTTPProxy', metadata: { name }, spec: { virtualhost: { fqdn }, routes: [{ conditions: [{ prefix: '/login' }], services: [{ name: 'beta-web', port: 80 }] }] } });
const virtualService = (name: string, hosts: string[]) => ({ apiVersion: 'networking.istio.io/v1', kind: 'VirtualService', metadata: { name }, spec: { hosts, gateways: ['istio-system/shared'], http: [{ match: [{ uri: { prefix: '/login' } }], route: [{ destination: { host: 'beta-web' } }] }] } });
const crd = (plural: string, kind: string) => standInCrd({ group: G, version: 'v1', plural, kind, approval: 'https://github.com/kubernetes-sigs/gateway-api/pull/2466' });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;
const service = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], selector: { app: name } } });
/** A Gateway taking routes and ListenerSets from every namespace. */
const gateway = (name: string) => ({
  apiVersion: `${G}/v1`,
  kind: 'Gateway',
  metadata: { name },
  spec: { gatewayClassName: 'shared', allowedListeners: { namespaces: { from: 'All' } }, listeners: [{ name: 'http', protocol: 'HTTP', port: 80, hostname: `${name}.example.com`, allowedRoutes: { namespaces: { from: 'All' } } }] },
});
const route = (name: string, parentRefs: Any[], backendRefs: Any[]) => ({
  apiVersion: `${G}/v1`,
  kind: 'HTTPRoute',
  metadata: { name },
  spec: { parentRefs, hostnames: [`${name}.alpha.example.com`], rules: [{ backendRefs: backendRefs.map((b) => ({ port: 80, ...b })) }] },
});

export function gatewayParentCases(suite: () => Suite): void {
  describe('what a route or ListenerSet names in another namespace is held for it: its parent Gateway, a backend Service a ReferenceGrant admits', () => {
    let alpha: Identity;
    let beta: Identity;
    before(async () => {
      const s = suite();
      for (const ns of [FRONT, EDGE]) await optedInNamespace(s, ns);
      // The platform's namespace, outside the review scope, where its shared Gateway stands.
      ok('infra namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: INFRA } }));
      for (const [plural, kind] of [['httproutes', 'HTTPRoute'], ['gateways', 'Gateway'], ['listenersets', 'ListenerSet'], ['referencegrants', 'ReferenceGrant'], ['backendtlspolicies', 'BackendTLSPolicy']] as const) ok(`CRD ${plural}`, await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd(plural, kind)));
      ok('CRD httpproxies', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: 'projectcontour.io', version: 'v1', plural: 'httpproxies', kind: 'HTTPProxy' })));
      ok('CRD dnsendpoints', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: 'externaldns.k8s.io', version: 'v1alpha1', plural: 'dnsendpoints', kind: 'DNSEndpoint', approval: 'https://github.com/kubernetes-sigs/external-dns/pull/2007' })));
      ok('CRD virtualservices', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: 'networking.istio.io', version: 'v1', plural: 'virtualservices', kind: 'VirtualService' })));
      alpha = s.runnerA.identity;
      beta = await s.newIdentity('sandbox-b', 'gw-parents-admin');
      for (const ns of [FRONT, EDGE]) await namespaceAdmins(s, ns, 'gw-parents-admins', [['sandbox-a', 'runner'], ['sandbox-b', 'gw-parents-admin']]);
      await eventually('the Gateway API kinds are served', async () => (await s.api(s.admin, 'GET', ROUTES(FRONT))).status === 200 && (await s.api(s.admin, 'GET', GATEWAYS(EDGE))).status === 200 && (await s.api(s.admin, 'GET', LISTENER_SETS(FRONT))).status === 200 && (await s.api(s.admin, 'GET', GRANTS(EDGE))).status === 200);
      await eventually("Contour's and Istio's kinds are served", async () => (await s.api(s.admin, 'GET', PROXIES(FRONT))).status === 200 && (await s.api(s.admin, 'GET', VIRTUAL_SERVICES(FRONT))).status === 200);
      for (const who of [alpha, beta]) for (const ns of [FRONT, EDGE]) await eventually(`RBAC for ${who.name} in ${ns}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${GATEWAYS(ns)}?dryRun=All`, gateway('rbac-probe'))).text));
    });

    test("once alpha deletes its Gateway that alpha's route in another namespace attaches to, beta's Gateway under the name is refused (it would serve alpha's route)", async () => {
      const s = suite();
      ok("alpha's Gateway", await s.api(alpha, 'POST', GATEWAYS(EDGE), gateway('alpha-x')));
      ok("alpha's Service", await s.api(alpha, 'POST', SERVICES(FRONT), service('alpha-web')));
      const stored = await s.api(alpha, 'POST', ROUTES(FRONT), route('alpha-x', [{ name: 'alpha-x', namespace: EDGE }], [{ name: 'alpha-web' }]));
      assert.equal(stored.status, 201, `alpha's cross-namespace route is stored: ${stored.text}`);
      assert.equal((await s.api(alpha, 'DELETE', `${GATEWAYS(EDGE)}/alpha-x`)).status, 200);
      const taken = await s.api(beta, 'POST', GATEWAYS(EDGE), gateway('alpha-x'));
      refused(taken, 'reference.live-reader', /HTTPRoute gw-front\/alpha-x of another environment \(or of none\) names Gateway alpha-x \(spec\.parentRefs\[0\]\), and once this one stands the gateway controller serves the route on the parent Gateway's listeners/);
      // Alpha's own, again, is stored.
      assert.equal((await s.api(alpha, 'POST', GATEWAYS(EDGE), gateway('alpha-x'))).status, 201);
    });

    test("once alpha deletes its Gateway that alpha's ListenerSet in another namespace (with alpha's certificate) attaches to, beta's Gateway under the name is refused", async () => {
      const s = suite();
      ok("alpha's Gateway", await s.api(alpha, 'POST', GATEWAYS(EDGE), gateway('alpha-y')));
      ok("alpha's TLS Secret", await s.api(alpha, 'POST', PATHS.Secret(FRONT), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-y-tls' }, type: 'Opaque', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } }));
      const set = { apiVersion: `${G}/v1`, kind: 'ListenerSet', metadata: { name: 'alpha-y-extra' }, spec: { parentRef: { name: 'alpha-y', namespace: EDGE }, listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: 'secure.alpha.example.com', tls: { mode: 'Terminate', certificateRefs: [{ name: 'alpha-y-tls' }] } }] } };
      const stored = await s.api(alpha, 'POST', LISTENER_SETS(FRONT), set);
      assert.equal(stored.status, 201, `alpha's ListenerSet on its Gateway across namespaces is stored: ${stored.text}`);
      assert.equal((await s.api(alpha, 'DELETE', `${GATEWAYS(EDGE)}/alpha-y`)).status, 200);
      const taken = await s.api(beta, 'POST', GATEWAYS(EDGE), gateway('alpha-y'));
      refused(taken, 'reference.live-reader', /ListenerSet gw-front\/alpha-y-extra of another environment \(or of none\) names Gateway alpha-y \(spec\.parentRef\), and once this one stands the gateway controller adds the set's listeners to the parent Gateway/);
    });

    test("a Gateway whose listeners take routes from its own namespace only is not held by alpha's route in another namespace that names it; beta's UPDATE that has them take routes from every namespace is refused, server-side apply and dry run too", async () => {
      const s = suite();
      ok("alpha's Gateway", await s.api(alpha, 'POST', GATEWAYS(EDGE), gateway('alpha-w')));
      ok("alpha's Service", await s.api(alpha, 'POST', SERVICES(FRONT), service('alpha-w-web')));
      ok("alpha's route on it", await s.api(alpha, 'POST', ROUTES(FRONT), route('alpha-w', [{ name: 'alpha-w', namespace: EDGE }], [{ name: 'alpha-w-web' }])));
      assert.equal((await s.api(alpha, 'DELETE', `${GATEWAYS(EDGE)}/alpha-w`)).status, 200);
      // Beta's Gateway under the name, taking only its own namespace's routes (the default): alpha's route in gw-front never attaches.
      const own = gateway('alpha-w');
      const listener = { ...own.spec.listeners[0]!, allowedRoutes: { namespaces: { from: 'Same' } } };
      const narrow = { ...own, spec: { gatewayClassName: 'shared', listeners: [listener] } };
      const stored = await s.api(beta, 'POST', GATEWAYS(EDGE), narrow);
      assert.equal(stored.status, 201, `beta's Gateway taking its own namespace's routes: ${stored.text}`);
      const wide = { ...narrow, spec: { ...narrow.spec, listeners: [{ ...listener, allowedRoutes: { namespaces: { from: 'All' } } }] } };
      const widened = /HTTPRoute gw-front\/alpha-w of another environment \(or of none\) names Gateway alpha-w \(spec\.parentRefs\[0\]\), and once this one admits its namespace the gateway controller serves the route on the parent Gateway's listeners.*: keep the listeners' allowedRoutes/;
      refused(await s.api(beta, 'PATCH', `${GATEWAYS(EDGE)}/alpha-w?dryRun=All`, { spec: { listeners: wide.spec.listeners } }, 'application/merge-patch+json'), 'reference.live-reader', widened);
      refused(await s.api(beta, 'PATCH', `${GATEWAYS(EDGE)}/alpha-w`, { spec: { listeners: wide.spec.listeners } }, 'application/merge-patch+json'), 'reference.live-reader', widened);
      refused(await s.api(beta, 'PATCH', `${GATEWAYS(EDGE)}/alpha-w?fieldManager=beta&force=true`, { apiVersion: wide.apiVersion, kind: wide.kind, metadata: { name: 'alpha-w' }, spec: wide.spec }, 'application/apply-patch+yaml'), 'reference.live-reader', widened);
      // Once alpha's route is gone, beta may widen its own Gateway.
      assert.equal((await s.api(alpha, 'DELETE', `${ROUTES(FRONT)}/alpha-w`)).status, 200);
      const after = await s.api(beta, 'PATCH', `${GATEWAYS(EDGE)}/alpha-w`, { spec: { listeners: wide.spec.listeners } }, 'application/merge-patch+json');
      assert.equal(after.status, 200, `beta widens its Gateway once no route of alpha's names it: ${after.text}`);
    });

    test("beta's Gateway asking for an address (Envoy Gateway's proxy Service external IP, Istio's Hostname binding to alpha's gateway Service) is refused, at CREATE, UPDATE, server-side apply and dry run; the administrator (break-glass) sets one", async () => {
      const s = suite();
      const withAddresses = (name: string, addresses: object[]) => ({ ...gateway(name), spec: { ...gateway(name).spec, addresses } });
      const ip = [{ type: 'IPAddress', value: '203.0.113.7' }];
      const hostname = [{ type: 'Hostname', value: `alpha-gw.${EDGE}.svc.cluster.local` }];
      const asks = /spec\.addresses: .* may not set spec\.addresses \["IPAddress:203\.0\.113\.7"\]: the gateway controller puts this Gateway on them .*CVE-2020-8554.*leave spec\.addresses out and let the controller assign one, or ask the platform/;
      refused(await s.api(beta, 'POST', GATEWAYS(EDGE), withAddresses('beta-addr', ip)), 'gateway.addresses', asks);
      refused(await s.api(beta, 'POST', `${GATEWAYS(EDGE)}?dryRun=All`, withAddresses('beta-addr', hostname)), 'gateway.addresses', /\["Hostname:alpha-gw\.gw-edge\.svc\.cluster\.local"\]/);
      ok("beta's Gateway without", await s.api(beta, 'POST', GATEWAYS(EDGE), gateway('beta-addr')));
      refused(await s.api(beta, 'PATCH', `${GATEWAYS(EDGE)}/beta-addr`, { spec: { addresses: ip } }, 'application/merge-patch+json'), 'gateway.addresses', asks);
      const applied = withAddresses('beta-addr', ip);
      refused(await s.api(beta, 'PATCH', `${GATEWAYS(EDGE)}/beta-addr?fieldManager=beta&force=true`, { apiVersion: applied.apiVersion, kind: applied.kind, metadata: { name: 'beta-addr' }, spec: applied.spec }, 'application/apply-patch+yaml'), 'gateway.addresses', asks);
      const admin = await s.api(s.admin, 'POST', GATEWAYS(EDGE), withAddresses('platform-edge', ip));
      assert.equal(admin.status, 201, `the administrator's Gateway with an address: ${admin.text}`);
    });

    test("beta's route, Ingress, ListenerSet, HTTPProxy, VirtualService or external-dns annotation naming a hostname alpha declares (*.alpha.sandboxes.test) is refused, at CREATE, UPDATE, server-side apply and dry run; alpha's passes", async () => {
      const s = suite();
      const host = 'run-1.alpha.sandboxes.test';
      const named = (name: string, hostnames: string[]) => ({ ...route(name, [{ name: 'public', namespace: INFRA }], [{ name: 'beta-web' }]), spec: { ...route(name, [{ name: 'public', namespace: INFRA }], [{ name: 'beta-web' }]).spec, hostnames } });
      const whose = /is environment alpha's hostname \(\*\.alpha\.sandboxes\.test\), and system:serviceaccount:sandbox-b:gw-parents-admin does not act for it: the gateway controller would send its requests that this route matches best to this route's backends; name a hostname of this environment's own/;
      ok("beta's Service", await s.api(beta, 'POST', SERVICES(FRONT), service('beta-web')));
      refused(await s.api(beta, 'POST', ROUTES(FRONT), named('beta-login', [host])), 'route.hostnames', whose);
      refused(await s.api(beta, 'POST', `${ROUTES(FRONT)}?dryRun=All`, named('beta-login', ['*.sandboxes.test'])), 'route.hostnames', /\*\.sandboxes\.test is environment alpha's hostname/);
      ok("beta's route on its own hostname", await s.api(beta, 'POST', ROUTES(FRONT), named('beta-login', ['beta-login.example.net'])));
      refused(await s.api(beta, 'PATCH', `${ROUTES(FRONT)}/beta-login`, { spec: { hostnames: ['beta-login.example.net', host] } }, 'application/merge-patch+json'), 'route.hostnames', whose);
      const applied = named('beta-login', [host]);
      refused(await s.api(beta, 'PATCH', `${ROUTES(FRONT)}/beta-login?fieldManager=beta&force=true`, { apiVersion: applied.apiVersion, kind: applied.kind, metadata: { name: 'beta-login' }, spec: applied.spec }, 'application/apply-patch+yaml'), 'route.hostnames', whose);
      const ingress = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'beta-login' }, spec: { rules: [{ host, http: { paths: [{ path: '/login', pathType: 'Prefix', backend: { service: { name: 'beta-web', port: { number: 80 } } } }] } }] } };
      refused(await s.api(beta, 'POST', `/apis/networking.k8s.io/v1/namespaces/${FRONT}/ingresses`, ingress), 'route.hostnames', /spec\.rules\[0\]\.host: run-1\.alpha\.sandboxes\.test is environment alpha's hostname/);
      const set = { apiVersion: `${G}/v1`, kind: 'ListenerSet', metadata: { name: 'beta-login' }, spec: { parentRef: { name: 'public', namespace: INFRA }, listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: host }] } };
      refused(await s.api(beta, 'POST', LISTENER_SETS(FRONT), set), 'route.hostnames', /spec\.listeners\[0\]\.hostname: run-1\.alpha\.sandboxes\.test is environment alpha's hostname/);
      // Contour's and Istio's own routing kinds (reviewer-101 F3); Istio's `*` host takes every name.
      refused(await s.api(beta, 'POST', PROXIES(FRONT), proxy('beta-login', host)), 'route.hostnames', /spec\.virtualhost\.fqdn: run-1\.alpha\.sandboxes\.test is environment alpha's hostname .*Contour would send the requests for it/);
      refused(await s.api(beta, 'POST', VIRTUAL_SERVICES(FRONT), virtualService('beta-login', ['beta-web', '*'])), 'route.hostnames', /spec\.hosts\[1\]: \* is environment alpha's hostname/);
      ok("beta's VirtualService on its own hostname", await s.api(beta, 'POST', VIRTUAL_SERVICES(FRONT), virtualService('beta-login', ['beta-web', 'beta-login.example.net'])));
      // external-dns publishes its annotations' names as DNS records pointing at the object's addresses, read as external-dns reads them.
      const published = (name: string, names: string) => ({ ...service(name), metadata: { name, annotations: { 'external-dns.alpha.kubernetes.io/hostname': names } }, spec: { type: 'LoadBalancer', ports: [{ port: 443 }], selector: { app: name } } });
      refused(await s.api(beta, 'POST', SERVICES(FRONT), published('beta-lb', 'beta-lb.example.net, Run-1.alpha .sandboxes.test.')), 'route.hostnames', /metadata\.annotations\["external-dns\.alpha\.kubernetes\.io\/hostname"\]: Run-1\.alpha\.sandboxes\.test is environment alpha's hostname .*external-dns would point the name's DNS record at this object's addresses/);
      ok("beta's Service publishing its own name", await s.api(beta, 'POST', SERVICES(FRONT), published('beta-lb', 'beta-lb.example.net')));
      await eventually('DNSEndpoints are served', async () => (await s.api(s.admin, 'GET', `/apis/externaldns.k8s.io/v1alpha1/namespaces/${FRONT}/dnsendpoints`)).status === 200);
      const endpoint = { apiVersion: 'externaldns.k8s.io/v1alpha1', kind: 'DNSEndpoint', metadata: { name: 'beta-records' }, spec: { endpoints: [{ dnsName: `${host}.`, recordType: 'A', targets: ['203.0.113.9'] }] } };
      refused(await s.api(beta, 'POST', `/apis/externaldns.k8s.io/v1alpha1/namespaces/${FRONT}/dnsendpoints`, endpoint), 'route.hostnames', /spec\.endpoints\[0\]\.dnsName: run-1\.alpha\.sandboxes\.test is environment alpha's hostname .*external-dns would write the DNS record/);
      refused(await s.api(beta, 'PATCH', `${SERVICES(FRONT)}/beta-lb`, { metadata: { annotations: { 'external-dns.kubernetes.io/hostname': host } } }, 'application/merge-patch+json'), 'route.hostnames', /metadata\.annotations\["external-dns\.kubernetes\.io\/hostname"\]: run-1\.alpha\.sandboxes\.test is environment alpha's hostname/);
      refused(await s.api(beta, 'PATCH', `${VIRTUAL_SERVICES(FRONT)}/beta-login`, { spec: { hosts: ['beta-web', host] } }, 'application/merge-patch+json'), 'route.hostnames', /spec\.hosts\[1\]: run-1\.alpha\.sandboxes\.test is environment alpha's hostname/);
      // A route that names no hostname takes its listeners': on the platform's Gateway, a listener for alpha's hostnames (reviewer-101 F2).
      const shared = { apiVersion: `${G}/v1`, kind: 'Gateway', metadata: { name: 'shared-hl' }, spec: { gatewayClassName: 'shared', listeners: [{ name: 'alpha', protocol: 'HTTP', port: 80, hostname: '*.alpha.sandboxes.test', allowedRoutes: { namespaces: { from: 'All' } } }] } };
      ok("the platform's Gateway", await s.api(s.admin, 'POST', GATEWAYS(INFRA), shared));
      const hostless = { ...named('beta-hostless', []), spec: { parentRefs: [{ name: 'shared-hl', namespace: INFRA, sectionName: 'alpha' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/login' } }], backendRefs: [{ name: 'beta-web', port: 80 }] }] } };
      refused(await s.api(beta, 'POST', ROUTES(FRONT), hostless), 'route.hostnames', /this HTTPRoute names no hostnames, so it takes every hostname of the listeners of Gateway gw-infra\/shared-hl it attaches to \(spec\.parentRefs\[0\]\): whose listeners they are cannot be told \(namespace gw-infra is outside the review scope/);
      // Alpha's own.
      ok("alpha's Service", await s.api(alpha, 'POST', SERVICES(FRONT), service('alpha-web-1')));
      const own = await s.api(alpha, 'POST', ROUTES(FRONT), { ...named('alpha-run-1', [host]), spec: { ...named('alpha-run-1', [host]).spec, rules: [{ backendRefs: [{ name: 'alpha-web-1', port: 80 }] }] } });
      assert.equal(own.status, 201, `alpha's route on its hostname: ${own.text}`);
    });

    test("beta's route, Ingress, ListenerSet, HTTPProxy, VirtualService or external-dns annotation naming alpha's hostname from a namespace of beta's own outside the review scope is refused in the API server (deed-hostnames), at CREATE, UPDATE, server-side apply and dry run; a kept spec and the platform's pass (reviewer-101 F1, F3)", async () => {
      const s = suite();
      const own = 'gw-beta-own';
      ok("beta's own namespace", await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: own } }));
      await namespaceAdmins(s, own, 'gw-beta-own-admins', [['sandbox-b', 'gw-parents-admin']]);
      await eventually(`RBAC for beta in ${own}`, async () => !/cannot create resource/.test((await s.api(beta, 'POST', `${ROUTES(own)}?dryRun=All`, route('rbac-probe', [], []))).text));
      // The platform's Gateway takes routes from every namespace on its listener for alpha's hostnames.
      const shared = { apiVersion: `${G}/v1`, kind: 'Gateway', metadata: { name: 'shared-own' }, spec: { gatewayClassName: 'shared', listeners: [{ name: 'alpha', protocol: 'HTTP', port: 80, hostname: '*.alpha.sandboxes.test', allowedRoutes: { namespaces: { from: 'All' } } }] } };
      ok("the platform's Gateway", await s.api(s.admin, 'POST', GATEWAYS(INFRA), shared));
      const host = 'run-2.alpha.sandboxes.test';
      const login = (name: string, hostnames: string[]) => ({ apiVersion: `${G}/v1`, kind: 'HTTPRoute', metadata: { name }, spec: { parentRefs: [{ name: 'shared-own', namespace: INFRA }], hostnames, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/login' } }], backendRefs: [{ name: 'beta-web', port: 80 }] }] } });
      const denied = (a: { status: number; text: string }, name: string, named: string) => {
        assert.equal(a.status, 403, a.text);
        assert.match(a.text, /ValidatingAdmissionPolicy 'deed-hostnames'/);
        assert.ok(a.text.includes(`${name}: ${named} is environment alpha's hostname, and this namespace is outside Deed's review scope`), a.text);
      };
      denied(await s.api(beta, 'POST', ROUTES(own), login('beta-login', [host])), `httproutes ${own}/beta-login`, '*.alpha.sandboxes.test');
      denied(await s.api(beta, 'POST', `${ROUTES(own)}?dryRun=All`, login('beta-login', ['*.sandboxes.test'])), `httproutes ${own}/beta-login`, '*.alpha.sandboxes.test');
      const applied = login('beta-login', [host]);
      denied(await s.api(beta, 'PATCH', `${ROUTES(own)}/beta-login?fieldManager=beta&force=true`, { apiVersion: applied.apiVersion, kind: applied.kind, metadata: { name: 'beta-login' }, spec: applied.spec }, 'application/apply-patch+yaml'), `httproutes ${own}/beta-login`, '*.alpha.sandboxes.test');
      ok("beta's route on its own hostname", await s.api(beta, 'POST', ROUTES(own), login('beta-login', ['beta-login.example.net'])));
      denied(await s.api(beta, 'PATCH', `${ROUTES(own)}/beta-login`, { spec: { hostnames: ['beta-login.example.net', host] } }, 'application/merge-patch+json'), `httproutes ${own}/beta-login`, '*.alpha.sandboxes.test');
      const ingress = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'beta-login' }, spec: { rules: [{ host, http: { paths: [{ path: '/login', pathType: 'Prefix', backend: { service: { name: 'beta-web', port: { number: 80 } } } }] } }] } };
      denied(await s.api(beta, 'POST', `/apis/networking.k8s.io/v1/namespaces/${own}/ingresses`, ingress), `ingresses ${own}/beta-login`, '*.alpha.sandboxes.test');
      const set = { apiVersion: `${G}/v1`, kind: 'ListenerSet', metadata: { name: 'beta-login' }, spec: { parentRef: { name: 'shared-own', namespace: INFRA }, listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: host }] } };
      denied(await s.api(beta, 'POST', LISTENER_SETS(own), set), `listenersets ${own}/beta-login`, '*.alpha.sandboxes.test');
      denied(await s.api(beta, 'POST', PROXIES(own), proxy('beta-login', host)), `httpproxies ${own}/beta-login`, '*.alpha.sandboxes.test');
      denied(await s.api(beta, 'POST', VIRTUAL_SERVICES(own), virtualService('beta-login', ['*'])), `virtualservices ${own}/beta-login`, '*.alpha.sandboxes.test');
      denied(await s.api(beta, 'POST', SERVICES(own), { ...service('beta-lb'), metadata: { name: 'beta-lb', annotations: { 'external-dns.kubernetes.io/hostname': 'login.alpha.sandboxes.test.' } } }), `services ${own}/beta-lb`, '*.alpha.sandboxes.test');
      ok("beta's Service publishing its own name", await s.api(beta, 'POST', SERVICES(own), { ...service('beta-lb'), metadata: { name: 'beta-lb', annotations: { 'external-dns.kubernetes.io/hostname': 'beta-lb.example.net' } } }));
      denied(await s.api(beta, 'PATCH', `${SERVICES(own)}/beta-lb`, { metadata: { annotations: { 'external-dns.kubernetes.io/hostname': 'beta-lb.example.net,alpha-lb.alpha.sandboxes.test' } } }, 'application/merge-patch+json'), `services ${own}/beta-lb`, '*.alpha.sandboxes.test');
      ok("beta's VirtualService for mesh-internal names", await s.api(beta, 'POST', VIRTUAL_SERVICES(own), { ...virtualService('beta-mesh', ['beta-web', `beta-web.${own}.svc.cluster.local`]), spec: { hosts: ['beta-web', `beta-web.${own}.svc.cluster.local`], http: [{ route: [{ destination: { host: 'beta-web' } }] }] } }));
      // The platform's (break-glass here) route stands; beta may label it (a kept spec) but not point it at beta's backend.
      ok("the platform's route", await s.api(s.admin, 'POST', ROUTES(own), login('platform-login', [host])));
      assert.equal((await s.api(beta, 'PATCH', `${ROUTES(own)}/platform-login`, { metadata: { labels: { team: 'beta' } } }, 'application/merge-patch+json')).status, 200);
      denied(await s.api(beta, 'PATCH', `${ROUTES(own)}/platform-login`, { spec: { rules: [{ backendRefs: [{ name: 'beta-api', port: 80 }] }] } }, 'application/merge-patch+json'), `httproutes ${own}/platform-login`, '*.alpha.sandboxes.test');
      assert.equal((await s.api(beta, 'DELETE', `${ROUTES(own)}/platform-login`)).status, 200, 'a delete is not judged');
      // An Ingress kept idle under a class no controller serves goes live when its class changes: judged as a change of spec (reviewer-102 F5).
      const parked = { ...ingress, metadata: { name: 'parked-login', annotations: { 'kubernetes.io/ingress.class': 'parked' } } };
      ok('the idle Ingress', await s.api(s.admin, 'POST', `/apis/networking.k8s.io/v1/namespaces/${own}/ingresses`, parked));
      denied(await s.api(beta, 'PATCH', `/apis/networking.k8s.io/v1/namespaces/${own}/ingresses/parked-login`, { metadata: { annotations: { 'kubernetes.io/ingress.class': 'shared' } } }, 'application/merge-patch+json'), `ingresses ${own}/parked-login`, '*.alpha.sandboxes.test');
    });

    test("beta's Service whose external-dns annotation is alpha's name and a newline (external-dns trims the value), beta's VirtualService host `*alpha.sandboxes.test` (Istio and Envoy match it as a suffix), and beta's status write that adds the annotation to its Service are refused, in the review scope and outside it (reviewer-105 F1, F2, F4)", async () => {
      const s = suite();
      const own = 'gw-beta-105';
      ok("beta's own namespace", await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: own } }));
      await namespaceAdmins(s, own, 'gw-beta-105-admins', [['sandbox-b', 'gw-parents-admin']]);
      await eventually(`RBAC for beta in ${own}`, async () => !/cannot create resource/.test((await s.api(beta, 'POST', `${SERVICES(own)}?dryRun=All`, service('rbac-probe'))).text));
      const published = (name: string, names: string) => ({ ...service(name), metadata: { name, annotations: { 'external-dns.alpha.kubernetes.io/hostname': names } }, spec: { type: 'LoadBalancer', ports: [{ port: 443 }], selector: { app: name } } });
      const results: string[] = [];
      for (const ns of [FRONT, own]) {
        results.push(`Service ${ns}: ${(await s.api(beta, 'POST', `${SERVICES(ns)}?dryRun=All`, published('beta-lb-105', 'run-1.alpha.sandboxes.test\n'))).status}`);
        results.push(`VirtualService ${ns}: ${(await s.api(beta, 'POST', `${VIRTUAL_SERVICES(ns)}?dryRun=All`, virtualService('beta-login-105', ['*alpha.sandboxes.test']))).status}`);
        // Beta's own Service, then the annotation written through its status subresource, which stores metadata.
        ok(`beta's Service in ${ns}`, await s.api(beta, 'POST', SERVICES(ns), service('beta-status-105')));
        const stored = (await s.api(beta, 'GET', `${SERVICES(ns)}/beta-status-105`)).body as Any;
        stored.metadata.annotations = { ...(stored.metadata.annotations ?? {}), 'external-dns.kubernetes.io/hostname': 'run-1.alpha.sandboxes.test' };
        results.push(`status ${ns}: ${(await s.api(beta, 'PUT', `${SERVICES(ns)}/beta-status-105/status`, stored)).status}`);
      }
      assert.deepEqual(results, [`Service ${FRONT}: 403`, `VirtualService ${FRONT}: 403`, `status ${FRONT}: 403`, `Service ${own}: 403`, `VirtualService ${own}: 403`, `status ${own}: 403`]);
      ok("beta's Service publishing its own name from a block scalar", await s.api(beta, 'POST', SERVICES(own), published('beta-lb-own-105', 'beta-lb.example.net\n')));
    });

    test("once alpha deletes its Service that alpha's route in another namespace sends traffic to (a ReferenceGrant there admits it), beta's Service under the name is refused (it would get alpha's traffic); without a grant no route there reaches it", async () => {
      const s = suite();
      ok("alpha's Service", await s.api(alpha, 'POST', SERVICES(EDGE), service('alpha-api')));
      ok("alpha's grant", await s.api(alpha, 'POST', GRANTS(EDGE), { apiVersion: `${G}/v1`, kind: 'ReferenceGrant', metadata: { name: 'front-to-alpha-api' }, spec: { from: [{ group: G, kind: 'HTTPRoute', namespace: FRONT }], to: [{ group: '', kind: 'Service', name: 'alpha-api' }] } }));
      const stored = await s.api(alpha, 'POST', ROUTES(FRONT), route('alpha-api', [{ name: 'public', namespace: INFRA }], [{ name: 'alpha-api', namespace: EDGE }]));
      assert.equal(stored.status, 201, `alpha's route to its Service across namespaces is stored: ${stored.text}`);
      assert.equal((await s.api(alpha, 'DELETE', `${SERVICES(EDGE)}/alpha-api`)).status, 200);
      refused(
        await s.api(beta, 'POST', SERVICES(EDGE), service('alpha-api')),
        'reference.live-reader',
        /HTTPRoute gw-front\/alpha-api of another environment \(or of none\) names Service alpha-api \(spec\.rules\[0\]\.backendRefs\[0\]\), and once this one stands the gateway controller sends the route's traffic to the backend/,
      );
      // A route naming a Service no grant admits it to: the gateway controller follows no such reference.
      ok("alpha's Service elsewhere", await s.api(alpha, 'POST', SERVICES(EDGE), service('alpha-ungranted')));
      ok("alpha's route to it", await s.api(alpha, 'POST', ROUTES(FRONT), route('alpha-ungranted', [{ name: 'public', namespace: INFRA }], [{ name: 'alpha-ungranted', namespace: EDGE }])));
      assert.equal((await s.api(alpha, 'DELETE', `${SERVICES(EDGE)}/alpha-ungranted`)).status, 200);
      const ungranted = await s.api(beta, 'POST', SERVICES(EDGE), service('alpha-ungranted'));
      assert.equal(ungranted.status, 201, `beta's Service under a name no grant admits a route to: ${ungranted.text}`);
    });

    test("once alpha deletes the Secret its Gateway serves on a listener, or the ConfigMap the gateway controller builds its proxy from, beta's under the name is refused (reviewer-98 F2b): the Gateway is cached, as an Ingress is, once the Gateway API is served", async () => {
      const s = suite();
      const params = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { deployment: 'spec: {}' } });
      ok("alpha's certificate", await s.api(alpha, 'POST', PATHS.Secret(EDGE), secret('alpha-cert')));
      ok("alpha's proxy parameters", await s.api(alpha, 'POST', CONFIG_MAPS(EDGE), params('alpha-gw-params')));
      const gw = gateway('alpha-tls');
      const tls = { ...gw, spec: { ...gw.spec, listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: 'alpha-tls.example.com', tls: { certificateRefs: [{ name: 'alpha-cert' }] } }], infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: 'alpha-gw-params' } } } };
      ok("alpha's Gateway", await s.api(alpha, 'POST', GATEWAYS(EDGE), tls));
      assert.equal((await s.api(alpha, 'DELETE', `${PATHS.Secret(EDGE)}/alpha-cert`)).status, 200);
      assert.equal((await s.api(alpha, 'DELETE', `${CONFIG_MAPS(EDGE)}/alpha-gw-params`)).status, 200);
      // Deed's watch of Gateways began when the kind came to be served (it looks again every 10 s), and delivers alpha's.
      await eventually("Deed's cache holds alpha's Gateway", async () => (await s.api(beta, 'POST', `${PATHS.Secret(EDGE)}?dryRun=All`, secret('alpha-cert'))).status === 403, 45_000);
      refused(
        await s.api(beta, 'POST', PATHS.Secret(EDGE), secret('alpha-cert')),
        'reference.live-reader',
        /a live Gateway of another environment \(or of none\) in namespace gw-edge names Secret alpha-cert \(spec\.listeners\[\]\.tls\.certificateRefs\[\], .*\), and once this one stands the gateway controller serves the Secret's certificate and key on the listener/,
      );
      // Server-side apply of a Secret not there is its CREATE, and is refused the same.
      refused(
        await s.api(beta, 'PATCH', `${PATHS.Secret(EDGE)}/alpha-cert?fieldManager=beta`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'alpha-cert' }, stringData: { 'tls.crt': 'x' } }, 'application/apply-patch+yaml'),
        'reference.live-reader',
        /a live Gateway of another environment \(or of none\) in namespace gw-edge names Secret alpha-cert/,
      );
      refused(
        await s.api(beta, 'POST', CONFIG_MAPS(EDGE), params('alpha-gw-params')),
        'reference.live-reader',
        /a live Gateway of another environment \(or of none\) in namespace gw-edge names ConfigMap alpha-gw-params \(.* or spec\.infrastructure\.parametersRef\), and once this one stands .*the gateway controller builds the Gateway's proxy Deployment/,
      );
      // Alpha's own may stand there again.
      assert.equal((await s.api(alpha, 'POST', PATHS.Secret(EDGE), secret('alpha-cert'))).status, 201);
      assert.equal((await s.api(alpha, 'POST', CONFIG_MAPS(EDGE), params('alpha-gw-params'))).status, 201);
    });

    test("once alpha deletes the CA ConfigMap its BackendTLSPolicy verifies its Service's certificate by, beta's ConfigMap under the name is refused (it would vouch for beta's pods as alpha's Service)", async () => {
      const s = suite();
      const ca = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { 'ca.crt': '-----BEGIN CERTIFICATE-----' } });
      ok("alpha's Service", await s.api(alpha, 'POST', SERVICES(EDGE), service('alpha-tls-api')));
      ok("alpha's CA", await s.api(alpha, 'POST', CONFIG_MAPS(EDGE), ca('alpha-ca')));
      const policy = { apiVersion: `${G}/v1`, kind: 'BackendTLSPolicy', metadata: { name: 'alpha-tls-api' }, spec: { targetRefs: [{ group: '', kind: 'Service', name: 'alpha-tls-api' }], validation: { hostname: 'alpha-tls-api.example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'alpha-ca' }] } } };
      ok("alpha's BackendTLSPolicy", await s.api(alpha, 'POST', `/apis/${G}/v1/namespaces/${EDGE}/backendtlspolicies`, policy));
      assert.equal((await s.api(alpha, 'DELETE', `${CONFIG_MAPS(EDGE)}/alpha-ca`)).status, 200);
      refused(
        await s.api(beta, 'POST', CONFIG_MAPS(EDGE), ca('alpha-ca')),
        'reference.live-reader',
        /a live BackendTLSPolicy of another environment \(or of none\) in namespace gw-edge names ConfigMap alpha-ca \(spec\.validation\.caCertificateRefs\[\]\), and once this one stands the gateway controller trusts the ConfigMap's CA certificates to verify the Service's certificate/,
      );
      assert.equal((await s.api(alpha, 'POST', CONFIG_MAPS(EDGE), ca('alpha-ca'))).status, 201);
    });

    test("reviewer-99 F4: a ListenerSet kind installed a moment ago (the experimental XListenerSet), or installed again after its definition was deleted, holds alpha's certificate at once: Deed reads a kind it found served nowhere live, not from its empty store", async () => {
      const s = suite();
      const X = 'gateway.networking.x-k8s.io';
      const XSETS = (ns: string) => `/apis/${X}/v1alpha1/namespaces/${ns}/xlistenersets`;
      const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
      ok("alpha's parent Gateway", await s.api(alpha, 'POST', GATEWAYS(EDGE), gateway('alpha-x-parent')));
      for (const round of [0, 1]) {
        const cert = `alpha-x-cert-${round}`;
        ok("alpha's certificate", await s.api(alpha, 'POST', PATHS.Secret(EDGE), secret(cert)));
        ok('CRD xlistenersets', await s.api(s.admin, 'POST', CRDS, standInCrd({ group: X, version: 'v1alpha1', plural: 'xlistenersets', kind: 'XListenerSet' })));
        const set = { apiVersion: `${X}/v1alpha1`, kind: 'XListenerSet', metadata: { name: `alpha-x-${round}` }, spec: { parentRef: { name: 'alpha-x-parent' }, listeners: [{ name: 'https', protocol: 'HTTPS', port: 443, hostname: 'alpha-x.example.com', tls: { certificateRefs: [{ name: cert }] } }] } };
        let made = await s.api(alpha, 'POST', XSETS(EDGE), set);
        for (let i = 0; i < 500 && made.status === 404; i++) made = await s.api(alpha, 'POST', XSETS(EDGE), set);
        ok("alpha's XListenerSet", made);
        assert.equal((await s.api(alpha, 'DELETE', `${PATHS.Secret(EDGE)}/${cert}`)).status, 200);
        // At once, wherever Deed's 10-second look at the kind stands.
        refused(await s.api(beta, 'POST', PATHS.Secret(EDGE), secret(cert)), 'reference.live-reader', new RegExp(`a live XListenerSet of another environment \\(or of none\\) in namespace gw-edge names Secret ${cert}`));
        // Deleted: Deed finds the kind served nowhere again once its watch ends (the next round installs it again).
        assert.equal((await s.api(s.admin, 'DELETE', `${CRDS}/xlistenersets.${X}`)).status, 200);
        await eventually('XListenerSets no longer served', async () => (await s.api(s.admin, 'GET', XSETS(EDGE))).status === 404, 60_000);
        if (round === 0) await new Promise((r) => setTimeout(r, 11_000));
      }
    });
  });
}
