// How long writes stay refused after the runbook's steps, when Deed is down
// (docs/operations.md, "When the webhook is down"). In a real kube-apiserver (from
// KUBEBUILDER_ASSETS) the install's webhook configurations and create-stamps policy are
// registered as `deed manifests` renders them, pointed at a port nothing serves
// (failurePolicy Fail): every write in an opted-in namespace is refused, a ConfigMap and a
// RoleBinding alike. Then each step is taken and the time until a write passes again is
// measured, polling every 20 ms:
//   unlabel:  the namespace's opt-in label removed (kubectl label namespace NS deed.dev/sandbox-)
//   delete:   both webhook configurations and the create-stamps binding deleted
// Prints min, median and max over --rounds (default 5).
//
//   KUBEBUILDER_ASSETS=$(../shared/envtest/install.sh) npx tsx bench/outage-recovery.ts [--rounds N]
import { benchArgs } from './args.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { renderManifests } from '../src/install/manifests.js';
import { pointedAtUrl } from '../src/install/dev-webhooks.js';
import { api, type Identity } from '../test/e2e/client.js';
import { assets, startControlPlane, type ControlPlane } from '../test/e2e/control-plane.js';

const { values } = benchArgs(import.meta.url, { options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(values.rounds);
const NS = 'outage';
const OPT_IN = 'deed.dev/sandbox';

const found = assets();
if ('missing' in found) {
  console.error(`outage-recovery: ${found.missing}; export KUBEBUILDER_ASSETS=$(../shared/envtest/install.sh)`);
  process.exit(2);
}

const PATHS: Record<string, string> = {
  MutatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  ValidatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  ValidatingAdmissionPolicy: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function must(what: string, p: Promise<{ status: number; text: string }>): Promise<void> {
  const a = await p;
  if (a.status >= 300 && a.status !== 409 && a.status !== 404) throw new Error(`${what}: ${a.status} ${a.text}`);
}

/** Milliseconds until `ok()` holds, polling every 20 ms, at most `limitMs`. */
async function until(ok: () => Promise<boolean>, limitMs = 60_000): Promise<number> {
  const start = performance.now();
  while (!(await ok())) {
    if (performance.now() - start > limitMs) throw new Error(`not within ${limitMs} ms`);
    await sleep(20);
  }
  return performance.now() - start;
}

let n = 0;
/** Whether a write of an ordinary kind (a RoleBinding, which the default row matches) passes in NS. */
async function writePasses(cp: ControlPlane, admin: Identity): Promise<boolean> {
  const a = await api(cp, admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings?dryRun=All`, {
    metadata: { name: `probe-${n++}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'nobody' }],
  });
  return a.status === 201;
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0]!.toFixed(0)} ms, median ${s[Math.floor(s.length / 2)]!.toFixed(0)} ms, max ${s.at(-1)!.toFixed(0)} ms`;
};

const cp = await startControlPlane(found.bin, false);
try {
  const admin = cp.admin;
  // The install's admission objects, as deed manifests renders them, pointed at a port nothing serves.
  const objects = renderManifests({ namespace: 'deed-system', image: 'x' }) as KubernetesObject[];
  const admission = objects
    .filter((o) => o.kind !== undefined && o.kind in PATHS && (o.kind.endsWith('WebhookConfiguration') || (o.metadata?.name ?? '').includes('create-stamps')))
    .map((o) => (o.kind!.endsWith('WebhookConfiguration') ? pointedAtUrl(o, 'https://127.0.0.1:1', cp.ca) : o));
  const removed = admission.filter((o) => o.kind !== 'ValidatingAdmissionPolicy');
  await must('namespace', api(cp, admin, 'POST', '/api/v1/namespaces', { metadata: { name: NS, labels: { [OPT_IN]: 'enabled' } } }));
  const register = async () => {
    for (const o of admission) await must(`${o.kind} ${o.metadata?.name}`, api(cp, admin, 'POST', PATHS[o.kind!]!, o));
    await until(async () => !(await writePasses(cp, admin)));
  };
  const results: Record<'unlabel' | 'delete', number[]> = { unlabel: [], delete: [] };
  for (let round = 0; round < ROUNDS; round++) {
    await register();
    await must('unlabel', api(cp, admin, 'PATCH', `/api/v1/namespaces/${NS}`, { metadata: { labels: { [OPT_IN]: null } } }, 'application/merge-patch+json'));
    results.unlabel.push(await until(() => writePasses(cp, admin)));
    await must('relabel', api(cp, admin, 'PATCH', `/api/v1/namespaces/${NS}`, { metadata: { labels: { [OPT_IN]: 'enabled' } } }, 'application/merge-patch+json'));
    await until(async () => !(await writePasses(cp, admin)));
    for (const o of removed) await must(`delete ${o.kind}`, api(cp, admin, 'DELETE', `${PATHS[o.kind!]}/${o.metadata!.name}`));
    results.delete.push(await until(() => writePasses(cp, admin)));
  }
  console.log(`outage-recovery: ${ROUNDS} rounds, kube-apiserver from ${found.bin}`);
  console.log(`  writes refused with Deed down, until the namespace is unlabelled:           ${stats(results.unlabel)}`);
  console.log(`  writes refused with Deed down, until the configurations and binding are deleted: ${stats(results.delete)}`);
} finally {
  await cp.stop();
}
