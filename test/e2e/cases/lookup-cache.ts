// `deed serve`'s lookup cache against the real API server (issue 39): the memory budget's
// bound, and the watch that drops and comes back.
//
// At the bound: Deed restarted with --cache-memory 0 sheds every kind that holds anything
// (the namespaces, which make the review scope, are never shed and alone exceed 0). Each
// lookup is then read live, and the same decisions get the same answers as with the cache.
// No Prometheus runs here: "the alert fires" is proven by taking the DeedLookupCacheShed
// rule's expression as the install renders it, checking its shape (max by namespace, pod,
// resource of deed_lookup_cache_shed with a namespace matcher, > a threshold), and
// evaluating that condition on the samples scraped from Deed's /metrics, with the target
// labels Prometheus would add on scrape (namespace, pod). That proves what the rule selects
// and that it would select something; not Prometheus's own evaluation or the rule's delivery.
//
// A dropped watch: Deed is restarted with a kubeconfig that points at an HTTP proxy
// (../api-proxy.ts) in front of the API server. The proxy destroys the open watches and
// holds the ones Deed opens again; meanwhile objects change and reviews are read live. Then
// either (a) the held watches go on as Deed sent them: Deed resumes from its last
// resourceVersion and the API server sends what it missed, with no list; or (b) the proxy
// answers them with the 410 Gone the API server sends to a watch resumed at a
// resourceVersion its watch cache no longer holds (200, one ERROR event with a Status of
// code 410, reason Expired): Deed lists again from the API server, in place, and watches
// from the list's resourceVersion, and the store is current with the right content.
// That 410 is the proxy's, worded and framed as kube-apiserver's: a real one cannot be
// had on demand. A fresh control plane's watch cache still holds every event since it
// started (a watch resumed at resourceVersion 1 is replayed, not refused: tried), and it
// ages events out only once it is full and they are over 75 s old. The list and the watch
// after it, and every review, are the real API server's.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { alertRules } from '../../../src/install/observability.js';
import { NAME } from '../../../src/install/manifests.js';
import { get } from '../../serve-process.js';
import { startApiProxy, type ApiProxy } from '../api-proxy.js';
import type { ApiAnswer, Identity } from '../client.js';
import type { Tools } from './admission.js';
import { claim, eventually, KEYS, label, namespaceAdmins, PATHS, sandboxPod, secret } from '../objects.js';
import { DEED_NAMESPACE, type Suite } from '../suite.js';

const NS = 'lookup-cache';
const MAIN = { name: 'main', image: 'registry.example/agent:1' };
const SHED_LINE = 'lookup cache over its memory budget';
/** The kinds these decisions look up; each holds objects in the scope, so each is shed at the bound. */
const LOOKED_UP = ['secrets', 'persistentvolumeclaims', 'pods'] as const;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Deed's /metrics, parsed: one sample a line. */
async function scrape(s: Suite): Promise<Sample[]> {
  const { status, body } = await get(s.deed, '/metrics', { agent: false });
  assert.equal(status, 200, body);
  const samples: Sample[] = [];
  for (const line of body.split('\n')) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    samples.push({ name: m[1]!, labels: Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!])), value: Number(m[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels contain every pair of `match`. */
function sum(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples.filter((x) => x.name === name && Object.entries(match).every(([k, v]) => x.labels[k] === v)).reduce((a, x) => a + x.value, 0);
}

const metric = async (s: Suite, name: string, match: Record<string, string> = {}) => sum(await scrape(s), name, match);

/**
 * The resources for which DeedLookupCacheShed's condition holds on these samples: its
 * expression parsed (it must be `max by (LABELS) (METRIC{MATCHERS}) > N`), the samples given
 * the target labels a scrape adds, selected by its matchers, grouped, compared.
 */
function shedAlertFiring(samples: Sample[]): string[] {
  const rule = alertRules({ namespace: DEED_NAMESPACE, deployment: NAME, reaperPrefix: `${NAME}-reaper`, timeoutSeconds: '10' }).find((r) => r.alert === 'DeedLookupCacheShed');
  assert.ok(rule, 'the install renders a DeedLookupCacheShed alert');
  const m = /^max by \(([\w, ]+)\) \((\w+)\{([^}]*)\}\) > (\d+(?:\.\d+)?)$/.exec(rule.expr);
  assert.ok(m, `the rule's expression has the shape evaluated here: ${rule.expr}`);
  const by = m[1]!.split(',').map((l) => l.trim());
  assert.equal(m[2], 'deed_lookup_cache_shed');
  assert.ok(by.includes('resource'), 'it keeps the resource, which the summary names');
  const matchers = [...m[3]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!] as const);
  const threshold = Number(m[4]);
  const target = { namespace: DEED_NAMESPACE, pod: 'deed-e2e' };
  const groups = new Map<string, { labels: Record<string, string>; max: number }>();
  for (const x of samples.filter((x) => x.name === m[2])) {
    const labels: Record<string, string> = { ...x.labels, ...target };
    if (!matchers.every(([k, v]) => labels[k] === v)) continue;
    const key = by.map((l) => labels[l] ?? '').join('\u0000');
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { labels, max: x.value });
    else g.max = Math.max(g.max, x.value);
  }
  return [...groups.values()].filter((g) => g.max > threshold).map((g) => g.labels.resource!).sort();
}

/**
 * A proxy between Deed and the API server, and Deed restarted to read through it with its own
 * kubeconfig (the suite's), pointed at the proxy: same token, plain HTTP on the loopback.
 */
