// Every pod selector is scoped (src/policy/selector-scope.ts), for every row of the kind
// table that has one: an environment's gets its environment at CREATE (and its pod templates
// the same label), frozen after; a requester of no environment excludes environments itself.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { apiVersionOf, kindRows, type KindRow } from '../src/policy/kinds.js';
import { decodePatch, fixture, testContext, type Review } from './helpers.js';
import { RUNNER_A, RUNNER_B } from './validate-helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects as the API server sends them
type Spec = Record<string, any>;

const ENV = 'deed.dev/environment';
const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'], managers: { users: ['alpha-manager'] } },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
};
const NONE: UserInfo = { username: 'stranger', groups: ['system:authenticated'], extra: {} };
const MANAGER: UserInfo = { username: 'alpha-manager', groups: ['system:authenticated'], extra: {} };
const ADMIN: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'], extra: {} };
const DOES_NOT_EXIST = { key: ENV, operator: 'DoesNotExist' };
const MARK = 'deed.dev/no-environment';
/** What a tenant's selector of a kind that acts on pods without owning them gets beside the mark: runners excluded (pod/runner-mark.ts). */
const NO_RUNNERS = { key: 'deed.dev/runner', operator: 'DoesNotExist' };

/** Every row of the kind table with a pod selector: the rule reaches each. */
const SELECTING = kindRows().filter((r): r is KindRow & { podSelector: NonNullable<KindRow['podSelector']> } => r.podSelector !== undefined);
const row = (kind: string) => SELECTING.find((r) => r.kind === kind)!;

function put(obj: Spec, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = obj;
  for (const key of keys.slice(0, -1)) at = at[key] ??= {};
  at[keys.at(-1)!] = value;
}

function get(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v as Spec | undefined)?.[k], obj);
}

/** An object of `r`'s kind selecting `app: lab` (or `selector` as given), with its pod templates labelled to match. */
function selecting(r: KindRow, selector?: unknown, templateLabels: Record<string, string> = { app: 'lab' }): KubeObject {
  const facts = r.podSelector!;
  const obj: Spec = { apiVersion: apiVersionOf(r), kind: r.kind, metadata: { name: 'lab', namespace: 'shared' } };
  if (facts.onlyWhen !== undefined) put(obj, facts.onlyWhen, true);
  put(obj, facts.path, selector !== undefined ? selector : (facts.form === 'map' ? { app: 'lab' } : { matchLabels: { app: 'lab' } }));
  const spec = { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }], ...(r.templates?.ownsRestartPolicy ? { restartPolicy: 'Never' } : {}) };
  for (const path of r.templates?.pods ?? []) put(obj, path, { metadata: { labels: { ...templateLabels } }, spec });
  return obj as KubeObject;
}

function review(r: KindRow, userInfo: UserInfo, object: KubeObject, old?: KubeObject, namespace = 'shared'): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  const o = structuredClone(object);
  o.metadata.namespace = namespace;
  body.request = {
    ...body.request,
    kind: { group: r.group, version: r.version, kind: r.kind },
    resource: { group: r.group, version: r.version, resource: r.resource },
    requestKind: undefined,
    requestResource: undefined,
    name: 'lab',
    namespace,
    userInfo,
    subResource: undefined,
    operation: old === undefined ? 'CREATE' : 'UPDATE',
    object: o,
    oldObject: old ?? null,
  };
  return body;
}

function answer(webhook: 'mutate' | 'validate', body: Review): AdmissionResponse {
  const d = decide(webhook, body, testContext(POLICY));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** What the API server stores for a CREATE: mutated, then validated (which must admit it). */
function stored(r: KindRow, userInfo: UserInfo, object: KubeObject, namespace = 'shared'): KubeObject {
  const body = review(r, userInfo, object, undefined, namespace);
  const m = answer('mutate', body);
  assert.equal(m.allowed, true, m.status?.message);
  const after = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: m })).newDocument as KubeObject;
  const v = answer('validate', { ...body, request: { ...body.request, object: after } });
  assert.equal(v.allowed, true, v.status?.message);
  return after;
}

function refused(r: AdmissionResponse, pattern: RegExp): void {
  assert.equal(r.allowed, false, 'expected a denial');
  assert.match(r.status?.message ?? '', pattern);
}

