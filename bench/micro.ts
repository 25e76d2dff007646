// Per-stage cost of one review, in process, without TLS or HTTP: where a review's CPU goes.
// Usage: npx tsx bench/micro.ts   (prints microseconds per call; figures only)
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { decide } from '../src/admission/decide.js';
import { decodeReview, findPrototypeKey } from '../src/admission/decode.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/observability/logger.js';
import { productionContext } from '../src/admission/production-context.js';
import { singleKeyRing } from '../src/policy/stamps/key-ring.js';
import { BENCH_POLICY, ROOT } from './processes.js';
import { gatheredLookup, lookupKey, planLookups } from '../src/policy/lookup.js';
import jsonpatch, { type Operation } from 'fast-json-patch';

const text = readFileSync(join(ROOT, 'test/fixtures/admission/mutate-create-pod-by-runner.json'), 'utf8');
const ctx = productionContext(parseConfig(BENCH_POLICY), singleKeyRing(Buffer.alloc(32, 7)));
const devNull = () => pino.destination({ dest: openSync('/dev/null', 'w'), sync: true });

function time(name: string, n: number, f: () => void): void {
  for (let i = 0; i < Math.min(n, 2000); i++) f(); // warm-up: let the JIT settle
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  const us = Number(process.hrtime.bigint() - started) / n / 1000;
  process.stdout.write(`${name.padEnd(44)} ${us.toFixed(1).padStart(7)} µs\n`);
}

const body = JSON.parse(text) as unknown;
const line = { webhook: 'mutate', uid: 'u', kind: 'Pod', namespace: 'sandbox-a', name: 'sbx-1', operation: 'CREATE', requester: 'system:serviceaccount:sandbox-a:runner', dryRun: false, decision: 'patched', patchBytes: 1400, durationMs: 0.05 };
const logger = createLogger(devNull());
const reviewLog = logger.child({}, { redact: [] });

process.stdout.write(`per-call cost, ${(text.length / 1024).toFixed(1)} KB pod review (node ${process.version})\n`);
time('JSON.parse of the body', 20_000, () => JSON.parse(text));
time('findPrototypeKey', 20_000, () => findPrototypeKey(body));
time('decodeReview', 20_000, () => decodeReview(body));
time('decide(mutate), body parsed fresh each time', 20_000, () => decide('mutate', JSON.parse(text), ctx));
time('log line, redacting logger', 20_000, () => logger.info(line, 'review'));
time('log line, review logger (no redaction)', 20_000, () => reviewLog.info(line, 'review'));

