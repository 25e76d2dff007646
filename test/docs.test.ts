import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { configurationDoc, CONFIGURATION_DOC, rulesDoc, RULES_DOC } from '../scripts/docs.js';
import { RULE_LIST } from '../src/policy/rules/catalog.js';
import { sandboxKindsProse } from '../src/policy/kinds.js';
import { GENERATED_TABLES, withTable } from '../scripts/doc-tables.js';
import { ROOT } from './cli-process.js';

describe('generated docs', () => {
  for (const [file, render] of [
    [CONFIGURATION_DOC, configurationDoc],
    [RULES_DOC, rulesDoc],
  ] as const) {
    test(`${file} is what npm run docs generates (run it after changing the schema or the catalog)`, () => {
      assert.equal(readFileSync(join(ROOT, file), 'utf8'), render());
    });
  }

  for (const table of GENERATED_TABLES)
    test(`the ${table.name} table in ${table.file} is what npm run docs generates from the code`, () => {
      const text = readFileSync(join(ROOT, table.file), 'utf8');
      assert.equal(text, withTable(text, table));
    });

  test('the webhook rules table names the workload kinds, TokenRequests and snapshots; the flags table every subcommand', () => {
    const rules = GENERATED_TABLES.find((t) => t.name === 'webhook-rules')!.render();
    for (const needle of ['`deployments`', '`cronjobs`', '`serviceaccounts/token`', '`volumesnapshots`', '`pods/eviction`']) assert.ok(rules.includes(needle), needle);
    const flags = GENERATED_TABLES.find((t) => t.name === 'cli-flags')!.render();
    for (const command of ['serve', 'review', 'reap', 'audit', 'test <path...>', 'keys usage', 'manifests', 'certs']) assert.ok(flags.includes(`### \`deed ${command}`), command);
    assert.match(flags, /\| `--as <user>` \| act as this user/);
  });

  test('the rule catalog lists every rule id with its default mode', () => {
    const doc = rulesDoc();
    for (const rule of RULE_LIST) assert.match(doc, new RegExp(`\\| \`${rule.id.replace(/\./g, '\\.')}\` \\| ${rule.webhook} \\| .* \\| ${rule.defaultMode} \\|`));
  });

  test('the configuration reference names nested fields and their defaults', () => {
    const doc = configurationDoc();
    assert.match(doc, /\| `deadline\.marginSeconds` \| integer \| `1800` \|/);
    assert.match(doc, /\| `environments\[\]\.id` \| string \| required \|/);
  });

  test('every page that lists the sandbox kinds lists them alike, from the kind table', () => {
    const prose = sandboxKindsProse();
    assert.equal(prose, 'Pods, Secrets, ConfigMaps, NetworkPolicies and PersistentVolumeClaims');
    for (const file of ['README.md', 'docs/index.md', 'docs/security-model.md', 'docs/operations.md', 'manifests/helm/deed/Chart.yaml', 'manifests/helm/deed/README.md', 'krew/deed.yaml']) {
      const text = readFileSync(join(ROOT, file), 'utf8').replace(/\s+/g, ' ');
      assert.ok(text.includes(prose), `${file} names the sandbox kinds as: ${prose}`);
      // The shorter lists these pages held: ConfigMaps left out, PVCs for PersistentVolumeClaims.
      assert.doesNotMatch(text, /Pods, Secrets, NetworkPolicies|NetworkPolicies and PVCs/i, file);
    }
  });
});

/** GitHub's anchor for each heading of a Markdown file (lower case, punctuation dropped, spaces as hyphens, repeats numbered). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of text.replace(/^```[\s\S]*?^```/gm, '').split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

describe('the performance manual and the measurement log', () => {
  const MANUAL = 'docs/performance.md';
  const LOG = 'bench/MEASUREMENTS.md';

  test(`${MANUAL} is a manual of at most 300 lines (dated runs go to ${LOG})`, () => {
    const lines = readFileSync(join(ROOT, MANUAL), 'utf8').trimEnd().split('\n').length;
    assert.ok(lines <= 300, `${MANUAL} has ${lines} lines`);
  });

  test(`links into ${MANUAL} and ${LOG}, and links out of them, name files and headings that exist`, () => {
    const pages = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', LOG, 'manifests/helm/deed/README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const targets = new Set([MANUAL, LOG]);
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(ROOT, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
      for (const [, href] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(href!)) continue;
        const [path, anchor] = href!.split('#') as [string, string | undefined];
        const file = path === '' ? page : normalize(join(dirname(page), path));
        if (!targets.has(page) && !targets.has(file)) continue;
        if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${href} (no such file)`);
        else if (anchor !== undefined && file.endsWith('.md') && !anchors(readFileSync(join(ROOT, file), 'utf8')).has(anchor)) broken.push(`${page}: ${href} (no such heading)`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