const scoped = (r: KindRow, env: string) => (r.podSelector!.form === 'map' ? { app: 'lab', [ENV]: env } : { matchLabels: { app: 'lab', [ENV]: env } });

describe('every pod selector is scoped to its writer\'s environment', () => {
  test('the kind table names the selector of every kind that acts on the pods it selects', () => {
    assert.deepEqual(
      Object.fromEntries(SELECTING.map((r) => [r.kind, `${r.podSelector.path} ${r.podSelector.form}${r.podSelector.onlyWhen ? ` when ${r.podSelector.onlyWhen}` : ''}`])),
      {
        NetworkPolicy: 'spec.podSelector label-selector',
        Deployment: 'spec.selector label-selector',
        ReplicaSet: 'spec.selector label-selector',
        StatefulSet: 'spec.selector label-selector',
        DaemonSet: 'spec.selector label-selector',
        Job: 'spec.selector label-selector when spec.manualSelector',
        CronJob: 'spec.jobTemplate.spec.selector label-selector when spec.jobTemplate.spec.manualSelector',
        ReplicationController: 'spec.selector map',
        Service: 'spec.selector map',
        PodDisruptionBudget: 'spec.selector label-selector',
      },
    );
  });

  for (const r of SELECTING) {
    test(`beta's ${r.kind} is stored selecting beta's pods only, its pod templates labelled to match, and admitted`, () => {
      const after = stored(r, RUNNER_B, selecting(r));
      assert.deepEqual(get(after, r.podSelector.path), scoped(r, 'beta'));
      for (const path of r.templates?.pods ?? []) assert.deepEqual(get(after, `${path}.metadata.labels`), { app: 'lab', [ENV]: 'beta' }, path);
      assert.equal(after.metadata.labels?.[ENV], 'beta', 'and the object itself is beta\'s');
    });

    test(`beta's ${r.kind} selecting alpha's pods is refused at mutation, naming the field`, () => {
      const selector = r.podSelector.form === 'map' ? { [ENV]: 'alpha' } : { matchLabels: { [ENV]: 'alpha' } };
      const path = `${r.podSelector.path}${r.podSelector.form === 'map' ? '' : '.matchLabels'}["${ENV}"]`;
      refused(answer('mutate', review(r, RUNNER_B, selecting(r, selector))), new RegExp(`\\[selector\\.scope\\] ${path.replace(/[.[\]/]/g, '\\$&')}: selects pods of environment "alpha"; environment "beta" selects only its own pods`));
    });

    test(`beta's ${r.kind} that arrives unscoped (the mutating webhook bypassed) is refused`, () => {
      refused(answer('validate', review(r, RUNNER_B, selecting(r))), /\[selector\.scope\] .*: a \w+ of environment "beta" selects only its pods: deed\.dev\/environment must be "beta" \(the mutating webhook adds it; was it bypassed\?\)/);
    });

    test(`a requester of no environment's ${r.kind} that names no environment is stored selecting pods of no environment only, its templates marked to match`, () => {
      const after = stored(r, NONE, selecting(r));
      const want =
        r.podSelector.form === 'map'
          ? { app: 'lab', [MARK]: 'true' }
          : { matchLabels: { app: 'lab', [MARK]: 'true' }, ...(r.podSelector.excludesRunners ? { matchExpressions: [NO_RUNNERS] } : {}) };
      assert.deepEqual(get(after, r.podSelector.path), want);
      for (const path of r.templates?.pods ?? []) assert.deepEqual(get(after, `${path}.metadata.labels`), { app: 'lab', [MARK]: 'true' }, path);
      assert.equal(after.metadata.labels?.[ENV], undefined, 'the object itself is no environment\'s');
    });

    test(`a requester of no environment's unscoped ${r.kind} that arrives unmarked (the mutating webhook bypassed) is refused, saying what to write; the break-glass administrator's is not`, () => {
      refused(
        answer('validate', review(r, NONE, selecting(r))),
        /\[selector\.scope\] [\w.]+: may select pods of any environment; stranger acts for none here: require deed\.dev\/no-environment: "true" \(the mutating webhook adds it when the selector names no environment; was it bypassed\?\) or deed\.dev\/environment: an environment it manages/,
      );
      assert.equal(answer('validate', review(r, ADMIN, selecting(r))).allowed, true);
    });

    test(`a ${r.kind} UPDATE that drops the scope it was stored with (a server-side apply of the configuration as written) gets it back from the mutating webhook, selector and templates`, () => {
      for (const [who, key, value] of [[NONE, MARK, 'true'], [RUNNER_B, ENV, 'beta']] as const) {
        const before = stored(r, who, selecting(r));
        const applied = structuredClone(before) as Spec;
        put(applied, r.podSelector.path, structuredClone(get(selecting(r), r.podSelector.path)));
        for (const path of r.templates?.pods ?? []) put(applied, `${path}.metadata.labels`, { app: 'lab' });
        const body = review(r, who, applied as KubeObject, before);
        const m = answer('mutate', body);
        assert.equal(m.allowed, true, m.status?.message);
        const after = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: m })).newDocument as Spec;
        assert.deepEqual(get(after, r.podSelector.path), get(before, r.podSelector.path), `${key}: the selector as stored`);
        for (const path of r.templates?.pods ?? []) assert.equal((get(after, `${path}.metadata.labels`) as Spec)[key], value, path);
        const v = answer('validate', { ...body, request: { ...body.request, object: after as KubeObject } });
        assert.equal(v.allowed, true, v.status?.message);
      }
    });

    test(`a requester of no environment's ${r.kind} UPDATE that drops the mark is refused, saying to keep it`, () => {
      const before = stored(r, NONE, selecting(r));
      const after = structuredClone(before) as Spec;
      const sel = get(after, r.podSelector.path) as Spec;
      delete (r.podSelector.form === 'map' ? sel : sel.matchLabels)[MARK];
      refused(answer('validate', review(r, NONE, after as KubeObject, before)), /\[selector\.scope\] .*keep deed\.dev\/no-environment: "true", which selects pods of no environment only/);
    });
  }

  for (const r of SELECTING.filter((x) => x.podSelector.form === 'label-selector'))
    test(`a requester of no environment's ${r.kind} that excludes every environment's pods, or selects only its managed one's, is admitted and left as written (runners excluded from a tenant's NetworkPolicy and PodDisruptionBudget)`, () => {
      const excluding = { matchLabels: { app: 'lab' }, matchExpressions: [DOES_NOT_EXIST] };
      const want = r.podSelector.excludesRunners ? { ...excluding, matchExpressions: [DOES_NOT_EXIST, NO_RUNNERS] } : excluding;
      assert.deepEqual(get(stored(r, NONE, selecting(r, excluding)), r.podSelector.path), want, 'as written, runners excluded where the selector acts on pods it does not own');
      stored(r, MANAGER, selecting(r, { matchLabels: { app: 'lab' }, matchExpressions: [{ key: ENV, operator: 'In', values: ['alpha'] }] }));
      refused(answer('validate', review(r, MANAGER, selecting(r, { matchLabels: { app: 'lab', [ENV]: 'beta' } }))), /\[selector\.scope\]/);
    });

  test("a Service's selector, a plain map, from a requester of no environment: empty stays empty; one naming an environment it manages is kept as written", () => {
    const svc = row('Service');
    assert.deepEqual(get(stored(svc, NONE, selecting(svc, {})), 'spec.selector'), {}, 'empty: its endpoints are its own to manage');
    assert.equal(answer('validate', review(svc, NONE, selecting(svc, null))).allowed, true);
    assert.deepEqual(get(stored(svc, MANAGER, selecting(svc, { app: 'lab', [ENV]: 'alpha' })), 'spec.selector'), { app: 'lab', [ENV]: 'alpha' });
    refused(answer('validate', review(svc, MANAGER, selecting(svc, { app: 'lab', [ENV]: 'beta' }))), /\[selector\.scope\]/);
    const bound = answer('validate', review(svc, MANAGER, selecting(svc), undefined, 'sandbox-a'));
    assert.equal(bound.allowed, true, bound.status?.message);
  });

  test("a platform principal's selector may name environments; its NetworkPolicy is stored as written, so its default-deny isolates every pod; its other selectors are marked like any other of no environment (rev-89)", () => {
    const platform: UserInfo = { username: 'system:serviceaccount:argocd:argocd-application-controller', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
    const ctx = { ...POLICY, platform: { users: [platform.username], groups: [] } };
    const np = row('NetworkPolicy');
    const every = { matchExpressions: [{ key: ENV, operator: 'Exists' }] };
    const d = decide('validate', review(np, platform, selecting(np, every)), testContext(ctx));
    assert.ok(d.kind === 'review' && d.response.response.allowed, 'a platform default for every environment');
    refused(answer('validate', review(np, NONE, selecting(np, every))), /\[selector\.scope\]/);
    const asPlatform = (webhook: 'mutate' | 'validate', body: Review) => {
      const r = decide(webhook, body, testContext(ctx));
      assert.equal(r.kind, 'review');
      return (r as Extract<typeof r, { kind: 'review' }>).response.response;
    };
    // The platform's default-deny, and the break-glass administrator's: as written.
    for (const selector of [{}, { matchLabels: { app: 'lab' } }]) {
      const m = asPlatform('mutate', review(np, platform, selecting(np, selector)));
      assert.equal(m.allowed, true);
      assert.equal(m.patch, undefined, `${JSON.stringify(selector)}: stored as written`);
      assert.equal(asPlatform('validate', review(np, platform, selecting(np, selector))).allowed, true);
    }
    assert.deepEqual(get(stored(np, ADMIN, selecting(np, {})), 'spec.podSelector'), {}, 'break-glass');
    // A tenant of no environment's is still scoped to pods of no environment.
    assert.deepEqual(get(stored(np, NONE, selecting(np, {})), 'spec.podSelector'), { matchLabels: { [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] });
    // The platform's Service and Deployment are marked: an environment's pod that joined them would take their traffic, or be adopted.
    for (const kind of ['Service', 'Deployment']) {
      const m = asPlatform('mutate', review(row(kind), platform, selecting(row(kind))));
      assert.match(Buffer.from(m.patch ?? '', 'base64').toString(), /deed\.dev(~1|\/)no-environment/, kind);
    }
    // A NetworkPolicy stored marked (before it was written as given): the platform may drop the mark; a tenant's is kept.
    const marked = selecting(np, { matchLabels: { [MARK]: 'true' } });
    const dropped = asPlatform('mutate', review(np, platform, selecting(np, {}), marked));
    assert.equal(dropped.patch, undefined, 'not put back');
    assert.equal(asPlatform('validate', review(np, platform, selecting(np, {}), marked)).allowed, true);
    const kept = answer('mutate', review(np, NONE, selecting(np, {}), marked));
    assert.match(Buffer.from(kept.patch ?? '', 'base64').toString(), /deed\.dev(~1|\/)no-environment/);
  });

  test("the platform's default-deny written over one a tenant created under its name: written whole, it is stored as written, runner exclusion included; patched (kubectl apply leaves the tenant's scope), it is stored with a warning that says so (rev-91)", () => {
    const platform: UserInfo = { username: 'system:serviceaccount:argocd:argocd-application-controller', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
    const ctx = testContext({ ...POLICY, platform: { users: [platform.username], groups: [] } });
    const np = row('NetworkPolicy');
    const tenants = stored(np, NONE, selecting(np, {}));
    assert.deepEqual(get(tenants, 'spec.podSelector'), { matchLabels: { [MARK]: 'true' }, matchExpressions: [NO_RUNNERS] });
    const mutate = (who: UserInfo, object: KubeObject) => {
      const d = decide('mutate', review(np, who, object, tenants), ctx);
      assert.equal(d.kind, 'review');
      return (d as Extract<typeof d, { kind: 'review' }>).response.response;
    };
    for (const who of [platform, ADMIN]) {
      const whole = mutate(who, selecting(np, {}));
      assert.equal(whole.patch, undefined, `${who.username}: nothing put back`);
      assert.equal(whole.warnings, undefined);
      // A patch that does not name the selector leaves the tenant's scope: said, not changed.
      const patchedOnly = mutate(who, { ...tenants, metadata: { ...tenants.metadata, labels: { synced: 'true' } } });
      assert.equal(patchedOnly.patch, undefined);
      assert.match(patchedOnly.warnings?.join('\n') ?? '', /^spec\.podSelector keeps a tenant's scope: it selects no environment's pod; kubectl replace it \(or delete and apply\)$/);
    }
    // The tenant's own write of it, or a system controller's (the garbage collector's): no such warning.
    assert.equal(answer('mutate', review(np, NONE, { ...tenants, metadata: { ...tenants.metadata, labels: { synced: 'true' } } }, tenants)).warnings, undefined);
    const collector: UserInfo = { username: 'system:serviceaccount:kube-system:generic-garbage-collector', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} };
    assert.equal(mutate(collector, { ...tenants, metadata: { ...tenants.metadata, ownerReferences: [] } }).warnings, undefined);
  });

  test("every pod of no environment is marked at CREATE, and no environment's pod may carry the mark", () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shared', labels: { app: 'lab' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } as KubeObject;
    const podRow = { group: '', version: 'v1', kind: 'Pod', resource: 'pods' } as unknown as KindRow;
    const body = review(podRow, NONE, pod);
    const m = answer('mutate', body);
    const after = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: m })).newDocument as KubeObject;
    assert.deepEqual(after.metadata.labels, { app: 'lab', [MARK]: 'true' });
    const marked = { ...pod, metadata: { ...pod.metadata, labels: { app: 'lab', [MARK]: 'true' } } } as KubeObject;
    refused(answer('mutate', review(podRow, RUNNER_B, marked)), /\[stamp\.conflict\] metadata\.labels\["deed\.dev\/no-environment"\]: marks pods of no environment; an object of environment "beta" never carries it/);
    const rs = row('ReplicaSet');
    refused(answer('validate', review(rs, RUNNER_B, selecting(rs, undefined, { app: 'lab', [MARK]: 'true' }))), /\[stamp\.template\] spec\.template\.metadata\.labels\["deed\.dev\/no-environment"\]: marks pods of no environment/);
  });

  test("in a namespace bound to an environment nothing is marked: its pods are all the environment's, and its manager's default-deny selects them all", () => {
    const np = row('NetworkPolicy');
    assert.deepEqual(get(stored(np, MANAGER, selecting(np, {}), 'sandbox-a'), 'spec.podSelector'), {});
    const deploy = row('Deployment');
    const after = stored(deploy, MANAGER, selecting(deploy), 'sandbox-a');
    assert.deepEqual(get(after, 'spec.selector'), { matchLabels: { app: 'lab' } });
    assert.deepEqual(get(after, 'spec.template.metadata.labels'), { app: 'lab' });
  });

  test("an environment's object never gains the mark after CREATE", () => {
    const svc = row('Service');
    const before = stored(svc, RUNNER_B, selecting(svc));
    const after = structuredClone(before);
    after.metadata.labels = { ...after.metadata.labels, [MARK]: 'true' };
    refused(answer('validate', review(svc, RUNNER_B, after, before)), /\[frozen\.stamps\] metadata\.labels\["deed\.dev\/no-environment"\]: cannot be added to an object admitted without it/);
  });

  test("an environment's Service or PodDisruptionBudget without a selector selects nothing and is left so", () => {
    for (const r of [row('Service'), row('PodDisruptionBudget')]) {
      const obj = selecting(r);
      delete (obj.spec as Spec).selector;
      assert.equal(get(stored(r, RUNNER_B, obj), 'spec.selector'), undefined, r.kind);
    }
  });

  test("an environment's empty PodDisruptionBudget or NetworkPolicy selector, which selects all, becomes its own", () => {
    assert.deepEqual(get(stored(row('PodDisruptionBudget'), RUNNER_B, selecting(row('PodDisruptionBudget'), {})), 'spec.selector'), { matchLabels: { [ENV]: 'beta' } });
    const np = selecting(row('NetworkPolicy'));
    delete (np.spec as Spec).podSelector;
    assert.deepEqual(get(stored(row('NetworkPolicy'), RUNNER_B, np), 'spec.podSelector'), { matchLabels: { [ENV]: 'beta' } });
  });

  test("a Job's selector is its writer's only with manualSelector: otherwise the API server writes one of the Job's own uid, and nothing is added", () => {
    const job = row('Job');
    const obj = selecting(job);
    delete (obj.spec as Spec).manualSelector;
    delete (obj.spec as Spec).selector;
    const after = stored(job, RUNNER_B, obj);
    assert.equal(get(after, 'spec.selector'), undefined);
    assert.deepEqual(get(after, 'spec.template.metadata.labels'), { app: 'lab' });
    assert.equal(answer('validate', review(job, NONE, { ...obj, spec: { ...obj.spec, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u' } } } })).allowed, true, 'the generated selector');
  });

  test("a pod template labelled for another environment is refused at mutation; one of the workload's own environment is kept", () => {
    const rs = row('ReplicaSet');
    refused(answer('mutate', review(rs, RUNNER_B, selecting(rs, undefined, { app: 'lab', [ENV]: 'alpha' }))), /\[stamp\.template\] spec\.template\.metadata\.labels\["deed\.dev\/environment"\]: deed\.dev\/environment is admission-owned/);
    const after = stored(rs, RUNNER_B, selecting(rs, undefined, { app: 'lab', [ENV]: 'beta' }));
    assert.deepEqual(get(after, 'spec.template.metadata.labels'), { app: 'lab', [ENV]: 'beta' });
  });

  test("a requester of no environment may not label a template with an environment, even one its selector excludes", () => {
    const rs = row('ReplicaSet');
    refused(answer('validate', review(rs, NONE, selecting(rs, { matchLabels: { app: 'lab' }, matchExpressions: [DOES_NOT_EXIST] }, { app: 'lab', [ENV]: 'alpha' }))), /\[stamp\.template\] spec\.template\.metadata\.labels\["deed\.dev\/environment"\]/);
  });

  describe('on UPDATE the environment requirement is frozen', () => {
    for (const kind of ['ReplicaSet', 'ReplicationController', 'PodDisruptionBudget', 'Service', 'NetworkPolicy']) {
      test(`beta's ${kind}: a selector change that keeps it passes, one that drops or changes it is refused`, () => {
        const r = row(kind);
        const created = stored(r, RUNNER_B, selecting(r));
        const withSelector = (selector: unknown): KubeObject => {
          const o = structuredClone(created) as Spec;
          put(o, r.podSelector.path, selector);
          return o as KubeObject;
        };
        const map = r.podSelector.form === 'map';
        assert.equal(answer('validate', review(r, RUNNER_B, withSelector(map ? { app: 'lab2', [ENV]: 'beta' } : { matchLabels: { app: 'lab2', [ENV]: 'beta' } }), created)).allowed, true);
        refused(answer('validate', review(r, RUNNER_B, withSelector(map ? { app: 'lab' } : { matchLabels: { app: 'lab' } }), created)), /\[selector\.scope\] .*must be "beta" \(it is frozen after CREATE\)/);
        refused(answer('validate', review(r, RUNNER_B, withSelector(map ? { app: 'lab', [ENV]: 'alpha' } : { matchLabels: { app: 'lab', [ENV]: 'alpha' } }), created)), /\[selector\.scope\]/);
        refused(answer('validate', review(r, MANAGER, withSelector(map ? { app: 'lab' } : { matchLabels: { app: 'lab' } }), created)), /\[selector\.scope\]|\[guard\./);
      });
    }

    test("an update that leaves the selector alone is not judged by it: a selector admitted before the rule stands until it changes", () => {
      const r = row('ReplicaSet');
      // Beta's own (stamped) ReplicaSet whose selector predates the rule (an unstamped one is the platform's: guard.shared-input).
      const before = { ...selecting(r), metadata: stored(r, RUNNER_B, selecting(r)).metadata } as Spec;
      const after = structuredClone(before);
      after.spec.replicas = 3;
      assert.equal(answer('validate', review(r, RUNNER_B, after as KubeObject, before as KubeObject)).allowed, true);
      after.spec.selector = { matchLabels: { app: 'other' } };
      refused(answer('validate', review(r, RUNNER_B, after as KubeObject, before as KubeObject)), /\[selector\.scope\]/);
    });

    test("alpha's manager restarting alpha's Deployment keeps the template's environment label (the workload's own)", () => {
      const r = row('Deployment');
      const created = stored(r, RUNNER_A, selecting(r), 'shared') as Spec;
      const restarted = structuredClone(created);
      restarted.spec.template.metadata.annotations = { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z' };
      assert.equal(answer('validate', review(r, MANAGER, restarted as KubeObject, created as KubeObject)).allowed, true);
      restarted.spec.template.metadata.labels[ENV] = 'beta';
      refused(answer('validate', review(r, MANAGER, restarted as KubeObject, created as KubeObject)), /\[stamp\.template\] spec\.template\.metadata\.labels\["deed\.dev\/environment"\]/);
    });
  });
});
