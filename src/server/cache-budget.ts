// How much memory the lookup cache may hold (its stores' estimate, lookup-facts.ts): a share
// of the container's memory limit (its cgroup, as Node reads it), else of the machine's, or
// what `--cache-memory` says. The rest of the limit is the process's own: its code, the
// reviews in flight (bodies are bounded by --body-budget) and the garbage collector's room.
// bench/scale.ts measures the RSS a cached object costs against this estimate
// (docs/operations.md, "Sizing").
import { totalmem } from 'node:os';

/** The share of the memory limit the cache's estimate may reach before a kind is shed. */
export const CACHE_SHARE_OF_LIMIT = 0.25;

const MiB = 1024 * 1024;

export interface CacheBudget {
  bytes: number;
  /** Where it comes from, for the log line. */
  source: string;
}

/** `flagMiB`: --cache-memory; `constrained`: the cgroup's limit as process.constrainedMemory() reports it (0 or huge when there is none). */
export function cacheBudget(flagMiB: number | undefined, constrained: number = process.constrainedMemory?.() ?? 0, machine: number = totalmem()): CacheBudget {
  if (flagMiB !== undefined) return { bytes: Math.floor(flagMiB * MiB), source: '--cache-memory' };
  const limited = constrained > 0 && constrained < machine;
  const limit = limited ? constrained : machine;
  const share = `${CACHE_SHARE_OF_LIMIT * 100}% of the ${limited ? "container's memory limit" : "machine's memory (no container limit)"} (${Math.round(limit / MiB)} MiB)`;
  return { bytes: Math.floor(limit * CACHE_SHARE_OF_LIMIT), source: share };
}
