// Schema errors as a compiler gives them: `FILE:LINE:COL: field: message`, with a
// did-you-mean for a key the schema does not know or a value outside its choices. The
// location comes from the YAML document's node ranges (yaml's parseDocument and
// LineCounter), the valid keys from the zod schema itself, so neither list is kept by hand.
import { closest, distance } from 'fastest-levenshtein';
import { isMap, isScalar, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { z } from 'zod';

export type Path = ReadonlyArray<PropertyKey>;

/** A parsed YAML text and where it came from, for locating the nodes an issue names. */
export interface YamlSource {
  file: string;
  doc: Document;
  lines: LineCounter;
  /** Where the validated value sits in the document (a policy inline in a test file: ['policy']). */
  prefix?: Path;
}

export function parseYamlSource(text: string, file: string): YamlSource {
  const lines = new LineCounter();
  return { file, doc: parseDocument(text, { lineCounter: lines }), lines };
}

// The parts of a zod schema's definition this walk reads; every wrapper keeps its inner type in one of these.
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  getter?: () => z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** The object schemas a value at `path` must match (several under a union). */
function schemasAt(schema: z.ZodType, path: Path): z.ZodType[] {
  const def = defOf(schema);
  const inner = def.innerType ?? def.in ?? def.getter?.();
  if (inner !== undefined) return schemasAt(inner, path);
  if (def.type === 'union') return (def.options ?? []).flatMap((o) => schemasAt(o, path));
  if (path.length === 0) return [schema];
  const [head, ...rest] = path;
  if (def.type === 'object' && typeof head === 'string' && def.shape !== undefined && Object.hasOwn(def.shape, head)) return schemasAt(def.shape[head]!, rest);
  if (def.type === 'array' && def.element !== undefined) return schemasAt(def.element, rest);
  if (def.type === 'record' && def.valueType !== undefined) return schemasAt(def.valueType, rest);
  return [];
}

/** The keys the schema accepts for the object at `path`. */
export function keysAt(schema: z.ZodType, path: Path): string[] {
  return [...new Set(schemasAt(schema, path).flatMap((s) => Object.keys(defOf(s).shape ?? {})))];
}

/** The closest of `candidates` to a mistyped `word`, when it is close enough to be what was meant. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  if (candidates.length === 0 || word === '') return undefined;
  const folded = candidates.find((c) => c.toLowerCase() === word.toLowerCase());
  if (folded !== undefined) return folded;
  const best = closest(word, [...candidates]);
  // A third of the word may differ (two letters of "grnats"), else the guess is noise.
  return distance(word, best) <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

function valueAt(input: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node !== null && typeof node === 'object' && Object.hasOwn(node, key) ? (node as Record<PropertyKey, unknown>)[key] : undefined), input);
}

/** LINE:COL (1-based) of the node at `path`, or of the nearest ancestor the document has; of the key itself with `key`. */
function locate(src: YamlSource, path: Path, key?: string): string | undefined {
  const full = [...(src.prefix ?? []), ...path];
  for (let n = full.length; n >= 0; n--) {
    const node = src.doc.getIn(full.slice(0, n), true) as Node | null | undefined;
    if (!node?.range) continue;
    let offset = node.range[0];
    if (key !== undefined && n === full.length && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
      if (isScalar(pair?.key) && pair.key.range) offset = pair.key.range[0];
    }
    const { line, col } = src.lines.linePos(offset);
    return `${line}:${col}`;
  }
  return undefined;
}

function fieldName(path: Path): string {
  return path.length > 0 ? path.map(String).join('.') : '(top level)';
}

/**
 * One line per problem: `FILE:LINE:COL: field: message (did you mean ...?)` when the input
 * came from a YAML source, `field: message` otherwise. An unknown key is named at the key.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], schema: z.ZodType, input: unknown, src?: YamlSource): string[] {
  const at = (path: Path, key?: string) => {
    const where = src !== undefined ? locate(src, path, key) : undefined;
    return where !== undefined ? `${src!.file}:${where}: ` : '';
  };
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const known = keysAt(schema, issue.path);
      return issue.keys.map((key) => {
        const guess = didYouMean(key, known);
        return `${at(issue.path, key)}${fieldName([...issue.path, key])}: unknown key${guess !== undefined ? ` (did you mean ${guess}?)` : known.length > 0 ? ` (known here: ${known.join(', ')})` : ''}`;
      });
    }
    let hint = '';
    if (issue.code === 'invalid_value') {
      const value = valueAt(input, issue.path);
      const guess = typeof value === 'string' ? didYouMean(value, issue.values.filter((v): v is string => typeof v === 'string')) : undefined;
      if (guess !== undefined) hint = ` (did you mean ${guess}?)`;
    }
    return [`${at(issue.path)}${fieldName(issue.path)}: ${issue.message}${hint}`];
  });
}
