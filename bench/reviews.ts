// The reviews the server benchmarks send, and the cluster they are judged against: the
// runner's 9.1 KB pod at /mutate (stamped: a patch) and at /admit (stamped and judged in one
// call), at /validate the captured final pod as the running Deed stamps it, whose workspace
// claim Deed must find (in its lookup cache, as in a cluster) to allow it, and at /validate
// the runner's label UPDATE of that stamped pod. Each body's verdict is checked before it is timed
// and on every answer under load, so a bench cannot time a denial it labels an allowance.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import jsonpatch, { type Operation } from 'fast-json-patch';
import type { KubeObject } from '../src/admission/types.js';
import { startBenchCluster, type BenchCluster } from './cluster.js';
import { ROOT, type Served } from './processes.js';

const FIXTURES = join(ROOT, 'test/fixtures/admission');
/** Deed's own namespace in the bench cluster (excluded from the review scope, as installed). */
export const DEED_NAMESPACE = 'deed-system';

/** The reviews by name: what `--review` picks in bench/compare.ts and bench/ceilings.ts. */
export const REVIEW_NAMES = ['mutate', 'validate', 'admit', 'label-update'] as const;
export type ReviewName = (typeof REVIEW_NAMES)[number];

export interface BenchReview {
  name: ReviewName;
  path: '/mutate' | '/validate' | '/admit';
  body: string;
  uid: string;
  /** What every answer must say: allowed, and for /mutate with a patch. */
  expect: 'patched' | 'allowed';
  /**
   * Makes `body` current again: a stamped pod's expiry must be one its admission could
   * have written moments ago (the reinvocation window), so the /validate pod is stamped
   * afresh before each round; an older copy is refused as copied stamps.
   */
  refresh(): Promise<void>;
}

