// `helm test`: dry-runs a sandbox pod through Deed's webhooks from inside the cluster and
// passes only when Deed refuses it. The pod carries a forged environment stamp, which
// Deed denies whoever asks, whatever the policy; a pod the API server accepts means the
// webhooks did not review it (not opted in, failurePolicy Ignore, or Deed not called).
// Runs with the Deed image's node, no dependencies. A new namespace takes Deed a moment
// to see as opted in, so an accepted pod is asked again for up to ATTEMPTS seconds.
'use strict';
const { readFileSync } = require('node:fs');
const https = require('node:https');

const account = process.env.SERVICE_ACCOUNT_DIR || '/var/run/secrets/kubernetes.io/serviceaccount';
const namespace = process.env.TEST_NAMESPACE;
const prefix = process.env.LABEL_PREFIX;
const attempts = Number(process.env.ATTEMPTS || 30);
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'deed-helm-test', labels: { [`${prefix}/environment`]: 'forged-by-helm-test' } },
  spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
};

function create() {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(pod);
    const req = https.request(
      {
        host: process.env.KUBERNETES_SERVICE_HOST,
        port: process.env.KUBERNETES_SERVICE_PORT,
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods?dryRun=All`,
        method: 'POST',
        ca: readFileSync(`${account}/ca.crt`),
        headers: { authorization: `Bearer ${readFileSync(`${account}/token`, 'utf8').trim()}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: 15000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          let message = '';
          try {
            message = String(JSON.parse(text).message || '');
          } catch {
            message = text.slice(0, 500);
          }
          resolve({ status: res.statusCode, message });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer from the API server in 15 s')));
    req.on('error', reject);
    req.end(body);
  });
}

async function main() {
  for (let i = 1; ; i++) {
    const { status, message } = await create();
    if (status === 403 && message.includes('Deed denied this request')) {
      console.log(`ok: Deed reviewed a dry-run pod in ${namespace} and refused its forged stamp: ${message}`);
      return 0;
    }
    if (status !== 201 || i >= attempts) {
      console.error(`FAIL: a dry-run pod with a forged ${prefix}/environment stamp in ${namespace} was answered ${status}${message ? `: ${message}` : ''}`);
      if (status === 201) console.error('The API server accepted it: Deed did not review it (is the namespace opted in, the webhook failurePolicy Fail, Deed running?)');
      return 1;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`FAIL: ${err.message}`);
    process.exit(1);
  },
);
