// Issue 37's proof in a real API server: guarded writes, frozen stamps and the terminal mark
// hold on a Deployment (a workload row), a Service (a built-in kind of the default row) and a
// custom resource (the lab's VirtualMachine, the default row too), each created by alpha's
// runner in a namespace alpha and beta share. beta's janitor, with rights to write all three
// there, may not change, replace, apply to, delete or mark alpha's object; alpha may not
// remove, change or add Deed's stamps on its own, by merge patch, JSON patch or server-side
// apply; alpha marks its object terminal, only as "true", and then no one (alpha, beta,
// break-glass) changes or removes the mark. Every refusal is read for the rule that made it,
// and the object is read back unchanged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/admission/types.js';
import type { ApiAnswer, Identity } from '../client.js';
import { annotation, attested, eventually, KEYS, label } from '../objects.js';
import type { Suite } from '../suite.js';
import { GROUP as VM_GROUP, VM_CRD, VMS, vm } from './default-row.js';

// A shared namespace of its own, opted in and bound to no environment: nothing here is another case's.
const NS = 'shared-kinds';
const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const APPLY = 'application/apply-patch+yaml';
const JANITOR = 'system:serviceaccount:sandbox-b:janitor';
const CROSS = `[guard.cross-environment] ${JANITOR} acts for "beta", and this object belongs to another environment`;
/** A JSON Pointer to an annotation or label key (`/` escaped as `~1`). */
const pointer = (field: 'labels' | 'annotations', key: string) => `/metadata/${field}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
const frozenLabel = (key: string) => `[frozen.stamps] metadata.labels[${JSON.stringify(key)}]: `;
const frozenAnnotation = (key: string) => `[frozen.stamps] metadata.annotations[${JSON.stringify(key)}]: `;
const TERMINAL_PATH = `metadata.annotations[${JSON.stringify(KEYS.terminal)}]`;
const TERMINAL_FROZEN = `[terminal.frozen] ${TERMINAL_PATH}: ${KEYS.terminal} was set to "true" and cannot be changed or removed: the run it marks is over`;

interface StampedKind {
  kind: string;
  apiVersion: string;
  /** RBAC's names for it. */
  group: string;
  resource: string;
  path: (ns: string) => string;
  body: (name: string, annotations?: Record<string, string>) => { metadata: Record<string, unknown> } & Record<string, unknown>;
}

const KINDS: StampedKind[] = [
  {
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    group: 'apps',
    resource: 'deployments',
    path: (ns) => `/apis/apps/v1/namespaces/${ns}/deployments`,
    // No replicas: the controllers make a ReplicaSet and nothing else.
    body: (name, annotations = {}) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, labels: { app: name }, annotations },
      spec: { replicas: 0, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.example/lab:1' }] } } },
    }),
  },
  {
    kind: 'Service',
    apiVersion: 'v1',
    group: '',
    resource: 'services',
    path: (ns) => `/api/v1/namespaces/${ns}/services`,
    body: (name, annotations = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, annotations }, spec: { ports: [{ port: 80 }] } }),
  },
  {
    kind: 'VirtualMachine',
    apiVersion: `${VM_GROUP}/v1`,
    group: VM_GROUP,
    resource: 'virtualmachines',
    path: VMS,
    body: (name, annotations = {}) => vm(name, { annotations }),
  },
];

/** Everything Deed stamps or freezes on the object: keys under its prefix (the terminal mark aside: it is checked by itself), and the owner references. */
function deedMarks(o: KubeObject) {
  const ours = (m: Record<string, string> | undefined) => Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => k.startsWith(`${KEYS.prefix}/`) && k !== KEYS.terminal));
  return { labels: ours(o.metadata.labels), annotations: ours(o.metadata.annotations), ownerReferences: o.metadata.ownerReferences };
}

/** A refusal by Deed that names each of `parts` (rule ids with their path and message), verbatim. */
function refused(a: ApiAnswer, ...parts: string[]): string {
  assert.equal(a.status, 403, a.text);
  const message = String(a.body?.message ?? '');
  for (const part of parts) assert.ok(message.includes(part), `expected ${JSON.stringify(part)} in the refusal: ${message}`);
  return message;
}

export function stampedKindsCases(suite: () => Suite): void {
  describe('guarded writes, frozen stamps and the terminal mark on a Deployment, a Service and a custom resource', () => {
    before(async () => {
      const s = suite();
      const ok = (what: string, a: ApiAnswer) => {
        if (a.status >= 300 && a.status !== 409) throw new Error(`${what}: ${a.status} ${a.text}`);
      };
      ok('namespace', await s.api(s.admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'deed.dev/sandbox': 'enabled' } } }));
      if (!s.cp.controllers) ok('default service account', await s.api(s.admin, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } }));
      ok('CRD', await s.api(s.admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', VM_CRD));
      ok('role', await s.api(s.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        metadata: { name: 'e2e-stamped-kinds' },
        rules: KINDS.map((k) => ({ apiGroups: [k.group], resources: [k.resource, `${k.resource}/status`], verbs: ['*'] })),
      }));
      // Both may write all three kinds here: only Deed stands between beta and alpha's objects.
      const subjects = [['sandbox-a', 'runner'], ['sandbox-b', 'janitor']] as const;
      ok('rights', await s.api(s.admin, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
        metadata: { name: 'e2e-stamped-kinds' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-stamped-kinds' },
        subjects: subjects.map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
      }));
      await eventually('the CRD is served', async () => (await s.api(s.admin, 'GET', VMS(NS))).status === 200);
      for (const [namespace, name] of subjects)
        for (const k of KINDS)
          for (const verb of ['patch', 'delete']) {
            const user = `system:serviceaccount:${namespace}:${name}`;
            const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'], resourceAttributes: { namespace: NS, verb, group: k.group, resource: k.resource } } };
            await eventually(`RBAC lets ${user} ${verb} ${k.resource} in ${NS}`, async () => (await s.api(s.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review)).body?.status?.allowed === true);
          }
      // Deed learns of the opted-in namespace from its watch, a moment later.
      const probe = KINDS.find((k) => k.kind === 'Service')!;
      await eventually(`Deed reviews ${NS}`, async () => label((await s.api(s.runnerA.identity, 'POST', `${probe.path(NS)}?dryRun=All`, probe.body('probe'))).body ?? { metadata: {} }, KEYS.environment) === 'alpha');
    });

    after(async () => {
      // Whatever a failed test left (a passing run deletes all of it as alpha): break-glass may delete anything.
      const s = suite();
      for (const k of KINDS) for (const name of [`kinds-${k.kind.toLowerCase()}`, `kinds-yes-${k.kind.toLowerCase()}`]) await s.api(s.admin, 'DELETE', `${k.path(NS)}/${name}`);
    });

    for (const k of KINDS) {
      describe(`a ${k.kind} of alpha's`, () => {
        const name = `kinds-${k.kind.toLowerCase()}`;
        const at = `${k.path(NS)}/${name}`;
        /** As stored at CREATE: what every refused write must leave as it was. */
        let created: KubeObject;
        let alpha: Identity;
        const read = async (s: Suite): Promise<KubeObject> => {
          const now = await s.api(s.admin, 'GET', at);
          assert.equal(now.status, 200, now.text);
          return now.body as KubeObject;
        };
        /** The object as it was: the same object (uid), Deed's marks and the spec unchanged, verifying. */
        const unchanged = async (s: Suite): Promise<KubeObject> => {
          const now = await read(s);
          assert.equal(now.metadata.uid, created.metadata.uid, 'the same object');
          assert.deepEqual(deedMarks(now), deedMarks(created), "Deed's stamps are as they were");
          assert.deepEqual(now.spec, created.spec, 'the spec is as it was');
          assert.ok(attested(s, now), 'the stamps verify');
          return now;
        };
        const apply = (s: Suite, who: Identity, manager: string, metadata: Record<string, unknown>) =>
          s.api(who, 'PATCH', `${at}?fieldManager=${manager}&force=true`, { apiVersion: k.apiVersion, kind: k.kind, metadata: { name, ...metadata } }, APPLY);

        test(`alpha's runner's ${k.kind} is stored with alpha's stamps, which verify, and a malformed terminal mark is refused at creation`, async () => {
          const s = suite();
          alpha = s.runnerA.identity;
          const answer = await s.api(alpha, 'POST', k.path(NS), k.body(name));
          assert.equal(answer.status, 201, answer.text);
          created = answer.body as KubeObject;
          assert.equal(label(created, KEYS.managed), 'true');
          assert.equal(label(created, KEYS.environment), 'alpha');
          assert.equal(label(created, KEYS.ownerUid), s.runnerA.uid);
          assert.equal(annotation(created, KEYS.owner), `sandbox-a/${s.runnerA.pod}`);
          assert.match(annotation(created, KEYS.createNonce) ?? '', /^[0-9a-f]{64}$/);
          assert.ok(attested(s, created), 'the attestation verifies');
          // The runner is in another namespace: no owner reference, here or for any kind of these rows.
          assert.equal(created.metadata.ownerReferences, undefined);

          const yes = `kinds-yes-${k.kind.toLowerCase()}`;
          refused(await s.api(alpha, 'POST', k.path(NS), k.body(yes, { [KEYS.terminal]: 'yes' })), `[terminal.malformed] ${TERMINAL_PATH}: ${KEYS.terminal} must be "true", got "yes"`);
          assert.equal((await s.api(s.admin, 'GET', `${k.path(NS)}/${yes}`)).status, 404);
        });

        test(`beta's janitor may not change, replace, apply to or delete alpha's ${k.kind}, and it stays as it was`, async () => {
          const s = suite();
          const hijack = { metadata: { labels: { hijacked: 'true' } } };
          const patched = refused(await s.api(s.janitorB, 'PATCH', at, hijack, MERGE), CROSS);
          assert.doesNotMatch(patched, /alpha/, 'the refusal names no other environment');
          // A PUT of the object as read, relabelled (read again if a controller's write came between: a conflict is the API server's, before admission).
          let replaced: ApiAnswer | undefined;
          for (let i = 0; i < 5 && (replaced === undefined || replaced.status === 409); i++) {
            const replacement = await read(s);
            replacement.metadata.labels = { ...replacement.metadata.labels, hijacked: 'true' };
            replaced = await s.api(s.janitorB, 'PUT', at, replacement);
          }
          refused(replaced!, CROSS);
          refused(await apply(s, s.janitorB, 'beta-janitor', hijack.metadata), CROSS);
          // Rewriting the stamps themselves is another environment's write first, a stamp change too.
          refused(await s.api(s.janitorB, 'PATCH', at, [{ op: 'replace', path: pointer('labels', KEYS.environment), value: 'beta' }], JSON_PATCH), CROSS, `${frozenLabel(KEYS.environment)}is frozen at "alpha", got "beta"`);
          const deleted = refused(await s.api(s.janitorB, 'DELETE', at), CROSS);
          assert.doesNotMatch(deleted, /alpha/, 'the refusal names no other environment');
          const all = await s.api(s.janitorB, 'DELETE', `${k.path(NS)}?labelSelector=${encodeURIComponent(`${KEYS.environment}=alpha`)}`);
          // A deletecollection is reviewed item by item.
          refused(all, CROSS);
          const now = await unchanged(s);
          assert.equal(label(now, 'hijacked'), undefined);
        });

        test(`alpha's runner may not remove, change or add Deed's stamps on its ${k.kind}: not by merge patch, JSON patch or server-side apply`, async () => {
          const s = suite();
          // Its own writes pass: what is refused below is the stamps, not alpha.
          const own = await s.api(alpha, 'PATCH', at, { metadata: { labels: { tier: 'lab' } } }, MERGE);
          assert.equal(own.status, 200, own.text);
          assert.equal(label(own.body as KubeObject, 'tier'), 'lab');

          const nonce = annotation(created, KEYS.createNonce)!;
          const otherNonce = 'f'.repeat(64);
          const otherUid = '00000000-0000-4000-8000-000000000000';
          const merge = (metadata: Record<string, unknown>) => s.api(alpha, 'PATCH', at, { metadata }, MERGE);
          refused(await merge({ labels: { [KEYS.environment]: null } }), `${frozenLabel(KEYS.environment)}is frozen at "alpha" and cannot be removed`);
          refused(await merge({ labels: { [KEYS.managed]: null } }), `${frozenLabel(KEYS.managed)}is frozen at "true" and cannot be removed`);
          refused(await merge({ labels: { [KEYS.ownerUid]: otherUid } }), `${frozenLabel(KEYS.ownerUid)}is frozen at "${s.runnerA.uid}", got "${otherUid}"`);
          refused(await merge({ annotations: { [KEYS.createNonce]: otherNonce } }), `${frozenAnnotation(KEYS.createNonce)}is frozen at "${nonce}", got "${otherNonce}"`);
          refused(await merge({ annotations: { [KEYS.attestation]: null } }), `${frozenAnnotation(KEYS.attestation)}is frozen at "${annotation(created, KEYS.attestation)}" and cannot be removed`);
          refused(await merge({ annotations: { [KEYS.owner]: 'sandbox-a/someone-else' } }), `${frozenAnnotation(KEYS.owner)}is frozen at "sandbox-a/${s.runnerA.pod}", got "sandbox-a/someone-else"`);
          // Not stamped on these kinds, so never added later.
          refused(await merge({ annotations: { [KEYS.expiresAt]: '2099-01-01T00:00:00Z' } }), `${frozenAnnotation(KEYS.expiresAt)}cannot be added to an object admitted without it (got "2099-01-01T00:00:00Z")`);
          // Nor the runner's owner reference, which admission did not add (and which, across namespaces, the garbage collector would take for an orphan's).
          refused(
            await merge({ ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: s.runnerA.pod, uid: s.runnerA.uid }] }),
            `[frozen.owner-reference] metadata.ownerReferences: a reference to the owner pod ${s.runnerA.pod} cannot be added after admission`,
          );
          // A JSON patch is the same UPDATE.
          refused(await s.api(alpha, 'PATCH', at, [{ op: 'remove', path: pointer('annotations', KEYS.createNonce) }], JSON_PATCH), `${frozenAnnotation(KEYS.createNonce)}is frozen at "${nonce}" and cannot be removed`);
          refused(await s.api(alpha, 'PATCH', at, [{ op: 'replace', path: pointer('labels', KEYS.environment), value: 'beta' }], JSON_PATCH), `${frozenLabel(KEYS.environment)}is frozen at "alpha", got "beta"`);
          // So is server-side apply, forced past the field managers that own the stamps.
          refused(await apply(s, alpha, 'alpha-apply', { labels: { [KEYS.environment]: 'beta' } }), `${frozenLabel(KEYS.environment)}is frozen at "alpha", got "beta"`);
          refused(await apply(s, alpha, 'alpha-apply', { annotations: { [KEYS.createNonce]: otherNonce } }), `${frozenAnnotation(KEYS.createNonce)}is frozen at "${nonce}", got "${otherNonce}"`);
          const now = await unchanged(s);
          assert.equal(label(now, 'tier'), 'lab', "alpha's own change stands");
        });

        test(`alpha's runner writes its ${k.kind} manifest back whole (kubectl replace -f): Deed keeps the stamps as stored; beta's is still refused`, async () => {
          const s = suite();
          // The manifest as written, none of Deed's stamps, with the resourceVersion last read (an
          // update of a custom resource must name one; kubectl replace sends a core kind's without).
          const manifest = k.body(name);
          const metadata = manifest.metadata as { labels?: Record<string, string>; resourceVersion?: string };
          metadata.labels = { ...(metadata.labels ?? {}), tier: 'lab', replaced: 'true' };
          const put = async (who: Identity) => {
            let answer: ApiAnswer | undefined;
            // A controller's status write may come between: a conflict is the API server's, before admission.
            for (let i = 0; i < 5 && (answer === undefined || answer.status === 409); i++) {
              metadata.resourceVersion = (await read(s)).metadata.resourceVersion;
              answer = await s.api(who, 'PUT', at, manifest);
            }
            return answer!;
          };
          refused(await put(s.janitorB), CROSS);
          const replaced = await put(alpha);
          assert.equal(replaced.status, 200, replaced.text);
          assert.ok(replaced.warnings.some((w) => w.includes('Deed kept its stamps as stored')), `the warning says so: ${JSON.stringify(replaced.warnings)}`);
          const now = await unchanged(s);
          assert.equal(label(now, 'replaced'), 'true', "alpha's own change stands");
        });

        test(`alpha marks its ${k.kind} terminal, only as "true" and beta not at all; once marked, no one changes or removes the mark`, async () => {
          const s = suite();
          const mark = (value: string | null) => ({ metadata: { annotations: { [KEYS.terminal]: value } } });
          // beta may not end alpha's run.
          // (Not the message's middle: it names the object's environment, which a refusal to another environment should not.)
          const foreign = refused(await s.api(s.janitorB, 'PATCH', at, mark('true'), MERGE), CROSS, `[terminal.environment] ${TERMINAL_PATH}: only a principal of the environment this object belongs to may mark it terminal; ${JANITOR} acts for "beta"`);
          assert.doesNotMatch(foreign, /alpha/, 'the refusal names no other environment');
          refused(await apply(s, s.janitorB, 'beta-janitor', { annotations: { [KEYS.terminal]: 'true' } }), CROSS, '[terminal.environment]');
          assert.equal(annotation(await unchanged(s), KEYS.terminal), undefined);
          // A value other than "true" could never be corrected: refused.
          refused(await s.api(alpha, 'PATCH', at, mark('yes'), MERGE), `[terminal.malformed] ${TERMINAL_PATH}: ${KEYS.terminal} must be "true", got "yes"`);
          assert.equal(annotation(await unchanged(s), KEYS.terminal), undefined);

          const marked = await s.api(alpha, 'PATCH', at, mark('true'), MERGE);
          assert.equal(marked.status, 200, marked.text);
          assert.equal(annotation(marked.body as KubeObject, KEYS.terminal), 'true');
          // The mark is not a stamp: the stamps are as they were, and still verify.
          await unchanged(s);

          // Once set, not alpha, by any path; not break-glass; not beta.
          refused(await s.api(alpha, 'PATCH', at, mark('false'), MERGE), TERMINAL_FROZEN);
          refused(await s.api(alpha, 'PATCH', at, mark(null), MERGE), TERMINAL_FROZEN);
          refused(await s.api(alpha, 'PATCH', at, [{ op: 'remove', path: pointer('annotations', KEYS.terminal) }], JSON_PATCH), TERMINAL_FROZEN);
          refused(await apply(s, alpha, 'alpha-apply', { annotations: { [KEYS.terminal]: 'false' } }), TERMINAL_FROZEN);
          refused(await s.api(s.admin, 'PATCH', at, mark(null), MERGE), TERMINAL_FROZEN);
          refused(await s.api(s.janitorB, 'PATCH', at, mark(null), MERGE), CROSS, TERMINAL_FROZEN);
          assert.equal(annotation(await unchanged(s), KEYS.terminal), 'true');
        });

        test(`alpha deletes its own ${k.kind}, marked terminal`, async () => {
          const s = suite();
          const del = await s.api(alpha, 'DELETE', at);
          assert.equal(del.status, 200, del.text);
          await eventually(`${k.kind} ${name} is gone`, async () => (await s.api(s.admin, 'GET', at)).status === 404);
        });
      });
    }
  });
}
