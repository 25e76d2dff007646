import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { fixture, type Review } from './helpers.js';
import { get, post, startServe, type ServeProcess } from './serve-process.js';

// Recognisable values: if any of them (or its base64 form) reaches a log line, Deed leaked it.
const MARK = {
  data: 'deed-leak-check-secret-data-5a1f0e',
  stringData: 'deed-leak-check-string-data-c39b27',
  lastApplied: 'deed-leak-check-last-applied-8d44e1',
  credentialId: 'JTI=deed-leak-check-credential-0b6f72',
  extraToken: 'deed-leak-check-extra-token-e2a913',
  bearer: 'deed-leak-check-bearer-71c0d8',
  malformed: 'deed-leak-check-malformed-body-4e7a60',
};

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A Secret review whose data, stringData, last-applied annotation and userInfo extras all carry markers. */
function secretReview(uid: string, edit: (r: Review) => void = () => {}): Review {
  const body = fixture('mutate-create-secret-by-runner.json');
  body.request.uid = uid;
  const obj = body.request.object;
  obj.data = { password: b64(MARK.data), 'token.txt': b64(`${MARK.data}-2`) };
  obj.stringData = { 'config.json': JSON.stringify({ apiKey: MARK.stringData }) };
  // kubectl apply keeps the whole object, Secret data included, in this annotation.
  obj.metadata.annotations = {
    ...obj.metadata.annotations,
    'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ kind: 'Secret', data: { password: b64(MARK.lastApplied) } }),
  };
  body.request.userInfo.extra['authentication.kubernetes.io/credential-id'] = [MARK.credentialId];
  body.request.userInfo.extra['example.com/session-token'] = [MARK.extraToken];
  edit(body);
  return body;
}

function postWithBearer(server: ServeProcess, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port: server.port,
        path: '/mutate?timeout=5s',
        method: 'POST',
        ca: server.ca,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${MARK.bearer}` },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('nothing secret reaches a log line', () => {
  let server: ServeProcess;
  before(async () => {
    server = await startServe([], undefined, { DEED_LOG_LEVEL: 'trace' }); // the most verbose level the operator can pick
  });
  after(async () => {
    await server.stop();
  });

  test('Secret data, stringData, tokens in userInfo and an Authorization header never appear in any log line, whatever the decision', async () => {
    const cases: Array<[string, Review]> = [
      ['leak-patched', secretReview('leak-patched')],
      [
        'leak-forged',
        secretReview('leak-forged', (r) => {
          r.request.userInfo = { username: 'kube-lab-admin', groups: ['system:masters'], extra: { 'example.com/session-token': [MARK.extraToken] } };
          r.request.object.metadata.labels = { 'deed.dev/environment': 'alpha' };
        }),
      ],
      ['leak-conflict', secretReview('leak-conflict', (r) => (r.request.object.metadata.labels = { 'deed.dev/environment': 'beta' }))],
      ['leak-prototype', secretReview('leak-prototype', (r) => (r.request.object.data = JSON.parse(`{"__proto__": {"x": "${b64(MARK.data)}"}}`) as object))],
      ['leak-malformed-extra', secretReview('leak-malformed-extra', (r) => (r.request.userInfo.extra['example.com/session-token'] = MARK.extraToken))],
      ['leak-update', secretReview('leak-update', (r) => Object.assign(r.request, { operation: 'UPDATE', oldObject: structuredClone(r.request.object) }))],
    ];
    for (const [uid, body] of cases) {
      const answer = await post(server, '/mutate?timeout=5s', JSON.stringify(body));
      assert.equal(answer.status, 200, uid);
      assert.equal(answer.json<{ response: { uid: string } }>().response.uid, uid);
    }
    assert.equal(await postWithBearer(server, JSON.stringify(secretReview('leak-bearer'))), 200);
    // Bodies Deed cannot read: invalid JSON and a body without a uid.
    assert.equal((await post(server, '/mutate', `{"request": {"object": {"data": {"k": "${MARK.malformed}"`)).status, 400);
    assert.equal((await post(server, '/mutate', JSON.stringify({ request: { object: { data: { k: MARK.malformed } } } }))).status, 400);
    const metrics = await get(server, '/metrics');

    await new Promise((r) => setTimeout(r, 200)); // let the child flush its log lines
    for (const uid of [...cases.map(([u]) => u), 'leak-bearer'])
      assert.equal(server.logs().filter((l) => l.uid === uid).length, 1, `one review line for ${uid}`);
    assert.ok(server.lines.length >= 10, 'the log is not empty, so the grep below means something');

    const needles = Object.values(MARK).flatMap((m) => [m, b64(m)]);
    for (const [i, line] of server.lines.entries())
      for (const needle of needles) assert.ok(!line.includes(needle), `log line ${i} leaks ${needle}: ${line}`);
    // The review line is logged without the wildcard redaction (see app.ts): that is only
    // sound while it holds no object, which this checks on every review line written here.
    for (const line of server.logs().filter((l) => l.msg === 'review' && !('err' in l)))
      for (const [key, value] of Object.entries(line))
        assert.ok(
          ['string', 'number', 'boolean'].includes(typeof value) || (Array.isArray(value) && value.every((v) => typeof v === 'string')),
          `review line field ${key} holds ${JSON.stringify(value)}`,
        );
    if (metrics.status === 200) for (const needle of needles) assert.ok(!metrics.body.includes(needle), `/metrics leaks ${needle}`);
  });
});
