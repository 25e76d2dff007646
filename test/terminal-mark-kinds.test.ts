// The terminal mark holds on every kind the reaper may read it on (rules/terminal-mark.ts):
// a Deployment, a Service and a custom resource as on the five sandbox kinds. Only the
// object's own environment writes it, only as "true", and no one takes it back.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/admission/decide.js';
import type { KubeObject, UserInfo } from '../src/admission/types.js';
import { fixture, NOW, stampedMetadata, testContext, type Review } from './helpers.js';
import { RUNNER_A, RUNNER_B } from './validate-helpers.js';

const POLICY = { environments: [{ id: 'alpha', serviceAccounts: ['sandbox-a:runner'] }, { id: 'beta', serviceAccounts: ['sandbox-b:*'] }] };
const TERMINAL = 'deed.dev/terminal';
const KINDS = [
  { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', spec: { replicas: 1, selector: { matchLabels: { app: 'lab' } }, template: { metadata: { labels: { app: 'lab' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'x' }] } } } },
  { group: '', version: 'v1', resource: 'services', kind: 'Service', spec: { ports: [{ port: 80 }] } },
  { group: 'labs.example.com', version: 'v1', resource: 'virtualmachines', kind: 'VirtualMachine', spec: { running: true } },
];

function update(k: { group: string; version: string; resource: string; kind: string; spec?: Record<string, unknown> }, userInfo: UserInfo, before: string | undefined, after: string | undefined): Review {
  const stamped = stampedMetadata(k.kind, 'alpha', 'shared').metadata;
  const object = (mark: string | undefined): KubeObject => ({
    apiVersion: k.group === '' ? k.version : `${k.group}/${k.version}`,
    kind: k.kind,
    metadata: { name: 'lab', namespace: 'shared', labels: stamped.labels, annotations: { ...stamped.annotations, ...(mark === undefined ? {} : { [TERMINAL]: mark }) } },
    spec: k.spec,
  });
  const body = fixture('validate-create-pod-by-runner.json');
  const gvk = { group: k.group, version: k.version, kind: k.kind };
  const gvr = { group: k.group, version: k.version, resource: k.resource };
  body.request = { ...body.request, kind: gvk, requestKind: gvk, resource: gvr, requestResource: gvr, namespace: 'shared', name: 'lab', userInfo, operation: 'UPDATE', object: object(after), oldObject: object(before) };
  return body;
}

function answer(body: Review) {
  const d = decide('validate', body, testContext(POLICY, NOW));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}

describe('the terminal mark holds on every kind', () => {
  for (const k of KINDS) {
    test(`alpha marks its ${k.kind} terminal; once marked, no one removes or changes the mark`, () => {
      assert.equal(answer(update(k, RUNNER_A, undefined, 'true')).allowed, true);
      const removed = answer(update(k, RUNNER_A, 'true', undefined));
      assert.equal(removed.allowed, false);
      assert.match(removed.status?.message ?? '', /\[terminal\.frozen\] metadata\.annotations\["deed\.dev\/terminal"\]: deed\.dev\/terminal was set to "true" and cannot be changed or removed/);
      assert.match(answer(update(k, RUNNER_A, undefined, 'yes')).status?.message ?? '', /\[terminal\.malformed\]/);
    });

    test(`beta may not mark alpha's ${k.kind} terminal`, () => {
      const r = answer(update(k, RUNNER_B, undefined, 'true'));
      assert.equal(r.allowed, false);
      assert.match(r.status?.message ?? '', /\[terminal\.environment\] metadata\.annotations\["deed\.dev\/terminal"\]: only a principal of the environment this object belongs to may mark it terminal/);
    });
  }
});

describe('one set of write rules on every door that carries a stamped object (rules/stamped-writes.ts)', () => {
  const secret = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' };
  for (const k of [secret, ...KINDS]) {
    test(`${k.kind}: beta's write that marks alpha's object terminal and rewrites its environment gets the same findings, in the same order`, () => {
      const body = update(k, RUNNER_B, undefined, 'true');
      body.request.object.metadata.labels = { ...body.request.object.metadata.labels, 'deed.dev/environment': 'beta' };
      const d = decide('validate', body, testContext(POLICY, NOW));
      if (d.kind !== 'review') throw new Error(d.message);
      assert.equal(d.response.response.allowed, false);
      assert.deepEqual(
        d.verdict.findings.map((f) => f.rule),
        ['guard.cross-environment', 'frozen.stamps', 'terminal.environment'],
        d.response.response.status?.message,
      );
    });
  }
});
