// The reaper's I/O, through @kubernetes/client-node, against a fake API server that speaks
// kube-apiserver's wire format. Each failure story of docs/concepts.md's lessons has a test.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../src/admission/types.js';
import { createKubeClient, MAX_LIST_PAGE_BYTES, type KubeClient } from '../src/kube/client.js';
import { KubeError } from '../src/kube/errors.js';
import { formatDecision, formatSummary } from '../src/reaper/report.js';
import { reapSelector, sweep, type Decision, type SweepSummary } from '../src/reaper/sweep.js';
import { NOW, TEST_RING } from './helpers.js';
import { FakeApiServer, type FaultAnswer } from './fake-apiserver.js';
import { ENV, iso, KEYS, RUNNER, runnerPod, stamped } from './reaper-helpers.js';

const SELECTOR = 'deed.dev/managed=true,deed.dev/environment=alpha';
const OTHER_UID = 'a9d2f0c4-0b1e-4c55-9d3a-6f7e8a9b0c1d';
// Generous: the machine is shared; only the slow-answer tests use a short deadline.
const TIMEOUT_MS = 10_000;
const SHORT_TIMEOUT_MS = 800;
const SLOW_MS = 4_000;

let server: FakeApiServer;

beforeEach(async () => {
  server = await new FakeApiServer().start();
});

afterEach(async () => {
  await server.close();
});

function client(timeoutMs = TIMEOUT_MS, pageSize?: number): KubeClient {
  return createKubeClient(server.kubeConfig(), { timeoutMs, labelPrefix: 'deed.dev', ...(pageSize ? { pageSize } : {}) });
}

interface SweepResult {
  decisions: Decision[];
  summary: SweepSummary;
}

interface RunOptions {
  apply?: boolean;
  namespaces?: string[];
  client?: KubeClient;
  now?: number;
  signal?: AbortSignal;
  concurrency?: number;
  onDecision?: (d: Decision) => void;
}

async function run(opts: RunOptions = {}): Promise<SweepResult> {
  const decisions: Decision[] = [];
  const summary = await sweep({
    client: opts.client ?? client(),
    environment: ENV,
    keys: KEYS,
    keyRing: TEST_RING,
    deedNamespace: 'deed-system',
    namespaces: opts.namespaces ?? [],
    apply: opts.apply ?? true,
    now: () => opts.now ?? NOW,
    deadlineGraceSeconds: 900,
    leaseGraceSeconds: 300,
    runLeases: true,
    concurrency: opts.concurrency ?? 4,
    ...(opts.signal ? { signal: opts.signal } : {}),
    onDecision: (d) => {
      decisions.push(d);
      opts.onDecision?.(d);
    },
  });
  return { decisions, summary };
}

/** The summary's counts, without what varies from run to run (duration, reads). */
function counts(s: SweepSummary) {
  return { complete: s.complete, judged: s.judged, reaped: s.reaped, kept: s.kept, skipped: s.skipped, conflicts: s.conflicts, stopped: s.stopped, errors: s.errors };
}

function decision(result: SweepResult, kind: string, name: string): Decision {
  const d = result.decisions.find((x) => x.kind === kind && x.name === name);
  assert.ok(d, `a decision on ${kind} ${name} in ${JSON.stringify(result.decisions, null, 1)}`);
  return d;
}

/** The killed-runner scene: a sandbox pod, its token Secret, its NetworkPolicy and its workspace PVC. */
function killedRunnerScene(): Record<string, KubeObject> {
  return {
    pod: server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-60) })),
    secret: server.put('secrets', stamped({ kind: 'Secret', name: 'sbx-1-token', expiresAt: iso(-60) })),
    policy: server.put('networkpolicies', stamped({ kind: 'NetworkPolicy', name: 'sbx-1-egress' })),
    pvc: server.put('persistentvolumeclaims', stamped({ kind: 'PersistentVolumeClaim', name: 'sbx-1-workspace' })),
  };
}

function listRequests() {
  return server.requests.filter((r) => r.method === 'GET' && !/\/pods\/[^/]+$/.test(r.path) && r.path !== '/api/v1/namespaces');
}

const isOwnerRead = (r: { method: string; path: string }) => r.method === 'GET' && r.path === '/api/v1/namespaces/sandbox-a/pods/runner-0';

