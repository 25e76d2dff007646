// Value parsers shared by the subcommands' options, and the input files they name.
import type { KubeConfig } from '@kubernetes/client-node';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { describeFileError as describeFileErrorWords } from '../errors/file-errors.js';
import { pino } from 'pino';
import { warnRetries, type RetryNotice } from '../kube/retry-notice.js';
import { createLogger } from '../observability/logger.js';

/**
 * A file error of an input named with -f, as a phrase (src/errors/file-errors.ts): a
 * directory read as a file says how to name one.
 */
export function describeFileError(err: unknown): string {
  const words = describeFileErrorWords(err);
  return (err as NodeJS.ErrnoException)?.code === 'EISDIR' ? `${words} (name its files, or the directory with -R for its subdirectories too)` : words;
}

/**
 * The files a list of `-f` values names, as kubectl reads them: a file as given, `-` as
 * stdin, a directory as its *.yaml, *.yml and *.json files in name order (and those of its
 * subdirectories with `recursive`, kubectl's -R). A directory with none is an error.
 */
export function expandFiles(paths: string[], recursive: boolean, fail: (message: string) => Error, pattern = /\.(ya?ml|json)$/): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((entry) => (entry.isDirectory() ? (recursive ? walk(join(dir, entry.name)) : []) : pattern.test(entry.name) ? [join(dir, entry.name)] : []));
  return paths.flatMap((path) => {
    if (path === '-') return [path];
    let dir: boolean;
    try {
      dir = statSync(path).isDirectory();
    } catch (err) {
      throw fail(`cannot read ${path}: ${describeFileError(err)}`);
    }
    if (!dir) return [path];
    const files = walk(path);
    if (files.length === 0) throw fail(`${path}: no ${pattern.source.includes('json') ? '*.yaml, *.yml or *.json' : '*.yaml'} files${recursive ? '' : ' (add -R for its subdirectories)'}`);
    return files;
  });
}

/** A repeatable option; without a default, absent until given. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
}

export function parseSeconds(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value)) throw new InvalidArgumentError('must be a number of seconds');
  return n;
}

export function parseCount(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || !Number.isSafeInteger(n)) throw new InvalidArgumentError('must be a whole number, at least 1');
  return n;
}

/** An amount of memory in MiB, fractions allowed; 0 is nothing (for the lookup cache: read every lookup live). */
export function parseMebibytes(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value)) throw new InvalidArgumentError('must be a number of MiB');
  return Number(value);
}

/** Seconds that must be more than zero: a zero deadline would close every connection. */
export function parsePositiveSeconds(value: string): number {
  const n = parseSeconds(value);
  if (n <= 0) throw new InvalidArgumentError('must be more than 0 seconds');
  return n;
}

/**
 * The kubeconfig of --kubeconfig and --context, loaded on first use and once: @kubernetes/client-node
 * takes a second or more to load, which a command pays only when it talks to the API server.
 */
export function lazyKubeConfig(o: { kubeconfig?: string | undefined; context?: string | undefined }): () => Promise<KubeConfig> {
  let kc: KubeConfig | undefined;
  return async () => (kc ??= (await import('../kube/client.js')).loadKubeConfig({ kubeconfig: o.kubeconfig, context: o.context }));
}

/** How the commands that talk to the API server find it, as kubectl does (kube/client.ts, loadKubeConfig). */
export const KUBECONFIG_HELP = 'kubeconfig file; otherwise $KUBECONFIG, ~/.kube/config, then the in-cluster service account';
export const CONTEXT_HELP = "the kubeconfig context to use, in place of its current-context";
export const AS_HELP = "act as this user (kubectl's --as; the kubeconfig's identity needs RBAC's impersonate verb), e.g. the reaper's service account system:serviceaccount:deed-system:deed-reaper-ENV";

/**
 * The commands that talk to the API server say on stderr, one JSON line each, when a call
 * answered 429 is sent again after the server's Retry-After: a run that took longer than
 * usual says why.
 */
export function logRetries(component: string): (retry: RetryNotice) => void {
  let warn: ((retry: RetryNotice) => void) | undefined;
  return (retry) => {
    warn ??= warnRetries(createLogger(pino.destination(2)).child({ component })); // made at the first retry: most runs have none
    warn(retry);
  };
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A namespace name (a DNS label). */
export function parseNamespace(value: string): string {
  if (!NAMESPACE.test(value)) throw new InvalidArgumentError('must be a namespace name');
  return value;
}

/** A repeatable namespace option; a name given twice counts once. */
export function collectNamespace(value: string, previous: string[]): string[] {
  parseNamespace(value);
  return previous.includes(value) ? previous : [...previous, value];
}

/**
 * kubectl's flags for the namespaces a command works on: `-n, --namespace` (repeatable here)
 * and `-A, --all-namespaces`, which cannot go together. Unlike kubectl's, the default is
 * every namespace (a sweep over the cluster), so -A only says so.
 */
export function namespaceOption(verb: string): Option {
  return new Option('-n, --namespace <ns>', `${verb} in this namespace only (repeatable)`).argParser(collectNamespace).default([], 'every namespace');
}

export function allNamespacesOption(verb: string): Option {
  return new Option('-A, --all-namespaces', `${verb} in every namespace (the default without -n)`).conflicts('namespace');
}

/** The namespace Deed itself runs in, which the webhooks never select: `--deed-namespace` on every command that needs it. */
export function deedNamespaceOption(description: string, defaultValue: string | undefined): Option {
  const option = new Option('--deed-namespace <ns>', description).argParser(parseNamespace);
  return defaultValue === undefined ? option : option.default(defaultValue);
}

/**
 * `--namespace` in its old meaning, Deed's own namespace, on the commands that had it (serve,
 * dev, manifests): accepted for one release, with a warning on stderr, as --deed-namespace.
 * Hidden from the help; given with --deed-namespace it is a usage error.
 */
export function deprecatedNamespaceOption(command: Command, hint = ''): void {
  command.addOption(new Option('--namespace <ns>', "deprecated: Deed's own namespace; use --deed-namespace").argParser(parseNamespace).conflicts('deedNamespace').hideHelp());
  command.hook('preAction', (cmd) => {
    const value = cmd.getOptionValue('namespace') as string | undefined;
    if (value === undefined) return;
    process.stderr.write(
      `deed ${cmd.name()}: warning: --namespace is deprecated here and will be removed: it names Deed's own namespace, which is excluded from review; use --deed-namespace ${value}${hint}\n`,
    );
    cmd.setOptionValueWithSource('deedNamespace', value, 'cli');
  });
}

/**
 * `-o, --output` with the same names for the same output on every command: `text` for lines
 * or a table for people, `json` and `yaml` for programs, and a command's own where its output
 * is its own (`patch`, `junit`). `aliases` keeps an older name working (deed test's `table`).
 */
export function outputOption(formats: readonly string[], defaultFormat: string, description: string, aliases: Readonly<Record<string, string>> = {}): Option {
  const option = new Option('-o, --output <format>', description).default(defaultFormat).argParser((value: string) => {
    const format = aliases[value] ?? value;
    if (!formats.includes(format)) throw new InvalidArgumentError(`Allowed choices are ${formats.join(', ')}.`);
    return format;
  });
  option.argChoices = [...formats];
  return option;
}
