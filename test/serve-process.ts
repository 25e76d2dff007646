// Starts `deed serve` as a child process, as an operator would, and reads its log lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { FIXTURE_POLICY } from './helpers.js';

export const ROOT = join(import.meta.dirname, '..');

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** The plain-HTTP probe and metrics port, with --metrics-port. */
  metricsPort?: number;
  dir: string;
  ca: string;
  lines: string[];
  logs(): Array<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Where a restarted server finds its port, certificates and policy again (the end-to-end suite). */
export interface ServeLocation {
  port: number;
  dir: string;
  /** An existing policy file; `config` is ignored when given. */
  configFile: string;
}

export async function startServe(extraArgs: string[] = [], config: unknown = FIXTURE_POLICY, env: Record<string, string> = {}, at?: ServeLocation): Promise<ServeProcess> {
  const dir = at?.dir ?? mkdtempSync(join(tmpdir(), 'deed-serve-'));
  let configFile = at?.configFile;
  if (configFile === undefined) {
    configFile = join(dir, 'policy.yaml');
    writeFileSync(configFile, stringify(config));
  }
  const port = String(at?.port ?? 0);
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'serve', '--port', port, '--cert-dir', join(dir, 'certs'), '--config', configFile, ...extraArgs], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DEED_LOG_LEVEL: 'info', ...env },
  });
  const lines: string[] = [];
  let buffered = '';
  let metricsUrl: string | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    // A server that did not start in time is killed: left running, it would hold its port (the end-to-end suite restarts Deed on a fixed one).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`deed serve did not start within 20 s:\n${lines.join('\n')}`));
    }, 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        const parsed = JSON.parse(line) as { msg?: string; url?: string; metricsUrl?: string };
        if (parsed.msg === 'deed is serving' && parsed.url) {
          clearTimeout(timer);
          metricsUrl = parsed.metricsUrl;
          resolve(parsed.url);
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => lines.push(`stderr: ${chunk.toString('utf8')}`));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`deed serve exited with ${code}:\n${lines.join('\n')}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    url,
    port: Number(new URL(url).port),
    ...(metricsUrl ? { metricsPort: Number(new URL(metricsUrl).port) } : {}),
    dir,
    // Empty when the test brings its own certificate (--tls-cert).
    ca: existsSync(join(dir, 'certs', 'ca.crt')) ? readFileSync(join(dir, 'certs', 'ca.crt'), 'utf8') : '',
    lines,
    logs: () => lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>),
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  };
}

export interface HttpAnswer {
  status: number;
  body: string;
  json<T = unknown>(): T;
  alpn?: string | false;
}

/** POSTs over HTTP/1.1 with the CA verified (the hostname must be in the certificate). */
export function post(server: { port: number; ca: string }, path: string, body: string | Buffer, contentType = 'application/json', host = 'localhost'): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', servername: host, port: server.port, path, method: 'POST', ca: server.ca, headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const alpn = (res.socket as import('node:tls').TLSSocket).alpnProtocol ?? false;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text, json: () => JSON.parse(text), alpn });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Announces a body of `length` bytes and sends only its first KiB, as a client would
 * before the server refuses it on the Content-Length alone; no write races the refusal.
 */
export function postAnnounced(server: { port: number; ca: string }, path: string, length: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', servername: 'localhost', port: server.port, path, method: 'POST', ca: server.ca, headers: { 'content-type': 'application/json', 'content-length': length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body: text, json: () => JSON.parse(text) });
        });
      },
    );
    req.on('error', (err) => (req.writableEnded ? undefined : reject(err)));
    req.write(Buffer.alloc(1024, 0x20));
  });
}

/** GETs over HTTPS; `agent: false` for a connection of its own, closed after the answer (it then holds none of the server's connection slots). */
export function get(server: { port: number; ca: string }, path: string, options: { agent?: false } = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', servername: 'localhost', port: server.port, path, ca: server.ca, ...options }, (res) => readAnswer(res, resolve));
    req.on('error', reject);
    req.end();
  });
}

/** POSTs over HTTP/2, as kube-apiserver does when the server offers h2. */
export function postH2(server: { port: number; ca: string }, path: string, body: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const session = connect(`https://localhost:${server.port}`, { ca: server.ca });
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json' });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status, body: text, json: () => JSON.parse(text), alpn: session.alpnProtocol ?? false });
      session.close();
    });
    stream.on('error', reject);
    stream.end(body);
  });
}

/** GETs over plain HTTP (the probe and metrics port). */
export function getPlain(port: number, path: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => readAnswer(res, resolve));
    req.on('error', reject);
    req.end();
  });
}

/** Collects an HTTP/1.1 answer's body. */
function readAnswer(res: import('node:http').IncomingMessage, resolve: (a: HttpAnswer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    resolve({ status: res.statusCode ?? 0, body: text, json: () => JSON.parse(text) });
  });
}
