// The controller doors, decided without a cluster: workload templates judged as their
// writer's pods (one rule set at a path prefix), no client stamps in any template, a
// sandbox pod's ephemeral claims stamped as its environment's, service-account tokens,
// and snapshots judged by their source claim. The same doors in a real API server, with
// the controllers running: test/e2e/cases/controllers.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import { verifyObject } from '../src/policy/stamps/key-ring.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { combinedLookup, followUpLookups, gatheredLookup, lookupKey, planLookups } from '../src/policy/lookup.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import type { ConfigInput } from '../src/config/schema.js';
import { claimLookup, claimOf, decodePatch, fixture, FIXTURE_KEYS, FIXTURE_POLICY, stampedMetadata, testContext, TEST_RING, type Review, NO_READERS } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies reach deep into specs
type Spec = Record<string, any>;

const KEYS = stampKeys('deed.dev');
const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;
const RUNNER_B = fixture('mutate-create-pod-by-other-namespace-runner.json').request.userInfo as UserInfo;
/** Acts for no environment (the fixture policy names no break-glass). */
const NOBODY = fixture('mutate-create-pod-by-admin.json').request.userInfo as UserInfo;
const KUBELET: UserInfo = { username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'], extra: {} };

const RESOURCES: Record<string, { group: string; resource: string; kind: string; specAt: string; apiVersion: string }> = {
  Deployment: { group: 'apps', resource: 'deployments', kind: 'Deployment', specAt: 'spec.template.spec', apiVersion: 'apps/v1' },
  ReplicaSet: { group: 'apps', resource: 'replicasets', kind: 'ReplicaSet', specAt: 'spec.template.spec', apiVersion: 'apps/v1' },
  StatefulSet: { group: 'apps', resource: 'statefulsets', kind: 'StatefulSet', specAt: 'spec.template.spec', apiVersion: 'apps/v1' },
  DaemonSet: { group: 'apps', resource: 'daemonsets', kind: 'DaemonSet', specAt: 'spec.template.spec', apiVersion: 'apps/v1' },
  Job: { group: 'batch', resource: 'jobs', kind: 'Job', specAt: 'spec.template.spec', apiVersion: 'batch/v1' },
  CronJob: { group: 'batch', resource: 'cronjobs', kind: 'CronJob', specAt: 'spec.jobTemplate.spec.template.spec', apiVersion: 'batch/v1' },
  ReplicationController: { group: '', resource: 'replicationcontrollers', kind: 'ReplicationController', specAt: 'spec.template.spec', apiVersion: 'v1' },
  PodTemplate: { group: '', resource: 'podtemplates', kind: 'PodTemplate', specAt: 'template.spec', apiVersion: 'v1' },
};

function podSpec(extra: Spec = {}): Spec {
  return { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }], ...extra };
}

function workload(kind: string, spec: Spec, meta: Spec = {}): KubeObject {
  const r = RESOURCES[kind]!;
  const template = { metadata: meta, spec: kind === 'Job' || kind === 'CronJob' ? { ...spec, restartPolicy: 'Never' } : spec };
  const base = { apiVersion: r.apiVersion, kind, metadata: { name: 'w', namespace: 'sandbox-b' } };
  if (kind === 'PodTemplate') return { ...base, template } as unknown as KubeObject;
  if (kind === 'CronJob') return { ...base, spec: { schedule: '0 0 1 1 *', jobTemplate: { spec: { template } } } } as KubeObject;
  return { ...base, spec: { template } } as KubeObject;
}

/** A workload of a requester of no environment, whose selector excludes every environment's pods (selector-scope.ts). */
function unscoped(obj: KubeObject): KubeObject {
  return { ...obj, spec: { ...obj.spec, selector: { matchExpressions: [{ key: KEYS.environment, operator: 'DoesNotExist' }] } } };
}

/** A review of `object` at `resource`, as the API server sends it. */
function review(resource: { group: string; resource: string; kind: string }, object: KubeObject | null, userInfo: UserInfo, more: Spec = {}): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  body.request = {
    ...body.request,
    kind: { group: resource.group, version: 'v1', kind: resource.kind },
    resource: { group: resource.group, version: 'v1', resource: resource.resource },
    requestKind: undefined,
    requestResource: undefined,
    name: object?.metadata.name,
    namespace: 'sandbox-b',
    userInfo,
    object,
    ...more,
  };
  return body;
}

