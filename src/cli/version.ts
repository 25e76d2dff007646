// `deed version`: what `deed --version` prints, or with -o json|yaml an object with the
// Node.js version too, for a bug report or a script.
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { VERSION } from '../version.js';
import { outputOption } from './options.js';

export function registerVersion(program: Command, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  program
    .command('version')
    .description('Print the version (as --version does); -o json or yaml: an object with the Node.js version too')
    .addOption(outputOption(['text', 'json', 'yaml'], 'text', 'the version alone, or an object {version, node}'))
    .action((o: { output: 'text' | 'json' | 'yaml' }) => {
      const info = { version: VERSION, node: process.version };
      write(o.output === 'json' ? `${JSON.stringify(info)}\n` : o.output === 'yaml' ? stringify(info) : `${VERSION}\n`);
    });
}
