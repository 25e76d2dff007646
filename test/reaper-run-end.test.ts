// The reaper's evidence that a run is over while its runner pod lives (a runner killed in
// place keeps its pod and forgets its sandboxes): a deadline long passed, a terminal mark on
// any kind, a run lease gone or no longer renewed. The verdict table, pure, then the sweep
// against the API wire format (each run lease read by name, once, never a list of its namespace).
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeClient } from '../src/kube/client.js';
import { sweep, type Decision } from '../src/reaper/sweep.js';
import { MAX_LEASE_READS_PER_NAMESPACE } from '../src/reaper/lease-facts.js';
import { needs, VERDICTS, VERDICT_CODES, verdict, type LeaseLookup, type OwnerLookup, type PodClockLookup } from '../src/reaper/verdict.js';
import { ReaperMetrics } from '../src/reaper/metrics.js';
import type { SandboxKind } from '../src/policy/kinds.js';
import { NOW, TEST_RING } from './helpers.js';
import { FakeApiServer } from './fake-apiserver.js';
import { ENV, GRACE, iso, KEYS, reaperContext, RUNNER, runnerPod, stamped, stampedLease } from './reaper-helpers.js';

const running: OwnerLookup = { state: 'present', uid: RUNNER.uid };
const gone: OwnerLookup = { state: 'absent' };
const KINDS: Array<SandboxKind['kind']> = ['Pod', 'Secret', 'NetworkPolicy', 'PersistentVolumeClaim'];

const leaseAt = (renewOffsetSeconds: number, o: Parameters<typeof stampedLease>[1] = {}): LeaseLookup => {
  const l = stampedLease('run-1', { renewTime: iso(renewOffsetSeconds), ...o });
  return { state: 'present', lease: { labels: l.metadata.labels, annotations: l.metadata.annotations, renewedAt: iso(renewOffsetSeconds), leaseDurationSeconds: o.durationSeconds ?? 40 }, readAt: NOW };
};

describe('the verdict table', () => {
  test('every code is one row with one action, and docs/operations.md names every code', () => {
    const docs = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    for (const code of VERDICT_CODES) {
      assert.ok(['reap', 'keep', 'skip'].includes(VERDICTS[code].action), code);
      assert.ok(docs.includes(`\`${code}\``), `docs/operations.md names the verdict code ${code}`);
    }
    assert.ok(docs.includes(`at most ${MAX_LEASE_READS_PER_NAMESPACE.toLocaleString('en-US')} distinct run leases per namespace`), 'docs/operations.md states the bound on lease reads');
  });

  test('the issue\'s reap reasons are rows that reap', () => {
    for (const code of ['owner-gone', 'owner-replaced', 'deadline-passed', 'terminal', 'lease-expired', 'lease-gone', 'lease-replaced'] as const) assert.equal(VERDICTS[code].action, 'reap', code);
  });

  test('the metrics name every row at 0 before any decision, then count decisions by action and code', async () => {
    const m = new ReaperMetrics('alpha');
    const before = await m.registry.metrics();
    for (const code of VERDICT_CODES) assert.match(before, new RegExp(`deed_reaper_decisions_total\\{environment="alpha",action="${VERDICTS[code].action}",code="${code}"\\} 0`));
    m.add({ action: 'reap', code: 'lease-expired', kind: 'Secret', namespace: 'sandbox-a', name: 'x', reason: 'r', outcome: 'deleted' });
    const after = await m.registry.metrics();
    assert.match(after, /deed_reaper_decisions_total\{environment="alpha",action="reap",code="lease-expired"\} 1/);
    assert.match(after, /deed_reaper_reap_outcomes_total\{environment="alpha",outcome="deleted"\} 1/);
  });

  test('--metrics-file is written whole over what stood at its name, a link planted there included, readable by the textfile collector', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-reaper-metrics-'));
    const file = join(dir, 'deed-reaper.prom');
    const elsewhere = join(dir, 'elsewhere.txt');
    writeFileSync(elsewhere, 'untouched');
    symlinkSync(elsewhere, file);
    const m = new ReaperMetrics('alpha');
    await m.writeTo(file);
    assert.equal(readFileSync(file, 'utf8'), await m.registry.metrics());
    assert.equal(readFileSync(elsewhere, 'utf8'), 'untouched');
    assert.equal((statSync(file).mode & 0o777).toString(8), '644');
    assert.deepEqual(readdirSync(dir).sort(), ['deed-reaper.prom', 'elsewhere.txt'], 'no temporary file left');
  });

  test('the leases a sweep did not read are a gauge of that sweep, by reason, at 0 before any sweep', async () => {
    const m = new ReaperMetrics('alpha');
    assert.match(await m.registry.metrics(), /deed_reaper_leases_unread\{environment="alpha",reason="bounded"\} 0/);
    const summary = { durationMs: 10, complete: true, leaseReadsFailed: 2, leasesBounded: 7 } as Parameters<ReaperMetrics['finish']>[0];
    m.finish(summary);
    m.finish(summary);
    const text = await m.registry.metrics();
    assert.match(text, /deed_reaper_leases_unread\{environment="alpha",reason="failed"\} 2\n/, 'the last sweep, not a sum');
    assert.match(text, /deed_reaper_leases_unread\{environment="alpha",reason="bounded"\} 7\n/);
  });
});