function answer(body: Review, lookup?: ObjectLookup, webhook: 'mutate' | 'validate' = 'validate', config: ConfigInput = FIXTURE_POLICY): AdmissionResponse {
  const d = decide(webhook, body, testContext(config, undefined, undefined, lookup));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** The CREATE as the validating webhook sees it: after the mutating one stamped the workload. */
function afterMutation(body: Review): Review {
  const m = decide('mutate', body, testContext());
  assert.ok(m.kind === 'review' && m.response.response.allowed, m.kind === 'review' ? m.response.response.status?.message : m.message);
  return { ...body, request: { ...body.request, object: jsonpatch.applyPatch(structuredClone(body.request.object!), decodePatch(m.response)).newDocument } };
}

function denied(body: Review, pattern: RegExp, lookup?: ObjectLookup): string {
  const r = answer(body, lookup);
  assert.equal(r.allowed, false, 'expected a denial');
  assert.match(r.status?.message ?? '', pattern);
  return r.status!.message!;
}

function allowed(body: Review, lookup?: ObjectLookup): void {
  const r = answer(body, lookup);
  assert.equal(r.allowed, true, r.status?.message);
}

/** A lookup that answers these service accounts (a review reads the one a template runs as). */
const accounts = (entries: Record<string, Lookup>): ObjectLookup => ({ ...gatheredLookup(new Map(Object.entries(entries)), 'not read in this test'), readers: NO_READERS }); // no HPA names the workload (reference.live-reader)

describe('workload templates are judged as the pods their writer would create', () => {
  for (const [kind, r] of Object.entries(RESOURCES)) {
    test(`a ${kind} that runs as beta's runner account is refused from a requester of no environment, at ${r.specAt}`, () => {
      denied(review(r, workload(kind, podSpec({ serviceAccountName: 'runner' })), NOBODY), new RegExp(`\\[guard\\.service-account\\] ${r.specAt.replaceAll('.', '\\.')}\\.serviceAccountName: service account sandbox-b:runner acts for environment "beta"`));
    });
    test(`beta's own ${kind} running as its runner account is admitted`, () => {
      // The account is read for its stamps, as at a pod's CREATE: beta's runner account carries none.
      allowed(afterMutation(review(r, workload(kind, podSpec({ serviceAccountName: 'runner' })), RUNNER_B)), accounts({ 'serviceaccounts/sandbox-b/runner': { state: 'found', metadata: {} } }));
    });
  }

  test("beta's Deployment that runs as alpha's stamped account is refused at the Deployment, not at each pod it would make; an account not made yet is the pods' to meet", () => {
    const D = RESOURCES.Deployment!;
    const alphaAccount = { state: 'found', metadata: stampedMetadata('ServiceAccount', 'alpha', 'sandbox-b').metadata } as Lookup;
    const body = review(D, workload('Deployment', podSpec({ serviceAccountName: 'alpha-lab' })), RUNNER_B);
    assert.ok(planLookups(body, 'validate', FIXTURE_KEYS).lookups.some((k) => k.resource === 'serviceaccounts' && k.name === 'alpha-lab'), 'the read plan names the account');
    denied(body, /\[guard\.service-account\] spec\.template\.spec\.serviceAccountName: service account sandbox-b:alpha-lab is stamped for environment "alpha"; system:serviceaccount:sandbox-b:runner does not act for it, and may not make pods that run as it from a Deployment template/, accounts({ 'serviceaccounts/sandbox-b/alpha-lab': alphaAccount }));
    allowed(afterMutation(body), accounts({ 'serviceaccounts/sandbox-b/alpha-lab': { state: 'absent' } }));
  });

  test('the deprecated spec.serviceAccount is read when serviceAccountName is empty', () => {
    denied(review(RESOURCES.Deployment!, workload('Deployment', podSpec({ serviceAccount: 'runner' })), NOBODY), /\[guard\.service-account\]/);
  });

  test("a Deployment mounting alpha's claim is refused from beta, naming the template's volume", () => {
    const lookup = claimLookup({ 'sandbox-b/alpha-ws': claimOf('alpha', 'sandbox-b') });
    denied(
      review(RESOURCES.Deployment!, workload('Deployment', podSpec({ volumes: [{ name: 'ws', persistentVolumeClaim: { claimName: 'alpha-ws' } }] })), RUNNER_B),
      /\[claim\.cross-environment\] spec\.template\.spec\.volumes\[name=ws\]\.persistentVolumeClaim\.claimName: volume "ws" mounts claim alpha-ws, which belongs to another environment/,
      lookup,
    );
  });

  const configMaps = gatheredLookup(new Map([[lookupKey({ resource: 'configmaps', namespace: 'sandbox-b', name: 'alpha-script' }), { state: 'found', metadata: stampedMetadata('ConfigMap', 'alpha', 'sandbox-b').metadata } as Lookup]]), 'not in this test');
  const readsScript: Array<[string, Spec]> = [
    ['a configMap volume', { volumes: [{ name: 'scripts', configMap: { name: 'alpha-script' } }] }],
    ['a projected source', { volumes: [{ name: 'v', projected: { sources: [{ configMap: { name: 'alpha-script' } }] } }] }],
    ['configMapKeyRef', { containers: [{ name: 'main', image: 'agent:1', env: [{ name: 'S', valueFrom: { configMapKeyRef: { name: 'alpha-script', key: 'run.sh' } } }] }] }],
    ['envFrom', { initContainers: [{ name: 'init', image: 'agent:1', envFrom: [{ configMapRef: { name: 'alpha-script' } }] }] }],
  ];
  for (const [kind, r] of Object.entries(RESOURCES))
    for (const [form, extra] of readsScript)
      test(`a ${kind} whose template reads alpha's ConfigMap through ${form} is refused from beta, at ${r.specAt}`, () => {
        const body = review(r, workload(kind, podSpec(extra)), RUNNER_B);
        assert.ok(planLookups(body, 'validate', FIXTURE_KEYS).lookups.some((k) => k.resource === 'configmaps' && k.name === 'alpha-script'), 'the read plan names the ConfigMap');
        denied(body, new RegExp(`\\[configmap-ref\\.cross-environment\\] ${r.specAt.replaceAll('.', '\\.')}\\.[^:]*configMap(KeyRef|Ref)?\\.name: .*ConfigMap alpha-script, which belongs to another environment`), configMaps);
      });

  test("the sandbox template rules hold in an environment's templates, at the template's path", () => {
    const spec = podSpec({ containers: [{ name: 'main', image: 'x' }, { name: 'sidecar', image: 'y', volumeMounts: [{ name: 'scratch', mountPath: '/workspace/cache' }] }], volumes: [{ name: 'scratch', emptyDir: {} }] });
    denied(review(RESOURCES.Deployment!, workload('Deployment', spec), RUNNER_B), /\[workspace\.overlap\] spec\.template\.spec\.containers\[name=sidecar\]\.volumeMounts\[mountPath=\/workspace\/cache\]/);
  });

  test("an environment's template that leaves automountServiceAccountToken unset passes as written: its controller's pods are reviewed, and get automount off then", () => {
    const spec = podSpec();
    delete spec.automountServiceAccountToken;
    for (const [kind, r] of Object.entries(RESOURCES)) {
      const body = review(r, workload(kind, spec), RUNNER_B);
      const m = answer(body, undefined, 'mutate');
      assert.ok(!decodePatch({ response: m } as never).some((op) => op.path.endsWith('/automountServiceAccountToken')), `${kind}: the template is not changed`);
      allowed(afterMutation(body));
    }
    allowed(review(RESOURCES.Deployment!, unscoped(workload('Deployment', spec)), NOBODY, { namespace: 'plain' }));
  });

  test('a template that says automountServiceAccountToken: true is refused, as before', () => {
    denied(afterMutation(review(RESOURCES.Deployment!, workload('Deployment', podSpec({ automountServiceAccountToken: true })), RUNNER_B)), /\[template\.service-account-token\] spec\.template\.spec\.automountServiceAccountToken: is platform-owned: expected false, got true/);
  });

  describe('a controller manager without per-controller credentials (workloadControllers.perControllerCredentials: false)', () => {
    const config: ConfigInput = { ...FIXTURE_POLICY, workloadControllers: { perControllerCredentials: false } };
    const spec = podSpec();
    delete spec.automountServiceAccountToken;
    for (const [kind, r] of Object.entries(RESOURCES))
      test(`Deed writes automountServiceAccountToken: false into an environment's ${kind} template at ${r.specAt}, and the result passes`, () => {
        const body = review(r, workload(kind, spec), RUNNER_B);
        const d = decide('admit', body, testContext(config));
        assert.ok(d.kind === 'review' && d.response.response.allowed, d.kind === 'review' ? d.response.response.status?.message : d.message);
        const patch = decodePatch(d.response);
        assert.deepEqual(patch.filter((op) => op.path.endsWith('/automountServiceAccountToken')), [{ op: 'add', path: `/${r.specAt.split('.').join('/')}/automountServiceAccountToken`, value: false }]);
        const stored = jsonpatch.applyPatch(structuredClone(body.request.object), patch).newDocument as Spec;
        assert.equal(r.specAt.split('.').reduce((o: Spec, k) => o[k], stored).automountServiceAccountToken, false);
      });
    test('on an UPDATE that changes the template too; a template that sets the field, or a requester of no environment, is left alone', () => {
      const old = workload('Deployment', podSpec());
      const update = review(RESOURCES.Deployment!, workload('Deployment', { ...spec, containers: [{ name: 'main', image: 'agent:2' }] }), RUNNER_B, { operation: 'UPDATE', oldObject: old });
      assert.deepEqual(decodePatch({ response: answer(update, undefined, 'mutate', config) } as never), [{ op: 'add', path: '/spec/template/spec/automountServiceAccountToken', value: false }]);
      const set = answer(review(RESOURCES.Deployment!, workload('Deployment', podSpec()), RUNNER_B), undefined, 'mutate', config);
      assert.ok(!decodePatch({ response: set } as never).some((op) => op.path.endsWith('/automountServiceAccountToken')));
      const nobody = answer(review(RESOURCES.Deployment!, unscoped(workload('Deployment', spec)), NOBODY, { namespace: 'plain' }), undefined, 'mutate', config);
      assert.ok(nobody.allowed && !decodePatch({ response: nobody } as never).some((op) => op.path.endsWith('/automountServiceAccountToken')));
    });
    test('the validating webhook refuses a template still without it (a mutator after Deed took it out)', () => {
      const r = answer(review(RESOURCES.Deployment!, workload('Deployment', spec), RUNNER_B), undefined, 'validate', config);
      assert.equal(r.allowed, false);
      assert.match(r.status?.message ?? '', /\[template\.service-account-token\] spec\.template\.spec\.automountServiceAccountToken: must be false: the controller manager runs without per-controller credentials/);
    });
  });

  test("a Job's restartPolicy Never is the Job's, not a template collision; a Deployment's Never is", () => {
    allowed(afterMutation(review(RESOURCES.Job!, workload('Job', podSpec()), RUNNER_B)));
    denied(review(RESOURCES.Deployment!, workload('Deployment', podSpec({ restartPolicy: 'Never' })), RUNNER_B), /\[template\.restart-policy\] spec\.template\.spec\.restartPolicy/);
  });

  test('workspace grants are read from the template metadata and named at its path', () => {
    const meta = { annotations: { [KEYS.workspaceGrants]: '{"indexer":"maybe"}' } };
    denied(review(RESOURCES.Deployment!, workload('Deployment', podSpec(), meta), RUNNER_B), /\[workspace\.grant-malformed\] spec\.template\.metadata\.annotations\["deed\.dev\/workspace-grants"\]/);
  });

  test('an UPDATE that leaves the template alone is admitted; one that changes it is judged as its sender\'s', () => {
    const old = workload('Deployment', podSpec({ serviceAccountName: 'runner' }));
    const scaled = structuredClone(old) as Spec;
    scaled.spec.replicas = 3;
    allowed(review(RESOURCES.Deployment!, scaled as KubeObject, NOBODY, { operation: 'UPDATE', oldObject: old }));
    const changed = structuredClone(old) as Spec;
    changed.spec.template.spec.containers[0].image = 'evil:1';
    denied(review(RESOURCES.Deployment!, changed as KubeObject, NOBODY, { operation: 'UPDATE', oldObject: old }), /\[guard\.service-account\]/);
  });

  test('a subresource of a workload (scale, status) is not a template door', () => {
    const old = workload('Deployment', podSpec({ serviceAccountName: 'runner' }));
    allowed(review(RESOURCES.Deployment!, old, NOBODY, { operation: 'UPDATE', oldObject: old, subResource: 'status' }));
    const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'w', namespace: 'sandbox-b' }, spec: { replicas: 3 } } as KubeObject;
    const unstamped = gatheredLookup(new Map([['deployments/sandbox-b/w', { state: 'found', metadata: {} } as Lookup]]), 'not read');
    allowed(review(RESOURCES.Deployment!, scale, NOBODY, { operation: 'UPDATE', oldObject: scale, subResource: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } }), unstamped);
  });

  test('a body whose kind disagrees with its resource is refused', () => {
    const body = workload('Deployment', podSpec());
    denied(review(RESOURCES.Job!, body, NOBODY), /\[request\.malformed\] resource jobs must carry a Job, got "Deployment"/);
  });

  test('a workload that names a claim or snapshot plans those lookups, and only for changed templates on UPDATE', () => {
    const obj = workload('StatefulSet', podSpec({ volumes: [{ name: 'ws', persistentVolumeClaim: { claimName: 'c1' } }] })) as Spec;
    obj.spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 's1' } } }];
    const plan = planLookups(review(RESOURCES.StatefulSet!, obj as KubeObject, RUNNER_B), 'validate', FIXTURE_KEYS);
    // And the HPAs of the namespace that name it (reference.live-reader).
    assert.deepEqual(plan.lookups.map(lookupKey), ['volumesnapshots/sandbox-b/s1', 'persistentvolumeclaims/sandbox-b/c1', 'statefulsets/sandbox-b/w readers']);
    const update = planLookups(review(RESOURCES.StatefulSet!, obj as KubeObject, RUNNER_B, { operation: 'UPDATE', oldObject: structuredClone(obj) }), 'validate', FIXTURE_KEYS);
    assert.deepEqual(update.lookups, []);
  });
});

