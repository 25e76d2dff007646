// `deed coverage` on documents recorded from the e2e control plane (test/fixtures/coverage):
// everything is classified, each class comes from where it should (the kind table's doors,
// the default row, the references, classifications.ts), and a subresource or a reference
// field nothing places makes the command exit 1 naming it.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { registerCoverage } from '../src/cli/coverage.js';
import { RULES } from '../src/policy/rules/catalog.js';
import { REFERENCE_FIELDS, SUBRESOURCES } from '../src/coverage/classifications.js';
import { classifyField, coverage, type CoverageReport } from '../src/coverage/coverage.js';
import { readDocuments, type AggregatedDiscovery, type OpenApiDocument } from '../src/coverage/documents.js';
import { referenceFields } from '../src/coverage/fields.js';
import { ROOT, runInProcess } from './cli-process.js';

const FIXTURES = join(ROOT, 'test/fixtures/coverage');
const docs = () => readDocuments(FIXTURES);
const entry = (r: CoverageReport, resource: string, verb: string) => r.resources.find((e) => `${e.group}/${e.resource}` === resource && e.verbs.includes(verb));
const field = (r: CoverageReport, key: string) => r.fields.filter((f) => f.field === key);

describe('deed coverage on the recorded envtest documents', () => {
  const report = coverage(docs());

  test('nothing is unclassified', () => {
    assert.deepEqual(report.summary.unclassified, []);
  });

  test('doors come from the kind table', () => {
    assert.equal(entry(report, '/pods', 'create')?.reason, 'door object');
    assert.equal(entry(report, '/pods/exec', 'get')?.reason, 'door connect', 'a GET of exec is a CONNECT, not a read');
    assert.equal(entry(report, '/pods/eviction', 'create')?.reason, 'door pod-by-name');
    assert.equal(entry(report, '/serviceaccounts/token', 'create')?.reason, 'door token-request');
    assert.equal(entry(report, 'apps/deployments/scale', 'update')?.reason, 'door workload-scale');
    assert.equal(entry(report, '/services/proxy', 'create')?.reason, 'door service-proxy');
  });

  test('the default row takes namespaced kinds without a door, custom resources and their status and scale included', () => {
    assert.equal(entry(report, '/services', 'update')?.class, 'stamped');
    assert.equal(entry(report, '/services/status', 'update')?.class, 'stamped');
    assert.equal(entry(report, 'apps/controllerrevisions', 'create')?.class, 'stamped');
    assert.equal(entry(report, 'pools.e2e.deed.dev/pools', 'create')?.class, 'stamped');
    assert.equal(entry(report, 'pools.e2e.deed.dev/pools/status', 'update')?.class, 'stamped');
    assert.match(entry(report, 'pools.e2e.deed.dev/pools/scale', 'update')!.reason, /guard\.custom-scale/);
    assert.equal(entry(report, '/events', 'create')?.class, 'exempt');
    assert.equal(entry(report, 'authorization.k8s.io/localsubjectaccessreviews', 'create')?.class, 'exempt');
  });

  test('reads and cluster-scoped kinds are RBAC\'s, with what else guards the ones that matter', () => {
    assert.equal(entry(report, '/secrets', 'get')?.class, 'rbac');
    assert.equal(entry(report, '/pods/log', 'get')?.class, 'rbac');
    const ns = entry(report, '/namespaces', 'update')!;
    assert.equal(ns.class, 'rbac');
    assert.match(ns.reason, /deed-review-scope/);
  });

  test('reference fields: the kind table\'s, the pod rules\', the cluster-scoped targets', () => {
    assert.match(field(report, 'autoscaling.HorizontalPodAutoscalerSpec.scaleTargetRef')[0]!.reason, /kind table/);
    const claims = field(report, 'core.PodResourceClaim.resourceClaimName');
    assert.deepEqual(claims.map((f) => f.class), ['judged', 'judged']);
    assert.ok(claims.some((f) => f.at.some((a) => a.kind === 'Deployment' && a.path === 'spec.template.spec.resourceClaims[].resourceClaimName')));
    // The template a pod's claim is made from, judged as the claim it names.
    const templates = field(report, 'core.PodResourceClaim.resourceClaimTemplateName');
    assert.deepEqual(templates.map((f) => f.class), ['judged', 'judged']);
    assert.ok(templates.some((f) => f.at.some((a) => a.kind === 'Pod' && a.path === 'spec.resourceClaims[].resourceClaimTemplateName') && /resourceclaim controller/.test(f.reason)));
    assert.ok(templates.some((f) => f.at.some((a) => a.kind === 'Deployment' && a.path === 'spec.template.spec.resourceClaims[].resourceClaimTemplateName')));
    const secret = field(report, 'core.SecretVolumeSource.secretName')[0]!;
    assert.equal(secret.class, 'judged');
    assert.ok(secret.at.some((a) => a.kind === 'CronJob' && a.path === 'spec.jobTemplate.spec.template.spec.volumes[].secret.secretName'));
    assert.equal(field(report, 'core.PodSpec.nodeName')[0]!.class, 'rbac');
    // An Ingress's TLS Secret is served by the ingress controller: a reference of the kind table.
    assert.equal(field(report, 'networking.IngressTLS.secretName')[0]!.class, 'judged');
  });

  test('every entry of the table is found on this API server, and every rule it names exists', () => {
    const found = new Set(report.fields.map((f) => f.field));
    assert.deepEqual(Object.keys(REFERENCE_FIELDS).filter((k) => !found.has(k)), [], 'a stale entry: the field is gone');
    const ids = Object.values(RULES).map((r) => r.id);
    for (const [key, c] of Object.entries(REFERENCE_FIELDS).filter(([, c]) => c.class === 'judged')) {
      const named = c.reason.split(':')[0]!.split(', ');
      for (const rule of named) assert.ok(ids.some((id) => (rule.endsWith('.*') ? id.startsWith(rule.slice(0, -1)) : id === rule)), `${key}: no rule ${rule}`);
    }
    assert.ok(Object.keys(SUBRESOURCES).every((k) => report.resources.some((e) => `${e.group === '' ? '' : `${e.group}/`}${e.resource}` === k)));
  });

  test("a custom resource's field the kind table names is judged (Gateway API's), its others are its operator's", () => {
    const at = (kind: string, path: string) => classifyField({ group: 'gateway.networking.k8s.io', version: 'v1', kind, path, key: `gateway.networking.k8s.io/${kind}.${path}`, shape: 'object-reference', custom: true });
    assert.equal(at('HTTPRoute', 'spec.rules[].backendRefs[]').class, 'judged');
    assert.equal(at('HTTPRoute', 'spec.rules[].filters[].requestMirror.backendRef').class, 'judged');
    assert.equal(at('Gateway', 'spec.listeners[].tls.certificateRefs[]').class, 'judged');
    assert.equal(at('HTTPRoute', 'spec.parentRefs[]').class, 'judged');
    assert.equal(at('HTTPRoute', 'spec.rules[].filters[].extensionRef').class, 'unjudged');
    // The autoscalers' and rollout controllers' targets, and their other fields.
    const of = (group: string, kind: string, path: string) => classifyField({ group, version: 'v1', kind, path, key: `${group}/${kind}.${path}`, shape: 'object-reference', custom: true }).class;
    assert.equal(of('autoscaling.k8s.io', 'VerticalPodAutoscaler', 'spec.targetRef'), 'judged');
    assert.equal(of('keda.sh', 'ScaledObject', 'spec.scaleTargetRef'), 'judged');
    assert.equal(of('argoproj.io', 'Rollout', 'spec.workloadRef'), 'judged');
    assert.equal(of('keda.sh', 'ScaledObject', 'spec.triggers[].authenticationRef'), 'judged');
    assert.equal(of('keda.sh', 'TriggerAuthentication', 'spec.secretTargetRef[].name'), 'judged');
    // A token KEDA requests for a service account it names is the token-request door's (its operator is the platform's).
    assert.equal(of('keda.sh', 'TriggerAuthentication', 'spec.boundServiceAccountToken[]'), 'unjudged');
  });

  test("cert-manager's issuerRef, a Certificate's secretName and an Issuer's own Secrets are judged; the service account it asks Vault tokens for is its operator's", () => {
    const at = (kind: string, path: string) => classifyField({ group: 'cert-manager.io', version: 'v1', kind, path, key: `cert-manager.io/${kind}.${path}`, shape: 'object-reference', custom: true });
    assert.equal(at('Certificate', 'spec.issuerRef').class, 'judged');
    assert.equal(at('Certificate', 'spec.secretName').class, 'judged');
    assert.equal(at('CertificateRequest', 'spec.issuerRef').class, 'judged');
    assert.equal(at('Issuer', 'spec.ca.secretName').class, 'judged');
    assert.equal(at('Issuer', 'spec.acme.solvers[].dns01.cloudflare.apiTokenSecretRef.name').class, 'judged');
    assert.equal(at('Issuer', 'spec.vault.auth.kubernetes.serviceAccountRef').class, 'unjudged');
  });

  test('status is not walked, and a reference is found by its shape', () => {
    const pod = referenceFields({ group: '', version: 'v1', kind: 'Pod' }, docs().openapi)!;
    assert.ok(pod.every((f) => !f.path.startsWith('status')));
    assert.ok(pod.some((f) => f.path === 'spec.volumes[].projected.sources[].secret' && f.shape === 'object-reference'));
    assert.ok(pod.some((f) => f.path === 'spec.imagePullSecrets[]'));
  });
});

