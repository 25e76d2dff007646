// Reads the policy file (YAML or JSON), validates it against the one schema, and names
// the offending field when it is wrong. An invalid policy never starts a server.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { configSchema, type Config, type ConfigInput } from './schema.js';

/** The embedded default for local runs: every service account acts for `default`. */
export const DEFAULT_CONFIG: ConfigInput = {
  labelPrefix: 'deed.dev',
  environments: [{ id: 'default', groups: ['system:serviceaccounts'] }],
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parseConfig(input: unknown, source = 'config'): Config {
  const result = configSchema.safeParse(input ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
    return `${field}: ${issue.message}`;
  });
  throw new ConfigError(`invalid policy in ${source}:\n  ${problems.join('\n  ')}`);
}

export function parseConfigText(text: string, source = 'config'): Config {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new ConfigError(`cannot parse ${source} as YAML: ${(err as Error).message}`);
  }
  return parseConfig(doc, source);
}

/** Loads `file` when given, else the embedded default. */
export function loadConfig(file?: string): Config {
  if (file === undefined || file === '') return parseConfig(DEFAULT_CONFIG, 'the embedded default');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read policy file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseConfigText(text, file);
}
