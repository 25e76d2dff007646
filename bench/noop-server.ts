// The baseline: a fastify server with Deed's TLS settings (HTTPS, HTTP/2 with HTTP/1.1
// fallback, TLS 1.2 minimum, the same certificate) that parses the body like Deed does and
// answers every review with a fixed `allowed: true`. Deed's throughput is quoted against it.
// Usage: tsx bench/noop-server.ts CERT_DIR   (prints its URL on stdout)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fastify, type FastifyInstance } from 'fastify';

const certDir = process.argv[2];
if (!certDir) throw new Error('usage: noop-server.ts CERT_DIR');

const app = fastify({
  http2: true,
  https: { allowHTTP1: true, minVersion: 'TLSv1.2', cert: readFileSync(join(certDir, 'tls.crt')), key: readFileSync(join(certDir, 'tls.key')) },
  bodyLimit: 8 * 1024 * 1024,
}) as unknown as FastifyInstance;

app.removeAllContentTypeParsers();
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
  try {
    done(null, JSON.parse(body as string));
  } catch (err) {
    done(err as Error, undefined);
  }
});

for (const path of ['/mutate', '/validate'])
  app.post(path, async (req) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: (req.body as { request?: { uid?: string } }).request?.uid ?? '', allowed: true },
  }));

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address() as { port: number };
process.stdout.write(`https://127.0.0.1:${address.port}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
