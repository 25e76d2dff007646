// The attacker's side of `npm run fault` section 5, in a process of its own so that its
// TLS work does not delay the real-review generator's clock. Opens the flood, waits until
// the server has closed every connection (or the watch ends), writes what it saw as JSON.
//   tsx scripts/hostile-flood.ts PORT CA_FILE CONNECTIONS WATCH_SECONDS OUT_FILE [LOCAL_ADDRESS]
import { readFileSync, writeFileSync } from 'node:fs';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { pathToFileURL } from 'node:url';

export type Kind = 'partial header (TLS, HTTP/1.1)' | 'no TLS (TCP only)' | 'HTTP/2 stream left open';

export interface Conn {
  kind: Kind;
  /** ms since the flood began: the client's connection was up (or failed). */
  openedAt?: number;
  closedAt?: number;
  /** The server closed it before the handshake or the first write was done. */
  refused: boolean;
  destroy(): void;
}

/** The share of each kind in a flood of n: 40% partial headers, 40% no TLS, 20% HTTP/2 (2,000 : 2,000 : 1,000 of 5,000). */
export function split(n: number): Array<[Kind, number]> {
  const tls = Math.round(n * 0.4);
  const tcp = Math.round(n * 0.4);
  return [
    ['partial header (TLS, HTTP/1.1)', tls],
    ['no TLS (TCP only)', tcp],
    ['HTTP/2 stream left open', n - tls - tcp],
  ];
}

function open(kind: Kind, port: number, ca: string, t0: number, localAddress?: string): Promise<Conn> {
  const tcp = () => netConnect({ host: '127.0.0.1', port, ...(localAddress ? { localAddress } : {}) });
  const now = () => performance.now() - t0;
  return new Promise((resolve) => {
    const conn: Conn = { kind, refused: false, destroy: () => {} };
    const up = () => {
      conn.openedAt ??= now();
      resolve(conn);
    };
    const closed = (beforeUp: boolean) => {
      if (conn.closedAt !== undefined) return;
      conn.closedAt = now();
      if (beforeUp) {
        conn.refused = true;
        up();
      }
    };
    if (kind === 'HTTP/2 stream left open') {
      const session: ClientHttp2Session = http2Connect(`https://localhost:${port}`, { ca, settings: { enablePush: false }, createConnection: () => tlsConnect({ socket: tcp(), servername: 'localhost', ca, ALPNProtocols: ['h2'] }) });
      conn.destroy = () => session.destroy();
      session.on('error', () => {});
      session.once('connect', () => {
        const stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=10s', 'content-type': 'application/json' });
        stream.on('error', () => {});
        stream.write('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{'); // and never ends
        up();
      });
      session.once('close', () => closed(conn.openedAt === undefined));
      return;
    }
    let socket: Socket;
    if (kind === 'no TLS (TCP only)') {
      socket = tcp();
      socket.once('connect', up);
    } else {
      socket = tlsConnect({ socket: tcp(), servername: 'localhost', ca, ALPNProtocols: ['http/1.1'] }, () => {
        socket.write('POST /mutate?timeout=10s HTTP/1.1\r\nHost: deed.deed-system.svc\r\nContent-Type: appl');
        up();
      });
    }
    conn.destroy = () => socket.destroy();
    socket.on('error', () => {});
    socket.once('close', () => closed(conn.openedAt === undefined));
  });
}


// Run as a script (not when hostile-connections.ts imports the kinds from here).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [port, caFile, count, watch, outFile, localAddress] = process.argv.slice(2);
  const ca = readFileSync(caFile!, 'utf8');
  const n = Number(count);
  const t0 = performance.now();
  const kinds = split(n);
  const order: Kind[] = [];
  for (let i = 0; order.length < n; i++) for (const [kind, k] of kinds) if (i < k) order.push(kind);
  const conns: Conn[] = [];
  let next = 0;
  // 100 connection attempts in flight at a time, as fast as they complete.
  await Promise.all(
    Array.from({ length: 100 }, async () => {
      while (next < order.length) conns.push(await open(order[next++]!, Number(port), ca, t0, localAddress));
    }),
  );
  const openedIn = performance.now() - t0;
  const until = openedIn + Number(watch) * 1000;
  while (conns.some((c) => c.closedAt === undefined) && performance.now() - t0 < until) await new Promise((r) => setTimeout(r, 100));
  const watched = performance.now() - t0;
  for (const c of conns) c.destroy();
  writeFileSync(outFile!, JSON.stringify({ startedAt: performance.timeOrigin + t0, openedIn, watched, conns: conns.map(({ kind, openedAt, closedAt, refused }) => ({ kind, openedAt, closedAt, refused })) }));
  process.exit(0);
}
