// Same-environment evasions of the pod rules that keep the workspace and the platform-owned
// fields away from a sandbox pod's other containers (the adversarial review's probes P2, P4,
// P8): a shared process namespace, an ephemeral container targeting main, the main
// container's own restartPolicy, envFrom without a prefix, spec.os.name. Each is refused on
// a Pod, in a workload's template, through pods/ephemeralcontainers where it applies and in
// `deed audit`; the ordinary manifests that use the same fields still pass.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../src/admission/types.js';
import { judgeObject } from '../src/audit/judge.js';
import { parseConfig } from '../src/config/load.js';
import type { ConfigInput } from '../src/config/schema.js';
import { compilePolicy } from '../src/policy/policy.js';
import { POD_SPEC_RULES, RULES_BY_ID } from '../src/policy/rules/catalog.js';
import { processNamespaceRule, TEMPLATE_PROCESS_NAMESPACE } from '../src/policy/pod/process-namespace.js';
import { fixture, FIXTURE_POLICY, NOW, TEST_RING, type Review } from './helpers.js';
import { RUNNER, stamped as storedBy } from './reaper-helpers.js';
import { allows, denies, RUNNER_A, stamped, validate, type Pod } from './validate-helpers.js';

/** The captured CREATE of sandbox pod sbx-1 (main, and indexer granted the workspace ro), stamped, with `change` applied. */
function createPod(change: (o: Pod) => void = () => {}, config?: ConfigInput): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  change(body.request.object);
  body.request.object = stamped(body, body.request.object, RUNNER_A, config);
  return body;
}

/** The same pod spec as a Deployment's template, created by alpha's runner. */
function createDeployment(change: (o: Pod) => void): Review {
  const pod = fixture('validate-create-pod-by-runner.json');
  change(pod.request.object);
  const body = fixture('validate-create-pod-by-runner.json');
  const labels = { app: 'agent' };
  const obj = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'agent', namespace: 'sandbox-a' },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels, annotations: pod.request.object.metadata.annotations }, spec: pod.request.object.spec } },
  } as unknown as KubeObject;
  body.request = {
    ...body.request,
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    requestKind: undefined,
    requestResource: undefined,
    name: 'agent',
    object: obj,
  };
  body.request.object = stamped(body, body.request.object);
  return body;
}

/** kubectl debug on alpha's stored sandbox pod (main mounts the workspace and runtime volumes), its ephemeral container shaped by `change`. */
function addEphemeral(change: (c: Record<string, unknown>) => void): Review {
  const body = fixture('validate-update-pod-ephemeralcontainers.json');
  body.request.oldObject = stamped(body, body.request.oldObject);
  body.request.object.metadata = { ...body.request.object.metadata, labels: body.request.oldObject.metadata.labels, annotations: body.request.oldObject.metadata.annotations, ownerReferences: body.request.oldObject.metadata.ownerReferences };
  body.request.object.spec.activeDeadlineSeconds = body.request.oldObject.spec.activeDeadlineSeconds;
  change(body.request.object.spec.ephemeralContainers[0]);
  return body;
}

/** Admitted, or refused for nothing of `rule`'s (a Secret named here is unread in unit tests: `secret-ref.unknown`). */
function passes(body: Review, rule: string, config?: ConfigInput): void {
  const r = validate(body, config);
  assert.ok(!(r.status?.message ?? '').includes(`[${rule}]`) && !(r.warnings ?? []).some((w) => w.includes(rule)), r.status?.message);
}

/** `deed audit`'s results for a stored pod of alpha with this spec. */
function audit(spec: Record<string, unknown>) {
  const pod = { ...storedBy({ kind: 'Pod', name: 'agent' }), apiVersion: 'v1', kind: 'Pod', spec };
  return judgeObject(pod, 'Pod', true, { policy: compilePolicy(parseConfig(FIXTURE_POLICY)), keyRing: TEST_RING, now: NOW }, { state: 'present', uid: RUNNER.uid })!.results;
}

/** An ordinary pod of the environment (no main container): what a chart's Deployment makes. */
const ordinary = (o: Pod) => {
  o.spec.containers[0].name = 'app';
  o.spec.containers[0].volumeMounts = [];
  o.spec.containers[0].env = [];
  o.spec.containers[1].volumeMounts = [];
  o.spec.volumes = [];
  delete o.metadata.annotations!['deed.dev/workspace-grants'];
};

