import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_IMAGE } from '../src/cli/manifests.js';
import { kustomizeBase, kustomizeComponents, KUSTOMIZE_BASE_DIR, KUSTOMIZE_COMPONENTS_DIR } from '../src/install/kustomize.js';
import { DEFAULT_NAMESPACE, renderManifests } from '../src/install/manifests.js';
import { certManagerObjects, INJECT_CA_FROM } from '../src/install/cert-manager.js';
import { ROOT } from './cli-process.js';

const baseDir = join(ROOT, KUSTOMIZE_BASE_DIR);

function key(o: { kind?: string; metadata?: { name?: string } }): string {
  return `${o.kind}/${o.metadata?.name}`;
}

describe('the kustomize base', () => {
  test('the committed files are what `npm run manifests` generates (run it after changing the install)', () => {
    const expected = kustomizeBase(DEFAULT_IMAGE);
    assert.deepEqual(readdirSync(baseDir).filter((f) => f.endsWith('.yaml')).sort(), [...expected.keys()].sort());
    for (const [file, text] of expected) assert.equal(readFileSync(join(baseDir, file), 'utf8'), text, `${file} is stale: run npm run manifests`);
  });

  test('kubectl kustomize renders it into the same objects as deed manifests', () => {
    const out = execFileSync('kubectl', ['kustomize', baseDir], { encoding: 'utf8', timeout: 60_000 });
    const rendered = parseAllDocuments(out);
    assert.ok(Array.isArray(rendered));
    const objects = rendered.map((d) => d.toJS() as { kind: string; metadata: { name: string } });
    const expected = renderManifests({ namespace: DEFAULT_NAMESPACE, image: DEFAULT_IMAGE });
    assert.deepEqual(objects.map(key).sort(), expected.map(key).sort());
    assert.deepEqual(
      objects.map((o) => o.kind).sort(),
      ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'MutatingWebhookConfiguration', 'Namespace', 'NetworkPolicy', 'PodDisruptionBudget', 'Service', 'ServiceAccount', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding', 'ValidatingWebhookConfiguration'],
    );
    for (const want of expected) {
      const got = objects.find((o) => key(o) === key(want));
      assert.deepEqual(got, JSON.parse(JSON.stringify(want)), key(want));
    }
  });

  test('the optional components are what `npm run manifests` generates', () => {
    const componentsDir = join(ROOT, KUSTOMIZE_COMPONENTS_DIR);
    const expected = kustomizeComponents(DEFAULT_IMAGE);
    assert.deepEqual(readdirSync(componentsDir).sort(), [...expected.keys()].sort());
    for (const [name, files] of expected) {
      assert.deepEqual(readdirSync(join(componentsDir, name)).sort(), [...files.keys()].sort(), name);
      for (const [file, text] of files) assert.equal(readFileSync(join(componentsDir, name, file), 'utf8'), text, `${name}/${file} is stale: run npm run manifests`);
    }
  });

  test('an overlay with the audit and CRD components renders the same objects as deed manifests --audit --audit-crds', () => {
    const overlay = mkdtempSync(join(tmpdir(), 'deed-overlay-'));
    try {
      // Kustomize takes bases and components by relative path only.
      const up = relative(overlay, join(ROOT, 'manifests/kustomize'));
      writeFileSync(join(overlay, 'kustomization.yaml'), `resources:\n  - ${up}/base\ncomponents:\n  - ${up}/components/audit\n  - ${up}/components/policyreport-crd\n`);
      const out = execFileSync('kubectl', ['kustomize', overlay], { encoding: 'utf8', timeout: 60_000 });
      const objects = parseAllDocuments(out).map((d) => d.toJS() as { kind: string; metadata: { name: string } });
      const expected = renderManifests({ namespace: DEFAULT_NAMESPACE, image: DEFAULT_IMAGE, audit: { installCrd: true } });
      assert.deepEqual(objects.map(key).sort(), expected.map(key).sort());
      for (const want of expected) assert.deepEqual(objects.find((o) => key(o) === key(want)), JSON.parse(JSON.stringify(want)), key(want));
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
  });

  /** `kubectl kustomize` of an overlay of the base with these components. */
  function overlay(components: string[]): Array<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any -- rendered objects
    const dir = mkdtempSync(join(tmpdir(), 'deed-overlay-'));
    try {
      const up = relative(dir, join(ROOT, 'manifests/kustomize'));
      writeFileSync(join(dir, 'kustomization.yaml'), `resources:\n  - ${up}/base\n${components.length ? `components:\n${components.map((c) => `  - ${up}/components/${c}\n`).join('')}` : ''}`);
      return parseAllDocuments(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 })).map((d) => d.toJS() as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test('alone, the base registers its webhooks fail closed and without a caBundle: it never fails open while no certificate is wired', () => {
    const webhooks = overlay([]).filter((o) => o.kind.endsWith('WebhookConfiguration'));
    assert.equal(webhooks.length, 2);
    for (const config of webhooks) {
      assert.equal(config.metadata.annotations?.[INJECT_CA_FROM], undefined);
      for (const w of config.webhooks) {
        assert.equal(w.failurePolicy, 'Fail', `${config.kind} ${w.name}`);
        assert.equal(w.clientConfig.caBundle, undefined);
      }
    }
    assert.match(readFileSync(join(baseDir, 'kustomization.yaml'), 'utf8'), /components: \[\.\.\/components\/cert-manager\]/, 'its kustomization.yaml says how to wire one');
  });

  test('with the cert-manager component, cert-manager issues the Secret the Deployment mounts, for the Service, and cainjector fills both webhooks\' caBundle from that Certificate', () => {
    const objects = overlay(['cert-manager']);
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    const service = objects.find((o) => o.kind === 'Service')!;
    const mounted = (deployment.spec.template.spec.volumes as Array<{ projected?: { sources: Array<{ secret?: { name: string; items: Array<{ key: string }> } }> } }>)
      .flatMap((v) => v.projected?.sources ?? [])
      .find((s) => s.secret?.items.some((i) => i.key === 'tls.crt'))!.secret!.name;
    const serving = objects.find((o) => o.kind === 'Certificate' && o.spec.secretName === mounted);
    assert.ok(serving, `a Certificate stores ${mounted}`);
    assert.ok(serving.spec.dnsNames.includes(`${service.metadata.name}.${service.metadata.namespace}.svc`));
    for (const config of objects.filter((o) => o.kind.endsWith('WebhookConfiguration'))) {
      assert.equal(config.metadata.annotations[INJECT_CA_FROM], `${serving.metadata.namespace}/${serving.metadata.name}`, config.kind);
      for (const w of config.webhooks) assert.equal(w.failurePolicy, 'Fail', 'still fail closed');
    }
    // The issuer chain resolves within the component.
    const issuers = new Set(objects.filter((o) => o.kind === 'Issuer').map((o) => o.metadata.name));
    for (const cert of objects.filter((o) => o.kind === 'Certificate')) assert.ok(issuers.has(cert.spec.issuerRef.name), cert.metadata.name);
  });

  const HELM = join(process.env.KUBEBUILDER_ASSETS ?? '/nonexistent', 'helm');
  test("the cert-manager component's Issuers and Certificates are the chart's in certificates.mode=certManager", { skip: existsSync(HELM) ? false : 'needs helm in KUBEBUILDER_ASSETS' }, () => {
    const run = spawnSync(HELM, ['template', 'deed', join(ROOT, 'manifests/helm/deed'), '-n', DEFAULT_NAMESPACE, '--skip-tests', '--set', 'certificates.mode=certManager', '--show-only', 'templates/cert-manager.yaml'], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const chart = parseAllDocuments(run.stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace: string }; spec: unknown });
    const strip = (o: { kind: string; metadata: { name: string; namespace: string }; spec: unknown }) => ({ kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace, spec: o.spec });
    const byName = (a: { kind: string; name: string }, b: { kind: string; name: string }) => `${a.kind}/${a.name}`.localeCompare(`${b.kind}/${b.name}`);
    assert.deepEqual(certManagerObjects().map((o) => strip(o as Parameters<typeof strip>[0])).sort(byName), chart.map(strip).sort(byName));
  });
});
