// `deed dev`: its webhook configurations are the install's (`deed manifests`) under names of
// their own, pointed by URL at the local process with its CA; and stopping removes both,
// whatever became of either. The loop itself in the real API server: test/e2e/cases/dev.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import type { KubernetesObject, V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { parseConfig } from '../src/config/load.js';
import { DEV_NAME, devWebhookConfigurations, pointedAtUrl, webhookBaseUrl, type WebhookConfiguration, type WebhookConfigurationKind } from '../src/install/dev-webhooks.js';
import { renderManifests } from '../src/install/manifests.js';
import { CLEANUP_HINT, readyLine, registerDevWebhooks, removeDevWebhooks } from '../src/cli/dev.js';
import type { WebhookRegistry } from '../src/kube/webhook-registrations.js';
import { deed } from './cli-process.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB-dev-ca\n-----END CERTIFICATE-----\n';
const POLICY = `labelPrefix: deed.dev
environments:
  - id: dev
    serviceAccounts: ["dev-loop:*"]
workloadControllers:
  users: ["system:serviceaccount:kube-system:replicaset-controller"]
`;

type Configuration = V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration;

function installed(namespace = 'deed-system'): Configuration[] {
  return renderManifests({ namespace, image: 'deed:test', policy: POLICY }).filter(
    (o): o is Configuration => o.kind === 'MutatingWebhookConfiguration' || o.kind === 'ValidatingWebhookConfiguration',
  );
}

function dev(overrides: Partial<Parameters<typeof devWebhookConfigurations>[0]> = {}): Configuration[] {
  return devWebhookConfigurations({ namespace: 'deed-system', config: parseConfig(parse(POLICY), 'the policy'), baseUrl: 'https://127.0.0.1:9443', caPem: CA, failurePolicy: 'Fail', ...overrides });
}

describe("deed dev's webhook configurations", () => {
  test('are the two configurations deed manifests renders, but for their name, the instance label and clientConfig', () => {
    const ours = dev();
    const theirs = installed();
    assert.deepEqual(ours.map((o) => o.kind), theirs.map((o) => o.kind));
    for (const [i, o] of ours.entries()) {
      const t = structuredClone(theirs[i]!) as Configuration;
      // What may differ, put back to the install's: then nothing else may.
      const back = structuredClone(o) as Configuration;
      back.metadata = t.metadata;
      back.webhooks!.forEach((w, j) => (w.clientConfig = t.webhooks![j]!.clientConfig));
      assert.deepEqual(back, t, o.kind);
      assert.ok(o.webhooks!.length >= 2, 'the first pair and the default row');
    }
  });

  test('are named deed-dev, so an installed Deed (named deed) is never replaced', () => {
    for (const o of dev()) {
      assert.equal(o.metadata!.name, DEV_NAME);
      assert.equal(DEV_NAME, 'deed-dev');
      assert.equal(o.metadata!.labels!['app.kubernetes.io/instance'], 'deed-dev');
    }
    for (const o of installed()) assert.equal(o.metadata!.name, 'deed');
  });

  test("call the local process by URL at the install's paths, with its CA in base64 and no Service", () => {
    const [mutating, validating] = dev();
    for (const [o, path] of [[mutating!, '/mutate'], [validating!, '/validate']] as const) {
      for (const w of o.webhooks!) {
        assert.deepEqual(w.clientConfig, { url: `https://127.0.0.1:9443${path}`, caBundle: Buffer.from(CA).toString('base64') }, w.name);
        assert.equal(Buffer.from(w.clientConfig.caBundle!, 'base64').toString('utf8'), CA);
      }
    }
  });

  test('take the failure policy given, on every webhook', () => {
    for (const policy of ['Ignore', 'Fail'] as const) {
      for (const o of dev({ failurePolicy: policy })) for (const w of o.webhooks!) assert.equal(w.failurePolicy, policy, `${o.kind} ${w.name}`);
    }
  });

  test("keep the install's namespaceSelector, and with --only-namespace also require the namespace's name among those given", () => {
    const plain = dev();
    const only = dev({ onlyNamespaces: ['dev-loop', 'dev-loop', 'other'] });
    for (const [i, o] of only.entries()) {
      for (const [j, w] of o.webhooks!.entries()) {
        const before = plain[i]!.webhooks![j]!.namespaceSelector!;
        assert.deepEqual(w.namespaceSelector, { matchExpressions: [...before.matchExpressions!, { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['dev-loop', 'other'] }] });
      }
    }
  });

  test('refuse an --only-namespace the selector can never match: kube-system and Deed\'s own namespace', () => {
    assert.throws(() => dev({ onlyNamespaces: ['kube-system'] }), /--only-namespace kube-system: never reviewed/);
    assert.throws(() => dev({ namespace: 'deed-dev-ns', onlyNamespaces: ['deed-dev-ns'] }), /--only-namespace deed-dev-ns: never reviewed/);
  });

  test('exclude the Deed namespace given, as the install for that namespace does', () => {
    const ours = dev({ namespace: 'platform-deed' });
    const theirs = installed('platform-deed');
    ours.forEach((o, i) => o.webhooks!.forEach((w, j) => {
      assert.deepEqual(w.namespaceSelector, theirs[i]!.webhooks![j]!.namespaceSelector);
      assert.deepEqual(w.matchConditions, theirs[i]!.webhooks![j]!.matchConditions);
    }));
  });

  test('pointing a configuration at a URL leaves the rendered one as it was', () => {
    const [mutating] = installed();
    const before = structuredClone(mutating!);
    const pointed = pointedAtUrl(mutating as KubernetesObject, 'https://127.0.0.1:1', CA);
    assert.deepEqual(mutating, before);
    assert.notDeepEqual(pointed, before);
  });

  test('an IPv6 address is put in brackets in the URL; a name or IPv4 address as it is', () => {
    assert.equal(webhookBaseUrl('::1', 9443), 'https://[::1]:9443');
    assert.equal(webhookBaseUrl('172.18.0.1', 9443), 'https://172.18.0.1:9443');
    assert.equal(webhookBaseUrl('host.k3d.internal', 9443), 'https://host.k3d.internal:9443');
  });
});

