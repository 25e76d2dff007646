// Issue 40, "fifty public charts install whole into an opted-in namespace": twenty-six public
// Helm charts, rendered whole with their default values (test/fixtures/real-world/charts,
// sources in its README), sent through `deed review` as `helm install --namespace NS` would
// send them. A declared platform deployer (a principal of no environment listed in
// `platform`) installs every one into a namespace environments share, changed only by the
// no-environment mark on what selects pods; an environment's runner installs them into its
// namespace with exactly the refusals listed below, each one naming its fix.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../src/admission/types.js';
import { workloadKindNamed } from '../src/policy/kinds.js';
import { affinityTerms } from '../src/policy/pod/affinity-terms.js';
import { FIXTURE_POLICY } from './helpers.js';
import { ROOT } from './serve-process.js';

const CHARTS = join(import.meta.dirname, 'fixtures', 'real-world', 'charts');
const RENDERED_NAMESPACE = 'shared';
const PLATFORM_DEPLOYER = 'system:serviceaccount:argocd:argocd-application-controller';
const RUNNER_A = ['--as', 'system:serviceaccount:sandbox-a:runner', '--pod-name', 'runner-0', '--pod-uid', '144baa57-4863-4fb3-a622-a0c0ecb4a7ff'];
const MARK = 'deed.dev/no-environment';
const ENVIRONMENT = 'deed.dev/environment';
const RUNNER = 'deed.dev/runner';

const dir = mkdtempSync(join(tmpdir(), 'deed-public-charts-'));
const policyFile = join(dir, 'policy.yaml');
writeFileSync(policyFile, stringify({ ...FIXTURE_POLICY, platform: { users: [PLATFORM_DEPLOYER], groups: ['system:masters'] } }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function deed(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, DEED_CONFIG: '' }, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

const parse = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as KubeObject | null).filter((o): o is KubeObject => o !== null);
const chartFiles = readdirSync(CHARTS).filter((f) => f.endsWith('.yaml')).sort();

/** Every `namespace:` the render filled from the release namespace, as `ns`. */
function renamespace(value: unknown, ns: string): unknown {
  if (Array.isArray(value)) return value.map((v) => renamespace(v, ns));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'namespace' && v === RENDERED_NAMESPACE ? ns : renamespace(v, ns)]));
}

/**
 * The renders as `helm install --namespace ns` sends them: what names no namespace goes to
 * ns (deed review drops it again from cluster-scoped kinds), what names another keeps it.
 */
function installInto(ns: string): { dir: string; objects: KubeObject[] } {
  const out = join(dir, ns);
  mkdirSync(out, { recursive: true });
  const objects: KubeObject[] = [];
  for (const file of chartFiles) {
    const placed = parse(readFileSync(join(CHARTS, file), 'utf8')).map((o) => {
      const p = renamespace(o, ns) as KubeObject;
      p.metadata.namespace ??= ns;
      return p;
    });
    objects.push(...placed);
    writeFileSync(join(out, file), placed.map((o) => stringify(o)).join('---\n'));
  }
  return { dir: out, objects };
}

/**
 * What the cluster holds when the charts are sent: the namespace, opted in, and the Secret
 * ingress-nginx's pre-install hook Job creates before its Deployment (unstamped: the hook's
 * pod runs as ingress-nginx-admission, a service account of no environment).
 */
function existing(ns: string): string {
  const file = join(dir, `existing-${ns}.yaml`);
  writeFileSync(file, stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'kubernetes.io/metadata.name': ns, 'deed.dev/sandbox': 'enabled' } } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ingress-nginx-admission', namespace: ns }, data: { ca: '', cert: '', key: '' } },
    ],
  }));
  return file;
}

interface Verdict {
  kind: string;
  name: string;
  outcome: string;
  denials: Array<{ rule: string; message: string }>;
  warnings: Array<{ rule: string; message: string }>;
}

/** The verdicts deed review prints on stderr, one per object. */
function verdicts(stderr: string): Verdict[] {
  const out: Verdict[] = [];
  for (const line of stderr.split('\n')) {
    const head = /^(\w+) (\S+) \(CREATE by [^)]*\): (allowed|DENIED|not judged)/.exec(line);
    if (head) {
      out.push({ kind: head[1]!, name: head[2]!, outcome: head[3]!, denials: [], warnings: [] });
      continue;
    }
    const denied = /^ {4}denied \[([\w.-]+)\] (.*)$/.exec(line);
    if (denied) out.at(-1)!.denials.push({ rule: denied[1]!, message: denied[2]! });
    const warned = /^ {4}warning: deed ([\w.-]+): (.*)$/.exec(line);
    if (warned) out.at(-1)!.warnings.push({ rule: warned[1]!, message: warned[2]! });
  }
  return out;
}

