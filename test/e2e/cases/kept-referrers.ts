// A reference kept across a delete (docs/security-model.md, "kept across a delete"): in a
// namespace alpha and beta share, beta's EndpointSlice (or HPA) names beta's own Service (or
// Deployment), and stays when beta deletes it; alpha then creates one under the name, and
// kube-proxy would send alpha's Service traffic to beta's endpoints (the HPA controller would
// scale alpha's Deployment). Deed refuses that CREATE (reference.live-reader), reading the
// namespace's referrers live from the API server; one environment's ordinary manifest (a
// Service, its Deployment, an HPA and an Ingress, created in any order) is admitted.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Identity } from '../client.js';
import { collectionPath, createdOrThere as ok, eventually, namespaceAdmins, optedInNamespace, refusedBy as refused } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'shared-kept';
const HPAS = `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

const service = (name: string, selector?: Any) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...(selector ? { selector } : {}) } });
const slice = (name: string, svc: string) => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name, labels: { 'kubernetes.io/service-name': svc } }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.9'] }], ports: [{ port: 80 }] });
const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/agent:1' }] } } },
});
const hpa = (name: string, target: string) => ({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, minReplicas: 1, maxReplicas: 2 } });
const ingress = (name: string, svc: string) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name },
  spec: { rules: [{ host: `${name}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: svc, port: { number: 80 } } } }] } }] },
});

