// A run over while its runner pod lives, in the real API server: a runner killed in place
// (same pod, same uid) whose run lease stops being renewed has its sandbox pod, both
// Secrets and its NetworkPolicy reaped in one sweep, while a run whose lease is fresh
// keeps everything; a live runner's objects marked terminal are reaped under their UID
// precondition and a same-name replacement is untouched; an object past its deadline is
// reaped after the grace; an unreadable Lease keeps; another environment's flood of Leases
// changes nothing (a run lease is read by name).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { attested, eventually, KEYS, label, LEASES, microTime, networkPolicy, PATHS, runLease, sandboxPod, secret, signedPod, signedSecret } from '../objects.js';
import type { KubeObject } from '../../../src/admission/types.js';
import { DEED_NAMESPACE, E2E_POLICY, readKey, withoutWebhooks } from '../suite.js';
import { renderManifests } from '../../../src/install/manifests.js';
import type { Runner, Suite } from '../suite.js';
import { about, apiProxy, reap, type ReapLine } from './reaper.js';

const LEASE = KEYS.runLease;
// A shared namespace of its own, opted in: sweeping it with --apply touches no other case's objects.
const NS = 'sandbox-run';
const MERGE = 'application/merge-patch+json';
// beta's Leases in the flood case: more than two pages of a list (500), which the reaper no
// longer sends; the old bound of 20,000 is passed in test/reaper-run-end.test.ts, cheaply.
const FLOOD = 1200;

/** A run's four objects, as its runner creates them, each naming the run's Lease. */
async function runObjects(s: Suite, runner: Runner, run: string): Promise<Record<string, string>> {
  const annotations = { [LEASE]: run };
  const bodies: Array<[keyof typeof PATHS, string, unknown]> = [
    ['Pod', `${run}-sbx`, sandboxPod(`${run}-sbx`, { annotations })],
    ['Secret', `${run}-token`, secret(`${run}-token`, annotations)],
    ['Secret', `${run}-creds`, secret(`${run}-creds`, annotations)],
    ['NetworkPolicy', `${run}-egress`, { ...networkPolicy(`${run}-egress`), metadata: { name: `${run}-egress`, annotations } }],
  ];
  const uids: Record<string, string> = {};
  for (const [kind, name, body] of bodies) {
    const made = await s.api(runner.identity, 'POST', PATHS[kind](NS), body);
    assert.equal(made.status, 201, `${kind} ${name}: ${made.text}`);
    assert.equal(made.body.metadata.annotations[LEASE], run);
    uids[name] = made.body.metadata.uid as string;
  }
  return uids;
}

function deletesOf(s: Suite, name: string) {
  return s.cp.audit().filter((e) => e.verb === 'delete' && e.objectRef?.name === name && e.stage === 'ResponseComplete');
}

