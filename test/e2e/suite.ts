// The scene every end-to-end test plays in, set up once per suite: a control plane, the
// real `deed serve` as a child process, Deed registered with the very webhook
// configurations `deed manifests` renders (only clientConfig changed: a URL on 127.0.0.1
// and the CA), and the identities that act in a cluster: runner pods with pod-bound
// tokens, a plain service account of another environment, the reaper, an administrator.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { NAME, reaperName, renderManifests } from '../../src/install/manifests.js';
import { pointedAtUrl } from '../../src/install/dev-webhooks.js';
import { CREATE_STAMPS_POLICY_SUFFIX } from '../../src/install/create-stamps-policy.js';
import { get, getPlain, startServe, type ServeProcess } from '../serve-process.js';
import { api, kubectl, type ApiAnswer, type Identity, type Run } from './client.js';
import { startControlPlane, writeKubeconfig, type ControlPlane } from './control-plane.js';
import { adopt, freePort } from './processes.js';
import { eventually } from './objects.js';
import { DEFAULT_WORKLOAD_CONTROLLERS } from '../../src/config/schema.js';

export const DEED_NAMESPACE = 'deed-system';
/**
 * alpha: sandbox-a's runner (and shared-owners' runner, for cases/runner-owners.ts alone),
 * sandbox-a bound to it, `*.alpha.sandboxes.test` its hostnames, platform:runner-controller its manager; beta: every service account of sandbox-b, granted host networking; the
 * administrator is break-glass; platform:gitops a declared platform deployer (GitOps, Helm);
 * platform:cert-manager and platform:external-secrets operators listed with the workload controllers.
 */
export const E2E_POLICY = `labelPrefix: deed.dev
environments:
  - id: alpha
    serviceAccounts: ["sandbox-a:runner", "shared-owners:runner"]
    namespaces: ["sandbox-a"]
    hostnames: ["*.alpha.sandboxes.test"]
    managers:
      users: ["system:serviceaccount:platform:runner-controller"]
  - id: beta
    serviceAccounts: ["sandbox-b:*"]
    grants: { hostNetwork: true }
breakGlass:
  users: ["e2e-admin"]
platform:
  users: ["system:serviceaccount:platform:gitops"]
  groups: ["system:masters"]
workloadControllers:
  users:
${DEFAULT_WORKLOAD_CONTROLLERS.map((u) => `    - ${u}`).join('\n')}
    - system:serviceaccount:platform:cert-manager
    - system:serviceaccount:platform:external-secrets
`;

export interface Runner {
  identity: Identity;
  namespace: string;
  pod: string;
  uid: string;
}

