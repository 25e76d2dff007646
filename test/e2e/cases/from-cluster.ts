// The Helm chart's NOTES print a reaper dry run, `deed reap --environment ENV ... --as
// <the reaper's service account>`, with no policy file: it reads the release's policy
// ConfigMap and key Secret from the cluster (issue 40, --from-cluster). Here the chart renders
// a release, its policy, key Secret and reaper account are created as helm would create them,
// and the command runs exactly as the NOTES print it, ENV filled in, from an administrator's
// kubeconfig.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { run, type Run } from '../client.js';
import { PATHS, plantLeak } from '../objects.js';
import { DEED_NAMESPACE, E2E_POLICY, type Suite } from '../suite.js';
import { helm as helmIn } from '../helm.js';
import { ROOT } from '../../serve-process.js';

const RELEASE = 'notes-reap';
const FULLNAME = `${RELEASE}-deed`;

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; data?: Record<string, string> };

export function fromClusterCases(suite: () => Suite, tools: { helm: boolean }): void {
  const helm = (s: Suite, args: string[]): Promise<Run> => helmIn(s, 'helm-from-cluster', args);

  describe("the chart's NOTES reaper dry run", () => {
    test('runs as printed from an administrator\'s kubeconfig: it reads the release\'s policy and keys, sweeps as the reaper and finds the leak it would delete', { skip: tools.helm ? false : 'needs helm in KUBEBUILDER_ASSETS' }, async () => {
      const s = suite();
      // What `helm install` would create and print, without a webhook that no one serves here.
      const rendered = await helm(s, [
        'install', RELEASE, join(ROOT, 'manifests/helm/deed'), '-n', DEED_NAMESPACE, '--dry-run=client',
        '--set', 'reaper.environments={alpha}', '--set-json', `policy=${JSON.stringify(parse(E2E_POLICY))}`,
      ]);
      assert.equal(rendered.code, 0, rendered.stderr);
      const manifest = rendered.stdout.slice(rendered.stdout.indexOf('MANIFEST:') + 'MANIFEST:'.length, rendered.stdout.indexOf('NOTES:'));
      const notes = rendered.stdout.slice(rendered.stdout.indexOf('NOTES:'));
      const docs = parseAllDocuments(manifest).map((d) => d.toJS() as Doc).filter((d) => d !== null);
      const wanted: Array<[string, string]> = [
        ['ConfigMap', `${FULLNAME}-policy`],
        ['Secret', `${FULLNAME}-attestation`],
        ['ServiceAccount', `${FULLNAME}-reaper-alpha`],
        ['ClusterRole', `${FULLNAME}-reaper`],
        ['ClusterRoleBinding', `${FULLNAME}-reaper-alpha`],
      ];
      const objects = wanted.map(([kind, name]) => {
        const found = docs.find((d) => d.kind === kind && d.metadata.name === name);
        assert.ok(found, `the chart renders ${kind} ${name}`);
        return found;
      });
      // The chart makes a random key; the webhook here signs with the suite's, which an
      // install's Secret would hold: the leak's attestation must verify for the reaper to reap it.
      const keySecret = objects[1]!;
      assert.deepEqual(Object.keys(keySecret.data ?? {}), ['key'], 'the pre-ring entry, as the policy names it');
      keySecret.data = { key: readFileSync(s.keyFile).toString('base64') };

      const line = notes.split('\n').map((l) => l.trim()).find((l) => l.startsWith('deed reap '));
      assert.ok(line, notes);
      assert.equal(line, `deed reap --environment ENV --deed-namespace ${DEED_NAMESPACE} --release ${RELEASE} --as system:serviceaccount:${DEED_NAMESPACE}:${FULLNAME}-reaper-ENV`);
      const args = line.replaceAll('ENV', 'alpha').split(/\s+/).slice(1);

      const created = await s.kubectl(s.admin, ['create', '-f', '-'], objects.map((o) => stringify(o)).join('---\n'));
      assert.equal(created.code, 0, created.stderr);
      try {
        // A leak of alpha's in sandbox-b, its runner gone: the reaper's to delete.
        await plantLeak(s, 'runner-notes-reap', 'notes-reap-leak');

        // `deed` as the NOTES print it; the kubeconfig as kubectl finds it ($KUBECONFIG).
        const { KUBERNETES_SERVICE_HOST: _inCluster, DEED_CONFIG: _config, ...env } = process.env;
        const result = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args], undefined, { ...env, KUBECONFIG: s.admin.kubeconfig! });
        assert.equal(result.code, 0, `${result.stderr}\n${result.stdout}`);
        assert.match(result.stdout, /^reap Secret sandbox-b\/notes-reap-leak uid=\S+: .*\[would-delete\]$/m, result.stdout);
        assert.match(result.stdout, /^summary: environment alpha, dry run/m);
        assert.ok(!result.stdout.includes(readFileSync(s.keyFile).toString('latin1')) && !result.stderr.includes(keySecret.data.key!), 'no key material printed');
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/notes-reap-leak`)).status, 200, 'a dry run deletes nothing');
      } finally {
        await s.kubectl(s.admin, ['delete', 'secret', 'notes-reap-leak', '-n', 'sandbox-b', '--ignore-not-found']);
        await s.kubectl(s.admin, ['delete', '-f', '-', '--ignore-not-found'], objects.map((o) => stringify(o)).join('---\n'));
      }
    });
  });
}
