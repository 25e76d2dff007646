// Chart values for the pod and its identity, as `helm template` (the helm binary of
// KUBEBUILDER_ASSETS) renders them: host networking and the ports, an image digest,
// nameOverride, extra environment variables and volumes, and the ServiceAccount's
// annotations (a cloud identity). values.schema.json is applied by helm itself.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { V1Deployment, V1NetworkPolicy, V1ServiceAccount, V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { parseConfig } from '../src/config/load.js';
import { CERT_MANAGER_CAINJECTOR, reviewScopePolicy } from '../src/install/review-scope-policy.js';
import { ROOT } from './cli-process.js';

const CHART = join(ROOT, 'manifests/helm/deed');
const HELM = join(process.env.KUBEBUILDER_ASSETS ?? '/nonexistent', 'helm');
const skip = existsSync(HELM) ? false : 'needs helm in KUBEBUILDER_ASSETS';

interface Obj {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
}

function template(...args: string[]): { status: number | null; stderr: string; objects: Obj[] } {
  return templateAs('r', ...args);
}

function templateAs(release: string, ...args: string[]): { status: number | null; stderr: string; objects: Obj[] } {
  const run = spawnSync(HELM, ['template', release, CHART, '-n', 'deed-system', '--skip-tests', ...args], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr, objects: run.status === 0 ? parseAllDocuments(run.stdout).map((d) => d.toJS() as Obj).filter((o) => o !== null) : [] };
}

function rendered(...args: string[]): Obj[] {
  return renderedAs('r', ...args);
}

function renderedAs(release: string, ...args: string[]): Obj[] {
  const run = templateAs(release, ...args);
  assert.equal(run.status, 0, run.stderr);
  return run.objects;
}

const deploymentOf = (objects: Obj[]) => objects.find((o) => o.kind === 'Deployment') as unknown as V1Deployment;
const podOf = (objects: Obj[]) => deploymentOf(objects).spec!.template.spec!;
const flag = (args: string[], name: string) => args[args.indexOf(name) + 1];