describe("the ephemeral volumes of an environment's workloads make that environment's claims", () => {
  const eph = { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } } };
  const stampedDeployment = (who: UserInfo = RUNNER_B): Spec => {
    const obj = workload('Deployment', podSpec({ volumes: [structuredClone(eph)] }));
    const body = review(RESOURCES.Deployment!, obj, who);
    const r = answer(body, undefined, 'mutate');
    assert.equal(r.allowed, true, r.status?.message);
    const ops = decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: r });
    assert.ok(ops.some((o) => o.path === '/spec/template/spec/volumes/0/ephemeral/volumeClaimTemplate/metadata'), JSON.stringify(ops));
    return jsonpatch.applyPatch(structuredClone(obj), ops).newDocument as Spec;
  };
  const claimOfTemplate = (obj: Spec): KubeObject => {
    const m = obj.spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate.metadata;
    return { kind: 'PersistentVolumeClaim', metadata: { labels: m.labels, annotations: m.annotations } };
  };

  test("the mutating side stamps a Deployment's ephemeral template for the writer's environment; the claim verifies, and the validating side admits it", () => {
    const obj = stampedDeployment();
    const c = claimOfTemplate(obj);
    assert.equal(c.metadata.labels?.[KEYS.environment], 'beta');
    assert.ok(verifyObject(TEST_RING, c, KEYS, 'PersistentVolumeClaim', 'sandbox-b').ok);
    allowed(review(RESOURCES.Deployment!, obj as KubeObject, RUNNER_B));
  });

  test("an environment's workload whose ephemeral template lacks the stamps was not mutated: refused", () => {
    denied(review(RESOURCES.Deployment!, workload('Deployment', podSpec({ volumes: [structuredClone(eph)] })), RUNNER_B), /\[stamp\.missing\] spec\.template\.spec\.volumes\[name=scratch\]\.ephemeral\.volumeClaimTemplate\.metadata: carries no claim stamps of environment "beta"/);
  });

  test('a change by a requester of no environment (a manager restarting it) keeps the stamps; one that changes them is refused', () => {
    const old = stampedDeployment();
    const restarted = structuredClone(old);
    restarted.spec.template.metadata = { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-12-01T00:00:00Z' } };
    const kubelet = review(RESOURCES.Deployment!, restarted as KubeObject, KUBELET, { operation: 'UPDATE', oldObject: old });
    allowed(kubelet);
    const nobody = review(RESOURCES.Deployment!, restarted as KubeObject, NOBODY, { operation: 'UPDATE', oldObject: old });
    // Acting for no environment in sandbox-b, whose default account is beta's: only the account is refused, not the kept stamps.
    assert.doesNotMatch(answer(nobody).status?.message ?? '', /stamp\.template/);
    const forged = structuredClone(restarted);
    forged.spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.labels[KEYS.environment] = 'alpha';
    denied(review(RESOURCES.Deployment!, forged as KubeObject, KUBELET, { operation: 'UPDATE', oldObject: old }), /\[stamp\.template\] spec\.template\.spec\.volumes\[name=scratch\]/);
  });

  test("another environment's stamps in a workload's ephemeral template are refused at the mutating side", () => {
    const alphas = stampedDeployment(RUNNER_A);
    const body = review(RESOURCES.Deployment!, alphas as KubeObject, RUNNER_B);
    const r = answer(body, undefined, 'mutate');
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /\[stamp\.template\]/);
  });
});