describe('a shared process namespace (template.process-namespace)', () => {
  test('is a rule file of its own, in the catalogue and the pod rules, denying by default and overridable', () => {
    assert.equal(RULES_BY_ID.get('template.process-namespace'), TEMPLATE_PROCESS_NAMESPACE);
    assert.ok(POD_SPEC_RULES.includes(processNamespaceRule));
    assert.equal(TEMPLATE_PROCESS_NAMESPACE.defaultMode, 'deny');
    assert.equal(TEMPLATE_PROCESS_NAMESPACE.overridable, true);
  });

  test('is refused on a sandbox pod, naming what the other containers would read', () => {
    const message = denies(createPod((o) => (o.spec.shareProcessNamespace = true)), 'template.process-namespace');
    assert.match(message, /spec\.shareProcessNamespace: shares one process namespace among its containers: each could read through \/proc what the others hold \(the main container's files, the workspace volume, the runtime volume\); leave shareProcessNamespace unset/);
  });

  test('is refused in a Deployment template, at its path', () => {
    assert.match(denies(createDeployment((o) => (o.spec.shareProcessNamespace = true)), 'template.process-namespace'), /spec\.template\.spec\.shareProcessNamespace/);
  });

  test('fails in deed audit for a stored sandbox pod', () => {
    const spec = { shareProcessNamespace: true, automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }, { name: 'sidecar', image: 'busybox' }] };
    assert.equal(audit(spec).find((r) => r.rule === 'template.process-namespace')?.result, 'fail');
  });

  test('false, or on an ordinary pod with nothing of the platform\'s, passes', () => {
    allows(createPod((o) => (o.spec.shareProcessNamespace = false)));
    allows(createPod((o) => { ordinary(o); o.spec.shareProcessNamespace = true; }));
  });

  test('is refused on a pod without the main container that mounts the workspace under another name', () => {
    const message = denies(createPod((o) => {
      ordinary(o);
      o.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'sbx-1-workspace' } }];
      o.metadata.annotations!['deed.dev/workspace-grants'] = '{"indexer":"ro"}';
      o.spec.containers[1].volumeMounts = [{ name: 'data', mountPath: '/workspace', readOnly: true }];
      o.spec.shareProcessNamespace = true;
    }), 'template.process-namespace');
    assert.match(message, /the workspace \(volume "data" on the workspace claim sbx-1-workspace\)/);
  });
});

describe('an ephemeral container targeting the main container (workspace.init-or-ephemeral)', () => {
  test('is refused through pods/ephemeralcontainers, naming what it would read and the fix', () => {
    const message = denies(addEphemeral((c) => (c.targetContainerName = 'main')), 'workspace.init-or-ephemeral');
    assert.match(message, /spec\.ephemeralContainers\[name=dbg\]\.targetContainerName: ephemeral container "dbg" targets container "main": sharing its processes, it would read the main container's environment, the workspace volume, the runtime volume through \/proc; leave targetContainerName out \(kubectl debug without --target\)/);
  });

  test('is refused targeting a sidecar that mounts the workspace', () => {
    assert.match(denies(addEphemeral((c) => (c.targetContainerName = 'indexer')), 'workspace.init-or-ephemeral'), /targets container "indexer": sharing its processes, it would read the workspace volume/);
  });

  test('kubectl debug without --target still passes, as does a target that holds nothing of the platform\'s', () => {
    allows(addEphemeral(() => {}));
    const body = addEphemeral((c) => (c.targetContainerName = 'tools'));
    for (const o of [body.request.oldObject, body.request.object]) (o as Pod).spec.containers.push({ name: 'tools', image: 'busybox' });
    allows(body);
  });
});

describe("the main container's own restartPolicy (template.restart-policy)", () => {
  test('restartPolicy Never on main is refused, with the pod-level one unset', () => {
    const message = denies(createPod((o) => { delete o.spec.restartPolicy; o.spec.containers[0].restartPolicy = 'Never'; }), 'template.restart-policy');
    assert.match(message, /spec\.containers\[name=main\]\.restartPolicy: is platform-owned: expected "Always", got "Never"; leave it unset/);
  });

  test('restartPolicyRules on main are refused', () => {
    const rules = [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }];
    assert.match(denies(createPod((o) => { o.spec.containers[0].restartPolicy = 'Always'; o.spec.containers[0].restartPolicyRules = rules; }), 'template.restart-policy'), /spec\.containers\[name=main\]\.restartPolicyRules: is platform-owned/);
  });

  test('is refused in a Deployment template', () => {
    assert.match(denies(createDeployment((o) => (o.spec.containers[0].restartPolicy = 'OnFailure')), 'template.restart-policy'), /spec\.template\.spec\.containers\[name=main\]\.restartPolicy/);
  });

  test('a native sidecar (an init container with restartPolicy Always) and main\'s own owned value pass', () => {
    allows(createPod((o) => {
      o.spec.initContainers = [{ name: 'proxy', image: 'envoy:1', restartPolicy: 'Always' }];
      o.spec.containers[0].restartPolicy = 'Always';
    }));
  });

  test("an ordinary pod's containers choose their own", () => {
    allows(createPod((o) => { ordinary(o); o.spec.containers[0].restartPolicy = 'Never'; }));
  });
});

