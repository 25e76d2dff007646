// `npx tsx bench/hostile-pods.ts`: how long one review of a pod built to be costly takes, in
// process (decode and decide, as `/admit` runs them): V volumes (each projecting a Secret, a
// ConfigMap and, with a token, a service-account token), C containers each with E env
// references, M volume mounts and F envFrom sources (Secrets and ConfigMaps by turns, each
// container its own: rev-83's 1,000 x 50 named 50,000 distinct objects in 1.7 MiB). The API server accepts a pod of up to about 3 MiB, and the
// event loop does nothing else while one is judged, so every other review waits. Prints
// milliseconds per shape; asserts nothing.
//   npx tsx bench/hostile-pods.ts
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decide } from '../src/admission/decide.js';
import { parseConfig } from '../src/config/load.js';
import { productionContext } from '../src/admission/production-context.js';
import { singleKeyRing } from '../src/policy/stamps/key-ring.js';
import { noLookup } from '../src/policy/lookup.js';
import { BENCH_POLICY, ROOT } from './processes.js';

const review = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/admission/mutate-create-pod-by-runner.json'), 'utf8')) as { request: { object: { spec: unknown } } };
const ctx = { ...productionContext(parseConfig(BENCH_POLICY), singleKeyRing(Buffer.alloc(32, 7))), lookup: noLookup('bench: no cluster') };

function pod(V: number, C: number, E: number, M: number, F: number, token: boolean): string {
  const spec = {
    volumes: Array.from({ length: V }, (_, i) => ({ name: `v${i}`, projected: { sources: [{ secret: { name: `s${i}` } }, { configMap: { name: `c${i}` } }, ...(token ? [{ serviceAccountToken: { path: 't' } }] : [])] } })),
    containers: Array.from({ length: C }, (_, i) => ({
      name: `c${i}`,
      image: 'registry.example/agent:1',
      env: Array.from({ length: E }, (_, j) => ({ name: `E${j}`, valueFrom: { secretKeyRef: { name: `s${j}`, key: 'k' } } })),
      volumeMounts: Array.from({ length: M }, (_, j) => ({ name: `v${j}`, mountPath: `/m${j}` })),
      envFrom: Array.from({ length: F }, (_, j) => (j % 2 ? { secretRef: { name: `s${j}-${i}` } } : { configMapRef: { name: `c${j}-${i}` } })),
    })),
  };
  const r = structuredClone(review);
  r.request.object.spec = spec;
  return JSON.stringify(r);
}

for (const [V, C, E, M, F] of [
  [3000, 300, 0, 30, 0],
  [10000, 100, 0, 100, 0],
  [20000, 100, 0, 150, 0],
  [20000, 100, 100, 150, 0],
  [0, 1000, 0, 0, 50],
] as const)
  for (const token of F > 0 ? [false] : [false, true]) {
    const text = pod(V, C, E, M, F, token);
    for (const webhook of ['admit', 'validate'] as const) {
      const started = process.hrtime.bigint();
      const d = decide(webhook, JSON.parse(text), ctx);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const verdict = d.kind === 'review' ? (d.response.response.allowed ? 'allowed' : 'refused') : d.kind;
      console.log(`${webhook.padEnd(8)} V=${V} C=${C} E=${E} M=${M} F=${F}${token ? ' +token' : ''} (${(text.length / 1048576).toFixed(2)} MiB): ${ms.toFixed(0)} ms, ${verdict}`);
    }
  }
