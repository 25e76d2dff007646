// The ClusterRole tenants of a shared namespace are bound to (src/install/tenant-role.ts):
// Deed sees writes and CONNECTs, never reads, so reads of Secrets are RBAC's. Rendered by
// `deed manifests --tenant-role`, the chart behind tenantRole.create, and the kustomize
// component tenant-role, all the same rules.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { V1ClusterRole, V1PolicyRule } from '@kubernetes/client-node';
import { renderManifests } from '../src/install/manifests.js';
import { HELM_TENANT_TEMPLATE, helmTenantTemplate, TENANT_ROLE, tenantRules } from '../src/install/tenant-role.js';
import { KUSTOMIZE_COMPONENTS_DIR } from '../src/install/kustomize.js';
import { ROOT } from './cli-process.js';

/** Whether RBAC's rules allow `verb` on `group/resource` (wildcards included), as the authorizer matches them. */
function allows(rules: V1PolicyRule[], group: string, resource: string, verb: string): boolean {
  return rules.some(
    (r) => (r.apiGroups ?? []).some((g) => g === '*' || g === group) && (r.resources ?? []).some((x) => x === '*' || x === resource) && r.verbs.some((v) => v === '*' || v === verb) && r.resourceNames === undefined,
  );
}

describe('the tenant ClusterRole', () => {
  const rendered = renderManifests({ namespace: 'deed-system', image: 'x', tenantRole: true });
  const role = rendered.find((o) => o.kind === 'ClusterRole' && o.metadata?.name === TENANT_ROLE) as V1ClusterRole;

  test('deed manifests renders it only when asked, named deed-sandbox-tenant', () => {
    assert.equal(TENANT_ROLE, 'deed-sandbox-tenant');
    assert.ok(role, 'rendered with tenantRole');
    assert.equal(renderManifests({ namespace: 'deed-system', image: 'x' }).some((o) => o.metadata?.name === TENANT_ROLE), false);
  });

  test('it grants no read of Secrets, no impersonation, no services/proxy and no wildcard', () => {
    for (const verb of ['get', 'list', 'watch']) assert.equal(allows(role.rules!, '', 'secrets', verb), false, `${verb} secrets`);
    for (const r of role.rules!) assert.ok(!r.verbs.includes('impersonate'), `no impersonation: ${JSON.stringify(r)}`);
    for (const verb of ['get', 'create']) assert.equal(allows(role.rules!, '', 'services/proxy', verb), false, `${verb} services/proxy`);
    for (const r of role.rules!) {
      assert.ok(!r.apiGroups!.includes('*') && !r.resources!.includes('*') && !r.verbs.includes('*'), JSON.stringify(r));
      assert.ok(!r.apiGroups!.includes('rbac.authorization.k8s.io'), 'no RBAC: a tenant cannot widen its own rights');
    }
    assert.equal(allows(role.rules!, '', 'namespaces', 'update'), false, "the namespace's opt-in label is the platform's");
  });

  test('it grants no token of any service account: Deed lets through accounts that act for no environment, which may hold rights over every environment', () => {
    assert.equal(allows(role.rules!, '', 'serviceaccounts/token', 'create'), false);
    // Nor a way around it: a token Secret is written, not read (no get), and Deed refuses one to a requester of an environment.
    assert.equal(allows(role.rules!, '', 'secrets', 'get'), false);
  });

  test('every right it grants that admission never sees (get, list, watch) is on a resource that hands out no credential', () => {
    // Reads RBAC alone decides (docs/security-model.md, "What Deed cannot guard: reads"): each
    // readable resource here is one whose reading gives no environment's credential by itself.
    const CREDENTIALS = ['secrets', 'serviceaccounts/token'];
    const NEVER = ['impersonate', 'bind', 'escalate', 'approve', 'sign'];
    for (const r of role.rules!) {
      for (const verb of r.verbs) assert.ok(!NEVER.includes(verb), `${verb}: ${JSON.stringify(r)}`);
      for (const resource of r.resources ?? []) assert.ok(!CREDENTIALS.includes(resource) || r.verbs.every((v) => !['get', 'list', 'watch'].includes(v)), `${resource} readable: ${JSON.stringify(r)}`);
    }
    for (const verb of ['get', 'list', 'watch', 'create']) assert.equal(allows(role.rules!, '', 'serviceaccounts/token', verb), false, `${verb} serviceaccounts/token`);
  });

  test("it keeps edit's workload rights, Secret writes, and exec, attach and port-forward, which Deed guards", () => {
    for (const [group, resource] of [
      ['', 'pods'],
      ['', 'configmaps'],
      ['', 'secrets'],
      ['', 'persistentvolumeclaims'],
      ['', 'services'],
      ['apps', 'deployments'],
      ['apps', 'statefulsets'],
      ['batch', 'jobs'],
      ['networking.k8s.io', 'networkpolicies'],
    ] as const)
      for (const verb of ['create', 'update', 'patch', 'delete']) assert.ok(allows(role.rules!, group, resource, verb), `${verb} ${group}/${resource}`);
    for (const resource of ['pods/exec', 'pods/attach', 'pods/portforward']) for (const verb of ['get', 'create']) assert.ok(allows(role.rules!, '', resource, verb), `${verb} ${resource}`);
    for (const resource of ['pods', 'configmaps', 'pods/log']) assert.ok(allows(role.rules!, '', resource, 'list'), `list ${resource}`);
    assert.ok(allows(role.rules!, '', 'pods/eviction', 'create'));
  });

  test("the chart's generated helper and the kustomize component hold the same rules (run npm run manifests after changing them)", () => {
    assert.equal(readFileSync(join(ROOT, HELM_TENANT_TEMPLATE), 'utf8'), helmTenantTemplate(), 'stale: run npm run manifests');
    const chart = readFileSync(join(ROOT, 'manifests/helm/deed/templates/tenant-role.yaml'), 'utf8');
    assert.match(chart, /^\{\{- if \.Values\.tenantRole\.create -\}\}$/m);
    assert.match(chart, /include "deed\.tenantRules"/);
    const values = readFileSync(join(ROOT, 'manifests/helm/deed/values.yaml'), 'utf8');
    assert.match(values, /^tenantRole:\n(?:\s+#.*\n)*\s+create: false\n\s+name: deed-sandbox-tenant$/m);
    const component = parseAllDocuments(readFileSync(join(ROOT, KUSTOMIZE_COMPONENTS_DIR, 'tenant-role/clusterrole.yaml'), 'utf8')).map((d) => d.toJS() as V1ClusterRole);
    assert.deepEqual(component, [JSON.parse(JSON.stringify(role))]);
    assert.deepEqual(role.rules, tenantRules());
  });
});
