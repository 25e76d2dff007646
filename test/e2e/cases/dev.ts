// `deed dev`, the local loop, as a developer runs it: a child process on the admin's
// kubeconfig, its own policy and attestation key, registering deed-dev configurations that
// the API server really calls, and removing them when it stops; a crash leaves them behind,
// and `deed dev --cleanup` or the next run deals with them.
// Kept apart from the suite's Deed: the dev webhooks select only this case's namespace
// (--only-namespace), and the suite's own configurations are taken away meanwhile
// (withoutWebhooks), since both would otherwise review writes there, with different keys.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { DEV_NAME } from '../../../src/install/dev-webhooks.js';
import { mutatingRules, renderManifests, validatingRules } from '../../../src/install/manifests.js';
import { singleKeyRing, verifyObject } from '../../../src/policy/stamps/key-ring.js';
import { readAttestationKey } from '../../../src/server/attestation-key.js';
import { ROOT } from '../../serve-process.js';
import type { Identity } from '../client.js';
import { eventually, KEYS, PATHS, secret } from '../objects.js';
import { adopt, freePort, removeOnExit } from '../processes.js';
import { withoutWebhooks, type Suite } from '../suite.js';

const NS = 'dev-loop';
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const CONFIGURATIONS = [`${ADMISSION}/mutatingwebhookconfigurations/${DEV_NAME}`, `${ADMISSION}/validatingwebhookconfigurations/${DEV_NAME}`];

interface StoredWebhook {
  name: string;
  clientConfig: unknown;
  failurePolicy: string;
  matchConditions: unknown;
  namespaceSelector: { matchExpressions: unknown[] };
}

interface DevProcess {
  child: ChildProcess;
  port: number;
  stderr: () => string;
  /** The exit status, once it exits (null: ended by a signal). */
  exited: Promise<number | null>;
}

