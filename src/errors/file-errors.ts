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
 * A parser's complaint about a file, on one line: YAML parsers follow it with the lines it
 * could not parse, and a kubeconfig's lines hold tokens and keys, a test file's a Secret's
 * data. The first line names the problem and where ("bad indentation of a mapping entry (11:6)").
 */
export function parseProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  // Without the quoted lines, the colon that introduced them goes too.
  return message.split('\n', 1)[0]!.trim().replace(/:$/, '');
}
