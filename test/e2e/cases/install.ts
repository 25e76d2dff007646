// The install objects against the real API server: `helm lint`, `helm install` with the
// default values and with each certificate mode that needs no cert-manager, and the
// rendered chart and the kustomize base accepted by `kubectl apply --dry-run=server`.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from '../../serve-process.js';
import { run, type Run } from '../client.js';
import type { Suite } from '../suite.js';
import type { Tools } from './admission.js';

const CHART = join(ROOT, 'manifests/helm/deed');

export function installCases(suite: () => Suite, tools: Tools): void {
  const needsHelm = tools.helm ? false : 'needs helm in KUBEBUILDER_ASSETS (setup-envtest does not ship it)';

  const helm = (s: Suite, args: string[]): Promise<Run> => {
    const home = join(s.cp.dir, 'helm');
    mkdirSync(home, { recursive: true });
    const env = { ...process.env, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data') };
    return run(join(s.cp.bin, 'helm'), ['--kubeconfig', s.admin.kubeconfig!, ...args], undefined, env, 120_000);
  };
  const webhookCaBundles = async (s: Suite, name: string): Promise<string[]> => {
    const bundles: string[] = [];
    for (const kind of ['mutating', 'validating']) {
      const answer = await s.api(s.admin, 'GET', `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${name}`);
      assert.equal(answer.status, 200, answer.text);
      bundles.push(...(answer.body.webhooks as Array<{ clientConfig: { caBundle: string } }>).map((w) => w.clientConfig.caBundle));
    }
    return bundles;
  };

  describe('installing Deed', () => {
    test('helm lint passes on the chart', { skip: needsHelm }, async () => {
      const s = suite();
      const result = await helm(s, ['lint', CHART]);
      assert.equal(result.code, 0, result.stdout + result.stderr);
    });

    test('helm template with default values is accepted by kubectl apply --dry-run=server', { skip: needsHelm }, async () => {
      const s = suite();
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: 'helm-template' } })).status, 201);
      const rendered = await helm(s, ['template', 'rendered', CHART, '-n', 'helm-template']);
      assert.equal(rendered.code, 0, rendered.stderr);
      const applied = await s.kubectl(s.admin, ['apply', '--dry-run=server', '-n', 'helm-template', '-f', '-'], rendered.stdout);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /validatingwebhookconfiguration.admissionregistration.k8s.io\/rendered-deed created \(server dry run\)/);
    });

    test('the kustomize base, through an overlay, is accepted by kubectl apply --dry-run=server', async () => {
      const s = suite();
      // An overlay as the README shows one; the prefix keeps clear of the suite's own "deed" webhooks.
      // A server dry run persists no namespace, so the one the objects go to must exist.
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: 'kust-system' } })).status, 201);
      const overlay = join(s.cp.dir, 'overlay');
      mkdirSync(overlay);
      writeFileSync(join(overlay, 'kustomization.yaml'), `resources: [${JSON.stringify(relative(overlay, join(ROOT, 'manifests/kustomize/base')))}]\nnamePrefix: kust-\nnamespace: kust-system\n`);
      const built = await s.kubectl(s.admin, ['kustomize', overlay]);
      assert.equal(built.code, 0, built.stderr);
      const applied = await s.kubectl(s.admin, ['apply', '--dry-run=server', '-f', '-'], built.stdout);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /deployment.apps\/kust-deed created \(server dry run\)/);
      assert.match(applied.stdout, /validatingwebhookconfiguration.admissionregistration.k8s.io\/kust-deed created \(server dry run\)/);
    });

    test('helm install with default values makes a CA and serving certificate the webhooks trust', { skip: needsHelm }, async () => {
      const s = suite();
      const installed = await helm(s, ['install', 'chart-gen', CHART, '-n', 'helm-gen', '--create-namespace']);
      try {
        assert.equal(installed.code, 0, installed.stdout + installed.stderr);
        const tls = await s.api(s.admin, 'GET', '/api/v1/namespaces/helm-gen/secrets/chart-gen-deed-tls');
        assert.equal(tls.status, 200, tls.text);
        const ca = tls.body.data['ca.crt'] as string;
        assert.ok(ca.length > 0);
        assert.deepEqual([...new Set(await webhookCaBundles(s, 'chart-gen-deed'))], [ca]);
        assert.equal((await s.api(s.admin, 'GET', '/apis/apps/v1/namespaces/helm-gen/deployments/chart-gen-deed')).status, 200);
      } finally {
        // Its webhooks point at a Service no pod backs here: remove them before other tests write.
        const removed = await helm(s, ['uninstall', 'chart-gen', '-n', 'helm-gen', '--wait']);
        assert.equal(removed.code, 0, removed.stderr);
      }
    });

    test('helm install with provided certificates puts the given CA in both webhooks', { skip: needsHelm }, async () => {
      const s = suite();
      assert.equal((await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: 'helm-provided' } })).status, 201);
      const certs = join(s.cp.dir, 'provided-certs');
      const made = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'certs', '--out', certs, '--dns', 'chart-prov-deed.helm-provided.svc']);
      assert.equal(made.code, 0, made.stderr);
      const secret = await s.kubectl(s.admin, ['create', 'secret', 'tls', 'my-tls', '-n', 'helm-provided', `--cert=${join(certs, 'tls.crt')}`, `--key=${join(certs, 'tls.key')}`]);
      assert.equal(secret.code, 0, secret.stderr);
      const caBundle = readFileSync(join(certs, 'ca.crt')).toString('base64');
      const installed = await helm(s, ['install', 'chart-prov', CHART, '-n', 'helm-provided', '--set', 'certificates.mode=provided', '--set', 'certificates.provided.secretName=my-tls', '--set', `certificates.provided.caBundle=${caBundle}`]);
      try {
        assert.equal(installed.code, 0, installed.stdout + installed.stderr);
        assert.deepEqual([...new Set(await webhookCaBundles(s, 'chart-prov-deed'))], [caBundle]);
        assert.equal((await s.api(s.admin, 'GET', '/api/v1/namespaces/helm-provided/secrets/chart-prov-deed-tls')).status, 404, 'no generated certificate in provided mode');
      } finally {
        const removed = await helm(s, ['uninstall', 'chart-prov', '-n', 'helm-provided', '--wait']);
        assert.equal(removed.code, 0, removed.stderr);
      }
    });
  });
}
