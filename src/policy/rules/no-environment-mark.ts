// The mark of pods of no environment (`<prefix>/no-environment`, selector-scope.ts) on an
// environment's object, or in the pod templates of an environment's workload, would let the
// selectors of no environment reach its pods: wherever Deed judges an environment's labels,
// the mark is refused.
import type { Finding } from '../../admission/verdict.js';
import type { StampKeys } from '../stamps/keys.js';
import { labelPath } from '../stamps/identity-stamps.js';
import { entryOf } from '../unstructured.js';

/** `at`: the path of what holds the metadata (a template's; '' for the object itself); `whose`: what never carries it, for the message. */
export function noEnvironmentMark(labels: Record<string, string>, at: string, keys: StampKeys, rule: string, whose: string): Finding[] {
  if (entryOf(labels, keys.noEnvironment) === undefined) return [];
  return [{ rule, path: `${at === '' ? '' : `${at}.`}${labelPath(keys.noEnvironment)}`, message: `marks pods of no environment; ${whose}` }];
}