export function keptReferrerCases(suite: () => Suite): void {
  let alpha: Identity; // sandbox-a:runner
  let beta: Identity; // sandbox-b:kept-admin: acts for beta

  describe('a referrer kept across a delete holds its name against another environment', () => {
    before(async () => {
      const s = suite();
      await optedInNamespace(s, NS);
      alpha = s.runnerA.identity;
      beta = await s.newIdentity('sandbox-b', 'kept-admin');
      await namespaceAdmins(s, NS, 'kept-admins', [['sandbox-a', 'runner'], ['sandbox-b', 'kept-admin']]);
      for (const who of [alpha, beta]) await eventually(`RBAC lets ${who.name} create autoscalers in ${NS}`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${HPAS}?dryRun=All`, hpa('rbac-probe', 'rbac-probe'))).text));
    });

    test("alpha's Service under the name of beta's deleted Service, whose EndpointSlice beta kept, is refused; under another name it is stored", async () => {
      const s = suite();
      const own = await s.api(beta, 'POST', collectionPath('Service', NS), service('api'));
      assert.equal(own.status, 201, own.text);
      const kept = await s.api(beta, 'POST', collectionPath('EndpointSlice', NS), slice('api-hijack', 'api'));
      assert.equal(kept.status, 201, `beta's slice of its own Service: ${kept.text}`);
      assert.equal((await s.api(beta, 'DELETE', `${collectionPath('Service', NS)}/api`)).status, 200);
      assert.equal((await s.api(s.admin, 'GET', `${collectionPath('EndpointSlice', NS)}/api-hijack`)).status, 200, 'the slice stays: nothing owns it');
      refused(
        await s.api(alpha, 'POST', collectionPath('Service', NS), service('api', { app: 'alpha-api' })),
        'reference.live-reader',
        /EndpointSlice shared-kept\/api-hijack of another environment \(or of none\) names Service api \(label kubernetes\.io\/service-name\), and once this one stands kube-proxy sends the Service's traffic to its endpoints: choose a name of this run's own, or create it once that EndpointSlice is deleted/,
      );
      const other = await s.api(alpha, 'POST', collectionPath('Service', NS), service('alpha-api', { app: 'alpha-api' }));
      assert.equal(other.status, 201, other.text);
    });

    test("beta's EndpointSlice for the platform's unstamped Service is refused: kube-proxy would send the platform Service's callers to beta (rev-88)", async () => {
      const s = suite();
      ok('platform Service', await s.api(s.admin, 'POST', collectionPath('Service', NS), service('platform-api', { app: 'platform-api' })));
      const hijack = await s.api(beta, 'POST', collectionPath('EndpointSlice', NS), slice('platform-api-hijack', 'platform-api'));
      assert.equal(hijack.status, 403, hijack.text);
      assert.match(hijack.body.message, /\[reference\.cross-environment\] metadata\.labels\["kubernetes\.io\/service-name"\]: names Service platform-api, which carries no stamps in a namespace bound to no environment: it is the platform's \(kube-proxy sends the Service's traffic to its endpoints\); system:serviceaccount:sandbox-b:kept-admin acts for "beta" and may not have it changed/);
      // The platform's own (break-glass here) is admitted.
      ok('platform EndpointSlice', await s.api(s.admin, 'POST', collectionPath('EndpointSlice', NS), slice('platform-api-extra', 'platform-api')));
    });

    test("alpha's Deployment under the name of beta's deleted Deployment, whose HPA beta kept, is refused", async () => {
      const s = suite();
      const own = await s.api(beta, 'POST', collectionPath('Deployment', NS), deployment('web'));
      assert.equal(own.status, 201, own.text);
      const kept = await s.api(beta, 'POST', HPAS, hpa('web', 'web'));
      assert.equal(kept.status, 201, `beta's HPA of its own Deployment: ${kept.text}`);
      assert.equal((await s.api(beta, 'DELETE', `${collectionPath('Deployment', NS)}/web`)).status, 200);
      refused(
        await s.api(alpha, 'POST', collectionPath('Deployment', NS), deployment('web')),
        'reference.live-reader',
        /HorizontalPodAutoscaler shared-kept\/web of another environment \(or of none\) names Deployment web \(spec\.scaleTargetRef\), and once this one stands the horizontal-pod-autoscaler controller writes the target's \/scale/,
      );
    });

    test("alpha's Secret under the name of beta's deleted TLS Secret, which beta's Ingress still names, is refused (the ingress controller would serve alpha's key for beta's hosts); beta's own is stored, and alpha's once the Ingress is gone", async () => {
      const s = suite();
      const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'cert', 'tls.key': 'key' } });
      const tlsIngress = (name: string, secretName: string) => ({ ...ingress(name, name), spec: { ...ingress(name, name).spec, tls: [{ hosts: [`${name}.example.com`], secretName }] } });
      ok("beta's Service", await s.api(beta, 'POST', collectionPath('Service', NS), service('shop', { app: 'shop' })));
      ok("beta's TLS Secret", await s.api(beta, 'POST', collectionPath('Secret', NS), secret('shop-tls')));
      ok("beta's Ingress", await s.api(beta, 'POST', collectionPath('Ingress', NS), tlsIngress('shop', 'shop-tls')));
      assert.equal((await s.api(beta, 'DELETE', `${collectionPath('Secret', NS)}/shop-tls`)).status, 200);
      await eventually("alpha's Secret under the name is refused once Deed's cache has the Ingress", async () => (await s.api(alpha, 'POST', `${collectionPath('Secret', NS)}?dryRun=All`, secret('shop-tls'))).status === 403);
      refused(
        await s.api(alpha, 'POST', collectionPath('Secret', NS), secret('shop-tls')),
        'reference.live-reader',
        /a live Ingress of another environment \(or of none\) in namespace shared-kept names Secret shop-tls \(spec\.tls\[\]\.secretName\), and once this one stands the ingress controller serves the Secret's certificate and key for its hosts: choose a name of this run's own, or create it once no such Ingress is left/,
      );
      // Beta's own is stored again; once beta's Ingress is gone, the name is anyone's.
      ok("beta's TLS Secret again", await s.api(beta, 'POST', collectionPath('Secret', NS), secret('shop-tls')));
      assert.equal((await s.api(beta, 'DELETE', `${collectionPath('Secret', NS)}/shop-tls`)).status, 200);
      assert.equal((await s.api(beta, 'DELETE', `${collectionPath('Ingress', NS)}/shop`)).status, 200);
      await eventually("alpha's Secret under the name is stored once the Ingress is gone", async () => (await s.api(alpha, 'POST', collectionPath('Secret', NS), secret('shop-tls'))).status === 201);
    });

    test("an Ingress names a TLS Secret only once it exists (a Secret made under the name before the watch delivers the Ingress would win: rev-96), and no more than 256 of them: one grown past by UPDATEs would hold every name of the namespace (rev-95 F1)", async () => {
      const s = suite();
      const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'cert', 'tls.key': 'key' } });
      const tls = (names: string[]) => names.map((secretName) => ({ hosts: [`${secretName}.example.com`], secretName }));
      const withTls = (name: string, names: string[]) => ({ ...ingress(name, name), spec: { ...ingress(name, name).spec, tls: tls(names) } });
      ok("alpha's Service", await s.api(alpha, 'POST', collectionPath('Service', NS), service('alpha-shop', { app: 'alpha-shop' })));
      refused(await s.api(alpha, 'POST', collectionPath('Ingress', NS), withTls('alpha-shop', ['alpha-shop-tls'])), 'reference.absent', /spec\.tls\[0\]\.secretName: names Secret alpha-shop-tls, which does not exist; create it first/);
      ok("alpha's TLS Secret", await s.api(alpha, 'POST', collectionPath('Secret', NS), secret('alpha-shop-tls')));
      ok("alpha's Ingress", await s.api(alpha, 'POST', collectionPath('Ingress', NS), withTls('alpha-shop', ['alpha-shop-tls'])));

      // Each write adds at most 32 names; before, beta grew its Ingress by such UPDATEs past what the index keeps, and every Secret CREATE in the namespace was refused.
      ok("beta's Service", await s.api(beta, 'POST', collectionPath('Service', NS), service('beta-flood', { app: 'beta-flood' })));
      const all = Array.from({ length: 257 }, (_, i) => `flood-${i}`);
      for (let i = 0; i < all.length; i += 16) await Promise.all(all.slice(i, i + 16).map(async (name) => ok(`beta's Secret ${name}`, await s.api(beta, 'POST', collectionPath('Secret', NS), secret(name)))));
      ok("beta's Ingress", await s.api(beta, 'POST', collectionPath('Ingress', NS), withTls('beta-flood', [])));
      for (let n = 32; n <= 256; n += 32) {
        const grown = await s.api(beta, 'PATCH', `${collectionPath('Ingress', NS)}/beta-flood`, [{ op: 'replace', path: '/spec/tls', value: tls(all.slice(0, n)) }], 'application/json-patch+json');
        assert.equal(grown.status, 200, `${n} names: ${grown.text}`);
      }
      refused(
        await s.api(beta, 'PATCH', `${collectionPath('Ingress', NS)}/beta-flood`, [{ op: 'replace', path: '/spec/tls', value: tls(all) }], 'application/json-patch+json'),
        'reference.unknown',
        /spec\.tls\[\]\.secretName: names 257 Secrets \(spec\.tls\[\]\.secretName\), each held for it against other environments' creates in the namespace; Deed holds at most 256 for one object: split it into several/,
      );
      ok("alpha's Secret of a name no Ingress names", await s.api(alpha, 'POST', collectionPath('Secret', NS), secret('alpha-run-token')));
    });

    test("beta's Service under the name alpha's StatefulSet governs (spec.serviceName, no Service made yet) is refused: the set's pods' stable DNS names would answer with beta's pods (rev-93)", async () => {
      const s = suite();
      const set = { ...deployment('db'), kind: 'StatefulSet', spec: { ...deployment('db').spec, serviceName: 'db-hl' } };
      ok("alpha's StatefulSet naming a Service that does not exist", await s.api(alpha, 'POST', collectionPath('StatefulSet', NS), set));
      refused(
        await s.api(beta, 'POST', collectionPath('Service', NS), { ...service('db-hl', { app: 'lure' }), spec: { clusterIP: 'None', selector: { app: 'lure' }, ports: [{ port: 80 }] } }),
        'reference.live-reader',
        /StatefulSet shared-kept\/db of another environment \(or of none\) names Service db-hl \(spec\.serviceName\), and once this one stands the EndpointSlice controller publishes the Service's pods under the set's stable DNS names/,
      );
      ok("alpha's own headless Service", await s.api(alpha, 'POST', collectionPath('Service', NS), { ...service('db-hl', { app: 'db' }), spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ port: 80 }] } }));
    });

    test("one environment's Service, Deployment, HPA and Ingress are admitted in any order its references allow, and made again under their names", async () => {
      const s = suite();
      const create = async (what: string, path: string, body: Any) => {
        const a = await s.api(alpha, 'POST', path, body);
        assert.equal(a.status, 201, `${what}: ${a.text}`);
      };
      // A referrer before what it names is reference.absent's to refuse (in a shared namespace), not this rule's.
      for (const [n, order] of [
        ['one', ['service', 'deployment', 'hpa', 'ingress']],
        ['two', ['deployment', 'hpa', 'service', 'ingress']],
        ['three', ['service', 'ingress', 'deployment', 'hpa']],
      ] as const) {
        for (const step of order) {
          if (step === 'service') await create(`${n} service`, collectionPath('Service', NS), service(`app-${n}`, { app: `app-${n}` }));
          if (step === 'deployment') await create(`${n} deployment`, collectionPath('Deployment', NS), deployment(`app-${n}`));
          if (step === 'hpa') await create(`${n} hpa`, HPAS, hpa(`app-${n}`, `app-${n}`));
          if (step === 'ingress') await create(`${n} ingress`, collectionPath('Ingress', NS), ingress(`app-${n}`, `app-${n}`));
        }
      }
      // The Service and the Deployment deleted, the HPA and the Ingress kept: alpha's own referrers hold the names for alpha.
      assert.equal((await s.api(alpha, 'DELETE', `${collectionPath('Service', NS)}/app-one`)).status, 200);
      assert.equal((await s.api(alpha, 'DELETE', `${collectionPath('Deployment', NS)}/app-one`)).status, 200);
      // What the controllers made for the Service (of no environment) goes with it; until then its name is refused (fail closed).
      await eventually("the controllers' EndpointSlices and Endpoints of app-one are gone", async () => {
        const slices = await s.api(s.admin, 'GET', `${collectionPath('EndpointSlice', NS)}?labelSelector=${encodeURIComponent('kubernetes.io/service-name=app-one')}`);
        const endpoints = await s.api(s.admin, 'GET', `${collectionPath('Endpoints', NS)}/app-one`);
        return slices.status === 200 && (slices.body.items as unknown[]).length === 0 && endpoints.status === 404;
      });
      await create('service again', collectionPath('Service', NS), service('app-one', { app: 'app-one' }));
      await create('deployment again', collectionPath('Deployment', NS), deployment('app-one'));
    });
  });
}
