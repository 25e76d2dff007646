// Reads the policy file (YAML or JSON), validates it against the one schema, and names
// the offending field when it is wrong, with its file, line and column when it came from a
// file (diagnostics.ts). An invalid policy never starts a server.
import { readFileSync } from 'node:fs';
import { cannotRead, parseProblem } from '../errors/file-errors.js';
import { describeIssues, parseYamlSource, type YamlSource } from './diagnostics.js';
import type { Config, ConfigInput } from './schema.js';
import { policySchema } from './rule-modes.js';

/** The embedded default for local runs: every service account acts for `default`. */
export const DEFAULT_CONFIG: ConfigInput = {
  labelPrefix: 'deed.dev',
  environments: [{ id: 'default', groups: ['system:serviceaccounts'] }],
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Validates a policy; `yaml`, the document it was read from, locates each problem in it. */
export function parseConfig(input: unknown, source = 'config', yaml?: YamlSource): Config {
  const result = policySchema.safeParse(input ?? {});
  if (result.success) return result.data;
  const problems = describeIssues(result.error.issues, policySchema, input, yaml);
  throw new ConfigError(`invalid policy in ${source}:\n  ${problems.join('\n  ')}`);
}

/** The YAML text as a located document and its value; a syntax error names its line. */
export function readYaml(text: string, source: string, fail: (message: string) => Error): { yaml: YamlSource; value: unknown } {
  const yaml = parseYamlSource(text, source);
  const [error] = yaml.doc.errors;
  if (error !== undefined) throw fail(parseProblem(error));
  try {
    return { yaml, value: yaml.doc.toJS({ maxAliasCount: 100 }) as unknown };
  } catch (err) {
    throw fail(parseProblem(err));
  }
}

export function parseConfigText(text: string, source = 'config'): Config {
  const { yaml, value } = readYaml(text, source, (message) => new ConfigError(`cannot parse ${source} as YAML: ${message}`));
  return parseConfig(value, source, yaml);
}

/** Loads `file` when given, else the embedded default. */
export function loadConfig(file?: string): Config {
  if (file === undefined || file === '') return parseConfig(DEFAULT_CONFIG, 'the embedded default');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(cannotRead('policy file', file, err));
  }
  const { yaml, value } = readYaml(text, file, (message) => new ConfigError(`cannot parse ${file} as YAML: ${message}`));
  // An empty file is more likely a mount or a render gone wrong than a policy: it would stamp
  // nothing and guard only what is already stamped. Meaning it takes writing it.
  if (value === null || value === undefined) throw new ConfigError(`policy file ${file} is empty: write the policy, or \`environments: []\` for one that maps no environment`);
  return parseConfig(value, file, yaml);
}
