// `deed certs`: a CA and a serving certificate for the webhook Service, for installs
// without cert-manager. Prints the CA bundle in base64, as `caBundle` wants it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { generateCertificates } from '../server/certificates.js';
import { collect } from './options.js';

export function registerCerts(program: Command): void {
  program
    .command('certs')
    .description('Generate a CA and a serving certificate; print the CA bundle (base64) for caBundle')
    .requiredOption('--out <dir>', 'directory for ca.crt, ca.key, tls.crt and tls.key')
    .option('--dns <name>', 'subject alternative name, e.g. deed.deed-system.svc (repeatable, at least one)', collect, [])
    .option('--days <n>', 'validity of the serving certificate in days', parseDays, 365)
    .option('--force', 'overwrite certificates already in --out')
    .action(async (o: CertsFlags) => {
      if (o.dns.length === 0) throw new Error('give at least one --dns name; the API server calls the webhook Service as SERVICE.NAMESPACE.svc');
      // A second run would replace the CA every installed caBundle trusts.
      if (!o.force && existsSync(join(o.out, 'ca.crt'))) throw new Error(`${join(o.out, 'ca.crt')} exists; pass --force to replace the CA (every caBundle must then be updated)`);
      const files = await generateCertificates(o.out, [...new Set(o.dns)], o.days);
      process.stderr.write(`deed: wrote ${files.caFile}, ${join(o.out, 'ca.key')}, ${files.certFile}, ${files.keyFile}; caBundle follows\n`);
      process.stdout.write(`${Buffer.from(readFileSync(files.caFile)).toString('base64')}\n`);
    });
}

function parseDays(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 3650) throw new InvalidArgumentError('must be a whole number of days (1-3650)');
  return n;
}

interface CertsFlags {
  out: string;
  dns: string[];
  days: number;
  force?: boolean;
}