export function runEndCases(suite: () => Suite): void {
  describe('deed reap: a run over while its runner lives, in a real API server', () => {
    let runner: Runner;

    before(async () => {
      const s = suite();
      const made = await s.api(s.admin, 'POST', '/api/v1/namespaces', { metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } });
      assert.equal(made.status, 201, made.text);
      if (!s.cp.controllers) assert.equal((await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } })).status, 201);
      // alpha's runners write here, and so may beta's janitor (edit rights in a shared namespace).
      await s.bindSandboxRole(NS, [['sandbox-a', 'runner'], ['sandbox-b', 'janitor']]);
      runner = await s.newRunner('sandbox-a', 'runner-oom');
    });

    test('a runner that stays (same uid) whose run lease stopped being renewed: its sandbox pod, both Secrets and its NetworkPolicy are reaped in one sweep; a run whose lease is fresh keeps all of its objects', async () => {
      const s = suite();
      // alpha's runner holds the run leases; Deed stamps them for alpha as they are created.
      const stale = runLease({ name: 'run-stale', renewTime: new Date(Date.now() - 3_600_000) });
      const fresh = runLease({ name: 'run-fresh', renewTime: new Date() });
      for (const l of [stale, fresh]) {
        const made = await s.api(runner.identity, 'POST', LEASES(NS), l);
        assert.equal(made.status, 201, made.text);
        assert.ok(attested(s, made.body as KubeObject), 'the Lease carries alpha\'s stamps');
      }
      const staleUids = await runObjects(s, runner, 'run-stale');
      const freshUids = await runObjects(s, runner, 'run-fresh');

      const result = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS, '--apply']);
      assert.equal(result.code, 0, result.stderr + result.stdout);
      for (const [name, uid] of Object.entries(staleUids)) {
        const d = about(result.lines, name);
        assert.equal(d?.code, 'lease-expired', JSON.stringify(d));
        assert.equal(d?.outcome, 'deleted');
        const deletes = deletesOf(s, name);
        assert.equal(deletes.length, 1, name);
        assert.equal(deletes[0]!.requestObject?.preconditions?.uid, uid, `${name} was deleted under its uid precondition`);
      }
      for (const name of Object.keys(freshUids)) {
        const d = about(result.lines, name);
        assert.equal(d?.action, 'keep', JSON.stringify(d));
        assert.equal(d?.code, 'owner-running');
        assert.equal(deletesOf(s, name).length, 0);
      }
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/run-stale-creds`)).status, 404);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/run-fresh-creds`)).status, 200);
      // The runner never went away: the owner-reference cascade had nothing to do.
      const pod = await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/runner-oom`);
      assert.equal(pod.body.metadata.uid, runner.uid);
      const summary = result.lines.find((l) => l.type === 'summary') as ReapLine & { leaseReads?: number };
      // Two leases, each read by name: once for all of a held run's objects, again for a lapsed one only per page listed after its read.
      assert.ok((summary.leaseReads ?? 0) >= 2 && (summary.leaseReads ?? 0) <= 10, `lease reads ${summary.leaseReads}: per lease, not per object`);
    });

    test("a run Lease is its creator's environment's: alpha's runner's Lease is stamped as alpha's, beta can neither renew nor delete it, and an object may name only a Lease of its own environment", async () => {
      const s = suite();
      const made = await s.api(runner.identity, 'POST', LEASES(NS), runLease({ name: 'run-own', renewTime: new Date(), holder: 'runner-oom' }));
      assert.equal(made.status, 201, made.text);
      const own = made.body as KubeObject;
      assert.equal(label(own, KEYS.environment), 'alpha');
      assert.ok(attested(s, own), 'the stamps verify');
      assert.equal(own.metadata.ownerReferences, undefined, 'no owner reference: a runner restart does not end its runs');
      const path = `${LEASES(NS)}/run-own`;

      // beta, with edit rights in the shared namespace, can neither keep alpha's run alive nor end it.
      const renewal = { spec: { holderIdentity: 'beta-janitor', renewTime: microTime(new Date()) } };
      const renewed = await s.api(s.janitorB, 'PATCH', path, renewal, MERGE);
      assert.equal(renewed.status, 403, renewed.text);
      assert.match(renewed.text, /guard\.cross-environment/);
      assert.doesNotMatch(renewed.text, /alpha/, 'the refusal names no other environment');
      const deleted = await s.api(s.janitorB, 'DELETE', path);
      assert.equal(deleted.status, 403, deleted.text);
      assert.match(deleted.text, /guard\.cross-environment/);
      const stored = await s.api(s.admin, 'GET', path);
      assert.equal(stored.body.spec.holderIdentity, 'runner-oom', 'the renewal did not land');
      // Its own environment renews it; its stamps stay frozen.
      const ownRenewal = await s.api(runner.identity, 'PATCH', path, { spec: { holderIdentity: 'runner-oom', renewTime: renewal.spec.renewTime } }, MERGE);
      assert.equal(ownRenewal.status, 200, ownRenewal.text);
      const unstamp = await s.api(runner.identity, 'PATCH', path, { metadata: { labels: { [KEYS.environment]: null } } }, MERGE);
      assert.equal(unstamp.status, 403, unstamp.text);
      assert.match(unstamp.text, /frozen\.stamps/);

      // beta's own Lease in the same namespace, and one an administrator created (no stamps: it acts for no environment).
      const betas = await s.api(s.janitorB, 'POST', LEASES(NS), runLease({ name: 'run-b', renewTime: new Date() }));
      assert.equal(betas.status, 201, betas.text);
      assert.equal(label(betas.body as KubeObject, KEYS.environment), 'beta');
      const admins = await s.api(s.admin, 'POST', LEASES(NS), runLease({ name: 'run-admin', renewTime: new Date(), holder: 'runner-oom' }));
      assert.equal(admins.status, 201, admins.text);
      assert.equal(label(admins.body as KubeObject, KEYS.environment), undefined);

      const naming = (name: string, lease: string) => s.api(runner.identity, 'POST', PATHS.Secret(NS), secret(name, { [LEASE]: lease }));
      const admitted = await naming('own-lease-creds', 'run-own');
      assert.equal(admitted.status, 201, admitted.text);
      assert.ok(attested(s, admitted.body as KubeObject), 'the run lease is covered by the attestation');
      for (const [name, lease, rule] of [
        ['no-lease-creds', 'run-nowhere', /run-lease\.absent/],
        ['beta-lease-creds', 'run-b', /run-lease\.environment/],
        ['admin-lease-creds', 'run-admin', /run-lease\.environment/],
      ] as const) {
        const refused = await naming(name, lease);
        assert.equal(refused.status, 403, `${lease}: ${refused.text}`);
        assert.match(refused.text, rule);
        assert.doesNotMatch(refused.text, /beta/, 'the refusal names no other environment');
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/${name}`)).status, 404);
      }
      // A sandbox pod is held to the same check.
      const pod = await s.api(runner.identity, 'POST', PATHS.Pod(NS), sandboxPod('beta-lease-sbx', { annotations: { [LEASE]: 'run-b' } }));
      assert.equal(pod.status, 403, pod.text);
      assert.match(pod.text, /run-lease\.environment/);
      // alpha's reaper keeps the admitted Secret: its Lease is alpha's, and renewed.
      const result = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS]);
      assert.equal(about(result.lines, 'own-lease-creds')?.code, 'owner-running', JSON.stringify(about(result.lines, 'own-lease-creds')));
    });

    test("another environment that recreates a finished run's Lease under its name does not keep the run's objects alive: they are reaped as lease-replaced", async () => {
      const s = suite();
      const made = await s.api(runner.identity, 'POST', LEASES(NS), runLease({ name: 'run-swap', renewTime: new Date(), holder: 'runner-oom' }));
      assert.equal(made.status, 201, made.text);
      const creds = await s.api(runner.identity, 'POST', PATHS.Secret(NS), secret('swap-lease-creds', { [LEASE]: 'run-swap' }));
      assert.equal(creds.status, 201, creds.text);
      // alpha ends the run by deleting its Lease; beta, with edit rights here, takes the name at once.
      assert.equal((await s.api(runner.identity, 'DELETE', `${LEASES(NS)}/run-swap`)).status, 200);
      const taken = await s.api(s.janitorB, 'POST', LEASES(NS), runLease({ name: 'run-swap', renewTime: new Date() }));
      assert.equal(taken.status, 201, taken.text);
      assert.equal(label(taken.body as KubeObject, KEYS.environment), 'beta');
      const result = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS]);
      const line = about(result.lines, 'swap-lease-creds');
      assert.equal(line?.code, 'lease-replaced', JSON.stringify(line));
      assert.equal(line?.action, 'reap');
    });

    test(`beta floods the shared namespace with ${FLOOD} Leases of its own: alpha's reaper reads only the lease alpha's leaked Secret names, by name, and reaps the Secret`, async () => {
      const s = suite();
      // beta's janitor has edit rights here; Deed stamps each Lease for beta as it is created.
      for (let i = 0; i < FLOOD; i += 25) {
        const batch = Array.from({ length: Math.min(25, FLOOD - i) }, (_, j) => s.api(s.janitorB, 'POST', LEASES(NS), runLease({ name: `beta-flood-${i + j}`, renewTime: new Date() })));
        for (const made of await Promise.all(batch)) assert.equal(made.status, 201, made.text);
      }
      // alpha's run: its Lease, a credential naming it; the run ends (its Lease deleted) and the Secret leaks.
      assert.equal((await s.api(runner.identity, 'POST', LEASES(NS), runLease({ name: 'run-flooded', renewTime: new Date() }))).status, 201);
      const creds = await s.api(runner.identity, 'POST', PATHS.Secret(NS), secret('flooded-creds', { [LEASE]: 'run-flooded' }));
      assert.equal(creds.status, 201, creds.text);
      assert.equal((await s.api(runner.identity, 'DELETE', `${LEASES(NS)}/run-flooded`)).status, 200);
      // The reaper's own identity and rendered RBAC (get on leases, no list), through a proxy that records what it asks.
      const asked: string[] = [];
      const proxy = await apiProxy(s, 'leases-flood', (req) => {
        if ((req.url ?? '').startsWith('/apis/coordination.k8s.io/')) asked.push(`${req.method} ${req.url}`);
        return undefined;
      });
      try {
        const result = await reap(s, proxy.kubeconfig, ['--namespace', NS, '--apply']);
        assert.equal(result.code, 0, result.stderr + result.stdout);
        const d = about(result.lines, 'flooded-creds');
        assert.equal(d?.code, 'lease-gone', JSON.stringify(d));
        assert.equal(d?.outcome, 'deleted');
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/flooded-creds`)).status, 404);
      } finally {
        await proxy.close();
      }
      assert.ok(asked.includes(`GET ${LEASES(NS)}/run-flooded`), asked.join('\n'));
      assert.deepEqual(asked.filter((a) => !/^GET \/apis\/coordination\.k8s\.io\/v1\/namespaces\/[^/]+\/leases\/[^/?]+$/.test(a)), [], 'no list of Leases, only reads by name');
      assert.deepEqual(asked.filter((a) => a.includes('beta-flood')), [], "none of beta's Leases is read");
    });

    test("a tenant's own app electing its leader in the shared namespace (a principal of no environment) creates and renews its Lease as before, unstamped", async () => {
      const s = suite();
      const operator = await s.newIdentity(NS, 'operator');
      await s.bindSandboxRole(NS, [[NS, 'operator']]);
      const made = await s.api(operator, 'POST', LEASES(NS), runLease({ name: 'operator-leader', renewTime: new Date(), holder: 'operator-7f9c', durationSeconds: 15 }));
      assert.equal(made.status, 201, made.text);
      assert.equal(label(made.body as KubeObject, KEYS.environment), undefined, 'no stamps: it acts for no environment');
      for (let i = 0; i < 3; i++) {
        const renewed = await s.api(operator, 'PATCH', `${LEASES(NS)}/operator-leader`, { spec: { renewTime: microTime(new Date()) } }, MERGE);
        assert.equal(renewed.status, 200, renewed.text);
      }
    });

    test('a Lease that cannot be read keeps the objects that name it, and says why', async () => {
      const s = suite();
      const lease = runLease({ name: 'run-unread', renewTime: new Date(Date.now() - 3_600_000) });
      assert.equal((await s.api(runner.identity, 'POST', LEASES(NS), lease)).status, 201);
      const made = await s.api(runner.identity, 'POST', PATHS.Secret(NS), secret('run-unread-creds', { [LEASE]: 'run-unread' }));
      assert.equal(made.status, 201, made.text);
      let failed = 0;
      const proxy = await apiProxy(s, 'leases-fail', (req) => {
        if (req.method === 'GET' && (req.url ?? '').startsWith(LEASES(NS))) {
          failed++;
          return { status: 503, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'ServiceUnavailable', code: 503, message: 'injected by the test' } };
        }
        return undefined;
      });
      try {
        const result = await reap(s, proxy.kubeconfig, ['--namespace', NS, '--apply']);
        const d = about(result.lines, 'run-unread-creds');
        assert.equal(d?.action, 'keep', JSON.stringify(d));
        assert.equal(d?.code, 'lease-unreadable');
        assert.ok(failed > 0, 'the proxy failed a Lease read');
        assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/run-unread-creds`)).status, 200);
      } finally {
        await proxy.close();
      }
      // The same sweep without the fault reaps it: the keep was the read's doing.
      const clean = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS, '--apply']);
      assert.equal(about(clean.lines, 'run-unread-creds')?.code, 'lease-expired');
    });

    test("a live runner's objects marked terminal are reaped under their UID precondition, and a same-name replacement is untouched", async () => {
      const s = suite();
      for (const [kind, body] of [
        ['Secret', secret('done-creds')],
        ['NetworkPolicy', networkPolicy('done-egress')],
      ] as const) {
        const made = await s.api(runner.identity, 'POST', PATHS[kind](NS), body);
        assert.equal(made.status, 201, made.text);
      }
      const mark = { metadata: { annotations: { [KEYS.terminal]: 'true' } } };
      // beta, with edit rights in sandbox-a, cannot end alpha's run.
      const foreign = await s.api(s.janitorB, 'PATCH', `${PATHS.Secret(NS)}/done-creds`, mark, MERGE);
      assert.equal(foreign.status, 403, foreign.text);
      assert.match(foreign.text, /terminal\.environment/);
      for (const path of [`${PATHS.Secret(NS)}/done-creds`, `${PATHS.NetworkPolicy(NS)}/done-egress`]) {
        const marked = await s.api(runner.identity, 'PATCH', path, mark, MERGE);
        assert.equal(marked.status, 200, marked.text);
      }
      // Once set, not even its own environment takes the mark back.
      const unmark = await s.api(runner.identity, 'PATCH', `${PATHS.Secret(NS)}/done-creds`, { metadata: { annotations: { [KEYS.terminal]: null } } }, MERGE);
      assert.equal(unmark.status, 403, unmark.text);
      assert.match(unmark.text, /terminal\.frozen/);
      const oldUid = (await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/done-creds`)).body.metadata.uid as string;

      // The reaper's delete of done-creds is held while the Secret is replaced under its name.
      let held = false;
      let replacementUid = '';
      const proxy = await apiProxy(s, 'terminal-replace', (req) => {
        if (!held && req.method === 'DELETE' && (req.url ?? '').startsWith(`${PATHS.Secret(NS)}/done-creds`)) {
          held = true;
          return (async () => {
            assert.equal((await s.api(s.admin, 'DELETE', `${PATHS.Secret(NS)}/done-creds`)).status, 200);
            const again = await s.api(runner.identity, 'POST', PATHS.Secret(NS), secret('done-creds'));
            assert.equal(again.status, 201, again.text);
            replacementUid = again.body.metadata.uid as string;
          })();
        }
        return undefined;
      });
      try {
        const result = await reap(s, proxy.kubeconfig, ['--namespace', NS, '--apply']);
        assert.ok(held, 'the delete was held');
        const creds = about(result.lines, 'done-creds');
        assert.equal(creds?.code, 'terminal', JSON.stringify(creds));
        assert.equal(creds?.outcome, 'conflict', 'the uid precondition refused the delete of the replacement');
        const egress = about(result.lines, 'done-egress');
        assert.equal(egress?.code, 'terminal');
        assert.equal(egress?.outcome, 'deleted');
      } finally {
        await proxy.close();
      }
      const now = await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/done-creds`);
      assert.equal(now.status, 200);
      assert.equal(now.body.metadata.uid, replacementUid);
      assert.notEqual(replacementUid, oldUid);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.NetworkPolicy(NS)}/done-egress`)).status, 404);
      const sent = deletesOf(s, 'done-creds').filter((e) => e.user.username.endsWith(':deed-reaper-alpha'));
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.requestObject?.preconditions?.uid, oldUid);
      assert.equal(sent[0]!.responseStatus?.code, 409);
      // The next sweep judges the replacement as what it is: unmarked, its runner alive.
      const next = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS, '--apply']);
      assert.equal(about(next.lines, 'done-creds')?.code, 'owner-running');
    });

    test('an object whose deadline passed is reaped with its runner alive once the grace has passed too', async () => {
      const s = suite();
      const key = readKey(s);
      // What Deed stamps for a 60 s budget with a 30 min margin, admitted 50 minutes ago.
      const expiresAt = new Date(Date.now() - 20 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const owner = { namespace: 'sandbox-a', name: 'runner-oom', uid: runner.uid };
      const made = await withoutWebhooks(s, () => s.api(s.admin, 'POST', PATHS.Secret(NS), signedSecret(key, { namespace: NS, name: 'late-creds', environment: 'alpha', owner, expiresAt })));
      assert.equal(made.status, 201, made.text);

      // Under an hour's grace, 20 minutes past its deadline is still its runner's.
      const doc = parse(readFileSync(s.policyFile, 'utf8')) as Record<string, unknown>;
      const longGrace = join(s.cp.dir, 'policy-long-grace.yaml');
      writeFileSync(longGrace, stringify({ ...doc, reaper: { deadlineGraceSeconds: 3600 } }));
      const patient = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS, '--apply', '--config', longGrace]);
      assert.equal(patient.code, 0, patient.stderr);
      assert.equal(about(patient.lines, 'late-creds')?.code, 'owner-running');

      // Under the default grace (15 minutes) the deadline is evidence by itself.
      const result = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS, '--apply']);
      assert.equal(result.code, 0, result.stderr);
      const d = about(result.lines, 'late-creds');
      assert.equal(d?.code, 'deadline-passed', JSON.stringify(d));
      assert.equal(d?.outcome, 'deleted');
      assert.equal(deletesOf(s, 'late-creds')[0]!.requestObject?.preconditions?.uid, made.body.metadata.uid);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod('sandbox-a')}/runner-oom`)).body.metadata.uid, runner.uid);
    });

    test("a pod that started after its attested deadline is judged by its own clock: kept while it runs its activeDeadlineSeconds, reaped once it finished", async () => {
      const s = suite();
      const key = readKey(s);
      // Admitted 80 minutes ago with a one-hour deadline (expires-at 20 minutes ago, past the
      // 15-minute grace), but it waited to be scheduled and started 5 minutes ago: the kubelet
      // lets it run until 55 minutes from now.
      const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const owner = { namespace: 'sandbox-a', name: 'runner-oom', uid: runner.uid };
      const made = await withoutWebhooks(s, () => s.api(s.admin, 'POST', PATHS.Pod(NS), signedPod(key, { namespace: NS, name: 'sbx-late', environment: 'alpha', owner, expiresAt: at(-20), activeDeadlineSeconds: 3600 })));
      assert.equal(made.status, 201, made.text);
      const status = (phase: string) => s.api(s.admin, 'PATCH', `${PATHS.Pod(NS)}/sbx-late/status`, { status: { phase, startTime: at(-5) } }, MERGE);
      const running = await status('Running');
      assert.equal(running.status, 200, running.text);

      const kept = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS, '--apply']);
      assert.equal(kept.code, 0, kept.stderr);
      const d = about(kept.lines, 'sbx-late');
      assert.equal(d?.code, 'deadline-from-start', JSON.stringify(d));
      assert.match(d?.reason ?? '', /the kubelet counts its activeDeadlineSeconds \(3600 s\) from there/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/sbx-late`)).status, 200, 'the running pod is still there');
      assert.equal(deletesOf(s, 'sbx-late').length, 0);

      // Failed (as the kubelet marks a pod whose activeDeadlineSeconds ran out): its run is over.
      assert.equal((await status('Failed')).status, 200);
      const reaped = await reap(s, s.reaperA.kubeconfig!, ['--namespace', NS, '--apply']);
      const r = about(reaped.lines, 'sbx-late');
      assert.equal(r?.code, 'deadline-passed', JSON.stringify(r));
      assert.equal(r?.outcome, 'deleted');
      assert.equal(deletesOf(s, 'sbx-late')[0]!.requestObject?.preconditions?.uid, made.body.metadata.uid);
    });

    test("an environment's reaper confined by RoleBindings deletes only in its namespaces, and its dry run elsewhere says the delete would fail", async () => {
      const s = suite();
      // beta's reaper as deed manifests --reaper-environment beta --reaper-namespace beta=sandbox-b renders it.
      const rendered = renderManifests({ namespace: DEED_NAMESPACE, image: 'deed:e2e', policy: E2E_POLICY, reaperEnvironments: ['beta'], reaperNamespaces: { beta: ['sandbox-b'] } });
      const paths: Record<string, (o: { metadata?: { namespace?: string } }) => string> = {
        ServiceAccount: () => `/api/v1/namespaces/${DEED_NAMESPACE}/serviceaccounts`,
        ClusterRole: () => '/apis/rbac.authorization.k8s.io/v1/clusterroles',
        ClusterRoleBinding: () => '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
        RoleBinding: (o) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${o.metadata!.namespace}/rolebindings`,
      };
      for (const o of rendered) {
        const path = paths[o.kind!];
        if (path === undefined) continue;
        const made = await s.api(s.admin, 'POST', path(o), o);
        assert.ok(made.status === 201 || made.status === 409, `${o.kind} ${o.metadata?.name}: ${made.text}`);
      }
      const reaperB = await s.newIdentity(DEED_NAMESPACE, 'deed-reaper-beta');
      const can = async (verb: string, resource: string, namespace: string) => {
        const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: `system:serviceaccount:${DEED_NAMESPACE}:deed-reaper-beta`, groups: ['system:serviceaccounts', `system:serviceaccounts:${DEED_NAMESPACE}`, 'system:authenticated'], resourceAttributes: { namespace, verb, resource } } };
        return (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true;
      };
      // The authorizer learns of new bindings a moment later.
      await eventually('RBAC lets beta\'s reaper delete in sandbox-b', () => can('delete', 'secrets', 'sandbox-b'));
      assert.equal(await can('delete', 'secrets', NS), false, 'no delete outside its namespaces');
      assert.equal(await can('delete', 'pods', 'sandbox-a'), false);
      assert.equal(await can('get', 'pods', 'sandbox-a'), true, 'owners are read anywhere');

      // A finished beta run in the shared namespace, which beta's reaper may not delete in.
      await s.bindSandboxRole(NS, [['sandbox-b', 'runner']]);
      const made = await s.api(s.runnerB.identity, 'POST', PATHS.Secret(NS), secret('beta-done-creds', { [KEYS.terminal]: 'true' }));
      assert.equal(made.status, 201, made.text);
      // Confined to sandbox-b, beta's reaper cannot even list there: it says so, and exits 1.
      const outside = await reap(s, reaperB.kubeconfig!, ['--environment', 'beta', '--namespace', NS]);
      assert.equal(outside.code, 1);
      assert.ok(outside.lines.some((l) => l.action === 'error' && l.code === 'list-failed' && l.namespace === NS), outside.stdout);
      // An identity that may read everything but delete nothing (an operator's read-only
      // account) runs the dry run: it shows what would be reaped, and that it could not.
      await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        metadata: { name: 'e2e-reaper-reader' },
        rules: [
          { apiGroups: [''], resources: ['pods', 'secrets', 'persistentvolumeclaims'], verbs: ['get', 'list'] },
          { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['list'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
          { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] },
        ],
      });
      await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        metadata: { name: 'e2e-reaper-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-reaper-reader' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'platform', name: 'reaper-reader' }],
      });
      const reader = await s.newIdentity('platform', 'reaper-reader');
      await eventually('RBAC lets the reader list secrets', async () => (await s.api(reader, 'GET', PATHS.Secret(NS))).status === 200);
      const dry = await reap(s, reader.kubeconfig!, ['--environment', 'beta', '--namespace', NS]);
      const d = about(dry.lines, 'beta-done-creds');
      assert.equal(d?.code, 'terminal', JSON.stringify(d));
      assert.equal(d?.outcome, 'not-permitted');
      assert.equal(dry.code, 1, 'a dry run that could not do what it shows exits 1');
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Secret(NS)}/beta-done-creds`)).status, 200);
      // Where it may delete, the dry run promises it.
      const home = await s.api(s.runnerB.identity, 'POST', PATHS.Secret('sandbox-b'), secret('beta-home-done', { [KEYS.terminal]: 'true' }));
      assert.equal(home.status, 201, home.text);
      const dryHome = await reap(s, reaperB.kubeconfig!, ['--environment', 'beta', '--namespace', 'sandbox-b']);
      assert.equal(about(dryHome.lines, 'beta-home-done')?.outcome, 'would-delete');
    });
  });
}
