// A throwaway Kubernetes control plane for the end-to-end suite: etcd, kube-apiserver and,
// when its binary is there, kube-controller-manager (garbage collector, namespace
// controller, service accounts, and the workload, job and ephemeral-volume controllers
// that create pods and claims from templates, and the disruption controller), started from $KUBEBUILDER_ASSETS on free loopback ports
// with a PKI of their own. Every process it starts is stopped by stop(), and also when the
// test process exits or is interrupted (see processes.ts).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { generate } from 'selfsigned';
import { REAPED_KINDS, stampedRow } from '../../src/policy/kinds.js';
import { generateCertificates } from '../../src/server/certificates.js';
import { freePort, removeOnExit, startProcess, type Process } from './processes.js';
import { api, type Identity } from './client.js';

export interface ControlPlane {
  dir: string;
  bin: string;
  server: string;
  /** PEM of the CA that signed the API server's certificate. */
  ca: string;
  admin: Identity;
  /**
   * The CA of the client certificate the API server presents to webhooks that ask for one
   * (its AdmissionConfiguration names it for every webhook host): `deed serve --client-ca`.
   */
  webhookClientCaFile: string;
  /** True when kube-controller-manager runs: garbage collection and namespace deletion happen. */
  controllers: boolean;
  /** The process id of each process it started, by name (etcd, kube-apiserver, kube-controller-manager): the chain bench reads their CPU time. */
  pids: Record<string, number>;
  /** The API server's audit events so far: every delete of the reaped kinds, with its request body. */
  audit(): AuditEvent[];
  stop(): Promise<void>;
}

export interface AuditEvent {
  verb: string;
  stage: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  requestObject?: any;
  responseStatus?: { code?: number; message?: string };
  /** Webhooks' audit annotations, keyed `<webhook name>/<key>`. */
  annotations?: Record<string, string>;
}

/** The reaped kinds of the kind table, grouped as an audit policy names resources. */
const REAPED_RESOURCES = [...new Set(REAPED_KINDS.map((k) => stampedRow(k).group))].map((group) => ({ group, resources: REAPED_KINDS.map(stampedRow).filter((r) => r.group === group).map((r) => r.resource) }));

// Deletes of the reaped kinds at Request level (their DeleteOptions, preconditions included), the PV controller's updates of claims; nothing else.
const AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [
    { level: 'Request', verbs: ['delete', 'deletecollection'], resources: REAPED_RESOURCES },
    // The PV controller's writes of claims: whether Deed refused its binding.
    { level: 'Metadata', verbs: ['update'], users: ['system:serviceaccount:kube-system:persistent-volume-binder'], resources: [{ group: '', resources: ['persistentvolumeclaims'] }] },
    { level: 'None' },
  ],
};

/** The binaries the suite needs from KUBEBUILDER_ASSETS; the optional ones gate tests. */
export function assets(): { bin: string; controllers: boolean; helm: boolean } | { missing: string } {
  const bin = process.env.KUBEBUILDER_ASSETS;
  if (!bin) return { missing: 'KUBEBUILDER_ASSETS is not set' };
  for (const name of ['etcd', 'kube-apiserver', 'kubectl']) {
    if (!existsSync(join(bin, name))) return { missing: `KUBEBUILDER_ASSETS=${bin} has no ${name}` };
  }
  return { bin, controllers: existsSync(join(bin, 'kube-controller-manager')), helm: existsSync(join(bin, 'helm')) };
}

const START_TIMEOUT_MS = 60_000;

