// `npm run bench:chain`: what Deed costs in the create path of a real kube-apiserver, against
// the API server's own admission policies. It starts the end-to-end control plane (etcd and
// kube-apiserver from KUBEBUILDER_ASSETS, no controller manager), and a runner pod's
// pod-bound token creates Secrets, 8 in flight, through each admission chain in turn:
//   none      no admission configured
//   policy    a MutatingAdmissionPolicy and a ValidatingAdmissionPolicy (bench/chain-policies.ts)
//             that write and freeze the stamps CEL can compute from the requester
//   noop      Deed's webhook configurations pointed at a server answering at once, the
//             mutating call with a fixed patch the size of Deed's stamps (bench/noop-server.ts
//             --patch): since one call per create, a Secret CREATE reaches the mutating one only
//   deed      Deed as `deed manifests` renders it: its webhooks, clientConfig pointed at
//             `deed serve` (compiled, with the lookup cache), and its create-stamps policy
// and the variants that answer a question each (--chains):
//   deed-mutating   Deed's mutating webhook alone, without the create-stamps policy: what the policy costs
//   deed-no-conditions   Deed's pair without its matchConditions: what they cost the API server
//   deed-one-condition   Deed's pair with only the first of them: whether the cost is per condition or per webhook
//   noop-h1         the no-op pair offering only HTTP/1.1: Node's HTTP/1.1 against HTTP/2
//   deed-no-secret-cache   Deed as installed by `deed manifests --no-cache-secrets`: no watch event per Secret created
//   deed-*-policy   Deed's webhooks with a variant of its create-stamps policy (bench/chain-policy-variants.ts):
//                   trivial (`true`), touch (reads object and request), folded, lean, inline
//   deed-default-two-calls   Deed with the default row as it was before it took one call per create:
//                   its mutating webhook on /mutate, its validating webhook on CREATE too, the
//                   create-stamps policy on the first pair's kinds only (compare with deed, --object service)
// --object secret (the default), controller-pod (pods the ReplicaSet controller's service account
// makes for a ReplicaSet the runner created), or service (headless Services, a kind of the
// default row; the policy chain's policies do not match them).
// --cpu-prof writes a V8 CPU profile of each Deed started to bench/profiles/chain/.
// The chains take turns in short rounds (the machine's other load drifts); CPU time per
// create of every process in the chain, from /proc (user + system, all threads), is the
// steady figure. Prints figures; asserts nothing. See docs/performance.md.
//   npm run bench:chain -- --rounds 5 --duration 5 --chains none,policy,noop,deed
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './args.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubernetesObject } from '@kubernetes/client-node';
import { NAME, renderManifests } from '../src/install/manifests.js';
import { CREATE_STAMPS_POLICY_SUFFIX } from '../src/install/create-stamps-policy.js';
import { createJudgedAtMutationRules } from '../src/install/kind-rules.js';
import { api, type Identity } from '../test/e2e/client.js';
import { assets, startControlPlane, writeKubeconfig, type ControlPlane } from '../test/e2e/control-plane.js';
import { DEED_NAMESPACE, E2E_POLICY } from '../test/e2e/suite.js';
import { chainPolicies, POLICY_KINDS, stampPatch } from './chain-policies.js';
import { policyVariant, POLICY_VARIANTS, type PolicyVariant } from './chain-policy-variants.js';
import { median, percentile } from './load.js';
import { cpuMs, ROOT, startDeed, startNoop, type Served } from './processes.js';
import { metricsText } from './reviews.js';

