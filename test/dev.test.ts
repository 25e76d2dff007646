// `deed dev`: its webhook configurations are the install's (`deed manifests`) under names of
// their own, pointed by URL at the local process with its CA; and stopping removes both,
// whatever became of either. The loop itself in the real API server: test/e2e/cases/dev.ts.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import type { KubernetesObject, V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { parseConfig } from '../src/config/load.js';
import { DEV_NAME, devWebhookConfigurations, pointedAtUrl, webhookBaseUrl, type WebhookConfiguration, type WebhookConfigurationKind } from '../src/install/dev-webhooks.js';
import { renderManifests } from '../src/install/manifests.js';
import { CLEANUP_HINT, readyLine, registerDevWebhooks, removeDevWebhooks, runDevLoop } from '../src/cli/dev.js';
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
    const install = installed();
    for (const [i, o] of dev().entries()) {
      for (const [j, w] of o.webhooks!.entries()) {
        const path = install[i]!.webhooks![j]!.clientConfig.service!.path;
        assert.ok(path !== undefined && path.startsWith('/'), `${w.name}: the install's path`);
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

  test('--cleanup reads no policy: a broken policy file does not keep leftovers in place', () => {
    const run = deed(['dev', '--cleanup', '--config', '/nonexistent/policy.yaml', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(run.status, 2);
    assert.equal(run.stderr, 'deed: cannot read kubeconfig /nonexistent/kubeconfig: no such file or directory\n');
  });

  test('without a kubeconfig it says so in one line, and registers nothing', () => {
    const run = deed(['dev', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(run.status, 2);
    assert.equal(run.stderr, 'deed: cannot read kubeconfig /nonexistent/kubeconfig: no such file or directory\n');
  });
});

describe("deed dev's loop: signals and a fatal error remove the configurations, then stop the server", () => {
  const caFile = join(mkdtempSync(join(tmpdir(), 'deed-dev-')), 'ca.crt');
  writeFileSync(caFile, CA);

  /** The loop over a fake server and registry; `exited` resolves with the first exit code. */
  function loop(o: { ready?: () => boolean; registry?: ReturnType<typeof fakeRegistry>; readyTimeoutMs?: number; stopGraceMs?: number } = {}) {
    const f = o.registry ?? fakeRegistry();
    const events = new EventEmitter();
    const said: string[] = [];
    const exits: number[] = [];
    let shutdowns = 0;
    let resolveExit!: (code: number) => void;
    const exited = new Promise<number>((resolve) => (resolveExit = resolve));
    const running = runDevLoop({
      registry: f.registry,
      server: { url: 'https://127.0.0.1:9443', caFile, isReady: o.ready ?? (() => true), shutdown: async () => void shutdowns++ },
      configurations: (port, caPem) => devWebhookConfigurations({ namespace: 'deed-system', config: parseConfig(parse(POLICY), 'the policy'), baseUrl: webhookBaseUrl('127.0.0.1', port), caPem, failurePolicy: 'Ignore' }),
      readyLine: (port, replaced) => readyLine(webhookBaseUrl('127.0.0.1', port), 'Ignore', [], replaced),
      events,
      exit: (code) => {
        exits.push(code);
        resolveExit(code);
      },
      say: (line) => said.push(line),
      onFatal: () => undefined,
      onShutdownError: () => undefined,
      ...(o.readyTimeoutMs !== undefined ? { readyTimeoutMs: o.readyTimeoutMs } : {}),
      ...(o.stopGraceMs !== undefined ? { stopGraceMs: o.stopGraceMs } : {}),
    });
    return { f, events, said, exits, exited, running, shutdowns: () => shutdowns };
  }

  test('once ready, both configurations are registered with the CA from the cert dir and the ready line is said', async () => {
    const l = loop();
    await l.running;
    assert.deepEqual([...l.f.present].sort(), ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
    assert.equal(l.said.length, 1);
    assert.match(l.said[0]!, /^ready: registered .* calling https:\/\/127\.0\.0\.1:9443 for writes in namespaces labelled deed\.dev\/sandbox=enabled/);
    l.events.emit('SIGTERM');
    await l.exited;
  });

  for (const [signal, why] of [['SIGINT', 'interrupted'], ['SIGTERM', 'terminated']] as const) {
    test(`${signal} removes both, stops the server and exits 0`, async () => {
      const l = loop();
      await l.running;
      l.events.emit(signal);
      assert.equal(await l.exited, 0);
      assert.equal(l.f.present.size, 0);
      assert.equal(l.shutdowns(), 1);
      assert.equal(l.said.at(-1), `${why}: removed mutatingwebhookconfiguration/deed-dev and validatingwebhookconfiguration/deed-dev`);
    });
  }

  test('a fatal error removes both too, and exits 1', async () => {
    const l = loop();
    await l.running;
    l.events.emit('uncaughtException', new Error('EMFILE: too many open files'));
    assert.equal(await l.exited, 1);
    assert.equal(l.f.present.size, 0);
    assert.match(l.said.at(-1)!, /^fatal error \(EMFILE: too many open files\): removed /);
  });

  test('a second signal (Ctrl-C relayed by a wrapper) changes nothing: one removal, one exit', async () => {
    const l = loop();
    await l.running;
    l.events.emit('SIGINT');
    l.events.emit('SIGINT');
    l.events.emit('SIGTERM');
    assert.equal(await l.exited, 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(l.exits, [0]);
    assert.equal(l.f.calls.filter((c) => c.startsWith('remove')).length, 2);
  });

  test('a signal while registering waits for the registration, then removes it: nothing is left and no ready line is said', async () => {
    const f = fakeRegistry();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const apply = f.registry.apply.bind(f.registry);
    f.registry.apply = async (o) => {
      await gate;
      return apply(o);
    };
    const l = loop({ registry: f });
    await new Promise((resolve) => setTimeout(resolve, 20));
    l.events.emit('SIGINT');
    release();
    assert.equal(await l.exited, 0);
    await l.running;
    assert.equal(f.present.size, 0);
    assert.deepEqual(f.calls.slice(-2), ['remove MutatingWebhookConfiguration deed-dev', 'remove ValidatingWebhookConfiguration deed-dev']);
    assert.ok(!l.said.some((s) => s.startsWith('ready')), l.said.join('\n'));
  });

  test('a removal that fails exits 1 and says how to remove what is left', async () => {
    const f = fakeRegistry({ remove: 'ValidatingWebhookConfiguration' });
    const l = loop({ registry: f });
    await l.running;
    l.events.emit('SIGINT');
    assert.equal(await l.exited, 1);
    assert.ok(l.said.at(-1)!.includes(CLEANUP_HINT), l.said.at(-1));
  });

  test('a removal that hangs is cut short by the grace period, exit 1 with the hint', async () => {
    const f = fakeRegistry();
    f.registry.remove = () => new Promise(() => undefined);
    const l = loop({ registry: f, stopGraceMs: 100 });
    await l.running;
    // The grace timer does not hold a process open by itself (unref): this test must.
    const alive = setInterval(() => undefined, 1000);
    try {
      l.events.emit('SIGTERM');
      assert.equal(await l.exited, 1);
    } finally {
      clearInterval(alive);
    }
    assert.match(l.said.at(-1)!, /stopping took longer than 0\.1 s; exiting; remove them with `deed dev --cleanup`/);
  });

  test('a server that never knows its review scope registers nothing and exits 1, saying why', async () => {
    const l = loop({ ready: () => false, readyTimeoutMs: 150 });
    assert.equal(await l.exited, 1);
    assert.equal(l.f.calls.filter((c) => c.startsWith('apply')).length, 0);
    assert.match(l.said[0]!, /^cannot start: the review scope is not known after 0\.15 s: the kubeconfig's user must list and watch namespaces/);
  });
});