export async function startControlPlane(bin: string, withControllers: boolean): Promise<ControlPlane> {
  const dir = mkdtempSync(join(tmpdir(), 'deed-e2e-'));
  const remove = removeOnExit(dir);
  const started: Process[] = [];
  const stop = async () => {
    for (const p of started.reverse()) await p.stop();
    remove();
  };
  try {
    const pki = join(dir, 'pki');
    mkdirSync(pki);
    // Deed's own certificate generator: a CA and a serving certificate for the loopback.
    const certs = await generateCertificates(pki, ['127.0.0.1', 'localhost']);
    const webhookClient = await webhookClientPki(pki);
    const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(pki, 'sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(join(pki, 'sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }));
    // Static tokens: the admin (system:masters) and the controller manager's own user.
    const adminToken = randomToken();
    const kcmToken = randomToken();
    writeFileSync(
      join(pki, 'tokens.csv'),
      `${adminToken},e2e-admin,e2e-admin,"system:masters"\n${kcmToken},system:kube-controller-manager,system:kube-controller-manager\n`,
      { mode: 0o600 },
    );

    const [etcdPort, etcdPeerPort, apiPort, kcmPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const etcd = startProcess('etcd', join(bin, 'etcd'), [
      '--name', 'e2e', '--data-dir', join(dir, 'etcd'),
      '--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl,
      '--listen-peer-urls', `http://127.0.0.1:${etcdPeerPort}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeerPort}`,
      '--initial-cluster', `e2e=http://127.0.0.1:${etcdPeerPort}`, '--initial-cluster-state', 'new',
      '--listen-metrics-urls', '', '--unsafe-no-fsync', '--log-level', 'warn',
    ], dir);
    started.push(etcd);
    await etcd.waitUntil(() => httpOk(`${etcdUrl}/health`), START_TIMEOUT_MS);

    const server = `https://127.0.0.1:${apiPort}`;
    const auditPolicy = join(dir, 'audit-policy.json');
    const auditLog = join(dir, 'audit.log');
    writeFileSync(auditPolicy, JSON.stringify(AUDIT_POLICY));
    const apiserver = startProcess('kube-apiserver', join(bin, 'kube-apiserver'), [
      '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', `--secure-port=${apiPort}`,
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
      `--tls-cert-file=${certs.certFile}`, `--tls-private-key-file=${certs.keyFile}`,
      `--client-ca-file=${certs.caFile}`,
      `--token-auth-file=${join(pki, 'tokens.csv')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--api-audiences=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--authorization-mode=RBAC',
      '--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,MutatingAdmissionWebhook,ValidatingAdmissionWebhook',
      `--admission-control-config-file=${webhookClient.admissionConfig}`,
      '--allow-privileged=true', '--profiling=false', '--endpoint-reconciler-type=none',
      `--audit-policy-file=${auditPolicy}`, `--audit-log-path=${auditLog}`, '--audit-log-mode=blocking',
      '--v=1',
    ], dir);
    started.push(apiserver);
    const ca = certs.caFile;
    const caPem = readFileSync(ca, 'utf8');
    const admin: Identity = { name: 'e2e-admin', token: adminToken };
    const base = { server, ca: caPem };
    await apiserver.waitUntil(async () => (await api(base, admin, 'GET', '/readyz').catch(() => ({ status: 0 }))).status === 200, START_TIMEOUT_MS);

    let controllers = false;
    if (withControllers) {
      const kubeconfig = join(dir, 'kcm.kubeconfig');
      writeKubeconfig(kubeconfig, server, caPem, kcmToken);
      const kcm = startProcess('kube-controller-manager', join(bin, 'kube-controller-manager'), [
        `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`,
        '--bind-address=127.0.0.1', `--secure-port=${kcmPort}`, `--cert-dir=${join(dir, 'kcm-certs')}`,
        '--leader-elect=false',
        [
          '--controllers=serviceaccount-controller,serviceaccount-token-controller,namespace-controller,garbage-collector-controller,root-ca-certificate-publisher-controller,persistentvolumeclaim-protection-controller',
          // The controllers that create pods and claims for whoever wrote a template (cases/controllers.ts).
          'deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,job-controller,cronjob-controller,ephemeral-volume-controller',
          // PodDisruptionBudgets' status, which evictions are held to (cases/selectors.ts).
          'disruption-controller',
          // The PV controller: it binds a claim to a volume made for it (cases/pointers.ts).
          'persistentvolume-binder-controller',
          // The resourceclaim controller: it makes a pod's claim from the template it names (cases/claim-templates.ts).
          'resourceclaim-controller',
        ].join(','),
        `--service-account-private-key-file=${join(pki, 'sa.key')}`,
        `--root-ca-file=${ca}`,
        '--use-service-account-credentials=true',
        '--v=1',
      ], dir);
      started.push(kcm);
      // The service-account controller creates "default" in every namespace: it is working.
      await kcm.waitUntil(async () => (await api(base, admin, 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200, START_TIMEOUT_MS);
      controllers = true;
    }
    const audit = () =>
      existsSync(auditLog)
        ? readFileSync(auditLog, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as AuditEvent)
        : [];
    const pids = Object.fromEntries(started.map((p) => [p.name, p.child.pid!]));
    return { dir, bin, server, ca: caPem, webhookClientCaFile: webhookClient.caFile, admin, controllers, pids, audit, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A kubeconfig for one bearer token: how kubectl and `deed reap` act as an identity. */
export function writeKubeconfig(file: string, server: string, caPem: string, token: string): void {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'e2e', user: { token } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: 'e2e' } }],
    'current-context': 'e2e',
  };
  // JSON is YAML: kubectl and client-node read it as a kubeconfig.
  writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
}

/** A client CA and a client certificate it signed, as an AdmissionConfiguration names one for the API server. */
export async function clientCertificatePair(): Promise<{ ca: { cert: string }; client: { cert: string; private: string } }> {
  const now = Date.now();
  const validity = { notBeforeDate: new Date(now - 60_000), notAfterDate: new Date(now + 86_400_000) };
  const ca = await generate([{ name: 'commonName', value: 'webhook-client-ca' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ...validity,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const client = await generate([{ name: 'commonName', value: 'kube-apiserver-webhook-client' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    ...validity,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  return { ca, client };
}

/**
 * A client certificate the API server presents to webhooks, as a cluster operator gives
 * it one for `deed serve --client-ca`: an AdmissionConfiguration whose kubeconfig names
 * the certificate for every webhook host ("*"). A webhook that does not ask for a client
 * certificate (Deed without --client-ca) is not sent one.
 */
async function webhookClientPki(pki: string): Promise<{ caFile: string; admissionConfig: string }> {
  const { ca, client } = await clientCertificatePair();
  const caFile = join(pki, 'webhook-client-ca.crt');
  writeFileSync(caFile, ca.cert);
  writeFileSync(join(pki, 'webhook-client.crt'), client.cert);
  writeFileSync(join(pki, 'webhook-client.key'), client.private, { mode: 0o600 });
  const kubeconfig = join(pki, 'webhook-client.kubeconfig');
  writeFileSync(kubeconfig, stringify({
    apiVersion: 'v1',
    kind: 'Config',
    users: [{ name: '*', user: { 'client-certificate': join(pki, 'webhook-client.crt'), 'client-key': join(pki, 'webhook-client.key') } }],
  }));
  const webhookConfig = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig };
  const admissionConfig = join(pki, 'admission.yaml');
  writeFileSync(admissionConfig, stringify({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: [
      { name: 'ValidatingAdmissionWebhook', configuration: webhookConfig },
      { name: 'MutatingAdmissionWebhook', configuration: webhookConfig },
    ],
  }));
  return { caFile, admissionConfig };
}

function randomToken(): string {
  return randomBytes(24).toString('hex');
}

function httpOk(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest(url, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.setTimeout(2000, () => req.destroy());
    req.end();
  });
}
