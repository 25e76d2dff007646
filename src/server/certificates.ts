// Serving certificates: generated on first start for local runs (a CA plus a serving
// certificate, with selfsigned), or read from files an operator provides. Files replaced
// on disk, as a Secret volume update does, are picked up for new connections.
import { readTextFile } from '../errors/file-errors.js';
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { existsSync, mkdirSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { replaceFile } from '../files/replace-file.js';
import { dirname, join } from 'node:path';

export interface CertificatePair {
  cert: string;
  key: string;
}

export interface GeneratedCertificates {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

const DAY_MS = 86_400_000;

export function defaultSans(dns: string[]): string[] {
  return [...new Set(['localhost', '127.0.0.1', '::1', ...dns])];
}

/**
 * The names a certificate is made for. `localhost` brings the loopback addresses it resolves
 * to: a client that connects by address (a webhook registered by URL at 127.0.0.1) checks the
 * certificate's IP SANs, never its DNS names.
 */
export function withLoopback(names: string[]): string[] {
  return [...new Set(names.some((n) => n.toLowerCase() === 'localhost') ? [...names, '127.0.0.1', '::1'] : names)];
}

/** An IP address goes in an IP SAN (TLS clients match addresses only there), any other name in a DNS SAN. */
function altName(name: string): { type: 7; ip: string } | { type: 2; value: string } {
  return isIP(name) !== 0 ? { type: 7, ip: name } : { type: 2, value: name };
}

/** Generates a CA and a serving certificate signed by it (EC P-256, SHA-256) into `dir`. */
export async function generateCertificates(dir: string, sans: string[], validDays = 365): Promise<GeneratedCertificates> {
  // Loaded on first use: it costs about 15 MiB of RSS and startup time in every process
  // that finds its certificates already on disk.
  const { generate } = await import('selfsigned');
  mkdirSync(dir, { recursive: true });
  const now = Date.now();
  const ca = await generate([{ name: 'commonName', value: 'deed-webhook-ca' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 10 * 365 * DAY_MS),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const serving = await generate([{ name: 'commonName', value: sans[0] ?? 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + validDays * DAY_MS),
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: sans.map(altName) },
    ],
  });
  const files = { dir, caFile: join(dir, 'ca.crt'), certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  replaceFile(join(dir, 'ca.key'), ca.private, 0o600);
  replaceFile(files.caFile, ca.cert, 0o644);
  replaceFile(files.keyFile, serving.private, 0o600);
  replaceFile(files.certFile, serving.cert, 0o644);
  return files;
}

/** True when `certFile` exists, is valid for another day, and names every SAN asked for. */
export function certificateCovers(certFile: string, sans: string[]): boolean {
  if (!existsSync(certFile)) return false;
  try {
    const x = new X509Certificate(readFileSync(certFile));
    const names = new Set((x.subjectAltName ?? '').split(', ').map((s) => s.replace(/^(DNS:|IP Address:)/, '').toLowerCase()));
    const ipv6Loopback = names.has('0:0:0:0:0:0:0:1') || names.has('::1');
    const covered = sans.every((s) => names.has(s.toLowerCase()) || (s === '::1' && ipv6Loopback));
    return covered && Date.parse(x.validTo) - Date.now() > DAY_MS;
  } catch {
    return false;
  }
}

export function readPair(certFile: string, keyFile: string): CertificatePair {
  return { cert: readTextFile('the serving certificate', certFile), key: readTextFile('the serving key', keyFile) };
}

export function certificateNotAfter(certPem: string): Date {
  return new Date(new X509Certificate(certPem).validTo);
}

/**
 * Watches the certificate and key for replacement and calls `onChange` with the new
 * pair. Watches the directories (Secret volumes swap a `..data` symlink, which a watch
 * on the file itself misses) and also polls, since inotify is not everywhere.
 */
export function watchPair(
  certFile: string,
  keyFile: string,
  onChange: (pair: CertificatePair) => void,
  onError: (err: unknown) => void,
  pollMs = 10_000,
): () => void {
  let current = safeRead();
  let timer: NodeJS.Timeout | undefined;
  function safeRead(): string | undefined {
    try {
      const pair = readPair(certFile, keyFile);
      return pair.cert + pair.key;
    } catch {
      return undefined;
    }
  }
  function check(): void {
    const next = safeRead();
    if (next === undefined || next === current) return;
    try {
      const pair = readPair(certFile, keyFile);
      onChange(pair);
      current = next;
    } catch (err) {
      onError(err); // a half-written pair: keep serving the old one, try again on the next event
    }
  }
  function soon(): void {
    clearTimeout(timer);
    timer = setTimeout(check, 100); // the cert and key are replaced as two writes: settle first
  }
  const watchers: FSWatcher[] = [];
  for (const dir of new Set([dirname(certFile), dirname(keyFile)])) {
    try {
      const w = watch(dir, soon);
      w.on('error', onError);
      watchers.push(w);
    } catch (err) {
      onError(err);
    }
  }
  const poll = setInterval(check, pollMs);
  poll.unref();
  return () => {
    clearInterval(poll);
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