const countBy = (items: string[]) => Object.fromEntries([...new Set(items)].sort().map((k) => [k, items.filter((i) => i === k).length]));

/** The object with Deed's no-environment mark taken out wherever a label or selector holds it. */
function unmarked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unmarked);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== MARK).map(([k, v]) => [k, unmarked(v)]));
}

/**
 * An object as compared with what was written: the mark out, an empty or null `labels:` or
 * `annotations:` (as helm renders them) as none, and out of a pod the API server's own
 * token volume (kube-api-access-*), which deed review adds as the API server would.
 */
function comparable(o: KubeObject): unknown {
  const c = unmarked(o) as KubeObject;
  for (const k of ['labels', 'annotations'] as const) if (c.metadata[k] === null || (c.metadata[k] !== undefined && Object.keys(c.metadata[k]).length === 0)) delete c.metadata[k];
  if (c.kind !== 'Pod') return c;
  const s = spec(c);
  const token = (name: string) => name.startsWith('kube-api-access-');
  s.volumes = (s.volumes ?? []).filter((v: { name: string }) => !token(v.name));
  if (s.volumes.length === 0) delete s.volumes;
  for (const container of s.containers) {
    container.volumeMounts = (container.volumeMounts ?? []).filter((m: { name: string }) => !token(m.name));
    if (container.volumeMounts.length === 0) delete container.volumeMounts;
  }
  return c;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reading deep into specs
type Spec = Record<string, any>;
const spec = (o: KubeObject): Spec => (o.spec ?? {}) as Spec;

/** The labelSelectors of an object's pod affinity terms (a Pod's own, its pod templates'), as they stand in it. */
function termSelectors(o: KubeObject): Spec[] {
  const at = o.kind === 'Pod' ? ['spec'] : (workloadKindNamed(o.kind ?? '')?.podTemplates ?? []).map((p) => `${p}.spec`);
  return at.flatMap((path) => {
    const s = path.split('.').reduce<Spec | undefined>((v, k) => v?.[k], o as Spec);
    return s !== undefined && typeof s === 'object' ? affinityTerms(s, path).flatMap((t) => (t.labelSelector !== undefined ? [t.labelSelector as Spec] : [])) : [];
  });
}

const doesNotExist = (selector: Spec, key: string) => (selector.matchExpressions ?? []).some((e: Spec) => e.key === key && e.operator === 'DoesNotExist');

/** A copy of `o` without what Deed adds to its pod affinity terms (rules/affinity-scope.ts): `<prefix>/environment` and `<prefix>/runner` DoesNotExist. */
function unscopedTerms(o: KubeObject): KubeObject {
  const c = structuredClone(o);
  for (const selector of termSelectors(c)) {
    selector.matchExpressions = (selector.matchExpressions ?? []).filter((e: Spec) => !([ENVIRONMENT, RUNNER].includes(e.key) && e.operator === 'DoesNotExist'));
    if (selector.matchExpressions.length === 0) delete selector.matchExpressions;
  }
  return c;
}
const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']);
const isWorkload = (o: KubeObject) => WORKLOADS.has(o.kind ?? '');
const selects = (selector: Record<string, string>, labels: Record<string, string> | undefined) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);
/** The pod labels a chart's objects give their pods: workload templates and bare pods. */
const podLabels = (objects: KubeObject[]) =>
  objects.flatMap((o) => (isWorkload(o) ? [spec(o).template?.metadata?.labels as Record<string, string>] : o.kind === 'Pod' ? [o.metadata.labels as Record<string, string>] : []));

test('the corpus is the one the README lists: 26 charts, 196 objects', () => {
  assert.equal(chartFiles.length, 26);
  const readme = readFileSync(join(CHARTS, 'README.md'), 'utf8');
  for (const file of chartFiles) assert.match(readme, new RegExp(`^\\| \`${file.replace(/\./g, '\\.')}\` \\| ${parse(readFileSync(join(CHARTS, file), 'utf8')).length} \\| `, 'm'), file);
  assert.equal(chartFiles.reduce((n, f) => n + parse(readFileSync(join(CHARTS, f), 'utf8')).length, 0), 196);
});