describe('no client-written stamps in any template', () => {
  const copied = structuredClone(claimOf('alpha', 'sandbox-b').metadata);

  test('stamps in a pod template are refused from every requester, a requester of its own environment and a system principal included', () => {
    for (const who of [NOBODY, RUNNER_B, KUBELET])
      denied(review(RESOURCES.Deployment!, workload('Deployment', podSpec(), copied), who), /\[stamp\.template\] spec\.template\.metadata\.labels\["deed\.dev\/environment"\]: deed\.dev\/environment is admission-owned/);
  });

  test("stamps in a StatefulSet's claim template or a template's ephemeral volume are refused", () => {
    const sts = workload('StatefulSet', podSpec({ volumes: [{ name: 'e', ephemeral: { volumeClaimTemplate: { metadata: copied, spec: {} } } }] })) as Spec;
    sts.spec.volumeClaimTemplates = [{ metadata: { name: 'data', ...copied }, spec: {} }];
    const message = denied(review(RESOURCES.StatefulSet!, sts as KubeObject, RUNNER_B), /\[stamp\.template\] spec\.volumeClaimTemplates\[name=data\]\.metadata\.annotations\["deed\.dev\/attestation"\]/);
    assert.match(message, /spec\.template\.spec\.volumes\[name=e\]\.ephemeral\.volumeClaimTemplate\.metadata\.labels\["deed\.dev\/environment"\]/);
  });

  test("another tool's app.kubernetes.io/managed-by in a template is not a stamp", () => {
    allowed(review(RESOURCES.Deployment!, unscoped(workload('Deployment', podSpec(), { labels: { 'app.kubernetes.io/managed-by': 'helm' } })), NOBODY, { namespace: 'plain' }));
  });

  test("stamps copied into a pod's ephemeral volume are refused from a requester of no environment, and from beta's runner at the mutating side", () => {
    const pod = fixture('mutate-create-pod-by-other-namespace-runner.json');
    pod.request.object.spec.volumes.push({ name: 'squat', ephemeral: { volumeClaimTemplate: { metadata: copied, spec: {} } } });
    const mutated = answer(pod, undefined, 'mutate');
    assert.equal(mutated.allowed, false);
    assert.match(mutated.status?.message ?? '', /\[stamp\.template\] spec\.volumes\[name=squat\]\.ephemeral\.volumeClaimTemplate\.metadata\.labels\["deed\.dev\/environment"\]/);
    const byNobody = structuredClone(pod);
    byNobody.request.userInfo = NOBODY;
    byNobody.request.operation = 'CREATE';
    const r = answer(byNobody);
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /\[stamp\.template\] spec\.volumes\[name=squat\]/);
  });
});

