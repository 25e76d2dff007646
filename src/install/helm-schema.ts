// The Helm chart's values.schema.json is written by hand except its `policy` property,
// which is Deed's policy schema converted from zod, so `helm install` rejects a policy
// that `deed serve` would refuse at start.
import { z } from 'zod';
import { configSchema } from '../config/schema.js';

export const HELM_SCHEMA_FILE = 'manifests/helm/deed/values.schema.json';

/** Draft-07: the dialect every Helm 3 release validates. */
export function policyJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  delete schema.$schema;
  dropCustomFormats(schema);
  return { ...schema, description: "Deed's policy (docs/configuration.md); attestation.keyFile is set by the chart." };
}

// zod marks some checks with formats of its own (`starts_with`) beside an equivalent
// `pattern`; JSON Schema validators reject or ignore unknown formats, so keep the pattern only.
const STANDARD_FORMATS = new Set(['date-time', 'date', 'time', 'email', 'hostname', 'ipv4', 'ipv6', 'uri', 'uri-reference', 'uuid', 'regex']);

function dropCustomFormats(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(dropCustomFormats);
  if (node === null || typeof node !== 'object') return;
  const obj = node as Record<string, unknown>;
  if (typeof obj.format === 'string' && !STANDARD_FORMATS.has(obj.format)) {
    if (typeof obj.pattern !== 'string') throw new Error(`format "${obj.format}" has no pattern to stand for it`);
    delete obj.format;
  }
  for (const value of Object.values(obj)) dropCustomFormats(value);
}

/** The schema text with its `policy` property regenerated. */
export function withPolicySchema(schemaText: string): string {
  const schema = JSON.parse(schemaText) as { properties: Record<string, unknown> };
  schema.properties.policy = policyJsonSchema();
  return `${JSON.stringify(schema, null, 2)}\n`;
}
