// What a platform team meets first (issue: "adopts Deed in an afternoon"): the cluster
// administrator is break-glass by default, visibly; `deed reap --as` runs the reaper's
// identity from an administrator's kubeconfig.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { run, type Run } from '../client.js';
import { eventually, PATHS, plantLeak, sandboxPod, secret } from '../objects.js';
import type { Suite } from '../suite.js';
import { helm as helmIn } from '../helm.js';
import { ROOT } from '../../serve-process.js';

const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/policyreports.wgpolicyk8s.io';

export function adoptionCases(suite: () => Suite, tools: { helm: boolean }): void {
  const helm = (s: Suite, args: string[]): Promise<Run> => helmIn(s, 'helm-adoption', args);

  describe('a platform team on its first day', () => {
    test('helm install prints next steps (rollout, opt-in label, dry run, the break-glass default), and helm uninstall keeps the PolicyReport CRD', { skip: tools.helm ? false : 'needs helm in KUBEBUILDER_ASSETS' }, async () => {
      const s = suite();
      // The audit cases created the CRD by hand; the chart must own it to be tested here.
      await s.api(s.admin, 'DELETE', CRD);
      await eventually('the CRD is gone', async () => (await s.api(s.admin, 'GET', CRD)).status === 404);
      const installed = await helm(s, [
        'install', 'notes', join(ROOT, 'manifests/helm/deed'), '-n', 'helm-notes', '--create-namespace',
        '--set', 'audit.enabled=true', '--set', 'audit.installCRDs=true', '--set', 'reaper.environments={alpha}',
        '--set-json', 'policy={"environments":[{"id":"alpha","serviceAccounts":["sandbox-a:runner"]}]}',
      ]);
      let removed: Run | undefined;
      try {
        assert.equal(installed.code, 0, installed.stderr);
        const notes = installed.stdout.slice(installed.stdout.indexOf('NOTES:'));
        assert.match(notes, /kubectl -n helm-notes rollout status deployment\/notes-deed --timeout=120s/);
        assert.match(notes, /kubectl label namespace NAMESPACE deed\.dev\/sandbox=enabled/);
        assert.match(notes, /kubectl apply --dry-run=server -o yaml -f pod\.yaml --as=system:serviceaccount:NAMESPACE:SA/);
        assert.match(notes, /cluster administrators \(group system:masters\) may change or delete any\s+environment's sandbox objects/);
        assert.match(notes, /--as system:serviceaccount:helm-notes:notes-deed-reaper-ENV/);
      } finally {
        // The release's webhooks point at a Service no one serves here: left behind, they would refuse every later write.
        removed = await helm(s, ['uninstall', 'notes', '-n', 'helm-notes', '--wait']);
      }
      assert.equal(removed.code, 0, removed.stderr);
      // --wait sees the configurations gone from storage; the API server's webhook informer drops them a moment later.
      await eventually("the release's webhooks are no longer called", async () => (await s.api(s.runnerA.identity, 'POST', `${PATHS.Secret('sandbox-a')}?dryRun=All`, secret('after-uninstall'))).status === 201);
      assert.match(removed.stdout + removed.stderr, /policyreports\.wgpolicyk8s\.io/, 'helm names what it kept');
      const crd = await s.api(s.admin, 'GET', CRD);
      assert.equal(crd.status, 200, 'the CRD, and every tool\'s reports in it, stays');
      assert.equal(crd.body.metadata.annotations['helm.sh/resource-policy'], 'keep');
    });

    test("the README's step 5 after the install runs as printed: the runner's account, its rights, the opt-in label, and the dry run that shows the pod stamped for alpha and stores nothing", async () => {
      const s = suite();
      const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
      const step5 = readme.slice(readme.indexOf('**5. Install it.**'), readme.indexOf('## Documentation'));
      const blocks = [...step5.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
      const lines = blocks[1]!.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter((l) => l.length > 0);
      assert.ok(lines.length >= 5 && lines.every((l) => l.startsWith('kubectl ')), JSON.stringify(lines));
      // The pod of the tour's step 2, as its heredoc writes it.
      const pod = /cat > pod\.yaml <<'EOF'\n([\s\S]*?)\nEOF/.exec(readme)![1]!;
      const dir = join(s.cp.dir, 'readme-step-5');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'pod.yaml'), `${pod}\n`);
      const env = { ...process.env, KUBECONFIG: s.admin.kubeconfig!, PATH: `${s.cp.bin}:${process.env.PATH ?? ''}` };
      // The suite made sandbox-a, its opt-in label and the runner's account already: a create
      // that finds its object there is the command working, not failing.
      const made: string[] = [];
      let dryRun: Run | undefined;
      for (const line of lines) {
        const answer = await run('bash', ['-c', `cd ${JSON.stringify(dir)} && ${line}`], undefined, env);
        if (line.includes('--dry-run=server')) dryRun = answer;
        else if (answer.code !== 0) assert.match(answer.stderr, /AlreadyExists|already exists/, `${line}: ${answer.stderr}`);
        else if (line.startsWith('kubectl -n sandbox-a create rolebinding')) made.push('rolebinding/runner-edit');
      }
      try {
        assert.equal(dryRun?.code, 0, dryRun?.stderr);
        const shown = parseAllDocuments(dryRun!.stdout)[0]!.toJS() as { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown> };
        assert.equal(shown.metadata.labels?.['deed.dev/environment'], 'alpha');
        assert.equal(shown.metadata.labels?.['deed.dev/managed'], 'true');
        assert.match(shown.metadata.annotations?.['deed.dev/attestation'] ?? '', /^v1:/);
        assert.equal(shown.spec.automountServiceAccountToken, false);
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/sbx-1`)).status, 404, 'the dry run stored nothing');
      } finally {
        for (const what of made) await s.kubectl(s.admin, ['-n', 'sandbox-a', 'delete', what]);
      }
    });

    test("the cluster administrator deletes alpha's sandbox pod: allowed as break-glass, kubectl prints Deed's warning, the API server's audit log keeps the annotation", async () => {
      const s = suite();
      const made = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), sandboxPod('admin-cleans-up'));
      assert.equal(made.status, 201, made.text);
      const removed = await s.kubectl(s.admin, ['delete', 'pod', 'admin-cleans-up', '-n', 'sandbox-a', '--grace-period=0', '--force']);
      assert.equal(removed.code, 0, removed.stderr);
      assert.match(removed.stderr, /Warning: Deed: break-glass use by e2e-admin: allowed past guard\.unmapped/);
      const event = s.cp.audit().find((e) => e.verb === 'delete' && e.objectRef?.name === 'admin-cleans-up' && e.stage === 'ResponseComplete');
      assert.ok(event, 'the delete is in the audit log');
      const annotation = Object.entries(event.annotations ?? {}).find(([k]) => k.endsWith('/break-glass'));
      assert.deepEqual(annotation?.[1], 'guard.unmapped', JSON.stringify(event.annotations));
      // Deed's line names the connection the API server's review came over (HTTP/2): once the
      // answer was sent the stream no longer knew its session, and the line said 'unknown'.
      const line = s.deed.logs().find((l) => l.msg === 'review' && l.name === 'admin-cleans-up' && l.operation === 'DELETE');
      assert.ok(line, 'a review line for the delete');
      assert.deepEqual([line.httpVersion, line.breakGlass, line.peer, line.clientVerified], ['2.0', ['guard.unmapped'], '127.0.0.1', false], JSON.stringify(line));
    });

    test("what the administrator may do anyway carries no break-glass warning", async () => {
      const s = suite();
      const made = await s.kubectl(s.admin, ['create', 'secret', 'generic', 'admin-own', '-n', 'plain', '--from-literal=a=b']);
      assert.equal(made.code, 0, made.stderr);
      assert.doesNotMatch(made.stderr, /break-glass/);
    });

    test("deed reap --as the reaper's service account, from the administrator's kubeconfig, deletes as the reaper would", async () => {
      const s = suite();
      // A leak of alpha's in sandbox-b: no owner reference there, so only the reaper cleans up.
      await plantLeak(s, 'runner-as-test', 'as-leak');
      const result = await run(process.execPath, [
        '--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'reap', '--environment', 'alpha', '--kubeconfig', s.admin.kubeconfig!, '--config', s.policyFile,
        '--namespace', 'sandbox-b', '--apply', '-o', 'json', '--as', 'system:serviceaccount:deed-system:deed-reaper-alpha',
      ]);
      assert.equal(result.code, 0, result.stderr + result.stdout);
      const line = result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { name?: string; outcome?: string }).find((l) => l.name === 'as-leak');
      assert.equal(line?.outcome, 'deleted', result.stdout);
      const event = s.cp.audit().find((e) => e.verb === 'delete' && e.objectRef?.name === 'as-leak' && e.stage === 'ResponseComplete');
      assert.equal(event?.user.username, 'e2e-admin', 'authenticated as the administrator');
      assert.equal((event as { impersonatedUser?: { username?: string } } | undefined)?.impersonatedUser?.username, 'system:serviceaccount:deed-system:deed-reaper-alpha');
    });

    test("the chart's helm test, as helm test creates it and its pod would run it: Deed refuses the forged stamp in the namespace the hook opts in; once that namespace is not reviewed, the test fails", { skip: tools.helm ? false : 'needs helm in KUBEBUILDER_ASSETS' }, async () => {
      const s = suite();
      const rendered = await helm(s, ['template', 'ht', join(ROOT, 'manifests/helm/deed'), '-n', 'helm-test-release', '--show-only', 'templates/tests/dry-run.yaml']);
      assert.equal(rendered.code, 0, rendered.stderr);
      type Doc = { kind: string; metadata: { name: string }; spec?: { serviceAccountName: string; containers: Array<{ command: string[]; env: Array<{ name: string; value: string }> }> } };
      const docs = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as Doc);
      const pod = docs.find((d) => d.kind === 'Pod')!;
      const testNamespace = docs.find((d) => d.kind === 'Namespace')!.metadata.name;
      // This control plane runs no pods: the hook's other objects are created as helm test would, and the pod's script runs here as its service account.
      const ns = await s.kubectl(s.admin, ['create', 'namespace', 'helm-test-release']);
      assert.equal(ns.code, 0, ns.stderr);
      const applied = await s.kubectl(s.admin, ['create', '-f', '-'], docs.filter((d) => d.kind !== 'Pod').map((d) => stringify(d)).join('---\n'));
      assert.equal(applied.code, 0, applied.stderr);
      try {
        const account = await s.newIdentity('helm-test-release', pod.spec!.serviceAccountName);
        // In a cluster the hook's pod starts seconds after its Role; here the script runs at once, so first the binding must be in effect.
        const user = `system:serviceaccount:helm-test-release:${pod.spec!.serviceAccountName}`;
        const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, resourceAttributes: { namespace: testNamespace, verb: 'create', resource: 'pods' } } };
        await eventually(`RBAC lets ${user} create pods in ${testNamespace}`, async () => (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true);
        const dir = join(s.cp.dir, 'helm-test-account');
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'ca.crt'), s.cp.ca);
        writeFileSync(join(dir, 'token'), account.token);
        const container = pod.spec!.containers[0]!;
        const server = new URL(s.cp.server);
        const script = (attempts: number) =>
          run(process.execPath, container.command.slice(1), undefined, {
            ...Object.fromEntries(container.env.map((e) => [e.name, e.value])),
            KUBERNETES_SERVICE_HOST: server.hostname,
            KUBERNETES_SERVICE_PORT: server.port,
            SERVICE_ACCOUNT_DIR: dir,
            ATTEMPTS: String(attempts),
          });
        const passed = await script(30);
        assert.equal(passed.code, 0, passed.stderr);
        assert.match(passed.stdout, new RegExp(`^ok: Deed reviewed a dry-run pod in ${testNamespace} and refused its forged stamp: .*Deed denied this request: \\[stamp\\.forged\\] metadata\\.labels\\["deed\\.dev/environment"\\]: system:serviceaccount:helm-test-release:${pod.spec!.serviceAccountName} acts for no environment`));
        const optedOut = await s.kubectl(s.admin, ['label', 'namespace', testNamespace, 'deed.dev/sandbox-']);
        assert.equal(optedOut.code, 0, optedOut.stderr);
        // The API server's webhooks see the label gone a moment later; until then Deed is still called (and refuses).
        const forged = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'deed-helm-test', labels: { 'deed.dev/environment': 'forged-by-helm-test' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } };
        await eventually(`${testNamespace} is no longer reviewed`, async () => (await s.api(account, 'POST', `${PATHS.Pod(testNamespace)}?dryRun=All`, forged)).status === 201);
        const failed = await script(2);
        assert.equal(failed.code, 1, failed.stdout);
        assert.match(failed.stderr, /was answered 201/);
        assert.match(failed.stderr, /Deed did not review it/);
      } finally {
        await s.kubectl(s.admin, ['delete', 'namespace', testNamespace, 'helm-test-release', '--wait=false']);
      }
    });
  });
}
