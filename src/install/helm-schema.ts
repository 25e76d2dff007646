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
  return { ...schema, description: "Deed's policy (docs/configuration.md); attestation.keyFile is set by the chart." };
}

/** The schema text with its `policy` property regenerated. */
export function withPolicySchema(schemaText: string): string {
  const schema = JSON.parse(schemaText) as { properties: Record<string, unknown> };
  schema.properties.policy = policyJsonSchema();
  return `${JSON.stringify(schema, null, 2)}\n`;
}
