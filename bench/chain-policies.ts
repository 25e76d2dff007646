// The chain bench's in-process comparison (bench/chain.ts): what an operator can write in the
// API server itself for the stamps CEL can compute from the requester. A
// MutatingAdmissionPolicy sets the identity labels, the owner annotation and the owner
// reference from `request.userInfo` and the pod-bound token's extras; a
// ValidatingAdmissionPolicy checks them against the requester at CREATE, refuses them from
// anyone else, and freezes them on UPDATE. CEL cannot mint the nonce, the expiry or the
// attestation, so this pair does less than Deed: it is the floor an in-process policy sets.
// Its values are plain maps: a JSON Patch whose value is a list of typed ownerReference
// objects (`Object.metadata.ownerReferences{...}`) made kube-apiserver v1.36.2 fail the
// request mid-stream (the client saw an HTTP/2 internal error).
import type { KubernetesObject } from '@kubernetes/client-node';
import { namespaceSelector } from '../src/policy/review-scope.js';

/** Resource paths under admissionregistration.k8s.io/v1, by kind. */
export const POLICY_KINDS: Record<string, string> = {
  MutatingAdmissionPolicy: 'mutatingadmissionpolicies',
  MutatingAdmissionPolicyBinding: 'mutatingadmissionpolicybindings',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings',
};

const RUNNER = 'system:serviceaccount:sandbox-a:runner';
const POD_UID = 'authentication.kubernetes.io/pod-uid';
const POD_NAME = 'authentication.kubernetes.io/pod-name';
const ENVIRONMENT = 'alpha';
const LABEL_KEYS = ['app.kubernetes.io/managed-by', 'deed.dev/managed', 'deed.dev/environment', 'deed.dev/owner-uid'];
const OWNED_KEYS = ['deed.dev/managed', 'deed.dev/environment', 'deed.dev/owner-uid'];