export function post(server: Served, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', servername: 'localhost', port: server.port, path, method: 'POST', ca: server.ca, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The cluster Deed reads in the benches: the fixtures' sandbox namespaces opted in. */
export function benchCluster(): Promise<BenchCluster> {
  return startBenchCluster({ 'sandbox-a': { 'deed.dev/sandbox': 'enabled' }, 'sandbox-b': { 'deed.dev/sandbox': 'enabled' }, [DEED_NAMESPACE]: {} });
}

/**
 * `deed serve`'s arguments to read that cluster (its kubeconfig written to `file`). Deed's own
 * namespace goes by `--namespace`, the deprecated spelling of `--deed-namespace`: bench/compare.ts
 * also starts checkouts from before 2026-12-03, which know only that one.
 */
export function clusterArgs(cluster: BenchCluster, file: string): string[] {
  cluster.writeKubeConfig(file);
  return ['--kubeconfig', file, '--namespace', DEED_NAMESPACE];
}

interface Answer {
  uid?: string;
  allowed?: boolean;
  patch?: string;
  status?: { message?: string };
}

function answerOf(text: string): Answer {
  return (JSON.parse(text) as { response?: Answer }).response ?? {};
}

/** Whether one answer under load is the verdict the body was chosen for (autocannon's verifyBody). */
export function verdictCheck(r: BenchReview): (text: string) => boolean {
  const uid = `"uid":"${r.uid}"`;
  return (text) => text.includes(uid) && text.includes('"allowed":true') && (r.expect !== 'patched' || text.includes('"patch":"'));
}

function stampedBy(object: KubeObject, answer: Answer): KubeObject {
  if (answer.patch === undefined) return object;
  return jsonpatch.applyPatch(object, JSON.parse(Buffer.from(answer.patch, 'base64').toString('utf8')) as Operation[], false, false).newDocument;
}

function fixture(name: string): { request: { uid: string; object: KubeObject } } {
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as { request: { uid: string; object: KubeObject } };
}

/**
 * The bench's reviews against `deed`, which reads `cluster`: the workspace claim the pods
 * mount is created in the cluster as Deed stamps it (its /mutate answer applied), and the
 * /validate body is the final pod Deed stamped. Throws unless each body gets its verdict.
 */
export async function benchReviews(deed: Served, cluster: BenchCluster): Promise<BenchReview[]> {
  const claim = fixture('mutate-create-pvc-by-runner.json');
  // The pod mounts it as its workspace: a workspace claim says so when it is created.
  claim.request.object.metadata.labels = { ...claim.request.object.metadata.labels, 'deed.dev/workspace': 'true' };
  const claimAnswer = answerOf((await post(deed, '/mutate', JSON.stringify(claim))).text);
  if (claimAnswer.allowed !== true || claimAnswer.patch === undefined) throw new Error(`the workspace claim was not stamped: ${claimAnswer.status?.message}`);
  cluster.add('persistentvolumeclaims', stampedBy(claim.request.object, claimAnswer));

  const mutateText = readFileSync(join(FIXTURES, 'mutate-create-pod-by-runner.json'), 'utf8');
  const stampedPod = async () => {
    const pod = fixture('validate-create-pod-by-runner.json');
    pod.request.object = stampedBy(pod.request.object, answerOf((await post(deed, '/mutate', JSON.stringify(pod))).text));
    return JSON.stringify(pod, null, 2); // indented like the fixture files: the same ~9 KB class as the /mutate body
  };
  const validate = await validateReview('validate', 'validate-create-pod-by-runner.json', stampedPod);
  // The runner's label UPDATE (the captured review) of the pod as Deed stamped it: both sides carry its stamps.
  const labelled = async () => {
    const update = JSON.parse(readFileSync(join(FIXTURES, 'validate-update-pod-label-by-runner.json'), 'utf8')) as { request: { object: KubeObject; oldObject: KubeObject } };
    const pod = (JSON.parse(await stampedPod()) as { request: { object: KubeObject } }).request.object;
    update.request.oldObject = pod;
    update.request.object = { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, tier: 'gold' } } };
    return JSON.stringify(update, null, 2);
  };
  const labelUpdate = await validateReview('label-update', 'validate-update-pod-label-by-runner.json', labelled);
  const mutateUid = fixture('mutate-create-pod-by-runner.json').request.uid;
  const reviews: BenchReview[] = [
    { name: 'mutate', path: '/mutate', body: mutateText, uid: mutateUid, expect: 'patched', refresh: async () => {} },
    validate,
    { name: 'admit', path: '/admit', body: mutateText, uid: mutateUid, expect: 'patched', refresh: async () => {} },
    labelUpdate,
  ];
  for (const r of reviews) await expectVerdict(deed, r);
  return reviews;
}

/** A /validate review allowed as `make` writes its body, written afresh by each refresh; its uid is the fixture's. */
async function validateReview(name: ReviewName, fixtureName: string, make: () => Promise<string>): Promise<BenchReview> {
  const review: BenchReview = { name, path: '/validate', body: await make(), uid: fixture(fixtureName).request.uid, expect: 'allowed', refresh: async () => void (review.body = await make()) };
  return review;
}

/** Throws unless `deed` gives the review its verdict within 5 s (the claim reaches its cache through its watch). */
export async function expectVerdict(deed: Served, r: BenchReview): Promise<void> {
  let answer = '';
  for (let i = 0; i < 100; i++) {
    answer = (await post(deed, `${r.path}?timeout=10s`, r.body)).text;
    if (verdictCheck(r)(answer)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${r.path}: expected ${r.expect}, Deed answered ${answer.slice(0, 600)}`);
}

/** `deed_lookups_total` from Deed's /metrics: where the lookups under load were answered. */
/** Deed's Prometheus metrics, as its /metrics serves them. */
export function metricsText(deed: Served): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', servername: 'localhost', port: deed.port, path: '/metrics', ca: deed.ca, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    req.on('error', reject);
    req.end();
  });
}

export async function lookupCounts(deed: Served): Promise<string> {
  return (await metricsText(deed))
    .split('\n')
    .filter((l) => l.startsWith('deed_lookups_total{'))
    .map((l) => l.replace('deed_lookups_total', ''))
    .join(', ');
}