export function devCases(suite: () => Suite): void {
  describe('deed dev, the local loop, in the real API server', () => {
    let dir: string;
    let policyFile: string;
    let keyFile: string;
    let runner: Identity;
    const children: ChildProcess[] = [];

    /** `deed dev ARGS` on the admin's kubeconfig; resolves at its ready line. */
    const startDev = async (s: Suite, args: string[]): Promise<DevProcess> => {
      const port = await freePort();
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'dev', '--kubeconfig', s.admin.kubeconfig!, '--config', policyFile, '--cert-dir', join(dir, 'certs'), '--port', String(port), '--only-namespace', NS, ...args],
        { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, DEED_LOG_LEVEL: 'warn' } },
      );
      adopt(child);
      children.push(child);
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`deed dev printed no ready line within 60 s:\n${stderr}`)), 60_000);
        child.stderr!.on('data', () => {
          if (/^deed dev: ready: /m.test(stderr)) {
            clearTimeout(timer);
            resolve();
          }
        });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`deed dev exited with ${code} before it was ready:\n${stderr}`));
        });
      });
      return { child, port, stderr: () => stderr, exited };
    };

    /** Whatever a test left: no process, no deed-dev configuration (a leftover would review every later write here). */
    const cleanUp = async (s: Suite) => {
      for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const path of CONFIGURATIONS) await s.api(s.admin, 'DELETE', path);
    };

    const dryRun = (s: Suite, body: unknown) => s.api(runner, 'POST', `${PATHS.Secret(NS)}?dryRun=All`, body);
    /** Whether a dry-run write here comes back stamped: only the dev Deed reviews this namespace. */
    const stamped = async (s: Suite) => {
      const answer = await dryRun(s, secret('probe'));
      return answer.status === 201 && answer.body.metadata.labels?.['deed.dev/environment'] === 'dev';
    };
    const devKeyVerifies = (obj: KubeObject) => verifyObject(singleKeyRing(readAttestationKey(keyFile)), obj, KEYS, obj.kind!, obj.metadata.namespace!).ok;

    before(async () => {
      const s = suite();
      dir = mkdtempSync(join(tmpdir(), 'deed-e2e-dev-'));
      removeOnExit(dir);
      keyFile = join(dir, 'dev-attestation.key');
      writeFileSync(keyFile, 'e2e-dev-loop-key-not-the-suites-0123456789abcdef', { mode: 0o600 });
      policyFile = join(dir, 'policy.yaml');
      // An environment the suite's policy does not have: a stamp "dev" is the dev Deed's.
      writeFileSync(policyFile, `labelPrefix: deed.dev\nattestation:\n  keyFile: ${keyFile}\nenvironments:\n  - id: dev\n    serviceAccounts: ["${NS}:*"]\nbreakGlass:\n  users: ["e2e-admin"]\n`);
      const ns = await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } });
      assert.equal(ns.status, 201, ns.text);
      runner = await s.newIdentity(NS, 'runner');
      await s.bindSandboxRole(NS, [[NS, 'runner']]);
    });

    after(async () => {
      await cleanUp(suite());
    });

    test('registers the install\'s webhooks by URL with its CA, reviews writes in its namespace with its own key, and removes them on SIGINT, exiting 0', async () => {
      const s = suite();
      await withoutWebhooks(s, async () => {
        try {
          const dev = await startDev(s, []);
          assert.match(dev.stderr(), new RegExp(`ready: registered mutatingwebhookconfiguration/deed-dev and validatingwebhookconfiguration/deed-dev, calling https://127\\.0\\.0\\.1:${dev.port} for writes in namespace ${NS} .*failurePolicy Ignore; Ctrl-C`));

          const ca = Buffer.from(readFileSync(join(dir, 'certs', 'ca.crt'))).toString('base64');
          const rendered = renderManifests({ namespace: 'deed-system', image: 'deed:e2e', policy: readFileSync(policyFile, 'utf8').replace(/attestation:\n {2}keyFile: .*\n/, '') });
          for (const [path, kind, rules] of [
            [CONFIGURATIONS[0]!, 'MutatingWebhookConfiguration', mutatingRules()],
            [CONFIGURATIONS[1]!, 'ValidatingWebhookConfiguration', validatingRules()],
          ] as const) {
            const stored = await s.api(s.admin, 'GET', path);
            assert.equal(stored.status, 200, stored.text);
            const install = rendered.find((o) => o.kind === kind) as { webhooks: Array<Record<string, unknown>> };
            assert.deepEqual(stored.body.webhooks.map((w: { name: string }) => w.name), install.webhooks.map((w) => w.name));
            for (const [i, w] of (stored.body.webhooks as StoredWebhook[]).entries()) {
              const suffix = (install.webhooks[i]!.clientConfig as { service: { path: string } }).service.path;
              assert.deepEqual(w.clientConfig, { url: `https://127.0.0.1:${dev.port}${suffix}`, caBundle: ca }, `${kind} ${w.name}`);
              assert.equal(w.failurePolicy, 'Ignore');
              assert.deepEqual(w.matchConditions, install.webhooks[i]!.matchConditions);
              assert.deepEqual(w.namespaceSelector.matchExpressions.slice(0, -1), (install.webhooks[i]!.namespaceSelector as { matchExpressions: unknown[] }).matchExpressions);
              assert.deepEqual(w.namespaceSelector.matchExpressions.at(-1), { key: 'kubernetes.io/metadata.name', operator: 'In', values: [NS] });
            }
            assert.deepEqual(stored.body.webhooks[0].rules, rules);
          }

          // The API server calls the dev Deed: a dry run comes back stamped for "dev", signed with the dev key.
          await eventually('the API server calls the dev webhooks', () => stamped(s));
          const made = await dryRun(s, secret('dev-made'));
          assert.equal(made.status, 201, made.text);
          assert.equal(made.body.metadata.labels['deed.dev/environment'], 'dev');
          assert.ok(devKeyVerifies(made.body as KubeObject), 'the attestation verifies under the dev key');
          assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/dev-made`)).status, 404, 'a dry run stores nothing');
          // ... and refuses what policy forbids, naming the rule.
          const forged = secret('dev-forged') as { metadata: Record<string, unknown> };
          forged.metadata.labels = { 'deed.dev/environment': 'prod' };
          const refused = await dryRun(s, forged);
          assert.equal(refused.status, 403, refused.text);
          assert.match(refused.body.message, /admission webhook "mutate\.deed\.dev" denied the request: .*\[stamp\.conflict\] metadata\.labels\["deed\.dev\/environment"\].*expected "dev"/);

          dev.child.kill('SIGINT');
          assert.equal(await dev.exited, 0, dev.stderr());
          assert.match(dev.stderr(), /interrupted: removed mutatingwebhookconfiguration\/deed-dev and validatingwebhookconfiguration\/deed-dev\n/);
          for (const path of CONFIGURATIONS) assert.equal((await s.api(s.admin, 'GET', path)).status, 404, path);
          await eventually('writes here are no longer reviewed by the dev Deed', async () => !(await stamped(s)));
        } finally {
          await cleanUp(s);
        }
      });
    });

    test('a crash with --failure-policy Fail leaves configurations that refuse writes; the next run replaces them and --cleanup removes them', async () => {
      const s = suite();
      await withoutWebhooks(s, async () => {
        try {
          const first = await startDev(s, ['--failure-policy', 'Fail']);
          first.child.kill('SIGKILL');
          await first.exited;
          for (const path of CONFIGURATIONS) assert.equal((await s.api(s.admin, 'GET', path)).status, 200, `${path} is left behind`);
          // What --failure-policy Ignore, the default, spares a crashed loop: every write here refused.
          await eventually('the leftover fails closed', async () => {
            const answer = await dryRun(s, secret('after-crash'));
            return answer.status === 500 && /failed calling webhook "mutate\.deed\.dev"/.test(answer.body.message);
          });

          const second = await startDev(s, ['--failure-policy', 'Fail']);
          assert.match(second.stderr(), /ready: registered .* \(replacing a previous run's\), calling https:\/\/127\.0\.0\.1:\d+ /);
          const stored = await s.api(s.admin, 'GET', CONFIGURATIONS[0]!);
          assert.equal(stored.body.webhooks[0].clientConfig.url, `https://127.0.0.1:${second.port}/admit`); // mutate.deed.dev judges a CREATE whole
          await eventually('the API server calls the new run', () => stamped(s));
          second.child.kill('SIGKILL');
          await second.exited;

          const cleanup = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'dev', '--cleanup', '--kubeconfig', s.admin.kubeconfig!], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
          let stderr = '';
          cleanup.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
          const code = await new Promise<number | null>((resolve) => cleanup.once('exit', resolve));
          assert.equal(code, 0, stderr);
          assert.equal(stderr, 'deed dev: removed mutatingwebhookconfiguration/deed-dev and validatingwebhookconfiguration/deed-dev\n');
          for (const path of CONFIGURATIONS) assert.equal((await s.api(s.admin, 'GET', path)).status, 404, path);
          await eventually('writes here pass again', async () => (await dryRun(s, secret('after-cleanup'))).status === 201);
        } finally {
          await cleanUp(s);
        }
      });
    });
  });
}