describe('chart values, as helm template renders them', { skip }, () => {
  test('by default the pod is on the pod network, serving on 8443 with metrics on 8080', () => {
    const pod = podOf(rendered());
    assert.equal(pod.hostNetwork, undefined);
    assert.equal(pod.dnsPolicy, undefined);
    const args = pod.containers[0]!.args!;
    assert.equal(flag(args, '--port'), '8443');
    assert.equal(flag(args, '--metrics-port'), '8080');
  });

  test('hostNetwork puts the pod on the node network with cluster DNS, and webhook.port and metrics.port move every place the ports are named', () => {
    const objects = rendered('--set', 'hostNetwork=true', '--set', 'webhook.port=10443', '--set', 'metrics.port=10080');
    const pod = podOf(objects);
    assert.equal(pod.hostNetwork, true);
    assert.equal(pod.dnsPolicy, 'ClusterFirstWithHostNet');
    const container = pod.containers[0]!;
    assert.equal(flag(container.args!, '--port'), '10443');
    assert.equal(flag(container.args!, '--metrics-port'), '10080');
    assert.deepEqual(container.ports!.map((p) => [p.name, p.containerPort]), [['https', 10443], ['metrics', 10080]]);
    // The Service targets the ports by name; the probes too.
    assert.equal(container.readinessProbe!.httpGet!.port, 'metrics');
    const service = objects.find((o) => o.kind === 'Service') as unknown as { spec: { ports: Array<{ name: string; targetPort: string }> } };
    assert.deepEqual(service.spec.ports.map((p) => p.targetPort), ['https', 'metrics']);
    const policy = objects.find((o) => o.kind === 'NetworkPolicy') as unknown as V1NetworkPolicy;
    assert.deepEqual(policy.spec!.ingress!.map((r) => r.ports![0]!.port), [10443]);
    const withScrape = rendered('--set', 'metrics.port=10080', '--set-json', 'networkPolicy.metricsFrom=[{"podSelector":{}}]');
    assert.deepEqual((withScrape.find((o) => o.kind === 'NetworkPolicy') as unknown as V1NetworkPolicy).spec!.ingress!.map((r) => r.ports![0]!.port), [8443, 10080]);
  });

  test('the same port twice, or one below 1024, is refused', () => {
    const same = template('--set', 'webhook.port=9000', '--set', 'metrics.port=9000');
    assert.notEqual(same.status, 0);
    assert.match(same.stderr, /webhook\.port and metrics\.port are both 9000/);
    assert.notEqual(template('--set', 'webhook.port=443').status, 0);
  });

  test('image.digest makes every image repository@digest, in place of the tag', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const objects = rendered('--set', `image.digest=${digest}`, '--set', 'image.tag=ignored', '--set', 'reaper.environments={default}', '--set', 'audit.enabled=true');
    const images = objects.flatMap((o) => JSON.stringify(o).match(/"image":"[^"]+"/g) ?? []);
    assert.ok(images.length >= 3, 'the webhook, the reaper and the audit');
    for (const image of images) assert.equal(image, `"image":"ghcr.io/deed-dev/deed@${digest}"`);
    assert.equal(podOf(rendered()).containers[0]!.image, `ghcr.io/deed-dev/deed:${JSON.parse(JSON.stringify(rendered()[0]!.metadata.labels))['app.kubernetes.io/version']}`);
    assert.notEqual(template('--set', 'image.digest=latest').status, 0, 'not a digest');
  });

  test('nameOverride replaces "deed" in object names, not in the name label Deed\'s tools select by', () => {
    const objects = rendered('--set', 'nameOverride=guard');
    assert.equal(deploymentOf(objects).metadata!.name, 'r-guard');
    assert.ok(objects.every((o) => !o.metadata.name.startsWith('r-deed')), objects.map((o) => o.metadata.name).join(' '));
    assert.equal(deploymentOf(objects).spec!.template.metadata!.labels!['app.kubernetes.io/name'], 'deed');
    assert.equal(deploymentOf(renderedAs('my-guard', '--set', 'nameOverride=guard')).metadata!.name, 'my-guard', 'a release name that says it already');
    assert.equal(deploymentOf(rendered()).metadata!.name, 'r-deed');
  });

  test('extraEnv, extraVolumes and extraVolumeMounts are appended to the webhook pod\'s own', () => {
    const objects = rendered(
      '--set-json', 'extraEnv=[{"name":"HTTPS_PROXY","value":"http://proxy:3128"}]',
      '--set-json', 'extraVolumes=[{"name":"corp-ca","configMap":{"name":"corp-ca"}}]',
      '--set-json', 'extraVolumeMounts=[{"name":"corp-ca","mountPath":"/etc/corp-ca","readOnly":true}]',
    );
    const pod = podOf(objects);
    const container = pod.containers[0]!;
    assert.deepEqual(container.env!.map((e) => e.name), ['DEED_LOG_LEVEL', 'POD_NAMESPACE', 'HTTPS_PROXY']);
    assert.deepEqual(container.env!.at(-1), { name: 'HTTPS_PROXY', value: 'http://proxy:3128' });
    assert.deepEqual(pod.volumes!.map((v) => v.name), ['config', 'tmp', 'corp-ca']);
    assert.deepEqual(pod.volumes!.at(-1), { name: 'corp-ca', configMap: { name: 'corp-ca' } });
    assert.deepEqual(container.volumeMounts!.map((m) => m.name), ['config', 'tmp', 'corp-ca']);
    assert.deepEqual(container.volumeMounts!.at(-1), { name: 'corp-ca', mountPath: '/etc/corp-ca', readOnly: true });
    assert.notEqual(template('--set-json', 'extraVolumeMounts=[{"name":"corp-ca"}]').status, 0, 'a mount without its path');
  });

  test("serviceAccount.annotations annotate the webhook's ServiceAccount (IRSA, workload identity), and by default it has none", () => {
    const role = 'arn:aws:iam::111122223333:role/deed';
    const objects = rendered('--set-json', `serviceAccount.annotations={"eks.amazonaws.com/role-arn":"${role}"}`);
    const account = objects.find((o) => o.kind === 'ServiceAccount' && o.metadata.name === 'r-deed') as unknown as V1ServiceAccount;
    assert.deepEqual(account.metadata!.annotations, { 'eks.amazonaws.com/role-arn': role });
    assert.equal((rendered().find((o) => o.kind === 'ServiceAccount' && o.metadata.name === 'r-deed') as unknown as V1ServiceAccount).metadata!.annotations, undefined);
    assert.notEqual(template('--set', 'serviceAccount.name=x').status, 0, 'a key the chart does not read is refused');
  });

  test("the review-scope policy names Deed's configurations as deed manifests does, and in certManager mode lets the cainjector update them", () => {
    const policyOf = (objects: Obj[]) => objects.find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === 'deed-review-scope') as unknown as V1ValidatingAdmissionPolicy;
    const config = parseConfig({}, 'the default policy');
    const plain = policyOf(renderedAs('deed'));
    assert.deepEqual(plain.spec!.variables, reviewScopePolicy('deed', 'deed', config, {})[0].spec!.variables);
    assert.deepEqual(plain.spec!.validations, reviewScopePolicy('deed', 'deed', config, {})[0].spec!.validations);
    assert.deepEqual(plain.spec!.matchConstraints, reviewScopePolicy('deed', 'deed', config, {})[0].spec!.matchConstraints);
    const injected = policyOf(renderedAs('deed', '--set', 'certificates.mode=certManager'));
    assert.deepEqual(injected.spec!.variables, reviewScopePolicy('deed', 'deed', config, {}, [CERT_MANAGER_CAINJECTOR])[0].spec!.variables);
  });
});
