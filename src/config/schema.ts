// The one schema for Deed's policy file. Defaults live here and nowhere else; the
// configuration reference in docs/configuration.md is generated from this schema.
import { z } from 'zod';

// A label value (RFC 1123-ish, as the API server validates label values): environment
// ids end up in a label, so they must be valid label values or every stamp would fail.
const labelValue = z
  .string()
  .regex(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/, 'must be a valid Kubernetes label value (63 characters at most)');

// A DNS subdomain, as label-key prefixes must be.
const dnsSubdomain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a DNS subdomain such as deed.dev');

const serviceAccountPattern = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?:(\*|[a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/, 'must be NAMESPACE:NAME or NAMESPACE:*');

export const environmentSchema = z
  .object({
    id: labelValue.describe('Environment id, stamped as the `<prefix>/environment` label.'),
    serviceAccounts: z
      .array(serviceAccountPattern)
      .default([])
      .describe('Service accounts that act for this environment: `NAMESPACE:NAME` or `NAMESPACE:*`.'),
    groups: z.array(z.string().min(1)).default([]).describe('User groups whose members act for this environment.'),
  })
  .strict();

export const enforcementMode = z.enum(['deny', 'warn', 'audit']);

export const configSchema = z
  .object({
    labelPrefix: dnsSubdomain.default('deed.dev').describe('Prefix of every Deed label and annotation key.'),
    environments: z
      .array(environmentSchema)
      .default([])
      .describe('Environments and the principals that act for each. A principal that matches none acts for no environment.'),
    deadline: z
      .object({
        marginSeconds: z
          .number()
          .int()
          .min(0)
          .max(31_536_000)
          .default(1800)
          .describe('Seconds added to a client budget (`<prefix>/max-duration-seconds`).'),
        capSeconds: z
          .number()
          .int()
          .positive()
          .max(31_536_000)
          .optional()
          .describe('Upper bound on any deadline; also the deadline of objects that declare no budget. Unset: no cap.'),
      })
      .strict()
      .default({ marginSeconds: 1800 })
      .describe('Deadline margins and caps.'),
    attestation: z
      .object({
        keyFile: z
          .string()
          .min(1)
          .optional()
          .describe('File holding the HMAC key (at least 32 bytes). Unset: `deed serve` generates one under its certificate directory.'),
      })
      .strict()
      .default({})
      .describe('The key that signs `<prefix>/attestation`.'),
    breakGlass: z
      .object({
        users: z.array(z.string().min(1)).default([]).describe('Usernames allowed to update or delete any managed object.'),
        groups: z.array(z.string().min(1)).default([]).describe('Groups allowed to update or delete any managed object.'),
      })
      .strict()
      .default({ users: [], groups: [] })
      .describe('Principals that may act on managed objects of any environment (guarded writes).'),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const seen = new Set<string>();
    cfg.environments.forEach((env, i) => {
      if (seen.has(env.id)) ctx.addIssue({ code: 'custom', path: ['environments', i, 'id'], message: `duplicate environment id "${env.id}"` });
      seen.add(env.id);
    });
    // One service-account pattern in two environments would make the stamp ambiguous.
    const owners = new Map<string, string>();
    cfg.environments.forEach((env, i) =>
      env.serviceAccounts.forEach((sa, j) => {
        const prior = owners.get(sa);
        if (prior !== undefined && prior !== env.id)
          ctx.addIssue({ code: 'custom', path: ['environments', i, 'serviceAccounts', j], message: `"${sa}" already acts for environment "${prior}"` });
        owners.set(sa, env.id);
      }),
    );
  });

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;
export type EnforcementMode = z.infer<typeof enforcementMode>;
