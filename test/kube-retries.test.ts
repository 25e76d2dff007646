// A 429 is "not served, try again": every Kubernetes client of Deed sends the call again
// after its Retry-After, within the call's deadline (src/kube/client.ts, withRetries and the
// reaper's throttle). Proven against test/fake-apiserver.ts, which answers 429 with a
// Retry-After and a Status as kube-apiserver does; the end-to-end suite
// (test/e2e/cases/throttling.ts) proves the same against kube-apiserver's own Priority and
// Fairness.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { registerAudit } from '../src/cli/audit.js';
import { registerKeys } from '../src/cli/keys.js';
import { registerReap } from '../src/cli/reap.js';
import { createKubeClient, withRetries, type RetryNotice } from '../src/kube/client.js';
import { KubeError } from '../src/kube/errors.js';
import { createObjectReader } from '../src/kube/object-reader.js';
import { createReportStore } from '../src/kube/reports.js';
import { runInProcess } from './cli-process.js';
import { cliCluster } from './cli-cluster.js';

const INITIALISING = { status: 429, reason: 'TooManyRequests', message: 'storage is (re)initializing', headers: { 'Retry-After': '1' } };

const cluster = cliCluster('deed-retries-');
const { kubeconfig, policyFile } = cluster;


const reports = () => cluster.server.requests.filter((r) => r.path === '/apis/wgpolicyk8s.io/v1alpha2/policyreports');

describe('a call answered 429', () => {
  test('is sent again after its Retry-After and succeeds, within the deadline', async () => {
    cluster.server.faults.push({ method: 'GET', path: /\/pods\/runner-0$/, times: 1, answer: INITIALISING });
    cluster.server.put('pods', { metadata: { name: 'runner-0', namespace: 'sandbox-a' } });
    const core = cluster.server.kubeConfig().makeApiClient(CoreV1Api);
    const started = Date.now();
    const pod = await withRetries(5000, 'get pod', undefined, (o) => core.readNamespacedPod({ namespace: 'sandbox-a', name: 'runner-0' }, o));
    assert.equal(pod.metadata?.name, 'runner-0');
    assert.ok(Date.now() - started >= 1000, 'it waited for the Retry-After');
  });

  test('whose Retry-After would end past the deadline is not waited for: the 429 stands at once', async () => {
    cluster.server.faults.push({ method: 'GET', path: /\/pods\/runner-0$/, times: 1, answer: { ...INITIALISING, headers: { 'Retry-After': '5' } } });
    const core = cluster.server.kubeConfig().makeApiClient(CoreV1Api);
    const started = Date.now();
    await assert.rejects(
      withRetries(2000, 'get pod', undefined, (o) => core.readNamespacedPod({ namespace: 'sandbox-a', name: 'runner-0' }, o)),
      (err: unknown) => err instanceof KubeError && err.reason === 'TooManyRequests' && /storage is \(re\)initializing/.test(err.message),
    );
    assert.ok(Date.now() - started < 1500, 'no wait that could not end in time');
    cluster.server.faults.length = 0;
  });

  test("the webhook's lookups retry within the review's lookup budget, and a budget too short for the wait answers unknown", async () => {
    const reader = createObjectReader(cluster.server.kubeConfig());
    cluster.server.faults.push({ method: 'GET', path: /\/pods\/runner-0$/, times: 1, answer: INITIALISING });
    const found = (await reader.read([{ resource: 'pods', namespace: 'sandbox-a', name: 'runner-0' }], 3000)).get('pods', 'sandbox-a', 'runner-0');
    assert.equal(found.state, 'found');
    cluster.server.faults.push({ method: 'GET', path: /\/pods\/runner-0$/, times: 1, answer: INITIALISING });
    const unknown = (await reader.read([{ resource: 'pods', namespace: 'sandbox-a', name: 'runner-0' }], 500)).get('pods', 'sandbox-a', 'runner-0');
    assert.equal(unknown.state, 'unknown');
    cluster.server.faults.length = 0;
  });

  test("the audit's report store lists again after a 429 and gets the answer", async () => {
    cluster.server.faults.push({ method: 'GET', path: /policyreports$/, times: 2, answer: INITIALISING });
    const before = reports().length;
    assert.deepEqual(await createReportStore(cluster.server.kubeConfig(), 'wgpolicyk8s', 10_000).namespacesWithReports(), []);
    assert.equal(reports().length - before, 3, 'two 429s, then the list');
  });
});

