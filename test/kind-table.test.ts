// The kind table (src/policy/kinds.ts) is the one list of kinds: the doors, the webhook
// rules, the RBAC rules, the chart's generated helpers, the metrics' kind label and the
// reaper's lists come from it, and no other file keeps a list of its kinds.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { HELM_KINDS_TEMPLATE, helmKindsTemplate, defaultRowRules, mutatingRules, validatingRules } from '../src/install/kind-rules.js';
import { doorOf } from '../src/policy/doors/door.js';
import { isDefaultRowException, KIND_TABLE, kindRowNamed, kindRows, REAPED_KINDS, sandboxKind, STAMPED_KINDS, workloadKind } from '../src/policy/kinds.js';
import { REAP_KINDS } from '../src/kube/client.js';
import type { AdmissionRequest } from '../src/admission/types.js';
import { ROOT } from './cli-process.js';

function request(group: string, resource: string, operation: AdmissionRequest['operation'], subResource?: string): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group, version: 'v1', kind: 'X' },
    resource: { group, version: 'v1', resource },
    subResource,
    name: 'n',
    namespace: 'ns',
    operation,
    userInfo: { username: 'u' },
    object: { metadata: { name: 'n' } },
    oldObject: null,
    dryRun: false,
  } as AdmissionRequest;
}

describe('the kind table', () => {
  test('each (group, resource) and each (group, kind) has one row', () => {
    const resources = kindRows().map((r) => `${r.group}/${r.resource}`);
    const kinds = kindRows().map((r) => `${r.group}/${r.kind}`);
    assert.equal(new Set(resources).size, resources.length);
    assert.equal(new Set(kinds).size, kinds.length);
  });

  test('every row the validating webhook is sent reaches a door, and every door is in the rules the install renders', () => {
    const routed = new Set(validatingRules().flatMap((r) => r.apiGroups!.flatMap((g) => r.resources!.map((res) => `${g}/${res}`))));
    for (const row of kindRows()) {
      if (row.door !== undefined) assert.ok(routed.has(`${row.group}/${row.resource}`), `${row.kind} is in the validating rules`);
      for (const sub of Object.keys(row.subresources ?? {})) assert.ok(routed.has(`${row.group}/${row.resource}/${sub}`), `${row.resource}/${sub} is in the validating rules`);
      if (row.door === undefined && row.subresources === undefined) {
        assert.ok(!routed.has(`${row.group}/${row.resource}`), `${row.kind} is not reviewed`);
        // Not by a door of its own: a namespaced one by the default row's webhooks (issue 26) unless it is one of
        // the default row's exceptions (a Lease), a cluster-scoped one not at all.
        const byDefaultRow = row.namespaced && !isDefaultRowException(row.group, row.resource);
        assert.equal(doorOf(request(row.group, row.resource, 'CREATE')).kind, byDefaultRow ? 'default' : 'unreviewed', row.kind);
      }
    }
    for (const rule of validatingRules())
      for (const g of rule.apiGroups!)
        for (const res of rule.resources!) {
          const [resource, sub] = res.split('/') as [string, string | undefined];
          const op = rule.operations![0] as AdmissionRequest['operation'];
          assert.notEqual(doorOf(request(g, resource, op, sub)).kind, 'unreviewed', `${g}/${res} ${op} opens a door`);
        }
  });

  test('the stamped kinds are the rows with stamps; the mutating webhook gets their CREATEs and the workloads, and the UPDATEs of their pod selectors and custom pod specs', () => {
    assert.deepEqual(STAMPED_KINDS, KIND_TABLE.filter((r) => 'stamps' in r).map((r) => r.kind));
    for (const row of kindRows()) {
      // A stamped workload's door is the workload door; sandboxKind() names the stamped kinds reviewed as objects.
      assert.equal(sandboxKind({ group: row.group, version: row.version, resource: row.resource }) !== undefined, row.stamps !== undefined && row.door === 'object', row.kind);
      assert.equal(workloadKind({ group: row.group, version: row.version, resource: row.resource }) !== undefined, row.templates !== undefined, row.kind);
    }
    const mutated = mutatingRules().flatMap((r) => r.apiGroups!.flatMap((g) => r.resources!.map((res) => `${g}/${res}`)));
    const selectors = kindRows().filter((r) => r.podSelector !== undefined && r.door === 'object').map((r) => `${r.group}/${r.resource}`);
    assert.deepEqual(mutated.sort(), [...kindRows().filter((r) => r.stamps !== undefined || r.templates !== undefined).map((r) => `${r.group}/${r.resource}`), ...selectors].sort());
    const updated = mutatingRules().filter((r) => r.operations!.includes('UPDATE')).flatMap((r) => r.apiGroups!.flatMap((g) => r.resources!.map((res) => `${g}/${res}`)));
    assert.deepEqual(updated.sort(), kindRows().filter((r) => r.templates !== undefined || (r.podSelector !== undefined && r.door === 'object')).map((r) => `${r.group}/${r.resource}`).sort());
    // The default row's selectors (a Service's, a budget's) and custom resources' pod specs (a Rollout's template): its mutating webhook sees their UPDATEs.
    const defaultUpdated = defaultRowRules('mutating').filter((r) => r.operations!.includes('UPDATE')).flatMap((r) => r.apiGroups!.flatMap((g) => r.resources!.map((res) => `${g}/${res}`)));
    assert.deepEqual(defaultUpdated.sort(), kindRows().filter((r) => (r.podSelector !== undefined || r.podSpecs !== undefined) && r.door === undefined).map((r) => `${r.group}/${r.resource}`).sort());
  });

  test('the reaper, the audit and key usage list the reaped rows', () => {
    assert.deepEqual(REAP_KINDS, REAPED_KINDS);
    assert.deepEqual(REAPED_KINDS, kindRows().filter((r) => r.reaped === true).map((r) => r.kind));
  });

  test("`controllerMade` stands only on default-row kinds (the default door stamps what a controller makes for an owner; the object and workload doors have their own), today a pod's ResourceClaim and the ACME Order cert-manager makes for a CertificateRequest", () => {
    const made = kindRows().filter((r) => r.controllerMade === true);
    assert.deepEqual(made.filter((r) => r.door !== undefined).map((r) => r.kind), []);
    assert.deepEqual(made.map((r) => `${r.group}/${r.kind}`), ['resource.k8s.io/ResourceClaim', 'acme.cert-manager.io/Order']);
  });

  test(`the chart's generated helpers are current (run npm run manifests after changing the table)`, () => {
    assert.equal(readFileSync(join(ROOT, HELM_KINDS_TEMPLATE), 'utf8'), helmKindsTemplate(), 'stale: run npm run manifests');
  });
});

