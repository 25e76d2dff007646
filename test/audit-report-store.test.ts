// The audit's report store (src/kube/reports.ts) against a small stand-in for the API
// server's custom objects: it replaces Deed's report and nobody else's, and deletes only the
// report the run listed (by its uid), never whatever is under the name by then.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { REPORT_LABELS, REPORT_NAME } from '../src/audit/report.js';
import { createReportStore } from '../src/kube/reports.js';
import { parseSelector, statusBody } from './fake-apiserver.js';

type Stored = { apiVersion?: string; kind?: string; metadata: { name: string; namespace: string; uid: string; resourceVersion: string; labels?: Record<string, string> }; [k: string]: unknown };

const BASE = '/apis/wgpolicyk8s.io/v1alpha2';
const ONE = /^\/apis\/wgpolicyk8s\.io\/v1alpha2\/namespaces\/([^/]+)\/policyreports(?:\/([^/]+))?$/;
const reports = new Map<string, Stored>();
const requests: Array<{ method: string; path: string; body?: unknown }> = [];
let revision = 1;
let server: Server;
let kc: KubeConfig;

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

before(async () => {
  server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'audit', token: 'audit-token' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'audit' }],
    currentContext: 'fake',
  });
});

/** The custom objects calls the store makes: list by selector, create, get, replace (at a resourceVersion), delete (with a uid precondition). */
async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://fake');
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const body = text ? (JSON.parse(text) as Stored & { preconditions?: { uid?: string } }) : undefined;
  requests.push({ method: req.method ?? 'GET', path: url.pathname, ...(body ? { body } : {}) });
  if (url.pathname === `${BASE}/policyreports` && req.method === 'GET') {
    const selector = parseSelector(url.searchParams.get('labelSelector') ?? '')!;
    return json(res, 200, { apiVersion: 'wgpolicyk8s.io/v1alpha2', kind: 'PolicyReportList', metadata: {}, items: [...reports.values()].filter((r) => selector(r.metadata.labels ?? {})) });
  }
  const m = ONE.exec(url.pathname);
  if (!m) return json(res, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource'));
  const [, namespace, name] = m as unknown as [string, string, string | undefined];
  const key = `${namespace}/${name ?? body?.metadata.name}`;
  const stored = reports.get(key);
  const notFound = () => json(res, 404, statusBody(404, 'NotFound', `policyreports.wgpolicyk8s.io "${name}" not found`));
  if (name === undefined && req.method === 'POST') {
    if (stored) return json(res, 409, statusBody(409, 'AlreadyExists', `policyreports.wgpolicyk8s.io "${body!.metadata.name}" already exists`));
    const created = { ...body!, metadata: { ...body!.metadata, namespace, uid: randomUUID(), resourceVersion: String(++revision) } };
    reports.set(key, created);
    return json(res, 201, created);
  }
  if (stored === undefined) return notFound();
  if (req.method === 'GET') return json(res, 200, stored);
  if (req.method === 'PUT') {
    if (body!.metadata.resourceVersion !== stored.metadata.resourceVersion) return json(res, 409, statusBody(409, 'Conflict', 'the object has been modified'));
    const replaced = { ...body!, metadata: { ...body!.metadata, namespace, uid: stored.metadata.uid, resourceVersion: String(++revision) } };
    reports.set(key, replaced);
    return json(res, 200, replaced);
  }
  if (req.method === 'DELETE') {
    const uid = body?.preconditions?.uid;
    if (uid !== undefined && uid !== stored.metadata.uid)
      return json(res, 409, statusBody(409, 'Conflict', `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${stored.metadata.uid}`));
    reports.delete(key);
    return json(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success', metadata: {} });
  }
  json(res, 405, statusBody(405, 'MethodNotAllowed', 'not allowed'));
}

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  reports.clear();
  requests.length = 0;
});

function put(namespace: string, labels: Record<string, string> | undefined, extra: Record<string, unknown> = {}): Stored {
  const r: Stored = { apiVersion: 'wgpolicyk8s.io/v1alpha2', kind: 'PolicyReport', metadata: { name: REPORT_NAME, namespace, uid: randomUUID(), resourceVersion: String(++revision), ...(labels ? { labels } : {}) }, ...extra };
  reports.set(`${namespace}/${REPORT_NAME}`, r);
  return r;
}

const report = (namespace: string) => ({ apiVersion: 'wgpolicyk8s.io/v1alpha2', kind: 'PolicyReport', metadata: { name: REPORT_NAME, namespace, labels: { ...REPORT_LABELS } }, results: [{ policy: 'deed' }] });
const store = () => createReportStore(kc, 'wgpolicyk8s', 5000);

describe('the audit report store', () => {
  test("replaces Deed's own report at the version it read", async () => {
    put('sandbox-a', { ...REPORT_LABELS }, { results: [] });
    assert.equal(await store().write('sandbox-a', report('sandbox-a')), 'replaced');
    assert.deepEqual(reports.get(`sandbox-a/${REPORT_NAME}`)!.results, [{ policy: 'deed' }]);
  });

  test("leaves a report of the same name that is not Deed's as it is, and says so", async () => {
    const theirs = put('sandbox-a', { 'app.kubernetes.io/name': 'kyverno' }, { results: ['theirs'] });
    await assert.rejects(store().write('sandbox-a', report('sandbox-a')), /PolicyReport sandbox-a\/deed-audit exists and is not Deed's \(it does not carry the labels app\.kubernetes\.io\/name=deed,app\.kubernetes\.io\/component=audit\)/);
    assert.deepEqual(reports.get(`sandbox-a/${REPORT_NAME}`), theirs);
    assert.equal(requests.filter((r) => r.method === 'PUT').length, 0);
  });

  test('deletes the report it listed, by its uid', async () => {
    const ours = put('sandbox-a', { ...REPORT_LABELS });
    const s = store();
    assert.deepEqual(await s.namespacesWithReports(), ['sandbox-a']);
    assert.equal(await s.remove('sandbox-a'), true);
    assert.equal(reports.size, 0);
    assert.deepEqual((requests.find((r) => r.method === 'DELETE')!.body as { preconditions?: unknown }).preconditions, { uid: ours.metadata.uid });
  });

  test('does not delete what was put under the name after the list: another uid is a conflict, and it stays', async () => {
    put('sandbox-a', { ...REPORT_LABELS });
    const s = store();
    assert.deepEqual(await s.namespacesWithReports(), ['sandbox-a']);
    // Meanwhile someone deleted Deed's report and created their own under the same name.
    const theirs = put('sandbox-a', { 'app.kubernetes.io/name': 'kyverno' });
    await assert.rejects(s.remove('sandbox-a'), /PolicyReport sandbox-a\/deed-audit is no longer the report this run listed/);
    assert.deepEqual(reports.get(`sandbox-a/${REPORT_NAME}`), theirs);
  });

  test('deletes nothing in a namespace where it listed no report of Deed\'s', async () => {
    put('sandbox-a', undefined);
    const s = store();
    assert.deepEqual(await s.namespacesWithReports(), []);
    await assert.rejects(s.remove('sandbox-a'), /no report of Deed's was listed in sandbox-a/);
    assert.equal(reports.size, 1);
    assert.equal(requests.filter((r) => r.method === 'DELETE').length, 0);
  });
});
