// `npx tsx bench/hostnames-policy-cost.ts`: how large an Ingress the install's deed-hostnames
// ValidatingAdmissionPolicy (src/install/hostnames-policy.ts) takes outside the review scope
// before the API server's CEL cost limit refuses it, in a real kube-apiserver
// (KUBEBUILDER_ASSETS). Outside the review scope the policy matches every host an object names
// against every declared hostname; past the limit the write fails (failurePolicy Fail). For
// each policy size (environments with three hostnames each) this finds, by bisection, the
// largest Ingress whose hosts stand in both its rules and its TLS hosts (a SaaS's customer
// domains, naming no declared hostname) that a writer of no exemption may create, and times
// the CREATE of one of 100 hosts. Prints figures; asserts nothing.
//   KUBEBUILDER_ASSETS=DIR npx tsx bench/hostnames-policy-cost.ts [--environments 1,10,30]
import { benchArgs } from './args.js';
import { startControlPlane } from '../test/e2e/control-plane.js';
import { api } from '../test/e2e/client.js';
import { renderedPolicy } from '../test/chart-render.js';

const { values: flags } = benchArgs(import.meta.url, { options: { environments: { type: 'string', default: '1,10,30' } } });
const SIZES = flags.environments.split(',').map(Number);
const bin = process.env.KUBEBUILDER_ASSETS;
if (!bin) throw new Error('set KUBEBUILDER_ASSETS (../shared/envtest/install.sh prints it)');

const cp = await startControlPlane(bin, false);
const as = (method: string, path: string, body?: unknown) => api(cp, cp.admin, method, path, body);
const INGRESSES = '/apis/networking.k8s.io/v1/namespaces/shop/ingresses';
const ingress = (name: string, n: number) => {
  const hosts = Array.from({ length: n }, (_, i) => `customer-${i}.shop-domains.example.net`);
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name }, spec: { rules: hosts.map((host) => ({ host })), tls: [{ hosts, secretName: 'shop-tls' }] } };
};
/** Whether an Ingress of n hosts is created (dry run: nothing is stored); the refusal's message otherwise. */
const creates = async (n: number) => {
  const a = await as('POST', `${INGRESSES}?dryRun=All`, ingress(`shop-${n}`, n));
  return a.status === 201 ? true : String(a.body?.message ?? a.status);
};

try {
  await as('POST', '/api/v1/namespaces', { metadata: { name: 'shop' } });
  const median100 = async () => {
    const times: number[] = [];
    for (let i = 0; i < 9; i++) {
      const t = performance.now();
      await creates(100);
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b)[4]!.toFixed(1);
  };
  console.log(`without the policy: a dry-run CREATE of an Ingress of 100 hosts takes ${await median100()} ms (median of 9)`);
  console.log('environments  declared hostnames  largest Ingress taken (hosts in rules and TLS)  CREATE of 100 hosts, ms (median of 9)');
  for (const envs of SIZES) {
    const environments = Array.from({ length: envs }, (_, i) => ({ id: `env${i}`, serviceAccounts: [`sandbox-${i}:*`], hostnames: [`*.env${i}.sandboxes.test`, `env${i}.example.com`, `*.env${i}.example.org`] }));
    // system:masters is not the platform in a policy that names its own: the admin writes as anyone would.
    const [policy, binding] = renderedPolicy('deed-hostnames', { environments, platform: { users: ['argocd'], groups: ['platform-admins'] }, breakGlass: { users: ['oncall'], groups: [] } });
    for (const path of ['validatingadmissionpolicybindings/deed-hostnames', 'validatingadmissionpolicies/deed-hostnames']) await as('DELETE', `/apis/admissionregistration.k8s.io/v1/${path}`);
    await as('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', policy);
    await as('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', binding);
    // In effect once the API server's informer has it: a declared hostname is refused.
    const probe = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { generateName: 'probe-' }, spec: { rules: [{ host: `x.env${envs - 1}.sandboxes.test` }] } };
    for (let i = 0; i < 120 && (await as('POST', `${INGRESSES}?dryRun=All`, probe)).status !== 403; i++) await new Promise((r) => setTimeout(r, 500));
    let low = 1;
    let high = 2;
    let refusal = '';
    for (;;) {
      const r = await creates(high);
      if (r !== true) {
        refusal = r;
        break;
      }
      low = high;
      high *= 2;
      if (high > 40_000) break;
    }
    while (high - low > Math.max(1, Math.floor(low / 50))) {
      const mid = Math.floor((low + high) / 2);
      const r = await creates(mid);
      if (r === true) low = mid;
      else [high, refusal] = [mid, r];
    }
    console.log(`${envs}  ${envs * 3}  ${refusal === '' ? `${low} (none refused up to 40,000)` : low}  ${await median100()}`);
    if (refusal !== '') console.log(`  refused past it: ${refusal.replace(/\s+/g, ' ').replace(/"shop-\d+"/, '"shop-N"')}`);
  }
} finally {
  await cp.stop();
}