describe('envFrom without a prefix (template.reserved-env)', () => {
  test("is refused on a sandbox pod's sidecar, naming the source, the reserved names and the fix", () => {
    const message = denies(createPod((o) => (o.spec.containers[1].envFrom = [{ secretRef: { name: 'p8-env' } }])), 'template.reserved-env');
    assert.match(message, /spec\.containers\[name=indexer\]\.envFrom\[0\]: container "indexer" takes every key of secretRef "p8-env" as a variable without a prefix, so it could be given a reserved one \(DEED_\*\); set a prefix no reserved name or prefix starts with \(say "APP_"\), or name the keys in env/);
  });

  test("is one finding per container, naming the first source and counting the rest (a container of thousands cost a message each)", () => {
    const sources = Array.from({ length: 30 }, (_, i) => (i % 2 ? { secretRef: { name: `s-${i}` } } : { configMapRef: { name: `c-${i}` } }));
    const message = denies(createPod((o) => (o.spec.containers[1].envFrom = sources)), 'template.reserved-env');
    assert.equal(message.match(/takes every key of/g)?.length, 1, message);
    assert.match(message, /envFrom\[0\]: container "indexer" takes every key of configMapRef "c-0" \(and 29 more sources without a prefix\) as a variable without a prefix/);
  });

  test('is refused for a ConfigMap, on an init container and in a Deployment template', () => {
    denies(createPod((o) => (o.spec.initContainers = [{ name: 'setup', image: 'x', envFrom: [{ configMapRef: { name: 'settings' } }] }])), /envFrom\[0\]: container "setup" takes every key of configMapRef "settings"/);
    denies(createDeployment((o) => (o.spec.containers[1].envFrom = [{ configMapRef: { name: 'settings' } }])), /spec\.template\.spec\.containers\[name=indexer\]\.envFrom\[0\]/);
  });

  test('is refused on an ephemeral container added later', () => {
    denies(addEphemeral((c) => (c.envFrom = [{ secretRef: { name: 'p8-env' } }])), 'template.reserved-env');
  });

  test('a prefix that completes a reserved name is refused; a prefix that cannot, main\'s own, and an ordinary pod\'s pass', () => {
    const named: ConfigInput = { ...FIXTURE_POLICY, template: { reservedEnv: { names: ['AGENT_TOKEN'], prefixes: ['DEED_'] } } };
    denies(createPod((o) => (o.spec.containers[1].envFrom = [{ prefix: 'AGENT_', secretRef: { name: 'x' } }]), named), /envFrom prefix "AGENT_" reaches reserved environment keys/, named);
    passes(createPod((o) => (o.spec.containers[1].envFrom = [{ prefix: 'APP_', secretRef: { name: 'x' } }])), 'template.reserved-env');
    passes(createPod((o) => (o.spec.containers[0].envFrom = [{ secretRef: { name: 'x' } }])), 'template.reserved-env');
    passes(createPod((o) => { ordinary(o); o.spec.containers[1].envFrom = [{ configMapRef: { name: 'app-config' } }]; }), 'template.reserved-env');
  });

  test('with no reserved names or prefixes there is nothing to forge: it passes', () => {
    const none: ConfigInput = { ...FIXTURE_POLICY, template: { reservedEnv: { names: [], prefixes: [] } } };
    passes(createPod((o) => (o.spec.containers[1].envFrom = [{ secretRef: { name: 'x' } }]), none), 'template.reserved-env', none);
  });
});

describe('spec.os.name (template.scheduling)', () => {
  test('windows is refused as the nodeSelector form is, on a pod and in a template', () => {
    assert.match(denies(createPod((o) => (o.spec.os = { name: 'windows' })), 'template.scheduling'), /spec\.os\.name: is platform-owned: expected "linux", got "windows"/);
    denies(createDeployment((o) => (o.spec.os = { name: 'windows' })), /spec\.template\.spec\.os\.name/);
  });

  test('the owned value passes, on a sandbox pod and an ordinary one', () => {
    allows(createPod((o) => (o.spec.os = { name: 'linux' })));
    allows(createPod((o) => { ordinary(o); o.spec.os = { name: 'linux' }; }));
  });

  test('fails in deed audit', () => {
    const spec = { os: { name: 'windows' }, automountServiceAccountToken: false, containers: [{ name: 'main', image: 'agent:1' }] };
    assert.equal(audit(spec).find((r) => r.rule === 'template.scheduling')?.properties?.path, 'spec.os.name');
  });
});
