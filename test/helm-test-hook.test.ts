// The chart's `helm test` (templates/tests/dry-run.yaml, files/helm-test.cjs). The e2e
// control plane has no kubelet, so the pod never runs there (test/e2e/cases/adoption.ts runs
// its script as its service account against that API server instead). Here the script's
// answers to each outcome, against a stand-in API server over TLS, and the hook as
// `helm template` (the helm binary of KUBEBUILDER_ASSETS) renders it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { generateCertificates } from '../src/server/certificates.js';
import { ROOT } from './cli-process.js';

const CHART = join(ROOT, 'manifests/helm/deed');
const SCRIPT = readFileSync(join(CHART, 'files/helm-test.cjs'), 'utf8');
const HELM = join(process.env.KUBEBUILDER_ASSETS ?? '/nonexistent', 'helm');

interface Seen {
  path: string;
  authorization: string | undefined;
  body: { metadata: { labels: Record<string, string> } };
}

describe("the chart's helm test", () => {
  let dir: string;
  let server: Server;
  let port: number;
  let answers: Array<{ status: number; body: object }>;
  let seen: Seen[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'deed-helm-test-'));
    const certs = await generateCertificates(join(dir, 'certs'), ['localhost', '127.0.0.1']);
    writeFileSync(join(dir, 'ca.crt'), readFileSync(certs.caFile));
    writeFileSync(join(dir, 'token'), 'the-test-token\n');
    server = createServer({ cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) }, (req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body: JSON.parse(text) as Seen['body'] });
        const answer = answers.shift() ?? { status: 201, body: {} };
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const runScript = (attempts: number): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, ['-e', SCRIPT], {
        env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(port), SERVICE_ACCOUNT_DIR: dir, TEST_NAMESPACE: 'deed-system-deed-helm-test', LABEL_PREFIX: 'example.org', ATTEMPTS: String(attempts) },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  const denial = { status: 403, body: { kind: 'Status', code: 403, message: 'admission webhook "mutate.deed.dev" denied the request: Deed denied this request: [stamp.conflict] metadata.labels["example.org/environment"]: ...' } };

  test("passes when Deed refuses the dry-run pod's forged stamp; it asks for a dry run, with the service account's token", async () => {
    seen = [];
    answers = [denial];
    const run = await runScript(3);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ok: Deed reviewed a dry-run pod in deed-system-deed-helm-test and refused its forged stamp/);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.path, '/api/v1/namespaces/deed-system-deed-helm-test/pods?dryRun=All');
    assert.equal(seen[0]!.authorization, 'Bearer the-test-token');
    assert.deepEqual(seen[0]!.body.metadata.labels, { 'example.org/environment': 'forged-by-helm-test' });
  });

  test('asks again while the API server accepts the pod (Deed not yet seeing the new namespace), then passes on the denial', async () => {
    seen = [];
    answers = [{ status: 201, body: {} }, denial];
    const run = await runScript(3);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(seen.length, 2);
  });

  test('fails when the pod is still accepted after its attempts: the webhooks did not review it', async () => {
    seen = [];
    answers = [{ status: 201, body: {} }, { status: 201, body: {} }];
    const run = await runScript(2);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /FAIL: a dry-run pod with a forged example\.org\/environment stamp in deed-system-deed-helm-test was answered 201/);
    assert.match(run.stderr, /Deed did not review it/);
  });

  test('fails at once on any other answer, a refusal that is not Deed\'s included (RBAC, a webhook that cannot be called)', async () => {
    seen = [];
    answers = [{ status: 500, body: { message: 'Internal error occurred: failed calling webhook "mutate.deed.dev": connection refused' } }];
    const run = await runScript(5);
    assert.equal(run.code, 1);
    assert.equal(seen.length, 1);
    assert.match(run.stderr, /answered 500: Internal error occurred: failed calling webhook/);
    seen = [];
    answers = [{ status: 403, body: { message: 'pods is forbidden: User "system:serviceaccount:x:y" cannot create resource "pods"' } }];
    assert.equal((await runScript(5)).code, 1);
  });

  test('helm template renders the test hook: the opted-in namespace, the pod creator Role there, and the pod that runs the script', { skip: existsSync(HELM) ? false : 'needs helm in KUBEBUILDER_ASSETS' }, () => {
    const rendered = spawnSync(HELM, ['template', 'r', CHART, '-n', 'deed-system', '--show-only', 'templates/tests/dry-run.yaml', '--set', 'policy.labelPrefix=example.org'], { encoding: 'utf8' });
    assert.equal(rendered.status, 0, rendered.stderr);
    const docs = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string; labels: Record<string, string>; annotations: Record<string, string> }; rules?: unknown; spec?: { containers: Array<{ command: string[]; env: Array<{ name: string; value: string }> }> } });
    assert.deepEqual(docs.map((d) => d.kind), ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'Pod']);
    assert.ok(docs.every((d) => d.metadata.annotations['helm.sh/hook']!.split(',').includes('test')), 'every object is a test hook: none is installed with the release');
    const [ns, , role, , pod] = docs;
    assert.equal(ns!.metadata.name, 'deed-system-r-deed-helm-test');
    assert.equal(ns!.metadata.labels['deed.dev/sandbox'], 'enabled');
    assert.equal(role!.metadata.namespace, 'deed-system-r-deed-helm-test');
    assert.deepEqual(role!.rules, [{ apiGroups: [''], resources: ['pods'], verbs: ['create'] }]);
    const container = pod!.spec!.containers[0]!;
    assert.deepEqual(container.command, ['node', '-e', SCRIPT]);
    assert.deepEqual(Object.fromEntries(container.env.map((e) => [e.name, e.value])), { TEST_NAMESPACE: 'deed-system-r-deed-helm-test', LABEL_PREFIX: 'example.org' });
  });

  test('nothing stays behind: a passing test deletes every object, a failing one its pod (after helm prints its log), and helm uninstall what the failure left', { skip: existsSync(HELM) ? false : 'needs helm in KUBEBUILDER_ASSETS' }, () => {
    const rendered = spawnSync(HELM, ['template', 'r', CHART, '-n', 'deed-system', '--show-only', 'templates/tests/dry-run.yaml'], { encoding: 'utf8' });
    assert.equal(rendered.status, 0, rendered.stderr);
    const docs = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string; annotations: Record<string, string> } });
    const list = (d: (typeof docs)[number], key: string) => (d.metadata.annotations[key] ?? '').split(',');
    const testNamespace = docs.find((d) => d.kind === 'Namespace')!.metadata.name;
    for (const d of docs) {
      const what = `${d.kind} ${d.metadata.name}`;
      assert.ok(list(d, 'helm.sh/hook-delete-policy').includes('hook-succeeded'), `${what}: deleted when the test passes`);
      assert.ok(list(d, 'helm.sh/hook-delete-policy').includes('before-hook-creation'), `${what}: a leftover is replaced by the next helm test`);
    }
    // Helm applies hook-failed only to a hook that was created and then failed: the pod, the last one. A hook it
    // cannot create (the Role, refused by fail-closed webhooks) stops it with the earlier ones in place.
    const pod = docs.find((d) => d.kind === 'Pod')!;
    assert.ok(list(pod, 'helm.sh/hook-delete-policy').includes('hook-failed'), 'a failed test pod is deleted');
    assert.deepEqual(list(pod, 'helm.sh/hook-output-log-policy'), ['hook-failed'], 'after helm prints its log');
    // What a failure leaves outside the test namespace is removed by helm uninstall (a post-delete hook); the rest goes with the namespace.
    for (const d of docs) {
      if (d.kind === 'Pod' || d.metadata.namespace === testNamespace) continue;
      assert.deepEqual(list(d, 'helm.sh/hook').sort(), ['post-delete', 'test'], `${d.kind} ${d.metadata.name}: removed by helm uninstall after a failed test`);
    }
    assert.deepEqual(docs.filter((d) => list(d, 'helm.sh/hook').includes('post-delete')).map((d) => d.kind), ['Namespace', 'ServiceAccount'], 'helm uninstall never runs the test pod');
  });

  test('an install renders no test object: they exist only while helm test runs', { skip: existsSync(HELM) ? false : 'needs helm in KUBEBUILDER_ASSETS' }, () => {
    const rendered = spawnSync(HELM, ['template', 'r', CHART, '-n', 'deed-system', '--no-hooks'], { encoding: 'utf8' });
    assert.equal(rendered.status, 0, rendered.stderr);
    assert.doesNotMatch(rendered.stdout, /helm-test|app\.kubernetes\.io\/component: test/);
  });
});
