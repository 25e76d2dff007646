// `deed audit`: judges what already exists under the current policy, in one sweep over the
// namespaces Deed reviews, and (with --write-reports) writes one PolicyReport per
// namespace. Results go to stdout (-o text|json|yaml), the run's summary (start, duration,
// counts by result) to stderr as one JSON log line. Exit status: 0 when the run completed
// (whatever it found), 1 when a list or a report write failed, 2 on a usage error.
import { Option, type Command } from 'commander';
import { stringify } from 'yaml';
import type { ObjectAudit } from '../audit/judge.js';
import type { ReportApi, RunSummary } from '../audit/report.js';
import { DEFAULT_NAMESPACE } from '../install/manifests.js';
import { createLogger } from '../observability/logger.js';
import { compilePolicy } from '../policy/policy.js';
import { parsePositiveSeconds } from './reap.js';
import { addFromClusterOptions, loadPolicyInputs, type PolicySourceFlags } from './policy-source.js';
import { allNamespacesOption, AS_HELP, CONTEXT_HELP, deedNamespaceOption, KUBECONFIG_HELP, lazyKubeConfig, namespaceOption, outputOption } from './options.js';
import { warnRetries } from '../kube/retry-notice.js';
import { pino } from 'pino';

type Output = 'text' | 'json' | 'yaml';

interface AuditFlags extends PolicySourceFlags {
  namespace: string[];
  deedNamespace: string;
  kubeconfig?: string;
  context?: string;
  as?: string;
  writeReports: boolean;
  reportApi: ReportApi;
  timeout: number;
  output: Output;
  quiet: boolean;
}

/** Reasons quote API-server messages and client-written values: one result, one line. */
function oneLine(text: string): string {
  return text.replace(/\p{Cc}/gu, ' ');
}

export function formatObject(a: ObjectAudit, output: Output): string {
  if (output === 'json') return `${JSON.stringify({ type: 'object', ...a })}\n`;
  if (output === 'yaml') return `---\n${stringify({ type: 'object', ...a })}`;
  const where = `${a.object.kind} ${a.object.namespace}/${a.object.name}`;
  return a.results.map((r) => `${oneLine(`${r.result.padEnd(4)} ${where} [${r.rule}] ${r.message}`)}\n`).join('');
}

export function formatRunSummary(s: RunSummary, output: Output): string {
  if (output === 'json') return `${JSON.stringify({ type: 'summary', ...s })}\n`;
  if (output === 'yaml') return `---\n${stringify({ type: 'summary', ...s })}`;
  return (
    `summary: ${s.objects} objects in ${s.namespaces} namespaces, started ${s.startedAt}, ${s.durationSeconds} s: ` +
    `pass ${s.pass}, fail ${s.fail}, warn ${s.warn}, error ${s.error}, skip ${s.skip}; reports written ${s.reportsWritten}, deleted ${s.reportsDeleted}, failed ${s.reportErrors}\n`
  );
}

export function registerAudit(program: Command, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  const command = program
    .command('audit')
    .description('Judge existing sandbox objects under the current policy, and optionally write PolicyReports')
    .addOption(namespaceOption('audit'))
    .addOption(allNamespacesOption('audit'))
    .addOption(deedNamespaceOption("Deed's own namespace (never reviewed)", DEFAULT_NAMESPACE))
    .option('--kubeconfig <file>', KUBECONFIG_HELP)
    .option('--context <name>', CONTEXT_HELP)
    .option('--as <user>', AS_HELP)
    .option('--config <file>', 'policy file (the one the webhook runs); the embedded default otherwise', process.env.DEED_CONFIG)
    .option('--attestation-key <file>', "one attestation key file, in place of the policy's key ring");
  addFromClusterOptions(command)
    .option('--write-reports', "write one report per namespace (replacing Deed's previous one) and delete Deed's where nothing remains", false)
    .addOption(new Option('--report-api <api>', 'the report kind: wgpolicyk8s.io/v1alpha2 PolicyReport, or openreports.io/v1alpha1 Report').choices(['wgpolicyk8s', 'openreports']).default('wgpolicyk8s'))
    .option('--timeout <seconds>', 'deadline of each API call', parsePositiveSeconds, 10)
    .addOption(outputOption(['text', 'json', 'yaml'], 'text', 'one line per result, one JSON line per object, or one YAML document per object; then the summary'))
    .option('--quiet', "print the run's summary only, not each object's results (the CronJob: the reports hold them)", false)
    .action(async (o: AuditFlags) => {
      const timeoutMs = o.timeout * 1000;
      const log = createLogger(pino.destination(2)).child({ component: 'audit' });
      const onRetry = warnRetries(log);
      // Loaded here: @kubernetes/client-node takes a second or more to load.
      const loadKube = lazyKubeConfig(o);
      const { config, keyRing } = await loadPolicyInputs(o, { command: 'audit', withKeys: true, deedNamespace: o.deedNamespace, timeoutMs, kubeConfig: loadKube, onRetry });
      const [{ createKubeClient }, { createReportStore }, { audit }] = await Promise.all([import('../kube/client.js'), import('../kube/reports.js'), import('../audit/sweep.js')]);
      const kc = await loadKube();
      let failures = 0;
      const summary = await audit({
        client: createKubeClient(kc, { timeoutMs, impersonate: o.as, labelPrefix: config.labelPrefix, onRetry }),
        ctx: { policy: compilePolicy(config), keyRing: keyRing! },
        now: Date.now,
        deedNamespace: o.deedNamespace,
        namespaces: o.namespace,
        onObject: (a) => {
          if (!o.quiet) write(formatObject(a, o.output));
        },
        onError: (message) => {
          failures++;
          log.error({ error: oneLine(message) }, 'audit step failed');
        },
        ...(o.writeReports ? { reports: { store: createReportStore(kc, o.reportApi, timeoutMs, { impersonate: o.as, onRetry }), api: o.reportApi } } : {}),
      });
      write(formatRunSummary(summary, o.output));
      // The metrics of a run with no process to scrape: its log line, and each report's summary.
      log.info({ ...summary, reportApi: o.writeReports ? o.reportApi : undefined }, 'audit finished');
      if (failures > 0) process.exitCode = 1;
    });
}