describe('a passed deadline is evidence by itself', () => {
  test('a deadline passed more than the grace ago reaps the object while its runner lives, without reading the owner', () => {
    const obj = stamped({ kind: 'Secret', name: 'sbx-1-token', expiresAt: iso(-GRACE.deadline - 1) });
    const v = verdict(obj, 'Secret', reaperContext(), running);
    assert.equal(v.action, 'reap');
    assert.equal(v.code, 'deadline-passed');
    assert.match(v.reason, /whatever its runner does/);
    assert.equal(verdict(obj, 'Secret', reaperContext()).code, 'deadline-passed', 'no owner read is needed');
  });

  test('within the grace a live runner still keeps its object', () => {
    const obj = stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-GRACE.deadline + 5) });
    assert.equal(verdict(obj, 'Pod', reaperContext(), running).code, 'owner-running');
  });

  test('a grace of 0 reaps at the deadline itself', () => {
    const obj = stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(0), uid: 'sbx-uid' });
    // Admitted an hour ago with a one-hour deadline, and started then: its own clock ran out with it.
    const clock: PodClockLookup = { state: 'found', uid: 'sbx-uid', phase: 'Running', startTime: iso(-3600), activeDeadlineSeconds: 3600 };
    assert.equal(verdict(obj, 'Pod', { ...reaperContext(), deadlineGraceSeconds: 0 }, running, undefined, clock).code, 'deadline-passed');
  });

  describe("a pod's own clock: the kubelet counts activeDeadlineSeconds from the pod's start, not its admission", () => {
    // Admitted with a one-hour deadline two hours ago: expires-at passed an hour ago, past the grace.
    const late = () => stamped({ kind: 'Pod', name: 'sbx-late', expiresAt: iso(-3600), uid: 'sbx-uid' });
    const clockOf = (o: Partial<Extract<PodClockLookup, { state: 'found' }>>): PodClockLookup => ({ state: 'found', uid: 'sbx-uid', phase: 'Running', activeDeadlineSeconds: 3600, ...o });

    test('a pod whose expires-at passed is read for its clock; one whose expires-at is ahead is not', () => {
      assert.deepEqual(needs(late(), 'Pod', reaperContext()).pod, { namespace: 'sandbox-a', name: 'sbx-late', uid: 'sbx-uid' });
      assert.equal(needs(stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(60) }), 'Pod', reaperContext()).pod, undefined);
      assert.equal(needs(stamped({ kind: 'Secret', name: 'sbx-1-token', expiresAt: iso(-3600) }), 'Secret', reaperContext()).pod, undefined, 'only pods have a clock of their own');
    });

    test('a pod that waited 90 minutes to be scheduled runs its hour from its start: kept while its runner lives', () => {
      const v = verdict(late(), 'Pod', reaperContext(), running, undefined, clockOf({ startTime: iso(-1800) }));
      assert.equal(v.action, 'keep');
      assert.equal(v.code, 'deadline-from-start');
      assert.match(v.reason, /it started at .*, and the kubelet counts its activeDeadlineSeconds \(3600 s\) from there, to /);
      // Its start plus an hour, plus the grace, passed: the kubelet should have failed it; it is over.
      assert.equal(verdict(late(), 'Pod', reaperContext(), running, undefined, clockOf({ startTime: iso(-3600 - GRACE.deadline - 1) })).code, 'deadline-passed');
      // Within the grace after its own deadline, still kept.
      assert.equal(verdict(late(), 'Pod', reaperContext(), running, undefined, clockOf({ startTime: iso(-3600 - GRACE.deadline + 60) })).code, 'deadline-from-start');
    });

    test('one that finished is over, and so is one never started by its deadline (it ran nothing)', () => {
      const never = verdict(late(), 'Pod', reaperContext(), running, undefined, clockOf({ phase: 'Pending' }));
      assert.equal(never.code, 'deadline-passed');
      assert.match(never.reason, /it has not started \(nothing ran\)/);
      for (const phase of ['Succeeded', 'Failed']) assert.equal(verdict(late(), 'Pod', reaperContext(), running, undefined, clockOf({ phase, startTime: iso(-60) })).code, 'deadline-passed', phase);
    });

    test('a clock not read, unreadable, or of another pod under the name keeps it while its runner lives; its runner gone reaps it', () => {
      for (const clock of [undefined, { state: 'error', message: 'timed out' } as const, { state: 'absent' } as const, clockOf({ uid: 'another-uid', phase: 'Failed' })]) {
        const v = verdict(late(), 'Pod', reaperContext(), running, undefined, clock);
        assert.equal(v.code, 'pod-clock-unread', JSON.stringify(clock));
        assert.equal(verdict(late(), 'Pod', reaperContext(), gone, undefined, clock).code, 'owner-gone');
      }
      // The runner gone is evidence by itself (the garbage collector deletes its pods too).
      assert.equal(verdict(late(), 'Pod', reaperContext(), gone, undefined, clockOf({ startTime: iso(-60) })).code, 'owner-gone');
    });

    test("a pod's passed deadline is judged before its run lease, as any object's is: a lease unread, unreadable, past the sweep's bound or signed by a retired key does not keep it", () => {
      const leased = () => stamped({ kind: 'Pod', name: 'sbx-late', expiresAt: iso(-3600), uid: 'sbx-uid', runLease: 'run-1' });
      const over = clockOf({ phase: 'Pending' });
      const doubts: Array<LeaseLookup | undefined> = [undefined, { state: 'error', message: 'timed out' }, { state: 'bounded', limit: MAX_LEASE_READS_PER_NAMESPACE }, leaseAt(-5, { signingKey: Buffer.from('a-retired-key-0123456789abcdef0123') })];
      for (const lease of doubts) {
        assert.equal(verdict(leased(), 'Pod', reaperContext(), running, lease, over).code, 'deadline-passed', JSON.stringify(lease));
        // Its own clock not yet over: the lease decides, as before.
        assert.notEqual(verdict(leased(), 'Pod', reaperContext(), running, lease, clockOf({ startTime: iso(-60) })).code, 'deadline-passed');
      }
    });

    test('with no owner stamp, the deadline at all, and the clock too', () => {
      const orphan = stamped({ kind: 'Pod', name: 'sbx-late', owner: null, expiresAt: iso(-60), uid: 'sbx-uid' });
      assert.equal(verdict(orphan, 'Pod', reaperContext(), undefined, undefined, clockOf({ startTime: iso(-600) })).code, 'deadline-from-start');
      assert.equal(verdict(orphan, 'Pod', reaperContext(), undefined, undefined, clockOf({ startTime: iso(-3601) })).code, 'deadline-passed');
      assert.equal(verdict(orphan, 'Pod', reaperContext(), undefined, undefined, { state: 'error', message: 'forbidden' }).code, 'pod-clock-unread');
    });
  });

  test('no budget and no cap, so no expires-at: a live runner keeps its object for ever, as before', () => {
    const obj = stamped({ kind: 'Secret', name: 'sbx-1-token' });
    assert.equal(verdict(obj, 'Secret', { ...reaperContext(), now: NOW + 365 * 86_400_000 }, running).code, 'owner-running');
  });

  test('a claim is never reaped by deadline: a workspace outlives its runs', () => {
    const obj = stamped({ kind: 'PersistentVolumeClaim', name: 'ws', expiresAt: iso(-86_400) });
    assert.equal(verdict(obj, 'PersistentVolumeClaim', reaperContext(), running).code, 'pvc-not-terminal');
  });
});

