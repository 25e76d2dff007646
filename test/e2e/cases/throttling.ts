// Deed's API clients under a real 429: kube-apiserver's API Priority and Fairness made to
// turn one principal away on purpose, while `deed audit`, `deed reap` (dry run) and `deed
// keys usage` run as it. Each retries after the server's Retry-After, says so on stderr, and
// gets the same result as an unthrottled run once the 429s clear; when they do not clear,
// the run gives up after its retries and says so in one line. `deed serve`'s live read
// of a claim (as its own service account) retries within the review's lookup budget.
//
// How the server is made to reject (seen in kube-apiserver 1.36): a priority level of type
// Limited with nominalConcurrencyShares 0 (no lending, no borrowing, limitResponse Reject)
// has a limit of 0 seats, yet still runs a request alone when nothing else of its level is
// executing (the queue set lets a request wider than the limit run in an idle level). So a
// second FlowSchema maps a holder to the same level, and the holder keeps one request
// executing: an authorized POST whose body never finishes (the body is read after Priority
// and Fairness admitted it). While it holds its seat, every request of the level answers
// 429 with Retry-After: 1. Deleting the principal's FlowSchema clears it (its requests go
// back to the default service-accounts level); the holder is let go and both FlowSchemas
// and the level are deleted after each case, and again after the file, failed or not.
import assert from 'node:assert/strict';
import type { ClientRequest } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { AUDIT_NAME, NAME, renderManifests } from '../../../src/install/manifests.js';
import { RETRY_MESSAGE } from '../../../src/kube/retry-notice.js';
import { policyReportCrd } from '../../../src/install/policy-report-crd.js';
import { run, type Identity, type Run } from '../client.js';
import { eventually, PATHS, sandboxPod } from '../objects.js';
import { DEED_NAMESPACE, type Suite } from '../suite.js';
import { ROOT } from '../../serve-process.js';

const PRINCIPAL = 'deed-e2e-throttled';
const HOLDER = 'deed-e2e-apf-holder';
const HOLD_NAMESPACE = 'plain';
// Each throttle has a level of its own: the API server's Retry-After adapts to a level's
// recent rejections and is kept by its name, and the webhook-read case needs the first, 1 s.
const LEVEL_PREFIX = 'deed-e2e-zero-seats';
let levels = 0;
let level = LEVEL_PREFIX;
const REJECT_SCHEMA = 'deed-e2e-throttled';
const HOLD_SCHEMA = 'deed-e2e-apf-holder';
const FLOWCONTROL = '/apis/flowcontrol.apiserver.k8s.io/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
// The namespace the commands read: the reaper's cases leave alpha's objects there.
const READ_NAMESPACE = 'sandbox-b';

const everything = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
};

function flowSchema(name: string, subject: Record<string, unknown>, rules: Record<string, unknown> = everything): KubernetesObject {
  // 500: after the built-in exempt, probes and leader-election schemas, before service-accounts (9000).
  return { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name }, spec: { priorityLevelConfiguration: { name: level }, matchingPrecedence: 500, rules: [{ subjects: [subject], ...rules }] } } as KubernetesObject;
}

