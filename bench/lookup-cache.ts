// `npm run bench:lookups`: the lookup cache in a real kube-apiserver (KUBEBUILDER_ASSETS).
// Fills an opted-in namespace with N claims, N Secrets and N pods stamped as Deed stamps
// them (plus kubectl's last-applied-configuration, which the cache drops), starts the
// cache, and prints its heap per 10,000 objects of each kind and the reads per review
// with and without it. Prints figures; asserts nothing. See docs/performance.md, "Lookups".
//   npm run bench:lookups -- --objects 10000
import { join } from 'node:path';
import { benchArgs } from './args.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startControlPlane, writeKubeconfig, type ControlPlane } from '../test/e2e/control-plane.js';
import { api } from '../test/e2e/client.js';
import { loadKubeConfig } from '../src/kube/client.js';
import { createLookupCache, type LookupCache } from '../src/kube/lookup-cache.js';
import { createCachedReader } from '../src/kube/cached-reader.js';
import { createObjectReader } from '../src/kube/object-reader.js';
import { createMetrics } from '../src/observability/metrics.js';
import { planLookups } from '../src/policy/lookup.js';
import { stampKeys } from '../src/policy/stamps/keys.js';

const { values: flags } = benchArgs(import.meta.url, { options: { objects: { type: 'string', default: '10000' }, reviews: { type: 'string', default: '200' } } });
const N = Number(flags.objects);
const REVIEWS = Number(flags.reviews);
const NS = 'bench-lookups';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const stamps = (i: number) => ({
  labels: { 'app.kubernetes.io/managed-by': 'deed', 'deed.dev/managed': 'true', 'deed.dev/environment': 'alpha', 'deed.dev/owner-uid': '144baa57-4863-4fb3-a622-a0c0ecb4a7ff', app: 'sandbox', run: `r-${i}` },
  annotations: {
    'deed.dev/owner': 'sandbox-a/runner-0',
    'deed.dev/create-nonce': 'a'.repeat(64),
    'deed.dev/expires-at': '2026-12-01T10:00:00Z',
    'deed.dev/attestation': `v1:${'A'.repeat(43)}`,
    'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `s-${i}` }, data: { token: 'x'.repeat(200) } }),
  },
});
const bodies = {
  persistentvolumeclaims: (i: number) => ({ metadata: { name: `c-${i}`, ...stamps(i) }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }),
  secrets: (i: number) => ({ metadata: { name: `s-${i}`, ...stamps(i) }, data: { token: Buffer.from('x'.repeat(200)).toString('base64') } }),
  pods: (i: number) => ({
    metadata: { name: `p-${i}`, ...stamps(i) },
    spec: { serviceAccountName: 'default', containers: [{ name: 'main', image: 'registry.example/sandbox:1', command: ['sleep', 'infinity'], env: [{ name: 'A', value: 'b' }] }] },
  }),
};
type Kind = keyof typeof bodies;

async function fill(cp: ControlPlane, kind: Kind): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < N) {
      const i = next++;
      const answer = await api(cp, cp.admin, 'POST', `/api/v1/namespaces/${NS}/${kind}`, bodies[kind](i));
      if (answer.status !== 201) throw new Error(`${kind} ${i}: ${answer.status} ${answer.text}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/** A pod review (validating, CREATE) that mounts these claims. */
function podReview(claims: string[]) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: crypto.randomUUID(),
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: NS,
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:sandbox-a:runner', groups: ['system:serviceaccounts'] },
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x', namespace: NS }, spec: { containers: [{ name: 'main', image: 'i' }], volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })) } },
    },
  };
}

async function readsPerReview(cache: LookupCache | undefined, kc: ReturnType<typeof loadKubeConfig>, claims: (r: number) => string[]) {
  const metrics = createMetrics();
  const live = createObjectReader(kc);
  const reader = cache ? createCachedReader(cache, live, 'deed.dev', metrics) : live;
  let lookups = 0;
  let reads = 0;
  const started = performance.now();
  for (let r = 0; r < REVIEWS; r++) {
    const { lookups: keys } = planLookups(podReview(claims(r)), 'validate', stampKeys('deed.dev'));
    lookups += keys.length;
    if (cache) await reader.read(keys, 2000);
    else {
      await reader.read(keys, 2000);
      reads += keys.length;
    }
  }
  if (cache) reads = (await metrics.liveReads.get()).values.reduce((a, v) => a + v.value, 0);
  return { lookupsPerReview: lookups / REVIEWS, readsPerReview: reads / REVIEWS, msPerReview: (performance.now() - started) / REVIEWS };
}

const cp = await startControlPlane(process.env.KUBEBUILDER_ASSETS ?? '', false);
try {
  const kcFile = join(cp.dir, 'bench.kubeconfig');
  writeKubeconfig(kcFile, cp.server, cp.ca, cp.admin.token);
  const kc = loadKubeConfig(kcFile);
  await api(cp, cp.admin, 'POST', '/api/v1/namespaces', { metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } });
  await api(cp, cp.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } }); // no controller manager here
  const cache = createLookupCache({ kc, deedNamespace: 'deed-system', prefix: 'deed.dev', secrets: true, onError: (err, what) => console.error(what, err) });
  cache.start();
  await cache.scopeKnown();
  while (!(['persistentvolumeclaims', 'secrets', 'pods'] as const).every((k) => cache.current(k))) await new Promise((r) => setTimeout(r, 50));
  // The cache fills through its watches as the objects are created; each kind's heap is the growth while it fills.
  process.stdout.write(`heap per 10,000 cached objects (${N} of each kind, stamped, each with a 400-byte last-applied-configuration the cache drops)\n`);
  for (const kind of Object.keys(bodies) as Kind[]) {
    const before = heap();
    const t = performance.now();
    await fill(cp, kind);
    while (cache.sizes()[kind] < N) await new Promise((r) => setTimeout(r, 50));
    const held = heap() - before;
    process.stdout.write(`  ${kind}: ${((held / 2 ** 20) * (10_000 / N)).toFixed(1)} MiB (${N} created and watched in ${((performance.now() - t) / 1000).toFixed(1)} s)\n`);
  }
  const rss = process.memoryUsage().rss;
  process.stdout.write(`  RSS of this process, which also created the objects: ${(rss / 2 ** 20).toFixed(0)} MiB\n`);

  const present = (r: number) => [`c-${r % N}`, `c-${(r + 1) % N}`];
  const absent = (r: number) => [`c-${r % N}`, `missing-${r}`];
  process.stdout.write('\nreads from the API server per pod review that mounts two claims\n');
  for (const [what, claims] of [['both exist', present], ['one does not exist', absent]] as const) {
    const without = await readsPerReview(undefined, kc, claims);
    const withCache = await readsPerReview(cache, kc, claims);
    process.stdout.write(`  ${what}: lookups ${withCache.lookupsPerReview}, reads without the cache ${without.readsPerReview} (${without.msPerReview.toFixed(2)} ms), with it ${withCache.readsPerReview} (${withCache.msPerReview.toFixed(2)} ms)\n`);
  }
  cache.stop();
} finally {
  await cp.stop();
}
