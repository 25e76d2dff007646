// The PolicyReport CRD of the Kubernetes policy working group (wgpolicyk8s.io/v1alpha2),
// for clusters where neither Kyverno nor Policy Reporter installed it: the upstream
// schema's fields, kept minimal. `deed manifests --audit-crds`, the kustomize component
// and the Helm chart (audit.installCRDs) ship this one object.
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';

const RESULTS = ['pass', 'fail', 'warn', 'error', 'skip'];

const objectReference = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    namespace: { type: 'string' },
    name: { type: 'string' },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    fieldPath: { type: 'string' },
  },
  'x-kubernetes-map-type': 'atomic',
};

const labelSelector = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

const schema = {
  type: 'object',
  required: ['metadata'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    scope: objectReference,
    scopeSelector: labelSelector,
    summary: {
      type: 'object',
      properties: Object.fromEntries(RESULTS.map((r) => [r, { type: 'integer' }])),
    },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['policy'],
        properties: {
          source: { type: 'string' },
          policy: { type: 'string' },
          rule: { type: 'string' },
          category: { type: 'string' },
          severity: { type: 'string', enum: ['critical', 'high', 'low', 'medium', 'info'] },
          timestamp: { type: 'object', properties: { seconds: { type: 'integer', format: 'int64' }, nanos: { type: 'integer', format: 'int32' } } },
          result: { type: 'string', enum: RESULTS },
          scored: { type: 'boolean' },
          resources: { type: 'array', items: objectReference },
          resourceSelector: labelSelector,
          message: { type: 'string' },
          properties: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
  },
};

const column = (name: string, jsonPath: string, type = 'integer') => ({ name, jsonPath, type });

export function policyReportCrd(): V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'policyreports.wgpolicyk8s.io' },
    spec: {
      group: 'wgpolicyk8s.io',
      names: { kind: 'PolicyReport', listKind: 'PolicyReportList', plural: 'policyreports', singular: 'policyreport', shortNames: ['polr'] },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha2',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          additionalPrinterColumns: [
            column('Pass', '.summary.pass'),
            column('Fail', '.summary.fail'),
            column('Warn', '.summary.warn'),
            column('Error', '.summary.error'),
            column('Skip', '.summary.skip'),
            column('Age', '.metadata.creationTimestamp', 'date'),
          ],
        },
      ],
    },
  } as V1CustomResourceDefinition;
}

/** The chart's copy of the CRD, written by `npm run manifests`. */
export const HELM_CRD_FILE = 'manifests/helm/deed/files/policyreport-crd.yaml';