describe('reaper sweep against the API wire format', () => {
  test('the selector names the managed label and this environment only', () => {
    assert.equal(reapSelector(KEYS, ENV), SELECTOR);
  });

  test('killed runner: owner gone and deadline passed, its objects are reaped within one tick and the PVC is kept', async () => {
    const scene = killedRunnerScene();
    const result = await run();
    for (const [kind, obj] of [
      ['Pod', scene.pod],
      ['Secret', scene.secret],
      ['NetworkPolicy', scene.policy],
    ] as const) {
      const d = decision(result, kind, obj!.metadata.name!);
      assert.equal(d.action, 'reap', d.reason);
      assert.equal(d.outcome, 'deleted');
    }
    assert.equal(decision(result, 'PersistentVolumeClaim', 'sbx-1-workspace').code, 'pvc-not-terminal');
    assert.equal(server.get('pods', 'sandbox-a', 'sbx-1'), undefined);
    assert.equal(server.get('secrets', 'sandbox-a', 'sbx-1-token'), undefined);
    assert.equal(server.get('networkpolicies', 'sandbox-a', 'sbx-1-egress'), undefined);
    assert.ok(server.get('persistentvolumeclaims', 'sandbox-a', 'sbx-1-workspace'));
    assert.deepEqual(counts(result.summary), { complete: true, judged: 4, reaped: 3, kept: 1, skipped: 0, conflicts: 0, stopped: 0, errors: 0 });
    assert.deepEqual(result.summary.reasons, { reap: { 'owner-gone': 3 }, keep: { 'pvc-not-terminal': 1 } });
  });

  test("a leaked ConfigMap is reaped as a Secret is: owner gone and deadline passed, deleted under its uid; one whose deadline is ahead, or another environment's, is kept", async () => {
    const leaked = server.put('configmaps', stamped({ kind: 'ConfigMap', name: 'sbx-1-script', expiresAt: iso(-60) }));
    server.put('configmaps', stamped({ kind: 'ConfigMap', name: 'sbx-2-script', expiresAt: iso(3600) }));
    server.put('configmaps', stamped({ kind: 'ConfigMap', name: 'beta-script', environment: 'beta', expiresAt: iso(-60) }));
    const result = await run();
    const d = decision(result, 'ConfigMap', 'sbx-1-script');
    assert.equal(d.action, 'reap', d.reason);
    assert.equal(d.outcome, 'deleted');
    assert.equal(server.get('configmaps', 'sandbox-a', 'sbx-1-script'), undefined);
    assert.equal(decision(result, 'ConfigMap', 'sbx-2-script').action, 'keep');
    assert.ok(server.get('configmaps', 'sandbox-a', 'sbx-2-script'));
    assert.ok(server.get('configmaps', 'sandbox-a', 'beta-script'), "another environment's ConfigMap is not even listed");
    assert.deepEqual(
      server.deletes().map((r) => [r.path, (r.body as { preconditions?: unknown }).preconditions]),
      [['/api/v1/namespaces/sandbox-a/configmaps/sbx-1-script', { uid: leaked.metadata.uid }]],
    );
  });

  test('every delete follows an owner read sent after its object was listed and after its verdict', async () => {
    killedRunnerScene();
    const result = await run();
    assert.equal(result.summary.reaped, 3);
    const requests = server.requests;
    for (const [i, r] of requests.entries()) {
      if (r.method !== 'DELETE') continue;
      const plural = r.path.split('/').at(-2)!;
      const listedAt = requests.findLastIndex((x, j) => j < i && x.method === 'GET' && x.path.endsWith(`/${plural}`));
      const reads = requests.slice(listedAt + 1, i).filter(isOwnerRead);
      // One read to judge, one more to confirm the owner still absent before deleting.
      assert.ok(reads.length >= 2, `${r.path}: owner reads between its list and its delete: ${reads.length}`);
    }
    assert.equal(result.summary.ownerReads, requests.filter(isOwnerRead).length);
  });

  test('every delete carries the uid read as a precondition; the resourceVersion only where the verdict read what can change (a pod by its clock, a claim)', async () => {
    const scene = killedRunnerScene();
    await run();
    const byPath = new Map(server.deletes().map((r) => [r.path, r.body]));
    assert.equal(byPath.size, 3);
    for (const [path, obj, clocked] of [
      // Its deadline passed (within the grace): its own clock was read, and the delete holds it to the state read.
      ['/api/v1/namespaces/sandbox-a/pods/sbx-1', scene.pod, true],
      ['/api/v1/namespaces/sandbox-a/secrets/sbx-1-token', scene.secret, false],
      ['/apis/networking.k8s.io/v1/namespaces/sandbox-a/networkpolicies/sbx-1-egress', scene.policy, false],
    ] as const) {
      const body = byPath.get(path) as { preconditions?: unknown };
      assert.deepEqual(body.preconditions, { uid: obj!.metadata.uid, ...(clocked ? { resourceVersion: obj!.metadata.resourceVersion } : {}) }, path);
    }
  });

  test("a leaked Secret its environment keeps touching (same uid, a new resourceVersion between list and delete) is still deleted (rev-87)", async () => {
    const leaked = server.put('secrets', stamped({ kind: 'Secret', name: 'touched', expiresAt: iso(-3600) }));
    server.hooks.push((r) => {
      if (r.method === 'DELETE') {
        const current = server.get('secrets', 'sandbox-a', 'touched')!;
        current.metadata.annotations = { ...current.metadata.annotations, 'example.com/touched': String(Date.now()) };
        server.put('secrets', current);
      }
    });
    const result = await run();
    const d = decision(result, 'Secret', 'touched');
    assert.equal(d.outcome, 'deleted', d.error);
    assert.equal(server.get('secrets', 'sandbox-a', 'touched'), undefined);
    assert.notEqual(leaked.metadata.resourceVersion, undefined);
  });

  test('dry run: the same scene is judged the same and nothing is deleted', async () => {
    killedRunnerScene();
    const result = await run({ apply: false });
    assert.equal(server.deletes().length, 0);
    assert.deepEqual(
      result.decisions.filter((d) => d.action === 'reap').map((d) => d.outcome),
      ['would-delete', 'would-delete', 'would-delete'],
    );
    assert.equal(result.summary.dryRun, true);
    assert.equal(result.summary.reaped, 3);
    assert.ok(server.get('pods', 'sandbox-a', 'sbx-1'));
  });

  test('the runner still alive with its uid: everything is kept and nothing deleted', async () => {
    killedRunnerScene();
    server.put('pods', runnerPod());
    const result = await run();
    assert.equal(server.deletes().length, 0);
    assert.equal(result.summary.reaped, 0);
    assert.equal(decision(result, 'Pod', 'sbx-1').code, 'owner-running');
  });

  describe('closed world', () => {
    test('every list asks for this environment by label selector, across all namespaces when none is given', async () => {
      killedRunnerScene();
      await run();
      const lists = listRequests();
      assert.deepEqual(lists.map((r) => r.path).sort(), [
        '/api/v1/configmaps',
        '/api/v1/persistentvolumeclaims',
        '/api/v1/pods',
        '/api/v1/secrets',
        '/apis/networking.k8s.io/v1/networkpolicies',
      ]);
      for (const r of lists) assert.equal(r.query.get('labelSelector'), SELECTOR, r.path);
    });

    test('with --namespace, each given namespace is listed on its own and no other is read', async () => {
      server.put('pods', stamped({ kind: 'Pod', name: 'sbx-c', namespace: 'sandbox-c', expiresAt: iso(-60) }));
      await run({ namespaces: ['sandbox-a', 'sandbox-b'] });
      const lists = listRequests();
      assert.equal(lists.length, 10);
      for (const r of lists) {
        assert.match(r.path, /\/namespaces\/sandbox-[ab]\//);
        assert.equal(r.query.get('labelSelector'), SELECTOR);
      }
      assert.ok(server.get('pods', 'sandbox-c', 'sbx-c'));
    });

    test('an unstamped object and one stamped for another environment are never deleted, even by a server that ignores the selector', async () => {
      server.ignoreSelector = true;
      server.put('pods', { metadata: { name: 'web-0', namespace: 'sandbox-a', labels: { app: 'web' } } });
      server.put('pods', stamped({ kind: 'Pod', name: 'beta-sbx', environment: 'beta', expiresAt: iso(-60) }));
      server.put('secrets', stamped({ kind: 'Secret', name: 'beta-token', environment: 'beta', owner: null, expiresAt: iso(-60) }));
      const result = await run();
      assert.equal(server.deletes().length, 0);
      assert.equal(decision(result, 'Pod', 'web-0').action, 'skip');
      assert.equal(decision(result, 'Pod', 'beta-sbx').code, 'foreign-environment');
      assert.equal(decision(result, 'Secret', 'beta-token').code, 'foreign-environment');
      assert.equal(result.summary.skipped, 3);
      // A foreign object's owner stamp is never followed either.
      assert.equal(server.requests.filter((r) => /\/pods\/runner-0$/.test(r.path)).length, 0);
    });

    test('copied labels: Deed labels copied onto an object without a valid attestation are skipped, not deleted', async () => {
      const original = stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-60) });
      const copy: KubeObject = { metadata: { name: 'intruder', namespace: 'sandbox-a', labels: { ...original.metadata.labels }, annotations: { ...original.metadata.annotations } } };
      delete copy.metadata.annotations![KEYS.attestation];
      server.put('pods', copy);
      // Stamps and attestation lifted whole onto a Secret: the kind is attested, so it fails too.
      server.put('secrets', { metadata: { ...structuredClone(original.metadata), name: 'lifted', uid: undefined } });
      const result = await run();
      assert.equal(server.deletes().length, 0);
      assert.equal(decision(result, 'Pod', 'intruder').code, 'attestation-invalid');
      assert.equal(decision(result, 'Secret', 'lifted').code, 'attestation-invalid');
    });
  });

  describe('same-name replacement', () => {
    test('the owner was recreated under the same name with another uid: the sandbox is reaped', async () => {
      server.put('pods', runnerPod({ ...RUNNER, uid: OTHER_UID }));
      server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-60) }));
      const result = await run();
      const d = decision(result, 'Pod', 'sbx-1');
      assert.equal(d.code, 'owner-replaced', d.reason);
      assert.equal(d.outcome, 'deleted');
      assert.equal(server.get('pods', 'sandbox-a', 'sbx-1'), undefined);
      assert.equal(server.get('pods', 'sandbox-a', 'runner-0')!.metadata.uid, OTHER_UID, 'the new owner is untouched');
    });

    test('the sandbox was replaced between list and delete: the precondition refuses the delete, it is not retried, and nothing else is touched', async () => {
      const listed = server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-60) }));
      let replacement: KubeObject | undefined;
      server.hooks.push((r) => {
        if (r.method === 'DELETE' && replacement === undefined) replacement = server.replace('pods', 'sandbox-a', 'sbx-1');
      });
      const result = await run();
      const d = decision(result, 'Pod', 'sbx-1');
      assert.equal(d.outcome, 'conflict');
      assert.match(d.error!, /Precondition failed: UID/);
      assert.equal(server.deletes().length, 1, 'one delete, not retried');
      assert.deepEqual((server.deletes()[0]!.body as { preconditions: unknown }).preconditions, { uid: listed.metadata.uid, resourceVersion: listed.metadata.resourceVersion });
      assert.deepEqual(server.get('pods', 'sandbox-a', 'sbx-1'), replacement, 'the replacement stands as it was');
      assert.notEqual(replacement!.metadata.uid, listed.metadata.uid);
      assert.equal(result.summary.conflicts, 1);
      assert.equal(result.summary.reaped, 0);
      assert.equal(result.summary.errors, 0);
    });

    test('a PVC unmarked between list and delete (same uid, new resourceVersion): the delete is refused and the PVC stays', async () => {
      server.put('persistentvolumeclaims', stamped({ kind: 'PersistentVolumeClaim', name: 'ws', terminal: 'true' }));
      server.hooks.push((r) => {
        if (r.method === 'DELETE') {
          const current = server.get('persistentvolumeclaims', 'sandbox-a', 'ws')!;
          delete current.metadata.annotations![KEYS.terminal];
          server.put('persistentvolumeclaims', current);
        }
      });
      const result = await run();
      assert.equal(decision(result, 'PersistentVolumeClaim', 'ws').outcome, 'conflict');
      assert.match(decision(result, 'PersistentVolumeClaim', 'ws').error!, /ResourceVersion/);
      assert.ok(server.get('persistentvolumeclaims', 'sandbox-a', 'ws'));
    });
  });

  describe('transient errors reading the owner keep the object', () => {
    const failures: Array<{ name: string; answer: FaultAnswer; timeoutMs?: number; message: RegExp }> = [
      { name: 'a 500 from the store', answer: { status: 500, reason: 'InternalError', message: 'etcdserver: request timed out' }, message: /HTTP 500: etcdserver/ },
      { name: 'a 403 (missing RBAC in the owner namespace)', answer: { status: 403, reason: 'Forbidden', message: 'pods "runner-0" is forbidden' }, message: /HTTP 403/ },
      { name: 'a 404 that is not a NotFound Status (a proxy)', answer: { status: 404, raw: '404 page not found\n', contentType: 'text/plain; charset=utf-8' }, message: /HTTP 404 without a NotFound status/ },
      { name: 'an undecodable body', answer: { status: 200, raw: '{"kind":"Pod","metadata":' }, message: /get pod sandbox-a\/runner-0/ },
      { name: 'a pod without a uid', answer: { status: 200, raw: '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"runner-0"}}' }, message: /without a uid/ },
      { name: 'an answer slower than the deadline', answer: { delayMs: SLOW_MS }, timeoutMs: SHORT_TIMEOUT_MS, message: /no answer within 800 ms/ },
    ];
    for (const f of failures) {
      test(`${f.name}: kept this tick, reaped on the next once the owner reads NotFound`, async () => {
        server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-60) }));
        server.faults.push({ method: 'GET', path: /\/pods\/runner-0$/, times: 1, answer: f.answer });
        const c = client(f.timeoutMs ?? TIMEOUT_MS);
        const first = await run({ client: c });
        const kept = decision(first, 'Pod', 'sbx-1');
        assert.equal(kept.action, 'keep');
        assert.equal(kept.code, 'owner-unreadable');
        assert.match(kept.reason, f.message);
        assert.equal(server.deletes().length, 0);
        assert.ok(server.get('pods', 'sandbox-a', 'sbx-1'));

        const second = await run({ client: c });
        assert.equal(decision(second, 'Pod', 'sbx-1').outcome, 'deleted');
        assert.equal(server.get('pods', 'sandbox-a', 'sbx-1'), undefined);
      });
    }
  });

  describe('failed lists and deletes', () => {
    test('a list that fails is an error, nothing of that kind is judged, and the other kinds still are', async () => {
      killedRunnerScene();
      server.faults.push({ method: 'GET', path: /\/secrets$/, answer: { status: 500, reason: 'InternalError', message: 'boom' } });
      const result = await run();
      const failed = result.decisions.find((d) => d.action === 'error');
      assert.deepEqual({ kind: failed?.kind, namespace: failed?.namespace, code: failed?.code }, { kind: 'Secret', namespace: '*', code: 'list-failed' });
      assert.ok(server.get('secrets', 'sandbox-a', 'sbx-1-token'));
      assert.equal(server.get('pods', 'sandbox-a', 'sbx-1'), undefined);
      assert.equal(result.summary.errors, 1);
    });

    test('a list slower than the deadline, or with an undecodable body, is an error and deletes nothing', async () => {
      killedRunnerScene();
      server.faults.push({ method: 'GET', path: /\/pods$/, times: 1, answer: { delayMs: SLOW_MS } });
      server.faults.push({ method: 'GET', path: /\/networkpolicies$/, times: 1, answer: { status: 200, raw: 'not json' } });
      const result = await run({ client: client(SHORT_TIMEOUT_MS) });
      const errors = result.decisions.filter((d) => d.action === 'error').map((d) => d.kind);
      assert.deepEqual(errors.sort(), ['NetworkPolicy', 'Pod']);
      assert.ok(server.get('pods', 'sandbox-a', 'sbx-1'));
      assert.ok(server.get('networkpolicies', 'sandbox-a', 'sbx-1-egress'));
      assert.equal(result.summary.errors, 2);
    });

    test('a delete answered 500 is an error; a delete answered NotFound means already gone', async () => {
      killedRunnerScene();
      server.faults.push({ method: 'DELETE', path: /\/pods\/sbx-1$/, answer: { status: 500, reason: 'InternalError', message: 'boom' } });
      server.hooks.push((r) => {
        if (r.method === 'DELETE' && r.path.endsWith('/secrets/sbx-1-token')) server.remove('secrets', 'sandbox-a', 'sbx-1-token');
      });
      const result = await run();
      assert.equal(decision(result, 'Pod', 'sbx-1').outcome, 'failed');
      assert.equal(decision(result, 'Secret', 'sbx-1-token').outcome, 'already-gone');
      assert.equal(result.summary.errors, 1);
      assert.equal(result.summary.reaped, 2);
    });
  });

  test('the PVC terminal rule: a terminal PVC is deleted with preconditions, an unmarked one and a foreign terminal one are not', async () => {
    const terminal = server.put('persistentvolumeclaims', stamped({ kind: 'PersistentVolumeClaim', name: 'done', terminal: 'true' }));
    server.put('persistentvolumeclaims', stamped({ kind: 'PersistentVolumeClaim', name: 'resumable' }));
    server.put('persistentvolumeclaims', stamped({ kind: 'PersistentVolumeClaim', name: 'beta-done', terminal: 'true', environment: 'beta' }));
    server.put('pods', runnerPod());
    const result = await run();
    assert.equal(decision(result, 'PersistentVolumeClaim', 'done').outcome, 'deleted');
    assert.equal(decision(result, 'PersistentVolumeClaim', 'resumable').action, 'keep');
    assert.equal(result.decisions.length, 2, 'the beta PVC is never even listed');
    assert.deepEqual(server.deletes().map((r) => [r.path, (r.body as { preconditions: unknown }).preconditions]), [
      ['/api/v1/namespaces/sandbox-a/persistentvolumeclaims/done', { uid: terminal.metadata.uid, resourceVersion: terminal.metadata.resourceVersion }],
    ]);
    assert.ok(server.get('persistentvolumeclaims', 'sandbox-a', 'beta-done'));
  });

  describe('metadata only', () => {
    const SECRET_VALUE = Buffer.from('s3cr3t-session-token').toString('base64');

    test('lists and owner reads ask the API server for metadata only, so Secret data never crosses the wire', async () => {
      const secret = stamped({ kind: 'Secret', name: 'sbx-1-token', expiresAt: iso(-60) });
      server.put('secrets', { ...secret, data: { token: SECRET_VALUE } });
      server.put('pods', runnerPod({ ...RUNNER, uid: OTHER_UID }));
      await run({ apply: false });
      const gets = server.requests.filter((r) => r.method === 'GET');
      assert.equal(gets.length, 7, 'the namespaces, five lists and an owner');
      for (const r of gets) assert.match(r.accept, r.path.endsWith('/runner-0') ? /^application\/json;as=PartialObjectMetadata;g=meta\.k8s\.io;v=v1,/ : /^application\/json;as=PartialObjectMetadataList;g=meta\.k8s\.io;v=v1,/, r.path);
    });

    test('against a server that sends full objects anyway, the verdicts are the same and no Secret data is kept', async () => {
      server.servesMetadataOnly = false;
      const scene = killedRunnerScene();
      server.put('secrets', { ...scene.secret!, data: { token: SECRET_VALUE } });
      const result = await run({ apply: false });
      assert.equal(result.summary.reaped, 3);
      assert.equal(JSON.stringify(result).includes(SECRET_VALUE), false);
      const listed = await client().list('Secret', 'sandbox-a', SELECTOR);
      assert.deepEqual(Object.keys(listed[0]!), ['kind', 'metadata']);
      assert.equal(JSON.stringify(listed).includes(SECRET_VALUE), false);
    });
  });

  test('lists are read page by page through continue', async () => {
    for (let i = 0; i < 7; i++) server.put('pods', stamped({ kind: 'Pod', name: `sbx-${i}`, expiresAt: iso(-60) }));
    const result = await run({ client: client(TIMEOUT_MS, 3), apply: false });
    assert.equal(result.decisions.filter((d) => d.kind === 'Pod').length, 7);
    const pages = server.requests.filter((r) => r.path === '/api/v1/pods');
    assert.equal(pages.length, 3);
    assert.deepEqual(pages.map((r) => r.query.get('limit')), ['3', '3', '3']);
    assert.equal(pages[0]!.query.has('continue'), false);
    assert.ok(pages[1]!.query.get('continue'));
  });

  test('pages are sized in characters: objects that carry large annotations come fewer to a page, ordinary ones up to 500', async () => {
    // Outside the review scope anyone may label an object as alpha's and give it 256 KB of annotations.
    const junk = { 'example.com/junk': 'x'.repeat(200 * 1024) };
    for (let i = 0; i < 60; i++) {
      const obj = stamped({ kind: 'Secret', name: `junk-${i}`, namespace: 'plain' });
      server.put('secrets', { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, ...junk } } });
    }
    for (let i = 0; i < 5; i++) server.put('pods', stamped({ kind: 'Pod', name: `sbx-${i}` }));
    const result = await run({ apply: false });
    assert.equal(result.decisions.filter((d) => d.kind === 'Secret').length, 60, 'every object is still judged');
    const limits = (path: string) => server.requests.filter((r) => r.path === path).map((r) => Number(r.query.get('limit')));
    const secrets = limits('/api/v1/secrets');
    assert.equal(secrets[0], 50, 'the first page asks for 50');
    assert.ok(secrets.slice(1).every((l) => l <= 21), `then about 4 MiB of 200 KB objects: ${secrets.join(', ')}`);
    // Five ordinary pods: the next page, had there been one, would ask for the most.
    assert.deepEqual(limits('/api/v1/pods'), [50]);
  });

  test('a page longer than its byte bound is cut as it is read and asked again for fewer objects: small objects first, then padded ones, are all judged', async () => {
    // 200 small ConfigMaps, then 100 padded to 100 KB each: the pages sized from the small ones
    // (50, 100, 200) reach the padded ones with a limit of 200, 10 MB of text past MAX_LIST_PAGE_BYTES.
    const pad = { 'example.com/pad': 'y'.repeat(100 * 1024) };
    for (let i = 0; i < 300; i++) {
      const obj = stamped({ kind: 'ConfigMap', name: `${i < 200 ? 'a' : 'b'}-${String(i).padStart(3, '0')}`, namespace: 'plain' });
      server.put('configmaps', i < 200 ? obj : { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, ...pad } } });
    }
    const result = await run({ apply: false });
    assert.equal(result.decisions.filter((d) => d.kind === 'ConfigMap').length, 300, 'every object is judged once');
    assert.equal(result.summary.errors, 0);
    const pages = server.requests.filter((r) => r.path === '/api/v1/configmaps').map((r) => ({ limit: Number(r.query.get('limit')), from: r.query.get('continue') }));
    const cut = pages.findIndex((p, k) => k > 0 && p.from === pages[k - 1]!.from);
    assert.ok(cut > 0, `a page asked again from the same place: ${JSON.stringify(pages)}`);
    assert.equal(pages[cut]!.limit, Math.floor(pages[cut - 1]!.limit / 8), 'for an eighth as many objects');
    assert.ok(pages[cut - 1]!.limit * 100 * 1024 > MAX_LIST_PAGE_BYTES, 'the page cut would have been past the bound');
  });

  test('one object past the byte bound fails its list, never parsed; the other kinds are still judged', async () => {
    const obj = stamped({ kind: 'ConfigMap', name: 'huge', namespace: 'plain' });
    server.put('configmaps', { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, 'example.com/pad': 'y'.repeat(MAX_LIST_PAGE_BYTES) } } });
    server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1' }));
    const result = await run({ apply: false });
    const failed = result.decisions.find((d) => d.kind === 'ConfigMap');
    assert.equal(failed?.code, 'list-failed');
    assert.match(failed.reason, new RegExp(`the answer is longer than ${MAX_LIST_PAGE_BYTES} bytes`));
    assert.ok(result.decisions.some((d) => d.kind === 'Pod' && d.name === 'sbx-1'));
    const limits = server.requests.filter((r) => r.path === '/api/v1/configmaps').map((r) => Number(r.query.get('limit')));
    assert.deepEqual(limits, [50, 6, 1], 'cut to an eighth each time, down to one object');
    assert.equal(server.deletes().length, 0);
  });

  test('a list whose continue token outlived compaction (410 with a new token) goes on from there, and every object is judged once', async () => {
    for (let i = 0; i < 7; i++) server.put('pods', stamped({ kind: 'Pod', name: `sbx-${i}`, expiresAt: iso(-60) }));
    const offered = Buffer.from('3').toString('base64url');
    server.hooks.push((r) => {
      if (r.path === '/api/v1/pods' && !r.query.has('continue'))
        server.faults.push({
          method: 'GET',
          path: /^\/api\/v1\/pods$/,
          times: 1,
          answer: {
            status: 410,
            raw: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: { continue: offered }, status: 'Failure', reason: 'Expired', code: 410, message: 'The provided continue parameter is too old to display a consistent list result.' }),
          },
        });
    });
    const result = await run({ client: client(TIMEOUT_MS, 3), apply: false });
    assert.deepEqual(result.decisions.filter((d) => d.kind === 'Pod').map((d) => d.name).sort(), ['sbx-0', 'sbx-1', 'sbx-2', 'sbx-3', 'sbx-4', 'sbx-5', 'sbx-6']);
    assert.equal(result.summary.errors, 0);
    const pages = server.requests.filter((r) => r.path === '/api/v1/pods');
    assert.equal(pages.length, 4, 'the first page, the expired continue, the offered one, the last');
    assert.equal(pages[2]!.query.get('continue'), offered);
  });

  test('a 410 on the first page, or one without a token, is a failed list', async () => {
    server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1', expiresAt: iso(-60) }));
    server.faults.push({ method: 'GET', path: /^\/api\/v1\/pods$/, times: 1, answer: { status: 410, raw: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: { continue: 'abc' }, status: 'Failure', reason: 'Expired', code: 410, message: 'too old' }) } });
    const result = await run();
    assert.equal(result.decisions.find((d) => d.kind === 'Pod')?.code, 'list-failed');
    assert.equal(server.deletes().length, 0);
  });

  test('a stop signal before the sweep starts reads nothing and says the sweep is incomplete', async () => {
    killedRunnerScene();
    const stop = new AbortController();
    stop.abort();
    const result = await run({ signal: stop.signal });
    assert.equal(result.summary.complete, false);
    assert.equal(server.requests.filter((r) => r.path !== '/api/v1/namespaces').length, 0);
  });

  test('the client classifies NotFound, Conflict and Timeout, and names the call', async () => {
    const c = client(SHORT_TIMEOUT_MS);
    const obj = server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1' }));
    await assert.rejects(c.getPod('sandbox-a', 'runner-0'), (e: unknown) => e instanceof KubeError && e.reason === 'NotFound' && e.status === 404);
    await assert.rejects(c.delete('Pod', 'sandbox-a', 'sbx-1', { uid: OTHER_UID }), (e: unknown) => e instanceof KubeError && e.reason === 'Conflict' && /delete pods sandbox-a\/sbx-1/.test(e.message));
    server.faults.push({ path: /\/pods\/sbx-1$/, answer: { delayMs: SLOW_MS } });
    const started = Date.now();
    await assert.rejects(c.getPod('sandbox-a', 'sbx-1'), (e: unknown) => e instanceof KubeError && e.reason === 'Timeout');
    assert.ok(Date.now() - started < SLOW_MS, 'the deadline cut the call short');
    assert.ok(server.get('pods', 'sandbox-a', 'sbx-1'));
    assert.equal((await c.list('Pod', 'sandbox-a', SELECTOR))[0]!.metadata.uid, obj.metadata.uid);
  });
});