describe("a sandbox pod's ephemeral claims are its environment's", () => {
  const withEphemeral = () => {
    const body = fixture('mutate-create-pod-by-runner.json');
    body.request.object.spec.volumes.push({ name: 'scratch', ephemeral: { volumeClaimTemplate: { metadata: { labels: { purpose: 'cache' } }, spec: { accessModes: ['ReadWriteOnce'] } } } });
    body.request.object.spec.volumes.push({ name: 'bare', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } } });
    return body;
  };
  const mutated = (body: Review) => {
    const r = answer(body, undefined, 'mutate');
    assert.equal(r.allowed, true, r.status?.message);
    return jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: r })).newDocument as Spec;
  };
  /** What the ephemeral-volume controller makes of a template: a claim with its labels and annotations. */
  const claimFrom = (pod: Spec, volume: string): KubeObject => {
    const template = pod.spec.volumes.find((v: Spec) => v.name === volume).ephemeral.volumeClaimTemplate;
    return { kind: 'PersistentVolumeClaim', metadata: { name: `${pod.metadata.name}-${volume}`, labels: template.metadata.labels, annotations: template.metadata.annotations } };
  };

  test('the mutating side stamps every ephemeral template, keeping the client\'s labels, with a nonce each; the claims verify as claims of the namespace', () => {
    const pod = mutated(withEphemeral());
    const scratch = claimFrom(pod, 'scratch');
    const bare = claimFrom(pod, 'bare');
    for (const c of [scratch, bare]) {
      assert.equal(c.metadata.labels?.[KEYS.environment], 'alpha');
      assert.equal(c.metadata.labels?.[KEYS.ownerUid], RUNNER_A.extra['authentication.kubernetes.io/pod-uid']![0]);
      assert.ok(verifyObject(TEST_RING, c, KEYS, 'PersistentVolumeClaim', 'sandbox-a').ok);
      assert.equal(verifyObject(TEST_RING, c, KEYS, 'PersistentVolumeClaim', 'sandbox-b').ok, false, 'not as a claim of another namespace');
    }
    assert.equal(scratch.metadata.labels?.purpose, 'cache');
    assert.notEqual(scratch.metadata.annotations?.[KEYS.createNonce], bare.metadata.annotations?.[KEYS.createNonce]);
  });

  test('the validating side admits the stamped pod, and refuses one whose template stamps were changed or are missing', () => {
    const body = withEphemeral();
    const podStamped = mutated(body);
    allowed(withObjectOf(body, podStamped));
    const tampered = structuredClone(podStamped);
    tampered.spec.volumes.find((v: Spec) => v.name === 'scratch').ephemeral.volumeClaimTemplate.metadata.labels[KEYS.environment] = 'beta';
    denied(withObjectOf(body, tampered), /\[stamp\.missing\] spec\.volumes\[name=scratch\]\.ephemeral\.volumeClaimTemplate\.metadata\.labels\["deed\.dev\/environment"\]: is "beta", expected "alpha"/);
    const bare = structuredClone(podStamped);
    delete bare.spec.volumes.find((v: Spec) => v.name === 'bare').ephemeral.volumeClaimTemplate.metadata;
    denied(withObjectOf(body, bare), /\[stamp\.missing\] spec\.volumes\[name=bare\]\.ephemeral\.volumeClaimTemplate\.metadata/);
  });

  test('on reinvocation Deed finds its own template stamps and keeps them', () => {
    const body = withEphemeral();
    const once = mutated(body);
    const again = withObjectOf(body, once);
    const r = answer(again, undefined, 'mutate');
    assert.equal(r.allowed, true, r.status?.message);
    const ops = decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: r });
    assert.deepEqual(ops.filter((o) => o.path.includes('volumeClaimTemplate')), []);
  });

  test('with an ephemeral workspace (workspace.source: ephemeral), the workspace claim <pod>-workspace is stamped as the environment\'s and the pod is admitted', () => {
    const config: ConfigInput = { ...FIXTURE_POLICY, template: { volumes: { workspace: { source: 'ephemeral' } } } };
    const body = fixture('mutate-create-pod-by-runner.json');
    body.request.object.spec.volumes[0] = { name: 'workspace', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } } };
    const r = answer(body, undefined, 'mutate', config);
    assert.equal(r.allowed, true, r.status?.message);
    const pod = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: r })).newDocument as Spec;
    const workspace = claimFrom(pod, 'workspace');
    assert.equal(workspace.metadata.name, 'sbx-1-workspace');
    assert.equal(workspace.metadata.labels?.[KEYS.environment], 'alpha');
    assert.ok(verifyObject(TEST_RING, workspace, KEYS, 'PersistentVolumeClaim', 'sandbox-a').ok);
    const v = answer(withObjectOf(body, pod), undefined, 'validate', config);
    assert.equal(v.allowed, true, v.status?.message);
  });

  test("a requester of no environment's pod gets no template stamps", () => {
    const body = withEphemeral();
    body.request.userInfo = NOBODY;
    const r = answer(body, undefined, 'mutate');
    const ops = decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: r });
    assert.deepEqual(ops.filter((o) => o.path.includes('volumeClaimTemplate')), []);
  });
});

function withObjectOf(body: Review, obj: Spec): Review {
  return { ...body, request: { ...body.request, object: obj } };
}

describe('service-account credentials', () => {
  const SECRETS = { group: '', resource: 'secrets', kind: 'Secret' };
  const tokenSecret = (account: string): KubeObject =>
    ({ apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 't', namespace: 'sandbox-b', annotations: { 'kubernetes.io/service-account.name': account } } }) as KubeObject;
  const TOKEN = { group: '', resource: 'serviceaccounts', kind: 'TokenRequest' };
  const tokenRequest = (account: string, userInfo: UserInfo) =>
    review(TOKEN, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: { name: account }, spec: {} } as unknown as KubeObject, userInfo, { subResource: 'token', name: account });

  test("a token Secret naming beta's runner account is refused from a requester of no environment, naming the annotation", () => {
    denied(review(SECRETS, tokenSecret('runner'), NOBODY), /\[guard\.service-account\] metadata\.annotations\["kubernetes\.io\/service-account\.name"\]: service account sandbox-b:runner acts for environment "beta"; kube-lab-admin does not, and may not create a Secret the token controller fills with its token/);
  });

  test('renaming the account of an existing token Secret to a runner\'s is refused', () => {
    const old = { ...tokenSecret('builder'), metadata: { ...tokenSecret('builder').metadata, namespace: 'plain' } } as KubeObject;
    const next = structuredClone(old);
    next.metadata.annotations!['kubernetes.io/service-account.name'] = 'runner';
    const body = review(SECRETS, next, NOBODY, { operation: 'UPDATE', oldObject: old, namespace: 'sandbox-b' });
    denied(body, /\[guard\.service-account\]/);
  });

  test('a TokenRequest for a runner account is refused from another environment and from no environment; its own, the kubelet and no-environment accounts pass', () => {
    denied(tokenRequest('runner', NOBODY), /\[guard\.service-account\] service account sandbox-b:runner acts for environment "beta"; kube-lab-admin does not, and may not request a token of it/);
    const alphaAsks = tokenRequest('runner', RUNNER_A);
    denied(alphaAsks, /acts for environment "beta"; system:serviceaccount:sandbox-a:runner does not/);
    // The account exists, unstamped (the API server's own), as Deed's read finds it.
    const unstamped: ObjectLookup = { readers: NO_READERS, get: (resource) => (resource === 'serviceaccounts' ? { state: 'found', metadata: {} } : { state: 'unknown', reason: 'not in this test' }) };
    allowed(tokenRequest('runner', RUNNER_B), unstamped);
    allowed(tokenRequest('runner', KUBELET));
    const elsewhere = tokenRequest('builder', NOBODY);
    elsewhere.request.namespace = 'plain';
    allowed(elsewhere, unstamped);
    denied(elsewhere, /\[guard\.service-account\] cannot tell whose service account plain:builder is/);
  });
});

