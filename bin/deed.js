#!/usr/bin/env node
// Runs the compiled CLI (`npm run build` writes dist/). From a source checkout,
// `npx tsx src/cli/main.ts` runs the same thing without a build.
import '../dist/cli/main.js';
