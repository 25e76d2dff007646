// `deed reap` against the real API server: a dry run, --apply with the UID as a delete
// precondition (read back from the API server's audit log), kinds with no objects (the
// API server answers "items": null), an owner replaced under the same name, an owner read
// that fails; the runner recreated mid-sweep (a proxy holds a list meanwhile), stamps
// outside the review scope, the reaper-delete policy that holds its token to its own objects
// in the scope, and deletes throttled by API Priority and Fairness.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request, type Server } from 'node:https';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { generateCertificates } from '../../../src/server/certificates.js';
import { run } from '../client.js';
import { writeKubeconfig } from '../control-plane.js';
import { LEASES, microTime, networkPolicy, PATHS, secret, signedSecret } from '../objects.js';
import { readKey, withoutWebhooks } from '../suite.js';
import type { Runner, Suite } from '../suite.js';
import { ROOT } from '../../serve-process.js';

export interface ReapLine {
  type: 'decision' | 'summary';
  action?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  code?: string;
  outcome?: string;
  reason?: string;
  errors?: number;
  reaped?: number;
}

export async function reap(s: Suite, kubeconfig: string, args: string[]): Promise<{ code: number; lines: ReapLine[]; stderr: string; stdout: string }> {
  const result = await run(process.execPath, [
    '--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'reap',
    '--environment', 'alpha', '--kubeconfig', kubeconfig, '--config', s.policyFile, '-o', 'json', '--timeout', '5', ...args,
  ]);
  return { code: result.code, stderr: result.stderr, stdout: result.stdout, lines: result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ReapLine) };
}

export const about = (lines: ReapLine[], name: string) => lines.find((l) => l.type === 'decision' && l.name === name);