describe('terminal marks on every kind', () => {
  for (const kind of KINDS) {
    test(`a ${kind} marked terminal is reaped while its runner lives`, () => {
      const v = verdict(stamped({ kind, name: 'x', terminal: 'true' }), kind, reaperContext(), running);
      assert.equal(v.action, 'reap');
      assert.equal(v.code, 'terminal');
    });
  }

  test('a mark other than exactly "true" is no mark', () => {
    assert.equal(verdict(stamped({ kind: 'Secret', name: 'x', terminal: 'yes' }), 'Secret', reaperContext(), running).code, 'owner-running');
  });

  test('a mark on an object of another environment is never this reaper\'s', () => {
    assert.equal(verdict(stamped({ kind: 'Secret', name: 'x', terminal: 'true', environment: 'beta' }), 'Secret', reaperContext(), running).code, 'foreign-environment');
  });
});

describe('run leases', () => {
  const withLease = (o: Partial<Parameters<typeof stamped>[0]> = {}) => stamped({ kind: 'Secret', name: 'sbx-1-token', runLease: 'run-1', expiresAt: iso(3600), ...o });

  test('a lease renewed within its duration and the grace keeps the object of a live runner', () => {
    const v = verdict(withLease(), 'Secret', reaperContext(), running, leaseAt(-30));
    assert.equal(v.code, 'owner-running');
    assert.match(v.reason, /run lease sandbox-a\/run-1 was renewed/);
  });

  test('a lease not renewed for longer than its duration plus the grace reaps the object of a live runner', () => {
    const v = verdict(withLease(), 'Secret', reaperContext(), running, leaseAt(-(40 + GRACE.lease) - 1));
    assert.equal(v.action, 'reap');
    assert.equal(v.code, 'lease-expired');
  });

  test('a lease the API server answers NotFound for reaps', () => {
    const v = verdict(withLease(), 'Secret', reaperContext(), running, { state: 'absent', readAt: NOW });
    assert.equal(v.code, 'lease-gone');
  });

  test('an error reading the lease keeps while the owner lives; an owner proven gone still ends the run, as past a renewed lease', () => {
    const v = verdict(withLease(), 'Secret', reaperContext(), running, { state: 'error', message: 'HTTP 403: forbidden' });
    assert.equal(v.action, 'keep');
    assert.equal(v.code, 'lease-unreadable');
    // (No deadline ahead: one ahead keeps an object whose owner is gone, as without a lease.)
    const noDeadline = withLease({ expiresAt: undefined });
    assert.equal(verdict(noDeadline, 'Secret', reaperContext(), gone, { state: 'error', message: 'HTTP 403: forbidden' }).code, 'owner-gone');
    assert.equal(verdict(noDeadline, 'Secret', reaperContext(), gone, leaseAt(-5)).code, 'owner-gone', 'a renewed lease does not keep it either');
  });

  test('a lease not read keeps', () => {
    assert.equal(verdict(withLease(), 'Secret', reaperContext(), running).code, 'lease-not-read');
  });

  test('a lease left unread by the bound keeps while the owner lives; with the owner gone it is reaped (rev-87: the bound, spent in list order, kept the same leaks every sweep)', () => {
    const v = verdict(withLease(), 'Secret', reaperContext(), running, { state: 'bounded', limit: 10_000 });
    assert.equal(v.action, 'keep');
    assert.equal(v.code, 'lease-bounded');
    assert.match(v.reason, /already read 10000 run leases in sandbox-a, its bound/);
    assert.equal(verdict(withLease({ expiresAt: undefined }), 'Secret', reaperContext(), gone, { state: 'bounded', limit: 10_000 }).code, 'owner-gone');
    // With no owner stamp, nothing else ends it: the doubt keeps.
    assert.equal(verdict(stamped({ kind: 'Secret', name: 'no-owner', runLease: 'run-1', owner: null }), 'Secret', reaperContext(), undefined, { state: 'bounded', limit: 10_000 }).code, 'lease-bounded');
  });

  test('a Lease of that name whose stamps do not verify is no evidence either way: it keeps what nothing else ends, and an owner proven gone still ends the run', () => {
    const forged = leaseAt(-10_000, { signingKey: Buffer.from('not-deeds-key-but-long-enough-0123456789abcdef') });
    const otherForged = leaseAt(-10_000, { environment: 'beta', signingKey: Buffer.from('not-deeds-key-but-long-enough-0123456789abcdef') });
    for (const l of [forged, otherForged]) {
      assert.equal(verdict(withLease({ owner: null, expiresAt: undefined }), 'Secret', reaperContext(), undefined, l).code, 'lease-foreign');
      const kept = verdict(withLease(), 'Secret', reaperContext(), running, l);
      assert.equal(kept.code, 'owner-running');
      assert.match(kept.reason, /stamps do not verify|does not verify|not verify/);
      const ended = verdict(withLease({ expiresAt: undefined }), 'Secret', reaperContext(), gone, l);
      assert.deepEqual([ended.action, ended.code], ['reap', 'owner-gone']);
    }
  });

  test("a Lease recreated under the run lease's name by another environment, or by anyone with no stamps, is another Lease: the run's was deleted, and its objects are reaped", () => {
    const beta = verdict(withLease(), 'Secret', reaperContext(), running, leaseAt(-1_000, { environment: 'beta' }));
    assert.equal(beta.action, 'reap');
    assert.equal(beta.code, 'lease-replaced');
    assert.doesNotMatch(beta.reason, /beta/, 'names no other environment');
    const bare = leaseAt(-1_000);
    if (bare.state === 'present') bare.lease = { ...bare.lease, labels: {}, annotations: {} };
    assert.equal(verdict(withLease(), 'Secret', reaperContext(), running, bare).code, 'lease-replaced');
  });

  test('a lease with no renewal time is never counted expired, nor does it keep a run whose owner is proven gone (a renewer that crashed before its first renewal)', () => {
    const l = leaseAt(-10_000);
    if (l.state === 'present') delete l.lease.renewedAt;
    assert.equal(verdict(withLease({ owner: null, expiresAt: undefined }), 'Secret', reaperContext(), undefined, l).code, 'lease-undated');
    assert.equal(verdict(withLease(), 'Secret', reaperContext(), running, l).code, 'owner-running');
    const ended = verdict(withLease({ expiresAt: undefined }), 'Secret', reaperContext(), gone, l);
    assert.deepEqual([ended.action, ended.code], ['reap', 'owner-gone']);
  });

  test('the lease is judged as of the list that was read, not as of a later clock', () => {
    const l = leaseAt(-30);
    assert.equal(verdict(withLease(), 'Secret', { ...reaperContext(), now: NOW + 1_000_000 }, running, l).code, 'owner-running');
  });

  test('an object with no owner stamp whose lease is held is kept as lease-held', () => {
    assert.equal(verdict(withLease({ owner: null }), 'Secret', reaperContext(), undefined, leaseAt(-5)).code, 'lease-held');
  });

  test('with run leases off (the policy default) a run lease is ignored: the owner decides, and nothing is read', () => {
    const off = { ...reaperContext(), runLeases: false };
    assert.equal(verdict(withLease(), 'Secret', off, running).code, 'owner-running');
    assert.equal(verdict(withLease({ expiresAt: iso(-60) }), 'Secret', off, gone).code, 'owner-gone');
    assert.deepEqual(needs(withLease(), 'Secret', off), { owner: RUNNER });
  });

  test('the lease name is covered by the attestation: an object whose run-lease annotation was edited is skipped', () => {
    const obj = withLease();
    obj.metadata.annotations![KEYS.runLease] = 'someone-elses-lease';
    assert.equal(verdict(obj, 'Secret', reaperContext(), running, leaseAt(-10_000)).code, 'attestation-invalid');
  });
});