/**
 * Files that may name two of the table's kinds on one line, each with its reason. A list
 * of kinds anywhere else is a second copy that a new row would not reach.
 */
const ALLOWED: ReadonlyMap<string, string> = new Map([
  ['src/policy/kinds.ts', 'the table itself'],
  ['manifests/helm/deed/templates/_kinds.tpl', 'generated from the table (npm run manifests)'],
  ['src/kube/client.ts', "the reaped kinds' API client binding, a Record keyed by the table's kind names (the compiler asks for a new row's)"],
  ['src/kube/object-reader.ts', 'the API client binding of the looked-up kinds'],
  ['src/kube/reflector.ts', 'the API client binding of the cached kinds'],
  ['src/kube/lookup-cache.ts', 'the API client binding of the cached kinds'],
  ['src/policy/pod/reference-owner.ts', 'the kinds a pod spec names by reference (claims, Secrets): a fact of the pod spec'],
  ['src/policy/lookup.ts', 'the read plan, which follows the rules that read (claims of a new pod or claim)'],
  ['src/policy/doors/object.ts', "the object door's reads, which follow the rules that read (claims of a new pod or claim)"],
  ['src/install/tenant-role.ts', "Kubernetes' own edit role less reads of Secrets: a copy of the API server's bootstrap policy, not of the table"],
  ['manifests/helm/deed/templates/_tenant.tpl', 'generated from src/install/tenant-role.ts (npm run manifests)'],
]);

/** Prose, not lists: docs, comments, help texts and runbooks name kinds in sentences. */
const COMMENT = /^\s*(\/\/|\*|\/\*|#|\{\{\/\*)/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const path = join(dir, f);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

describe('references that may name what does not exist', () => {
  test('only a reference its row follows by name may name one that does not exist: whoever creates it later is judged against the row\'s object, read live (the lookup cache\'s index of readers answers from a watch that may be behind: rev-96)', () => {
    for (const row of kindRows())
      for (const ref of row.references ?? [])
        if (ref.mayNameAbsent === true) {
          const target = ref.kind === undefined ? undefined : kindRowNamed(ref.kind.group, ref.kind.kind);
          assert.ok(target !== undefined && row.followsByName?.includes(target.resource) === true, `${row.kind} ${ref.path}`);
        }
  });
});

describe('no list of kinds outside the table', () => {
  test('no source or install file names two of its resources or kinds as quoted strings on one line, but those allowed with a reason', () => {
    const quoted = (names: string[]) => new RegExp(`["'\`](${names.join('|')})["'\`]`, 'g');
    const resources = quoted(kindRows().filter((r) => r.door !== undefined || r.subresources !== undefined || r.reaped).map((r) => r.resource));
    const kinds = quoted(kindRows().filter((r) => r.door !== undefined || r.reaped).map((r) => r.kind));
    const offenders: string[] = [];
    const scanned = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'manifests/helm/deed/templates'))].filter((f) => /\.(ts|ya?ml|tpl)$/.test(f));
    for (const file of scanned) {
      const rel = relative(ROOT, file);
      if (ALLOWED.has(rel)) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (COMMENT.test(line) || /\b(help|message|runbook|description):/.test(line)) return;
          for (const re of [resources, kinds]) {
            const names = new Set([...line.matchAll(re)].map((m) => m[1]));
            if (names.size >= 2) offenders.push(`${rel}:${i + 1}: ${[...names].join(', ')}`);
          }
        });
    }
    assert.deepEqual(offenders, [], 'lists of kinds kept outside src/policy/kinds.ts: derive them from the table, or allow the file here with its reason');
  });
});
