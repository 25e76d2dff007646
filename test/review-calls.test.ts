// How often one review enters src/policy and runs each policy function (issue 37: a review
// computes its facts once). Counted without touching the code counted: V8's precise
// coverage with call counts (block granularity, exact in optimised code too), read through
// the inspector around one review through /admit, after a warm-up review.
//
// "Enters src/policy": calls to the src/policy functions that the review route's own files
// (the server route, the deadline, decide(), break-glass) import, read from their import
// lines, so a new entry point is counted without this file naming it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { createLogger } from '../src/observability/logger.js';
import { buildApp } from '../src/server/app.js';
import type { LookupKey } from '../src/policy/lookup.js';
import type { KubeObject } from '../src/admission/types.js';
import { fixture, testContext, withObject, type Review } from './helpers.js';
import { startCounting, takeCalls, type FunctionCalls } from './policy-calls.js';
import { stamped as admittedBy } from './validate-helpers.js';

const SRC = join(import.meta.dirname, '..', 'src');
const ROUTE_FILES = ['server/app.ts', 'server/deadline.ts', 'admission/decide.ts', 'admission/break-glass.ts'];

/** `file|name` of each src/policy function the route's files import as a value. */
function routeEntries(): Set<string> {
  const out = new Set<string>();
  for (const f of ROUTE_FILES) {
    const text = readFileSync(join(SRC, f), 'utf8');
    for (const m of text.matchAll(/^import\s+\{([^}]*)\}\s+from\s+'\.\.\/policy\/([^']+)\.js';/gm)) {
      for (const raw of m[1]!.split(',')) {
        const name = raw.trim();
        if (name === '' || name.startsWith('type ')) continue;
        out.add(`${m[2]}.ts|${name.split(/\s+as\s+/)[0]}`);
      }
    }
  }
  return out;
}

/** One review through /admit, with a reader (so its reads are planned and made), counted. */
async function countAdmit(body: Review): Promise<{ calls: FunctionCalls[]; allowed: boolean }> {
  const ctx = testContext();
  const reader = { read: async (_keys: LookupKey[]) => ctx.lookup };
  const { app } = buildApp({ ctx, reader, logger: createLogger({ write: () => {} } as unknown as DestinationStream) });
  const session = await startCounting();
  try {
    await app.inject({ method: 'POST', url: '/admit?timeout=10s', payload: body }); // warm-up: module loading, first-call paths
    await takeCalls(session);
    const res = await app.inject({ method: 'POST', url: '/admit?timeout=10s', payload: body });
    const calls = await takeCalls(session);
    return { calls, allowed: (JSON.parse(res.body) as { response: { allowed: boolean } }).response.allowed };
  } finally {
    session.disconnect();
    await app.close();
  }
}

const countOf = (calls: FunctionCalls[], file: string, name: string) => calls.filter((c) => c.file === file && c.name === name).reduce((n, c) => n + c.count, 0);

function entries(calls: FunctionCalls[]): number {
  const route = routeEntries();
  return calls.filter((c) => route.has(`${c.file}|${c.name}`)).reduce((n, c) => n + c.count, 0);
}

/**
 * The functions that compute a review's facts or a whole step of its decision, and how often
 * each may run in one review. 1 is the target; a higher ceiling is today's count,
 * kept so the number can only go down, with the reason it is not 1 yet.
 */
type Ceilings = Record<string, number>;

function assertCeilings(calls: FunctionCalls[], ceilings: Ceilings): void {
  const over = Object.entries(ceilings).flatMap(([key, max]) => {
    const [file, name] = key.split('|') as [string, string];
    const n = countOf(calls, file, name);
    return n > max ? [`${name} (${file}) ran ${n} times, at most ${max} expected`] : [];
  });
  assert.deepEqual(over, []);
}

