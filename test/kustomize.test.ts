import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_IMAGE } from '../src/cli/manifests.js';
import { kustomizeBase, kustomizeComponents, KUSTOMIZE_BASE_DIR, KUSTOMIZE_COMPONENTS_DIR } from '../src/install/kustomize.js';
import { DEFAULT_NAMESPACE, renderManifests } from '../src/install/manifests.js';
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
      ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'MutatingWebhookConfiguration', 'Namespace', 'NetworkPolicy', 'PodDisruptionBudget', 'Service', 'ServiceAccount', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding', 'ValidatingWebhookConfiguration'],
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
});