// The reviews stamped workloads and the default row add: a runner's Deployment and
// Service (a kind of the default row) at CREATE (both webhooks, the validating one on the stamped object), and a
// DELETE of the stamped Deployment by another environment (refused).
const runnerReview = JSON.parse(text) as { request: Record<string, unknown> & { object: Record<string, unknown>; userInfo: unknown } };
const asKind = (group: string, kind: string, resource: string, object: Record<string, unknown>) => {
  const r = structuredClone(runnerReview);
  r.request = { ...r.request, kind: { group, version: 'v1', kind }, resource: { group, version: 'v1', resource }, requestKind: undefined, requestResource: undefined, object };
  return r;
};
const meta = { name: 'lab', namespace: 'sandbox-a' };
const template = { metadata: { labels: { app: 'lab' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] } };
const deployment = asKind('apps', 'Deployment', 'deployments', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta, spec: { replicas: 1, selector: { matchLabels: { app: 'lab' } }, template } });
const service = asKind('', 'Service', 'services', { apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { selector: { app: 'lab' }, ports: [{ port: 80 }] } });
const stampedBy = (r: typeof deployment) => {
  const d = decide('mutate', structuredClone(r), ctx);
  if (d.kind !== 'review' || !d.response.response.patch) throw new Error('not stamped');
  // The whole patch, as the API server applies it (the stamps, and a selector's scope).
  const ops = JSON.parse(Buffer.from(d.response.response.patch, 'base64').toString('utf8')) as Operation[];
  const object = jsonpatch.applyPatch(structuredClone(r.request.object), ops).newDocument;
  return { ...r, request: { ...r.request, object } };
};
const deploymentStamped = stampedBy(deployment);
const serviceStamped = stampedBy(service);
const janitorDelete = { ...deploymentStamped, request: { ...deploymentStamped.request, operation: 'DELETE', object: null, oldObject: deploymentStamped.request.object, userInfo: { username: 'system:serviceaccount:sandbox-b:janitor', groups: ['system:authenticated'], extra: {} } } };
// Leases are stamped too: each renewal in an opted-in namespace is a validating review.
// alpha's run lease renewed by alpha, and a tenant app's leader-election Lease (no stamps)
// renewed by the app, a principal of no environment.
const leaseSpec = (renewTime: string) => ({ holderIdentity: 'runner-0', leaseDurationSeconds: 15, renewTime });
const lease = asKind('coordination.k8s.io', 'Lease', 'leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'run-42', namespace: 'sandbox-a' }, spec: leaseSpec('2026-11-29T15:24:34.000000Z') });
const renewalOf = (stored: Record<string, unknown>, userInfo: unknown) => {
  const next = { ...structuredClone(stored), spec: leaseSpec('2026-11-29T15:24:36.000000Z') };
  return { ...lease, request: { ...lease.request, operation: 'UPDATE', object: next, oldObject: stored, userInfo } };
};
const leaseRenewal = renewalOf(stampedBy(lease).request.object, runnerReview.request.userInfo);
const appLease = { ...structuredClone(lease.request.object), metadata: { name: 'operator-leader', namespace: 'sandbox-a' } };
const appRenewal = renewalOf(appLease, { username: 'system:serviceaccount:sandbox-a:operator', groups: ['system:authenticated'], extra: {} });
const texts = {
  deployment: JSON.stringify(deployment),
  deploymentStamped: JSON.stringify(deploymentStamped),
  service: JSON.stringify(service),
  serviceStamped: JSON.stringify(serviceStamped),
  janitorDelete: JSON.stringify(janitorDelete),
  leaseRenewal: JSON.stringify(leaseRenewal),
  appRenewal: JSON.stringify(appRenewal),
};
// Each body is decided as described, or the figures would time another path.
const expect = (name: keyof typeof texts, webhook: 'mutate' | 'validate', allowedWant: boolean) => {
  const d = decide(webhook, JSON.parse(texts[name]), ctx);
  if (d.kind !== 'review' || d.response.response.allowed !== allowedWant) throw new Error(`${name}: not ${allowedWant ? 'allowed' : 'refused'}`);
};
expect('deployment', 'mutate', true);
expect('deploymentStamped', 'validate', true);
expect('janitorDelete', 'validate', false);
expect('service', 'mutate', true);
expect('serviceStamped', 'validate', true);
expect('leaseRenewal', 'validate', true);
expect('appRenewal', 'validate', true);
time('decide(mutate), Deployment CREATE', 20_000, () => decide('mutate', JSON.parse(texts.deployment), ctx));
time('decide(validate), stamped Deployment CREATE', 20_000, () => decide('validate', JSON.parse(texts.deploymentStamped), ctx));
time('decide(validate), Deployment DELETE (refused)', 20_000, () => decide('validate', JSON.parse(texts.janitorDelete), ctx));
time('decide(mutate), Service CREATE (default row)', 20_000, () => decide('mutate', JSON.parse(texts.service), ctx));
time('decide(validate), stamped Service CREATE', 20_000, () => decide('validate', JSON.parse(texts.serviceStamped), ctx));
time('decide(validate), run Lease renewal', 20_000, () => decide('validate', JSON.parse(texts.leaseRenewal), ctx));
time('decide(validate), unstamped Lease renewal', 20_000, () => decide('validate', JSON.parse(texts.appRenewal), ctx));

// A pod a workload controller makes (src/policy/controller-made.ts): judged as its
// ReplicaSet's environment's, whose stamps come from the lookup cache (an answer already
// gathered, as the server hands the decision one). Compared with a runner's own pod above.
{
  const rsStamps = stampedBy(asKind('apps', 'ReplicaSet', 'replicasets', { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'lab-7d9', namespace: 'sandbox-a' }, spec: { replicas: 1, selector: { matchLabels: { app: 'lab' } }, template } }));
  const rsMeta = rsStamps.request.object.metadata as { labels: Record<string, string>; annotations: Record<string, string> };
  const owners = gatheredLookup(new Map([[lookupKey({ resource: 'replicasets', namespace: 'sandbox-a', name: 'lab-7d9' }), { state: 'found', metadata: { uid: 'rs-1', labels: rsMeta.labels, annotations: rsMeta.annotations } }]]), 'not cached');
  const withOwners = { ...ctx, lookup: owners };
  const controller = { username: 'system:serviceaccount:kube-system:replicaset-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} };
  const madePod = { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'lab-7d9-', namespace: 'sandbox-a', labels: { app: 'lab' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'lab-7d9', uid: 'rs-1', controller: true }] }, spec: template.spec };
  const made = asKind('', 'Pod', 'pods', madePod);
  made.request.userInfo = controller;
  const m = decide('mutate', structuredClone(made), withOwners);
  if (m.kind !== 'review' || !m.response.response.patch) throw new Error('controller-made pod: not stamped');
  const ops = JSON.parse(Buffer.from(m.response.response.patch, 'base64').toString('utf8')) as Operation[];
  const stampedPod = jsonpatch.applyPatch(structuredClone(madePod), ops).newDocument;
  const madeStamped = { ...made, request: { ...made.request, object: stampedPod } };
  const v = decide('validate', structuredClone(madeStamped), withOwners);
  if (v.kind !== 'review' || !v.response.response.allowed) throw new Error(`controller-made pod: refused (${v.kind === 'review' ? v.response.response.status?.message : v.message})`);
  const madeText = JSON.stringify(made);
  const madeStampedText = JSON.stringify(madeStamped);
  process.stdout.write(`owner reads planned per controller-made pod review: ${planLookups(made, 'mutate', ctx.policy.keys).lookups.length} (mutate), ${planLookups(madeStamped, 'validate', ctx.policy.keys).lookups.length} (validate), each answered by the cache\n`);
  time('planLookups + decide(mutate), controller-made pod', 20_000, () => {
    const b = JSON.parse(madeText) as unknown;
    planLookups(b, 'mutate', ctx.policy.keys);
    decide('mutate', b, withOwners);
  });
  time('planLookups + decide(validate), controller-made pod', 20_000, () => {
    const b = JSON.parse(madeStampedText) as unknown;
    planLookups(b, 'validate', ctx.policy.keys);
    decide('validate', b, withOwners);
  });
}

