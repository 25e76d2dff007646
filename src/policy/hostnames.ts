// Hostnames as the Gateway API and Ingress match them: an exact name, or `*.suffix`, which
// takes every name under the suffix (Gateway API: one label or more; an Ingress wildcard takes
// one label, read here as more: an overestimate, never an under), or `*` alone (an Istio host),
// which takes every name. Case does not matter. Pure.
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../admission/types.js';
import type { HostnamesFact } from './kinds.js';
import { entryOf, valuesAt } from './unstructured.js';

/** A hostname or `*.` pattern as a policy declares one: DNS labels, lower case, an optional leading `*.`. */
export const HOSTNAME_PATTERN = /^(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/** Whether some name both `a` and `b` take: equal, either `*`, one under the other's wildcard, or both wildcards one within the other. */
export function hostnamesOverlap(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y || x === '*' || y === '*') return true;
  const wild = (h: string) => (h.startsWith('*.') ? h.slice(1) : undefined); // `.suffix`
  const wx = wild(x);
  const wy = wild(y);
  if (wx !== undefined && (wy !== undefined ? wy.endsWith(wx) || wx.endsWith(wy) : y.endsWith(wx))) return true;
  return wy !== undefined && wx === undefined && x.endsWith(wy);
}

/** The hostnames `obj` names at the kind table's `hostnames` paths, each with where it stands; what is not a string routes nothing. */
export function hostnamesOf(fact: HostnamesFact, obj: KubeObject | null | undefined): Array<{ host: string; at: string }> {
  const wildcard = fact.wildcardWhen !== undefined && valuesAt(obj, fact.wildcardWhen).some(({ value }) => value === true);
  return fact.paths.flatMap((path) => valuesAt(obj, path).flatMap(({ value, at }) => (typeof value === 'string' && value !== '' ? [{ host: wildcard ? `*.${value}` : value, at }] : [])));
}

/** The first of `environments` whose declared hostnames `host` overlaps, and the pattern it overlaps. */
export function declaredHostnameOf(host: string, environments: ReadonlyArray<{ id: string; hostnames: readonly string[] }>): { environment: string; pattern: string } | undefined {
  for (const e of environments) {
    const pattern = e.hostnames.find((h) => hostnamesOverlap(host, h));
    if (pattern !== undefined) return { environment: e.id, pattern };
  }
  return undefined;
}

/**
 * Annotations that choose which controller serves an object, as its spec would: an Ingress
 * kept idle under a class no controller serves goes live when this changes (reviewer-102 F5),
 * so an UPDATE that changes it is judged as one that changes the spec.
 */
export const SERVING_ANNOTATIONS: readonly string[] = ['kubernetes.io/ingress.class', 'projectcontour.io/ingress.class', 'contour.heptio.com/ingress.class'];

/** Whether an UPDATE keeps the spec and the serving annotations as they were: it names nothing new (the install's policy asks the same in CEL, HOSTNAMES_SPEC_KEPT). */
export function keepsWhatServes(before: KubeObject | null | undefined, after: KubeObject | null | undefined): boolean {
  return isDeepStrictEqual(before?.spec, after?.spec) && SERVING_ANNOTATIONS.every((k) => entryOf(before?.metadata.annotations ?? {}, k) === entryOf(after?.metadata.annotations ?? {}, k));
}