async function deedThroughProxy(s: Suite, kubeconfigName: string): Promise<ApiProxy> {
  const proxy = await startApiProxy({ server: s.cp.server, ca: s.cp.ca });
  const kubeconfig = JSON.parse(readFileSync(join(s.cp.dir, 'deed', 'deed.kubeconfig'), 'utf8')) as { clusters: Array<{ cluster: Record<string, unknown> }> };
  kubeconfig.clusters[0]!.cluster = { server: proxy.url };
  const file = join(s.cp.dir, 'deed', kubeconfigName);
  writeFileSync(file, JSON.stringify(kubeconfig), { mode: 0o600 });
  await s.restartDeed(undefined, ['--kubeconfig', file]);
  return proxy;
}

const messageOf = (a: ApiAnswer) => (typeof a.body?.message === 'string' ? (a.body.message as string) : '');

/**
 * A pod that reads Secret `name` through envFrom: a dry run (nothing is stored), or, where
 * the Secret is absent, a real create (on a dry run an absent Secret is only a warning) of a
 * pod that names its node, for which an absent Secret is refused (no binding follows).
 */
const readsSecret = (s: Suite, who: Identity, name: string, o: { real?: boolean } = {}) =>
  s.api(who, 'POST', o.real ? PATHS.Pod(NS) : `${PATHS.Pod(NS)}?dryRun=All`, sandboxPod(o.real ? 'reads-secret-' : 'reads-secret', { spec: { ...(o.real ? { nodeName: 'node-1' } : {}), containers: [{ ...MAIN, envFrom: [{ secretRef: { name } }] }] } }));

