// Same-environment evasions of the pod rules, in the real API server (kube-apiserver 1.36:
// ContainerRestartRules on by default): a sandbox pod's shared process namespace, an
// ephemeral container targeting main through pods/ephemeralcontainers, the main container's
// own restartPolicy, a sidecar's envFrom without a prefix, spec.os.name. Each is refused for
// the environment's runner; an ordinary manifest with a native sidecar still passes.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createdOrThere, PATHS, refusedBy, sandboxPod, workspaceClaim } from '../objects.js';
import type { Suite } from '../suite.js';

const NS = 'sandbox-b';
const MAIN = { name: 'main', image: 'registry.example/agent:1' };
const WORKSPACE = { name: 'workspace', persistentVolumeClaim: { claimName: 'evade-ws' } };
const MAIN_WS = { ...MAIN, volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }] };

export function podEvasionCases(suite: () => Suite): void {
  describe('the pod rules hold against same-environment evasions (shared processes, debug targets, restart policies, envFrom, spec.os)', () => {
    before(async () => {
      const s = suite();
      const runner = s.runnerB.identity;
      createdOrThere('the workspace claim', await s.api(runner, 'POST', PATHS.PersistentVolumeClaim(NS), workspaceClaim('evade-ws')));
      createdOrThere('a Secret holding a reserved key', await s.api(runner, 'POST', PATHS.Secret(NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'evade-env' }, stringData: { DEED_SESSION_ID: 'forged' } }));
      createdOrThere("an ordinary app's Secret", await s.api(runner, 'POST', PATHS.Secret(NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'evade-app-env' }, stringData: { LOG_LEVEL: 'info' } }));
    });

    test('a sandbox pod sharing its process namespace with an ungranted sidecar is refused, and nothing stored', async () => {
      const s = suite();
      const pod = sandboxPod('evade-share', { spec: { shareProcessNamespace: true, containers: [MAIN_WS, { name: 'sidecar', image: 'busybox', command: ['sh', '-c', 'cat /proc/*/root/workspace/*'] }], volumes: [WORKSPACE] } });
      refusedBy(await s.api(s.runnerB.identity, 'POST', PATHS.Pod(NS), pod), 'template.process-namespace', /spec\.shareProcessNamespace: .*the main container's files, the workspace volume/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/evade-share`)).status, 404);
    });

    test('an ephemeral container targeting main, added through pods/ephemeralcontainers, is refused; kubectl debug without --target still passes', async () => {
      const s = suite();
      const runner = s.runnerB.identity;
      assert.equal((await s.api(runner, 'POST', PATHS.Pod(NS), sandboxPod('evade-debug', { spec: { containers: [MAIN_WS], volumes: [WORKSPACE] } }))).status, 201);
      const stored = (await s.api(runner, 'GET', `${PATHS.Pod(NS)}/evade-debug`)).body;
      const withEphemeral = (ec: Record<string, unknown>) => ({ ...stored, spec: { ...stored.spec, ephemeralContainers: [ec] } });
      const path = `${PATHS.Pod(NS)}/evade-debug/ephemeralcontainers`;
      refusedBy(
        await s.api(runner, 'PUT', path, withEphemeral({ name: 'dbg', image: 'busybox', targetContainerName: 'main', command: ['sh', '-c', 'cat /proc/1/root/workspace/*'] })),
        'workspace.init-or-ephemeral',
        /spec\.ephemeralContainers\[name=dbg\]\.targetContainerName: ephemeral container "dbg" targets container "main".*leave targetContainerName out/,
      );
      const plain = await s.api(runner, 'PUT', path, withEphemeral({ name: 'dbg2', image: 'busybox' }));
      assert.equal(plain.status, 200, plain.text);
    });

    test('a sidecar, or an ephemeral container added later, reading the runtime volume through env fileKeyRef (no mount) is refused as a mount is', async () => {
      const s = suite();
      const runner = s.runnerB.identity;
      const RUNTIME = { name: 'runtime', emptyDir: { medium: 'Memory' } };
      const fileKey = { name: 'TOKEN', valueFrom: { fileKeyRef: { volumeName: 'runtime', path: 'session.env', key: 'TOKEN' } } };
      const mainRuntime = { ...MAIN_WS, volumeMounts: [...MAIN_WS.volumeMounts, { name: 'runtime', mountPath: '/run/deed' }] };
      const sidecar = sandboxPod('evade-filekey', { spec: { containers: [mainRuntime], initContainers: [{ name: 'proxy', image: 'busybox', restartPolicy: 'Always', env: [fileKey] }], volumes: [WORKSPACE, RUNTIME] } });
      refusedBy(await s.api(runner, 'POST', PATHS.Pod(NS), sidecar), 'workspace.init-or-ephemeral', /init container "proxy" may not read the runtime volume \(a variable's value, through fileKeyRef\)/);
      const second = sandboxPod('evade-filekey-2', { spec: { containers: [mainRuntime, { name: 'helper', image: 'busybox', env: [fileKey] }], volumes: [WORKSPACE, RUNTIME] } });
      refusedBy(await s.api(runner, 'POST', PATHS.Pod(NS), second), 'template.reserved-mount', /only the main container may read the runtime volume/);
      assert.equal((await s.api(runner, 'POST', PATHS.Pod(NS), sandboxPod('evade-filekey-3', { spec: { containers: [mainRuntime], volumes: [WORKSPACE, RUNTIME] } }))).status, 201);
      const stored = (await s.api(runner, 'GET', `${PATHS.Pod(NS)}/evade-filekey-3`)).body;
      const added = { ...stored, spec: { ...stored.spec, ephemeralContainers: [{ name: 'dbg', image: 'busybox', env: [fileKey] }] } };
      refusedBy(await s.api(runner, 'PUT', `${PATHS.Pod(NS)}/evade-filekey-3/ephemeralcontainers`, added), 'workspace.init-or-ephemeral', /ephemeral container "dbg" may not read the runtime volume/);
    });

    test("the main container's own restartPolicy and restartPolicyRules are refused as spec.restartPolicy is", async () => {
      const s = suite();
      const never = sandboxPod('evade-restart', { spec: { containers: [{ ...MAIN, restartPolicy: 'Never' }] } });
      refusedBy(await s.api(s.runnerB.identity, 'POST', PATHS.Pod(NS), never), 'template.restart-policy', /spec\.containers\[name=main\]\.restartPolicy: is platform-owned: expected "Always", got "Never"/);
      const rules = sandboxPod('evade-rules', { spec: { containers: [{ ...MAIN, restartPolicy: 'Never', restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }] }] } });
      refusedBy(await s.api(s.runnerB.identity, 'POST', PATHS.Pod(NS), rules), 'template.restart-policy', /spec\.containers\[name=main\]\.restartPolicyRules: is platform-owned/);
    });

    test("spec.os.name windows is refused as the nodeSelector form is; a sidecar's envFrom without a prefix is refused", async () => {
      const s = suite();
      refusedBy(await s.api(s.runnerB.identity, 'POST', PATHS.Pod(NS), sandboxPod('evade-os', { spec: { os: { name: 'windows' } } })), 'template.scheduling', /spec\.os\.name: is platform-owned: expected "linux", got "windows"/);
      const envFrom = sandboxPod('evade-envfrom', { spec: { containers: [MAIN, { name: 'sidecar', image: 'busybox', envFrom: [{ secretRef: { name: 'evade-env' } }] }] } });
      refusedBy(await s.api(s.runnerB.identity, 'POST', PATHS.Pod(NS), envFrom), 'template.reserved-env', /spec\.containers\[name=sidecar\]\.envFrom\[0\]: .*secretRef "evade-env".*set a prefix/);
    });

    test('an ordinary manifest with a native sidecar, envFrom and a shared process namespace passes, and so does a sandbox pod with a native sidecar', async () => {
      const s = suite();
      const ordinary = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'evade-ordinary' },
        spec: {
          automountServiceAccountToken: false,
          shareProcessNamespace: true,
          os: { name: 'linux' },
          initContainers: [{ name: 'proxy', image: 'envoyproxy/envoy:v1.31', restartPolicy: 'Always' }],
          containers: [{ name: 'app', image: 'nginx:1.27', envFrom: [{ secretRef: { name: 'evade-app-env' } }] }],
        },
      };
      const a = await s.api(s.runnerB.identity, 'POST', PATHS.Pod(NS), ordinary);
      assert.equal(a.status, 201, a.text);
      const sandbox = sandboxPod('evade-native-sidecar', { spec: { initContainers: [{ name: 'proxy', image: 'envoyproxy/envoy:v1.31', restartPolicy: 'Always' }], containers: [{ ...MAIN, restartPolicy: 'Always' }] } });
      const b = await s.api(s.runnerB.identity, 'POST', PATHS.Pod(NS), sandbox);
      assert.equal(b.status, 201, b.text);
    });
  });
}