const { values: flags } = benchArgs(import.meta.url, {
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '5' },
    // Each round starts its webhook server afresh: the first seconds of load are V8 compiling
    // its hot paths (a few hundred reviews), which a server that runs for days has long done.
    warmup: { type: 'string', default: '5' },
    inflight: { type: 'string', default: '8' },
    chains: { type: 'string', default: 'none,policy,noop,deed' },
    'no-build': { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
    // What is created: Secrets by the runner, or pods by the ReplicaSet controller's service
    // account for a ReplicaSet the runner created (Deed stamps them as the owner's, reading it from its cache).
    object: { type: 'string', default: 'secret' },
  },
});
const OBJECTS = ['secret', 'controller-pod', 'service'] as const;
if (!(OBJECTS as readonly string[]).includes(flags.object)) throw new Error(`--object must be one of ${OBJECTS.join(', ')}, got ${flags.object}`);
const controllerPods = flags.object === 'controller-pod';
const services = flags.object === 'service';
const CHAINS = ['none', 'policy', 'noop', 'deed', 'deed-mutating', 'deed-no-conditions', 'deed-one-condition', 'noop-h1', 'deed-no-secret-cache', 'deed-default-two-calls', ...Object.values(POLICY_VARIANTS)] as const;
type Chain = (typeof CHAINS)[number];
const chains = flags.chains.split(',').map((c) => {
  if (!(CHAINS as readonly string[]).includes(c)) throw new Error(`unknown chain ${c}; one of ${CHAINS.join(', ')}`);
  return c as Chain;
});
const rounds = Number(flags.rounds);
const durationS = Number(flags.duration);
const warmupS = Number(flags.warmup);
const inflight = Number(flags.inflight);
const NAMESPACE = 'sandbox-a';
const PROFILES = join(ROOT, 'bench/profiles/chain');
const log = (s = '') => process.stdout.write(`${s}\n`);
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

interface Scene {
  cp: ControlPlane;
  runner: Identity & { pod: string; uid: string };
  /** The ReplicaSet controller's service account (--object controller-pod). */
  controller?: Identity;
  /** Deed's own service account's kubeconfig: its lookup cache reads as in a cluster. */
  deedKubeconfig: string;
  dir: string;
}

async function must(what: string, answer: Promise<{ status: number; text: string; body: unknown }>) {
  const a = await answer;
  if (a.status >= 300) throw new Error(`${what}: ${a.status} ${a.text}`);
  return a;
}

