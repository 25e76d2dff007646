// `deed manifests`: prints the whole in-cluster install as multi-document YAML.
import { X509Certificate } from 'node:crypto';
import { readTextFile } from '../errors/file-errors.js';
import { isIP } from 'node:net';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ReportApi } from '../audit/report.js';
import { loadConfig } from '../config/load.js';
import { ATTESTATION_SECRET, DEFAULT_AUDIT_SCHEDULE, DEFAULT_NAMESPACE, renderManifests, TLS_SECRET, type ManifestOptions } from '../install/manifests.js';
import { toYamlStream } from '../install/yaml.js';
import { VERSION } from '../version.js';
import { collect, deedNamespaceOption, deprecatedNamespaceOption } from './options.js';

export const DEFAULT_IMAGE = `ghcr.io/deed-dev/deed:${VERSION}`;

export function registerManifests(program: Command): void {
  const manifests = program.command('manifests');
  deprecatedNamespaceOption(manifests);
  manifests
    .description('Print the Kubernetes objects that install Deed (multi-document YAML)')
    .addOption(deedNamespaceOption("Deed's own namespace, where it is installed (excluded from review)", DEFAULT_NAMESPACE))
    .option('--image <ref>', 'container image', DEFAULT_IMAGE)
    .option('--ca-bundle <file>', 'CA certificate (PEM, or its base64) that signed the serving certificate; see `deed certs`')
    .option('--config <file>', 'policy file to embed in the ConfigMap (validated); a default policy otherwise')
    .option('--reaper-environment <id>', 'add a reaper CronJob for this environment (repeatable)', collect, [])
    .option('--reaper-namespace <env=ns>', "confine that environment's reaper to this namespace (repeatable): it sweeps and may delete only in the namespaces named, by RoleBindings; every namespace otherwise", collectReaperNamespace, {})
    .option('--reaper-schedule <cron>', "the reaper CronJobs' schedule", '*/10 * * * *')
    .option('--client-ca-configmap <name>', "require the API server's client certificate (deed serve --client-ca): a ConfigMap in Deed's namespace holding its CA under ca.crt", parseConfigMapName)
    .option('--webhook-from <cidr>', "admit the webhook port only from this CIDR, the API server's source (repeatable); from anywhere otherwise", collectCidr, [])
    .option('--audit', 'add the audit CronJob (deed audit --write-reports), its service account and RBAC', false)
    .option('--audit-schedule <cron>', "the audit CronJob's schedule", DEFAULT_AUDIT_SCHEDULE)
    .addOption(new Option('--audit-report-api <api>', 'the reports the audit writes').choices(['wgpolicyk8s', 'openreports']).default('wgpolicyk8s'))
    .option('--audit-crds', 'with --audit: also the PolicyReport CRD (leave out where Kyverno or Policy Reporter installed it)', false)
    .option('--tenant-role', 'add the ClusterRole deed-sandbox-tenant: edit without reads of Secrets or service-account tokens, for tenants of a shared namespace (bind it with a RoleBinding there)', false)
    .option('--no-cache-secrets', 'the webhook reads Secrets it looks up with get, instead of caching their metadata with list and watch (which RBAC lets read Secret data)')
    .action((o: ManifestFlags) => {
      if (o.auditCrds && !o.audit) throw new Error('--audit-crds goes with --audit');
      const opts: ManifestOptions = {
        namespace: o.deedNamespace,
        image: o.image,
        reaperEnvironments: o.reaperEnvironment,
        reaperNamespaces: o.reaperNamespace,
        reaperSchedule: o.reaperSchedule,
        ...(o.audit ? { audit: { schedule: o.auditSchedule, reportApi: o.auditReportApi, installCrd: o.auditCrds } } : {}),
        cacheSecrets: o.cacheSecrets,
        tenantRole: o.tenantRole,
      };
      if (o.caBundle) opts.caBundle = readCaBundle(o.caBundle);
      if (o.clientCaConfigmap) opts.clientCaConfigMap = o.clientCaConfigmap;
      if (o.webhookFrom.length > 0) opts.webhookFrom = o.webhookFrom;
      if (o.config) {
        loadConfig(o.config); // names the offending field before anything is printed
        opts.policy = readTextFile('policy file', o.config);
      }
      process.stdout.write(toYamlStream(renderManifests(opts), installHeader(o.deedNamespace, Boolean(o.caBundle))));
    });
}

/** What the objects need that `deed manifests` never prints: private keys. */
export function installHeader(namespace: string, hasCaBundle: boolean): string {
  return [
    'Deed install. Two Secrets must exist in the namespace; they are never rendered here:',
    `  kubectl -n ${namespace} create secret generic ${ATTESTATION_SECRET} --from-literal=key="$(openssl rand -hex 32)"`,
    '  (one entry per attestation key id: with attestation.keys in the policy, one --from-literal=ID=... each; see docs/operations.md, "Rotating the attestation key")',
    `  kubectl -n ${namespace} create secret tls ${TLS_SECRET} --cert=certs/tls.crt --key=certs/tls.key`,
    `(deed certs --out certs --dns deed.${namespace}.svc prints the caBundle for --ca-bundle.)`,
    ...(hasCaBundle ? [] : ['No --ca-bundle was given: patch caBundle into both webhook configurations, or let cert-manager inject it.']),
  ].join('\n');
}

/** Base64 of the PEM bundle; the file may hold the PEM itself or its base64. */
export function readCaBundle(file: string): string {
  const text = readTextFile('the CA bundle (--ca-bundle)', file).trim();
  const pem = text.includes('-----BEGIN CERTIFICATE-----') ? text : Buffer.from(text, 'base64').toString('utf8');
  try {
    new X509Certificate(pem);
  } catch {
    throw new Error(`--ca-bundle ${file}: not a PEM certificate (nor the base64 of one)`);
  }
  return Buffer.from(`${pem.trim()}\n`).toString('base64');
}

function parseConfigMapName(value: string): string {
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(value)) throw new InvalidArgumentError('must be a ConfigMap name (a DNS subdomain)');
  return value;
}

/** An IPv4 or IPv6 CIDR, as a NetworkPolicy ipBlock takes it. */
function collectCidr(value: string, previous: string[]): string[] {
  const [address, prefix, ...rest] = value.split('/');
  const family = isIP(address ?? '');
  const bits = Number(prefix);
  if (rest.length > 0 || family === 0 || !/^\d+$/.test(prefix ?? '') || bits > (family === 4 ? 32 : 128)) throw new InvalidArgumentError('must be a CIDR, e.g. 10.0.0.0/24');
  return [...previous, value];
}

function collectReaperNamespace(value: string, previous: Record<string, string[]>): Record<string, string[]> {
  const m = /^([^=]+)=([^=]+)$/.exec(value);
  if (m === null) throw new InvalidArgumentError('must be ENVIRONMENT=NAMESPACE');
  return { ...previous, [m[1]!]: [...(previous[m[1]!] ?? []), m[2]!] };
}

interface ManifestFlags {
  clientCaConfigmap?: string;
  webhookFrom: string[];
  deedNamespace: string;
  image: string;
  caBundle?: string;
  config?: string;
  reaperEnvironment: string[];
  reaperNamespace: Record<string, string[]>;
  reaperSchedule: string;
  audit: boolean;
  auditSchedule: string;
  auditReportApi: ReportApi;
  auditCrds: boolean;
  cacheSecrets: boolean;
  tenantRole: boolean;
}