describe('snapshots are judged by their source claim', () => {
  const SNAPSHOTS = { group: 'snapshot.storage.k8s.io', resource: 'volumesnapshots', kind: 'VolumeSnapshot' };
  const PVCS = { group: '', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' };
  const snapshot = (source: string) => ({ apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'snap' }, spec: { source: { persistentVolumeClaimName: source } } }) as unknown as KubeObject;
  const restore = (from: string) =>
    ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'r' }, spec: { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: from } } }) as KubeObject;
  const facts = (entries: Record<string, Lookup>): ObjectLookup => gatheredLookup(new Map(Object.entries(entries)), 'not read');
  const { labels, annotations } = claimOf('alpha', 'sandbox-b').metadata;
  // Creation times as the API server gives them to a live read: the claim's before its snapshot's.
  const alphaClaim: Lookup = { state: 'found', metadata: { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) }, created: '2026-11-29T15:00:00Z' };
  const snapOf = (claim?: string): Lookup => ({ state: 'found', metadata: {}, ...(claim ? { sourceClaim: claim } : {}), created: '2026-11-29T16:00:00Z' });

  test("beta's snapshot of alpha's claim is refused; alpha's own is admitted", () => {
    const lookup = facts({ 'persistentvolumeclaims/sandbox-b/a-ws': alphaClaim });
    denied(review(SNAPSHOTS, snapshot('a-ws'), RUNNER_B), /\[claim\.cross-environment\] spec\.source\.persistentVolumeClaimName: this snapshot copies claim a-ws, which belongs to another environment; environment "beta" may not/, lookup);
    allowed(review(SNAPSHOTS, snapshot('a-ws'), RUNNER_A), lookup);
  });

  test("a claim restored from a snapshot of alpha's claim is refused from beta and from no environment", () => {
    const lookup = facts({ 'volumesnapshots/sandbox-b/s': snapOf('a-ws'), 'persistentvolumeclaims/sandbox-b/a-ws': alphaClaim });
    denied(review(PVCS, restore('s'), RUNNER_B), /\[claim\.cross-environment\] spec\.dataSource: this claim restores snapshot s of claim a-ws, which belongs to another environment; environment "beta" may not/, lookup);
    denied(review(PVCS, restore('s'), NOBODY), /a requester acting for no environment may not/, lookup);
  });

  test('a snapshot whose source claim is gone tells no environment, so restoring it is refused; one of pre-provisioned content is no environment\'s', () => {
    denied(review(PVCS, restore('s'), NOBODY), /\[claim\.unknown\] spec\.dataSource: snapshot s was taken of claim gone, which no longer exists/, facts({ 'volumesnapshots/sandbox-b/s': snapOf('gone'), 'persistentvolumeclaims/sandbox-b/gone': { state: 'absent' } }));
    allowed(review(PVCS, restore('s'), NOBODY), facts({ 'volumesnapshots/sandbox-b/s': snapOf() }));
  });

  test("a claim made under the source claim's name after the snapshot is not the one it copied: restoring it is refused, whoever's the claim now is", () => {
    // Alpha's claim was deleted after its snapshot; beta made one under its name, then restores alpha's snapshot.
    const { labels: betaLabels, annotations: betaAnnotations } = claimOf('beta', 'sandbox-b').metadata;
    const betaClaim: Lookup = { state: 'found', metadata: { ...(betaLabels ? { labels: betaLabels } : {}), ...(betaAnnotations ? { annotations: betaAnnotations } : {}) }, created: '2026-11-29T17:00:00Z' };
    const lookup = facts({ 'volumesnapshots/sandbox-b/s': snapOf('a-ws'), 'persistentvolumeclaims/sandbox-b/a-ws': betaClaim });
    denied(review(PVCS, restore('s'), RUNNER_B), /\[claim\.unknown\] spec\.dataSource: snapshot s was taken of claim a-ws, which has since been deleted and made again \(created 2026-11-29T17:00:00Z, after the snapshot's 2026-11-29T16:00:00Z\)/, lookup);
    // Made in the snapshot's second: the one it copied, judged by whose it is. Without either time: cannot be told.
    denied(review(PVCS, restore('s'), RUNNER_B), /\[claim\.cross-environment\] spec\.dataSource: this claim restores snapshot s of claim a-ws/, facts({ 'volumesnapshots/sandbox-b/s': snapOf('a-ws'), 'persistentvolumeclaims/sandbox-b/a-ws': { ...alphaClaim, created: '2026-11-29T16:00:00Z' } }));
    denied(review(PVCS, restore('s'), RUNNER_B), /\[claim\.unknown\] spec\.dataSource: cannot tell whether claim a-ws is the one snapshot s was taken of/, facts({ 'volumesnapshots/sandbox-b/s': snapOf('a-ws'), 'persistentvolumeclaims/sandbox-b/a-ws': { state: 'found', metadata: betaClaim.metadata } }));
  });

  test('the snapshot is read first, then its source claim', () => {
    const plan = planLookups(review(PVCS, restore('s'), RUNNER_B), 'validate', FIXTURE_KEYS);
    // And, for a claim beta creates, the pods that read its name (reference.live-reader).
    assert.deepEqual(plan.lookups.map(lookupKey), ['volumesnapshots/sandbox-b/s', 'persistentvolumeclaims/sandbox-b/r readers']);
    const first = facts({ 'volumesnapshots/sandbox-b/s': snapOf('a-ws') });
    const next = followUpLookups(plan.lookups, first);
    assert.deepEqual(next.map(lookupKey), ['persistentvolumeclaims/sandbox-b/a-ws']);
    const both = combinedLookup(first, facts({ 'persistentvolumeclaims/sandbox-b/a-ws': alphaClaim }));
    assert.equal(both.get('persistentvolumeclaims', 'sandbox-b', 'a-ws').state, 'found');
    assert.equal(both.get('volumesnapshots', 'sandbox-b', 's').state, 'found');
    // A claim the first reads named too (a pod mounting it and restoring a snapshot of it) is read again, fresh, and that answer is the one judged.
    const mounted = [...plan.lookups, { resource: 'persistentvolumeclaims' as const, namespace: 'sandbox-b', name: 'a-ws' }];
    const cached: Lookup = { state: 'found', metadata: alphaClaim.metadata };
    const again = followUpLookups(mounted, facts({ 'volumesnapshots/sandbox-b/s': snapOf('a-ws'), 'persistentvolumeclaims/sandbox-b/a-ws': cached }));
    assert.deepEqual(again, [{ resource: 'persistentvolumeclaims', namespace: 'sandbox-b', name: 'a-ws', fresh: true }]);
    const judged = combinedLookup(facts({ 'volumesnapshots/sandbox-b/s': snapOf('a-ws'), 'persistentvolumeclaims/sandbox-b/a-ws': cached }), facts({ 'persistentvolumeclaims/sandbox-b/a-ws': alphaClaim }));
    assert.deepEqual(judged.get('persistentvolumeclaims', 'sandbox-b', 'a-ws'), alphaClaim);
  });
});