async function token(cp: ControlPlane, namespace: string, serviceAccount: string, pod?: { name: string; uid: string }): Promise<string> {
  const a = await must(`token ${namespace}/${serviceAccount}`, api(cp, cp.admin, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 7200, ...(pod ? { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', ...pod } } : {}) },
  }));
  return (a.body as { status: { token: string } }).status.token;
}

/** The namespaces, RBAC and identities of the e2e suite that a Secret create needs. */
async function scene(cp: ControlPlane): Promise<Scene> {
  const admin = cp.admin;
  const call = (method: string, path: string, body?: unknown) => api(cp, admin, method, path, body);
  for (const [name, optIn] of [[NAMESPACE, true], [DEED_NAMESPACE, false]] as const)
    await must(`namespace ${name}`, call('POST', '/api/v1/namespaces', { metadata: { name, labels: optIn ? { 'deed.dev/sandbox': 'enabled' } : {} } }));
  for (const o of renderManifests({ namespace: DEED_NAMESPACE, image: 'deed:bench', policy: E2E_POLICY })) {
    if (o.kind === 'ServiceAccount') await must(`${o.kind}`, call('POST', `/api/v1/namespaces/${DEED_NAMESPACE}/serviceaccounts`, o));
    if (o.kind === 'ClusterRole') await must(`${o.kind}`, call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', o));
    if (o.kind === 'ClusterRoleBinding') await must(`${o.kind}`, call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', o));
  }
  await must('runner service account', call('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, { metadata: { name: 'runner' } }));
  await must('secrets role', call('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NAMESPACE}/roles`, { metadata: { name: 'bench' }, rules: [{ apiGroups: [''], resources: ['secrets', 'services'], verbs: ['create', 'get', 'list'] }, { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['create', 'get'] }] }));
  await must('secrets binding', call('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NAMESPACE}/rolebindings`, {
    metadata: { name: 'bench' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'bench' },
    subjects: [{ kind: 'ServiceAccount', namespace: NAMESPACE, name: 'runner' }],
  }));
  const pod = await must('runner pod', call('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, { metadata: { name: 'runner-0' }, spec: { serviceAccountName: 'runner', containers: [{ name: 'runner', image: 'registry.example/runner:1' }] } }));
  const uid = (pod.body as { metadata: { uid: string } }).metadata.uid;
  const runner = { name: `${NAMESPACE}:runner@runner-0`, token: await token(cp, NAMESPACE, 'runner', { name: 'runner-0', uid }), pod: 'runner-0', uid };
  const dir = join(cp.dir, 'bench');
  mkdirSync(dir);
  const deedKubeconfig = join(dir, 'deed.kubeconfig');
  writeKubeconfig(deedKubeconfig, cp.server, cp.ca, await token(cp, DEED_NAMESPACE, 'deed'));
  if (!controllerPods) return { cp, runner, deedKubeconfig, dir };
  // The API server's bootstrap RBAC binds system:controller:replicaset-controller to this service account; no controller manager runs to make it.
  await must('replicaset-controller service account', call('POST', '/api/v1/namespaces/kube-system/serviceaccounts', { metadata: { name: 'replicaset-controller' } }));
  await must('the namespace\'s default service account', call('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, { metadata: { name: 'default' } })); // the pods run as it
  const controller = { name: 'kube-system:replicaset-controller', token: await token(cp, 'kube-system', 'replicaset-controller') };
  return { cp, runner, controller, deedKubeconfig, dir };
}

const SERVICE = JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { generateName: 'bench-' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } });
const SECRET = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { generateName: 'bench-' }, data: { token: 'c2FuZGJveC1zZXNzaW9uLXRva2VuLTAxMjM0NTY3ODlhYmNkZWY=' } });
const POD_LABELS = { 'bench.deed.dev/pod': 'controller-made' };
const POD_SPEC = { automountServiceAccountToken: false, containers: [{ name: 'sandbox', image: 'registry.example/sandbox:1' }] };

/** What the load creates: one Secret as the runner, or one pod as the ReplicaSet controller for `owner`. */
interface Creation {
  who: Identity;
  path: string;
  body: string;
}

const secretCreation = (s: Scene): Creation => ({ who: s.runner, path: `/api/v1/namespaces/${NAMESPACE}/secrets`, body: SECRET });
// Headless: no cluster IP is allocated (the service CIDR would run out within a round).
const serviceCreation = (s: Scene): Creation => ({ who: s.runner, path: `/api/v1/namespaces/${NAMESPACE}/services`, body: SERVICE });

/** A ReplicaSet of no replicas, created by the runner through the chain in place: the owner of the pods the controller then creates. */
async function podCreation(s: Scene): Promise<Creation> {
  const rs = await must('the ReplicaSet', api(s.cp, s.runner, 'POST', `/apis/apps/v1/namespaces/${NAMESPACE}/replicasets`, {
    metadata: { generateName: 'bench-' },
    spec: { replicas: 0, selector: { matchLabels: POD_LABELS }, template: { metadata: { labels: POD_LABELS }, spec: POD_SPEC } },
  }));
  const { name, uid } = (rs.body as { metadata: { name: string; uid: string } }).metadata;
  const ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid, controller: true, blockOwnerDeletion: true }];
  return { who: s.controller!, path: `/api/v1/namespaces/${NAMESPACE}/pods`, body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { generateName: `${name}-`, labels: POD_LABELS, ownerReferences }, spec: POD_SPEC }) };
}

/** One create of `what`; latency in ms and, for a dry run, the stamps the chain wrote. */
function create(cp: ControlPlane, agent: Agent, what: Creation, dryRun = false): Promise<{ status: number; ms: number; labels?: Record<string, string>; annotations?: Record<string, string>; text: string }> {
  const { who, body } = what;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(`${what.path}${dryRun ? '?dryRun=All' : ''}`, cp.server),
      { method: 'POST', agent, ca: cp.ca, headers: { authorization: `Bearer ${who.token}`, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - started;
          const text = Buffer.concat(chunks).toString('utf8');
          if (!dryRun) return resolve({ status: res.statusCode ?? 0, ms, text: res.statusCode === 201 ? '' : text });
          const meta = (JSON.parse(text) as { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> } }).metadata;
          resolve({ status: res.statusCode ?? 0, ms, labels: meta?.labels, annotations: meta?.annotations, text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** What a dry-run create shows about the chain in place: each chain leaves its own mark. */
function signature(labels: Record<string, string> = {}, annotations: Record<string, string> = {}): 'none' | 'policy' | 'noop' | 'deed' | 'deed-mutating' | 'mixed' {
  if (labels['deed.dev/managed'] === undefined && Object.keys(annotations).length === 0) return 'none';
  const nonce = annotations['deed.dev/create-nonce'];
  if (nonce === undefined) return 'policy';
  if (nonce === '0'.repeat(64)) return 'noop';
  if (annotations['deed.dev/attestation']?.startsWith('v')) return 'deed';
  return 'mixed';
}

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const PATHS: Record<string, string> = {
  MutatingWebhookConfiguration: 'mutatingwebhookconfigurations',
  ValidatingWebhookConfiguration: 'validatingwebhookconfigurations',
  ...POLICY_KINDS,
};

/**
 * Deed's webhook configurations as rendered, changed only in clientConfig (as the e2e suite
 * registers them), and with the pair its create-stamps policy (the API server's check after
 * every mutator, src/install/create-stamps-policy.ts): Deed as installed.
 */
function deedWebhooks(url: string, ca: string, o: { mutatingOnly?: boolean; conditions?: 'none' | 'one'; policy?: PolicyVariant; defaultTwoCalls?: boolean } = {}): KubernetesObject[] {
  const createStamps = `${NAME}-${CREATE_STAMPS_POLICY_SUFFIX}`;
  return renderManifests({ namespace: DEED_NAMESPACE, image: 'deed:bench', policy: E2E_POLICY })
    .filter(
      (w) =>
        w.kind === 'MutatingWebhookConfiguration' ||
        (!o.mutatingOnly && (w.kind === 'ValidatingWebhookConfiguration' || (w.kind?.startsWith('ValidatingAdmissionPolicy') === true && w.metadata?.name === createStamps))),
    )
    .map((w) => {
      if (o.policy !== undefined && w.kind === 'ValidatingAdmissionPolicy') return policyVariant(w, o.policy);
      if (o.defaultTwoCalls && w.kind === 'ValidatingAdmissionPolicy') return firstPairPolicy(w);
      if (!('webhooks' in w)) return w;
      const copy = structuredClone(w) as KubernetesObject & { webhooks: Array<{ clientConfig: { service?: { path: string } }; matchConditions?: unknown[] }> };
      for (const hook of copy.webhooks) {
        hook.clientConfig = { url: `${url}${hook.clientConfig.service!.path}`, caBundle: Buffer.from(ca).toString('base64') } as never;
        if (o.conditions === 'none') delete hook.matchConditions;
        if (o.conditions === 'one') hook.matchConditions = hook.matchConditions!.slice(0, 1);
      }
      if (o.defaultTwoCalls) defaultRowTwoCalls(copy.webhooks as unknown as DefaultRowHook[]);
      return copy;
    });
}

type DefaultRowHook = { name: string; clientConfig: { url: string }; rules: Array<{ operations: string[] }> };

/** The default row as it was before one call per create: stamping alone on /mutate, and the CREATE judged again by the validating webhook. */
function defaultRowTwoCalls(hooks: DefaultRowHook[]): void {
  for (const hook of hooks) {
    if (hook.name === 'default.mutate.deed.dev') hook.clientConfig.url = hook.clientConfig.url.replace(/\/admit$/, '/mutate');
    if (hook.name === 'default.validate.deed.dev') hook.rules[0]!.operations = ['CREATE', ...hook.rules[0]!.operations];
  }
}

/** The create-stamps policy as it was then: the CREATEs of the first pair's mutating webhook, not the default row's. */
function firstPairPolicy(policy: KubernetesObject): KubernetesObject {
  const copy = structuredClone(policy) as KubernetesObject & { spec: { matchConstraints: { resourceRules: unknown[]; excludeResourceRules?: unknown[] } } };
  copy.spec.matchConstraints.resourceRules = createJudgedAtMutationRules();
  delete copy.spec.matchConstraints.excludeResourceRules;
  return copy;
}

function variantOf(chain: Chain): { policy?: PolicyVariant } {
  const found = Object.entries(POLICY_VARIANTS).find(([, name]) => name === chain);
  return found ? { policy: found[0] as PolicyVariant } : {};
}

async function install(cp: ControlPlane, objects: KubernetesObject[]): Promise<void> {
  for (const o of objects) await must(`register ${o.kind}`, api(cp, cp.admin, 'POST', `${ADMISSION}/${PATHS[o.kind!]}`, o));
}

async function uninstall(cp: ControlPlane, objects: KubernetesObject[]): Promise<void> {
  for (const o of objects) await must(`remove ${o.kind}`, api(cp, cp.admin, 'DELETE', `${ADMISSION}/${PATHS[o.kind!]}/${o.metadata!.name}`));
}

/** Waits until three dry-run creates in a row show the chain's mark: the API server has seen the change. */
async function settled(s: Scene, agent: Agent, want: ReturnType<typeof signature>): Promise<void> {
  let inARow = 0;
  const deadline = Date.now() + 30_000;
  while (inARow < 3) {
    if (Date.now() > deadline) throw new Error(`the chain did not become ${want}`);
    const probe = await create(s.cp, agent, secretCreation(s), true);
    inARow = probe.status === 201 && signature(probe.labels, probe.annotations) === want ? inARow + 1 : 0;
    await sleep(inARow === 0 ? 200 : 50);
  }
  await sleep(500);
}

interface Window {
  creates: number;
  failed: number;
  seconds: number;
  latencies: number[];
  cpuMs: Record<string, number>;
  /** Deed's lookups per create in the window, by resource and where they were answered (deed_lookups_total). */
  lookups?: Record<string, number>;
}

/** `inflight` creates at a time for `seconds`; CPU of each named process across the window. */
async function load(s: Scene, agent: Agent, pids: Record<string, number>, seconds: number, what: Creation): Promise<Window> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
  const self = process.cpuUsage();
  const started = performance.now();
  const end = started + seconds * 1000;
  const latencies: number[] = [];
  let failed = 0;
  let firstFailure = '';
  const worker = async () => {
    while (performance.now() < end) {
      const r = await create(s.cp, agent, what);
      if (r.status === 201) latencies.push(r.ms);
      else {
        failed++;
        firstFailure ||= `${r.status} ${r.text.slice(0, 300)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(self);
  const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid) - before[k]!]));
  cpu['load generator'] = (used.user + used.system) / 1000;
  if (firstFailure) log(`  ${failed} creates failed, the first: ${firstFailure}`);
  return { creates: latencies.length, failed, seconds: elapsed, latencies, cpuMs: cpu };
}

/** deed_lookups_total of each Deed in the chain, by `resource source`; none for other servers. */
async function lookupCounts(servers: Served[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const p of servers) {
    if (!p.logFile) continue; // the no-op server has no metrics
    const text = await metricsText(p);
    for (const m of text.matchAll(/^deed_lookups_total\{resource="([^"]*)",source="([^"]*)"\} (\d+)/gm)) counts.set(`${m[1]} from ${m[2]}`, (counts.get(`${m[1]} from ${m[2]}`) ?? 0) + Number(m[3]));
  }
  return counts;
}

function lookupPerCreate(before: Map<string, number>, after: Map<string, number>, creates: number): Record<string, number> {
  return Object.fromEntries([...after].map(([k, v]) => [k, (v - (before.get(k) ?? 0)) / Math.max(1, creates)]).filter(([, v]) => (v as number) > 0));
}


interface Phase {
  servers: Served[];
  objects: KubernetesObject[];
  mark: ReturnType<typeof signature>;
}

/** Starts what the chain calls and registers its configuration. */
async function enter(chain: Chain, s: Scene, certDir: string, policyFile: string, patchFile: string): Promise<Phase> {
  switch (chain) {
    case 'none':
      return { servers: [], objects: [], mark: 'none' };
    case 'policy':
      return { servers: [], objects: chainPolicies(DEED_NAMESPACE), mark: 'policy' };
    case 'noop':
    case 'noop-h1': {
      const noop = await startNoop(certDir, ['--patch', patchFile, ...(chain === 'noop-h1' ? ['--http1'] : [])]);
      return { servers: [noop], objects: deedWebhooks(noop.url, noop.ca), mark: 'noop' };
    }
    default: {
      const nodeArgs = flags['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', PROFILES] : [];
      const noSecrets = chain === 'deed-no-secret-cache' ? ['--no-cache-secrets'] : [];
      const deed = await startDeed({ entry: 'dist', certDir, policy: policyFile, nodeArgs, extraArgs: ['--kubeconfig', s.deedKubeconfig, '--deed-namespace', DEED_NAMESPACE, ...noSecrets] });
      await cacheCurrent(deed.logFile!);
      return { servers: [deed], objects: deedWebhooks(deed.url, deed.ca, { mutatingOnly: chain === 'deed-mutating', defaultTwoCalls: chain === 'deed-default-two-calls', ...variantOf(chain), ...(chain === 'deed-no-conditions' ? { conditions: 'none' as const } : chain === 'deed-one-condition' ? { conditions: 'one' as const } : {}) }), mark: 'deed' };
    }
  }
}

async function main(): Promise<void> {
  const found = assets();
  if ('missing' in found) throw new Error(`${found.missing}: see test/e2e/README.md`);
  if (!flags['no-build']) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  log(`Deed chain benchmark  ${new Date().toISOString()}  node ${process.version}  ${cpus().length} cores`);
  log(`command: npm run bench:chain -- ${process.argv.slice(2).join(' ')}`.trimEnd());
  const creating = controllerPods ? "Pod creates by the ReplicaSet controller's service account, for a ReplicaSet the runner created" : services ? 'headless Service creates (the default row) as a pod-bound runner' : 'Secret creates as a pod-bound runner';
  log(`${creating}, ${inflight} in flight, HTTP/1.1 keep-alive to kube-apiserver; ${rounds} alternating round(s) of ${durationS} s per chain after a ${warmupS} s warm-up`);
  if (flags['cpu-prof']) mkdirSync(PROFILES, { recursive: true });
  const cp = await startControlPlane(found.bin, false);
  try {
    const s = await scene(cp);
    const certDir = join(s.dir, 'certs');
    const policyFile = join(s.dir, 'policy.yaml');
    writeFileSync(policyFile, `${E2E_POLICY}attestation:\n  keyFile: ${join(s.dir, 'attestation.key')}\n`);
    writeFileSync(join(s.dir, 'attestation.key'), 'bench-attestation-key-0123456789abcdef0123456789', { mode: 0o600 });
    const patchFile = join(s.dir, 'patch.json');
    writeFileSync(patchFile, JSON.stringify(stampPatch(s.runner)));
    // The first start generates the certificates the no-op server shares.
    await (await startDeed({ entry: 'dist', certDir, policy: policyFile })).stop();
    const agent = new Agent({ keepAlive: true, maxSockets: inflight });
    const pids: Record<string, number> = { 'kube-apiserver': pidOf(cp, 'kube-apiserver'), etcd: pidOf(cp, 'etcd') };
    const results = new Map<Chain, Window[]>(chains.map((c) => [c, []]));
    const loads: number[] = [];
    for (let round = 0; round < rounds; round++)
      for (const chain of chains) {
        const phase = await enter(chain, s, certDir, policyFile, patchFile);
        try {
          await install(cp, phase.objects);
          await settled(s, agent, phase.mark);
          const servers = Object.fromEntries(phase.servers.map((p, i) => [phase.servers.length > 1 ? `webhook server ${i}` : 'webhook server', p.child.pid!]));
          const what = controllerPods ? await podCreation(s) : services ? serviceCreation(s) : secretCreation(s);
          await load(s, agent, { ...pids, ...servers }, warmupS, what);
          const lookupsBefore = await lookupCounts(phase.servers);
          const w = await load(s, agent, { ...pids, ...servers }, durationS, what);
          w.lookups = lookupPerCreate(lookupsBefore, await lookupCounts(phase.servers), w.creates + w.failed);
          results.get(chain)!.push(w);
          loads.push(loadavg()[0]!);
          log(`  round ${round + 1} ${chain.padEnd(20)} ${fmt(w.creates / w.seconds).padStart(5)} creates/s  ${fmt(total(w) / w.creates, 2)} ms CPU per create  load ${fmt(loadavg()[0]!, 2)}`);
          for (const p of phase.servers) if (p.logFile) log(`    ${reviewTimes(p.logFile)}`);
        } finally {
          await uninstall(cp, phase.objects);
          for (const p of phase.servers) await p.stop();
        }
        // Every phase starts from an empty namespace: the same etcd, and the same list for Deed's cache to fill.
        await must('delete the Secrets', api(cp, cp.admin, 'DELETE', `/api/v1/namespaces/${NAMESPACE}/secrets`));
        if (services) await deleteEach(cp, `/api/v1/namespaces/${NAMESPACE}/services`); // Services have no collection delete
        if (controllerPods) {
          await must('delete the pods', api(cp, cp.admin, 'DELETE', `/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=${encodeURIComponent('bench.deed.dev/pod=controller-made')}`));
          await must('delete the ReplicaSets', api(cp, cp.admin, 'DELETE', `/apis/apps/v1/namespaces/${NAMESPACE}/replicasets`));
        }
      }
    agent.destroy();
    report(results, loads);
  } finally {
    await cp.stop();
  }
}

/** Deletes every object listed at `path`, one request each, `inflight` at a time. */
async function deleteEach(cp: ControlPlane, path: string): Promise<void> {
  const names = ((await must(`list ${path}`, api(cp, cp.admin, 'GET', path))).body as { items: Array<{ metadata: { name: string } }> }).items.map((i) => i.metadata.name);
  const next = () => names.pop();
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      for (let name = next(); name !== undefined; name = next()) await must(`delete ${path}/${name}`, api(cp, cp.admin, 'DELETE', `${path}/${name}`));
    }),
  );
}

/** Waits until Deed's lookup cache holds every kind it watches: from then on a review reads nothing. */
async function cacheCurrent(logFile: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  const current = () => readFileSync(logFile, 'utf8').split('\n').filter((l) => l.includes('"msg":"lookup cache current"')).length;
  while (current() < 4) { // namespaces, pods, claims, Secrets
    if (Date.now() > deadline) throw new Error(`Deed's lookup cache did not become current:\n${readFileSync(logFile, 'utf8')}`);
    await sleep(100);
  }
}

/** Deed's own time per review, from its review log lines: what the API server waited for. */
function reviewTimes(logFile: string): string {
  const byWebhook = new Map<string, number[]>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"msg":"review"')) continue;
    const r = JSON.parse(line) as { webhook: string; durationMs: number; httpVersion?: string };
    byWebhook.set(`${r.webhook} over HTTP/${r.httpVersion}`, [...(byWebhook.get(`${r.webhook} over HTTP/${r.httpVersion}`) ?? []), r.durationMs]);
  }
  return [...byWebhook].map(([k, ms]) => `${k}: ${ms.length} reviews, median ${fmt(median(ms), 3)} ms in Deed`).join('; ');
}

function pidOf(cp: ControlPlane, name: string): number {
  const pid = cp.pids[name];
  if (pid === undefined) throw new Error(`no pid for ${name}`);
  return pid;
}

const total = (w: Window) => Object.values(w.cpuMs).reduce((a, b) => a + b, 0);

function report(results: Map<Chain, Window[]>, loads: number[]): void {
  const summary = [...results].map(([chain, ws]) => {
    const creates = ws.reduce((a, w) => a + w.creates, 0);
    const lat = Float64Array.from(ws.flatMap((w) => w.latencies)).sort();
    const per: Record<string, number> = {};
    for (const w of ws) for (const [k, v] of Object.entries(w.cpuMs)) per[k] = (per[k] ?? 0) + v;
    for (const k of Object.keys(per)) per[k] = per[k]! / creates;
    const lookups: Record<string, number> = {};
    for (const w of ws) for (const [k, v] of Object.entries(w.lookups ?? {})) lookups[k] = (lookups[k] ?? 0) + v / ws.length;
    return { chain, rate: median(ws.map((w) => w.creates / w.seconds)), p50: percentile(lat, 50), p99: percentile(lat, 99), failed: ws.reduce((a, w) => a + w.failed, 0), per, cpu: Object.values(per).reduce((a, b) => a + b, 0), lookups };
  });
  const base = summary.find((r) => r.chain === 'none');
  const policy = summary.find((r) => r.chain === 'policy');
  log(`\nload average (1 min) during the rounds: ${fmt(Math.min(...loads), 2)} to ${fmt(Math.max(...loads), 2)}, median ${fmt(median(loads), 2)}`);
  log('CPU per create, ms (all rounds pooled); ratios are the no-admission chain\'s CPU per create over this chain\'s (1.00 = free), and throughput over no admission\'s');
  const cols = ['kube-apiserver', 'etcd', 'webhook server', 'load generator'];
  log(`${'chain'.padEnd(20)} ${'creates/s'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${cols.map((c) => c.padStart(c.length)).join(' ')} ${'total'.padStart(6)} ${'cpu ratio'.padStart(9)} ${'rate ratio'.padStart(10)} ${'failed'.padStart(6)}`);
  for (const r of summary)
    log(`${r.chain.padEnd(20)} ${fmt(r.rate).padStart(9)} ${fmt(r.p50, 2).padStart(7)} ${fmt(r.p99, 2).padStart(7)} ${cols.map((c) => fmt(r.per[c] ?? 0, 3).padStart(c.length)).join(' ')} ${fmt(r.cpu, 3).padStart(6)} ${base ? fmt(base.cpu / r.cpu, 2).padStart(9) : ''} ${base ? fmt(r.rate / base.rate, 2).padStart(10) : ''} ${String(r.failed).padStart(6)}`);
  for (const r of summary.filter((x) => x.chain !== 'none' && base !== undefined)) {
    const reads = Object.entries(r.lookups).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ');
    log(`${r.chain}: latency over no admission's, p50 +${fmt(r.p50 - base!.p50, 2)} ms, p99 +${fmt(r.p99 - base!.p99, 2)} ms${reads ? `; Deed's lookups per create: ${reads}` : ''}`);
  }
  if (policy)
    for (const r of summary.filter((x) => x.chain !== 'none' && x.chain !== 'policy'))
      log(`${r.chain}: CPU per create of the in-process policy pair over this chain's ${fmt(policy.cpu / r.cpu, 2)}; throughput ${fmt(r.rate / policy.rate, 2)} of the policy pair's`);
}

await main();