describe('owner facts that cannot go stale', () => {
  test('the runner recreated under its name mid-sweep: a NetworkPolicy of the new runner, listed after the old one was read gone, is kept', async () => {
    // The old runner's Secret is judged first (Secrets are listed before NetworkPolicies):
    // runner-0 reads NotFound. Then the platform recreates runner-0 (a new uid) and it
    // creates a NetworkPolicy, before the sweep lists NetworkPolicies.
    const old = server.put('secrets', stamped({ kind: 'Secret', name: 'old-token' }));
    const NEW_RUNNER = { ...RUNNER, uid: OTHER_UID };
    server.hooks.push((r) => {
      if (r.method === 'GET' && r.path === '/apis/networking.k8s.io/v1/networkpolicies' && server.get('pods', 'sandbox-a', 'runner-0') === undefined) {
        server.put('pods', runnerPod(NEW_RUNNER));
        server.put('networkpolicies', stamped({ kind: 'NetworkPolicy', name: 'live-egress', owner: NEW_RUNNER }));
      }
    });
    const result = await run();
    assert.equal(decision(result, 'Secret', 'old-token').outcome, 'deleted');
    assert.equal(server.get('secrets', 'sandbox-a', 'old-token'), undefined, `${old.metadata.name} was the old runner's`);
    const live = decision(result, 'NetworkPolicy', 'live-egress');
    assert.equal(live.action, 'keep', live.reason);
    assert.equal(live.code, 'owner-running');
    assert.ok(server.get('networkpolicies', 'sandbox-a', 'live-egress'));
    assert.equal(server.deletes().filter((r) => r.path.includes('networkpolicies')).length, 0);
  });

  test('an owner read NotFound and then found again before the delete with the object’s uid: the object is kept, never deleted', async () => {
    server.put('pods', runnerPod());
    server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1' }));
    // The first read of the owner says NotFound (a stale cache in front of the API server, say).
    server.faults.push({ method: 'GET', path: /\/pods\/runner-0$/, times: 1, answer: { status: 404, reason: 'NotFound', message: 'pods "runner-0" not found' } });
    const result = await run();
    const d = decision(result, 'Pod', 'sbx-1');
    assert.equal(d.action, 'keep', d.reason);
    assert.equal(d.code, 'owner-running');
    assert.match(d.reason, /read again before the delete/);
    assert.equal(server.deletes().length, 0);
    assert.equal(server.requests.filter(isOwnerRead).length, 2);
  });

  test('a cached "running" fact keeps without another read; a cached "gone" fact is not used for a page listed after it', async () => {
    server.put('pods', runnerPod());
    for (let i = 0; i < 5; i++) server.put('pods', stamped({ kind: 'Pod', name: `live-${i}` }));
    const result = await run({ client: client(TIMEOUT_MS, 2) });
    assert.equal(result.summary.kept, 5);
    assert.equal(server.requests.filter(isOwnerRead).length, 1, 'one read: "present with this uid" only ever keeps');
  });
});

