// Hostnames as the Gateway API and Ingress match them: an exact name, or `*.suffix`, which
// takes every name under the suffix (Gateway API: one label or more; an Ingress wildcard takes
// one label, read here as more: an overestimate, never an under). Istio's hosts may start with
// `*` and label characters (`*lpha.example.org`), a suffix Istio and Envoy match as written, or
// be `*` alone, every name: any leading `*` is read as a suffix match. Case does not matter. Pure.
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../admission/types.js';
import type { HostnamesFact } from './kinds.js';
import { entryOf, isRec, valuesAt } from './unstructured.js';

/** A hostname or `*.` pattern as a policy declares one: DNS labels, lower case, an optional leading `*.`. */
export const HOSTNAME_PATTERN = /^(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/** Whether some name both `a` and `b` take: equal, one under the other's wildcard (`*` alone is every name), or both wildcards one within the other. */
export function hostnamesOverlap(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y) return true;
  const wild = (h: string) => (h.startsWith('*') ? h.slice(1) : undefined); // the suffix: `.domain`, Istio's `lpha.domain`, or "" (every name)
  const wx = wild(x);
  const wy = wild(y);
  if (wx !== undefined && (wy !== undefined ? wy.endsWith(wx) || wx.endsWith(wy) : y.endsWith(wx))) return true;
  return wy !== undefined && wx === undefined && x.endsWith(wy);
}

/**
 * external-dns's annotations that name hostnames, comma-separated, each published as a DNS record
 * pointing at the object's addresses (or at its `target` annotation's): the current prefix and
 * the one before v0.22. Each is also a serving annotation (below): changing it publishes a name.
 */
export const EXTERNAL_DNS_HOSTNAMES: readonly string[] = ['external-dns.kubernetes.io/hostname', 'external-dns.kubernetes.io/internal-hostname', 'external-dns.alpha.kubernetes.io/hostname', 'external-dns.alpha.kubernetes.io/internal-hostname'];
const EXTERNAL_DNS_FOLLOWER = "external-dns would point the name's DNS record at this object's addresses";

/** The label under a name D whose TXT record (or a CNAME to one) answers an ACME CA's DNS-01 challenge for D. */
export const ACME_CHALLENGE_LABEL = '_acme-challenge.';

/**
 * What a DNS record's name takes: its trailing dot (the root's) is the same name (external-dns's
 * endpoints trim it), and a record at `_acme-challenge.D` has an ACME CA issue for D, and for
 * `*.D`, whose challenge stands there too (RFC 8555), to whoever answers there (a CNAME into a
 * zone of the writer's; reviewer-106 F2, reviewer-107 F2). An empty name takes nothing.
 */
export function dnsRecordNames(h: string): string[] {
  const relative = h.endsWith('.') ? h.slice(0, -1) : h;
  if (!relative.toLowerCase().startsWith(ACME_CHALLENGE_LABEL)) return relative === '' ? [] : [relative];
  const challenged = relative.slice(ACME_CHALLENGE_LABEL.length);
  return challenged === '' ? [] : [challenged, `*.${challenged}`];
}

/**
 * The names in an external-dns annotation's value as external-dns reads them: it drops every
 * space, trims the whitespace around what is left (Go's unicode.IsSpace: a YAML block scalar's
 * newline, a tab, a no-break space; JavaScript's \s lacks U+0085, which Go counts), splits at
 * commas, and each is a DNS record's name (dnsRecordNames; reviewer-105 F1).
 */
export function dnsAnnotationNames(value: string): string[] {
  return value
    .replaceAll(' ', '')
    .replace(/^[\s\u0085]+|[\s\u0085]+$/g, '')
    .split(',')
    .flatMap(dnsRecordNames);
}

