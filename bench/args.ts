// The benches' flags: node:util parseArgs, with `--help` (the script's opening comment and its
// flags with their defaults) and a parse error that says what to run, not a stack trace.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** `parseArgs(config)` for the bench at `script` (its `import.meta.url`). */
export function benchArgs<T extends ParseArgsConfig>(script: string, config: T): ReturnType<typeof parseArgs<T>> {
  const usage = () => usageOf(script, config);
  // Not past `--`: what follows is another program's (bench:scale passes it to deed serve).
  const given = process.argv.slice(2);
  const own = given.includes('--') ? given.slice(0, given.indexOf('--')) : given;
  if (own.some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(usage());
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${usage()}`);
    process.exit(2);
  }
}

/** The script's opening comment, then each flag with its default. */
function usageOf(script: string, config: ParseArgsConfig): string {
  const lines = readFileSync(fileURLToPath(script), 'utf8').split('\n');
  const header = lines.slice(0, Math.max(0, lines.findIndex((l) => !l.startsWith('//')))).map((l) => l.replace(/^\/\/ ?/, ''));
  const flags = Object.entries(config.options ?? {}).map(([name, o]) => {
    const value = o.type === 'string' ? ' VALUE' : '';
    const fallback = o.default !== undefined ? ` (default: ${JSON.stringify(o.default)})` : '';
    return `  --${name}${value}${o.multiple === true ? ' (repeatable)' : ''}${fallback}`;
  });
  return [...header, '', 'Flags:', ...flags, '  --help', ''].join('\n');
}