describe('run leases in a sweep, over the API wire format', () => {
  let server: FakeApiServer;
  beforeEach(async () => {
    server = await new FakeApiServer().start();
  });
  afterEach(async () => {
    await server.close();
  });

  const run = async (apply = true, maxLeaseReadsPerNamespace?: number) => {
    const decisions: Decision[] = [];
    const summary = await sweep({
      client: createKubeClient(server.kubeConfig(), { timeoutMs: 10_000, labelPrefix: 'deed.dev' }),
      environment: ENV,
      keys: KEYS,
      keyRing: TEST_RING,
      deedNamespace: 'deed-system',
      namespaces: [],
      apply,
      now: () => NOW,
      deadlineGraceSeconds: GRACE.deadline,
      leaseGraceSeconds: GRACE.lease,
      runLeases: true,
      concurrency: 4,
      ...(maxLeaseReadsPerNamespace !== undefined ? { maxLeaseReadsPerNamespace } : {}),
      onDecision: (d) => void decisions.push(d),
    });
    return { decisions, summary };
  };
  const leaseLists = () => server.requests.filter((r) => r.method === 'GET' && /\/leases$/.test(r.path));
  const leaseGets = (name?: string) => server.requests.filter((r) => r.method === 'GET' && (name === undefined ? /\/leases\/[^/]+$/ : new RegExp(`/leases/${name}$`)).test(r.path));

  test('a live runner whose run lease stopped being renewed: its pod, both Secrets and its NetworkPolicy are reaped in one sweep; a fresh lease keeps its run', async () => {
    server.put('pods', runnerPod());
    server.put('leases', stampedLease('run-stale', { renewTime: iso(-(40 + GRACE.lease) - 60) }));
    server.put('leases', stampedLease('run-fresh', { renewTime: iso(-5) }));
    const objects = (lease: string) => [
      server.put('pods', stamped({ kind: 'Pod', name: `${lease}-pod`, runLease: lease, expiresAt: iso(3600) })),
      server.put('secrets', stamped({ kind: 'Secret', name: `${lease}-token`, runLease: lease, expiresAt: iso(3600) })),
      server.put('secrets', stamped({ kind: 'Secret', name: `${lease}-creds`, runLease: lease, expiresAt: iso(3600) })),
      server.put('networkpolicies', stamped({ kind: 'NetworkPolicy', name: `${lease}-egress`, runLease: lease })),
    ];
    const stale = objects('run-stale');
    const fresh = objects('run-fresh');
    const { decisions, summary } = await run();
    for (const o of stale) {
      const d = decisions.find((x) => x.name === o.metadata.name)!;
      assert.equal(d.code, 'lease-expired', d.reason);
      assert.equal(d.outcome, 'deleted');
    }
    for (const o of fresh) assert.equal(decisions.find((x) => x.name === o.metadata.name)!.code, 'owner-running');
    assert.equal(server.get('secrets', 'sandbox-a', 'run-stale-creds'), undefined);
    assert.ok(server.get('secrets', 'sandbox-a', 'run-fresh-creds'));
    // Each Lease read by name: the held one once for all its objects, the lapsed one again
    // only for objects listed after its last read (one per kind's page at most), never a list.
    assert.equal(leaseLists().length, 0, 'no Lease list');
    assert.equal(leaseGets('run-fresh').length, 1, 'a held lease is read once');
    assert.ok(leaseGets('run-stale').length >= 1 && leaseGets('run-stale').length <= 8, `${leaseGets('run-stale').length} reads of the lapsed lease`);
    assert.equal(summary.leaseReads, leaseGets().length);
    assert.deepEqual([summary.leaseReadsFailed, summary.leasesBounded], [0, 0]);
  });

  test("20,001 Leases of another environment in the namespace change nothing: alpha's leaked Secret is reaped after one read of its own lease", async () => {
    // The bound the old namespace list failed past was 20,000 Leases.
    for (let i = 0; i <= 20_000; i++) server.put('leases', stampedLease(`beta-${i}`, { environment: 'beta', renewTime: iso(-5) }));
    server.put('pods', runnerPod());
    server.put('secrets', stamped({ kind: 'Secret', name: 'leaked-creds', runLease: 'run-over', expiresAt: iso(3600) }));
    const { decisions, summary } = await run();
    const d = decisions.find((x) => x.name === 'leaked-creds')!;
    assert.equal(d.code, 'lease-gone', d.reason);
    assert.equal(d.outcome, 'deleted');
    assert.equal(server.get('secrets', 'sandbox-a', 'leaked-creds'), undefined);
    assert.equal(leaseLists().length, 0, 'no Lease list');
    assert.ok(leaseGets().every((r) => r.path.endsWith('/leases/run-over')), 'only the lease the object names');
    assert.equal(summary.leasesBounded, 0);
  });

  test('a lease deleted: its objects are reaped as lease-gone', async () => {
    server.put('pods', runnerPod());
    server.put('secrets', stamped({ kind: 'Secret', name: 'orphan-token', runLease: 'run-deleted', expiresAt: iso(3600) }));
    const { decisions } = await run();
    const d = decisions.find((x) => x.name === 'orphan-token')!;
    assert.equal(d.code, 'lease-gone');
    assert.match(d.reason, /NotFound/);
    assert.equal(d.outcome, 'deleted');
  });

  test('a Lease read that fails keeps every object that names it, says why, and counts it', async () => {
    server.put('pods', runnerPod());
    server.put('secrets', stamped({ kind: 'Secret', name: 'kept-token', runLease: 'run-deleted', expiresAt: iso(3600) }));
    server.put('secrets', stamped({ kind: 'Secret', name: 'kept-creds', runLease: 'run-deleted', expiresAt: iso(3600) }));
    server.faults.push({ path: /\/leases\/run-deleted$/, answer: { status: 403, reason: 'Forbidden', message: 'leases.coordination.k8s.io "run-deleted" is forbidden' } });
    const { decisions, summary } = await run();
    for (const name of ['kept-token', 'kept-creds']) {
      const d = decisions.find((x) => x.name === name)!;
      assert.equal(d.action, 'keep');
      assert.equal(d.code, 'lease-unreadable');
      assert.match(d.reason, /forbidden/);
      assert.ok(server.get('secrets', 'sandbox-a', name));
    }
    assert.equal(summary.errors, 0);
    assert.equal(summary.leaseReadsFailed, 1, 'one lease, read once for both objects of one page');
  });

  test('a 500 or a timeout is no NotFound: the object is kept', async () => {
    server.put('pods', runnerPod());
    server.put('secrets', stamped({ kind: 'Secret', name: 'kept-token', runLease: 'run-x', expiresAt: iso(3600) }));
    server.faults.push({ path: /\/leases\/run-x$/, answer: { status: 500, reason: 'InternalError', message: 'etcdserver: request timed out' } });
    const { decisions } = await run();
    assert.equal(decisions.find((x) => x.name === 'kept-token')!.code, 'lease-unreadable');
    assert.ok(server.get('secrets', 'sandbox-a', 'kept-token'));
  });

  test('past the bound of distinct leases read in a namespace, objects are kept as lease-bounded and counted once per lease; other namespaces have their own bound', async () => {
    server.put('pods', runnerPod());
    for (const lease of ['run-1', 'run-2', 'run-3']) server.put('secrets', stamped({ kind: 'Secret', name: `${lease}-token`, runLease: lease, expiresAt: iso(3600) }));
    server.put('secrets', stamped({ kind: 'Secret', name: 'run-3-creds', runLease: 'run-3', expiresAt: iso(3600) }));
    server.put('secrets', stamped({ kind: 'Secret', name: 'run-9-token', namespace: 'sandbox-b', runLease: 'run-9', expiresAt: iso(3600) }));
    const { decisions, summary } = await run(true, 2);
    const code = (name: string) => decisions.find((x) => x.name === name)!;
    for (const name of ['run-1-token', 'run-2-token', 'run-9-token']) assert.equal(code(name).code, 'lease-gone', name);
    for (const name of ['run-3-token', 'run-3-creds']) {
      assert.equal(code(name).action, 'keep');
      assert.equal(code(name).code, 'lease-bounded');
      assert.match(code(name).reason, /already read 2 run leases in sandbox-a/);
      assert.ok(server.get('secrets', 'sandbox-a', name));
    }
    assert.equal(summary.leasesBounded, 1, 'one lease left unread');
    assert.equal(leaseGets('run-3').length, 0, 'never read');
    // Three leases read, each again right before its objects' delete.
    assert.deepEqual([...new Set(leaseGets().map((r) => r.path.split('/').at(-1)))].sort(), ['run-1', 'run-2', 'run-9']);
    // The next sweep, with the first two runs reaped, reads the third.
    const next = await run(true, 2);
    assert.equal(next.decisions.find((x) => x.name === 'run-3-creds')!.code, 'lease-gone');
  });

  test("a Lease read before an object was listed never proves that object's lease gone", async () => {
    server.put('pods', runnerPod());
    // The Secret is judged first, and its lease read NotFound; the Lease is then created, and a
    // NetworkPolicy naming it is listed after that: the old NotFound must not reap it.
    server.put('secrets', stamped({ kind: 'Secret', name: 'early-token', runLease: 'run-b', expiresAt: iso(3600) }));
    let created = false;
    server.hooks.push((req) => {
      if (!created && req.path.endsWith('/networkpolicies')) {
        created = true;
        server.put('leases', stampedLease('run-b', { renewTime: iso(-5) }));
        server.put('networkpolicies', stamped({ kind: 'NetworkPolicy', name: 'late-egress', runLease: 'run-b' }));
      }
    });
    const { decisions } = await run(false);
    assert.equal(decisions.find((x) => x.name === 'early-token')!.code, 'lease-gone');
    assert.equal(decisions.find((x) => x.name === 'late-egress')!.code, 'owner-running', 'a fresh read found run-b');
    assert.equal(leaseGets('run-b').length, 2);
  });

  test("a Lease read as replaced (another environment's, or unstamped) is read again for an object listed after it: alpha may have freed the name and taken it again for a live run (rev-87)", async () => {
    server.put('pods', runnerPod());
    const unstampedLease = { ...stampedLease('run-u'), metadata: { ...stampedLease('run-u').metadata, labels: {}, annotations: {} } };
    // alpha's earlier run left a Secret naming the lease, whose Lease alpha deleted; beta, or someone of no environment, took the name.
    const squats = [
      { lease: 'run-r', squatter: stampedLease('run-r', { environment: 'beta', renewTime: iso(-5) }), old: 'old-token', live: 'live-egress' },
      { lease: 'run-u', squatter: unstampedLease, old: 'old-u', live: 'live-u' },
    ];
    for (const { lease, squatter, old, live } of squats) {
      server.put('leases', squatter);
      server.put('secrets', stamped({ kind: 'Secret', name: old, runLease: lease, owner: null }));
      let retaken = false;
      server.hooks.push((req) => {
        // Before NetworkPolicies are listed, the squatter is gone and alpha's live run holds the name again.
        if (!retaken && req.path.endsWith('/networkpolicies')) {
          retaken = true;
          server.put('leases', stampedLease(lease, { renewTime: iso(-5) }));
          server.put('networkpolicies', stamped({ kind: 'NetworkPolicy', name: live, runLease: lease, owner: null }));
        }
      });
      const { decisions } = await run(true);
      assert.equal(decisions.find((x) => x.name === old)!.code, 'lease-replaced', lease);
      const held = decisions.find((x) => x.name === live)!;
      assert.equal(held.code, 'lease-held', `${lease}: ${held.reason}`);
      assert.ok(server.get('networkpolicies', 'sandbox-a', live), `alpha's live NetworkPolicy ${live} stands`);
    }
  });

  test('a lease held when read is reused for objects listed later: no second read', async () => {
    server.put('pods', runnerPod());
    server.put('leases', stampedLease('run-h', { renewTime: iso(-5) }));
    server.put('secrets', stamped({ kind: 'Secret', name: 'h-token', runLease: 'run-h', expiresAt: iso(3600) }));
    server.put('networkpolicies', stamped({ kind: 'NetworkPolicy', name: 'h-egress', runLease: 'run-h' }));
    const { decisions } = await run(false);
    for (const name of ['h-token', 'h-egress']) assert.equal(decisions.find((x) => x.name === name)!.code, 'owner-running');
    assert.equal(leaseGets('run-h').length, 1);
  });

  test('a dry run as an identity RBAC would refuse says the delete would fail instead of promising it, asking once per kind and namespace', async () => {
    server.put('secrets', stamped({ kind: 'Secret', name: 'done-a', terminal: 'true' }));
    server.put('secrets', stamped({ kind: 'Secret', name: 'done-b', terminal: 'true' }));
    server.put('networkpolicies', stamped({ kind: 'NetworkPolicy', name: 'done-egress', terminal: 'true' }));
    server.forbidden.add('delete secrets sandbox-a');
    const { decisions, summary } = await run(false);
    for (const name of ['done-a', 'done-b']) {
      const d = decisions.find((x) => x.name === name)!;
      assert.equal(d.outcome, 'not-permitted');
      assert.match(d.error ?? '', /may not delete Secret objects in sandbox-a \(RBAC: no RBAC policy matched\); --apply would fail/);
    }
    assert.equal(decisions.find((x) => x.name === 'done-egress')!.outcome, 'would-delete');
    assert.equal(summary.errors, 2);
    const reviews = server.requests.filter((r) => r.path === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    assert.equal(reviews.length, 2, 'one review for secrets in sandbox-a, one for networkpolicies');
    assert.deepEqual((reviews[0]!.body as { spec: unknown }).spec, { resourceAttributes: { namespace: 'sandbox-a', verb: 'delete', group: '', resource: 'secrets' } });
  });
});
