// `npx tsx bench/audit.ts [--objects 10000] [--namespaces 10] [--page-size 500]`: the cost
// of one `deed audit --write-reports` over many objects, in the end-to-end control plane
// (etcd and kube-apiserver from KUBEBUILDER_ASSETS). Creates the objects straight in the
// API server (no webhook: they carry stamps signed with the bench's key, as Deed would
// have written them), a quarter each of pods, Secrets, NetworkPolicies and PVCs, spread
// over opted-in namespaces with a live runner each; then runs the compiled CLI under
// /usr/bin/time and prints its duration and peak RSS.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchArgs } from './args.js';
import { signV1, type AttestedStamps } from '../src/policy/stamps/attestation.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { policyReportCrd } from '../src/install/policy-report-crd.js';
import { api, type Identity } from '../test/e2e/client.js';
import { assets, startControlPlane, writeKubeconfig } from '../test/e2e/control-plane.js';
import { ROOT } from './processes.js';

const { values: flags } = benchArgs(import.meta.url, {
  options: {
    objects: { type: 'string', default: '10000' },
    namespaces: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '16' },
    'no-build': { type: 'boolean', default: false },
  },
});
const total = Number(flags.objects);
const namespaces = Number(flags.namespaces);
const KEYS = stampKeys('deed.dev');
const KEY = Buffer.from('bench-audit-attestation-key-0123456789abcdef');
const KINDS = ['Pod', 'Secret', 'NetworkPolicy', 'PersistentVolumeClaim'] as const;
const PATH = {
  Pod: (ns: string) => `/api/v1/namespaces/${ns}/pods`,
  Secret: (ns: string) => `/api/v1/namespaces/${ns}/secrets`,
  NetworkPolicy: (ns: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`,
  PersistentVolumeClaim: (ns: string) => `/api/v1/namespaces/${ns}/persistentvolumeclaims`,
};

function body(kind: (typeof KINDS)[number], ns: string, name: string, runner: { name: string; uid: string }) {
  const nonce = createHash('sha256').update(`${ns}/${kind}/${name}`).digest('hex');
  const owner = `${ns}/${runner.name}`;
  const stamps: AttestedStamps = { kind, namespace: ns, environment: 'alpha', ownerUid: runner.uid, owner, nonce };
  const metadata = {
    name,
    labels: { [KEYS.managed]: 'true', [KEYS.environment]: 'alpha', [KEYS.ownerUid]: runner.uid },
    annotations: { [KEYS.owner]: owner, [KEYS.createNonce]: nonce, [KEYS.attestation]: signV1(KEY, stamps) },
  };
  switch (kind) {
    case 'Pod':
      return { apiVersion: 'v1', kind, metadata, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/agent:1' }] } };
    case 'Secret':
      return { apiVersion: 'v1', kind, metadata, stringData: { token: 'not-a-real-credential' } };
    case 'NetworkPolicy':
      return { apiVersion: 'networking.k8s.io/v1', kind, metadata, spec: { podSelector: {}, policyTypes: ['Egress'] } };
    case 'PersistentVolumeClaim':
      return { apiVersion: 'v1', kind, metadata, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  }
}

async function main(): Promise<void> {
  const found = assets();
  if ('missing' in found) throw new Error(`${found.missing}: export KUBEBUILDER_ASSETS (see test/e2e/README.md)`);
  if (!flags['no-build']) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  const cp = await startControlPlane(found.bin, false);
  try {
    const admin: Identity = { ...cp.admin, kubeconfig: join(cp.dir, 'admin.kubeconfig') };
    writeKubeconfig(admin.kubeconfig!, cp.server, cp.ca, admin.token);
    const call = async (method: string, path: string, payload?: unknown) => {
      const a = await api(cp, admin, method, path, payload);
      if (a.status >= 300) throw new Error(`${method} ${path}: ${a.status} ${a.text.slice(0, 300)}`);
      return a;
    };
    await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', policyReportCrd());
    for (let tries = 0; (await api(cp, admin, 'GET', '/apis/wgpolicyk8s.io/v1alpha2/policyreports')).status !== 200; tries++) {
      if (tries > 150) throw new Error('the PolicyReport API is not served');
      await new Promise((r) => setTimeout(r, 200));
    }

    const work: Array<() => Promise<unknown>> = [];
    for (let n = 0; n < namespaces; n++) {
      const ns = `audit-bench-${n}`;
      await call('POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { 'deed.dev/sandbox': 'enabled' } } });
      await call('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'default' } });
      const runner = await call('POST', PATH.Pod(ns), { metadata: { name: 'runner-0' }, spec: { containers: [{ name: 'runner', image: 'runner:1' }] } });
      const owner = { name: 'runner-0', uid: runner.body.metadata.uid as string };
      for (let i = n; i < total; i += namespaces) {
        const kind = KINDS[i % KINDS.length]!;
        work.push(() => call('POST', PATH[kind](ns), body(kind, ns, `obj-${i}`, owner)));
      }
    }
    const createStart = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: Number(flags.concurrency) }, async () => {
        while (next < work.length) await work[next++]!();
      }),
    );
    console.log(`created ${work.length} objects in ${namespaces} namespaces in ${((Date.now() - createStart) / 1000).toFixed(1)} s`);

    const keyFile = join(cp.dir, 'bench.key');
    writeFileSync(keyFile, KEY);
    const policyFile = join(cp.dir, 'policy.yaml');
    writeFileSync(policyFile, `labelPrefix: deed.dev\nenvironments:\n  - id: alpha\n    serviceAccounts: ["audit-bench-0:runner"]\nattestation:\n  keyFile: ${keyFile}\n`);
    // The second run caps the V8 heap: it completes only if memory stays flat in the number of
    // objects (V8 otherwise grows the heap lazily, which inflates peak RSS without a leak).
    for (const [round, nodeFlags] of [[1, []], [2, ['--max-old-space-size=64']]] as const) {
      // %M: peak resident set size in KiB; %e: elapsed seconds.
      const run = spawnSync('/usr/bin/time', ['-f', 'time: %M %e', process.execPath, ...nodeFlags, join(ROOT, 'bin/deed.js'), 'audit', '--kubeconfig', admin.kubeconfig!, '--config', policyFile, '--write-reports', '--quiet', '-o', 'json'], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      if (run.status !== 0) throw new Error(`deed audit exited ${run.status}: ${run.stderr}`);
      const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, number>;
      const [, rssKiB, elapsed] = /time: (\d+) ([\d.]+)/.exec(run.stderr)!;
      console.log(
        `run ${round}${nodeFlags.length > 0 ? ` (${nodeFlags.join(' ')})` : ''}: ${summary.objects} objects judged in ${summary.durationSeconds} s (process ${elapsed} s), peak RSS ${(Number(rssKiB) / 1024).toFixed(0)} MiB; ` +
          `pass ${summary.pass}, fail ${summary.fail}, warn ${summary.warn}, error ${summary.error}, skip ${summary.skip}; reports written ${summary.reportsWritten}`,
      );
    }
  } finally {
    await cp.stop();
  }
}

await main();
