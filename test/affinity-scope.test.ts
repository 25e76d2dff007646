// Every pod affinity term is scoped like a selector (src/policy/rules/affinity-scope.ts):
// required pod anti-affinity is symmetric in kube-scheduler, so beta's one pod whose term
// selects alpha's pods would hold every new pod of alpha's off every node. An environment's
// terms get its environment; a requester of no environment's get `environment DoesNotExist`
// (and a tenant's the runners excluded); a term naming another environment is refused.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { apiVersionOf, kindRows, type KindRow } from '../src/policy/kinds.js';
import { affinityTerms } from '../src/policy/pod/affinity-terms.js';
import { decodePatch, fixture, testContext, type Review } from './helpers.js';
import { RUNNER_A, RUNNER_B } from './validate-helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects as the API server sends them
type Spec = Record<string, any>;

const ENV = 'deed.dev/environment';
const RUNNER = 'deed.dev/runner';
const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'], managers: { users: ['alpha-manager'] } },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  platform: { users: ['gitops'], groups: [] },
  breakGlass: { users: ['admin'], groups: [] },
};
const user = (username: string): UserInfo => ({ username, groups: ['system:authenticated'], extra: {} });
const TENANT = user('stranger');
const MANAGER = user('alpha-manager');
const PLATFORM = user('gitops');
const BREAK_GLASS = user('admin');
const NO_ENVIRONMENT = { key: ENV, operator: 'DoesNotExist' };
const NO_RUNNERS = { key: RUNNER, operator: 'DoesNotExist' };
const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED = 'preferredDuringSchedulingIgnoredDuringExecution';
const HOSTNAME = 'kubernetes.io/hostname';

const rowOf = (kind: string) => kindRows().find((r) => r.kind === kind)!;
const POD = rowOf('Pod');
const DEPLOYMENT = rowOf('Deployment');
const CRONJOB = rowOf('CronJob');

/** A required anti-affinity term over a topology every node shares: beta's pod holding off whatever it selects. */
const hostile = (labelSelector: unknown) => ({ labelSelector, topologyKey: 'kubernetes.io/os' });
/** A chart's spreading of its own replicas. */
const spreading = { [PREFERRED]: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: HOSTNAME } }] };

function podSpec(affinity: unknown, ownsRestartPolicy = false): Spec {
  return { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }], affinity, ...(ownsRestartPolicy ? { restartPolicy: 'Never' } : {}) };
}

function put(obj: Spec, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = obj;
  for (const key of keys.slice(0, -1)) at = at[key] ??= {};
  at[keys.at(-1)!] = value;
}

function get(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v as Spec | undefined)?.[k], obj);
}

/** An object of `r`'s kind whose pod spec (a Pod's own, or each pod template's) has `affinity`. */
function withAffinity(r: KindRow, affinity: unknown): KubeObject {
  const obj: Spec = { apiVersion: apiVersionOf(r), kind: r.kind, metadata: { name: 'web', namespace: 'shared', labels: { app: 'web' } } };
  if (r.kind === 'Pod') obj.spec = podSpec(affinity);
  else {
    put(obj, r.podSelector!.path, { matchLabels: { app: 'web' } });
    for (const path of r.templates!.pods) put(obj, path, { metadata: { labels: { app: 'web' } }, spec: podSpec(affinity, r.templates!.ownsRestartPolicy) });
  }
  return obj as KubeObject;
}

/** Where `r`'s pod specs stand. */
const specPaths = (r: KindRow) => (r.kind === 'Pod' ? ['spec'] : r.templates!.pods.map((p) => `${p}.spec`));

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
    name: 'web',
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

function applied(body: Review, m: AdmissionResponse): KubeObject {
  return jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: m })).newDocument as KubeObject;
}

