// `deed coverage`: what Deed does with every resource, subresource, verb and reference field
// the API server serves (src/coverage/), read from its discovery and OpenAPI v3 documents,
// or from a saved set (--discovery DIR). Exit status: 0 when everything is classified, 1
// when something is not (a new kind, subresource or field after an upgrade), 2 when the API
// server cannot be read or the documents cannot be (and on a usage error).
import { Option, type Command } from 'commander';
import { stringify } from 'yaml';
import type { CoverageReport } from '../coverage/coverage.js';
import type { CoverageDocuments } from '../coverage/documents.js';
import { AS_HELP, CONTEXT_HELP, KUBECONFIG_HELP, parsePositiveSeconds } from './options.js';

type Output = 'text' | 'wide' | 'json' | 'yaml';

interface CoverageFlags {
  kubeconfig?: string;
  context?: string;
  as?: string;
  discovery?: string;
  save?: string;
  timeout: number;
  output: Output;
}

/** Exit status when the documents cannot be read: the API server, or the saved set. */
export const EXIT_UNREACHABLE = 2;

const ORDER = ['unclassified', 'guarded', 'stamped', 'judged', 'unjudged', 'exempt', 'rbac'] as const;

function counts(c: Partial<Record<string, number>>): string {
  const parts = ORDER.filter((k) => (c[k] ?? 0) > 0).map((k) => `${k} ${c[k]}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/** The last line of every output: the counts per class, and what is unclassified. */
export function summaryLine(r: CoverageReport): string {
  const total = (c: Partial<Record<string, number>>) => Object.values(c).reduce<number>((a, b) => a + (b ?? 0), 0);
  const tail = r.summary.unclassified.length === 0 ? 'nothing unclassified' : `${r.summary.unclassified.length} unclassified: ${r.summary.unclassified.join(', ')}`;
  return `summary: ${total(r.summary.resources)} resource entries (${counts(r.summary.resources)}); ${total(r.summary.fields)} reference fields (${counts(r.summary.fields)}); ${tail}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (i === r.length - 1 ? 0 : r[i]!.length))));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}

export function formatReport(r: CoverageReport, output: Output): string {
  if (output === 'json') return `${JSON.stringify({ ...r, summaryLine: summaryLine(r) })}\n`;
  if (output === 'yaml') return stringify({ ...r, summaryLine: summaryLine(r) });
  const rank = (c: string) => ORDER.indexOf(c as (typeof ORDER)[number]);
  const resources = [...r.resources].sort((a, b) => rank(a.class) - rank(b.class));
  const fields = [...r.fields].sort((a, b) => rank(a.class) - rank(b.class));
  const name = (group: string, resource: string) => (group === '' ? resource : `${resource}.${group}`);
  const out = [
    table([['CLASS', 'RESOURCE', 'VERBS', 'HOW'], ...resources.map((e) => [e.class, name(e.group, e.resource), e.verbs.join(','), e.reason])]),
    '',
    output === 'wide'
      ? table([['CLASS', 'FIELD', 'KIND', 'PATH', 'HOW'], ...fields.flatMap((f) => f.at.map((a) => [f.class, f.field, name(a.group, a.kind), a.path, f.reason]))])
      : table([
          ['CLASS', 'FIELD', 'WHERE', 'HOW'],
          ...fields.map((f) => [f.class, f.field, `${f.at[0]!.kind} ${f.at[0]!.path}${f.at.length > 1 ? ` (+${f.at.length - 1})` : ''}`, f.reason]),
        ]),
    '',
    summaryLine(r),
  ];
  return `${out.join('\n')}\n`;
}

export function registerCoverage(program: Command, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  program
    .command('coverage')
    .description("List every resource, subresource, verb and reference field the API server serves, with how Deed handles each; exit 1 if any is unclassified")
    .option('--kubeconfig <file>', KUBECONFIG_HELP)
    .option('--context <name>', CONTEXT_HELP)
    .option('--as <user>', AS_HELP)
    .option('--discovery <dir>', 'read saved documents (api.json, apis.json, openapi/*.json, as --save writes them) instead of an API server')
    .option('--save <dir>', 'also write the documents read from the API server into this folder')
    .option('--timeout <seconds>', 'deadline of each API call', parsePositiveSeconds, 30)
    .addOption(new Option('-o, --output <format>', 'output format: wide lists every kind and path of each field').choices(['text', 'wide', 'json', 'yaml']).default('text'))
    .action(async (o: CoverageFlags) => {
      const [{ coverage }, { readDocuments, writeDocuments }] = await Promise.all([import('../coverage/coverage.js'), import('../coverage/documents.js')]);
      let docs: CoverageDocuments;
      try {
        if (o.discovery !== undefined) docs = readDocuments(o.discovery);
        else {
          // Loaded here: @kubernetes/client-node takes a second or more to load.
          const [{ loadKubeConfig }, { fetchDocuments }] = await Promise.all([import('../kube/client.js'), import('../kube/discovery.js')]);
          docs = await fetchDocuments(loadKubeConfig({ kubeconfig: o.kubeconfig, context: o.context }), { timeoutMs: o.timeout * 1000, impersonate: o.as });
          if (o.save !== undefined) writeDocuments(o.save, docs);
        }
      } catch (err) {
        process.stderr.write(`deed coverage: ${(err as Error).message}\n`);
        process.exitCode = EXIT_UNREACHABLE;
        return;
      }
      const report = coverage(docs);
      write(formatReport(report, o.output));
      if (report.summary.unclassified.length > 0) process.exitCode = 1;
    });
}
