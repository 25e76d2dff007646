// The mark of pods of no environment (`<prefix>/no-environment`, selector-scope.ts) on an
// environment's object, in the pod templates of an environment's workload, or on a runner
// pod (unstamped, but its service account's environment's: ownership.ts), would let the
// selectors of no environment reach its pods: wherever Deed judges an environment's labels,
// the mark is refused.
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { runnerEnvironment } from '../ownership.js';
import type { Policy } from '../policy.js';
import type { StampKeys } from '../stamps/keys.js';
import { labelPath } from '../stamps/identity-stamps.js';
import { entryOf } from '../unstructured.js';
import { RULES } from './catalog.js';

/** `at`: the path of what holds the metadata (a template's; '' for the object itself); `whose`: what never carries it, for the message. */
export function noEnvironmentMark(labels: Record<string, string>, at: string, keys: StampKeys, rule: string, whose: string): Finding[] {
  if (entryOf(labels, keys.noEnvironment) === undefined) return [];
  return [{ rule, path: `${at === '' ? '' : `${at}.`}${labelPath(keys.noEnvironment)}`, message: `marks pods of no environment; ${whose}` }];
}

/** A pod of no environment's creator that runs as an environment's service account is that environment's runner: it never carries the mark. */
export function runnerMark(pod: KubeObject, namespace: string, policy: Policy): Finding[] {
  const environment = runnerEnvironment(pod, namespace, policy);
  if (environment === undefined) return [];
  return noEnvironmentMark(pod.metadata.labels ?? {}, '', policy.keys, RULES.stampConflict.id, `a runner of environment "${environment}" (it runs as a service account of that environment) never carries it`);
}
