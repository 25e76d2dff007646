// The review scope in a real API server: reviews POSTed straight to Deed's port (as any pod
// could, without --client-ca) for a namespace that is not opted in get no stamps and make
// Deed read nothing, while the API server's own reviews in opted-in namespaces are
// answered as before, lookups come from the watch-backed cache, and a namespace that opts
// in later is picked up by the namespace watch.
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { fixture, type Review } from '../../helpers.js';
import { claim, eventually, KEYS, label, PATHS, sandboxPod, secret } from '../objects.js';
import type { Suite } from '../suite.js';

/** A request to Deed's webhook port itself, not through the API server. */
function toDeed(s: Suite, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, s.deed.url),
      { method, ca: s.deed.ca, servername: 'localhost', headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {} },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Sum of a metric's samples whose labels contain every `match` pair. */
export async function metric(s: Suite, name: string, match: Record<string, string> = {}): Promise<number> {
  const { text } = await toDeed(s, 'GET', '/metrics');
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

/**
 * Lookups of pods and claims that touched the API server or the cache: the forged reviews
 * below would read exactly those (the pod an eviction names, the claim a pod mounts) inside
 * the scope, and a review outside the scope must cause none. Other kinds are left out: the
 * workload controllers' own reviews read their owners (and their pods' Secrets and
 * ConfigMaps) all along.
 */
const reads = async (s: Suite) => {
  let sum = 0;
  for (const resource of ['pods', 'persistentvolumeclaims'])
    for (const source of ['live', 'cache']) sum += await metric(s, 'deed_lookups_total', { resource, source });
  for (const resource of ['pods', 'persistentvolumeclaims']) sum += await metric(s, 'deed_lookup_live_reads_total', { resource });
  return sum;
};

/** A fixture review moved to `namespace`, with a fresh uid. */
function forged(name: string, namespace: string): Review {
  const review = fixture(name);
  review.request.uid = crypto.randomUUID();
  review.request.namespace = namespace;
  if (review.request.object?.metadata) review.request.object.metadata.namespace = namespace;
  return review;
}

const answerOf = (text: string) => (JSON.parse(text) as { response: { allowed: boolean; patch?: string; status?: { message?: string } } }).response;

export function scopeCases(suite: () => Suite): void {
  describe('the review scope', () => {
    test('a forged eviction review POSTed to the port learns nothing: alpha\'s runner and a pod that does not exist get the same answer, naming no environment', async () => {
      const s = suite();
      const review = (pod: string) => ({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: crypto.randomUUID(),
          kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
          resource: { group: '', version: 'v1', resource: 'pods' },
          subResource: 'eviction',
          name: pod,
          namespace: 'sandbox-a',
          operation: 'CREATE',
          userInfo: { username: 'system:serviceaccount:sandbox-b:janitor', groups: ['system:serviceaccounts', 'system:serviceaccounts:sandbox-b', 'system:authenticated'] },
          object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: 'sandbox-a' } },
          oldObject: null,
          dryRun: false,
        },
      });
      const answers = [];
      for (const pod of [s.runnerA.pod, 'forged-nobody']) {
        const answer = await toDeed(s, 'POST', '/validate?timeout=5s', review(pod));
        assert.equal(answer.status, 200, answer.text);
        const r = answerOf(answer.text);
        assert.equal(r.allowed, false);
        assert.doesNotMatch(r.status?.message ?? '', /alpha|sandbox-a:runner/);
        answers.push((r.status?.message ?? '').replace(pod, 'POD'));
      }
      assert.equal(answers[0], answers[1]);
    });

    test("a forged create for a namespace that is not opted in, claiming to be alpha's runner, gets no stamps and makes Deed read nothing", async () => {
      const s = suite();
      // The counters are the whole server's: the controllers' own reviews (what they create
      // for other cases' workloads) move them too. A read for the forged reviews would move
      // them on every attempt; a window in which they stand still shows that none was made.
      const unchanged: boolean[] = [];
      for (let attempt = 0; attempt < 5 && !unchanged.includes(true); attempt++) {
        const before = await reads(s);
        const mutated = await toDeed(s, 'POST', '/mutate?timeout=5s', forged('mutate-create-pod-by-runner.json', 'plain'));
        assert.equal(mutated.status, 200, mutated.text);
        const answer = answerOf(mutated.text);
        assert.equal(answer.allowed, false);
        assert.equal(answer.patch, undefined, 'no patch, so no attestation to plant');
        assert.match(answer.status?.message ?? '', /\[request\.out-of-scope\] namespace plain is outside the review scope/);
        // A pod that mounts a claim, and an eviction: both would be looked up inside the scope.
        const validated = answerOf((await toDeed(s, 'POST', '/validate?timeout=5s', forged('validate-create-pod-by-runner.json', 'plain'))).text);
        assert.match(validated.status?.message ?? '', /\[request\.out-of-scope\]/);
        const eviction = forged('validate-create-pod-by-runner.json', 'plain');
        Object.assign(eviction.request, { subResource: 'eviction', requestSubResource: 'eviction', name: 'runner-0', object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'runner-0', namespace: 'plain' } } });
        eviction.request.kind = { group: 'policy', version: 'v1', kind: 'Eviction' };
        const evicted = answerOf((await toDeed(s, 'POST', '/validate?timeout=5s', eviction)).text);
        assert.match(evicted.status?.message ?? '', /\[request\.out-of-scope\]/);
        unchanged.push((await reads(s)) === before);
        if (!unchanged.at(-1)) await new Promise((r) => setTimeout(r, 1000));
      }
      assert.ok(unchanged.includes(true), `no lookup was made for any of them: the count moved in each of ${unchanged.length} attempts`);
      assert.ok((await metric(s, 'deed_denials_total', { rule: 'request.out-of-scope' })) >= 3);
    });

    test('the same forged eviction for an opted-in namespace is looked up (the lookups are counted), so the count above could have moved', async () => {
      const s = suite();
      const before = await reads(s);
      const eviction = forged('validate-create-pod-by-runner.json', 'sandbox-a');
      Object.assign(eviction.request, { subResource: 'eviction', requestSubResource: 'eviction', name: 'runner-0', object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'runner-0', namespace: 'sandbox-a' } } });
      eviction.request.kind = { group: 'policy', version: 'v1', kind: 'Eviction' };
      const answer = answerOf((await toDeed(s, 'POST', '/validate?timeout=5s', eviction)).text);
      assert.doesNotMatch(answer.status?.message ?? '', /out-of-scope/);
      assert.ok((await reads(s)) > before);
    });

    test("the API server's reviews in an opted-in namespace are stamped, and a claim a new pod mounts is looked up in the cache, not read", async () => {
      const s = suite();
      const stored = await s.api(s.runnerA.identity, 'POST', PATHS.Secret('sandbox-a'), secret('in-scope'));
      assert.equal(stored.status, 201, stored.text);
      assert.equal(label(stored.body as KubeObject, KEYS.environment), 'alpha');
      const ws = await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim('sandbox-a'), claim('cached-ws'));
      assert.equal(ws.status, 201, ws.text);
      const pod = (name: string) => sandboxPod(name, { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'cached-ws' } }] } });
      // The claim reaches the cache through the watch a moment after it is created.
      let cached = 0;
      await eventually('the claim lookup is answered by the cache', async () => {
        const before = await metric(s, 'deed_lookups_total', { resource: 'persistentvolumeclaims', source: 'cache' });
        const created = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), pod(`uses-cached-ws-${cached++}`));
        assert.equal(created.status, 201, created.text);
        return (await metric(s, 'deed_lookups_total', { resource: 'persistentvolumeclaims', source: 'cache' })) > before;
      });
      assert.equal(await metric(s, 'deed_lookup_cache_current', { resource: 'namespaces' }), 1);
    });

    test('a claim deleted a moment ago is not taken from the cache: a pod naming it is refused as absent', async () => {
      const s = suite();
      const ws = await s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim('sandbox-a'), claim('short-lived-ws'));
      assert.equal(ws.status, 201, ws.text);
      const gone = await s.api(s.runnerA.identity, 'DELETE', `${PATHS.PersistentVolumeClaim('sandbox-a')}/short-lived-ws`);
      assert.ok(gone.status === 200 || gone.status === 202, gone.text);
      // Without a controller manager the claim keeps its pvc-protection finalizer: it is
      // marked for deletion and still there, and the cache must not vouch for it.
      await eventually('the claim is gone or marked for deletion', async () => {
        const now = await s.api(s.admin, 'GET', `${PATHS.PersistentVolumeClaim('sandbox-a')}/short-lived-ws`);
        return now.status === 404 || now.body?.metadata?.deletionTimestamp !== undefined;
      });
      const liveBefore = await metric(s, 'deed_lookup_live_reads_total', { resource: 'persistentvolumeclaims' });
      const created = await s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), sandboxPod('names-a-deleted-claim', { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'short-lived-ws' } }] } }));
      if (created.status === 201) {
        // Still there (finalizer): admitted only after a live read saw it.
        assert.ok((await metric(s, 'deed_lookup_live_reads_total', { resource: 'persistentvolumeclaims' })) > liveBefore, 'read from the API server, not the cache');
      } else {
        assert.equal(created.status, 403, created.text);
        assert.match(created.body.message, /\[claim\.absent\]/);
      }
    });

    test('a namespace that opts in later is picked up: before, Deed answers no review for it; after, its writes are stamped', async () => {
      const s = suite();
      const NS = 'late-opt-in';
      const made = await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      assert.equal(made.status, 201, made.text);
      await s.bindSandboxRole(NS, [['sandbox-a', 'runner']]);
      const before = await s.api(s.runnerA.identity, 'POST', PATHS.Secret(NS), secret('before-opt-in'));
      assert.equal(before.status, 201, before.text);
      assert.equal(label(before.body as KubeObject, KEYS.environment), undefined, 'the API server sends no review for it');
      const refused = answerOf((await toDeed(s, 'POST', '/mutate?timeout=5s', forged('mutate-create-pod-by-runner.json', NS))).text);
      assert.equal(refused.patch, undefined);

      const labelled = await s.api(s.admin, 'PATCH', `/api/v1/namespaces/${NS}`, { metadata: { labels: { 'deed.dev/sandbox': 'enabled' } } }, 'application/merge-patch+json');
      assert.equal(labelled.status, 200, labelled.text);
      let n = 0;
      await eventually('a write in the newly opted-in namespace is stamped', async () => {
        const after = await s.api(s.runnerA.identity, 'POST', PATHS.Secret(NS), secret(`after-opt-in-${n++}`));
        return after.status === 201 && label(after.body as KubeObject, KEYS.environment) === 'alpha';
      });
      const answered = answerOf((await toDeed(s, 'POST', '/mutate?timeout=5s', forged('mutate-create-pod-by-runner.json', NS))).text);
      assert.ok(answered.patch, 'in scope now: the same review gets its stamps');
    });
  });
}