describe('public charts, as a declared platform deployer installs them into a namespace environments share', () => {
  let given: KubeObject[];
  let run: Run;
  let printed: KubeObject[];
  before(async () => {
    const installed = installInto('shared');
    given = installed.objects;
    run = await deed(['review', '-f', installed.dir, '--existing', existing('shared'), '--as', PLATFORM_DEPLOYER, '--config', policyFile]);
    printed = parse(run.stdout);
  });

  test('every object judged is allowed, without a warning; only cluster-scoped kinds and kube-system are not judged', () => {
    assert.equal(run.code, 0, run.stderr.split('\n').filter((l) => /denied \[/.test(l)).join('\n'));
    assert.match(run.stderr, /^196 objects: 142 allowed, 0 denied, 0 warnings, 54 not judged$/m);
    const all = verdicts(run.stderr);
    assert.equal(all.length, 196);
    assert.deepEqual(countBy(all.filter((v) => v.outcome === 'not judged').map((v) => v.kind)), {
      APIService: 2, ClusterRole: 19, ClusterRoleBinding: 21, CustomResourceDefinition: 2, IngressClass: 2,
      MutatingWebhookConfiguration: 2, RoleBinding: 2, ValidatingWebhookConfiguration: 4,
    });
    assert.deepEqual(all.filter((v) => v.kind === 'RoleBinding' && v.outcome === 'not judged').map((v) => v.name.split('/')[0]), ['kube-system', 'kube-system']);
    assert.doesNotMatch(run.stderr, /^existing .*stamps not trusted/m);
  });

  test('written as they are but for the no-environment mark: nothing stamped, and every workload, Service, PodDisruptionBudget and pod carries the mark', () => {
    assert.equal(printed.length, given.length);
    for (const [i, o] of printed.entries()) {
      const what = `${o.kind} ${o.metadata.name ?? ''}`;
      assert.equal(o.metadata.labels?.[ENVIRONMENT], undefined, `${what} is not stamped`);
      const written = structuredClone(given[i]!);
      if (o.metadata.namespace === undefined) delete written.metadata.namespace; // cluster-scoped: the API server drops it
      assert.deepEqual(comparable(unscopedTerms(o)), comparable(written), `${what} is as written, but for the mark and its pod affinity terms' scope`);
    }
    // Their pod affinity terms (a chart spreading its own replicas) select pods of no environment only; the platform's may still reach runners.
    const terms = printed.flatMap(termSelectors);
    assert.equal(terms.length, given.flatMap(termSelectors).length);
    assert.ok(terms.length > 0, 'the corpus spreads replicas by pod anti-affinity');
    assert.deepEqual(terms.filter((t) => !doesNotExist(t, ENVIRONMENT) || doesNotExist(t, RUNNER)), []);
    const marked = (o: KubeObject) => {
      const s = spec(o);
      if (isWorkload(o)) return s.selector.matchLabels?.[MARK] === 'true' && s.template.metadata.labels[MARK] === 'true';
      if (o.kind === 'Service') return s.selector === undefined || s.selector[MARK] === 'true';
      if (o.kind === 'PodDisruptionBudget') return s.selector.matchLabels?.[MARK] === 'true';
      if (o.kind === 'Pod') return o.metadata.labels?.[MARK] === 'true';
      return true;
    };
    const unscoped = printed.filter((o) => !marked(o)).map((o) => `${o.kind} ${o.metadata.name}`);
    assert.deepEqual(unscoped, []);
    assert.deepEqual(countBy(printed.filter((o) => isWorkload(o) || ['Service', 'PodDisruptionBudget', 'Pod'].includes(o.kind ?? '')).map((o) => o.kind ?? '')), {
      DaemonSet: 3, Deployment: 23, Pod: 7, PodDisruptionBudget: 1, Service: 32, StatefulSet: 2,
    });
  });

  test('the platform declaration is not what lets them pass: none uses what only the platform may write (externalIPs, quotas, explicit environment selectors)', async () => {
    const plain = join(dir, 'no-platform-users.yaml');
    writeFileSync(plain, stringify({ ...FIXTURE_POLICY, platform: { users: [], groups: ['system:masters'] } }));
    const again = await deed(['review', '-f', join(dir, 'shared'), '--existing', existing('shared'), '--as', PLATFORM_DEPLOYER, '--config', plain]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /^196 objects: 142 allowed, 0 denied, 0 warnings, 54 not judged$/m);
    // A deployer of no environment that is not the platform's is a tenant: its PodDisruptionBudgets and NetworkPolicies exclude runners too.
    const asTenant = (o: KubeObject) => {
      const c = structuredClone(o);
      const selector = c.kind === 'PodDisruptionBudget' ? spec(c).selector : c.kind === 'NetworkPolicy' ? spec(c).podSelector : undefined;
      if (selector !== undefined) selector.matchExpressions = [...(selector.matchExpressions ?? []), { key: 'deed.dev/runner', operator: 'DoesNotExist' }];
      // And so do its pods' affinity terms.
      for (const term of termSelectors(c)) term.matchExpressions = [...(term.matchExpressions ?? []), { key: RUNNER, operator: 'DoesNotExist' }];
      return comparable(c);
    };
    assert.deepEqual(parse(again.stdout).map(comparable), printed.map(asTenant), 'the same objects, the same marks');
  });

  test("every Service still selects the pods its chart gives it", () => {
    const before = podLabels(given);
    const after = podLabels(printed);
    const services = (list: KubeObject[]) => list.filter((o) => o.kind === 'Service' && spec(o).selector !== undefined);
    const reaching = services(given).filter((s) => before.some((l) => selects(spec(s).selector, l))).map((s) => s.metadata.name);
    assert.equal(reaching.length, 32, 'every Service with a selector reaches pods as rendered');
    assert.deepEqual(services(printed).filter((s) => after.some((l) => selects(spec(s).selector, l))).map((s) => s.metadata.name), reaching);
  });
});

describe("public charts, as an environment's runner installs them into its namespace", () => {
  let run: Run;
  let all: Verdict[];
  let printed: KubeObject[];
  before(async () => {
    const installed = installInto('sandbox-a');
    run = await deed(['review', '-f', installed.dir, '--existing', existing('sandbox-a'), ...RUNNER_A, '--config', policyFile]);
    all = verdicts(run.stderr);
    printed = parse(run.stdout);
  });

  test('twelve objects are refused: nine whose pod templates ask for the API server token, one for the host network, two at system-cluster-critical priority', () => {
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /^196 objects: 130 allowed, 12 denied, 10 warnings, 54 not judged$/m);
    const denied = all.filter((v) => v.outcome === 'DENIED');
    assert.deepEqual(denied.flatMap((v) => v.denials.map((d) => `${v.kind} ${v.name} ${d.rule}`)).sort(), [
      'CronJob sandbox-a/descheduler template.priority-class',
      'DaemonSet sandbox-a/prometheus-node-exporter template.host-network',
      'Deployment sandbox-a/external-dns template.service-account-token',
      'Deployment sandbox-a/ingress-nginx-controller template.service-account-token',
      'Deployment sandbox-a/kube-state-metrics template.service-account-token',
      'Deployment sandbox-a/metrics-server template.priority-class',
      'Deployment sandbox-a/prometheus-adapter template.service-account-token',
      'Deployment sandbox-a/prometheus-pushgateway template.service-account-token',
      'Deployment sandbox-a/traefik template.service-account-token',
      'Job sandbox-a/ingress-nginx-admission-create template.service-account-token',
      'Job sandbox-a/ingress-nginx-admission-patch template.service-account-token',
      'StatefulSet sandbox-a/alertmanager template.service-account-token',
    ]);
    assert.deepEqual(countBy(denied.flatMap((v) => v.denials.map((d) => d.rule))), { 'template.host-network': 1, 'template.priority-class': 2, 'template.service-account-token': 9 });
  });

  test('each refusal names its fix: the value Deed owns, or the grant the environment lacks', () => {
    const denials = all.flatMap((v) => v.denials);
    assert.equal(denials.length, 12);
    for (const d of denials) {
      if (d.rule === 'template.priority-class')
        assert.match(d.message, /^spec(\.jobTemplate\.spec)?\.template\.spec\.priorityClassName: priority class "system-cluster-critical" is not allowed for environment "alpha": the scheduler would preempt lower-priority pods to place it, other environments' included; leave priorityClassName unset, or list it in template\.priorityClasses or environments\[\]\.grants\.priorityClasses$/);
      else if (d.rule === 'template.service-account-token')
        assert.equal(d.message, 'spec.template.spec.automountServiceAccountToken: is platform-owned: expected false, got true; leave it unset (Deed turns the token off), or have software that needs the API server installed by a principal of no environment (a platform deployer)');
      else assert.equal(d.message, 'spec.template.spec.hostNetwork: environment "alpha" is not granted host networking (environments[].grants.hostNetwork)');
    }
  });

  test('the rest is allowed and stamped as alpha\'s; host access and added capabilities are flagged, not refused', () => {
    assert.deepEqual(countBy(all.map((v) => v.outcome)), { DENIED: 12, allowed: 130, 'not judged': 54 });
    assert.deepEqual(countBy(all.flatMap((v) => v.warnings.map((w) => `${v.kind} ${v.name} ${w.rule}`))), {
      'DaemonSet sandbox-a/fluent-bit template.host-access': 3,
      'DaemonSet sandbox-a/fluentd template.host-access': 2,
      // Its host network is template.host-network's (refused above), not flagged again.
      'DaemonSet sandbox-a/prometheus-node-exporter template.host-access': 4,
      'Deployment sandbox-a/ingress-nginx-controller template.privileged': 1,
    });
    const allowed = new Set(all.filter((v) => v.outcome === 'allowed').map((v) => `${v.kind} ${v.name}`));
    const stamped = printed.filter((o) => allowed.has(`${o.kind} ${o.metadata.namespace}/${o.metadata.name}`));
    assert.equal(stamped.length, 130);
    assert.deepEqual(stamped.filter((o) => o.metadata.labels?.[ENVIRONMENT] !== 'alpha').map((o) => `${o.kind} ${o.metadata.name}`), []);
  });
});