export function lookupCacheCases(suite: () => Suite, tools: Tools): void {
  const needsControllers = tools.controllers ? false : 'needs kube-controller-manager in KUBEBUILDER_ASSETS (setup-envtest does not ship it)';
  describe("deed serve's lookup cache in the real API server", () => {
    before(async () => {
      const s = suite();
      const ns = await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } });
      assert.ok(ns.status === 201 || ns.status === 409, ns.text);
      if (!s.cp.controllers) await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } });
      await s.bindSandboxRole(NS, [['sandbox-a', 'runner'], ['sandbox-b', 'janitor']]);
    });

    describe('the lookup cache at its memory bound (--cache-memory 0): every kind that holds anything is shed and read live', () => {
      /** Decisions that need lookups of Secrets, claims and pods, each with its answer: status and Deed's message. */
      const decisions = async (s: Suite): Promise<Array<[string, number, string]>> => {
        const beta = s.janitorB;
        const alpha = s.runnerA.identity;
        const mountsClaim = (who: Identity) =>
          s.api(who, 'POST', `${PATHS.Pod(NS)}?dryRun=All`, sandboxPod('mounts-claim', { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'lc-alpha-ws' } }], containers: [{ ...MAIN, volumeMounts: [{ name: 'data', mountPath: '/data' }] }] } }));
        const exec = (who: Identity) => s.api(who, 'POST', `${PATHS.Pod(NS)}/lc-alpha-pod/exec?command=true&stdout=true&container=main`);
        // A binding as the scheduler sends it, with the pod's uid: the pod is the cache's when its record has that uid
        // (an exec's pod is read from the API server whatever the cache holds).
        const uid = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/lc-alpha-pod`)).body?.metadata?.uid as string;
        const bind = () => s.api(s.admin, 'POST', `${PATHS.Pod(NS)}/lc-alpha-pod/binding?dryRun=All`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'lc-alpha-pod', uid }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } });
        const answers: Array<[string, ApiAnswer]> = [
          ["alpha's pod reads alpha's Secret", await readsSecret(s, alpha, 'lc-alpha-creds')],
          ["beta's pod reads alpha's Secret", await readsSecret(s, beta, 'lc-alpha-creds')],
          ["alpha's pod reads a Secret that does not exist", await readsSecret(s, alpha, 'lc-nobodys-creds', { real: true })],
          ["alpha's pod mounts alpha's claim", await mountsClaim(alpha)],
          ["beta's pod mounts alpha's claim", await mountsClaim(beta)],
          ["alpha execs into alpha's pod", await exec(alpha)],
          ["beta execs into alpha's pod", await exec(beta)],
          ["alpha's pod is bound (a dry run)", await bind()],
        ];
        return answers.map(([what, a]) => [what, a.status, a.status === 201 ? '' : messageOf(a) || a.text]);
      };

      before(async () => {
        const s = suite();
        for (const [what, answer] of [
          ["alpha's Secret", s.api(s.runnerA.identity, 'POST', PATHS.Secret(NS), secret('lc-alpha-creds'))],
          ["alpha's claim", s.api(s.runnerA.identity, 'POST', PATHS.PersistentVolumeClaim(NS), claim('lc-alpha-ws'))],
          ["alpha's pod", s.api(s.runnerA.identity, 'POST', PATHS.Pod(NS), sandboxPod('lc-alpha-pod'))],
        ] as const) {
          const a = await answer;
          assert.ok(a.status === 201 || a.status === 409, `${what}: ${a.text}`);
        }
      });

      test('a bound below the cache\'s need leaves Deed answering every review as with the cache, reading live, with the shed metrics, the warning line and the alert\'s condition holding', async () => {
        const s = suite();
        // With the cache: the three objects have reached it through the watches.
        await eventually("alpha's Secret, claim and pod are answered from the cache", async () => {
          const before = await scrape(s);
          await decisions(s);
          const after = await scrape(s);
          return LOOKED_UP.every((resource) => sum(after, 'deed_lookups_total', { resource, source: 'cache' }) > sum(before, 'deed_lookups_total', { resource, source: 'cache' }));
        });
        const cached = await decisions(s);
        // What these decisions are: the cache and live reads must both give exactly these.
        assert.deepEqual(cached.map(([, status]) => status), [201, 403, 403, 201, 403, cached[5]![1], 403, 201], JSON.stringify(cached));
        assert.notEqual(cached[5]![1], 403, "alpha's exec is not refused");
        assert.match(cached[1]![2], /\[secret-ref\.cross-environment\]/);
        assert.match(cached[2]![2], /\[secret-ref\.absent\]/);
        assert.match(cached[4]![2], /\[claim\.cross-environment\]/);
        assert.doesNotMatch(cached[5]![2], /validate\.deed\.dev/, 'alpha\'s exec passes admission');
        assert.match(cached[5]![2], /does not have a host assigned/);
        assert.match(cached[6]![2], /\[guard\.connect\]/);
        assert.deepEqual(shedAlertFiring(await scrape(s)), [], 'with the cache, the alert\'s condition holds for nothing');

        try {
          await s.restartDeed(undefined, ['--cache-memory', '0']);
          // Shed as each kind's first list page arrives; the sizes are sampled every 5 s.
          await eventually('the kinds that hold anything are shed and report an empty store', async () => {
            const now = await scrape(s);
            return LOOKED_UP.every((resource) => sum(now, 'deed_lookup_cache_shed', { resource }) === 1 && now.some((x) => x.name === 'deed_lookup_cache_bytes' && x.labels.resource === resource));
          });
          const before = await scrape(s);
          const live = await decisions(s);
          const after = await scrape(s);
          assert.deepEqual(live, cached, 'the same answers, word for word, read live');

          assert.equal(sum(after, 'deed_lookup_cache_budget_bytes'), 0);
          for (const resource of LOOKED_UP) {
            assert.equal(sum(after, 'deed_lookup_cache_shed', { resource }), 1, resource);
            assert.equal(sum(after, 'deed_lookup_cache_current', { resource }), 0, resource);
            assert.equal(sum(after, 'deed_lookup_cache_objects', { resource }), 0, resource);
            assert.ok(sum(after, 'deed_lookup_live_reads_total', { resource }) > sum(before, 'deed_lookup_live_reads_total', { resource }), `${resource}: read from the API server`);
            assert.equal(sum(after, 'deed_lookups_total', { resource, source: 'cache' }), 0, `${resource}: never from the cache`);
            assert.equal(sum(after, 'deed_lookup_live_reads_total', { resource, result: 'failed' }), 0, `${resource}: no live read failed`);
          }
          // At a bound of 0 a kind's store is shed the moment it holds anything: none holds a byte.
          for (const x of after.filter((x) => x.name === 'deed_lookup_cache_bytes' && x.labels.resource !== 'namespaces')) assert.equal(x.value, 0, x.labels.resource);
          assert.equal(sum(after, 'deed_lookup_cache_current', { resource: 'namespaces' }), 1, 'the namespaces are never shed: the review scope stays known');
          assert.equal(sum(after, 'deed_lookup_cache_shed', { resource: 'namespaces' }), 0);

          const lines = s.deed.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith(SHED_LINE));
          const shed = after.filter((x) => x.name === 'deed_lookup_cache_shed' && x.value === 1).map((x) => x.labels.resource!).sort();
          assert.deepEqual(lines.map((l) => l.resource as string).sort(), shed, 'one warning a shed kind, naming it');
          for (const l of lines) {
            assert.equal(l.level, 40, 'a warning');
            assert.equal(l.budgetBytes, 0);
          }
          for (const resource of LOOKED_UP) assert.ok(shed.includes(resource), resource);
          assert.deepEqual(shedAlertFiring(after), shed, 'DeedLookupCacheShed\'s condition holds for each shed kind');
        } finally {
          await s.restartDeed();
        }
      });
    });

    describe('a dropped watch against the real API server: reviews are answered meanwhile, and the cache is current again with the right content', () => {
      let proxy: ApiProxy;

      before(async () => {
        const s = suite();
        proxy = await deedThroughProxy(s, 'deed-via-proxy.kubeconfig');
        // Ready means the namespaces are listed; the Secrets' list and watch follow (slower on a loaded machine).
        await eventually('Deed reads the API server through the proxy (its watch of Secrets)', async () => proxy.requests.some((r) => r.path === '/api/v1/secrets' && r.query.get('watch') === 'true'));
      });

      after(async () => {
        await suite().restartDeed();
        await proxy?.close();
      });

      const secretsCurrent = async (s: Suite) => (await metric(s, 'deed_lookup_cache_current', { resource: 'secrets' })) === 1;
      const secretLookups = async (s: Suite) => {
        const now = await scrape(s);
        return { cache: sum(now, 'deed_lookups_total', { resource: 'secrets', source: 'cache' }), live: sum(now, 'deed_lookup_live_reads_total', { resource: 'secrets' }) };
      };
      const lists = (since: number) => proxy.requests.slice(since).filter((r) => r.path === '/api/v1/secrets' && r.query.get('watch') !== 'true');

      /**
       * Cuts the watches, holds the new ones, and while the secrets' watch is down deletes
       * alpha's `gone` and lets beta create `made`; reviews meanwhile are read live and right.
       * Returns where the proxy's log stood at the cut.
       */
      const dropAndChange = async (s: Suite, gone: string, made: string): Promise<number> => {
        const kept = await s.api(s.runnerA.identity, 'POST', PATHS.Secret(NS), secret(gone));
        assert.equal(kept.status, 201, kept.text);
        await eventually('the secrets are current, holding alpha\'s Secret', async () => {
          if (!(await secretsCurrent(s))) return false;
          const before = await secretLookups(s);
          assert.equal((await readsSecret(s, s.runnerA.identity, gone)).status, 201);
          return (await secretLookups(s)).cache > before.cache;
        });
        const mark = proxy.requests.length;
        proxy.hold();
        assert.ok(proxy.cut() > 0, 'watches were open');
        await eventually('Deed saw its watch of Secrets drop', async () => !(await secretsCurrent(s)));
        await eventually('Deed watches Secrets again (held by the proxy)', async () => proxy.held().some((r) => r.path === '/api/v1/secrets'));

        const deleted = await s.api(s.runnerA.identity, 'DELETE', `${PATHS.Secret(NS)}/${gone}`);
        assert.equal(deleted.status, 200, deleted.text);
        const created = await s.api(s.janitorB, 'POST', PATHS.Secret(NS), secret(made));
        assert.equal(created.status, 201, created.text);
        assert.equal(label(created.body as KubeObject, KEYS.environment), 'beta');

        const before = await secretLookups(s);
        const refusedNew = await readsSecret(s, s.runnerA.identity, made);
        assert.equal(refusedNew.status, 403, refusedNew.text);
        assert.match(messageOf(refusedNew), /\[secret-ref\.cross-environment\]/);
        const refusedGone = await readsSecret(s, s.runnerA.identity, gone, { real: true });
        assert.equal(refusedGone.status, 403, refusedGone.text);
        assert.match(messageOf(refusedGone), /\[secret-ref\.absent\]/);
        const meanwhile = await secretLookups(s);
        assert.equal(meanwhile.cache, before.cache, 'nothing is taken from a store that is not current');
        assert.ok(meanwhile.live >= before.live + 2, 'both read from the API server');
        assert.ok(!(await secretsCurrent(s)), 'the watch was still down');
        return mark;
      };

      /** After the watch is back: beta's new Secret comes from the store, alpha's deleted one is not in it. */
      const storeIsRight = async (s: Suite, gone: string, made: string) => {
        await eventually('the secrets are current again', () => secretsCurrent(s));
        // The events it missed follow the watch's answer (a loaded machine may take a moment):
        // beta's Secret, created while the watch was down, comes to be answered from the store.
        let between = await secretLookups(s);
        await eventually("beta's Secret, created while the watch was down, is in the store", async () => {
          const before = await secretLookups(s);
          const refusedNew = await readsSecret(s, s.runnerA.identity, made);
          assert.equal(refusedNew.status, 403, refusedNew.text);
          assert.match(messageOf(refusedNew), /\[secret-ref\.cross-environment\]/);
          between = await secretLookups(s);
          return between.cache === before.cache + 1 && between.live === before.live;
        });
        const refusedGone = await readsSecret(s, s.runnerA.identity, gone, { real: true });
        assert.equal(refusedGone.status, 403, refusedGone.text);
        assert.match(messageOf(refusedGone), /\[secret-ref\.absent\]/);
        const end = await secretLookups(s);
        // In the store it would be answered from there, and allowed: a miss is read live.
        assert.equal(end.cache, between.cache, "alpha's Secret, deleted while the watch was down, is not in the store");
        assert.equal(end.live, between.live + 1);
      };

      test('a cut connection: Deed watches again from its last resourceVersion, the API server sends what it missed, and nothing is listed', async () => {
        const s = suite();
        try {
          const mark = await dropAndChange(s, 'lc-cut-gone', 'lc-cut-made');
          const resumed = proxy.held().find((r) => r.path === '/api/v1/secrets')!;
          const rv = resumed.query.get('resourceVersion');
          assert.ok(rv !== null && rv !== '' && rv !== '0', `resumed at a resourceVersion of its own: ${rv}`);
          proxy.release();
          await storeIsRight(s, 'lc-cut-gone', 'lc-cut-made');
          assert.equal(resumed.answer?.status, 200);
          // What it missed, from the API server: the deletion and the creation, one event a line.
          assert.match(resumed.answer!.head, /^\{"type":"DELETED","object":\{[^\n]*"name":"lc-cut-gone"/m, resumed.answer!.head);
          assert.match(resumed.answer!.head, /^\{"type":"ADDED","object":\{[^\n]*"name":"lc-cut-made"/m, resumed.answer!.head);
          assert.deepEqual(lists(mark), [], 'no list: the watch resumed');
        } finally {
          proxy.release(); // a failed case leaves no watch held for the next
        }
      });

      test('a watch ended with 410 Gone (the API server\'s answer to a resourceVersion it no longer has, sent by the proxy): Deed lists again in place and watches from the list', async () => {
        const s = suite();
        try {
          const mark = await dropAndChange(s, 'lc-gone-gone', 'lc-gone-made');
          const resumed = proxy.held().find((r) => r.path === '/api/v1/secrets')!;
          const released = Date.now();
          proxy.release({ gone: true });
          await storeIsRight(s, 'lc-gone-gone', 'lc-gone-made');
          assert.match(resumed.answer!.head, /"code":410/);
          const relisted = lists(mark).filter((r) => r.at >= released);
          assert.ok(relisted.length >= 1, 'Secrets listed again after the 410');
          const listedAt = /"resourceVersion":"(\d+)"/.exec(relisted.at(-1)!.answer?.head ?? '')?.[1];
          assert.ok(listedAt, `the list's answer: ${relisted.at(-1)!.answer?.head.slice(0, 300)}`);
          const rewatched = proxy.requests.filter((r) => r.path === '/api/v1/secrets' && r.query.get('watch') === 'true' && r.at >= relisted.at(-1)!.at);
          assert.ok(rewatched.length >= 1, 'and watched again');
          assert.equal(rewatched[0]!.query.get('resourceVersion'), listedAt, "from the list's resourceVersion");
          assert.ok(Number(listedAt) > Number(resumed.query.get('resourceVersion')), 'past the one that was gone');
        } finally {
          proxy.release(); // a failed case leaves no watch held for the next
        }
      });
    });
    // A watch slower than the writes (a stalled stream, a lagging watch cache): its kind stays
    // current and stale. The proxy holds back the events of Deed's open watches, the connection
    // left open, while beta frees a name and alpha takes it: what a request acts on at once is
    // not judged by the record of the object that stood there before.
    describe('a watch that lags behind its writes: a request that acts at once on a name is judged by what stands under it now', () => {
      let proxy: ApiProxy;
      before(async () => {
        const s = suite();
        proxy = await deedThroughProxy(s, 'deed-via-stalling-proxy.kubeconfig');
        for (const resource of ['pods', 'serviceaccounts', 'deployments', 'persistentvolumeclaims']) await eventually(`${resource} current through the proxy`, async () => (await metric(s, 'deed_lookup_cache_current', { resource })) === 1);
      });
      after(async () => {
        proxy?.flow();
        await suite().restartDeed();
        await proxy?.close();
      });
      const current = async (s: Suite, resource: string) => (await metric(s, 'deed_lookup_cache_current', { resource })) === 1;

      test("beta frees a pod's name and alpha takes it: beta's eviction of and exec into it are refused while the cache still holds beta's", async () => {
        const s = suite();
        const beta = s.janitorB;
        const before = await metric(s, 'deed_lookup_cache_objects', { resource: 'pods' });
        assert.equal((await s.api(beta, 'POST', PATHS.Pod(NS), sandboxPod('lc-lag-name'))).status, 201);
        await eventually("the cache holds beta's pod", async () => (await metric(s, 'deed_lookup_cache_objects', { resource: 'pods' })) > before);
        proxy.stall(['/api/v1/pods']);
        try {
          assert.equal((await s.api(beta, 'DELETE', `${PATHS.Pod(NS)}/lc-lag-name?gracePeriodSeconds=0`)).status, 200);
          assert.equal((await s.api(s.runnerA.identity, 'POST', PATHS.Pod(NS), sandboxPod('lc-lag-name'))).status, 201);
          assert.ok(await current(s, 'pods'), 'the pods watch is open and its store stale: the window is open');
          const exec = await s.api(beta, 'POST', `${PATHS.Pod(NS)}/lc-lag-name/exec?command=true&stdout=true&container=main`);
          assert.equal(exec.status, 403, exec.text);
          assert.match(messageOf(exec), /\[guard\.connect\]/);
          const evict = await s.api(beta, 'POST', `${PATHS.Pod(NS)}/lc-lag-name/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'lc-lag-name' } });
          assert.equal(evict.status, 403, evict.text);
          assert.match(messageOf(evict), /\[guard\.cross-environment\]/);
          assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/lc-lag-name`)).body?.metadata?.deletionTimestamp, undefined, "alpha's pod stands");
        } finally {
          proxy.flow();
        }
      });

      test("beta frees a service account's and a Deployment's names and alpha takes them: beta's token of the account, scale of the Deployment and HPA aimed at it are refused", async () => {
        const s = suite();
        const alpha = s.runnerA.identity;
        const badmin = await s.newIdentity('sandbox-b', 'lc-lag-admin');
        await namespaceAdmins(s, NS, 'lc-lag-admins', [['sandbox-b', 'lc-lag-admin'], ['sandbox-a', 'runner']]);
        const SAS = `/api/v1/namespaces/${NS}/serviceaccounts`;
        const DEPS = `/apis/apps/v1/namespaces/${NS}/deployments`;
        const dep = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, containers: [{ ...MAIN }] } } } });
        const token = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds: 600 } };
        for (const who of [badmin, alpha]) await eventually(`RBAC lets ${who.name} create service accounts`, async () => !/cannot create resource/.test((await s.api(who, 'POST', `${SAS}?dryRun=All`, { metadata: { name: 'probe' } })).text));
        assert.equal((await s.api(badmin, 'POST', SAS, { metadata: { name: 'lc-lag-sa' } })).status, 201);
        assert.equal((await s.api(badmin, 'POST', DEPS, dep('lc-lag-lab'))).status, 201);
        // beta's own, through the cache: a token and a scale pass.
        await eventually("beta's own token and scale pass", async () => (await s.api(badmin, 'POST', `${SAS}/lc-lag-sa/token`, token)).status === 201 && (await s.api(badmin, 'PATCH', `${DEPS}/lc-lag-lab/scale`, { spec: { replicas: 1 } }, 'application/merge-patch+json')).status === 200);
        proxy.stall(['/api/v1/serviceaccounts', '/apis/apps/v1/deployments']);
        try {
          assert.equal((await s.api(badmin, 'DELETE', `${SAS}/lc-lag-sa`)).status, 200);
          assert.equal((await s.api(badmin, 'DELETE', `${DEPS}/lc-lag-lab`)).status, 200);
          assert.equal((await s.api(alpha, 'POST', SAS, { metadata: { name: 'lc-lag-sa' } })).status, 201);
          assert.equal((await s.api(alpha, 'POST', DEPS, dep('lc-lag-lab'))).status, 201);
          assert.ok((await current(s, 'serviceaccounts')) && (await current(s, 'deployments')), 'both watches open and stale');
          const t = await s.api(badmin, 'POST', `${SAS}/lc-lag-sa/token`, token);
          assert.equal(t.status, 403, t.text);
          assert.match(messageOf(t), /\[guard\.service-account\] service account lookup-cache:lc-lag-sa is stamped for environment "alpha"/);
          const scaled = await s.api(badmin, 'PATCH', `${DEPS}/lc-lag-lab/scale`, { spec: { replicas: 0 } }, 'application/merge-patch+json');
          assert.equal(scaled.status, 403, scaled.text);
          assert.match(messageOf(scaled), /\[guard\.cross-environment\]/);
          assert.equal((await s.api(s.admin, 'GET', `${DEPS}/lc-lag-lab`)).body?.spec?.replicas, 2, "alpha's Deployment keeps its replicas");
          // A reference is followed at once too (the HPA controller scales its target): beta's HPA naming the name is judged by what stands there now.
          const hpa = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'lc-lag-hpa' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'lc-lag-lab' }, minReplicas: 1, maxReplicas: 2 } };
          const aimed = await s.api(badmin, 'POST', `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`, hpa);
          assert.equal(aimed.status, 403, aimed.text);
          assert.match(messageOf(aimed), /\[reference\.cross-environment\] spec\.scaleTargetRef: names Deployment lc-lag-lab, which belongs to another environment/);
        } finally {
          proxy.flow();
        }
      });

      test("beta frees a service account's name and alpha takes it: the kubelet's token of it, for beta's pod that ran as the name and for one made since, is refused", async () => {
        const s = suite();
        const alpha = s.runnerA.identity;
        const badmin = await s.newIdentity('sandbox-b', 'lc-kubelet-admin');
        await namespaceAdmins(s, NS, 'lc-kubelet-admins', [['sandbox-b', 'lc-kubelet-admin'], ['sandbox-a', 'runner']]);
        // The kubelet of node-1, with the right the Node authorizer would give it (this control plane runs RBAC alone).
        const NODE = 'system:node:node-1';
        const kubelet: Identity = { name: 'kubelet', token: s.admin.token, impersonate: { user: NODE, groups: ['system:nodes', 'system:authenticated'] } };
        const RBAC = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}`;
        await s.api(s.admin, 'POST', `${RBAC}/roles`, { metadata: { name: 'lc-kubelet' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] }] });
        await s.api(s.admin, 'POST', `${RBAC}/rolebindings`, { metadata: { name: 'lc-kubelet' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'lc-kubelet' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: NODE }] });
        const SAS = `/api/v1/namespaces/${NS}/serviceaccounts`;
        const onNode = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: 'node-1', serviceAccountName: 'lc-kubelet-sa', automountServiceAccountToken: false, containers: [{ ...MAIN }] } });
        const tokenFor = (pod: ApiAnswer) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.body.metadata.name, uid: pod.body.metadata.uid } } });
        await eventually(`RBAC lets ${badmin.name} create service accounts`, async () => !/cannot create resource/.test((await s.api(badmin, 'POST', `${SAS}?dryRun=All`, { metadata: { name: 'probe' } })).text));
        assert.equal((await s.api(badmin, 'POST', SAS, { metadata: { name: 'lc-kubelet-sa' } })).status, 201);
        let own: ApiAnswer | undefined;
        await eventually("beta's pod runs as its own account", async () => (own = await s.api(badmin, 'POST', PATHS.Pod(NS), onNode('lc-kubelet-own'))).status === 201);
        await eventually("the kubelet's token of beta's account for beta's pod passes", async () => (await s.api(kubelet, 'POST', `${SAS}/lc-kubelet-sa/token`, tokenFor(own!))).status === 201);
        proxy.stall(['/api/v1/serviceaccounts']);
        try {
          assert.equal((await s.api(badmin, 'DELETE', `${SAS}/lc-kubelet-sa`)).status, 200);
          assert.equal((await s.api(alpha, 'POST', SAS, { metadata: { name: 'lc-kubelet-sa' } })).status, 201);
          assert.ok(await current(s, 'serviceaccounts'), 'the serviceaccounts watch is open and stale');
          const refresh = await s.api(kubelet, 'POST', `${SAS}/lc-kubelet-sa/token`, tokenFor(own!));
          assert.equal(refresh.status, 403, refresh.text);
          assert.match(messageOf(refresh), /\[guard\.service-account\]/);
          // A pod made since runs as the name (judged from the cache: nothing is handed over
          // at its CREATE), and the kubelet's first token for it is refused.
          const thief = await s.api(badmin, 'POST', PATHS.Pod(NS), onNode('lc-kubelet-new'));
          if (thief.status === 201) {
            const t = await s.api(kubelet, 'POST', `${SAS}/lc-kubelet-sa/token`, tokenFor(thief));
            assert.equal(t.status, 403, t.text);
            assert.match(messageOf(t), /\[guard\.service-account\]/);
          } else assert.equal(thief.status, 403, thief.text);
        } finally {
          proxy.flow();
        }
      });

      test("beta frees a claim's name and alpha takes it: beta's pod naming it is not bound by the scheduler, and not created on its node", async () => {
        const s = suite();
        const beta = s.janitorB;
        const CLAIMS = PATHS.PersistentVolumeClaim(NS);
        const mounting = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { automountServiceAccountToken: false, containers: [{ ...MAIN, volumeMounts: [{ name: 'ws', mountPath: '/ws' }] }], volumes: [{ name: 'ws', persistentVolumeClaim: { claimName: 'lc-lag-ws' } }], ...spec } });
        const before = await metric(s, 'deed_lookup_cache_objects', { resource: 'persistentvolumeclaims' });
        assert.equal((await s.api(beta, 'POST', CLAIMS, claim('lc-lag-ws'))).status, 201);
        await eventually("the cache holds beta's claim", async () => (await metric(s, 'deed_lookup_cache_objects', { resource: 'persistentvolumeclaims' })) > before);
        proxy.stall(['/api/v1/persistentvolumeclaims']);
        try {
          assert.equal((await s.api(beta, 'DELETE', `${CLAIMS}/lc-lag-ws`)).status, 200);
          await eventually("beta's claim is gone", async () => (await s.api(s.admin, 'GET', `${CLAIMS}/lc-lag-ws`)).status === 404);
          assert.equal((await s.api(s.runnerA.identity, 'POST', CLAIMS, claim('lc-lag-ws'))).status, 201);
          assert.ok(await current(s, 'persistentvolumeclaims'), 'the claims watch is open and stale');
          // Judged from the cache at its CREATE, and again, as it stands, when bound.
          const pending = await s.api(beta, 'POST', PATHS.Pod(NS), mounting('lc-lag-mounts'));
          assert.equal(pending.status, 201, pending.text);
          const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'lc-lag-mounts', uid: pending.body.metadata.uid }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } };
          const bound = await s.api(s.admin, 'POST', `${PATHS.Pod(NS)}/lc-lag-mounts/binding`, binding);
          assert.equal(bound.status, 403, bound.text);
          assert.match(messageOf(bound), /\[reference\.at-binding\] .*PersistentVolumeClaim lc-lag-ws, which belongs to another environment/);
          // No binding follows a pod made on its node: its CREATE is judged as it stands.
          const placed = await s.api(beta, 'POST', PATHS.Pod(NS), mounting('lc-lag-placed', { nodeName: 'node-1' }));
          assert.equal(placed.status, 403, placed.text);
          assert.match(messageOf(placed), /\[claim\.cross-environment\]/);
        } finally {
          proxy.flow();
        }
      });

      test("a pod made on its node naming more objects than a review gets is judged on all of them, read from the API server: its own is made, and beta's padding does not put alpha's Secret under a stale record", async () => {
        const s = suite();
        const beta = s.janitorB;
        const SECRETS = PATHS.Secret(NS);
        const pads = Array.from({ length: 33 }, (_, i) => `lc-pad-${i}`);
        for (const name of [...pads, 'lc-pad-own']) {
          const made = await s.api(beta, 'POST', SECRETS, { metadata: { name }, stringData: { k: 'v' } });
          assert.equal(made.status, 201, made.text);
        }
        const naming = (name: string, last: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: 'node-1', automountServiceAccountToken: false, containers: [{ ...MAIN, envFrom: [...pads, last].map((n) => ({ secretRef: { name: n } })) }] } });
        const own = await s.api(beta, 'POST', PATHS.Pod(NS), naming('lc-pad-own', 'lc-pad-own'));
        assert.equal(own.status, 201, own.text);
        const before = await metric(s, 'deed_lookup_cache_objects', { resource: 'secrets' });
        assert.equal((await s.api(beta, 'POST', SECRETS, { metadata: { name: 'lc-lag-secret' }, stringData: { k: 'beta' } })).status, 201);
        await eventually("the cache holds beta's Secret", async () => (await metric(s, 'deed_lookup_cache_objects', { resource: 'secrets' })) > before);
        proxy.stall(['/api/v1/secrets']);
        try {
          assert.equal((await s.api(beta, 'DELETE', `${SECRETS}/lc-lag-secret`)).status, 200);
          assert.equal((await s.api(s.runnerA.identity, 'POST', SECRETS, { metadata: { name: 'lc-lag-secret' }, stringData: { k: 'alpha' } })).status, 201);
          assert.ok(await current(s, 'secrets'), 'the Secrets watch is open and stale');
          const placed = await s.api(beta, 'POST', PATHS.Pod(NS), naming('lc-pad-stale', 'lc-lag-secret'));
          assert.equal(placed.status, 403, placed.text);
          assert.match(messageOf(placed), /\[secret-ref\.cross-environment\]/);
          assert.doesNotMatch(messageOf(placed), /reads at most/);
        } finally {
          proxy.flow();
        }
        assert.ok((await metric(s, 'deed_lookups_total', { resource: 'secrets', source: 'listed' })) >= 2, 'past the gets, the Secrets were listed');
      });

      test("beta's pending pod naming 33 pads and a Secret beta frees and alpha takes is not bound: past the GETs the binding's list, not the stale record, answers", async () => {
        const s = suite();
        const beta = s.janitorB;
        const SECRETS = PATHS.Secret(NS);
        const pads = Array.from({ length: 33 }, (_, i) => `lc-bpad-${i}`);
        for (const name of pads) {
          const made = await s.api(beta, 'POST', SECRETS, { metadata: { name }, stringData: { k: 'v' } });
          assert.ok(made.status === 201 || made.status === 409, made.text);
        }
        const before = await metric(s, 'deed_lookup_cache_objects', { resource: 'secrets' });
        assert.equal((await s.api(beta, 'POST', SECRETS, { metadata: { name: 'lc-bind-lag' }, stringData: { k: 'beta' } })).status, 201);
        await eventually("the cache holds beta's Secret", async () => (await metric(s, 'deed_lookup_cache_objects', { resource: 'secrets' })) > before);
        const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lc-bind-pending' }, spec: { automountServiceAccountToken: false, containers: [{ ...MAIN, envFrom: [...pads, 'lc-bind-lag'].map((n) => ({ secretRef: { name: n } })) }] } };
        const listedBefore = await metric(s, 'deed_lookups_total', { resource: 'secrets', source: 'listed' });
        // Both watches held: the readers index does not see beta's pending pod (the documented
        // window), so alpha may take the name; the binding must read it as it stands now.
        proxy.stall(['/api/v1/secrets', '/api/v1/pods']);
        try {
          const pending = await s.api(beta, 'POST', PATHS.Pod(NS), pod);
          assert.equal(pending.status, 201, pending.text);
          assert.equal((await s.api(beta, 'DELETE', `${SECRETS}/lc-bind-lag`)).status, 200);
          const taken = await s.api(s.runnerA.identity, 'POST', SECRETS, { metadata: { name: 'lc-bind-lag' }, stringData: { k: 'alpha' } });
          assert.equal(taken.status, 201, taken.text);
          assert.ok(await current(s, 'secrets'), 'the Secrets watch is open and stale');
          const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'lc-bind-pending', uid: pending.body.metadata.uid }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } };
          const bound = await s.api(s.admin, 'POST', `${PATHS.Pod(NS)}/lc-bind-pending/binding`, binding);
          assert.equal(bound.status, 403, bound.text);
          assert.match(messageOf(bound), /\[reference\.at-binding\] .*Secret lc-bind-lag, which/);
          assert.doesNotMatch(messageOf(bound), /reads at most/);
        } finally {
          proxy.flow();
        }
        assert.ok((await metric(s, 'deed_lookups_total', { resource: 'secrets', source: 'listed' })) > listedBefore, 'the binding listed its Secrets past the gets');
      });

      test("alpha deletes its Deployment and applies it again: the controllers' ReplicaSet and pods are admitted at once, their owner read from the API server, not refused while the cache holds the deleted one", { skip: needsControllers }, async () => {
        const s = suite();
        const alpha = s.runnerA.identity;
        const DEPS = `/apis/apps/v1/namespaces/${NS}/deployments`;
        const RSS = `/apis/apps/v1/namespaces/${NS}/replicasets`;
        const dep = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'lc-lag-again' }, spec: { replicas: 1, selector: { matchLabels: { app: 'lc-lag-again' } }, template: { metadata: { labels: { app: 'lc-lag-again' } }, spec: { automountServiceAccountToken: false, containers: [{ ...MAIN }] } } } };
        const ownedBy = async (uid: string) => ((await s.api(s.admin, 'GET', RSS)).body?.items ?? []).filter((rs: KubeObject) => rs.metadata.ownerReferences?.some((r) => r.uid === uid));
        const before = await metric(s, 'deed_lookup_cache_objects', { resource: 'deployments' });
        const first = await s.api(alpha, 'POST', DEPS, dep);
        assert.equal(first.status, 201, first.text);
        await eventually("the cache holds alpha's Deployment and its controller made a ReplicaSet", async () => (await metric(s, 'deed_lookup_cache_objects', { resource: 'deployments' })) > before && (await ownedBy(first.body.metadata.uid)).length === 1);
        proxy.stall(['/apis/apps/v1/deployments']);
        try {
          assert.equal((await s.api(alpha, 'DELETE', `${DEPS}/lc-lag-again?propagationPolicy=Background`)).status, 200);
          const again = await s.api(alpha, 'POST', DEPS, dep);
          assert.equal(again.status, 201, again.text);
          assert.notEqual(again.body.metadata.uid, first.body.metadata.uid);
          await eventually('the Deployment made again has its ReplicaSet while the watch still lags', async () => (await ownedBy(again.body.metadata.uid)).length === 1, 20_000);
          const rs = (await ownedBy(again.body.metadata.uid))[0]!;
          const podsOf = async () => ((await s.api(s.admin, 'GET', PATHS.Pod(NS))).body?.items ?? []).filter((p: KubeObject) => p.metadata.ownerReferences?.some((r) => r.uid === rs.metadata.uid));
          await eventually('and its ReplicaSet its pod, judged up the chain to the Deployment made again', async () => (await podsOf()).length === 1, 20_000);
          assert.ok(await current(s, 'deployments'), 'the deployments watch stayed open and stale throughout');
        } finally {
          proxy.flow();
        }
      });
    });
  });
}
