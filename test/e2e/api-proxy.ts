// An HTTP proxy between `deed serve` and kube-apiserver, for the lookup cache's cases: Deed's
// kubeconfig names it (plain HTTP on the loopback, Deed's bearer token as before) and it
// forwards every request to the API server over TLS, unchanged. A test can cut the watches
// that are open (their connections destroyed, as a network drop would), hold the watches
// Deed opens again, and release them: sent on as they are, or answered by the proxy itself
// with the 410 Gone the API server sends to a watch resumed at a resourceVersion its watch
// cache no longer holds. It records every request, and the first bytes of each answer.
import { createServer, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  at: number;
  method: string;
  path: string;
  query: URLSearchParams;
  /** The answer: its status and first bytes (a list's resourceVersion, a watch's first events). */
  answer?: { status: number; head: string };
}

export interface ApiProxy {
  /** http://127.0.0.1:PORT */
  url: string;
  requests: ProxiedRequest[];
  /** Destroys every open watch, on Deed's side and the API server's; how many there were. */
  cut(): number;
  /** From now on a watch is held, unanswered, until release(). */
  hold(): void;
  /** The watches held now. */
  held(): ProxiedRequest[];
  /**
   * Stops holding, and forwards the held watches; with `gone`, answers each itself as the API
   * server answers a watch resumed too far back: 200, then one ERROR event, a Status with code
   * 410 and reason Expired ("too old resource version"), then the end of the answer.
   */
  release(o?: { gone?: boolean }): void;
  /**
   * Review helper: from now on the events of every watch (open or new) whose path is in `paths`
   * are kept back, the connection left open (a watch slower than its writes, as a stalled TCP
   * stream or a lagging watch cache makes it): the watcher stays current and stale.
   */
  stall(paths: string[]): void;
  /** Sends on what stall() kept back, in order, and stops keeping. */
  flow(): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'host'];

export async function startApiProxy(upstream: { server: string; ca: string }): Promise<ApiProxy> {
  const agent = new Agent({ keepAlive: true, ca: upstream.ca });
  const open = new Set<{ client: ServerResponse; upstream: ClientRequest }>();
  const waiting = new Map<ProxiedRequest, (gone: boolean) => void>();
  const requests: ProxiedRequest[] = [];
  let holding = false;
  const stalled = new Set<string>();
  const kept: Array<{ path: string; res: ServerResponse; chunks: Buffer[]; ended: boolean }> = [];

  const forward = (req: IncomingMessage, res: ServerResponse, url: URL, seen: ProxiedRequest): ClientRequest => {
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.includes(k)));
    const up = request(new URL(`${url.pathname}${url.search}`, upstream.server), { method: req.method, headers, agent }, (answer) => {
      const back = Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !HOP_BY_HOP.includes(k)));
      res.writeHead(answer.statusCode ?? 502, back);
      // A watch's headers come before its first event, which may be minutes away: sent on now, as the API server sent them.
      res.flushHeaders();
      const recorded = (seen.answer = { status: answer.statusCode ?? 0, head: '' });
      answer.on('data', (chunk: Buffer) => {
        if (recorded.head.length < 2000) recorded.head += chunk.toString('utf8');
      });
      if (url.searchParams.get('watch') !== 'true') {
        answer.pipe(res);
        return;
      }
      const entry = { path: url.pathname, res, chunks: [] as Buffer[], ended: false };
      kept.push(entry);
      answer.on('data', (chunk: Buffer) => {
        if (stalled.has(entry.path) || entry.chunks.length > 0) entry.chunks.push(chunk);
        else res.write(chunk);
      });
      answer.on('end', () => {
        if (stalled.has(entry.path) || entry.chunks.length > 0) entry.ended = true;
        else res.end();
      });
    });
    up.on('error', () => res.destroy());
    if (req.method === 'GET' || req.method === 'HEAD') up.end();
    else req.pipe(up);
    return up;
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const seen: ProxiedRequest = { at: Date.now(), method: req.method ?? 'GET', path: url.pathname, query: url.searchParams };
    requests.push(seen);
    if (url.searchParams.get('watch') !== 'true') {
      forward(req, res, url, seen);
      return;
    }
    let gone = false;
    const go = (expired: boolean) => {
      if (gone) return;
      if (expired) {
        const rv = Number(url.searchParams.get('resourceVersion') ?? '0');
        const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${rv} (${rv + 1})`, reason: 'Expired', code: 410 };
        const event = `${JSON.stringify({ type: 'ERROR', object: status })}\n`;
        seen.answer = { status: 200, head: event };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(event);
        return;
      }
      const entry = { client: res, upstream: forward(req, res, url, seen) };
      open.add(entry);
      res.once('close', () => open.delete(entry));
    };
    res.once('close', () => {
      gone = true;
      waiting.delete(seen);
    });
    if (holding) waiting.set(seen, go);
    else go(false);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    cut() {
      const n = open.size;
      for (const { client, upstream: up } of open) {
        up.destroy();
        client.destroy();
      }
      open.clear();
      return n;
    },
    hold() {
      holding = true;
    },
    held: () => [...waiting.keys()],
    release(o = {}) {
      holding = false;
      const go = [...waiting.values()];
      waiting.clear();
      for (const g of go) g(o.gone === true);
    },
    stall(paths) {
      for (const p of paths) stalled.add(p);
    },
    flow() {
      stalled.clear();
      for (const e of kept) {
        for (const c of e.chunks.splice(0)) if (!e.res.destroyed) e.res.write(c);
        if (e.ended && !e.res.destroyed) e.res.end();
      }
    },
    async close() {
      holding = false;
      waiting.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
