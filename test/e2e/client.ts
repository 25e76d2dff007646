// How the suite talks to the API server: raw HTTPS calls as a given identity (status and
// body, so a test reads the API server's own answer), and kubectl as a given identity
// (apply, patch, server-side apply, dry runs: the paths users really take).
import { execFile } from 'node:child_process';
import { request } from 'node:https';
import { join } from 'node:path';

/** Who makes a request: a bearer token the API server authenticates. */
export interface Identity {
  name: string;
  token: string;
  /** kubeconfig file for kubectl and `deed reap`, written by the suite. */
  kubeconfig?: string;
  /** Act as this user (the kubelet, the scheduler): the token's holder impersonating it (raw calls only). */
  impersonate?: { user: string; groups: string[] };
}

export interface Server {
  server: string;
  ca: string;
}

export interface ApiAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  /** The answer's warnings (HTTP Warning headers, `299 - "text"`): what kubectl prints as `Warning:`. */
  warnings: string[];
}

export function api(
  cluster: Server,
  who: Identity,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
  accept = 'application/json',
): Promise<ApiAnswer> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const url = new URL(path, cluster.server);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        ca: cluster.ca,
        headers: {
          authorization: `Bearer ${who.token}`,
          accept,
          ...(who.impersonate === undefined ? {} : { 'impersonate-user': who.impersonate.user, 'impersonate-group': who.impersonate.groups }),
          ...(payload === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = undefined;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON (readyz says "ok")
          }
          const warnings: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2)
            if (res.rawHeaders[i]!.toLowerCase() === 'warning') warnings.push(res.rawHeaders[i + 1]!.replace(/^\d+ \S+ "(.*)"$/, '$1'));
          resolve({ status: res.statusCode ?? 0, body: parsed, text, warnings });
        });
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.end(payload);
  });
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a binary to completion without blocking the event loop (servers may live in this process). */
export function run(command: string, args: string[], input?: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { env, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

export function kubectl(bin: string, who: Identity, args: string[], input?: string): Promise<Run> {
  if (!who.kubeconfig) throw new Error(`identity ${who.name} has no kubeconfig`);
  return run(join(bin, 'kubectl'), ['--kubeconfig', who.kubeconfig, ...args], input);
}
