// `npx tsx bench/gateway-referrers.ts`: what a Gateway's CREATE costs Deed's live read of its
// referrers as the cluster's routes grow, in a real kube-apiserver (KUBEBUILDER_ASSETS). The
// routes that may name a Gateway are read at its CREATE (referrers.ts); this fills K namespaces
// with HTTPRoutes (each about 1.3 KB as stored, attached to a shared Gateway) in steps, and at
// each step times the read Deed makes at the CREATE of a Gateway in an opted-in namespace,
// within the review's lookup budget (80% of the 5 s webhook timeout), with the Gateway's
// listeners taking routes from its own namespace (the default) and from every namespace.
// Prints figures; asserts nothing.
//   KUBEBUILDER_ASSETS=DIR npx tsx bench/gateway-referrers.ts [--steps 5000,10000,20000,40000] [--namespaces 200] [--reads 5]
import { join } from 'node:path';
import { benchArgs } from './args.js';
import { startControlPlane, writeKubeconfig, type ControlPlane } from '../test/e2e/control-plane.js';
import { api } from '../test/e2e/client.js';
import { standInCrd } from '../test/e2e/objects.js';
import { loadKubeConfig } from '../src/kube/client.js';
import { createObjectReader } from '../src/kube/object-reader.js';
import type { KubeObject } from '../src/admission/types.js';
import { planLookups } from '../src/policy/lookup.js';
import { stampKeys } from '../src/policy/stamps/keys.js';

const { values: flags } = benchArgs(import.meta.url, { options: { steps: { type: 'string', default: '5000,10000,20000,40000' }, namespaces: { type: 'string', default: '200' }, reads: { type: 'string', default: '5' } } });
const STEPS = flags.steps.split(',').map(Number);
const K = Number(flags.namespaces);
const READS = Number(flags.reads);
const G = 'gateway.networking.k8s.io';
const GATEWAY_NS = 'gw-edge';
const BUDGET_MS = 4000;

const route = (i: number) => ({
  apiVersion: `${G}/v1`,
  kind: 'HTTPRoute',
  metadata: { name: `route-${i}`, labels: { app: `app-${i}`, 'app.kubernetes.io/part-of': 'sandboxes' } },
  spec: {
    parentRefs: [{ name: 'shared', namespace: 'gw-infra', sectionName: 'https' }],
    hostnames: [`run-${i}.sandboxes.example.com`],
    rules: [
      { matches: [{ path: { type: 'PathPrefix', value: '/api' } }], backendRefs: [{ name: `api-${i}`, port: 8080 }], timeouts: { request: '30s' } },
      { matches: [{ path: { type: 'PathPrefix', value: '/' } }], filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-run', value: `run-${i}` }] } }], backendRefs: [{ name: `web-${i}`, port: 80 }] },
    ],
  },
});

async function fill(cp: ControlPlane, from: number, to: number): Promise<void> {
  let next = from;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      const answer = await api(cp, cp.admin, 'POST', `/apis/${G}/v1/namespaces/ns-${i % K}/httproutes`, route(i));
      if (answer.status !== 201) throw new Error(`route ${i}: ${answer.status} ${answer.text}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/** The validating review of a Gateway's CREATE in GATEWAY_NS by a runner, with its listeners taking routes `from`. */
function gatewayReview(from: 'Same' | 'All') {
  const object: KubeObject = {
    apiVersion: `${G}/v1`,
    kind: 'Gateway',
    metadata: { name: 'g', namespace: GATEWAY_NS },
    spec: { gatewayClassName: 'shared', listeners: [{ name: 'http', protocol: 'HTTP', port: 80, allowedRoutes: { namespaces: { from } } }] },
  };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: crypto.randomUUID(),
      kind: { group: G, version: 'v1', kind: 'Gateway' },
      resource: { group: G, version: 'v1', resource: 'gateways' },
      namespace: GATEWAY_NS,
      name: 'g',
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:sandbox-a:runner', groups: ['system:serviceaccounts'] },
      object,
    },
  };
}

const cp = await startControlPlane(process.env.KUBEBUILDER_ASSETS ?? '', false);
try {
  const kcFile = join(cp.dir, 'bench.kubeconfig');
  writeKubeconfig(kcFile, cp.server, cp.ca, cp.admin.token);
  const kc = loadKubeConfig(kcFile);
  for (const [plural, kind] of [['httproutes', 'HTTPRoute'], ['gateways', 'Gateway'], ['listenersets', 'ListenerSet']] as const) {
    const answer = await api(cp, cp.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', standInCrd({ group: G, version: 'v1', plural, kind, approval: 'https://github.com/kubernetes-sigs/gateway-api/pull/2466' }));
    if (answer.status !== 201) throw new Error(`CRD ${plural}: ${answer.status} ${answer.text}`);
  }
  for (const ns of [GATEWAY_NS, ...Array.from({ length: K }, (_, j) => `ns-${j}`)]) await api(cp, cp.admin, 'POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { 'deed.dev/sandbox': 'enabled' } } });
  while ((await api(cp, cp.admin, 'GET', `/apis/${G}/v1/namespaces/ns-0/httproutes`)).status !== 200) await new Promise((r) => setTimeout(r, 100));
  const reader = createObjectReader(kc);
  let filled = 0;
  console.log(`node ${process.version}; ${K} namespaces; the read's budget ${BUDGET_MS} ms`);
  for (const step of STEPS) {
    const t = performance.now();
    await fill(cp, filled, step);
    const fillS = (performance.now() - t) / 1000;
    filled = step;
    if (step === STEPS[0]) console.log(`one route as stored: ${Buffer.byteLength((await api(cp, cp.admin, 'GET', `/apis/${G}/v1/namespaces/ns-0/httproutes/route-0`)).text)} bytes of JSON`);
    for (const from of ['Same', 'All'] as const) {
      const { lookups } = planLookups(gatewayReview(from), 'validate', stampKeys('deed.dev'));
      const keys = lookups.filter((k) => k.readers === true);
      const times: number[] = [];
      const states: string[] = [];
      for (let r = 0; r < READS; r++) {
        const started = performance.now();
        const answer = await reader.read(keys, BUDGET_MS);
        times.push(performance.now() - started);
        const readers = keys.map((k) => answer.readers(k.resource, k.namespace, k.name));
        states.push(readers.map((x) => (x.state === 'known' ? `known(${x.readers.length})` : `unknown: ${x.reason.slice(0, 80)}`)).join(','));
      }
      times.sort((a, b) => a - b);
      console.log(`${step} routes (filled in ${fillS.toFixed(1)} s), listeners from ${from}: ${keys.length} reader read(s), median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms (${times.map((x) => x.toFixed(0)).join(' ')}); ${[...new Set(states)].join(' | ')}`);
    }
  }
} finally {
  await cp.stop();
}
