// `deed certs`: a CA and a serving certificate for the webhook Service, for installs
// without cert-manager. Prints the CA bundle in base64, as `caBundle` wants it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { InvalidArgumentError, type Command } from 'commander';
import { generateCertificates, withLoopback } from '../server/certificates.js';
import { collect } from './options.js';

export function registerCerts(program: Command): void {
  program
    .command('certs')
    .description('Generate a CA and a serving certificate; print the CA bundle (base64) for caBundle')
    .requiredOption('--out <dir>', 'directory for ca.crt, ca.key, tls.crt and tls.key')
    .option('--dns <name>', 'subject alternative name, e.g. deed.deed-system.svc (repeatable; localhost also adds 127.0.0.1 and ::1)', collect, [])
    .option('--ip <address>', 'IP address SAN, for a webhook registered by URL at an address (repeatable)', (v: string, prev: string[]) => collect(parseIp(v), prev), [])
    .option('--days <n>', 'validity of the serving certificate in days', parseDays, 365)
    .option('--force', 'overwrite certificates already in --out')
    .action(async (o: CertsFlags) => {
      if (o.dns.length + o.ip.length === 0) throw new Error('give at least one --dns name (or --ip address); the API server calls the webhook Service as SERVICE.NAMESPACE.svc');
      // A second run would replace the CA every installed caBundle trusts.
      if (!o.force && existsSync(join(o.out, 'ca.crt'))) throw new Error(`${join(o.out, 'ca.crt')} exists; pass --force to replace the CA (every caBundle must then be updated)`);
      const files = await generateCertificates(o.out, withLoopback([...o.dns, ...o.ip]), o.days);
      process.stderr.write(`deed: wrote ${files.caFile}, ${join(o.out, 'ca.key')}, ${files.certFile}, ${files.keyFile}; caBundle follows\n`);
      process.stdout.write(`${Buffer.from(readFileSync(files.caFile)).toString('base64')}\n`);
    });
}

function parseIp(value: string): string {
  if (isIP(value) === 0) throw new InvalidArgumentError('must be an IPv4 or IPv6 address');
  return value;
}

function parseDays(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 3650) throw new InvalidArgumentError('must be a whole number of days (1-3650)');
  return n;
}

interface CertsFlags {
  out: string;
  dns: string[];
  ip: string[];
  days: number;
  force?: boolean;
}
