// deed audit --write-reports where the report kind's CRD is not installed: the list of
// Deed's reports is answered 404, as kube-apiserver answers for a resource it does not
// serve. The run is the real CLI in a child process against test/fake-apiserver.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from './cli-process.js';
import { cliCluster } from './cli-cluster.js';

const cluster = cliCluster('deed-audit-crd-');
const { kubeconfig, policyFile } = cluster;


function audit(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'audit', '--kubeconfig', kubeconfig, '--config', policyFile, ...args],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, DEED_CONFIG: '', KUBECONFIG: '' }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    ),
  );
}

const NOT_SERVED = { status: 404, reason: 'NotFound', message: 'the server could not find the requested resource' };

describe('deed audit --write-reports without the report CRD', () => {
  test('prints one error that names the CRD and how to install it, writes nothing, and exits 1', async () => {
    cluster.server.faults.push({ path: /^\/apis\/wgpolicyk8s\.io\//, answer: NOT_SERVED });
    try {
      const from = cluster.server.requests.length;
      const run = await audit(['--write-reports', '--quiet']);
      assert.equal(run.code, 1, run.stderr);
      const errors = run.stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; error?: string })
        .filter((l) => l.level >= 50);
      assert.equal(errors.length, 1, run.stderr);
      assert.equal(
        errors[0]!.error,
        "--write-reports: the API server does not serve wgpolicyk8s.io/v1alpha2 PolicyReport (its CRD is not installed), so no report can be written: install its CRD (the chart's audit.installCRDs=true, the kustomize component components/policyreport-crd, or deed manifests --audit --audit-crds), or let Kyverno or Policy Reporter install it",
      );
      const sent = cluster.server.requests.slice(from);
      assert.deepEqual(sent.filter((r) => r.method !== 'GET'), [], 'no report write was tried');
      assert.match(run.stdout, /^summary: 0 objects in 0 namespaces, .* failed 1$/m);
    } finally {
      cluster.server.faults.length = 0;
    }
  });

  test('with --report-api openreports the error says Deed ships no openreports CRD, and names the other report API', async () => {
    cluster.server.faults.push({ path: /^\/apis\/openreports\.io\//, answer: NOT_SERVED });
    try {
      const run = await audit(['--write-reports', '--quiet', '--report-api', 'openreports']);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /does not serve openreports\.io\/v1alpha1 Report \(its CRD is not installed\), so no report can be written: install the openreports\.io CRDs \(Deed does not ship them\), or write wgpolicyk8s PolicyReports with --report-api wgpolicyk8s/);
    } finally {
      cluster.server.faults.length = 0;
    }
  });
});