/** The hostnames `obj` names at the kind table's `hostnames` paths, each with where it stands; what is not a string routes nothing. */
export function specHostnamesOf(fact: HostnamesFact, obj: KubeObject | null | undefined): Array<{ host: string; at: string }> {
  if (fact.dnsRecords !== undefined) return dnsRecordsOf(fact.paths, fact.dnsRecords.recordType, obj);
  const wildcard = fact.wildcardWhen !== undefined && valuesAt(obj, fact.wildcardWhen).some(({ value }) => value === true);
  return fact.paths.flatMap((path) => valuesAt(obj, path).flatMap(({ value, at }) => (typeof value === 'string' && value !== '' ? [{ host: wildcard ? `*.${value}` : value, at }] : [])));
}

/** The names of DNS records at `paths` (each `list[].name`), as dnsRecordNames reads them; an NS record's also as the wildcard under it, the zone it delegates. */
function dnsRecordsOf(paths: readonly string[], recordType: string, obj: KubeObject | null | undefined): Array<{ host: string; at: string }> {
  return paths.flatMap((path) => {
    const cut = path.lastIndexOf('.');
    const leaf = path.slice(cut + 1);
    return valuesAt(obj, path.slice(0, cut)).flatMap(({ value: record, at }) => {
      if (!isRec(record) || typeof record[leaf] !== 'string') return [];
      const hosts = dnsRecordNames(record[leaf]);
      const delegated = record[recordType] === 'NS' ? hosts.filter((h) => !h.startsWith('*.')).map((h) => `*.${h}`) : [];
      return [...hosts, ...delegated].map((host) => ({ host, at: `${at}.${leaf}` }));
    });
  });
}

/** Every hostname `obj` names: in its spec (specHostnamesOf) and, where external-dns reads them on its kind, in its annotations; each with what would follow it. */
export function hostnamesOf(fact: HostnamesFact, obj: KubeObject | null | undefined): Array<{ host: string; at: string; follower: string }> {
  const spec = specHostnamesOf(fact, obj).map((h) => ({ ...h, follower: fact.follower }));
  if (fact.dnsAnnotations !== true) return spec;
  const annotations = obj?.metadata.annotations ?? {};
  const published = EXTERNAL_DNS_HOSTNAMES.flatMap((key) => {
    const value = entryOf(annotations, key);
    return typeof value === 'string' ? dnsAnnotationNames(value).map((host) => ({ host, at: `metadata.annotations[${JSON.stringify(key)}]`, follower: EXTERNAL_DNS_FOLLOWER })) : [];
  });
  return [...spec, ...published];
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
 * cert-manager's ingress-shim annotations (object-references.ts reads the issuer they name): on
 * an Ingress or a Gateway, they have cert-manager make a Certificate for its hosts, whatever
 * class serves it (reviewer-106 F1).
 */
const CERT_MANAGER_SHIM_ANNOTATIONS: readonly string[] = ['cert-manager.io/issuer', 'cert-manager.io/cluster-issuer', 'cert-manager.io/issuer-kind', 'cert-manager.io/issuer-group', 'kubernetes.io/tls-acme'];

/**
 * Annotations that choose which controller serves an object, or what it publishes, as its spec
 * would: an Ingress kept idle under a class no controller serves goes live when this changes
 * (reviewer-102 F5), external-dns publishes the names its annotations gain, and cert-manager
 * has a certificate issued for the hosts of an Ingress that gains an issuer, so an UPDATE that
 * changes one is judged as one that changes the spec.
 */
export const SERVING_ANNOTATIONS: readonly string[] = ['kubernetes.io/ingress.class', 'projectcontour.io/ingress.class', 'contour.heptio.com/ingress.class', ...EXTERNAL_DNS_HOSTNAMES, ...CERT_MANAGER_SHIM_ANNOTATIONS];

/** Whether an UPDATE keeps the spec and the serving annotations as they were: it names nothing new (the install's policy asks the same in CEL, HOSTNAMES_SPEC_KEPT). */
export function keepsWhatServes(before: KubeObject | null | undefined, after: KubeObject | null | undefined): boolean {
  return isDeepStrictEqual(before?.spec, after?.spec) && SERVING_ANNOTATIONS.every((k) => entryOf(before?.metadata.annotations ?? {}, k) === entryOf(after?.metadata.annotations ?? {}, k));
}