describe('one review computes its facts once (issue 37)', () => {
  test('a runner pod CREATE through /admit', async () => {
    const { calls, allowed } = await countAdmit(fixture('mutate-create-pod-by-runner.json'));
    assert.equal(allowed, true);
    // planLookups (which builds the review's facts), followUpLookups, mutateAndJudge.
    assert.ok(entries(calls) <= 3, `entered src/policy ${entries(calls)} times`);
    assertCeilings(calls, {
      'door-reviews.ts|reviewFacts': 1,
      'doors/door.ts|doorOf': 1,
      'requester/identity.ts|resolveRequester': 1,
      'rules/out-of-scope.ts|outOfScope': 1,
      'create-gate.ts|kindMismatch': 1,
      'create-gate.ts|creatorIdentity': 1,
      'controller-made.ts|isWorkloadController': 1,
      'door-reviews.ts|judgedWhole': 1,
      'lookup.ts|lookupsNeeded': 1,
      'mutate.ts|stampReview': 1,
      'validate.ts|judgeReview': 1,
      'mutate.ts|mutate': 0, // the handlers of the other webhooks: admit runs stampReview and judgeReview itself
      'validate.ts|validate': 0,
      // Whose the workspace claim it mounts is (its environment; whether it is a workspace,
      // asked twice) is worked out once, and so its stamps verified once (was 3 with the pod's own).
      'ownership.ts|ownershipOf': 1,
      'stamps/key-ring.ts|verifyStamps': 2, // the pod's own stamps, once; the claim's, once (was 4)
      // What the pod names, walked once by the read plan; the judged pod's (without the token
      // volume the patch takes out) derived from it (pod/pod-names.ts).
      'pod/claim-environment.ts|podClaims': 1,
      'pod/named-references.ts|podReferences': 1,
      // The create gate, worked out by the stamping and kept for the judgement of the object
      // as Deed's patch leaves it (review-facts.ts createGateOf; was 2).
      'create-gate.ts|createIdentity': 1,
      // The judgement's findings: the stamping found none, so had nothing to enforce (was 2).
      'rules/enforcement.ts|enforce': 1,
    });
  });

  test('a runner Deployment CREATE through /admit', async () => {
    const spec = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] };
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'lab', namespace: 'sandbox-a' }, spec: { replicas: 1, selector: { matchLabels: { app: 'lab' } }, template: { metadata: { labels: { app: 'lab' } }, spec } } };
    const body = withObject(fixture('mutate-create-pod-by-runner.json'), deployment as KubeObject, {
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      name: 'lab',
    });
    const { calls, allowed } = await countAdmit(body);
    assert.equal(allowed, true);
    // planLookups, mutateAndJudge, and gatherLookups (counted twice: it resumes after its read): a Deployment
    // reads the HPAs of its namespace that name it (reference.live-reader), which the pod above does not.
    assert.ok(entries(calls) <= 4, `entered src/policy ${entries(calls)} times`);
    assertCeilings(calls, {
      'door-reviews.ts|reviewFacts': 1,
      'doors/door.ts|doorOf': 1,
      'requester/identity.ts|resolveRequester': 1, // was 4
      'rules/out-of-scope.ts|outOfScope': 1,
      'create-gate.ts|kindMismatch': 1,
      'create-gate.ts|creatorIdentity': 1,
      'controller-made.ts|isWorkloadController': 1,
      'mutate.ts|stampReview': 1,
      'validate.ts|judgeReview': 1,
      'workload/review.ts|mutateWorkload': 1,
      'workload/review.ts|validateWorkload': 1,
      'stamps/key-ring.ts|verifyStamps': 1,
      // What the templates name, walked once by the read plan and kept for the judgement of
      // the templates Deed's patch left as they were (workload/review.ts workloadNamesOf; was 2).
      'workload/review.ts|workloadClaims': 1,
      'workload/review.ts|workloadReferences': 1,
      // The judgement's findings alone: the templates' stamping and the workload's found none (was 3).
      'rules/enforcement.ts|enforce': 1,
      // Not yet 1: createIdentity still runs where each step asks (mutateWorkload, the stamping
      // of the templates and of the workload, the workload's own stamps, its selector, its
      // templates), each only the label check of a requester of no environment on the given
      // identity (the workload's stamping takes the review's gate, which nothing else asks for yet);
      // the templates' claims are walked once for what they name and once for which are workspaces.
      'create-gate.ts|createIdentity': 6,
      'pod/claim-environment.ts|podClaims': 2, // was 3
      'pod/named-references.ts|podReferences': 1, // was 2
    });
  });

  test("a runner's label UPDATE of its stamped pod through /validate: the pod rules, which read nothing a label changes, are not run on either side", async () => {
    const ctx = testContext();
    const { app } = buildApp({ ctx, reader: { read: async () => ctx.lookup }, logger: createLogger({ write: () => {} } as unknown as DestinationStream) });
    // Both sides as Deed stamped the pod, so the rules of a managed pod apply (introduced findings only).
    const body = fixture('validate-update-pod-label-by-runner.json');
    const pod = admittedBy(body, body.request.oldObject);
    body.request.oldObject = pod;
    body.request.object = { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, tier: 'gold' } } };
    const session = await startCounting();
    try {
      await app.inject({ method: 'POST', url: '/validate?timeout=10s', payload: body });
      await takeCalls(session);
      const res = await app.inject({ method: 'POST', url: '/validate?timeout=10s', payload: body });
      const calls = await takeCalls(session);
      assert.equal((JSON.parse(res.body) as { response: { allowed: boolean } }).response.allowed, true, res.body);
      assertCeilings(calls, {
        'pod/sandbox-pod-rules.ts|sandboxPodFindings': 0,
        'pod/workspace-mounts.ts|workspaceMounts': 0,
        'pod/claim-environment.ts|podClaims': 0,
        'door-reviews.ts|reviewFacts': 1,
        'rules/enforcement.ts|enforce': 1,
      });
    } finally {
      session.disconnect();
      await app.close();
    }
  });
});