/** A registry that records its calls and fails where told. */
function fakeRegistry(fail: { apply?: WebhookConfigurationKind; remove?: WebhookConfigurationKind } = {}, present = new Set<string>()) {
  const calls: string[] = [];
  const registry: WebhookRegistry = {
    async apply(o: WebhookConfiguration) {
      calls.push(`apply ${o.kind}`);
      if (fail.apply === o.kind) throw new Error(`create ${o.kind}: HTTP 403: forbidden`);
      const had = present.has(o.kind!);
      present.add(o.kind!);
      return had ? 'replaced' : 'created';
    },
    async remove(kind, name) {
      calls.push(`remove ${kind} ${name}`);
      if (fail.remove === kind) throw new Error(`delete ${kind}: no answer within 10000 ms`);
      return present.delete(kind);
    },
  };
  return { registry, calls, present };
}

describe("deed dev's cleanup", () => {
  test('removes both configurations by their dev name', async () => {
    const f = fakeRegistry({}, new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']));
    const removal = await removeDevWebhooks(f.registry);
    assert.deepEqual(f.calls, ['remove MutatingWebhookConfiguration deed-dev', 'remove ValidatingWebhookConfiguration deed-dev']);
    assert.deepEqual(removal.removed, ['mutatingwebhookconfiguration/deed-dev', 'validatingwebhookconfiguration/deed-dev']);
    assert.equal(removal.message, 'removed mutatingwebhookconfiguration/deed-dev and validatingwebhookconfiguration/deed-dev');
    assert.equal(f.present.size, 0);
  });

  test('a configuration already gone is no failure (a second --cleanup, or a removal by hand)', async () => {
    const f = fakeRegistry({}, new Set(['ValidatingWebhookConfiguration']));
    const removal = await removeDevWebhooks(f.registry);
    assert.deepEqual(removal.absent, ['mutatingwebhookconfiguration/deed-dev']);
    assert.deepEqual(removal.failed, []);
    assert.match(removal.message, /^removed validatingwebhookconfiguration\/deed-dev; no mutatingwebhookconfiguration\/deed-dev to remove$/);
  });

  test('a failed removal still removes the other, and says how to remove what is left', async () => {
    const f = fakeRegistry({ remove: 'MutatingWebhookConfiguration' }, new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']));
    const removal = await removeDevWebhooks(f.registry);
    assert.deepEqual(removal.removed, ['validatingwebhookconfiguration/deed-dev']);
    assert.equal(removal.failed.length, 1);
    assert.ok(removal.message.includes(CLEANUP_HINT), removal.message);
    assert.match(removal.message, /could not remove mutatingwebhookconfiguration\/deed-dev \(delete MutatingWebhookConfiguration: no answer within 10000 ms\)/);
    assert.match(CLEANUP_HINT, /deed dev --cleanup.*kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration deed-dev/);
  });

  test('a registration that fails half-way removes what it registered, and the error stands', async () => {
    const f = fakeRegistry({ apply: 'ValidatingWebhookConfiguration' });
    await assert.rejects(registerDevWebhooks(f.registry, dev()), /create ValidatingWebhookConfiguration: HTTP 403: forbidden/);
    assert.equal(f.present.size, 0, 'the mutating configuration is removed again');
    assert.deepEqual(f.calls, ['apply MutatingWebhookConfiguration', 'apply ValidatingWebhookConfiguration', 'remove MutatingWebhookConfiguration deed-dev', 'remove ValidatingWebhookConfiguration deed-dev']);
  });

  test("a crashed run's leftovers are replaced, and the ready line says so", async () => {
    const f = fakeRegistry({}, new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']));
    const outcomes = await registerDevWebhooks(f.registry, dev());
    assert.deepEqual(outcomes.map((r) => r.outcome), ['replaced', 'replaced']);
    assert.match(readyLine('https://127.0.0.1:9443', 'Ignore', [], true), /\(replacing a previous run's\)/);
  });

  test('the ready line says what is registered, where it calls, for which namespaces, and how to stop', () => {
    const line = readyLine('https://172.18.0.1:9443', 'Ignore', ['dev-loop'], false);
    assert.equal(
      line,
      'ready: registered mutatingwebhookconfiguration/deed-dev and validatingwebhookconfiguration/deed-dev, calling https://172.18.0.1:9443 for writes in namespace dev-loop (when labelled deed.dev/sandbox=enabled), failurePolicy Ignore; Ctrl-C (or SIGTERM) removes them and stops',
    );
    assert.doesNotMatch(line, /\n/);
  });
});

describe('deed dev on the command line', () => {
  test('an unknown failure policy is a one-line usage error', () => {
    const run = deed(['dev', '--failure-policy', 'Maybe']);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /option '--failure-policy <policy>' argument 'Maybe' is invalid\. Allowed choices are Fail, Ignore\./);
    assert.ok(run.stderr.trim().split('\n').length <= 2, run.stderr);
  });

  test('an --only-namespace that is never reviewed is refused before anything starts', () => {
    const run = deed(['dev', '--only-namespace', 'kube-system', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /^deed: --only-namespace kube-system: never reviewed/);
  });

  test('without a kubeconfig it says so in one line, and registers nothing', () => {
    const run = deed(['dev', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /^deed: cannot load kubeconfig \/nonexistent\/kubeconfig/);
  });
});
