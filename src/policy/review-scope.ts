// The review scope: the namespaces the installed webhooks select. Inside it Deed reviews
// every write by anyone but the excluded requesters (Deed itself, kube-system's
// controllers, whose objects come from templates Deed judged), so a stamp there proves
// "Deed wrote this". Outside it anyone can write stamps (and anyone who can reach the
// webhook port can get a signed patch for any namespace), so readers (the reaper, key
// usage, audits, lookups) must not trust a stamp there. One definition: the manifests
// render their namespaceSelector from it, and every reader asks it.
import type { V1LabelSelector } from '@kubernetes/client-node';

/** Namespaces opt in with this label. */
export const SANDBOX_LABEL = 'deed.dev/sandbox';
export const SANDBOX_LABEL_VALUE = 'enabled';
/** Set by the API server from the namespace's name: nobody can forge it. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Namespaces never selected, whatever their labels: kube-system and Deed's own. */
export function excludedNamespaces(deedNamespace: string): string[] {
  return [...new Set(['kube-system', deedNamespace])];
}

/** The webhooks' namespaceSelector. */
export function namespaceSelector(deedNamespace: string): V1LabelSelector {
  return {
    matchExpressions: [
      { key: SANDBOX_LABEL, operator: 'In', values: [SANDBOX_LABEL_VALUE] },
      { key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: excludedNamespaces(deedNamespace) },
    ],
  };
}

export interface NamespaceFacts {
  name: string;
  labels?: Record<string, string> | undefined;
}

/**
 * Whether the installed webhooks review writes in this namespace: the same test the API
 * server applies with namespaceSelector. The name is the namespace's own (the label the
 * API server sets equals it), so a namespace object without that label still answers.
 */
export function inReviewScope(ns: NamespaceFacts, deedNamespace: string): boolean {
  const labels = ns.labels ?? {};
  if (!Object.hasOwn(labels, SANDBOX_LABEL) || labels[SANDBOX_LABEL] !== SANDBOX_LABEL_VALUE) return false;
  return !excludedNamespaces(deedNamespace).includes(ns.name);
}

/** The label selector, as a string for list calls (`labelSelector=`), that finds the opted-in namespaces. */
export const OPTED_IN_SELECTOR = `${SANDBOX_LABEL}=${SANDBOX_LABEL_VALUE}`;

/** What a decision knows of one namespace's place in the scope: data the server gathered, no I/O. */
export type ScopeAnswer = { state: 'in' } | { state: 'out'; why: string } | { state: 'unknown'; reason: string };

export interface ReviewScope {
  of(namespace: string): ScopeAnswer;
}

/**
 * Every namespace in scope: for a local run with no cluster to say which namespaces are
 * opted in (`npm start`, `deed review`), where Deed signs with a local key.
 */
export const EVERY_NAMESPACE: ReviewScope = { of: () => ({ state: 'in' }) };

/** The answer for a namespace from what a watch of the opted-in namespaces holds of it (undefined: none). */
export function scopeAnswer(ns: NamespaceFacts | undefined, deedNamespace: string): ScopeAnswer {
  if (ns === undefined) return { state: 'out', why: `not labelled ${OPTED_IN_SELECTOR}` };
  if (inReviewScope(ns, deedNamespace)) return { state: 'in' };
  return excludedNamespaces(deedNamespace).includes(ns.name)
    ? { state: 'out', why: 'excluded from the webhooks (kube-system and Deed\'s own namespace)' }
    : { state: 'out', why: `not labelled ${OPTED_IN_SELECTOR}` };
}