export interface Suite {
  cp: ControlPlane;
  deed: ServeProcess;
  /** The webhook configurations as `deed manifests` renders them, clientConfig pointed at this Deed. */
  webhooks: KubernetesObject[];
  admin: Identity;
  /** sandbox-a:runner, token bound to pod runner-0 (environment alpha). */
  runnerA: Runner;
  /** sandbox-b:runner, token bound to pod runner-0 of sandbox-b (environment beta). */
  runnerB: Runner;
  /** sandbox-b:janitor, a plain token (environment beta) with wide RBAC in sandbox-a too: the attacker. */
  janitorB: Identity;
  /** deed-system:deed-reaper-alpha, with the RBAC `deed manifests` renders for it. */
  reaperA: Identity;
  /** platform:runner-controller: alpha's manager (creates and deletes its runners), with wide RBAC in sandbox-a. */
  runnerController: Identity;
  /** The attestation key Deed signs with (a file in the suite's folder). */
  keyFile: string;
  policyFile: string;
  api(who: Identity, method: string, path: string, body?: unknown, contentType?: string): Promise<ApiAnswer>;
  kubectl(who: Identity, args: string[], input?: string): Promise<Run>;
  /** A runner pod of `namespace`'s service account "runner", created by the admin, and its pod-bound token. */
  newRunner(namespace: string, pod: string): Promise<Runner>;
  /** A plain (not pod-bound) token of a service account, created if absent. */
  newIdentity(namespace: string, serviceAccount: string): Promise<Identity>;
  /** Grants the service accounts every verb on the four kinds (and their subresources) in `namespace`. */
  bindSandboxRole(namespace: string, subjects: Array<[string, string]>): Promise<void>;
  /** Waits until the authorizer lets `namespace:name`'s service account do what the attributes say (a binding made a moment ago). */
  awaitAccess(serviceAccount: string, resourceAttributes: Record<string, string>): Promise<void>;
  /** Restarts `deed serve` on the same port and certificates (optionally with another policy, or extra flags). */
  restartDeed(policyYaml?: string, extraArgs?: string[]): Promise<void>;
  stopDeed(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSuite(bin: string, withControllers: boolean): Promise<Suite> {
  const cp = await startControlPlane(bin, withControllers);
  let deed: ServeProcess | undefined;
  try {
    const dir = join(cp.dir, 'deed');
    mkdirSync(dir);
    const keyFile = join(dir, 'attestation.key');
    writeFileSync(keyFile, 'e2e-attestation-key-0123456789abcdef0123456789', { mode: 0o600 });
    const port = await freePort();
    const policyFile = join(dir, 'policy.yaml');

    const objects = renderManifests({ namespace: DEED_NAMESPACE, image: 'deed:e2e', policy: E2E_POLICY, reaperEnvironments: ['alpha'] });
    // The policy as the install renders it (the reaper's service account added to alpha),
    // with the key at a local path instead of the mounted Secret.
    const configMap = objects.find((o) => o.kind === 'ConfigMap') as V1ConfigMap;
    const clusterPolicyYaml = configMap.data!['policy.yaml']!;
    const withKey = (yaml: string) => {
      const doc = parse(yaml) as { attestation?: { keyFile?: string; keys?: unknown } };
      // A policy with a key ring (the rotation case) names its own files.
      if (doc.attestation?.keys === undefined) doc.attestation = { ...doc.attestation, keyFile };
      return stringify(doc);
    };
    const deedKubeconfig = join(dir, 'deed.kubeconfig');
    const startDeed = async (policyYaml: string, extraArgs: string[] = []) => {
      writeFileSync(policyFile, withKey(policyYaml));
      deed = await startServe(['--kubeconfig', deedKubeconfig, '--deed-namespace', DEED_NAMESPACE, ...extraArgs], undefined, {}, { port, dir, configFile: policyFile });
      adopt(deed.child);
      // "deed is serving" comes before the namespace list: until it is in, a review waits at most
      // a second for its scope and is then refused. Readiness waits for the scope, as a
      // Deployment's rollout would. With --client-ca and no metrics port nothing can probe it.
      const served = deed;
      const probe = served.metricsPort !== undefined ? () => getPlain(served.metricsPort!, '/readyz') : extraArgs.includes('--client-ca') ? undefined : () => get(served, '/readyz', { agent: false });
      if (probe) await eventually('Deed reports ready (its review scope listed)', async () => (await probe().catch(() => ({ status: 0 }))).status === 200);
    };
    const url = `https://127.0.0.1:${port}`;
    // The create-stamps policy's CEL is rendered from Deed's policy: a policy change is an install change (docs/upgrading.md).
    const applyCreateStampsPolicy = async (policyYaml: string) => {
      // Its key files are local paths here, which the install refuses; the policy's CEL does not depend on them.
      const { attestation: _key, ...rest } = parse(policyYaml) as Record<string, unknown>;
      const want = renderManifests({ namespace: DEED_NAMESPACE, image: 'deed:e2e', policy: stringify(rest) }).find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata?.name === `${NAME}-${CREATE_STAMPS_POLICY_SUFFIX}`) as { spec: unknown };
      const at = `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${NAME}-${CREATE_STAMPS_POLICY_SUFFIX}`;
      const have = await call(admin, 'GET', at);
      if (have.status !== 200 || JSON.stringify(have.body.spec.variables) === JSON.stringify((want.spec as { variables: unknown }).variables)) return;
      await must('the create-stamps policy of the new policy', call(admin, 'PUT', at, { ...have.body, spec: want.spec }));
      await new Promise((r) => setTimeout(r, 2000)); // the API server's policy informer takes the change a moment later
    };

    const admin: Identity = { ...cp.admin, kubeconfig: join(cp.dir, 'admin.kubeconfig') };
    writeKubeconfig(admin.kubeconfig!, cp.server, cp.ca, admin.token);
    const call = (who: Identity, method: string, path: string, body?: unknown, contentType?: string) => api(cp, who, method, path, body, contentType);
    const must = async (what: string, answer: Promise<ApiAnswer>) => {
      const a = await answer;
      if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
      return a;
    };

    // Namespaces: sandbox-a and sandbox-b opt in; "plain" does not; Deed's own.
    for (const [name, optIn] of [['sandbox-a', true], ['sandbox-b', true], ['plain', false], ['platform', false], [DEED_NAMESPACE, false]] as const) {
      await must(`namespace ${name}`, call(admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: optIn ? { 'deed.dev/sandbox': 'enabled' } : {} } }));
      if (!cp.controllers) await must(`default service account in ${name}`, call(admin, 'POST', `/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'default' } }));
    }
    // The install's objects that matter here: the reaper's account and RBAC, and the
    // webhook configurations with only clientConfig changed.
    // The install's service accounts and RBAC (the webhook's and the reaper's) as rendered.
    for (const o of objects) {
      const what = `${o.kind} ${o.metadata?.name}`;
      if (o.kind === 'ServiceAccount') await must(what, call(admin, 'POST', `/api/v1/namespaces/${DEED_NAMESPACE}/serviceaccounts`, o));
      if (o.kind === 'ClusterRole') await must(what, call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', o));
      if (o.kind === 'ClusterRoleBinding') await must(what, call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', o));
    }

    // RBAC: each service account may do anything with the four kinds in its namespace;
    // sandbox-b's janitor also in sandbox-a (a wide role, as tenants often get).
    await must('sandbox role', call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'e2e-sandbox' },
      rules: [
        { apiGroups: [''], resources: ['pods', 'pods/status', 'pods/eviction', 'pods/binding', 'pods/resize', 'pods/ephemeralcontainers', 'bindings', 'secrets', 'persistentvolumeclaims', 'persistentvolumeclaims/status'], verbs: ['*'] },
        // The CONNECTs the built-in edit role grants too.
        { apiGroups: [''], resources: ['pods/exec', 'pods/attach', 'pods/portforward', 'pods/proxy', 'services/proxy'], verbs: ['*'] },
        { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['*'] },
        // Run leases, and a tenant's own leader election: tenants here may write Leases.
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['*'] },
      ],
    }));
    // The authorizer learns of a new binding through its informer, a moment later: wait until it answers yes.
    const awaitAccess = async (serviceAccount: string, resourceAttributes: Record<string, string>) => {
      const [namespace] = serviceAccount.split(':');
      const user = `system:serviceaccount:${serviceAccount}`;
      const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'], resourceAttributes } };
      await eventually(`RBAC lets ${user} ${resourceAttributes.verb} ${resourceAttributes.resource} in ${resourceAttributes.namespace}`, async () => (await call(admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true);
    };
    const bind = async (ns: string, subjects: Array<[string, string]>) => {
      await must(`bind in ${ns}`, call(admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
        metadata: { generateName: 'e2e-sandbox-' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-sandbox' },
        subjects: subjects.map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      for (const [namespace, name] of subjects) await awaitAccess(`${namespace}:${name}`, { namespace: ns, verb: 'create', resource: 'secrets' });
    };
    await bind('sandbox-a', [['sandbox-a', 'runner'], ['sandbox-b', 'janitor'], ['platform', 'runner-controller']]);
    await bind('sandbox-b', [['sandbox-b', 'runner'], ['sandbox-b', 'janitor']]);

    for (const [ns, sa] of [['sandbox-a', 'runner'], ['sandbox-b', 'runner'], ['sandbox-b', 'janitor']] as const) {
      await must(`service account ${ns}/${sa}`, call(admin, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: sa } }));
    }
    const runner = async (ns: string, name = 'runner-0'): Promise<Runner> => {
      // Created by the platform (the admin here), not by a sandbox identity: not stamped.
      const pod = await must(`runner pod ${ns}/${name}`, call(admin, 'POST', `/api/v1/namespaces/${ns}/pods`, runnerPod(name)));
      const uid = pod.body.metadata.uid as string;
      const token = await tokenFor(call, admin, ns, 'runner', { name, uid });
      const identity: Identity = { name: `${ns}:runner@${name}`, token, kubeconfig: join(cp.dir, `${ns}-${name}.kubeconfig`) };
      writeKubeconfig(identity.kubeconfig!, cp.server, cp.ca, token);
      return { identity, namespace: ns, pod: name, uid };
    };
    const plain = async (ns: string, sa: string): Promise<Identity> => {
      await must(`service account ${ns}/${sa}`, call(admin, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: sa } }));
      const token = await tokenFor(call, admin, ns, sa);
      const identity: Identity = { name: `${ns}:${sa}`, token, kubeconfig: join(cp.dir, `${ns}-${sa}.kubeconfig`) };
      writeKubeconfig(identity.kubeconfig!, cp.server, cp.ca, token);
      return identity;
    };
    // Deed reads pods (evictions, bindings) as its own service account, as in a cluster.
    const deedIdentity = await plain(DEED_NAMESPACE, NAME);
    writeKubeconfig(deedKubeconfig, cp.server, cp.ca, deedIdentity.token);
    await startDeed(clusterPolicyYaml);
    // Registered last, changed only in clientConfig: from here on every write in the sandboxes goes through Deed.
    const webhooks = objects.filter((o) => o.kind === 'MutatingWebhookConfiguration' || o.kind === 'ValidatingWebhookConfiguration').map((o) => pointedAtUrl(o, url, deed!.ca));
    for (const w of webhooks) await must(`register ${w.kind}`, call(admin, 'POST', `/apis/admissionregistration.k8s.io/v1/${w.kind === 'MutatingWebhookConfiguration' ? 'mutating' : 'validating'}webhookconfigurations`, w));
    // The review scope's switch, guarded in the API server as the install ships it.
    for (const o of objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy' || o.kind === 'ValidatingAdmissionPolicyBinding'))
      await must(`register ${o.kind}`, call(admin, 'POST', `/apis/admissionregistration.k8s.io/v1/${o.kind === 'ValidatingAdmissionPolicy' ? 'validatingadmissionpolicies' : 'validatingadmissionpolicybindings'}`, o));

    const runnerA = await runner('sandbox-a');
    const runnerB = await runner('sandbox-b');
    const janitorB = await plain('sandbox-b', 'janitor');
    const reaperA = await plain(DEED_NAMESPACE, reaperName('alpha'));
    const runnerController = await plain('platform', 'runner-controller');

    const suite: Suite = {
      cp,
      get deed() {
        return deed!;
      },
      webhooks,
      admin,
      runnerA,
      runnerB,
      janitorB,
      reaperA,
      runnerController,
      keyFile,
      policyFile,
      api: call,
      kubectl: (who, args, input) => kubectl(cp.bin, who, args, input),
      newRunner: runner,
      newIdentity: plain,
      bindSandboxRole: bind,
      awaitAccess,
      async restartDeed(policyYaml = clusterPolicyYaml, extraArgs: string[] = []) {
        await deed?.stop();
        await startDeed(policyYaml, extraArgs);
        await applyCreateStampsPolicy(policyYaml);
      },
      async stopDeed() {
        await deed?.stop();
      },
      async stop() {
        await deed?.stop();
        await cp.stop();
      },
    };
    return suite;
  } catch (err) {
    await deed?.stop();
    await cp.stop();
    throw err;
  }
}

function runnerPod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'runner' } },
    spec: { serviceAccountName: 'runner', containers: [{ name: 'runner', image: 'registry.example/runner:1' }] },
  };
}

/** A TokenRequest, bound to a pod when one is given: what a projected token in that pod carries. */
async function tokenFor(
  call: (who: Identity, method: string, path: string, body?: unknown) => Promise<ApiAnswer>,
  admin: Identity,
  namespace: string,
  serviceAccount: string,
  pod?: { name: string; uid: string },
): Promise<string> {
  const answer = await call(admin, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600, ...(pod ? { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', ...pod } } : {}) },
  });
  if (answer.status !== 201) throw new Error(`token for ${namespace}/${serviceAccount}: ${answer.status} ${answer.text}`);
  return answer.body.status.token as string;
}

export function readKey(suite: Suite): Buffer {
  return readFileSync(suite.keyFile);
}

/** Runs `fn` with Deed's webhook configurations removed (the admin writing stamps directly), then puts them back. */
export async function withoutWebhooks<T>(s: Suite, fn: () => Promise<T>): Promise<T> {
  const path = (kind: string | undefined) => `/apis/admissionregistration.k8s.io/v1/${kind === 'MutatingWebhookConfiguration' ? 'mutating' : 'validating'}webhookconfigurations`;
  // The API server learns of configuration changes a moment later: a dry-run write shows when.
  const reviewed = async (): Promise<boolean | undefined> => {
    const probe = await s.api(s.runnerA.identity, 'POST', '/api/v1/namespaces/sandbox-a/secrets?dryRun=All', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'webhook-probe' } });
    return probe.status === 201 ? probe.body.metadata.labels?.['deed.dev/managed'] === 'true' : undefined;
  };
  // The create-stamps policy is Deed's admission too: without its binding a runner's unstamped write passes.
  const binding = `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${NAME}-${CREATE_STAMPS_POLICY_SUFFIX}`;
  const bound = (await s.api(s.admin, 'GET', binding)).body as { metadata: Record<string, unknown>; spec: unknown };
  for (const w of s.webhooks) await expectStatus(s.api(s.admin, 'DELETE', `${path(w.kind)}/${w.metadata!.name}`), 200);
  await expectStatus(s.api(s.admin, 'DELETE', binding), 200);
  try {
    await eventually('Deed no longer reviews sandbox writes', async () => (await reviewed()) === false);
    return await fn();
  } finally {
    for (const w of s.webhooks) await expectStatus(s.api(s.admin, 'POST', path(w.kind), w), 201);
    await expectStatus(s.api(s.admin, 'POST', binding.slice(0, binding.lastIndexOf('/')), { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: bound.metadata.name, labels: bound.metadata.labels }, spec: bound.spec }), 201);
    await eventually('Deed reviews sandbox writes again', async () => (await reviewed()) === true);
  }
}

async function expectStatus(answer: Promise<ApiAnswer>, status: number): Promise<void> {
  const a = await answer;
  if (a.status !== status) throw new Error(`expected ${status}, got ${a.status}: ${a.text}`);
}
