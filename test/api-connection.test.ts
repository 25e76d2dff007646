// deed serve's own path to the API server (src/kube/api-connection.ts): it finds the server
// and credentials as kubectl does, without loading @kubernetes/client-node for the forms a
// webhook meets, hands other forms to client-node's loader, reads a rotated token again,
// and a running `deed serve` never loads client-node at all.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getJson, loadConnection } from '../src/kube/api-connection.js';
import { loadKubeConfig } from '../src/kube/client.js';
import { startServe } from './serve-process.js';

const dir = mkdtempSync(join(tmpdir(), 'deed-connection-'));

function kubeconfig(name: string, server: string, user: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }, { name: 'other', cluster: { server: 'https://other.example:6443' } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }, { name: 'o', context: { cluster: 'other', user: 'u' } }],
      'current-context': 'x',
      ...extra,
    }),
  );
  return file;
}

/** An API server that answers every GET with an empty list and records what it was sent. */
async function recordingServer(): Promise<{ url: string; seen: IncomingMessage[]; close(): void }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '2' } } })}\n`);
      return; // held open until the test ends
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: '1' }, items: [] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('the API connection', () => {
  const empty = mkdtempSync(join(tmpdir(), 'deed-home-'));

  test('finds the server as kubectl does: --kubeconfig, then $KUBECONFIG, then ~/.kube/config; --context picks one', async () => {
    const a = kubeconfig('a', 'https://a.example:6443', { token: 't' });
    const b = kubeconfig('b', 'https://b.example:6443', { token: 't' });
    const home = mkdtempSync(join(tmpdir(), 'deed-home-'));
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), readFileSync(kubeconfig('h', 'https://home.example:6443', { token: 't' })));
    const cases: Array<[Parameters<typeof loadConnection>[0], NodeJS.ProcessEnv, string]> = [
      [{ kubeconfig: a }, { KUBECONFIG: b }, home],
      [{}, { KUBECONFIG: b }, home],
      [{}, {}, home],
      [{ kubeconfig: a, context: 'o' }, {}, empty],
    ];
    for (const [source, env, at] of cases) {
      const conn = await loadConnection(source, env, at);
      assert.equal(conn.server, loadKubeConfig(source, env, at).getCurrentCluster()?.server, JSON.stringify(source));
    }
  });

  test('a bearer token is sent; a token file is read again once it is rotated', async (t) => {
    const api = await recordingServer();
    after(api.close);
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'first\n');
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    const conn = await loadConnection({ kubeconfig: kubeconfig('tokenfile', api.url, { tokenFile }) }, {}, empty);
    const opts = await conn.requestOptions();
    assert.equal((opts.headers as Record<string, string>).Authorization, 'Bearer first');
    writeFileSync(tokenFile, 'second\n');
    utimesSync(tokenFile, new Date(2_000_000_000_000), new Date(2_000_000_000_000));
    t.mock.timers.tick(61_000);
    assert.equal(((await conn.requestOptions()).headers as Record<string, string>).Authorization, 'Bearer second');
    t.mock.timers.reset();
    const inline = await loadConnection({ kubeconfig: kubeconfig('token', api.url, { token: 'abc' }) }, {}, empty);
    await getJson(inline, '/api/v1/namespaces', { what: 'list namespaces', timeoutMs: 2000 });
    assert.equal(api.seen.at(-1)?.headers.authorization, 'Bearer abc');
  });

  test('the in-cluster service account: the host, its CA and token', async () => {
    const sa = mkdtempSync(join(tmpdir(), 'deed-sa-'));
    writeFileSync(join(sa, 'token'), 'in-cluster');
    writeFileSync(join(sa, 'ca.crt'), 'not a real CA');
    const conn = await loadConnection({}, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, empty, sa);
    assert.equal(conn.server, 'https://[fd00::1]:443');
    assert.equal(((await conn.requestOptions()).headers as Record<string, string>).Authorization, 'Bearer in-cluster');
  });

  test('a form it does not read itself (an exec plugin) goes to client-node\'s loader, which runs the plugin', async () => {
    const api = await recordingServer();
    after(api.close);
    const plugin = join(dir, 'plugin.sh');
    writeFileSync(plugin, `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'\n`, { mode: 0o755 });
    const file = kubeconfig('exec', api.url, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } });
    const conn = await loadConnection({ kubeconfig: file }, {}, empty);
    await getJson(conn, '/api/v1/namespaces', { what: 'list namespaces', timeoutMs: 5000 });
    assert.equal(api.seen.at(-1)?.headers.authorization, 'Bearer from-plugin');
  });

  test('an answer that is not 2xx is a classified error: a NotFound Status is NotFound, a 429 carries its Retry-After', async () => {
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/missing')) res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'gone' }));
      else res.writeHead(429, { 'retry-after': '7' }).end('Too many requests, please try again later.');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    const conn = await loadConnection({ kubeconfig: kubeconfig('errors', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, { token: 't' }) }, {}, empty);
    await assert.rejects(getJson(conn, '/missing', { what: 'get x', timeoutMs: 2000 }), { name: 'KubeError', reason: 'NotFound' });
    // The deadline is shorter than the Retry-After: no retry, the 429 stands.
    await assert.rejects(getJson(conn, '/busy', { what: 'get y', timeoutMs: 2000 }), (err: { reason?: string; message?: string }) => err.reason === 'TooManyRequests' && /Retry-After \(7 s\)/.test(err.message ?? ''));
  });

  test('deed serve reading a cluster never loads @kubernetes/client-node, nor the JUnit builder of deed test', async () => {
    const api = await recordingServer();
    after(api.close);
    const log = join(dir, 'loaded.txt');
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  if (specifier.includes('@kubernetes/client-node') || specifier.includes('junit-report-builder')) appendFileSync(${JSON.stringify(log)}, specifier + '\\n');\n  return next(specifier, context);\n}\n`);
    const register = join(dir, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const serve = await startServe(['--kubeconfig', kubeconfig('serve', api.url, { token: 't' }), '--deed-namespace', 'deed-system'], undefined, { NODE_OPTIONS: `--import ${pathToFileURL(register).href}` });
    try {
      for (let i = 0; i < 500 && !api.seen.some((r) => r.url?.startsWith('/api/v1/pods?') && r.url.includes('watch=true')); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(api.seen.some((r) => r.url?.startsWith('/api/v1/pods?') && r.url.includes('watch=true')), `deed serve lists and watches pods: ${api.seen.map((r) => r.url).join(' ')}`);
      assert.equal(api.seen.find((r) => r.url?.startsWith('/api/v1/pods?'))?.headers.authorization, 'Bearer t');
    } finally {
      await serve.stop();
    }
    assert.equal(existsSync(log) ? readFileSync(log, 'utf8') : '', '', 'client-node or the JUnit builder was imported');
  });
});
