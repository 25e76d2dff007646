#!/usr/bin/env node
// `deed`: the compiled CLI in dist/ (the published package; a clone after `npm run build`).
// A clone that was never built runs the TypeScript sources through tsx, a devDependency that
// `npm install` and `npm ci` put there, so `npx deed` works straight after either.
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
const source = new URL('../src/cli/main.ts', import.meta.url);

if (existsSync(compiled)) {
  await import(compiled.href);
} else if (existsSync(source)) {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write('deed: dist/ is not built and tsx is not installed: run `npm install` (or `npm run build`) first\n');
    process.exit(2);
  }
  register();
  await import(source.href);
} else {
  process.stderr.write('deed: this package has neither dist/ nor src/: reinstall it\n');
  process.exit(2);
}
