// The marks of pods of no environment (`<prefix>/no-environment`, selector-scope.ts; and a
// runner's, `<prefix>/runner`, pod/runner-mark.ts) on an environment's object, or in the pod
// templates of an environment's workload: the first would let the selectors of no
// environment reach its pods, the second would pass them for a runner to whatever selects
// runners. Wherever Deed judges an environment's labels, both are refused.
import type { Finding } from '../../admission/verdict.js';
import type { StampKeys } from '../stamps/keys.js';
import { labelPath } from '../stamps/identity-stamps.js';
import { entryOf } from '../unstructured.js';

/** `at`: the path of what holds the metadata (a template's; '' for the object itself); `whose`: what never carries it, for the message. */
export function noEnvironmentMark(labels: Record<string, string>, at: string, keys: StampKeys, rule: string, whose: string): Finding[] {
  const marks: Array<[string, string]> = [
    [keys.noEnvironment, 'marks pods of no environment'],
    [keys.runner, 'marks a runner pod, which is of no environment'],
  ];
  return marks
    .filter(([key]) => entryOf(labels, key) !== undefined)
    .map(([key, what]) => ({ rule, path: `${at === '' ? '' : `${at}.`}${labelPath(key)}`, message: `${what}; ${whose}` }));
}
