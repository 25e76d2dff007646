// The runner mark (`<prefix>/runner: <environment>`): a runner pod is unstamped and of no
// environment, so it carries the mark of no environment's pods, and the selectors of a
// requester of no environment would reach it: a tenant's NetworkPolicy could open its
// ingress, a PodDisruptionBudget hold up its eviction. So Deed writes the runner mark on
// every pod of no environment whose service account the policy maps to an environment (what
// ownership.ts calls a runner), and a tenant's selectors exclude it (selector-scope.ts). A
// platform's NetworkPolicy may require it to reach one environment's runners. Only Deed
// writes it: a pod that is no runner, or another environment's, never carries it.
import type { KubeObject } from '../../admission/types.js';
import type { Finding, PatchOperation } from '../../admission/verdict.js';
import type { Policy } from '../policy.js';
import { serviceAccountEnvironment } from '../requester/identity.js';
import { labelPath } from '../stamps/identity-stamps.js';
import { RULES } from '../rules/catalog.js';
import { entryOf, isRec } from '../unstructured.js';
import { serviceAccountOf } from './service-account.js';
import jsonpatch from 'fast-json-patch';

/** The environment a pod of no environment runs for: the one its service account is mapped to (undefined: none). */
export function runnerOf(pod: KubeObject, namespace: string, policy: Policy): string | undefined {
  return isRec(pod.spec) ? serviceAccountEnvironment(namespace, serviceAccountOf(pod.spec), policy) : serviceAccountEnvironment(namespace, 'default', policy);
}

/**
 * At the CREATE of a pod of no environment: the op that writes the runner mark where it is
 * due and absent. A mark the pod already carries is judged, not rewritten
 * (`runnerMarkFindings`): a pod that stops matching its controller's selector would be
 * replaced without end.
 */
export function runnerMarkOps(pod: KubeObject, namespace: string, policy: Policy): PatchOperation[] {
  const runner = runnerOf(pod, namespace, policy);
  const key = policy.keys.runner;
  if (runner === undefined || entryOf(pod.metadata.labels ?? {}, key) !== undefined) return [];
  return isRec(pod.metadata.labels)
    ? [{ op: 'add', path: `/metadata/labels/${jsonpatch.escapePathComponent(key)}`, value: runner }]
    : [{ op: 'add', path: '/metadata/labels', value: { [key]: runner } }];
}

/** A pod of no environment carries the runner mark of the environment its service account is mapped to, and no other. */
export function runnerMarkFindings(pod: KubeObject, namespace: string, policy: Policy): Finding[] {
  const key = policy.keys.runner;
  const given = entryOf(pod.metadata.labels ?? {}, key);
  const runner = runnerOf(pod, namespace, policy);
  if (given === runner) return [];
  const message =
    runner === undefined
      ? `is admission-owned and marks a runner pod; a pod whose service account no environment is mapped to never carries it (got ${JSON.stringify(String(given).slice(0, 80))})`
      : given === undefined
        ? `is admission-owned: a pod running as a service account of environment "${runner}" carries ${JSON.stringify(runner)} (the mutating webhook adds it; was it bypassed?)`
        : `is admission-owned: given ${JSON.stringify(String(given).slice(0, 80))}, expected ${JSON.stringify(runner)}, the environment its service account is mapped to`;
  return [{ rule: RULES.stampConflict.id, path: labelPath(key), message }];
}
