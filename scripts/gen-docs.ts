// `npm run docs`: rewrites docs/configuration.md and docs/rules.md from their sources, and
// the generated tables in docs/install.md (webhook rules) and docs/cli.md (every flag).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { CONFIGURATION_DOC, configurationDoc, RULES_DOC, rulesDoc } from './docs.js';
import { GENERATED_TABLES, withTable } from './doc-tables.js';

const root = join(import.meta.dirname, '..');
for (const [file, text] of [
  [CONFIGURATION_DOC, configurationDoc()],
  [RULES_DOC, rulesDoc()],
] as const) {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
  console.log(`wrote ${file}`);
}
// The tables inside hand-written pages: only what is between their markers is rewritten.
for (const table of GENERATED_TABLES) {
  const file = join(root, table.file);
  writeFileSync(file, withTable(readFileSync(file, 'utf8'), table));
  console.log(`wrote the ${table.name} table in ${table.file}`);
}
