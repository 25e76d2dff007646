// Defensive readers over unstructured objects (a review's object, a pod spec, a template).
// The API server validated the object before a validating webhook sees it, but Deed must
// not crash on a body that lies: odd shapes read as absent, never as an exception.
export type Rec = Record<string, unknown>;

export function isRec(v: unknown): v is Rec {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function recs(v: unknown): Rec[] {
  return Array.isArray(v) ? v.filter(isRec) : [];
}

export function field(r: Rec, key: string): unknown {
  return Object.hasOwn(r, key) ? r[key] : undefined;
}

export function text(r: Rec, key: string): string | undefined {
  const v = field(r, key);
  return typeof v === 'string' ? v : undefined;
}

/** The string entries of a map field (labels, annotations); anything else is left out. */
export function stringMap(r: Rec | undefined, key: string): Record<string, string> {
  const v = r === undefined ? undefined : field(r, key);
  if (!isRec(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** A map's own entry: a key such as "constructor" must never reach Object.prototype. */
export function entryOf(map: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}