export function reaperCases(suite: () => Suite): void {
  describe('deed reap in a real API server', () => {
    let leaker: Runner;
    let leakUid: string;

    before(async () => {
      const s = suite();
      // A runner of alpha that writes into sandbox-b: no owner reference there (owners
      // cascade only inside a namespace), so only the reaper can clean up after it.
      await s.bindSandboxRole('sandbox-b', [['sandbox-a', 'runner']]);
      leaker = await s.newRunner('sandbox-a', 'runner-leaky');
      const leak = await s.api(leaker.identity, 'POST', PATHS.Secret('sandbox-b'), secret('leaked-creds'));
      assert.equal(leak.status, 201, leak.text);
      assert.equal(leak.body.metadata.ownerReferences, undefined);
      leakUid = leak.body.metadata.uid as string;
      const live = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-b'), secret('live-creds'));
      assert.equal(live.status, 201, live.text);
    });

    test('a sweep over kinds with no managed objects completes cleanly and exits 0', async () => {
      const s = suite();
      const result = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'plain']);
      assert.equal(result.code, 0, result.stderr + JSON.stringify(result.lines));
      const summary = result.lines.find((l) => l.type === 'summary')!;
      assert.equal(summary.errors, 0);
      assert.equal(result.lines.filter((l) => l.action === 'error').length, 0);
    });

    test('while the owner lives both Secrets are kept; once it is gone the dry run names the leak and deletes nothing', async () => {
      const s = suite();
      const alive = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b']);
      assert.equal(alive.code, 0, alive.stderr);
      assert.equal(about(alive.lines, 'leaked-creds')?.action, 'keep');
      assert.equal(about(alive.lines, 'live-creds')?.action, 'keep');

      assert.equal((await s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-leaky`, { gracePeriodSeconds: 0 })).status, 200);
      const gone = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b']);
      assert.equal(gone.code, 0, gone.stderr);
      assert.equal(about(gone.lines, 'leaked-creds')?.action, 'reap');
      assert.equal(about(gone.lines, 'leaked-creds')?.outcome, 'would-delete');
      assert.equal(about(gone.lines, 'live-creds')?.action, 'keep');
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/leaked-creds`)).status, 200);
    });

    test('an owner read that fails keeps the object and says why', async () => {
      const s = suite();
      const proxy = await failingOwnerReads(s);
      try {
        const result = await reap(s, proxy.kubeconfig, ['--namespace', 'sandbox-b']);
        assert.equal(result.code, 0, result.stderr);
        const leak = about(result.lines, 'leaked-creds')!;
        assert.equal(leak.action, 'keep');
        assert.equal(leak.code, 'owner-unreadable');
        assert.ok(proxy.failed() > 0, 'the proxy failed an owner read');
      } finally {
        await proxy.close();
      }
    });

    test('with the owner replaced under the same name, --apply deletes the leak with its UID as a precondition', async () => {
      const s = suite();
      const replacement = await s.newRunner('sandbox-a', 'runner-leaky');
      assert.notEqual(replacement.uid, leaker.uid);
      const applied = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b', '--apply']);
      assert.equal(applied.code, 0, applied.stderr);
      assert.equal(about(applied.lines, 'leaked-creds')?.outcome, 'deleted');
      assert.equal(about(applied.lines, 'live-creds')?.action, 'keep');
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/leaked-creds`)).status, 404);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/live-creds`)).status, 200);
      const deletes = s.cp.audit().filter((e) => e.verb === 'delete' && e.objectRef?.name === 'leaked-creds' && e.stage === 'ResponseComplete');
      assert.equal(deletes.length, 1);
      assert.equal(deletes[0]!.user.username, 'system:serviceaccount:deed-system:deed-reaper-alpha');
      assert.equal(deletes[0]!.requestObject?.preconditions?.uid, leakUid);
    });

    test("a run lease that says nothing (created, never renewed: the renewer crashed) does not keep a run whose runner is gone: its Secret is reaped as owner-gone", async () => {
      const s = suite();
      const crashed = await s.newRunner('sandbox-a', 'runner-undated');
      const lease = await s.api(crashed.identity, 'POST', LEASES('sandbox-b'), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'undated-run' }, spec: { holderIdentity: 'runner-undated', leaseDurationSeconds: 20 } });
      assert.equal(lease.status, 201, lease.text);
      const named = await s.api(crashed.identity, 'POST', PATHS.Secret('sandbox-b'), secret('undated-creds', { 'deed.dev/run-lease': 'undated-run' }));
      assert.equal(named.status, 201, named.text);
      const kept = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b']);
      assert.equal(about(kept.lines, 'undated-creds')?.code, 'owner-running', 'kept while its runner lives');
      assert.equal((await s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-undated`, { gracePeriodSeconds: 0 })).status, 200);
      const applied = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b', '--apply']);
      assert.equal(applied.code, 0, applied.stderr);
      const line = about(applied.lines, 'undated-creds');
      assert.deepEqual([line?.action, line?.code, line?.outcome], ['reap', 'owner-gone', 'deleted'], JSON.stringify(line));
      assert.equal(about(applied.lines, 'live-creds')?.action, 'keep');
    });
  });
}

export function reaperScaleCases(suite: () => Suite): void {
  describe('deed reap: owner facts, review scope and throttling in a real API server', () => {
    before(async () => {
      // alpha's runners write into sandbox-b: no owner reference there, so only the reaper cleans up.
      await suite().bindSandboxRole('sandbox-b', [['sandbox-a', 'runner']]);
    });

    test('the runner recreated mid-sweep: its new NetworkPolicy, listed after the old runner read gone, is kept while the old Secret is deleted', async () => {
      const s = suite();
      const old = await s.newRunner('sandbox-a', 'runner-race');
      assert.equal((await s.api(old.identity, 'POST', PATHS.Secret('sandbox-b'), secret('race-old-creds'))).status, 201);
      assert.equal((await s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-race`, { gracePeriodSeconds: 0 })).status, 200);

      // The proxy holds the NetworkPolicy list until the platform has recreated runner-race
      // (another uid) and the new runner has created its NetworkPolicy.
      const { kubeconfig, reached, release, close } = await holdFirstList(s, 'race', PATHS.NetworkPolicy('sandbox-b'));
      try {
        const sweep = reap(s, kubeconfig, ['--namespace', 'sandbox-b', '--apply']);
        await reached;
        const recreated = await s.newRunner('sandbox-a', 'runner-race');
        assert.notEqual(recreated.uid, old.uid);
        const live = await s.api(recreated.identity, 'POST', PATHS.NetworkPolicy('sandbox-b'), networkPolicy('race-live-egress'));
        assert.equal(live.status, 201, live.text);
        assert.equal(live.body.metadata.labels['deed.dev/owner-uid'], recreated.uid);
        release();
        const result = await sweep;
        assert.equal(result.code, 0, result.stderr + result.stdout);
        assert.equal(about(result.lines, 'race-old-creds')?.outcome, 'deleted');
        const kept = about(result.lines, 'race-live-egress');
        assert.equal(kept?.action, 'keep', JSON.stringify(kept));
        assert.equal(kept?.code, 'owner-running');
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.NetworkPolicy('sandbox-b')}/race-live-egress`)).status, 200);
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/race-old-creds`)).status, 404);
      } finally {
        await close();
      }
    });

    test("a run lease's name freed by beta and taken again by alpha's live run mid-sweep: the earlier 'replaced' read does not reap alpha's live NetworkPolicy listed after it (rev-87)", async () => {
      const s = suite();
      const runner = await s.newRunner('sandbox-a', 'runner-slot');
      // A Lease renewed now, for an hour.
      const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 3600, renewTime: microTime(new Date()) } });
      // alpha's earlier run: its Lease slot-1 and a Secret naming it; the run ends and alpha deletes its Lease; beta takes the name.
      assert.equal((await s.api(runner.identity, 'POST', LEASES('sandbox-b'), lease('slot-1'))).status, 201);
      const old = await s.api(runner.identity, 'POST', PATHS.Secret('sandbox-b'), secret('slot-old', { 'deed.dev/run-lease': 'slot-1' }));
      assert.equal(old.status, 201, old.text);
      assert.equal((await s.api(runner.identity, 'DELETE', `${LEASES('sandbox-b')}/slot-1`)).status, 200);
      const squat = await s.api(s.runnerB.identity, 'POST', LEASES('sandbox-b'), lease('slot-1'));
      assert.equal(squat.status, 201, squat.text);
      assert.equal(squat.body.metadata.labels['deed.dev/environment'], 'beta');

      // The sweep reads slot-1 for the Secret (beta's: lease-replaced), then lists NetworkPolicies: held there.
      const { kubeconfig, reached, release, close } = await holdFirstList(s, 'slot', PATHS.NetworkPolicy('sandbox-b'));
      try {
        const sweep = reap(s, kubeconfig, ['--namespace', 'sandbox-b', '--apply']);
        await reached;
        // beta lets the name go; alpha's next run takes it and creates a NetworkPolicy naming it (admitted: the Lease is alpha's).
        assert.equal((await s.api(s.runnerB.identity, 'DELETE', `${LEASES('sandbox-b')}/slot-1`)).status, 200);
        const retaken = await s.api(runner.identity, 'POST', LEASES('sandbox-b'), lease('slot-1'));
        assert.equal(retaken.status, 201, retaken.text);
        const live = await s.api(runner.identity, 'POST', PATHS.NetworkPolicy('sandbox-b'), { ...networkPolicy('slot-live'), metadata: { name: 'slot-live', annotations: { 'deed.dev/run-lease': 'slot-1' } } });
        assert.equal(live.status, 201, live.text);
        release();
        const result = await sweep;
        assert.equal(result.code, 0, result.stderr + result.stdout);
        assert.equal(about(result.lines, 'slot-old')?.code, 'lease-replaced');
        const kept = about(result.lines, 'slot-live');
        assert.equal(kept?.action, 'keep', JSON.stringify(kept));
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.NetworkPolicy('sandbox-b')}/slot-live`)).status, 200, "alpha's live NetworkPolicy stands");
      } finally {
        await close();
      }
    });

    test('a leak its environment holds with a finalizer is deleted once, then reported deletion-stuck past the grace, naming the finalizer (rev-87)', async () => {
      const s = suite();
      const runner = await s.newRunner('sandbox-a', 'runner-fin');
      const made = await s.api(runner.identity, 'POST', PATHS.Secret('sandbox-b'), { ...secret('fin-leak'), metadata: { name: 'fin-leak', finalizers: ['example.com/never'] } });
      assert.equal(made.status, 201, made.text);
      assert.equal((await s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/runner-fin`, { gracePeriodSeconds: 0 })).status, 200);
      try {
        const first = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b', '--apply']);
        assert.equal(first.code, 0, first.stderr);
        assert.equal(about(first.lines, 'fin-leak')?.outcome, 'deleted');
        const held = await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/fin-leak`);
        assert.equal(held.status, 200, 'the finalizer holds it');
        assert.ok(held.body.metadata.deletionTimestamp);
        // With no grace, the next sweep says it is stuck, and who holds it.
        const doc = parse(readFileSync(s.policyFile, 'utf8')) as Record<string, unknown>;
        const noGrace = join(s.cp.dir, 'policy-no-deadline-grace.yaml');
        writeFileSync(noGrace, stringify({ ...doc, reaper: { ...(doc.reaper as object | undefined), deadlineGraceSeconds: 0 } }));
        const second = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b', '--apply', '--config', noGrace]);
        assert.equal(second.code, 0, second.stderr);
        const stuck = about(second.lines, 'fin-leak');
        assert.equal(stuck?.code, 'deletion-stuck', JSON.stringify(stuck));
        assert.equal(stuck?.action, 'keep');
        assert.match(String(stuck?.reason), /still held by finalizers "example\.com\/never"/);
      } finally {
        await s.api(s.admin, 'PATCH', `${PATHS.Secret('sandbox-b')}/fin-leak`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
      }
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/fin-leak`)).status, 404);
    });

    test('a validly stamped Secret in a namespace that is not opted in, its owner gone, is never reaped; its twin in a sandbox is', async () => {
      const s = suite();
      const key = readKey(s);
      const goneOwner = { namespace: 'sandbox-a', name: 'runner-never', uid: '0c0ffee0-0000-4000-8000-000000000001' };
      // In "plain" no webhook reviews writes: anyone there can write stamps (or get them signed).
      const planted = await s.api(s.admin, 'POST', PATHS.Secret('plain'), signedSecret(key, { namespace: 'plain', name: 'planted-creds', environment: 'alpha', owner: goneOwner }));
      assert.equal(planted.status, 201, planted.text);
      // The same stamps in a sandbox can only be Deed's: written here with Deed's webhooks out of the way.
      const twin = await withoutWebhooks(s, () => s.api(s.admin, 'POST', PATHS.Secret('sandbox-b'), signedSecret(key, { namespace: 'sandbox-b', name: 'twin-creds', environment: 'alpha', owner: goneOwner })));
      assert.equal(twin.status, 201, twin.text);

      const result = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'plain', '--namespace', 'sandbox-b', '--apply']);
      assert.equal(result.code, 0, result.stderr + result.stdout);
      const skipped = about(result.lines, 'planted-creds');
      assert.equal(skipped?.action, 'skip');
      assert.equal(skipped?.code, 'outside-review-scope');
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('plain')}/planted-creds`)).status, 200);
      assert.equal(about(result.lines, 'twin-creds')?.outcome, 'deleted');
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/twin-creds`)).status, 404);
      assert.equal(s.cp.audit().filter((e) => e.verb === 'delete' && e.objectRef?.name === 'planted-creds').length, 0, 'no delete was even tried');
    });

    test("the reaper's own token deletes only its environment's objects in the review scope: the API server refuses the rest (deed-reaper-delete)", async () => {
      const s = suite();
      const key = readKey(s);
      const goneOwner = { namespace: 'sandbox-a', name: 'runner-never', uid: '0c0ffee0-0000-4000-8000-000000000003' };
      const refusal = (why: string) => new RegExp(`ValidatingAdmissionPolicy 'deed-reaper-delete' with binding 'deed-reaper-delete' denied request: Deed's reaper for environment alpha ${why}`);
      // Stamps that verify for alpha, where no webhook reviews the delete: RBAC lets the
      // reaper's token delete Secrets in every namespace, kube-system's included.
      for (const ns of ['plain', 'kube-system']) {
        const planted = await s.api(s.admin, 'POST', PATHS.Secret(ns), signedSecret(key, { namespace: ns, name: 'reaper-bait', environment: 'alpha', owner: goneOwner }));
        assert.equal(planted.status, 201, planted.text);
        const taken = await s.api(s.reaperA, 'DELETE', `${PATHS.Secret(ns)}/reaper-bait`);
        assert.equal(taken.status, 403, taken.text);
        assert.match(taken.text, refusal(`deletes only in the review scope \\(namespaces labelled deed\\.dev/sandbox=enabled, not kube-system nor deed-system\\): namespace ${ns} is outside it`));
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret(ns)}/reaper-bait`)).status, 200);
        assert.equal((await s.api(s.admin, 'DELETE', `${PATHS.Secret(ns)}/reaper-bait`)).status, 200);
      }
      // In the scope: beta's Secret, and one of no environment.
      const betas = await s.api(s.runnerB.identity, 'POST', PATHS.Secret('sandbox-b'), secret('beta-not-alphas'));
      assert.equal(betas.status, 201, betas.text);
      const platforms = await s.api(s.admin, 'POST', PATHS.Secret('sandbox-b'), secret('no-ones'));
      assert.equal(platforms.status, 201, platforms.text);
      for (const name of ['beta-not-alphas', 'no-ones']) {
        const taken = await s.api(s.reaperA, 'DELETE', `${PATHS.Secret('sandbox-b')}/${name}`);
        assert.equal(taken.status, 403, taken.text);
        assert.match(taken.text, refusal(`deletes only objects stamped for it \\(deed\\.dev/managed=true, deed\\.dev/environment=alpha\\); ${name} is not`));
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret('sandbox-b')}/${name}`)).status, 200);
      }
      // Its own environment's object in the scope it deletes, as every sweep above did.
      const alphas = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), secret('alphas-own'));
      assert.equal(alphas.status, 201, alphas.text);
      assert.equal((await s.api(s.reaperA, 'DELETE', `${PATHS.Secret('sandbox-a')}/alphas-own`)).status, 200);
    });

    test('deletes throttled by API Priority and Fairness (429 with Retry-After) are retried: every orphan is deleted, with no error', async () => {
      const s = suite();
      const key = readKey(s);
      const goneOwner = { namespace: 'sandbox-a', name: 'runner-gone-apf', uid: '0c0ffee0-0000-4000-8000-000000000002' };
      await withoutWebhooks(s, async () => {
        for (let i = 0; i < 40; i++) {
          const made = await s.api(s.admin, 'POST', PATHS.Secret('sandbox-b'), signedSecret(key, { namespace: 'sandbox-b', name: `apf-orphan-${i}`, environment: 'alpha', owner: goneOwner }));
          assert.equal(made.status, 201, made.text);
        }
      });
      // A priority level with one seat and no queue for the reaper's account: a second request in flight gets 429.
      const level = { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'e2e-reaper-tiny' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } } };
      const schema = {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'FlowSchema',
        metadata: { name: 'e2e-reaper-tiny' },
        spec: {
          priorityLevelConfiguration: { name: 'e2e-reaper-tiny' },
          matchingPrecedence: 100,
          rules: [{ subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'deed-system', name: 'deed-reaper-alpha' } }], resourceRules: [{ verbs: ['delete'], apiGroups: [''], resources: ['secrets'], namespaces: ['*'] }] }],
        },
      };
      assert.equal((await s.api(s.admin, 'POST', '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations', level)).status, 201);
      assert.equal((await s.api(s.admin, 'POST', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', schema)).status, 201);
      try {
        const result = await reap(s, s.reaperA.kubeconfig!, ['--namespace', 'sandbox-b', '--apply', '--concurrency', '16']);
        assert.equal(result.code, 0, result.stderr + result.stdout);
        const orphans = result.lines.filter((l) => l.type === 'decision' && l.name?.startsWith('apf-orphan-'));
        assert.equal(orphans.length, 40);
        assert.deepEqual([...new Set(orphans.map((l) => l.outcome))], ['deleted']);
        const deletes = s.cp.audit().filter((e) => e.verb === 'delete' && e.objectRef?.name?.startsWith('apf-orphan-') && e.stage === 'ResponseComplete');
        const throttled = deletes.filter((e) => e.responseStatus?.code === 429);
        assert.ok(throttled.length > 0, 'the API server throttled some deletes');
        const served = deletes.filter((e) => e.responseStatus?.code === 200);
        assert.equal(served.length, 40);
        // A throttled request is turned away before its body is read; every served one carried the precondition.
        for (const e of served) assert.ok(e.requestObject?.preconditions?.uid, 'every delete carries the uid precondition');
      } finally {
        await s.api(s.admin, 'DELETE', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/e2e-reaper-tiny');
        await s.api(s.admin, 'DELETE', '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/e2e-reaper-tiny');
      }
    });
  });
}