// The runner's pod at /admit, as the server decides it: the read plan (decoding, the review's
// facts, what its door needs) and the one-call judgement, its workspace claim answered from
// a gathered lookup as the cache would (stamped by Deed for alpha, as bench/reviews.ts makes it).
{
  const claim = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/admission/mutate-create-pvc-by-runner.json'), 'utf8')) as typeof deployment;
  const claimMeta = claim.request.object.metadata as { labels?: Record<string, string> };
  claimMeta.labels = { ...claimMeta.labels, 'deed.dev/workspace': 'true' };
  const stampedClaim = stampedBy(claim).request.object as { metadata: { labels: Record<string, string>; annotations: Record<string, string> } };
  const plan = planLookups(JSON.parse(text), 'admit', ctx.policy.keys, ctx.policy);
  const claims = gatheredLookup(new Map(plan.lookups.map((k) => [lookupKey(k), { state: 'found', metadata: { uid: 'claim-1', labels: stampedClaim.metadata.labels, annotations: stampedClaim.metadata.annotations } }])), 'not cached');
  const withClaims = { ...ctx, lookup: claims };
  const first = decide('admit', JSON.parse(text), withClaims);
  if (first.kind !== 'review' || !first.response.response.allowed) throw new Error(`the runner's pod at /admit: refused (${first.kind === 'review' ? first.response.response.status?.message : first.message})`);
  time('planLookups + decide(admit), runner pod', 20_000, () => {
    const b = JSON.parse(text) as unknown;
    decide('admit', b, withClaims, planLookups(b, 'admit', ctx.policy.keys, ctx.policy).decoded);
  });
}
