// Variants of Deed's create-stamps ValidatingAdmissionPolicy for `npm run bench:chain`, each
// answering what one part of it costs the API server (bench/MEASUREMENTS.md, "Steady
// state, and what the create-stamps policy costs"). Same match, same checks unless the variant says otherwise.
import type { KubernetesObject } from '@kubernetes/client-node';

export const POLICY_VARIANTS = {
  /** The same match and a single `true` validation: what any such policy costs, reading nothing. */
  trivial: 'deed-trivial-policy',
  /** The same match and one validation that reads the object and the request. */
  touch: 'deed-touch-policy',
  /** The matchConditions moved into a variable that every validation tests first. */
  folded: 'deed-folded-policy',
  /** The labels and annotations read once, into variables, with CEL's optional syntax. */
  lean: 'deed-lean-policy',
  /** No variables: each written out where it is used. */
  inline: 'deed-inline-policy',
} as const;
export type PolicyVariant = keyof typeof POLICY_VARIANTS;

interface Spec {
  failurePolicy: string;
  matchConstraints: unknown;
  matchConditions: Array<{ name: string; expression: string }>;
  variables: Array<{ name: string; expression: string }>;
  validations: Array<{ expression: string; messageExpression?: string }>;
}

export function policyVariant(policy: KubernetesObject, variant: PolicyVariant): KubernetesObject {
  const spec = structuredClone((policy as unknown as { spec: Spec }).spec);
  const only = (expression: string) => ({ ...policy, spec: { failurePolicy: spec.failurePolicy, matchConstraints: spec.matchConstraints, validations: [{ expression }] } });
  const withSpec = (s: Partial<Spec>) => ({ ...policy, spec: { ...spec, ...s } });
  switch (variant) {
    case 'trivial':
      return only('true');
    case 'touch':
      return only('has(object.metadata.labels) || request.userInfo.username != ""');
    case 'folded': {
      const judged = spec.matchConditions.map((c) => `(${c.expression})`).join(' && ');
      return withSpec({ matchConditions: undefined, variables: [{ name: 'judged', expression: judged }, ...spec.variables], validations: spec.validations.map((v) => ({ ...v, expression: `!variables.judged || (${v.expression})` })) } as Partial<Spec>);
    }
    case 'lean': {
      const lean = (e: string) =>
        e.replace(/\(has\(object\.metadata\.(labels|annotations)\) && ("[^"]*") in object\.metadata\.(?:labels|annotations)\)/g, '($2 in variables.$1)').replace(/object\.metadata\.(labels|annotations)\[/g, 'variables.$1[');
      const read = [{ name: 'labels', expression: 'object.metadata.?labels.orValue({})' }, { name: 'annotations', expression: 'object.metadata.?annotations.orValue({})' }];
      return withSpec({ variables: [...read, ...spec.variables.map((v) => ({ ...v, expression: lean(v.expression) }))], validations: spec.validations.map((v) => ({ ...v, expression: lean(v.expression) })) });
    }
    case 'inline': {
      const values = new Map<string, string>();
      const inline = (e: string) => e.replace(/variables\.([A-Za-z]+)/g, (_m, name: string) => `(${values.get(name)!})`);
      for (const v of spec.variables) values.set(v.name, inline(v.expression));
      return withSpec({
        variables: undefined,
        validations: spec.validations.map((v) => ({ ...v, expression: inline(v.expression), ...(v.messageExpression !== undefined ? { messageExpression: inline(v.messageExpression) } : {}) })),
      } as Partial<Spec>);
    }
  }
}