describe('review scope', () => {
  test('a validly stamped orphan in a namespace that is not opted in is skipped as outside the review scope; its twin in a sandbox is reaped', async () => {
    server.put('secrets', stamped({ kind: 'Secret', name: 'planted', namespace: 'plain', owner: { ...RUNNER, uid: OTHER_UID } }));
    server.put('secrets', stamped({ kind: 'Secret', name: 'orphan', owner: { ...RUNNER, uid: OTHER_UID } }));
    const result = await run();
    const planted = decision(result, 'Secret', 'planted');
    assert.equal(planted.action, 'skip');
    assert.equal(planted.code, 'outside-review-scope');
    assert.ok(server.get('secrets', 'plain', 'planted'));
    assert.equal(decision(result, 'Secret', 'orphan').outcome, 'deleted');
    assert.deepEqual(server.deletes().map((r) => r.path), ['/api/v1/namespaces/sandbox-a/secrets/orphan']);
    const scopeRead = server.requests.find((r) => r.path === '/api/v1/namespaces')!;
    assert.equal(scopeRead.query.get('labelSelector'), 'deed.dev/sandbox=enabled');
  });

  test("Deed's own namespace is never in the scope, even labelled as a sandbox", async () => {
    server.namespaces.set('deed-system', { 'deed.dev/sandbox': 'enabled' });
    server.put('secrets', stamped({ kind: 'Secret', name: 'in-deed', namespace: 'deed-system', owner: { ...RUNNER, uid: OTHER_UID } }));
    const result = await run();
    assert.equal(decision(result, 'Secret', 'in-deed').code, 'outside-review-scope');
    assert.equal(server.deletes().length, 0);
  });

  test('a review scope that cannot be read is an error: nothing is listed, judged or deleted', async () => {
    killedRunnerScene();
    server.faults.push({ method: 'GET', path: /^\/api\/v1\/namespaces$/, answer: { status: 403, reason: 'Forbidden', message: 'namespaces is forbidden' } });
    const result = await run();
    assert.deepEqual(result.decisions.map((d) => [d.action, d.code]), [['error', 'scope-unreadable']]);
    assert.match(result.decisions[0]!.reason, /HTTP 403: namespaces is forbidden/);
    assert.equal(result.summary.errors, 1);
    assert.equal(server.requests.length, 1);
  });
});