describe('deed coverage, the command', () => {
  test('exit 0 and the summary on the recorded documents', async () => {
    const r = await runInProcess(registerCoverage, ['coverage', '--discovery', FIXTURES]);
    assert.equal(r.exitCode, undefined, r.stderr);
    assert.match(r.stdout, /^summary: .*nothing unclassified$/m);
    assert.match(r.stdout, /^guarded\s+pods\/exec\s+create,get\s+door connect$/m);
  });

  test('an unknown subresource and an unknown reference field: exit 1, both named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-coverage-'));
    cpSync(FIXTURES, dir, { recursive: true });
    const api = JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8')) as AggregatedDiscovery;
    const pods = api.items![0]!.versions![0]!.resources!.find((r) => r.resource === 'pods')!;
    pods.subresources!.push({ subresource: 'checkpoint', responseKind: { group: '', version: '', kind: 'Checkpoint' }, verbs: ['create'] });
    writeFileSync(join(dir, 'api.json'), JSON.stringify(api));
    const core = JSON.parse(readFileSync(join(dir, 'openapi/api__v1.json'), 'utf8')) as OpenApiDocument;
    core.components!.schemas!['io.k8s.api.core.v1.PodSpec']!.properties!.sidecarSetName = { type: 'string' };
    writeFileSync(join(dir, 'openapi/api__v1.json'), JSON.stringify(core));

    const r = await runInProcess(registerCoverage, ['coverage', '--discovery', dir]);
    assert.equal(r.exitCode, 1);
    assert.match(r.stdout, /^unclassified\s+pods\/checkpoint\s+create\s+a subresource no row routes to Deed \(its kind's door is object\)$/m);
    assert.match(r.stdout, /^unclassified\s+core\.PodSpec\.sidecarSetName\s+Pod spec\.sidecarSetName \(\+2\)/m, "the Pod, the PodTemplate and the ReplicationController: the core group's document");
    assert.match(r.stdout, /2 unclassified: pods\/checkpoint, core\.PodSpec\.sidecarSetName \(Pod spec\.sidecarSetName\)$/m);
    const json = await runInProcess(registerCoverage, ['coverage', '--discovery', dir, '-o', 'json']);
    assert.equal(json.exitCode, 1);
    assert.deepEqual((JSON.parse(json.stdout) as CoverageReport).summary.unclassified, ['pods/checkpoint', 'core.PodSpec.sidecarSetName (Pod spec.sidecarSetName)']);
  });

  test('exit 2 with one line when the documents cannot be read', async () => {
    const r = await runInProcess(registerCoverage, ['coverage', '--discovery', join(tmpdir(), 'no-such-deed-coverage')]);
    assert.equal(r.exitCode, 2);
    assert.equal(r.stdout, '');
  });

  test('exit 2 naming the call when the API server cannot be reached', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deed-coverage-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }], users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }));
    const r = await runInProcess(registerCoverage, ['coverage', '--kubeconfig', kubeconfig, '--timeout', '5']);
    assert.equal(r.exitCode, 2);
  });
});