describe('a 429 that does not clear', () => {
  const FOREVER = { status: 429, reason: 'TooManyRequests', message: 'too many requests, please try again later', headers: { 'Retry-After': '1' } };

  test("the reaper's client retries after each Retry-After, tells of each retry, and gives up after its retries in one line that says so", async () => {
    cluster.server.faults.push({ method: 'GET', path: /\/pods\/runner-0$/, answer: FOREVER });
    const retries: RetryNotice[] = [];
    const client = createKubeClient(cluster.server.kubeConfig(), { timeoutMs: 2500, maxRetries: 2, labelPrefix: 'deed.dev', onRetry: (r) => retries.push(r) });
    const started = Date.now();
    try {
      await assert.rejects(client.getPod('sandbox-a', 'runner-0'), (err: unknown) => {
        assert.ok(err instanceof KubeError && err.reason === 'TooManyRequests');
        assert.equal(
          err.message.replace(/over \d+\.\d s/, 'over T s'),
          "get pod sandbox-a/runner-0: HTTP 429 (too many requests, please try again later) on each of 3 tries over T s, each retry after the server's Retry-After (1 s); gave up after 2 retries, the most it makes",
        );
        return true;
      });
      assert.ok(Date.now() - started >= 2000, 'it waited for each Retry-After');
      assert.deepEqual(retries.map((r) => [r.what, r.retryAfterSeconds, r.attempt, r.message]), [
        ['get pod sandbox-a/runner-0', 1, 1, 'too many requests, please try again later'],
        ['get pod sandbox-a/runner-0', 1, 2, 'too many requests, please try again later'],
      ]);
    } finally {
      cluster.server.faults.length = 0;
    }
  });

  test('a single call (the webhook\'s lookups, the reports) tells of each retry and gives up in the same words', async () => {
    cluster.server.faults.push({ method: 'GET', path: /\/pods\/runner-0$/, answer: FOREVER });
    const core = cluster.server.kubeConfig().makeApiClient(CoreV1Api);
    const retries: RetryNotice[] = [];
    try {
      await assert.rejects(
        // 1.9 s: the retry after the server's 1 s has 0.9 s to be answered (1.5 s left it 0.5, which a loaded CI machine once missed: 'no answer within 1 ms').
        withRetries(1900, 'get pod', undefined, (o) => core.readNamespacedPod({ namespace: 'sandbox-a', name: 'runner-0' }, o), { onRetry: (r) => retries.push(r) }),
        /^KubeError: get pod: HTTP 429 \(too many requests, please try again later\) on each of 2 tries over 1\.\d s, each retry after the server's Retry-After \(1 s\); gave up within the call's deadline of 1\.9 s$/,
      );
      assert.deepEqual(retries.map((r) => r.attempt), [1]);
    } finally {
      cluster.server.faults.length = 0;
    }
  });

  test('deed audit whose namespace list stays throttled ends as a failed run (exit status 1) with its summary, not as a crash', async () => {
    cluster.server.faults.push({ method: 'GET', path: /^\/api\/v1\/namespaces$/, answer: FOREVER });
    try {
      const run = await runInProcess(registerAudit, ['audit', '--kubeconfig', kubeconfig, '--config', policyFile, '--timeout', '1.5', '-o', 'json']);
      assert.equal(run.error, undefined, run.error?.message);
      assert.equal(run.exitCode, 1);
      const summary = JSON.parse(run.stdout.trim()) as Record<string, unknown>;
      assert.equal(summary.type, 'summary');
      assert.equal(summary.error, 1);
      assert.equal(summary.namespaces, 0);
    } finally {
      cluster.server.faults.length = 0;
    }
  });

});

describe('deed audit right after the PolicyReport CRD is installed', () => {
  test('a report list answered "429 storage is (re)initializing" is retried, and the run completes with exit status 0', async () => {
    cluster.server.faults.push({ method: 'GET', path: /policyreports$/, times: 1, answer: INITIALISING });
    const run = await runInProcess(registerAudit, ['audit', '--kubeconfig', kubeconfig, '--config', policyFile, '--write-reports', '--quiet', '--namespace', 'sandbox-b']);
    assert.equal(run.error, undefined, run.error?.message);
    assert.equal(run.exitCode ?? 0, 0, run.stderr);
    assert.match(run.stdout, /^summary: /m);
    assert.equal(cluster.server.faults.find((f) => f.path.source === 'policyreports$')?.times, 0, 'the 429 was answered');
  });
});

describe('--as USER impersonates, as kubectl does', () => {
  for (const [command, register, args] of [
    ['reap', registerReap, ['reap', '--environment', 'alpha']],
    ['audit', registerAudit, ['audit', '--quiet']],
    ['keys usage', registerKeys, ['keys', 'usage']],
  ] as const) {
    test(`deed ${command} sends Impersonate-User on every call`, async () => {
      const from = cluster.server.requests.length;
      const who = 'system:serviceaccount:deed-system:deed-reaper-alpha';
      const run = await runInProcess(register as Parameters<typeof runInProcess>[0], [...args, '--kubeconfig', kubeconfig, '--config', policyFile, '--namespace', 'sandbox-a', '--as', who]);
      assert.equal(run.error, undefined, run.error?.message);
      const sent = cluster.server.requests.slice(from);
      assert.ok(sent.length > 0);
      assert.deepEqual([...new Set(sent.map((r) => r.impersonate))], [who]);
    });
  }
});