describe('at scale: streaming, bounded concurrency, throttling, stopping', () => {
  function orphans(n: number): void {
    for (let i = 0; i < n; i++) server.put('secrets', stamped({ kind: 'Secret', name: `orphan-${String(i).padStart(3, '0')}` }));
  }

  test('each page is judged and written before the next page is asked for beyond one read ahead', async () => {
    orphans(12);
    const written: string[] = [];
    const atPageRequest: number[] = [];
    server.hooks.push((r) => {
      if (r.path === '/api/v1/secrets') atPageRequest.push(written.length);
    });
    await run({ client: client(TIMEOUT_MS, 3), apply: false, onDecision: (d) => void written.push(d.name!) });
    assert.equal(atPageRequest.length, 4);
    // Page n+2 is asked for only once page n's decisions are out: never the whole list first.
    for (let n = 2; n < atPageRequest.length; n++) assert.ok(atPageRequest[n]! >= (n - 1) * 3, `page ${n + 1} asked after ${atPageRequest[n]} decisions`);
  });

  test('deletes run in parallel, never more in flight than --concurrency, every one with its preconditions', async () => {
    orphans(30);
    server.faults.push({ method: 'DELETE', path: /\/secrets\//, answer: { delayMs: 150 } });
    const result = await run({ concurrency: 5 });
    assert.equal(result.summary.reaped, 30);
    assert.equal(server.maxInFlight.get('DELETE'), 5);
    for (const r of server.deletes()) assert.ok((r.body as { preconditions?: { uid?: string } }).preconditions?.uid, r.path);
  });

  test('a delete answered 429 is sent again after Retry-After, with the same preconditions, and nothing else starts meanwhile', async () => {
    orphans(3);
    server.faults.push({ method: 'DELETE', path: /\/secrets\/orphan-001$/, times: 1, answer: { status: 429, reason: 'TooManyRequests', message: 'too many requests, please try again later', headers: { 'Retry-After': '1' } } });
    const at = new Map<number, number>();
    server.hooks.push((r) => at.set(server.requests.indexOf(r), Date.now()));
    const result = await run({ concurrency: 1 });
    assert.equal(result.summary.reaped, 3);
    assert.equal(result.summary.errors, 0);
    const tries = server.deletes().filter((r) => r.path.endsWith('/orphan-001'));
    assert.equal(tries.length, 2);
    assert.deepEqual(tries[0]!.body, tries[1]!.body);
    const first = server.requests.indexOf(tries[0]!);
    const retry = server.requests.indexOf(tries[1]!);
    assert.ok(at.get(retry)! - at.get(first)! >= 900, 'held back for Retry-After');
    assert.equal(server.requests.slice(first + 1, retry).some((r) => at.get(server.requests.indexOf(r))! - at.get(first)! < 900), false, 'no request sent while throttled');
  });

  test('an owner read answered 429 throughout keeps the object as unreadable', async () => {
    server.put('pods', stamped({ kind: 'Pod', name: 'sbx-1' }));
    server.faults.push({ method: 'GET', path: /\/pods\/runner-0$/, answer: { status: 429, reason: 'TooManyRequests', message: 'too many requests', headers: { 'Retry-After': '0' } } });
    const result = await run({ client: createKubeClient(server.kubeConfig(), { timeoutMs: TIMEOUT_MS, maxRetries: 2, labelPrefix: 'deed.dev' }) });
    const d = decision(result, 'Pod', 'sbx-1');
    assert.equal(d.code, 'owner-unreadable');
    assert.match(d.reason, /HTTP 429/);
    assert.equal(server.requests.filter(isOwnerRead).length, 3, 'tried, then retried twice');
    assert.equal(server.deletes().length, 0);
  });

  test('a stop signal mid-apply: the delete in flight finishes, no new one starts, the rest are reported stopped and the sweep incomplete', async () => {
    orphans(6);
    const stop = new AbortController();
    server.faults.push({ method: 'DELETE', path: /\/secrets\//, answer: { delayMs: 200 } });
    server.hooks.push((r) => {
      if (r.method === 'DELETE') stop.abort();
    });
    const result = await run({ concurrency: 1, signal: stop.signal });
    assert.equal(server.deletes().length, 1);
    assert.equal(result.decisions.filter((d) => d.outcome === 'deleted').length, 1);
    assert.equal(result.decisions.filter((d) => d.outcome === 'stopped').length, 5);
    assert.equal(result.summary.complete, false);
    assert.equal(result.summary.stopped, 5);
    assert.equal(server.requests.some((r) => r.path.endsWith('/networkpolicies') || r.path.endsWith('/persistentvolumeclaims')), false, 'no further list');
  });
});

describe('reaper output', () => {
  const base: Decision = { action: 'keep', code: 'owner-unreadable', kind: 'Pod', namespace: 'sandbox-a', name: 'sbx-1', uid: 'u-1', reason: 'could not read owner (HTTP 500: boom\nreap Pod sandbox-a/victim: forged)' };

  test('a text decision is one line even when the API server’s message holds a newline', () => {
    const line = formatDecision(base, 'text');
    assert.equal(line.split('\n').length, 1);
    assert.match(line, /^keep Pod sandbox-a\/sbx-1 uid=u-1: could not read owner \(HTTP 500: boom reap Pod/);
  });

  test('a JSON decision carries the code and round-trips', () => {
    const line = formatDecision({ ...base, action: 'reap', code: 'owner-gone', outcome: 'conflict', error: 'x' }, 'json');
    assert.deepEqual(JSON.parse(line), { type: 'decision', ...base, action: 'reap', code: 'owner-gone', outcome: 'conflict', error: 'x' });
  });

  test('the text summary names the mode, every count, the counts by reason and the duration', () => {
    const summary: SweepSummary = {
      environment: 'alpha',
      dryRun: true,
      complete: true,
      judged: 14,
      reaped: 1,
      kept: 2,
      skipped: 3,
      conflicts: 4,
      stopped: 0,
      errors: 5,
      reasons: { reap: { 'owner-gone': 5 }, keep: { 'owner-running': 2 }, skip: { 'outside-review-scope': 3 }, error: { 'list-failed': 1 } },
      ownerReads: 7,
      leaseReads: 0,
      leaseReadsFailed: 0,
      leasesBounded: 0,
      durationMs: 1234,
    };
    assert.equal(
      formatSummary(summary, 'text'),
      'summary: environment alpha, dry run (nothing deleted; --apply deletes), complete: judged 14 in 1.2 s: reaped 1, kept 2, skipped 3, conflicts 4, stopped 0, errors 5; ' +
        'by reason: reap (owner-gone 5); keep (owner-running 2); skip (outside-review-scope 3); error (list-failed 1); owner reads 7',
    );
    assert.match(formatSummary({ ...summary, dryRun: false, complete: false }, 'text'), /^summary: environment alpha, applied, INCOMPLETE \(stopped; the rest is judged next sweep\):/);
    assert.deepEqual(JSON.parse(formatSummary(summary, 'json')), { type: 'summary', ...summary });
  });
});
