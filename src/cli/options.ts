// Value parsers shared by the subcommands' options.
import { InvalidArgumentError } from 'commander';

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
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

/** Seconds that must be more than zero: a zero deadline would close every connection. */
export function parsePositiveSeconds(value: string): number {
  const n = parseSeconds(value);
  if (n <= 0) throw new InvalidArgumentError('must be more than 0 seconds');
  return n;
}

/** How the commands that talk to the API server find it, as kubectl does (kube/client.ts, loadKubeConfig). */
export const KUBECONFIG_HELP = 'kubeconfig file; otherwise $KUBECONFIG, ~/.kube/config, then the in-cluster service account';
export const CONTEXT_HELP = "the kubeconfig context to use, in place of its current-context";
export const AS_HELP = "act as this user (kubectl's --as; the kubeconfig's identity needs RBAC's impersonate verb), e.g. the reaper's service account system:serviceaccount:deed-system:deed-reaper-ENV";