/** What the API server stores for a write: mutated, then validated (which must admit it). */
function stored(r: KindRow, userInfo: UserInfo, object: KubeObject, old?: KubeObject, namespace = 'shared'): KubeObject {
  const body = review(r, userInfo, object, old, namespace);
  const m = answer('mutate', body);
  assert.equal(m.allowed, true, m.status?.message);
  const after = applied(body, m);
  const v = answer('validate', { ...body, request: { ...body.request, object: after } });
  assert.equal(v.allowed, true, v.status?.message);
  return after;
}

function refused(r: AdmissionResponse, pattern: RegExp): void {
  assert.equal(r.allowed, false, 'expected a denial');
  assert.match(r.status?.message ?? '', pattern);
}

const affinityOf = (obj: KubeObject, at: string) => get(obj, `${at}.affinity`) as Spec;

describe('every pod affinity term is scoped to its writer\'s environment', () => {
  test('the terms of a pod spec: required and preferred, of affinity and anti-affinity, each at its path', () => {
    const terms = affinityTerms(
      { affinity: { podAffinity: { [REQUIRED]: [hostile({})] }, podAntiAffinity: { [REQUIRED]: [{ topologyKey: HOSTNAME }], ...spreading } } },
      'spec.template.spec',
    );
    assert.deepEqual(
      terms.map((t) => [t.at, t.keys.join('/'), t.labelSelector !== undefined]),
      [
        [`spec.template.spec.affinity.podAffinity.${REQUIRED}[0]`, `spec/template/spec/affinity/podAffinity/${REQUIRED}/0`, true],
        [`spec.template.spec.affinity.podAntiAffinity.${REQUIRED}[0]`, `spec/template/spec/affinity/podAntiAffinity/${REQUIRED}/0`, false],
        [`spec.template.spec.affinity.podAntiAffinity.${PREFERRED}[0].podAffinityTerm`, `spec/template/spec/affinity/podAntiAffinity/${PREFERRED}/0/podAffinityTerm`, true],
      ],
    );
  });

  for (const r of [POD, DEPLOYMENT, CRONJOB]) {
    test(`beta's ${r.kind} whose anti-affinity would hold off every pod with an app label is stored repelling beta's pods only`, () => {
      const affinity = { podAntiAffinity: { [REQUIRED]: [hostile({ matchExpressions: [{ key: 'app', operator: 'Exists' }] })], ...spreading } };
      const after = stored(r, RUNNER_B, withAffinity(r, affinity));
      for (const at of specPaths(r))
        assert.deepEqual(affinityOf(after, at), {
          podAntiAffinity: {
            [REQUIRED]: [hostile({ matchExpressions: [{ key: 'app', operator: 'Exists' }], matchLabels: { [ENV]: 'beta' } })],
            [PREFERRED]: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web', [ENV]: 'beta' } }, topologyKey: HOSTNAME } }],
          },
        }, at);
    });

    test(`beta's ${r.kind} whose anti-affinity names alpha's pods is refused at mutation, naming the term`, () => {
      for (const selector of [{ matchLabels: { [ENV]: 'alpha' } }, { matchExpressions: [{ key: ENV, operator: 'In', values: ['beta', 'alpha'] }] }]) {
        const m = answer('mutate', review(r, RUNNER_B, withAffinity(r, { podAntiAffinity: { [REQUIRED]: [hostile(selector)] } })));
        refused(m, /\[selector\.affinity-scope\] [\w.]*affinity\.podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution\[0\]\.labelSelector: selects pods of environment "alpha"; environment "beta" selects only its own pods/);
      }
    });

    test(`beta's ${r.kind} whose terms arrive unscoped (the mutating webhook bypassed) is refused`, () => {
      refused(answer('validate', review(r, RUNNER_B, withAffinity(r, { podAffinity: { [REQUIRED]: [hostile({ matchLabels: { app: 'db' } })] } }))), /\[selector\.affinity-scope\] .*a pod affinity term of environment "beta" selects only its pods: matchLabels\["deed\.dev\/environment"\] must be "beta" \(the mutating webhook adds it; was it bypassed\?\)/);
    });

    test(`a tenant's ${r.kind} whose anti-affinity targets every runner is stored selecting no runner and no environment's pod`, () => {
      const after = stored(r, TENANT, withAffinity(r, { podAntiAffinity: { [REQUIRED]: [hostile({ matchExpressions: [{ key: RUNNER, operator: 'Exists' }] })] } }));
      for (const at of specPaths(r)) assert.deepEqual(affinityOf(after, at).podAntiAffinity[REQUIRED][0].labelSelector, { matchExpressions: [{ key: RUNNER, operator: 'Exists' }, NO_ENVIRONMENT, NO_RUNNERS] }, at);
    });

    test(`a Helm chart's ${r.kind} of no environment spreading its own replicas keeps its meaning: only the expressions are added`, () => {
      const term = (selector: unknown) => ({ [PREFERRED]: [{ weight: 100, podAffinityTerm: { labelSelector: selector, topologyKey: HOSTNAME } }] });
      const byTenant = stored(r, TENANT, withAffinity(r, { podAntiAffinity: spreading }));
      const byPlatform = stored(r, PLATFORM, withAffinity(r, { podAntiAffinity: spreading }));
      for (const at of specPaths(r)) {
        assert.deepEqual(affinityOf(byTenant, at), { podAntiAffinity: term({ matchLabels: { app: 'web' }, matchExpressions: [NO_ENVIRONMENT, NO_RUNNERS] }) }, at);
        // The platform's may reach runners (its runner egress policy does): no environment's pods only.
        assert.deepEqual(affinityOf(byPlatform, at), { podAntiAffinity: term({ matchLabels: { app: 'web' }, matchExpressions: [NO_ENVIRONMENT] }) }, at);
      }
    });

    test(`alpha's ${r.kind} term already pinned to alpha, one without a labelSelector, the platform's naming environments and break-glass's are stored as written`, () => {
      const pinned = { podAffinity: { [REQUIRED]: [hostile({ matchLabels: { app: 'db', [ENV]: 'alpha' } })] }, podAntiAffinity: { [REQUIRED]: [{ topologyKey: HOSTNAME }] } };
      for (const [who, affinity] of [
        [RUNNER_A, pinned],
        [PLATFORM, { podAntiAffinity: { [REQUIRED]: [hostile({ matchExpressions: [{ key: ENV, operator: 'Exists' }] })] } }],
        [BREAK_GLASS, { podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { [ENV]: 'alpha' } })] } }],
        [MANAGER, { podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { [ENV]: 'alpha' } })] } }],
      ] as const) {
        const after = stored(r, who, withAffinity(r, affinity));
        for (const at of specPaths(r)) assert.deepEqual(affinityOf(after, at), affinity, `${who.username} ${at}`);
      }
    });

    test(`a manager's ${r.kind} term naming another environment's pods is refused`, () => {
      refused(answer('validate', review(r, MANAGER, withAffinity(r, { podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { [ENV]: 'beta' } })] } }))), /\[selector\.affinity-scope\] .*selects pods of environments it does not manage; alpha-manager acts for no environment here/);
    });
  }

  test('a requester of no environment in a namespace bound to an environment: its manager\'s terms are left as written', () => {
    const affinity = { podAntiAffinity: spreading };
    for (const r of [POD, DEPLOYMENT]) for (const at of specPaths(r)) assert.deepEqual(affinityOf(stored(r, MANAGER, withAffinity(r, affinity), undefined, 'sandbox-a'), at), affinity, at);
  });

  test("a manager's term in its bound namespace that reaches other namespaces (namespaceSelector, namespaces) selects its environment's pods only", () => {
    const reaching = (extra: Spec) => ({ podAntiAffinity: { [REQUIRED]: [{ labelSelector: {}, topologyKey: 'kubernetes.io/os', ...extra }] } });
    for (const extra of [{ namespaceSelector: {} }, { namespaces: ['shared'] }])
      for (const r of [POD, DEPLOYMENT])
        for (const at of specPaths(r)) assert.deepEqual(affinityOf(stored(r, MANAGER, withAffinity(r, reaching(extra)), undefined, 'sandbox-a'), at), { podAntiAffinity: { [REQUIRED]: [{ labelSelector: { matchLabels: { [ENV]: 'alpha' } }, topologyKey: 'kubernetes.io/os', ...extra }] } }, `${r.kind} ${JSON.stringify(extra)}`);
    // Its own namespace named is no reach beyond it.
    const own = reaching({ namespaces: ['sandbox-a'] });
    assert.deepEqual(affinityOf(stored(POD, MANAGER, withAffinity(POD, own), undefined, 'sandbox-a'), 'spec'), own);
  });

  test("a custom resource's pod template its operator copies (an Argo Rollout's, a KEDA ScaledJob's) is scoped where it is written, at CREATE and on UPDATE", () => {
    const hostileTerm = { podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { app: 'web' } })] } };
    const cases: Array<[KindRow, string]> = [[rowOf('Rollout'), 'spec.template.spec'], [rowOf('ScaledJob'), 'spec.jobTargetRef.template.spec']];
    // cert-manager's ACME HTTP01 solver pods, from a pod template under a list of solvers.
    const solver = (affinity: unknown) => ({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'acme', namespace: 'shared' }, spec: { acme: { server: 'https://acme.example/directory', disableAccountKeyGeneration: true, solvers: [{ dns01: {} }, { http01: { ingress: { podTemplate: { spec: { affinity } } } } }] } } }) as unknown as KubeObject;
    const issuerRow = rowOf('Issuer');
    const at = 'spec.acme.solvers.1.http01.ingress.podTemplate.spec';
    assert.deepEqual(affinityOf(stored(issuerRow, RUNNER_B, solver({ podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { app: 'web' } })] } })), at), { podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { app: 'web', [ENV]: 'beta' } })] } });
    refused(answer('mutate', review(issuerRow, RUNNER_B, solver({ podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { [ENV]: 'alpha' } })] } }))), /\[selector\.affinity-scope\] spec\.acme\.solvers\[1\]\.http01\.ingress\.podTemplate\.spec\.affinity/);
    // An environment writes these only in a namespace bound to it (guard.operator-pods): alpha's sandbox-a here.
    for (const [r, at] of cases) {
      const make = (affinity: unknown, namespace = 'sandbox-a'): KubeObject => {
        const obj: Spec = { apiVersion: apiVersionOf(r), kind: r.kind, metadata: { name: 'web', namespace } };
        put(obj, at, podSpec(affinity));
        return obj as KubeObject;
      };
      const scoped = stored(r, RUNNER_A, make(hostileTerm), undefined, 'sandbox-a');
      assert.deepEqual(affinityOf(scoped, at), { podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { app: 'web', [ENV]: 'alpha' } })] } }, r.kind);
      refused(answer('mutate', review(r, RUNNER_A, make({ podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { [ENV]: 'beta' } })] } }), undefined, 'sandbox-a')), /\[selector\.affinity-scope\] .*selects pods of environment "beta"/);
      const byTenant = stored(r, TENANT, make(hostileTerm, 'shared'));
      assert.deepEqual(affinityOf(byTenant, at), { podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { app: 'web' }, matchExpressions: [NO_ENVIRONMENT, NO_RUNNERS] })] } }, r.kind);
      // An UPDATE that changes the template is scoped again; the validating side holds it.
      const changed = make({ podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { app: 'api' } })] } });
      const again = stored(r, RUNNER_A, changed, scoped, 'sandbox-a');
      assert.deepEqual(affinityOf(again, at), { podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { app: 'api', [ENV]: 'alpha' } })] } }, r.kind);
      // The install sends a custom resource's UPDATE to the mutating webhook too: the validating side holds a term naming another environment, or one it did not scope.
      refused(answer('validate', review(r, RUNNER_A, make({ podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { [ENV]: 'beta' } })] } }), scoped, 'sandbox-a')), /\[selector\.affinity-scope\] .*selects pods of environment "beta"/);
      refused(answer('validate', review(r, RUNNER_A, { ...changed, metadata: scoped.metadata }, scoped, 'sandbox-a')), /\[selector\.affinity-scope\] .*may select pods of any environment.*was it bypassed/);
    }
  });

  for (const [who, added] of [[TENANT, [NO_ENVIRONMENT, NO_RUNNERS]], [RUNNER_A, undefined]] as const)
    test(`a Deployment UPDATE whose template drops what was added (a server-side apply of the chart as written) gets it back: ${who.username}`, () => {
      const before = stored(DEPLOYMENT, who, withAffinity(DEPLOYMENT, { podAntiAffinity: spreading }));
      const apply = structuredClone(before) as Spec;
      apply.spec.template.spec.affinity = { podAntiAffinity: spreading };
      const after = stored(DEPLOYMENT, who, apply as KubeObject, before);
      assert.deepEqual(after.spec?.template, before.spec?.template);
      const selector = (get(after, `spec.template.spec.affinity.podAntiAffinity.${PREFERRED}`) as Spec[])[0]!.podAffinityTerm.labelSelector;
      assert.deepEqual(selector, added === undefined ? { matchLabels: { app: 'web', [ENV]: 'alpha' } } : { matchLabels: { app: 'web' }, matchExpressions: added });
    });

  test('a Deployment UPDATE that leaves its templates alone is not judged by the rule: a template stored before it stands', () => {
    const old = withAffinity(DEPLOYMENT, { podAntiAffinity: spreading }) as Spec;
    old.metadata.labels = { app: 'web', 'deed.dev/no-environment': 'true' };
    old.spec.selector.matchLabels['deed.dev/no-environment'] = 'true';
    old.spec.template.metadata.labels['deed.dev/no-environment'] = 'true';
    const scaled = structuredClone(old);
    scaled.spec.replicas = 3;
    const body = review(DEPLOYMENT, TENANT, scaled as KubeObject, old as KubeObject);
    const m = answer('mutate', body);
    assert.equal(m.allowed, true, m.status?.message);
    assert.equal(m.patch, undefined);
    assert.equal(answer('validate', body).allowed, true);
  });

  test('a term that names another environment in a changed template is refused on UPDATE too', () => {
    const before = stored(DEPLOYMENT, RUNNER_B, withAffinity(DEPLOYMENT, { podAntiAffinity: spreading }));
    const aimed = structuredClone(before) as Spec;
    aimed.spec.template.spec.affinity.podAntiAffinity[PREFERRED][0].podAffinityTerm.labelSelector.matchLabels[ENV] = 'alpha';
    refused(answer('mutate', review(DEPLOYMENT, RUNNER_B, aimed as KubeObject, before)), /\[selector\.affinity-scope\] spec\.template\.spec\.affinity\.podAntiAffinity\.preferredDuringSchedulingIgnoredDuringExecution\[0\]\.podAffinityTerm\.labelSelector: selects pods of environment "alpha"/);
    refused(answer('validate', review(DEPLOYMENT, RUNNER_B, aimed as KubeObject, before)), /\[selector\.affinity-scope\]/);
  });

  test('the rule has a mode: in warn a term naming another environment is admitted with a warning', () => {
    const d = decide('mutate', review(POD, RUNNER_B, withAffinity(POD, { podAntiAffinity: { [REQUIRED]: [hostile({ matchLabels: { [ENV]: 'alpha' } })] } })), testContext({ ...POLICY, rules: { 'selector.affinity-scope': 'warn' } }));
    assert.ok(d.kind === 'review');
    assert.equal(d.response.response.allowed, true, d.response.response.status?.message);
    assert.ok((d.response.response.warnings ?? []).some((w) => w.includes('selector.affinity-scope')));
  });
});
