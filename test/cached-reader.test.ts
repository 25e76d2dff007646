// The lookup cache's consistency rules, with a cache and an API server that are tables:
// the cache answers only "found" for a current kind in scope; a miss, an object being
// deleted and a kind not current are read; outside the scope nothing is read; reads per
// review are bounded; and a live answer keeps the same facts a cached one would.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createCachedReader, MAX_LIVE_READS_PER_REVIEW } from '../src/kube/cached-reader.js';
import { factsOf, type ObjectFacts } from '../src/kube/lookup-facts.js';
import { createMetrics, type Metrics } from '../src/observability/metrics.js';
import { lookupKey, type LookupKey } from '../src/policy/lookup.js';
import type { Readers } from '../src/policy/policy.js';
import { fakeCache, fakeLive } from './cache-fakes.js';

const STAMPED = { labels: { 'deed.dev/environment': 'alpha' }, annotations: { 'deed.dev/attestation': 'v1:x' } };

const claimKey = (name: string, namespace = 'sandbox-a'): LookupKey => ({ resource: 'persistentvolumeclaims', namespace, name });
const count = async (m: Metrics, name: string, labels: Record<string, string>) =>
  ((await m.registry.getSingleMetric(name)!.get()).values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0);

describe('the cached reader', () => {
  test('a cached object is answered from the cache, with no read', async () => {
    const live = fakeLive({});
    const metrics = createMetrics();
    const reader = createCachedReader(fakeCache({ [lookupKey(claimKey('ws'))]: { ...STAMPED, uid: 'u1', deleting: false } }), live, 'deed.dev', metrics);
    const answer = (await reader.read([claimKey('ws')], 1000)).get('persistentvolumeclaims', 'sandbox-a', 'ws');
    assert.equal(answer.state, 'found');
    assert.deepEqual(live.reads, []);
    assert.equal(await count(metrics, 'deed_lookups_total', { resource: 'persistentvolumeclaims', source: 'cache' }), 1);
  });

  test('a miss is read from the API server: "absent" never comes from the cache', async () => {
    const live = fakeLive({});
    const metrics = createMetrics();
    const reader = createCachedReader(fakeCache({}), live, 'deed.dev', metrics);
    assert.deepEqual((await reader.read([claimKey('not-yet')], 1000)).get('persistentvolumeclaims', 'sandbox-a', 'not-yet'), { state: 'absent' });
    assert.deepEqual(live.reads, ['persistentvolumeclaims/sandbox-a/not-yet']);
    assert.equal(await count(metrics, 'deed_lookup_live_reads_total', { resource: 'persistentvolumeclaims', result: 'absent' }), 1);
  });

  test('a record of another uid than the request names is read again: deleted and made again under its name, the watch behind', async () => {
    // beta's pod deleted, alpha's made under the name; the cache still holds beta's (u1), the binding names alpha's (u2).
    const live = fakeLive({ [lookupKey({ resource: 'pods', namespace: 'sandbox-a', name: 'p' })]: { state: 'found', metadata: { uid: 'u2', labels: { 'deed.dev/environment': 'alpha' } } } });
    const reader = createCachedReader(fakeCache({ [lookupKey({ resource: 'pods', namespace: 'sandbox-a', name: 'p' })]: { ...STAMPED, uid: 'u1', deleting: false } }), live, 'deed.dev', createMetrics());
    const answer = (await reader.read([{ resource: 'pods', namespace: 'sandbox-a', name: 'p', uid: 'u2' }], 1000)).get('pods', 'sandbox-a', 'p');
    assert.equal(answer.state === 'found' && answer.metadata.uid, 'u2');
    assert.deepEqual(live.reads, ['pods/sandbox-a/p']);
    // The record of the uid named is answered from the cache.
    const same = fakeLive({});
    const cached = createCachedReader(fakeCache({ [lookupKey({ resource: 'pods', namespace: 'sandbox-a', name: 'p' })]: { ...STAMPED, uid: 'u1', deleting: false } }), same, 'deed.dev', createMetrics());
    assert.equal((await cached.read([{ resource: 'pods', namespace: 'sandbox-a', name: 'p', uid: 'u1' }], 1000)).get('pods', 'sandbox-a', 'p').state, 'found');
    assert.deepEqual(same.reads, []);
  });

  test("keys read fresh (what is handed over at once) past the review's GETs are listed, never the cache's record: 32 names of a pod's choosing would put the one it targets there", async () => {
    const keys: LookupKey[] = Array.from({ length: MAX_LIVE_READS_PER_REVIEW + 3 }, (_, i) => ({ resource: 'secrets', namespace: 'sandbox-a', name: `s${i}`, fresh: true }));
    const cached = Object.fromEntries(keys.map((k) => [lookupKey(k), { ...STAMPED, uid: `old-${k.name}`, deleting: false }]));
    const live = fakeLive(Object.fromEntries(keys.map((k) => [lookupKey(k), { state: 'found', metadata: { uid: `now-${k.name}` } }])));
    const metrics = createMetrics();
    const answers = await createCachedReader(fakeCache(cached), live, 'deed.dev', metrics).read(keys, 1000);
    assert.equal(live.reads.length, MAX_LIVE_READS_PER_REVIEW);
    assert.deepEqual(live.listed, keys.slice(MAX_LIVE_READS_PER_REVIEW).map(lookupKey));
    const uids = keys.map((k) => {
      const a = answers.get('secrets', 'sandbox-a', k.name);
      return a.state === 'found' ? a.metadata.uid : a.state;
    });
    assert.deepEqual(uids, keys.map((k) => `now-${k.name}`));
    assert.equal(await count(metrics, 'deed_lookups_total', { resource: 'secrets', source: 'listed' }), 3);
  });

  test("past the review's GETs, what a pod names is listed and nothing else is: a pod's own account keeps its GET however many names come first, and a key of another kind past them is unknown", async () => {
    const named: LookupKey[] = Array.from({ length: MAX_LIVE_READS_PER_REVIEW + 1 }, (_, i) => ({ resource: 'configmaps', namespace: 'sandbox-a', name: `c${i}`, fresh: true }));
    const account: LookupKey = { resource: 'serviceaccounts', namespace: 'sandbox-a', name: 'runner', fresh: true };
    const live = fakeLive({});
    await createCachedReader(fakeCache({}), live, 'deed.dev', createMetrics()).read([...named, account], 1000);
    assert.equal(live.reads[0], lookupKey(account), 'the account is read by GET first');
    assert.equal(live.reads.length, MAX_LIVE_READS_PER_REVIEW);
    assert.deepEqual(live.listed, named.slice(MAX_LIVE_READS_PER_REVIEW - 1).map(lookupKey));
    // Leases are no pod's reads: past the GETs they are unknown, not listed.
    const leases: LookupKey[] = Array.from({ length: MAX_LIVE_READS_PER_REVIEW + 1 }, (_, i) => ({ resource: 'leases', namespace: 'sandbox-a', name: `l${i}` }));
    const other = fakeLive({});
    const answers = await createCachedReader(fakeCache({}), other, 'deed.dev', createMetrics()).read(leases, 1000);
    assert.deepEqual(other.listed, []);
    assert.match(JSON.stringify(answers.get('leases', 'sandbox-a', `l${MAX_LIVE_READS_PER_REVIEW}`)), /Deed reads at most 32 objects/);
  });

  test('two asks for one object are one read: fresh if either is, and two different uids make it fresh', async () => {
    const key = { resource: 'pods' as const, namespace: 'sandbox-a', name: 'p' };
    const objects = { [lookupKey(key)]: { ...STAMPED, uid: 'u1', deleting: false } };
    for (const [asks, reads] of [
      [[key, { ...key, fresh: true as const }], 1],
      [[{ ...key, fresh: true as const }, key], 1],
      [[{ ...key, uid: 'u1' }, { ...key, uid: 'u9' }], 1],
      [[{ ...key, uid: 'u1' }, key], 0],
    ] as Array<[LookupKey[], number]>) {
      const live = fakeLive({ [lookupKey(key)]: { state: 'found', metadata: { uid: 'u1' } } });
      await createCachedReader(fakeCache(objects), live, 'deed.dev', createMetrics()).read(asks, 1000);
      assert.equal(live.reads.length, reads, JSON.stringify(asks));
    }
  });

  test('an object the cache saw marked for deletion is read again: it may be gone or replaced by another environment', async () => {
    const live = fakeLive({ [lookupKey(claimKey('ws'))]: { state: 'found', metadata: { uid: 'u2', labels: { 'deed.dev/environment': 'beta' } } } });
    const reader = createCachedReader(fakeCache({ [lookupKey(claimKey('ws'))]: { ...STAMPED, uid: 'u1', deleting: true } }), live, 'deed.dev', createMetrics());
    const answer = (await reader.read([claimKey('ws')], 1000)).get('persistentvolumeclaims', 'sandbox-a', 'ws');
    assert.equal(answer.state === 'found' && answer.metadata.uid, 'u2');
    assert.equal(live.reads.length, 1);
  });

  test("a pod whose reads the cache did not keep is read again: its binding is judged on what it reads, not on 'reads nothing'", async () => {
    const podKey: LookupKey = { resource: 'pods', namespace: 'sandbox-a', name: 'wide', withReads: true };
    const reads = { claims: [], secrets: ['creds', 'other'], configMaps: [], resourceClaims: [], resourceClaimTemplates: [] };
    const live = fakeLive({ [lookupKey(podKey)]: { state: 'found', metadata: { uid: 'p1', ...STAMPED }, serviceAccountName: 'ci', reads } });
    const cache = fakeCache({ [lookupKey(podKey)]: { ...STAMPED, uid: 'p1', deleting: false, serviceAccountName: 'ci', readsNotKept: true } });
    const answer = (await createCachedReader(cache, live, 'deed.dev', createMetrics()).read([podKey], 1000)).get('pods', 'sandbox-a', 'wide');
    assert.deepEqual(live.reads, ['pods/sandbox-a/wide']);
    assert.deepEqual(answer.state === 'found' ? answer.reads : answer, reads);
  });

  test('a kind whose cache is not current (not listed yet, or its watch is down) is read', async () => {
    const live = fakeLive({});
    const reader = createCachedReader(fakeCache({ [lookupKey(claimKey('ws'))]: { ...STAMPED, deleting: false } }, { current: ['pods'] }), live, 'deed.dev', createMetrics());
    await reader.read([claimKey('ws')], 1000);
    assert.deepEqual(live.reads, ['persistentvolumeclaims/sandbox-a/ws']);
  });

  test('outside the review scope nothing is read, and the answer says why', async () => {
    const live = fakeLive({});
    const metrics = createMetrics();
    const reader = createCachedReader(fakeCache({ [lookupKey(claimKey('ws', 'plain'))]: { ...STAMPED, deleting: false } }), live, 'deed.dev', metrics);
    const lookup = await reader.read([claimKey('ws', 'plain'), { resource: 'pods', namespace: 'plain', name: 'runner-0' }], 1000);
    assert.deepEqual(live.reads, []);
    const answer = lookup.get('persistentvolumeclaims', 'plain', 'ws');
    assert.equal(answer.state, 'unknown');
    assert.match(answer.state === 'unknown' ? answer.reason : '', /namespace plain is outside the review scope; Deed reads nothing there/);
    assert.equal(await count(metrics, 'deed_lookups_total', { source: 'skipped', resource: 'pods' }), 1);
  });

  test(`at most ${MAX_LIVE_READS_PER_REVIEW} GETs for one review; what a pod names past them is listed, and unknown (so refused) by a reader that cannot list`, async () => {
    const live = fakeLive({});
    const reader = createCachedReader(fakeCache({}), live, 'deed.dev', createMetrics());
    const keys = Array.from({ length: MAX_LIVE_READS_PER_REVIEW + 5 }, (_, i) => claimKey(`c${i}`));
    const lookup = await reader.read([...keys, ...keys], 1000);
    assert.equal(live.reads.length, MAX_LIVE_READS_PER_REVIEW, 'duplicates are read once, and the bound holds');
    assert.equal(live.listed.length, 5, 'the rest, once each, by list');
    assert.equal(lookup.get('persistentvolumeclaims', 'sandbox-a', `c${MAX_LIVE_READS_PER_REVIEW + 4}`).state, 'absent');
    const getsOnly = fakeLive({});
    const last = (await createCachedReader(fakeCache({}), { read: getsOnly.read }, 'deed.dev', createMetrics()).read(keys, 1000)).get('persistentvolumeclaims', 'sandbox-a', `c${MAX_LIVE_READS_PER_REVIEW + 4}`);
    assert.match(last.state === 'unknown' ? last.reason : '', /reads at most 32 objects/);
  });

  test('a pod naming 40 Secrets, all cached, is answered for every one: the bound is on reads from the API server, not on what is judged', async () => {
    const live = fakeLive({});
    const keys = Array.from({ length: 40 }, (_, i): LookupKey => ({ resource: 'secrets', namespace: 'sandbox-a', name: `s${i}` }));
    const cached = Object.fromEntries(keys.map((k, i) => [lookupKey(k), { ...STAMPED, uid: `u${i}`, deleting: false }]));
    const lookup = await createCachedReader(fakeCache(cached), live, 'deed.dev', createMetrics()).read(keys, 1000);
    assert.deepEqual(live.reads, []);
    assert.deepEqual(keys.map((k) => lookup.get(k.resource, k.namespace, k.name).state), keys.map(() => 'found'));
  });

  test('a live answer keeps the same facts a cached one would: only the uid, Deed\'s labels and annotations, and the service account', async () => {
    const metadata = { uid: 'u1', labels: { ...STAMPED.labels, team: 'x', 'app.kubernetes.io/managed-by': 'Helm' }, annotations: { ...STAMPED.annotations, 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"token":"c2VjcmV0"}}' } };
    const live = fakeLive({ 'pods/sandbox-a/runner-0': { state: 'found', metadata, serviceAccountName: 'runner' } });
    const reader = createCachedReader(fakeCache({}), live, 'deed.dev', createMetrics());
    const fromLive = (await reader.read([{ resource: 'pods', namespace: 'sandbox-a', name: 'runner-0' }], 1000)).get('pods', 'sandbox-a', 'runner-0');
    const cached = factsOf({ metadata, spec: { serviceAccountName: 'runner' } }, 'deed.dev');
    const fromCache = (await createCachedReader(fakeCache({ 'pods/sandbox-a/runner-0': cached }), fakeLive({}), 'deed.dev', createMetrics()).read([{ resource: 'pods', namespace: 'sandbox-a', name: 'runner-0' }], 1000)).get('pods', 'sandbox-a', 'runner-0');
    assert.deepEqual(fromLive, fromCache);
    assert.deepEqual(fromLive, { state: 'found', metadata: { uid: 'u1', ...STAMPED }, serviceAccountName: 'runner' });
  });

  test("a snapshot read live keeps its source claim, so a claim restored from it is judged by that claim's environment", async () => {
    const live = fakeLive({ 'volumesnapshots/sandbox-a/snap': { state: 'found', metadata: { uid: 's1' }, sourceClaim: 'ws' } });
    const reader = createCachedReader(fakeCache({}), live, 'deed.dev', createMetrics());
    const answer = (await reader.read([{ resource: 'volumesnapshots', namespace: 'sandbox-a', name: 'snap' }], 1000)).get('volumesnapshots', 'sandbox-a', 'snap');
    assert.deepEqual(answer, { state: 'found', metadata: { uid: 's1' }, sourceClaim: 'ws' });
  });

  test("a snapshot's source claim is read fresh, past the cache, and keeps its creation time: whether it is the claim the snapshot copied is in it", async () => {
    const live = fakeLive({
      'volumesnapshots/sandbox-a/snap': { state: 'found', metadata: { uid: 's1' }, sourceClaim: 'ws', created: '2026-11-29T16:00:00Z' },
      'persistentvolumeclaims/sandbox-a/ws': { state: 'found', metadata: { uid: 'u2', ...STAMPED }, created: '2026-11-29T17:00:00Z' },
    });
    const reader = createCachedReader(fakeCache({ [lookupKey(claimKey('ws'))]: { ...STAMPED, uid: 'u2', deleting: false } }), live, 'deed.dev', createMetrics());
    const snapshot = (await reader.read([{ resource: 'volumesnapshots', namespace: 'sandbox-a', name: 'snap' }], 1000)).get('volumesnapshots', 'sandbox-a', 'snap');
    assert.equal(snapshot.state === 'found' ? snapshot.created : undefined, '2026-11-29T16:00:00Z');
    const fresh = (await reader.read([{ ...claimKey('ws'), fresh: true }], 1000)).get('persistentvolumeclaims', 'sandbox-a', 'ws');
    assert.deepEqual(fresh, { state: 'found', metadata: { uid: 'u2', ...STAMPED }, created: '2026-11-29T17:00:00Z' });
    assert.deepEqual(live.reads, ['volumesnapshots/sandbox-a/snap', 'persistentvolumeclaims/sandbox-a/ws'], 'the cached claim was read all the same');
    // Asked for without `fresh` (a claim a pod mounts), the same claim comes from the cache, with no creation time.
    assert.deepEqual((await reader.read([claimKey('ws')], 1000)).get('persistentvolumeclaims', 'sandbox-a', 'ws'), { state: 'found', metadata: { uid: 'u2', ...STAMPED } });
  });

  test("the pods that read a name come from the cache's index while the pods are current; otherwise the namespace's pods are listed, cut to what the cache keeps", async () => {
    const key: LookupKey = { resource: 'secrets', namespace: 'sandbox-a', name: 'creds', readers: true };
    const cachedPod: ObjectFacts = { ...STAMPED, uid: 'p1', deleting: false, serviceAccountName: 'ci' };
    const live = fakeLive({});
    const reader = createCachedReader(fakeCache({}, { readers: () => [{ kind: 'Pod', name: 'job-1', facts: cachedPod }] }), live, 'deed.dev', createMetrics());
    const cached = (await reader.read([key], 1000)).readers('secrets', 'sandbox-a', 'creds');
    assert.deepEqual(cached.state === 'known' ? cached.readers.map((p) => [p.name, p.found.serviceAccountName]) : cached, [['job-1', 'ci']]);
    assert.deepEqual(live.reads, []);
    // Not current: read live, and a pod's other labels and annotations are dropped as the cache drops them.
    const listed: Readers = { state: 'known', readers: [{ kind: 'Pod', name: 'job-2', found: { state: 'found', metadata: { uid: 'p2', labels: { ...STAMPED.labels, app: 'x' } } } }] };
    const live2 = fakeLive({}, listed);
    const uncached = await createCachedReader(fakeCache({}), live2, 'deed.dev', createMetrics()).read([key], 1000);
    assert.deepEqual(live2.reads, ['secrets/sandbox-a/creds readers']);
    const answer = uncached.readers('secrets', 'sandbox-a', 'creds');
    assert.deepEqual(answer.state === 'known' ? answer.readers.map((p) => p.found.metadata.labels) : answer, [STAMPED.labels]);
    // The object itself is another read: not answered by the readers'.
    assert.equal(uncached.get('secrets', 'sandbox-a', 'creds').state, 'unknown');
    // Outside the scope nothing is read.
    const outside = await createCachedReader(fakeCache({}), live2, 'deed.dev', createMetrics()).read([{ ...key, namespace: 'plain' }], 1000);
    assert.equal(outside.readers('secrets', 'plain', 'creds').state, 'unknown');
  });

  test("the reading kinds the cache cannot answer (a Gateway store served nowhere when last listed, reviewer-99 F4) are read live, alone, and joined to the cached pods; a live read that fails leaves the readers unknown", async () => {
    const key: LookupKey = { resource: 'secrets', namespace: 'sandbox-a', name: 'creds', readers: true };
    const cachedPod: ObjectFacts = { ...STAMPED, uid: 'p1', deleting: false };
    const cache = { ...fakeCache({}), readersIn: () => ({ readers: [{ kind: 'Pod' as const, name: 'job-1', facts: cachedPod }], unread: ['gateways' as const] }) };
    const gateway: Readers = { state: 'known', readers: [{ kind: 'Gateway', name: 'edge', found: { state: 'found', metadata: { uid: 'g1', labels: STAMPED.labels } } }] };
    const asked: Array<readonly string[] | undefined> = [];
    const live = fakeLive({}, gateway);
    const read = live.read.bind(live);
    live.read = (keys, ms) => {
      asked.push(...keys.map((k) => k.readerKinds));
      return read(keys, ms);
    };
    const answer = (await createCachedReader(cache, live, 'deed.dev', createMetrics()).read([key], 1000)).readers('secrets', 'sandbox-a', 'creds');
    assert.deepEqual(answer.state === 'known' ? answer.readers.map((r) => `${r.kind} ${r.name}`) : answer, ['Pod job-1', 'Gateway edge']);
    assert.deepEqual(asked, [['gateways']], 'only the Gateways are listed, not the pods');
    const failing = fakeLive({}, { state: 'unknown', reason: 'list gateways in sandbox-a: 500' });
    assert.equal((await createCachedReader(cache, failing, 'deed.dev', createMetrics()).read([key], 1000)).readers('secrets', 'sandbox-a', 'creds').state, 'unknown');
  });
});
