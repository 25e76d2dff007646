// A runner pod's owners are objects its environment's guards keep (guard.runner-owner), in
// a namespace alpha shares (shared-owners: opted in, bound to no environment; the suite's
// policy maps its service account "runner" to alpha). As the finding was reproduced: alpha's
// manager makes an unstamped Lease and a runner pod owned by it; beta deletes the Lease, and
// the garbage collector deletes the runner and everything Deed stamped with an owner
// reference to it. The runner pod is now refused at CREATE, and an owner reference added by
// an UPDATE too, for the manager as for anyone; one owned by a Lease stamped for alpha is
// admitted, and beta may not delete that Lease.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import { createdOrThere as ok, eventually, KEYS, label, LEASES, optedInNamespace, PATHS, refusedBy as refused } from '../objects.js';
import type { Identity } from '../client.js';
import type { Suite } from '../suite.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects as the API server stores them
type Spec = Record<string, any>;

const NS = 'shared-owners';
const MERGE = 'application/merge-patch+json';

const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: {} });
const ownerOf = (l: Spec) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: l.metadata.name as string, uid: l.metadata.uid as string });
const runnerPod = (name: string, ownerReferences: Spec[]) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'runner' }, ownerReferences },
  spec: { serviceAccountName: 'runner', containers: [{ name: 'runner', image: 'registry.example/runner:1' }] },
});

export function runnerOwnerCases(suite: () => Suite): void {
  describe("a runner pod's owners are objects its environment's guards keep", () => {
    /** platform:runner-controller: alpha's manager, which creates its runners. */
    let manager: Identity;
    /** shared-owners:runner by a plain token: one of alpha's principals (what it creates is stamped for alpha). */
    let alpha: Identity;


    before(async () => {
      const s = suite();
      manager = s.runnerController;
      await optedInNamespace(s, NS);
      alpha = await s.newIdentity(NS, 'runner');
      await s.bindSandboxRole(NS, [['platform', 'runner-controller'], [NS, 'runner'], ['sandbox-b', 'janitor']]);
      // Deed knows the namespace is in its review scope once alpha's write there is stamped.
      await eventually(`Deed reviews ${NS}`, async () => label((await s.api(alpha, 'POST', `${LEASES(NS)}?dryRun=All`, lease('scope-probe'))).body as KubeObject, KEYS.environment) === 'alpha');
    });

    test("alpha's manager may not create a runner pod owned by the unstamped Lease it made, which a principal of no environment may delete", async () => {
      const s = suite();
      const made = await s.api(manager, 'POST', LEASES(NS), lease('runner-owner-lease'));
      assert.equal(made.status, 201, made.text);
      // A manager acts for no environment outside its environment's bound namespaces: its Lease carries no stamps.
      assert.equal(label(made.body as KubeObject, KEYS.environment), undefined);
      const pod = await s.api(manager, 'POST', PATHS.Pod(NS), runnerPod('runner-lease', [ownerOf(made.body)]));
      refused(pod, 'guard.runner-owner', /metadata\.ownerReferences\[0\]: this pod runs as a runner of an environment, and its owner Lease shared-owners\/runner-owner-lease carries no stamps outside a namespace bound to an environment, so any principal of no environment \(a tenant with edit\) may delete it/);
      assert.equal((await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/runner-lease`)).status, 404);
      // The same as a controller reference, and from break-glass it passes (with the override named).
      refused(await s.api(manager, 'POST', PATHS.Pod(NS), runnerPod('runner-lease', [{ ...ownerOf(made.body), controller: true }])), 'guard.runner-owner', /any principal of no environment \(a tenant with edit\) may delete it/);
      const glass = await s.api(s.admin, 'POST', `${PATHS.Pod(NS)}?dryRun=All`, runnerPod('runner-lease', [ownerOf(made.body)]));
      assert.equal(glass.status, 201, glass.text);
      // Beta may not delete it (unstamped in a shared namespace, the platform's: guard.shared-input), but a principal
      // of no environment may: the runner it would have owned is what is refused.
      refused(await s.api(s.janitorB, 'DELETE', `${LEASES(NS)}/runner-owner-lease`), 'guard.shared-input');
      ok('a principal of no environment deletes the unstamped Lease', await s.api(manager, 'DELETE', `${LEASES(NS)}/runner-owner-lease`));
    });

    test("a runner pod owned by a Lease stamped for alpha is admitted; beta may not delete that Lease, and an UPDATE adding an unstamped owner is refused", async () => {
      const s = suite();
      const owner = await s.api(alpha, 'POST', LEASES(NS), lease('alpha-owner'));
      assert.equal(owner.status, 201, owner.text);
      assert.equal(label(owner.body as KubeObject, KEYS.environment), 'alpha');
      const pod = await s.api(manager, 'POST', PATHS.Pod(NS), runnerPod('runner-owned', [ownerOf(owner.body)]));
      assert.equal(pod.status, 201, pod.text);
      assert.equal(label(pod.body as KubeObject, KEYS.runner), 'alpha', 'a runner of alpha');
      refused(await s.api(s.janitorB, 'DELETE', `${LEASES(NS)}/alpha-owner`), 'guard.cross-environment', /belongs to another environment/);

      const loose = await s.api(manager, 'POST', LEASES(NS), lease('loose-owner'));
      assert.equal(loose.status, 201, loose.text);
      const added = await s.api(manager, 'PATCH', `${PATHS.Pod(NS)}/runner-owned`, { metadata: { ownerReferences: [ownerOf(owner.body), ownerOf(loose.body)] } }, MERGE);
      refused(added, 'guard.runner-owner', /metadata\.ownerReferences\[1\]: .*Lease shared-owners\/loose-owner carries no stamps/);
      const stored = (await s.api(s.admin, 'GET', `${PATHS.Pod(NS)}/runner-owned`)).body as KubeObject;
      assert.deepEqual(stored.metadata.ownerReferences?.map((r) => r.name), ['alpha-owner']);
      // A label written on the runner keeps its owners as they were: not judged again.
      ok('the manager labels its runner', await s.api(manager, 'PATCH', `${PATHS.Pod(NS)}/runner-owned`, { metadata: { labels: { batch: '7' } } }, MERGE));
    });
  });
}
