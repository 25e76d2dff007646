// No module of src/ imports, through any chain (type-only imports included), a module that
// imports it back: a cycle hides which concern depends on which.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from './cli-process.js';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const path = join(dir, f);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('no import cycle in src/, type-only imports included', () => {
  const all = files(join(ROOT, 'src'));
  const known = new Set(all);
  const graph = new Map(
    all.map((f) => [
      f,
      [...readFileSync(f, 'utf8').matchAll(/^(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]/gm)].map((m) => resolve(dirname(f), m[1]!.replace(/\.js$/, '.ts'))).filter((d) => known.has(d)),
    ]),
  );
  const cycles: string[] = [];
  const onPath: string[] = [];
  const done = new Set<string>();
  const visit = (f: string) => {
    onPath.push(f);
    for (const d of graph.get(f) ?? []) {
      const at = onPath.indexOf(d);
      if (at >= 0) cycles.push([...onPath.slice(at), d].map((p) => relative(ROOT, p)).join(' -> '));
      else if (!done.has(d)) visit(d);
    }
    onPath.pop();
    done.add(f);
  };
  for (const f of all) if (!done.has(f)) visit(f);
  assert.deepEqual(cycles, []);
});
