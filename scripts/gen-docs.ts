// `npm run docs`: rewrites docs/configuration.md and docs/rules.md from their sources.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CONFIGURATION_DOC, configurationDoc, RULES_DOC, rulesDoc } from './docs.js';

const root = join(import.meta.dirname, '..');
for (const [file, text] of [
  [CONFIGURATION_DOC, configurationDoc()],
  [RULES_DOC, rulesDoc()],
] as const) {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
  console.log(`wrote ${file}`);
}