const cel = (v: string) => `'${v}'`;
const list = (vs: string[]) => `[${vs.map(cel).join(', ')}]`;
const pointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** The MutatingAdmissionPolicy, the ValidatingAdmissionPolicy and their bindings, for Secrets in the review scope. */
export function chainPolicies(deedNamespace: string): KubernetesObject[] {
  const api = 'admissionregistration.k8s.io/v1';
  const scope = namespaceSelector(deedNamespace);
  const labels = `{'app.kubernetes.io/managed-by': 'deed', 'deed.dev/managed': 'true', 'deed.dev/environment': '${ENVIRONMENT}', 'deed.dev/owner-uid': variables.podUid}`;
  const labelAdds = `[JSONPatch{op: 'add', path: '/metadata/labels/${pointer(LABEL_KEYS[0]!)}', value: 'deed'}, JSONPatch{op: 'add', path: '/metadata/labels/${pointer(LABEL_KEYS[1]!)}', value: 'true'}, JSONPatch{op: 'add', path: '/metadata/labels/${pointer(LABEL_KEYS[2]!)}', value: '${ENVIRONMENT}'}, JSONPatch{op: 'add', path: '/metadata/labels/${pointer(LABEL_KEYS[3]!)}', value: variables.podUid}]`;
  const owner = `variables.saNamespace + '/' + variables.podName`;
  const ref = `{'apiVersion': 'v1', 'kind': 'Pod', 'name': variables.podName, 'uid': variables.podUid}`;
  const patch = [
    `(has(object.metadata.labels) ? ${labelAdds} : [JSONPatch{op: 'add', path: '/metadata/labels', value: ${labels}}])`,
    `(has(object.metadata.annotations) ? [JSONPatch{op: 'add', path: '/metadata/annotations/${pointer('deed.dev/owner')}', value: ${owner}}] : [JSONPatch{op: 'add', path: '/metadata/annotations', value: {'deed.dev/owner': ${owner}}}])`,
    // Only a runner in the object's own namespace owns it (a cross-namespace owner is garbage).
    `(variables.saNamespace != request.namespace ? [] : has(object.metadata.ownerReferences) ? (object.metadata.ownerReferences.exists(r, r.uid == variables.podUid) ? [] : [JSONPatch{op: 'add', path: '/metadata/ownerReferences/-', value: ${ref}}]) : [JSONPatch{op: 'add', path: '/metadata/ownerReferences', value: [${ref}]}])`,
  ].join(' + ');
  const requester = [
    { name: 'podUid', expression: `request.userInfo.extra['${POD_UID}'][0]` },
    { name: 'podName', expression: `request.userInfo.extra['${POD_NAME}'][0]` },
    { name: 'saNamespace', expression: `request.userInfo.username.split(':')[2]` },
  ];
  const isRunner = `request.userInfo.username == '${RUNNER}' && '${POD_UID}' in request.userInfo.extra && '${POD_NAME}' in request.userInfo.extra`;
  const mutating = {
    apiVersion: api,
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: 'bench-stamps' },
    spec: {
      failurePolicy: 'Fail',
      reinvocationPolicy: 'IfNeeded',
      matchConstraints: { namespaceSelector: scope, resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }] },
      // The environment's principals; the policy's table of them, written out for the bench's one runner.
      matchConditions: [{ name: 'acts-for-an-environment', expression: isRunner }],
      variables: requester,
      mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: `${patch}` } }],
    },
  };
  const has = (field: 'labels' | 'annotations', obj: 'object' | 'oldObject') => `has(${obj}.metadata.${field}) ? ${obj}.metadata.${field} : {}`;
  const validating = {
    apiVersion: api,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'bench-stamps' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { namespaceSelector: scope, resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['secrets'] }] },
      variables: [
        { name: 'runner', expression: isRunner },
        { name: 'labels', expression: has('labels', 'object') },
        { name: 'annotations', expression: has('annotations', 'object') },
        { name: 'oldLabels', expression: `request.operation == 'UPDATE' ? (${has('labels', 'oldObject')}) : {}` },
        { name: 'oldAnnotations', expression: `request.operation == 'UPDATE' ? (${has('annotations', 'oldObject')}) : {}` },
      ],
      validations: [
        {
          expression: `request.operation != 'CREATE' || !variables.runner || (variables.labels[?'deed.dev/environment'] == optional.of('${ENVIRONMENT}') && variables.labels[?'deed.dev/owner-uid'] == optional.of(request.userInfo.extra['${POD_UID}'][0]) && variables.annotations[?'deed.dev/owner'] == optional.of(request.userInfo.username.split(':')[2] + '/' + request.userInfo.extra['${POD_NAME}'][0]))`,
          message: 'the stamps must name the requester',
        },
        {
          expression: `request.operation != 'CREATE' || variables.runner || (!${list(OWNED_KEYS)}.exists(k, k in variables.labels) && !('deed.dev/owner' in variables.annotations))`,
          message: 'the stamps are admission-owned: a principal of no environment cannot write them',
        },
        {
          expression: `request.operation != 'UPDATE' || (${list(LABEL_KEYS)}.all(k, variables.labels[?k] == variables.oldLabels[?k]) && variables.annotations[?'deed.dev/owner'] == variables.oldAnnotations[?'deed.dev/owner'])`,
          message: 'the stamps are frozen after CREATE',
        },
      ],
    },
  };
  const bindings = [
    { apiVersion: api, kind: 'MutatingAdmissionPolicyBinding', metadata: { name: 'bench-stamps' }, spec: { policyName: 'bench-stamps' } },
    { apiVersion: api, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'bench-stamps' }, spec: { policyName: 'bench-stamps', validationActions: ['Deny'] } },
  ];
  return [mutating, validating, ...bindings];
}

/** The no-op webhook's fixed patch: Deed's stamps on a Secret, the nonce all zeros (how the bench tells the no-op server's writes apart). */
export function stampPatch(runner: { pod: string; uid: string }): object[] {
  return [
    { op: 'add', path: '/metadata/labels', value: { 'app.kubernetes.io/managed-by': 'deed', 'deed.dev/managed': 'true', 'deed.dev/environment': ENVIRONMENT, 'deed.dev/owner-uid': runner.uid } },
    {
      op: 'add',
      path: '/metadata/annotations',
      value: { 'deed.dev/owner': `sandbox-a/${runner.pod}`, 'deed.dev/create-nonce': '0'.repeat(64), 'deed.dev/attestation': `v1:${'A'.repeat(43)}` },
    },
    { op: 'add', path: '/metadata/ownerReferences', value: [{ apiVersion: 'v1', kind: 'Pod', name: runner.pod, uid: runner.uid }] },
  ];
}