/** An HTTPS proxy to the API server that answers 503 to every read of a single pod. */
async function failingOwnerReads(s: Suite): Promise<{ kubeconfig: string; failed: () => number; close: () => Promise<void> }> {
  let failed = 0;
  const proxy = await apiProxy(s, 'failing', (req) => {
    if (req.method === 'GET' && /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/?]+(\?|$)/.test(req.url ?? '')) {
      failed++;
      return { status: 503, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'ServiceUnavailable', code: 503, message: 'injected by the test' } };
    }
    return undefined;
  });
  return { ...proxy, failed: () => failed };
}

/**
 * A proxy to the API server that holds the first list of `path` until `release()`: what the
 * test does meanwhile happens between the sweep's earlier reads and that list.
 */
async function holdFirstList(s: Suite, name: string, path: string): Promise<{ kubeconfig: string; reached: Promise<void>; release: () => void; close: () => Promise<void> }> {
  let held!: () => void;
  const reached = new Promise<void>((resolve) => (held = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding = true;
  const proxy = await apiProxy(s, name, (req) => {
    if (holding && req.method === 'GET' && (req.url ?? '').startsWith(`${path}?`)) {
      holding = false;
      held();
      return released;
    }
    return undefined;
  });
  return {
    kubeconfig: proxy.kubeconfig,
    reached,
    release,
    close: async () => {
      release();
      await proxy.close();
    },
  };
}

export type Intercept = (req: IncomingMessage) => { status: number; body: unknown } | Promise<void> | undefined;

/**
 * An HTTPS proxy to the API server, with the reaper's token: `intercept` may answer a request
 * itself, or hold it (a promise) before it is forwarded.
 */
export async function apiProxy(s: Suite, name: string, intercept: Intercept): Promise<{ kubeconfig: string; close: () => Promise<void> }> {
  const dir = join(s.cp.dir, `proxy-${name}`);
  const certs = await generateCertificates(dir, ['127.0.0.1']);
  const upstream = new URL(s.cp.server);
  const server: Server = createServer({ cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) }, (req, res) => {
    const action = intercept(req);
    if (action !== undefined && !(action instanceof Promise)) {
      res.writeHead(action.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(action.body));
      return;
    }
    // The request body waits in the socket while the request is held.
    req.pause();
    void (action ?? Promise.resolve()).then(() => forward(req, res));
  });
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const upstreamReq = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, ca: s.cp.ca },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstreamReq.on('error', () => res.destroy());
    req.pipe(upstreamReq);
    req.resume();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, `https://127.0.0.1:${port}`, readFileSync(certs.caFile, 'utf8'), s.reaperA.token);
  return {
    kubeconfig,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
