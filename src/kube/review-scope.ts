// The review scope as the API server knows it now: the opted-in namespaces, judged by the
// one definition the manifests render their namespaceSelector from (policy/review-scope).
import { inReviewScope, OPTED_IN_SELECTOR } from '../policy/review-scope.js';
import type { KubeClient } from './client.js';

/** The names of the namespaces whose writes Deed reviews; a list that fails throws. */
export async function readReviewScope(client: KubeClient, deedNamespace: string): Promise<Set<string>> {
  const inScope = new Set<string>();
  for await (const page of client.listNamespaces(OPTED_IN_SELECTOR)) {
    for (const ns of page) if (inReviewScope(ns, deedNamespace)) inScope.add(ns.name);
  }
  return inScope;
}
