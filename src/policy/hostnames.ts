// Hostnames as the Gateway API and Ingress match them: an exact name, or `*.suffix`, which
// takes every name under the suffix (Gateway API: one label or more; an Ingress wildcard takes
// one label, read here as more: an overestimate, never an under). Case does not matter. Pure.

/** A hostname or `*.` pattern as a policy declares one: DNS labels, lower case, an optional leading `*.`. */
export const HOSTNAME_PATTERN = /^(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/** Whether some name both `a` and `b` take: equal, one under the other's wildcard, or both wildcards one within the other. */
export function hostnamesOverlap(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y) return true;
  const wild = (h: string) => (h.startsWith('*.') ? h.slice(1) : undefined); // `.suffix`
  const wx = wild(x);
  const wy = wild(y);
  if (wx !== undefined && (wy !== undefined ? wy.endsWith(wx) || wx.endsWith(wy) : y.endsWith(wx))) return true;
  return wy !== undefined && wx === undefined && x.endsWith(wy);
}
