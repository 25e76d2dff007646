// The claim the resourceclaim controller makes for a pod from the ResourceClaimTemplate it names
// is the pod's environment's, stamped when it is made (controller-made.ts): a tenant of no
// environment used to strip its owner reference, the only thing that said whose it was, and
// then beta's pod shared alpha's allocated devices (rev-94 F1).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { gatheredLookup, lookupKey } from '../src/policy/lookup.js';
import type { Lookup, ObjectLookup } from '../src/policy/policy.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { decodePatch, fixture, kubeSystem, NO_READERS, NOW, stampedMetadata, testContext, type Review } from './helpers.js';
import { RUNNER_B } from './validate-helpers.js';

const KEYS = stampKeys('deed.dev');
const NS = 'shared';
const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
};
const CONTROLLER = kubeSystem('resource-claim-controller');
const STRANGER: UserInfo = { username: 'stranger', groups: ['system:authenticated'], extra: {} };
const CLAIMS = { group: 'resource.k8s.io', version: 'v1', resource: 'resourceclaims' };
const OWNER = { apiVersion: 'v1', kind: 'Pod', name: 'alpha-bot', uid: 'alpha-bot-uid', controller: true, blockOwnerDeletion: true };

/** The claim as the controller sends it: the template's spec.metadata (here a forged stamp too), its pod as controller. */
function generated(ownerReferences: unknown[] = [OWNER]): KubeObject {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: { name: 'alpha-bot-gpu-x7k2q', namespace: NS, labels: { app: 'bot', [KEYS.environment]: 'beta' }, annotations: { 'resource.kubernetes.io/pod-claim-name': 'gpu' }, ownerReferences },
    spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com' } }] } },
  } as KubeObject;
}

function world(pod: Record<string, unknown> | undefined): ObjectLookup {
  const table = new Map<string, Lookup>();
  if (pod !== undefined) table.set(lookupKey({ resource: 'pods', namespace: NS, name: 'alpha-bot' }), { state: 'found', metadata: pod as Extract<Lookup, { state: 'found' }>['metadata'] });
  const gathered = gatheredLookup(table, 'unlisted');
  return { readers: NO_READERS, get: (resource, namespace, name) => (table.has(lookupKey({ resource, namespace, name })) ? gathered.get(resource, namespace, name) : { state: 'absent' }) };
}
const alphaPod = { ...stampedMetadata('Pod', 'alpha', NS).metadata, uid: 'alpha-bot-uid' };

function review(obj: KubeObject, userInfo: UserInfo, old?: KubeObject): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  const kind = { group: CLAIMS.group, version: CLAIMS.version, kind: 'ResourceClaim' };
  body.request = { ...body.request, kind, requestKind: kind, resource: CLAIMS, requestResource: CLAIMS, namespace: NS, name: obj.metadata.name, userInfo, subResource: undefined, operation: old ? 'UPDATE' : 'CREATE', dryRun: false, object: obj, oldObject: old ?? null };
  return body;
}

function answer(webhook: Webhook, body: Review, lookup: ObjectLookup): AdmissionResponse {
  const d = decide(webhook, body, testContext(POLICY, NOW, undefined, lookup));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

/** The claim as the API server stores it after /admit. */
function stored(lookup: ObjectLookup): KubeObject {
  const r = answer('admit', review(generated(), CONTROLLER), lookup);
  assert.equal(r.allowed, true, r.status?.message);
  assert.ok(r.patch, `the claim is stamped: ${JSON.stringify(r)}`);
  return jsonpatch.applyPatch(structuredClone(generated()), decodePatch({ response: r } as never)).newDocument as KubeObject;
}

describe("the resourceclaim controller's claim for a pod is the pod's environment's", () => {
  test("the claim made for alpha's pod carries alpha's stamps, not the ones its template's spec.metadata carried, and its own labels stay", () => {
    const claim = stored(world(alphaPod));
    assert.equal(claim.metadata.labels?.[KEYS.environment], 'alpha');
    assert.equal(claim.metadata.labels?.[KEYS.managed], 'true');
    assert.equal(claim.metadata.labels?.app, 'bot');
    assert.ok(claim.metadata.annotations?.[KEYS.attestation], 'attested');
    assert.deepEqual(claim.metadata.ownerReferences, [OWNER], 'its pod stays its controller; no runner reference is added');
  });

  test('a claim for a pod Deed cannot find is refused (the controller retries)', () => {
    const r = answer('admit', review(generated(), CONTROLLER), world(undefined));
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? '', /\[guard\.controller-owner\].*Pod shared\/alpha-bot does not exist/);
  });

  test("then a tenant of no environment may neither strip its owner reference nor delete it, and beta's pod may not name it", () => {
    const claim = stored(world(alphaPod));
    const stripped = { ...claim, metadata: { ...claim.metadata, ownerReferences: [] } } as KubeObject;
    const strip = answer('validate', review(stripped, STRANGER, claim), world(alphaPod));
    assert.equal(strip.allowed, false, 'the stranger stripped the owner reference of alpha\'s claim');
    const del = review(claim, STRANGER, claim);
    del.request = { ...del.request, operation: 'DELETE', object: null };
    assert.equal(answer('validate', del, world(alphaPod)).allowed, false, 'the stranger deleted alpha\'s claim');
    const lookup: ObjectLookup = { ...world(alphaPod), get: (resource, namespace, name) => (resource === 'resourceclaims' ? { state: 'found', metadata: stripped.metadata as Extract<Lookup, { state: 'found' }>['metadata'] } : world(alphaPod).get(resource, namespace, name)) };
    const podBody = fixture('validate-create-pod-by-runner.json');
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'beta-lab', namespace: NS }, spec: { automountServiceAccountToken: false, resourceClaims: [{ name: 'gpu', resourceClaimName: claim.metadata.name }], containers: [{ name: 'main', image: 'agent:1', resources: { claims: [{ name: 'gpu' }] } }] } };
    podBody.request = { ...podBody.request, namespace: NS, name: 'beta-lab', userInfo: RUNNER_B, object: pod as KubeObject };
    const named = answer('admit', podBody, lookup);
    assert.equal(named.allowed, false, 'beta\'s pod names alpha\'s claim, owner reference stripped');
    assert.match(named.status?.message ?? '', /belongs to another environment/);
  });
});