describe('a stored snapshot is changed or deleted only by the environment of the claim it copied', () => {
  const SNAPSHOTS = { group: 'snapshot.storage.k8s.io', resource: 'volumesnapshots', kind: 'VolumeSnapshot' };
  const TAKEN = '2026-11-29T16:00:00Z';
  const stored = (source?: string, more: Spec = {}): KubeObject =>
    ({ apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'snap', namespace: 'sandbox-b', creationTimestamp: TAKEN, ...more }, spec: { source: source ? { persistentVolumeClaimName: source } : { volumeSnapshotContentName: 'pre' } } }) as unknown as KubeObject;
  const facts = (entries: Record<string, Lookup>): ObjectLookup => gatheredLookup(new Map(Object.entries(entries)), 'not read');
  const claimMeta = (env: string) => {
    const { labels, annotations } = claimOf(env, 'sandbox-b').metadata;
    return { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
  };
  // The source claim as a fresh read answers: with its creation time, before the snapshot's.
  const alphaClaim: Lookup = { state: 'found', metadata: claimMeta('alpha'), created: '2026-11-29T15:00:00Z' };
  const withClaim = (answer: Lookup) => facts({ 'persistentvolumeclaims/sandbox-b/a-ws': answer });
  const INTRUDER: UserInfo = { username: 'mallory', groups: ['system:authenticated'], extra: {} };
  const del = (userInfo: UserInfo, old = stored('a-ws')) => review(SNAPSHOTS, null, userInfo, { operation: 'DELETE', name: 'snap', oldObject: old });
  const update = (userInfo: UserInfo, after: KubeObject, more: Spec = {}) => review(SNAPSHOTS, after, userInfo, { operation: 'UPDATE', oldObject: stored('a-ws'), ...more });
  const verdict = (body: Review, lookup: ObjectLookup, config: ConfigInput = FIXTURE_POLICY) => answer(body, lookup, 'validate', config);

  test("beta's DELETE of alpha's snapshot (one by one, or each item of a collection) is refused; alpha, the platform and a system controller delete it", () => {
    denied(del(RUNNER_B), /\[guard\.cross-environment\] system:serviceaccount:sandbox-b:\S+ acts for "beta", and this object belongs to another environment/, withClaim(alphaClaim));
    denied(del(INTRUDER), /\[guard\.unmapped\] mallory acts for no environment/, withClaim(alphaClaim));
    allowed(del(RUNNER_A), withClaim(alphaClaim));
    // NOBODY is in system:masters, the default platform.
    allowed(del(NOBODY), withClaim(alphaClaim));
    const controller: UserInfo = { username: 'system:serviceaccount:snapshots:snapshot-controller', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
    const withController: ConfigInput = { ...FIXTURE_POLICY, systemPrincipals: { users: ['system:serviceaccount:snapshots:snapshot-controller'], groups: ['system:nodes'] } };
    assert.equal(verdict(del(controller), withClaim(alphaClaim), withController).allowed, true);
  });

  test("beta's finalizer or label on alpha's snapshot, and its status write, are refused; alpha's own pass", () => {
    const held = stored('a-ws', { finalizers: ['beta.example/hold'], labels: { owner: 'beta' } });
    denied(update(RUNNER_B, held), /\[guard\.cross-environment\]/, withClaim(alphaClaim));
    allowed(update(RUNNER_A, held), withClaim(alphaClaim));
    const status = { ...stored('a-ws'), status: { readyToUse: true, boundVolumeSnapshotContentName: 'snapcontent-of-beta' } } as KubeObject;
    denied(update(RUNNER_B, status, { subResource: 'status' }), /\[guard\.cross-environment\]/, withClaim(alphaClaim));
    allowed(update(RUNNER_A, status, { subResource: 'status' }), withClaim(alphaClaim));
  });

  test('a snapshot whose source claim is gone, or was made again since, is no one environment\'s: only the platform deletes it, but in a namespace bound to an environment', () => {
    const gone = withClaim({ state: 'absent' });
    denied(del(RUNNER_B), /\[guard\.snapshot-source\] system:serviceaccount:sandbox-b:\S+ may not delete snapshot sandbox-b\/snap: it was taken of claim a-ws, which no longer exists, so whose data it holds cannot be told/, gone);
    denied(del(RUNNER_A), /\[guard\.snapshot-source\]/, gone);
    allowed(del(NOBODY), gone);
    // Beta made a claim under the name after alpha's was deleted: it does not make alpha's snapshot beta's.
    const remade = withClaim({ state: 'found', metadata: claimMeta('beta'), created: '2026-11-29T17:00:00Z' });
    denied(del(RUNNER_B), /\[guard\.snapshot-source\] .*claim a-ws was made after it/, remade);
    denied(del(RUNNER_B), /\[guard\.snapshot-source\]/, withClaim({ state: 'found', metadata: claimMeta('beta') }));
    // In a namespace bound to beta, no other environment works: its snapshots are beta's.
    const bound: ConfigInput = { ...FIXTURE_POLICY, environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'], namespaces: ['sandbox-b'] }] };
    assert.equal(verdict(del(RUNNER_B), gone, bound).allowed, true);
    assert.match(verdict(del(RUNNER_A), gone, bound).status?.message ?? '', /\[guard\.cross-environment\]/);
  });

  test('a source claim Deed cannot read refuses the write; a snapshot of pre-provisioned content, or of an unstamped claim, is anyone\'s', () => {
    denied(del(RUNNER_B), /\[guard\.owner-unknown\] cannot tell whose snapshot sandbox-b\/snap is \(cannot read its source claim a-ws: timed out\); refusing to delete it/, withClaim({ state: 'unknown', reason: 'timed out' }));
    allowed(del(RUNNER_B, stored()), facts({}));
    allowed(del(INTRUDER), withClaim({ state: 'found', metadata: {}, created: '2026-11-29T15:00:00Z' }));
  });

  test('every write of a stored snapshot reads its source claim fresh (its creation time tells whether it is the claim copied); a CREATE reads the claim it copies', () => {
    assert.deepEqual(planLookups(del(RUNNER_B), 'validate', FIXTURE_KEYS).lookups, [{ resource: 'persistentvolumeclaims', namespace: 'sandbox-b', name: 'a-ws', fresh: true }]);
    assert.deepEqual(planLookups(update(RUNNER_B, stored('a-ws'), { subResource: 'status' }), 'validate', FIXTURE_KEYS).lookups, [{ resource: 'persistentvolumeclaims', namespace: 'sandbox-b', name: 'a-ws', fresh: true }]);
    assert.deepEqual(planLookups(update(RUNNER_B, stored('other')), 'validate', FIXTURE_KEYS).lookups.map(lookupKey), ['persistentvolumeclaims/sandbox-b/a-ws', 'persistentvolumeclaims/sandbox-b/other']);
    assert.deepEqual(planLookups(review(SNAPSHOTS, stored('a-ws'), RUNNER_B), 'validate', FIXTURE_KEYS).lookups, [{ resource: 'persistentvolumeclaims', namespace: 'sandbox-b', name: 'a-ws' }]);
  });
});

describe('what a new claim is filled from is judged where no binding follows', () => {
  const PODS = { group: '', resource: 'pods', kind: 'Pod' };
  const PVCS = { group: '', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' };
  const STATEFULSET_CONTROLLER: UserInfo = { username: 'system:serviceaccount:kube-system:statefulset-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} };
  const sources: Record<string, Spec> = {
    clones: { kind: 'PersistentVolumeClaim', name: 'later-ws' },
    restores: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'later-snap' },
  };
  const nothing = (): ObjectLookup => gatheredLookup(new Map([['persistentvolumeclaims/sandbox-b/later-ws', { state: 'absent' }], ['volumesnapshots/sandbox-b/later-snap', { state: 'absent' }], ['persistentvolumeclaims/sandbox-b/mounted-later', { state: 'absent' }]]), 'not read');
  const { labels, annotations } = claimOf('alpha', 'sandbox-b').metadata;
  const alphas: Lookup = { state: 'found', metadata: { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
  const betas: Lookup = { state: 'found', metadata: { labels: claimOf('beta', 'sandbox-b').metadata.labels!, annotations: claimOf('beta', 'sandbox-b').metadata.annotations! } };

  for (const [how, dataSource] of Object.entries(sources)) {
    test(`a pod the scheduler binds may not have its ephemeral volume's claim filled from what does not exist yet (${how}); it may still mount a claim that does not exist yet`, () => {
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: podSpec({ volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], dataSource } } } }] }) } as KubeObject;
      denied(afterMutation(review(PODS, pod, RUNNER_B)), new RegExp(`\\[claim\\.absent\\] spec\\.volumes\\[name=scratch\\]\\.ephemeral\\.volumeClaimTemplate\\.spec\\.dataSource: .*does not exist; create it first`), nothing());
      const mounting = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: podSpec({ volumes: [{ name: 'later', persistentVolumeClaim: { claimName: 'mounted-later' } }] }) } as KubeObject;
      allowed(afterMutation(review(PODS, mounting, RUNNER_B)), nothing());
    });

    test(`a StatefulSet's claim template may not be filled from what does not exist yet (${how})`, () => {
      const obj = workload('StatefulSet', podSpec()) as Spec;
      obj.spec.volumeClaimTemplates = [{ metadata: { name: 'd' }, spec: { accessModes: ['ReadWriteOnce'], dataSource } }];
      denied(afterMutation(review(RESOURCES.StatefulSet!, obj as KubeObject, RUNNER_B)), /\[claim\.absent\] spec\.volumeClaimTemplates\[name=d\]\.spec\.dataSource: .*does not exist; create it first/, nothing());
    });
  }

  /** The claim the statefulset controller makes for replica 1 from beta's StatefulSet: the template's metadata, which Deed stamped for beta. */
  const madeClaim = (dataSource: Spec): KubeObject => {
    const obj = workload('StatefulSet', podSpec()) as Spec;
    obj.spec.volumeClaimTemplates = [{ metadata: { name: 'd' }, spec: { accessModes: ['ReadWriteOnce'], dataSource } }];
    const stamped = afterMutation(review(RESOURCES.StatefulSet!, obj as KubeObject, RUNNER_B)).request.object as Spec;
    const { labels: l, annotations: a } = stamped.spec.volumeClaimTemplates[0].metadata;
    return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd-w-1', labels: l, annotations: a }, spec: { accessModes: ['ReadWriteOnce'], dataSource } } as KubeObject;
  };

  test("a claim the statefulset controller makes from beta's template is refused once its source is alpha's (deleted and made again since the StatefulSet), or gone; from beta's own it is made", () => {
    const claim = madeClaim(sources.clones!);
    const body = review(PVCS, claim, STATEFULSET_CONTROLLER);
    denied(body, /\[claim\.cross-environment\] spec\.dataSource: this claim clones claim later-ws, which belongs to another environment; environment "beta" may not/, gatheredLookup(new Map([['persistentvolumeclaims/sandbox-b/later-ws', alphas]]), 'not read'));
    denied(body, /\[claim\.absent\] spec\.dataSource: claim later-ws does not exist/, nothing());
    allowed(body, gatheredLookup(new Map([['persistentvolumeclaims/sandbox-b/later-ws', betas]]), 'not read'));
    // The read is planned for the controller's CREATE.
    assert.deepEqual(planLookups(body, 'validate', FIXTURE_KEYS, testContext().policy).lookups.map(lookupKey), ['persistentvolumeclaims/sandbox-b/later-ws']);
  });

  test("the refusal of a controller's claim says that its template cannot change and what to do; in beta's bound namespace a source that does not exist yet is beta's to make, as at the StatefulSet's CREATE", () => {
    const body = review(PVCS, madeClaim(sources.clones!), STATEFULSET_CONTROLLER);
    denied(body, /environment "beta" may not \(policy: environments\[\]\.claimsFrom\)\. system:serviceaccount:kube-system:statefulset-controller makes this claim from its workload's claim template, which cannot change: create the workload again with a source of its own environment/, gatheredLookup(new Map([['persistentvolumeclaims/sandbox-b/later-ws', alphas]]), 'not read'));
    const bound: ConfigInput = { ...FIXTURE_POLICY, environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'], namespaces: ['sandbox-b'] }] };
    const r = answer(body, nothing(), 'validate', bound);
    assert.equal(r.allowed, true, r.status?.message);
  });

  test('a claim the statefulset controller makes with stamps that do not verify is refused; one with no data source is made unread', () => {
    const claim = madeClaim(sources.clones!);
    claim.metadata.labels = { ...claim.metadata.labels, [KEYS.environment]: 'alpha' };
    denied(review(PVCS, claim, STATEFULSET_CONTROLLER), /\[claim\.unknown\] metadata: this claim carries Deed's stamps but they do not verify/, gatheredLookup(new Map([['persistentvolumeclaims/sandbox-b/later-ws', alphas]]), 'not read'));
    const plain = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd-w-2' }, spec: { accessModes: ['ReadWriteOnce'] } } as KubeObject;
    const body = review(PVCS, plain, STATEFULSET_CONTROLLER);
    assert.deepEqual(planLookups(body, 'validate', FIXTURE_KEYS, testContext().policy).lookups, []);
    allowed(body);
  });
});
