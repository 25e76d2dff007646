// The attacker's side of `npm run fault` section 6, in a process of its own: HTTP/2
// sessions, each with `streams` POST streams that send `bytes` of a body that never ends,
// as fast as flow control lets them, from a loopback address of their own (a tenant pod
// has an address other than the API server's). Whenever a stream is answered or reset, a
// new one takes its place, so the pressure stays on. Writes what it saw as JSON.
// With DECLARED, each stream declares that content-length and sends BYTES of it (0: none),
// then stalls: an upload that is never finished. LOCAL_ADDRESSES is a comma-separated list;
// the sessions are spread over them (several tenant pods).
//   tsx scripts/body-flood.ts PORT CA_FILE SESSIONS STREAMS BYTES SECONDS LOCAL_ADDRESSES OUT_FILE [DECLARED]
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { pathToFileURL } from 'node:url';

export interface FloodResult {
  sessions: number;
  streamsOpened: number;
  /** Answers by status, and streams ended otherwise (reset, session gone). */
  outcomes: Record<string, number>;
  /** Body bytes the server let through flow control, in all. */
  bytesSent: number;
  /** Sessions the server ended (GOAWAY or close) before the flood did. */
  sessionsEnded: number;
}

const CHUNK = Buffer.alloc(16 * 1024, 0x20); // JSON whitespace: a body that might yet become valid

function flood(port: number, ca: string, streams: number, bytes: number, declared: number | undefined, localAddress: string, until: number, r: FloodResult): Promise<void> {
  return new Promise((resolve) => {
    const session: ClientHttp2Session = connect(`https://localhost:${port}`, {
      settings: { enablePush: false },
      createConnection: () => tlsConnect({ socket: netConnect({ host: '127.0.0.1', port, localAddress }), servername: 'localhost', ca, ALPNProtocols: ['h2'] }),
    });
    session.on('error', () => {});
    let ended = false;
    session.once('close', () => {
      if (performance.now() < until) r.sessionsEnded++;
      ended = true;
      resolve();
    });
    const count = (outcome: string) => (r.outcomes[outcome] = (r.outcomes[outcome] ?? 0) + 1);
    const open = (): void => {
      if (ended || session.closed || session.destroyed || performance.now() >= until) return;
      r.streamsOpened++;
      let stream: ClientHttp2Stream;
      try {
        stream = session.request({ ':method': 'POST', ':path': '/mutate?timeout=10s', 'content-type': 'application/json', ...(declared !== undefined ? { 'content-length': declared } : {}) });
      } catch {
        return;
      }
      let sent = 0;
      let outcome: string | undefined;
      stream.on('response', (h) => (outcome = `answered ${h[':status']}`));
      stream.on('error', () => {});
      stream.resume();
      stream.once('close', () => {
        count(outcome ?? `reset (RST code ${stream.rstCode})`);
        setImmediate(open);
      });
      const pump = () => {
        while (sent + CHUNK.length <= bytes && !stream.destroyed) {
          sent += CHUNK.length;
          r.bytesSent += CHUNK.length;
          if (!stream.write(CHUNK)) return void stream.once('drain', pump);
        }
      };
      pump(); // and never ends
    };
    session.once('connect', () => {
      for (let i = 0; i < streams; i++) open();
    });
    setTimeout(() => session.destroy(), Math.max(0, until - performance.now())).unref();
  });
}

// Run as a script.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [port, caFile, sessions, streams, bytes, seconds, localAddresses, outFile, declared] = process.argv.slice(2);
  const addresses = localAddresses!.split(',');
  const ca = readFileSync(caFile!, 'utf8');
  const r: FloodResult = { sessions: Number(sessions), streamsOpened: 0, outcomes: {}, bytesSent: 0, sessionsEnded: 0 };
  const until = performance.now() + Number(seconds) * 1000;
  // A session the server ends is opened again, until the time is up.
  await Promise.all(
    Array.from({ length: r.sessions }, async (_, i) => {
      while (performance.now() < until) {
        await flood(Number(port), ca, Number(streams), Number(bytes), declared === undefined ? undefined : Number(declared), addresses[i % addresses.length]!, until, r);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }),
  );
  writeFileSync(outFile!, JSON.stringify(r));
  process.exit(0);
}
