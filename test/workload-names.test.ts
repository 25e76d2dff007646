// What a workload's templates name is walked once per review (issue 37): the read plan works it
// out on the workload as it arrived, and the judgement of the workload as Deed's patch leaves
// it takes those names where the patch left the templates' specs as they were (the same
// objects: create-judgement.ts copies only along the paths it changes); a template the patch
// touched is walked again, and either way the names are what walking the judged workload gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../src/admission/types.js';
import { reviewFacts } from '../src/policy/door-reviews.js';
import { workloadKindNamed } from '../src/policy/kinds.js';
import { workloadClaims, workloadNamesOf, workloadReferences } from '../src/policy/workload/review.js';
import type { Rec } from '../src/policy/unstructured.js';
import { fixture, testContext, withObject } from './helpers.js';

const DEPLOYMENT = workloadKindNamed('Deployment')!;

function deployment(): KubeObject {
  const spec = {
    containers: [{ name: 'main', image: 'agent:1', envFrom: [{ secretRef: { name: 'api-key' } }] }],
    volumes: [{ name: 'ws', persistentVolumeClaim: { claimName: 'lab-workspace' } }],
  };
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'lab', namespace: 'sandbox-a' }, spec: { selector: { matchLabels: { app: 'lab' } }, template: { metadata: { labels: { app: 'lab' } }, spec } } } as KubeObject;
}

function factsOf(obj: KubeObject) {
  const body = withObject(fixture('mutate-create-pod-by-runner.json'), obj, { kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, resource: { group: 'apps', version: 'v1', resource: 'deployments' }, name: 'lab' });
  return reviewFacts(body.request, testContext().policy);
}

const walked = (obj: KubeObject) => ({ claims: workloadClaims(obj, DEPLOYMENT), references: workloadReferences(obj, DEPLOYMENT) });

test('the judgement of a workload whose templates the patch left as they were takes the names the read plan worked out', () => {
  const arrived = deployment();
  const facts = factsOf(arrived);
  const planned = workloadNamesOf(facts, arrived, DEPLOYMENT);
  const template = (arrived.spec as Rec).template as Rec;
  // Deed's stamps and the selector's scope: the metadata and the template's labels are copies, its spec the same object.
  const stamped = { ...arrived, metadata: { ...arrived.metadata, labels: { 'deed.dev/environment': 'alpha' } }, spec: { ...arrived.spec, template: { ...template, metadata: { labels: { app: 'lab', 'deed.dev/environment': 'alpha' } } } } } as KubeObject;
  assert.equal(workloadNamesOf(facts, stamped, DEPLOYMENT), planned);
  assert.deepEqual(planned, walked(stamped));
});

test('a template the patch touched is walked again', () => {
  const arrived = deployment();
  const facts = factsOf(arrived);
  workloadNamesOf(facts, arrived, DEPLOYMENT);
  const template = (arrived.spec as Rec).template as Rec;
  const spec = template.spec as Rec;
  const touched = { ...arrived, spec: { ...arrived.spec, template: { ...template, spec: { ...spec, volumes: [...(spec.volumes as Rec[]), { name: 'more', persistentVolumeClaim: { claimName: 'other' } }] } } } } as KubeObject;
  const names = workloadNamesOf(facts, touched, DEPLOYMENT);
  assert.deepEqual(names, walked(touched));
  assert.ok(names.claims.some((c) => JSON.stringify(c).includes('"other"')), 'the claim the touched template names');
});

test('without the review facts, the names are walked', () => {
  const obj = deployment();
  assert.deepEqual(workloadNamesOf(undefined, obj, DEPLOYMENT), walked(obj));
});
