// Tables in the docs that mirror code, rendered from it: the webhook rules (from the webhook
// configurations `deed manifests` renders) in docs/install.md, and every command's flags
// (from the commander program) in docs/cli.md. Each sits between two marker comments;
// `npm run docs` rewrites what is between them, and test/docs.test.ts fails when it is stale.
import type { Command } from 'commander';
import { renderManifests } from '../src/install/manifests.js';
import { buildProgram } from '../src/cli/program.js';

export interface GeneratedTable {
  file: string;
  name: string;
  render: () => string;
}

interface Rule {
  operations: string[];
  apiGroups: string[];
  resources: string[];
}
interface Webhook {
  name: string;
  failurePolicy: string;
  timeoutSeconds: number;
  rules: Rule[];
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function webhookRulesTable(): string {
  const objects = renderManifests({ namespace: 'deed-system', image: 'x' }) as Array<{ kind: string; webhooks?: Webhook[] }>;
  const rows = ['| webhook | operations | resources (API group) |', '| --- | --- | --- |'];
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
    for (const hook of objects.find((o) => o.kind === kind)?.webhooks ?? []) {
      for (const rule of hook.rules) {
        const group = rule.apiGroups.map((g) => (g === '' ? 'core' : g)).join(', ');
        rows.push(`| \`${hook.name}\` | ${rule.operations.join(', ')} | ${rule.resources.map((r) => `\`${r}\``).join(', ')} (${group}) |`);
      }
    }
  }
  return `${rows.join('\n')}\n`;
}

function flagsOf(cmd: Command): string[] {
  return cmd.options
    .filter((o) => !o.hidden)
    .map((o) => `| \`${cell(o.flags)}\` | ${cell(o.description)}${o.defaultValue !== undefined && o.defaultValue !== false && !(Array.isArray(o.defaultValue) && o.defaultValue.length === 0) ? ` (default: \`${cell(JSON.stringify(o.defaultValue))}\`)` : ''}${o.argChoices ? ` (one of ${o.argChoices.map((c) => `\`${c}\``).join(', ')})` : ''} |`);
}

export function cliFlagsTable(): string {
  const out: string[] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      const name = [...path, sub.name()];
      if (sub.commands.length > 0) walk(sub, name);
      else {
        const args = sub.registeredArguments.map((a) => (a.required ? `<${a.name()}${a.variadic ? '...' : ''}>` : `[${a.name()}${a.variadic ? '...' : ''}]`)).join(' ');
        out.push(`### \`deed ${name.join(' ')}${args ? ` ${args}` : ''}\``, '', cell(sub.description()), '', '| flag | meaning |', '| --- | --- |', ...flagsOf(sub), '');
      }
    }
  };
  // A fixed environment: defaults read from it (DEED_CONFIG) must not leak into the docs.
  const saved = process.env.DEED_CONFIG;
  delete process.env.DEED_CONFIG;
  try {
    walk(buildProgram(), []);
  } finally {
    if (saved !== undefined) process.env.DEED_CONFIG = saved;
  }
  return out.join('\n');
}

export const GENERATED_TABLES: GeneratedTable[] = [
  { file: 'docs/install.md', name: 'webhook-rules', render: webhookRulesTable },
  { file: 'docs/cli.md', name: 'cli-flags', render: cliFlagsTable },
];

const begin = (name: string) => `<!-- BEGIN GENERATED ${name}: npm run docs -->`;
const end = (name: string) => `<!-- END GENERATED ${name} -->`;

/** The file's text with the table between its markers rendered anew. */
export function withTable(text: string, t: GeneratedTable): string {
  const [b, e] = [text.indexOf(begin(t.name)), text.indexOf(end(t.name))];
  if (b < 0 || e < b) throw new Error(`${t.file}: no ${begin(t.name)} ... ${end(t.name)} markers`);
  return `${text.slice(0, b)}${begin(t.name)}\n${t.render()}${end(t.name)}${text.slice(e + end(t.name).length)}`;
}
