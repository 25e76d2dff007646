// What a failed file read means, in words: raw errno names (ENOENT, EISDIR) say nothing to
// most users. One wording for every reader of files (the policy, `deed test` files, keys,
// certificates, kubeconfigs, the CLI's -f): it lives apart from the CLI so that src/config
// and src/server, which the CLI imports, can use it too.
import { readFileSync } from 'node:fs';

const FILE_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'the name is too long',
};

/** A file error as a phrase ("no such file or directory", not "ENOENT"); the message of any other error. */
export function describeFileError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const words = e?.code !== undefined ? FILE_ERRORS[e.code] : undefined;
  if (words !== undefined) return words;
  // Node's messages lead with the errno name ("EIO: i/o error, read"): keep its words.
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return message.replace(/^[A-Z][A-Z0-9]+: /, '').replace(/, (open|read|stat|lstat|scandir) '.*'$/, '');
}

/** The one line a failed read gets: "cannot read the policy file x.yaml: no such file or directory". */
export function cannotRead(what: string, file: string, err: unknown): string {
  return `cannot read ${what === '' ? '' : `${what} `}${file}: ${describeFileError(err)}`;
}

/** A text file's content, or an Error whose message is the one line of cannotRead(). */
export function readTextFile(what: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(cannotRead(what, file, err));
  }
}

/**
 * A parser's complaint about a file, without a byte of the file: a kubeconfig's lines hold
 * tokens and keys, a test file's a Secret's data. YAML parsers quote the lines they could not
 * parse after their first line, and the yaml package quotes source in the first line too
 * ("Not a YAML token: <the token>"), so its errors are named by their code and position;
 * js-yaml's by its reason (fixed text, at most a tag or an alias name) and position.
 */
export function parseProblem(err: unknown): string {
  const e = err as { code?: unknown; linePos?: Array<{ line: number; col: number }>; reason?: unknown; mark?: { line?: number; column?: number } };
  if (typeof e?.code === 'string' && Array.isArray(e.linePos) && e.linePos[0] !== undefined)
    return `${e.code.toLowerCase().replaceAll('_', ' ')} at line ${e.linePos[0].line}, column ${e.linePos[0].col}`;
  if (typeof e?.reason === 'string' && typeof e.mark?.line === 'number' && typeof e.mark.column === 'number') return `${e.reason} (${e.mark.line + 1}:${e.mark.column + 1})`;
  if (err instanceof SyntaxError) return jsonProblem(err);
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n', 1)[0]!.trim().replace(/:$/, '');
}

/**
 * A JSON.parse error without the input: V8 (Node 21 and later) quotes the text around an
 * unexpected token (`Unexpected token 'c', ..."password":c2Vj..." is not valid JSON`), a
 * Secret's data in a review body. What names a position is kept.
 */
export function jsonProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const position = / at position (\d+)/.exec(message)?.[1];
  // The token itself is the input's (Node 20: "Unexpected token c in JSON at position 20").
  if (/^Unexpected token\b/.test(message)) return `Unexpected token${position === undefined ? '' : ` at position ${position}`}`;
  // V8 quotes the input in double quotes; its own words quote only punctuation ("Expected ',' or '}'").
  return message.includes('"') ? 'not valid JSON' : message.split('\n', 1)[0]!;
}
