import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_IMAGE } from '../src/cli/manifests.js';
import { kustomizeBase, KUSTOMIZE_BASE_DIR } from '../src/install/kustomize.js';
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
      ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'MutatingWebhookConfiguration', 'Namespace', 'PodDisruptionBudget', 'Service', 'ServiceAccount', 'ValidatingWebhookConfiguration'],
    );
    for (const want of expected) {
      const got = objects.find((o) => key(o) === key(want));
      assert.deepEqual(got, JSON.parse(JSON.stringify(want)), key(want));
    }
  });
});
