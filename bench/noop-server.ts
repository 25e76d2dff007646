// The baseline: a fastify server with Deed's TLS settings (HTTPS, HTTP/2 with HTTP/1.1
// fallback, TLS 1.2 minimum, the same certificate) that parses the body like Deed does and
// answers every review with a fixed `allowed: true`. Deed's throughput is quoted against it.
// Usage: tsx bench/noop-server.ts CERT_DIR [--patch FILE] [--http1]   (prints its URL on stdout)
//   --patch FILE   /mutate answers with this fixed JSON Patch (a JSON list), as a webhook
//                  that stamps would; /validate still answers a bare `allowed: true`
//   --http1        offer only HTTP/1.1 over ALPN (the API server then calls over HTTP/1.1)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchArgs } from './args.js';
import { fastify, type FastifyInstance } from 'fastify';

const { values: flags, positionals } = benchArgs(import.meta.url, { allowPositionals: true, options: { patch: { type: 'string' }, http1: { type: 'boolean', default: false } } });
const certDir = positionals[0];
if (!certDir) throw new Error('usage: noop-server.ts CERT_DIR [--patch FILE] [--http1]');
// Encoded once: the server does no per-review work for it.
const patch = flags.patch === undefined ? undefined : Buffer.from(JSON.stringify(JSON.parse(readFileSync(flags.patch, 'utf8')))).toString('base64');

const tls = { minVersion: 'TLSv1.2', cert: readFileSync(join(certDir, 'tls.crt')), key: readFileSync(join(certDir, 'tls.key')) } as const;
const app = (flags.http1
  ? fastify({ https: tls, bodyLimit: 8 * 1024 * 1024 })
  : fastify({ http2: true, https: { allowHTTP1: true, ...tls }, bodyLimit: 8 * 1024 * 1024 })) as unknown as FastifyInstance;

app.removeAllContentTypeParsers();
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
  try {
    done(null, JSON.parse(body as string));
  } catch (err) {
    done(err as Error, undefined);
  }
});

// /admit is the install's mutating path (one call per create), /mutate the previous release's.
for (const path of ['/mutate', '/admit', '/validate'])
  app.post(path, async (req) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: {
      uid: (req.body as { request?: { uid?: string } }).request?.uid ?? '',
      allowed: true,
      ...(patch !== undefined && path !== '/validate' ? { patchType: 'JSONPatch', patch } : {}),
    },
  }));

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address() as { port: number };
process.stdout.write(`https://127.0.0.1:${address.port}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
