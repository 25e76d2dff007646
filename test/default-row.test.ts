// The default row, decided without a cluster: a kind Deed has no row for (a custom
// resource, a Service) is stamped at CREATE and guarded after; its exceptions (events,
// leases) are left alone. The same in a real API server, with a CRD installed for the
// test: test/e2e/cases/default-row.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { decide } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import { doorOf } from '../src/policy/doors/door.js';
import { DEFAULT_ROW_EXCEPTIONS } from '../src/policy/kinds.js';
import { REPORT_APIS } from '../src/audit/report.js';
import { verifyObject } from '../src/policy/stamps/key-ring.js';
import { stampKeys } from '../src/policy/stamps/keys.js';
import { decodePatch, fixture, testContext, TEST_RING, type Review } from './helpers.js';

const KEYS = stampKeys('deed.dev');
const RUNNER_A = fixture('mutate-create-pod-by-runner.json').request.userInfo as UserInfo;
const JANITOR_B: UserInfo = { username: 'system:serviceaccount:sandbox-b:janitor', groups: ['system:serviceaccounts', 'system:authenticated'], extra: {} };
const NOBODY = fixture('mutate-create-pod-by-admin.json').request.userInfo as UserInfo;

const LAB = { group: 'labs.example', version: 'v1', resource: 'virtualmachines', kind: 'VirtualMachine' };

function review(userInfo: UserInfo, more: Record<string, unknown>, r: { group: string; version: string; resource: string; kind: string } = LAB): Review {
  const body = fixture('validate-create-pod-by-runner.json');
  body.request = {
    ...body.request,
    kind: { group: r.group, version: r.version, kind: r.kind },
    resource: { group: r.group, version: r.version, resource: r.resource },
    requestKind: undefined,
    requestResource: undefined,
    name: 'vm-1',
    namespace: 'sandbox-a',
    userInfo,
    subResource: undefined,
    ...more,
  };
  return body;
}

function vm(meta: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'labs.example/v1', kind: 'VirtualMachine', metadata: { name: 'vm-1', namespace: 'sandbox-a', ...meta }, spec: { running: true } } as KubeObject;
}

function answer(webhook: 'mutate' | 'validate', body: Review): AdmissionResponse {
  const d = decide(webhook, body, testContext());
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

function stored(): KubeObject {
  const body = review(RUNNER_A, { operation: 'CREATE', object: vm(), oldObject: null });
  const m = answer('mutate', body);
  assert.equal(m.allowed, true, m.status?.message);
  const obj = jsonpatch.applyPatch(structuredClone(body.request.object), decodePatch({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: m })).newDocument as KubeObject;
  const v = answer('validate', { ...body, request: { ...body.request, object: obj } });
  assert.equal(v.allowed, true, v.status?.message);
  return obj;
}

describe('the default row', () => {
  test("alpha's runner's custom resource is stamped as alpha's, with no owner reference, and its attestation verifies for its kind", () => {
    const obj = stored();
    assert.equal(obj.metadata.labels?.[KEYS.environment], 'alpha');
    assert.equal(obj.metadata.annotations?.[KEYS.owner], 'sandbox-a/runner-0');
    assert.equal(obj.metadata.ownerReferences, undefined);
    assert.ok(verifyObject(TEST_RING, obj, KEYS, 'VirtualMachine', 'sandbox-a').ok);
  });

  test("beta's delete, change and status write of alpha's custom resource are refused; alpha's own are admitted", () => {
    const old = stored();
    const changed = { ...structuredClone(old), spec: { running: false } } as KubeObject;
    for (const more of [{ operation: 'DELETE', object: null, oldObject: old }, { operation: 'UPDATE', object: changed, oldObject: old }, { operation: 'UPDATE', subResource: 'status', object: changed, oldObject: old }]) {
      const r = answer('validate', review(JANITOR_B, more));
      assert.equal(r.allowed, false, JSON.stringify(more.operation));
      assert.match(r.status?.message ?? '', /\[guard\.cross-environment\] system:serviceaccount:sandbox-b:janitor acts for "beta", and this object belongs to another environment/);
      assert.equal(answer('validate', review(RUNNER_A, more)).allowed, true);
    }
  });

  test('its stamps are frozen, and forged ones refused from a principal of no environment', () => {
    const old = stored();
    const relabelled = structuredClone(old);
    relabelled.metadata.labels![KEYS.environment] = 'beta';
    assert.match(answer('validate', review(RUNNER_A, { operation: 'UPDATE', object: relabelled, oldObject: old })).status?.message ?? '', /\[frozen\.stamps\]/);
    const forged = review(NOBODY, { operation: 'CREATE', object: vm({ labels: { [KEYS.environment]: 'alpha' } }), oldObject: null }, { group: '', version: 'v1', resource: 'services', kind: 'Service' });
    forged.request.object.kind = 'Service';
    assert.match(answer('mutate', forged).status?.message ?? '', /\[stamp\.forged\] metadata\.labels\["deed\.dev\/environment"\]/);
    assert.match(answer('validate', forged).status?.message ?? '', /\[stamp\.forged\]/);
  });

  test("the reports Deed's own audit writes into every scanned namespace are exceptions", () => {
    for (const g of Object.values(REPORT_APIS)) assert.ok(DEFAULT_ROW_EXCEPTIONS.some((e) => e.group === g.group && e.resource === g.plural), g.kind);
  });

  test('the exceptions are left alone, and a /scale is the custom-scale door (it carries a Scale, not the object)', () => {
    for (const e of DEFAULT_ROW_EXCEPTIONS) {
      const body = review(JANITOR_B, { operation: 'DELETE', object: null, oldObject: vm() }, { group: e.group, version: 'v1', resource: e.resource, kind: 'VirtualMachine' });
      assert.deepEqual(doorOf(body.request), { kind: 'unreviewed' }, `${e.group}/${e.resource}: ${e.reason}`);
    }
    const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'vm-1' } };
    assert.deepEqual(doorOf(review(JANITOR_B, { operation: 'UPDATE', subResource: 'scale', object: scale, oldObject: scale }).request), { kind: 'default-scale', resource: 'virtualmachines', name: 'vm-1' });
    assert.deepEqual(doorOf(review(JANITOR_B, { operation: 'UPDATE', subResource: 'rollback', object: scale, oldObject: scale }).request), { kind: 'unreviewed' });
  });
});
