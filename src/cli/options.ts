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