/** The status of a GET as `user`: the admin impersonating it, as Priority and Fairness then classifies it. */
function getAs(s: Suite, user: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, s.cp.server), { ca: s.cp.ca, headers: { authorization: `Bearer ${s.admin.token}`, 'impersonate-user': user, accept: 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Priority and Fairness's count of requests it turned away under one FlowSchema. */
async function rejected(s: Suite, schema: string): Promise<number> {
  const metrics = await s.api(s.admin, 'GET', '/metrics');
  let total = 0;
  for (const line of metrics.text.split('\n'))
    if (line.startsWith('apiserver_flowcontrol_rejected_requests_total{') && line.includes(`flow_schema="${schema}"`)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

/** Removes whatever a throttle left, ignoring what is already gone. */
async function unthrottle(s: Suite): Promise<void> {
  for (const path of [`${FLOWCONTROL}/flowschemas/${REJECT_SCHEMA}`, `${FLOWCONTROL}/flowschemas/${HOLD_SCHEMA}`, `${FLOWCONTROL}/prioritylevelconfigurations/${level}`]) {
    const answer = await s.api(s.admin, 'DELETE', path);
    assert.ok(answer.status === 200 || answer.status === 404, `${path}: ${answer.status} ${answer.text}`);
  }
}

interface Throttle {
  /** Requests of the principal turned away so far. */
  rejections(): Promise<number>;
  /** Deletes the principal's FlowSchema: its requests are served again. */
  clear(): Promise<void>;
  /** Lets the holder go and deletes the level and both FlowSchemas. */
  close(): Promise<void>;
}

interface Target {
  /** The FlowSchema subject of the principal turned away. */
  subject: Record<string, unknown>;
  /** Which of its requests (every one by default). */
  rules?: Record<string, unknown>;
  /** A request of the principal the rules match: its status (429 while throttled). */
  probe(): Promise<number>;
}

/** A service account's requests, every one of them. */
const everyRequestOf = (s: Suite, who: Identity): Target => ({
  subject: { kind: 'ServiceAccount', serviceAccount: { namespace: DEED_NAMESPACE, name: PRINCIPAL } },
  probe: async () => (await s.api(who, 'GET', '/api/v1/namespaces')).status,
});

/** Every request `target` names answers 429 until clear(). */
async function throttle(s: Suite, target: Target): Promise<Throttle> {
  let holder: ClientRequest | undefined;
  const close = async () => {
    holder?.destroy();
    await unthrottle(s);
  };
  try {
    level = `${LEVEL_PREFIX}-${++levels}`;
    const zeroSeats = { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: level }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } } };
    for (const [path, body] of [
      [`${FLOWCONTROL}/prioritylevelconfigurations`, zeroSeats],
      [`${FLOWCONTROL}/flowschemas`, flowSchema(HOLD_SCHEMA, { kind: 'User', user: { name: HOLDER } })],
      [`${FLOWCONTROL}/flowschemas`, flowSchema(REJECT_SCHEMA, target.subject, target.rules)],
    ] as const) {
      const made = await s.api(s.admin, 'POST', path, body);
      assert.equal(made.status, 201, made.text);
    }
    // The holder: the admin impersonating a user of the held level, sending a ConfigMap whose
    // body never ends. It is itself turned away while an earlier holder still holds the seat
    // (the server notices a closed connection a moment later): then it is sent again.
    const url = new URL(`/api/v1/namespaces/${HOLD_NAMESPACE}/configmaps`, s.cp.server);
    let answered = true;
    const hold = () => {
      answered = false;
      holder = request(url, {
        method: 'POST',
        ca: s.cp.ca,
        headers: { authorization: `Bearer ${s.admin.token}`, 'impersonate-user': HOLDER, 'content-type': 'application/json', 'content-length': '1000000' },
      });
      holder.on('response', (res) => {
        answered = true;
        res.resume();
      });
      holder.on('error', () => (answered = true)); // destroyed on close
      holder.write('{');
    };
    // A holder sent before the server applied the new FlowSchemas holds a seat of another
    // level: sent again until the principal is turned away.
    await eventually('Priority and Fairness turns the principal away with 429', async () => {
      if (!answered && (await target.probe()) === 429) return true;
      holder?.destroy();
      hold();
      await new Promise((r) => setTimeout(r, 500));
      return false;
    }, 20_000);
    return {
      rejections: () => rejected(s, REJECT_SCHEMA),
      clear: async () => {
        const gone = await s.api(s.admin, 'DELETE', `${FLOWCONTROL}/flowschemas/${REJECT_SCHEMA}`);
        assert.equal(gone.status, 200, gone.text);
        await eventually('the principal is served again', async () => (await target.probe()) !== 429, 15_000);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

interface Retried {
  level: number;
  msg: string;
  call: string;
  retryAfterSeconds: number;
  attempt: number;
  server: string;
}

/** The retry lines a command wrote on stderr. */
function retries(stderr: string): Retried[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Retried)
    .filter((l) => l.msg === RETRY_MESSAGE);
}

export function throttlingCases(suite: () => Suite): void {
  describe('Deed under API Priority and Fairness: 429 with Retry-After from the real API server', () => {
    let principal: Identity;
    const deed = (command: string[], args: string[]): Promise<Run> =>
      run(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...command, '--kubeconfig', principal.kubeconfig!, '--config', suite().policyFile, '--deed-namespace', DEED_NAMESPACE, '--namespace', READ_NAMESPACE, ...args]);
    const commands: Array<{ name: string; command: string[]; args: string[]; result: (r: Run) => unknown }> = [
      {
        name: 'deed audit --write-reports',
        command: ['audit'],
        args: ['--write-reports', '-o', 'json', '--timeout', '10'],
        // Every object's results, and the summary's counts (not its times).
        result: (r) => r.stdout.split('\n').filter(Boolean).map((l) => {
          const { startedAt: _s, durationSeconds: _d, ...rest } = JSON.parse(l) as Record<string, unknown>;
          return rest;
        }),
      },
      {
        name: 'deed reap (dry run)',
        command: ['reap'],
        args: ['--environment', 'alpha', '-o', 'json', '--timeout', '10'],
        // A page's objects are judged at once, each decision written when its reads answer: compared in name order.
        result: (r) =>
          r.stdout
            .split('\n')
            .filter(Boolean)
            .map((l) => {
              const { durationMs: _d, ...rest } = JSON.parse(l) as Record<string, unknown>;
              return rest;
            })
            .sort((a, b) => (a.type === b.type ? `${String(a.kind)}/${String(a.namespace)}/${String(a.name)}`.localeCompare(`${String(b.kind)}/${String(b.namespace)}/${String(b.name)}`) : a.type === 'summary' ? 1 : -1)),
      },
      { name: 'deed keys usage', command: ['keys', 'usage'], args: ['-o', 'json', '--timeout', '10'], result: (r) => JSON.parse(r.stdout) as unknown },
    ];

    before(async () => {
      const s = suite();
      await unthrottle(s); // a run interrupted before its cleanup
      // The PolicyReport CRD (the audit's cases install it first when they run).
      const crd = await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', policyReportCrd());
      assert.ok(crd.status === 201 || crd.status === 409, crd.text);
      await eventually('the PolicyReport API is served', async () => (await s.api(s.admin, 'GET', '/apis/wgpolicyk8s.io/v1alpha2/policyreports')).status === 200);
      // One service account with the rendered RBAC of the reaper and of the audit, bound under names of this file's own.
      principal = await s.newIdentity(DEED_NAMESPACE, PRINCIPAL);
      const audit = renderManifests({ namespace: DEED_NAMESPACE, image: 'deed:e2e', audit: {} }).find((o) => o.kind === 'ClusterRole' && o.metadata?.name === AUDIT_NAME) as KubernetesObject & { rules: unknown[] };
      const made = await s.api(s.admin, 'POST', `${RBAC}/clusterroles`, { metadata: { name: `${PRINCIPAL}-audit` }, rules: audit.rules });
      assert.ok(made.status === 201 || made.status === 409, made.text);
      // deed keys usage lists every namespaced kind the API server serves (docs/operations.md).
      const keys = await s.api(s.admin, 'POST', `${RBAC}/clusterroles`, { metadata: { name: `${PRINCIPAL}-keys` }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['list'] }] });
      assert.ok(keys.status === 201 || keys.status === 409, keys.text);
      for (const role of ['deed-reaper', `${PRINCIPAL}-audit`, `${PRINCIPAL}-keys`]) {
        const bound = await s.api(s.admin, 'POST', `${RBAC}/clusterrolebindings`, {
          metadata: { name: `${PRINCIPAL}-${role}` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
          subjects: [{ kind: 'ServiceAccount', namespace: DEED_NAMESPACE, name: PRINCIPAL }],
        });
        assert.ok(bound.status === 201 || bound.status === 409, bound.text);
      }
      // The holder may create ConfigMaps where it holds: RBAC runs before its body is read.
      await s.api(s.admin, 'POST', `${RBAC}/namespaces/${HOLD_NAMESPACE}/roles`, { metadata: { name: HOLDER }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }] });
      await s.api(s.admin, 'POST', `${RBAC}/namespaces/${HOLD_NAMESPACE}/rolebindings`, { metadata: { name: HOLDER }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: HOLDER }, subjects: [{ kind: 'User', name: HOLDER }] });
      const can = (user: string, groups: string[], attributes: Record<string, string>) => async () =>
        (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups, resourceAttributes: attributes } })).body?.status?.allowed === true;
      await eventually('RBAC lets the holder create ConfigMaps', can(HOLDER, ['system:authenticated'], { namespace: HOLD_NAMESPACE, verb: 'create', resource: 'configmaps' }));
      const sa = `system:serviceaccount:${DEED_NAMESPACE}:${PRINCIPAL}`;
      await eventually('RBAC lets the principal list reports', can(sa, ['system:serviceaccounts', 'system:authenticated'], { verb: 'list', group: 'wgpolicyk8s.io', resource: 'policyreports' }));
      await eventually('RBAC lets the principal list secrets', can(sa, ['system:serviceaccounts', 'system:authenticated'], { verb: 'list', resource: 'secrets' }));
    });

    after(async () => {
      await unthrottle(suite());
    });

    for (const c of commands) {
      test(`${c.name}, turned away with 429 for a while, retries after the server's Retry-After, says so, and gets the result an unthrottled run gets`, async () => {
        const s = suite();
        const baseline = await deed(c.command, c.args);
        assert.equal(baseline.code, 0, baseline.stderr);
        assert.deepEqual(retries(baseline.stderr), [], 'unthrottled, nothing is retried');

        const t = await throttle(s, everyRequestOf(s, principal));
        try {
          const before = await t.rejections();
          const running = deed(c.command, c.args);
          // Cleared once the command has been turned away, and a second or two later.
          await eventually('the command is turned away', async () => (await t.rejections()) > before, 30_000);
          await new Promise((r) => setTimeout(r, 1500));
          await t.clear();
          const result = await running;
          assert.equal(result.code, 0, result.stderr);
          const seen = retries(result.stderr);
          assert.ok(seen.length >= 1, result.stderr);
          for (const r of seen) {
            assert.equal(r.level, 40, 'a warning');
            // Priority and Fairness's Retry-After: a second, two under load.
            assert.ok(Number.isInteger(r.retryAfterSeconds) && r.retryAfterSeconds >= 1 && r.retryAfterSeconds <= 2, JSON.stringify(r));
            assert.ok(r.call.length > 0, JSON.stringify(r));
            // Priority and Fairness's own words (a plain-text body, not a Status).
            assert.equal(r.server, 'Too many requests, please try again later.');
          }
          assert.deepEqual(c.result(result), c.result(baseline));
        } finally {
          await t.close();
        }
      });
    }

    test("the webhook's live read of a claim, turned away with 429, is sent again after the Retry-After within the review's lookup budget: the pod is judged on the claim's real absence, not refused as unreadable", async () => {
      const s = suite();
      const claim = 'apf-missing-ws';
      const deedUser = `system:serviceaccount:${DEED_NAMESPACE}:${NAME}`;
      const path = `/api/v1/namespaces/sandbox-a/persistentvolumeclaims/${claim}`;
      // Only Deed's gets of claims: its cache's lists and watches go on as before.
      const t = await throttle(s, {
        subject: { kind: 'ServiceAccount', serviceAccount: { namespace: DEED_NAMESPACE, name: NAME } },
        rules: { resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['persistentvolumeclaims'], namespaces: ['*'] }] },
        probe: () => getAs(s, deedUser, path),
      });
      try {
        const logged = s.deed.lines.length;
        const retriedLines = () => s.deed.lines.slice(logged).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === RETRY_MESSAGE);
        // The claim is absent, so the cache cannot answer: Deed reads it from the API server.
        const created = s.api(s.runnerA.identity, 'POST', PATHS.Pod('sandbox-a'), sandboxPod('names-a-throttled-claim', { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] } }));
        // Cleared as soon as Deed says it will retry: its retry comes a second later.
        // Polled closely: the retry must find the level cleared, within the 2 s lookup budget.
        for (const end = Date.now() + 10_000; retriedLines().length === 0; ) {
          assert.ok(Date.now() < end, `Deed did not say it would retry:\n${s.deed.lines.slice(logged).join('\n')}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        const cleared = await s.api(s.admin, 'DELETE', `${FLOWCONTROL}/flowschemas/${REJECT_SCHEMA}`);
        assert.equal(cleared.status, 200, cleared.text);
        // A claim that does not exist yet is allowed in a namespace bound to alpha; one Deed
        // could not read would be refused (claim.unknown): the retried read found it absent.
        const answer = await created;
        assert.equal(answer.status, 201, answer.text);
        const retried = retriedLines()[0]!;
        assert.equal(retried.call, `get persistentvolumeclaims sandbox-a/${claim}`);
        assert.equal(retried.retryAfterSeconds, 1);
        assert.equal(retried.server, 'Too many requests, please try again later.');
      } finally {
        await t.close();
        await s.api(s.admin, 'DELETE', `${PATHS.Pod('sandbox-a')}/names-a-throttled-claim`, { gracePeriodSeconds: 0 });
      }
    });

    test('when the 429s do not clear, deed audit and deed reap give up after their retries, each saying so in one line, and exit 1', async () => {
      const s = suite();
      const t = await throttle(s, everyRequestOf(s, principal));
      try {
        for (const [command, args] of [
          [['audit'], ['--timeout', '3', '-o', 'json']],
          [['reap'], ['--environment', 'alpha', '-o', 'json', '--timeout', '3']],
        ] as const) {
          const started = Date.now();
          const result = await deed([...command], [...args]);
          const took = Date.now() - started;
          assert.equal(result.code, 1, `${command[0]}: ${result.stderr}${result.stdout}`);
          const gaveUp = `${result.stdout}\n${result.stderr}`.split('\n').filter((l) => l.includes('gave up'));
          assert.equal(gaveUp.length, 1, `${command[0]}: one line says it gave up:\n${result.stdout}${result.stderr}`);
          // Each attempt has --timeout; the client stops after its five retries.
          assert.match(gaveUp[0]!, /HTTP 429 \(Too many requests, please try again later\.\) on each of 6 tries over \d+\.\d s, each retry after the server's Retry-After \(\d s\); gave up after 5 retries, the most it makes/);
          assert.equal(retries(result.stderr).length, 5, 'five retries, each logged');
          // Node and the client library load in a few seconds; five waits of a second or two follow.
          assert.ok(took < 40_000, `${command[0]} took ${took} ms`);
        }
      } finally {
        await t.close();
      }
    });
  });
}
